#include "nn/loss.h"

#include <math.h>
#include <stddef.h>

#include "base/err.h"

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
        real *p = probs + (size_t)i * V;
        real m = x[0];
        double sx = 0;
        for (int k = 0; k < V; k++) {
            m = x[k] > m ? x[k] : m;
            sx += (double)x[k];
        }
        real xy = x[y];
        double sum = 0;
        for (int k = 0; k < V; k++) {
            p[k] = R_EXP(x[k] - m);
            sum += (double)p[k];
        }
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
