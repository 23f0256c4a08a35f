#include "nn/loss.h"

#include <math.h>
#include <stddef.h>

#include "base/err.h"

/* Partial results in LANES independent accumulators, so that the loops below vectorise
   without reassociating floating-point sums. */
enum { LANES = 16 };

/* max_k x[k], Σ_k x[k] (in double at the end) of one row. */
static real row_max_sum(const real *restrict x, int V, double *sum)
{
    real mx[LANES], sx[LANES];
    for (int l = 0; l < LANES; l++) {
        mx[l] = x[0];
        sx[l] = 0;
    }
    int k = 0;
    for (; k + LANES <= V; k += LANES)
        for (int l = 0; l < LANES; l++) {
            mx[l] = x[k + l] > mx[l] ? x[k + l] : mx[l];
            sx[l] += x[k + l];
        }
    real m = mx[0];
    double s = 0;
    for (int l = 0; l < LANES; l++) {
        m = mx[l] > m ? mx[l] : m;
        s += (double)sx[l];
    }
    for (; k < V; k++) {
        m = x[k] > m ? x[k] : m;
        s += (double)x[k];
    }
    *sum = s;
    return m;
}

/* p[k] = exp(x[k] − m); returns Σ_k p[k]. */
static double row_exp(real *restrict p, const real *restrict x, real m, int V)
{
    real acc[LANES] = {0};
    int k = 0;
    for (; k + LANES <= V; k += LANES)
        for (int l = 0; l < LANES; l++) {
            p[k + l] = R_EXP(x[k + l] - m);
            acc[l] += p[k + l];
        }
    double s = 0;
    for (int l = 0; l < LANES; l++)
        s += (double)acc[l];
    for (; k < V; k++) {
        p[k] = R_EXP(x[k] - m);
        s += (double)p[k];
    }
    return s;
}

double nn_xent_forward(real *probs, int *count, const real *logits, const int *targets,
                       int N, int V, real eps, int ignore)
{
    double total = 0;
    int counted = 0;
    for (int i = 0; i < N; i++) {
        int y = targets[i];
        if (y == ignore)
            continue;
        CHECK(y >= 0 && y < V);
        const real *x = logits + (size_t)i * V;
        real *restrict p = probs + (size_t)i * V;
        double sx;
        real m = row_max_sum(x, V, &sx);
        real xy = x[y];
        double sum = row_exp(p, x, m, V);
        real inv = (real)(1.0 / sum);
        for (int k = 0; k < V; k++)
            p[k] *= inv;
        /* −log p_k = lse − x_k with lse = m + log(sum). */
        double lse = (double)m + log(sum);
        double nll = lse - (double)xy;
        double smooth = lse - sx / V;
        total += (1.0 - (double)eps) * nll + (double)eps * smooth;
        counted++;
    }
    *count = counted;
    return total;
}

void nn_xent_backward(real *dlogits, const real *probs, const int *targets, int N, int V,
                      real eps, int ignore, real scale)
{
    real off = scale * eps / (real)V;
    for (int i = 0; i < N; i++) {
        int y = targets[i];
        if (y == ignore)
            continue;
        CHECK(y >= 0 && y < V);
        real *restrict g = dlogits + (size_t)i * V;
        const real *restrict p = probs + (size_t)i * V;
        for (int k = 0; k < V; k++)
            g[k] += scale * p[k] - off;
        g[y] -= scale * ((real)1 - eps);
    }
}

void nn_xent_backward_inplace(real *pd, const int *targets, int N, int V, real eps,
                              int ignore, real scale)
{
    real off = scale * eps / (real)V;
    for (int i = 0; i < N; i++) {
        int y = targets[i];
        real *restrict g = pd + (size_t)i * V;
        if (y == ignore) {
            for (int k = 0; k < V; k++)
                g[k] = 0;
            continue;
        }
        CHECK(y >= 0 && y < V);
        for (int k = 0; k < V; k++)
            g[k] = scale * g[k] - off;
        g[y] -= scale * ((real)1 - eps);
    }
}
