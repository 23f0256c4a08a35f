/* Unit tests of the corpus reader (src/text/corpus.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "text/corpus.h"
#include "base/utf8.h"

/* Parses a copy of text[0..len) as file "F". */
static int parse_n(Corpus *c, const char *text, size_t len, Direction dir, bool skip_bad, Err *e)
{
    char *data = malloc(len + 1);
    memcpy(data, text, len);
    data[len] = '\0';
    CorpusOpts o = corpus_opts_tatoeba(dir);
    o.skip_bad = skip_bad;
    return corpus_parse(c, "F", data, len, &o, e);
}

static int parse(Corpus *c, const char *text, Direction dir, bool skip_bad, Err *e)
{
    return parse_n(c, text, strlen(text), dir, skip_bad, e);
}

static void expect_pair(const Corpus *c, size_t i, const char *src, const char *tgt, size_t line)
{
    cr_assert_lt(i, c->n);
    cr_assert_str_eq(c->pairs[i].src, src);
    cr_assert_str_eq(c->pairs[i].tgt, tgt);
    cr_assert_eq(c->pairs[i].src_len, strlen(src));
    cr_assert_eq(c->pairs[i].tgt_len, strlen(tgt));
    cr_assert_eq(c->pairs[i].line, line, "pair %zu: line %zu, expected %zu", i, c->pairs[i].line,
                 line);
}

static void expect_error_opts(const char *text, const CorpusOpts *o, const char *want)
{
    Corpus c;
    Err e;
    cr_assert_eq(corpus_parse(&c, "F", xstrdup(text), strlen(text), o, &e), -1);
    cr_assert_str_eq(e.msg, want);
}

static void expect_error(const char *text, size_t len, const char *msg)
{
    Corpus c;
    Err e = {{0}};
    cr_assert_eq(parse_n(&c, text, len, DIRECTION_EN_FR, false, &e), -1);
    cr_assert_str_eq(e.msg, msg);
    cr_assert_null(c.pairs);
    cr_assert_null(c.data);
}

