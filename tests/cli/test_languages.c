/* End-to-end tests of other language pairs and the user's own data: the German sample,
   directions en-XX / XX-en, parallel files, .gz input, valid and test sets from
   outside the corpus. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "helpers.h"

#define SAMPLE_DE "data/sample-de.tsv"

/* Whether the file at path holds the line (without its newline). */
static int has_line(const char *path, const char *line)
{
    char *text = slurp(path, NULL);
    cr_assert_not_null(text, "%s missing", path);
    size_t n = strlen(line);
    int found = 0;
    for (const char *p = text; *p && !found;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        found = len == n && memcmp(p, line, n) == 0;
        p = nl ? nl + 1 : p + len;
    }
    free(text);
    return found;
}

static void gzip_to(const char *src, const char *dst)
{
    char *cmd = strf("/bin/gzip -c -n '%s' > '%s'", src, dst);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", cmd);
    free(cmd);
}

static void expect_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    cr_assert_not_null(x, "%s missing", a);
    cr_assert_not_null(y, "%s missing", b);
    cr_assert(na == nb && memcmp(x, y, na) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* The German sample end to end: a corpus prepared by `train --direction de-en`, a few
   steps, the model's languages in info, translate and eval. */
Test(cli_languages, sample_de_end_to_end)
{
    char *dir = tmpdir_new(), *model = strf("%s/m.s2s", dir), *prep = strf("%s/m.s2s.d", dir);
    RunResult r = RUN_S2S(NULL, "train", SAMPLE_DE, "-o", model, "--direction", "de-en",
                          "--model-dim", "32", "--ff", "64", "--layers", "1", "--heads", "2",
                          "--steps", "3", "--valid-every", "0", "--threads", "1", "--quiet");
    expect_run(&r, 0, "", "");
    char *json = strf("%s/prepare.json", prep), *train = strf("%s/train.tsv", prep);
    char *vsrc = strf("%s/vocab.src", prep), *vtgt = strf("%s/vocab.tgt", prep);
    char *text = slurp(json, NULL);
    cr_assert(strstr(text, "    \"direction\": \"de-en\",\n    \"source_lang\": \"de\",\n"
                           "    \"target_lang\": \"en\",\n"), "%s", text);
    free(text);
    /* German first in the splits; the generic rules split „ “ and keep umlauts and ß */
    int found = 0;
    static const char *const splits[] = {"train.tsv", "valid.tsv", "test.tsv"};
    for (int k = 0; k < 3; k++) {
        char *path = strf("%s/%s", prep, splits[k]);
        found += has_line(path, "Ich habe eine Katze.\tI have a cat.");
        free(path);
    }
    cr_assert_eq(found, 1);
    text = slurp(vsrc, NULL);
    cr_assert(strstr(text, "\n„\t"), "%s", text);
    cr_assert(strstr(text, "\n“\t"), "%s", text);
    cr_assert(strstr(text, "\nmüde\t"), "%s", text);
    cr_assert(strstr(text, "\nStraße\t"), "%s", text);
    cr_assert(!strstr(text, "„Hallo"), "%s", text);
    free(text);
    text = slurp(vtgt, NULL);
    cr_assert(strstr(text, "\ntired\t"), "%s", text);
    free(text);

    r = RUN_S2S(NULL, "info", model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\ndirection: de-en (de to en)\n"), "%s", r.out);
    cr_assert(strstr(r.out, "  direction: de-en\n  src_lang: de\n  tgt_lang: en\n"), "%s", r.out);
    run_free(&r);

    r = RUN_S2S(NULL, "translate", model, "„Hallo“, sagte sie.", "Ich bin müde.", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 2, "%s", r.out);
    run_free(&r);

    char *test = strf("%s/test.tsv", prep);
    r = RUN_S2S(NULL, "eval", model, test, "--threads", "1", "--beam", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "BLEU = ", 7) == 0, "%s", r.out);
    run_free(&r);

    /* a prepared directory has its own languages */
    r = RUN_S2S(NULL, "train", prep, "-o", model, "--direction", "de-en", "--force");
    char *want = strf("s2s: train: option --direction is for a corpus DATA; %s was prepared "
                      "with its own\n", prep);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, want);
    run_free(&r);
    free(want);
    free(test);
    free(json);
    free(train);
    free(vsrc);
    free(vtgt);
    rm_rf(dir);
    free(prep);
    free(model);
    free(dir);
}

