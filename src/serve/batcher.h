/*
 * Batching across requests: the texts of concurrent requests are decoded together.
 *
 * One decoding thread takes jobs from a queue in arrival order. The first job waiting
 * is decoded with every later job that asks the same translator with the same options
 * (s2s_translator_options), as many as fit in `max_texts` texts (the first always goes). Before
 * it starts, while the batch is not full and a request may still come
 * (serve_batcher_expect: an open connection that has no job queued or decoding), it
 * waits for company, at most `wait_ms` milliseconds after the first job was queued or
 * the thread finished its last batch, whichever is later. So a request alone on an
 * idle server is decoded at once, and under load the requests answered by one batch
 * join the next. The jobs of one batch are one call of s2s_translate_constrained
 * (include/s2s.h), so each text gets what `s2s translate` gives it with the same
 * options (its sentences sorted by length among the batch's and decoded in batches of
 * opts.batch: the results do not depend on the company). The jobs share that call's
 * result, each its own texts of it. When the call fails (a text too long for the
 * model), each job is decoded alone, so that only the faulty one fails.
 */
#ifndef S2S_SERVE_BATCHER_H
#define S2S_SERVE_BATCHER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "s2s.h"

typedef struct ServeJob ServeJob;
struct ServeJob {
    /* in */
    const s2s_translator *tr;
    s2s_translator_options opts;
    const char *const *lines;
    int n;
    const s2s_constraints *cons; /* (n) or NULL */
    void (*done)(ServeJob *j, void *arg); /* called on the decoding thread when finished */
    void *arg;
    /* out */
    int rc;              /* 0, or -1 with err set */
    Err err;
    const s2s_result *res; /* on success: texts at..at+n of res are the job's; its owner
                              lets go of them with serve_job_release */
    int at;
    struct ServeShared *shared;
    int batch_texts;     /* texts of the batch it was decoded in */
    /* the queue's */
    double queued;
    ServeJob *next;
};

typedef struct ServeBatcher ServeBatcher;

typedef struct ServeBatchStats {
    long batches, jobs, texts;
    double busy; /* seconds the decoding thread spent decoding */
} ServeBatchStats;

/* Lets go of a finished job's result (the last job of a batch frees it); nothing
   when it has none. */
void serve_job_release(ServeJob *j);

ServeBatcher *serve_batcher_start(int max_texts, double wait_ms);
/* Queues j; j->done is called once it is decoded. */
void serve_batcher_submit(ServeBatcher *b, ServeJob *j);
/* Connections that may still send a request: +1 when one opens or its job has been
   answered, -1 when one closes or submits a job. */
void serve_batcher_expect(ServeBatcher *b, int delta);
ServeBatchStats serve_batcher_stats(ServeBatcher *b);
/* Decodes what is queued and stops the thread; a job submitted afterwards fails at
   once ("the server is stopping"). */
void serve_batcher_stop(ServeBatcher *b);
void serve_batcher_free(ServeBatcher *b);

#endif
