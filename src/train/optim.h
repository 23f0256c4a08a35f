/* Optimisation: Adam, global-norm gradient clipping and learning-rate schedules.
   All of them work on one flat array of parameters and gradients (Model.params,
   Model.grads, layout.total reals). */
#ifndef S2S_TRAIN_OPTIM_H
#define S2S_TRAIN_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

#include "nn/real.h"

/* Adam as torch.optim.Adam (amsgrad off). For step t = 1, 2, ...:
     g   = grad + weight_decay * param          (L2 form, as torch.optim.Adam's
                                                 weight_decay; not decoupled AdamW)
     m   = b1 m + (1-b1) g
     v   = b2 v + (1-b2) g^2
     param -= lr / (1-b1^t) * m / (sqrt(v) / sqrt(1-b2^t) + eps)
   The bias corrections are computed in double. Moments m and v share one allocation. */
typedef struct Adam {
    size_t n;
    double beta1, beta2, eps, weight_decay;
    long step; /* steps taken so far */
    real *m;   /* (n) first moment */
    real *v;   /* (n) second moment, inside the same allocation as m */
    /* Optional exponential moving average of the weights (--ema), updated in the same
       pass after each step: ema = d·ema + (1 − d)·params with d = min(ema_decay,
       (1 + step) / (10 + step)), so that the first steps' weights do not linger. NULL:
       none. The caller owns the array and starts it equal to the weights. */
    real *ema;
    double ema_decay;
} Adam;

#define OPTIM_BETA1 0.9
#define OPTIM_BETA2 0.999
#define OPTIM_EPS 1e-8

/* Moments zeroed, step 0. */
void optim_adam_init(Adam *a, size_t n, double beta1, double beta2, double eps,
                     double weight_decay);
void optim_adam_free(Adam *a);
/* One update of params (n) from grads (n) with learning rate lr; grads are not changed. */
void optim_adam_step(Adam *a, real *params, const real *grads, double lr);
/* The same update from grads · gscale (in float, as a clipped gradient would be stored):
   clipping folded into Adam's one pass instead of a pass of its own. */
void optim_adam_step_scaled(Adam *a, real *params, const real *grads, real gscale, double lr);

/* As torch.nn.utils.clip_grad_norm_: the L2 norm of all n gradients (accumulated in
   double); when it exceeds max_norm the gradients are multiplied by
   max_norm / (norm + 1e-6). Returns the norm before clipping. max_norm <= 0 only
   measures. */
double optim_clip_grad_norm(real *grads, size_t n, double max_norm);
/* Its parts: the norm (in double, not depending on the number of threads), and the
   coefficient clipping multiplies by (1 when norm <= max_norm or max_norm <= 0). */
double optim_grad_norm(const real *grads, size_t n);
real optim_clip_coef(double norm, double max_norm);

/* Learning-rate schedules. Steps are counted from 1 (the step about to be taken).
   - SCHED_CONSTANT:      lr(s) = base.
   - SCHED_WARMUP_DECAY:  lr(s) = base * min(s / W, sqrt(W / s)) with W = warmup >= 1:
                          linear rise to base at step W, then inverse-square-root
                          decay (base at s = W, base/2 at s = 4W). warmup 0: constant.
   - SCHED_PLATEAU:       lr = base until a validation (optim_sched_observe) finds that
                          the metric has not improved for `patience` steps (an
                          improvement beats the best by more than `threshold`); then
                          lr = max(lr * factor, min_lr) and the count restarts from that
                          step. Patience is counted in training steps, not validations,
                          so that it means the same amount of training whether
                          validations come every few steps (short epochs) or every
                          thousand.
   - SCHED_WARMUP_COSINE: lr(s) = base * w * (1 + cos(pi * f)) / 2 with f the share of
                          the run's budget done before step s (its --steps, --time or
                          --epochs, whichever is furthest along) and the warmup
                          w = min(1, max(s / W, f / warmup_share)): a linear rise that
                          ends at step W or at warmup_share of the budget, whichever
                          comes first (w = min(s / W, 1) when warmup_share is 0), then a
                          half cosine to 0 at the end of the budget. Without a budget
                          (f < 0): base after W steps. */
typedef enum SchedKind { SCHED_CONSTANT = 0, SCHED_WARMUP_DECAY, SCHED_PLATEAU, SCHED_WARMUP_COSINE,
                         SCHED_KINDS } SchedKind;

typedef struct Sched {
    SchedKind kind;
    double base_lr;
    long warmup;       /* W, warmup-decay and warmup-cosine */
    double warmup_share; /* warmup-cosine: the warmup also ends at this share of the budget (0: W alone) */
    double factor;     /* plateau: multiplier on each reduction (0.5) */
    double min_lr;     /* plateau: floor */
    long patience;     /* plateau: steps without improvement before reducing (1) */
    double threshold;  /* plateau: the least change of the metric that counts (0) */
    bool higher_better;/* plateau: metric direction (true for BLEU, false for loss) */
    /* plateau state */
    double lr;         /* current rate */
    double best;
    bool have_best;
    long since;        /* step of the last improvement or reduction (0 at the start) */
} Sched;

/* A schedule of the given kind with base rate base_lr and the defaults above
   (warmup 0, factor 0.5, min_lr 0, patience 1, threshold 0, higher_better true). */
Sched optim_sched_make(SchedKind kind, double base_lr);
/* The rate for step s (>= 1). */
double optim_sched_lr(const Sched *s, long step);
/* The same with the share of the budget done, for SCHED_WARMUP_COSINE (others ignore it);
   progress < 0: no budget. */
double optim_sched_lr_at(const Sched *s, long step, double progress);
/* Plateau: records the metric of a validation after `step` steps; returns true when
   it reduced the rate.
   Other kinds ignore it and return false. A metric improves when it is better than
   the best so far by more than the threshold (the first one always does). */
bool optim_sched_observe(Sched *s, long step, double metric);
/* "constant", "warmup-decay", "plateau", "warmup-cosine"; optim_sched_parse returns -1
   for other names. */
extern const char *const optim_sched_names[SCHED_KINDS];
const char *optim_sched_name(SchedKind k);
int optim_sched_parse(const char *name, SchedKind *out);

#endif
