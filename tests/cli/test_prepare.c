/* End-to-end tests of `s2s prepare`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "helpers.h"

static const char *const OUTPUTS[] = {"train.tsv", "valid.tsv", "test.tsv", "vocab.src", "vocab.tgt",
                                      "prepare.json", "train.ids", "valid.ids", "test.ids"};
#define NOUTPUTS 9

/* Lowercase words separated by single spaces: every tokenizer leaves them as they are. */
#define SMALL                                \
    "hello\tbonjour\n"                       \
    "the cat\tle chat\n"                     \
    "the dog\tle chien\n"                    \
    "the cat sleeps\tle chat dort\n"         \
    "the big black cat sleeps\tle gros chat noir dort\n" \
    "the dog sleeps\tle chien dort\n"        \
    "a cat\tun chat\n"                       \
    "a dog\tun chien\n"                      \
    "hello\tsalut\n"                         \
    "the cat eats\tle chat mange\n"          \
    "the dog eats\tle chien mange\n"

#define SPECIALS "<pad>\t0\n<unk>\t0\n<bos>\t0\n<eos>\t0\n"

/* Runs prepare on corpus bytes that must fail; checks status, the whole stderr, empty
   stdout, and that no output directory appeared. */
static void expect_failure(const char *data, size_t len, const char *const *extra, int status,
                           const char *want_err_fmt)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_bytes(corpus, data, len);
    const char *args[16] = {"prepare", corpus, "-o", out};
    size_t n = 4;
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    RunResult r = run_s2s(NULL, args);
    char *want = strf(want_err_fmt, corpus);
    cr_assert_eq(r.status, status, "status %d, stderr: %s", r.status, r.err);
    cr_assert_str_eq(r.err, want);
    cr_assert_str_eq(r.out, "");
    cr_assert(!file_exists(out), "output directory was created");
    cr_assert_eq(dir_count(dir), 1);
    run_free(&r);
    rm_rf(dir);
    free(want);
    free(out);
    free(corpus);
    free(dir);
}

#define FAIL(data, status, msg, ...) \
    expect_failure((data), sizeof(data) - 1, (const char *const[]){__VA_ARGS__ __VA_OPT__(,) NULL}, (status), (msg))

