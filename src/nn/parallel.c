#include "nn/parallel.h"

#include <pthread.h>

#include "base/err.h"

#define MAX_THREADS 64

static struct {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int threads;  /* used by nn_parallel_for */
    int workers;  /* started so far */
    unsigned long generation;
    /* the job of the current generation */
    ParFn fn;
    void *ctx;
    size_t n;
    int parts;
    int pending;
} pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .start = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .threads = 1,
};

static void run_part(ParFn fn, void *ctx, size_t n, int parts, int k)
{
    size_t lo = n * (size_t)k / (size_t)parts, hi = n * (size_t)(k + 1) / (size_t)parts;
    if (lo < hi)
        fn(ctx, lo, hi);
}

static void *worker(void *arg)
{
    int id = (int)(size_t)arg; /* 1 .. MAX_THREADS-1; part id of this worker */
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.generation == seen)
            pthread_cond_wait(&pool.start, &pool.mu);
        seen = pool.generation;
        if (id >= pool.parts)
            continue;
        ParFn fn = pool.fn;
        void *ctx = pool.ctx;
        size_t n = pool.n;
        int parts = pool.parts;
        pthread_mutex_unlock(&pool.mu);
        run_part(fn, ctx, n, parts, id);
        pthread_mutex_lock(&pool.mu);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.done);
    }
    return NULL;
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
    if (parts <= 1) {
        pthread_mutex_unlock(&pool.mu);
        fn(ctx, 0, n);
        return;
    }
    CHECK(pool.pending == 0); /* not reentrant: one caller at a time */
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.parts = parts;
    pool.pending = parts - 1;
    pool.generation++;
    pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.mu);

    run_part(fn, ctx, n, parts, 0);

    pthread_mutex_lock(&pool.mu);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
}
