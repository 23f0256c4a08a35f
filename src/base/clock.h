/* The monotonic clock, in seconds (for durations: progress, rates, budgets). */
#ifndef S2S_BASE_CLOCK_H
#define S2S_BASE_CLOCK_H

double clock_now(void);

#endif
