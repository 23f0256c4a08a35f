#include "nn/attention.h"

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "nn/parallel.h"

/* Rows [lo, hi) of the (S,B) grid: the cache row t = tanh(q_b + K_jb) and, with e, its
   score v·t (summed in order, as a scalar: the same bits on every thread count). */
typedef struct ScoreJob {
    real *e, *cache;
    const real *q, *K, *v;
    int S, B, A;
} ScoreJob;

NN_SIMD static void score_rows(void *ctx, size_t lo, size_t hi)
{
    const ScoreJob *J = ctx;
    const int S = J->S, B = J->B, A = J->A;
    for (size_t r = lo; r < hi; r++) {
        int j = (int)(r / (size_t)B), b = (int)(r % (size_t)B);
        const real *restrict qb = J->q + (size_t)b * A;
        const real *restrict kjb = J->K + r * A;
        real *restrict t = J->cache + r * A;
        for (int a = 0; a < A; a++)
            t[a] = R_TANH(qb[a] + kjb[a]);
        if (J->e) {
            real s = 0;
            for (int a = 0; a < A; a++)
                s += J->v[a] * t[a];
            J->e[(size_t)b * S + j] = s;
        }
    }
}

static void score_grid(real *e, real *cache, const real *q, const real *K, const real *v, const AttnShape *sh)
{
    ScoreJob J = {.e = e, .cache = cache, .q = q, .K = K, .v = v, .S = sh->S, .B = sh->B, .A = sh->A};
    /* rows of 16 K tanh or more a thread */
    nn_parallel_for((size_t)sh->S * (size_t)sh->B, 16384 / ((size_t)sh->A + 1) + 1, score_rows, &J);
}

void nn_attn_score_forward(real *e, real *cache, const real *q, const real *K, const real *v,
                           const AttnShape *sh)
{
    score_grid(e, cache, q, K, v, sh);
}

void nn_attn_score_cache(real *cache, const real *q, const real *K, const AttnShape *sh)
{
    score_grid(NULL, cache, q, K, NULL, sh);
}

void nn_attn_score_backward(real *dq, real *dK, real *dv, const real *de, const real *cache,
                            const real *v, const AttnShape *sh)
{
    const int S = sh->S, B = sh->B, A = sh->A;
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            const real *restrict t = cache + ((size_t)j * B + b) * A;
            real g = de[(size_t)b * S + j];
            if (dv) {
                real *restrict gv = dv;
                for (int a = 0; a < A; a++)
                    gv[a] += g * t[a];
            }
            if (dq) {
                real *restrict gq = dq + (size_t)b * A;
                for (int a = 0; a < A; a++)
                    gq[a] += g * v[a] * ((real)1 - t[a] * t[a]);
            }
            if (dK) {
                real *restrict gk = dK + ((size_t)j * B + b) * A;
                for (int a = 0; a < A; a++)
                    gk[a] += g * v[a] * ((real)1 - t[a] * t[a]);
            }
        }
    }
}

/* y[0..n) = softmax of x[0..n) (max-subtracted; y may be x), y[n..len) = 0 exactly. */
NN_SIMD static void softmax_prefix(real *y, const real *x, int n, int len)
{
    real m = x[0];
    for (int j = 1; j < n; j++)
        m = x[j] > m ? x[j] : m;
    real sum = 0;
    for (int j = 0; j < n; j++) {
        y[j] = R_EXP(x[j] - m);
        sum += y[j];
    }
    real inv = (real)1 / sum;
    for (int j = 0; j < n; j++)
        y[j] *= inv;
    for (int j = n; j < len; j++)
        y[j] = 0;
}

void nn_masked_softmax_forward(real *a, const real *e, const int *lens, int B, int S)
{
    for (int b = 0; b < B; b++) {
        CHECK(lens[b] >= 1 && lens[b] <= S);
        softmax_prefix(a + (size_t)b * S, e + (size_t)b * S, lens[b], S);
    }
}

