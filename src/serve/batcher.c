/* Batching across requests (serve/batcher.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "serve/batcher.h"

struct ServeBatcher {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    ServeJob *head, *tail;
    int expected; /* connections that may still send a request (serve_batcher_expect) */
    bool stop, closed;
    int max_texts;
    double wait_s;
    ServeBatchStats stats;
};

static bool same_opts(const s2s_translator_options *a, const s2s_translator_options *b)
{
    return a->beam == b->beam && a->nbest == b->nbest && a->length_penalty == b->length_penalty &&
           a->max_len == b->max_len && a->batch == b->batch && a->split == b->split &&
           a->copy_numbers == b->copy_numbers && a->replace_unk == b->replace_unk &&
           a->constraints == b->constraints && a->attention == b->attention;
}

static bool joins(const ServeJob *first, const ServeJob *j)
{
    return j->tr == first->tr && same_opts(&j->opts, &first->opts);
}

/* Texts of the queued jobs that would join first's batch. */
static int company(const ServeBatcher *b, const ServeJob *first)
{
    int n = 0;
    for (const ServeJob *j = b->head; j; j = j->next)
        if (joins(first, j))
            n += j->n;
    return n;
}

static void wait_until(ServeBatcher *b, double deadline)
{
    double left = deadline - clock_now();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)(left * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&b->cv, &b->mu, &ts);
}

/* Moves the batch of the first queued job out of the queue into a list. */
static ServeJob *take_batch(ServeBatcher *b)
{
    ServeJob *first = b->head, *batch = NULL, **end = &batch, **p = &b->head;
    b->tail = NULL;
    int texts = 0;
    while (*p) {
        ServeJob *j = *p;
        if (j == first || (joins(first, j) && texts + j->n <= b->max_texts)) {
            *p = j->next;
            j->next = NULL;
            *end = j;
            end = &j->next;
            texts += j->n;
        } else {
            b->tail = j;
            p = &j->next;
        }
    }
    return batch;
}

/* One call's result, shared by the jobs of its batch. */
typedef struct ServeShared {
    s2s_result *r;
    atomic_int refs;
} ServeShared;

void serve_job_release(ServeJob *j)
{
    if (j->shared && atomic_fetch_sub(&j->shared->refs, 1) == 1) {
        s2s_result_free(j->shared->r);
        free(j->shared);
    }
    j->shared = NULL;
    j->res = NULL;
}

/* Translates the texts of jobs (the first `jobs` of the list from batch; n texts in
   all) in one call: 0 with each job's result set, or -1 with e set. */
static int run(ServeJob *batch, int jobs, int n, Err *e)
{
    const char **lines = XNEW(const char *, n ? n : 1);
    s2s_constraints *cons = NULL;
    ServeJob *j = batch;
    for (int k = 0; k < jobs && !cons; k++, j = j->next)
        if (j->cons)
            cons = XCNEW(s2s_constraints, n ? n : 1);
    int at = 0;
    j = batch;
    for (int k = 0; k < jobs; k++, j = j->next)
        for (int i = 0; i < j->n; i++, at++) {
            lines[at] = j->lines[i];
            if (cons && j->cons)
                cons[at] = j->cons[i];
        }
    s2s_error err;
    s2s_result *r = s2s_translate_constrained(batch->tr, lines, cons, n, &batch->opts, &err);
    free(lines);
    free(cons);
    if (!r)
        return err_set(e, "%s", err.message);
    ServeShared *sh = XNEW(ServeShared, 1);
    sh->r = r;
    atomic_init(&sh->refs, jobs);
    at = 0;
    j = batch;
    for (int k = 0; k < jobs; k++, j = j->next) {
        j->shared = sh;
        j->res = r;
        j->at = at;
        j->batch_texts = n;
        at += j->n;
    }
    return 0;
}

static void decode_batch(ServeBatcher *b, ServeJob *batch)
{
    const double t0 = clock_now();
    int n = 0, jobs = 0;
    for (ServeJob *j = batch; j; j = j->next)
        n += j->n, jobs++;
    Err e;
    if (run(batch, jobs, n, &e) == 0) {
        for (ServeJob *j = batch; j; j = j->next)
            j->rc = 0;
    } else if (jobs == 1) {
        batch->rc = -1;
        batch->err = e;
    } else {
        for (ServeJob *j = batch; j; j = j->next)
            j->rc = run(j, 1, j->n, &j->err);
    }
    pthread_mutex_lock(&b->mu);
    b->stats.batches++;
    b->stats.jobs += jobs;
    b->stats.texts += n;
    b->stats.busy += clock_now() - t0;
    pthread_mutex_unlock(&b->mu);
    for (ServeJob *j = batch, *next; j; j = next) {
        next = j->next;
        j->done(j, j->arg);
    }
}

static void *decode_thread(void *arg)
{
    ServeBatcher *b = arg;
    pthread_mutex_lock(&b->mu);
    double free_at = clock_now();
    for (;;) {
        while (!b->head && !b->stop)
            pthread_cond_wait(&b->cv, &b->mu);
        if (!b->head)
            break;
        /* at most wait_s from when the first job was queued or the thread was freed */
        double deadline = (b->head->queued > free_at ? b->head->queued : free_at) + b->wait_s;
        while (!b->stop && b->expected > 0 && company(b, b->head) < b->max_texts && clock_now() < deadline)
            wait_until(b, deadline);
        ServeJob *batch = take_batch(b);
        pthread_mutex_unlock(&b->mu);
        decode_batch(b, batch);
        pthread_mutex_lock(&b->mu);
        free_at = clock_now();
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

ServeBatcher *serve_batcher_start(int max_texts, double wait_ms)
{
    ServeBatcher *b = XCNEW(ServeBatcher, 1);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->max_texts = max_texts;
    b->wait_s = wait_ms / 1000;
    if (pthread_create(&b->thread, NULL, decode_thread, b) != 0)
        die("cannot start the decoding thread");
    return b;
}

void serve_batcher_submit(ServeBatcher *b, ServeJob *j)
{
    j->next = NULL;
    j->queued = clock_now();
    pthread_mutex_lock(&b->mu);
    if (b->closed) {
        pthread_mutex_unlock(&b->mu);
        j->rc = err_set(&j->err, "the server is stopping");
        j->done(j, j->arg);
        return;
    }
    if (b->tail)
        b->tail->next = j;
    else
        b->head = j;
    b->tail = j;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void serve_batcher_expect(ServeBatcher *b, int delta)
{
    pthread_mutex_lock(&b->mu);
    b->expected += delta;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

ServeBatchStats serve_batcher_stats(ServeBatcher *b)
{
    pthread_mutex_lock(&b->mu);
    ServeBatchStats s = b->stats;
    pthread_mutex_unlock(&b->mu);
    return s;
}

void serve_batcher_stop(ServeBatcher *b)
{
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    pthread_mutex_lock(&b->mu);
    b->closed = true;
    pthread_mutex_unlock(&b->mu);
}

void serve_batcher_free(ServeBatcher *b)
{
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}
