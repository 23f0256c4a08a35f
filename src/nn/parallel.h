/*
 * A small pool of worker threads for the loops outside the matrix products (the
 * optimiser, the softmax rows) and, in training, the products themselves
 * (nn_products_on_pool, nn/linalg.h): nn_parallel_for splits [0, n) into as many
 * contiguous ranges as there are threads (at most one per `grain` items) and runs fn on
 * each. The ranges go to whichever thread claims them first, the calling one included:
 * on a busy machine a worker the scheduler has put aside holds nothing up, since the
 * caller takes the ranges it has not started. Workers sleep on a condition variable
 * between calls, so they never compete with OpenBLAS's threads for the cores, unless
 * nn_parallel_spin lets them poll first (when no other threads want the cores).
 *
 * Results must not depend on the split: fn writes disjoint parts of its output, and
 * reductions go through fixed-size blocks (nn_parallel_blocks) summed in order.
 *
 * The pool runs one job at a time. A call made while it runs another thread's job (two
 * translations at once through the library, include/s2s.h) or from inside a job runs
 * the whole range on the calling thread: the same result, without the workers.
 */
#ifndef S2S_NN_PARALLEL_H
#define S2S_NN_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*ParFn)(void *ctx, size_t lo, size_t hi);

/* Threads used from now on (>= 1; the pool grows on demand, never shrinks). */
void nn_parallel_set_threads(int n);
int nn_parallel_threads(void);

/* From now on, a thread that waits (a worker for its next job, the caller for the
   workers) polls for up to ns nanoseconds before it sleeps; 0 (the default): it sleeps at
   once. Polling pays only where nothing else (BLAS's own threads) needs the cores. */
void nn_parallel_spin(long ns);

/* fn(ctx, lo, hi) over a partition of [0, n); returns when every range is done. */
void nn_parallel_for(size_t n, size_t grain, ParFn fn, void *ctx);

/* From now on the calling thread runs its loops by itself, without the pool (on), or
   as before (off): two decoding streams each on one thread (decode/beam.c). */
void nn_parallel_alone(bool on);

/* Tests: from now on a worker woken for a job sleeps ns nanoseconds before it claims a
   range, as one the scheduler has put aside would (0: not at all, the default). */
void nn_parallel_test_delay_workers(long ns);

/* Block size of reductions: a sum over [0, n) is the ordered sum of the partial sums of
   blocks [k·NN_PAR_BLOCK, (k+1)·NN_PAR_BLOCK), whatever the number of threads. */
#define NN_PAR_BLOCK ((size_t)1 << 16)

#endif
