/* Gradient checks (double precision) for the label-smoothed softmax cross-entropy.
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/loss.h"

TestSuite(gc_loss, .fini = gc_free_all);

enum { N = 6, V = 7, PAD = 0 };
static const int targets[N] = {3, PAD, 6, 1, PAD, 2};

/* Direct definition: (1 − eps)(−log p_y) + eps · mean_k(−log p_k), log p by long double. */
static double naive_row(const real *x, int y, double eps)
{
    long double m = x[0], s = 0;
    for (int k = 0; k < V; k++)
        m = x[k] > m ? x[k] : m;
    for (int k = 0; k < V; k++)
        s += expl(x[k] - m);
    long double lse = m + logl(s), mean = 0;
    for (int k = 0; k < V; k++)
        mean += (lse - x[k]) / V;
    return (double)((1 - eps) * (lse - x[y]) + eps * mean);
}

typedef struct {
    real *x, *p;
    real eps, scale;
} XentCtx;

static double xent_loss(void *q)
{
    XentCtx *c = q;
    int count;
    return c->scale * nn_xent_forward(c->p, &count, c->x, targets, N, V, c->eps, PAD);
}

static void check_xent(real eps, real scale, double spread)
{
    Rng r;
    rng_seed(&r, 80);
    XentCtx c = {.eps = eps, .scale = scale};
    c.x = gc_rand(&r, N * V, spread);
    c.p = gc_zeros(N * V);
    int count = -1;
    double loss = nn_xent_forward(c.p, &count, c.x, targets, N, V, eps, PAD);
    cr_expect_eq(count, 4);
    double ref = 0;
    for (int i = 0; i < N; i++)
        if (targets[i] != PAD)
            ref += naive_row(c.x + i * V, targets[i], eps);
    cr_expect(fabs(loss - ref) <= 1e-13 * fabs(ref), "loss %.17g vs %.17g", loss, ref);
    real *dx = gc_rand(&r, N * V, 1), *dx0 = gc_copy(dx, N * V);
    nn_xent_backward(dx, c.p, targets, N, V, eps, PAD, scale);
    for (int i = 0; i < N; i++)
        if (targets[i] == PAD)
            for (int k = 0; k < V; k++)
                cr_expect_eq(dx[i * V + k], dx0[i * V + k], "ignored row %d changed", i);
    gc_check(eps > 0 ? "xent(eps=0.1) dlogits" : "xent(eps=0) dlogits", c.x, N * V, dx, dx0,
             xent_loss, &c);
}

Test(gc_loss, xent_gradients_with_smoothing) { check_xent(0.1, 0.37, 3); }
Test(gc_loss, xent_gradients_without_smoothing) { check_xent(0, 1, 3); }

Test(gc_loss, xent_ignored_rows_give_exactly_zero)
{
    Rng r;
    rng_seed(&r, 81);
    real *x = gc_rand(&r, N * V, 3), *p = gc_zeros(N * V);
    int all_pad[N] = {PAD, PAD, PAD, PAD, PAD, PAD};
    int count = -1;
    double loss = nn_xent_forward(p, &count, x, all_pad, N, V, 0.1, PAD);
    cr_expect_eq(loss, 0);
    cr_expect_eq(count, 0);
    real *g = gc_zeros(N * V);
    nn_xent_backward(g, p, all_pad, N, V, 0.1, PAD, 1);
    gc_expect_zero("dlogits of ignored rows", g, N * V);
    /* In place: ignored rows become exactly 0 as well. */
    nn_xent_forward(x, &count, x, targets, N, V, 0.1, PAD);
    nn_xent_backward_inplace(x, targets, N, V, 0.1, PAD, 1);
    gc_expect_zero("in-place dlogits of ignored row 1", x + 1 * V, V);
    gc_expect_zero("in-place dlogits of ignored row 4", x + 4 * V, V);
}

Test(gc_loss, xent_in_place_matches_separate_buffers)
{
    Rng r;
    rng_seed(&r, 82);
    real *x = gc_rand(&r, N * V, 4), *p = gc_zeros(N * V), *g = gc_zeros(N * V);
    int c1, c2;
    double l1 = nn_xent_forward(p, &c1, x, targets, N, V, 0.1, PAD);
    nn_xent_backward(g, p, targets, N, V, 0.1, PAD, 0.25);
    double l2 = nn_xent_forward(x, &c2, x, targets, N, V, 0.1, PAD);
    nn_xent_backward_inplace(x, targets, N, V, 0.1, PAD, 0.25);
    cr_expect_eq(l1, l2);
    cr_expect_eq(c1, c2);
    for (int i = 0; i < N * V; i++)
        cr_expect(fabs(x[i] - g[i]) <= 1e-16, "entry %d: %.17g vs %.17g", i, x[i], g[i]);
}

Test(gc_loss, xent_is_stable_for_large_logits)
{
    /* Softmax and the smoothed loss are invariant under a shift of the row. */
    Rng r;
    rng_seed(&r, 83);
    real *x = gc_rand(&r, N * V, 5), *xs = gc_zeros(N * V), *p = gc_zeros(N * V);
    real *ps = gc_zeros(N * V);
    for (int i = 0; i < N * V; i++)
        xs[i] = x[i] + (i / V % 2 ? 3e4 : -3e4);
    int c;
    double l = nn_xent_forward(p, &c, x, targets, N, V, 0.1, PAD);
    double ls = nn_xent_forward(ps, &c, xs, targets, N, V, 0.1, PAD);
    cr_expect(isfinite(ls));
    cr_expect(fabs(l - ls) < 1e-10, "%.17g vs %.17g", l, ls);
    for (int i = 0; i < N; i++)
        if (targets[i] != PAD)
            for (int k = 0; k < V; k++)
                cr_expect(fabs(p[i * V + k] - ps[i * V + k]) < 1e-11);
    /* One logit far above the rest: p = 1 there, loss finite. */
    real row[V] = {0, 0, 0, 5e4, 0, 0, 0}, pr[V];
    int y[1] = {2};
    double lr = nn_xent_forward(pr, &c, row, y, 1, V, 0.1, PAD);
    cr_expect(isfinite(lr));
    cr_expect(fabs(lr - (0.9 * 5e4 + 0.1 * (5e4 - 5e4 / V))) < 1e-9, "loss %.17g", lr);
    cr_expect_eq(pr[3], 1);
    cr_expect_eq(pr[0], 0);
}
