/* s2s translate: sentences in, translations out, one line each. */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <unistd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "base/safetensors.h"
#include "base/utf8.h"
#include "cmd_repl.h"
#include "cmd_search.h"
#include "commands.h"
#include "s2s.h"

typedef struct TrOpts {
    const char *model; /* the first of models */
    const char **models;
    int nmodels;
    const char *input, *svg_dir;
    DecodeArgs d;
    char **sentences;
    int nsent;
    bool show_attention;
    int attention_layer; /* 1-based; 0: the last */
    bool attention_heads;
    bool constraints, glossary_ignore_case;
    const char *glossary_path;
    int heads; /* with --attention-heads: the model's */
} TrOpts;

#define AT(field) .off = offsetof(TrOpts, field)

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--input", .alias = "-i", .kind = OPT_STR, AT(input), .arg = "FILE",
     .help = "read the sentences from FILE, one a line ('-': stdin)"},
    {.name = "--nbest", .kind = OPT_INT, AT(d.o.nbest), .min = 1, .max = 100, .arg = "N",
     .help = "print the N best translations of each line (N <= K) as\n"
             "'INDEX ||| TRANSLATION ||| SCORE', INDEX the 0-based\n"
             "input line, SCORE the normalised log-probability (%.6f)"},
    {.name = "--show-attention", .kind = OPT_TRUE, AT(show_attention),
     .help = "print each line's attention (source across, output down)\n"
             "as a text heatmap on stderr, after 'line N:' (1-based)"},
    {.name = "--attention-svg", .kind = OPT_STR, AT(svg_dir), .arg = "DIR",
     .help = "write each line's attention as DIR/NNNN.svg, NNNN the\n"
             "1-based input line number (at least 4 digits); lines\n"
             "without tokens get no file"},
    {.name = "--attention-layer", .kind = OPT_INT, AT(attention_layer), .min = 1, .max = S2S_MAX_LAYERS, .arg = "L",
     .help = "Transformer: show the attention over the source of\n"
             "decoder layer L (1-based; default the last), heads' mean"},
    {.name = "--attention-heads", .kind = OPT_TRUE, AT(attention_heads),
     .help = "Transformer, with --attention-svg: also draw each head of\n"
             "that layer, as DIR/NNNN.hK.svg (K the 1-based head)"},
    {.name = "--constraints", .kind = OPT_TRUE, AT(constraints),
     .help = "a line (or SENTENCE) that starts with a brace is a JSON\n"
             "object with members text, constraints, avoid, prefix:\n"
             "the output holds each constraint, none of the avoided\n"
             "phrases, and starts with the prefix (docs/constraints.md)"},
    {.name = "--glossary", .kind = OPT_STR, AT(glossary_path), .arg = "FILE",
     .help = "lines 'SOURCE TERM<TAB>TARGET TERM': where a source term\n"
             "occurs in a line, its target term is a constraint"},
    {.name = "--glossary-ignore-case", .kind = OPT_TRUE, AT(glossary_ignore_case),
     .help = "match the glossary's source terms whatever their case"},
    DECODE_OPTION_ROWS(TrOpts, d),
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "translate", .rows = rows, .size = sizeof(TrOpts), .what = "MODEL *", .col = 23,
    .head = "usage: s2s translate MODEL [MODEL...] [SENTENCE...] [options]\n"
            "\n"
            "Translates with the model file MODEL: each SENTENCE argument, or else each line\n"
            "of -i FILE or of stdin, gives one output line, in order (an empty or blank line\n"
            "gives an empty line). Text is tokenized as in training, decoded by beam search\n"
            "(stops at <eos>) in batches, and detokenized for the target language; a model\n"
            "trained on subword units (s2s prepare --bpe) also splits the input's words into\n"
            "its units and joins the output's: plain text in, plain text out. Input is\n"
            "UTF-8; a leading byte order mark and CR before each newline are ignored. An\n"
            "invalid line (bad UTF-8, a NUL byte) is an error naming it, and then nothing is\n"
            "written; so is a line too long to decode within the memory of one sentence (a\n"
            "few hundred to a few thousand tokens, depending on the model and the beam; a\n"
            "smaller --max-len raises it).\n"
            "\n"
            "Each line is split into sentences (after . ! ? or ... followed by a space and a\n"
            "capital, a digit or an opening quote; not after abbreviations such as Mr. or\n"
            "M., initials or inside quotes and brackets) and its sentences are translated\n"
            "apart, in the same batches, then joined by single spaces: a model trained on\n"
            "single sentences would otherwise drop some. --no-split translates each line\n"
            "whole. With --nbest, --show-attention or --attention-svg, which are per line,\n"
            "lines are not split.\n"
            "\n"
            "Stdin is translated as it comes: a batch is decoded as soon as it has --batch\n"
            "lines or no more input is waiting, and its lines are written in input order and\n"
            "flushed at once (with --batch 1, each line right after it is read), so a pipe or\n"
            "a coprocess gets answers before the input ends; a bad line then stops after the\n"
            "batches before it were written. -o FILE is still written only at the end.\n"
            "\n"
            "Several MODEL files (the arguments after the first that are s2s model files)\n"
            "decode as an ensemble: each step's scores are the mean of the models'\n"
            "log-probabilities. They need the same vocabularies and tokenizer settings;\n"
            "the attention shown is the first model's.\n"
            "\n"
            "When stdin and stdout are terminals and neither SENTENCE, -i nor -o is given, an\n"
            "interactive prompt opens instead, with line editing and history: each line typed\n"
            "is translated; :beam K, :nbest N, :attn on|off, :help and :quit are commands;\n"
            "Ctrl-D on an empty line and Ctrl-C leave it (status 0).\n"
            "\n",
    .foot = "",
};

