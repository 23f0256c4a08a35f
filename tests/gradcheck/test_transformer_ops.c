/* Gradient checks (double precision) for the Transformer's kernels: ReLU, layer
   normalisation, multi-head attention over sequences (key-padding and causal masks,
   attention dropout, q | k | v slices of wider rows), and the values of the
   sinusoidal position code.
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/attention.h"
#include "nn/ops.h"

TestSuite(gc_transformer_ops, .fini = gc_free_all);

/* ---- ReLU ---- */

typedef struct {
    size_t n;
    real *x, *y, *w;
} ReluCtx;

static double relu_loss(void *p)
{
    ReluCtx *c = p;
    nn_relu_forward(c->y, c->x, c->n);
    return gc_dot(c->w, c->y, c->n);
}

Test(gc_transformer_ops, relu_gradients_and_values)
{
    Rng r;
    rng_seed(&r, 300);
    ReluCtx c = {.n = 24};
    c.x = gc_rand(&r, c.n, 2);
    for (size_t i = 0; i < c.n; i++) /* keep clear of the kink, where h would cross it */
        if (fabs(c.x[i]) < 1e-3)
            c.x[i] = 0.5;
    c.y = gc_zeros(c.n);
    c.w = gc_rand(&r, c.n, 1);
    relu_loss(&c);
    for (size_t i = 0; i < c.n; i++)
        cr_expect_eq(c.y[i], c.x[i] > 0 ? c.x[i] : 0, "relu[%zu]", i);
    real *d = gc_copy(c.w, c.n);
    nn_relu_backward_inplace(d, c.y, c.n);
    gc_check("relu dinp", c.x, c.n, d, gc_zeros(c.n), relu_loss, &c);
}

/* ---- layer norm ---- */

enum { LN_N = 4, LN_C = 6 };

typedef struct {
    real *x, *g, *b, *y, *mean, *rstd, *w;
} LnCtx;

static double ln_loss(void *p)
{
    LnCtx *c = p;
    nn_layernorm_forward(c->y, &(LnStats){c->mean, c->rstd}, c->x, c->g, c->b,
                         &(LnShape){LN_N, LN_C, 1e-5});
    return gc_dot(c->w, c->y, LN_N * LN_C);
}

Test(gc_transformer_ops, layernorm_gradients_and_values)
{
    Rng r;
    rng_seed(&r, 301);
    LnCtx c;
    size_t n = LN_N * LN_C;
    c.x = gc_rand(&r, n, 2);
    for (int c0 = 0; c0 < LN_C; c0++) /* a row far from 0: the mean must be removed */
        c.x[LN_C + c0] += 50;
    c.g = gc_rand(&r, LN_C, 1.5);
    c.b = gc_rand(&r, LN_C, 1);
    c.y = gc_zeros(n);
    c.mean = gc_zeros(LN_N);
    c.rstd = gc_zeros(LN_N);
    c.w = gc_rand(&r, n, 1);
    ln_loss(&c);
    for (int i = 0; i < LN_N; i++) {
        double m = 0, v = 0;
        for (int k = 0; k < LN_C; k++)
            m += c.x[i * LN_C + k];
        m /= LN_C;
        for (int k = 0; k < LN_C; k++)
            v += (c.x[i * LN_C + k] - m) * (c.x[i * LN_C + k] - m);
        v /= LN_C;
        for (int k = 0; k < LN_C; k++) {
            double want = (c.x[i * LN_C + k] - m) / sqrt(v + 1e-5) * c.g[k] + c.b[k];
            cr_expect(fabs(c.y[i * LN_C + k] - want) < 1e-12, "ln[%d,%d] %.17g != %.17g", i, k,
                      c.y[i * LN_C + k], want);
        }
    }
    real *dx = gc_rand(&r, n, 1), *dg = gc_rand(&r, LN_C, 1), *db = gc_rand(&r, LN_C, 1);
    real *dx0 = gc_copy(dx, n), *dg0 = gc_copy(dg, LN_C), *db0 = gc_copy(db, LN_C);
    nn_layernorm_backward(dx, dg, db, c.w, c.x, &(LnStats){c.mean, c.rstd}, c.g,
                          &(LnShape){LN_N, LN_C, 1e-5});
    gc_check("layernorm dinp", c.x, n, dx, dx0, ln_loss, &c);
    gc_check("layernorm dg", c.g, LN_C, dg, dg0, ln_loss, &c);
    gc_check("layernorm db", c.b, LN_C, db, db0, ln_loss, &c);
}

/* ---- multi-head attention ---- */

/* B = 3 sentences, H = 2 heads of width 3; queries and keys come from one (T,B,3·6)
   projection (self-attention) or Q from one array and K | V from another
   (cross-attention), so the row strides differ from the head widths. */
