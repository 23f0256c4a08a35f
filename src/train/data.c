#include "train/data.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/json.h"

static int load_text_config(TextConfig *t, const char *dir, Err *e)
{
    char *path = path_join(dir, "prepare.json"), *text = NULL;
    size_t len;
    int rc = -1;
    Json doc = {0};
    bool parsed = false;
    if (file_read_all(path, &text, &len, e) != 0)
        goto out;
    Err je;
    if (json_parse(&doc, text, len, &je) != 0) {
        err_set(e, "%s: %s", path, je.msg);
        goto out;
    }
    parsed = true;
    const JsonVal *opts = doc.root->type == JSON_OBJECT ? json_get(doc.root, "options") : NULL;
    const JsonVal *dir_v = opts && opts->type == JSON_OBJECT ? json_get(opts, "direction") : NULL;
    const JsonVal *kc = opts && opts->type == JSON_OBJECT ? json_get(opts, "keep_case") : NULL;
    int d = dir_v && dir_v->type == JSON_STRING ? direction_parse(dir_v->u.str.s) : -1;
    if (d < 0 || !kc || kc->type != JSON_BOOL) {
        err_set(e, "%s: not written by 's2s prepare' (options.direction and options.keep_case expected)", path);
        goto out;
    }
    t->dir = (Direction)d;
    t->keep_case = kc->b;
    rc = 0;
out:
    if (parsed)
        json_free(&doc);
    free(text);
    free(path);
    return rc;
}

/* Tokenizes and encodes one side; returns the number of ids, or -1. */
static long encode_side(const Vocab *v, const char *s, size_t len, const TokOpts *o, Buf *tok,
                        int32_t **ids, size_t *cap, long *unk, Err *e)
{
    buf_clear(tok);
    if (tok_line(s, len, o, tok, e) < 0)
        return -1;
    size_t need = (tok->len + 1) / 2 + 1;
    if (need > *cap) {
        *cap = need * 2;
        *ids = xrealloc(*ids, *cap * sizeof **ids);
    }
    size_t n_unk;
    size_t n = vocab_encode(v, tok->data ? tok->data : "", tok->len, *ids, *cap, &n_unk);
    *unk += (long)n_unk;
    return (long)n;
}

static int load_split(Split *sp, const char *dir, const char *name, const TrainData *d, Err *e)
{
    memset(sp, 0, sizeof *sp);
    char *path = path_join(dir, name);
    CorpusOpts co = {.dir = DIR_EN_FR, .skip_bad = false};
    int rc = corpus_read(&sp->text, path, &co, e);
    if (rc != 0 && strstr(e->msg, ": no sentence pairs")) {
        /* An empty split (prepare --valid 0) is allowed. */
        rc = 0;
        memset(&sp->text, 0, sizeof sp->text);
        sp->text.name = xstrdup(path);
    }
    if (rc != 0) {
        free(path);
        return -1;
    }
    size_t n = sp->text.n;
    TokOpts so = text_src_opts(&d->text), to = text_tgt_opts(&d->text);
    Buf tok = {0};
    int32_t *tmp = NULL;
    size_t cap = 0;
    /* First pass: lengths; second: the ids into one allocation. */
    int *sl = xcalloc(n ? n : 1, sizeof *sl), *tl = xcalloc(n ? n : 1, sizeof *tl);
    size_t total = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const Pair *p = &sp->text.pairs[i];
            for (int side = 0; side < 2; side++) {
                Err te;
                long k = side == 0 ? encode_side(d->src_vocab, p->src, p->src_len, &so, &tok, &tmp,
                                                 &cap, pass ? &sp->src_unk : &(long){0}, &te)
                                   : encode_side(d->tgt_vocab, p->tgt, p->tgt_len, &to, &tok, &tmp,
                                                 &cap, pass ? &sp->tgt_unk : &(long){0}, &te);
                if (k < 0) {
                    rc = err_set(e, "%s:%zu: %s", path, p->line, te.msg);
                    break;
                }
                if (k == 0) {
                    rc = err_set(e, "%s:%zu: the %s side has no tokens", path, p->line,
                                 side == 0 ? "source" : "target");
                    break;
                }
                if (k > 100000) {
                    rc = err_set(e, "%s:%zu: more than 100000 tokens", path, p->line);
                    break;
                }
                if (pass == 0) {
                    (side == 0 ? sl : tl)[i] = (int)k;
                    total += (size_t)k;
                } else {
                    int *dst = sp->ids + at;
                    for (long j = 0; j < k; j++)
                        dst[j] = tmp[j];
                    if (side == 0) {
                        sp->src[i] = dst;
                        sp->src_tokens += k;
                    } else {
                        sp->tgt[i] = dst;
                        sp->tgt_tokens += k;
                    }
                    at += (size_t)k;
                }
            }
            if (rc != 0)
                break;
        }
        if (pass == 0 && rc == 0) {
            sp->ids = xmalloc((total ? total : 1) * sizeof *sp->ids);
            sp->src = xcalloc(n ? n : 1, sizeof *sp->src);
            sp->tgt = xcalloc(n ? n : 1, sizeof *sp->tgt);
        }
    }
    sp->src_len = sl;
    sp->tgt_len = tl;
    sp->set = (PairSet){.n = (int)n, .src = sp->src, .src_len = sl, .tgt = sp->tgt, .tgt_len = tl};
    buf_free(&tok);
    free(tmp);
    free(path);
    return rc;
}

