#include "data/bpe_dropout.h"

#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/rng.h"
#include "base/lines.h"

int bpe_dropout_init(BpeDropout *bd, const Prepared *d, double p, int max_s, int max_t, Err *e)
{
    CHECK(p > 0 && p < 1 && max_s >= 1 && max_t >= 1);
    bd->p = p;
    bd->max[0] = max_s;
    bd->max[1] = max_t;
    bd->v[0] = d->src_vocab;
    bd->v[1] = d->tgt_vocab;
    for (int s = 0; s < 2; s++)
        bd->m[s] = d->bpe[s] ? bpe_ids_new(d->bpe[s], bd->v[s]) : NULL;
    char *path = path_join(d->dir, "train.tsv");
    Corpus c = {0};
    CorpusOpts co = corpus_opts_pairs(d->text.dir);
    co.allow_empty = true;
    int rc = corpus_read(&c, path, &co, e);
    if (rc == 0 && c.n != (size_t)d->train.set.n)
        rc = err_set(e, "%s: %zu pairs, but the training split's ids hold %d (prepare it again)", path, c.n,
                     d->train.set.n);
    const TokOpts to[2] = {text_src_opts(&d->text), text_tgt_opts(&d->text)};
    bd->n = (int)c.n;
    for (int s = 0; s < 2 && rc == 0; s++) {
        bd->off[s] = XNEW(size_t, c.n + 1);
        bd->off[s][0] = 0;
        for (size_t i = 0; i < c.n && rc == 0; i++) {
            const Pair *q = &c.pairs[i];
            Err te;
            if (tok_line(s ? q->tgt : q->src, s ? q->tgt_len : q->src_len, &to[s], &bd->tok[s], &te) < 0)
                rc = err_set(e, "%s:%zu: %s", path, q->line, te.msg);
            bd->off[s][i + 1] = bd->tok[s].len;
        }
    }
    corpus_free(&c);
    free(path);
    if (rc == 0) {
        bd->src = XNEW(int *, bd->n ? bd->n : 1);
        bd->tgt = XNEW(int *, bd->n ? bd->n : 1);
        bd->sl = XNEW(int, bd->n ? bd->n : 1);
        bd->tl = XNEW(int, bd->n ? bd->n : 1);
    }
    return rc;
}

/* Side s of pair i segmented at out (room for its bytes); its length. */
static size_t segment_side(const BpeDropout *bd, int s, int i, Rng *r, int *out)
{
    const char *toks = bd->tok[s].data + bd->off[s][i];
    size_t len = bd->off[s][i + 1] - bd->off[s][i], at = 0, k = 0, start, n;
    while ((n = lines_word(toks, len, &at, &start)) > 0) {
        if (bd->m[s]) {
            int32_t *o = (int32_t *)out + k;
            k += bpe_ids_word(bd->m[s], toks + start, n, bd->p, r, o);
        } else {
            out[k++] = vocab_id(bd->v[s], toks + start, n);
        }
    }
    return k;
}

int bpe_dropout_epoch(BpeDropout *bd, const PairSet *fixed, uint64_t seed, long epoch, Err *e)
{
    _Static_assert(sizeof(int) == sizeof(int32_t), "ids are int32");
    CHECK(fixed->n == bd->n);
    size_t need = bd->tok[0].len + bd->tok[1].len + 2;
    if (need > bd->cap) { /* a unit holds at least one byte */
        bd->cap = need;
        bd->ids = xrealloc_array(bd->ids, bd->cap, sizeof *bd->ids);
    }
    Rng r;
    rng_seed(&r, seed ^ rng_mix(0x6270652d64726f70ULL + (uint64_t)epoch));
    size_t at = 0;
    for (int i = 0; i < bd->n; i++) {
        int *side[2];
        for (int s = 0; s < 2; s++) {
            side[s] = bd->ids + at;
            size_t k = segment_side(bd, s, i, &r, side[s]);
            if (k > (size_t)bd->max[s] || k == 0) { /* the fixed ids */
                if (pair_check(fixed, i, e) != 0)
                    return -1;
                k = (size_t)(s ? pair_tgt_len(fixed, i) : pair_src_len(fixed, i));
                memcpy(side[s], s ? pair_tgt(fixed, i) : pair_src(fixed, i), k * sizeof(int));
            }
            (s ? bd->tl : bd->sl)[i] = (int)k;
            at += k;
        }
        bd->src[i] = side[0];
        bd->tgt[i] = side[1];
    }
    bd->set = (PairSet){.n = bd->n, .src = bd->src, .src_len = bd->sl, .tgt = bd->tgt, .tgt_len = bd->tl};
    return 0;
}

void bpe_dropout_free(BpeDropout *bd)
{
    for (int s = 0; s < 2; s++) {
        bpe_ids_free(bd->m[s]);
        buf_free(&bd->tok[s]);
        free(bd->off[s]);
    }
    free(bd->ids);
    free(bd->src);
    free(bd->tgt);
    free(bd->sl);
    free(bd->tl);
    memset(bd, 0, sizeof *bd);
}
