#include "decode/translate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/beam.h"
#include "decode/greedy.h"
#include "text/bpe.h"
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

int translate_run(Model *m, const Vocab *src, const Vocab *tgt, const TextConfig *tc,
                  const char *const *lines, const size_t *lens, int n, const char *name,
                  const long *line_no, const TranslateOpts *o, TranslateResult *res,
                  TranslateStats *st, Err *e)
{
    const int K = o->beam > 1 ? o->beam : 1, N = o->nbest > 1 ? o->nbest : 1;
    CHECK(n >= 0 && o->batch >= 1 && o->max_len >= 0 && N <= K && o->alpha >= 0);
    CHECK(vocab_size(src) == (size_t)m->cfg.src_vocab &&
          vocab_size(tgt) == (size_t)m->cfg.tgt_vocab);
    memset(res, 0, sizeof *res);
    TranslateStats s = {.lines = n};
    size_t cnt = n ? (size_t)n : 1;

    /* Tokenize every line into one arena. */
    TokOpts so = text_src_opts(tc);
    Buf arena = {0};
    size_t *toff = xmalloc_array(cnt, sizeof *toff), *tlen = xmalloc_array(cnt, sizeof *tlen);
    int *slen = xmalloc_array(cnt, sizeof *slen);
    size_t total = 0;
    const int max_src = beam_max_src_len(m, o->max_len, K, o->attention);
    for (int i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(lines[i]);
        long ln = line_no ? line_no[i] : (long)i + 1;
        toff[i] = arena.len;
        Err te;
        /* A NUL byte would read as a space: refuse it (bad UTF-8 before it first). */
        const char *nul = memchr(lines[i], '\0', len);
        long nt = -1;
        if (nul && tok_check_utf8(lines[i], (size_t)(nul - lines[i]), &te) != 0) {
            err_set(e, "%s:%ld: %s", name, ln, te.msg);
        } else if (nul) {
            err_set(e, "%s:%ld: NUL byte at byte %zu", name, ln, (size_t)(nul - lines[i]) + 1);
        } else if ((nt = bpe_tok_line(tc->src_bpe, lines[i], len, &so, &arena, &te)) < 0) {
            err_set(e, "%s:%ld: %s", name, ln, te.msg);
        } else if (nt > max_src) {
            err_set(e, "%s:%ld: too long to translate: %ld tokens (at most %d for this model, "
                       "beam size and output length limit)", name, ln, nt, max_src);
            nt = -1;
        }
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
            s.sentences++;
    }

    /* Token ids, and the source tokens as strings. */
    int *ids = xmalloc_array((size_t)(total), sizeof *ids);
    int **srcp = xmalloc_array(cnt, sizeof *srcp);
    char **stok = xmalloc_array((size_t)(total), sizeof *stok);
    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        srcp[i] = ids + pos;
        size_t unk = 0;
        const char *t = arena.data ? arena.data + toff[i] : "";
        size_t got = vocab_encode(src, t, tlen[i], (int32_t *)(ids + pos), (size_t)slen[i], &unk);
        CHECK(got == (size_t)slen[i]);
        CHECK(split_tokens(t, tlen[i], stok + pos) == slen[i]);
        pos += got;
        s.src_unk += (long)unk;
    }
    s.src_tokens = (long)total;
    buf_free(&arena);
    free(toff);
    free(tlen);

    PairSet d = {n, srcp, slen, NULL, NULL, NULL};
    BeamOpts bo = {.beam = K, .nbest = N, .batch = o->batch, .max_len = o->max_len,
                   .alpha = o->alpha, .attention = o->attention};
    BeamOut h;
    if (beam_decode(m, &d, &bo, &h, e) != 0)
        BUG("%s", e->msg); /* the ids come from the model's own vocabulary */

    res->n = n;
    res->count = xcalloc(cnt, sizeof *res->count);
    res->hyps = xcalloc(cnt, sizeof *res->hyps);
    if (o->attention)
        res->align = xcalloc(cnt, sizeof *res->align);
    Buf toks = {0}, text = {0};
    for (int i = 0, p0 = 0; i < n; p0 += slen[i], i++) {
        char **st_i = stok + p0;
        res->count[i] = h.count[i];
        res->hyps[i] = xmalloc_array((size_t)h.count[i], sizeof **res->hyps);
        for (int k = 0; k < h.count[i]; k++) {
            const BeamHyp *bh = &h.hyps[i][k];
            buf_clear(&toks);
            buf_clear(&text);
            hyp_tokens(tgt, bh->ids, bh->len, o->replace_unk ? st_i : NULL, bh->src_pos, &toks);
            detok(&toks, tc, &text);
            res->hyps[i][k] = (TranslateHyp){xstrndup(text.data ? text.data : "", text.len), bh->score};
        }
        const BeamHyp *best = &h.hyps[i][0];
        s.hyp_tokens += best->len;
        if (o->attention && slen[i] > 0) {
            TranslateAlign *a = &res->align[i];
            a->nsrc = slen[i];
            a->ntgt = best->len + best->eos;
            a->src = xmalloc_array((size_t)a->nsrc, sizeof *a->src);
            a->tgt = xmalloc_array((size_t)a->ntgt, sizeof *a->tgt);
            for (int j = 0; j < a->nsrc; j++)
                a->src[j] = xstrdup(st_i[j]);
            for (int k = 0; k < best->len; k++) {
                int id = best->ids[k];
                a->tgt[k] = xstrdup(o->replace_unk && id == VOCAB_UNK ? st_i[best->src_pos[k]]
                                                                      : vocab_token(tgt, id));
            }
            if (best->eos)
                a->tgt[best->len] = xstrdup(vocab_token(tgt, VOCAB_EOS));
            a->w = xmalloc_array((size_t)a->ntgt * a->nsrc, sizeof *a->w);
            memcpy(a->w, best->attn, (size_t)a->ntgt * a->nsrc * sizeof *a->w);
        }
    }
    buf_free(&toks);
    buf_free(&text);
    beam_out_free(&h);
    for (size_t k = 0; k < total; k++)
        free(stok[k]);
    free(stok);
    free(srcp);
    free(slen);
    free(ids);
    if (st)
        *st = s;
    return 0;
}

