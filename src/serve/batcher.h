/*
 * Batching across requests: the texts of concurrent requests are decoded together.
 *
 * One decoding thread takes jobs from a queue in arrival order. The first job waiting
 * is decoded with every later job that asks the same model with the same options
 * (TranslateOpts), as many as fit in `max_texts` texts (the first always goes). Before
 * it starts, while the batch is not full and a request may still come
 * (serve_batcher_expect: an open connection that has no job queued or decoding), it
 * waits for company, at most `wait_ms` milliseconds after the first job was queued or
 * the thread finished its last batch, whichever is later. So a request alone on an
 * idle server is decoded at once, and under load the requests answered by one batch
 * join the next. The jobs of one batch are one call of translate_run
 * (decode/translate.h), so each text gets what `s2s translate` gives it with the same
 * options (its sentences sorted by length among the batch's and decoded in batches of
 * opts.batch: the results do not depend on the company, decode/beam.h). When that call
 * fails (a text too long for the model), each job is decoded alone, so that only the
 * faulty one fails. The matrix products run on the worker threads of nn/parallel.h.
 */
#ifndef S2S_SERVE_BATCHER_H
#define S2S_SERVE_BATCHER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "decode/translate.h"
#include "model/file.h"

typedef struct ServeJob ServeJob;
struct ServeJob {
    /* in */
    ModelFile *model;
    TranslateOpts opts;
    const char *const *lines;
    const size_t *lens;
    int n;
    const TranslateCons *cons; /* (n) or NULL */
    void (*done)(ServeJob *j, void *arg); /* called on the decoding thread when finished */
    void *arg;
    /* out */
    int rc;              /* 0, or -1 with err set */
    Err err;
    TranslateResult res; /* res.n == n on success; the job's owner frees it */
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
