/* BPE-dropout and token dropout: with no dropout a word's ids are the fixed
   segmentation's; two epochs segment the training split differently, every
   segmentation spells its words and numbers its units in the vocabulary; the same
   seed and epoch give the same pairs; token dropout replaces inputs alone, as often as
   asked, and never the tokens to predict. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "data/bpe_dropout.h"
#include "helpers.h"
#include "base/lines.h"

static Prepared load(const char *bpe, char **dir)
{
    *dir = sample_prepared_dir_with(bpe);
    char *p = strf("%s/data", *dir);
    Prepared d = {0};
    Err e;
    cr_assert_eq(prepared_load(&d, p, &e), 0, "%s", e.msg);
    free(p);
    return d;
}

/* The units of ids[0..n) joined as text ("cha@@ t" -> "chat"), appended to out. */
static void join_ids(const Vocab *v, const int *ids, int n, Buf *out)
{
    Buf u = {0};
    for (int k = 0; k < n; k++) {
        if (k)
            buf_putc(&u, ' ');
        buf_puts(&u, vocab_token(v, ids[k]));
    }
    bpe_join(u.data ? u.data : "", u.len, out);
    buf_free(&u);
}

Test(bpe_dropout, no_dropout_gives_the_fixed_units)
{
    char *dir;
    Prepared d = load("400", &dir);
    BpeIds *m = bpe_ids_new(d.bpe[0], d.src_vocab);
    Buf units = {0};
    int32_t out[256], want[256];
    long words = 0;
    for (int i = 0; i < d.train.set.n; i++) {
        cr_assert_eq(pair_check(&d.train.set, i, &(Err){0}), 0);
        /* the source's words, from the fixed units joined back */
        Buf text = {0};
        join_ids(d.src_vocab, pair_src(&d.train.set, i), pair_src_len(&d.train.set, i), &text);
        size_t at = 0, start, n;
        while ((n = lines_word(text.data, text.len, &at, &start)) > 0) {
            buf_clear(&units);
            size_t nu = bpe_segment_word(d.bpe[0], text.data + start, n, &units);
            size_t nw = vocab_encode(d.src_vocab, units.data, units.len, want, 256, NULL);
            cr_assert_eq(nw, nu);
            size_t got = bpe_ids_word(m, text.data + start, n, 0, NULL, out);
            cr_assert_eq(got, nw, "%.*s: %zu units, the fixed segmentation %zu", (int)n, text.data + start, got, nw);
            for (size_t q = 0; q < nw; q++)
                cr_assert_eq(out[q], want[q], "%.*s: unit %zu is %s, the fixed segmentation's %s", (int)n,
                             text.data + start, q, vocab_token(d.src_vocab, out[q]), vocab_token(d.src_vocab, want[q]));
            words++;
        }
        buf_free(&text);
    }
    cr_assert_gt(words, 1000);
    buf_free(&units);
    bpe_ids_free(m);
    prepared_free(&d);
    rm_rf(dir);
    free(dir);
}

Test(bpe_dropout, two_epochs_segment_differently_and_spell_the_same_words)
{
    char *dir;
    Prepared d = load("400", &dir);
    BpeDropout bd = {0};
    Err e;
    cr_assert_eq(bpe_dropout_init(&bd, &d, 0.1, 200, 200, &e), 0, "%s", e.msg);
    int *first[2];
    int *len0[2];
    long longer = 0, differ = 0;
    for (int ep = 0; ep < 2; ep++) {
        cr_assert_eq(bpe_dropout_epoch(&bd, &d.train.set, 7, ep, &e), 0, "%s", e.msg);
        cr_assert_eq(bd.set.n, d.train.set.n);
        for (int i = 0; i < bd.set.n; i++)
            for (int s = 0; s < 2; s++) {
                const Vocab *v = s ? d.tgt_vocab : d.src_vocab;
                const int *x = s ? pair_tgt(&bd.set, i) : pair_src(&bd.set, i);
                const int *f = s ? pair_tgt(&d.train.set, i) : pair_src(&d.train.set, i);
                int n = s ? pair_tgt_len(&bd.set, i) : pair_src_len(&bd.set, i);
                int nf = s ? pair_tgt_len(&d.train.set, i) : pair_src_len(&d.train.set, i);
                Buf a = {0}, b = {0};
                join_ids(v, x, n, &a);
                join_ids(v, f, nf, &b);
                cr_assert_eq(a.len, b.len, "pair %d side %d: \"%.*s\" against \"%.*s\"", i, s, (int)a.len,
                             a.data, (int)b.len, b.data);
                cr_assert_eq(memcmp(a.data, b.data, a.len), 0, "pair %d side %d", i, s);
                longer += n > nf;
                buf_free(&a);
                buf_free(&b);
            }
        if (ep == 0) { /* keep epoch 0's pairs */
            for (int s = 0; s < 2; s++) {
                first[s] = malloc(bd.cap * sizeof(int));
                len0[s] = malloc((size_t)bd.n * sizeof(int));
            }
            memcpy(first[0], bd.ids, bd.cap * sizeof(int));
            memcpy(len0[0], bd.sl, (size_t)bd.n * sizeof(int));
            memcpy(len0[1], bd.tl, (size_t)bd.n * sizeof(int));
        } else {
            for (int i = 0; i < bd.n; i++)
                differ += bd.sl[i] != len0[0][i] || bd.tl[i] != len0[1][i];
        }
    }
    /* a tenth of the merges left out: many sides longer, and the epochs differ */
    cr_assert_gt(longer, d.train.set.n / 4, "%ld of %d pairs' sides longer", longer, 2 * d.train.set.n);
    cr_assert_gt(differ, d.train.set.n / 10, "%ld of %d pairs differ between epochs", differ, d.train.set.n);
    /* the same seed and epoch: the same pairs */
    cr_assert_eq(bpe_dropout_epoch(&bd, &d.train.set, 7, 0, &e), 0, "%s", e.msg);
    for (int i = 0; i < bd.n; i++)
        cr_assert(bd.sl[i] == len0[0][i] && bd.tl[i] == len0[1][i], "pair %d", i);
    cr_assert_eq(memcmp(bd.ids, first[0], (size_t)(bd.src[bd.n - 1] - bd.ids) * sizeof(int)), 0);
    for (int s = 0; s < 2; s++) {
        free(first[s]);
        free(len0[s]);
    }
    bpe_dropout_free(&bd);
    prepared_free(&d);
    rm_rf(dir);
    free(dir);
}