/* en-XX puts English, the first column, on the source side; codes are canonical. */
Test(cli_languages, directions_and_codes)
{
    char *dir = tmpdir_new(), *out = strf("%s/p", dir), *train = strf("%s/train.tsv", out);
    char *json = strf("%s/prepare.json", out);
    RunResult r = RUN_S2S(NULL, "prepare", SAMPLE_DE, "-o", out, "--direction", "eng-deu",
                          "--valid", "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "; vocab en "), "%s", r.err);
    run_free(&r);
    cr_assert(has_line(train, "I am tired.\tIch bin müde."));
    char *text = slurp(json, NULL);
    cr_assert(strstr(text, "    \"direction\": \"en-de\",\n    \"source_lang\": \"en\",\n"
                           "    \"target_lang\": \"de\",\n"), "%s", text);
    free(text);

    /* a Tatoeba line with one column names both languages */
    char *bad = strf("%s/ell.txt", dir);
    write_file(bad, "Hi.\tΓεια.\nGood morning.\n");
    char *snap = dir_snapshot(dir);
    r = RUN_S2S(NULL, "prepare", bad, "-o", out, "--direction", "en-el");
    char *want = strf("s2s: %s:2: only one column (expected English<TAB>Greek)\n", bad);
    expect_run(&r, 1, "", want);
    char *after = dir_snapshot(dir);
    cr_assert_str_eq(after, snap);
    free(after);
    free(snap);
    free(want);
    free(bad);
    free(json);
    free(train);
    free(out);
    rm_rf(dir);
    free(dir);
}

/* Line i of one file is the translation of line i of the other; languages from the
   extensions (after .gz) or from --src-lang / --tgt-lang. */
Test(cli_languages, parallel_files)
{
    char *dir = tmpdir_new(), *de = strf("%s/corpus.de", dir), *en = strf("%s/corpus.en", dir);
    char *out = strf("%s/p", dir);
    write_file(de, "Guten Morgen!\n\nIch bin müde.\r\nDanke.");
    write_file(en, "Good morning!\n \nI am tired.\r\nThanks.\n");
    RunResult r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out, "--valid", "0",
                          "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "prepare: 3 pairs read,"), "%s", r.err);
    cr_assert(strstr(r.err, "; vocab de "), "%s", r.err);
    run_free(&r);
    char *train = strf("%s/train.tsv", out), *json = strf("%s/prepare.json", out);
    char *text = slurp(train, NULL);
    cr_assert_str_eq(text, "Guten Morgen!\tGood morning!\nIch bin müde.\tI am tired.\nDanke.\tThanks.\n");
    free(text);
    text = slurp(json, NULL);
    char *head = strf("{\n  \"corpus\": [\"%s\", \"%s\"],\n  \"options\": {\n"
                      "    \"direction\": \"de-en\",\n", de, en);
    cr_assert(strncmp(text, head, strlen(head)) == 0, "%s", text);
    cr_assert(strstr(text, "  \"lines_read\": 4,\n  \"blank_lines\": 1,\n"), "%s", text);
    free(head);
    free(text);

    /* gzip on one side, languages given */
    char *gz = strf("%s/src.txt.gz", dir), *out2 = strf("%s/q", dir);
    gzip_to(de, gz);
    r = RUN_S2S(NULL, "prepare", "--src", gz, "--tgt", en, "--src-lang", "de", "--tgt-lang",
                "en", "-o", out2, "--valid", "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *train2 = strf("%s/train.tsv", out2);
    expect_same_file(train, train2);
    free(train2);
    free(out2);
    free(gz);
    free(json);
    free(train);
    free(out);
    free(de);
    free(en);
    rm_rf(dir);
    free(dir);
}

/* Each error of parallel files: one line, nothing written, the inputs as they were. */
Test(cli_languages, parallel_file_errors)
{
    char *dir = tmpdir_new(), *de = strf("%s/a.de", dir), *en = strf("%s/a.en", dir);
    char *out = strf("%s/p", dir), *want;
    write_file(de, "Hallo.\nDanke.\nJa.\n");
    write_file(en, "Hello.\nThanks.\n");
    char *snap = dir_snapshot(dir);
    RunResult r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out);
    want = strf("s2s: %s has 3 lines but %s has 2; line i of one must translate line i of the "
                "other\n", de, en);
    expect_run(&r, 1, "", want);
    free(want);
    char *after = dir_snapshot(dir);
    cr_assert_str_eq(after, snap);
    free(after);
    free(snap);

    write_file(en, "Hello.\n\nYes.\n");
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out);
    want = strf("s2s: %s:2: empty line (line 2 of %s is not)\n", en, de);
    expect_run(&r, 1, "", want);
    free(want);

    write_file(en, "Hello.\nThanks\tx\nYes.\n");
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out);
    want = strf("s2s: %s:2: tab inside the line at byte 7\n", en);
    expect_run(&r, 1, "", want);
    free(want);

    write_file(en, "Hello.\nThanks.\nY\xC3\n");
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out);
    want = strf("s2s: %s:3: invalid UTF-8 at byte 2\n", en);
    expect_run(&r, 1, "", want);
    free(want);

    /* with --skip-bad the bad line is skipped and reported */
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out, "--skip-bad", "--valid",
                "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    want = strf("prepare: skipped %s:3: invalid UTF-8 at byte 2\n", en);
    cr_assert(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
    run_free(&r);
    free(want);
    rm_rf(out);

    /* an extension that is no language code, or a three-letter one of a language without
       a two-letter code that is not listed: .txt, .src and .tgt are ISO 639-3 codes, but
       no one means them as languages */
    const char *const names[] = {"a.source", "all.txt", "train.src", "train.tgt"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char *txt = strf("%s/%s", dir, names[k]);
        write_file(txt, "Hallo.\nDanke.\nJa.\n");
        r = RUN_S2S(NULL, "prepare", "--src", txt, "--tgt", en, "-o", out);
        want = strf("s2s: prepare: cannot tell the language of %s from its name (an extension that is a "
                    "language code: .en, .de, .deu, .cmn); give --src-lang\n", txt);
        expect_run(&r, 2, "", want);
        free(want);
        free(txt);
    }
    r = RUN_S2S(NULL, "prepare", "--src", de, "-o", out);
    expect_run(&r, 2, "", "s2s: prepare: option --src needs --tgt too\n");
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out, "--direction", "de-en");
    expect_run(&r, 2, "", "s2s: prepare: option --direction is for a CORPUS file; name the "
                      "languages of --src and --tgt with --src-lang and --tgt-lang\n");
    r = RUN_S2S(NULL, "prepare", "--src", de, "--tgt", en, "-o", out, "--src-lang", "xx");
    expect_run(&r, 2, "", "s2s: prepare: option --src-lang must be an ISO 639 language code, got 'xx'\n");
    cr_assert(!file_exists(out));
    free(out);
    free(de);
    free(en);
    rm_rf(dir);
    free(dir);
}

