/* An epoch's examples as s2s train builds them from a prepared directory (the mapped
   training split, BPE-dropout, joined pairs, renamed pairs), read back as text from the
   filled batches: every source goes with its own target. A joined example is its parts'
   sources and their targets in the same order; a renamed one is its pair with the same
   invented name in place of the name on both sides. This is what rules out a data defect
   behind the Transformer's failure to memorise data/sample.tsv at a constant rate
   without warmup (docs/quality.md, "Memorising with joined and renamed examples"). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "data/bpe_dropout.h"
#include "data/concat.h"
#include "data/names.h"
#include "helpers.h"
#include "base/lines.h"

/* The words of ids[0..n) (units joined: "cha@@ t" -> "chat"), space-separated. */
static char *words_of(const Vocab *v, const int *ids, int n)
{
    Buf u = {0}, w = {0};
    for (int k = 0; k < n; k++) {
        if (k)
            buf_putc(&u, ' ');
        buf_puts(&u, vocab_token(v, ids[k]));
    }
    bpe_join(u.data ? u.data : "", u.len, &w);
    buf_putc(&w, '\0');
    buf_free(&u);
    return w.data;
}

/* Side s of batch row r as words. */
static char *row_words(const Prepared *d, const Batch *b, int r, int s)
{
    int ids[512], n = 0;
    if (s == 0)
        for (int k = 0; k < b->src_len[r]; k++)
            ids[n++] = b->src[k * b->B + r];
    else
        for (int k = 0; b->tgt_out[k * b->B + r] != 3; k++)
            ids[n++] = b->tgt_out[k * b->B + r];
    return words_of(s ? d->tgt_vocab : d->src_vocab, ids, n);
}

/* Pair i of the fixed split, side s, as words. */
static char *pair_words(const Prepared *d, int i, int s)
{
    const PairSet *p = &d->train.set;
    cr_assert_eq(pair_check(p, i, &(Err){0}), 0);
    return s ? words_of(d->tgt_vocab, pair_tgt(p, i), pair_tgt_len(p, i))
             : words_of(d->src_vocab, pair_src(p, i), pair_src_len(p, i));
}

/* text with every whole word equal to from replaced by to. */
static char *swap_word(const char *text, const char *from, const char *to)
{
    Buf o = {0};
    size_t at = 0, start, n, len = strlen(text);
    int k = 0;
    while ((n = lines_word(text, len, &at, &start)) > 0) {
        if (k++)
            buf_putc(&o, ' ');
        if (n == strlen(from) && memcmp(text + start, from, n) == 0)
            buf_puts(&o, to);
        else
            buf_append(&o, text + start, n);
    }
    buf_putc(&o, '\0');
    return o.data;
}

/* Whether renamed example (src, tgt) is candidate pair i with its name swapped for one
   invented name on both sides. */
static bool is_renamed(const Prepared *d, const NameCopy *nc, int c, const char *src, const char *tgt)
{
    int i = nc->cand[2 * c];
    const char *name = vocab_token(d->src_vocab, nc->cand[2 * c + 1]);
    char *os = pair_words(d, i, 0), *ot = pair_words(d, i, 1);
    bool ok = false;
    /* the invented name: the word of src where os has the name */
    size_t a = 0, b = 0, sa, sb, na, nb, la = strlen(os), lb = strlen(src);
    while ((na = lines_word(os, la, &a, &sa)) > 0 && (nb = lines_word(src, lb, &b, &sb)) > 0) {
        if (na == strlen(name) && memcmp(os + sa, name, na) == 0) {
            char *inv = strndup(src + sb, nb);
            char *bs = swap_word(src, inv, name), *bt = swap_word(tgt, inv, name);
            ok = strcmp(inv, name) != 0 && strcmp(bs, os) == 0 && strcmp(bt, ot) == 0 && strstr(tgt, inv);
            free(inv);
            free(bs);
            free(bt);
            break;
        }
    }
    free(os);
    free(ot);
    return ok;
}

