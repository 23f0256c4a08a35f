/* s2s eval: translates the sources of a TSV file and scores them (BLEU, chrF). */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <time.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "base/safetensors.h"
#include "commands.h"
#include "nn/linalg.h"
#include "decode/translate.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "model/file.h"
#include "text/corpus.h"

typedef struct EvalOpts {
    const char *model, *tsv; /* model: the first of models */
    const char **models;
    int nmodels;
    DecodeArgs d;
    bool json;
} EvalOpts;

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--json", .kind = OPT_TRUE, .off = offsetof(EvalOpts, json),
     .help = "print one JSON object instead of the text block"},
    DECODE_OPTION_ROWS(EvalOpts, d),
    {.name = "--help", .alias = "-h", .kind = OPT_HELP, .help = "this help"},
    {0},
};

static const OptTable table = {
    .cmd = "eval",
    .rows = rows,
    .size = sizeof(EvalOpts),
    .what = "MODEL TSV",
    .col = 23,
    .head = "usage: s2s eval MODEL [MODEL...] TSV [options]\n"
            "\n"
            "Translates the first column of TSV with the model file MODEL and scores the\n"
            "translations against the second column. TSV holds source<TAB>reference a line\n"
            "(further columns are ignored), in the model's direction, as the valid.tsv and\n"
            "test.tsv of s2s prepare. Each distinct source (same text) is translated once and\n"
            "scored once, against the references of all its lines.\n"
            "\n"
            "Prints one summary block on stdout: corpus BLEU and chrF2 as sacreBLEU 2.x\n"
            "computes them by default (13a tokenization, exp smoothing, mixed case, on the\n"
            "detokenized text), each with its signature; the perplexity of the references\n"
            "under the model (teacher-forced, every TSV line, <eos> included, no label\n"
            "smoothing); the line and token counts; the decoding settings and time. With\n"
            "--json, one JSON object with the same figures instead.\n"
            "\n"
            "Several MODEL files decode as an ensemble (the mean of their log-probabilities\n"
            "at each step; see s2s translate --help); the perplexity is then not computed.\n"
            "\n",
    .foot = "",
};

static void parse_args(EvalOpts *p, int argc, char **argv)
{
    *p = (EvalOpts){.d = decode_args_default()};
    p->models = XNEW(const char *, argc > 0 ? argc : 0);
    int seen[sizeof rows / sizeof *rows];
    /* the positionals: the models, then TSV, the last */
    p->nmodels = opt_parse(&table, p, argc, argv, seen, p->models, argc);
    const char *last = p->nmodels ? p->models[--p->nmodels] : NULL;
    if (!p->nmodels)
        die_usage("eval: missing %s argument (see 's2s eval --help')", last ? "TSV" : "MODEL");
    /* the models after the first must be model files: anything else is one argument
       too many (the TSV is the last) */
    for (int i = 1; i < p->nmodels; i++)
        if (!st_has_format(p->models[i], ST_FORMAT_MODEL))
            die_usage("eval: unexpected argument '%s' (see 's2s eval --help')",
                      i + 1 < p->nmodels ? p->models[i + 1] : last);
    p->model = p->models[0];
    p->tsv = last;
}

