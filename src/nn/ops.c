#include "nn/ops.h"

#include <math.h>
#include <string.h>

#include "base/err.h"

void nn_bias_forward(real *out, const real *inp, const real *b, int N, int C)
{
    for (int i = 0; i < N; i++) {
        real *o = out + (size_t)i * C;
        const real *x = inp + (size_t)i * C;
        for (int j = 0; j < C; j++)
            o[j] = x[j] + b[j];
    }
}

void nn_bias_backward(real *dinp, real *db, const real *dout, int N, int C)
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

void nn_dropout_mask(real *mask, size_t n, real p, Rng *rng)
{
    CHECK(p >= 0 && p < 1);
    if (p == 0) {
        for (size_t i = 0; i < n; i++)
            mask[i] = 1;
        return;
    }
    /* Keep when a 53-bit uniform draw is >= p: probability exactly 1 - p (up to 2^-53). */
    real keep = (real)1 / ((real)1 - p);
    double pd = (double)p;
    for (size_t i = 0; i < n; i++)
        mask[i] = rng_uniform(rng) >= pd ? keep : 0;
}

void nn_dropout_forward(real *out, real *mask, const real *inp, size_t n, real p, Rng *rng)
{
    nn_dropout_mask(mask, n, p, rng);
    if (p == 0) {
        if (out != inp)
            memcpy(out, inp, n * sizeof(real));
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] * mask[i];
}

void nn_dropout_backward(real *dinp, const real *dout, const real *mask, size_t n)
{
    real *restrict dx = dinp;
    const real *restrict d = dout, *restrict m = mask;
    for (size_t i = 0; i < n; i++)
        dx[i] += d[i] * m[i];
}

void nn_dropout_backward_inplace(real *d, const real *mask, size_t n)
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

void nn_relu_forward(real *out, const real *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] > 0 ? inp[i] : 0;
}

void nn_relu_backward_inplace(real *d, const real *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = out[i] > 0 ? d[i] : 0;
}

void nn_layernorm_forward(real *out, real *mean, real *rstd, const real *inp, const real *g,
                          const real *b, int N, int C, real eps)
{
    for (int i = 0; i < N; i++) {
        const real *restrict x = inp + (size_t)i * C;
        real *restrict y = out + (size_t)i * C;
        real m = 0;
        for (int c = 0; c < C; c++)
            m += x[c];
        m /= (real)C;
        real v = 0;
        for (int c = 0; c < C; c++)
            v += (x[c] - m) * (x[c] - m);
        v /= (real)C;
        real r = (real)1 / R_SQRT(v + eps);
        for (int c = 0; c < C; c++)
            y[c] = (x[c] - m) * r * g[c] + b[c];
        mean[i] = m;
        rstd[i] = r;
    }
}

void nn_layernorm_backward(real *dinp, real *dg, real *db, const real *dout, const real *inp,
                           const real *mean, const real *rstd, const real *g, int N, int C)
{
    for (int i = 0; i < N; i++) {
        const real *restrict x = inp + (size_t)i * C;
        const real *restrict dy = dout + (size_t)i * C;
        real m = mean[i], r = rstd[i];
        if (dg || db)
            for (int c = 0; c < C; c++) {
                if (dg)
                    dg[c] += dy[c] * (x[c] - m) * r;
                if (db)
                    db[c] += dy[c];
            }
        if (!dinp)
            continue;
        real s1 = 0, s2 = 0; /* Σ dy·g, Σ dy·g·x̂ */
        for (int c = 0; c < C; c++) {
            real dxh = dy[c] * g[c];
            s1 += dxh;
            s2 += dxh * (x[c] - m) * r;
        }
        s1 /= (real)C;
        s2 /= (real)C;
        real *restrict dx = dinp + (size_t)i * C;
        for (int c = 0; c < C; c++)
            dx[c] += r * (dy[c] * g[c] - s1 - (x[c] - m) * r * s2);
    }
}

void nn_sinusoid(real *out, int pos, int C)
{
    for (int c = 0; c < C; c++) {
        int i2 = c & ~1;
        double angle = (double)pos / pow(10000.0, (double)i2 / (double)C);
        out[c] = (real)((c & 1) ? cos(angle) : sin(angle));
    }
}
