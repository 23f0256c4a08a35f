/* s2s score: BLEU and chrF of a hypothesis file against reference files, as sacreBLEU,
   through the library's interface (include/s2s.h). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/json.h"
#include "base/opt.h"
#include "base/utf8.h"
#include "commands.h"
#include "s2s.h"

/* Which metrics are computed. */
typedef struct Metrics {
    bool bleu, chrf;
} Metrics;

typedef struct ScoreOpts {
    const char **files; /* HYP, then the references */
    int nfiles;
    Metrics metrics;
    const char *tok;
    bool lowercase, chrf_lowercase;
    bool sentence, json;
    int width;
} ScoreOpts;

static int parse_metrics(const char *v, void *field)
{
    Metrics *m = field;
    if (strcmp(v, "bleu") == 0)
        *m = (Metrics){true, false};
    else if (strcmp(v, "chrf") == 0)
        *m = (Metrics){false, true};
    else if (strcmp(v, "bleu,chrf") == 0 || strcmp(v, "chrf,bleu") == 0)
        *m = (Metrics){true, true};
    else
        return -1;
    return 0;
}

static int parse_tokenizer(const char *v, void *field)
{
    if (strcmp(v, "13a") != 0 && strcmp(v, "none") != 0 && strcmp(v, "intl") != 0)
        return -1;
    *(const char **)field = v;
    return 0;
}

#define AT(field) .off = offsetof(ScoreOpts, field)

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--metrics", .alias = "-m", .kind = OPT_PARSE, AT(metrics), .parse = parse_metrics,
     .choices = "bleu, chrf or bleu,chrf", .arg = "LIST", .help = "bleu, chrf or bleu,chrf (default: both)"},
    {.name = "--tokenize", .alias = "-tok", .kind = OPT_PARSE, AT(tok), .parse = parse_tokenizer,
     .choices = "13a, none or intl", .arg = "T",
     .help = "BLEU's tokenizer: 13a (default), none (split on\n"
             "whitespace only) or intl (punctuation and symbols split\n"
             "off by Unicode category, mteval-v14)"},
    {.name = "--lowercase", .alias = "-lc", .kind = OPT_TRUE, AT(lowercase),
     .help = "case-insensitive BLEU (case:lc), as sacreBLEU's -lc"},
    {.name = "--chrf-lowercase", .kind = OPT_TRUE, AT(chrf_lowercase),
     .help = "case-insensitive chrF, as sacreBLEU's --chrf-lowercase"},
    {.name = "--sentence", .alias = "-sl", .kind = OPT_TRUE, AT(sentence),
     .help = "a score line per line of HYP and metric (BLEU with\n"
             "effective order, eff:yes), as sacreBLEU's -sl"},
    {.name = "--width", .alias = "-w", .kind = OPT_INT, AT(width), .min = 0, .max = 17, .arg = "N",
     .help = "decimals of the score (default {}, as sacreBLEU's -w)"},
    {.name = "--json", .kind = OPT_TRUE, AT(json),
     .help = "sacreBLEU's JSON form (its -f json, its default) instead\n"
             "of the text lines; not with --sentence"},
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "score", .rows = rows, .size = sizeof(ScoreOpts), .what = "HYP REF", .col = 23,
    .head = "usage: s2s score HYP REF [REF...] [options]\n"
            "\n"
            "Scores the lines of HYP against the references: line i of each REF is a\n"
            "reference for line i of HYP, and every file must have as many lines as HYP.\n"
            "BLEU and chrF are computed, and printed, as sacreBLEU " S2S_SACREBLEU_VERSION "'s command line\n"
            "does ('sacrebleu REF... -i HYP -m bleu chrf -f text'), signatures included:\n"
            "\n"
            "    BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" S2S_SACREBLEU_VERSION " = 48.5 82.4/50.0/...\n"
            "  chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" S2S_SACREBLEU_VERSION " = 59.7\n"
            "\n"
            "Files are UTF-8 text; lines end at '\\n' and trailing whitespace is ignored. An\n"
            "empty reference line is a reference with no words. Invalid UTF-8 or a NUL byte\n"
            "is an error naming FILE:LINE. '-' reads one of the files from stdin.\n"
            "\n",
    .foot = "",
};

static void parse_args(ScoreOpts *p, int argc, char **argv)
{
    *p = (ScoreOpts){.metrics = {true, true}, .width = 1, .tok = "13a"};
    p->files = XNEW(const char *, argc > 0 ? argc : 1);
    int seen[sizeof rows / sizeof *rows];
    p->nfiles = opt_parse(&table, p, argc, argv, seen, p->files, argc);
    bool stdin_used = false;
    for (int k = 0; k < p->nfiles; k++)
        if (strcmp(p->files[k], "-") == 0) {
            if (stdin_used)
                die_usage("score: only one file can be read from stdin ('-')");
            stdin_used = true;
        }
    if (p->nfiles < 2)
        die_usage("score: missing %s argument (see 's2s score --help')", p->nfiles ? "REF" : "HYP");
    if (p->json && p->sentence)
        die_usage("score: --json and --sentence cannot be combined (sentence scores are text lines)");
}

