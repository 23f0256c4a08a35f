/* Batching: exact contents of a filled batch, epoch plans (coverage, determinism,
   length bucketing, sentence and token limits, one chunk in memory at a time) and the
   buffer bounds. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "data/batch.h"
#include "pair_fixture.h"

/* A made-up set of n pairs: source i has 1 + (i*7)%13 tokens, target (i*5)%11 (may
   be 0: the target is just <eos>), token ids derived from the pair so every pair is
   recognisable. */
static int data_len(int i, int tgt) { return tgt ? (i * 5) % 11 : 1 + (i * 7) % 13; }
static int data_tok(int i, int tgt, int k) { return tgt ? 4 + (2 * i + k) % 60 : 4 + (i + k) % 50; }
static Pairs data_make(int n) { return pairs_make(n, data_len, data_tok); }

Test(batch, fill_exact_contents)
{
    int s0[] = {10, 11}, s1[] = {20, 21, 22}, s2[] = {30};
    int t0[] = {40, 41, 42}, t1[] = {50}, t2[] = {60, 61};
    int *src[] = {s0, s1, s2}, *tgt[] = {t0, t1, t2};
    int sl[] = {2, 3, 1}, tl[] = {3, 1, 2};
    PairSet d = {.n = 3, .src = src, .src_len = sl, .tgt = tgt, .tgt_len = tl};
    BatchBuf bb;
    batch_buf_init(&bb, 4, 5, 6);
    Batch b;
    int idx[] = {0, 1, 2};
    batch_fill(&b, &bb, &d, idx, 3);
    cr_assert_eq(b.B, 3);
    cr_assert_eq(b.S, 3);
    cr_assert_eq(b.T, 4);
    cr_expect_eq(b.ntok, 4 + 2 + 3);
    /* rows: pair 1 (len 3), pair 0 (len 2), pair 2 (len 1) */
    int rows[] = {1, 0, 2};
    int src_want[] = {20, 10, 30, /**/ 21, 11, 0, /**/ 22, 0, 0};
    int len_want[] = {3, 2, 1};
    int in_want[] = {2, 2, 2, /**/ 50, 40, 60, /**/ 0, 41, 61, /**/ 0, 42, 0};
    int out_want[] = {50, 40, 60, /**/ 3, 41, 61, /**/ 0, 42, 3, /**/ 0, 3, 0};
    for (int r = 0; r < 3; r++) {
        cr_expect_eq(bb.rows[r], rows[r], "rows[%d]", r);
        cr_expect_eq(b.src_len[r], len_want[r], "src_len[%d]", r);
    }
    for (int k = 0; k < 9; k++)
        cr_expect_eq(b.src[k], src_want[k], "src[%d]: %d, expected %d", k, b.src[k], src_want[k]);
    for (int k = 0; k < 12; k++) {
        cr_expect_eq(b.tgt_in[k], in_want[k], "tgt_in[%d]: %d", k, b.tgt_in[k]);
        cr_expect_eq(b.tgt_out[k], out_want[k], "tgt_out[%d]: %d", k, b.tgt_out[k]);
    }
    cr_expect(b.src == bb.src && b.tgt_in == bb.tgt_in && b.tgt_out == bb.tgt_out &&
              b.src_len == bb.src_len, "the batch points into the buffers");

    /* A smaller batch refilled into the same buffers: ties keep the order of idx, and
       stale contents of the larger batch do not leak into the padding. */
    int idx2[] = {2, 0};
    batch_fill(&b, &bb, &d, idx2, 2);
    cr_assert_eq(b.B, 2);
    cr_assert_eq(b.S, 2);
    cr_assert_eq(b.T, 4);
    cr_expect_eq(b.ntok, 4 + 3);
    int src2[] = {10, 30, 11, 0};
    int in2[] = {2, 2, 40, 60, 41, 61, 42, 0};
    int out2[] = {40, 60, 41, 61, 42, 3, 3, 0};
    for (int k = 0; k < 4; k++)
        cr_expect_eq(b.src[k], src2[k], "src[%d]", k);
    for (int k = 0; k < 8; k++) {
        cr_expect_eq(b.tgt_in[k], in2[k], "tgt_in[%d]", k);
        cr_expect_eq(b.tgt_out[k], out2[k], "tgt_out[%d]", k);
    }
    cr_expect_eq(bb.rows[0], 0);
    cr_expect_eq(bb.rows[1], 2);

    /* Equal source lengths: order of idx kept. */
    int s3[] = {7, 8};
    int *srcs[] = {s0, s3};
    int sls[] = {2, 2};
    PairSet ds = {.n = 2, .src = srcs, .src_len = sls};
    int idx3[] = {1, 0};
    batch_fill(&b, &bb, &ds, idx3, 2);
    cr_expect_eq(b.T, 0, "no targets: T = 0");
    cr_expect_eq(b.ntok, 0);
    cr_expect_eq(bb.rows[0], 1);
    cr_expect_eq(bb.rows[1], 0);
    cr_expect(b.src[0] == 7 && b.src[1] == 10 && b.src[2] == 8 && b.src[3] == 11);
    batch_buf_free(&bb);
}

