#include "model/output.h"

#include <math.h>
#include <string.h>

#include "base/err.h"
#include "nn/linalg.h"
#include "nn/loss.h"

enum { CHUNK_FLOATS = 1 << 22, CHUNK_MIN_ROWS = 64 };

int output_chunk_rows(int N, int V)
{
    int rows = CHUNK_FLOATS / (V > 0 ? V : 1);
    if (rows < CHUNK_MIN_ROWS)
        rows = CHUNK_MIN_ROWS;
    return rows < N ? rows : (N > 0 ? N : 1);
}

OutputLoss output_loss(const OutputLayer *o, const real *h, const int *targets, int N, real scale,
                       real *dh)
{
    CHECK(o->chunk > 0 && (!o->gw || dh));
    OutputLoss r = {0, 0};
    size_t V = (size_t)o->V, P = (size_t)o->P;
    for (int first = 0; first < N; first += o->chunk) {
        int n = N - first < o->chunk ? N - first : o->chunk;
        const real *hc = h + (size_t)first * P;
        const int *y = targets + first;
        real *p = o->probs && !o->gw ? o->probs : o->logits;
        nn_linear_forward(o->logits, hc, o->w, o->b, &(LinearShape){n, o->P, o->V});
        int count = 0;
        r.loss += nn_xent_forward(p, &count, o->logits, y, n, o->V, o->eps, 0);
        for (int i = 0; i < n; i++)
            if (y[i] != 0) {
                double py = p[(size_t)i * V + (size_t)y[i]];
                r.nll -= log(py > 1e-300 ? py : 1e-300);
            }
        if (!o->gw)
            continue;
        nn_xent_backward_inplace(p, y, n, o->V, o->eps, 0, scale);
        real *dhc = dh + (size_t)first * P;
        memset(dhc, 0, (size_t)n * P * sizeof(real));
        nn_linear_backward(dhc, o->gw, o->gb, p, hc, o->w, &(LinearShape){n, o->P, o->V});
    }
    return r;
}
