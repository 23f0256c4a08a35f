/*
 * What the program computes, recorded: training losses, the trained weights and the
 * translations of small models of every kind (recurrent with Bahdanau's, Luong's and
 * multihead local attention, the Transformer post- and pre-norm, an ensemble of three),
 * checked against tests/recorded/behaviour.txt, which the binary of an earlier version
 * wrote. A change to the model layer that is meant to change nothing must leave every
 * line equal.
 *
 * Each case trains on data/sample.tsv (prepared with the defaults) for 400 steps at
 * --threads 1, then translates the first 40 sources of train.tsv and of valid.tsv
 * greedily and with beam 5, in int8 (the default) and f32, the model's own choice of
 * numbers (--no-copy-numbers: the search as recorded; copying numbers is
 * test_constraints.c's). Recorded per case:
 *   losses   the "loss" (and valid "bleu") fields of MODEL.log.jsonl, as written
 *   weights  CRC-32 of MODEL.last's float weights; best: the same of MODEL
 *   DECODE   CRC-32 of the translations' text (greedy-int8, beam5-int8, greedy-f32, beam5-f32)
 * and for tests/recorded/{rnn,tf}.s2s (model files written by that earlier version) the
 * CRC-32 of their translations, so old files must load and translate as they did.
 *
 * Which comparisons are exact, and why. Bits depend on the kernels: s2s's own
 * vectorised loops give the same bits at every instruction set (nn/real.h, the
 * NN_SIMD clones; int8 sums are exact integers), but OpenBLAS picks its kernels by CPU
 * and they round differently. The test pins them: every s2s it starts runs with
 * OPENBLAS_CORETYPE=Prescott, the SSE3 kernels that any x86-64 CPU runs, and one thread.
 * On x86-64 every recorded value must then be equal to the bit (losses as printed,
 * weights and translations through their CRC-32). Elsewhere the recorded losses are
 * compared within 2e-3 relative (summation orders differ; 400 steps of Adam amplify
 * rounding), and the weights and translations are reported as skipped.
 *
 * To record anew (only when a change is meant to change these numbers, saying so in
 * its commit): S2S_RECORD=tests/recorded/behaviour.txt build/release/s2s-tests
 * --filter 'recorded/[*]' -j1 appends every value instead of checking it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crc32.h"
#include "base/err.h"
#include "helpers.h"
#include "model/file.h"

#define RECORDED "tests/recorded/behaviour.txt"
#define LOSS_RTOL 2e-3

#if defined(__x86_64__)
#define EXACT 1
#else
#define EXACT 0
#endif

/* fp32 products: the recorded values are fp32's (bf16 is the default where the CPU has it) */
#define COMMON "--steps", "400", "--lr", "0.005", "--batch", "16", "--seed", "3", "--threads", "1", "--quiet", \
               "--precision", "f32"
#define RNN24 "--arch", "rnn", "--emb", "24", "--hidden", "24", "--dec-hidden", "24", "--attn-size", "24", \
              "--deep-out", "24"

static const char *const case_rnn_bahdanau[] = {RNN24, COMMON, NULL};
static const char *const case_rnn_luong[] = {RNN24, "--cell", "lstm", "--layers", "2", "--attention", "luong-general",
                                              "--input-feed", "--bridge", "attn-pool", COMMON, NULL};
static const char *const case_rnn_local[] = {RNN24, "--attention", "multihead", "--heads", "2", "--local", "p",
                                             "--window", "3", "--no-bidir", "--tie-embeddings", COMMON, NULL};
/* The Transformer cases pin the recipe of their recording: no joined examples. */
static const char *const case_tf_post[] = {"--model-dim", "32", "--heads", "4", "--ff", "64", "--layers", "2", "--norm", "post",
                                           "--warmup", "50", "--concat", "0", COMMON, NULL};
static const char *const case_tf_pre[] = {"--model-dim", "32", "--heads", "4", "--ff", "64", "--layers", "2",
                                          "--warmup", "50", "--norm", "pre", "--positions", "learned",
                                          "--max-positions", "64", "--tie-embeddings", "--concat", "0", COMMON, NULL};