/* A whole epoch of a plan: batch k is idx[start[k] .. start[k+1]). */
typedef struct Epoch {
    int nbatch;
    int *start, *idx;
    size_t cap; /* pairs the plan held at most */
} Epoch;

static Epoch epoch_of(const PairSet *d, const BatchOpts *o, Rng *rng)
{
    Epoch ep = {0, calloc((size_t)d->n + 1, sizeof(int)), calloc((size_t)d->n + 1, sizeof(int)), 0};
    BatchPlan p = {0};
    const int *rows;
    int m, got, w = 0;
    Err e;
    cr_assert_eq(batch_plan_start(&p, d, o, rng, &e), 0, "%s", e.msg);
    cr_assert_eq(batch_plan_done(&p), 0.0);
    while ((got = batch_plan_next(&p, &rows, &m, &e)) == 1) {
        cr_assert(m >= 1 && w + m <= d->n, "batch %d: %d pairs after %d of %d", ep.nbatch, m, w, d->n);
        ep.start[ep.nbatch++] = w;
        memcpy(ep.idx + w, rows, (size_t)m * sizeof(int));
        w += m;
        cr_assert_float_eq(batch_plan_done(&p), (double)w / d->n, 1e-12);
    }
    cr_assert_eq(got, 0, "%s", e.msg);
    cr_assert_eq(batch_plan_next(&p, &rows, &m, &e), 0, "the epoch stays over");
    ep.start[ep.nbatch] = w;
    ep.cap = (size_t)p.cap;
    batch_plan_free(&p);
    return ep;
}

static void epoch_free(Epoch *ep)
{
    free(ep->start);
    free(ep->idx);
}

/* Checks an epoch: every pair exactly once, limits respected, limits of batch_limits
   hold, and fill gives descending source lengths. */
static void check_plan(const Epoch *p, const Pairs *d, const BatchOpts *o)
{
    int n = d->set.n;
    int *seen = calloc((size_t)n + 1, sizeof(int));
    int mb, ms, mt;
    batch_limits(&d->set, o, &mb, &ms, &mt);
    BatchBuf bb;
    batch_buf_init(&bb, mb, ms, mt);
    cr_assert_eq(p->start[0], 0);
    cr_assert_eq(p->start[p->nbatch], n);
    for (int k = 0; k < p->nbatch; k++) {
        int a = p->start[k], z = p->start[k + 1];
        int cnt = z - a, maxt = 0;
        cr_assert(cnt >= 1, "batch %d is empty", k);
        for (int j = a; j < z; j++) {
            int i = p->idx[j];
            cr_assert(i >= 0 && i < n);
            seen[i]++;
            if (d->tl[i] + 1 > maxt)
                maxt = d->tl[i] + 1;
        }
        if (o->batch > 0)
            cr_expect(cnt <= o->batch, "batch %d has %d pairs", k, cnt);
        if (o->tokens > 0)
            cr_expect(cnt == 1 || (long)cnt * maxt <= o->tokens,
                      "batch %d: %d x %d tokens over budget %ld", k, cnt, maxt, o->tokens);
        Batch b;
        batch_fill(&b, &bb, &d->set, p->idx + a, cnt);
        cr_expect(b.B <= mb && b.S <= ms && b.T <= mt);
        cr_expect_eq(b.T, maxt);
        for (int r = 1; r < b.B; r++)
            cr_expect(b.src_len[r - 1] >= b.src_len[r]);
    }
    for (int i = 0; i < n; i++)
        cr_expect_eq(seen[i], 1, "pair %d seen %d times", i, seen[i]);
    batch_buf_free(&bb);
    free(seen);
}

