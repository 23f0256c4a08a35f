/* End-to-end tests of `s2s train`: outputs, the log, repeatability, exact resume,
   and refusals. A small model (size 16) keeps each run well under a second. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "model_fixture.h"
#include "base/buf.h"
#include "base/crc32.h"
#include "base/safetensors.h"
#include "model/file.h"
#include "nn/bf16.h"

#define SMALL_MODEL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
                    "--deep-out", "16", "--threads", "1", "--quiet"

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The "loss" values of the step lines of a log, concatenated. */
static char *step_losses(const char *log_path, long from)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    size_t cap = strlen(log) + 1, n = 0;
    char *out = calloc(cap, 1);
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        long step;
        if (sscanf(line, "{\"event\": \"step\", \"step\": %ld,", &step) == 1 && step >= from) {
            char *l = strstr(line, "\"loss\": "), *end = l ? strchr(l, ',') : NULL;
            cr_assert(l && end);
            n += (size_t)snprintf(out + n, cap - n, "%ld:%.*s ", step, (int)(end - l - 8), l + 8);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(log);
    return out;
}

Test(train, writes_model_last_state_and_log)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "12", "--valid-every", "4",
                          SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "");
    for (const char *suffix = ""; suffix; suffix = *suffix ? (strcmp(suffix, ".last") == 0 ? ".state" : NULL) : ".last") {
        char *p = strf("%s%s", model, suffix);
        cr_expect(file_exists(p), "%s missing", p);
        free(p);
    }
    char *logp = strf("%s.log.jsonl", model);
    char *log = slurp(logp, NULL);
    cr_assert_not_null(log);
    cr_expect(strncmp(log, "{\"event\": \"start\", \"step\": 0, \"config\": {\"cell\": \"gru\"", 52) == 0, "%.80s", log);
    cr_expect_eq(count_lines_with(log, "{\"event\": \"step\""), 12);
    /* valid at steps 4, 5 (epoch end), 8, 10 (epoch end), 12; none repeated at the stop */
    cr_expect_eq(count_lines_with(log, "{\"event\": \"valid\""), 5);
    cr_expect(strstr(log, "{\"event\": \"valid\", \"step\": 5, \"epoch\": 1,"), "%s", log);
    cr_expect(strstr(log, "{\"event\": \"stop\", \"reason\": \"steps\", \"step\": 12,"), "%s", log);
    /* the model file says what produced it */
    ModelFile mf;
    fixture_load_file(model, &mf);
    cr_expect_eq(mf.model.cfg.emb, 16);
    cr_expect(strstr(mf.history, "\"steps\": "), "%s", mf.history);
    model_file_free(&mf);
    ModelFile last;
    char *lastp = strf("%s.last", model);
    fixture_load_file(lastp, &last);
    cr_expect(strncmp(last.history, "{\"steps\": 12,", 13) == 0, "%s", last.history);
    model_file_free(&last);
    free(lastp);
    free(log);
    free(logp);
    run_free(&r);
    rm_rf(dir);
    free(dir);
    free(data);
    free(model);
}

Test(train, loss_goes_down)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "40", "--valid-every", "0",
                          "--lr-schedule", "constant", "--lr", "0.005", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *logp = strf("%s.log.jsonl", model);
    char *l1 = step_losses(logp, 1);
    double first = 0, last = 0;
    long s;
    cr_assert_eq(sscanf(l1, "%ld:%lf", &s, &first), 2);
    const char *p = strstr(l1, "40:");
    cr_assert_not_null(p, "%s", l1);
    cr_assert_eq(sscanf(p, "%ld:%lf", &s, &last), 2);
    cr_expect(first > 5.0 && last < first - 1.5, "loss %g at step 1, %g at step 40", first, last);
    free(l1);
    free(logp);
    run_free(&r);
    rm_rf(dir);
    free(dir);
    free(data);
    free(model);
}

Test(train, same_seed_same_run_and_resume_is_exact)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir), *c = strf("%s/c.s2s", dir);
    /* dropout on, validation every 4 steps and at epoch ends (5 batches an epoch) */
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--steps", "13", "--valid-every", "4",
                          "--seed", "7", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", b, "--steps", "13", "--valid-every", "4", "--seed", "7",
                SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* interrupted inside an epoch (step 7), resumed to 10 (an epoch end), resumed to 13 */
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "7", "--valid-every", "4", "--seed", "7",
                SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "10", "--valid-every", "4", "--seed", "7",
                "--resume", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "13", "--valid-every", "4", "--seed", "7",
                "--resume", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);

    char *la = strf("%s.log.jsonl", a), *lb = strf("%s.log.jsonl", b), *lc = strf("%s.log.jsonl", c);
    char *sa = step_losses(la, 1), *sb = step_losses(lb, 1), *sc = step_losses(lc, 1);
    cr_expect_str_eq(sb, sa, "same seed, different losses");
    cr_expect_str_eq(sc, sa, "resumed run, different losses");
    char *lasta = strf("%s.last", a), *lastb = strf("%s.last", b), *lastc = strf("%s.last", c);
    expect_same_weights(lasta, lastb);
    expect_same_weights(lasta, lastc);

    /* a different seed gives a different run */
    char *d = strf("%s/d.s2s", dir);
    r = RUN_S2S(NULL, "train", data, "-o", d, "--steps", "3", "--seed", "8", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *ld = strf("%s.log.jsonl", d), *sd = step_losses(ld, 1);
    cr_expect(strncmp(sd, sa, 12) != 0, "seed 8 repeats seed 7: %s", sd);

    free(ld); free(sd); free(d);
    free(lasta); free(lastb); free(lastc);
    free(sa); free(sb); free(sc);
    free(la); free(lb); free(lc);
    free(a); free(b); free(c);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* The "epoch" of a log's step line `step`. */
static long epoch_at(const char *log_path, long step)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    char *key = strf("{\"event\": \"step\", \"step\": %ld, \"epoch\": ", step), *at = strstr(log, key);
    cr_assert_not_null(at, "no step %ld in %s", step, log_path);
    long epoch = strtol(at + strlen(key), NULL, 10);
    free(key);
    free(log);
    return epoch;
}