int cmd_eval(int argc, char **argv)
{
    EvalOpts po;
    parse_args(&po, argc, argv);
    const char **inputs = XNEW(const char *, po.nmodels + 1);
    for (int i = 0; i < po.nmodels; i++)
        inputs[i] = po.models[i];
    inputs[po.nmodels] = po.tsv;
    decode_args_start(&po.d, inputs, (size_t)po.nmodels + 1);
    free(inputs);
    Err e;

    DecodeModels dm;
    decode_models_load(&dm, po.models, po.nmodels, po.d.prec);
    ModelFile mf = dm.use;
    Corpus c;
    CorpusOpts co = corpus_opts_pairs(mf.text.dir); /* source<TAB>target */
    if (corpus_read(&c, po.tsv, &co, &e) != 0)
        die_err(&e);
    size_t n = c.n;

    /* Segments: the distinct sources, in order of first occurrence, each with the
       references of all its lines. */
    SourceGroups g;
    corpus_group_sources(&c, &g);
    size_t nseg = g.n;
    if (nseg > (size_t)1 << 30)
        die("%s: more than %zu distinct sources", c.name, (size_t)1 << 30);
    const char **src = xmalloc_array((size_t)(nseg), sizeof *src);
    size_t *src_len = xmalloc_array((size_t)(nseg), sizeof *src_len);
    long *line = xmalloc_array((size_t)(nseg), sizeof *line);
    for (size_t s = 0; s < nseg; s++) {
        const Pair *p = &c.pairs[g.member[g.start[s]]];
        src[s] = p->src;
        src_len[s] = p->src_len;
        line[s] = (long)p->line;
    }
    const char **refs = xmalloc_array((size_t)(n), sizeof *refs); /* in group order */
    for (size_t k = 0; k < n; k++)
        refs[k] = c.pairs[g.member[k]].tgt;

    char **hyp = xcalloc(nseg ? nseg : 1, sizeof *hyp);
    TranslateOpts to = po.d.to;
    TranslateStats ts;
    double t0 = clock_now();
    if (translate_lines(&mf.model, mf.src, mf.tgt, &mf.text, src, src_len, (int)nseg, c.name,
                        line, &to, hyp, &ts, &e) != 0)
        die_err(&e);
    double decode_s = clock_now() - t0;

    /* Perplexity of every line's reference. */
    const char **psrc = xmalloc_array((size_t)(n), sizeof *psrc), **pref = xmalloc_array((size_t)(n), sizeof *pref);
    size_t *psl = xmalloc_array((size_t)(n), sizeof *psl), *prl = xmalloc_array((size_t)(n), sizeof *prl);
    long *pline = xmalloc_array((size_t)(n), sizeof *pline);
    for (size_t i = 0; i < n; i++) {
        const Pair *p = &c.pairs[i];
        psrc[i] = p->src;
        psl[i] = p->src_len;
        pref[i] = p->tgt;
        prl[i] = p->tgt_len;
        pline[i] = (long)p->line;
    }
    /* the references' perplexity: one model's (an ensemble's distribution is formed step
       by step in decoding only) */
    double nll = 0;
    long ntok = 0;
    bool have_ppl = dm.n == 1;
    if (have_ppl && translate_nll(&mf.model, mf.src, mf.tgt, &mf.text, psrc, psl, pref, prl, (int)n, c.name,
                                  pline, &nll, &ntok, &e) != 0)
        die_err(&e);
    double ppl = ntok ? exp(nll / (double)ntok) : 0;
    free(psrc);
    free(pref);
    free(psl);
    free(prl);
    free(pline);

    BleuStats bs;
    ChrfStats cs;
    bleu_init(&bs);
    chrf_init(&cs);
    for (size_t s = 0; s < nseg; s++) {
        const char *const *r = refs + g.start[s];
        size_t nr = g.start[s + 1] - g.start[s];
        if (bleu_add(&bs, hyp[s], r, nr, &e) != 0 || chrf_add(&cs, hyp[s], r, nr, &e) != 0)
            die("%s:%ld: %s", c.name, line[s], e.msg);
    }

    if (po.d.output) {
        Buf o = {0};
        for (size_t i = 0; i < n; i++) {
            buf_puts(&o, hyp[g.group_of[i]]);
            buf_putc(&o, '\n');
        }
        if (atomic_write(po.d.output, o.data, o.len, &e) != 0)
            die_err(&e);
        buf_free(&o);
    }

    BleuResult br;
    bleu_score(&bs, &br);
    double chrf = chrf_score(&cs);
    Buf text = {0}, sig = {0}, bline = {0}, csig = {0};
    bleu_format(&br, NULL, &bline);
    bleu_signature(&bs, &sig);
    chrf_signature(&cs, &csig);
    double unk_pct = ts.src_tokens ? 100.0 * (double)ts.src_unk / (double)ts.src_tokens : 0.0;
    if (po.json) {
        buf_puts(&text, "{\"model\": ");
        buf_json_str(&text, po.model, strlen(po.model));
        buf_puts(&text, ", \"tsv\": ");
        buf_json_str(&text, po.tsv, strlen(po.tsv));
        buf_puts(&text, ", \"bleu\": ");
        buf_json_f64(&text, br.score);
        buf_puts(&text, ", \"bleu_line\": ");
        buf_json_str(&text, bline.data, bline.len);
        buf_puts(&text, ", \"bleu_signature\": ");
        buf_json_str(&text, sig.data, sig.len);
        buf_puts(&text, ", \"chrf\": ");
        buf_json_f64(&text, chrf);
        buf_puts(&text, ", \"chrf_signature\": ");
        buf_json_str(&text, csig.data, csig.len);
        buf_puts(&text, ", \"perplexity\": ");
        if (have_ppl)
            buf_json_f64(&text, ppl);
        else
            buf_puts(&text, "null");
        if (dm.n > 1) {
            buf_puts(&text, ", \"ensemble\": [");
            for (int i = 0; i < dm.n; i++) {
                buf_puts(&text, i ? ", " : "");
                buf_json_str(&text, po.models[i], strlen(po.models[i]));
            }
            buf_puts(&text, "]");
        }
        buf_printf(&text, ", \"ref_tokens\": %ld, \"lines\": %zu, \"sources\": %zu, "
                          "\"src_tokens\": %ld, \"src_unk\": %ld, \"hyp_tokens\": %ld, "
                          "\"beam\": %d, \"length_penalty\": ",
                   ntok, n, nseg, ts.src_tokens, ts.src_unk, ts.hyp_tokens, po.d.to.beam);
        buf_json_f64(&text, po.d.to.alpha);
        buf_printf(&text, ", \"max_len\": %d, \"replace_unk\": %s, \"decode_seconds\": %.3f}\n",
                   po.d.to.max_len, po.d.to.replace_unk ? "true" : "false", decode_s);
    } else {
        buf_printf(&text, "%s\nBLEU signature: %s\n", bline.data, sig.data);
        chrf_format(chrf, NULL, &text);
        buf_printf(&text, "\nchrF2 signature: %s\n", csig.data);
        if (have_ppl)
            buf_printf(&text, "perplexity = %.2f (%ld reference tokens with <eos>, no label smoothing)\n",
                       ppl, ntok);
        else
            buf_printf(&text, "perplexity: not computed for an ensemble of %d models\n", dm.n);
        buf_printf(&text, "lines = %zu, distinct sources = %zu, source tokens = %ld, unknown = %ld "
                          "(%.2f%%), output tokens = %ld\n",
                   n, nseg, ts.src_tokens, ts.src_unk, unk_pct, ts.hyp_tokens);
        buf_printf(&text, "decoding: beam %d, length penalty %g%s, %.2f s\n", po.d.to.beam, po.d.to.alpha,
                   po.d.to.replace_unk ? ", unknown words replaced" : "", decode_s);
    }
    if (fwrite(text.data, 1, text.len, stdout) != text.len || fflush(stdout) != 0)
        die("cannot write to stdout: %s", strerror(errno));

    buf_free(&bline);
    buf_free(&csig);
    buf_free(&text);
    buf_free(&sig);
    bleu_free(&bs);
    chrf_free(&cs);
    translate_free(hyp, (int)nseg);
    free(hyp);
    free(refs);
    free(line);
    free(src_len);
    free(src);
    source_groups_free(&g);
    corpus_free(&c);
    decode_models_free(&dm);
    free(po.models);
    return 0;
}
