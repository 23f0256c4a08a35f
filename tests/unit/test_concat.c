/* Concatenation augmentation: how many joined pairs an epoch holds, what they are made
   of (2 or 3 parts within the length limits), that a filled batch holds their joined
   tokens exactly, that an epoch's plan covers them, determinism by seed and epoch, and
   nothing joined without a share. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "data/concat.h"
#include "pair_fixture.h"

/* n pairs: source i has 1 + i % 9 tokens 1000 i + k, target 1 + i % 7 tokens
   2000000 + 1000 i + k, so that every token names its pair and place. */
static int data_len(int i, int tgt) { return tgt ? 1 + i % 7 : 1 + i % 9; }
static int data_tok(int i, int tgt, int k) { return tgt ? 2000000 + 1000 * i + k : 1000 * i + k; }
static Pairs data_make(int n) { return pairs_make(n, data_len, data_tok); }

/* The tokens of example i of c's set, side tgt, as the concatenation of its parts. */
static int expected(const Pairs *d, const Concat *c, int i, int tgt, int *out)
{
    int n = d->set.n, len = 0;
    int parts[3], np = 1;
    parts[0] = i;
    if (i >= n) {
        const int *j = c->join + 4 * (i - n);
        np = j[0];
        memcpy(parts, j + 1, (size_t)np * sizeof(int));
    }
    for (int p = 0; p < np; p++) {
        int q = parts[p], l = tgt ? d->tl[q] : d->sl[q];
        memcpy(out + len, tgt ? d->tgt[q] : d->src[q], (size_t)l * sizeof(int));
        len += l;
    }
    return len;
}

/* Plans one shuffled epoch of c's set in batches of 16 and checks every batch filled:
   each example exactly once, joined tokens exactly, <bos>/<eos> in place. Returns the
   batches that held a joined pair. */
static int check_epoch(const Pairs *d, const Concat *c, const ConcatOpts *o)
{
    const PairSet *s = &c->set;
    BatchOpts bo = {.batch = 16};
    int mb, ms, mt;
    batch_limits(&d->set, &bo, &mb, &ms, &mt);
    ms = ms > o->max_s ? ms : o->max_s;
    mt = mt > o->max_t + 1 ? mt : o->max_t + 1;
    BatchBuf bb;
    batch_buf_init(&bb, mb, ms, mt);
    int *seen = calloc((size_t)s->n, sizeof(int)), want[64];
    Rng rng;
    rng_seed(&rng, 7);
    BatchPlan p = {0};
    Err e;
    cr_assert_eq(batch_plan_start(&p, s, &bo, &rng, &e), 0);
    const int *rows;
    int nrows, got, with_joined = 0;
    while ((got = batch_plan_next(&p, &rows, &nrows, &e)) == 1) {
        Batch b;
        batch_fill(&b, &bb, s, rows, nrows);
        int joined = 0;
        for (int r = 0; r < b.B; r++) {
            int i = bb.rows[r];
            seen[i]++;
            joined |= i >= d->set.n;
            int sl = expected(d, c, i, 0, want);
            cr_assert_eq(b.src_len[r], sl, "example %d", i);
            for (int k = 0; k < sl; k++)
                cr_assert_eq(b.src[k * b.B + r], want[k], "example %d source token %d", i, k);
            for (int k = sl; k < b.S; k++)
                cr_assert_eq(b.src[k * b.B + r], 0);
            int tl = expected(d, c, i, 1, want);
            cr_assert_eq(b.tgt_in[r], 2);
            for (int k = 0; k < tl; k++) {
                cr_assert_eq(b.tgt_in[(k + 1) * b.B + r], want[k], "example %d target token %d", i, k);
                cr_assert_eq(b.tgt_out[k * b.B + r], want[k], "example %d target token %d", i, k);
            }
            cr_assert_eq(b.tgt_out[tl * b.B + r], 3);
        }
        with_joined += joined;
    }
    cr_assert_eq(got, 0, "%s", e.msg);
    for (int i = 0; i < s->n; i++)
        cr_assert_eq(seen[i], 1, "example %d seen %d times", i, seen[i]);
    batch_plan_free(&p);
    batch_buf_free(&bb);
    free(seen);
    return with_joined;
}

