#include "train/step.h"

#include <math.h>
#include <string.h>

StepResult train_step(Model *m, Work *w, Adam *adam, const Batch *b, Rng *drop, double clip,
                      double lr, bool poison)
{
    size_t n = m->layout.total;
    StepResult r;
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
