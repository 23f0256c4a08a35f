/* What every kind's Work begins with, and the helpers the kinds share: carving buffers
   from one allocation, the output layer over a Work's buffers, a decoding step's
   products, and the row moves of beam search. Internal to src/model/: a kind's
   Work is `struct { Work base; ... }`, and only that kind's files read past base. */
#ifndef S2S_MODEL_WORK_H
#define S2S_MODEL_WORK_H

#include <stdbool.h>

#include "model/model.h"
#include "model/output.h"
#include "nn/linalg.h"

struct Work {
    const ModelOps *ops; /* the kind that made it */
    const QSet *quant;   /* its model's quantized matrices (model_set_precision) */
    ModelConfig cfg;
    int max_b, max_s, max_t;
    WorkKind kind;
    bool training; /* kind == WORK_TRAIN */
    /* the output layer (model/output.h): decoding, one step's logits (B,V); training
       and scoring, a chunk of out_rows rows (scoring keeps the logits apart from the
       probabilities, training writes the probabilities and then their gradient over
       them) */
    real *logits, *probs;
    int out_rows;
    double nll;   /* of the last forward */
    real *mem;      /* the buffers' one allocation (work_carve_all) */
    real *rows_tmp; /* scratch of the row moves (work_gather_rows) */
    size_t rows_tmp_len;
    int B, S, T;  /* the batch currently held */
    int show_layer, show_head; /* decoding: the attention work_step_attention shows
                                  (work_show_attention) */
};

/* Fills the common part of a kind's Work for model m and shape s. */
void work_base_init(Work *w, const Model *m, const WorkShape *s);

/* Carves the buffers of a Work from one allocation; a first pass with base NULL only
   counts (work_bytes). Slices are 64-byte aligned for float. */
typedef struct Carver {
    real *base;
    size_t used;
} Carver;

static inline real *carve(Carver *cv, size_t n)
{
    real *p = cv->base ? cv->base + cv->used : NULL;
    cv->used += (n + 15) & ~(size_t)15;
    return p;
}

/* A kind's layout of its buffers in one allocation. */
typedef void WorkCarveFn(Work *w, Carver *cv);
/* The bytes layout lays out. */
size_t work_carved_bytes(Work *w, WorkCarveFn *layout);
/* Allocates w->mem (zeroed) for what layout lays out and carves it; work_free frees
   it. */
void work_carve_all(Work *w, WorkCarveFn *layout);

/* The output layer's buffers (decoding: B rows; else a chunk, output_chunk_rows). */
static inline void carve_output(Work *w, Carver *cv)
{
    size_t V = (size_t)w->cfg.tgt_vocab;
    w->out_rows = w->kind == WORK_DECODE ? w->max_b : output_chunk_rows(w->max_b * w->max_t, (int)V);
    w->logits = carve(cv, (size_t)w->out_rows * V);
    w->probs = w->kind == WORK_SCORE ? carve(cv, (size_t)w->out_rows * V) : NULL;
}

/* The output layer over projection W (V,P) and bias b, with gradients in a training
   Work when grad. */
static inline OutputLayer work_output(const Work *w, const real *W, const real *b, real *gw, real *gb,
                                      int P, bool grad)
{
    return (OutputLayer){.w = W, .b = b, .gw = grad ? gw : NULL, .gb = grad ? gb : NULL, .P = P,
                         .V = w->cfg.tgt_vocab, .eps = w->cfg.label_smoothing, .chunk = w->out_rows,
                         .logits = w->logits, .probs = w->probs};
}

/* A product of a decoder step, y (N,Out) = x (N,In) W^T + b (W (Out,In), b (Out) or
   NULL), with N, In, Out from s. When w decodes: from W's
   quantized copy when its model has one (model_set_precision); else for 2 to NN_FEW_ROWS
   rows (beam hypotheses, small batches) through nn_linear_forward_few (W read once, not
   packed at every step). Otherwise nn_linear_forward, so training's and scoring's
   products keep their bits. */
void work_step_linear(const Work *w, real *y, const real *x, const real *W, const real *b, const LinearShape *s);

/* Adds the decoder step's matrix W (rows × cols) in precision p to m->quant, for the
   kinds' quantize operations (float builds only). */
void model_quantize(Model *m, const real *W, int rows, int cols, Precision p);

/* Row r of the (S,n,width) array dst becomes row from[r] of the (S,B,width) array src
   (which dst may be), for r < n. The copy of src goes to w->rows_tmp when it fits (the
   decoder states moved at every beam step), else to a temporary allocation. */
void work_gather_rows(Work *w, real *dst, const real *src, int S, int B, int n, size_t width, const int *from);

/* The decoder state that step t reads, for a batch of B rows of width D: row block
   t-1 of steps, or first at t = 0. */
static inline real *state_at(real *steps, real *first, int t, int B, int D)
{
    return t ? steps + (size_t)(t - 1) * B * D : first;
}

#endif
