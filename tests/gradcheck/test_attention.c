/* Gradient checks (double precision) for additive attention: scores, masked softmax,
   context, and the three chained. B = 3, S = 5 with lengths {5, 3, 1}.
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>

#include "gradcheck.h"
#include "nn/attention.h"

TestSuite(gc_attention, .fini = gc_free_all);

enum { B = 3, S = 5, A = 3, D = 4 };
static const int lens[B] = {5, 3, 1};

/* ---- score ---- */

typedef struct {
    real *q, *K, *v, *e, *cache, *w;
} ScoreCtx;

static double score_loss(void *p)
{
    ScoreCtx *c = p;
    nn_attn_score_forward(c->e, c->cache, c->q, c->K, c->v, S, B, A);
    return gc_dot(c->w, c->e, B * S);
}

Test(gc_attention, score_gradients_and_values)
{
    Rng r;
    rng_seed(&r, 70);
    ScoreCtx c;
    c.q = gc_rand(&r, B * A, 1);
    c.K = gc_rand(&r, S * B * A, 1);
    c.v = gc_rand(&r, A, 1);
    c.e = gc_zeros(B * S);
    c.cache = gc_zeros(S * B * A);
    c.w = gc_rand(&r, B * S, 1);
    score_loss(&c);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < S; j++) {
            double s = 0;
            for (int a = 0; a < A; a++)
                s += c.v[a] * tanh(c.q[b * A + a] + c.K[(j * B + b) * A + a]);
            cr_expect(fabs(c.e[b * S + j] - s) < 1e-15, "e[%d,%d]", b, j);
        }
    real *dq = gc_rand(&r, B * A, 1), *dK = gc_rand(&r, S * B * A, 1), *dv = gc_rand(&r, A, 1);
    real *dq0 = gc_copy(dq, B * A), *dK0 = gc_copy(dK, S * B * A), *dv0 = gc_copy(dv, A);
    nn_attn_score_backward(dq, dK, dv, c.w, c.cache, c.v, S, B, A);
    gc_check("attn score dq", c.q, B * A, dq, dq0, score_loss, &c);
    gc_check("attn score dK", c.K, S * B * A, dK, dK0, score_loss, &c);
    gc_check("attn score dv", c.v, A, dv, dv0, score_loss, &c);
}

/* ---- masked softmax ---- */

typedef struct {
    real *e, *a, *w;
} SoftCtx;

static double soft_loss(void *p)
{
    SoftCtx *c = p;
    nn_masked_softmax_forward(c->a, c->e, lens, B, S);
    return gc_dot(c->w, c->a, B * S);
}

Test(gc_attention, masked_softmax_gradients_and_exact_zeros)
{
    Rng r;
    rng_seed(&r, 71);
    SoftCtx c;
    c.e = gc_rand(&r, B * S, 3);
    /* Huge scores at masked positions must not leak into the weights. */
    c.e[1 * S + 4] = 1e300;
    c.e[2 * S + 1] = INFINITY;
    c.a = gc_zeros(B * S);
    c.w = gc_rand(&r, B * S, 1);
    soft_loss(&c);
    for (int b = 0; b < B; b++) {
        double sum = 0;
        for (int j = 0; j < S; j++) {
            if (j >= lens[b])
                cr_expect(c.a[b * S + j] == 0, "a[%d,%d] = %g at a masked position", b, j,
                          c.a[b * S + j]);
            else
                cr_expect(c.a[b * S + j] > 0);
            sum += c.a[b * S + j];
        }
        cr_expect(fabs(sum - 1) < 1e-15, "row %d sums to %.17g", b, sum);
    }
    cr_expect_eq(c.a[2 * S + 0], 1, "a single valid position gets weight 1");
    c.e[1 * S + 4] = 0.5; /* finite again for the differences below */
    c.e[2 * S + 1] = -0.5;
    soft_loss(&c);
    real *de = gc_zeros(B * S);
    nn_masked_softmax_backward(de, c.w, c.a, lens, B, S);
    for (int b = 0; b < B; b++)
        for (int j = lens[b]; j < S; j++)
            cr_expect(de[b * S + j] == 0, "de[%d,%d] = %g at a masked position", b, j,
                      de[b * S + j]);
    real *de0 = gc_rand(&r, B * S, 1), *de1 = gc_copy(de0, B * S);
    nn_masked_softmax_backward(de1, c.w, c.a, lens, B, S);
    gc_check("masked softmax de", c.e, B * S, de1, de0, soft_loss, &c);
}