Test(bpe_dropout, a_side_over_its_bound_keeps_the_fixed_ids)
{
    char *dir;
    Prepared d = load("400", &dir);
    int ms, mt, lt;
    pair_extent(&d.train.set, &ms, &mt, &lt);
    BpeDropout bd = {0};
    Err e;
    /* the bounds are the fixed split's longest sides: dropout would pass them */
    cr_assert_eq(bpe_dropout_init(&bd, &d, 0.5, ms, mt, &e), 0, "%s", e.msg);
    cr_assert_eq(bpe_dropout_epoch(&bd, &d.train.set, 1, 0, &e), 0, "%s", e.msg);
    long kept = 0;
    for (int i = 0; i < bd.n; i++) {
        cr_assert_leq(bd.sl[i], ms);
        cr_assert_leq(bd.tl[i], mt);
        if (bd.sl[i] == pair_src_len(&d.train.set, i) && pair_src_len(&d.train.set, i) == ms)
            kept++;
    }
    cr_assert_gt(kept, 0, "the longest source kept its fixed ids");
    bpe_dropout_free(&bd);
    prepared_free(&d);
    rm_rf(dir);
    free(dir);
}

Test(token_dropout, replaces_inputs_alone_as_often_as_asked)
{
    enum { B = 64, S = 20, T = 21 };
    static int src[S * B], sl[B], tin[T * B], tout[T * B], rows[B];
    for (int r = 0; r < B; r++) {
        rows[r] = 1000 + r;
        sl[r] = S - r % 5;
        for (int s = 0; s < S; s++)
            src[s * B + r] = s < sl[r] ? 10 + s : 0;
        int tl = T - 1 - r % 3;
        for (int t = 0; t < T; t++) {
            tin[t * B + r] = t == 0 ? 2 : t <= tl ? 100 + t : 0;
            tout[t * B + r] = t < tl ? 101 + t : t == tl ? 3 : 0;
        }
    }
    static int src0[S * B], tin0[T * B], tout0[T * B];
    memcpy(src0, src, sizeof src);
    memcpy(tin0, tin, sizeof tin);
    memcpy(tout0, tout, sizeof tout);
    Batch b = {.B = B, .S = S, .T = T, .src = src, .src_len = sl, .tgt_in = tin, .tgt_out = tout};
    batch_token_dropout(&b, rows, 0.2, 42);
    long cand = 0, unk = 0;
    for (int r = 0; r < B; r++) {
        for (int s = 0; s < S; s++) {
            if (s >= sl[r]) {
                cr_assert_eq(src[s * B + r], 0, "padding stays");
                continue;
            }
            cand++;
            cr_assert(src[s * B + r] == src0[s * B + r] || src[s * B + r] == 1);
            unk += src[s * B + r] == 1;
        }
        cr_assert_eq(tin[r], 2, "<bos> stays");
        for (int t = 1; t < T; t++) {
            if (tin0[t * B + r] == 0) {
                cr_assert_eq(tin[t * B + r], 0);
                continue;
            }
            cand++;
            cr_assert(tin[t * B + r] == tin0[t * B + r] || tin[t * B + r] == 1);
            unk += tin[t * B + r] == 1;
        }
    }
    cr_assert_arr_eq(tout, tout0, sizeof tout, "the tokens to predict are never dropped");
    /* 2,000-odd candidates at 0.2: within 5 standard deviations of the mean */
    double mean = 0.2 * (double)cand, sd = sqrt(cand * 0.2 * 0.8);
    cr_assert(fabs((double)unk - mean) < 5 * sd, "%ld of %ld replaced", unk, cand);
    /* a row is treated alike wherever it sits: row 5 moved to another batch */
    int one_src[S], one_in[T], one_out[T], one_len = sl[5], one_row = rows[5];
    for (int s = 0; s < S; s++)
        one_src[s] = src0[s * B + 5];
    for (int t = 0; t < T; t++) {
        one_in[t] = tin0[t * B + 5];
        one_out[t] = tout0[t * B + 5];
    }
    Batch one = {.B = 1, .S = S, .T = T, .src = one_src, .src_len = &one_len, .tgt_in = one_in, .tgt_out = one_out};
    batch_token_dropout(&one, &one_row, 0.2, 42);
    for (int s = 0; s < S; s++)
        cr_assert_eq(one_src[s], src[s * B + 5]);
    for (int t = 0; t < T; t++)
        cr_assert_eq(one_in[t], tin[t * B + 5]);
}
