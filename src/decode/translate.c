#include "decode/translate.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/beam.h"
#include "decode/greedy.h"
#include "text/bpe.h"
#include "text/sentences.h"
#include "text/tokenize.h"
#include "data/batch.h"

_Static_assert(sizeof(int) == sizeof(int32_t), "token ids are stored as int and int32_t");

void translate_free(char **out, int n)
{
    for (int i = 0; i < n; i++) {
        free(out[i]);
        out[i] = NULL;
    }
}

/* Appends to toks the output tokens of ids[0..len), separated by spaces; with srctok,
   an <unk> becomes srctok[pos[k]]. */
static void hyp_tokens(const Vocab *tgt, const int *ids, int len, char *const *srctok,
                       const int *pos, Buf *toks)
{
    for (int k = 0; k < len; k++) {
        if (k)
            buf_putc(toks, ' ');
        if (srctok && ids[k] == VOCAB_UNK)
            buf_puts(toks, srctok[pos[k]]);
        else
            buf_puts(toks, vocab_token(tgt, ids[k]));
    }
}

/* Joins the target's subword units (when it has BPE codes) and detokenizes. */
static void detok(const Buf *toks, const TextConfig *tc, Buf *out)
{
    if (!toks->len)
        return;
    if (!tc->tgt_bpe) {
        detok_line(toks->data, toks->len, text_tgt_opts(tc).lang, out);
        return;
    }
    Buf words = {0};
    bpe_join(toks->data, toks->len, &words);
    if (words.len)
        detok_line(words.data, words.len, text_tgt_opts(tc).lang, out);
    buf_free(&words);
}

void translate_detok(const Vocab *tgt, const TextConfig *tc, const int *ids, int len, Buf *out)
{
    Buf toks = {0};
    hyp_tokens(tgt, ids, len, NULL, NULL, &toks);
    detok(&toks, tc, out);
    buf_free(&toks);
}

void translate_result_free(TranslateResult *r)
{
    for (int i = 0; i < r->n; i++) {
        for (int k = 0; k < r->count[i]; k++)
            free(r->hyps[i][k].text);
        free(r->hyps[i]);
        if (r->align) {
            TranslateAlign *a = &r->align[i];
            for (int j = 0; j < a->nsrc; j++)
                free(a->src[j]);
            for (int j = 0; j < a->ntgt; j++)
                free(a->tgt[j]);
            free(a->src);
            free(a->tgt);
            free(a->w);
        }
    }
    free(r->count);
    free(r->hyps);
    free(r->align);
    memset(r, 0, sizeof *r);
}

/* Splits the space-separated tokens t[0..len) into xstrndup'd strings; returns how many. */
static int split_tokens(const char *t, size_t len, char **out)
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && t[j] != ' ')
            j++;
        if (j > i)
            out[n++] = xstrndup(t + i, j - i);
        i = j + 1;
    }
    return n;
}

/* The sources of one call as token ids: line i is ids[off[i] .. off[i] + len[i]),
   its tokens as the tokenizer wrote them tok[off[i] ..]. */
typedef struct Sources {
    int n;
    int *ids;
    int **line;   /* (n) ids + off[i] */
    int *len;     /* (n) tokens */
    char **tok;   /* (total) */
    size_t total;
} Sources;

