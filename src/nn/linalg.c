#include "nn/linalg.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cores.h"
#include "base/err.h"
#include "nn/bf16.h"
#include "nn/ops.h"
#include "nn/parallel.h"

/* Products split over the pool's threads (nn_products_on_pool): each part is one
   single-threaded BLAS call on a range of C's rows or columns, in blocks of SPLIT_BLOCK. */
static bool split;
enum { SPLIT_BLOCK = 16 };

typedef struct GemmPart {
    const GemmShape *s;
    real alpha, beta;
    const real *A, *B;
    real *C;
    bool by_rows; /* split M (rows of C) or N (columns of C) */
} GemmPart;

static void gemm_part(void *ctx, size_t lo, size_t hi)
{
    const GemmPart *g = ctx;
    const GemmShape *s = g->s;
    int dim = g->by_rows ? s->M : s->N;
    int a = (int)lo * SPLIT_BLOCK, b = (int)hi * SPLIT_BLOCK < dim ? (int)hi * SPLIT_BLOCK : dim;
    const real *A = g->A, *B = g->B;
    real *C = g->C;
    int M = s->M, N = s->N;
    if (g->by_rows) {
        A += s->trans_a ? (size_t)a : (size_t)a * s->lda;
        C += (size_t)a * s->ldc;
        M = b - a;
    } else {
        B += s->trans_b ? (size_t)a * s->ldb : (size_t)a;
        C += a;
        N = b - a;
    }
    R_CBLAS_GEMM(CblasRowMajor, s->trans_a ? CblasTrans : CblasNoTrans, s->trans_b ? CblasTrans : CblasNoTrans, M,
                 N, s->K, g->alpha, A, s->lda, B, s->ldb, g->beta, C, s->ldc);
}

void nn_gemm(const GemmShape *s, real alpha, const real *A, const real *B, real beta,
             real *C)
{
    const int M = s->M, N = s->N, K = s->K, ldc = s->ldc;
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
#ifndef S2S_REAL_DOUBLE
    if (nn_precision() == PREC_BF16 && alpha == 1 && ldc == N) { /* the products of training all are */
        nn_gemm_bf16(M, N, K, s->trans_a, s->trans_b, A, s->lda, B, s->ldb, beta, C, ldc);
        return;
    }
#endif
    if (split) {
        /* Split the larger of M and N: each part packs all of the other factor, so the
           copies repeated per part are the smaller one's. At least 32 K multiply-adds a
           part. */
        GemmPart g = {.s = s, .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C, .by_rows = M > N};
        int dim = g.by_rows ? M : N, other = g.by_rows ? N : M;
        size_t blocks = ((size_t)dim + SPLIT_BLOCK - 1) / SPLIT_BLOCK;
        size_t grain = 32768 / ((size_t)SPLIT_BLOCK * (size_t)other * (size_t)K) + 1;
        nn_parallel_for(blocks, grain, gemm_part, &g);
        return;
    }
    R_CBLAS_GEMM(CblasRowMajor, s->trans_a ? CblasTrans : CblasNoTrans,
                 s->trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, s->lda, B, s->ldb,
                 beta, C, ldc);
}

static void linear(real *y, const real *x, const real *W, const real *b, const LinearShape *s,
                   real beta)
{
    const int N = s->N, In = s->In, Out = s->Out;
    /* One row (decoding one sentence): a matrix-vector product. OpenBLAS's sgemm would
       first copy all of W into its packing buffer (the vocabulary projection is 17 MB),
       which costs more than the product; sgemv reads W once, in place. */
    if (N == 1 && In > 0 && Out > 0)
        R_CBLAS_GEMV(CblasRowMajor, CblasNoTrans, Out, In, 1, W, In, x, 1, beta, y, 1);
    else
        nn_gemm(&(GemmShape){.M = N, .N = Out, .K = In, .trans_b = true, .lda = In, .ldb = In, .ldc = Out},
                1, x, W, beta, y);
    if (b)
        nn_bias_forward(y, y, b, N, Out);
}

void nn_linear_forward(real *y, const real *x, const real *W, const real *b, const LinearShape *s)
{
    linear(y, x, W, b, s, 0);
}

void nn_linear_forward_acc(real *y, const real *x, const real *W, const real *b, const LinearShape *s)
{
    linear(y, x, W, b, s, 1);
}

/* ---- few rows: two rows of W at a time against all N rows of x, in vectors of 32 bytes
   (8 floats), one accumulator per (row of W, row of x), summed across lanes in order */

typedef real FewVec __attribute__((vector_size(32)));
enum { FEW_LANES = (int)(32 / sizeof(real)) };

typedef struct FewJob {
    real *y;
    const real *x, *W, *b;
    int N, In, Out;
} FewJob;

static inline __attribute__((always_inline)) real few_finish(const FewVec *a, const real *w, const real *x, int K,
                                                             int In)
{
    real s = 0;
    for (int l = 0; l < FEW_LANES; l++)
        s += (*a)[l];
    for (int k = K; k < In; k++)
        s += w[k] * x[k];
    return s;
}