Test(cli_prepare, exact_files_without_valid_and_test)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_file(corpus, SMALL);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                          "--max-len", "4");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.out, "");
    cr_assert(strstr(r.err, "prepare: 11 pairs read, 1 longer than 4 tokens dropped, 10 kept\n"),
              "%s", r.err);
    cr_assert(strstr(r.err, "prepare: train 10, valid 0, test 0 pairs; vocab en 11, fr 10\n"),
              "%s", r.err);
    /* no --direction: the summary says which was taken */
    cr_assert(strstr(r.err, "prepare: read as English to French, the default --direction en-fr; give --direction "
                            "en-XX or XX-en for another language\n"), "%s", r.err);
    cr_assert_eq(dir_count(out), NOUTPUTS);
    expect_file(out, "train.tsv",
                "hello\tbonjour\nthe cat\tle chat\nthe dog\tle chien\n"
                "the cat sleeps\tle chat dort\nthe dog sleeps\tle chien dort\n"
                "a cat\tun chat\na dog\tun chien\nhello\tsalut\n"
                "the cat eats\tle chat mange\nthe dog eats\tle chien mange\n");
    expect_file(out, "valid.tsv", "");
    expect_file(out, "test.tsv", "");
    expect_file(out, "vocab.src",
                SPECIALS "the\t6\ncat\t4\ndog\t4\na\t2\neats\t2\nhello\t2\nsleeps\t2\n");
    expect_file(out, "vocab.tgt", SPECIALS "le\t6\nchat\t4\nchien\t4\ndort\t2\nmange\t2\nun\t2\n");
    char *json = strf(
        "{\n"
        "  \"corpus\": \"%s\",\n"
        "  \"options\": {\n"
        "    \"direction\": \"en-fr\",\n"
        "    \"source_lang\": \"en\",\n"
        "    \"target_lang\": \"fr\",\n"
        "    \"keep_case\": true,\n"
        "    \"seed\": 1,\n"
        "    \"valid\": 0,\n"
        "    \"test\": 0,\n"
        "    \"min_freq\": 2,\n"
        "    \"max_vocab\": null,\n"
        "    \"max_len\": 4,\n"
        "    \"skip_bad\": false\n"
        "  },\n"
        "  \"lines_read\": 11,\n"
        "  \"blank_lines\": 0,\n"
        "  \"bad_lines_skipped\": 0,\n"
        "  \"bad_line_numbers\": [],\n"
        "  \"pairs_read\": 11,\n"
        "  \"filtered_by_length\": 1,\n"
        "  \"pairs_kept\": 10,\n"
        "  \"source_groups\": 9,\n"
        "  \"splits\": {\n"
        "    \"train\": {\"pairs\": 10, \"source_tokens\": 22, \"target_tokens\": 22, "
        "\"source_oov_rate\": 0.000000, \"target_oov_rate\": 0.090909},\n"
        "    \"valid\": {\"pairs\": 0, \"source_tokens\": 0, \"target_tokens\": 0, "
        "\"source_oov_rate\": 0.000000, \"target_oov_rate\": 0.000000},\n"
        "    \"test\": {\"pairs\": 0, \"source_tokens\": 0, \"target_tokens\": 0, "
        "\"source_oov_rate\": 0.000000, \"target_oov_rate\": 0.000000}\n"
        "  },\n"
        "  \"vocab\": {\"source\": 11, \"target\": 10},\n"
        "  \"length_histogram\": {\n"
        "    \"source\": [0, 2, 4, 4],\n"
        "    \"target\": [0, 2, 4, 4]\n"
        "  }\n"
        "}\n",
        corpus);
    expect_file(out, "prepare.json", json);
    run_free(&r);
    rm_rf(dir);
    free(json);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_prepare, fr_en_keep_case_crlf_bom_three_columns)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_file(corpus, "\xEF\xBB\xBFThe cat\tLe chat\tCC-BY 2.0 (France)\r\n\r\n"
                       "the cat\tle chat\tCC-BY\r\nThe cat\tLe chat\r\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "--output", out, "--direction=fr-en",
                          "--keep-case", "--valid=0", "--test=0", "--min-freq", "1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(!strstr(r.err, "default --direction"), "%s", r.err);
    expect_file(out, "train.tsv", "Le chat\tThe cat\nle chat\tthe cat\nLe chat\tThe cat\n");
    expect_file(out, "vocab.src", SPECIALS "chat\t3\nLe\t2\nle\t1\n");
    expect_file(out, "vocab.tgt", SPECIALS "cat\t3\nThe\t2\nthe\t1\n");
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    cr_assert(strstr(json, "    \"direction\": \"fr-en\",\n    \"source_lang\": \"fr\",\n"
                           "    \"target_lang\": \"en\",\n    \"keep_case\": true,\n"),
              "%s", json);
    cr_assert(strstr(json, "  \"lines_read\": 4,\n  \"blank_lines\": 1,\n"), "%s", json);
    cr_assert(strstr(json, "  \"pairs_kept\": 3,\n  \"source_groups\": 2,\n"), "%s", json);
    run_free(&r);
    rm_rf(dir);
    free(json);
    free(path);
    free(out);
    free(corpus);
    free(dir);
}

/* Case is kept by default; --lowercase folds it, and prepare.json records which. */
Test(cli_prepare, lowercase_folds_case_and_is_recorded)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out"), *out2 = file_in(dir, "out2");
    write_file(corpus, "The cat\tLe chat\nthe cat\tle chat\nThe CAT\tLe chat\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--lowercase", "--valid=0", "--test=0",
                          "--min-freq", "1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    expect_file(out, "train.tsv", "The cat\tLe chat\nthe cat\tle chat\nThe CAT\tLe chat\n");
    expect_file(out, "vocab.src", SPECIALS "cat\t3\nthe\t3\n");
    expect_file(out, "vocab.tgt", SPECIALS "chat\t3\nle\t3\n");
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    cr_expect(strstr(json, "    \"keep_case\": false,\n"), "%s", json);
    run_free(&r);
    r = RUN_S2S(NULL, "prepare", corpus, "-o", out2, "--valid=0", "--test=0", "--min-freq", "1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    expect_file(out2, "vocab.src", SPECIALS "The\t2\ncat\t2\nCAT\t1\nthe\t1\n");
    run_free(&r);
    rm_rf(dir);
    free(json);
    free(path);
    free(out2);
    free(out);
    free(corpus);
    free(dir);
}

/* A generated corpus of n pairs whose sources repeat (every source 1 to 3 times). */
static char *gen_corpus(size_t n)
{
    Buf b = {0};
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "w%zu x\tm%zu y\n", (i * 37) % (n / 2 + 1), i);
    return buf_take(&b);
}