static void sources_free(Sources *s)
{
    for (size_t k = 0; k < s->total; k++)
        free(s->tok[k]);
    free(s->tok);
    free(s->line);
    free(s->len);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* Checks one line and appends its (sub)word tokens to arena: the token count, or -1
   with e set. A NUL byte would read as a space, so it is refused (bad UTF-8 before it
   first), as is a line longer than max_src tokens. */
static long tokenize_line(const ModelFile *mf, const TranslateInput *in, int i, int max_src,
                          Buf *arena, Err *e)
{
    size_t len = in->lens ? in->lens[i] : strlen(in->lines[i]);
    long ln = in->line_no ? in->line_no[i] : (long)i + 1;
    const char *line = in->lines[i], *nul = memchr(line, '\0', len);
    TokOpts so = text_src_opts(&mf->text);
    Err te;
    long nt;
    if (nul && tok_check_utf8(line, (size_t)(nul - line), &te) != 0)
        return err_set(e, "%s:%ld: %s", in->name, ln, te.msg);
    if (nul)
        return err_set(e, "%s:%ld: NUL byte at byte %zu", in->name, ln, (size_t)(nul - line) + 1);
    if ((nt = bpe_tok_line(mf->text.src_bpe, line, len, &so, arena, &te)) < 0)
        return err_set(e, "%s:%ld: %s", in->name, ln, te.msg);
    if (nt > max_src)
        return err_set(e, "%s:%ld: too long to translate: %ld tokens (at most %d for this model, "
                          "beam size and output length limit)", in->name, ln, nt, max_src);
    return nt;
}

/* Tokenizes every line (all checked before any is encoded), then encodes them with
   the source vocabulary; counts into *s. 0, or -1 with e set and *src empty. */
static int encode_sources(const ModelFile *mf, const TranslateInput *in, int max_src, Sources *src,
                          TranslateStats *s, Err *e)
{
    const int n = in->n;
    size_t cnt = n ? (size_t)n : 1;
    memset(src, 0, sizeof *src);
    Buf arena = {0};
    size_t *toff = xmalloc_array(cnt, sizeof *toff), *tlen = xmalloc_array(cnt, sizeof *tlen);
    int *slen = xmalloc_array(cnt, sizeof *slen);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        toff[i] = arena.len;
        long nt = tokenize_line(mf, in, i, max_src, &arena, e);
        if (nt < 0) {
            buf_free(&arena);
            free(toff);
            free(tlen);
            free(slen);
            return -1;
        }
        tlen[i] = arena.len - toff[i];
        slen[i] = (int)nt;
        total += (size_t)nt;
        if (nt > 0)
            s->sentences++;
    }

    /* Token ids, and the source tokens as strings. */
    *src = (Sources){.n = n, .ids = xmalloc_array(total, sizeof *src->ids),
                     .line = xmalloc_array(cnt, sizeof *src->line), .len = slen,
                     .tok = xmalloc_array(total, sizeof *src->tok), .total = total};
    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        src->line[i] = src->ids + pos;
        size_t unk = 0;
        const char *t = arena.data ? arena.data + toff[i] : "";
        size_t got = vocab_encode(mf->src, t, tlen[i], (int32_t *)(src->ids + pos), (size_t)slen[i],
                                  &unk);
        CHECK(got == (size_t)slen[i]);
        CHECK(split_tokens(t, tlen[i], src->tok + pos) == slen[i]);
        pos += got;
        s->src_unk += (long)unk;
    }
    s->src_tokens = (long)total;
    buf_free(&arena);
    free(toff);
    free(tlen);
    return 0;
}

/* The attention of the best hypothesis of a line with source tokens stok[0..nsrc). */
static void fill_align(TranslateAlign *a, const BeamHyp *best, char *const *stok, int nsrc,
                       const Vocab *tgt, bool replace_unk)
{
    a->nsrc = nsrc;
    a->ntgt = best->len + best->eos;
    a->src = xmalloc_array((size_t)a->nsrc, sizeof *a->src);
    a->tgt = xmalloc_array((size_t)a->ntgt, sizeof *a->tgt);
    for (int j = 0; j < a->nsrc; j++)
        a->src[j] = xstrdup(stok[j]);
    for (int k = 0; k < best->len; k++) {
        int id = best->ids[k];
        a->tgt[k] = xstrdup(replace_unk && id == VOCAB_UNK ? stok[best->src_pos[k]]
                                                           : vocab_token(tgt, id));
    }
    if (best->eos)
        a->tgt[best->len] = xstrdup(vocab_token(tgt, VOCAB_EOS));
    a->w = xmalloc_array((size_t)a->ntgt * a->nsrc, sizeof *a->w);
    memcpy(a->w, best->attn, (size_t)a->ntgt * a->nsrc * sizeof *a->w);
}

/* The hypotheses of h as text (and alignments with o->attention) into res; output
   tokens into s. */
