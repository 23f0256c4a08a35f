#include "data/prepared.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/crc32.h"
#include "base/file.h"
#include "base/json.h"
#include "text/split.h"

/* The codes files prepare.json's "bpe" names: {"source": N, "target": N}, N the
   number of merges of a side or null. */
static int load_bpe(Prepared *d, const JsonVal *bpe, const char *path, const char *dir, Err *e)
{
    static const char *const side[2] = {"source", "target"}, *const file[2] = {"bpe.src", "bpe.tgt"};
    if (!bpe || bpe->type == JSON_NULL)
        return 0;
    for (int s = 0; s < 2; s++) {
        const JsonVal *v = bpe->type == JSON_OBJECT ? json_get(bpe, side[s]) : NULL;
        if (!v || (v->type != JSON_NULL && (v->type != JSON_NUMBER || !v->is_int || v->u.num.i < 0)))
            return err_set(e, "%s: \"bpe\" must hold \"source\" and \"target\", each a count of "
                              "merges or null", path);
        if (v->type == JSON_NULL)
            continue;
        char *cp = path_join(dir, file[s]);
        int rc = bpe_load(&d->bpe[s], cp, e);
        if (rc == 0 && bpe_merges(d->bpe[s]) != (size_t)v->u.num.i)
            rc = err_set(e, "%s: %zu merges, but %s says %lld", cp, bpe_merges(d->bpe[s]), path,
                         (long long)v->u.num.i);
        free(cp);
        if (rc != 0)
            return -1;
    }
    d->text.src_bpe = d->bpe[0];
    d->text.tgt_bpe = d->bpe[1];
    return 0;
}

static int load_text_config(Prepared *d, const char *dir, Err *e)
{
    char *path = path_join(dir, "prepare.json"), *text = NULL;
    size_t len;
    int rc = -1;
    Json doc = {0};
    bool parsed = false;
    if (file_read_lines(path, &text, &len, e) != 0)
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
    int dir_ok = dir_v && dir_v->type == JSON_STRING ? direction_parse(dir_v->u.str.s, &d->text.dir) : -1;
    if (dir_ok < 0 || !kc || kc->type != JSON_BOOL) {
        err_set(e, "%s: not written by 's2s prepare' (options.direction and options.keep_case expected)", path);
        goto out;
    }
    d->text.keep_case = kc->b;
    /* the training split's OOV rates, when prepare.json has them */
    const JsonVal *sp = json_get(doc.root, "splits");
    const JsonVal *tr = sp && sp->type == JSON_OBJECT ? json_get(sp, "train") : NULL;
    for (int s = 0; s < 2; s++) {
        const JsonVal *r = tr && tr->type == JSON_OBJECT ? json_get(tr, s ? "target_oov_rate" : "source_oov_rate")
                                                         : NULL;
        d->train_oov[s] = r && r->type == JSON_NUMBER ? r->u.num.d : -1;
    }
    const JsonVal *np = tr && tr->type == JSON_OBJECT ? json_get(tr, "pairs") : NULL;
    d->train_pairs = np && np->type == JSON_NUMBER && np->is_int ? (long)np->u.num.i : -1;
    rc = load_bpe(d, json_get(doc.root, "bpe"), path, dir, e);
out:
    if (parsed)
        json_free(&doc);
    free(text);
    free(path);
    return rc;
}

/* How one side is read: its vocabulary, subword codes and tokenizer options. */
typedef struct SideCodec {
    const Vocab *v;
    const Bpe *bpe;
    TokOpts o;
} SideCodec;

/* Scratch of encode_side: the tokens of a line and their ids. */
typedef struct Encoded {
    Buf tok;
    int32_t *ids;
    size_t cap;
} Encoded;

