/* Matrix products in bf16 (nn/bf16.h), through nn_gemm: inputs that bf16 holds exactly
   give the exact product for every transposition and beta, other inputs are rounded to
   nearest even first, and a training step of each architecture is within a stated bound
   of fp32's. On a CPU without bf16 instructions each test checks that bf16 is refused
   and that nn_gemm stays fp32. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "base/rng.h"
#include "data/batch.h"
#include "model/model.h"
#include "nn/bf16.h"
#include "nn/linalg.h"
#include "nn/parallel.h"

/* k/8 for k in [-16, 16]: exact in bf16, and every sum below exact in fp32 */
static float small(Rng *r)
{
    return (float)((int)rng_below(r, 33) - 16) / 8.0f;
}

/* C = op(A)op(B) + beta C in double, the reference. */
static void reference(const GemmShape *s, const float *A, const float *B, float beta, const float *C0, double *C)
{
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < s->N; j++) {
            double sum = 0;
            for (int k = 0; k < s->K; k++) {
                double a = s->trans_a ? A[(size_t)k * s->lda + i] : A[(size_t)i * s->lda + k];
                double b = s->trans_b ? B[(size_t)j * s->ldb + k] : B[(size_t)k * s->ldb + j];
                sum += a * b;
            }
            C[(size_t)i * s->N + j] = sum + (double)beta * C0[(size_t)i * s->ldc + j];
        }
}

/* Every shape, transposition and beta on `pool` threads of the pool (split by rows over
   them with pool > 1, as training runs them: nn_products_on_pool; oneDNN's own threads
   with 1). */
static void expect_exact_products(Rng *r, int pool)
{
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {37, 19, 64}, {64, 300, 33}, {200, 17, 130}};
    static const float betas[] = {0, 1, 0.5f};
    nn_parallel_set_threads(pool);
    nn_products_on_pool(pool > 1);
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (int t = 0; t < 4; t++)
            for (int bi = 0; bi < 3; bi++) {
                int M = shapes[k][0], N = shapes[k][1], K = shapes[k][2];
                bool ta = t & 1, tb = t & 2;
                GemmShape s = {.M = M, .N = N, .K = K, .trans_a = ta, .trans_b = tb, .lda = ta ? M : K,
                               .ldb = tb ? K : N, .ldc = N};
                float *A = malloc(sizeof *A * (size_t)M * K), *B = malloc(sizeof *B * (size_t)K * N),
                      *C = malloc(sizeof *C * (size_t)M * N), *C0 = malloc(sizeof *C0 * (size_t)M * N);
                double *want = malloc(sizeof *want * (size_t)M * N);
                for (int i = 0; i < M * K; i++)
                    A[i] = small(r);
                for (int i = 0; i < K * N; i++)
                    B[i] = small(r);
                for (int i = 0; i < M * N; i++)
                    C[i] = C0[i] = small(r);
                reference(&s, A, B, betas[bi], C0, want);
                nn_gemm(&s, 1, A, B, betas[bi], C);
                int bad = 0;
                for (int i = 0; i < M * N; i++)
                    bad += (double)C[i] != want[i];
                cr_expect_eq(bad, 0, "pool %d: %dx%dx%d trans %d %d beta %g: %d of %d differ", pool, M, N, K, ta,
                             tb, (double)betas[bi], bad, M * N);
                free(A); free(B); free(C); free(C0); free(want);
            }
    nn_products_on_pool(false);
    nn_parallel_set_threads(1);
}

Test(bf16, representable_inputs_give_the_exact_product)
{
    if (!bf16_on_or_refused())
        return;
    Rng r;
    rng_seed(&r, 7);
    for (int pool = 1; pool <= 3; pool++)
        expect_exact_products(&r, pool);
}

/* bf16 keeps 7 fraction bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 and rounds to
   the even 1; 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6 and rounds to the even
   1 + 2^-6. The products show the rounding, so the test fails on the fp32 path. */
Test(bf16, inputs_are_rounded_to_nearest_even)
{
    if (!bf16_on_or_refused())
        return;
    float A[2] = {1 + 0x1p-8f, 1 + 3 * 0x1p-8f}, B[2] = {1, 1}, C[2];
    GemmShape s = {.M = 2, .N = 1, .K = 1, .lda = 1, .ldb = 1, .ldc = 1};
    nn_gemm(&s, 1, A, B, 0, C);
    cr_expect_eq(C[0], 1.0f);
    cr_expect_eq(C[1], 1 + 0x1p-6f);
    nn_set_precision(PREC_F32, &(Err){0});
    nn_gemm(&s, 1, A, B, 0, C);
    cr_expect_eq(C[0], A[0], "fp32 again");
}