void nn_masked_softmax_backward(real *de, const real *da, const real *a, const int *lens,
                                int B, int S)
{
    for (int b = 0; b < B; b++) {
        int n = lens[b];
        CHECK(n >= 1 && n <= S);
        const real *restrict y = a + (size_t)b * S;
        const real *restrict d = da + (size_t)b * S;
        real *restrict g = de + (size_t)b * S;
        real dot = 0;
        for (int j = 0; j < n; j++)
            dot += y[j] * d[j];
        for (int j = 0; j < n; j++)
            g[j] += y[j] * (d[j] - dot);
    }
}

void nn_attn_context_forward(real *ctx, const real *a, const real *Hs, const AttnShape *sh)
{
    const int S = sh->S, B = sh->B, D = sh->A, H = sh->H;
    CHECK(H >= 1 && D % H == 0);
    int dh = D / H;
    for (int b = 0; b < B; b++) {
        real *restrict c = ctx + (size_t)b * D;
        for (int d = 0; d < D; d++)
            c[d] = 0;
        for (int j = 0; j < S; j++) {
            for (int hd = 0; hd < H; hd++) {
                real w = a[((size_t)hd * B + b) * S + j];
                const real *restrict h = Hs + ((size_t)j * B + b) * D + (size_t)hd * dh;
                real *restrict ch = c + (size_t)hd * dh;
                for (int d = 0; d < dh; d++)
                    ch[d] += w * h[d];
            }
        }
    }
}

void nn_attn_context_backward(real *da, real *dHs, const real *dctx, const real *a,
                              const real *Hs, const AttnShape *sh)
{
    const int S = sh->S, B = sh->B, D = sh->A, H = sh->H;
    CHECK(H >= 1 && D % H == 0);
    int dh = D / H;
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            for (int hd = 0; hd < H; hd++) {
                const real *restrict g = dctx + (size_t)b * D + (size_t)hd * dh;
                size_t ai = ((size_t)hd * B + b) * S + j;
                if (da) {
                    const real *restrict h = Hs + ((size_t)j * B + b) * D + (size_t)hd * dh;
                    real s = 0;
                    for (int d = 0; d < dh; d++)
                        s += g[d] * h[d];
                    da[ai] += s;
                }
                if (dHs) {
                    real w = a[ai];
                    real *restrict gh = dHs + ((size_t)j * B + b) * D + (size_t)hd * dh;
                    for (int d = 0; d < dh; d++)
                        gh[d] += w * g[d];
                }
            }
        }
    }
}

/* The width of one head of the dot-product scores (A split into H heads). */
static int dot_head_dim(const AttnShape *sh)
{
    CHECK(sh->H >= 1 && sh->A % sh->H == 0);
    return sh->A / sh->H;
}

void nn_attn_dot_forward(real *e, const real *q, const real *K, const AttnShape *sh)
{
    const int S = sh->S, B = sh->B, A = sh->A, H = sh->H;
    const real scale = sh->scale;
    int dh = dot_head_dim(sh);
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            for (int hd = 0; hd < H; hd++) {
                const real *restrict qh = q + (size_t)b * A + (size_t)hd * dh;
                const real *restrict kh = K + ((size_t)j * B + b) * A + (size_t)hd * dh;
                real s = 0;
                for (int d = 0; d < dh; d++)
                    s += qh[d] * kh[d];
                e[((size_t)hd * B + b) * S + j] = scale * s;
            }
        }
    }
}

void nn_attn_dot_backward(real *dq, real *dK, const real *de, const real *q, const real *K,
                          const AttnShape *sh)
{
    const int S = sh->S, B = sh->B, A = sh->A, H = sh->H;
    const real scale = sh->scale;
    int dh = dot_head_dim(sh);
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            for (int hd = 0; hd < H; hd++) {
                real g = scale * de[((size_t)hd * B + b) * S + j];
                size_t qo = (size_t)b * A + (size_t)hd * dh;
                size_t ko = ((size_t)j * B + b) * A + (size_t)hd * dh;
                if (dq) {
                    real *restrict gq = dq + qo;
                    const real *restrict kh = K + ko;
                    for (int d = 0; d < dh; d++)
                        gq[d] += g * kh[d];
                }
                if (dK) {
                    real *restrict gk = dK + ko;
                    const real *restrict qh = q + qo;
                    for (int d = 0; d < dh; d++)
                        gk[d] += g * qh[d];
                }
            }
        }
    }
}

