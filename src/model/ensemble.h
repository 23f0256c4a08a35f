/* An ensemble: models over the same vocabularies that decode together behind the one
   model interface (seq2seq.h). model_encode, model_decode_step and the row moves run on
   every member, each with its own Work; a step's "logits" are the mean of the members'
   log-probabilities (log-softmax of each member's logits), which the searches then treat
   as logits (beam search's log-softmax renormalises them); the attention shown is the
   first member's. Members may differ in architecture. Internal to src/model/: seq2seq.c
   calls these. */
#ifndef S2S_MODEL_ENSEMBLE_H
#define S2S_MODEL_ENSEMBLE_H

#include "model/seq2seq.h"

typedef struct EnsWork EnsWork;

EnsWork *ens_work_new(Work *w);
void ens_work_free(EnsWork *x);
size_t ens_work_bytes(const Work *w);
void ens_encode(Model *m, Work *w, const Batch *b);
void ens_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t);
const real *ens_step_logits(const Work *w);
const real *ens_step_attention(const Work *w);
void ens_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n);
void ens_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t);

#endif
