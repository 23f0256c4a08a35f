/* Gradient checks (double precision) for the elementwise ops, embedding, concat/split
   and dropout. Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/ops.h"

TestSuite(gc_ops, .fini = gc_free_all);

/* ---- bias, tanh, sigmoid ---- */

typedef struct {
    int N, C, kind; /* kind: 0 bias, 1 tanh, 2 sigmoid */
    real *x, *b, *y, *w;
} EwCtx;

static double ew_loss(void *p)
{
    EwCtx *c = p;
    size_t n = (size_t)c->N * c->C;
    if (c->kind == 0)
        nn_bias_forward(c->y, c->x, c->b, c->N, c->C);
    else if (c->kind == 1)
        nn_tanh_forward(c->y, c->x, n);
    else
        nn_sigmoid_forward(c->y, c->x, n);
    return gc_dot(c->w, c->y, n);
}

static void check_elementwise(int kind, const char *name_x, const char *name_b)
{
    Rng r;
    rng_seed(&r, 10 + kind);
    EwCtx c = {.N = 3, .C = 4, .kind = kind};
    size_t n = 12;
    c.x = gc_rand(&r, n, 2);
    c.b = gc_rand(&r, 4, 1);
    c.y = gc_zeros(n);
    c.w = gc_rand(&r, n, 1);
    ew_loss(&c);
    real *dx = gc_rand(&r, n, 1), *db = gc_rand(&r, 4, 1);
    real *dx0 = gc_copy(dx, n), *db0 = gc_copy(db, 4);
    if (kind == 0)
        nn_bias_backward(dx, db, c.w, c.N, c.C);
    else if (kind == 1)
        nn_tanh_backward(dx, c.w, c.y, n);
    else
        nn_sigmoid_backward(dx, c.w, c.y, n);
    gc_check(name_x, c.x, n, dx, dx0, ew_loss, &c);
    if (name_b)
        gc_check(name_b, c.b, 4, db, db0, ew_loss, &c);
    if (kind == 1) {
        /* the in-place form: d holds the output's gradient and becomes the input's */
        real *d = gc_copy(c.w, n);
        nn_tanh_backward_inplace(d, c.y, n);
        gc_check("tanh in place dinp", c.x, n, d, gc_zeros(n), ew_loss, &c);
    }
}

Test(gc_ops, bias_gradients) { check_elementwise(0, "bias dinp", "bias db"); }
Test(gc_ops, tanh_gradients) { check_elementwise(1, "tanh dinp", NULL); }
Test(gc_ops, sigmoid_gradients) { check_elementwise(2, "sigmoid dinp", NULL); }