Test(concat, none_without_a_share)
{
    Pairs d = data_make(300);
    Concat c = {0};
    ConcatOpts o = {.share = 0, .max_s = 100, .max_t = 100};
    Err e;
    cr_assert_eq(concat_epoch(&c, &d.set, &o, 1, 0, &e), 0);
    cr_assert_eq(c.set.n, 300);
    cr_assert_null(c.set.base);
    cr_assert_eq(check_epoch(&d, &c, &o), 0, "a batch holds a joined pair");
    concat_free(&c);
    pairs_free(&d);
}

Test(concat, joined_pairs_when_asked)
{
    Pairs d = data_make(300);
    Concat c = {0};
    ConcatOpts o = {.share = 0.25, .max_s = 100, .max_t = 100};
    Err e;
    cr_assert_eq(concat_epoch(&c, &d.set, &o, 1, 0, &e), 0);
    cr_assert_eq(c.set.n, 400, "300 pairs and 300 · 0.25 / 0.75 = 100 joined");
    int count[4] = {0};
    for (int k = 0; k < 100; k++) {
        const int *j = c.join + 4 * k;
        cr_assert(j[0] >= 2 && j[0] <= 3, "joined pair %d has %d parts", k, j[0]);
        count[j[0]]++;
        for (int p = 1; p <= j[0]; p++)
            cr_assert(j[p] >= 0 && j[p] < 300);
    }
    cr_expect(count[2] > 30 && count[3] > 30, "2 parts %d times, 3 parts %d times", count[2], count[3]);
    cr_assert_eq(pair_src_len(&c.set, 300), expected(&d, &c, 300, 0, (int[64]){0}));
    int batches = check_epoch(&d, &c, &o);
    cr_assert(batches > 0 && batches < 25 + 7, "%d of 25 batches hold joined pairs", batches);
    concat_free(&c);
    pairs_free(&d);
}

Test(concat, sides_within_the_limits)
{
    Pairs d = data_make(500);
    Concat c = {0};
    ConcatOpts o = {.share = 0.5, .max_s = 12, .max_t = 9};
    Err e;
    cr_assert_eq(concat_epoch(&c, &d.set, &o, 3, 2, &e), 0);
    cr_assert_eq(c.set.n, 1000);
    int left_out = 0;
    for (int i = 500; i < 1000; i++) {
        const int *j = c.join + 4 * (i - 500);
        int s = pair_src_len(&c.set, i), t = pair_tgt_len(&c.set, i);
        cr_assert(j[0] == 1 || (s <= 12 && t <= 9), "example %d: %d parts, %d and %d tokens", i, j[0], s, t);
        left_out += j[0] == 1;
    }
    cr_expect(left_out > 0, "no part was left out at these limits");
    check_epoch(&d, &c, &o);
    concat_free(&c);
    pairs_free(&d);
}

Test(concat, same_seed_and_epoch_same_pairs)
{
    Pairs d = data_make(200);
    Concat a = {0}, b = {0};
    ConcatOpts o = {.share = 0.1, .max_s = 100, .max_t = 100};
    Err e;
    cr_assert_eq(concat_epoch(&a, &d.set, &o, 5, 3, &e), 0);
    cr_assert_eq(a.set.n, 222, "200 · 0.1 / 0.9 = 22.2 joined, rounded");
    cr_assert_eq(concat_epoch(&b, &d.set, &o, 5, 3, &e), 0);
    cr_assert_eq(memcmp(a.join, b.join, 22 * 4 * sizeof(int)), 0);
    cr_assert_eq(concat_epoch(&b, &d.set, &o, 5, 4, &e), 0);
    cr_assert_neq(memcmp(a.join, b.join, 22 * 4 * sizeof(int)), 0, "the next epoch joins the same pairs");
    cr_assert_eq(concat_epoch(&b, &d.set, &o, 6, 3, &e), 0);
    cr_assert_neq(memcmp(a.join, b.join, 22 * 4 * sizeof(int)), 0, "another seed joins the same pairs");
    concat_free(&a);
    concat_free(&b);
    pairs_free(&d);
}
