/* The one model interface (docs/model.md, docs/architecture.md). A Model is a
   configuration, a flat parameter array with its layout, and a table of operations
   (ModelOps) that its kind provides: the recurrent encoder–decoder (model/rnn.h), the
   Transformer (model/transformer.h) and an ensemble of either (model/ensemble.h).
   Forward and backward over one batch for training; encode, one decoder step and row
   moves for translation. Callers use the model_* and work_* functions below and never
   branch on the kind; model_init (model/build.c) is the one place that picks the kind
   from the configuration. */
#ifndef S2S_MODEL_MODEL_H
#define S2S_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/rng.h"
#include "model/config.h"
#include "model/params.h"
#include "nn/quant.h"
#include "nn/real.h"

/* One batch, time-major, sorted by source length (descending): the encoder then runs
   each time step on a prefix of the rows, as pack_padded_sequence does. */
typedef struct Batch {
    int B, S, T;
    int *src;     /* (S,B) padded with 0 */
    int *src_len; /* (B) descending, >= 1 */
    int *tgt_in;  /* (T,B) <bos> y1..yn, padded with 0 */
    int *tgt_out; /* (T,B) y1..yn <eos>, padded with 0 */
    long ntok;    /* non-pad entries of tgt_out */
} Batch;

/* Activations of one batch, sized once for the largest batch (no allocation per step).
   What it is for: WORK_DECODE, model_encode and one decoder step at a time (the
   Transformer keeps its caches there); WORK_TRAIN, model_forward_backward (and
   model_forward); WORK_SCORE, model_forward alone (no dropout, no gradients; keeps the
   logits of a small batch for work_logits). The values of false and true are
   WORK_DECODE and WORK_TRAIN. The output layer's logits exist for a chunk of rows at a
   time (model/output.h), not for a whole batch. Each kind has its own Work behind
   this handle (model/work.h). */
typedef enum WorkKind { WORK_DECODE = 0, WORK_TRAIN = 1, WORK_SCORE = 2 } WorkKind;
typedef struct Work Work;

/* The largest batch a Work holds and what it is for. */
typedef struct WorkShape {
    int max_b, max_s, max_t;
    WorkKind kind;
} WorkShape;

typedef struct Model Model;

/* What a model kind provides. The wrappers below check what is common to every kind
   (sizes, steps in order, rows in range) and move the Batch's rows; an operation
   does the rest on its own weights and Work. NULL where the kind has no such
   operation (an ensemble decodes only). */
typedef struct ModelOps {
    const char *name;
    /* what messages call a model of the kind ("Transformer", "recurrent model") */
    const char *title;
    /* its part of the s2s.config object (model/file.h), which the file's keys common
       to every kind follow: its keys in the order written (NULL-terminated) and those
       a file may lack; config_put writes them, config_get reads and checks them into c
       (the kind's fields and the common ones, which it reads with cfg_common; c's
       vocabulary sizes are kept), filling e (messages start with where) and returning
       -1 when a value is bad. NULL for an ensemble, which no file holds. */
    const char *const *config_keys;
    const char *const *config_optional;
    void (*config_put)(const ModelConfig *c, JsonWriter *w);
    int (*config_get)(const JsonVal *root, ModelConfig *c, const char *where, Err *e);
    /* configuration and parameters: the checks of its options; the parameter walk, its
       tensors in the order of the PyTorch module's state_dict, which also points the
       fields of views (a struct of views_size bytes: m->impl holds the weights' and
       then the gradients') into the flat array (model/params.h); initialisation */
    int (*check)(const ModelConfig *c, Err *e);
    ParamWalkFn *walk;
    size_t views_size;
    void (*init_random)(Model *m, Rng *rng);
    int (*max_positions)(const Model *m);
    /* activations */
    size_t (*work_bytes)(const Model *m, const WorkShape *s);
    Work *(*work_new)(const Model *m, const WorkShape *s);
    void (*work_free)(Work *w);
    /* training and scoring: the loss (with grad, the output layer's gradients too),
       then the rest of the gradients */
    double (*forward)(Model *m, Work *w, const Batch *b, Rng *rng, bool grad);
    void (*backward)(Model *m, Work *w, const Batch *b);
    /* translation */
    void (*encode)(Model *m, Work *w, const Batch *b);
    void (*decode_step)(Model *m, Work *w, const Batch *b, const int *prev, int t);
    const real *(*step_attention)(const Work *w);
    void (*expand_rows)(Model *m, Work *w, const Batch *b, const int *from, int n);
    void (*select_rows)(Model *m, Work *w, const Batch *b, const int *from, int t);
    /* the decoder step's matrices in p (m->quant), after model_set_precision freed them */
    void (*quantize)(Model *m, Precision p);
    /* the layers whose attention over the source can be shown one at a time
       (work_show_attention), 0 when the model has one attention; and what
       work_show_attention does besides setting the Work's choice (NULL: nothing) */
    int (*attention_layers)(const Model *m);
    void (*show_attention)(Work *w);
} ModelOps;