Test(gc_ops, elementwise_in_place_and_extremes)
{
    real x[4] = {-800, -1, 0, 800};
    nn_sigmoid_forward(x, x, 4);
    cr_expect_eq(x[0], 0);
    cr_expect(fabs(x[1] - 1 / (1 + exp(1.0))) < 1e-15);
    cr_expect_eq(x[2], 0.5);
    cr_expect_eq(x[3], 1);
    real t[3] = {-50, 0.5, 50};
    nn_tanh_forward(t, t, 3);
    cr_expect_eq(t[0], -1);
    cr_expect(fabs(t[1] - tanh(0.5)) < 1e-15);
    cr_expect_eq(t[2], 1);
    real y[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    nn_bias_forward(y, y, b, 2, 3);
    cr_expect_eq(y[0], 11);
    cr_expect_eq(y[5], 36);
}

/* ---- embedding ---- */

typedef struct {
    int N, V, D;
    const int *ids;
    real *E, *y, *w;
} EmbCtx;

static double emb_loss(void *p)
{
    EmbCtx *c = p;
    nn_embedding_forward(c->y, c->ids, c->E, c->N, c->V, c->D);
    return gc_dot(c->w, c->y, (size_t)c->N * c->D);
}

Test(gc_ops, embedding_gradients_with_repeats_and_padding)
{
    Rng r;
    rng_seed(&r, 20);
    /* id 0 is the padding id: looked up like any other; 3 repeats; 5 is never used. */
    static const int ids[6] = {3, 0, 3, 1, 0, 3};
    EmbCtx c = {.N = 6, .V = 7, .D = 4, .ids = ids};
    c.E = gc_rand(&r, 28, 1);
    c.y = gc_zeros(24);
    c.w = gc_rand(&r, 24, 1);
    emb_loss(&c);
    for (int i = 0; i < 6; i++)
        cr_expect(memcmp(c.y + 4 * i, c.E + 4 * ids[i], 4 * sizeof(real)) == 0);
    real *dE = gc_rand(&r, 28, 1), *dE0 = gc_copy(dE, 28);
    nn_embedding_backward(dE, c.w, ids, c.N, c.V, c.D);
    gc_check("embedding dE", c.E, 28, dE, dE0, emb_loss, &c);
    for (int j = 0; j < 4; j++)
        cr_expect_eq(dE[5 * 4 + j], dE0[5 * 4 + j], "unused row changed");
}

/* ---- concat / split ---- */

static const int cat_widths[3] = {2, 3, 1};

typedef struct {
    int N;
    real *p[3], *y, *w;
} CatCtx;

static double cat_loss(void *q)
{
    CatCtx *c = q;
    nn_concat_forward(c->y, (const real *const *)c->p, cat_widths, 3, c->N);
    return gc_dot(c->w, c->y, (size_t)c->N * 6);
}

Test(gc_ops, concat_gradients_and_layout)
{
    Rng r;
    rng_seed(&r, 30);
    CatCtx c = {.N = 3};
    for (int k = 0; k < 3; k++)
        c.p[k] = gc_rand(&r, (size_t)3 * cat_widths[k], 1);
    c.y = gc_zeros(18);
    c.w = gc_rand(&r, 18, 1);
    cat_loss(&c);
    cr_expect_eq(c.y[6 + 0], c.p[0][2]);
    cr_expect_eq(c.y[6 + 2], c.p[1][3]);
    cr_expect_eq(c.y[6 + 5], c.p[2][1]);
    real *d[3], *d0[3];
    for (int k = 0; k < 3; k++) {
        d[k] = gc_rand(&r, (size_t)3 * cat_widths[k], 1);
        d0[k] = gc_copy(d[k], (size_t)3 * cat_widths[k]);
    }
    real *dmid = d[1];
    d[1] = NULL; /* skipped */
    nn_concat_backward(d, c.w, cat_widths, 3, c.N);
    gc_check("concat dpart0", c.p[0], 6, d[0], d0[0], cat_loss, &c);
    gc_check("concat dpart2", c.p[2], 3, d[2], d0[2], cat_loss, &c);
    for (int i = 0; i < 9; i++)
        cr_expect_eq(dmid[i], d0[1][i]);
    d[1] = dmid;
    nn_concat_backward(d, c.w, cat_widths, 3, c.N);
    gc_check("concat dpart1", c.p[1], 9, d[1], d0[1], cat_loss, &c);
}

typedef struct {
    int N;
    real *x, *p[3], *w[3];
} SplitCtx;

static double split_loss(void *q)
{
    SplitCtx *c = q;
    nn_split_forward(c->p, c->x, cat_widths, 3, c->N);
    double s = 0;
    for (int k = 0; k < 3; k++)
        s += gc_dot(c->w[k], c->p[k], (size_t)c->N * cat_widths[k]);
    return s;
}

Test(gc_ops, split_gradients_are_concat)
{
    Rng r;
    rng_seed(&r, 31);
    SplitCtx c = {.N = 3};
    c.x = gc_rand(&r, 18, 1);
    for (int k = 0; k < 3; k++) {
        c.p[k] = gc_zeros((size_t)3 * cat_widths[k]);
        c.w[k] = gc_rand(&r, (size_t)3 * cat_widths[k], 1);
    }
    split_loss(&c);
    real *back = gc_zeros(18);
    nn_concat_forward(back, (const real *const *)c.p, cat_widths, 3, c.N);
    cr_expect(memcmp(back, c.x, 18 * sizeof(real)) == 0, "concat(split(x)) != x");
    real *dx = gc_rand(&r, 18, 1), *dx0 = gc_copy(dx, 18);
    nn_split_backward(dx, (const real *const *)c.w, cat_widths, 3, c.N);
    gc_check("split dinp", c.x, 18, dx, dx0, split_loss, &c);
}

/* ---- dropout ---- */

typedef struct {
    size_t n;
    real p;
    uint64_t seed;
    real *x, *mask, *y, *w;
} DropCtx;

static double drop_loss(void *q)
{
    DropCtx *c = q;
    Rng r;
    rng_seed(&r, c->seed); /* the same mask on every evaluation */
    nn_dropout_forward(c->y, c->mask, c->x, c->n, c->p, &r);
    return gc_dot(c->w, c->y, c->n);
}

Test(gc_ops, dropout_gradients_and_mask_values)
{
    Rng r;
    rng_seed(&r, 40);
    DropCtx c = {.n = 40, .p = 0.3, .seed = 41};
    c.x = gc_rand(&r, c.n, 1);
    c.mask = gc_zeros(c.n);
    c.y = gc_zeros(c.n);
    c.w = gc_rand(&r, c.n, 1);
    drop_loss(&c);
    int dropped = 0;
    for (size_t i = 0; i < c.n; i++) {
        cr_expect(c.mask[i] == 0 || c.mask[i] == 1 / (1 - 0.3), "mask[%zu] = %g", i, c.mask[i]);
        dropped += c.mask[i] == 0;
        cr_expect_eq(c.y[i], c.x[i] * c.mask[i]);
    }
    cr_expect(dropped > 0 && dropped < (int)c.n);
    real *dx = gc_rand(&r, c.n, 1), *dx0 = gc_copy(dx, c.n);
    nn_dropout_backward(dx, c.w, c.mask, c.n);
    gc_check("dropout dinp", c.x, c.n, dx, dx0, drop_loss, &c);
    real *d = gc_copy(c.w, c.n); /* the in-place form */
    nn_dropout_backward_inplace(d, c.mask, c.n);
    gc_check("dropout in place dinp", c.x, c.n, d, gc_zeros(c.n), drop_loss, &c);
}

Test(gc_ops, dropout_keeps_one_minus_p_of_the_entries)
{
    Rng r;
    rng_seed(&r, 42);
    size_t n = 100000;
    real *x = gc_zeros(n), *mask = gc_zeros(n);
    for (size_t i = 0; i < n; i++)
        x[i] = 1;
    nn_dropout_forward(x, mask, x, n, 0.25, &r); /* in place */
    double kept = 0, mean = 0;
    for (size_t i = 0; i < n; i++) {
        kept += mask[i] != 0;
        mean += x[i];
    }
    /* Binomial(1e5, 0.75): standard deviation 137, so 1% (1000) is over 7 sigma. */
    cr_expect(fabs(kept / n - 0.75) < 0.01, "kept fraction %g", kept / n);
    cr_expect(fabs(mean / n - 1) < 0.014, "mean %g (inverted dropout keeps the mean)", mean / n);
}

Test(gc_ops, dropout_p0_is_exact_identity_and_draws_nothing)
{
    Rng r, r0;
    rng_seed(&r, 43);
    rng_seed(&r0, 43);
    real *x = gc_rand(&r0, 50, 3), *y = gc_zeros(50), *mask = gc_zeros(50);
    rng_seed(&r0, 43);
    nn_dropout_forward(y, mask, x, 50, 0, &r);
    cr_expect(memcmp(x, y, 50 * sizeof(real)) == 0);
    for (int i = 0; i < 50; i++)
        cr_expect_eq(mask[i], 1);
    cr_expect_eq(rng_u64(&r), rng_u64(&r0), "p = 0 consumed random numbers");
    real *d = gc_rand(&r, 50, 1), *dx = gc_zeros(50);
    nn_dropout_backward(dx, d, mask, 50);
    cr_expect(memcmp(dx, d, 50 * sizeof(real)) == 0);
}

/* ---- norms ---- */

Test(gc_ops, sumsq_and_scale)
{
    real x[7] = {1, -2, 3, -4, 5, -6, 0.5};
    cr_expect_eq(nn_sumsq(x, 7), 91.25);
    cr_expect_eq(nn_sumsq(x, 0), 0);
    nn_scale(x, 7, 0.5);
    cr_expect_eq(x[1], -1);
    cr_expect_eq(x[6], 0.25);
}
