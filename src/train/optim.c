#include "train/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/parallel.h"

void optim_adam_init(Adam *a, size_t n, double beta1, double beta2, double eps,
                     double weight_decay)
{
    a->n = n;
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->eps = eps;
    a->weight_decay = weight_decay;
    a->step = 0;
    a->m = xcalloc(2 * n, sizeof(real));
    a->v = a->m + n;
    a->ema = NULL;
    a->ema_decay = 0;
}

void optim_adam_free(Adam *a)
{
    free(a->m);
    a->m = a->v = NULL;
}

typedef struct AdamJob {
    real *params, *m, *v;
    const real *grads;
    real gscale, b1, b2, c1, c2, step_size, bc2_sqrt, eps, wd;
    real *ema;
    real ed, ec; /* the moving average's decay and 1 − decay */
} AdamJob;

NN_SIMD static void adam_range(void *ctx, size_t lo, size_t hi)
{
    const AdamJob *j = ctx;
    real *restrict params = j->params, *restrict m = j->m, *restrict v = j->v;
    const real *restrict grads = j->grads;
    const real gscale = j->gscale, b1 = j->b1, b2 = j->b2, c1 = j->c1, c2 = j->c2,
               step_size = j->step_size, bc2_sqrt = j->bc2_sqrt, eps = j->eps, wd = j->wd;
    for (size_t i = lo; i < hi; i++) {
        real g = grads[i] * gscale;
        if (wd != 0)
            g += wd * params[i];
        m[i] = m[i] * b1 + c1 * g;
        v[i] = v[i] * b2 + c2 * g * g;
        real denom = R_SQRT(v[i]) / bc2_sqrt + eps;
        params[i] -= step_size * m[i] / denom;
    }
    if (j->ema) {
        real *restrict ema = j->ema;
        const real ed = j->ed, ec = j->ec;
        for (size_t i = lo; i < hi; i++)
            ema[i] = ed * ema[i] + ec * params[i];
    }
}

void optim_adam_step(Adam *a, real *params, const real *grads, double lr)
{
    optim_adam_step_scaled(a, params, grads, 1, lr);
}

void optim_adam_step_scaled(Adam *a, real *restrict params, const real *restrict grads, real gscale,
                            double lr)
{
    a->step++;
    const double bc1 = 1.0 - pow(a->beta1, (double)a->step);
    const double bc2 = 1.0 - pow(a->beta2, (double)a->step);
    AdamJob j = {
        .params = params, .m = a->m, .v = a->v, .grads = grads, .gscale = gscale,
        .b1 = (real)a->beta1, .b2 = (real)a->beta2,
        .c1 = (real)(1.0 - a->beta1), .c2 = (real)(1.0 - a->beta2),
        .step_size = (real)(lr / bc1), .bc2_sqrt = (real)sqrt(bc2),
        .eps = (real)a->eps, .wd = (real)a->weight_decay,
    };
    if (a->ema) {
        double warm = (1.0 + (double)a->step) / (10.0 + (double)a->step);
        double d = a->ema_decay < warm ? a->ema_decay : warm;
        j.ema = a->ema;
        j.ed = (real)d;
        j.ec = (real)(1.0 - d);
    }
    nn_parallel_for(a->n, NN_PAR_BLOCK, adam_range, &j);
}

/* blocks per round of the norm (a stack array, no allocation); within a block, element i
   is summed into lane i mod NORM_LANES, independent sums that vectorise, added in order at
   the end: the same bits on every thread count and vector width */
enum { NORM_ROUND = 16, NORM_LANES = 8 };

typedef struct NormJob {
    real *grads;
    size_t n;
    size_t first;                 /* block index of partial[0] */
    double partial[NORM_ROUND];   /* sums of squares of this round's blocks */
    real coef;
} NormJob;

NN_SIMD static void norm_blocks(void *ctx, size_t lo, size_t hi)
{
    NormJob *j = ctx;
    for (size_t r = lo; r < hi; r++) {
        size_t k = j->first + r;
        size_t a = k * NN_PAR_BLOCK, b = a + NN_PAR_BLOCK < j->n ? a + NN_PAR_BLOCK : j->n;
        const real *restrict g = j->grads;
        double lane[NORM_LANES] = {0};
        size_t i = a;
        for (; i + NORM_LANES <= b; i += NORM_LANES)
            for (int l = 0; l < NORM_LANES; l++)
                lane[l] += (double)g[i + l] * g[i + l];
        for (int l = 0; i < b; i++, l++)
            lane[l] += (double)g[i] * g[i];
        double ss = 0;
        for (int l = 0; l < NORM_LANES; l++)
            ss += lane[l];
        j->partial[r] = ss;
    }
}