/* Reads a .tsv into an array of lines (sources only when sources_only), NULL-terminated. */
static char **tsv_sources(const char *path, size_t *count)
{
    char *text = slurp(path, NULL);
    cr_assert_not_null(text, "%s", path);
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        cr_assert_not_null(tab, "no tab in %s", line);
        if (n + 1 >= cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = strndup(line, (size_t)(tab - line));
    }
    v[n] = NULL;
    free(text);
    *count = n;
    return v;
}

static void free_lines(char **v)
{
    for (size_t i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No source string occurs in two of the split files of dir; returns the pair counts. */
static void expect_disjoint(const char *out, size_t counts[3])
{
    char **src[3];
    for (int s = 0; s < 3; s++) {
        char *p = file_in(out, OUTPUTS[s]);
        src[s] = tsv_sources(p, &counts[s]);
        qsort(src[s], counts[s], sizeof(char *), cmp_str);
        free(p);
    }
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            for (size_t i = 0; i < counts[a]; i++)
                cr_assert_null(bsearch(&src[a][i], src[b], counts[b], sizeof(char *), cmp_str),
                               "source '%s' in %s and %s", src[a][i], OUTPUTS[a], OUTPUTS[b]);
    for (int s = 0; s < 3; s++)
        free_lines(src[s]);
}

Test(cli_prepare, default_sizes_adapt_and_splits_are_disjoint)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    char *data = gen_corpus(345);
    write_file(corpus, data);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    size_t counts[3];
    expect_disjoint(out, counts);
    /* 10% of 345 is 34. The sources come in groups of two plus one single one, and a
       split never exceeds its size: with seed 1 the single lands in test, which ends
       one pair short. */
    cr_assert_eq(counts[1], 34);
    cr_assert_eq(counts[2], 33);
    cr_assert_eq(counts[0], 345 - 67);
    cr_assert(strstr(r.err, "prepare: train 278, valid 34, test 33 pairs;"), "%s", r.err);
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    cr_assert(strstr(json, "    \"valid\": 34,\n    \"test\": 34,\n"), "%s", json);
    cr_assert(strstr(json, "  \"source_groups\": 173,\n"), "%s", json);
    free(json);
    free(path);
    /* every pair is in exactly one file, in corpus order within each */
    char *all = strf("%s/all", dir);
    char *cmd = strf("cat '%s/train.tsv' '%s/valid.tsv' '%s/test.tsv' | sort > '%s' && "
                     "sort '%s' | cmp -s - '%s'", out, out, out, all, corpus, all);
    cr_assert_eq(system(cmd), 0, "the splits are not a partition of the corpus");
    run_free(&r);
    rm_rf(dir);
    free(cmd);
    free(all);
    free(data);
    free(out);
    free(corpus);
    free(dir);
}

static void expect_same_outputs(const char *a, const char *b)
{
    for (size_t i = 0; i < NOUTPUTS; i++) {
        char *pa = file_in(a, OUTPUTS[i]), *pb = file_in(b, OUTPUTS[i]);
        size_t la, lb;
        char *da = slurp(pa, &la), *db = slurp(pb, &lb);
        cr_assert_not_null(da);
        cr_assert_not_null(db);
        cr_assert(la == lb && memcmp(da, db, la) == 0, "%s differs", OUTPUTS[i]);
        free(da);
        free(db);
        free(pa);
        free(pb);
    }
}

Test(cli_prepare, same_seed_same_bytes_other_seed_other_split)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *a = file_in(dir, "a"), *b = file_in(dir, "b"), *c = file_in(dir, "c");
    char *data = gen_corpus(400);
    write_file(corpus, data);
    RunResult r1 = RUN_S2S(NULL, "prepare", corpus, "-o", a, "--seed", "7");
    RunResult r2 = RUN_S2S(NULL, "prepare", corpus, "-o", b, "--seed", "7");
    RunResult r3 = RUN_S2S(NULL, "prepare", corpus, "-o", c, "--seed", "8");
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_assert_eq(r3.status, 0, "%s", r3.err);
    expect_same_outputs(a, b);
    char *va = file_in(a, "valid.tsv"), *vc = file_in(c, "valid.tsv");
    char *ta = slurp(va, NULL), *tc = slurp(vc, NULL);
    cr_assert_str_neq(ta, tc);
    /* running again into a directory holding the outputs replaces them */
    RunResult r4 = RUN_S2S(NULL, "prepare", corpus, "-o", c, "--seed", "7");
    cr_assert_eq(r4.status, 0, "%s", r4.err);
    expect_same_outputs(a, c);
    cr_assert_eq(dir_count(c), NOUTPUTS);
    run_free(&r1);
    run_free(&r2);
    run_free(&r3);
    run_free(&r4);
    rm_rf(dir);
    free(ta);
    free(tc);
    free(va);
    free(vc);
    free(data);
    free(a);
    free(b);
    free(c);
    free(corpus);
    free(dir);
}