int translate_lines(Model *m, const Vocab *src, const Vocab *tgt, const TextConfig *tc,
                    const char *const *lines, const size_t *lens, int n, const char *name,
                    const long *line_no, const TranslateOpts *o, char **out,
                    TranslateStats *st, Err *e)
{
    TranslateResult r;
    TranslateOpts one = *o;
    one.nbest = 1;
    one.attention = false;
    if (translate_run(m, src, tgt, tc, lines, lens, n, name, line_no, &one, &r, st, e) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
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

int translate_nll(Model *m, const Vocab *src, const Vocab *tgt, const TextConfig *tc,
                  const char *const *srcs, const size_t *src_lens, const char *const *refs,
                  const size_t *ref_lens, int n, const char *name, const long *line_no,
                  double *nll, long *ntok, Err *e)
{
    CHECK(n >= 0);
    size_t cnt = n ? (size_t)n : 1;
    int **sid = xcalloc(cnt, sizeof *sid), **tid = xcalloc(cnt, sizeof *tid);
    int *slen = xcalloc(cnt, sizeof *slen), *tlen = xcalloc(cnt, sizeof *tlen);
    TokOpts so = text_src_opts(tc), tgo = text_tgt_opts(tc);
    Buf scratch = {0};
    int np = 0, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        long ln = line_no ? line_no[i] : (long)i + 1;
        Err te;
        long ns = encode_text(srcs[i], src_lens ? src_lens[i] : strlen(srcs[i]), &so,
                              tc->src_bpe, src, &scratch, &sid[np], &te);
        if (ns < 0) {
            rc = err_set(e, "%s:%ld: %s", name, ln, te.msg);
            break;
        }
        long nr = encode_text(refs[i], ref_lens ? ref_lens[i] : strlen(refs[i]), &tgo,
                              tc->tgt_bpe, tgt, &scratch, &tid[np], &te);
        if (nr < 0) {
            rc = err_set(e, "%s:%ld: reference: %s", name, ln, te.msg);
            break;
        }
        if (ns == 0)
            continue;
        slen[np] = (int)ns;
        tlen[np] = (int)nr;
        np++;
    }
    buf_free(&scratch);
    double sum = 0;
    long count = 0;
    if (rc == 0 && np > 0) {
        PairSet d = {np, sid, slen, tid, tlen, NULL};
        BatchOpts bo = {.batch = 64, .tokens = 1024};
        BatchPlan plan = {0};
        if (batch_plan_start(&plan, &d, &bo, NULL, e) != 0)
            BUG("%s", e->msg); /* no empty source is left */
        int max_b, max_s, max_t;
        batch_limits(&d, &bo, &max_b, &max_s, &max_t);
        Work *w = work_new(m, max_b, max_s, max_t, WORK_SCORE);
        BatchBuf bb;
        batch_buf_init(&bb, max_b, max_s, max_t);
        const int *rows;
        int nrows, got;
        while ((got = batch_plan_next(&plan, &rows, &nrows, e)) == 1) {
            Batch b;
            batch_fill(&b, &bb, &d, rows, nrows);
            model_forward(m, w, &b, NULL);
            sum += work_nll(w);
            count += b.ntok;
        }
        if (got < 0)
            BUG("%s", e->msg); /* no empty source is left */
        batch_buf_free(&bb);
        work_free(w);
        batch_plan_free(&plan);
    }
    for (int i = 0; i < n; i++) {
        free(sid[i]);
        free(tid[i]);
    }
    free(sid);
    free(tid);
    free(slen);
    free(tlen);
    if (rc != 0)
        return -1;
    *nll = sum;
    *ntok = count;
    return 0;
}
