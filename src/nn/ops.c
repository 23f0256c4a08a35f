#include "nn/ops.h"

#include <math.h>
#include <string.h>

#include "base/err.h"
#include "nn/parallel.h"

NN_SIMD void nn_bias_forward(real *out, const real *inp, const real *b, int N, int C)
{
    for (int i = 0; i < N; i++) {
        real *o = out + (size_t)i * C;
        const real *x = inp + (size_t)i * C;
        for (int j = 0; j < C; j++)
            o[j] = x[j] + b[j];
    }
}

NN_SIMD void nn_bias_backward(real *dinp, real *db, const real *dout, int N, int C)
{
    for (int i = 0; i < N; i++) {
        const real *restrict d = dout + (size_t)i * C;
        if (dinp) {
            real *restrict dx = dinp + (size_t)i * C;
            for (int j = 0; j < C; j++)
                dx[j] += d[j];
        }
        if (db) {
            real *restrict g = db;
            for (int j = 0; j < C; j++)
                g[j] += d[j];
        }
    }
}

void nn_tanh_forward(real *out, const real *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = R_TANH(inp[i]);
}

void nn_tanh_backward(real *dinp, const real *dout, const real *out, size_t n)
{
    real *restrict dx = dinp;
    const real *restrict d = dout, *restrict y = out;
    for (size_t i = 0; i < n; i++)
        dx[i] += d[i] * ((real)1 - y[i] * y[i]);
}

void nn_tanh_backward_inplace(real *d, const real *out, size_t n)
{
    real *restrict dx = d;
    const real *restrict y = out;
    for (size_t i = 0; i < n; i++)
        dx[i] *= (real)1 - y[i] * y[i];
}

void nn_sigmoid_forward(real *out, const real *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = r_sigmoid(inp[i]);
}

void nn_sigmoid_backward(real *dinp, const real *dout, const real *out, size_t n)
{
    real *restrict dx = dinp;
    const real *restrict d = dout, *restrict y = out;
    for (size_t i = 0; i < n; i++)
        dx[i] += d[i] * y[i] * ((real)1 - y[i]);
}

void nn_embedding_forward(real *out, const int *ids, const real *E, int N, int V, int D)
{
    for (int i = 0; i < N; i++) {
        CHECK(ids[i] >= 0 && ids[i] < V);
        memcpy(out + (size_t)i * D, E + (size_t)ids[i] * D, (size_t)D * sizeof(real));
    }
}

void nn_embedding_backward(real *dE, const real *dout, const int *ids, int N, int V, int D)
{
    for (int i = 0; i < N; i++) {
        CHECK(ids[i] >= 0 && ids[i] < V);
        real *restrict g = dE + (size_t)ids[i] * D;
        const real *restrict d = dout + (size_t)i * D;
        for (int j = 0; j < D; j++)
            g[j] += d[j];
    }
}

static int total_width(const int *widths, int nparts)
{
    int w = 0;
    for (int k = 0; k < nparts; k++)
        w += widths[k];
    return w;
}

void nn_concat_forward(real *out, const real *const *parts, const int *widths, int nparts,
                       int N)
{
    int W = total_width(widths, nparts);
    for (int i = 0; i < N; i++) {
        real *o = out + (size_t)i * W;
        for (int k = 0; k < nparts; k++) {
            memcpy(o, parts[k] + (size_t)i * widths[k], (size_t)widths[k] * sizeof(real));
            o += widths[k];
        }
    }
}

void nn_concat_backward(real *const *dparts, const real *dout, const int *widths, int nparts,
                        int N)
{
    int W = total_width(widths, nparts);
    for (int i = 0; i < N; i++) {
        const real *d = dout + (size_t)i * W;
        for (int k = 0; k < nparts; k++) {
            if (dparts[k]) {
                real *restrict g = dparts[k] + (size_t)i * widths[k];
                const real *restrict s = d;
                for (int j = 0; j < widths[k]; j++)
                    g[j] += s[j];
            }
            d += widths[k];
        }
    }
}

void nn_split_forward(real *const *parts, const real *inp, const int *widths, int nparts,
                      int N)
{
    int W = total_width(widths, nparts);
    for (int i = 0; i < N; i++) {
        const real *x = inp + (size_t)i * W;
        for (int k = 0; k < nparts; k++) {
            if (parts[k])
                memcpy(parts[k] + (size_t)i * widths[k], x, (size_t)widths[k] * sizeof(real));
            x += widths[k];
        }
    }
}

