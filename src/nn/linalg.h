/* Matrix products through BLAS, row-major, and the linear layer built on them.
   Backward functions accumulate (+=) into gradients; a NULL gradient is skipped. */
#ifndef S2S_NN_LINALG_H
#define S2S_NN_LINALG_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/real.h"

/* C(M,N) = alpha * op(A) * op(B) + beta * C, op(A) (M,K), op(B) (K,N), row-major with
   leading dimensions lda, ldb, ldc. With beta == 0, C need not be initialised.
   M, N or K may be 0. */
void nn_gemm(bool trans_a, bool trans_b, int M, int N, int K, real alpha,
             const real *A, int lda, const real *B, int ldb, real beta, real *C, int ldc);

/* y = x W^T + b in PyTorch layout (W is (Out,In)); b may be NULL. */
void nn_linear_forward(real *y,        // (N,Out)
                       const real *x,  // (N,In)
                       const real *W,  // (Out,In)
                       const real *b,  // (Out) or NULL
                       int N, int In, int Out);
/* y += x W^T + b: sums a second product into an existing output. */
void nn_linear_forward_acc(real *y,        // (N,Out)
                           const real *x,  // (N,In)
                           const real *W,  // (Out,In)
                           const real *b,  // (Out) or NULL
                           int N, int In, int Out);
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
                           int N, int In, int Out);
/* dx += dy W, dW += dy^T x, db += sum over rows of dy. */
void nn_linear_backward(real *dx,        // (N,In) or NULL
                        real *dW,        // (Out,In) or NULL
                        real *db,        // (Out) or NULL
                        const real *dy,  // (N,Out)
                        const real *x,   // (N,In) (unused when dW is NULL)
                        const real *W,   // (Out,In) (unused when dx is NULL)
                        int N, int In, int Out);

/* Threads used by the matrix products (OpenBLAS) and by nn/parallel.h's pool; n <= 0:
   every online core.
   Returns the number set. */
int nn_set_threads(int n);

#endif
