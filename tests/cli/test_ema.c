/* `s2s train --ema` and `--keep-checkpoints`: the moving average of the weights, its
   exact resume, and the checkpoints kept for `s2s average`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "base/safetensors.h"
#include "model/file.h"
#include "model/match.h"

#define SMALL_RNN "--arch", "rnn", "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
                  "--deep-out", "16", "--threads", "1", "--quiet", "--dropout", "0", "--lr-schedule", "constant"

/* A copy of the F32 tensor `name` of the safetensors file at path, and its length. */
static float *tensor_of(const char *path, const char *name, size_t *n)
{
    StFile *f;
    Err e;
    cr_assert_eq(st_load(&f, path, NULL, &e), 0, "%s", e.msg);
    const StTensor *t = st_tensor(f, name);
    cr_assert_not_null(t, "%s has no tensor %s", path, name);
    *n = (size_t)st_numel(t);
    float *x = malloc(*n * sizeof *x);
    memcpy(x, t->data, *n * sizeof *x);
    st_close(f);
    return x;
}

static float *weights_of(const char *path, size_t *n)
{
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, path, false, &e), 0, "%s", e.msg);
    *n = mf.model.layout.total;
    float *x = malloc(*n * sizeof *x);
    memcpy(x, mf.model.params, *n * sizeof *x);
    model_file_free(&mf);
    return x;
}

static size_t count_differing(const float *a, const float *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return d;
}

static void train(const char *data, const char *model, const char *steps)
{
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", steps, "--seed", "3", "--valid-every", "0",
                          "--ema", "0.2", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
}

/* After step t the average is ema = d·ema + (1 − d)·w with d = min(D, (1 + t)/(10 + t)),
   in float: step 1 of --ema 0.2 uses 2/11 (the warm-up bound), step 2 uses 0.2. The
   model files hold the average; MODEL.state both the weights and the average. */
Test(ema, the_average_follows_its_formula_and_fills_the_model_files)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m1 = strf("%s/one.s2s", dir), *m2 = strf("%s/two.s2s", dir);
    train(data, m1, "1");
    train(data, m2, "2");
    char *s1 = strf("%s.state", m1), *s2 = strf("%s.state", m2), *l1 = strf("%s.last", m1), *l2 = strf("%s.last", m2);
    size_t n, k;
    float *e1 = tensor_of(s1, "ema", &n), *w1 = tensor_of(s1, "params", &k);
    float *e2 = tensor_of(s2, "ema", &k), *w2 = tensor_of(s2, "params", &k);
    cr_assert_eq(k, n);
    float *want = malloc(n * sizeof *want);
    const float d2 = 0.2f, c2 = (float)(1.0 - 0.2);
    for (size_t i = 0; i < n; i++)
        want[i] = d2 * e1[i] + c2 * w2[i];
    cr_expect_eq(count_differing(e2, want, n), 0, "the average after step 2 is not 0.2·ema1 + 0.8·w2");
    /* step 1: the average lies between the initial weights and w1, 9/11 of the way to w1 */
    size_t moved = 0;
    for (size_t i = 0; i < n; i++)
        moved += e1[i] != w1[i];
    cr_expect_gt(moved, n / 2, "after one step the average should differ from the weights");
    float *f1 = weights_of(l1, &k), *f2 = weights_of(l2, &k), *best = weights_of(m2, &k);
    cr_expect_eq(count_differing(f1, e1, n), 0, "MODEL.last does not hold the average");
    cr_expect_eq(count_differing(f2, e2, n), 0, "MODEL.last does not hold the average");
    cr_expect_eq(count_differing(best, e2, n), 0, "MODEL does not hold the average");
    free(e1); free(w1); free(e2); free(w2); free(want); free(f1); free(f2); free(best);
    free(s1); free(s2); free(l1); free(l2); free(m1); free(m2); free(data);
    rm_rf(dir);
    free(dir);
}

Test(ema, resume_continues_exactly_and_keeps_the_last_checkpoints)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", a, "--steps", "12", "--seed", "3", "--valid-every", "3",
                          "--ema", "0.9", "--keep-checkpoints", "2", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", b, "--steps", "7", "--seed", "3", "--valid-every", "3", "--ema", "0.9",
                "--keep-checkpoints", "2", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    /* the average's decay is the run's: another is refused */
    r = RUN_S2S(NULL, "train", "--resume", "-o", b, "--ema", "0.5");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--ema differs from the run in") != NULL, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "--resume", "-o", b, "--steps", "12", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    const char *files[] = {".last", ".state", ".ckpt.12", ".ckpt.10"};
    for (int i = 0; i < 4; i++) {
        char *pa = strf("%s%s", a, files[i]), *pb = strf("%s%s", b, files[i]);
        size_t na, nb;
        float *xa = i == 1 ? tensor_of(pa, "ema", &na) : weights_of(pa, &na);
        float *xb = i == 1 ? tensor_of(pb, "ema", &nb) : weights_of(pb, &nb);
        cr_assert_eq(na, nb);
        cr_expect_eq(count_differing(xa, xb, na), 0, "%s: resumed and straight runs differ", files[i]);
        free(xa); free(xb); free(pa); free(pb);
    }
    /* validations at steps 3, 6, 9, 12 and at the epoch ends (5 batches of the 320
       training pairs): 5, 10; the last two are kept, the last of them is MODEL.last */
    for (int s = 1; s <= 12; s++) {
        char *p = strf("%s.ckpt.%d", a, s);
        cr_expect_eq(file_exists(p), s == 10 || s == 12, "%s", p);
        free(p);
    }
    char *c12 = strf("%s.ckpt.12", a), *last = strf("%s.last", a);
    size_t n;
    float *x = weights_of(c12, &n), *y = weights_of(last, &n);
    cr_expect_eq(count_differing(x, y, n), 0);
    free(x); free(y); free(c12); free(last);
    free(a); free(b); free(data);
    rm_rf(dir);
    free(dir);
}

