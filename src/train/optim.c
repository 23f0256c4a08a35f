#include "train/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void optim_adam_init(Adam *a, size_t n, double beta1, double beta2, double eps,
                     double weight_decay)
{
    a->n = n;
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->eps = eps;
    a->weight_decay = weight_decay;
    a->step = 0;
    a->m = xcalloc(2 * (n ? n : 1), sizeof(real));
    a->v = a->m + n;
}

void optim_adam_free(Adam *a)
{
    free(a->m);
    a->m = a->v = NULL;
}

void optim_adam_step(Adam *a, real *restrict params, const real *restrict grads, double lr)
{
    a->step++;
    const double bc1 = 1.0 - pow(a->beta1, (double)a->step);
    const double bc2 = 1.0 - pow(a->beta2, (double)a->step);
    const real b1 = (real)a->beta1, b2 = (real)a->beta2;
    const real c1 = (real)(1.0 - a->beta1), c2 = (real)(1.0 - a->beta2);
    const real step_size = (real)(lr / bc1);
    const real bc2_sqrt = (real)sqrt(bc2);
    const real eps = (real)a->eps, wd = (real)a->weight_decay;
    real *restrict m = a->m, *restrict v = a->v;
    const size_t n = a->n;
    for (size_t i = 0; i < n; i++) {
        real g = grads[i];
        if (wd != 0)
            g += wd * params[i];
        m[i] = m[i] * b1 + c1 * g;
        v[i] = v[i] * b2 + c2 * g * g;
        real denom = R_SQRT(v[i]) / bc2_sqrt + eps;
        params[i] -= step_size * m[i] / denom;
    }
}

double optim_clip_grad_norm(real *grads, size_t n, double max_norm)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (double)grads[i] * grads[i];
    double norm = sqrt(ss);
    if (max_norm > 0 && norm > max_norm) {
        real coef = (real)(max_norm / (norm + 1e-6));
        for (size_t i = 0; i < n; i++)
            grads[i] *= coef;
    }
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

double optim_sched_lr(const Sched *s, long step)
{
    CHECK(step >= 1);
    switch (s->kind) {
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
    }
    BUG("unknown schedule %d", (int)s->kind);
}

bool optim_sched_observe(Sched *s, double metric)
{
    if (s->kind != SCHED_PLATEAU)
        return false;
    bool better = !s->have_best || (s->higher_better ? metric > s->best : metric < s->best);
    if (better) {
        s->best = metric;
        s->have_best = true;
        s->bad = 0;
        return false;
    }
    if (++s->bad < s->patience)
        return false;
    s->bad = 0;
    double next = fmax(s->lr * s->factor, s->min_lr);
    bool reduced = next < s->lr;
    s->lr = next;
    return reduced;
}

static const char *const sched_names[] = {"constant", "warmup-decay", "plateau"};

const char *optim_sched_name(SchedKind k)
{
    CHECK((int)k >= 0 && (int)k < 3);
    return sched_names[k];
}

int optim_sched_parse(const char *name, SchedKind *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(name, sched_names[i]) == 0) {
            *out = (SchedKind)i;
            return 0;
        }
    return -1;
}