/* Rows [lo, hi) of W (lo even) for N rows of x; N a constant after inlining. */
static inline __attribute__((always_inline)) void few_rows(const FewJob *j, size_t lo, size_t hi, const int N)
{
    const int In = j->In, K = In / FEW_LANES * FEW_LANES;
    const real *x = j->x;
    for (size_t o = lo; o < hi; o += 2) {
        const bool two = o + 1 < hi;
        const real *w0 = j->W + o * (size_t)In, *w1 = two ? w0 + In : w0;
        FewVec a0[NN_FEW_ROWS], a1[NN_FEW_ROWS];
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++)
            a0[n] = a1[n] = (FewVec){0};
        for (int k = 0; k < K; k += FEW_LANES) {
            FewVec v0, v1;
            memcpy(&v0, w0 + k, sizeof v0);
            memcpy(&v1, w1 + k, sizeof v1);
            _Pragma("GCC unroll 8")
            for (int n = 0; n < N; n++) {
                FewVec xv;
                memcpy(&xv, x + (size_t)n * In + k, sizeof xv);
                a0[n] += v0 * xv;
                a1[n] += v1 * xv;
            }
        }
        for (int n = 0; n < N; n++) {
            const real *xn = x + (size_t)n * In;
            real *yn = j->y + (size_t)n * j->Out;
            yn[o] = few_finish(&a0[n], w0, xn, K, In) + (j->b ? j->b[o] : 0);
            if (two)
                yn[o + 1] = few_finish(&a1[n], w1, xn, K, In) + (j->b ? j->b[o + 1] : 0);
        }
    }
}

/* [lo, hi) in pairs of rows of W */
NN_SIMD static void few_range(void *ctx, size_t lo, size_t hi)
{
    const FewJob *j = ctx;
    size_t a = 2 * lo, z = 2 * hi < (size_t)j->Out ? 2 * hi : (size_t)j->Out;
    switch (j->N) {
    case 1: few_rows(j, a, z, 1); break;
    case 2: few_rows(j, a, z, 2); break;
    case 3: few_rows(j, a, z, 3); break;
    case 4: few_rows(j, a, z, 4); break;
    case 5: few_rows(j, a, z, 5); break;
    case 6: few_rows(j, a, z, 6); break;
    case 7: few_rows(j, a, z, 7); break;
    default: few_rows(j, a, z, 8); break;
    }
}

void nn_linear_forward_few(real *y, const real *x, const real *W, const real *b, const LinearShape *s)
{
    const int N = s->N, In = s->In, Out = s->Out;
    CHECK(N >= 1 && N <= NN_FEW_ROWS && In >= 0 && Out >= 0);
    FewJob j = {.y = y, .x = x, .W = W, .b = b, .N = N, .In = In, .Out = Out};
    size_t pairs = ((size_t)Out + 1) / 2;
    /* a share of at least 64 K multiply-adds per thread: waking a thread for less costs
       more than it saves */
    size_t grain = (size_t)(65536 / ((size_t)N * (In > 0 ? In : 1) * 2)) + 1;
    nn_parallel_for(pairs, grain, few_range, &j);
}

void nn_linear_backward(real *dx, real *dW, real *db, const real *dy, const real *x,
                        const real *W, const LinearShape *s)
{
    const int N = s->N, In = s->In, Out = s->Out;
    if (dx)
        nn_gemm(&(GemmShape){.M = N, .N = In, .K = Out, .lda = Out, .ldb = In, .ldc = In},
                1, dy, W, 1, dx);
    if (dW) {
#ifndef S2S_REAL_DOUBLE
        if (dx) /* dy, as stored, is the A of both products */
            nn_bf16_same_a(dy);
#endif
        nn_gemm(&(GemmShape){.M = Out, .N = In, .K = N, .trans_a = true, .lda = Out, .ldb = In, .ldc = In},
                1, dy, x, 1, dW);
    }
    if (db)
        nn_bias_backward(NULL, db, dy, N, Out);
}

/* At most this many BLAS threads (nn_blas_limit; 0: no cap); the count nn_set_threads
   gave BLAS and oneDNN last. */
static int blas_cap, blas_threads = 1;

/* How long the pool's threads poll between jobs while the products are on it: long enough
   to span the loops and bookkeeping between two products of a training step, short
   enough that an idle process stops using its cores at once. */
enum { POOL_SPIN_NS = 100000 };

void nn_products_on_pool(bool on)
{
    if (on == split)
        return;
    split = on;
    nn_bf16_split(on);
    nn_parallel_spin(on ? POOL_SPIN_NS : 0);
    openblas_set_num_threads(on ? 1 : blas_threads);
    nn_bf16_threads(on ? 1 : blas_threads);
}

void nn_blas_limit(int n)
{
    blas_cap = n;
    openblas_set_num_threads(n);
}

int nn_set_threads(int n)
{
    if (n <= 0)
        n = cores_free();
    int blas = blas_cap > 0 && blas_cap < n ? blas_cap : n;
    blas_threads = blas;
    openblas_set_num_threads(split ? 1 : blas);
    nn_bf16_threads(split ? 1 : blas);
    nn_parallel_set_threads(n);
    if (blas_cap > 0) {
        /* one product on every BLAS thread, so that OpenBLAS maps their buffers now,
           before the command's model and batches take the rest of the limit */
        enum { W = 512 };
        float *a = xcalloc(3 * (size_t)W * W, sizeof *a);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, W, W, W, 1.0f, a, W, a + W * W, W, 0.0f,
                    a + 2 * W * W, W);
        free(a);
    }
    return n;
}