struct Model {
    ModelConfig cfg;
    const ModelOps *ops;
    ParamLayout layout;
    real *params; /* (layout.total) */
    real *grads;  /* (layout.total), NULL when the model only translates */
    void *impl;   /* the kind's own: views of params and grads, an ensemble's members */
    bool params_borrowed; /* params belong to someone else (a mapped model file) */
    QSet quant; /* decoding: the decoder step's matrices in bf16 or int8
                   (model_set_precision); empty in f32 */
};

/* The operations of the kind arch (model/build.c), and those of a configuration's. */
const ModelOps *model_kind_ops(Arch arch);
const ModelOps *model_ops_for(const ModelConfig *c);
/* Checks sizes and option combinations of the configuration's kind; the message names
   the option. */
int model_config_check(const ModelConfig *c, Err *e);
/* Builds the layout of a configuration; free with param_layout_free. */
void param_layout_init(ParamLayout *l, const ModelConfig *c);

/* Allocates parameters (zeroed) and, when with_grads, gradients. */
void model_init(Model *m, const ModelConfig *cfg, bool with_grads);
/* A model over parameters that stay the caller's (params: the layout's total, in
   layout order), without gradients; model_free leaves them. */
void model_init_view(Model *m, const ModelConfig *cfg, const real *params);
void model_free(Model *m);
/* Recurrent models: PyTorch's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
   for RNN and linear weights and biases, N(0,1) for embeddings. The Transformer:
   nn.Transformer's (transformer.c). */
void model_init_random(Model *m, Rng *rng);
/* The most positions the model can take (its learned position tables; for an ensemble
   the least of its members'), or 0 when there is no limit. */
int model_max_positions(const Model *m);

/* The decoder layers whose attention can be shown one at a time; 0 when the model has
   one attention (the recurrent model). */
int model_attention_layers(const Model *m);

/* Decoding steps compute their products from weights in the given precision
   (nn/quant.h; an ensemble: each member's), quantized now from the float weights: every
   matrix a decoder step multiplies by (the recurrent decoder's gates, attention's
   query, position and output products, the deep output; the Transformer decoder's
   sublayers; the vocabulary projection). The encoder, which runs once per sentence over
   all its positions, stays in float. PREC_F32 goes back to the float weights. Training
   never uses it. Float builds only. */
void model_set_precision(Model *m, Precision p);

Work *work_new(const Model *m, int max_b, int max_s, int max_t, WorkKind kind);
void work_free(Work *w);
/* The bytes work_new allocates for these sizes, exactly (the same carving, counted). */
size_t work_bytes(const Model *m, int max_b, int max_s, int max_t, WorkKind kind);

/* Runs the model on a batch and returns the summed label-smoothed cross-entropy over
   the non-pad targets; no gradients. With rng, dropout is applied (a WORK_TRAIN Work);
   NULL disables it. */
double model_forward(Model *m, Work *w, const Batch *b, Rng *rng);
/* model_forward on a WORK_TRAIN Work, and accumulates into m->grads the gradient of the
   mean loss per target token (loss / b->ntok). Returns the summed loss. */
double model_forward_backward(Model *m, Work *w, const Batch *b, Rng *rng);
/* Negative log-likelihood (no label smoothing) summed over the non-pad targets of the
   last model_forward or model_forward_backward. */
double work_nll(const Work *w);
/* Logits (T,B,Vt) of the last model_forward on a WORK_SCORE Work whose T·B rows fit
   one chunk of the output layer (a check fails otherwise): for tests. */
const real *work_logits(const Work *w);

/* Translation: encodes a batch (tgt fields unused) and prepares decoder state. */
void model_encode(Model *m, Work *w, const Batch *b);
/* One decoder step from the previous tokens prev (B) at step t (0-based); writes the
   logits (B,Vt) and the attention weights (B,S) into w (see work_step_*). */
void model_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t);
const real *work_step_logits(const Work *w);   /* (B,Vt) of the last step */
const real *work_step_attention(const Work *w); /* (B,S) of the last step */
/* Which attention work_step_attention shows from now on, for models with
   model_attention_layers > 0: of decoder layer `layer` (0-based, -1 the last) and head
   `head` (0-based, -1 the mean of the heads). A new Work shows -1, -1. */
void work_show_attention(Work *w, int layer, int head);

/*
 * Beam search moves rows around (decode/beam.h). model_expand_rows, after model_encode
 * of a batch or between decoding steps (w at step t: steps 0..t-1 done), makes the
 * batch n rows (1 <= n <= max_b of the Work) where row r is old row from[r]
 * (from[r] < b->B), e.g. each sentence repeated K times after model_encode, or fewer
 * rows once hypotheses have finished. It rewrites, in w, everything later decoding
 * steps read (the encoder's outputs, attention keys and values, the decoder state of
 * step t-1 or the initial state, the Transformer's caches); in b: src (S,n) and
 * src_len (n), and b->B = n (b's buffers must hold n rows). src_len need not stay
 * sorted: only the encoder needs that.
 *
 * model_select_rows, called before decoding step t (t >= 0, with steps 0..t-1 done),
 * makes row r of the decoder state that step t reads hold what row from[r] held
 * (from[r] < b->B), the batch keeping its rows. Decoding after expand and select gives
 * what decoding the rows directly gives, to float rounding: OpenBLAS rounds a row's
 * products according to the number of rows and the row's position, so results agree
 * to the last bits, not bit for bit.
 */
void model_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n);
void model_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t);

#endif
