/* Fault injection for the reliability tests: S2S_FAULT_NONFINITE="3,6,7" makes the
   loss of those training steps (1-based) NaN, as a numerical blow-up would. Without
   the variable nothing changes. */
#ifndef S2S_TRAIN_FAULT_H
#define S2S_TRAIN_FAULT_H

#include <stdbool.h>

/* Whether step (1-based) is to get a non-finite loss. */
bool fault_nonfinite(long step);

#endif
