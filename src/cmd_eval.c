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
#include "cmd_search.h"
#include "commands.h"
#include "s2s.h"

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
    Err e;
    /* the output is never the test set or a model file */
    const char **inputs = XNEW(const char *, po.nmodels + 1);
    for (int i = 0; i < po.nmodels; i++)
        inputs[i] = po.models[i];
    inputs[po.nmodels] = po.tsv;
    if (po.d.output && file_check_text_output(po.d.output, "-o", inputs, (size_t)po.nmodels + 1, &e) != 0)
        die_err(&e);
    free(inputs);

    s2s_translator_options o = po.d.o;
    o.constraints = po.constraints;
    o.glossary = po.glossary;
    o.glossary_ignore_case = po.glossary_ignore_case;
    s2s_error err;
    s2s_translator *tr = s2s_translator_load(po.models, po.nmodels, &o, &err);
    if (!tr)
        die("%s", err.message);
    s2s_evaluation *ev = s2s_evaluate(tr, po.tsv, po.by_length, NULL, &err);
    if (!ev)
        die("%s", err.message);
    if (po.d.output) {
        const char *hyps = s2s_evaluation_translations(ev);
        if (atomic_write(po.d.output, hyps, strlen(hyps), &e) != 0)
            die_err(&e);
    }
    const char *report = s2s_evaluation_report(ev, po.json);
    if (fputs(report, stdout) == EOF || fflush(stdout) != 0)
        die("cannot write to stdout: %s", strerror(errno));
    s2s_evaluation_free(ev);
    s2s_translator_free(tr);
    free(po.models);
    return 0;
}