#define PINNED_VALID "the big black cat sleeps\tle gros chat noir dort\nthe dog eats\tle chien mange\n"
#define PINNED_TEST "the dog sleeps\tle chien dort\na cat\tun chat\n"
Test(cli_prepare, pinned_split_for_seed_1)
{
    /* guards the split against accidental change: same input and seed, same files,
       on every machine and in every version */
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_file(corpus, SMALL);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "2", "--test", "2",
                          "--min-freq", "1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    size_t counts[3];
    expect_disjoint(out, counts);
    cr_assert_eq(counts[0], 7);
    cr_assert_eq(counts[1], 2);
    cr_assert_eq(counts[2], 2);
    char *v = file_in(out, "valid.tsv"), *t = file_in(out, "test.tsv");
    char *vt = slurp(v, NULL), *tt = slurp(t, NULL);
    cr_assert_str_eq(vt, PINNED_VALID);
    cr_assert_str_eq(tt, PINNED_TEST);
    run_free(&r);
    rm_rf(dir);
    free(vt);
    free(tt);
    free(v);
    free(t);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_prepare, skip_bad_reports_count_and_first_lines)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    static const char bad[] =
                "a cat\tun chat\n"   /* 1 */
                "broken\n"           /* 2 */
                "a dog\tun chien\n"  /* 3 */
                "\tvide\n"           /* 4 */
                "x\t \n"             /* 5 */
                "\n"                 /* 6 */
                "b\xFF\tc\n"         /* 7 */
                "a cat\tun chat\n"   /* 8 */
                "nul\0here\tx\n"     /* 9 */
                "also broken\n"      /* 10 */
                "a dog\tun chien\n"; /* 11 */
    write_bytes(corpus, bad, sizeof bad - 1);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--skip-bad", "--valid", "0",
                          "--test", "0");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *want = strf("prepare: skipped %s:2: only one column (expected English<TAB>French)\n"
                      "prepare: skipped %s:4: empty English side\n"
                      "prepare: skipped %s:5: empty French side\n"
                      "prepare: skipped %s:7: invalid UTF-8 at byte 2\n"
                      "prepare: skipped %s:9: NUL byte at byte 4\n"
                      "prepare: skipped 6 bad lines (first: 2 4 5 7 9 ...)\n"
                      "prepare: 4 pairs read, 0 longer than 50 tokens dropped, 4 kept\n",
                      corpus, corpus, corpus, corpus, corpus);
    cr_assert(strncmp(r.err, want, strlen(want)) == 0, "stderr:\n%s\nwanted:\n%s", r.err, want);
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    cr_assert(strstr(json, "  \"lines_read\": 11,\n  \"blank_lines\": 1,\n"
                           "  \"bad_lines_skipped\": 6,\n  \"bad_line_numbers\": [2, 4, 5, 7, 9],\n"
                           "  \"pairs_read\": 4,\n"),
              "%s", json);
    cr_assert(strstr(json, "    \"skip_bad\": true\n"), "%s", json);
    expect_file(out, "train.tsv", "a cat\tun chat\na dog\tun chien\na cat\tun chat\na dog\tun chien\n");
    run_free(&r);
    rm_rf(dir);
    free(json);
    free(path);
    free(want);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_prepare, bad_corpus_lines)
{
    FAIL("a\tb\nonly\n", 1, "s2s: %s:2: only one column (expected English<TAB>French)\n");
    FAIL("a\tb\n\n  \t x\n", 1, "s2s: %s:3: empty English side\n");
    FAIL("a\tb\r\nc\t \r\n", 1, "s2s: %s:2: empty French side\n");
    FAIL("abc\xC3\t\n", 1, "s2s: %s:1: invalid UTF-8 at byte 4\n");
    FAIL("a\tb\nc\td\0e\n", 1, "s2s: %s:2: NUL byte at byte 4\n");
    FAIL("", 1, "s2s: %s: no sentence pairs\n");
    FAIL("\n\r\n", 1, "s2s: %s: no sentence pairs\n");
    FAIL("x\ny\n", 1, "s2s: %s: no sentence pairs (all 2 non-blank lines are bad)\n", "--skip-bad");
}