static void parse_args(TrOpts *p, int argc, char **argv)
{
    *p = (TrOpts){.d = decode_args_default()};
    p->sentences = XNEW(char *, argc > 0 ? argc : 0);
    p->models = XNEW(const char *, argc > 0 ? argc : 0);
    const char **pos = XNEW(const char *, argc > 0 ? argc : 0);
    int seen[sizeof rows / sizeof *rows];
    int npos = opt_parse(&table, p, argc, argv, seen, pos, argc);
    /* the first positional is a model, and so are the files that follow it before the
       first sentence: a model file, or a file that is not one (a damaged model, refused
       when loaded, rather than translated as a sentence of its name) */
    for (int k = 0; k < npos; k++) {
        struct stat st;
        if (k == 0)
            p->model = p->models[p->nmodels++] = pos[k];
        else if (!p->nsent && (st_has_format(pos[k], ST_FORMAT_MODEL) || (stat(pos[k], &st) == 0 && S_ISREG(st.st_mode))))
            p->models[p->nmodels++] = pos[k];
        else
            p->sentences[p->nsent++] = (char *)pos[k];
    }
    free(pos);
    if (!p->model)
        die_usage("translate: missing MODEL argument (see 's2s translate --help')");
    if (p->input && p->nsent)
        die_usage("translate: give SENTENCE arguments or -i FILE, not both");
    if (p->d.o.nbest > p->d.o.beam)
        die_usage("translate: option --nbest must not exceed --beam (%d > %d)", p->d.o.nbest, p->d.o.beam);
    if (!opt_seen(&table, seen, "--nbest"))
        p->d.o.nbest = 0;
    if (p->attention_layer && !p->show_attention && !p->svg_dir)
        die_usage("translate: --attention-layer needs --show-attention or --attention-svg");
    if (p->attention_heads && !p->svg_dir)
        die_usage("translate: --attention-heads needs --attention-svg DIR");
    if (p->glossary_ignore_case && !p->glossary_path)
        die_usage("translate: --glossary-ignore-case needs --glossary FILE");
}

/* Writes line i's attention picture as DIR/NNNN.svg, or DIR/NNNN.hK.svg for head K. */
static void write_svg(const char *dir, int i, int head, const char *line, size_t len, const char *hyp,
                      const s2s_attention *a)
{
    Buf title = {0};
    buf_printf(&title, "line %d: %.*s \xE2\x86\x92 %s", i + 1, (int)len, line, hyp);
    if (head)
        buf_printf(&title, " (head %d)", head);
    char *pic = s2s_attention_svg(a, title.data);
    char fname[48];
    if (head)
        snprintf(fname, sizeof fname, "%04d.h%d.svg", i + 1, head);
    else
        snprintf(fname, sizeof fname, "%04d.svg", i + 1);
    char *path = path_join(dir, fname);
    Err e;
    if (atomic_write(path, pic, strlen(pic), &e) != 0)
        die_err(&e);
    free(path);
    buf_free(&title);
    s2s_string_free(pic);
}