static int by_source_text(const void *a, const void *b, void *arg)
{
    const Pair *p = arg;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(p[x].src, p[y].src);
    return c ? c : (x > y) - (x < y);
}

static int by_first_member(const void *a, const void *b, void *arg)
{
    const int *first = arg;
    int x = first[*(const int *)a], y = first[*(const int *)b];
    return (x > y) - (x < y);
}

static void group_sources(Split *sp)
{
    int n = sp->set.n;
    int *idx = xmalloc((size_t)(n ? n : 1) * sizeof *idx);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, by_source_text, sp->text.pairs);
    /* runs of equal text, each in file order; then the runs ordered by first pair */
    int *run_start = xmalloc((size_t)(n + 1) * sizeof *run_start), nrun = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(sp->text.pairs[idx[i]].src, sp->text.pairs[idx[i - 1]].src) != 0)
            run_start[nrun++] = i;
    run_start[nrun] = n;
    int *first = xmalloc((size_t)(nrun ? nrun : 1) * sizeof *first);
    int *order = xmalloc((size_t)(nrun ? nrun : 1) * sizeof *order);
    for (int g = 0; g < nrun; g++) {
        first[g] = idx[run_start[g]];
        order[g] = g;
    }
    qsort_r(order, (size_t)nrun, sizeof *order, by_first_member, first);
    sp->ngroups = nrun;
    sp->gstart = xmalloc((size_t)(nrun + 1) * sizeof *sp->gstart);
    sp->member = xmalloc((size_t)(n ? n : 1) * sizeof *sp->member);
    sp->gsrc = xmalloc((size_t)(nrun ? nrun : 1) * sizeof *sp->gsrc);
    sp->gsrc_len = xmalloc((size_t)(nrun ? nrun : 1) * sizeof *sp->gsrc_len);
    int at = 0;
    for (int k = 0; k < nrun; k++) {
        int g = order[k];
        sp->gstart[k] = at;
        for (int i = run_start[g]; i < run_start[g + 1]; i++)
            sp->member[at++] = idx[i];
        sp->gsrc[k] = sp->src[first[g]];
        sp->gsrc_len[k] = sp->src_len[first[g]];
    }
    sp->gstart[nrun] = at;
    free(order);
    free(first);
    free(run_start);
    free(idx);
}

static void split_free(Split *sp)
{
    free(sp->gstart);
    free(sp->member);
    free(sp->gsrc);
    free(sp->gsrc_len);
    corpus_free(&sp->text);
    free(sp->ids);
    free(sp->src);
    free(sp->tgt);
    free(sp->src_len);
    free(sp->tgt_len);
    memset(sp, 0, sizeof *sp);
}

int train_data_load(TrainData *d, const char *dir, Err *e)
{
    memset(d, 0, sizeof *d);
    d->dir = xstrdup(dir);
    char *vs = path_join(dir, "vocab.src"), *vt = path_join(dir, "vocab.tgt");
    int rc = -1;
    if (load_text_config(&d->text, dir, e) != 0 || vocab_load(&d->src_vocab, vs, e) != 0 ||
        vocab_load(&d->tgt_vocab, vt, e) != 0 || load_split(&d->train, dir, "train.tsv", d, e) != 0 ||
        load_split(&d->valid, dir, "valid.tsv", d, e) != 0)
        goto out;
    group_sources(&d->valid);
    if (d->train.set.n == 0) {
        err_set(e, "%s/train.tsv: no sentence pairs", dir);
        goto out;
    }
    rc = 0;
out:
    free(vs);
    free(vt);
    if (rc != 0)
        train_data_free(d);
    return rc;
}

void train_data_free(TrainData *d)
{
    free(d->dir);
    vocab_free(d->src_vocab);
    vocab_free(d->tgt_vocab);
    split_free(&d->train);
    split_free(&d->valid);
    memset(d, 0, sizeof *d);
}
