/* s2s translate: sentences in, translations out, one line each. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "commands.h"
#include "nn/linalg.h"
#include "decode/translate.h"
#include "model/file.h"
#include "text/tokenize.h"

static const char usage[] =
    "usage: s2s translate MODEL [SENTENCE...] [options]\n"
    "\n"
    "Translates with the model file MODEL: each SENTENCE argument, or else each line\n"
    "of -i FILE or of stdin, gives one output line, in order (an empty or blank line\n"
    "gives an empty line). Text is tokenized as in training, decoded greedily (stops\n"
    "at <eos>) in batches, and detokenized for the target language. Input is UTF-8;\n"
    "a leading byte order mark and CR before each newline are ignored. An invalid\n"
    "line (bad UTF-8, a NUL byte) is an error naming it, and then nothing is written;\n"
    "so is a line too long to decode within the memory of one sentence (a few hundred\n"
    "to a few thousand tokens, depending on the model; a smaller --max-len raises it).\n"
    "\n"
    "options:\n"
    "  -i, --input FILE    read the sentences from FILE, one a line ('-': stdin)\n"
    "  -o, --output FILE   write the translations to FILE instead of stdout; FILE is\n"
    "                      replaced only once every line is translated\n"
    "  --max-len N         at most N output tokens per sentence (default: twice the\n"
    "                      source tokens plus 10)\n"
    "  --batch B           sentences decoded together (default 64)\n"
    "  --threads N         BLAS threads (default: OpenBLAS's own choice)\n"
    "  -h, --help          this help\n";

typedef struct TrOpts {
    const char *model;
    const char *input, *output;
    char **sentences;
    int nsent;
    long max_len, batch, threads;
} TrOpts;

static void parse_args(TrOpts *p, int argc, char **argv)
{
    *p = (TrOpts){.batch = 64};
    p->sentences = xmalloc((size_t)(argc > 0 ? argc : 1) * sizeof *p->sentences);
    Opts o;
    opts_init(&o, "translate", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o)) {
            if (!p->model)
                p->model = opts_arg(&o, "MODEL");
            else
                p->sentences[p->nsent++] = o.argv[o.i];
        } else if (opts_is(&o, "--help") || opts_is(&o, "-h")) {
            fputs(usage, stdout);
            exit(0);
        } else if (opts_is(&o, "-i") || opts_is(&o, "--input")) {
            p->input = opts_str(&o);
        } else if (opts_is(&o, "-o") || opts_is(&o, "--output")) {
            p->output = opts_str(&o);
        } else if (opts_is(&o, "--max-len")) {
            p->max_len = opts_long(&o, 1, 10000);
        } else if (opts_is(&o, "--batch")) {
            p->batch = opts_long(&o, 1, 100000);
        } else if (opts_is(&o, "--threads")) {
            p->threads = opts_long(&o, 1, 1024);
        } else {
            opts_unknown(&o);
        }
    }
    if (!p->model)
        die_usage("translate: missing MODEL argument (see 's2s translate --help')");
    if (p->input && p->nsent)
        die_usage("translate: give SENTENCE arguments or -i FILE, not both");
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
    *lines = xmalloc(cap * sizeof **lines);
    *lens = xmalloc(cap * sizeof **lens);
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

int cmd_translate(int argc, char **argv)
{
    TrOpts po;
    parse_args(&po, argc, argv);
    if (po.threads)
        nn_set_threads((int)po.threads);
    Err e;

    ModelFile mf;
    if (model_file_load(&mf, po.model, false, &e) != 0)
        die_err(&e);

    /* The sentences: arguments, -i FILE or stdin. */
    char *data = NULL;
    const char **lines;
    size_t *lens;
    int n;
    const char *name;
    if (po.nsent) {
        n = po.nsent;
        name = "argument";
        lines = xmalloc((size_t)n * sizeof *lines);
        lens = xmalloc((size_t)n * sizeof *lens);
        for (int i = 0; i < n; i++) {
            lines[i] = po.sentences[i];
            lens[i] = strlen(po.sentences[i]);
            if (tok_check_utf8(lines[i], lens[i], &e) != 0)
                die("sentence argument %d: %s", i + 1, e.msg);
        }
    } else {
        const char *path = po.input ? po.input : "-";
        name = strcmp(path, "-") == 0 ? "<stdin>" : path;
        size_t len;
        if (file_read_all(path, &data, &len, &e) != 0)
            die_err(&e);
        n = split_lines(name, data, len, &lines, &lens);
    }

    char **out = xcalloc((size_t)(n ? n : 1), sizeof *out);
    TranslateOpts to = {.batch = (int)po.batch, .max_len = (int)po.max_len};
    if (translate_lines(&mf.model, mf.src, mf.tgt, &mf.text, lines, lens, n, name, NULL, &to,
                        out, NULL, &e) != 0)
        die_err(&e);

    Buf text = {0};
    for (int i = 0; i < n; i++) {
        buf_puts(&text, out[i]);
        buf_putc(&text, '\n');
    }
    if (po.output) {
        if (atomic_write(po.output, text.data ? text.data : "", text.len, &e) != 0)
            die_err(&e);
    } else if ((text.len && fwrite(text.data, 1, text.len, stdout) != text.len) ||
               fflush(stdout) != 0) {
        die("cannot write to stdout: %s", strerror(errno));
    }

    buf_free(&text);
    translate_free(out, n);
    free(out);
    free(lines);
    free(lens);
    free(data);
    free(po.sentences);
    model_file_free(&mf);
    return 0;
}