/* An option that adds examples to each epoch (--concat, --copy-names) at val on the
   prepared directory data: 13 steps with it (its epochs end after step `with`, the
   run's stderr to *err), 13 without (epochs of 5 steps), and 4 with it resumed to
   `mid` then 13 (refused first with the value other): the resumed run has the first's
   losses and weights, the run without other losses. with 0: an option that keeps the
   epoch's length (its epochs are not checked). */
static void expect_epoch_option(const char *data, const char *dir, const char *opt, const char *val,
                                const char *other, long with, const char *mid, char **err)
{
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir), *c = strf("%s/c.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--steps", "13", opt, val, "--emb", "16", "--hidden", "16",
                          "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    *err = strdup(r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", b, "--steps", "13", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "4", opt, val, SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* another value on --resume is refused */
    r = RUN_S2S(NULL, "train", "--resume", "-o", c, opt, other);
    cr_expect_eq(r.status, 2);
    char *refused = strf("s2s: train: %s differs from the run in ", opt);
    cr_expect(strstr(r.err, refused) == r.err, "%s", r.err);
    free(refused);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "--resume", "-o", c, "--steps", mid, "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "--resume", "-o", c, "--steps", "13", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *la = strf("%s.log.jsonl", a), *lb = strf("%s.log.jsonl", b), *lc = strf("%s.log.jsonl", c);
    if (with > 0) {
        cr_expect_eq(epoch_at(la, with), 1);
        cr_expect_eq(epoch_at(la, with + 1), 2);
    }
    cr_expect_eq(epoch_at(lb, 5), 1);
    cr_expect_eq(epoch_at(lb, 6), 2);
    char *sa = step_losses(la, 1), *sb = step_losses(lb, 1), *sc = step_losses(lc, 1);
    cr_expect_str_eq(sc, sa, "resumed run, different losses");
    cr_expect_str_neq(sb, sa, "%s %s trained as without", opt, val);
    char *lasta = strf("%s.last", a), *lastc = strf("%s.last", c);
    expect_same_weights(lasta, lastc);
    free(lasta); free(lastc);
    free(sa); free(sb); free(sc);
    free(la); free(lb); free(lc);
    free(a); free(b); free(c);
}

/* --concat 0.5: epochs of twice the examples (the 320 pairs and 320 joined ones, 10
   batches instead of 5), exact across --resume inside an epoch and at its end, and a
   different run from one without. */
Test(train, concat_doubles_the_epoch_and_resumes_exactly)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *err;
    expect_epoch_option(data, dir, "--concat", "0.5", "0.25", 10, "10", &err);
    free(err);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* --copy-names on subwords: the summary line counts the pairs with a name on both
   sides (13 of the 320 training pairs: "Tom", "Mary"); the renamed pairs lengthen the
   epoch (5 steps of at most 64 pairs; with 13 more, 6), change the losses, and resume
   exactly; words are refused. The Transformer renames by default on subwords alone. */
Test(train, copy_names_adds_renamed_pairs_and_resumes_exactly)
{
    char *dir = sample_prepared_dir_with("300");
    char *data = strf("%s/data", dir), *words = strf("%s/words", dir), *err;
    expect_epoch_option(data, dir, "--copy-names", "1", "0.5", 6, "9", &err);
    cr_expect(strstr(err, "\ntrain: --copy-names: 13 training pairs hold a name on both sides; 13 of them renamed "
                          "each epoch, with "),
              "%s", err);
    free(err);

    /* word vocabularies cannot spell an invented name */
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", words);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *w = strf("%s/w.s2s", dir);
    r = RUN_S2S(NULL, "train", words, "-o", w, "--steps", "2", "--copy-names", "0.5", SMALL_MODEL);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: --copy-names needs subword vocabularies on both sides (s2s prepare --bpe)\n",
                      words);
    cr_expect_str_eq(r.err, want);
    cr_expect(access(w, F_OK) != 0, "%s written", w);
    run_free(&r);

    /* the Transformer's recipe renames half as many on subwords without the option, also
       when one batch holds the whole epoch (320 pairs, 36 joined, 7 renamed), and trains
       words without it (the state saves 0, so the run resumes) */
#define TF_STEP "--model-dim", "16", "--ff", "32", "--heads", "2", "--layers", "1", "--threads", "1", "--steps", "1"
    char *t = strf("%s/t.s2s", dir);
    r = RUN_S2S(NULL, "train", data, "-o", t, "--batch", "1000", TF_STEP);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "\ntrain: --copy-names: 13 training pairs hold a name on both sides; 7 of them renamed "
                            "each epoch, with "),
              "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", words, "-o", w, TF_STEP);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(!strstr(r.err, "--copy-names"), "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "--resume", "-o", w, "--steps", "2", "--quiet");
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
#undef TF_STEP
    free(want); free(w); free(t);
    free(data); free(words);
    rm_rf(dir);
    free(dir);
}

/* --bpe-dropout and --token-dropout: each changes the run, which resumes exactly inside
   an epoch and across its end (epochs of 5 steps: the resumed run segments epochs 2 and
   3 anew as the first did); --bpe-dropout needs subwords. */