Test(corpus, two_columns_en_fr)
{
    Corpus c;
    Err e;
    cr_assert_eq(parse(&c, "Go.\tVa !\nHi.\tSalut !\n", DIRECTION_EN_FR, false, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.lines, 2);
    cr_assert_eq(c.blank, 0);
    cr_assert_eq(c.bad, 0);
    expect_pair(&c, 0, "Go.", "Va !", 1);
    expect_pair(&c, 1, "Hi.", "Salut !", 2);
    corpus_free(&c);
}

Test(corpus, fr_en_swaps_columns)
{
    Corpus c;
    Err e;
    cr_assert_eq(parse(&c, "Go.\tVa !\nHi.\tSalut !\tCC-BY (x)\n", DIRECTION_FR_EN, false, &e), 0);
    cr_assert_eq(c.n, 2);
    expect_pair(&c, 0, "Va !", "Go.", 1);
    expect_pair(&c, 1, "Salut !", "Hi.", 2);
    corpus_free(&c);
}

Test(corpus, three_columns_attribution_ignored)
{
    Corpus c;
    Err e;
    const char *t = "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM)\n"
                    "Run!\tCours\u202f!\textra\tmore\n";
    cr_assert_eq(parse(&c, t, DIRECTION_EN_FR, false, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 2);
    expect_pair(&c, 0, "Go.", "Va !", 1);
    expect_pair(&c, 1, "Run!", "Cours\u202f!", 2);
    corpus_free(&c);
}

Test(corpus, bom_crlf_blank_lines_and_missing_final_newline)
{
    Corpus c;
    Err e;
    const char *t = "\xEF\xBB\xBFGo.\tVa !\r\n\r\n\nHi.\tSalut !\tattr\r\n   \nWho?\tQui ?";
    cr_assert_eq(parse(&c, t, DIRECTION_EN_FR, false, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 3);
    cr_assert_eq(c.lines, 6);
    cr_assert_eq(c.blank, 3);
    expect_pair(&c, 0, "Go.", "Va !", 1);
    expect_pair(&c, 1, "Hi.", "Salut !", 4);
    expect_pair(&c, 2, "Who?", "Qui ?", 6);
    corpus_free(&c);
}

Test(corpus, blank_lines_count_in_error_line_numbers)
{
    const char *t = "\n\nGo.\tVa !\r\n\r\nbroken\n";
    expect_error(t, strlen(t), "F:5: only one column (expected English<TAB>French)");
}

Test(corpus, one_column)
{
    expect_error("Go.\tVa !\nHello\n", 15, "F:2: only one column (expected English<TAB>French)");
}

Test(corpus, empty_english_side)
{
    expect_error("Go.\tVa !\n\tSalut\n", 16, "F:2: empty English side");
}

Test(corpus, whitespace_only_french_side)
{
    /* spaces and a no-break space only */
    const char *t = "Go.\tVa !\nHi.\t  \xC2\xA0 \n";
    expect_error(t, strlen(t), "F:2: empty French side");
}

Test(corpus, empty_french_side_before_attribution)
{
    const char *t = "Hi.\t\tCC-BY\n";
    expect_error(t, strlen(t), "F:1: empty French side");
}

Test(corpus, invalid_utf8_names_byte)
{
    const char *t = "Go.\tVa !\nHi.\tSal\xC3ut\n";
    expect_error(t, strlen(t), "F:2: invalid UTF-8 at byte 8");
}

Test(corpus, invalid_utf8_byte_counts_after_bom)
{
    const char *t = "\xEF\xBB\xBF\xFFHi.\tSalut\n";
    expect_error(t, strlen(t), "F:1: invalid UTF-8 at byte 1");
}

Test(corpus, invalid_utf8_in_ignored_column_is_still_an_error)
{
    const char *t = "Hi.\tSalut\tby \xE9t\xE9\n";
    expect_error(t, strlen(t), "F:1: invalid UTF-8 at byte 14");
}

Test(corpus, nul_byte)
{
    const char t[] = "Go.\tVa !\nHi.\tSa\0lut\n";
    expect_error(t, sizeof t - 1, "F:2: NUL byte at byte 7");
}

Test(corpus, invalid_utf8_before_nul_is_reported_first)
{
    const char t[] = "H\x80i.\tSa\0lut\n";
    expect_error(t, sizeof t - 1, "F:1: invalid UTF-8 at byte 2");
}

/* Found by fuzz/corpus.c: a CR that did not end the line was kept inside a side
   (and CR-only line ends made one pair of a whole file). The first fault of the
   line is reported. */
Test(corpus, fuzz_found_stray_carriage_returns)
{
    /* len 0: strlen(text) */
    static const struct { const char *text; size_t len; const char *msg; } cases[] = {
        {"3\r\t3", 0, "F:1: carriage return inside the line at byte 2"},
        {"Go.\tVa !\rHi.\tSalut !\r", 0, "F:1: carriage return inside the line at byte 9"},
        {"Go.\tVa !\nHi.\tSalut\tby\rme\n", 0, "F:2: carriage return inside the line at byte 13"},
        {"Hi.\tSalut\r\r\n", 0, "F:1: carriage return inside the line at byte 10"},
        {"\r  \r\n", 0, "F:1: carriage return inside the line at byte 1"},
        {"H\ri.\tSa\0lut\n", 12, "F:1: carriage return inside the line at byte 2"},
        {"Hi.\tSa\0l\rut\n", 12, "F:1: NUL byte at byte 7"},
        {"H\x80i\r.\tSalut\n", 0, "F:1: invalid UTF-8 at byte 2"},
        {"\xEF\xBB\xBFHi.\r\tSalut\n", 0, "F:1: carriage return inside the line at byte 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
        expect_error(cases[i].text, len, cases[i].msg);
    }
    /* with skip_bad the line is counted as bad and the others are kept */
    Corpus c;
    Err e;
    cr_assert_eq(parse(&c, "Go.\tVa !\nA\rB\tC\nHi.\tSalut\n", DIRECTION_EN_FR, true, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.bad, 1);
    cr_assert_str_eq(c.first_bad[0].err.msg, "F:2: carriage return inside the line at byte 2");
    corpus_free(&c);
}

Test(corpus, empty_file_and_blank_only_file)
{
    expect_error("", 0, "F: no sentence pairs");
    expect_error("\n\r\n  \n", 6, "F: no sentence pairs");
    expect_error("\xEF\xBB\xBF", 3, "F: no sentence pairs");
}

Test(corpus, skip_bad_counts_and_keeps_first_lines)
{
    Corpus c;
    Err e;
    const char *t = "one\n"           /* 1 bad */
                    "Go.\tVa !\n"     /* 2 */
                    "\tx\n"           /* 3 bad */
                    "\n"              /* 4 blank */
                    "a\t \n"          /* 5 bad */
                    "b\xFF\tc\n"      /* 6 bad */
                    "Hi.\tSalut !\n"  /* 7 */
                    "x\n"             /* 8 bad */
                    "y\n"             /* 9 bad */
                    "Who?\tQui ?\n";  /* 10 */
    cr_assert_eq(parse(&c, t, DIRECTION_EN_FR, true, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 3);
    cr_assert_eq(c.lines, 10);
    cr_assert_eq(c.blank, 1);
    cr_assert_eq(c.bad, 6);
    cr_assert_eq(c.n_first_bad, 5);
    size_t want[] = {1, 3, 5, 6, 8};
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(c.first_bad[i].line, want[i]);
    cr_assert_str_eq(c.first_bad[0].err.msg, "F:1: only one column (expected English<TAB>French)");
    cr_assert_str_eq(c.first_bad[1].err.msg, "F:3: empty English side");
    cr_assert_str_eq(c.first_bad[2].err.msg, "F:5: empty French side");
    cr_assert_str_eq(c.first_bad[3].err.msg, "F:6: invalid UTF-8 at byte 2");
    expect_pair(&c, 0, "Go.", "Va !", 2);
    expect_pair(&c, 1, "Hi.", "Salut !", 7);
    expect_pair(&c, 2, "Who?", "Qui ?", 10);
    corpus_free(&c);
}

Test(corpus, skip_bad_with_no_good_line_is_an_error)
{
    Corpus c;
    Err e;
    cr_assert_eq(parse(&c, "a\nb\n\n", DIRECTION_EN_FR, true, &e), -1);
    cr_assert_str_eq(e.msg, "F: no sentence pairs (all 2 non-blank lines are bad)");
}

Test(corpus, note_bad_keeps_lowest_lines_sorted)
{
    Corpus c;
    memset(&c, 0, sizeof c);
    size_t lines[] = {40, 10, 30, 50, 20, 60, 5, 45};
    for (size_t i = 0; i < 8; i++) {
        Err m;
        err_set(&m, "F:%zu: x", lines[i]);
        corpus_note_bad(&c, lines[i], &m);
    }
    cr_assert_eq(c.bad, 8);
    cr_assert_eq(c.n_first_bad, 5);
    size_t want[] = {5, 10, 20, 30, 40};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(c.first_bad[i].line, want[i]);
        char buf[32];
        snprintf(buf, sizeof buf, "F:%zu: x", want[i]);
        cr_assert_str_eq(c.first_bad[i].err.msg, buf);
    }
}

Test(corpus, missing_file)
{
    Corpus c;
    Err e;
    CorpusOpts o = corpus_opts_tatoeba(DIRECTION_EN_FR);
    cr_assert_eq(corpus_read(&c, "/nonexistent/fra.txt", &o, &e), -1);
    cr_assert_str_eq(e.msg, "/nonexistent/fra.txt: cannot open: No such file or directory");
}

Test(corpus, read_from_file)
{
    char *dir = tmpdir_new();
    char *path = strf("%s/c.txt", dir);
    write_file(path, "Go.\tVa !\nHi.\tSalut !\n\nbad\n");
    Corpus c;
    Err e;
    CorpusOpts o = corpus_opts_tatoeba(DIRECTION_EN_FR);
    cr_assert_eq(corpus_read(&c, path, &o, &e), -1);
    char *want = strf("%s:4: only one column (expected English<TAB>French)", path);
    cr_assert_str_eq(e.msg, want);
    o.skip_bad = true;
    cr_assert_eq(corpus_read(&c, path, &o, &e), 0);
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.bad, 1);
    cr_assert_str_eq(c.name, path);
    corpus_free(&c);
    rm_rf(dir);
    free(want);
    free(path);
    free(dir);
}

Test(corpus, direction_names)
{
    Direction d;
    cr_assert_eq(direction_parse("en-fr", &d), 0);
    cr_assert_str_eq(d.name, "en-fr");
    cr_assert_str_eq(d.src.code, "en");
    cr_assert_str_eq(d.tgt.code, "fr");
    cr_assert_eq(direction_parse("deu-eng", &d), 0);
    cr_assert_str_eq(d.name, "de-en");
    cr_assert_eq(direction_parse("cmn-en", &d), 0);
    cr_assert_str_eq(d.name, "cmn-en");
    cr_assert_eq(direction_parse("de-fr", &d), 0);
    cr_assert_str_eq(d.name, "de-fr");
    cr_assert_eq(direction_parse("EN-FR", &d), -1);
    cr_assert_eq(direction_parse("en-xx", &d), -1);
    cr_assert_eq(direction_parse("en", &d), -1);
    cr_assert_eq(direction_parse("en-", &d), -1);
    cr_assert_eq(direction_parse("-en", &d), -1);
    cr_assert_eq(direction_parse("english-fr", &d), -1);
    cr_assert_eq(direction_parse("en-fr-de", &d), -1);
    cr_assert_str_eq(DIRECTION_FR_EN.name, "fr-en");
}

/* A Tatoeba file in XX-en: English first, the source second; messages name both. */
Test(corpus, tatoeba_other_languages)
{
    Direction d;
    cr_assert_eq(direction_parse("de-en", &d), 0);
    CorpusOpts o = corpus_opts_tatoeba(d);
    const char *t = "Go.\tGeh.\nHi.\tHallo!\tCC-BY (x)\n";
    Corpus c;
    Err e;
    cr_assert_eq(corpus_parse(&c, "F", xstrdup(t), strlen(t), &o, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 2);
    cr_assert_str_eq(c.pairs[1].src, "Hallo!");
    cr_assert_str_eq(c.pairs[1].tgt, "Hi.");
    corpus_free(&c);
    expect_error_opts("Go.\tGeh.\nHi.\n", &o, "F:2: only one column (expected English<TAB>German)");
    expect_error_opts("Go.\t \n", &o, "F:1: empty German side");
    cr_assert_eq(direction_parse("en-el", &d), 0);
    CorpusOpts g = corpus_opts_tatoeba(d);
    expect_error_opts("\tΓεια\n", &g, "F:1: empty English side");
    expect_error_opts("Hi.\t\n", &g, "F:1: empty Greek side");
    cr_assert_eq(direction_parse("en-cmn", &d), 0);
    CorpusOpts m = corpus_opts_tatoeba(d);
    expect_error_opts("Hi.\n", &m, "F:1: only one column (expected English<TAB>cmn)");
}

Test(corpus, full_corpus_reads)
{
    const char *path = fra_corpus();
    if (!path)
        cr_skip_test("../shared/data/fra.txt not present");
    Corpus c;
    Err e;
    CorpusOpts o = corpus_opts_tatoeba(DIRECTION_EN_FR);
    cr_assert_eq(corpus_read(&c, path, &o, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n, 162008);
    cr_assert_eq(c.lines, 162008);
    cr_assert_str_eq(c.pairs[0].src, "Go.");
    cr_assert_str_eq(c.pairs[0].tgt, "Va !");
    corpus_free(&c);
}

/* utf8val: the validator behind the corpus and vocabulary checks. */
Test(utf8val, check_accepts_and_rejects)
{
    cr_assert_eq(utf8_check("abc", 3), 3);
    cr_assert_eq(utf8_check("\xC3\xA9t\xC3\xA9", 5), 5);
    cr_assert_eq(utf8_check("\xE2\x80\xAF", 3), 3);          /* U+202F */
    cr_assert_eq(utf8_check("\xF0\x9F\x98\x80", 4), 4);      /* U+1F600 */
    cr_assert_eq(utf8_check("\xF4\x8F\xBF\xBF", 4), 4);      /* U+10FFFF */
    cr_assert_eq(utf8_check("ab\xC3", 3), 2);                /* truncated */
    cr_assert_eq(utf8_check("abcdefghij\x80", 11), 10);      /* lone continuation */
    cr_assert_eq(utf8_check("\xC0\xAF", 2), 0);              /* overlong */
    cr_assert_eq(utf8_check("\xE0\x80\xAF", 3), 0);          /* overlong */
    cr_assert_eq(utf8_check("x\xED\xA0\x80", 4), 1);         /* surrogate */
    cr_assert_eq(utf8_check("\xF4\x90\x80\x80", 4), 0);      /* above U+10FFFF */
    cr_assert_eq(utf8_check("\xF5\x80\x80\x80", 4), 0);
    cr_assert_eq(utf8_check("\xE2\x28\xA1", 3), 0);          /* bad continuation */
}

Test(utf8val, spaces)
{
    cr_assert(utf8_blank("", 0));
    cr_assert(utf8_blank(" \xC2\xA0\xE2\x80\xAF\xE3\x80\x80", 9));
    cr_assert(!utf8_blank(" a ", 3));
    cr_assert(utf8_has_space("a\xC2\xA0", 3));
    cr_assert(!utf8_has_space("\xC3\xA9t\xC3\xA9", 5));
    uint32_t cp;
    cr_assert_eq(utf8_decode("\xF0\x9F\x98\x80", 4, &cp), 4);
    cr_assert_eq(cp, 0x1F600);
    cr_assert_eq(utf8_decode("\xC3\xA9", 2, &cp), 2);
    cr_assert_eq(cp, 0xE9);
}

/* allow_empty (an empty valid split): no pairs is fine, but not when lines were bad. */
Test(corpus, allow_empty_accepts_no_pairs_but_not_only_bad_lines)
{
    CorpusOpts o = corpus_opts_tatoeba(DIRECTION_EN_FR);
    o.allow_empty = true;
    Corpus c;
    Err e;
    cr_assert_eq(corpus_parse(&c, "v.tsv", strdup("\n  \n"), 4, &o, &e), 0, "%s", e.msg);
    cr_expect_eq(c.n, 0);
    corpus_free(&c);
    o.allow_empty = false;
    cr_expect_eq(corpus_parse(&c, "v.tsv", strdup("\n  \n"), 4, &o, &e), -1);
    cr_expect_str_eq(e.msg, "v.tsv: no sentence pairs");
    o.allow_empty = true;
    o.skip_bad = true;
    cr_expect_eq(corpus_parse(&c, "v.tsv", strdup("one column\n"), 11, &o, &e), -1);
    cr_expect_str_eq(e.msg, "v.tsv: no sentence pairs (all 1 non-blank lines are bad)");
}
