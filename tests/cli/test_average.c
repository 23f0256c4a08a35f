/* End-to-end tests of `s2s average`: the mean of model files, and the refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model_fixture.h"
#include "model/file.h"

#define SMALL_RNN "--arch", "rnn", "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
                  "--deep-out", "16", "--threads", "1", "--quiet", "--valid-every", "0"

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Trains a small model on the prepared sample for `steps` steps with `seed`. */
static char *small_model(const char *dir, const char *name, const char *steps, const char *seed,
                         const char *hidden)
{
    char *data = strf("%s/data", dir), *m = strf("%s/%s", dir, name);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", steps, "--seed", seed, SMALL_RNN, "--hidden",
                          hidden);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    free(data);
    return m;
}

Test(average, two_copies_give_the_model_and_two_models_their_mean)
{
    char *dir = sample_prepared_dir();
    char *a = small_model(dir, "a.s2s", "3", "1", "16"), *b = small_model(dir, "b.s2s", "5", "2", "16");
    char *copy = strf("%s/copy.s2s", dir), *aa = strf("%s/aa.s2s", dir), *ab = strf("%s/ab.s2s", dir);
    RunResult r = RUN_PROG(NULL, "/bin/cp", a, copy);
    cr_assert_eq(r.status, 0);
    run_free(&r);

    r = RUN_S2S(NULL, "average", a, copy, "-o", aa);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("%s: the mean of 2 model files (", aa);
    cr_expect(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    free(want);
    run_free(&r);
    r = RUN_S2S(NULL, "average", a, b, "-o", ab);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);

    ModelFile ma, mb, maa, mab;
    fixture_load_file(a, &ma);
    fixture_load_file(b, &mb);
    fixture_load_file(aa, &maa);
    fixture_load_file(ab, &mab);
    size_t n = ma.model.layout.total, same = 0, mean = 0, moved = 0;
    for (size_t i = 0; i < n; i++) {
        same += memcmp(&maa.model.params[i], &ma.model.params[i], sizeof(real)) == 0;
        real m = (real)(((double)ma.model.params[i] + (double)mb.model.params[i]) / 2);
        mean += memcmp(&mab.model.params[i], &m, sizeof(real)) == 0;
        moved += ma.model.params[i] != mb.model.params[i];
    }
    cr_expect_eq(same, n, "the mean of two copies differs from the model in %zu of %zu weights", n - same, n);
    cr_expect_eq(mean, n, "%zu of %zu weights are not the mean", n - mean, n);
    cr_expect_gt(moved, n / 2, "the two models should differ");
    char *hist = strf("{\"average_of\": [\"%s\", \"%s\"]}", a, b);
    cr_expect_str_eq(mab.history, hist);
    free(hist);
    /* the average translates like any model file */
    r = RUN_S2S(NULL, "translate", aa, "I have a cat.", "--threads", "1");
    RunResult r2 = RUN_S2S(NULL, "translate", a, "I have a cat.", "--threads", "1");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, r2.out);
    run_free(&r);
    run_free(&r2);
    model_file_free(&ma);
    model_file_free(&mb);
    model_file_free(&maa);
    model_file_free(&mab);
    free(a); free(b); free(copy); free(aa); free(ab);
    rm_rf(dir);
    free(dir);
}