/* Tokenizes and encodes one side into x->ids; returns the number of ids, or -1. */
static long encode_side(const SideCodec *sc, const char *s, size_t len, Encoded *x, long *unk, Err *e)
{
    buf_clear(&x->tok);
    if (bpe_tok_line(sc->bpe, s, len, &sc->o, &x->tok, e) < 0)
        return -1;
    size_t need = (x->tok.len + 1) / 2 + 1;
    if (need > x->cap) {
        x->cap = need * 2;
        x->ids = xrealloc_array(x->ids, x->cap, sizeof *x->ids);
    }
    size_t n_unk;
    size_t n = vocab_encode(sc->v, x->tok.data ? x->tok.data : "", x->tok.len, x->ids, x->cap, &n_unk);
    *unk += (long)n_unk;
    return (long)n;
}

static int load_split(Split *sp, const char *dir, const char *name, const Prepared *d, Err *e)
{
    memset(sp, 0, sizeof *sp);
    char *path = path_join(dir, name);
    /* an empty split (prepare --valid 0) is allowed */
    CorpusOpts co = corpus_opts_pairs(d->text.dir);
    co.allow_empty = true;
    int rc = corpus_read(&sp->text, path, &co, e);
    if (rc != 0) {
        free(path);
        return -1;
    }
    size_t n = sp->text.n;
    const SideCodec codec[2] = {{d->src_vocab, d->text.src_bpe, text_src_opts(&d->text)},
                                {d->tgt_vocab, d->text.tgt_bpe, text_tgt_opts(&d->text)}};
    Encoded x = {0};
    /* First pass: lengths; second: the ids into one allocation. */
    int *sl = xcalloc(n ? n : 1, sizeof *sl), *tl = xcalloc(n ? n : 1, sizeof *tl);
    size_t total = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const Pair *p = &sp->text.pairs[i];
            for (int side = 0; side < 2; side++) {
                Err te;
                long *unk = !pass ? &(long){0} : side == 0 ? &sp->src_unk : &sp->tgt_unk;
                long k = encode_side(&codec[side], side == 0 ? p->src : p->tgt, side == 0 ? p->src_len : p->tgt_len,
                                     &x, unk, &te);
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
                        dst[j] = x.ids[j];
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
            sp->ids = xmalloc_array((size_t)(total), sizeof *sp->ids);
            sp->src = xcalloc(n ? n : 1, sizeof *sp->src);
            sp->tgt = xcalloc(n ? n : 1, sizeof *sp->tgt);
        }
    }
    sp->src_len = sl;
    sp->tgt_len = tl;
    sp->set = (PairSet){.n = (int)n, .src = sp->src, .src_len = sl, .tgt = sp->tgt, .tgt_len = tl};
    buf_free(&x.tok);
    free(x.ids);
    free(path);
    return rc;
}

void prepared_print(const Prepared *d, IdsPrint *p)
{
    Buf b = {0};
    for (int s = 0; s < 2; s++) {
        buf_clear(&b);
        vocab_format(s ? d->tgt_vocab : d->src_vocab, &b);
        p->vocab[s] = crc32_update(0, b.data, b.len);
        p->bpe[s] = 0;
        if (d->bpe[s]) {
            buf_clear(&b);
            bpe_format(d->bpe[s], &b);
            uint32_t c = crc32_update(0, b.data, b.len);
            p->bpe[s] = c ? c : 1; /* never 0, which means no codes */
        }
    }
    buf_free(&b);
}

_Static_assert(sizeof(int) == sizeof(int32_t), "the mapped ids are the PairSet's ints");

/* The training split from DIR/train.ids: 1 when there is none. Nothing a pair: the set
   reads the mapping, which checks each pair as the plan first reaches it. */