Test(batch, every_pair_once_per_epoch)
{
    Pairs d = data_make(1000);
    BatchOpts opts[] = {{32, 0, 0}, {7, 0, 3}, {0, 200, 0}, {16, 100, 2}, {1000, 0, 1}, {5, 0, 1000}};
    Rng rng;
    rng_seed(&rng, 42);
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
        for (int epoch = 0; epoch < 3; epoch++) {
            Epoch p = epoch_of(&d.set, &opts[k], &rng);
            check_plan(&p, &d, &opts[k]);
            epoch_free(&p);
        }
    Epoch p = epoch_of(&d.set, &opts[0], NULL);
    check_plan(&p, &d, &opts[0]);
    epoch_free(&p);
    pairs_free(&d);
}

/* The shuffled order is a permutation for every size, powers of 4 and their
   neighbours included (the Feistel network's domain), and tiny sets. */
Test(batch, every_pair_once_for_every_set_size)
{
    const int sizes[] = {1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4097};
    Rng rng;
    rng_seed(&rng, 5);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        Pairs d = data_make(sizes[k]);
        BatchOpts o = {3, 0, 2};
        Epoch p = epoch_of(&d.set, &o, &rng);
        check_plan(&p, &d, &o);
        epoch_free(&p);
        pairs_free(&d);
    }
}

/* The plan holds one chunk, not the epoch: its memory does not grow with the set. */
Test(batch, the_plan_holds_one_chunk_at_a_time)
{
    Pairs d = data_make(20000);
    BatchOpts o = {32, 0, 2}; /* chunks of 64 pairs */
    Rng rng;
    rng_seed(&rng, 9);
    Epoch p = epoch_of(&d.set, &o, &rng);
    check_plan(&p, &d, &o);
    cr_expect_leq(p.cap, 256, "the plan grew to %zu pairs", p.cap);
    /* and the pairs are spread over the set: the first chunk is not the first pairs */
    int low = 0;
    for (int j = 0; j < 64; j++)
        low += p.idx[j] < 64;
    cr_expect_leq(low, 4, "%d of the first 64 pairs taken are among the first 64 of the set", low);
    epoch_free(&p);
    pairs_free(&d);
}

Test(batch, sentence_count_exact_for_one_chunk)
{
    Pairs d = data_make(100);
    BatchOpts o = {32, 0, 100};
    Rng rng;
    rng_seed(&rng, 1);
    Epoch p = epoch_of(&d.set, &o, &rng);
    cr_assert_eq(p.nbatch, 4);
    int sizes[4];
    for (int k = 0; k < 4; k++)
        sizes[k] = p.start[k + 1] - p.start[k];
    int n32 = 0, n4 = 0;
    for (int k = 0; k < 4; k++)
        n32 += sizes[k] == 32, n4 += sizes[k] == 4;
    cr_expect(n32 == 3 && n4 == 1, "three batches of 32 and one of 4");
    epoch_free(&p);
    pairs_free(&d);
}

Test(batch, same_seed_same_batches_other_seed_other_order)
{
    Pairs d = data_make(500);
    BatchOpts o = {16, 0, 4};
    Rng r1, r2, r3;
    rng_seed(&r1, 7);
    rng_seed(&r2, 7);
    rng_seed(&r3, 8);
    for (int epoch = 0; epoch < 2; epoch++) {
        Epoch p1 = epoch_of(&d.set, &o, &r1), p2 = epoch_of(&d.set, &o, &r2), p3 = epoch_of(&d.set, &o, &r3);
        cr_assert_eq(p1.nbatch, p2.nbatch);
        cr_expect(memcmp(p1.start, p2.start, (size_t)(p1.nbatch + 1) * sizeof(int)) == 0);
        cr_expect(memcmp(p1.idx, p2.idx, 500 * sizeof(int)) == 0);
        cr_expect(memcmp(p1.idx, p3.idx, 500 * sizeof(int)) != 0);
        epoch_free(&p1);
        epoch_free(&p2);
        epoch_free(&p3);
    }
    /* Two epochs from one rng differ. */
    rng_seed(&r1, 7);
    Epoch q = epoch_of(&d.set, &o, &r1), p1 = epoch_of(&d.set, &o, &r1);
    cr_expect(memcmp(q.idx, p1.idx, 500 * sizeof(int)) != 0);
    epoch_free(&q);
    epoch_free(&p1);
    pairs_free(&d);
}

