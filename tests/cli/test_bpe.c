/* End-to-end tests of subword units: s2s prepare --bpe / --bpe-codes, s2s tokenize
   --bpe / --join / --detok, and a BPE model through train and translate. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* Word counts over both sides: low 5, lower 2, newest 6, widest 3 (the word list of
   tests/unit/test_bpe.c, whose 13 merges are worked out there). Source alone: low 5,
   lower 2, widest 1; target alone: newest 6, widest 2. */
#define SENNRICH                          \
    "low low\tnewest newest\n"            \
    "low lower\tnewest newest\n"          \
    "low low\tnewest widest\n"            \
    "lower widest\tnewest widest\n"

#define SPECIALS "<pad>\t0\n<unk>\t0\n<bos>\t0\n<eos>\t0\n"

#define JOINT_CODES                                                                          \
    "#version: 0.2\ns t</w>\ne st</w>\nl o\nw est</w>\nn e\nne west</w>\nlo w</w>\nw i\nwi d\n" \
    "wid est</w>\nw e\nwe r</w>\nlo wer</w>\n"

Test(cli_bpe, joint_merges_and_vocabulary)
{
    char *dir = tmpdir_new(), *corpus = file_in(dir, "c.tsv"), *out = file_in(dir, "out");
    write_file(corpus, SENNRICH);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                          "--bpe", "100", "--joint");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "prepare: BPE: 13 merges learned on both sides together in ") &&
              strstr(r.err, " s (stopped: every word is one symbol)\n"), "%s", r.err);
    expect_file(out, "bpe.src", JOINT_CODES);
    expect_file(out, "bpe.tgt", JOINT_CODES);
    /* every word is one unit; one vocabulary from both sides, --min-freq 1 */
    const char *voc = SPECIALS "newest\t6\nlow\t5\nwidest\t3\nlower\t2\n";
    expect_file(out, "vocab.src", voc);
    expect_file(out, "vocab.tgt", voc);
    char *jp = file_in(out, "prepare.json"), *json = slurp(jp, NULL);
    cr_expect(strstr(json, "    \"min_freq\": 1,\n"), "%s", json);
    cr_expect(strstr(json, "    \"bpe\": 100,\n    \"bpe_min_freq\": 2,\n    \"joint\": true,\n"
                           "    \"bpe_codes\": [null, null]\n  },\n"), "%s", json);
    cr_expect(strstr(json, "  \"bpe\": {\"source\": 13, \"target\": 13},\n"), "%s", json);
    free(json);
    free(jp);
    run_free(&r);
    rm_rf(dir);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_bpe, merges_and_vocabularies_per_side)
{
    char *dir = tmpdir_new(), *corpus = file_in(dir, "c.tsv"), *out = file_in(dir, "out");
    write_file(corpus, SENNRICH);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                          "--bpe", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* source: l o 7, then lo w</w> 5, then a tie at 2 of "lo w", "w e", "e r</w>": "w" is
       the greatest first symbol */
    expect_file(out, "bpe.src", "#version: 0.2\nl o\nlo w</w>\nw e\n");
    /* target: e s 8 ties with s t</w> 8 ("s" > "e"); e st</w> 8; then n e, e w and
       w est</w> tie at 6 */
    expect_file(out, "bpe.tgt", "#version: 0.2\ns t</w>\ne st</w>\nw est</w>\n");
    /* low -> low; lower -> lo@@ we@@ r; widest -> w@@ i@@ d@@ e@@ s@@ t */
    expect_file(out, "vocab.src", SPECIALS "low\t5\nlo@@\t2\nr\t2\nwe@@\t2\nd@@\t1\ne@@\t1\n"
                                           "i@@\t1\ns@@\t1\nt\t1\nw@@\t1\n");
    /* newest -> n@@ e@@ west; widest -> w@@ i@@ d@@ est */
    expect_file(out, "vocab.tgt", SPECIALS "e@@\t6\nn@@\t6\nwest\t6\nd@@\t2\nest\t2\ni@@\t2\nw@@\t2\n");
    run_free(&r);

    /* Prepared again without --bpe: words, and the codes files are gone. */
    r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *p = file_in(out, "bpe.src");
    cr_expect(!file_exists(p));
    free(p);
    expect_file(out, "vocab.src", SPECIALS "low\t5\nlower\t2\n");
    run_free(&r);
    rm_rf(dir);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_bpe, codes_files_from_elsewhere)
{
    char *dir = tmpdir_new(), *corpus = file_in(dir, "c.tsv"), *out = file_in(dir, "out");
    char *codes = file_in(dir, "codes");
    write_file(corpus, SENNRICH);
    write_file(codes, "#version: 0.2\r\nl o\r\nlo w</w>\r\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                          "--bpe-codes", codes);
    cr_assert_eq(r.status, 0, "%s", r.err);
    expect_file(out, "bpe.src", "#version: 0.2\nl o\nlo w</w>\n");
    expect_file(out, "bpe.tgt", "#version: 0.2\nl o\nlo w</w>\n");
    /* low -> low; lower -> lo@@ w@@ e@@ r; widest -> w@@ i@@ d@@ e@@ s@@ t */
    expect_file(out, "vocab.src", SPECIALS "low\t5\ne@@\t3\nw@@\t3\nlo@@\t2\nr\t2\n"
                                           "d@@\t1\ni@@\t1\ns@@\t1\nt\t1\n");
    run_free(&r);

    /* The target side only: the source stays words. */
    r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0",
                "--bpe-codes-tgt", codes, "--min-freq", "2");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *p = file_in(out, "bpe.src");
    cr_expect(!file_exists(p));
    expect_file(out, "bpe.tgt", "#version: 0.2\nl o\nlo w</w>\n");
    expect_file(out, "vocab.src", SPECIALS "low\t5\nlower\t2\n");
    char *jp = file_in(out, "prepare.json"), *json = slurp(jp, NULL);
    cr_expect(strstr(json, "  \"bpe\": {\"source\": null, \"target\": 2},\n"), "%s", json);
    free(json);
    free(jp);
    free(p);
    run_free(&r);
    rm_rf(dir);
    free(codes);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_bpe, bad_codes_file_fails_and_writes_nothing)
{
    char *dir = tmpdir_new(), *corpus = file_in(dir, "c.tsv"), *out = file_in(dir, "out");
    char *codes = file_in(dir, "codes");
    write_file(corpus, SENNRICH);
    write_file(codes, "#version: 0.2\nl o\nlow\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--bpe-codes", codes);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s:3: not a merge (expected two symbols separated by one space)\n", codes);
    cr_expect_str_eq(r.err, want);
    cr_expect_str_eq(r.out, "");
    cr_expect(!file_exists(out), "output directory was created");
    run_free(&r);
    free(want);

    /* A prepared directory stays as it was. */
    r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0", "--bpe", "5");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *before = dir_snapshot(out);
    write_file(codes, "l o\n");
    r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--bpe-codes-src", codes);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s:1: not a BPE codes file (the first line must be '#version: 0.2')\n", codes);
    cr_expect_str_eq(r.err, want);
    char *after = dir_snapshot(out);
    cr_expect_str_eq(after, before);
    free(before);
    free(after);
    free(want);
    run_free(&r);
    rm_rf(dir);
    free(codes);
    free(out);
    free(corpus);
    free(dir);
}