Test(gc_attention, masked_softmax_is_stable_for_large_scores)
{
    real e[2 * 3] = {1000, 1001, 1002, -1000, -1001, -1002};
    real a[6];
    int l[2] = {3, 3};
    nn_masked_softmax_forward(a, e, l, 2, 3);
    double z = 1 + exp(-1.0) + exp(-2.0);
    cr_expect(fabs(a[2] - 1 / z) < 1e-15 && fabs(a[0] - exp(-2.0) / z) < 1e-15);
    cr_expect(fabs(a[3] - 1 / z) < 1e-15 && fabs(a[5] - exp(-2.0) / z) < 1e-15);
}

/* ---- context ---- */

typedef struct {
    real *a, *Hs, *ctx, *w;
} CtxCtx;

static double ctx_loss(void *p)
{
    CtxCtx *c = p;
    nn_attn_context_forward(c->ctx, c->a, c->Hs, S, B, D);
    return gc_dot(c->w, c->ctx, B * D);
}

Test(gc_attention, context_gradients)
{
    Rng r;
    rng_seed(&r, 72);
    CtxCtx c;
    c.a = gc_rand(&r, B * S, 1);
    c.Hs = gc_rand(&r, S * B * D, 1);
    c.ctx = gc_zeros(B * D);
    c.w = gc_rand(&r, B * D, 1);
    ctx_loss(&c);
    real *da = gc_rand(&r, B * S, 1), *dH = gc_rand(&r, S * B * D, 1);
    real *da0 = gc_copy(da, B * S), *dH0 = gc_copy(dH, S * B * D);
    nn_attn_context_backward(da, dH, c.w, c.a, c.Hs, S, B, D);
    gc_check("attn context da", c.a, B * S, da, da0, ctx_loss, &c);
    gc_check("attn context dHs", c.Hs, S * B * D, dH, dH0, ctx_loss, &c);
}

/* ---- the chain: scores → masked softmax → context ---- */

typedef struct {
    real *q, *K, *v, *Hs, *e, *cache, *a, *ctx, *w;
} ChainCtx;

static double chain_loss(void *p)
{
    ChainCtx *c = p;
    nn_attn_score_forward(c->e, c->cache, c->q, c->K, c->v, S, B, A);
    nn_masked_softmax_forward(c->a, c->e, lens, B, S);
    nn_attn_context_forward(c->ctx, c->a, c->Hs, S, B, D);
    return gc_dot(c->w, c->ctx, B * D);
}

Test(gc_attention, chained_attention_gradients_with_padding)
{
    Rng r;
    rng_seed(&r, 73);
    ChainCtx c;
    c.q = gc_rand(&r, B * A, 1);
    c.K = gc_rand(&r, S * B * A, 1);
    c.v = gc_rand(&r, A, 2);
    c.Hs = gc_rand(&r, S * B * D, 1);
    c.e = gc_zeros(B * S);
    c.cache = gc_zeros(S * B * A);
    c.a = gc_zeros(B * S);
    c.ctx = gc_zeros(B * D);
    c.w = gc_rand(&r, B * D, 1);
    chain_loss(&c);
    real *da = gc_zeros(B * S), *de = gc_zeros(B * S);
    real *dq = gc_zeros(B * A), *dK = gc_zeros(S * B * A), *dv = gc_zeros(A);
    real *dH = gc_zeros(S * B * D);
    nn_attn_context_backward(da, dH, c.w, c.a, c.Hs, S, B, D);
    nn_masked_softmax_backward(de, da, c.a, lens, B, S);
    nn_attn_score_backward(dq, dK, dv, de, c.cache, c.v, S, B, A);
    /* Padded source positions get exactly zero gradient. */
    for (int b = 0; b < B; b++)
        for (int j = lens[b]; j < S; j++) {
            gc_expect_zero("dK at a padded position", dK + (j * B + b) * A, A);
            gc_expect_zero("dHs at a padded position", dH + (j * B + b) * D, D);
        }
    gc_check("attention chain dq", c.q, B * A, dq, NULL, chain_loss, &c);
    gc_check("attention chain dK", c.K, S * B * A, dK, NULL, chain_loss, &c);
    gc_check("attention chain dv", c.v, A, dv, NULL, chain_loss, &c);
    gc_check("attention chain dHs", c.Hs, S * B * D, dH, NULL, chain_loss, &c);
}