/* One input file: its lines, NUL-terminated in place. */
typedef struct Lines {
    const char *name;
    char *data;
    char **line;
    size_t n;
} Lines;

/* Reads path and splits it at '\n' as Python's text files with newline="\n" do (a
   last line without '\n' counts; nothing else ends a line). Dies on a file that
   cannot be read and, naming NAME:LINE, on invalid UTF-8 or a NUL byte. */
static void lines_read(Lines *l, const char *path)
{
    Err e;
    size_t len;
    l->name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (file_read_lines(path, &l->data, &len, &e) != 0)
        die_err(&e);
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += l->data[i] == '\n';
    l->line = XNEW(char *, cap);
    l->n = 0;
    for (size_t start = 0; start < len;) {
        char *p = l->data + start;
        char *nl = memchr(p, '\n', len - start);
        size_t n = nl ? (size_t)(nl - p) : len - start;
        size_t lineno = l->n + 1;
        const char *nul = memchr(p, '\0', n);
        size_t good = nul ? (size_t)(nul - p) : n, bad = utf8_check(p, good);
        if (bad < good)
            die("%s:%zu: invalid UTF-8 at byte %zu", l->name, lineno, bad + 1);
        if (nul)
            die("%s:%zu: NUL byte at byte %zu", l->name, lineno, (size_t)(nul - p) + 1);
        p[n] = '\0'; /* the '\n', or the buffer's terminating NUL */
        l->line[l->n++] = p;
        start += n + 1;
    }
}

static void lines_free(Lines *l)
{
    free(l->line);
    free(l->data);
}

/* sacreBLEU's score text: f"{score:.{width}f}". */
static void put_score(Buf *b, double score, int width) { buf_printf(b, "%.*f", width, score); }

/* The JSON number of float(f"{score:.{width}f}") as Python's json writes it (repr:
   the shortest round-trip digits, ".0" for integers, exponent form below 1e-4), in
   tmp[64]. */
static const char *json_score(char *tmp, double score, int width)
{
    snprintf(tmp, 64, "%.*f", width, score);
    double x = strtod(tmp, NULL);
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(tmp, 64, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x)
            break;
    }
    snprintf(tmp, 64, "%.*e", prec - 1, x);
    int exp10 = atoi(strchr(tmp, 'e') + 1);
    if (x != 0 && (exp10 < -4 || exp10 >= 16))
        return tmp; /* d.ddde-XX: Python's form too */
    int decimals = prec - 1 - exp10;
    snprintf(tmp, 64, "%.*f", decimals > 0 ? decimals : 0, x);
    if (!strchr(tmp, '.'))
        strcat(tmp, ".0");
    return tmp;
}

/* The parts of one metric's result line: NAME|SIGNATURE = SCORE[ VERBOSE]. */
typedef struct Result {
    const char *name;
    Buf sig, verbose;
    double score;
} Result;

static void bleu_result(Result *r, const s2s_scores *sc)
{
    r->name = "BLEU";
    buf_puts(&r->sig, sc->bleu_signature);
    buf_printf(&r->verbose, "%.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)",
               sc->precisions[0], sc->precisions[1], sc->precisions[2], sc->precisions[3], sc->brevity_penalty,
               sc->ratio, sc->hyp_len, sc->ref_len);
    r->score = sc->bleu;
}

static void chrf_result(Result *r, const s2s_scores *sc)
{
    r->name = "chrF2";
    buf_puts(&r->sig, sc->chrf_signature);
    r->score = sc->chrf;
}

static void result_free(Result *r)
{
    buf_free(&r->sig);
    buf_free(&r->verbose);
}

/* Appends "NAME|SIG = SCORE[ VERBOSE]", the name and signature right-aligned to pad. */
static void put_text(Buf *b, const Result *r, int width, size_t pad)
{
    size_t left = strlen(r->name) + 1 + r->sig.len;
    for (size_t i = left; i < pad; i++)
        buf_putc(b, ' ');
    buf_printf(b, "%s|%s = ", r->name, r->sig.data);
    put_score(b, r->score, width);
    if (r->verbose.len)
        buf_printf(b, " %s", r->verbose.data);
    buf_putc(b, '\n');
}

/* json.dumps(d, indent=1) of sacreBLEU's Score.format: name, score, signature,
   verbose_score (when there is one), then each signature field. */