/* `s2s average MODEL.state` gives the weights training ran on, before the average, with
   MODEL.last's configuration and vocabularies; a state that does not match the MODEL.last
   beside it (another checkpoint), or is not named MODEL.state, is refused, nothing written. */
Test(ema, average_of_a_state_gives_the_weights_without_the_average)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m1 = strf("%s/one.s2s", dir), *m2 = strf("%s/two.s2s", dir);
    train(data, m1, "1");
    train(data, m2, "2");
    char *s2 = strf("%s.state", m2), *l2 = strf("%s.last", m2), *raw = strf("%s/raw.s2s", dir);
    RunResult r = RUN_S2S(NULL, "average", s2, "-o", raw);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("%s: the weights of %s (", raw, s2);
    cr_expect(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    free(want);
    run_free(&r);
    size_t n, k;
    float *w2 = tensor_of(s2, "params", &n), *e2 = tensor_of(s2, "ema", &k), *got = weights_of(raw, &k);
    cr_assert_eq(k, n);
    cr_expect_eq(count_differing(got, w2, n), 0, "the state's weights were not written");
    cr_expect_gt(count_differing(got, e2, n), n / 2, "the average was written, not the weights");
    ModelFile a, b;
    Err e;
    cr_assert_eq(model_file_load(&a, raw, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&b, l2, false, &e), 0, "%s", e.msg);
    cr_expect_eq(model_match_for_average(&b, l2, &a, raw, &e), 0, "%s", e.msg);
    model_file_free(&a);
    model_file_free(&b);
    /* the state with its own MODEL.last: the mean of the weights and the average */
    char *mix = strf("%s/mix.s2s", dir);
    r = RUN_S2S(NULL, "average", s2, l2, "-o", mix);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    float *mean = weights_of(mix, &k);
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        off += mean[i] != (float)(((double)w2[i] + (double)e2[i]) / 2);
    cr_expect_eq(off, 0, "%zu weights are not the mean of the weights and their average", off);
    free(mean);
    /* another checkpoint's MODEL.last beside the state */
    char *l1 = strf("%s.last", m1), *out = strf("%s/out.s2s", dir);
    r = RUN_PROG(NULL, "/bin/cp", l1, l2);
    cr_assert_eq(r.status, 0);
    run_free(&r);
    r = RUN_S2S(NULL, "average", s2, "-o", out);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s: step 2, but %s is of step 1: not the same checkpoint\n", s2, l2);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    cr_expect(!file_exists(out), "%s written after a refusal", out);
    /* a state under another name */
    char *other = strf("%s/state.bin", dir);
    r = RUN_PROG(NULL, "/bin/cp", s2, other);
    cr_assert_eq(r.status, 0);
    run_free(&r);
    r = RUN_S2S(NULL, "average", other, "-o", out);
    cr_expect_eq(r.status, 1);
    want = strf("s2s: %s: a training state, but not named MODEL.state: its model file MODEL.last cannot be "
                "found\n", other);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    cr_expect(!file_exists(out), "%s written after a refusal", out);
    free(w2); free(e2); free(got);
    free(s2); free(l2); free(l1); free(raw); free(mix); free(out); free(other); free(m1); free(m2); free(data);
    rm_rf(dir);
    free(dir);
}

/* A file at a path of the pattern MODEL.ckpt.STEP that is not a model file stops the
   run before anything is written (not at its first kept checkpoint); a model file
   there that another run wrote is never removed by --keep-checkpoints, which removes
   only the checkpoints of its own run. */
Test(ema, checkpoint_paths_are_checked_first_and_only_the_runs_own_are_removed)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir), *notes = strf("%s/m.s2s.ckpt.2", dir);
    write_file(notes, "notes\n");
    char *before = dir_snapshot(dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "6", "--valid-every", "1", "--keep-checkpoints",
                          "3", SMALL_RNN);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: exists and is not an s2s model file; refusing to replace it; choose another -o\n",
                      notes);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before, "files written before the refusal");
    unlink(notes);

    /* another run's model at m.s2s.ckpt.100 (a step this run does not reach) */
    char *other = strf("%s/other.s2s", dir), *foreign = strf("%s/m.s2s.ckpt.100", dir);
    r = RUN_S2S(NULL, "train", data, "-o", other, "--steps", "1", SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_assert_eq(rename(other, foreign), 0);
    r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "4", "--valid-every", "1", "--keep-checkpoints", "2",
                SMALL_RNN);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "-o", m, "--resume", "--steps", "6", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    for (int s = 1; s <= 6; s++) {
        char *p = strf("%s.ckpt.%d", m, s);
        cr_expect_eq(file_exists(p), s >= 5, "%s", p);
        free(p);
    }
    cr_expect(file_exists(foreign), "another run's checkpoint was removed");
    free(foreign);
    free(other);
    free(after);
    free(before);
    free(want);
    free(notes);
    free(m);
    free(data);
    rm_rf(dir);
    free(dir);
}