static void fill_result(TranslateResult *res, const BeamOut *h, const Sources *src,
                        const ModelFile *mf, const TranslateOpts *o, TranslateStats *s)
{
    const int n = src->n;
    size_t cnt = n ? (size_t)n : 1;
    res->n = n;
    res->count = xcalloc(cnt, sizeof *res->count);
    res->hyps = xcalloc(cnt, sizeof *res->hyps);
    if (o->attention)
        res->align = xcalloc(cnt, sizeof *res->align);
    Buf toks = {0}, text = {0};
    for (int i = 0; i < n; i++) {
        char **st_i = src->tok + (src->line[i] - src->ids);
        res->count[i] = h->count[i];
        res->hyps[i] = xmalloc_array((size_t)h->count[i], sizeof **res->hyps);
        for (int k = 0; k < h->count[i]; k++) {
            const BeamHyp *bh = &h->hyps[i][k];
            buf_clear(&toks);
            buf_clear(&text);
            hyp_tokens(mf->tgt, bh->ids, bh->len, o->replace_unk ? st_i : NULL, bh->src_pos, &toks);
            detok(&toks, &mf->text, &text);
            res->hyps[i][k] = (TranslateHyp){xstrndup(text.data ? text.data : "", text.len), bh->score};
        }
        s->hyp_tokens += h->hyps[i][0].len;
        if (o->attention && src->len[i] > 0)
            fill_align(&res->align[i], &h->hyps[i][0], st_i, src->len[i], mf->tgt, o->replace_unk);
    }
    buf_free(&toks);
    buf_free(&text);
}

static long encode_text(const char *text, size_t len, const TokOpts *to, const Bpe *bpe,
                        const Vocab *v, Buf *scratch, int **ids, Err *e);

void translate_cons_free(TranslateCons *c)
{
    for (int k = 0; k < c->n; k++)
        free(c->phrases[k]);
    for (int k = 0; k < c->navoid; k++)
        free(c->avoid[k]);
    free(c->phrases);
    free(c->avoid);
    free(c->prefix);
    memset(c, 0, sizeof *c);
}

/* The constraints of a call as target ids: bc[i] for the lines that have some, ptr[i]
   pointing to it (NULL for the others). */
typedef struct ConsIds {
    int n;
    BeamCons *bc;
    const BeamCons **ptr;
    bool *glue; /* (target vocabulary) units inside a word, with target codes */
} ConsIds;

static void cons_ids_free(ConsIds *c)
{
    for (int i = 0; i < c->n; i++) {
        BeamCons *b = &c->bc[i];
        for (int k = 0; k < b->n; k++)
            free((int *)b->tok[k]);
        for (int k = 0; k < b->navoid; k++)
            free((int *)b->avoid[k]);
        free((int **)b->tok);
        free((int *)b->len);
        free((int **)b->avoid);
        free((int *)b->alen);
        free((int *)b->prefix);
    }
    free(c->bc);
    free(c->ptr);
    free(c->glue);
    memset(c, 0, sizeof *c);
}

/* A phrase as target ids (*ids, xmalloc'd): its token count; 0 when it has none; -1
   with e set ("WHAT: ..."). With unk_ok, a phrase holding a word the vocabulary lacks
   gives -2 instead of an error. */
static long cons_phrase(const ModelFile *mf, const char *what, const char *text, Buf *scratch, int **ids,
                        bool unk_ok, Err *e)
{
    TokOpts to = text_tgt_opts(&mf->text);
    Err te;
    *ids = NULL;
    long nt = encode_text(text, strlen(text), &to, mf->text.tgt_bpe, mf->tgt, scratch, ids, &te);
    if (nt < 0)
        return err_set(e, "%s: %s", what, te.msg);
    for (long k = 0; k < nt; k++) {
        if ((*ids)[k] != VOCAB_UNK)
            continue;
        if (unk_ok)
            return -2;
        const char *t = scratch->data;
        for (long j = 0; j < k; j++)
            t = strchr(t, ' ') + 1;
        const char *end = strchr(t, ' ');
        return err_set(e, "%s: '%.*s' is not in the model's target vocabulary", what,
                       (int)(end ? end - t : (long)strlen(t)), t);
    }
    return nt;
}

/* Whether phrase a[0..na) holds b[0..nb) contiguously. */
static bool holds(const int *a, int na, const int *b, int nb)
{
    for (int i = 0; i + nb <= na; i++)
        if (!memcmp(a + i, b, (size_t)nb * sizeof *a))
            return true;
    return false;
}