void nn_split_backward(real *dinp, const real *const *dparts, const int *widths, int nparts,
                       int N)
{
    int W = total_width(widths, nparts);
    for (int i = 0; i < N; i++) {
        real *g = dinp + (size_t)i * W;
        for (int k = 0; k < nparts; k++) {
            if (dparts[k]) {
                real *restrict gk = g;
                const real *restrict s = dparts[k] + (size_t)i * widths[k];
                for (int j = 0; j < widths[k]; j++)
                    gk[j] += s[j];
            }
            g += widths[k];
        }
    }
}

/* Element i of a call keeps when the 53-bit uniform number u_i >= p, where u_i is
   output i of splitmix64 started from a key drawn once per call from rng: the elements
   are independent of each other and of the order they are computed in, so the mask is
   the same on any number of threads, and rng advances by one draw per call. u_i is
   k·2^-53 for the integer k = z >> 11, so u_i >= p exactly when k >= ⌈p·2^53⌉: the
   comparison is made on the integers (which vectorise), with the same outcome. */
typedef struct DropJob {
    real *out, *mask;
    const real *inp;
    uint64_t key;
    uint64_t threshold; /* ⌈p·2^53⌉ */
    real keep;
} DropJob;

NN_SIMD static void drop_range(void *ctx, size_t lo, size_t hi)
{
    const DropJob *j = ctx;
    real *restrict mask = j->mask;
    const uint64_t key = j->key, threshold = j->threshold;
    const real keep = j->keep;
    for (size_t i = lo; i < hi; i++) {
        uint64_t z = key + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        mask[i] = (z >> 11) >= threshold ? keep : 0;
    }
    if (j->out) {
        real *out = j->out; /* may be inp */
        const real *inp = j->inp;
        for (size_t i = lo; i < hi; i++)
            out[i] = inp[i] * mask[i];
    }
}

static void dropout_run(real *out, real *mask, const real *inp, size_t n, real p, Rng *rng)
{
    CHECK(p >= 0 && p < 1);
    if (p == 0) {
        for (size_t i = 0; i < n; i++)
            mask[i] = 1;
        if (out && out != inp)
            memcpy(out, inp, n * sizeof(real));
        return;
    }
    DropJob j = {.out = out, .mask = mask, .inp = inp, .key = rng_u64(rng),
                 .threshold = (uint64_t)ceil((double)p * 0x1.0p53),
                 .keep = (real)1 / ((real)1 - p)};
    nn_parallel_for(n, 4096, drop_range, &j);
}

void nn_dropout_mask(real *mask, size_t n, real p, Rng *rng) { dropout_run(NULL, mask, NULL, n, p, rng); }

void nn_dropout_forward(real *out, real *mask, const real *inp, size_t n, real p, Rng *rng)
{
    dropout_run(out, mask, inp, n, p, rng);
}

NN_SIMD void nn_dropout_backward(real *dinp, const real *dout, const real *mask, size_t n)
{
    real *restrict dx = dinp;
    const real *restrict d = dout, *restrict m = mask;
    for (size_t i = 0; i < n; i++)
        dx[i] += d[i] * m[i];
}

NN_SIMD void nn_dropout_backward_inplace(real *d, const real *mask, size_t n)
{
    real *restrict dx = d;
    const real *restrict m = mask;
    for (size_t i = 0; i < n; i++)
        dx[i] *= m[i];
}

