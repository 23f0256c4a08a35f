/* Attention kernels. Additive (Bahdanau) attention in three pieces: scores, masked
   softmax over the source axis, and the weighted sum of source states; and the pieces of
   the Luong variants: multi-head scaled dot-product scores, softmax over a window,
   the local-p Gaussian factor and position. Source-side tensors are time-major (S,B,·),
   per-row tensors (B,·), multi-head scores and weights (H,B,S) (one (B,S) slab per
   head). Backward accumulates (+=) into its gradients and skips NULL ones. */
#ifndef S2S_NN_ATTENTION_H
#define S2S_NN_ATTENTION_H

#include "nn/real.h"

/* The shape of the per-step kernels below: S source positions, B rows, rows of width A
   (for the context, A is D, the width of the source states) in H heads of dh = A/H (H
   must divide A); scale multiplies the dot scores, sigma is the local-p Gaussian's σ.
   A forward kernel's comment names the fields it reads; its backward reads the same. */
typedef struct AttnShape {
    int S, B, A, H;
    real scale;
    real sigma;
} AttnShape;

/* Additive scores (sh: S, B, A): e[b,j] = Σ_a v[a] · tanh(q[b,a] + K[j,b,a]); cache
   keeps the tanh values. */
void nn_attn_score_forward(real *e,        // (B,S)
                           real *cache,    // (S,B,A) written
                           const real *q,  // (B,A)
                           const real *K,  // (S,B,A)
                           const real *v,  // (A)
                           const AttnShape *sh);
/* The cache of nn_attn_score_forward alone, recomputed bit for bit (training keeps one
   step's cache and recomputes it for that step's backward). */
void nn_attn_score_cache(real *cache,    // (S,B,A) written
                         const real *q,  // (B,A)
                         const real *K,  // (S,B,A)
                         const AttnShape *sh);
void nn_attn_score_backward(real *dq,          // (B,A) or NULL
                            real *dK,          // (S,B,A) or NULL
                            real *dv,          // (A) or NULL
                            const real *de,    // (B,S)
                            const real *cache, // (S,B,A)
                            const real *v,     // (A)
                            const AttnShape *sh);

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

/* Context, multi-head (sh: S, B, A = D, H): with dh = D/H (H must divide D), head h
   reads the slice [h·dh, (h+1)·dh) of the source states with its own weights,
   ctx[b, h·dh+d] = Σ_j a[h,b,j] · Hs[j,b,h·dh+d]. H = 1 is the plain weighted sum
   ctx[b] = Σ_j a[b,j] · Hs[j,b,:]. */
void nn_attn_context_forward(real *ctx,        // (B,D)
                             const real *a,    // (H,B,S)
                             const real *Hs,   // (S,B,D)
                             const AttnShape *sh);
/* da[h,b,j] += <dctx[b, slice h], Hs[j,b, slice h]>,
   dHs[j,b, slice h] += a[h,b,j] · dctx[b, slice h]. */
void nn_attn_context_backward(real *da,          // (H,B,S) or NULL
                              real *dHs,         // (S,B,D) or NULL
                              const real *dctx,  // (B,D)
                              const real *a,     // (H,B,S)
                              const real *Hs,    // (S,B,D)
                              const AttnShape *sh);

/* Dot-product scores, multi-head and scaled (sh: S, B, A, H, scale): with dh = A/H (H
   must divide A), e[h,b,j] = scale · Σ_{d<dh} q[b,h·dh+d] · K[j,b,h·dh+d] for every
   j < S (masking is left to the softmax). H = 1, scale = 1 is Luong's dot score;
   scale = 1/sqrt(dh) the scaled dot product. */
void nn_attn_dot_forward(real *e,        // (H,B,S)
                         const real *q,  // (B,A)
                         const real *K,  // (S,B,A)
                         const AttnShape *sh);
/* dq[b, slice h] += scale · Σ_j de[h,b,j] · K[j,b, slice h],
   dK[j,b, slice h] += scale · de[h,b,j] · q[b, slice h]. */
void nn_attn_dot_backward(real *dq,          // (B,A) or NULL
                          real *dK,          // (S,B,A) or NULL
                          const real *de,    // (H,B,S)
                          const real *q,     // (B,A)
                          const real *K,     // (S,B,A)
                          const AttnShape *sh);

/* a[b,·] = softmax of e[b, lo[b]..hi[b]] (inclusive bounds, max-subtracted);
   a[b,j] = 0 exactly outside the window. 0 <= lo[b] <= hi[b] < S. One head slab (B,S)
   per call. */
void nn_window_softmax_forward(real *a,          // (B,S)
                               const real *e,    // (B,S)
                               const int *lo,    // (B)
                               const int *hi,    // (B)
                               int B, int S);
/* de[b,j] += a[b,j] · (da[b,j] − Σ_k a[b,k] da[b,k]) for lo[b] <= j <= hi[b] (k over
   the window); positions outside the window receive nothing. */
