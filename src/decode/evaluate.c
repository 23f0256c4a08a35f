/* One scored set: translation, BLEU and chrF, perplexity; see evaluate.h. */
#include "decode/evaluate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "eval/chrf.h"

/* Translates the distinct sources of c, in order of first occurrence, into ev->hyp. */
static int translate_sources(Evaluation *ev, ModelFile *mf, const Corpus *c, Err *e)
{
    const SourceGroups *g = &ev->groups;
    size_t nseg = g->n;
    if (nseg > (size_t)1 << 30)
        return err_set(e, "%s: more than %zu distinct sources", c->name, (size_t)1 << 30);
    const char **src = xmalloc_array(nseg, sizeof *src);
    size_t *src_len = xmalloc_array(nseg, sizeof *src_len);
    long *line = xmalloc_array(nseg, sizeof *line);
    TranslateCons *cons = ev->cons ? xmalloc_array(nseg ? nseg : 1, sizeof *cons) : NULL;
    for (size_t s = 0; s < nseg; s++) {
        size_t k = g->member[g->start[s]];
        const Pair *p = &c->pairs[k];
        src[s] = ev->text ? ev->text[k] : p->src;
        src_len[s] = ev->text ? ev->text_len[k] : p->src_len;
        line[s] = (long)p->line;
        if (cons)
            cons[s] = ev->cons[k];
    }
    ev->hyp = xcalloc(nseg ? nseg : 1, sizeof *ev->hyp);
    const TranslateInput in = {src, src_len, (int)nseg, c->name, line, cons};
    double t0 = clock_now();
    int rc = translate_lines(mf, &in, &ev->opts, ev->hyp, &ev->ts, e);
    ev->decode_seconds = clock_now() - t0;
    free(cons);
    free(line);
    free(src_len);
    free(src);
    return rc;
}

/* The perplexity of every line's reference under mf's model. */
static int perplexity(Evaluation *ev, ModelFile *mf, const Corpus *c, Err *e)
{
    size_t n = c->n;
    const char **psrc = xmalloc_array(n, sizeof *psrc), **pref = xmalloc_array(n, sizeof *pref);
    size_t *psl = xmalloc_array(n, sizeof *psl), *prl = xmalloc_array(n, sizeof *prl);
    long *pline = xmalloc_array(n, sizeof *pline);
    for (size_t i = 0; i < n; i++) {
        const Pair *p = &c->pairs[i];
        psrc[i] = ev->text ? ev->text[i] : p->src;
        psl[i] = ev->text ? ev->text_len[i] : p->src_len;
        pref[i] = p->tgt;
        prl[i] = p->tgt_len;
        pline[i] = (long)p->line;
    }
    const TranslateInput in = {psrc, psl, (int)n, c->name, pline, NULL};
    TranslateNll tn;
    int rc = translate_nll(mf, &in, pref, prl, &tn, e);
    if (rc == 0) {
        ev->ref_tokens = tn.ntok;
        ev->ppl = tn.ntok ? exp(tn.nll / (double)tn.ntok) : 0;
    }
    free(psrc);
    free(pref);
    free(psl);
    free(prl);
    free(pline);
    return rc;
}

/* BLEU and chrF of the translations against the references of each source's lines. */
static int score(Evaluation *ev, const Corpus *c, Err *e)
{
    const SourceGroups *g = &ev->groups;
    const char **refs = xmalloc_array(c->n, sizeof *refs); /* in group order */
    for (size_t k = 0; k < c->n; k++)
        refs[k] = c->pairs[g->member[k]].tgt;
    size_t bad;
    Err se;
    int rc = scores_compute(&ev->scores, (const char *const *)ev->hyp, g->n, refs, g->start, &bad,
                            &se);
    if (rc != 0)
        err_set(e, "%s:%zu: %s", c->name, c->pairs[g->member[g->start[bad]]].line, se.msg);
    free(refs);
    return rc;
}

