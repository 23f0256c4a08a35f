/*
 * Attention of the decoder over the encoder states, every variant of docs/model.md
 * ("Attention variants and bridges"), and the attentive-pooling bridge.
 *
 * Per batch, once: the keys (and multihead values) from the top encoder outputs
 * w->out[top]. Per decoder step t: scores of the query state against the keys, the
 * window (global, local-m, local-p), the softmax over it (padding and positions outside
 * the window get exactly 0), the Gaussian factor of local-p, and the context w->ctx[t].
 * The query state is s_{t-1} on Bahdanau's path and s_t on Luong's (rnn.c picks it).
 *
 * Backward functions accumulate (+=) into parameter gradients and into the gradients
 * of their inputs: w->dout[top] for the encoder outputs, dquery for the query state.
 */
#ifndef S2S_MODEL_ATTEND_H
#define S2S_MODEL_ATTEND_H

#include "model/rnn_params.h"
#include "model/rnn_work.h"

/* Keys (and values) of the batch from w->out[top]. */
void attend_keys_forward(const Model *m, RnnWork *w, const Batch *b);
/* Clears the gradients of the keys and values before a backward pass. */
void attend_keys_zero_grad(const Model *m, RnnWork *w, const Batch *b);
/* Sends the accumulated key and value gradients into w->dout[top] and the weights. */
void attend_keys_backward(Model *m, RnnWork *w, const Batch *b);

/* Step t (0-based) with query (B,D): fills w->e, w->a, w->ctx at step t. */
void attend_step_forward(const Model *m, RnnWork *w, const Batch *b, int t, const real *query);
/* Backward of step t from w->dctx[t]: into the keys' gradients, w->dout[top] (the
   context's values), the weights, and dquery (B,D). */
void attend_step_backward(Model *m, RnnWork *w, const Batch *b, int t, const real *query,
                          real *dquery);
/* The weights to show for step t, (B,S): the heads' mean for multihead. */
const real *attend_weights(const RnnWork *w, int t);

/* attn-pool bridge: m = Σ_j α_j h_j into w->pool_m (B,K). */
void attend_pool_forward(const Model *m, RnnWork *w, const Batch *b);
/* From w->dpool_m into the pooling weights and w->dout[top]. */
void attend_pool_backward(Model *m, RnnWork *w, const Batch *b);

#endif