Test(cli_prepare, side_without_tokens)
{
    /* U+200B ZERO WIDTH SPACE is not White_Space, so the line reads fine, but the
       tokenizer treats it as a space: no tokens */
    FAIL("a cat\tun chat\nhello\t\xE2\x80\x8B\n", 1, "s2s: %s:2: French side has no tokens\n");
    FAIL("a cat\tun chat\nhello\t\xE2\x80\x8B\n", 1, "s2s: %s:2: French side has no tokens\n",
         "--direction", "fr-en");
    FAIL("\xC2\xAD\tun chat\n", 1, "s2s: %s:1: English side has no tokens\n");

    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_file(corpus, "x\ty\na cat\t\xE2\x80\x8B\n\xE2\x80\x8B\tz\nbad\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--skip-bad", "--direction",
                          "fr-en", "--valid", "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("prepare: skipped %s:2: French side has no tokens\n"
                      "prepare: skipped %s:3: English side has no tokens\n"
                      "prepare: skipped %s:4: only one column (expected English<TAB>French)\n"
                      "prepare: skipped 3 bad lines (first: 2 3 4)\n",
                      corpus, corpus, corpus);
    cr_assert(strncmp(r.err, want, strlen(want)) == 0, "stderr:\n%s", r.err);
    expect_file(out, "train.tsv", "y\tx\n");
    run_free(&r);
    rm_rf(dir);
    free(want);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_prepare, max_vocab_and_no_length_limit)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    char *out = file_in(dir, "out");
    write_file(corpus, SMALL);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                          "--max-vocab", "6", "--max-len", "0", "--min-freq", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "prepare: 11 pairs read and kept (no length limit)\n"), "%s", r.err);
    expect_file(out, "vocab.src", SPECIALS "the\t7\ncat\t5\n");
    expect_file(out, "vocab.tgt", SPECIALS "le\t7\nchat\t5\n");
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    cr_assert(strstr(json, "    \"max_vocab\": 6,\n    \"max_len\": null,\n"), "%s", json);
    cr_assert(strstr(json, "  \"vocab\": {\"source\": 6, \"target\": 6},\n"), "%s", json);
    cr_assert(strstr(json, "    \"source\": [0, 2, 4, 4, 0, 1],\n"), "%s", json);
    run_free(&r);
    rm_rf(dir);
    free(json);
    free(path);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_prepare, bad_options)
{
    FAIL("a\tb\n", 2, "s2s: prepare: unknown option '--frob' (see 's2s prepare --help')\n",
         "--frob");
    FAIL("a\tb\n", 2, "s2s: prepare: option --seed needs a value\n", "--seed");
    FAIL("a\tb\n", 2, "s2s: prepare: option --min-freq must be between 1 and 1000000000, got 0\n",
         "--min-freq", "0");
    FAIL("a\tb\n", 2, "s2s: prepare: option --max-vocab must be between 5 and 100000000, got 4\n",
         "--max-vocab=4");
    FAIL("a\tb\n", 2, "s2s: prepare: option --valid must be between 0 and 100000000, got -1\n",
         "--valid", "-1");
    FAIL("a\tb\n", 2, "s2s: prepare: option --max-len expects an integer, got '5x'\n",
         "--max-len", "5x");
    FAIL("a\tb\n", 2, "s2s: prepare: option --direction must be en-XX or XX-en with XX an ISO 639 "
         "language code, got 'de-fr'\n", "--direction", "de-fr");
    FAIL("a\tb\n", 2, "s2s: prepare: option --direction must be en-XX or XX-en with XX an ISO 639 "
         "language code, got 'en-xx'\n", "--direction", "en-xx");
    FAIL("a\tb\n", 2, "s2s: prepare: option --direction must be en-XX or XX-en with XX an ISO 639 "
         "language code, got 'en-en'\n", "--direction", "en-en");
    FAIL("a\tb\n", 2, "s2s: prepare: options --src-lang and --tgt-lang name the languages of --src "
         "and --tgt; for a CORPUS file use --direction\n", "--src-lang", "de");
    FAIL("a\tb\n", 2, "s2s: prepare: option --tgt-lang must be an ISO 639 language code, got "
         "'german'\n", "--tgt-lang", "german");
    FAIL("a\tb\n", 2, "s2s: prepare: give CORPUS or --src and --tgt, not both\n",
         "--src", "a.de", "--tgt", "a.en");
    FAIL("a\tb\n", 2, "s2s: prepare: option --keep-case takes no value\n", "--keep-case=yes");
    FAIL("a\tb\n", 2, "s2s: prepare: unexpected argument 'more' (see 's2s prepare --help')\n",
         "more");
}