/* Splits data[0..len) into lines: '\n' ends a line, a CR before it is dropped, a
   last line without '\n' counts, a leading BOM is skipped. */
static int split_lines(const char *name, char *data, size_t len, const char ***lines,
                       size_t **lens)
{
    size_t start = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        start = 3;
    size_t cap = 0;
    for (size_t i = start; i < len; i++)
        cap += data[i] == '\n';
    cap++;
    *lines = xmalloc_array(cap, sizeof **lines);
    *lens = xmalloc_array(cap, sizeof **lens);
    size_t n = 0;
    while (start < len) {
        char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - data) : len;
        size_t l = end - start;
        if (l && data[start + l - 1] == '\r')
            l--;
        if (n >= (size_t)1 << 30)
            die("%s: more than %zu lines", name, (size_t)1 << 30);
        (*lines)[n] = data + start;
        (*lens)[n] = l;
        n++;
        start = end + 1;
    }
    return (int)n;
}

/* Reads lines from a file descriptor by split_lines' rules, and tells whether more
   input can be had without waiting. */
typedef struct LineReader {
    int fd;
    const char *name;
    Buf buf;    /* bytes read and not yet returned: buf.data[pos .. buf.len) */
    size_t pos;
    bool eof;
    bool first; /* the first line is still to come (a BOM may start it) */
    long lines; /* lines returned */
} LineReader;

/* The next line, copied into *line (xmalloc'd, NUL-terminated; a NUL byte inside is
   kept and counted in *len): 1. At the end of the input: 0. When no whole line is
   buffered, wait is false and nothing can be read at once: -1. Dies on a read error. */