/* The constraints of line i (source of src_len tokens) into b: 0, or -1 with e set. */
static int cons_line(const ModelFile *mf, const TranslateInput *in, int i, int src_len, int max_len,
                     BeamCons *b, Err *e)
{
    const TranslateCons *c = &in->cons[i];
    long ln = in->line_no ? in->line_no[i] : (long)i + 1;
    Buf scratch = {0};
    char what[64];
    Err pe;
    int rc = 0;
    memset(b, 0, sizeof *b);
    if (c->n > BEAM_MAX_CONSTRAINTS) {
        err_set(e, "%s:%ld: more than %d constraints", in->name, ln, BEAM_MAX_CONSTRAINTS);
        return -1;
    }
    int **tok = XCNEW(int *, c->n ? c->n : 1), *len = XCNEW(int, c->n ? c->n : 1);
    int **av = XCNEW(int *, c->navoid ? c->navoid : 1), *alen = XCNEW(int, c->navoid ? c->navoid : 1);
    *b = (BeamCons){.tok = (const int *const *)tok, .len = len, .avoid = (const int *const *)av, .alen = alen};
    long need = 0;
    for (int k = 0; k < c->n && rc == 0; k++) {
        snprintf(what, sizeof what, "constraint %d", k + 1);
        long nt = cons_phrase(mf, what, c->phrases[k], &scratch, &tok[k], false, &pe);
        b->n++;
        if (nt < 0)
            rc = err_set(e, "%s:%ld: %s", in->name, ln, pe.msg);
        else if (nt == 0)
            rc = err_set(e, "%s:%ld: constraint %d is empty", in->name, ln, k + 1);
        len[k] = (int)nt;
        need += nt;
    }
    for (int k = 0; k < c->navoid && rc == 0; k++) {
        snprintf(what, sizeof what, "avoided phrase %d", k + 1);
        int *ids;
        long nt = cons_phrase(mf, what, c->avoid[k], &scratch, &ids, true, &pe);
        if (nt == -2) { /* a word the model cannot write: nothing to bar */
            free(ids);
            continue;
        }
        if (nt < 0)
            rc = err_set(e, "%s:%ld: %s", in->name, ln, pe.msg);
        else if (nt == 0)
            rc = err_set(e, "%s:%ld: avoided phrase %d is empty", in->name, ln, k + 1);
        av[b->navoid] = ids;
        alen[b->navoid++] = (int)nt;
        for (int j = 0; j < b->n && rc == 0; j++)
            if (holds(tok[j], len[j], ids, (int)nt))
                rc = err_set(e, "%s:%ld: constraint %d holds avoided phrase %d", in->name, ln, j + 1, k + 1);
    }
    if (c->prefix && rc == 0) {
        int *ids;
        long nt = cons_phrase(mf, "the prefix", c->prefix, &scratch, &ids, false, &pe);
        b->prefix = ids;
        b->nprefix = nt > 0 ? (int)nt : 0;
        if (nt < 0)
            rc = err_set(e, "%s:%ld: %s", in->name, ln, pe.msg);
        else if (nt == 0)
            rc = err_set(e, "%s:%ld: the prefix is empty", in->name, ln);
        need += nt;
    }
    int lim = decode_limit(&mf->model, src_len, max_len);
    if (rc == 0 && need > lim)
        rc = err_set(e, "%s:%ld: the prefix and the constraints need %ld tokens, more than the output limit of "
                        "this sentence (%d; --max-len)",
                     in->name, ln, need, lim);
    buf_free(&scratch);
    return rc;
}

/* Whether word w[0..n) is a number to copy: 1 to 18 ASCII digits. */
static bool is_number(const char *w, size_t n)
{
    if (n == 0 || n > 18)
        return false;
    for (size_t k = 0; k < n; k++)
        if (w[k] < '0' || w[k] > '9')
            return false;
    return true;
}