Test(average, refuses_files_that_differ_and_writes_nothing)
{
    char *dir = sample_prepared_dir();
    char *a = small_model(dir, "a.s2s", "2", "1", "16"), *w = small_model(dir, "w.s2s", "2", "1", "24");
    char *out = strf("%s/out.s2s", dir), *text = strf("%s/notes.txt", dir);
    write_file(text, "my notes\n");
    char *before = dir_snapshot(dir);

    RunResult r = RUN_S2S(NULL, "average", a, w, "-o", out);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: 'hidden' is 24, %s has 16\n", w, a);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);

    /* a Transformer and a recurrent model */
    char *data = strf("%s/data", dir), *t = strf("%s/t.s2s", dir);
    r = RUN_S2S(NULL, "train", data, "-o", t, "--steps", "1", "--model-dim", "8", "--ff", "8", "--heads", "2",
                "--layers", "1", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    free(before);
    before = dir_snapshot(dir);
    r = RUN_S2S(NULL, "average", a, t, "-o", out);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s is a Transformer, %s a recurrent model: the architectures differ\n", t, a);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    free(data);
    free(t);

    /* another vocabulary: a model prepared with a larger --min-freq */
    char *data2 = strf("%s/data2", dir), *v = strf("%s/v.s2s", dir);
    r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data2, "--min-freq", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data2, "-o", v, "--steps", "1", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    free(before);
    before = dir_snapshot(dir);
    r = RUN_S2S(NULL, "average", a, v, "-o", out);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, ": s2s.vocab.src: id ") != NULL || strstr(r.err, ": s2s.vocab.src has ") != NULL,
              "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
    run_free(&r);

    /* OUT may not be a text file, nor an input */
    r = RUN_S2S(NULL, "average", a, a, "-o", text);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s: exists and is not an s2s model file; refusing to replace it; choose another -o\n", text);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_S2S(NULL, "average", a, w, "-o", a);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "would overwrite the input") != NULL, "%s", r.err);
    run_free(&r);
    /* a missing file, no -o */
    r = RUN_S2S(NULL, "average", a, "missing.s2s", "-o", out);
    cr_expect_eq(r.status, 1);
    cr_expect(strncmp(r.err, "s2s: missing.s2s: ", 18) == 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "average", a);
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: average: missing -o OUT (see 's2s average --help')\n");
    run_free(&r);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before, "files changed after a refusal");
    free(after);
    free(before);
    free(a); free(w); free(v); free(out); free(text); free(data2);
    rm_rf(dir);
    free(dir);
}

/* translate and eval with several model files: an ensemble; a model with itself gives
   the model's translations; files that do not match are refused, nothing written. */
Test(ensemble_cli, translate_and_eval_decode_with_several_models)
{
    char *dir = sample_prepared_dir();
    char *a = small_model(dir, "a.s2s", "30", "1", "16"), *b = small_model(dir, "b.s2s", "30", "2", "16");
    char *test = strf("%s/data/test.tsv", dir), *out = strf("%s/out.txt", dir);
    RunResult one = RUN_S2S(NULL, "translate", a, "I have a cat.", "Where is the station?", "--threads", "1");
    RunResult two = RUN_S2S(NULL, "translate", a, a, "I have a cat.", "Where is the station?", "--threads", "1");
    cr_assert_eq(one.status, 0, "%s", one.err);
    cr_assert_eq(two.status, 0, "%s", two.err);
    cr_expect_str_eq(two.out, one.out);
    run_free(&one);
    run_free(&two);
    RunResult ab = RUN_S2S(NULL, "translate", a, b, "I have a cat.", "--threads", "1", "--nbest", "2");
    cr_expect_eq(ab.status, 0, "%s", ab.err);
    cr_expect_eq(count_lines(ab.out), 2, "%s", ab.out);
    run_free(&ab);
    RunResult ev = RUN_S2S(NULL, "eval", a, b, test, "--threads", "1", "--beam", "2");
    cr_expect_eq(ev.status, 0, "%s", ev.err);
    cr_expect(strstr(ev.out, "perplexity: not computed for an ensemble of 2 models\n") != NULL, "%s", ev.out);
    run_free(&ev);
    ev = RUN_S2S(NULL, "eval", a, b, test, "--threads", "1", "--beam", "2", "--json");
    cr_expect_eq(ev.status, 0, "%s", ev.err);
    char *want = strf("\"perplexity\": null, \"ensemble\": [\"%s\", \"%s\"]", a, b);
    cr_expect(strstr(ev.out, want) != NULL, "%s", ev.out);
    free(want);
    run_free(&ev);

    /* other vocabularies: refused naming the file and the first difference */
    char *data2 = strf("%s/data2", dir), *v = strf("%s/v.s2s", dir);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data2, "--min-freq", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data2, "-o", v, "--steps", "1", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "translate", a, v, "I have a cat.", "-o", out);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s: s2s.vocab.src has 140 tokens, %s has 227\n", v, a);
    cr_expect_str_eq(r.err, want);
    free(want);
    cr_expect(!file_exists(out));
    run_free(&r);
    r = RUN_S2S(NULL, "eval", a, v, test);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "s2s.vocab.src has 140 tokens") != NULL, "%s", r.err);
    run_free(&r);
    free(a); free(b); free(test); free(out); free(data2); free(v);
    rm_rf(dir);
    free(dir);
}
