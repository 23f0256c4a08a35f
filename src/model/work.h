/* The activations of a batch (struct Work) shared by the model's modules: seq2seq.c
   (encoder, decoder, output layer) and attend.c (attention and the pooling bridge);
   the Transformer keeps its own (transformer.c) behind the tf pointer.
   Internal to src/model/. Sizes: B rows, S source positions, T target steps, Hh heads,
   Ak = model_key_size, Din = model_dec_in_size, F = model_pre_in_size. */
#ifndef S2S_MODEL_WORK_H
#define S2S_MODEL_WORK_H

#include <stdbool.h>

#include "model/output.h"
#include "model/seq2seq.h"

typedef struct EncDir {
    real *gi;    /* (S,B,G*H) input projections of all steps */
    real *st;    /* (S,B,H) hidden states, zero where invalid */
    real *cst;   /* (S,B,H) LSTM cell states */
    real *cache; /* (S,B,C*H) gate values */
    real *dst, *dcst, *dgi; /* gradients of the same */
} EncDir;

typedef struct DecLayer {
    real *in;    /* (T,B,D) input of layers > 0 (dropout of the layer below) */
    real *mask;  /* (T,B,D) its dropout mask */
    real *gi;    /* (B,G*D) scratch */
    real *gh;    /* (B,G*D) scratch */
    real *s;     /* (T,B,D) states */
    real *c;     /* (T,B,D) LSTM cell states */
    real *cache; /* (T,B,C*D) */
    real *ds, *dc, *din; /* (T,B,D) */
    real *s0, *c0, *ds0, *dc0; /* (B,D) initial states and their gradients */
    real *bin, *cbin; /* (B,K) bridge inputs [hf; hb] for h and c */
} DecLayer;

struct Work {
    ModelConfig cfg;
    int max_b, max_s, max_t;
    WorkKind kind;
    bool training; /* kind == WORK_TRAIN */
    struct TfWork *tf; /* the Transformer's activations (transformer.c); the fields
                          below then hold only logits and probs, pointing into it */
    struct EnsWork *ens; /* an ensemble's member Works (ensemble.c); nothing below used */
    real *mem;
    /* encoder */
    real *xs, *xs_mask;                       /* (S,B,E) */
    real *lin[MODEL_MAX_LAYERS], *lin_mask[MODEL_MAX_LAYERS]; /* (S,B,K) layers > 0 */
    real *out[MODEL_MAX_LAYERS];              /* (S,B,K) layer outputs */
    real *dout[MODEL_MAX_LAYERS];             /* (S,B,K) */
    real *dlin;                               /* (S,B,K) */
    real *dxs;                                /* (S,B,E) */
    EncDir enc[MODEL_MAX_LAYERS][2];
    real *zeros;                              /* (B, max(H,D,P)) */
    real *rows_tmp;                           /* (B, max(D,P)) scratch of model_select_rows */
    size_t rows_tmp_len;
    real *egh, *edgh;                         /* (B,G*H) scratch */
    real *dbin;                               /* (B,K) */
    /* attention keys and values, once per batch (model/attend.h) */
    real *keys, *dkeys;                       /* (S,B,Ak), NULL when Ak = 0 */
    real *vals, *dvals;                       /* (S,B,A) multihead */
    /* attn-pool bridge */
    real *pool_u, *pool_q, *pool_e, *pool_a, *pool_m;      /* (S,B,A) (B,A) (B,S) (B,S) (B,K) */
    real *dpool_u, *dpool_q, *dpool_e, *dpool_a, *dpool_m; /* the same */
    /* decoder */
    DecLayer dec[MODEL_MAX_LAYERS];
    real *y, *y_mask, *dy;                    /* (T,B,E) */
    real *q, *dq;                             /* (T,B,A), (B,A) projected queries */
    real *att_cache;                          /* (S,B,A) additive kinds: one step's tanh values */
    real *e, *de;                             /* (T,Hh,B,S), (Hh,B,S) scores */
    real *asoft, *dasoft;                     /* (T,Hh,B,S), (Hh,B,S) local-p: before the Gaussian */
    real *a, *da;                             /* (T,Hh,B,S), (Hh,B,S) weights */
    real *ashow;                              /* (T,B,S) multihead: the heads' mean */
    int *lo, *hi;                             /* (T,B) local windows */
    real *pos_h, *pos_x, *pos_sig, *pos_p;    /* (T,B,A) (T,B) (T,B) (T,B) local-p */
    real *dpos_h, *dpos_x, *dpos_p;           /* (B,A) (B) (B) */
    real *heads_o, *dheads_o;                 /* (T,B,A), (B,A) multihead */
    real *ctx, *dctx;                         /* (T,B,K) */
    real *x0, *dx0;                           /* (T,B,Din), (B,Din) layer-0 input */
    real *dgi, *dgh;                          /* (B,G*D) */
    real *feat, *dfeat;                       /* (T,B,F): out.pre's input */
    real *pre, *dpre;                         /* (T,B,P) deep output / attentional state */
    real *pre_drop, *pre_mask;                /* (T,B,P) */
    /* output layer (model/output.h): decoding, one step's logits (B,V); training and
       scoring, a chunk of out_rows rows (scoring keeps the logits apart from the
       probabilities, training writes the probabilities and then their gradient over
       them) */
    real *logits, *probs;
    int out_rows;
    double nll;                               /* of the last model_forward */
    /* the batch currently held */
    int B, S, T;
};


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

/* A product of a decoder step, y (N,Out) = x (N,In) W^T + b. When w decodes: from W's
   quantized copy when the model has one (model_set_precision); else for 2 to NN_FEW_ROWS
   rows (beam hypotheses, small batches) through nn_linear_forward_few (W read once, not
   packed at every step). Otherwise nn_linear_forward, so training's and scoring's
   products keep their bits. */
void model_step_linear(const Model *m, const Work *w, real *y, const real *x, const real *W, const real *b, int N,
                       int In, int Out);

#endif