enum { MB = 3, MH = 2, MDH = 3, MD = MH * MDH };

typedef struct {
    MhaShape s;
    real *Q, *K, *V, *out, *a, *drop, *w;
} MhaCtx;

static double mha_loss(void *p)
{
    MhaCtx *c = p;
    nn_mha_forward(c->out, c->a, c->drop, &(MhaQkv){c->Q, c->K, c->V}, &c->s);
    return gc_dot(c->w, c->out, (size_t)c->s.Tq * MB * c->s.ldo);
}

/* The reference of one output entry, from the definition. */
static double mha_ref(const MhaCtx *c, int i, int b, int h, int d)
{
    const MhaShape *s = &c->s;
    int n = s->klen ? s->klen[b] : s->Tk;
    if (s->causal >= 0 && i + s->causal + 1 < n)
        n = i + s->causal + 1;
    double e[16], m = -INFINITY, sum = 0, out = 0;
    for (int j = 0; j < n; j++) {
        double dot = 0;
        for (int k = 0; k < MDH; k++)
            dot += c->Q[(i * MB + b) * s->ldq + h * MDH + k] * c->K[(j * MB + b) * s->ldk + h * MDH + k];
        e[j] = s->scale * dot;
        m = fmax(m, e[j]);
    }
    for (int j = 0; j < n; j++)
        sum += exp(e[j] - m);
    for (int j = 0; j < n; j++) {
        double a = exp(e[j] - m) / sum;
        if (c->drop)
            a *= c->drop[(((size_t)b * MH + h) * s->Tq + i) * s->Tk + j];
        out += a * c->V[(j * MB + b) * s->ldv + h * MDH + d];
    }
    return out;
}

static void check_mha(MhaCtx *c, Rng *r, const char *what)
{
    const MhaShape *s = &c->s;
    size_t nq = (size_t)s->Tq * MB * s->ldq, nk = (size_t)s->Tk * MB * s->ldk,
           nv = (size_t)s->Tk * MB * s->ldv, no = (size_t)s->Tq * MB * s->ldo,
           na = (size_t)MB * MH * s->Tq * s->Tk;
    c->out = gc_zeros(no);
    c->a = gc_zeros(na);
    c->w = gc_rand(r, no, 1);
    mha_loss(c);
    for (int i = 0; i < s->Tq; i++)
        for (int b = 0; b < MB; b++)
            for (int h = 0; h < MH; h++) {
                int n = s->klen ? s->klen[b] : s->Tk;
                if (s->causal >= 0 && i + s->causal + 1 < n)
                    n = i + s->causal + 1;
                for (int j = n; j < s->Tk; j++)
                    cr_expect_eq(c->a[(((size_t)b * MH + h) * s->Tq + i) * s->Tk + j], 0,
                                 "%s: a[%d,%d,%d,%d] is not exactly 0", what, b, h, i, j);
                for (int d = 0; d < MDH; d++) {
                    double got = c->out[(i * MB + b) * s->ldo + h * MDH + d],
                           want = mha_ref(c, i, b, h, d);
                    cr_expect(fabs(got - want) < 1e-12, "%s: out[%d,%d,%d] %.17g != %.17g", what,
                              i, b, h * MDH + d, got, want);
                }
            }
    /* The gradients share their inputs' layout; when K and V are slices of one array,
       so are dK and dV (one buffer, checked once against it). */
    bool kv_shared = c->V == c->K + MD;
    bool qkv_shared = c->K == c->Q + MD;
    real *dQ = gc_rand(r, nq, 1), *dQ0 = gc_copy(dQ, nq);
    real *dK = qkv_shared ? dQ + MD : gc_rand(r, nk, 1);
    real *dK0 = qkv_shared ? NULL : gc_copy(dK, nk);
    real *dV = kv_shared ? dK + MD : gc_rand(r, nv, 1);
    real *dV0 = kv_shared ? NULL : gc_copy(dV, nv);
    nn_mha_backward(&(MhaQkvGrad){dQ, dK, dV}, gc_zeros(na), c->w, c->a, c->drop,
                    &(MhaQkv){c->Q, c->K, c->V}, s);
    char name[64];
    snprintf(name, sizeof name, "%s dQ", what);
    gc_check(name, c->Q, nq, dQ, dQ0, mha_loss, c);
    if (!qkv_shared) {
        snprintf(name, sizeof name, "%s dK", what);
        gc_check(name, c->K, nk, dK, dK0, mha_loss, c);
    }
    if (!kv_shared && !qkv_shared) {
        snprintf(name, sizeof name, "%s dV", what);
        gc_check(name, c->V, nv, dV, dV0, mha_loss, c);
    }
}

