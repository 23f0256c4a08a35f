#include "nn/attention.h"

#include <stddef.h>

#include "base/err.h"

void nn_attn_score_forward(real *e, real *cache, const real *q, const real *K, const real *v,
                           int S, int B, int A)
{
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            const real *restrict qb = q + (size_t)b * A;
            const real *restrict kjb = K + ((size_t)j * B + b) * A;
            real *restrict t = cache + ((size_t)j * B + b) * A;
            for (int a = 0; a < A; a++)
                t[a] = R_TANH(qb[a] + kjb[a]);
            real s = 0;
            for (int a = 0; a < A; a++)
                s += v[a] * t[a];
            e[(size_t)b * S + j] = s;
        }
    }
}

void nn_attn_score_backward(real *dq, real *dK, real *dv, const real *de, const real *cache,
                            const real *v, int S, int B, int A)
{
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

void nn_masked_softmax_forward(real *a, const real *e, const int *lens, int B, int S)
{
    for (int b = 0; b < B; b++) {
        int n = lens[b];
        CHECK(n >= 1 && n <= S);
        const real *restrict x = e + (size_t)b * S;
        real *restrict y = a + (size_t)b * S;
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
        for (int j = n; j < S; j++)
            y[j] = 0;
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

void nn_attn_context_forward(real *ctx, const real *a, const real *Hs, int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        real *restrict c = ctx + (size_t)b * D;
        for (int d = 0; d < D; d++)
            c[d] = 0;
        for (int j = 0; j < S; j++) {
            real w = a[(size_t)b * S + j];
            const real *restrict h = Hs + ((size_t)j * B + b) * D;
            for (int d = 0; d < D; d++)
                c[d] += w * h[d];
        }
    }
}

void nn_attn_context_backward(real *da, real *dHs, const real *dctx, const real *a,
                              const real *Hs, int S, int B, int D)
{
    for (int j = 0; j < S; j++) {
        for (int b = 0; b < B; b++) {
            const real *restrict g = dctx + (size_t)b * D;
            if (da) {
                const real *restrict h = Hs + ((size_t)j * B + b) * D;
                real s = 0;
                for (int d = 0; d < D; d++)
                    s += g[d] * h[d];
                da[(size_t)b * S + j] += s;
            }
            if (dHs) {
                real w = a[(size_t)b * S + j];
                real *restrict gh = dHs + ((size_t)j * B + b) * D;
                for (int d = 0; d < D; d++)
                    gh[d] += w * g[d];
            }
        }
    }
}