Test(cli_prepare, runtime_limits)
{
    FAIL("a b c\tx\nd\ty\n", 1, "s2s: %s: --valid 1 and --test 1 leave no pairs for training "
                               "(2 pairs after filtering)\n",
         "--valid", "1", "--test", "1");
    FAIL("a b c\tx\n", 1, "s2s: %s: no pairs left: all 1 have more than 2 tokens on a side "
                          "(see --max-len)\n",
         "--max-len", "2");
}

Test(cli_prepare, missing_arguments_and_missing_file)
{
    RunResult r = RUN_S2S(NULL, "prepare", "-o", "/tmp/s2s-never-created");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "s2s: prepare: missing CORPUS argument (see 's2s prepare --help')\n");
    run_free(&r);
    r = RUN_S2S(NULL, "prepare", "corpus.txt");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "s2s: prepare: missing option -o DIR (see 's2s prepare --help')\n");
    run_free(&r);
    r = RUN_S2S(NULL, "prepare", "corpus.txt", "-o");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "s2s: prepare: option -o needs a value\n");
    run_free(&r);

    char *dir = tmpdir_new();
    char *out = file_in(dir, "out");
    r = RUN_S2S(NULL, "prepare", "/nonexistent/fra.txt", "-o", out);
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "s2s: /nonexistent/fra.txt: cannot open: No such file or directory\n");
    cr_assert_eq(dir_count(dir), 0);
    run_free(&r);
    rm_rf(dir);
    free(out);
    free(dir);
    cr_assert(!file_exists("/tmp/s2s-never-created"));
}