/* TranslateOpts.copy_numbers: appends to b, as constraints, the numbers among the n
   source tokens tok (words, their subword units joined, that is_number), each once and
   in source order, while the constraints and the prefix fit in lim tokens and there are
   fewer than BEAM_MAX_CONSTRAINTS. A number the target vocabulary cannot write, one an
   earlier constraint already holds and one holding an avoided phrase are left out:
   copying never makes a line fail. */
static void cons_numbers(const ModelFile *mf, char *const *tok, int n, int lim, BeamCons *b)
{
    long need = b->nprefix;
    for (int k = 0; k < b->n; k++)
        need += b->len[k];
    Buf word = {0}, scratch = {0};
    Err pe;
    for (int t = 0; t < n; t++) {
        size_t tl = strlen(tok[t]);
        bool glued = bpe_glued(tok[t]);
        buf_append(&word, tok[t], glued ? tl - 2 : tl);
        if (glued && t + 1 < n)
            continue;
        bool num = is_number(word.data, word.len);
        if (num) {
            buf_putc(&word, '\0');
            int *ids;
            long nt = cons_phrase(mf, "a number", word.data, &scratch, &ids, true, &pe);
            bool keep = nt > 0 && need + nt <= lim && b->n < BEAM_MAX_CONSTRAINTS;
            for (int j = 0; j < b->n && keep; j++)
                keep = !holds(b->tok[j], b->len[j], ids, (int)nt);
            for (int j = 0; j < b->navoid && keep; j++)
                keep = !holds(ids, (int)nt, b->avoid[j], b->alen[j]);
            if (keep) {
                int **ptok = (int **)b->tok, *plen = (int *)b->len;
                XRENEW(ptok, b->n + 1);
                XRENEW(plen, b->n + 1);
                ptok[b->n] = ids;
                plen[b->n] = (int)nt;
                b->tok = (const int *const *)ptok;
                b->len = plen;
                b->n++;
                need += nt;
            } else {
                free(ids);
            }
        }
        buf_clear(&word);
    }
    buf_free(&word);
    buf_free(&scratch);
}

/* The constraints of every line of in, and with copy_numbers the numbers of each
   source (none at all: ids->ptr NULL). */
static int cons_encode(const ModelFile *mf, const TranslateInput *in, const Sources *src, int max_len,
                       bool copy_numbers, ConsIds *ids, Err *e)
{
    memset(ids, 0, sizeof *ids);
    if (!in->cons && !copy_numbers)
        return 0;
    ids->n = in->n;
    ids->bc = XCNEW(BeamCons, in->n ? in->n : 1);
    ids->ptr = XCNEW(const BeamCons *, in->n ? in->n : 1);
    bool any = false;
    for (int i = 0; i < in->n; i++) {
        BeamCons *b = &ids->bc[i];
        if (src->len[i] == 0)
            continue;
        if (in->cons && !translate_cons_empty(&in->cons[i]) &&
            cons_line(mf, in, i, src->len[i], max_len, b, e) != 0) {
            cons_ids_free(ids);
            return -1;
        }
        if (copy_numbers)
            cons_numbers(mf, src->tok + (src->line[i] - src->ids), src->len[i],
                         decode_limit(&mf->model, src->len[i], max_len), b);
        if (b->n == 0 && b->navoid == 0 && b->nprefix == 0)
            continue; /* decoded by the unconstrained beam */
        if (mf->text.tgt_bpe && !ids->glue) /* only once a line has constraints */
            ids->glue = bpe_glue_table(mf->tgt);
        b->glue = ids->glue;
        ids->ptr[i] = b;
        any = true;
    }
    if (!any)
        cons_ids_free(ids); /* no line has constraints: ids->ptr NULL */
    return 0;
}

