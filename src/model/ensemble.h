/* An ensemble: models over the same vocabularies that decode together behind the one
   model interface (model/model.h), for decoding only. model_encode, model_decode_step
   and the row moves run on every member, each with its own Work; a step's "logits" are
   the mean of the members' log-probabilities (log-softmax of each member's logits),
   which the searches then treat as logits (beam search's log-softmax renormalises
   them); the attention shown is the first member's. Members may differ in
   architecture. */
#ifndef S2S_MODEL_ENSEMBLE_H
#define S2S_MODEL_ENSEMBLE_H

#include "model/model.h"

/* e decodes with the n models (n >= 1) as one; it holds no weights and points to
   members, which must outlive it; model_ensemble_free releases what init allocated. */
void model_ensemble_init(Model *e, Model *members, int n);
void model_ensemble_free(Model *e);

#endif
