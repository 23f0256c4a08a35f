/* Elementwise operations, embedding lookup, concatenation and dropout.
   Every operation is a forward/backward pair; backward accumulates (+=) into the
   gradients it is given and skips a NULL gradient. Nothing here allocates. */
#ifndef S2S_NN_OPS_H
#define S2S_NN_OPS_H

#include <stddef.h>

#include "base/rng.h"
#include "nn/real.h"

/* out = inp + b (b broadcast over rows); out may equal inp. */
void nn_bias_forward(real *out,        // (N,C)
                     const real *inp,  // (N,C)
                     const real *b,    // (C)
                     int N, int C);
/* dinp += dout, db += sum over rows of dout. */
void nn_bias_backward(real *dinp,        // (N,C) or NULL
                      real *db,          // (C) or NULL
                      const real *dout,  // (N,C)
                      int N, int C);

/* out = tanh(inp); out may equal inp. */
void nn_tanh_forward(real *out,        // (n)
                     const real *inp,  // (n)
                     size_t n);
/* dinp += dout * (1 - out^2), from the forward output. */
void nn_tanh_backward(real *dinp,        // (n)
                      const real *dout,  // (n)
                      const real *out,   // (n)
                      size_t n);
/* d *= 1 - out^2, in place: d holds the gradient of tanh's output and becomes that of
   its input (for a buffer no other term adds to). */
void nn_tanh_backward_inplace(real *d,          // (n)
                              const real *out,  // (n)
                              size_t n);

/* out = 1 / (1 + exp(-inp)); out may equal inp. */
void nn_sigmoid_forward(real *out,        // (n)
                        const real *inp,  // (n)
                        size_t n);
/* dinp += dout * out * (1 - out), from the forward output. */
void nn_sigmoid_backward(real *dinp,        // (n)
                         const real *dout,  // (n)
                         const real *out,   // (n)
                         size_t n);

/* out[i] = E[ids[i]]; every id must lie in [0, V) (the padding id is looked up like
   any other). */
void nn_embedding_forward(real *out,        // (N,D)
                          const int *ids,   // (N)
                          const real *E,    // (V,D)
                          int N, int V, int D);
/* dE[ids[i]] += dout[i] (repeated ids add up). */
void nn_embedding_backward(real *dE,          // (V,D)
                           const real *dout,  // (N,D)
                           const int *ids,    // (N)
                           int N, int V, int D);

/* out = [parts[0] | parts[1] | ...] along the last axis; part k is (N, widths[k]). */
void nn_concat_forward(real *out,                 // (N, sum of widths)
                       const real *const *parts,  // nparts x (N, widths[k])
                       const int *widths,         // (nparts)
                       int nparts, int N);
/* dparts[k] += the slice of dout that part k filled; a NULL dparts[k] is skipped. */
void nn_concat_backward(real *const *dparts,  // nparts x (N, widths[k]), entries may be NULL
                        const real *dout,     // (N, sum of widths)
                        const int *widths,    // (nparts)
                        int nparts, int N);

/* parts[k] = slice k of inp along the last axis (the inverse of concat). */
void nn_split_forward(real *const *parts,  // nparts x (N, widths[k]), entries may be NULL
                      const real *inp,     // (N, sum of widths)
                      const int *widths,   // (nparts)
                      int nparts, int N);
/* The slices of dinp += dparts[k]; a NULL dparts[k] adds nothing. */
void nn_split_backward(real *dinp,                 // (N, sum of widths)
                       const real *const *dparts,  // nparts x (N, widths[k]), entries may be NULL
                       const int *widths,          // (nparts)
                       int nparts, int N);

/* Inverted dropout: mask[i] = 0 with probability p, else 1/(1-p); out = inp * mask;
   out may equal inp. 0 <= p < 1. Each call takes one number from rng, the key of a
   counter-based generator (splitmix64) that decides every element independently, so
   the mask does not depend on the number of threads. With p == 0 the mask is all
   ones, out is an exact copy and rng is not touched. */
void nn_dropout_forward(real *out,        // (n)
                        real *mask,       // (n) written
                        const real *inp,  // (n)
                        size_t n, real p, Rng *rng);
/* dinp += dout * mask. */
void nn_dropout_backward(real *dinp,        // (n)
                         const real *dout,  // (n)
                         const real *mask,  // (n)
                         size_t n);
/* d *= mask, in place (as nn_tanh_backward_inplace). */
void nn_dropout_backward_inplace(real *d,           // (n)
                                 const real *mask,  // (n)
                                 size_t n);

/* out = max(inp, 0); out may equal inp. */
void nn_relu_forward(real *out,        // (n)
                     const real *inp,  // (n)
                     size_t n);
/* d *= (out > 0), in place, from the forward output (d holds the gradient of the
   output and becomes that of the input). */
void nn_relu_backward_inplace(real *d,          // (n)
                              const real *out,  // (n)
                              size_t n);

/* A layer norm's rows: N rows of C values, and the eps of the forward pass. */
typedef struct LnShape {
    int N, C;
    real eps;
} LnShape;
/* The statistics of each row, μ_i and r_i below: written by the forward pass, read by
   the backward. */
typedef struct LnStats {
    real *mean;  // (N)
    real *rstd;  // (N)
} LnStats;

/* Layer normalisation over the last axis (Ba et al. 2016, as torch.nn.LayerNorm):
   out[i] = (x[i] − μ_i) · r_i · g + b with μ_i the row mean, r_i = 1/sqrt(σ²_i + eps)
   and σ²_i the biased row variance. mean and rstd are kept for the backward pass; out
   may not equal inp. */
void nn_layernorm_forward(real *out,            // (N,C)
                          const LnStats *stat,  // mean, rstd written
                          const real *inp,      // (N,C)
                          const real *g,        // (C)
                          const real *b,        // (C)
                          const LnShape *s);
/* dinp += r_i · (dy·g − mean(dy·g) − x̂ · mean(dy·g·x̂)) with x̂ = (x − μ)·r,
   dg += Σ_i dy ⊙ x̂, db += Σ_i dy. */
void nn_layernorm_backward(real *dinp,           // (N,C) or NULL
                           real *dg,             // (C) or NULL
                           real *db,             // (C) or NULL
                           const real *dout,     // (N,C)
                           const real *inp,      // (N,C)
                           const LnStats *stat,  // mean, rstd of the forward pass
                           const real *g,        // (C)
                           const LnShape *s);

/* The sinusoidal position code of "Attention Is All You Need" for one position:
   out[2i] = sin(pos / 10000^(2i/C)), out[2i+1] = cos(pos / 10000^(2i/C)), computed in
   double and rounded. */
void nn_sinusoid(real *out,  // (C)
                 int pos, int C);
/* Fills mask (n) as nn_dropout_forward would for a fresh input, without applying it:
   0 with probability p, else 1/(1-p); with p == 0 all ones and rng untouched. */
void nn_dropout_mask(real *mask,  // (n)
                     size_t n, real p, Rng *rng);

/* Sum of x[i]^2 accumulated in double (global gradient norm for clipping). */
double nn_sumsq(const real *x,  // (n)
                size_t n);
/* x *= s. */
void nn_scale(real *x,  // (n)
              size_t n, real s);

/* The first index of the largest of x[0..n) (n >= 1): the lowest index on ties, as
   torch.argmax; NaN never wins unless it is x[0]. */
int nn_argmax(const real *x, int n);
/* The largest of x[0..n) (n >= 1) by the scan from x[0] that keeps x[v] when x[v] > max:
   NaN never wins unless it is x[0]. Vectorised. */
real nn_max(const real *x, int n);

#endif