/* A gzipped corpus prepares to the same files as the plain one; a damaged one is an
   error naming it, and a prepared directory stays as it was. */
Test(cli_languages, gzip_corpus)
{
    char *dir = tmpdir_new(), *gz = strf("%s/fra.txt.gz", dir);
    char *plain = strf("%s/plain", dir), *packed = strf("%s/packed", dir);
    gzip_to("data/sample.tsv", gz);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", plain);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "prepare", gz, "-o", packed);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    static const char *const same[] = {"train.tsv", "valid.tsv", "test.tsv", "vocab.src",
                                       "vocab.tgt"};
    for (size_t i = 0; i < 5; i++) {
        char *a = strf("%s/%s", plain, same[i]), *b = strf("%s/%s", packed, same[i]);
        expect_same_file(a, b);
        free(a);
        free(b);
    }

    /* truncated, not gzip at all, and followed by other bytes */
    size_t n;
    char *bytes = slurp(gz, &n);
    char *cut = strf("%s/cut.tsv.gz", dir), *fake = strf("%s/fake.gz", dir);
    char *tail = strf("%s/tail.gz", dir);
    FILE *fp = fopen(cut, "wb");
    fwrite(bytes, 1, n / 2, fp);
    fclose(fp);
    write_file(fake, "Hi.\tSalut.\n");
    fp = fopen(tail, "wb");
    fwrite(bytes, 1, n, fp);
    fputs("more\n", fp);
    fclose(fp);
    char *snap = dir_snapshot(dir);
    r = RUN_S2S(NULL, "prepare", cut, "-o", packed);
    char *want = strf("s2s: %s: corrupt gzip data (unexpected end of file)\n", cut);
    expect_run(&r, 1, "", want);
    free(want);
    r = RUN_S2S(NULL, "prepare", fake, "-o", packed);
    want = strf("s2s: %s: corrupt gzip data (incorrect header check)\n", fake);
    expect_run(&r, 1, "", want);
    free(want);
    r = RUN_S2S(NULL, "prepare", tail, "-o", packed);
    want = strf("s2s: %s: corrupt gzip data (trailing data after the compressed stream)\n", tail);
    expect_run(&r, 1, "", want);
    free(want);
    char *after = dir_snapshot(dir);
    cr_assert_str_eq(after, snap);
    free(after);
    free(snap);
    free(bytes);
    free(cut);
    free(fake);
    free(tail);
    free(plain);
    free(packed);
    free(gz);
    rm_rf(dir);
    free(dir);
}

