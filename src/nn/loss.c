#include "nn/loss.h"

#include <math.h>
#include <stddef.h>

#include "base/err.h"
#include "nn/ops.h"
#include "nn/parallel.h"

/* Partial results in LANES independent accumulators, so that the loops below vectorise
   without reassociating floating-point sums. */
enum { LANES = 16 };

/* max_k x[k], Σ_k x[k] (in double at the end) of one row. */
NN_SIMD static real row_max_sum(const real *restrict x, int V, double *sum)
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
NN_SIMD static double row_exp(real *restrict p, const real *restrict x, real m, int V)
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

typedef struct XentJob {
    real *probs;
    const real *logits;
    const int *targets;
    int V, ignore;
    real eps;
    double *row_loss; /* of the rows of this round, NAN for ignored rows */
    size_t first;     /* row index of row_loss[0] */
} XentJob;

NN_SIMD static void xent_rows(void *ctx, size_t lo, size_t hi)
{
    const XentJob *j = ctx;
    int V = j->V;
    for (size_t r = lo; r < hi; r++) {
        size_t i = j->first + r;
        int y = j->targets[i];
        if (y == j->ignore) {
            j->row_loss[r] = NAN;
            continue;
        }
        CHECK(y >= 0 && y < V);
        const real *x = j->logits + i * (size_t)V;
        real *restrict p = j->probs + i * (size_t)V;
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
        j->row_loss[r] = (1.0 - (double)j->eps) * nll + (double)j->eps * smooth;
    }
}

double nn_xent_forward(real *probs, int *count, const real *logits, const int *targets,
                       int N, int V, real eps, int ignore)
{
    /* Rows in rounds of XENT_ROUND (no allocation per call); the losses are summed in
       row order, so the total does not depend on the number of threads. */
    enum { XENT_ROUND = 1024 };
    double row_loss[XENT_ROUND];
    XentJob j = {.probs = probs, .logits = logits, .targets = targets, .V = V, .ignore = ignore,
                 .eps = eps, .row_loss = row_loss};
    double total = 0;
    int counted = 0;
    for (int first = 0; first < N; first += XENT_ROUND) {
        int n = N - first < XENT_ROUND ? N - first : XENT_ROUND;
        j.first = (size_t)first;
        nn_parallel_for((size_t)n, 8, xent_rows, &j);
        for (int r = 0; r < n; r++)
            if (targets[first + r] != ignore) {
                total += row_loss[r];
                counted++;
            }
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

typedef struct XentBackJob {
    real *pd;
    const int *targets;
    int V, ignore;
    real eps, scale;
} XentBackJob;

NN_SIMD static void xent_back_rows(void *ctx, size_t lo, size_t hi)
{
    const XentBackJob *j = ctx;
    int V = j->V;
    real off = j->scale * j->eps / (real)V;
    for (size_t i = lo; i < hi; i++) {
        int y = j->targets[i];
        real *restrict g = j->pd + i * (size_t)V;
        if (y == j->ignore) {
            for (int k = 0; k < V; k++)
                g[k] = 0;
            continue;
        }
        CHECK(y >= 0 && y < V);
        for (int k = 0; k < V; k++)
            g[k] = j->scale * g[k] - off;
        g[y] -= j->scale * ((real)1 - j->eps);
    }
}

void nn_xent_backward_inplace(real *pd, const int *targets, int N, int V, real eps,
                              int ignore, real scale)
{
    XentBackJob j = {.pd = pd, .targets = targets, .V = V, .ignore = ignore, .eps = eps, .scale = scale};
    nn_parallel_for((size_t)(N > 0 ? N : 0), 8, xent_back_rows, &j);
}

NN_SIMD double nn_log_sum_exp_max(const real *x, int V, real mx)
{
    enum { L = 16 };
    double lane[L] = {0}, s = 0;
    int v = 0;
    for (; v + L <= V; v += L)
        for (int l = 0; l < L; l++)
            lane[l] += (double)R_EXP(x[v + l] - mx);
    for (; v < V; v++)
        s += (double)R_EXP(x[v] - mx);
    for (int l = 0; l < L; l++)
        s += lane[l];
    return (double)mx + log(s);
}

double nn_log_sum_exp(const real *x, int V)
{
    return nn_log_sum_exp_max(x, V, nn_max(x, V));
}
