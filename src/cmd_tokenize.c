/* s2s tokenize: tokenizes (or detokenizes) stdin line by line, through the library's
   interface (include/s2s.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "commands.h"
#include "s2s.h"

typedef struct TokenizeArgs {
    const char *lang;
    bool keep_case;
    bool detok, join;
    const char *codes;
} TokenizeArgs;

static int parse_lang(const char *v, void *field)
{
    char code[4];
    if (s2s_language_code(v, code) != 0)
        return -1;
    *(const char **)field = v;
    return 0;
}

#define AT(field) .off = offsetof(TokenizeArgs, field)

static const OptRow rows[] = {
    {.name = "--lang", .kind = OPT_PARSE, AT(lang), .parse = parse_lang, .choices = "an ISO 639 language code",
     .arg = "CODE",
     .help = "an ISO 639 code (default en): fr splits elisions (j'ai -> j' ai);\n"
             "languages other than en and fr get the generic rules (docs/cli/tokenize.md)"},
    {.name = "--lowercase", .kind = OPT_FALSE, AT(keep_case), .help = "fold case (as s2s prepare --lowercase)"},
    {.name = "--keep-case", .kind = OPT_TRUE, AT(keep_case), .help = "keep case (the default)"},
    {.name = "--bpe", .kind = OPT_STR, AT(codes), .arg = "CODES",
     .help = "then split each token into subword units with the BPE merges of\n"
             "CODES (a codes file of s2s prepare --bpe or subword-nmt), \"@@\"\n"
             "ending every unit of a token but its last: chatons -> cha@@ tons"},
    {.name = "--detok", .kind = OPT_TRUE, AT(detok),
     .help = "the reverse: join subword units (a token ending in \"@@\" is glued\n"
             "to the next), then join tokens into natural text for --lang"},
    {.name = "--join", .kind = OPT_TRUE, AT(join), .help = "only join subword units: the tokens --bpe segmented, exactly"},
    {.name = "--help", .alias = "-h", .kind = OPT_HELP},
    {0},
};

static const OptTable table = {
    .cmd = "tokenize", .rows = rows, .size = sizeof(TokenizeArgs), .col = 16,
    .head = "usage: s2s tokenize [--lang CODE] [--lowercase|--keep-case] [--bpe CODES] [--detok|--join] < IN > OUT\n"
            "\n"
            "Reads lines on stdin and prints, for each, its tokens separated by single\n"
            "spaces (an empty line for an empty or blank one). Text is normalised (NFKC,\n"
            "typographic apostrophes and no-break spaces); case is kept, as s2s prepare\n"
            "keeps it by default.\n"
            "\n",
    .foot = "\n"
            "A UTF-8 byte order mark at the start and CR before each newline are ignored;\n"
            "invalid UTF-8 is an error naming the line and byte (1-based).\n",
};

static void flush_out(Buf *out)
{
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len)
        die("cannot write to stdout: %s", strerror(errno));
    buf_clear(out);
}

/* getline, bounded: the next line of fp into *line (its newline kept), its length, or
   -1 at the end of the input, or -2 when it has more than FILE_MAX_LINE bytes before
   its newline (then not read further), so that endless input without newlines
   (/dev/zero) stops. */
static ssize_t read_line(FILE *fp, char **line, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(fp)) != EOF) {
        if (n == (size_t)FILE_MAX_LINE && c != '\n')
            return -2;
        if (n + 2 > *cap) {
            *cap = *cap ? 2 * *cap : 256;
            *line = xrealloc(*line, *cap);
        }
        (*line)[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (n == 0)
        return -1;
    (*line)[n] = '\0';
    return (ssize_t)n;
}

int cmd_tokenize(int argc, char **argv)
{
    TokenizeArgs args = {.lang = "en", .keep_case = true};
    int seen[sizeof rows / sizeof *rows];
    opt_parse(&table, &args, argc, argv, seen, NULL, 0);
    bool detok = args.detok, join = args.join;
    const char *codes = args.codes;

    if (detok && join)
        die_usage("tokenize: --detok and --join exclude each other");
    if ((detok || join) && codes)
        die_usage("tokenize: --bpe segments tokenized text; --%s takes no codes", detok ? "detok" : "join");
    s2s_error err;
    s2s_tokenizer *tok = s2s_tokenizer_new(args.lang, !args.keep_case, codes, &err);
    if (!tok)
        die("%s", err.message);
    Buf out = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long lineno = 0;
    while ((got = read_line(stdin, &line, &cap)) != -1) {
        lineno++;
        if (got == -2) {
            flush_out(&out);
            die("<stdin>:%ld: a line longer than %d bytes (not a text file?)", lineno, FILE_MAX_LINE);
        }
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
        char *got_line = join ? s2s_join_units(s, len, &err)
                         : detok ? s2s_tokenizer_detokenize(tok, s, len, &err)
                                 : s2s_tokenizer_tokenize(tok, s, len, &err);
        if (!got_line) {
            flush_out(&out);
            die("<stdin>:%ld: %s", lineno, err.message);
        }
        buf_puts(&out, got_line);
        s2s_string_free(got_line);
        buf_putc(&out, '\n');
        if (out.len >= 1 << 16)
            flush_out(&out);
    }
    if (ferror(stdin))
        die("cannot read stdin: %s", strerror(errno));
    flush_out(&out);
    buf_free(&out);
    s2s_tokenizer_free(tok);
    free(line);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write to stdout: %s", strerror(errno));
    return 0;
}
