/* s2s tokenize: tokenizes (or detokenizes) stdin line by line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/opt.h"
#include "commands.h"
#include "text/tokenize.h"

static const char usage[] =
    "usage: s2s tokenize [--lang CODE] [--lowercase] [--detok] < IN > OUT\n"
    "\n"
    "Reads lines on stdin and prints, for each, its tokens separated by single\n"
    "spaces (an empty line for an empty or blank one). Text is normalised (NFKC,\n"
    "typographic apostrophes and no-break spaces); case is kept, as s2s prepare\n"
    "keeps it by default.\n"
    "\n"
    "  --lang CODE   an ISO 639 code (default en): fr splits elisions (j'ai -> j' ai);\n"
    "                languages other than en and fr get the generic rules (README)\n"
    "  --lowercase   fold case (as s2s prepare --lowercase)\n"
    "  --keep-case   keep case (the default)\n"
    "  --detok       the reverse: join tokens into natural text for --lang\n"
    "\n"
    "A UTF-8 byte order mark at the start and CR before each newline are ignored;\n"
    "invalid UTF-8 is an error naming the line and byte (1-based).\n";

static void flush_out(Buf *out)
{
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len)
        die("cannot write to stdout: %s", strerror(errno));
    buf_clear(out);
}

int cmd_tokenize(int argc, char **argv)
{
    TokOpts to = {LANG_EN, true};
    bool detok = false;
    Opts op;
    opts_init(&op, "tokenize", argc, argv);
    while (opts_next(&op)) {
        if (opts_is(&op, "--help") || opts_is(&op, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (opts_is(&op, "--lang")) {
            const char *v = opts_str(&op);
            if (lang_parse(v, &to.lang) != 0)
                die_usage("tokenize: option --lang must be an ISO 639 language code, got '%s'", v);
        } else if (opts_is(&op, "--keep-case")) {
            opts_bool(&op);
            to.keep_case = true;
        } else if (opts_is(&op, "--lowercase")) {
            opts_bool(&op);
            to.keep_case = false;
        } else if (opts_is(&op, "--detok")) {
            opts_bool(&op);
            detok = true;
        } else {
            opts_unknown(&op);
        }
    }

    Buf out = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    Err e;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        const char *s = line;
        size_t len = (size_t)got;
        if (len && s[len - 1] == '\n')
            len--;
        if (len && s[len - 1] == '\r')
            len--;
        if (lineno == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
            s += 3;
            len -= 3;
        }
        int rc = detok ? tok_check_utf8(s, len, &e) : 0;
        if (rc == 0 && detok)
            detok_line(s, len, to.lang, &out);
        else if (rc == 0)
            rc = tok_line(s, len, &to, &out, &e) < 0 ? -1 : 0;
        if (rc < 0) {
            flush_out(&out);
            die("<stdin>:%ld: %s", lineno, e.msg);
        }
        buf_putc(&out, '\n');
        if (out.len >= 1 << 16)
            flush_out(&out);
    }
    if (ferror(stdin))
        die("cannot read stdin: %s", strerror(errno));
    flush_out(&out);
    buf_free(&out);
    free(line);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write to stdout: %s", strerror(errno));
    return 0;
}
