/* Valid and test sets from outside the corpus; see outside.h. */
#include "data/outside.h"

#include <stdlib.h>
#include <string.h>

static int by_source(const void *a, const void *b, void *arg)
{
    const Outside *x = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(x->toks.data + x->soff[i], x->toks.data + x->soff[j]);
    return c ? c : (i > j) - (i < j);
}

int outside_load(Outside *x, const char *src_path, const char *tgt_path, const TokOpts *src,
                 const TokOpts *tgt, Lang src_lang, Lang tgt_lang, Err *e)
{
    memset(x, 0, sizeof *x);
    CorpusOpts co = corpus_opts_pairs(direction_make(src_lang, tgt_lang));
    if (corpus_read_parallel(&x->c, src_path, tgt_path, &co, e) != 0)
        return -1;
    size_t n = x->c.n;
    x->soff = XNEW(size_t, n);
    x->toff = XNEW(size_t, n);
    x->sorted = XNEW(size_t, n);
    const TokOpts *opt[2] = {src, tgt};
    const Lang lang[2] = {src_lang, tgt_lang};
    for (size_t i = 0; i < n; i++) {
        const Pair *p = &x->c.pairs[i];
        const char *s[2] = {p->src, p->tgt};
        size_t len[2] = {p->src_len, p->tgt_len};
        size_t *off[2] = {&x->soff[i], &x->toff[i]};
        for (int k = 0; k < 2; k++) {
            *off[k] = x->toks.len;
            Err inner;
            long got = tok_line(s[k], len[k], opt[k], &x->toks, &inner);
            if (got <= 0) {
                if (got < 0)
                    err_set(e, "%s:%zu: %s", corpus_file(&x->c, k), p->line, inner.msg);
                else
                    err_set(e, "%s:%zu: %s side has no tokens", corpus_file(&x->c, k), p->line,
                            lang_label(&lang[k]));
                outside_free(x);
                return -1;
            }
            buf_putc(&x->toks, '\0');
        }
        x->sorted[i] = i;
    }
    qsort_r(x->sorted, n, sizeof *x->sorted, by_source, x);
    return 0;
}

size_t outside_find(const Outside *x, const char *toks, size_t len)
{
    size_t lo = 0, hi = x->c.n;
    while (lo < hi) { /* the first entry not below toks */
        size_t mid = lo + (hi - lo) / 2;
        const char *s = x->toks.data + x->soff[x->sorted[mid]];
        size_t n = strlen(s);
        int c = memcmp(s, toks, n < len ? n : len);
        if (c < 0 || (c == 0 && n < len))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->c.n)
        return 0;
    const char *s = x->toks.data + x->soff[x->sorted[lo]];
    if (strlen(s) != len || memcmp(s, toks, len) != 0)
        return 0;
    return x->c.pairs[x->sorted[lo]].line;
}

int outside_check_disjoint(const Outside *valid, const Outside *test, Err *e)
{
    for (size_t i = 0; i < valid->c.n; i++) {
        const char *s = valid->toks.data + valid->soff[i];
        size_t line = outside_find(test, s, strlen(s));
        if (line)
            return err_set(e, "%s:%zu: same source sentence as %s:%zu; the valid and test files "
                              "must not overlap", valid->c.name, valid->c.pairs[i].line,
                           test->c.name, line);
    }
    return 0;
}

void outside_write(const Outside *x, const Vocab *src, const Vocab *tgt, Buf *out, size_t *pairs,
                   uint64_t tokens[2], uint64_t unk[2])
{
    for (size_t i = 0; i < x->c.n; i++) {
        const Pair *p = &x->c.pairs[i];
        const char *st = x->toks.data + x->soff[i], *tt = x->toks.data + x->toff[i];
        size_t u;
        tokens[0] += vocab_encode(src, st, strlen(st), NULL, 0, &u);
        unk[0] += u;
        tokens[1] += vocab_encode(tgt, tt, strlen(tt), NULL, 0, &u);
        unk[1] += u;
        buf_append(out, p->src, p->src_len);
        buf_putc(out, '\t');
        buf_append(out, p->tgt, p->tgt_len);
        buf_putc(out, '\n');
    }
    *pairs += x->c.n;
}

void outside_free(Outside *x)
{
    corpus_free(&x->c);
    buf_free(&x->toks);
    free(x->soff);
    free(x->toff);
    free(x->sorted);
    memset(x, 0, sizeof *x);
}
