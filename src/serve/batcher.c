/* Batching across requests (serve/batcher.h). */
#include <pthread.h>
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

static bool same_opts(const TranslateOpts *a, const TranslateOpts *b)
{
    return a->batch == b->batch && a->max_len == b->max_len && a->beam == b->beam &&
           a->nbest == b->nbest && a->alpha == b->alpha && a->replace_unk == b->replace_unk &&
           a->attention == b->attention && a->split == b->split &&
           a->copy_numbers == b->copy_numbers && a->attention_layer == b->attention_layer &&
           a->attention_head == b->attention_head;
}

static bool joins(const ServeJob *first, const ServeJob *j)
{
    return j->model == first->model && same_opts(&j->opts, &first->opts);
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

static void give_result(ServeJob *j, TranslateResult *all, int at)
{
    TranslateResult *r = &j->res;
    r->n = j->n;
    r->count = XNEW(int, j->n);
    r->hyps = XNEW(TranslateHyp *, j->n);
    r->align = all->align ? XNEW(TranslateAlign, j->n) : NULL;
    for (int i = 0; i < j->n; i++) {
        r->count[i] = all->count[at + i];
        r->hyps[i] = all->hyps[at + i];
        if (r->align)
            r->align[i] = all->align[at + i];
    }
}

static int run_one(ServeJob *j)
{
    TranslateInput in = {.lines = j->lines, .lens = j->lens, .n = j->n, .name = "text", .cons = j->cons};
    j->batch_texts = j->n;
    return j->rc = translate_run(j->model, &in, &j->opts, &j->res, NULL, &j->err);
}

static void decode_batch(ServeBatcher *b, ServeJob *batch)
{
    const double t0 = clock_now();
    int n = 0, jobs = 0;
    for (ServeJob *j = batch; j; j = j->next)
        n += j->n, jobs++;
    if (jobs == 1) {
        run_one(batch);
    } else {
        const char **lines = XNEW(const char *, n);
        size_t *lens = XNEW(size_t, n);
        TranslateCons *cons = NULL;
        for (ServeJob *j = batch; j && !cons; j = j->next)
            if (j->cons)
                cons = XCNEW(TranslateCons, n);
        int at = 0;
        for (ServeJob *j = batch; j; j = j->next)
            for (int i = 0; i < j->n; i++, at++) {
                lines[at] = j->lines[i], lens[at] = j->lens[i];
                if (cons && j->cons)
                    cons[at] = j->cons[i];
            }
        TranslateInput in = {.lines = lines, .lens = lens, .n = n, .name = "text", .cons = cons};
        TranslateResult all;
        Err e;
        if (translate_run(batch->model, &in, &batch->opts, &all, NULL, &e) == 0) {
            at = 0;
            for (ServeJob *j = batch; j; j = j->next) {
                give_result(j, &all, at);
                j->rc = 0;
                j->batch_texts = n;
                at += j->n;
            }
            free(all.count);
            free(all.hyps);
            free(all.align);
        } else {
            for (ServeJob *j = batch; j; j = j->next)
                run_one(j);
        }
        free(lines);
        free(lens);
        free(cons);
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