double nn_sumsq(const real *x, size_t n)
{
    /* Four independent partial sums: a fixed summation order that still pipelines. */
    double s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            s[k] += (double)x[i + k] * (double)x[i + k];
    for (; i < n; i++)
        s[0] += (double)x[i] * (double)x[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

void nn_scale(real *x, size_t n, real s)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

NN_SIMD void nn_relu_forward(real *out, const real *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] > 0 ? inp[i] : 0;
}

NN_SIMD void nn_relu_backward_inplace(real *d, const real *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = out[i] > 0 ? d[i] : 0;
}

typedef struct LnJob {
    real *out, *mean_out, *rstd_out, *dinp, *dg, *db;
    const real *inp, *dout, *g, *b, *mean, *rstd;
    int N, C;
    real eps;
} LnJob;

NN_SIMD static void ln_forward_rows(void *ctx, size_t lo, size_t hi)
{
    const LnJob *j = ctx;
    int C = j->C;
    for (size_t i = lo; i < hi; i++) {
        const real *restrict x = j->inp + i * C;
        real *restrict y = j->out + i * C;
        const real *restrict g = j->g, *restrict b = j->b;
        real m = 0;
        for (int c = 0; c < C; c++)
            m += x[c];
        m /= (real)C;
        real v = 0;
        for (int c = 0; c < C; c++)
            v += (x[c] - m) * (x[c] - m);
        v /= (real)C;
        real r = (real)1 / R_SQRT(v + j->eps);
        for (int c = 0; c < C; c++)
            y[c] = (x[c] - m) * r * g[c] + b[c];
        j->mean_out[i] = m;
        j->rstd_out[i] = r;
    }
}

void nn_layernorm_forward(real *out, const LnStats *stat, const real *inp, const real *g,
                          const real *b, const LnShape *s)
{
    const int N = s->N;
    LnJob j = {.out = out, .mean_out = stat->mean, .rstd_out = stat->rstd, .inp = inp, .g = g, .b = b,
               .N = N, .C = s->C, .eps = s->eps};
    nn_parallel_for((size_t)(N > 0 ? N : 0), 64, ln_forward_rows, &j);
}

/* dg, db over columns [lo, hi), each summed over the rows in order. */
NN_SIMD static void ln_backward_params(void *ctx, size_t lo, size_t hi)
{
    const LnJob *j = ctx;
    size_t C = (size_t)j->C;
    for (int i = 0; i < j->N; i++) {
        const real *restrict x = j->inp + i * C;
        const real *restrict dy = j->dout + i * C;
        real m = j->mean[i], r = j->rstd[i];
        if (j->dg)
            for (size_t c = lo; c < hi; c++)
                j->dg[c] += dy[c] * (x[c] - m) * r;
        if (j->db)
            for (size_t c = lo; c < hi; c++)
                j->db[c] += dy[c];
    }
}

NN_SIMD static void ln_backward_rows(void *ctx, size_t lo, size_t hi)
{
    const LnJob *j = ctx;
    int C = j->C;
    const real *restrict g = j->g;
    for (size_t i = lo; i < hi; i++) {
        const real *restrict x = j->inp + i * C;
        const real *restrict dy = j->dout + i * C;
        real m = j->mean[i], r = j->rstd[i];
        real s1 = 0, s2 = 0; /* Σ dy·g, Σ dy·g·x̂ */
        for (int c = 0; c < C; c++) {
            real dxh = dy[c] * g[c];
            s1 += dxh;
            s2 += dxh * (x[c] - m) * r;
        }
        s1 /= (real)C;
        s2 /= (real)C;
        real *restrict dx = j->dinp + i * C;
        for (int c = 0; c < C; c++)
            dx[c] += r * (dy[c] * g[c] - s1 - (x[c] - m) * r * s2);
    }
}

void nn_layernorm_backward(real *dinp, real *dg, real *db, const real *dout, const real *inp,
                           const LnStats *stat, const real *g, const LnShape *s)
{
    const int N = s->N, C = s->C;
    LnJob j = {.dinp = dinp, .dg = dg, .db = db, .dout = dout, .inp = inp, .mean = stat->mean,
               .rstd = stat->rstd, .g = g, .N = N, .C = C};
    if (N <= 0)
        return;
    if (dg || db)
        nn_parallel_for((size_t)C, 32, ln_backward_params, &j);
    if (dinp)
        nn_parallel_for((size_t)N, 64, ln_backward_rows, &j);
}

void nn_sinusoid(real *out, int pos, int C)
{
    for (int c = 0; c < C; c++) {
        int i2 = c & ~1;
        double angle = (double)pos / pow(10000.0, (double)i2 / (double)C);
        out[c] = (real)((c & 1) ? cos(angle) : sin(angle));
    }
}

/* The running maximum in ARG_LANES lanes (`x > m ? x : m`, which skips NaN as a scalar
   scan from x[0] does) vectorises; a compare-and-branch per element does not. */
enum { ARG_LANES = 16 };

NN_SIMD real nn_max(const real *x, int n)
{
    real m[ARG_LANES];
    for (int l = 0; l < ARG_LANES; l++)
        m[l] = x[0];
    int v = 0;
    for (; v + ARG_LANES <= n; v += ARG_LANES)
        for (int l = 0; l < ARG_LANES; l++)
            m[l] = x[v + l] > m[l] ? x[v + l] : m[l];
    real best = x[0];
    for (int l = 0; l < ARG_LANES; l++)
        best = m[l] > best ? m[l] : best;
    for (; v < n; v++)
        best = x[v] > best ? x[v] : best;
    return best;
}

/* nn_max, then the first chunk holding it. NaN at x[0] was the scalar scan's answer for
   good; it still is, as no element equals NaN. */
NN_SIMD int nn_argmax(const real *x, int n)
{
    const real best = nn_max(x, n);
    int c = 0;
    for (; c + ARG_LANES <= n; c += ARG_LANES) {
        int hit = 0;
        for (int l = 0; l < ARG_LANES; l++)
            hit |= x[c + l] == best;
        if (hit)
            break;
    }
    for (; c < n; c++)
        if (x[c] == best)
            return c;
    return 0;
}
