/* Additive (Bahdanau) attention in three pieces: scores, masked softmax over the source
   axis, and the weighted sum of source states. Source-side tensors are time-major
   (S,B,·). Backward accumulates (+=) into its gradients and skips NULL ones. */
#ifndef S2S_NN_ATTENTION_H
#define S2S_NN_ATTENTION_H

#include "nn/real.h"

/* e[b,j] = Σ_a v[a] · tanh(q[b,a] + K[j,b,a]); cache keeps the tanh values. */
void nn_attn_score_forward(real *e,        // (B,S)
                           real *cache,    // (S,B,A) written
                           const real *q,  // (B,A)
                           const real *K,  // (S,B,A)
                           const real *v,  // (A)
                           int S, int B, int A);
void nn_attn_score_backward(real *dq,          // (B,A) or NULL
                            real *dK,          // (S,B,A) or NULL
                            real *dv,          // (A) or NULL
                            const real *de,    // (B,S)
                            const real *cache, // (S,B,A)
                            const real *v,     // (A)
                            int S, int B, int A);

/* a[b,·] = softmax of e[b, 0..lens[b]-1]; a[b,j] = 0 exactly for j >= lens[b].
   1 <= lens[b] <= S. */
void nn_masked_softmax_forward(real *a,          // (B,S)
                               const real *e,    // (B,S)
                               const int *lens,  // (B)
                               int B, int S);
/* de[b,j] += a[b,j] · (da[b,j] − Σ_k a[b,k] da[b,k]) for j < lens[b]; masked
   positions receive nothing. */
void nn_masked_softmax_backward(real *de,         // (B,S)
                                const real *da,   // (B,S)
                                const real *a,    // (B,S)
                                const int *lens,  // (B)
                                int B, int S);

/* ctx[b] = Σ_j a[b,j] · Hs[j,b,:]. */
void nn_attn_context_forward(real *ctx,        // (B,D)
                             const real *a,    // (B,S)
                             const real *Hs,   // (S,B,D)
                             int S, int B, int D);
/* da[b,j] += <dctx[b], Hs[j,b]>, dHs[j,b] += a[b,j] · dctx[b]. */
void nn_attn_context_backward(real *da,          // (B,S) or NULL
                              real *dHs,         // (S,B,D) or NULL
                              const real *dctx,  // (B,D)
                              const real *a,     // (B,S)
                              const real *Hs,    // (S,B,D)
                              int S, int B, int D);

#endif