/* translate_run without splitting: each line of in decoded whole. */
static int run_lines(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o,
                     TranslateResult *res, TranslateStats *st, Err *e)
{
    const int K = o->beam > 1 ? o->beam : 1, N = o->nbest > 1 ? o->nbest : 1;
    Model *m = &mf->model;
    CHECK(in->n >= 0 && o->batch >= 1 && o->max_len >= 0 && N <= K && o->alpha >= 0);
    CHECK(vocab_size(mf->src) == (size_t)m->cfg.src_vocab &&
          vocab_size(mf->tgt) == (size_t)m->cfg.tgt_vocab);
    memset(res, 0, sizeof *res);
    TranslateStats s = {.lines = in->n};
    Sources src;
    if (encode_sources(mf, in, beam_max_src_len(m, o->max_len, K, o->attention), &src, &s,
                       e) != 0)
        return -1;

    ConsIds cons;
    if (cons_encode(mf, in, &src, o->max_len, o->copy_numbers, &cons, e) != 0) {
        sources_free(&src);
        return -1;
    }
    PairSet d = {.n = src.n, .src = src.line, .src_len = src.len};
    BeamOpts bo = {.beam = K, .nbest = N, .batch = o->batch, .max_len = o->max_len,
                   .alpha = o->alpha, .attention = o->attention, .attention_layer = o->attention_layer,
                   .attention_head = o->attention_head, .cons = cons.ptr};
    BeamOut h;
    if (beam_decode(m, &d, &bo, &h, e) != 0)
        BUG("%s", e->msg); /* the ids come from the model's own vocabulary */
    fill_result(res, &h, &src, mf, o, &s);
    beam_out_free(&h);
    cons_ids_free(&cons);
    sources_free(&src);
    if (st)
        *st = s;
    return 0;
}

/* The sentences of the lines of one call: line i's are in.lines[first[i] ..
   first[i + 1]). */
typedef struct Pieces {
    TranslateInput in;
    const char **lines;
    size_t *lens;
    long *line_no;
    TranslateCons *cons; /* (cap) with in->cons: a line's own, or none for a sentence */
    int *first; /* (lines + 1) */
    int cap;
} Pieces;

static void pieces_free(Pieces *p)
{
    free(p->lines);
    free(p->lens);
    free(p->line_no);
    free(p->cons);
    free(p->first);
    memset(p, 0, sizeof *p);
}

static int pieces_add(Pieces *p, const char *s, size_t len, long line_no, const TranslateCons *c, Err *e)
{
    if (p->in.n == INT_MAX)
        return err_set(e, "%s: more than %d sentences", p->in.name, INT_MAX);
    if (p->in.n == p->cap) {
        p->cap = p->cap > INT_MAX / 2 ? INT_MAX : 2 * p->cap;
        XRENEW(p->lines, p->cap);
        XRENEW(p->lens, p->cap);
        XRENEW(p->line_no, p->cap);
        XRENEW(p->cons, p->cap);
    }
    p->cons[p->in.n] = c ? *c : (TranslateCons){0};
    p->lines[p->in.n] = s;
    p->lens[p->in.n] = len;
    p->line_no[p->in.n++] = line_no;
    return 0;
}

/* Splits each line of in into its sentences (text/sentences.h). A line of one
   sentence, a blank one and one that is not valid UTF-8 or holds a NUL byte stays
   whole, so that it translates, or fails, as without splitting. 0, or -1 with e set. */
static int split_input(const TranslateInput *in, Lang lang, Pieces *p, Err *e)
{
    *p = (Pieces){.in = {.name = in->name}, .cap = in->n > 0 ? in->n : 1};
    p->lines = XNEW(const char *, p->cap);
    p->lens = XNEW(size_t, p->cap);
    p->line_no = XNEW(long, p->cap);
    p->cons = XNEW(TranslateCons, p->cap);
    p->first = XNEW(int, (size_t)in->n + 1);
    for (int i = 0; i < in->n; i++) {
        const char *line = in->lines[i];
        size_t len = in->lens ? in->lens[i] : strlen(line), k = 0;
        long ln = in->line_no ? in->line_no[i] : (long)i + 1;
        SentSpan *sp = NULL;
        Err te;
        const TranslateCons *c = in->cons ? &in->cons[i] : NULL;
        if (translate_cons_empty(c) && !memchr(line, '\0', len) && tok_check_utf8(line, len, &te) == 0)
            k = sent_split(line, len, lang, &sp);
        p->first[i] = p->in.n;
        int rc = k < 2 ? pieces_add(p, line, len, ln, c, e) : 0;
        for (size_t j = 0; k >= 2 && j < k && rc == 0; j++)
            rc = pieces_add(p, line + sp[j].off, sp[j].len, ln, NULL, e);
        free(sp);
        if (rc != 0)
            return -1;
    }
    p->first[in->n] = p->in.n;
    p->in.lines = p->lines;
    p->in.lens = p->lens;
    p->in.line_no = p->line_no;
    p->in.cons = in->cons ? p->cons : NULL;
    return 0;
}