static void pin_kernels(void)
{
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

/* The recorded value of "CASE KEY", or NULL (the caller fails). */
static char *recorded(const char *name, const char *key)
{
    char *all = slurp(RECORDED, NULL);
    cr_assert_not_null(all, "cannot read %s", RECORDED);
    char *want = strf("%s %s ", name, key);
    char *value = NULL;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, want, strlen(want)) == 0) {
            value = strdup(line + strlen(want));
            break;
        }
    free(want);
    free(all);
    return value;
}

/* Checks (or, with S2S_RECORD, appends) "CASE KEY VALUE". */
static void expect(const char *name, const char *key, const char *got)
{
    const char *rec = getenv("S2S_RECORD");
    if (rec) {
        FILE *f = fopen(rec, "a");
        cr_assert_not_null(f, "cannot append to %s", rec);
        fprintf(f, "%s %s %s\n", name, key, got);
        fclose(f);
        return;
    }
    char *want = recorded(name, key);
    cr_assert_not_null(want, "%s has no line '%s %s'", RECORDED, name, key);
    cr_expect_str_eq(got, want, "%s %s: got %s, recorded %s", name, key, got, want);
    free(want);
}

/* The step losses and validation results of a training log, space-separated as printed. */
static char *log_values(const char *path)
{
    char *log = slurp(path, NULL);
    cr_assert_not_null(log, "cannot read %s", path);
    size_t cap = strlen(log) + 1, n = 0;
    char *out = calloc(cap, 1);
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        bool valid = strstr(line, "\"event\": \"valid\"") != NULL;
        if (!valid && !strstr(line, "\"event\": \"step\""))
            continue;
        const char *keys[2] = {"\"loss\": ", "\"bleu\": "};
        for (int k = 0; k < (valid ? 2 : 1); k++) {
            const char *p = strstr(line, keys[k]);
            cr_assert_not_null(p, "%s: a line without %s", path, keys[k]);
            p += strlen(keys[k]);
            size_t len = strcspn(p, ",}");
            n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? " " : "", (int)len, p);
        }
    }
    free(log);
    return out;
}

/* Two lists of numbers written by log_values, equal within LOSS_RTOL. */
static void expect_close(const char *name, const char *got)
{
    char *want = recorded(name, "losses");
    cr_assert_not_null(want, "%s has no losses for %s", RECORDED, name);
    char *g = (char *)got, *w = want;
    int i = 0;
    for (;; i++) {
        char *ge, *we;
        double a = strtod(g, &ge), b = strtod(w, &we);
        if (ge == g || we == w) {
            cr_expect(ge == g && we == w, "%s: %s values than recorded", name, ge == g ? "fewer" : "more");
            break;
        }
        cr_expect(fabs(a - b) <= LOSS_RTOL * fabs(b) + 1e-6, "%s: value %d is %g, recorded %g", name, i, a, b);
        g = ge;
        w = we;
    }
    free(want);
}

static char *crc_of_weights(const char *path)
{
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, path, false, &e), 0, "%s", e.msg);
    uint32_t c = crc32_update(0, mf.model.params, mf.model.layout.total * sizeof(float));
    model_file_free(&mf);
    return strf("%08x", c);
}

/* The sources to translate: the first 40 of train.tsv and of valid.tsv. */
static char *sources(const char *data)
{
    char *out = strf("%s", "");
    const char *split[2] = {"train.tsv", "valid.tsv"};
    for (int s = 0; s < 2; s++) {
        char *path = strf("%s/%s", data, split[s]);
        char *text = slurp(path, NULL);
        cr_assert_not_null(text, "cannot read %s", path);
        int n = 0;
        for (char *line = strtok(text, "\n"); line && n < 40; line = strtok(NULL, "\n"), n++) {
            char *next = strf("%s%.*s\n", out, (int)strcspn(line, "\t"), line);
            free(out);
            out = next;
        }
        free(text);
        free(path);
    }
    return out;
}

/* Translates the sources with the models (a NULL-terminated list) four ways and checks
   the CRC-32 of each output. */