void nn_window_softmax_forward(real *a, const real *e, const int *lo, const int *hi, int B,
                               int S)
{
    for (int b = 0; b < B; b++) {
        int l = lo[b], u = hi[b];
        CHECK(0 <= l && l <= u && u < S);
        const real *restrict x = e + (size_t)b * S;
        real *restrict y = a + (size_t)b * S;
        for (int j = 0; j < l; j++)
            y[j] = 0;
        real m = x[l];
        for (int j = l + 1; j <= u; j++)
            m = x[j] > m ? x[j] : m;
        real sum = 0;
        for (int j = l; j <= u; j++) {
            y[j] = R_EXP(x[j] - m);
            sum += y[j];
        }
        real inv = (real)1 / sum;
        for (int j = l; j <= u; j++)
            y[j] *= inv;
        for (int j = u + 1; j < S; j++)
            y[j] = 0;
    }
}

void nn_window_softmax_backward(real *de, const real *da, const real *a, const int *lo,
                                const int *hi, int B, int S)
{
    for (int b = 0; b < B; b++) {
        int l = lo[b], u = hi[b];
        CHECK(0 <= l && l <= u && u < S);
        const real *restrict y = a + (size_t)b * S;
        const real *restrict d = da + (size_t)b * S;
        real *restrict g = de + (size_t)b * S;
        real dot = 0;
        for (int j = l; j <= u; j++)
            dot += y[j] * d[j];
        for (int j = l; j <= u; j++)
            g[j] += y[j] * (d[j] - dot);
    }
}

/* Not restrict: out may be a. Each entry is read before it is written. */
void nn_gauss_window_forward(real *out, const real *a, const real *p, const int *lo,
                             const int *hi, const AttnShape *sh)
{
    const int B = sh->B, S = sh->S;
    const real sigma = sh->sigma;
    CHECK(sigma > 0);
    real k = (real)-0.5 / (sigma * sigma);
    for (int b = 0; b < B; b++) {
        int l = lo[b], u = hi[b];
        CHECK(0 <= l && l <= u && u < S);
        real pb = p[b];
        const real *x = a + (size_t)b * S;
        real *y = out + (size_t)b * S;
        for (int j = 0; j < l; j++)
            y[j] = 0;
        for (int j = l; j <= u; j++) {
            real t = (real)j - pb;
            y[j] = x[j] * R_EXP(k * t * t);
        }
        for (int j = u + 1; j < S; j++)
            y[j] = 0;
    }
}

void nn_gauss_window_backward(real *da, real *dp, const real *dout, const real *a,
                              const real *p, const int *lo, const int *hi, const AttnShape *sh)
{
    const int B = sh->B, S = sh->S;
    const real sigma = sh->sigma;
    CHECK(sigma > 0);
    real k = (real)-0.5 / (sigma * sigma), inv_var = (real)1 / (sigma * sigma);
    for (int b = 0; b < B; b++) {
        int l = lo[b], u = hi[b];
        CHECK(0 <= l && l <= u && u < S);
        real pb = p[b];
        const real *restrict d = dout + (size_t)b * S;
        const real *restrict x = a + (size_t)b * S;
        if (da) {
            real *restrict gx = da + (size_t)b * S;
            for (int j = l; j <= u; j++) {
                real t = (real)j - pb;
                gx[j] += d[j] * R_EXP(k * t * t);
            }
        }
        if (dp) {
            real s = 0;
            for (int j = l; j <= u; j++) {
                real t = (real)j - pb;
                s += d[j] * x[j] * R_EXP(k * t * t) * t;
            }
            dp[b] += s * inv_var;
        }
    }
}

void nn_local_pos_forward(real *p, real *sig, const real *x, const int *lens, int B)
{
    for (int b = 0; b < B; b++) {
        real v = x[b], s;
        if (v >= 0) {
            s = (real)1 / ((real)1 + R_EXP(-v));
        } else {
            real z = R_EXP(v);
            s = z / ((real)1 + z);
        }
        sig[b] = s;
        p[b] = (real)lens[b] * s;
    }
}

void nn_local_pos_backward(real *dx, const real *dp, const real *sig, const int *lens, int B)
{
    for (int b = 0; b < B; b++)
        dx[b] += dp[b] * (real)lens[b] * sig[b] * ((real)1 - sig[b]);
}