/* The result of n lines from that of their sentences pr: each line's translations
   joined by single spaces (empty ones left out), its score their mean. */
static void join_result(TranslateResult *res, TranslateResult *pr, const Pieces *p, int n)
{
    size_t cnt = n ? (size_t)n : 1;
    *res = (TranslateResult){.n = n, .count = XNEW(int, cnt), .hyps = XNEW(TranslateHyp *, cnt)};
    Buf text = {0};
    for (int i = 0; i < n; i++) {
        int a = p->first[i], m = p->first[i + 1] - a;
        res->count[i] = 1;
        res->hyps[i] = XNEW(TranslateHyp, 1);
        if (m == 1) {
            res->hyps[i][0] = pr->hyps[a][0];
            pr->hyps[a][0].text = NULL;
            continue;
        }
        buf_clear(&text);
        double score = 0;
        for (int j = a; j < a + m; j++) {
            const TranslateHyp *h = &pr->hyps[j][0];
            if (h->text[0] && text.len)
                buf_putc(&text, ' ');
            buf_puts(&text, h->text);
            score += h->score;
        }
        res->hyps[i][0] = (TranslateHyp){xstrndup(text.data ? text.data : "", text.len), score / m};
    }
    buf_free(&text);
}

/* translate_run with o->split: the sentences of all the lines decoded in one call. */
static int run_split(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o,
                     TranslateResult *res, TranslateStats *st, Err *e)
{
    Pieces p;
    TranslateResult pr;
    TranslateStats s;
    memset(res, 0, sizeof *res);
    if (split_input(in, text_src_opts(&mf->text).lang, &p, e) != 0 ||
        run_lines(mf, &p.in, o, &pr, &s, e) != 0) {
        pieces_free(&p);
        return -1;
    }
    join_result(res, &pr, &p, in->n);
    translate_result_free(&pr);
    pieces_free(&p);
    s.lines = in->n;
    if (st)
        *st = s;
    return 0;
}

int translate_run(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o,
                  TranslateResult *res, TranslateStats *st, Err *e)
{
    if (o->split && o->nbest <= 1 && !o->attention)
        return run_split(mf, in, o, res, st, e);
    return run_lines(mf, in, o, res, st, e);
}

int translate_lines(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o, char **out,
                    TranslateStats *st, Err *e)
{
    TranslateResult r;
    TranslateOpts one = *o;
    one.nbest = 1;
    one.attention = false;
    if (translate_run(mf, in, &one, &r, st, e) != 0)
        return -1;
    for (int i = 0; i < in->n; i++) {
        out[i] = r.hyps[i][0].text;
        r.hyps[i][0].text = NULL;
    }
    translate_result_free(&r);
    return 0;
}

/* Tokenizes and encodes text[0..len) into *ids (xrealloc'd) and returns the token
   count, or -1 with e set (the message of tok_line, or a NUL byte). */
static long encode_text(const char *text, size_t len, const TokOpts *to, const Bpe *bpe,
                        const Vocab *v, Buf *scratch, int **ids, Err *e)
{
    const char *nul = memchr(text, '\0', len);
    if (nul && tok_check_utf8(text, (size_t)(nul - text), e) != 0)
        return -1;
    if (nul)
        return err_set(e, "NUL byte at byte %zu", (size_t)(nul - text) + 1);
    buf_clear(scratch);
    long nt = bpe_tok_line(bpe, text, len, to, scratch, e);
    if (nt < 0)
        return -1;
    *ids = xrealloc_array(*ids, (size_t)(nt), sizeof **ids);
    size_t got = vocab_encode(v, scratch->data ? scratch->data : "", scratch->len,
                              (int32_t *)*ids, (size_t)nt, NULL);
    CHECK(got == (size_t)nt);
    return nt;
}

/* The pairs translate_nll scores, as ids: the lines whose source has tokens. */
typedef struct ScorePairs {
    int n, cap;
    int **sid, **tid;
    int *slen, *tlen;
} ScorePairs;