Test(epoch_examples, every_source_goes_with_its_own_target)
{
    char *dir = sample_prepared_dir_with("300");
    char *path = strf("%s/data", dir);
    Prepared d = {0};
    Err e;
    cr_assert_eq(prepared_load(&d, path, &e), 0, "%s", e.msg);
    cr_assert_not_null(d.train.map.base, "the training split is read from train.ids");
    NameCopy nc = {0};
    const Vocab *v[2] = {d.src_vocab, d.tgt_vocab};
    const Bpe *bp[2] = {d.bpe[0], d.bpe[1]};
    TokOpts to[2] = {text_src_opts(&d.text), text_tgt_opts(&d.text)};
    cr_assert_eq(names_init(&nc, &d.train.set, v, bp, to, 1, &e), 0, "%s", e.msg);
    cr_assert_gt(nc.ncand, 5);
    for (int drop = 0; drop < 2; drop++) {
        BpeDropout bd = {0};
        const PairSet *base = &d.train.set;
        if (drop) {
            cr_assert_eq(bpe_dropout_init(&bd, &d, 0.1, 100, 100, &e), 0, "%s", e.msg);
            cr_assert_eq(bpe_dropout_epoch(&bd, &d.train.set, 1, 3, &e), 0, "%s", e.msg);
            base = &bd.set;
        }
        Concat c = {0};
        ConcatOpts o = {.share = 0.5, .max_s = 100, .max_t = 100, .rename = 1, .names = &nc,
                        .names_from = &d.train.set};
        cr_assert_eq(concat_epoch(&c, base, &o, 1, 3, &e), 0, "%s", e.msg);
        int n = d.train.set.n, joined = 0, renamed = 0;
        BatchBuf bb;
        batch_buf_init(&bb, 64, 101, 102);
        BatchPlan p = {0};
        BatchOpts bo = {.batch = 64};
        Rng rng;
        rng_seed(&rng, 1);
        cr_assert_eq(batch_plan_start(&p, &c.set, &bo, &rng, &e), 0, "%s", e.msg);
        const int *rows;
        int nrows;
        while (batch_plan_next(&p, &rows, &nrows, &e) == 1) {
            Batch b;
            batch_fill(&b, &bb, &c.set, rows, nrows);
            for (int r = 0; r < b.B; r++) {
                int i = bb.rows[r];
                char *src = row_words(&d, &b, r, 0), *tgt = row_words(&d, &b, r, 1);
                Buf ws = {0}, wt = {0};
                if (i < n) { /* a pair of the split, whatever its segmentation */
                    char *a = pair_words(&d, i, 0), *t = pair_words(&d, i, 1);
                    cr_expect_str_eq(src, a, "pair %d", i);
                    cr_expect_str_eq(tgt, t, "pair %d", i);
                    free(a);
                    free(t);
                } else if (c.join[4 * (i - n)] > 0) {
                    const int *j = c.join + 4 * (i - n);
                    for (int k = 1; k <= j[0]; k++) {
                        char *a = pair_words(&d, j[k], 0), *t = pair_words(&d, j[k], 1);
                        buf_printf(&ws, "%s%s", k > 1 ? " " : "", a);
                        buf_printf(&wt, "%s%s", k > 1 ? " " : "", t);
                        free(a);
                        free(t);
                    }
                    cr_expect_str_eq(src, ws.data, "joined example %d", i);
                    cr_expect_str_eq(tgt, wt.data, "joined example %d", i);
                    joined++;
                } else {
                    bool found = false;
                    for (int k = 0; k < nc.ncand && !found; k++)
                        found = is_renamed(&d, &nc, k, src, tgt);
                    cr_expect(found, "renamed example %d: \"%s\" -> \"%s\" renames no pair on both sides", i, src,
                              tgt);
                    renamed++;
                }
                buf_free(&ws);
                buf_free(&wt);
                free(src);
                free(tgt);
            }
        }
        cr_expect_eq(joined, n, "an epoch of share 0.5 joins as many examples as it has pairs");
        cr_expect_eq(renamed, nc.ncand);
        batch_plan_free(&p);
        batch_buf_free(&bb);
        concat_free(&c);
        bpe_dropout_free(&bd);
    }
    names_free(&nc);
    prepared_free(&d);
    rm_rf(dir);
    free(dir);
    free(path);
}