static void put_json(Buf *b, const Result *r, int width)
{
    char score[64];
    JsonWriter w;
    json_writer_init(&w, b, 1);
    json_open_object(&w, NULL);
    json_put_str(&w, "name", r->name);
    json_put_raw(&w, "score", json_score(score, r->score, width));
    json_put_strn(&w, "signature", r->sig.data, r->sig.len);
    if (r->verbose.len)
        json_put_strn(&w, "verbose_score", r->verbose.data, r->verbose.len);
    for (const char *f = r->sig.data; *f;) {
        const char *bar = strchr(f, '|'), *end = bar ? bar : f + strlen(f);
        const char *colon = memchr(f, ':', (size_t)(end - f));
        CHECK(colon);
        json_put_key(&w, f, (size_t)(colon - f));
        json_put_strn(&w, NULL, colon + 1, (size_t)(end - colon - 1));
        f = bar ? bar + 1 : end;
    }
    json_close(&w);
}

static void flush_stdout(Buf *b)
{
    if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
        die("cannot write to stdout: %s", strerror(errno));
    buf_clear(b);
}

int cmd_score(int argc, char **argv)
{
    ScoreOpts po;
    parse_args(&po, argc, argv);
    int nref = po.nfiles - 1;
    Lines *f = XCNEW(Lines, po.nfiles);
    for (int k = 0; k < po.nfiles; k++)
        lines_read(&f[k], po.files[k]);
    for (int k = 1; k < po.nfiles; k++)
        if (f[k].n != f[0].n)
            die("line counts differ: %s has %zu, %s has %zu", f[0].name, f[0].n, f[k].name, f[k].n);
    if (f[0].n == 0)
        die("%s: no lines to score", f[0].name);

    const s2s_score_options so = {.tokenize = po.tok, .lowercase = po.lowercase, .chrf_lowercase = po.chrf_lowercase};
    const int metrics = (po.metrics.bleu ? S2S_METRIC_BLEU : 0) | (po.metrics.chrf ? S2S_METRIC_CHRF : 0);
    s2s_scores sc;
    s2s_error err;
    Buf out = {0};
    const char **refs = XNEW(const char *, nref);
    for (size_t i = 0; po.sentence && i < f[0].n; i++) {
        /* sacreBLEU's -sl: each line scored on its own, its signature with it. */
        for (int k = 0; k < nref; k++)
            refs[k] = f[k + 1].line[i];
        if (s2s_score_sentence(f[0].line[i], refs, (size_t)nref, &so, metrics, &sc, &err) != 0)
            die("%s:%zu: %s", f[0].name, i + 1, err.message);
        Result r = {0};
        if (po.metrics.bleu) {
            bleu_result(&r, &sc);
            put_text(&out, &r, po.width, 0);
            result_free(&r);
        }
        if (po.metrics.chrf) {
            chrf_result(&r, &sc);
            put_text(&out, &r, po.width, 0);
            result_free(&r);
        }
        if (out.len >= 1 << 16)
            flush_stdout(&out);
    }
    free(refs);

    if (!po.sentence) {
        /* the references as s2s_score takes them: those of REF r, then of REF r + 1 */
        const char **all = XNEW(const char *, f[0].n * (size_t)nref);
        for (int k = 0; k < nref; k++)
            for (size_t i = 0; i < f[0].n; i++)
                all[(size_t)k * f[0].n + i] = f[k + 1].line[i];
        if (s2s_score_metrics((const char *const *)f[0].line, f[0].n, all, (size_t)nref, &so, metrics, &sc, &err) != 0)
            die("%s: %s", f[0].name, err.message);
        free(all);
        Result res[2] = {{0}};
        int n = 0;
        if (po.metrics.bleu)
            bleu_result(&res[n++], &sc);
        if (po.metrics.chrf)
            chrf_result(&res[n++], &sc);
        if (po.json) {
            /* one object alone; several as a list, as sacreBLEU prints them */
            if (n > 1)
                buf_puts(&out, "[\n");
            for (int k = 0; k < n; k++) {
                put_json(&out, &res[k], po.width);
                buf_puts(&out, k + 1 < n ? ",\n" : "\n");
            }
            if (n > 1)
                buf_puts(&out, "]\n");
        } else {
            /* several lines: aligned at '=' */
            size_t pad = 0;
            for (int k = 0; k < n; k++) {
                size_t left = strlen(res[k].name) + 1 + res[k].sig.len;
                if (left > pad)
                    pad = left;
            }
            for (int k = 0; k < n; k++)
                put_text(&out, &res[k], po.width, pad);
        }
        for (int k = 0; k < n; k++)
            result_free(&res[k]);
    }
    flush_stdout(&out);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write to stdout: %s", strerror(errno));

    buf_free(&out);
    for (int k = 0; k < po.nfiles; k++)
        lines_free(&f[k]);
    free(f);
    free(po.files);
    return 0;
}
