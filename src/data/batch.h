/* Minibatches of sentence pairs: a per-epoch plan (length-bucketed, shuffled from a
   seed) and the filling of a model Batch from buffers allocated once. */
#ifndef S2S_DATA_BATCH_H
#define S2S_DATA_BATCH_H

#include "base/err.h"
#include "base/rng.h"
#include "model/seq2seq.h"

/* A data set of n pairs as token ids, without <bos>/<eos>. Pair i is
   src[i][0..src_len[i]) → tgt[i][0..tgt_len[i]). tgt may be NULL (source only, for
   translation). The set does not own the arrays. */
typedef struct PairSet {
    int n;
    int *const *src;
    const int *src_len;
    int *const *tgt;
    const int *tgt_len;
} PairSet;

/* How batches are cut. At least one of batch and tokens is > 0.
   - batch:  at most this many pairs per batch (0: no limit);
   - tokens: at most this many target tokens per batch, counted as the padded size
             B × (longest target + 1 for <eos>) (0: no limit). A pair that alone
             exceeds it forms a batch of its own;
   - chunk:  pairs are sorted by length within chunks of about `chunk` batches
             (0: 100); batches never span two chunks. */
typedef struct BatchOpts {
    int batch;
    long tokens;
    int chunk;
} BatchOpts;

/* One epoch's batches: batch k is the pair indices idx[start[k] .. start[k+1]). Every
   pair of the set appears exactly once. */
typedef struct BatchPlan {
    int nbatch;
    int *start; /* (nbatch + 1) */
    int *idx;   /* (n) */
} BatchPlan;

/* Plans one epoch. With rng: the pairs are shuffled, each chunk is sorted by
   (source length, target length, index), cut into batches, and the batches are put in
   a random order; the same rng state gives the same plan. Without rng (evaluation):
   no shuffling, the chunks are taken in data order. Fails (message names the pair)
   when a source is empty. The plan is reallocated to fit; zero-initialise it before
   the first call and free it with batch_plan_free. */
int batch_plan(BatchPlan *p, const PairSet *d, const BatchOpts *o, Rng *rng, Err *e);
void batch_plan_free(BatchPlan *p);

/* Upper bounds of B, S and T over every batch any plan of d with o can produce
   (T counts <eos>), to size the buffers and the model's Work once. */
void batch_limits(const PairSet *d, const BatchOpts *o, int *max_b, int *max_s, int *max_t);

/* Buffers of the largest batch; a Batch filled from them points into them. */
typedef struct BatchBuf {
    int max_b, max_s, max_t;
    int *mem;
    int *src, *src_len, *tgt_in, *tgt_out;
    int *rows; /* (max_b) pair index of each row of the last filled batch */
} BatchBuf;

void batch_buf_init(BatchBuf *bb, int max_b, int max_s, int max_t);
void batch_buf_free(BatchBuf *bb);

/* Fills b with the pairs idx[0..n): rows sorted by source length, descending (ties
   keep the order of idx), src (S,B) padded with 0, tgt_in = <bos> y1..yn and
   tgt_out = y1..yn <eos> (T,B) padded with 0, ntok = non-pad entries of tgt_out. S and
   T are the longest source and target+1 of the batch. Without targets (d->tgt NULL),
   T = 0 and ntok = 0. bb->rows[r] is the pair of row r. No allocation. */
void batch_fill(Batch *b, BatchBuf *bb, const PairSet *d, const int *idx, int n);

#endif
