/* s2s eval: translates the sources of a TSV file and scores them (BLEU, chrF). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "base/safetensors.h"
#include "cmd_decode.h"
#include "commands.h"
#include "nn/linalg.h"
#include "decode/constraints.h"
#include "decode/evaluate.h"
#include "model/file.h"
#include "text/corpus.h"

typedef struct EvalOpts {
    const char *model, *tsv; /* model: the first of models */
    const char **models;
    int nmodels;
    DecodeArgs d;
    bool json;
    bool by_length;
    bool constraints, glossary_ignore_case;
    const char *glossary;
} EvalOpts;

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--json", .kind = OPT_TRUE, .off = offsetof(EvalOpts, json),
     .help = "print one JSON object instead of the text block"},
    {.name = "--by-length", .kind = OPT_TRUE, .off = offsetof(EvalOpts, by_length),
     .help = "also score by source length (1-8, 9-15, 16-30, >30 words)"},
    {.name = "--constraints", .kind = OPT_TRUE, .off = offsetof(EvalOpts, constraints),
     .help = "a source that starts with a brace is a JSON object with\n"
             "members text, constraints, avoid, prefix (as translate\n"
             "--constraints reads; docs/constraints.md)"},
    {.name = "--glossary", .kind = OPT_STR, .off = offsetof(EvalOpts, glossary), .arg = "FILE",
     .help = "lines 'SOURCE TERM<TAB>TARGET TERM': where a source term\n"
             "occurs in a source, its target term is a constraint"},
    {.name = "--glossary-ignore-case", .kind = OPT_TRUE, .off = offsetof(EvalOpts, glossary_ignore_case),
     .help = "match the glossary's source terms whatever their case"},
    DECODE_OPTION_ROWS(EvalOpts, d),
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "eval", .rows = rows, .size = sizeof(EvalOpts), .what = "MODEL TSV", .col = 23,
    .head = "usage: s2s eval MODEL [MODEL...] TSV [options]\n"
            "\n"
            "Translates the first column of TSV with the model file MODEL and scores the\n"
            "translations against the second column. TSV holds source<TAB>reference a line\n"
            "(further columns are ignored), in the model's direction, as the valid.tsv and\n"
            "test.tsv of s2s prepare. Each distinct source (same text) is translated once and\n"
            "scored once, against the references of all its lines. Sources are split into\n"
            "sentences as s2s translate splits its lines (--no-split: translated whole).\n"
            "\n"
            "Prints one summary block on stdout: corpus BLEU and chrF2 as sacreBLEU 2.x\n"
            "computes them by default (13a tokenization, exp smoothing, mixed case, on the\n"
            "detokenized text), each with its signature; the perplexity of the references\n"
            "under the model (teacher-forced, every TSV line, <eos> included, no label\n"
            "smoothing); the line and token counts; the decoding settings and time. With\n"
            "--json, one JSON object with the same figures instead.\n"
            "\n"
            "With --by-length, the distinct sources are also put into buckets by their\n"
            "number of words (whitespace-separated, of the raw line): 1-8, 9-15, 16-30,\n"
            "over 30. A table after the block (in JSON, the array by_length) gives each\n"
            "bucket's lines, corpus BLEU and chrF2 over those lines alone, and the share\n"
            "of lines whose translation has under 0.5 times (short: omissions?) or over\n"
            "2 times (long: hallucinations?) the source's words; an empty bucket has no\n"
            "score.\n"
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
    if (p->glossary_ignore_case && !p->glossary)
        die_usage("eval: --glossary-ignore-case needs --glossary FILE");
}

int cmd_eval(int argc, char **argv)
{
    EvalOpts po;
    parse_args(&po, argc, argv);
    DecodeModels dm;
    decode_start(&po.d, po.models, po.nmodels, po.tsv, &dm);
    Err e;
    ModelFile mf = dm.use;
    Corpus c;
    CorpusOpts co = corpus_opts_pairs(mf.text.dir); /* source<TAB>target */
    if (corpus_read(&c, po.tsv, &co, &e) != 0)
        die_err(&e);

    /* --constraints and --glossary: each source's text and constraints */
    char **texts = NULL;
    size_t *tlens = NULL;
    TranslateCons *cons = NULL;
    Glossary *gl = NULL;
    if (po.glossary) {
        TokOpts so = text_src_opts(&mf.text);
        if (glossary_load(po.glossary, &so, po.glossary_ignore_case, &gl, &e) != 0)
            die_err(&e);
    }
    if (po.constraints || gl) {
        size_t n = c.n ? c.n : 1;
        texts = XNEW(char *, n);
        tlens = XNEW(size_t, n);
        cons = XCNEW(TranslateCons, n);
        for (size_t i = 0; i < c.n; i++) {
            const Pair *p = &c.pairs[i];
            if (!po.constraints) {
                texts[i] = xstrndup(p->src, p->src_len);
                tlens[i] = p->src_len;
            } else if (cons_parse_line(p->src, p->src_len, &texts[i], &tlens[i], &cons[i], &e) != 0) {
                die("%s:%zu: %s", po.tsv, p->line, e.msg);
            }
            if (gl)
                glossary_apply(gl, texts[i], tlens[i], &cons[i]);
        }
    }
    Evaluation ev;
    const EvalNames names = {po.tsv, po.models, dm.n};
    const TranslateOpts to = decode_translate_opts(&po.d);
    if (evaluate_run(&ev, &mf, &names, &c, &to, (const char *const *)texts, tlens, cons, &e) != 0)
        die_err(&e);
    ev.precision = precision_names[decode_precision(&po.d)];
    if (po.by_length && evaluate_by_length(&ev, &c, &e) != 0)
        die_err(&e);
    if (po.d.output) {
        Buf o = {0};
        evaluate_hyps(&ev, &o);
        if (atomic_write(po.d.output, o.data, o.len, &e) != 0)
            die_err(&e);
        buf_free(&o);
    }
    Buf text = {0};
    if (po.json)
        evaluate_json(&ev, &text);
    else
        evaluate_text(&ev, &text);
    if (fwrite(text.data, 1, text.len, stdout) != text.len || fflush(stdout) != 0)
        die("cannot write to stdout: %s", strerror(errno));

    buf_free(&text);
    evaluate_free(&ev);
    for (size_t i = 0; cons && i < c.n; i++) {
        translate_cons_free(&cons[i]);
        free(texts[i]);
    }
    free(cons);
    free(texts);
    free(tlens);
    glossary_free(gl);
    corpus_free(&c);
    decode_models_free(&dm);
    free(po.models);
    return 0;
}