/* ---- multi-head attention over sequences ---- */

/* The keys query i of sentence b may attend to: j < mha_keys(s, b, i). */
static inline int mha_keys(const MhaShape *s, int b, int i)
{
    int n = s->klen ? s->klen[b] : s->Tk;
    if (s->causal >= 0 && i + s->causal + 1 < n)
        n = i + s->causal + 1;
    CHECK(n >= 1 && n <= s->Tk);
    return n;
}

/* Σ a[d]·b[d] in DOT_LANES independent partial sums, so that the loop vectorises in a
   fixed order (float; in double for dot_lanes_d). */
enum { DOT_LANES = 8 };

static inline real dot_lanes(const real *restrict a, const real *restrict b, int n)
{
    real acc[DOT_LANES] = {0};
    int d = 0;
    for (; d + DOT_LANES <= n; d += DOT_LANES)
        for (int l = 0; l < DOT_LANES; l++)
            acc[l] += a[d + l] * b[d + l];
    real s = 0;
    for (int l = 0; l < DOT_LANES; l++)
        s += acc[l];
    for (; d < n; d++)
        s += a[d] * b[d];
    return s;
}

static inline double dot_lanes_d(const real *restrict a, const real *restrict b, int n)
{
    double acc[DOT_LANES] = {0};
    int d = 0;
    for (; d + DOT_LANES <= n; d += DOT_LANES)
        for (int l = 0; l < DOT_LANES; l++)
            acc[l] += (double)a[d + l] * (double)b[d + l];
    double s = 0;
    for (int l = 0; l < DOT_LANES; l++)
        s += acc[l];
    for (; d < n; d++)
        s += (double)a[d] * (double)b[d];
    return s;
}

typedef struct MhaJob {
    real *out, *a, *dQ, *dK, *dV, *de;
    const real *drop, *dout, *ca, *Q, *K, *V;
    const MhaShape *s;
} MhaJob;

/* Head h of sentence b (bh = b·H + h): where its first position starts in Q, K, V
   and the output, and the step from one position to the next in each. */
typedef struct MhaHead {
    int b;
    size_t qo, ko, vo, oo;
    size_t sq, sk, sv, so;
} MhaHead;

static inline MhaHead mha_head(const MhaShape *s, size_t bh)
{
    int b = (int)(bh / (size_t)s->H), h = (int)(bh % (size_t)s->H), B = s->B, dh = s->dh;
    return (MhaHead){
        .b = b,
        .qo = (size_t)b * s->ldq + (size_t)h * dh,
        .ko = (size_t)b * s->ldk + (size_t)h * dh,
        .vo = (size_t)b * s->ldv + (size_t)h * dh,
        .oo = (size_t)b * s->ldo + (size_t)h * dh,
        .sq = (size_t)B * s->ldq,
        .sk = (size_t)B * s->ldk,
        .sv = (size_t)B * s->ldv,
        .so = (size_t)B * s->ldo,
    };
}

/* Query i of head m: its attention weights into J->a[row..] and its output. */
static inline __attribute__((always_inline)) void mha_fwd_row(const MhaJob *J, const MhaHead *m,
                                                              int i, size_t row)
{
    const MhaShape *s = J->s;
    int Tk = s->Tk, dh = s->dh;
    int n = mha_keys(s, m->b, i);
    size_t sk = m->sk, sv = m->sv;
    real *restrict ar = J->a + row;
    const real *restrict q = J->Q + m->qo + (size_t)i * m->sq;
    const real *k0 = J->K + m->ko, *v0 = J->V + m->vo;
    for (int j = 0; j < n; j++) {
        ar[j] = s->scale * dot_lanes(q, k0 + (size_t)j * sk, dh);
    }
    softmax_prefix(ar, ar, n, Tk);
    const real *dr = J->drop ? J->drop + row : NULL;
    real *restrict o = J->out + m->oo + (size_t)i * m->so;
    for (int d = 0; d < dh; d++)
        o[d] = 0;
    for (int j = 0; j < n; j++) {
        real w = dr ? ar[j] * dr[j] : ar[j];
        const real *restrict v = v0 + (size_t)j * sv;
        for (int d = 0; d < dh; d++)
            o[d] += w * v[d];
    }
}

