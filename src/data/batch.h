/* Minibatches of sentence pairs: a per-epoch plan (length-bucketed, shuffled from a
   seed) and the filling of a model Batch from buffers allocated once. */
#ifndef S2S_DATA_BATCH_H
#define S2S_DATA_BATCH_H

#include "base/err.h"
#include "base/rng.h"
#include "model/model.h"

struct IdsView;

/* A data set of n pairs as token ids, without <bos>/<eos>. Either in memory: pair i is
   src[i][0..src_len[i]) → tgt[i][0..tgt_len[i]), tgt NULL for a source-only set
   (translation), the arrays not owned; or, with ids set (the arrays NULL), the pairs of
   a mapped SPLIT.ids file, read from it as they are used and checked the first time
   (ids_pair_check); or, with base set, a joined set (data/concat.h): pairs
   0 .. base->n − 1 are base's, and pair base->n + k joins the base pairs
   join[4k + 1 .. 4k + join[4k]] (1 to 3 of them), source to source and target to
   target, or, when join[4k] is -1, is held at mat: source mat[join[4k + 1] ..] of
   join[4k + 2] ids, then target of join[4k + 3]. Read pairs through pair_src_len,
   pair_src, ... below. */
typedef struct PairSet {
    int n;
    int *const *src;
    const int *src_len;
    int *const *tgt;
    const int *tgt_len;
    struct IdsView *ids;
    const struct PairSet *base;
    const int *join;
    const int *mat;
} PairSet;

/* Pair i's sides. For a mapped set, only after the plan (or pair_check) has checked it.
   pair_src and pair_tgt point into the set, so not for a joined pair (batch_fill
   copies those part by part). */
int pair_src_len(const PairSet *d, int i);
int pair_tgt_len(const PairSet *d, int i); /* 0 without targets */
const int *pair_src(const PairSet *d, int i);
const int *pair_tgt(const PairSet *d, int i);
static inline int pair_has_tgt(const PairSet *d)
{
    return d->base ? pair_has_tgt(d->base) : d->tgt != NULL || d->ids != NULL;
}

/* Checks pair i of a mapped set (ids_pair_check; the parts of a joined pair were
   checked when it was made); 0 for a set in memory. */
int pair_check(const PairSet *d, int i, Err *e);

/* The mapped file under d, or NULL. */
static inline struct IdsView *pair_ids(const PairSet *d) { return d->base ? d->base->ids : d->ids; }

/* The longest source and target (and the shortest target) of the set: recorded in a
   mapped file's header, counted otherwise. */
void pair_extent(const PairSet *d, int *max_s, int *max_t, int *min_t);

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

/* One epoch's batches, planned a chunk at a time, so that the plan's memory and the
   time to the first batch do not grow with the set. The pairs are taken in an order:
   with an rng, a pseudo-random permutation of 0..n-1 (a keyed Feistel network with
   cycle walking: no table); without (evaluation), data order. Each chunk of that order
   is sorted by (source length, target length, index) and cut into batches, and with an
   rng the chunk's batches are put in a random order. Every pair appears exactly once;
   the same rng state gives the same epoch. */
typedef struct PlanKey {
    int s, t, i;
} PlanKey;

typedef struct BatchPlan {
    const PairSet *d;
    BatchOpts o;
    int shuffle;
    uint64_t key[4], seed; /* the permutation's round keys; the chunks' batch orders */
    int half;              /* the permutation runs over 0 .. 4^half - 1 */
    int taken;             /* pairs of the order put into chunks so far */
    long chunks;           /* chunks planned */
    long pairs_out;        /* pairs of the batches handed out */
    /* The current chunk: its k-th batch is keys[start[order[k]] .. start[order[k]+1]). */
    PlanKey *keys;
    int *start, *order, *rows;
    int cap, nb, next;
} BatchPlan;

/* Starts an epoch of d's batches (d must outlive the plan; rng NULL: no shuffling) and
   plans its first chunk, so that a fault of the data shows before anything else
   (fails as batch_plan_next does). Draws 5 numbers from rng. Zero-initialise p before
   the first call; free it with batch_plan_free. */
int batch_plan_start(BatchPlan *p, const PairSet *d, const BatchOpts *o, Rng *rng, Err *e);

/* The next batch: its pair indices in *rows (n of them; valid until the next call).
   Returns 1, 0 when the epoch is over, or -1 when a pair cannot be batched: an empty
   source (message names the pair) or a fault of a mapped file (ids_pair_check). */
int batch_plan_next(BatchPlan *p, const int **rows, int *n, Err *e);

/* The share of the epoch's pairs handed out so far, 0 to 1. */
double batch_plan_done(const BatchPlan *p);
void batch_plan_free(BatchPlan *p);

/* Upper bounds of B, S and T over every batch any plan of d with o can produce
   (T counts <eos>), to size the buffers and the model's Work once. */
void batch_limits(const PairSet *d, const BatchOpts *o, int *max_b, int *max_s, int *max_t);
/* The same for epochs of up to n examples of d's lengths (an epoch with joined or
   renamed pairs holds more than d's pairs: data/concat.h). */
void batch_limits_n(const PairSet *d, long n, const BatchOpts *o, int *max_b, int *max_s, int *max_t);

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
   T are the longest source and target+1 of the batch. Without targets, T = 0 and
   ntok = 0. bb->rows[r] is the pair of row r. No allocation. */
void batch_fill(Batch *b, BatchBuf *bb, const PairSet *d, const int *idx, int n);

/* Token dropout: each source token and each decoder-input token but <bos> of b
   (rows[r] the pair of row r, as bb->rows after batch_fill) replaced by <unk> with
   probability p, drawn from a generator keyed by key and the row's pair, so that a row
   is treated alike whatever batch or process holds it. Padding and tgt_out, the tokens
   to predict, are left as they are. */
void batch_token_dropout(Batch *b, const int *rows, double p, uint64_t key);

#endif
