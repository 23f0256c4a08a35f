/* One training step, the one `s2s train` takes and `make bench` times. */
#ifndef S2S_TRAIN_STEP_H
#define S2S_TRAIN_STEP_H

#include <stdbool.h>

#include "base/rng.h"
#include "data/batch.h"
#include "model/model.h"
#include "train/optim.h"

typedef struct StepResult {
    double loss;      /* label-smoothed loss summed over the batch's target tokens */
    double nll;       /* plain negative log-likelihood summed likewise */
    double grad_norm; /* global gradient norm before clipping */
    bool applied;     /* false: loss or gradient not finite, nothing was updated */
    unsigned stop;    /* train_step_dist: the STEP_STOP_ bits any process gave */
    double comm_s;    /* train_step_dist: seconds in the allreduces (waiting included) */
} StepResult;

/* What a step does besides the batch. */
typedef struct StepOpts {
    Rng *drop;     /* dropout's generator; NULL: no dropout */
    double clip;   /* the global gradient norm's limit; 0: off */
    double lr;     /* Adam's rate */
    bool poison;   /* make the loss NaN (fault injection for the tests, train/fault.h) */
    unsigned stop; /* train_step_dist: this process's STEP_STOP_ bits */
} StepOpts;

/* Zeroes m->grads, runs model_forward_backward (dropout from o->drop), which gives the
   gradient of the mean loss per target token, clips the global gradient norm to
   o->clip (the clipping is folded into Adam's pass, so m->grads keep the unclipped
   values) and applies Adam at rate o->lr, unless the loss or the norm is not finite:
   then the weights and the moments are left as they were. Allocates nothing. */
StepResult train_step(Model *m, Work *w, Adam *adam, const Batch *b, const StepOpts *o);

/* One process's part of a step of a run over dist_size() processes (train/dist.h),
   called by every process with the same ntok and options but stop: b holds
   this process's rows of the global batch (NULL when it has none) and ntok is the
   global batch's target tokens. The gradient of this process's rows is normalised by
   ntok and summed over the processes (one allreduce of m->grads), so every process
   holds the gradient of the whole batch's mean loss and applies the same clipping and
   Adam update; loss and nll are the sums over the whole batch. Dropout draws one key
   from o->drop per step, mixed with the rank. The result's stop has each of the
   o->stop bits that any process gave, so that all stop together. With one process it
   is train_step. */
enum { STEP_STOP_SIGNAL = 1, STEP_STOP_TIME = 2 };
StepResult train_step_dist(Model *m, Work *w, Adam *adam, const Batch *b, long ntok, const StepOpts *o);

#endif