/* Query i of head m backward: dQ, dK, dV from J->dout, the scores' gradient into
   J->de[row..]. */
static inline __attribute__((always_inline)) void mha_bwd_row(const MhaJob *J, const MhaHead *m,
                                                              int i, size_t row)
{
    const MhaShape *s = J->s;
    int dh = s->dh;
    int n = mha_keys(s, m->b, i);
    size_t sq = m->sq, sk = m->sk, sv = m->sv, qo = m->qo, ko = m->ko, vo = m->vo;
    const real *restrict ar = J->ca + row;
    const real *dr = J->drop ? J->drop + row : NULL;
    real *restrict e = J->de + row;
    const real *restrict dy = J->dout + m->oo + (size_t)i * m->so;
    /* dV[j] += a·drop · dy; e[j] = (dy · V[j]) · drop  (the gradient of a) */
    double dot_ad = 0; /* in double: a·(g − Σ a g) cancels when one weight is near 1 */
    for (int j = 0; j < n; j++) {
        const real *restrict v = J->V + vo + (size_t)j * sv;
        real w = dr ? ar[j] * dr[j] : ar[j];
        double g = dot_lanes_d(dy, v, dh);
        if (J->dV) {
            real *restrict dv = J->dV + vo + (size_t)j * sv;
            for (int d = 0; d < dh; d++)
                dv[d] += w * dy[d];
        }
        e[j] = (real)(dr ? g * dr[j] : g);
        dot_ad += (double)ar[j] * e[j];
    }
    /* softmax backward, then the scores' scale */
    for (int j = 0; j < n; j++)
        e[j] = (real)(s->scale * ar[j] * ((double)e[j] - dot_ad));
    const real *restrict q = J->Q + qo + (size_t)i * sq;
    for (int j = 0; j < n; j++) {
        const real *restrict k = J->K + ko + (size_t)j * sk;
        if (J->dQ) {
            real *restrict dq = J->dQ + qo + (size_t)i * sq;
            for (int d = 0; d < dh; d++)
                dq[d] += e[j] * k[d];
        }
        if (J->dK) {
            real *restrict dk = J->dK + ko + (size_t)j * sk;
            for (int d = 0; d < dh; d++)
                dk[d] += e[j] * q[d];
        }
    }
}

/* Every query of heads [lo, hi), forward or backward; inlined into each of the two
   range functions below, so that `backward` is a constant there. */
static inline __attribute__((always_inline)) void mha_rows(const MhaJob *J, size_t lo, size_t hi,
                                                           bool backward)
{
    const MhaShape *s = J->s;
    for (size_t bh = lo; bh < hi; bh++) {
        const MhaHead m = mha_head(s, bh);
        for (int i = 0; i < s->Tq; i++) {
            size_t row = (bh * (size_t)s->Tq + (size_t)i) * (size_t)s->Tk;
            if (backward)
                mha_bwd_row(J, &m, i, row);
            else
                mha_fwd_row(J, &m, i, row);
        }
    }
}

NN_SIMD static void mha_fwd_range(void *ctx, size_t lo, size_t hi) { mha_rows(ctx, lo, hi, false); }

NN_SIMD static void mha_bwd_range(void *ctx, size_t lo, size_t hi) { mha_rows(ctx, lo, hi, true); }

void nn_mha_forward(real *out, real *a, const real *drop, const MhaQkv *qkv, const MhaShape *s)
{
    MhaJob J = {.out = out, .a = a, .drop = drop, .Q = qkv->Q, .K = qkv->K, .V = qkv->V, .s = s};
    nn_parallel_for((size_t)s->B * (size_t)s->H, 4, mha_fwd_range, &J);
}

void nn_mha_backward(const MhaQkvGrad *dqkv, real *de, const real *dout, const real *a,
                     const real *drop, const MhaQkv *qkv, const MhaShape *s)
{
    MhaJob J = {.dQ = dqkv->Q, .dK = dqkv->K, .dV = dqkv->V, .de = de, .dout = dout, .ca = a,
                .drop = drop, .Q = qkv->Q, .K = qkv->K, .V = qkv->V, .s = s};
    nn_parallel_for((size_t)s->B * (size_t)s->H, 4, mha_bwd_range, &J);
}