Test(train, bpe_and_token_dropout_change_the_run_and_resume_exactly)
{
    char *dir = sample_prepared_dir_with("300");
    char *data = strf("%s/data", dir), *words = strf("%s/words", dir), *err;
    expect_epoch_option(data, dir, "--bpe-dropout", "0.1", "0.2", 0, "7", &err);
    free(err);
    char *tok = strf("%s/tok", dir);
    cr_assert_eq(mkdir(tok, 0700), 0);
    expect_epoch_option(data, tok, "--token-dropout", "0.1", "0.2", 0, "7", &err);
    free(err);
    free(tok);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", words);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *w = strf("%s/w.s2s", dir);
    r = RUN_S2S(NULL, "train", words, "-o", w, "--steps", "2", "--bpe-dropout", "0.1", SMALL_MODEL);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: --bpe-dropout needs subword vocabularies (s2s prepare --bpe)\n", words);
    cr_expect_str_eq(r.err, want);
    cr_expect(access(w, F_OK) != 0, "%s written", w);
    run_free(&r);
    free(want); free(w);
    free(data); free(words);
    rm_rf(dir);
    free(dir);
}

/* The validations of the log at log_path: each one's step, loss and BLEU. */
static char *valid_scores(const char *log_path)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    Buf out = {0};
    for (char *at = strstr(log, "{\"event\": \"valid\""); at; at = strstr(at + 1, "{\"event\": \"valid\"")) {
        long step;
        char loss[32], bleu[32];
        char *l = strstr(at, "\"loss\": "), *b = strstr(at, "\"bleu\": ");
        cr_assert(l && b && sscanf(at, "{\"event\": \"valid\", \"step\": %ld,", &step) == 1);
        cr_assert_eq(sscanf(l, "\"loss\": %31[^,]", loss), 1);
        cr_assert_eq(sscanf(b, "\"bleu\": %31[^,]", bleu), 1);
        buf_printf(&out, "%ld:%s:%s ", step, loss, bleu);
    }
    free(log);
    buf_putc(&out, '\0');
    return out.data;
}

/* BPE-dropout and token dropout are training's alone: at a rate of 0 the weights never
   move, so runs with and without them (0.5 each) validate the same model, and their
   validations are the same, while their training losses differ. */
Test(train, bpe_and_token_dropout_are_off_at_validation)
{
    char *dir = sample_prepared_dir_with("300");
    char *data = strf("%s/data", dir), *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir);
#define STILL "--lr", "0", "--steps", "6", "--valid-every", "3", "--threads", "1", "--quiet", SMALL_MODEL
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--bpe-dropout", "0.5", "--token-dropout", "0.5", STILL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", b, STILL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
#undef STILL
    char *la = strf("%s.log.jsonl", a), *lb = strf("%s.log.jsonl", b);
    char *va = valid_scores(la), *vb = valid_scores(lb), *sa = step_losses(la, 1), *sb = step_losses(lb, 1);
    cr_expect(strstr(va, "3:") && strstr(va, "6:"), "%s", va);
    cr_expect_str_eq(va, vb, "validation saw the dropouts");
    cr_expect_str_neq(sa, sb, "the dropouts changed no training loss");
    free(va); free(vb); free(sa); free(sb); free(la); free(lb);
    free(a); free(b); free(data);
    rm_rf(dir);
    free(dir);
}

/* The loss of step `step` in the log at log_path. */
static double loss_at(const char *log_path, long step)
{
    char *all = step_losses(log_path, step), *want = strf("%ld:", step);
    cr_assert(strncmp(all, want, strlen(want)) == 0, "%s", all);
    double l = strtod(all + strlen(want), NULL);
    free(all);
    free(want);
    return l;
}

/* --precision: the first progress line names the products' precision. Without bf16 in
   the CPU (DNNL_MAX_CPU_ISA=AVX2 hides it from oneDNN on any CPU) the default (auto)
   trains in fp32, the run of --precision f32 bit for bit, and bf16 is refused before
   anything is written. Where the CPU has bf16: auto picks it, a tiny Transformer's loss
   falls over 30 bf16 steps, the run resumes in fp32 when asked, and stays in it. */
Test(train, precision_is_named_and_bf16_trains_where_the_cpu_has_it)
{
#define TF_P "--model-dim", "16", "--ff", "32", "--heads", "2", "--layers", "1", "--threads", "1", \
             "--valid-every", "0"
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir),
         *c = strf("%s/c.s2s", dir), *d = strf("%s/d.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--steps", "3", "--precision", "f32", TF_P);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, " parameters, 1 thread, fp32 products\n"), "%s", r.err);
    run_free(&r);
    setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);
    r = RUN_S2S(NULL, "train", data, "-o", b, "--steps", "3", TF_P);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, " parameters, 1 thread, fp32 products\n"), "%s", r.err);
    run_free(&r);
    char *la = strf("%s.last", a), *lb = strf("%s.last", b);
    expect_same_weights(la, lb);

    setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "3", "--precision", "bf16", TF_P);
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: train: --precision bf16: bf16 products need a CPU with bf16 instructions "
                            "(AVX512-BF16 or AMX); this one has none\n");
    char *cs = strf("%s.state", c);
    cr_expect(access(c, F_OK) != 0 && access(cs, F_OK) != 0, "%s written", c);
    free(cs);
    run_free(&r);
    unsetenv("DNNL_MAX_CPU_ISA");

    if (nn_bf16_native()) {
        r = RUN_S2S(NULL, "train", data, "-o", d, "--steps", "30", TF_P);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.err, " parameters, 1 thread, bf16 products\n"), "%s", r.err);
        run_free(&r);
        char *ld = strf("%s.log.jsonl", d);
        double first = loss_at(ld, 1), last = loss_at(ld, 30);
        cr_expect(last < first - 0.3, "bf16: loss %g at step 1, %g at step 30", first, last);
        r = RUN_S2S(NULL, "train", "--resume", "-o", d, "--steps", "32", "--precision", "f32");
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.err, ", fp32 products; resuming\n"), "%s", r.err);
        run_free(&r);
        /* the state keeps the precision: resumed again without --precision, still fp32 */
        r = RUN_S2S(NULL, "train", "--resume", "-o", d, "--steps", "34");
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.err, ", fp32 products; resuming\n"), "%s", r.err);
        run_free(&r);
        free(ld);
    } else {
        r = RUN_S2S(NULL, "train", data, "-o", d, "--steps", "1", "--precision", "bf16", TF_P);
        cr_expect_eq(r.status, 2, "%s", r.err);
        run_free(&r);
    }