NN_SIMD static void scale_range(void *ctx, size_t lo, size_t hi)
{
    NormJob *j = ctx;
    real *restrict g = j->grads;
    for (size_t i = lo; i < hi; i++)
        g[i] *= j->coef;
}

double optim_grad_norm(const real *grads, size_t n)
{
    size_t blocks = (n + NN_PAR_BLOCK - 1) / NN_PAR_BLOCK;
    NormJob j = {.grads = (real *)grads, .n = n};
    double ss = 0;
    for (j.first = 0; j.first < blocks; j.first += NORM_ROUND) {
        size_t m = blocks - j.first < NORM_ROUND ? blocks - j.first : NORM_ROUND;
        nn_parallel_for(m, 1, norm_blocks, &j);
        for (size_t r = 0; r < m; r++) /* in order: the norm does not depend on threads */
            ss += j.partial[r];
    }
    return sqrt(ss);
}

real optim_clip_coef(double norm, double max_norm)
{
    return max_norm > 0 && norm > max_norm ? (real)(max_norm / (norm + 1e-6)) : 1;
}

double optim_clip_grad_norm(real *grads, size_t n, double max_norm)
{
    double norm = optim_grad_norm(grads, n);
    NormJob j = {.grads = grads, .n = n, .coef = optim_clip_coef(norm, max_norm)};
    if (j.coef != 1)
        nn_parallel_for(n, NN_PAR_BLOCK, scale_range, &j);
    return norm;
}

Sched optim_sched_make(SchedKind kind, double base_lr)
{
    Sched s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.base_lr = base_lr;
    s.factor = 0.5;
    s.patience = 1;
    s.higher_better = true;
    s.lr = base_lr;
    return s;
}

double optim_sched_lr(const Sched *s, long step) { return optim_sched_lr_at(s, step, -1); }

double optim_sched_lr_at(const Sched *s, long step, double progress)
{
    CHECK(step >= 1);
    switch (s->kind) {
    case SCHED_WARMUP_COSINE: {
        double w = s->warmup > 0 && step < s->warmup ? (double)step / (double)s->warmup : 1;
        if (w < 1 && s->warmup_share > 0 && progress >= 0)
            w = fmin(1, fmax(w, progress / s->warmup_share));
        if (progress < 0)
            return s->base_lr * w;
        double f = progress < 1 ? progress : 1;
        return s->base_lr * w * 0.5 * (1 + cos(M_PI * f));
    }
    case SCHED_CONSTANT:
        return s->base_lr;
    case SCHED_WARMUP_DECAY:
        if (s->warmup <= 0)
            return s->base_lr;
        if (step <= s->warmup)
            return s->base_lr * (double)step / (double)s->warmup;
        return s->base_lr * sqrt((double)s->warmup / (double)step);
    case SCHED_PLATEAU:
        return s->lr;
    case SCHED_KINDS:
        break;
    }
    BUG("unknown schedule %d", (int)s->kind);
}

bool optim_sched_observe(Sched *s, long step, double metric)
{
    if (s->kind != SCHED_PLATEAU)
        return false;
    bool better = !s->have_best || (s->higher_better ? metric > s->best + s->threshold
                                                     : metric < s->best - s->threshold);
    if (better) {
        s->best = metric;
        s->have_best = true;
        s->since = step;
        return false;
    }
    if (step - s->since < s->patience)
        return false;
    s->since = step;
    double next = fmax(s->lr * s->factor, s->min_lr);
    bool reduced = next < s->lr;
    s->lr = next;
    return reduced;
}

const char *const optim_sched_names[SCHED_KINDS] = {"constant", "warmup-decay", "plateau", "warmup-cosine"};

const char *optim_sched_name(SchedKind k)
{
    CHECK((int)k >= 0 && (int)k < SCHED_KINDS);
    return optim_sched_names[k];
}

int optim_sched_parse(const char *name, SchedKind *out)
{
    for (int i = 0; i < SCHED_KINDS; i++)
        if (strcmp(name, optim_sched_names[i]) == 0) {
            *out = (SchedKind)i;
            return 0;
        }
    return -1;
}