int evaluate_run(Evaluation *ev, ModelFile *mf, const EvalNames *names, const Corpus *c,
                 const TranslateOpts *o, const char *const *text, const size_t *text_len,
                 const TranslateCons *cons, Err *e)
{
    memset(ev, 0, sizeof *ev);
    ev->text = text;
    ev->text_len = text_len;
    ev->cons = cons;
    ev->names = *names;
    ev->opts = *o;
    ev->lines = c->n;
    corpus_group_sources(c, &ev->groups);
    ev->sources = ev->groups.n;
    /* the references' perplexity: one model's (an ensemble's distribution is formed
       step by step in decoding only) */
    ev->have_ppl = names->nmodels == 1;
    if (translate_sources(ev, mf, c, e) != 0 || (ev->have_ppl && perplexity(ev, mf, c, e) != 0) ||
        score(ev, c, e) != 0) {
        evaluate_free(ev);
        return -1;
    }
    return 0;
}

int evaluate_by_length(Evaluation *ev, const Corpus *c, Err *e)
{
    const SourceGroups *g = &ev->groups;
    size_t n = g->n;
    const char **src = xmalloc_array(n ? n : 1, sizeof *src);
    size_t *lines = xmalloc_array(n ? n : 1, sizeof *lines);
    const char **refs = xmalloc_array(c->n ? c->n : 1, sizeof *refs); /* in group order */
    for (size_t s = 0; s < n; s++) {
        size_t k = g->member[g->start[s]];
        src[s] = ev->text ? ev->text[k] : c->pairs[k].src;
        lines[s] = g->start[s + 1] - g->start[s];
    }
    for (size_t k = 0; k < c->n; k++)
        refs[k] = c->pairs[g->member[k]].tgt;
    const BylenSet set = {src, (const char *const *)ev->hyp, n, refs, g->start, lines};
    size_t bad;
    Err se;
    int rc = bylen_compute(ev->by_length, &set, &bad, &se);
    if (rc != 0)
        err_set(e, "%s:%zu: %s", c->name, c->pairs[g->member[g->start[bad]]].line, se.msg);
    ev->have_by_length = rc == 0;
    free(refs);
    free(lines);
    free(src);
    return rc;
}

void evaluate_hyps(const Evaluation *ev, Buf *out)
{
    for (size_t i = 0; i < ev->lines; i++) {
        buf_puts(out, ev->hyp[ev->groups.group_of[i]]);
        buf_putc(out, '\n');
    }
}

/* The table of by_length: a row per bucket, shares in percent. */
static void by_length_text(const Evaluation *ev, Buf *out)
{
    buf_puts(out, "by source length (short: output under 0.5x the source's words, "
                  "long: over 2x):\n");
    buf_printf(out, "%-12s %7s %7s %7s %7s %7s\n", "source words", "lines", "BLEU", "chrF2",
               "short", "long");
    for (int k = 0; k < BYLEN_BUCKETS; k++) {
        const BylenBucket *b = &ev->by_length[k];
        buf_printf(out, "%-12s %7zu", bylen_bucket_names[k], b->lines);
        if (b->lines == 0)
            buf_puts(out, "  no score\n");
        else
            buf_printf(out, " %7.2f %7.2f %6.1f%% %6.1f%%\n", b->bleu, b->chrf,
                       100 * b->short_share, 100 * b->long_share);
    }
}

void evaluate_text(const Evaluation *ev, Buf *out)
{
    const TextScores *s = &ev->scores;
    const TranslateStats *ts = &ev->ts;
    double unk_pct = ts->src_tokens ? 100.0 * (double)ts->src_unk / (double)ts->src_tokens : 0.0;
    buf_printf(out, "%s\nBLEU signature: %s\n", s->bleu_line.data, s->bleu_signature.data);
    chrf_format(s->chrf, NULL, out);
    buf_printf(out, "\nchrF2 signature: %s\n", s->chrf_signature.data);
    if (ev->have_ppl)
        buf_printf(out, "perplexity = %.2f (%ld reference tokens with <eos>, no label smoothing)\n",
                   ev->ppl, ev->ref_tokens);
    else
        buf_printf(out, "perplexity: not computed for an ensemble of %d models\n", ev->names.nmodels);
    buf_printf(out, "lines = %zu, distinct sources = %zu, source tokens = %ld, unknown = %ld "
                    "(%.2f%%), output tokens = %ld\n",
               ev->lines, ev->sources, ts->src_tokens, ts->src_unk, unk_pct, ts->hyp_tokens);
    buf_printf(out, "decoding: beam %d, length penalty %g%s%s%s, %.2f s\n", ev->opts.beam, ev->opts.alpha,
               ev->opts.replace_unk ? ", unknown words replaced" : "", ev->precision ? ", " : "",
               ev->precision ? ev->precision : "", ev->decode_seconds);
    if (ev->have_by_length)
        by_length_text(ev, out);
}

