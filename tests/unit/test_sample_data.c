/* Shape of the bundled corpora data/sample.tsv (English<TAB>French) and
   data/sample-de.tsv (English<TAB>German): one pair a line. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define SAMPLE_PATH "data/sample.tsv"
#define SAMPLE_DE_PATH "data/sample-de.tsv"

typedef struct Lines {
    char *text;   /* the whole file, newlines replaced by NULs */
    size_t len;   /* bytes in the file */
    char **line;  /* start of each line, without its '\n' */
    size_t n;
} Lines;

/* Reads the file (tests run from the repository root) and splits it at '\n'.
   The file must end with exactly one '\n'. */
static Lines sample_lines(const char *path)
{
    Lines l = {0};
    l.text = slurp(path, &l.len);
    cr_assert_not_null(l.text, "cannot read %s (run the tests from the repository root)", path);
    cr_assert_gt(l.len, 0, "%s is empty", path);
    cr_assert_eq(l.text[l.len - 1], '\n', "%s does not end with a newline", path);
    size_t cap = 0;
    for (size_t i = 0; i < l.len; i++)
        cap += l.text[i] == '\n';
    l.line = malloc(cap * sizeof *l.line);
    cr_assert_not_null(l.line);
    char *start = l.text;
    for (size_t i = 0; i < l.len; i++) {
        if (l.text[i] == '\n') {
            l.text[i] = '\0';
            l.line[l.n++] = start;
            start = l.text + i + 1;
        }
    }
    return l;
}

static void lines_free(Lines *l)
{
    free(l->line);
    free(l->text);
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is invalid (bad lead
   byte, truncated, bad continuation, overlong form, surrogate, above U+10FFFF). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0; /* continuation byte, C0/C1 overlong lead, or F5..FF */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
        return 0; /* overlong */
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0; /* UTF-16 surrogate */
    if (cp > 0x10FFFF)
        return 0;
    return len;
}

/* Offset of the first invalid byte, or (size_t)-1 when all of s[0..n) is valid. */
static size_t utf8_first_invalid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t k = utf8_seq_len(u + i, n - i);
        if (k == 0)
            return i;
        i += k;
    }
    return (size_t)-1;
}

Test(sample_data, utf8_checker_accepts_and_rejects_known_sequences)
{
    static const char ok[] = "Où est la gare ? « Ça » œuf \xF0\x9F\x98\x80";
    cr_assert_eq(utf8_first_invalid(ok, sizeof ok - 1), (size_t)-1);
    cr_assert_eq(utf8_first_invalid("ab\x80", 3), 2);          /* stray continuation */
    cr_assert_eq(utf8_first_invalid("a\xC3", 2), 1);           /* truncated */
    cr_assert_eq(utf8_first_invalid("\xC3(", 2), 0);           /* bad continuation */
    cr_assert_eq(utf8_first_invalid("\xC0\xAF", 2), 0);        /* overlong '/' */
    cr_assert_eq(utf8_first_invalid("\xE0\x80\xAF", 3), 0);    /* overlong '/' */
    cr_assert_eq(utf8_first_invalid("\xED\xA0\x80", 3), 0);    /* surrogate U+D800 */
    cr_assert_eq(utf8_first_invalid("\xF4\x90\x80\x80", 4), 0);/* U+110000 */
    cr_assert_eq(utf8_first_invalid("x\xFF", 2), 1);
}

static void check_is_valid_utf8(const char *path)
{
    Lines l = sample_lines(path);
    size_t bad = utf8_first_invalid(l.text, l.len);
    cr_assert_eq(bad, (size_t)-1, "%s: invalid UTF-8 at byte offset %zu", path, bad);
    lines_free(&l);
}

Test(sample_data, is_valid_utf8) { check_is_valid_utf8(SAMPLE_PATH); }
Test(sample_de_data, is_valid_utf8) { check_is_valid_utf8(SAMPLE_DE_PATH); }

static void check_has_no_carriage_return_or_other_control_bytes(const char *path)
{
    Lines l = sample_lines(path);
    for (size_t i = 0; i < l.n; i++) {
        for (const char *p = l.line[i]; *p; p++) {
            unsigned char c = (unsigned char)*p;
            cr_assert_neq(c, '\r', "%s:%zu: carriage return", path, i + 1);
            cr_assert(c == '\t' || (c >= 0x20 && c != 0x7F), "%s:%zu: control byte 0x%02x",
                      path, i + 1, c);
        }
    }
    lines_free(&l);
}

Test(sample_data, has_no_carriage_return_or_other_control_bytes) { check_has_no_carriage_return_or_other_control_bytes(SAMPLE_PATH); }
Test(sample_de_data, has_no_carriage_return_or_other_control_bytes) { check_has_no_carriage_return_or_other_control_bytes(SAMPLE_DE_PATH); }

static void check_every_line_has_two_nonempty_tab_separated_columns(const char *path)
{
    Lines l = sample_lines(path);
    for (size_t i = 0; i < l.n; i++) {
        const char *s = l.line[i];
        const char *tab = strchr(s, '\t');
        cr_assert_not_null(tab, "%s:%zu: no tab in \"%s\"", path, i + 1, s);
        cr_assert_null(strchr(tab + 1, '\t'), "%s:%zu: more than two columns", path, i + 1);
        cr_assert_gt(tab - s, 0, "%s:%zu: empty first column", path, i + 1);
        cr_assert_neq(tab[1], '\0', "%s:%zu: empty second column", path, i + 1);
        cr_assert(s[0] != ' ' && tab[-1] != ' ' && tab[1] != ' ' && s[strlen(s) - 1] != ' ',
                  "%s:%zu: column with leading or trailing space", path, i + 1);
    }
    lines_free(&l);
}

Test(sample_data, every_line_has_two_nonempty_tab_separated_columns) { check_every_line_has_two_nonempty_tab_separated_columns(SAMPLE_PATH); }
Test(sample_de_data, every_line_has_two_nonempty_tab_separated_columns) { check_every_line_has_two_nonempty_tab_separated_columns(SAMPLE_DE_PATH); }

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_has_no_duplicate_line(const char *path)
{
    Lines l = sample_lines(path);
    qsort(l.line, l.n, sizeof *l.line, cmp_str_ptr);
    for (size_t i = 1; i < l.n; i++)
        cr_assert_str_neq(l.line[i - 1], l.line[i], "%s: duplicate line \"%s\"", path, l.line[i]);
    lines_free(&l);
}

Test(sample_data, has_no_duplicate_line) { check_has_no_duplicate_line(SAMPLE_PATH); }
Test(sample_de_data, has_no_duplicate_line) { check_has_no_duplicate_line(SAMPLE_DE_PATH); }

static void check_has_between_300_and_1000_lines(const char *path)
{
    Lines l = sample_lines(path);
    cr_assert(l.n >= 300 && l.n <= 1000, "%s has %zu lines", path, l.n);
    for (size_t i = 0; i < l.n; i++)
        cr_assert_neq(l.line[i][0], '\0', "%s:%zu: empty line", path, i + 1);
    lines_free(&l);
}

Test(sample_data, has_between_300_and_1000_lines) { check_has_between_300_and_1000_lines(SAMPLE_PATH); }
Test(sample_de_data, has_between_300_and_1000_lines) { check_has_between_300_and_1000_lines(SAMPLE_DE_PATH); }