/* Within one chunk, batches are consecutive runs of the (source length, target length,
   index) order: their key ranges do not overlap. */
static long key_of(const Pairs *d, int i) { return ((long)d->sl[i] * 100 + d->tl[i]) * 100000 + i; }

Test(batch, batches_are_length_buckets)
{
    Pairs d = data_make(300);
    BatchOpts o = {20, 0, 1000}; /* one chunk holds everything */
    Rng rng;
    rng_seed(&rng, 3);
    Epoch p = epoch_of(&d.set, &o, &rng);
    cr_assert_eq(p.nbatch, 15);
    long lo[15], hi[15];
    for (int k = 0; k < p.nbatch; k++) {
        lo[k] = hi[k] = key_of(&d, p.idx[p.start[k]]);
        for (int j = p.start[k]; j < p.start[k + 1]; j++) {
            long v = key_of(&d, p.idx[j]);
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    }
    int in_order = 1;
    for (int a = 0; a < p.nbatch; a++)
        for (int b = 0; b < p.nbatch; b++)
            if (a != b)
                cr_expect(hi[a] < lo[b] || hi[b] < lo[a], "batches %d and %d overlap", a, b);
    for (int k = 1; k < p.nbatch; k++)
        in_order &= lo[k - 1] < lo[k];
    cr_expect(!in_order, "the batch order is shuffled");
    epoch_free(&p);
    /* Without rng: batches in length order. */
    p = epoch_of(&d.set, &o, NULL);
    for (int j = 1; j < 300; j++)
        cr_expect(key_of(&d, p.idx[j - 1]) < key_of(&d, p.idx[j]));
    epoch_free(&p);
    pairs_free(&d);
}

Test(batch, token_budget_respected_and_used)
{
    Pairs d = data_make(400);
    BatchOpts o = {0, 60, 0};
    Rng rng;
    rng_seed(&rng, 11);
    Epoch p = epoch_of(&d.set, &o, &rng);
    check_plan(&p, &d, &o);
    epoch_free(&p);
    /* With one chunk sorted by length, a batch closes only when the next pair would
       break the budget. */
    o.chunk = 1000;
    p = epoch_of(&d.set, &o, NULL);
    for (int k = 0; k + 1 < p.nbatch; k++) {
        int cnt = p.start[k + 1] - p.start[k], maxt = 0;
        for (int j = p.start[k]; j <= p.start[k + 1]; j++) /* includes the next pair */
            if (d.tl[p.idx[j]] + 1 > maxt)
                maxt = d.tl[p.idx[j]] + 1;
        cr_expect((long)(cnt + 1) * maxt > 60, "batch %d could have taken one more pair", k);
    }
    epoch_free(&p);
    /* A budget smaller than one pair: each pair alone. */
    o.tokens = 1;
    p = epoch_of(&d.set, &o, &rng);
    cr_expect_eq(p.nbatch, 400);
    epoch_free(&p);
    int mb, ms, mt;
    batch_limits(&d.set, &o, &mb, &ms, &mt);
    cr_expect_eq(mb, 1);
    cr_expect_eq(ms, 13);
    cr_expect_eq(mt, 11);
    pairs_free(&d);
}

Test(batch, empty_source_is_an_error)
{
    Pairs d = data_make(5);
    d.sl[3] = 0;
    BatchOpts o = {2, 0, 0};
    BatchPlan p = {0};
    Err e;
    cr_expect_eq(batch_plan_start(&p, &d.set, &o, NULL, &e), -1, "the first chunk is planned at once");
    cr_expect_str_eq(e.msg, "pair 4 has an empty source");
    batch_plan_free(&p);
    pairs_free(&d);
}