static int reader_next(LineReader *r, bool wait, char **line, size_t *len)
{
    for (;;) {
        const char *p = r->buf.data ? r->buf.data + r->pos : "";
        size_t avail = r->buf.len - r->pos;
        const char *nl = avail ? memchr(p, '\n', avail) : NULL;
        if (nl || (r->eof && avail)) {
            size_t l = nl ? (size_t)(nl - p) : avail, s = 0;
            if (r->first && l >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
                s = 3;
            r->first = false;
            size_t n = l - s;
            if (n && p[s + n - 1] == '\r')
                n--;
            *line = xmalloc(n + 1);
            memcpy(*line, p + s, n);
            (*line)[n] = '\0';
            *len = n;
            r->pos += nl ? l + 1 : l;
            r->lines++;
            return 1;
        }
        if (r->eof)
            return 0;
        if (avail > FILE_MAX_LINE) /* no end of line in sight: /dev/zero, a binary file */
            die("%s:%ld: a line longer than %d bytes (not a text file?)", r->name, r->lines + 1, FILE_MAX_LINE);
        if (!wait) {
            struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
            if (poll(&pfd, 1, 0) <= 0)
                return -1;
        }
        if (r->pos) {
            memmove(r->buf.data, r->buf.data + r->pos, avail);
            r->buf.len = avail;
            r->pos = 0;
        }
        buf_reserve(&r->buf, 1 << 16);
        ssize_t got = read(r->fd, r->buf.data + r->buf.len, r->buf.cap - r->buf.len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            die("%s: read error: %s", r->name, strerror(errno));
        if (got == 0)
            r->eof = true;
        r->buf.len += (size_t)got;
        r->buf.data[r->buf.len] = '\0';
    }
}

/* The lines of one call: lines[0..n) (lens[i] bytes each) of the input NAME. */
typedef struct Chunk {
    const char *const *lines;
    const size_t *lens;
    int n;
    const char *name;
} Chunk;

/* Translates the lines of chunk, the input lines first+1 .. first+n (numbered so in
   errors, n-best lists and attention pictures), and appends their output lines to
   text. */
static void translate_chunk(const TrOpts *po, const s2s_translator *tr, const s2s_translator_options *o,
                            const Chunk *chunk, long first, Buf *text)
{
    const int n = chunk->n;
    s2s_batch b = {.texts = chunk->lines, .lengths = chunk->lens, .n = n, .name = chunk->name,
                   .first_line = first + 1};
    s2s_error err;
    s2s_result *res = s2s_translate_batch(tr, &b, o, &err);
    if (!res)
        die("%s", err.message);
    for (int i = 0; i < n; i++) {
        long g = first + i;
        if (po->d.o.nbest)
            for (int k = 0; k < s2s_result_hypotheses(res, i); k++)
                buf_printf(text, "%ld ||| %s ||| %.6f\n", g, s2s_result_text(res, i, k), s2s_result_score(res, i, k));
        else
            buf_printf(text, "%s\n", s2s_result_text(res, i, 0));
        s2s_attention a;
        if (s2s_result_attention(res, i, &a) != 0 || a.source_len == 0)
            continue;
        if (po->show_attention) {
            char *pic = s2s_attention_text(&a);
            fprintf(stderr, "line %ld: %s", g + 1, pic);
            s2s_string_free(pic);
        }
        if (po->svg_dir)
            write_svg(po->svg_dir, (int)g, 0, chunk->lines[i], chunk->lens[i], s2s_result_text(res, i, 0), &a);
    }
    /* every head of the layer: the same search (deterministic), each head's weights */
    for (int h = 0; po->attention_heads && h < po->heads; h++) {
        b.attention_head = h + 1;
        s2s_result *rh = s2s_translate_batch(tr, &b, o, &err);
        if (!rh)
            die("%s", err.message);
        for (int i = 0; i < n; i++) {
            s2s_attention a;
            if (s2s_result_attention(rh, i, &a) == 0 && a.source_len)
                write_svg(po->svg_dir, (int)(first + i), h + 1, chunk->lines[i], chunk->lens[i],
                          s2s_result_text(rh, i, 0), &a);
        }
        s2s_result_free(rh);
    }
    s2s_result_free(res);
}

static void write_stdout(Buf *text)
{
    if ((text->len && fwrite(text->data, 1, text->len, stdout) != text->len) || fflush(stdout) != 0)
        die("cannot write to stdout: %s", strerror(errno));
    buf_clear(text);
}

/* The sentences: SENTENCE arguments or -i FILE, all read and checked before any is
   translated. */
static void translate_given(const TrOpts *po, const s2s_translator *tr, const s2s_translator_options *o,
                            Buf *text)
{
    Err e;
    char *data = NULL;
    const char **lines;
    size_t *lens;
    int n;
    const char *name;
    if (po->nsent) {
        n = po->nsent;
        name = "argument";
        lines = xmalloc_array((size_t)n, sizeof *lines);
        lens = xmalloc_array((size_t)n, sizeof *lens);
        for (int i = 0; i < n; i++) {
            lines[i] = po->sentences[i];
            lens[i] = strlen(po->sentences[i]);
            size_t bad = utf8_check(lines[i], lens[i]);
            if (bad < lens[i])
                die("sentence argument %d: invalid UTF-8 at byte %zu", i + 1, bad + 1);
        }
    } else {
        name = po->input;
        size_t len;
        if (file_read_lines(po->input, &data, &len, &e) != 0)
            die_err(&e);
        n = split_lines(name, data, len, &lines, &lens);
    }
    translate_chunk(po, tr, o, &(Chunk){lines, lens, n, name}, 0, text);
    free(lines);
    free(lens);
    free(data);
}

/* stdin, streamed: a batch is translated as soon as it is full or no more input is at
   hand, and written (without -o) in input order at once. */
static void translate_stream(const TrOpts *po, const s2s_translator *tr, const s2s_translator_options *o,
                             Buf *text)
{
    int cap = o->batch;
    char **lines = XNEW(char *, cap);
    size_t *lens = XNEW(size_t, cap);
    LineReader rd = {.fd = STDIN_FILENO, .name = "<stdin>", .first = true};
    long first = 0;
    int count = 0;
    for (;;) {
        char *line;
        size_t len;
        int got = reader_next(&rd, count == 0, &line, &len);
        if (got == 1) {
            if (first + count >= (long)1 << 30)
                die("%s: more than %ld lines", rd.name, (long)1 << 30);
            lines[count] = line;
            lens[count++] = len;
            if (count < cap)
                continue;
        }
        if (count) {
            const Chunk chunk = {(const char *const *)lines, lens, count, rd.name};
            translate_chunk(po, tr, o, &chunk, first, text);
            for (int i = 0; i < count; i++)
                free(lines[i]);
            first += count;
            count = 0;
            if (!po->d.output)
                write_stdout(text);
        }
        if (got == 0)
            break;
    }
    buf_free(&rd.buf);
    free(lines);
    free(lens);
}

/* --attention-layer and --attention-heads, checked against the model. */
static void check_attention_layer(TrOpts *po, const s2s_model_info *m)
{
    if ((po->attention_layer || po->attention_heads) && m->attention_layers == 0)
        die_usage("translate: --attention-%s needs a Transformer model (%s is %s)",
                  po->attention_layer ? "layer" : "heads", po->model, m->arch);
    if (po->attention_layer > m->attention_layers)
        die_usage("translate: --attention-layer %d: %s has %d decoder layers", po->attention_layer,
                  po->model, m->attention_layers);
    po->heads = m->attention_heads;
}

/* The model files, with o: dies with the library's message when they cannot be
   loaded. */
static s2s_translator *load(const TrOpts *po, const s2s_translator_options *o)
{
    s2s_error err;
    s2s_translator *tr = s2s_translator_load(po->models, po->nmodels, o, &err);
    if (!tr)
        die("%s", err.message);
    return tr;
}

int cmd_translate(int argc, char **argv)
{
    TrOpts po;
    parse_args(&po, argc, argv);
    Err e;
    /* the output is never an input or a model file */
    const char **inputs = XNEW(const char *, po.nmodels + 1);
    for (int i = 0; i < po.nmodels; i++)
        inputs[i] = po.models[i];
    inputs[po.nmodels] = po.input && strcmp(po.input, "-") != 0 ? po.input : NULL;
    if (po.d.output && file_check_text_output(po.d.output, "-o", inputs, (size_t)po.nmodels + 1, &e) != 0)
        die_err(&e);
    free(inputs);

    s2s_translator_options o = po.d.o;
    o.nbest = po.d.o.nbest ? po.d.o.nbest : 1;
    o.constraints = po.constraints;
    o.attention_layer = po.attention_layer;
    o.glossary = po.glossary_path;
    o.glossary_ignore_case = po.glossary_ignore_case;
    s2s_error err;
    s2s_translator *tr = s2s_translator_load(po.models, po.nmodels, &o, &err);
    if (!tr && err.code == S2S_ERR_ARGUMENT && po.attention_layer) {
        /* a layer the model lacks: said in the command's words, from the model's */
        s2s_translator_options plain = o;
        plain.attention_layer = 0;
        plain.glossary = NULL;
        plain.glossary_ignore_case = 0;
        s2s_translator *t0 = load(&po, &plain);
        check_attention_layer(&po, s2s_translator_info(t0));
        s2s_translator_free(t0);
    }
    if (!tr)
        die("%s", err.message);
    check_attention_layer(&po, s2s_translator_info(tr));
    o.attention = po.show_attention || po.svg_dir;
    if (po.svg_dir && dir_ensure(po.svg_dir, &e) != 0)
        die_err(&e);
    if (!po.nsent && !po.input && !po.d.output && !po.constraints && !po.glossary_path && isatty(STDIN_FILENO) &&
        isatty(STDOUT_FILENO)) {
        o.attention = 0;
        int rc = repl_run(tr, po.model, &o, po.show_attention, po.svg_dir, &e);
        free(po.sentences);
        free(po.models);
        s2s_translator_free(tr);
        if (rc != 0)
            die_err(&e);
        return 0;
    }

    if (po.d.o.nbest)
        o.split = 0; /* n-best lists are per line, whatever N */
    Buf text = {0};
    if (po.nsent || (po.input && strcmp(po.input, "-") != 0))
        translate_given(&po, tr, &o, &text);
    else
        translate_stream(&po, tr, &o, &text);
    if (po.d.output) {
        if (atomic_write(po.d.output, text.data ? text.data : "", text.len, &e) != 0)
            die_err(&e);
    } else {
        write_stdout(&text);
    }

    buf_free(&text);
    free(po.sentences);
    free(po.models);
    s2s_translator_free(tr);
    return 0;
}
