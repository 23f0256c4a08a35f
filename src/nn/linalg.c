#include "nn/linalg.h"

#include <unistd.h>

#include "nn/ops.h"
#include "nn/parallel.h"

void nn_gemm(bool trans_a, bool trans_b, int M, int N, int K, real alpha,
             const real *A, int lda, const real *B, int ldb, real beta, real *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        /* BLAS leaves C alone here only for beta == 1; make the K == 0 case explicit. */
        for (int i = 0; i < M; i++) {
            real *restrict c = C + (size_t)i * ldc;
            if (beta == 0)
                for (int j = 0; j < N; j++)
                    c[j] = 0;
            else
                for (int j = 0; j < N; j++)
                    c[j] *= beta;
        }
        return;
    }
    R_CBLAS_GEMM(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                 trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                 beta, C, ldc);
}

static void linear(real *y, const real *x, const real *W, const real *b, int N, int In,
                   int Out, real beta)
{
    /* One row (decoding one sentence): a matrix-vector product. OpenBLAS's sgemm would
       first copy all of W into its packing buffer (the vocabulary projection is 17 MB),
       which costs more than the product; sgemv reads W once, in place. */
    if (N == 1 && In > 0 && Out > 0)
        R_CBLAS_GEMV(CblasRowMajor, CblasNoTrans, Out, In, 1, W, In, x, 1, beta, y, 1);
    else
        nn_gemm(false, true, N, Out, In, 1, x, In, W, In, beta, y, Out);
    if (b)
        nn_bias_forward(y, y, b, N, Out);
}

void nn_linear_forward(real *y, const real *x, const real *W, const real *b, int N, int In,
                       int Out)
{
    linear(y, x, W, b, N, In, Out, 0);
}

void nn_linear_forward_acc(real *y, const real *x, const real *W, const real *b, int N,
                           int In, int Out)
{
    linear(y, x, W, b, N, In, Out, 1);
}

void nn_linear_backward(real *dx, real *dW, real *db, const real *dy, const real *x,
                        const real *W, int N, int In, int Out)
{
    if (dx)
        nn_gemm(false, false, N, In, Out, 1, dy, Out, W, In, 1, dx, In);
    if (dW)
        nn_gemm(true, false, Out, In, N, 1, dy, Out, x, In, 1, dW, In);
    if (db)
        nn_bias_backward(NULL, db, dy, N, Out);
}

int nn_set_threads(int n)
{
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    openblas_set_num_threads(n);
    nn_parallel_set_threads(n);
    return n;
}