static void score_pairs_free(ScorePairs *p)
{
    for (int i = 0; i < p->cap; i++) {
        free(p->sid[i]);
        free(p->tid[i]);
    }
    free(p->sid);
    free(p->tid);
    free(p->slen);
    free(p->tlen);
    memset(p, 0, sizeof *p);
}

/* Encodes the sources of in and their references into *p: 0, or -1 with e set naming
   the first bad line. */
static int encode_pairs(const ModelFile *mf, const TranslateInput *in, const char *const *refs,
                        const size_t *ref_lens, ScorePairs *p, Err *e)
{
    size_t cnt = in->n ? (size_t)in->n : 1;
    *p = (ScorePairs){.cap = in->n, .sid = xcalloc(cnt, sizeof *p->sid),
                      .tid = xcalloc(cnt, sizeof *p->tid), .slen = xcalloc(cnt, sizeof *p->slen),
                      .tlen = xcalloc(cnt, sizeof *p->tlen)};
    TokOpts so = text_src_opts(&mf->text), tgo = text_tgt_opts(&mf->text);
    Buf scratch = {0};
    int rc = 0;
    for (int i = 0; i < in->n; i++) {
        long ln = in->line_no ? in->line_no[i] : (long)i + 1;
        Err te;
        const char *s = in->lines[i];
        long ns = encode_text(s, in->lens ? in->lens[i] : strlen(s), &so, mf->text.src_bpe,
                              mf->src, &scratch, &p->sid[p->n], &te);
        if (ns < 0) {
            rc = err_set(e, "%s:%ld: %s", in->name, ln, te.msg);
            break;
        }
        long nr = encode_text(refs[i], ref_lens ? ref_lens[i] : strlen(refs[i]), &tgo,
                              mf->text.tgt_bpe, mf->tgt, &scratch, &p->tid[p->n], &te);
        if (nr < 0) {
            rc = err_set(e, "%s:%ld: reference: %s", in->name, ln, te.msg);
            break;
        }
        if (ns == 0)
            continue;
        p->slen[p->n] = (int)ns;
        p->tlen[p->n] = (int)nr;
        p->n++;
    }
    buf_free(&scratch);
    return rc;
}

/* The model's summed negative log-likelihood of the targets of d, in batches. */
static TranslateNll score_pairs(Model *m, const PairSet *d)
{
    TranslateNll r = {0};
    BatchOpts bo = {.batch = 64, .tokens = 1024};
    BatchPlan plan = {0};
    Err e;
    if (batch_plan_start(&plan, d, &bo, NULL, &e) != 0)
        BUG("%s", e.msg); /* no empty source is left */
    int max_b, max_s, max_t;
    batch_limits(d, &bo, &max_b, &max_s, &max_t);
    Work *w = work_new(m, max_b, max_s, max_t, WORK_SCORE);
    BatchBuf bb;
    batch_buf_init(&bb, max_b, max_s, max_t);
    const int *rows;
    int nrows, got;
    while ((got = batch_plan_next(&plan, &rows, &nrows, &e)) == 1) {
        Batch b;
        batch_fill(&b, &bb, d, rows, nrows);
        model_forward(m, w, &b, NULL);
        r.nll += work_nll(w);
        r.ntok += b.ntok;
    }
    if (got < 0)
        BUG("%s", e.msg); /* no empty source is left */
    batch_buf_free(&bb);
    work_free(w);
    batch_plan_free(&plan);
    return r;
}

int translate_nll(ModelFile *mf, const TranslateInput *src, const char *const *refs,
                  const size_t *ref_lens, TranslateNll *out, Err *e)
{
    CHECK(src->n >= 0);
    ScorePairs p;
    if (encode_pairs(mf, src, refs, ref_lens, &p, e) != 0) {
        score_pairs_free(&p);
        return -1;
    }
    TranslateNll r = {0};
    if (p.n > 0) {
        PairSet d = {.n = p.n, .src = p.sid, .src_len = p.slen, .tgt = p.tid, .tgt_len = p.tlen};
        r = score_pairs(&mf->model, &d);
    }
    score_pairs_free(&p);
    *out = r;
    return 0;
}
