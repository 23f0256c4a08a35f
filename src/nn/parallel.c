#include "nn/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "base/err.h"

#define MAX_THREADS 64

static struct {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int threads;  /* used by nn_parallel_for */
    int workers;  /* started so far */
    /* the job of the current generation: written by the caller before the generation's
       release, read by every worker after it; not rewritten before every worker has
       counted itself off `pending` */
    atomic_ulong generation;
    ParFn fn;
    void *ctx;
    size_t n;
    int parts;
    atomic_int pending;     /* workers yet to finish (or skip) this generation's job */
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

/* The generation at each worker's start (written under mu before it starts): its first
   job is the next one. */
static unsigned long born[MAX_THREADS];

static void *worker(void *arg)
{
    int id = (int)(size_t)arg; /* 1 .. MAX_THREADS-1; part id of this worker */
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
        if (id < pool.parts)
            run_part(pool.fn, pool.ctx, pool.n, pool.parts, id);
        if (atomic_fetch_sub(&pool.pending, 1) == 1 && atomic_load(&pool.main_waits)) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
    return NULL;
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
    CHECK(atomic_load(&pool.pending) == 0);
    pool.busy = true;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.parts = parts;
    atomic_store(&pool.pending, pool.workers); /* every worker counts itself off, working or not */
    atomic_fetch_add(&pool.generation, 1);
    if (pool.sleepers > 0)
        pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.mu);

    run_part(fn, ctx, n, parts, 0);

    if (atomic_load(&pool.pending) > 0 && !poll_until(NULL, 0, &pool.pending)) {
        pthread_mutex_lock(&pool.mu);
        atomic_store(&pool.main_waits, true);
        while (atomic_load(&pool.pending) > 0)
            pthread_cond_wait(&pool.done, &pool.mu);
        atomic_store(&pool.main_waits, false);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_lock(&pool.mu);
    pool.busy = false;
    pthread_mutex_unlock(&pool.mu);
}