#undef TF_P
    free(la); free(lb);
    free(a); free(b); free(c); free(d);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* A small corpus's epochs end every 5 steps: each is validated and logged, but stderr
   shows a validation at most every --log-every steps (and the last). */
Test(train, few_validation_lines_on_a_small_corpus)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "60", "--log-every", "20", "--emb", "8",
                          "--hidden", "8", "--dec-hidden", "8", "--attn-size", "8", "--deep-out", "8", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    int shown = 0;
    for (const char *p = r.err; (p = strstr(p, "valid step ")); p++)
        shown++;
    cr_expect_eq(shown, 3, "%s", r.err);
    cr_expect(strstr(r.err, "valid step 20: ") && strstr(r.err, "valid step 40: ") && strstr(r.err, "valid step 60: "),
              "%s", r.err);
    run_free(&r);
    char *logp = strf("%s.log.jsonl", m), *log = slurp(logp, NULL);
    cr_expect_eq(count_lines_with(log, "{\"event\": \"valid\""), 12);
    free(log);
    free(logp);
    free(m);
    free(data);
    rm_rf(dir);
    free(dir);
}

Test(train, refuses_to_overwrite_a_run_without_resume_or_force)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *before = slurp(model, NULL);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", SMALL_MODEL);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s.state exists: add --resume to continue that run, or --force to start over\n", model);
    cr_expect_str_eq(r.err, want);
    char *after = slurp(model, NULL);
    cr_expect_str_eq(after, before, "the model changed");
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", "--force", SMALL_MODEL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* --resume with another configuration */
    r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "4", "--resume", "--emb", "8", "--hidden",
                "16", "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16", "--quiet");
    cr_expect_eq(r.status, 2);
    free(want);
    want = strf("s2s: train: --emb differs from the run in %s.state; on --resume only --time, --steps, "
                "--epochs, --patience, --threads, --precision, --log-every and --quiet may change\n", model);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    free(after);
    free(before);
    free(want);
    rm_rf(dir);
    free(dir);
    free(data);
    free(model);
}