static int map_split(Split *sp, const char *dir, const char *name, const Prepared *d, Err *e)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return 1; /* the ids are little-endian: read the text */
#endif
    memset(sp, 0, sizeof *sp);
    char *path = path_join(dir, name);
    IdsPrint want;
    prepared_print(d, &want);
    size_t nvocab[2] = {vocab_size(d->src_vocab), vocab_size(d->tgt_vocab)};
    int rc = ids_map(&sp->map, path, &want, nvocab, e);
    if (rc == 0 && d->train_pairs >= 0 && sp->map.view.n != (size_t)d->train_pairs) {
        /* another split's file copied over it: the fingerprint cannot tell */
        err_set(e, "%s: holds %zu pairs, but prepare.json gives the training split %ld (another split's "
                   "file?); run 's2s prepare' again to rewrite it", path, sp->map.view.n, d->train_pairs);
        ids_unmap(&sp->map);
        rc = -1;
    }
    free(path);
    if (rc != 0)
        return rc;
    sp->set = (PairSet){.n = (int)sp->map.view.n, .ids = &sp->map.view};
    return 0;
}

static void group_sources(Split *sp)
{
    corpus_group_sources(&sp->text, &sp->groups);
    size_t n = sp->groups.n ? sp->groups.n : 1;
    sp->gsrc = xmalloc_array(n, sizeof *sp->gsrc);
    sp->gsrc_len = xmalloc_array(n, sizeof *sp->gsrc_len);
    for (size_t g = 0; g < sp->groups.n; g++) {
        size_t first = sp->groups.member[sp->groups.start[g]];
        sp->gsrc[g] = sp->src[first];
        sp->gsrc_len[g] = sp->src_len[first];
    }
}

static void split_free(Split *sp)
{
    source_groups_free(&sp->groups);
    free(sp->gsrc);
    free(sp->gsrc_len);
    corpus_free(&sp->text);
    free(sp->ids);
    free(sp->src);
    free(sp->tgt);
    free(sp->src_len);
    free(sp->tgt_len);
    ids_unmap(&sp->map);
    memset(sp, 0, sizeof *sp);
}

/* prepare.json, the codes and the vocabularies. */
static int load_head(Prepared *d, const char *dir, Err *e)
{
    memset(d, 0, sizeof *d);
    d->dir = xstrdup(dir);
    char *vs = path_join(dir, "vocab.src"), *vt = path_join(dir, "vocab.tgt");
    int rc = load_text_config(d, dir, e) != 0 || vocab_load(&d->src_vocab, vs, e) != 0 ||
                     vocab_load(&d->tgt_vocab, vt, e) != 0
                 ? -1
                 : 0;
    free(vs);
    free(vt);
    return rc;
}

int prepared_write_ids(const char *dir, Err *e)
{
    Prepared d;
    int rc = load_head(&d, dir, e);
    IdsPrint print;
    if (rc == 0)
        prepared_print(&d, &print);
    for (int s = 0; rc == 0 && s < SPLIT_COUNT; s++) {
        Split sp;
        rc = load_split(&sp, dir, prepared_files[s], &d, e);
        if (rc == 0) {
            char *path = path_join(dir, prepared_ids_files[s]);
            IdsPairs pairs = {sp.set.n, sp.src, sp.src_len, sp.tgt, sp.tgt_len};
            rc = ids_write(path, &pairs, &print, e);
            free(path);
        }
        split_free(&sp);
    }
    prepared_free(&d);
    return rc;
}

int prepared_load(Prepared *d, const char *dir, Err *e)
{
    int rc = -1;
    if (load_head(d, dir, e) != 0)
        goto out;
    int m = map_split(&d->train, dir, prepared_ids_files[SPLIT_TRAIN], d, e);
    if (m < 0 || (m == 1 && load_split(&d->train, dir, prepared_files[SPLIT_TRAIN], d, e) != 0) ||
        load_split(&d->valid, dir, prepared_files[SPLIT_VALID], d, e) != 0)
        goto out;
    group_sources(&d->valid);
    if (d->train.set.n == 0) {
        err_set(e, "%s/train.tsv: no sentence pairs", dir);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        prepared_free(d);
    return rc;
}

void prepared_free(Prepared *d)
{
    free(d->dir);
    vocab_free(d->src_vocab);
    vocab_free(d->tgt_vocab);
    bpe_free(d->bpe[0]);
    bpe_free(d->bpe[1]);
    split_free(&d->train);
    split_free(&d->valid);
    memset(d, 0, sizeof *d);
}
