/* Gradient checks (double precision) for the attention kernels. Additive attention:
   scores, masked softmax, context, and the three chained (B = 3, S = 5 with lengths
   {5, 3, 1}). Luong-path kernels: multi-head context, multi-head scaled dot scores,
   window softmax, the local-p Gaussian factor and position, and those chained
   (dimensions per test).
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <string.h>

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
    nn_attn_score_forward(c->e, c->cache, c->q, c->K, c->v, &(AttnShape){.S = S, .B = B, .A = A});
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
    /* the backward's recomputed cache is the forward's, bit for bit */
    real *again = gc_zeros(S * B * A);
    nn_attn_score_cache(again, c.q, c.K, &(AttnShape){.S = S, .B = B, .A = A});
    cr_expect(memcmp(again, c.cache, (size_t)S * B * A * sizeof(real)) == 0, "recomputed cache differs");
    real *dq = gc_rand(&r, B * A, 1), *dK = gc_rand(&r, S * B * A, 1), *dv = gc_rand(&r, A, 1);
    real *dq0 = gc_copy(dq, B * A), *dK0 = gc_copy(dK, S * B * A), *dv0 = gc_copy(dv, A);
    nn_attn_score_backward(dq, dK, dv, c.w, c.cache, c.v, &(AttnShape){.S = S, .B = B, .A = A});
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
    nn_attn_context_forward(c->ctx, c->a, c->Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
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
    nn_attn_context_backward(da, dH, c.w, c.a, c.Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
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
    nn_attn_score_forward(c->e, c->cache, c->q, c->K, c->v, &(AttnShape){.S = S, .B = B, .A = A});
    nn_masked_softmax_forward(c->a, c->e, lens, B, S);
    nn_attn_context_forward(c->ctx, c->a, c->Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
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
    nn_attn_context_backward(da, dH, c.w, c.a, c.Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
    nn_masked_softmax_backward(de, da, c.a, lens, B, S);
    nn_attn_score_backward(dq, dK, dv, de, c.cache, c.v, &(AttnShape){.S = S, .B = B, .A = A});
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

/* ======== Luong-path kernels ======== */

/* |x − ref| <= 1e-14 · (1 + |ref|): forward values against a direct computation. */
static void expect_close(const char *what, double x, double ref, int i, int j, int k)
{
    cr_expect(fabs(x - ref) <= 1e-14 * (1 + fabs(ref)), "%s[%d,%d,%d] = %.17g, expected %.17g",
              what, i, j, k, x, ref);
}

/* ---- multi-head context ---- */

typedef struct {
    int ns, nb, nd, nh;
    real *a, *Hs, *ctx, *w;
} MhCtxCtx;

static double mh_ctx_loss(void *p)
{
    MhCtxCtx *c = p;
    nn_attn_context_forward(c->ctx, c->a, c->Hs,
                            &(AttnShape){.S = c->ns, .B = c->nb, .A = c->nd, .H = c->nh});
    return gc_dot(c->w, c->ctx, (size_t)c->nb * c->nd);
}

Test(gc_attention, multihead_context_values_and_gradients)
{
    static const int heads[] = {1, 2, 3};
    for (int ci = 0; ci < 3; ci++) {
        Rng r;
        rng_seed(&r, 80 + ci);
        MhCtxCtx c = {.ns = 5, .nb = 3, .nd = 6, .nh = heads[ci]};
        int ns = c.ns, nb = c.nb, nd = c.nd, nh = c.nh, dh = nd / nh;
        size_t na = (size_t)nh * nb * ns, nhs = (size_t)ns * nb * nd, nc = (size_t)nb * nd;
        c.a = gc_rand(&r, na, 1);
        c.Hs = gc_rand(&r, nhs, 1);
        c.ctx = gc_rand(&r, nc, 1); /* overwritten, not accumulated */
        c.w = gc_rand(&r, nc, 1);
        mh_ctx_loss(&c);
        for (int b = 0; b < nb; b++)
            for (int h = 0; h < nh; h++)
                for (int d = 0; d < dh; d++) {
                    double s = 0;
                    for (int j = 0; j < ns; j++)
                        s += c.a[(h * nb + b) * ns + j] * c.Hs[(j * nb + b) * nd + h * dh + d];
                    expect_close("multi-head ctx", c.ctx[b * nd + h * dh + d], s, b, h, d);
                }
        real *da = gc_rand(&r, na, 1), *dH = gc_rand(&r, nhs, 1);
        real *da0 = gc_copy(da, na), *dH0 = gc_copy(dH, nhs);
        nn_attn_context_backward(da, dH, c.w, c.a, c.Hs,
                                 &(AttnShape){.S = ns, .B = nb, .A = nd, .H = nh});
        /* Either gradient alone: NULL is skipped and the other is unchanged. */
        real *da1 = gc_copy(da0, na), *dH1 = gc_copy(dH0, nhs);
        nn_attn_context_backward(da1, NULL, c.w, c.a, c.Hs,
                                 &(AttnShape){.S = ns, .B = nb, .A = nd, .H = nh});
        nn_attn_context_backward(NULL, dH1, c.w, c.a, c.Hs,
                                 &(AttnShape){.S = ns, .B = nb, .A = nd, .H = nh});
        cr_expect(memcmp(da1, da, na * sizeof(real)) == 0, "H=%d: da alone differs", nh);
        cr_expect(memcmp(dH1, dH, nhs * sizeof(real)) == 0, "H=%d: dHs alone differs", nh);
        cr_log_info("multi-head context H=%d", nh);
        gc_check("multi-head context da", c.a, na, da, da0, mh_ctx_loss, &c);
        gc_check("multi-head context dHs", c.Hs, nhs, dH, dH0, mh_ctx_loss, &c);
    }
}

/* The single-head context is the plain weighted sum, in the same order of operations. */
Test(gc_attention, context_single_head_is_exactly_the_weighted_sum)
{
    Rng r;
    rng_seed(&r, 83);
    real *a = gc_rand(&r, B * S, 1), *Hs = gc_rand(&r, S * B * D, 1);
    real *ctx = gc_zeros(B * D), *ref = gc_zeros(B * D), *g = gc_rand(&r, B * D, 1);
    nn_attn_context_forward(ctx, a, Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
    for (int b = 0; b < B; b++)
        for (int j = 0; j < S; j++)
            for (int d = 0; d < D; d++)
                ref[b * D + d] += a[b * S + j] * Hs[(j * B + b) * D + d];
    cr_expect(memcmp(ctx, ref, B * D * sizeof(real)) == 0);
    real *da = gc_zeros(B * S), *dH = gc_zeros(S * B * D);
    real *rda = gc_zeros(B * S), *rdH = gc_zeros(S * B * D);
    nn_attn_context_backward(da, dH, g, a, Hs, &(AttnShape){.S = S, .B = B, .A = D, .H = 1});
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            real s = 0;
            for (int d = 0; d < D; d++)
                s += g[b * D + d] * Hs[(j * B + b) * D + d];
            rda[b * S + j] += s;
            for (int d = 0; d < D; d++)
                rdH[(j * B + b) * D + d] += a[b * S + j] * g[b * D + d];
        }
    cr_expect(memcmp(da, rda, B * S * sizeof(real)) == 0);
    cr_expect(memcmp(dH, rdH, S * B * D * sizeof(real)) == 0);
}

/* ---- multi-head scaled dot scores ---- */

typedef struct {
    int ns, nb, na, nh;
    real scale;
    real *q, *K, *e, *w;
} DotCtx;

static double dot_loss(void *p)
{
    DotCtx *c = p;
    nn_attn_dot_forward(c->e, c->q, c->K,
                        &(AttnShape){.S = c->ns, .B = c->nb, .A = c->na, .H = c->nh, .scale = c->scale});
    return gc_dot(c->w, c->e, (size_t)c->nh * c->nb * c->ns);
}

Test(gc_attention, dot_scores_values_and_gradients)
{
    static const struct {
        int na, nh;
        double scale;
    } cases[] = {{6, 1, 0.7}, {6, 3, 0.70710678118654752}, {6, 2, 1.3}, {4, 1, 1.0}};
    for (int ci = 0; ci < 4; ci++) {
        Rng r;
        rng_seed(&r, 90 + ci);
        DotCtx c = {.ns = 5, .nb = 3, .na = cases[ci].na, .nh = cases[ci].nh,
                    .scale = (real)cases[ci].scale};
        int ns = c.ns, nb = c.nb, na = c.na, nh = c.nh, dh = na / nh;
        size_t nq = (size_t)nb * na, nk = (size_t)ns * nb * na, ne = (size_t)nh * nb * ns;
        c.q = gc_rand(&r, nq, 1);
        c.K = gc_rand(&r, nk, 1);
        c.e = gc_rand(&r, ne, 1); /* every entry is overwritten */
        c.w = gc_rand(&r, ne, 1);
        dot_loss(&c);
        for (int h = 0; h < nh; h++)
            for (int b = 0; b < nb; b++)
                for (int j = 0; j < ns; j++) {
                    double s = 0;
                    for (int d = 0; d < dh; d++)
                        s += c.q[b * na + h * dh + d] * c.K[(j * nb + b) * na + h * dh + d];
                    expect_close("dot e", c.e[(h * nb + b) * ns + j], cases[ci].scale * s, h, b,
                                 j);
                }
        real *dq = gc_rand(&r, nq, 1), *dK = gc_rand(&r, nk, 1);
        real *dq0 = gc_copy(dq, nq), *dK0 = gc_copy(dK, nk);
        nn_attn_dot_backward(dq, dK, c.w, c.q, c.K,
                             &(AttnShape){.S = ns, .B = nb, .A = na, .H = nh, .scale = c.scale});
        real *dq1 = gc_copy(dq0, nq), *dK1 = gc_copy(dK0, nk);
        nn_attn_dot_backward(dq1, NULL, c.w, c.q, c.K,
                             &(AttnShape){.S = ns, .B = nb, .A = na, .H = nh, .scale = c.scale});
        nn_attn_dot_backward(NULL, dK1, c.w, c.q, c.K,
                             &(AttnShape){.S = ns, .B = nb, .A = na, .H = nh, .scale = c.scale});
        cr_expect(memcmp(dq1, dq, nq * sizeof(real)) == 0, "case %d: dq alone differs", ci);
        cr_expect(memcmp(dK1, dK, nk * sizeof(real)) == 0, "case %d: dK alone differs", ci);
        cr_log_info("dot scores A=%d H=%d scale=%g", na, nh, cases[ci].scale);
        gc_check("dot scores dq", c.q, nq, dq, dq0, dot_loss, &c);
        gc_check("dot scores dK", c.K, nk, dK, dK0, dot_loss, &c);
    }
}

/* ---- window softmax ---- */

/* B = 4 rows over S = 7: a window inside the row, a width-1 window, the whole row, and
   one ending before S − 1. */
enum { WB = 4, WS = 7 };
static const int wlo[WB] = {2, 3, 0, 1};
static const int whi[WB] = {5, 3, 6, 4};

typedef struct {
    real *e, *a, *w;
} WinCtx;

static double win_loss(void *p)
{
    WinCtx *c = p;
    nn_window_softmax_forward(c->a, c->e, wlo, whi, WB, WS);
    return gc_dot(c->w, c->a, WB * WS);
}

Test(gc_attention, window_softmax_values_gradients_and_exact_zeros)
{
    Rng r;
    rng_seed(&r, 100);
    WinCtx c;
    c.e = gc_rand(&r, WB * WS, 3);
    /* Huge scores outside the windows must not leak into the weights. */
    c.e[0 * WS + 1] = 1e300;
    c.e[0 * WS + 6] = INFINITY;
    c.e[1 * WS + 2] = INFINITY;
    c.e[3 * WS + 0] = -INFINITY;
    c.a = gc_rand(&r, WB * WS, 1); /* every entry is overwritten */
    c.w = gc_rand(&r, WB * WS, 1);
    win_loss(&c);
    for (int b = 0; b < WB; b++) {
        double m = -INFINITY, z = 0, sum = 0;
        for (int j = wlo[b]; j <= whi[b]; j++)
            m = fmax(m, c.e[b * WS + j]);
        for (int j = wlo[b]; j <= whi[b]; j++)
            z += exp(c.e[b * WS + j] - m);
        for (int j = 0; j < WS; j++) {
            double v = c.a[b * WS + j];
            if (j < wlo[b] || j > whi[b])
                cr_expect(v == 0, "a[%d,%d] = %g outside the window", b, j, v);
            else
                expect_close("window a", v, exp(c.e[b * WS + j] - m) / z, b, j, 0);
            sum += v;
        }
        cr_expect(fabs(sum - 1) < 1e-15, "row %d sums to %.17g", b, sum);
    }
    cr_expect_eq(c.a[1 * WS + 3], 1, "a width-1 window gets weight 1");
    c.e[0 * WS + 1] = 0.5; /* finite again for the differences below */
    c.e[0 * WS + 6] = -0.5;
    c.e[1 * WS + 2] = 0.25;
    c.e[3 * WS + 0] = -0.25;
    win_loss(&c);
    real *de0 = gc_rand(&r, WB * WS, 1), *de = gc_copy(de0, WB * WS);
    nn_window_softmax_backward(de, c.w, c.a, wlo, whi, WB, WS);
    for (int b = 0; b < WB; b++)
        for (int j = 0; j < WS; j++)
            if (j < wlo[b] || j > whi[b])
                cr_expect(de[b * WS + j] == de0[b * WS + j],
                          "de[%d,%d] changed outside the window", b, j);
    cr_expect(de[1 * WS + 3] == de0[1 * WS + 3], "a width-1 window has zero gradient");
    gc_check("window softmax de", c.e, WB * WS, de, de0, win_loss, &c);
}

Test(gc_attention, window_softmax_is_stable_for_large_scores)
{
    real e[2 * 4] = {5, 1000, 1001, 1002, -1000, -1001, -1002, 7};
    real a[8];
    int lo[2] = {1, 0}, hi[2] = {3, 2};
    nn_window_softmax_forward(a, e, lo, hi, 2, 4);
    double z = 1 + exp(-1.0) + exp(-2.0);
    cr_expect(a[0] == 0 && a[7] == 0);
    cr_expect(fabs(a[3] - 1 / z) < 1e-15 && fabs(a[1] - exp(-2.0) / z) < 1e-15);
    cr_expect(fabs(a[4] - 1 / z) < 1e-15 && fabs(a[6] - exp(-2.0) / z) < 1e-15);
}

/* ---- local-p Gaussian factor ---- */

static const real gp[WB] = {3.3, 2.7, 1.45, 2.6}; /* positions away from integers */
static const real gsigma = 1.5;

typedef struct {
    real *a, *p, *out, *w;
} GaussCtx;

static double gauss_loss(void *p)
{
    GaussCtx *c = p;
    nn_gauss_window_forward(c->out, c->a, c->p, wlo, whi,
                            &(AttnShape){.S = WS, .B = WB, .sigma = gsigma});
    return gc_dot(c->w, c->out, WB * WS);
}

Test(gc_attention, gauss_window_values_gradients_and_in_place)
{
    Rng r;
    rng_seed(&r, 110);
    GaussCtx c;
    c.a = gc_rand(&r, WB * WS, 1); /* nonzero outside the windows too */
    c.p = gc_copy(gp, WB);
    c.out = gc_rand(&r, WB * WS, 1);
    c.w = gc_rand(&r, WB * WS, 1);
    gauss_loss(&c);
    for (int b = 0; b < WB; b++)
        for (int j = 0; j < WS; j++) {
            double v = c.out[b * WS + j];
            if (j < wlo[b] || j > whi[b]) {
                cr_expect(v == 0, "out[%d,%d] = %g outside the window", b, j, v);
            } else {
                double t = j - (double)gp[b];
                double g = exp(-t * t / (2.0 * gsigma * gsigma));
                expect_close("gauss out", v, c.a[b * WS + j] * g, b, j, 0);
            }
        }
    /* In place gives the same values. */
    real *io = gc_copy(c.a, WB * WS);
    nn_gauss_window_forward(io, io, c.p, wlo, whi, &(AttnShape){.S = WS, .B = WB, .sigma = gsigma});
    cr_expect(memcmp(io, c.out, WB * WS * sizeof(real)) == 0, "in-place result differs");

    real *da0 = gc_rand(&r, WB * WS, 1), *dp0 = gc_rand(&r, WB, 1);
    real *da = gc_copy(da0, WB * WS), *dp = gc_copy(dp0, WB);
    nn_gauss_window_backward(da, dp, c.w, c.a, c.p, wlo, whi,
                             &(AttnShape){.S = WS, .B = WB, .sigma = gsigma});
    for (int b = 0; b < WB; b++)
        for (int j = 0; j < WS; j++)
            if (j < wlo[b] || j > whi[b])
                cr_expect(da[b * WS + j] == da0[b * WS + j],
                          "da[%d,%d] changed outside the window", b, j);
    /* dp by the formula, in double. */
    for (int b = 0; b < WB; b++) {
        double s = 0;
        for (int j = wlo[b]; j <= whi[b]; j++) {
            double t = j - (double)gp[b];
            s += c.w[b * WS + j] * c.a[b * WS + j] * exp(-t * t / (2.0 * gsigma * gsigma)) * t /
                 (gsigma * gsigma);
        }
        expect_close("gauss dp", dp[b] - dp0[b], s, b, 0, 0);
    }
    real *da1 = gc_copy(da0, WB * WS), *dp1 = gc_copy(dp0, WB);
    nn_gauss_window_backward(da1, NULL, c.w, c.a, c.p, wlo, whi,
                             &(AttnShape){.S = WS, .B = WB, .sigma = gsigma});
    nn_gauss_window_backward(NULL, dp1, c.w, c.a, c.p, wlo, whi,
                             &(AttnShape){.S = WS, .B = WB, .sigma = gsigma});
    cr_expect(memcmp(da1, da, WB * WS * sizeof(real)) == 0, "da alone differs");
    cr_expect(memcmp(dp1, dp, WB * sizeof(real)) == 0, "dp alone differs");
    gc_check("gauss window da", c.a, WB * WS, da, da0, gauss_loss, &c);
    gc_check("gauss window dp", c.p, WB, dp, dp0, gauss_loss, &c);
}

/* ---- local-p position ---- */

typedef struct {
    const int *lens;
    int nb;
    real *x, *p, *sig, *w;
} PosCtx;

static double pos_loss(void *p)
{
    PosCtx *c = p;
    nn_local_pos_forward(c->p, c->sig, c->x, c->lens, c->nb);
    return gc_dot(c->w, c->p, c->nb);
}

Test(gc_attention, local_pos_values_and_gradients)
{
    static const int lens4[4] = {7, 5, 1, 3};
    static const real x4[4] = {-2.3, 0.4, 1.7, -0.1};
    Rng r;
    rng_seed(&r, 120);
    PosCtx c = {.lens = lens4, .nb = 4};
    c.x = gc_copy(x4, 4);
    c.p = gc_zeros(4);
    c.sig = gc_zeros(4);
    c.w = gc_rand(&r, 4, 1);
    pos_loss(&c);
    for (int b = 0; b < 4; b++) {
        double s = 1 / (1 + exp(-(double)x4[b]));
        expect_close("local pos sig", c.sig[b], s, b, 0, 0);
        expect_close("local pos p", c.p[b], lens4[b] * s, b, 0, 0);
    }
    real *dx0 = gc_rand(&r, 4, 1), *dx = gc_copy(dx0, 4);
    nn_local_pos_backward(dx, c.w, c.sig, lens4, 4);
    gc_check("local pos dx", c.x, 4, dx, dx0, pos_loss, &c);
}

Test(gc_attention, local_pos_is_stable_for_large_inputs)
{
    static const int lens6[6] = {9, 9, 9, 9, 9, 9};
    real x[6] = {-720, 720, -40, 40, -INFINITY, INFINITY};
    real p[6], sig[6];
    nn_local_pos_forward(p, sig, x, lens6, 6);
    for (int b = 0; b < 6; b++)
        cr_expect(sig[b] >= 0 && sig[b] <= 1 && p[b] >= 0 && p[b] <= 9, "x = %g: sig %g p %g",
                  x[b], sig[b], p[b]);
    /* sigmoid(−720) ≈ e^−720, a subnormal: not flushed to 0. */
    cr_expect(sig[0] > 0 && fabs(sig[0] - exp(-720.0)) <= 1e-3 * exp(-720.0), "sig(-720) = %g",
              sig[0]);
    cr_expect(sig[1] == 1 && p[1] == 9);
    cr_expect(fabs(sig[2] - exp(-40.0)) <= 1e-15 * exp(-40.0), "sig(-40) = %.17g", sig[2]);
    cr_expect(fabs(sig[3] - 1) <= 1e-16, "sig(40) = %.17g", sig[3]);
    cr_expect(sig[4] == 0 && p[4] == 0);
    cr_expect(sig[5] == 1 && p[5] == 9);
    real dx[6] = {0};
    real dp[6] = {1, 1, 1, 1, 1, 1};
    nn_local_pos_backward(dx, dp, sig, lens6, 6);
    for (int b = 0; b < 6; b++)
        cr_expect(isfinite(dx[b]) && dx[b] >= 0, "dx[%d] = %g", b, dx[b]);
    cr_expect(dx[4] == 0 && dx[5] == 0);
}

/* ---- the local-p chain: dot scores (H = 2) → window softmax per head → Gaussian with
   p = n · sigmoid(x) → context (H = 2). Windows as in docs/model.md: Dw = 2, σ = 1,
   lo = max(0, ceil(p − Dw)), hi = min(n − 1, floor(p + Dw)), recomputed from p at every
   evaluation (x is chosen so that p ± Dw stays away from integers). ---- */

enum { LB = 4, LS = 8, LA = 6, LD = 6, LH = 2, LDW = 2 };
static const int llens[LB] = {7, 5, 1, 6};
static const real lx[LB] = {0.35, -0.9, 0.8, 0.5};

typedef struct {
    real *q, *K, *x, *Hs, *w;
    real *e, *a, *g, *p, *sig, *ctx;
    int lo[LB], hi[LB];
} LocalCtx;

static double local_loss(void *pv)
{
    LocalCtx *c = pv;
    nn_attn_dot_forward(c->e, c->q, c->K,
                        &(AttnShape){.S = LS, .B = LB, .A = LA, .H = LH, .scale = (real)(1 / sqrt(LA / LH))});
    nn_local_pos_forward(c->p, c->sig, c->x, llens, LB);
    for (int b = 0; b < LB; b++) {
        int lo = (int)ceil(c->p[b] - LDW), hi = (int)floor(c->p[b] + LDW);
        c->lo[b] = lo > 0 ? lo : 0;
        c->hi[b] = hi < llens[b] - 1 ? hi : llens[b] - 1;
    }
    for (int h = 0; h < LH; h++) {
        nn_window_softmax_forward(c->a + h * LB * LS, c->e + h * LB * LS, c->lo, c->hi, LB, LS);
        nn_gauss_window_forward(c->g + h * LB * LS, c->a + h * LB * LS, c->p, c->lo, c->hi,
                                &(AttnShape){.S = LS, .B = LB, .sigma = (real)LDW / 2});
    }
    nn_attn_context_forward(c->ctx, c->g, c->Hs, &(AttnShape){.S = LS, .B = LB, .A = LD, .H = LH});
    return gc_dot(c->w, c->ctx, LB * LD);
}

Test(gc_attention, chained_local_p_multihead_gradients)
{
    Rng r;
    rng_seed(&r, 130);
    LocalCtx c;
    c.q = gc_rand(&r, LB * LA, 1);
    c.K = gc_rand(&r, LS * LB * LA, 1);
    c.x = gc_copy(lx, LB);
    c.Hs = gc_rand(&r, LS * LB * LD, 1);
    c.w = gc_rand(&r, LB * LD, 1);
    c.e = gc_zeros(LH * LB * LS);
    c.a = gc_zeros(LH * LB * LS);
    c.g = gc_zeros(LH * LB * LS);
    c.p = gc_zeros(LB);
    c.sig = gc_zeros(LB);
    c.ctx = gc_zeros(LB * LD);
    local_loss(&c);
    /* The windows this test is meant to cover: inside the row, from 0, width 1. */
    static const int elo[LB] = {3, 0, 0, 2}, ehi[LB] = {6, 3, 0, 5};
    for (int b = 0; b < LB; b++)
        cr_assert(c.lo[b] == elo[b] && c.hi[b] == ehi[b], "row %d: window [%d, %d]", b,
                  c.lo[b], c.hi[b]);

    real *dg = gc_zeros(LH * LB * LS), *da = gc_zeros(LH * LB * LS), *de = gc_zeros(LH * LB * LS);
    real *dp = gc_zeros(LB), *dx = gc_zeros(LB);
    real *dq = gc_zeros(LB * LA), *dK = gc_zeros(LS * LB * LA), *dH = gc_zeros(LS * LB * LD);
    nn_attn_context_backward(dg, dH, c.w, c.g, c.Hs,
                             &(AttnShape){.S = LS, .B = LB, .A = LD, .H = LH});
    for (int h = 0; h < LH; h++) {
        nn_gauss_window_backward(da + h * LB * LS, dp, dg + h * LB * LS, c.a + h * LB * LS, c.p,
                                 c.lo, c.hi,
                                 &(AttnShape){.S = LS, .B = LB, .sigma = (real)LDW / 2});
        nn_window_softmax_backward(de + h * LB * LS, da + h * LB * LS, c.a + h * LB * LS, c.lo,
                                   c.hi, LB, LS);
    }
    nn_attn_dot_backward(dq, dK, de, c.q, c.K,
                         &(AttnShape){.S = LS, .B = LB, .A = LA, .H = LH, .scale = (real)(1 / sqrt(LA / LH))});
    nn_local_pos_backward(dx, dp, c.sig, llens, LB);
    /* Source positions outside a row's window get exactly zero gradient. */
    for (int b = 0; b < LB; b++)
        for (int j = 0; j < LS; j++)
            if (j < c.lo[b] || j > c.hi[b]) {
                gc_expect_zero("dK outside the window", dK + (j * LB + b) * LA, LA);
                gc_expect_zero("dHs outside the window", dH + (j * LB + b) * LD, LD);
                for (int h = 0; h < LH; h++)
                    gc_expect_zero("de outside the window", de + (h * LB + b) * LS + j, 1);
            }
    gc_check("local-p chain dq", c.q, LB * LA, dq, NULL, local_loss, &c);
    gc_check("local-p chain dK", c.K, LS * LB * LA, dK, NULL, local_loss, &c);
    gc_check("local-p chain dx", c.x, LB, dx, NULL, local_loss, &c);
    gc_check("local-p chain dHs", c.Hs, LS * LB * LD, dH, NULL, local_loss, &c);
}
