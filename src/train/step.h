/* One training step, the one `s2s train` takes and `make bench` times. */
#ifndef S2S_TRAIN_STEP_H
#define S2S_TRAIN_STEP_H

#include <stdbool.h>

#include "base/rng.h"
#include "data/batch.h"
#include "model/seq2seq.h"
#include "train/optim.h"

typedef struct StepResult {
    double loss;      /* label-smoothed loss summed over the batch's target tokens */
    double nll;       /* plain negative log-likelihood summed likewise */
    double grad_norm; /* global gradient norm before clipping */
    bool applied;     /* false: loss or gradient not finite, nothing was updated */
} StepResult;

/* Zeroes m->grads, runs model_forward_backward (dropout from drop; NULL: no dropout),
   which gives the gradient of the mean loss per target token, clips the global
   gradient norm to clip (0: off; the clipping is folded into Adam's pass, so m->grads
   keep the unclipped values) and applies Adam at rate lr, unless the loss or the norm
   is not finite: then the weights and the moments are left as they were. poison makes
   the loss NaN (fault injection for the tests, train/fault.h). Allocates nothing. */
StepResult train_step(Model *m, Work *w, Adam *adam, const Batch *b, Rng *drop, double clip,
                      double lr, bool poison);

#endif
