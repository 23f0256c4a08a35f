#include "train/step.h"

#include <math.h>
#include <string.h>

#include "base/clock.h"
#include "nn/bf16.h"
#include "train/dist.h"

/* The pass over one batch; the weights stay fixed through it (nn/bf16.h keeps their
   bf16 forms when the products are in bf16). */
static double forward_backward(Model *m, Work *w, const Batch *b, Rng *drop)
{
    if (nn_precision() == PREC_BF16)
        nn_bf16_fixed_begin(m->params, m->layout.total);
    double loss = model_forward_backward(m, w, b, drop);
    nn_bf16_fixed_end();
    return loss;
}

/* The global norm of m->grads, then Adam with the clipping folded in, unless the loss
   or the norm is not finite. */
static void apply(StepResult *r, Model *m, Adam *adam, const StepOpts *o)
{
    size_t n = m->layout.total;
    r->grad_norm = optim_grad_norm(m->grads, n);
    if (o->poison)
        r->loss = NAN;
    r->applied = isfinite(r->loss) && isfinite(r->grad_norm);
    if (r->applied)
        optim_adam_step_scaled(adam, m->params, m->grads, optim_clip_coef(r->grad_norm, o->clip), o->lr);
}

StepResult train_step(Model *m, Work *w, Adam *adam, const Batch *b, const StepOpts *o)
{
    StepResult r = {.stop = 0};
    memset(m->grads, 0, m->layout.total * sizeof(real));
    r.loss = forward_backward(m, w, b, o->drop);
    r.nll = work_nll(w);
    apply(&r, m, adam, o);
    return r;
}

StepResult train_step_dist(Model *m, Work *w, Adam *adam, const Batch *b, long ntok, const StepOpts *o)
{
    if (dist_size() == 1) {
        StepResult r = train_step(m, w, adam, b, o);
        r.stop = o->stop;
        return r;
    }
    size_t n = m->layout.total;
    Rng mine;
    if (o->drop)
        rng_seed(&mine, rng_u64(o->drop) ^ ((uint64_t)(dist_rank() + 1) * 0x9e3779b97f4a7c15ULL));
    memset(m->grads, 0, n * sizeof(real));
    /* [loss, nll, stop bits]: one small allreduce besides the gradients' */
    double s[4] = {0, 0, o->stop & STEP_STOP_SIGNAL, o->stop & STEP_STOP_TIME};
    if (b && b->B > 0) {
        s[0] = forward_backward(m, w, b, o->drop ? &mine : NULL);
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
    apply(&r, m, adam, o);
    return r;
}
