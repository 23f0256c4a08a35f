#include "nn/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "base/err.h"

#define MAX_THREADS 64

/* The parts of a job are claimed, one at a time, by whichever thread comes first: the
   caller and the workers alike. A worker the scheduler has put aside (another process
   wants the core) then holds nothing up: the caller, or a free worker, takes the parts
   it has not started, and the caller waits only for parts that are running. The claim
   word packs the job's generation, its number of parts and the next part:
   generation << 16 | parts << 8 | next. A thread that claims part k with a
   compare-and-swap on the word it read knows the job is still the one whose function it
   read (a job's fields are rewritten only after all its parts are done, which needs
   part k). */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int threads;  /* used by nn_parallel_for */
    int workers;  /* started so far */
    /* the job: written by the caller before the generation's release, read by every
       thread after it; not rewritten before all its parts are done */
    atomic_ulong generation;
    atomic_ullong claim;
    _Atomic(ParFn) fn;
    _Atomic(void *) ctx;
    atomic_size_t n;
    atomic_int left;        /* parts not yet done */
    int sleepers;           /* workers waiting on `start` (under mu) */
    bool busy;              /* a caller's job is running (under mu): another caller,
                               from another thread, runs its job alone */
    atomic_bool main_waits; /* the caller waits on `done` */
} pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .start = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .threads = 1,
};

/* Tests: a worker that wakes for a job first sleeps this long (nanoseconds), as one
   the scheduler has put aside would. */
static atomic_long worker_delay_ns;

/* nn_parallel_spin: how long a thread polls before it sleeps, in nanoseconds (0: at once) */
static atomic_long spin_ns;

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Polls, for at most the spin time, until *gen differs from seen (a worker waiting for
   its next job; count NULL) or *count is 0 (the caller waiting for the workers; gen
   NULL); true when that happened, false at once when polling is off. */
static bool poll_until(const atomic_ulong *gen, unsigned long seen, const atomic_int *count)
{
    long limit = atomic_load_explicit(&spin_ns, memory_order_relaxed);
    if (limit <= 0)
        return false;
    long end = now_ns() + limit;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (gen ? atomic_load_explicit(gen, memory_order_acquire) != seen
                    : atomic_load_explicit(count, memory_order_acquire) == 0)
                return true;
            relax();
        }
        if (now_ns() > end)
            return false;
    }
}

static void run_part(ParFn fn, void *ctx, size_t n, int parts, int k)
{
    size_t lo = n * (size_t)k / (size_t)parts, hi = n * (size_t)(k + 1) / (size_t)parts;
    if (lo < hi)
        fn(ctx, lo, hi);
}

/* Claims and runs parts of the current job until none is left to claim; signals the
   caller when it finished the last one. */
static void run_parts(void)
{
    for (;;) {
        unsigned long long w = atomic_load_explicit(&pool.claim, memory_order_acquire);
        int parts = (int)((w >> 8) & 0xff), k = (int)(w & 0xff);
        if (k >= parts)
            return;
        ParFn fn = atomic_load_explicit(&pool.fn, memory_order_relaxed);
        void *ctx = atomic_load_explicit(&pool.ctx, memory_order_relaxed);
        size_t n = atomic_load_explicit(&pool.n, memory_order_relaxed);
        if (!atomic_compare_exchange_weak_explicit(&pool.claim, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        run_part(fn, ctx, n, parts, k);
        if (atomic_fetch_sub_explicit(&pool.left, 1, memory_order_acq_rel) == 1 &&
            atomic_load(&pool.main_waits)) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
}

/* The generation at each worker's start (written under mu before it starts): its first
   job is the next one. */
static unsigned long born[MAX_THREADS];

static void *worker(void *arg)
{
    int id = (int)(size_t)arg; /* 1 .. MAX_THREADS-1 */
    unsigned long seen = born[id];
    for (;;) {
        if (!poll_until(&pool.generation, seen, NULL)) {
            pthread_mutex_lock(&pool.mu);
            while (atomic_load(&pool.generation) == seen) {
                pool.sleepers++;
                pthread_cond_wait(&pool.start, &pool.mu);
                pool.sleepers--;
            }
            pthread_mutex_unlock(&pool.mu);
        }
        seen = atomic_load(&pool.generation);
        long delay = atomic_load_explicit(&worker_delay_ns, memory_order_relaxed);
        if (delay > 0)
            nanosleep(&(struct timespec){.tv_sec = delay / 1000000000L, .tv_nsec = delay % 1000000000L}, NULL);
        run_parts();
    }
    return NULL;
}

/* nn_parallel_alone: this thread runs its loops by itself */
static _Thread_local bool alone;

void nn_parallel_alone(bool on)
{
    alone = on;
}

void nn_parallel_test_delay_workers(long ns)
{
    atomic_store(&worker_delay_ns, ns > 0 ? ns : 0);
}

void nn_parallel_spin(long ns)
{
    atomic_store(&spin_ns, ns > 0 ? ns : 0);
}

void nn_parallel_set_threads(int n)
{
    if (n < 1)
        n = 1;
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    pthread_mutex_lock(&pool.mu);
    while (pool.workers < n - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        born[pool.workers + 1] = atomic_load(&pool.generation);
        int rc = pthread_create(&t, &attr, worker, (void *)(size_t)(pool.workers + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* fewer threads; still correct */
        pool.workers++;
    }
    pool.threads = pool.workers + 1 < n ? pool.workers + 1 : n;
    pthread_mutex_unlock(&pool.mu);
}

int nn_parallel_threads(void)
{
    pthread_mutex_lock(&pool.mu);
    int n = pool.threads;
    pthread_mutex_unlock(&pool.mu);
    return n;
}

void nn_parallel_for(size_t n, size_t grain, ParFn fn, void *ctx)
{
    if (n == 0)
        return;
    if (alone) {
        fn(ctx, 0, n);
        return;
    }
    if (grain < 1)
        grain = 1;
    size_t most = (n + grain - 1) / grain;
    pthread_mutex_lock(&pool.mu);
    int parts = pool.threads < (int)(most < MAX_THREADS ? most : MAX_THREADS)
                    ? pool.threads
                    : (int)(most < MAX_THREADS ? most : MAX_THREADS);
    if (parts <= 1 || pool.busy) {
        /* one part, or the pool is another thread's (two translations at once, or a
           loop inside a job): the same result on this thread alone */
        pthread_mutex_unlock(&pool.mu);
        fn(ctx, 0, n);
        return;
    }
    CHECK(atomic_load(&pool.left) == 0);
    pool.busy = true;
    atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
    atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&pool.n, n, memory_order_relaxed);
    atomic_store(&pool.left, parts);
    unsigned long gen = atomic_load(&pool.generation) + 1;
    atomic_store_explicit(&pool.claim, (unsigned long long)gen << 16 | (unsigned long long)parts << 8,
                          memory_order_release);
    atomic_store_explicit(&pool.generation, gen, memory_order_release);
    if (pool.sleepers > 0)
        pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.mu);

    run_parts();

    if (atomic_load(&pool.left) > 0 && !poll_until(NULL, 0, &pool.left)) {
        pthread_mutex_lock(&pool.mu);
        atomic_store(&pool.main_waits, true);
        while (atomic_load(&pool.left) > 0)
            pthread_cond_wait(&pool.done, &pool.mu);
        atomic_store(&pool.main_waits, false);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_lock(&pool.mu);
    pool.busy = false;
    pthread_mutex_unlock(&pool.mu);
}