Test(cli_prepare, output_directory_rules)
{
    char *dir = tmpdir_new();
    char *corpus = file_in(dir, "c.txt");
    write_file(corpus, SMALL);

    /* a directory with other files is left alone */
    char *busy = file_in(dir, "busy");
    char *cmd = strf("mkdir '%s' && echo keep > '%s/notes.txt' && echo old > '%s/train.tsv'",
                     busy, busy, busy);
    cr_assert_eq(system(cmd), 0);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", busy);
    cr_assert_eq(r.status, 1);
    char *want = strf("s2s: %s: directory holds files other than prepare's outputs (such as "
                      "'notes.txt'); use an empty or new directory\n", busy);
    cr_assert_str_eq(r.err, want);
    cr_assert_eq(dir_count(busy), 2);
    expect_file(busy, "train.tsv", "old\n");
    run_free(&r);
    free(want);

    /* a file in the way */
    char *file = file_in(dir, "file");
    write_file(file, "x");
    r = RUN_S2S(NULL, "prepare", corpus, "-o", file);
    cr_assert_eq(r.status, 1);
    want = strf("s2s: %s: exists and is not a directory\n", file);
    cr_assert_str_eq(r.err, want);
    run_free(&r);
    free(want);

    /* a file in the way of a parent: nothing is created */
    char *under = strf("%s/file/a/b", dir);
    r = RUN_S2S(NULL, "prepare", corpus, "-o", under);
    cr_assert_eq(r.status, 1);
    want = strf("s2s: %s: cannot create directory: Not a directory\n", under);
    cr_assert_str_eq(r.err, want);
    run_free(&r);
    free(want);
    free(under);

    /* missing parents are created */
    char *deep = strf("%s/new/a/b", dir);
    r = RUN_S2S(NULL, "prepare", corpus, "-o", deep);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(dir_count(deep), NOUTPUTS);
    run_free(&r);
    char *new_ = file_in(dir, "new");
    rm_rf(new_);
    free(new_);

    /* an existing empty directory is fine */
    char *empty = file_in(dir, "empty");
    free(cmd);
    cmd = strf("mkdir '%s'", empty);
    cr_assert_eq(system(cmd), 0);
    r = RUN_S2S(NULL, "prepare", corpus, "-o", empty);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(dir_count(empty), NOUTPUTS);
    run_free(&r);

    cr_assert_eq(dir_count(dir), 4); /* c.txt busy file empty */
    rm_rf(dir);
    free(empty);
    free(deep);
    free(file);
    free(cmd);
    free(busy);
    free(corpus);
    free(dir);
}

Test(cli_prepare, help_on_stdout)
{
    RunResult r = RUN_S2S(NULL, "prepare", "--help");
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.err, "");
    cr_assert(strncmp(r.out, "usage: s2s prepare CORPUS -o DIR [options]\n", 43) == 0, "%s", r.out);
    cr_assert(strstr(r.out, "10% of the pairs"), "%s", r.out);
    /* every file it writes, the codes of subwords included */
    for (size_t i = 0; i < NOUTPUTS; i++)
        cr_expect(strstr(r.out, OUTPUTS[i]), "the help does not name %s", OUTPUTS[i]);
    cr_expect(strstr(r.out, "  bpe.src bpe.tgt "), "%s", r.out);
    run_free(&r);
    r = RUN_S2S(NULL, "--help");
    cr_assert(strstr(r.out, "  prepare    "), "%s", r.out);
    run_free(&r);
}

Test(cli_prepare, full_corpus)
{
    const char *fra = fra_corpus();
    if (!fra)
        cr_skip_test("../shared/data/fra.txt not present");
    char *dir = tmpdir_new();
    char *out = file_in(dir, "p");
    RunResult r = RUN_S2S(NULL, "prepare", fra, "-o", out);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(dir_count(out), NOUTPUTS);
    for (size_t i = 0; i < NOUTPUTS; i++) {
        char *p = file_in(out, OUTPUTS[i]);
        cr_assert(file_exists(p), "%s missing", OUTPUTS[i]);
        free(p);
    }
    size_t counts[3];
    expect_disjoint(out, counts);
    cr_assert_eq(counts[1], 2000);
    cr_assert_eq(counts[2], 2000);
    char *path = file_in(out, "prepare.json");
    char *json = slurp(path, NULL);
    char *kept = strf("  \"pairs_kept\": %zu,\n", counts[0] + counts[1] + counts[2]);
    cr_assert(strstr(json, kept), "%s", json);
    cr_assert(strstr(json, "  \"lines_read\": 162008,\n"), "%s", json);
    run_free(&r);
    rm_rf(dir);
    free(kept);
    free(json);
    free(path);
    free(out);
    free(dir);
}
