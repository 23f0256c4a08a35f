/* End-to-end tests of continued training, `s2s train DATA -o NEW --init BASE`, and of
   `s2s prepare --model BASE`: the run starts from BASE's weights exactly, numbers its
   data with BASE's codes and vocabularies, records where it came from, resumes
   exactly, leaves BASE as it was, and refuses what it cannot do with one line and
   nothing written. Small models keep each run under a second. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "model_fixture.h"
#include "base/crc32.h"
#include "base/safetensors.h"
#include "model/file.h"

#define TINY_TF "--model-dim", "16", "--ff", "32", "--heads", "2", "--layers", "1", "--threads", "1", "--quiet"
#define TINY_RNN "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16", \
                 "--threads", "1", "--quiet"

/* The CRC-32 of a whole file. */
static uint32_t file_crc(const char *path)
{
    size_t len;
    char *b = slurp(path, &len);
    cr_assert_not_null(b, "cannot read %s", path);
    uint32_t c = crc32_update(0, b, len);
    free(b);
    return c;
}

/* The value of metadata key of a safetensors file, freshly allocated ("" when absent). */
static char *meta_of(const char *path, const char *key)
{
    StFile *f;
    Err e;
    cr_assert_eq(st_load(&f, path, NULL, &e), 0, "%s", e.msg);
    const char *v = st_meta(f, key);
    char *out = strdup(v ? v : "");
    st_close(f);
    return out;
}

static void expect_same_meta(const char *a, const char *b, const char *key)
{
    char *x = meta_of(a, key), *y = meta_of(b, key);
    cr_expect_str_eq(x, y, "%s differs between %s and %s", key, a, b);
    free(x);
    free(y);
}

/* A number after "key": in text, or NAN. */
static double json_num(const char *text, const char *key)
{
    char *k = strf("\"%s\": ", key);
    const char *at = strstr(text, k);
    double v = at ? strtod(at + strlen(k), NULL) : NAN;
    free(k);
    return v;
}

/* The loss of step `step` in a training log. */
static double step_loss(const char *log_path, long step)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    char *key = strf("{\"event\": \"step\", \"step\": %ld,", step);
    const char *at = strstr(log, key);
    cr_assert_not_null(at, "no step %ld in %s", step, log_path);
    double loss = json_num(at, "loss");
    free(key);
    free(log);
    return loss;
}

/* The "loss" values of the step lines of a log, concatenated. */
static char *step_losses(const char *log_path)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log);
    size_t cap = strlen(log) + 1, n = 0;
    char *out = calloc(cap, 1);
    for (const char *p = log; (p = strstr(p, "{\"event\": \"step\", \"step\": ")); p++) {
        const char *l = strstr(p, "\"loss\": "), *end = l ? strchr(l, ',') : NULL;
        cr_assert(l && end);
        n += (size_t)snprintf(out + n, cap - n, "%.*s ", (int)(end - l - 8), l + 8);
    }
    free(log);
    return out;
}

/* The first tab-separated column of each line of a file. */
static char *first_column(const char *path)
{
    char *text = slurp(path, NULL);
    cr_assert_not_null(text, "cannot read %s", path);
    char *out = calloc(strlen(text) + 1, 1), *o = out;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\t\n");
        memcpy(o, p, n);
        o += n;
        *o++ = '\n';
        p += strcspn(p, "\n");
        if (*p)
            p++;
    }
    free(text);
    return out;
}

static void run_ok(RunResult r)
{
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    run_free(&r);
}

/* A Transformer BASE trained on the sample corpus (joint BPE, prepared into BASE.d/). */
static char *tiny_base(const char *dir)
{
    char *base = strf("%s/base.s2s", dir);
    run_ok(RUN_S2S(NULL, "train", "data/sample.tsv", "-o", base, "--steps", "12", "--bpe", "200", TINY_TF));
    return base;
}

/* The steps of a model file's history, as `s2s info` shows them (those of the best
   validation for MODEL). */
