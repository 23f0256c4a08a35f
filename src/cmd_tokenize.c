/* s2s tokenize: tokenizes (or detokenizes) stdin line by line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/opt.h"
#include "commands.h"
#include "text/bpe.h"
#include "text/tokenize.h"

static const char usage[] =
    "usage: s2s tokenize [--lang CODE] [--lowercase] [--bpe CODES] [--detok|--join] < IN > OUT\n"
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
    "  --bpe CODES   then split each token into subword units with the BPE merges of\n"
    "                CODES (a codes file of s2s prepare --bpe or subword-nmt), \"@@\"\n"
    "                ending every unit of a token but its last: chatons -> chat@@ ons\n"
    "  --detok       the reverse: join subword units (a token ending in \"@@\" is glued\n"
    "                to the next), then join tokens into natural text for --lang\n"
    "  --join        only join subword units: the tokens --bpe segmented, exactly\n"
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
    bool detok = false, join = false;
    const char *codes = NULL;
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
        } else if (opts_is(&op, "--join")) {
            opts_bool(&op);
            join = true;
        } else if (opts_is(&op, "--bpe")) {
            codes = opts_str(&op);
        } else {
            opts_unknown(&op);
        }
    }

    if (detok && join)
        die_usage("tokenize: --detok and --join exclude each other");
    if ((detok || join) && codes)
        die_usage("tokenize: --bpe segments tokenized text; --%s takes no codes", detok ? "detok" : "join");
    Bpe *bpe = NULL;
    Err e;
    if (codes && bpe_load(&bpe, codes, &e) != 0)
        die_err(&e);
    Buf out = {0}, units = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
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
        int rc = detok || join ? tok_check_utf8(s, len, &e) : 0;
        if (rc == 0 && join) {
            bpe_join(s, len, &out);
        } else if (rc == 0 && detok) {
            buf_clear(&units);
            bpe_join(s, len, &units);
            if (units.len)
                detok_line(units.data, units.len, to.lang, &out);
        } else if (rc == 0) {
            rc = bpe_tok_line(bpe, s, len, &to, &out, &e) < 0 ? -1 : 0;
        }
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
    buf_free(&units);
    bpe_free(bpe);
    free(line);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write to stdout: %s", strerror(errno));
    return 0;
}