Test(cli_bpe, usage_errors)
{
    static const struct {
        const char *args[8];
        const char *err;
    } cases[] = {
        {{"--bpe", "10", "--bpe-codes", "x"},
         "s2s: prepare: --bpe learns merges and --bpe-codes reads them: give one of them\n"},
        {{"--bpe-min-freq", "3"}, "s2s: prepare: option --bpe-min-freq needs --bpe\n"},
        {{"--joint", "--bpe-codes-src", "x"},
         "s2s: prepare: --joint needs one merge list for both sides: --bpe N or --bpe-codes FILE\n"},
        {{"--bpe", "0"}, "s2s: prepare: option --bpe must be between 1 and 10000000, got 0\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[16] = {"prepare", "data/sample.tsv", "-o", "/nonexistent/out"};
        size_t n = 4;
        for (size_t k = 0; cases[i].args[k]; k++)
            args[n++] = cases[i].args[k];
        args[n] = NULL;
        RunResult r = run_s2s(NULL, args);
        cr_expect_eq(r.status, 2, "case %zu: %s", i, r.err);
        cr_expect_str_eq(r.err, cases[i].err, "case %zu", i);
        run_free(&r);
    }
    RunResult r = RUN_S2S(NULL, "tokenize", "--detok", "--join");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: tokenize: --detok and --join exclude each other\n");
    run_free(&r);
}

Test(cli_bpe, tokenize_segments_and_joins)
{
    char *dir = tmpdir_new(), *codes = file_in(dir, "codes");
    write_file(codes, JOINT_CODES);
    RunResult r = RUN_S2S("Lowest, newer: widest!\n\nlow\n", "tokenize", "--lowercase", "--bpe", codes);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "lo@@ west , ne@@ wer : widest !\n\nlow\n");
    RunResult j = RUN_S2S(r.out, "tokenize", "--join");
    cr_expect_eq(j.status, 0);
    cr_expect_str_eq(j.out, "lowest , newer : widest !\n\nlow\n");
    RunResult d = RUN_S2S(r.out, "tokenize", "--detok");
    cr_expect_eq(d.status, 0);
    cr_expect_str_eq(d.out, "lowest, newer: widest!\n\nlow\n");
    run_free(&r);
    run_free(&j);
    run_free(&d);

    write_file(codes, "#version: 0.2\na b\n\n");
    r = RUN_S2S("x\n", "tokenize", "--bpe", codes);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s:3: not a merge (expected two symbols separated by one space)\n", codes);
    cr_expect_str_eq(r.err, want);
    cr_expect_str_eq(r.out, "");
    free(want);
    run_free(&r);
    rm_rf(dir);
    free(codes);
    free(dir);
}