static long history_steps(const char *model)
{
    RunResult r = RUN_S2S(NULL, "info", model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *at = strstr(r.out, "history:\n  steps: ");
    cr_assert_not_null(at, "%s", r.out);
    long n = strtol(at + strlen("history:\n  steps: "), NULL, 10);
    run_free(&r);
    return n;
}

/* The first step of a fine-tuning run computes BASE's loss: with one batch of the whole
   training split, no dropout and no smoothing, step 1's loss is the log of the
   perplexity `s2s eval BASE` gives those pairs (the same sum in another order: within
   1e-5 relative; the step's products in fp32, as eval's). With --lr 0 the weights stay BASE's bit for bit. The vocabularies
   and codes are BASE's, BASE is unchanged, and the model and `s2s info` say where the
   run started. */
Test(finetune, starts_from_the_base_exactly)
{
    char *dir = tmpdir_new(), *base = tiny_base(dir);
    uint32_t before = file_crc(base);
    long base_steps = history_steps(base);
    char *ft = strf("%s/ft.s2s", dir), *logp = strf("%s.log.jsonl", ft), *train = strf("%s.d/train.tsv", ft);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", ft, "--init", base, "--steps", "1", "--batch", "1000",
                          "--dropout", "0", "--label-smoothing", "0", "--concat", "0", "--copy-names", "0",
                          "--precision", "f32", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("train: starting from %s (step %ld); tokens of the training split it cannot represent "
                      "(<unk>): en 0.00%%, fr 0.00%%\n", base, base_steps);
    cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
    free(want);
    run_free(&r);
    r = RUN_S2S(NULL, "eval", base, train, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    double ppl = json_num(r.out, "perplexity"), loss = step_loss(logp, 1);
    cr_expect(fabs(loss - log(ppl)) <= 1e-5 * fabs(loss), "step 1 loss %.6f, BASE's %.6f", loss, log(ppl));
    cr_expect(loss > 1 && loss < 8, "loss %g", loss);
    run_free(&r);

    /* the same with the rate at 0: BASE's weights */
    char *still = strf("%s/still.s2s", dir), *still_last = strf("%s.last", still);
    run_ok(RUN_S2S(NULL, "train", "data/sample.tsv", "-o", still, "--init", base, "--steps", "1", "--lr", "0",
                   "--ema", "0", "--threads", "1", "--quiet"));
    expect_same_weights(still_last, base);
    static const char *const keys[] = {"s2s.vocab.src", "s2s.vocab.tgt", "s2s.bpe.src", "s2s.bpe.tgt"};
    for (int k = 0; k < 4; k++)
        expect_same_meta(still_last, base, keys[k]);
    char *codes = meta_of(base, "s2s.bpe.src");
    cr_expect(strlen(codes) > 100, "BASE has no codes: '%s'", codes);
    free(codes);
    char *bd = strf("%s.d/bpe.src", base), *sd = strf("%s.d/bpe.src", still);
    cr_expect_eq(file_crc(sd), file_crc(bd), "the prepared codes differ from BASE's");
    cr_expect_eq(file_crc(base), before, "BASE changed");

    /* where it came from */
    char *crc = meta_of(base, "s2s.crc32");
    r = RUN_S2S(NULL, "info", still_last);
    cr_assert_eq(r.status, 0, "%s", r.err);
    want = strf("  init:\n    file: %s\n    crc32: %s\n    steps: %ld\n", base, crc, base_steps);
    cr_expect(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
    run_free(&r);

    free(want);
    free(crc);
    free(bd);
    free(sd);
    free(still);
    free(still_last);
    free(ft);
    free(logp);
    free(train);
    free(base);
    rm_rf(dir);
    free(dir);
}

/* Whether the weights of model files a and b agree within rel, relative to each weight's
   magnitude (at least 1e-3, so that weights near 0 are compared absolutely). */
static void expect_close_weights(const char *a, const char *b, double rel)
{
    ModelFile x, y;
    Err e;
    cr_assert_eq(model_file_load(&x, a, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&y, b, false, &e), 0, "%s", e.msg);
    cr_assert_eq(x.model.layout.total, y.model.layout.total);
    size_t far = 0;
    double worst = 0;
    for (size_t i = 0; i < x.model.layout.total; i++) {
        double u = x.model.params[i], v = y.model.params[i], r = fabs(u - v) / fmax(fabs(u), 1e-3);
        far += r > rel;
        worst = fmax(worst, r);
    }
    cr_expect_eq(far, 0, "%zu weights differ by more than %g (worst %g) between %s and %s", far, rel, worst, a, b);
    model_file_free(&x);
    model_file_free(&y);
}

/* A fine-tuning run stopped and resumed takes the steps of one that was not: the same
   losses (to the log's 6 digits) and the same weights, within 1e-5 relative. With
   OpenBLAS's own kernel choice on this CPU (SkylakeX) they are equal bit for bit; with
   OPENBLAS_CORETYPE=Haswell a resumed run (with or without --init, recurrent or
   Transformer) ends a few hundred weights apart in their last bits (3.3e-7 relative at
   most here), a fault of resume that predates --init. The resumed model still says
   where the run started. */
Test(finetune, resumes_exactly)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *base = strf("%s/rnn.s2s", dir);
    run_ok(RUN_S2S(NULL, "train", data, "-o", base, "--steps", "10", TINY_RNN));
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir);
    run_ok(RUN_S2S(NULL, "train", data, "-o", a, "--init", base, "--steps", "8", "--valid-every", "3", "--threads",
                   "1", "--quiet"));
    run_ok(RUN_S2S(NULL, "train", data, "-o", b, "--init", base, "--steps", "4", "--valid-every", "3", "--threads",
                   "1", "--quiet"));
    run_ok(RUN_S2S(NULL, "train", "-o", b, "--resume", "--steps", "8", "--quiet"));
    char *la = strf("%s.log.jsonl", a), *lb = strf("%s.log.jsonl", b);
    char *sa = step_losses(la), *sb = step_losses(lb);
    cr_expect_str_eq(sb, sa, "resumed fine-tuning, other losses");
    /* without --lr, a fine-tuning run's rate (TRAIN_INIT_LR) */
    char *log = slurp(la, NULL);
    cr_expect(strstr(log, "\"lr\": 0.0001, \"schedule\": \"plateau\""), "%.600s", log);
    free(log);
    char *lasta = strf("%s.last", a), *lastb = strf("%s.last", b);
    expect_close_weights(lasta, lastb, 1e-5);
    RunResult r = RUN_S2S(NULL, "info", lastb);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("  init:\n    file: %s\n", base);
    cr_expect(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
    run_free(&r);
    free(want);
    free(lasta);
    free(lastb);
    free(sa);
    free(sb);
    free(la);
    free(lb);
    free(a);
    free(b);
    free(base);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* The recurrent model too, on a prepared directory of words: step 1's loss is BASE's,
   and with --lr 0 the weights stay BASE's. */
Test(finetune, the_recurrent_model_starts_from_its_base)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *base = strf("%s/rnn.s2s", dir), *ft = strf("%s/ft.s2s", dir);
    run_ok(RUN_S2S(NULL, "train", data, "-o", base, "--steps", "10", TINY_RNN));
    run_ok(RUN_S2S(NULL, "train", data, "-o", ft, "--init", base, "--steps", "1", "--lr", "0", "--batch", "1000",
                   "--dropout", "0", "--label-smoothing", "0", "--precision", "f32", "--threads", "1", "--quiet"));
    char *last = strf("%s.last", ft), *logp = strf("%s.log.jsonl", ft), *train = strf("%s/train.tsv", data);
    expect_same_weights(last, base);
    RunResult r = RUN_S2S(NULL, "eval", base, train, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    double ppl = json_num(r.out, "perplexity"), loss = step_loss(logp, 1);
    cr_expect(fabs(loss - log(ppl)) <= 1e-5 * fabs(loss), "step 1 loss %.6f, BASE's %.6f", loss, log(ppl));
    run_free(&r);
    free(last);
    free(logp);
    free(train);
    free(ft);
    free(base);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Each refusal: its exit status, its one line, and nothing created or changed in the
   directory. */
static void expect_refused(const char *dir, int status, const char *line, const char *const *args)
{
    char *before = dir_snapshot(dir);
    RunResult r = run_s2s(NULL, args);
    cr_expect_eq(r.status, status, "exit %d, not %d, for '%s': %s", r.status, status, line, r.err);
    cr_expect_str_eq(r.err, line);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before, "files changed after '%s'", line);
    free(before);
    free(after);
    run_free(&r);
}
#define REFUSED(dir, status, line, ...) expect_refused((dir), (status), (line), (const char *const[]){__VA_ARGS__, NULL})

Test(finetune, bad_bases_and_data_are_refused_with_nothing_written)
{
    char *dir = tmpdir_new(), *base = tiny_base(dir);
    char *link = strf("%s/link.s2s", dir), *state = strf("%s.state", base), *lastp = strf("%s.last", base);
    cr_assert_eq(symlink("base.s2s", link), 0);
    char *trunc = strf("%s/trunc.s2s", dir), *words = strf("%s/words.d", dir), *nw = strf("%s/new.s2s", dir);
    size_t len;
    char *bytes = slurp(base, &len);
    FILE *f = fopen(trunc, "wb");
    cr_assert(len > 4000);
    cr_assert(f && fwrite(bytes, 1, 4000, f) == 4000 && fclose(f) == 0); /* inside the header */
    free(bytes);
    run_ok(RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", words));
    char *msg;

    msg = strf("s2s: train: --init %s/missing.s2s: cannot open: No such file or directory\n", dir);
    char *missing = strf("%s/missing.s2s", dir);
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", nw, "--init", missing);
    free(missing);
    free(msg);
    msg = strf("s2s: train: --init %s: truncated: the header length says", trunc);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", nw, "--init", trunc);
    cr_expect_eq(r.status, 1);
    cr_expect(strncmp(r.err, msg, strlen(msg)) == 0 && !strchr(r.err, '\n')[1], "%s", r.err);
    run_free(&r);
    free(msg);
    msg = strf("s2s: train: --init data/sample.tsv: not a model file: header length 6998705380048511049 is "
               "absurd (more than 100000000 bytes)\n");
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", nw, "--init", "data/sample.tsv");
    free(msg);
    msg = strf("s2s: train: --init %s: not an s2s model (format 's2s-state-1', expected 's2s-model-1'); of a "
               "training state 's2s average STATE -o OUT' makes one\n", state);
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", nw, "--init", state);
    free(msg);
    msg = strf("s2s: train: --init takes one model, and %s would make an ensemble; average the models first "
               "(s2s average %s %s -o BASE) and give --init BASE\n", lastp, base, lastp);
    REFUSED(dir, 2, msg, "train", "data/sample.tsv", "-o", nw, "--init", base, lastp);
    free(msg);
    REFUSED(dir, 2,
            "s2s: train: --init and --resume exclude each other: a resumed run continues from its state, "
            "which already started from its --init\n",
            "train", "-o", nw, "--init", base, "--resume");
    /* -o BASE, under its name or another */
    msg = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", base, base);
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", base, "--init", base, "--force");
    free(msg);
    msg = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", link, base);
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", link, "--init", base);
    free(msg);
    /* MODEL.last of -o would be BASE */
    msg = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", lastp, lastp);
    REFUSED(dir, 1, msg, "train", "data/sample.tsv", "-o", base, "--init", lastp, "--force");
    free(msg);
    /* data prepared with other codes and vocabularies */
    msg = strf("s2s: %s was prepared with other BPE codes than %s; give the corpus instead, or prepare it with "
               "'s2s prepare CORPUS -o DIR --model %s'\n", words, base, base);
    REFUSED(dir, 1, msg, "train", words, "-o", nw, "--init", base, "--quiet");
    free(msg);
    /* the architecture is BASE's; the codes are BASE's */
    msg = strf("s2s: train: --layers differs from %s; with --init the architecture is the base model's "
               "(see 's2s info %s')\n", base, base);
    REFUSED(dir, 2, msg, "train", "data/sample.tsv", "-o", nw, "--init", base, "--layers", "2");
    free(msg);
    msg = strf("s2s: train: option --cell does not apply to %s, a Transformer\n", base);
    REFUSED(dir, 2, msg, "train", "data/sample.tsv", "-o", nw, "--init", base, "--cell", "lstm");
    free(msg);
    msg = strf("s2s: train: option --bpe does not apply with --init: the codes and vocabularies are those of %s\n",
               base);
    REFUSED(dir, 2, msg, "train", "data/sample.tsv", "-o", nw, "--init", base, "--bpe", "100");
    free(msg);
    msg = strf("s2s: train: --direction fr-en, but %s translates en-fr\n", base);
    REFUSED(dir, 2, msg, "train", "data/sample.tsv", "-o", nw, "--init", base, "--direction", "fr-en");
    free(msg);

    /* the options given that equal BASE's are taken, as are the training options */
    run_ok(RUN_S2S(NULL, "train", "data/sample.tsv", "-o", nw, "--init", base, "--layers", "1", "--model-dim", "16",
                   "--dropout", "0.3", "--steps", "1", "--threads", "1", "--quiet"));
    r = RUN_S2S(NULL, "info", nw);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "  dropout: 0.3\n"), "%s", r.out);
    run_free(&r);

    free(link);
    free(state);
    free(lastp);
    free(trunc);
    free(words);
    free(nw);
    free(base);
    rm_rf(dir);
    free(dir);
}

/* s2s prepare --model: the model's codes and vocabularies, the share of tokens they
   miss, and a directory that --init takes; the options that would choose otherwise
   are refused. */
Test(finetune, prepare_with_a_model_takes_its_codes_and_vocabularies)
{
    char *dir = tmpdir_new(), *base = tiny_base(dir);
    char *like = strf("%s/like.d", dir), *corpus = strf("%s/new.tsv", dir);
    write_file(corpus, "I have a zebra.\tJ'ai un zèbre.\nI have a cat.\tJ'ai un chat.\n"
                       "You have a dog.\tTu as un chien.\nWe have two cats.\tNous avons deux chats.\n"
                       "The zebra sleeps.\tLe zèbre dort.\n");
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", like, "--model", base, "--valid", "1", "--test", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    RunResult ri = RUN_S2S(NULL, "info", base);
    cr_assert_eq(ri.status, 0);
    cr_assert(strstr(ri.out, "vocabulary: source "), "%s", ri.out);
    long nv = strtol(strstr(ri.out, "vocabulary: source ") + 19, NULL, 10);
    run_free(&ri);
    char *want = strf("prepare: train 3, valid 1, test 1 pairs; vocab en %ld, fr %ld, those of %s\n", nv, nv, base);
    cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
    free(want);
    want = strf("prepare: tokens of train that %s's vocabularies cannot represent (<unk>): en ", base);
    cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
    run_free(&r);
    /* the same tokens in the same order (the counts are not the model's to give) */
    char *vl = strf("%s/vocab.src", like), *vb = strf("%s.d/vocab.src", base);
    char *a = first_column(vl), *b = first_column(vb);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    char *nw = strf("%s/new.s2s", dir);
    run_ok(RUN_S2S(NULL, "train", like, "-o", nw, "--init", base, "--steps", "1", "--threads", "1", "--quiet"));

    char *msg = strf("s2s: prepare: option --bpe does not apply with --model: the case, codes and vocabularies "
                     "are those of %s\n", base);
    REFUSED(dir, 2, msg, "prepare", corpus, "-o", like, "--model", base, "--bpe", "10");
    free(msg);
    msg = strf("s2s: prepare: --direction fr-en, but %s translates en-fr\n", base);
    REFUSED(dir, 2, msg, "prepare", corpus, "-o", like, "--model", base, "--direction", "fr-en");
    free(msg);
    REFUSED(dir, 1, "s2s: prepare: --model nope.s2s: cannot open: No such file or directory\n", "prepare", corpus,
            "-o", like, "--model", "nope.s2s");

    free(nw);
    free(vl);
    free(vb);
    free(want);
    free(like);
    free(corpus);
    free(base);
    rm_rf(dir);
    free(dir);
}