/* The scores of the JSON object: BLEU, chrF2, their signatures, the perplexity. */
static void put_scores(JsonWriter *w, const Evaluation *ev)
{
    const TextScores *s = &ev->scores;
    json_put_f64(w, "bleu", s->bleu.score);
    json_put_strn(w, "bleu_line", s->bleu_line.data, s->bleu_line.len);
    json_put_strn(w, "bleu_signature", s->bleu_signature.data, s->bleu_signature.len);
    json_put_f64(w, "chrf", s->chrf);
    json_put_strn(w, "chrf_signature", s->chrf_signature.data, s->chrf_signature.len);
    if (ev->have_ppl)
        json_put_f64(w, "perplexity", ev->ppl);
    else
        json_put_null(w, "perplexity");
}

/* The array "by_length": one object per bucket; an empty one's scores are null. */
static void by_length_json(JsonWriter *w, const Evaluation *ev)
{
    json_open_array(w, "by_length");
    for (int k = 0; k < BYLEN_BUCKETS; k++) {
        const BylenBucket *b = &ev->by_length[k];
        json_open_object(w, NULL);
        json_put_str(w, "bucket", bylen_bucket_names[k]);
        json_put_uint(w, "lines", b->lines);
        if (b->lines == 0) {
            json_put_null(w, "bleu");
            json_put_null(w, "chrf");
            json_put_null(w, "short");
            json_put_null(w, "long");
        } else {
            json_put_f64(w, "bleu", b->bleu);
            json_put_f64(w, "chrf", b->chrf);
            json_put_f64(w, "short", b->short_share);
            json_put_f64(w, "long", b->long_share);
        }
        json_close(w);
    }
    json_close(w);
}

void evaluate_json(const Evaluation *ev, Buf *out)
{
    const EvalNames *nm = &ev->names;
    JsonWriter w;
    json_writer_init(&w, out, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "model", nm->models[0]);
    json_put_str(&w, "tsv", nm->tsv);
    put_scores(&w, ev);
    if (nm->nmodels > 1) {
        json_open_array(&w, "ensemble");
        for (int i = 0; i < nm->nmodels; i++)
            json_put_str(&w, NULL, nm->models[i]);
        json_close(&w);
    }
    json_put_int(&w, "ref_tokens", ev->ref_tokens);
    json_put_uint(&w, "lines", ev->lines);
    json_put_uint(&w, "sources", ev->sources);
    json_put_int(&w, "src_tokens", ev->ts.src_tokens);
    json_put_int(&w, "src_unk", ev->ts.src_unk);
    json_put_int(&w, "hyp_tokens", ev->ts.hyp_tokens);
    json_put_int(&w, "beam", ev->opts.beam);
    json_put_f64(&w, "length_penalty", ev->opts.alpha);
    if (ev->precision)
        json_put_str(&w, "precision", ev->precision);
    json_put_int(&w, "max_len", ev->opts.max_len);
    json_put_bool(&w, "replace_unk", ev->opts.replace_unk);
    json_put_double(&w, "decode_seconds", "%.3f", ev->decode_seconds);
    if (ev->have_by_length)
        by_length_json(&w, ev);
    json_close(&w);
    buf_putc(out, '\n');
}

void evaluate_free(Evaluation *ev)
{
    if (ev->hyp)
        translate_free(ev->hyp, (int)ev->sources);
    free(ev->hyp);
    scores_free(&ev->scores);
    source_groups_free(&ev->groups);
    memset(ev, 0, sizeof *ev);
}
