/* Matrix products through BLAS, row-major, and the linear layer built on them.
   Backward functions accumulate (+=) into gradients; a NULL gradient is skipped. */
#ifndef S2S_NN_LINALG_H
#define S2S_NN_LINALG_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/real.h"

/* The sizes and layout of a product C(M,N) = alpha * op(A) * op(B) + beta * C, op(A)
   (M,K), op(B) (K,N): A, B and C are row-major with leading dimensions lda, ldb, ldc;
   trans_a stores A as (K,M), trans_b stores B as (N,K). M, N or K may be 0. */
typedef struct GemmShape {
    int M, N, K;
    bool trans_a, trans_b;
    int lda, ldb, ldc;
} GemmShape;

/* C = alpha * op(A) * op(B) + beta * C as s describes. With beta == 0, C need not be
   initialised. */
void nn_gemm(const GemmShape *s, real alpha, const real *A, const real *B, real beta,
             real *C);

/* Training's threads: with on, every product from now on is split over the pool's
   threads (nn/parallel.h) by ranges of rows or columns of C, one single-threaded BLAS (or
   oneDNN, in bf16) call per range, and the pool's threads poll briefly between jobs
   instead of sleeping at once: one set of threads for the products and the loops between
   them, no hand-offs between BLAS's threads and the pool's. Off (the default, and what
   decoding uses): BLAS and oneDNN run their own threads, nn_set_threads' count. */
void nn_products_on_pool(bool on);

/* The sizes of a linear layer: N rows of In inputs to N rows of Out outputs. */
typedef struct LinearShape {
    int N, In, Out;
} LinearShape;

/* y = x W^T + b in PyTorch layout (W is (Out,In)); b may be NULL. */
void nn_linear_forward(real *y,        // (N,Out)
                       const real *x,  // (N,In)
                       const real *W,  // (Out,In)
                       const real *b,  // (Out) or NULL
                       const LinearShape *s);
/* y += x W^T + b: sums a second product into an existing output. */
void nn_linear_forward_acc(real *y,        // (N,Out)
                           const real *x,  // (N,In)
                           const real *W,  // (Out,In)
                           const real *b,  // (Out) or NULL
                           const LinearShape *s);
/* y = x W^T + b for a few rows (decoding's beam rows and small batches; N <= NN_FEW_ROWS):
   every row of W is read once, in place, for all N rows of x, where sgemm would first
   copy all of W into its packing buffer. Each output is the same sum in the same order
   whatever the thread count; the values may differ from nn_linear_forward's in the last
   bits (another order of the sums). */
#define NN_FEW_ROWS 8
void nn_linear_forward_few(real *y,        // (N,Out)
                           const real *x,  // (N,In)
                           const real *W,  // (Out,In)
                           const real *b,  // (Out) or NULL
                           const LinearShape *s);
/* dx += dy W, dW += dy^T x, db += sum over rows of dy. */
void nn_linear_backward(real *dx,        // (N,In) or NULL
                        real *dW,        // (Out,In) or NULL
                        real *db,        // (Out) or NULL
                        const real *dy,  // (N,Out)
                        const real *x,   // (N,In) (unused when dW is NULL)
                        const real *W,   // (Out,In) (unused when dx is NULL)
                        const LinearShape *s);

/* Threads used by the matrix products (OpenBLAS) and by nn/parallel.h's pool; n <= 0:
   the cores free now (base/cores.h: the usable ones less those other processes keep
   busy).
   Returns the number set. */
int nn_set_threads(int n);
/* Under an address-space limit that holds n BLAS threads (src/main.c): caps the BLAS
   threads at n, now and in nn_set_threads, which then runs one product on them so that
   OpenBLAS maps their buffers (128 MiB each) before the command's model and batches
   fill the limit: a buffer refused later would make OpenBLAS retry forever, while an
   allocation of ours that does not fit is one line. */
void nn_blas_limit(int n);

#endif