Test(train, usage_errors_exit_2)
{
    static const struct { const char *args[9]; const char *msg; } cases[] = {
        {{"train", "d", "-o", "m", "--frob"}, "s2s: train: unknown option '--frob' (see 's2s train --help')\n"},
        {{"train", "-o", "m"}, "s2s: train: missing DATA argument (see 's2s train --help')\n"},
        {{"train", "d"}, "s2s: train: missing option -o MODEL (see 's2s train --help')\n"},
        {{"train", "d", "-o", "m", "--cell", "rnn"}, "s2s: train: option --cell must be gru or lstm, got 'rnn'\n"},
        {{"train", "d", "-o", "m", "--tie-embeddings", "--emb", "8"},
         "s2s: train: --tie-embeddings needs --deep-out equal to --emb (256 != 8)\n"},
        {{"train", "d", "-o", "m", "--arch", "rnn", "--warmup", "10"},
         "s2s: train: --warmup needs --lr-schedule warmup-decay or warmup-cosine\n"},
        {{"train", "d", "-o", "m", "--lr-patience", "10"}, "s2s: train: --lr-patience needs --lr-schedule plateau\n"},
        {{"train", "d", "-o", "m", "--resume", "--force"}, "s2s: train: --resume and --force exclude each other\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RunResult r = run_s2s(NULL, cases[i].args);
        cr_expect_eq(r.status, 2, "case %zu: status %d (%s)", i, r.status, r.err);
        if (cases[i].msg)
            cr_expect_str_eq(r.err, cases[i].msg);
        run_free(&r);
    }
}

/* An s2s built without MPI (this one) that an MPI launcher started as one of several
   processes would train the same model N times over the same files: it says so and
   exits 2 before anything is written; as one process of one it trains. */
Test(train, started_by_mpirun_without_mpi_exits_2)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    char *before = dir_snapshot(dir);
    static const struct { const char *var, *value; } cases[] = {
        {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_SIZE", "4"}, {"PMIX_SIZE", "3"}, {"MV2_COMM_WORLD_SIZE", "2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv(cases[i].var, cases[i].value, 1);
        RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", SMALL_MODEL);
        unsetenv(cases[i].var);
        cr_expect_eq(r.status, 2, "%s: status %d (%s)", cases[i].var, r.status, r.err);
        char *want = strf("s2s: train: started as one of %s processes (%s=%s), but this s2s is built "
                          "without MPI: build it with 'make MPI=1'\n", cases[i].value, cases[i].var,
                          cases[i].value);
        cr_expect_str_eq(r.err, want);
        char *after = dir_snapshot(dir);
        cr_expect_str_eq(after, before, "%s: files changed", cases[i].var);
        free(after);
        free(want);
        run_free(&r);
    }
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", SMALL_MODEL);
    unsetenv("OMPI_COMM_WORLD_SIZE");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(file_exists(model));
    run_free(&r);
    free(before);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

Test(train, missing_data_and_unwritable_output_fail_before_training)
{
    char *dir = tmpdir_new();
    char *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", "no-such-corpus.tsv", "-o", model, "--quiet");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "s2s: no-such-corpus.tsv: cannot open: No such file or directory\n");
    cr_expect_eq(dir_count(dir), 0, "something was written");
    run_free(&r);
    free(model);
    rm_rf(dir);
    free(dir);

    /* a missing folder is created, as prepare creates its own; a file in the way is not */
    dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    model = strf("%s/new/folder/m.s2s", dir);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", SMALL_MODEL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(access(model, F_OK) == 0, "no %s", model);
    run_free(&r);
    free(model);
    model = strf("%s/data/train.tsv/m.s2s", dir);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--quiet");
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: cannot write there: Not a directory\n", model);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    free(want);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* The bar on the project's corpus: a short run memorises the training split
   (BLEU >= 90 by `s2s eval`), and `s2s translate` gives back the reference of every
   training sentence that has one reference (at least 98% of them, exactly). */
Test(train, memorises_the_sample_corpus)
{
    char *dir = tmpdir_new();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data, "--min-freq", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--epochs", "60", "--lr", "0.003", "--lr-schedule",
                "constant", "--valid-every", "0", "--dropout", "0", "--emb", "64", "--hidden", "64",
                "--dec-hidden", "64", "--attn-size", "64", "--deep-out", "64", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *last = strf("%s.last", model), *train = strf("%s/train.tsv", data);
    r = RUN_S2S(NULL, "eval", last, train);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double bleu = 0;
    cr_assert_eq(sscanf(r.out, "BLEU = %lf", &bleu), 1, "%s", r.out);
    cr_expect(bleu >= 90, "training-set BLEU %.2f < 90", bleu);
    run_free(&r);

    /* sources, one per line, and the reference of each */
    char *tsv = slurp(train, NULL);
    cr_assert_not_null(tsv);
    enum { MAXP = 1000 };
    char *src[MAXP], *ref[MAXP];
    int n = 0;
    for (char *line = strtok(tsv, "\n"); line && n < MAXP; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        cr_assert_not_null(tab);
        *tab = '\0';
        src[n] = line;
        ref[n++] = tab + 1;
    }
    size_t cap = 1;
    for (int i = 0; i < n; i++)
        cap += strlen(src[i]) + 1;
    char *input = calloc(cap, 1);
    for (int i = 0; i < n; i++) {
        strcat(input, src[i]);
        strcat(input, "\n");
    }
    r = RUN_S2S(input, "translate", last);
    cr_assert_eq(r.status, 0, "%s", r.err);
    int single = 0, exact = 0, k = 0;
    for (char *hyp = strtok(r.out, "\n"); hyp && k < n; hyp = strtok(NULL, "\n"), k++) {
        int refs = 0;
        for (int j = 0; j < n; j++)
            refs += strcmp(src[j], src[k]) == 0;
        if (refs != 1)
            continue;
        single++;
        if (strcmp(hyp, ref[k]) == 0)
            exact++;
        else
            cr_log_warn("'%s' -> '%s', expected '%s'", src[k], hyp, ref[k]);
    }
    cr_expect_eq(k, n, "%d translations for %d lines", k, n);
    cr_expect(single > 250 && exact * 100 >= single * 98, "%d of %d reproduced exactly", exact, single);
    run_free(&r);
    free(input);
    free(tsv);
    free(train);
    free(last);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

static double eval_bleu(const char *model, const char *tsv)
{
    RunResult r = RUN_S2S(NULL, "eval", model, tsv, "--beam", "1", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    double bleu = -1;
    cr_assert_eq(sscanf(r.out, "BLEU = %lf", &bleu), 1, "%s", r.out);
    run_free(&r);
    return bleu;
}

/* The recurrent model's defaults, given a corpus, an output and a budget: on the sample
   (epochs of 5 steps, a validation at each epoch end) the run uses its whole budget (no
   stop after the default 10 epochs) and the plateau schedule does not lower the rate
   on the noise of 40 valid sentences, so the model is as good on its training data as
   the same run at a constant rate. (Before: stopped after 50 steps with the rate
   lowered seven times, BLEU below 1.) */
Test(train, defaults_use_the_budget_on_a_small_corpus)
{
    char *dir = tmpdir_new();
    char *def = strf("%s/def.s2s", dir), *con = strf("%s/con.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", def, "--steps", "60", "--threads", "1",
                          "--arch", "rnn");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", con, "--steps", "60", "--threads", "1", "--arch", "rnn",
                "--lr-schedule", "constant", "--epochs", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *logp = strf("%s.log.jsonl", def);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"stop\", \"reason\": \"steps\", \"step\": 60,"), 1);
    cr_expect_eq(count_in_file(logp, "\"lr\": 0.0005"), 0, "the rate was lowered");
    char *tdef = strf("%s.d/train.tsv", def), *tcon = strf("%s.d/train.tsv", con);
    double bdef = eval_bleu(def, tdef), bcon = eval_bleu(con, tcon);
    cr_expect(bdef >= bcon, "defaults: training-set BLEU %.2f, constant rate %.2f", bdef, bcon);
    cr_expect(bdef >= 5, "defaults: training-set BLEU %.2f", bdef);
    free(tdef);
    free(tcon);
    free(logp);
    free(def);
    free(con);
    rm_rf(dir);
    free(dir);
}

/* Restructuring the code must not change what it computes: these runs give, step for
   step, the losses and (CRC-32 of MODEL.last's weights) the weights recorded from an
   earlier binary. Recorded again when the batch plan came to be made a chunk at a time
   (batch_plan_start: other batches from the same seed); until then, without dropout,
   those of the binary before the restructuring of the model interface (commit 7a3f485),
   which the chunked output layer, the clipping folded into Adam and the counter-based
   dropout masks (with dropout) had kept bit for bit. The weights' CRC-32 was recorded
   again, with OpenBLAS pinned to its Prescott kernels (which every x86-64 CPU runs; the
   losses as printed were unchanged), by the binary before the model kinds became three
   implementations of model/model.h: OpenBLAS picks its kernels by CPU and they round
   differently, so without the pin the weights' bits depend on the machine
   (tests/cli/test_recorded.c says which comparisons are exact and why). */
static void expect_recorded_run(const char *const *extra, const char *losses, unsigned crc)
{
#if !defined(__x86_64__)
    cr_skip_test("not x86-64: the recorded weights need OpenBLAS's Prescott kernels");
#endif
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    const char *args[40] = {"train", data, "-o", model, "--steps", "12", "--seed", "7", "--lr-schedule",
                            "constant", "--valid-every", "0", "--precision", "f32", SMALL_MODEL};
    int n = 0;
    while (args[n])
        n++;
    for (int i = 0; extra[i]; i++)
        args[n++] = extra[i];
    RunResult r = run_s2s(NULL, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *logp = strf("%s.log.jsonl", model), *got = step_losses(logp, 1);
    cr_expect_str_eq(got, losses);
    char *last = strf("%s.last", model);
    ModelFile mf;
    fixture_load_file(last, &mf);
    unsigned c = crc32_update(0, mf.model.params, mf.model.layout.total * sizeof(real));
    cr_expect_eq(c, crc, "weights CRC-32 %08x, recorded %08x", c, crc);
    cr_log_info("losses %s crc %08x", got, c);
    model_file_free(&mf);
    free(last);
    free(got);
    free(logp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

Test(train, the_same_weights_and_losses_as_before_the_restructuring)
{
    expect_recorded_run((const char *const[]){"--dropout", "0", NULL},
                        "1:5.49159 2:5.45191 3:5.45459 4:5.46083 5:5.41191 6:5.44245 7:5.38971 8:5.37397 "
                        "9:5.38918 10:5.38134 11:5.3676 12:5.33457 ",
                        0x24aabe99u);
    expect_recorded_run((const char *const[]){"--dropout", "0", "--cell", "lstm", "--layers", "2", "--attention",
                                              "luong-general", "--input-feed", NULL},
                        "1:5.46725 2:5.47329 3:5.47342 4:5.46045 5:5.45864 6:5.45267 7:5.44991 8:5.44381 "
                        "9:5.44591 10:5.42221 11:5.4363 12:5.42699 ",
                        0x6b810f88u);
    expect_recorded_run((const char *const[]){NULL},
                        "1:5.49986 2:5.45497 3:5.45579 4:5.46835 5:5.41688 6:5.44595 7:5.39645 8:5.38124 "
                        "9:5.39489 10:5.38363 11:5.36664 12:5.33945 ",
                        0x64d63bb2u);
    expect_recorded_run((const char *const[]){"--cell", "lstm", "--layers", "2", "--attention", "luong-general",
                                              "--input-feed", NULL},
                        "1:5.46581 2:5.47301 3:5.47304 4:5.46168 5:5.45998 6:5.45269 7:5.44998 8:5.44329 "
                        "9:5.44741 10:5.42299 11:5.43673 12:5.42813 ",
                        0x6898f723u);
}

/* --resume needs no flag retyped: the options come from MODEL.state, and the run
   continues exactly. A flag given again must equal the run's unless it may change. */
Test(train, resume_without_flags_continues_exactly)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    char *a = strf("%s/a.s2s", dir), *c = strf("%s/c.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--steps", "13", "--valid-every", "4", "--seed", "7",
                          "--lr", "0.002", "--cell", "lstm", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", c, "--steps", "7", "--valid-every", "4", "--seed", "7", "--lr",
                "0.002", "--cell", "lstm", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* a flag that differs is refused, naming it; nothing changes */
    char *before = dir_snapshot(dir);
    r = RUN_S2S(NULL, "train", "--resume", "-o", c, "--lr", "0.001");
    cr_expect_eq(r.status, 2);
    char *want = strf("s2s: train: --lr differs from the run in %s.state; on --resume only --time, --steps, "
                      "--epochs, --patience, --threads, --precision, --log-every and --quiet may change\n", c);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before);
    /* no DATA, no model flags: only the new limit (and this test's threads) */
    r = RUN_S2S(NULL, "train", "--resume", "-o", c, "--steps", "10", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* flags equal to the run's are accepted */
    r = RUN_S2S(NULL, "train", data, "--resume", "-o", c, "--steps", "13", "--cell", "lstm", "--lr", "0.002",
                "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *la = strf("%s.log.jsonl", a), *lc = strf("%s.log.jsonl", c);
    char *sa = step_losses(la, 1), *sc = step_losses(lc, 1);
    cr_expect_str_eq(sc, sa, "resumed without flags, different losses");
    char *lasta = strf("%s.last", a), *lastc = strf("%s.last", c);
    expect_same_weights(lasta, lastc);
    free(lasta); free(lastc); free(sa); free(sc); free(la); free(lc);
    free(want); free(before); free(after);
    free(a); free(c);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Checks the rate of every step line of a log against warmup-cosine's, to the log's 6
   digits: base · w · (1 + cos(π f)) / 2 with f = (s − 1)/N and w = min(1, max(s/W,
   f/share)) (share 0: min(s/W, 1)). Returns the steps checked. */
static int check_cosine_rates(const char *logp, double base, long W, double share, long N)
{
    char *log = slurp(logp, NULL);
    cr_assert_not_null(log);
    int seen = 0;
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        long step;
        double lr;
        char *l = strstr(line, "\"lr\": ");
        if (sscanf(line, "{\"event\": \"step\", \"step\": %ld,", &step) == 1 && l && sscanf(l + 6, "%lf", &lr) == 1) {
            double f = (double)(step - 1) / (double)N, w = step < W ? (double)step / (double)W : 1;
            if (share > 0)
                w = fmin(1, fmax(w, f / share));
            double want = base * w * 0.5 * (1 + cos(M_PI * f));
            cr_expect(fabs(lr - want) <= 1e-5 * want, "%s step %ld: lr %g, want %g", logp, step, lr, want);
            seen++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(log);
    return seen;
}

/* --lr-schedule warmup-cosine with a budget of steps: the rate of every step in the log
   is base · min(s/W, 1) · (1 + cos(π (s − 1)/N)) / 2 with --warmup W given. */
Test(train, warmup_cosine_decays_to_the_end_of_the_steps)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "12", "--warmup", "3", "--lr", "0.002",
                          "--lr-schedule", "warmup-cosine", "--valid-every", "0", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *logp = strf("%s.log.jsonl", m);
    cr_expect_eq(check_cosine_rates(logp, 0.002, 3, 0, 12), 12);
    r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "1", "--warmup", "3", "--force", SMALL_MODEL, "--lr-schedule",
                "constant");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: train: --warmup needs --lr-schedule warmup-decay or warmup-cosine\n");
    run_free(&r);
    free(logp);
    free(m);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Warmup fits the budget: without --warmup, warmup-cosine's 800 steps end sooner, at a
   tenth of the budget (here 20 steps: the peak at step 3), or at --warmup-share of it;
   a --warmup longer than --steps is warned about; the valid lines show the rate in force. */
Test(train, warmup_fits_a_short_budget)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir), *n = strf("%s/n.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "20", "--lr-schedule", "warmup-cosine",
                          "--valid-every", "10", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *logp = strf("%s.log.jsonl", m), *log = slurp(logp, NULL);
    cr_expect_eq(check_cosine_rates(logp, 0.001, 800, 0.1, 20), 20);
    /* after step 10 (f = 0.5 at the next step): 1e-3 · (1 + cos(π/2)) / 2 */
    cr_expect(strstr(log, "{\"event\": \"valid\", \"step\": 10, ") && strstr(log, "\"lr\": 0.0005, "),
              "no valid line at step 10 with the rate in force: %s", log);
    r = RUN_S2S(NULL, "train", data, "-o", n, "--steps", "20", "--lr-schedule", "warmup-cosine", "--warmup", "100",
                "--warmup-share", "0.25", "--valid-every", "0", SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *logn = strf("%s.log.jsonl", n);
    cr_expect_eq(check_cosine_rates(logn, 0.001, 100, 0.25, 20), 20);
    r = RUN_S2S(NULL, "train", data, "-o", n, "--steps", "4", "--lr-schedule", "warmup-cosine", "--warmup", "10",
                "--valid-every", "0", "--force", "--emb", "16", "--hidden", "16", "--dec-hidden", "16",
                "--attn-size", "16", "--deep-out", "16", "--threads", "1", "--log-every", "100");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "train: warning: --warmup 10 is longer than --steps 4: the rate never reaches --lr 0.001\n"),
              "%s", r.err);
    cr_expect(strstr(r.err, "train: recurrent model (selected by --emb), 320 pairs (valid 40), "), "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", n, "--steps", "1", "--warmup-share", "0.5", "--force", SMALL_MODEL,
                "--lr-schedule", "warmup-decay");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: train: --warmup-share needs --lr-schedule warmup-cosine\n");
    run_free(&r);
    free(log);
    free(logp);
    free(logn);
    free(m);
    free(n);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* The recipe (docs/quality.md): a corpus DATA is prepared with joint BPE merges (--bpe,
   default 16000; 0: words), and --bpe with a prepared directory is refused; the
   Transformer keeps an average of its weights unless --ema is given (MODEL.state holds
   it as "ema"), the recurrent model does not. */
Test(train, the_recipe_prepares_joint_subwords_and_averages_the_transformer)
{
#define TINY_TF "--model-dim", "16", "--ff", "32", "--heads", "2", "--layers", "1", "--steps", "1", \
                "--threads", "1", "--quiet"
    char *dir = tmpdir_new();
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir), *c = strf("%s/c.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", a, TINY_TF);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *pj = strf("%s.d/prepare.json", a), *json = slurp(pj, NULL);
    cr_assert_not_null(json);
    cr_expect(strstr(json, "\"bpe\": 16000,") && strstr(json, "\"joint\": true,"), "%s", json);
    free(json);
    free(pj);
    char *st = strf("%s.state", a);
    StFile *f;
    Err e;
    cr_assert_eq(st_load(&f, st, NULL, &e), 0, "%s", e.msg);
    cr_expect_not_null(st_tensor(f, "ema"), "the Transformer keeps no average by default");
    st_close(f);
    free(st);

    r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", b, "--bpe", "0", "--ema", "0", TINY_TF);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    pj = strf("%s.d/prepare.json", b);
    json = slurp(pj, NULL);
    cr_assert_not_null(json);
    cr_expect(!strstr(json, "\"bpe\""), "--bpe 0 learned subwords: %s", json);
    free(json);
    free(pj);
    st = strf("%s.state", b);
    cr_assert_eq(st_load(&f, st, NULL, &e), 0, "%s", e.msg);
    cr_expect_null(st_tensor(f, "ema"), "--ema 0 kept an average");
    st_close(f);
    free(st);

    char *bd = strf("%s.d", b);
    r = RUN_S2S(NULL, "train", bd, "-o", c, "--bpe", "8000", TINY_TF);
    cr_expect_eq(r.status, 2);
    char *want = strf("s2s: train: option --bpe is for a corpus DATA; %s was prepared with its own\n", bd);
    cr_expect_str_eq(r.err, want);
    cr_expect(!file_exists(c));
    run_free(&r);
    free(want);

    r = RUN_S2S(NULL, "train", bd, "-o", c, "--arch", "rnn", "--steps", "1", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    st = strf("%s.state", c);
    cr_assert_eq(st_load(&f, st, NULL, &e), 0, "%s", e.msg);
    cr_expect_null(st_tensor(f, "ema"), "the recurrent model keeps an average by default");
    st_close(f);
    free(st);
    free(bd);
    free(a);
    free(b);
    free(c);
    rm_rf(dir);
    free(dir);
#undef TINY_TF
}

/* The Transformer's config as `s2s info MODEL` prints it: 1 if share_embeddings and
   tie_embeddings are both true, 0 if both false (anything else fails the test). */
static int shares_and_ties(const char *model)
{
    RunResult r = RUN_S2S(NULL, "info", model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    bool share = strstr(r.out, "  share_embeddings: true\n") != NULL;
    bool tie = strstr(r.out, "  tie_embeddings: true\n") != NULL;
    cr_expect(share == tie, "share_embeddings %d, tie_embeddings %d:\n%s", share, tie, r.out);
    run_free(&r);
    return share;
}

/* The recipe fits the corpus (docs/quality.md, "The recipe fits the corpus"): on fewer
   than 50,000 training pairs with one vocabulary, one embedding table for both sides,
   tied to the output, said on stderr; on 50,000 or more, three tables and nothing said.
   Any of the four options of the embeddings given, they decide; a run from a model keeps
   the model's, and a resumed run its own. */
Test(train, the_recipe_shares_the_embeddings_of_a_small_corpus_alone)
{
#define TINY_TF "--model-dim", "16", "--ff", "32", "--heads", "2", "--layers", "1", "--steps", "1", \
                "--valid-max", "2", "--threads", "1"
    char *dir = tmpdir_new();
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir), *c = strf("%s/c.s2s", dir),
         *d = strf("%s/d.s2s", dir), *big = strf("%s/big.tsv", dir);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", a, TINY_TF);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "train: 320 training pairs, fewer than 50000: one embedding table for both sides, "
                            "tied to the output (the recipe for a small corpus; --no-share-embeddings "
                            "--no-tie-embeddings: three)\n"),
              "%s", r.err);
    run_free(&r);
    cr_expect_eq(shares_and_ties(a), 1);
    /* resumed, the run keeps its one table */
    r = RUN_S2S(NULL, "train", "--resume", "-o", a, "--steps", "2", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(shares_and_ties(a), 1);

    r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", b, "--no-share-embeddings", TINY_TF);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(!strstr(r.err, "fewer than"), "%s", r.err);
    run_free(&r);
    cr_expect_eq(shares_and_ties(b), 0);

    /* from a model of two tables, on the small corpus: the model's */
    r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", c, "--init", b, "--steps", "1", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(shares_and_ties(c), 0);

    /* 54,000 pairs: 50,000 of them for training (valid and test take 2,000 each) */
    Buf corpus = {0};
    for (int i = 0; i < 54000; i++)
        buf_printf(&corpus, "a%d b%d c%d.\tx%d y%d z%d.\n", i % 37, i / 37 % 41, i / 1517, i % 37, i / 37 % 41,
                   i / 1517);
    write_file(big, corpus.data);
    buf_free(&corpus);
    r = RUN_S2S(NULL, "train", big, "-o", d, "--bpe", "200", TINY_TF);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "prepare: train 50000, valid 2000, test 2000 pairs"), "%s", r.err);
    cr_expect(!strstr(r.err, "fewer than"), "%s", r.err);
    run_free(&r);
    cr_expect_eq(shares_and_ties(d), 0);
    free(a);
    free(b);
    free(c);
    free(d);
    free(big);
    rm_rf(dir);
    free(dir);
#undef TINY_TF
}

/* Found by the state fuzz target: the format a foreign MODEL.state names was quoted
   as it was, so that one with a line break made the refusal two lines. It is quoted
   escaped; nothing is written. */
Test(train, resume_quotes_a_foreign_state_format_on_one_line)
{
    char *dir = tmpdir_new(), *model = strf("%s/m.s2s", dir), *state = strf("%s.state", model);
    float x = 0;
    StTensor t = {.name = "x", .dtype = ST_F32, .ndim = 1, .shape = {1}, .data = &x};
    const char *keys[] = {ST_KEY_FORMAT}, *vals[] = {"s2s-state-1\nsecond line"};
    Err e;
    cr_assert_eq(st_write(state, &t, 1, keys, vals, 1, &e), 0, "%s", e.msg);
    char *before = dir_snapshot(dir);
    RunResult r = RUN_S2S(NULL, "train", "--resume", "-o", model);
    char *want = strf("s2s: %s: not an s2s training state (format 's2s-state-1\\x0asecond line', "
                      "expected 's2s-state-1')\n", state);
    expect_fail(&r, 1, want);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before);
    free(want); free(before); free(after);
    free(state); free(model);
    rm_rf(dir);
    free(dir);
}