enum { VOCAB = 40, PAIRS = 8 };

/* The loss and gradient of one batch of made-up pairs with cfg's model, in the current
   precision; the weights drawn from seed 11. */
static double step(ModelConfig cfg, real *grads)
{
    static int src[PAIRS][12], tgt[PAIRS][12];
    int *sp[PAIRS], *tp[PAIRS], sl[PAIRS], tl[PAIRS];
    Rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < PAIRS; i++) {
        sl[i] = 4 + (int)rng_below(&r, 8);
        tl[i] = 4 + (int)rng_below(&r, 8);
        for (int t = 0; t < 12; t++) {
            src[i][t] = 4 + (int)rng_below(&r, VOCAB - 4);
            tgt[i][t] = 4 + (int)rng_below(&r, VOCAB - 4);
        }
        sp[i] = src[i];
        tp[i] = tgt[i];
    }
    PairSet d = {.n = PAIRS, .src = sp, .src_len = sl, .tgt = tp, .tgt_len = tl};
    cfg.dropout = 0;
    cfg.label_smoothing = 0;
    cfg.src_vocab = cfg.tgt_vocab = VOCAB;
    cr_assert_eq(model_config_check(&cfg, NULL), 0);
    Model m;
    model_init(&m, &cfg, true);
    rng_seed(&r, 11);
    model_init_random(&m, &r);
    BatchOpts o = {PAIRS, 0, 0};
    int mb, ms, mt;
    batch_limits(&d, &o, &mb, &ms, &mt);
    BatchBuf bb;
    batch_buf_init(&bb, mb, ms, mt);
    Work *w = work_new(&m, mb, ms, mt, true);
    int rows[PAIRS] = {0, 1, 2, 3, 4, 5, 6, 7};
    Batch b;
    batch_fill(&b, &bb, &d, rows, PAIRS);
    memset(m.grads, 0, m.layout.total * sizeof(real));
    double loss = model_forward_backward(&m, w, &b, NULL) / (double)b.ntok;
    memcpy(grads, m.grads, m.layout.total * sizeof(real));
    work_free(w);
    batch_buf_free(&bb);
    model_free(&m);
    return loss;
}

/* The bf16 step against fp32's on the same weights and batch: the loss within 0.2 %
   and the gradient within 10 % (relative L2 norm; a product in the wrong order or
   layout is off by 100 % or more, the fp32 path by exactly 0, refused below). bf16
   keeps 8 significant bits, a relative rounding of at most 2^-9 on each input of a
   product, and the gradients of a freshly drawn model come from sums that cancel:
   measured here, the loss 0.007 % (Transformer) and 0.00005 % (recurrent) off, the
   gradient 2.7 % and 0.3 %. */
static void expect_parity(ModelConfig cfg, const char *what)
{
    Model shape;
    cfg.src_vocab = cfg.tgt_vocab = VOCAB;
    cfg.dropout = 0;
    cfg.label_smoothing = 0;
    model_init(&shape, &cfg, false);
    size_t n = shape.layout.total;
    model_free(&shape);
    real *g32 = malloc(n * sizeof *g32), *g16 = malloc(n * sizeof *g16);
    nn_set_precision(PREC_F32, &(Err){0});
    double l32 = step(cfg, g32);
    if (!bf16_on_or_refused()) {
        free(g32); free(g16);
        return;
    }
    double l16 = step(cfg, g16);
    double d2 = 0, n2 = 0;
    for (size_t i = 0; i < n; i++) {
        d2 += ((double)g16[i] - g32[i]) * ((double)g16[i] - g32[i]);
        n2 += (double)g32[i] * g32[i];
    }
    double dl = fabs(l16 - l32) / l32, dg = sqrt(d2 / n2);
    cr_log_info("%s: loss %.6f vs %.6f (%.2e), gradient %.2e", what, l16, l32, dl, dg);
    cr_expect(dl <= 2e-3, "%s: loss %.6f in bf16, %.6f in fp32", what, l16, l32);
    cr_expect(dg <= 0.1, "%s: gradient %.3g off (relative L2)", what, dg);
    cr_expect(dg > 0, "%s: the bf16 gradient equals fp32's: bf16 was not used", what);
    free(g32); free(g16);
}

