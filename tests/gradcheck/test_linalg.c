/* Gradient checks (double precision) for nn_gemm and the linear layer.
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>

#include "gradcheck.h"
#include "nn/linalg.h"

TestSuite(gc_linalg, .fini = gc_free_all);

/* Naive reference for C = alpha op(A) op(B) + beta C. */
static void naive_gemm(int ta, int tb, int M, int N, int K, double alpha, const real *A,
                       int lda, const real *B, int ldb, double beta, real *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                double a = ta ? A[k * lda + i] : A[i * lda + k];
                double b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += a * b;
            }
            C[i * ldc + j] = (real)(alpha * s + beta * C[i * ldc + j]);
        }
}

Test(gc_linalg, gemm_matches_naive_for_all_transposes_and_strides)
{
    Rng r;
    rng_seed(&r, 1);
    int M = 3, N = 4, K = 5, pad = 2;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
            real *A = gc_rand(&r, (size_t)(ta ? K : M) * lda, 1);
            real *Bm = gc_rand(&r, (size_t)(tb ? N : K) * ldb, 1);
            real *C = gc_rand(&r, (size_t)M * ldc, 1);
            real *Cref = gc_copy(C, (size_t)M * ldc);
            GemmShape sh = {.M = M, .N = N, .K = K, .trans_a = ta, .trans_b = tb,
                            .lda = lda, .ldb = ldb, .ldc = ldc};
            nn_gemm(&sh, 0.7, A, Bm, 0.3, C);
            naive_gemm(ta, tb, M, N, K, 0.7, A, lda, Bm, ldb, 0.3, Cref, ldc);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < ldc; j++)
                    cr_expect(fabs(C[i * ldc + j] - Cref[i * ldc + j]) <= 1e-14,
                              "ta=%d tb=%d C[%d,%d] %.17g vs %.17g", ta, tb, i, j,
                              C[i * ldc + j], Cref[i * ldc + j]);
        }
}

Test(gc_linalg, gemm_with_k_zero_scales_c_by_beta)
{
    real C[6] = {1, 2, 3, 4, 5, 6}, A[1] = {0}, Bm[1] = {0};
    const GemmShape sh = {.M = 2, .N = 3, .K = 0, .lda = 1, .ldb = 3, .ldc = 3};
    nn_gemm(&sh, 1, A, Bm, 0.5, C);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(C[i], 0.5 * (i + 1));
    nn_gemm(&sh, 1, A, Bm, 0, C);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(C[i], 0);
}

typedef struct {
    int N, In, Out, acc;
    real *x, *W, *b, *y0, *y, *w;
} LinCtx;

static double lin_loss(void *p)
{
    LinCtx *c = p;
    size_t n = (size_t)c->N * c->Out;
    if (c->acc) {
        for (size_t i = 0; i < n; i++)
            c->y[i] = c->y0[i];
        nn_linear_forward_acc(c->y, c->x, c->W, c->b, &(LinearShape){c->N, c->In, c->Out});
    } else {
        nn_linear_forward(c->y, c->x, c->W, c->b, &(LinearShape){c->N, c->In, c->Out});
    }
    return gc_dot(c->w, c->y, n);
}

static void check_linear(int acc, int with_bias)
{
    Rng r;
    rng_seed(&r, 2 + acc);
    LinCtx c = {.N = 3, .In = 4, .Out = 5, .acc = acc};
    size_t nx = 12, nW = 20, ny = 15;
    c.x = gc_rand(&r, nx, 1);
    c.W = gc_rand(&r, nW, 1);
    c.b = with_bias ? gc_rand(&r, 5, 1) : NULL;
    c.y0 = gc_rand(&r, ny, 1);
    c.y = gc_zeros(ny);
    c.w = gc_rand(&r, ny, 1);
    lin_loss(&c);
    real *dx = gc_rand(&r, nx, 1), *dW = gc_rand(&r, nW, 1), *db = gc_rand(&r, 5, 1);
    real *dx0 = gc_copy(dx, nx), *dW0 = gc_copy(dW, nW), *db0 = gc_copy(db, 5);
    nn_linear_backward(dx, dW, with_bias ? db : NULL, c.w, c.x, c.W, &(LinearShape){c.N, c.In, c.Out});
    gc_check("linear dx", c.x, nx, dx, dx0, lin_loss, &c);
    gc_check("linear dW", c.W, nW, dW, dW0, lin_loss, &c);
    if (with_bias)
        gc_check("linear db", c.b, 5, db, db0, lin_loss, &c);
    else
        for (int i = 0; i < 5; i++)
            cr_expect_eq(db[i], db0[i], "db touched although NULL was passed");
    if (acc)
        gc_check("linear_acc dy0", c.y0, ny, c.w, NULL, lin_loss, &c);
}

Test(gc_linalg, linear_gradients) { check_linear(0, 1); }
Test(gc_linalg, linear_without_bias_gradients) { check_linear(0, 0); }
Test(gc_linalg, linear_acc_gradients) { check_linear(1, 1); }

Test(gc_linalg, linear_backward_skips_null_gradients)
{
    Rng r;
    rng_seed(&r, 9);
    real *x = gc_rand(&r, 12, 1), *W = gc_rand(&r, 20, 1), *dy = gc_rand(&r, 15, 1);
    real *dx = gc_zeros(12), *dW = gc_zeros(20);
    real *dxa = gc_zeros(12), *dWa = gc_zeros(20);
    nn_linear_backward(dx, NULL, NULL, dy, NULL, W, &(LinearShape){3, 4, 5});
    nn_linear_backward(NULL, dW, NULL, dy, x, NULL, &(LinearShape){3, 4, 5});
    nn_linear_backward(dxa, dWa, NULL, dy, x, W, &(LinearShape){3, 4, 5});
    for (int i = 0; i < 12; i++)
        cr_expect_eq(dx[i], dxa[i]);
    for (int i = 0; i < 20; i++)
        cr_expect_eq(dW[i], dWa[i]);
}