Test(gc_transformer_ops, mha_self_attention_causal_in_one_projection)
{
    Rng r;
    rng_seed(&r, 302);
    enum { T = 4 };
    MhaCtx c = {.s = {.Tq = T, .Tk = T, .B = MB, .H = MH, .dh = MDH, .ldq = 3 * MD,
                      .ldk = 3 * MD, .ldv = 3 * MD, .ldo = MD, .klen = NULL, .causal = 0,
                      .scale = 1 / sqrt((double)MDH)}};
    c.Q = gc_rand(&r, (size_t)T * MB * 3 * MD, 1.5);
    c.K = c.Q + MD;
    c.V = c.Q + 2 * MD;
    check_mha(&c, &r, "causal self");
}

Test(gc_transformer_ops, mha_padded_keys_cross_attention_with_dropout)
{
    Rng r;
    rng_seed(&r, 303);
    enum { TQ = 3, TK = 5 };
    static const int klen[MB] = {5, 2, 1};
    MhaCtx c = {.s = {.Tq = TQ, .Tk = TK, .B = MB, .H = MH, .dh = MDH, .ldq = MD,
                      .ldk = 2 * MD, .ldv = 2 * MD, .ldo = MD + 2, .klen = klen, .causal = -1,
                      .scale = 1 / sqrt((double)MDH)}};
    c.Q = gc_rand(&r, (size_t)TQ * MB * MD, 1.5);
    c.K = gc_rand(&r, (size_t)TK * MB * 2 * MD, 1.5);
    c.V = c.K + MD;
    /* Huge keys beyond a sentence's length must not leak into its weights. */
    for (int k = 0; k < MD; k++)
        c.K[(3 * MB + 1) * 2 * MD + k] = 1e6;
    size_t na = (size_t)MB * MH * TQ * TK;
    c.drop = gc_zeros(na);
    for (size_t i = 0; i < na; i++)
        c.drop[i] = rng_uniform(&r) < 0.3 ? 0 : 1 / 0.7;
    check_mha(&c, &r, "cross+dropout");
    /* and without dropout, separate K and V arrays */
    c.drop = NULL;
    c.s.ldk = MD;
    c.s.ldv = MD;
    c.K = gc_rand(&r, (size_t)TK * MB * MD, 1.5);
    c.V = gc_rand(&r, (size_t)TK * MB * MD, 1.5);
    check_mha(&c, &r, "cross");
}

Test(gc_transformer_ops, mha_one_decoding_step_equals_its_row_of_the_whole_sequence)
{
    Rng r;
    rng_seed(&r, 304);
    enum { T = 4 };
    MhaShape whole = {.Tq = T, .Tk = T, .B = MB, .H = MH, .dh = MDH, .ldq = MD, .ldk = MD,
                      .ldv = MD, .ldo = MD, .klen = NULL, .causal = 0, .scale = 0.5};
    real *Q = gc_rand(&r, (size_t)T * MB * MD, 1), *K = gc_rand(&r, (size_t)T * MB * MD, 1),
         *V = gc_rand(&r, (size_t)T * MB * MD, 1);
    real *out = gc_zeros((size_t)T * MB * MD), *a = gc_zeros((size_t)MB * MH * T * T);
    nn_mha_forward(out, a, NULL, &(MhaQkv){Q, K, V}, &whole);
    for (int t = 0; t < T; t++) {
        MhaShape step = whole;
        step.Tq = 1;
        step.Tk = t + 1;
        step.causal = t;
        real *o1 = gc_zeros((size_t)MB * MD), *a1 = gc_zeros((size_t)MB * MH * (t + 1));
        nn_mha_forward(o1, a1, NULL, &(MhaQkv){Q + (size_t)t * MB * MD, K, V}, &step);
        for (size_t k = 0; k < (size_t)MB * MD; k++)
            cr_expect(fabs(o1[k] - out[(size_t)t * MB * MD + k]) < 1e-14, "step %d entry %zu", t, k);
    }
}

/* ---- sinusoidal positions ---- */

Test(gc_transformer_ops, sinusoid_values)
{
    real pe[8];
    nn_sinusoid(pe, 0, 8);
    for (int c = 0; c < 8; c++)
        cr_expect_eq(pe[c], (c & 1) ? 1.0 : 0.0, "position 0, dim %d", c);
    nn_sinusoid(pe, 3, 8);
    for (int i = 0; i < 4; i++) {
        double angle = 3 / pow(10000.0, 2.0 * i / 8);
        cr_expect(fabs(pe[2 * i] - sin(angle)) < 1e-15 && fabs(pe[2 * i + 1] - cos(angle)) < 1e-15,
                  "position 3, pair %d", i);
    }
    /* odd width: the last dimension is a sine */
    real odd[5];
    nn_sinusoid(odd, 2, 5);
    cr_expect(fabs(odd[4] - sin(2 / pow(10000.0, 4.0 / 5))) < 1e-15);
}