static void expect_translations(const char *name, const char *data, const char *const *models)
{
    char *src = sources(data);
    const char *ways[4][5] = {{"greedy-int8", "--beam", "1", "--precision", "int8"},
                              {"beam5-int8", "--beam", "5", "--precision", "int8"},
                              {"greedy-f32", "--beam", "1", "--precision", "f32"},
                              {"beam5-f32", "--beam", "5", "--precision", "f32"}};
    for (int k = 0; k < 4; k++) {
        const char *argv[16];
        int n = 0;
        argv[n++] = "translate";
        for (int i = 0; models[i]; i++)
            argv[n++] = models[i];
        for (int i = 1; i < 5; i++)
            argv[n++] = ways[k][i];
        argv[n++] = "--threads";
        argv[n++] = "1";
        argv[n++] = "--no-copy-numbers";
        argv[n] = NULL;
        RunResult r = run_s2s(src, argv);
        cr_assert_eq(r.status, 0, "%s %s: %s", name, ways[k][0], r.err);
        char *crc = strf("%08x", crc32_update(0, r.out, r.out_len));
        expect(name, ways[k][0], crc);
        free(crc);
        run_free(&r);
    }
    free(src);
}

/* Trains case `name` into dir/name.s2s. */
static char *train_case(const char *dir, const char *data, const char *name, const char *const *args)
{
    char *model = strf("%s/%s.s2s", dir, name);
    const char *argv[64] = {"train", data, "-o", model};
    int n = 4;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    RunResult r = run_s2s(NULL, argv);
    cr_assert_eq(r.status, 0, "%s: %s", name, r.err);
    run_free(&r);
    return model;
}

static void check_case(const char *name, const char *const *args)
{
    pin_kernels();
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    char *model = train_case(dir, data, name, args);
    char *log = strf("%s.log.jsonl", model), *last = strf("%s.last", model);
    char *losses = log_values(log);
    if (EXACT || getenv("S2S_RECORD"))
        expect(name, "losses", losses);
    else
        expect_close(name, losses);
    if (EXACT || getenv("S2S_RECORD")) {
        char *w = crc_of_weights(last), *best = crc_of_weights(model);
        expect(name, "weights", w);
        expect(name, "best", best);
        free(w);
        free(best);
        const char *models[2] = {last, NULL};
        expect_translations(name, data, models);
    }
    free(losses);
    free(log);
    free(last);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
    if (!EXACT && !getenv("S2S_RECORD"))
        cr_skip_test("not x86-64: losses checked within %g; weights and translations need the recorded kernels",
                     LOSS_RTOL);
}

Test(recorded, rnn_bahdanau) { check_case("rnn-bahdanau", case_rnn_bahdanau); }
Test(recorded, rnn_luong_lstm) { check_case("rnn-luong", case_rnn_luong); }
Test(recorded, rnn_multihead_local_p) { check_case("rnn-local", case_rnn_local); }
Test(recorded, transformer_post_norm) { check_case("tf-post", case_tf_post); }
Test(recorded, transformer_pre_norm) { check_case("tf-pre", case_tf_pre); }

/* An ensemble of a recurrent model, a Transformer and a second recurrent model. */
Test(recorded, ensemble)
{
    pin_kernels();
    if (!EXACT && !getenv("S2S_RECORD"))
        cr_skip_test("not x86-64: ensemble translations need the recorded kernels");
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    char *a = train_case(dir, data, "rnn-bahdanau", case_rnn_bahdanau);
    char *b = train_case(dir, data, "tf-post", case_tf_post);
    char *c = train_case(dir, data, "rnn-luong", case_rnn_luong);
    char *la = strf("%s.last", a), *lb = strf("%s.last", b), *lc = strf("%s.last", c);
    const char *models[4] = {la, lb, lc, NULL};
    expect_translations("ensemble", data, models);
    free(la);
    free(lb);
    free(lc);
    free(a);
    free(b);
    free(c);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Model files written by the earlier version load and translate as they did then. */
Test(recorded, old_model_files)
{
    pin_kernels();
    if (!EXACT && !getenv("S2S_RECORD"))
        cr_skip_test("not x86-64: translations need the recorded kernels");
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    const char *rnn[2] = {"tests/recorded/rnn.s2s", NULL}, *tf[2] = {"tests/recorded/tf.s2s", NULL};
    expect_translations("old-rnn", data, rnn);
    expect_translations("old-tf", data, tf);
    free(data);
    rm_rf(dir);
    free(dir);
}
