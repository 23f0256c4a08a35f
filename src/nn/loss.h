/* Softmax cross-entropy with label smoothing and an ignore index, as PyTorch
   F.cross_entropy(logits, target, ignore_index=ignore, label_smoothing=eps,
   reduction='sum'). */
#ifndef S2S_NN_LOSS_H
#define S2S_NN_LOSS_H

#include "nn/real.h"

/* Per counted row (target != ignore):
     loss = (1 − eps) · (−log p_y) + eps · mean_k(−log p_k),  p = softmax(logits row).
   Writes the probabilities of counted rows into probs (probs may equal logits; rows
   with the ignore target are left untouched), returns the summed loss (double) and
   sets *count to the number of counted rows. Stable for large logits. Counted targets
   must lie in [0, V). */
double nn_xent_forward(real *probs,         // (N,V) written for counted rows
                       int *count,
                       const real *logits,  // (N,V)
                       const int *targets,  // (N)
                       int N, int V, real eps, int ignore);
/* dlogits += scale · (p − ((1 − eps) · onehot(y) + eps / V)) for counted rows; rows
   with the ignore target receive nothing. dlogits and probs are distinct buffers. */
void nn_xent_backward(real *dlogits,       // (N,V)
                      const real *probs,   // (N,V)
                      const int *targets,  // (N)
                      int N, int V, real eps, int ignore, real scale);
/* The same gradient written over the probabilities (no accumulation), for a caller that
   keeps one (N,V) buffer: logits, then probs, then dlogits. Rows with the ignore
   target become exactly 0. */
void nn_xent_backward_inplace(real *pd,            // (N,V) probs in, dlogits out
                              const int *targets,  // (N)
                              int N, int V, real eps, int ignore, real scale);

/* log Σ exp(x[v]) over a row of V: a pass for the maximum, then nn_log_sum_exp_max. */
double nn_log_sum_exp(const real *x, int V);
/* The same when the maximum mx of x is known (decoding's beam has it from its top-k):
   one pass, exp(x − mx) in `real` (R_EXP), summed in double over 16 fixed lanes, so the
   result is the same on every vector width. */
double nn_log_sum_exp_max(const real *x, int V, real mx);

#endif