/* Outside valid and test sets: corpus pairs with their sources are dropped and
   counted; the splits hold the files' pairs. */
Test(cli_languages, outside_valid_and_test)
{
    char *dir = tmpdir_new(), *out = strf("%s/p", dir);
    char *cde = strf("%s/c.de", dir), *cen = strf("%s/c.en", dir);
    char *vde = strf("%s/v.de", dir), *ven = strf("%s/v.en", dir);
    char *tde = strf("%s/t.de", dir), *ten = strf("%s/t.en", dir);
    write_file(cde, "Hallo.\nDanke!\nJa.\nNein.\nGut.\nJa .\n");
    write_file(cen, "Hello.\nThanks!\nYes.\nNo.\nGood.\nYes!\n");
    write_file(vde, "Ja.\n");
    write_file(ven, "Yes.\n");
    write_file(tde, "Nein.\nNie.\n");
    write_file(ten, "No.\nNever.\n");
    RunResult r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--valid-files",
                          vde, ven, "--test-files", tde, ten);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "prepare: 3 training pairs dropped: source in the valid or test "
                            "files\nprepare: train 3, valid 1, test 2 pairs;"), "%s", r.err);
    run_free(&r);
    char *p;
    p = strf("%s/train.tsv", out);
    char *text = slurp(p, NULL);
    cr_assert_str_eq(text, "Hallo.\tHello.\nDanke!\tThanks!\nGut.\tGood.\n");
    free(text);
    free(p);
    p = strf("%s/valid.tsv", out);
    text = slurp(p, NULL);
    cr_assert_str_eq(text, "Ja.\tYes.\n");
    free(text);
    free(p);
    p = strf("%s/test.tsv", out);
    text = slurp(p, NULL);
    cr_assert_str_eq(text, "Nein.\tNo.\nNie.\tNever.\n");
    free(text);
    free(p);
    p = strf("%s/prepare.json", out);
    text = slurp(p, NULL);
    char *want = strf("    \"skip_bad\": false,\n    \"valid_files\": [\"%s\", \"%s\"],\n"
                      "    \"test_files\": [\"%s\", \"%s\"]\n  },\n", vde, ven, tde, ten);
    cr_assert(strstr(text, want), "%s", text);
    cr_assert(strstr(text, "  \"filtered_by_length\": 0,\n  \"dropped_in_valid_or_test\": 3,\n"
                           "  \"pairs_kept\": 3,\n"), "%s", text);
    free(want);
    free(text);
    free(p);

    /* only a test set from outside: valid is cut from what is left */
    rm_rf(out);
    r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--test-files", tde, ten,
                "--valid", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "prepare: 1 training pair dropped: source in the valid or test "
                            "files\nprepare: train 4, valid 1, test 2 pairs;"), "%s", r.err);
    run_free(&r);

    /* valid and test must not share a source sentence (after tokenization) */
    write_file(tde, "Nein.\nJa .\n");
    char *snap = dir_snapshot(dir);
    r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--valid-files", vde, ven,
                "--test-files", tde, ten);
    want = strf("s2s: %s:1: same source sentence as %s:2; the valid and test files must not "
                "overlap\n", vde, tde);
    expect_run(&r, 1, "", want);
    free(want);
    char *after = dir_snapshot(dir);
    cr_assert_str_eq(after, snap);
    free(after);
    free(snap);

    r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--valid-files", vde);
    expect_run(&r, 2, "", "s2s: prepare: option --valid-files needs two values\n");
    r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--valid-files", vde, ven,
                "--valid", "3");
    expect_run(&r, 2, "", "s2s: prepare: options --valid and --valid-files exclude each other\n");
    write_file(ten, "No.\n");
    r = RUN_S2S(NULL, "prepare", "--src", cde, "--tgt", cen, "-o", out, "--test-files", tde, ten);
    want = strf("s2s: %s has 2 lines but %s has 1; line i of one must translate line i of the "
                "other\n", tde, ten);
    expect_run(&r, 1, "", want);
    free(want);
    free(cde);
    free(cen);
    free(vde);
    free(ven);
    free(tde);
    free(ten);
    free(out);
    rm_rf(dir);
    free(dir);
}
