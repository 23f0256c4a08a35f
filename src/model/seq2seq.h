/* The models (docs/model.md) behind one interface: the GRU/LSTM encoder–decoder with its
   attention variants, and the Transformer (cfg.arch). Forward and backward over one
   batch for training; encode, one decoder step and row moves for translation. Callers
   never branch on the architecture. */
#ifndef S2S_MODEL_SEQ2SEQ_H
#define S2S_MODEL_SEQ2SEQ_H

#include <stdbool.h>
#include <stddef.h>

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

typedef struct Model {
    ModelConfig cfg;
    ParamLayout layout;
    real *params; /* (layout.total) */
    real *grads;  /* (layout.total), NULL when the model only translates */
    Weights w, g;     /* views of params and grads: recurrent models */
    TfWeights tw, tg; /* the same: the Transformer */
    /* Which attention work_step_attention shows (the Transformer; a display setting,
       not part of the model): layer 0-based, -1 the last; head 0-based, -1 the mean of
       the heads. */
    int show_layer, show_head;
    struct Model *members; /* an ensemble's models (cfg.n_members), else NULL */
    bool params_borrowed;  /* params belong to someone else (a mapped model file) */
    QSet quant; /* decoding: the decoder step's matrices in bf16 or int8
                   (model_set_precision); empty in f32 */
} Model;

/* An ensemble of n models over the same vocabularies, for decoding only (model/ensemble.h):
   model_encode, model_decode_step and the row moves run every member, and a step's
   logits are the mean of the members' log-probabilities. e holds no weights and points
   to members, which must outlive it; model_ensemble_free releases what init allocated. */
void model_ensemble_init(Model *e, Model *members, int n);
void model_ensemble_free(Model *e);

/* Decoding steps compute their products from weights in the given precision
   (nn/quant.h; an ensemble: each member's), quantized now from the float weights: every
   matrix a decoder step multiplies by (the recurrent decoder's gates, attention's
   query, position and output products, the deep output; the Transformer decoder's
   sublayers; the vocabulary projection). The encoder, which runs once per sentence over
   all its positions, stays in float. PREC_F32 goes back to the float weights. Training
   never uses it. Float builds only. */
void model_set_precision(Model *m, Precision p);

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

/* Activations of one batch, sized once for the largest batch (no allocation per step).
   What it is for: WORK_DECODE, model_encode and one decoder step at a time (the
   Transformer keeps its caches there); WORK_TRAIN, model_forward_backward (and
   model_forward); WORK_SCORE, model_forward alone (no dropout, no gradients; keeps the
   logits of a small batch for work_logits). The values of false and true are
   WORK_DECODE and WORK_TRAIN. The output layer's logits exist for a chunk of rows at a
   time (model/output.h), not for a whole batch. */
typedef enum WorkKind { WORK_DECODE = 0, WORK_TRAIN = 1, WORK_SCORE = 2 } WorkKind;
typedef struct Work Work;
Work *work_new(const ModelConfig *cfg, int max_b, int max_s, int max_t, WorkKind kind);
void work_free(Work *w);
/* The bytes work_new allocates for these sizes, exactly (the same carving, counted). */
size_t work_bytes(const ModelConfig *cfg, int max_b, int max_s, int max_t, WorkKind kind);

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

/*
 * Beam search moves rows around (decode/beam.h). model_expand_rows, after model_encode
 * of a batch or between decoding steps (w at step t: steps 0..t-1 done), makes the
 * batch n rows (1 <= n <= max_b of the Work) where row r is old row from[r]
 * (from[r] < b->B), e.g. each sentence repeated K times after model_encode, or fewer
 * rows once hypotheses have finished. It rewrites, in w: the top encoder layer's
 * outputs (S,n,K), the attention keys (S,n,Ak) and multihead values (S,n,A), and the
 * decoder state that step t reads: for every decoder layer s of step t-1 (n,D) and, for
 * LSTM, c of step t-1 (the initial states s0, c0 when t = 0), and with input feeding
 * the attentional state of step t-1 (n,P); in b: src (S,n) and src_len (n), and b->B = n
 * (b's buffers must hold n rows). Nothing else of w is read by later decoding steps.
 * src_len need not stay sorted: only the encoder needs that.
 *
 * model_select_rows, called before decoding step t (t >= 0, with steps 0..t-1 done),
 * makes row r of the decoder state that step t reads hold what row from[r] held
 * (from[r] < b->B), the batch keeping its rows: for every decoder layer, the state s
 * and, for LSTM, the cell state c of step t-1 (s0/c0 when t = 0), and with input feeding
 * the attentional state of step t-1. It touches nothing else. Decoding after expand and select gives what decoding the rows directly gives,
 * to float rounding: OpenBLAS rounds a row's products according to the number of rows
 * and the row's position, so results agree to the last bits, not bit for bit.
 */
void model_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n);
void model_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t);

#endif
