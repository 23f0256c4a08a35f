#include "train/step.h"

#include <math.h>
#include <string.h>

#include "base/clock.h"
#include "train/dist.h"

StepResult train_step(Model *m, Work *w, Adam *adam, const Batch *b, Rng *drop, double clip,
                      double lr, bool poison)
{
    size_t n = m->layout.total;
    StepResult r = {.stop = 0};
    memset(m->grads, 0, n * sizeof(real));
    r.loss = model_forward_backward(m, w, b, drop);
    r.nll = work_nll(w);
    r.grad_norm = optim_grad_norm(m->grads, n);
    if (poison)
        r.loss = NAN;
    r.applied = isfinite(r.loss) && isfinite(r.grad_norm);
    if (r.applied)
        optim_adam_step_scaled(adam, m->params, m->grads, optim_clip_coef(r.grad_norm, clip), lr);
    return r;
}

StepResult train_step_dist(Model *m, Work *w, Adam *adam, const Batch *b, long ntok, Rng *drop,
                           double clip, double lr, bool poison, unsigned stop)
{
    if (dist_size() == 1) {
        StepResult r = train_step(m, w, adam, b, drop, clip, lr, poison);
        r.stop = stop;
        return r;
    }
    size_t n = m->layout.total;
    Rng mine;
    if (drop)
        rng_seed(&mine, rng_u64(drop) ^ ((uint64_t)(dist_rank() + 1) * 0x9e3779b97f4a7c15ULL));
    memset(m->grads, 0, n * sizeof(real));
    /* [loss, nll, stop bits]: one small allreduce besides the gradients' */
    double s[4] = {0, 0, stop & STEP_STOP_SIGNAL, stop & STEP_STOP_TIME};
    if (b && b->B > 0) {
        s[0] = model_forward_backward(m, w, b, drop ? &mine : NULL);
        s[1] = work_nll(w);
        /* the gradient of this part's loss / b->ntok, made that of loss / ntok */
        real k = (real)((double)b->ntok / (double)ntok);
        for (size_t i = 0; i < n; i++)
            m->grads[i] *= k;
    }
    double t0 = clock_now();
    dist_sum_real(m->grads, n);
    dist_sum_f64(s, 4);
    StepResult r = {.loss = s[0], .nll = s[1], .comm_s = clock_now() - t0};
    r.stop = (s[2] > 0 ? STEP_STOP_SIGNAL : 0u) | (s[3] > 0 ? STEP_STOP_TIME : 0u);
    r.grad_norm = optim_grad_norm(m->grads, n);
    if (poison)
        r.loss = NAN;
    r.applied = isfinite(r.loss) && isfinite(r.grad_norm);
    if (r.applied)
        optim_adam_step_scaled(adam, m->params, m->grads, optim_clip_coef(r.grad_norm, clip), lr);
    return r;
}