void nn_window_softmax_backward(real *de,         // (B,S)
                                const real *da,   // (B,S)
                                const real *a,    // (B,S)
                                const int *lo,    // (B)
                                const int *hi,    // (B)
                                int B, int S);

/* Gaussian factor of local-p attention (Luong et al. 2015; sh: S, B, sigma):
   out[b,j] = a[b,j] · g[b,j], g[b,j] = exp(−(j − p[b])² / (2σ²)), for
   lo[b] <= j <= hi[b]; out[b,j] = 0 exactly elsewhere. Not renormalised. out may be a
   (in place). sigma > 0, 0 <= lo[b] <= hi[b] < S. */
void nn_gauss_window_forward(real *out,        // (B,S)
                             const real *a,    // (B,S)
                             const real *p,    // (B)
                             const int *lo,    // (B)
                             const int *hi,    // (B)
                             const AttnShape *sh);
/* For j in the window: da[b,j] += dout[b,j] · g[b,j] and
   dp[b] += Σ_j dout[b,j] · a[b,j] · g[b,j] · (j − p[b]) / σ². a is the input of the
   forward pass (not its output). Positions outside the window contribute nothing. */
void nn_gauss_window_backward(real *da,          // (B,S) or NULL
                              real *dp,          // (B) or NULL
                              const real *dout,  // (B,S)
                              const real *a,     // (B,S)
                              const real *p,     // (B)
                              const int *lo,     // (B)
                              const int *hi,     // (B)
                              const AttnShape *sh);

/* Local-p position: sig[b] = sigmoid(x[b]) (no overflow for any finite x),
   p[b] = lens[b] · sig[b]. sig is kept for the backward pass. */
void nn_local_pos_forward(real *p,          // (B)
                          real *sig,        // (B) written
                          const real *x,    // (B)
                          const int *lens,  // (B)
                          int B);
/* dx[b] += dp[b] · lens[b] · sig[b] · (1 − sig[b]). */
void nn_local_pos_backward(real *dx,          // (B)
                           const real *dp,    // (B)
                           const real *sig,   // (B)
                           const int *lens,   // (B)
                           int B);

/* Multi-head scaled dot-product attention over whole sequences ("Attention Is All You
   Need" §3.2.2) for B sentences and H heads of width dh. Sequences are time-major: head
   h of position i of sentence b is the slice [h·dh, (h+1)·dh) of row i·B + b of Q (row
   stride ldq), and likewise for K and V (ldk, ldv) and out (ldo), so that the slices may
   be parts of wider rows (the q | k | v thirds of one projection). Query i of sentence b
   may attend to key j when j < klen[b] (klen NULL: every j < Tk) and, when causal >= 0,
   j <= i + causal (causal = 0 is the decoder's mask over its own prefix; the position
   of query 0 when decoding one step). Every query must be allowed one key. */
typedef struct MhaShape {
    int Tq, Tk, B, H, dh;
    int ldq, ldk, ldv, ldo;
    const int *klen; /* (B) or NULL */
    int causal;      /* -1: none */
    real scale;      /* usually 1/sqrt(dh) */
} MhaShape;

/* The queries, keys and values of nn_mha_forward. */
typedef struct MhaQkv {
    const real *Q;  // (Tq,B,ldq)
    const real *K;  // (Tk,B,ldk)
    const real *V;  // (Tk,B,ldv)
} MhaQkv;
/* Their gradients, laid out as Q, K, V; a NULL one is skipped. */
typedef struct MhaQkvGrad {
    real *Q;  // (Tq,B,ldq) or NULL
    real *K;  // (Tk,B,ldk) or NULL
    real *V;  // (Tk,B,ldv) or NULL
} MhaQkvGrad;

/* a[b,h,i,j] = softmax over the allowed j of scale · <q, k>, exactly 0 elsewhere;
   out[i,b, slice h] = Σ_j a[b,h,i,j] · drop[b,h,i,j] · V[j,b, slice h] (drop: an
   attention dropout mask, NULL for none). out is overwritten. */
void nn_mha_forward(real *out,          // (Tq,B,ldo)
                    real *a,            // (B,H,Tq,Tk) written
                    const real *drop,   // (B,H,Tq,Tk) or NULL
                    const MhaQkv *qkv,  // Q, K, V
                    const MhaShape *s);
/* The backward pass of nn_mha_forward: the gradients of Q, K, V += their gradients
   given dout; de is scratch of a's size. */
void nn_mha_backward(const MhaQkvGrad *dqkv,  // dQ, dK, dV
                     real *de,                // (B,H,Tq,Tk) scratch
                     const real *dout,        // (Tq,B,ldo)
                     const real *a,           // (B,H,Tq,Tk) from the forward pass
                     const real *drop,        // (B,H,Tq,Tk) or NULL
                     const MhaQkv *qkv,       // Q, K, V
                     const MhaShape *s);

#endif