Test(bf16, a_training_step_is_within_bounds_of_fp32s)
{
    ModelConfig tf = model_config_transformer();
    tf.model_dim = 32;
    tf.ff = 64;
    tf.heads = 2;
    tf.layers = 2;
    expect_parity(tf, "Transformer");
    ModelConfig rnn = model_config_default();
    rnn.emb = rnn.hidden = rnn.dec_hidden = rnn.attn = rnn.deep_out = 32;
    expect_parity(rnn, "recurrent");
}

/* Inside nn_bf16_fixed_begin/end, a matrix among the fixed floats is rounded once per
   pass and kept: the products equal those without it, a change made inside the pass
   is not seen (the kept form is used: the contract), and the next pass sees it. */
Test(bf16, fixed_weights_are_rounded_once_a_pass)
{
    if (!bf16_on_or_refused())
        return;
    enum { N = 5000, R = 20, C = 30, M = 7 };
    float *P = malloc(N * sizeof *P), A[M * C], dY[M * R], y0[M * R], y1[M * R], dx0[M * C], dx1[M * C];
    Rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < N; i++)
        P[i] = (float)rng_uniform(&r) - 0.5f;
    for (int i = 0; i < M * C; i++)
        A[i] = (float)rng_uniform(&r) - 0.5f;
    for (int i = 0; i < M * R; i++)
        dY[i] = (float)rng_uniform(&r) - 0.5f;
    const float *W = P + 1234; /* (R, C) */
    GemmShape fwd = {.M = M, .N = R, .K = C, .trans_b = true, .lda = C, .ldb = C, .ldc = R};
    GemmShape bwd = {.M = M, .N = C, .K = R, .lda = R, .ldb = C, .ldc = C};
    nn_gemm(&fwd, 1, A, W, 0, y0);
    nn_gemm(&bwd, 1, dY, W, 0, dx0);
    nn_bf16_fixed_begin(P, N);
    nn_gemm(&fwd, 1, A, W, 0, y1);
    cr_expect(memcmp(y0, y1, sizeof y0) == 0, "forward with the kept form");
    nn_gemm(&bwd, 1, dY, W, 0, dx1);
    cr_expect(memcmp(dx0, dx1, sizeof dx0) == 0, "backward with the kept form");
    P[1234] += 1; /* against the contract: not seen until the next pass */
    nn_gemm(&fwd, 1, A, W, 0, y1);
    cr_expect(memcmp(y0, y1, sizeof y0) == 0, "the kept form was not used");
    nn_bf16_fixed_end();
    nn_gemm(&fwd, 1, A, W, 0, y0);
    cr_expect(y0[0] != y1[0], "outside a pass the change is seen");
    nn_bf16_fixed_begin(P, N);
    nn_gemm(&fwd, 1, A, W, 0, y1);
    nn_bf16_fixed_end();
    cr_expect(memcmp(y0, y1, sizeof y0) == 0, "the next pass rounds it again");
    free(P);
}

/* nn_linear_backward's two products share dy's bf16 form: dx and dW equal those of two
   products each rounding dy. */
Test(bf16, the_backward_products_share_dy)
{
    if (!bf16_on_or_refused())
        return;
    enum { N = 9, In = 13, Out = 11 };
    float x[N * In], W[Out * In], dy[N * Out], dx0[N * In] = {0}, dW0[Out * In] = {0}, dx1[N * In] = {0},
                                                 dW1[Out * In] = {0};
    Rng r;
    rng_seed(&r, 4);
    for (int i = 0; i < N * In; i++)
        x[i] = (float)rng_uniform(&r) - 0.5f;
    for (int i = 0; i < Out * In; i++)
        W[i] = (float)rng_uniform(&r) - 0.5f;
    for (int i = 0; i < N * Out; i++)
        dy[i] = (float)rng_uniform(&r) - 0.5f;
    nn_linear_backward(dx0, NULL, NULL, dy, x, W, &(LinearShape){N, In, Out});
    nn_linear_backward(NULL, dW0, NULL, dy, x, W, &(LinearShape){N, In, Out});
    nn_linear_backward(dx1, dW1, NULL, dy, x, W, &(LinearShape){N, In, Out});
    cr_expect(memcmp(dx0, dx1, sizeof dx0) == 0);
    cr_expect(memcmp(dW0, dW1, sizeof dW0) == 0);
}