/* prepare --bpe 200 --joint on the sample, a short training, then a sentence with a
   word absent from training: the source is split into units (shown by the heatmap on
   stderr), the output is plain text. */
Test(cli_bpe, train_and_translate_plain_text)
{
    char *dir = tmpdir_new(), *prep = file_in(dir, "prep"), *model = file_in(dir, "m.s2s");
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", prep, "--bpe", "200", "--joint");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *train = file_in(prep, "train.tsv");
    char *text = slurp(train, NULL);
    cr_assert_null(strstr(text, "xylophon"), "the test word occurs in training");
    free(text);
    free(train);
    r = RUN_S2S(NULL, "train", prep, "-o", model, "--steps", "300", "--warmup", "100", "--model-dim", "64",
                "--layers", "1", "--heads", "2", "--ff", "128", "--valid-every", "100", "--threads", "1",
                "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "translate", model, "The xylophonist plays the piano.", "I have a cat.",
                "--show-attention", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.out, "<unk>"), "%s", r.out);
    cr_expect_null(strstr(r.out, "@@"), "%s", r.out);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 2, "%s", r.out);
    cr_expect(strlen(r.out) > 4, "%s", r.out);
    /* the heatmap's source axis shows the units of the unknown word */
    cr_expect(strstr(r.err, "xy@@") || strstr(r.err, "x@@"), "%s", r.err);
    run_free(&r);

    r = RUN_S2S(NULL, "info", model);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nbpe: source 200 merges, target 200 merges\n"), "%s", r.out);
    run_free(&r);

    /* the codes files are inputs of the run: no output may replace them */
    char *codes = file_in(prep, "bpe.tgt");
    r = RUN_S2S(NULL, "train", prep, "-o", codes, "--steps", "1");
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n",
                      codes, codes);
    cr_expect_str_eq(r.err, want);
    free(want);
    free(codes);
    run_free(&r);

    /* A damaged merge in the model file: one line naming the entry and its line. The
       codes are in the header twice (source and target); the first merge of each loses
       its space. */
    char *bad = file_in(dir, "bad.s2s");
    size_t len;
    char *bytes = slurp(model, &len);
    int damaged = 0;
    for (char *p = bytes; (p = memmem(p, len - (size_t)(p - bytes), "#version: 0.2\\n", 15)); damaged++) {
        p += 15;
        char *sp = memchr(p, ' ', 40);
        cr_assert_not_null(sp);
        *sp = '_';
    }
    cr_assert_eq(damaged, 2);
    FILE *f = fopen(bad, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
    r = RUN_S2S(NULL, "translate", bad, "I have a cat.");
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s: s2s.bpe.src:2: not a merge (expected two symbols separated by one space)\n", bad);
    cr_expect_str_eq(r.err, want);
    cr_expect_str_eq(r.out, "");
    free(want);
    free(bad);
    run_free(&r);

    /* eval reads the same model: references are segmented as in training */
    char *test = file_in(prep, "test.tsv");
    r = RUN_S2S(NULL, "eval", model, test, "--threads", "1");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "BLEU = "), "%s", r.out);
    cr_expect(strstr(r.out, "perplexity = "), "%s", r.out);
    free(test);
    run_free(&r);
    rm_rf(dir);
    free(model);
    free(prep);
    free(dir);
}
