/* Data-parallel `s2s train` under mpirun (make test-mpi; the s2s of $S2S is the MPI
   build): N processes against one, the same N twice, validation split across
   processes, a state resumed with another N, signals to mpirun and a killed process.
   The small recurrent model of tests/cli/test_train.c keeps each run to a second. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "helpers.h"
#include "model/file.h"

/* fp32 products: in bf16 each process rounds the gradient of its own part, which the
   step-by-step comparisons with one process do not allow for */
#define SMALL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
              "--deep-out", "16", "--threads", "1", "--quiet", "--precision", "f32"

/* Relative tolerance between N processes and one: float rounding of sums taken in
   another order. */
#define REL 1e-5

static const char *mpirun_path(void)
{
    const char *p = getenv("MPIRUN");
    return p && *p ? p : "/usr/bin/mpirun";
}

/* argv for `mpirun -np N --oversubscribe S2S args...` in out (room for 64). */
static void mpirun_argv(const char **out, int np, const char *const *args)
{
    static char nps[16];
    snprintf(nps, sizeof nps, "%d", np);
    int n = 0;
    out[n++] = mpirun_path();
    out[n++] = "-np";
    out[n++] = nps;
    out[n++] = "--oversubscribe";
    out[n++] = s2s_bin();
    for (int i = 0; args[i] && n < 63; i++)
        out[n++] = args[i];
    out[n] = NULL;
}

/* Lines of text that start with prefix. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

static RunResult mpirun(int np, const char *const *args)
{
    const char *argv[64];
    mpirun_argv(argv, np, args);
    return run_prog(NULL, argv);
}
#define MPIRUN(np, ...) mpirun((np), (const char *const[]){__VA_ARGS__, NULL})

/* mpirun that must succeed. */
static void mpirun_ok(int np, const char *const *args)
{
    RunResult r = mpirun(np, args);
    cr_assert_eq(r.status, 0, "%d processes: %s", np, r.err);
    run_free(&r);
}
#define MPIRUN_OK(np, ...) mpirun_ok((np), (const char *const[]){__VA_ARGS__, NULL})

/* Starts mpirun without waiting, stdout and stderr to out_path. */
static pid_t spawn_mpirun(int np, const char *const *args, const char *out_path)
{
    const char *argv[64];
    mpirun_argv(argv, np, args);
    pid_t pid = spawn_prog(argv, out_path);
    cr_assert(pid >= 0);
    return pid;
}

/* The "step" lines of a log from step `from` on: (step, loss) pairs; returns the count. */
static int step_losses(const char *log_path, long from, long *steps, double *loss, int cap)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log, "%s", log_path);
    int n = 0;
    for (char *line = log; line && *line && n < cap;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        long step;
        if (sscanf(line, "{\"event\": \"step\", \"step\": %ld,", &step) == 1 && step >= from) {
            char *l = strstr(line, "\"loss\": ");
            cr_assert_not_null(l, "%s", line);
            steps[n] = step;
            loss[n++] = strtod(l + 8, NULL);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(log);
    return n;
}

/* The "valid" lines of a log with their step, loss, ppl and bleu (the fields before
   "best"), one per line. */
static char *valid_lines(const char *log_path)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log, "%s", log_path);
    Buf b = {0};
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *best = strstr(line, ", \"best\": ");
        if (strncmp(line, "{\"event\": \"valid\"", 17) == 0 && best)
            buf_printf(&b, "%.*s\n", (int)(best - line), line);
        line = nl ? nl + 1 : NULL;
    }
    free(log);
    return b.data ? b.data : xstrdup("");
}

static void expect_same_losses(const char *log_a, const char *log_b, long from, int want, double rel)
{
    long sa[256], sb[256];
    double la[256], lb[256];
    int na = step_losses(log_a, from, sa, la, 256), nb = step_losses(log_b, from, sb, lb, 256);
    cr_assert_eq(na, want, "%s: %d steps", log_a, na);
    cr_assert_eq(nb, want, "%s: %d steps", log_b, nb);
    for (int i = 0; i < na; i++) {
        cr_expect_eq(sa[i], sb[i]);
        cr_expect(fabs(la[i] - lb[i]) <= rel * fabs(la[i]), "step %ld: loss %.9g against %.9g", sa[i],
                  la[i], lb[i]);
    }
}

/* Whether weight i is the bias of an attention's keys (the middle third of a
   Transformer's in_proj_bias). Its gradient is zero in exact arithmetic (a softmax
   ignores a constant added to a row's scores), so in floats it is rounding noise of
   either sign, which Adam, dividing by the gradient's own size, turns into steps of
   about the learning rate: those weights follow the summation order, not the data. */
static bool is_key_bias(const ParamLayout *l, size_t i)
{
    for (int k = 0; k < l->n; k++) {
        const ParamInfo *p = &l->info[k];
        size_t len = strlen(p->name), third = p->size / 3;
        if (i >= p->offset && i < p->offset + p->size)
            return len >= 13 && strcmp(p->name + len - 13, ".in_proj_bias") == 0 &&
                   i >= p->offset + third && i < p->offset + 2 * third;
    }
    return false;
}

/* The weights of two model files: with rel 0, bit for bit; otherwise, leaving out the
   keys' biases (is_key_bias), the difference within rel of the weights in norm
   (||a - b|| <= rel ||a||), and each weight within rel of its magnitude or, below 1,
   within rel (numpy.allclose with rtol = atol = rel: a weight near 0 has no relative
   precision of its own). */
static void expect_close_weights(const char *a, const char *b, double rel)
{
    ModelFile x, y;
    Err e;
    cr_assert_eq(model_file_load(&x, a, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&y, b, false, &e), 0, "%s", e.msg);
    cr_assert_eq(x.model.layout.total, y.model.layout.total);
    double worst = 0, dd = 0, aa = 0;
    size_t bad = 0;
    for (size_t i = 0; i < x.model.layout.total; i++) {
        if (rel > 0 && is_key_bias(&x.model.layout, i))
            continue;
        double u = x.model.params[i], v = y.model.params[i], d = fabs(u - v) / fmax(1, fmax(fabs(u), fabs(v)));
        worst = fmax(worst, d);
        dd += (u - v) * (u - v);
        aa += u * u;
        bad += rel == 0 ? memcmp(&x.model.params[i], &y.model.params[i], sizeof(real)) != 0 : d > rel;
    }
    cr_expect_eq(bad, 0, "%zu of %zu weights differ between %s and %s by more than %g (worst %g)", bad,
                 x.model.layout.total, a, b, rel, worst);
    cr_expect(sqrt(dd) <= rel * sqrt(aa), "weights of %s and %s: ||a - b|| / ||a|| = %g", a, b, sqrt(dd / aa));
    if (getenv("S2S_TEST_VERBOSE"))
        fprintf(stderr, "%s against %s: ||a - b|| / ||a|| = %.3g, worst weight %.3g\n", a, b, sqrt(dd / aa), worst);
    model_file_free(&x);
    model_file_free(&y);
}

/* The runs that wrote model files a and b: the same losses at steps from to from+n-1
   and the same final weights (MODEL.last), both within rel (expect_same_losses,
   expect_close_weights; 0: bit for bit); with valid, the same validation lines too. */
static void expect_same_runs(const char *a, const char *b, long from, int n, double rel, bool valid)
{
    char *la = strf("%s.log.jsonl", a), *lb = strf("%s.log.jsonl", b);
    expect_same_losses(la, lb, from, n, rel);
    if (valid) {
        char *va = valid_lines(la), *vb = valid_lines(lb);
        cr_expect_str_eq(va, vb);
        free(va);
        free(vb);
    }
    char *lasta = strf("%s.last", a), *lastb = strf("%s.last", b);
    expect_close_weights(lasta, lastb, rel);
    free(lasta);
    free(lastb);
    free(la);
    free(lb);
}

/* What every test starts from: `s2s prepare data/sample.tsv` in a fresh directory, and
   two model files there for the runs it compares. */
typedef struct Fix {
    char *dir, *data; /* the directory, its prepared data/ */
    char *a, *b;      /* dir/a.s2s, dir/b.s2s */
} Fix;

static Fix fix_new(void)
{
    Fix f = {.dir = sample_prepared_dir()};
    f.data = strf("%s/data", f.dir);
    f.a = strf("%s/a.s2s", f.dir);
    f.b = strf("%s/b.s2s", f.dir);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->data);
    free(f->a);
    free(f->b);
}

/* 50 steps of one process and of two at the same global batch (64 sentences, 32 on
   each), dropout off: the same losses step by step and the same final weights within
   float rounding. Process 0 alone logs and prints. (One thread against the host's
   cores shared by two: the thread count changes only rounding.) */
Test(mpi, two_processes_match_one_process_step_by_step)
{
    Fix f = fix_new();
    MPIRUN_OK(1, "train", f.data, "-o", f.a, "--steps", "50", "--valid-every", "10", "--dropout", "0",
              "--lr-schedule", "constant", "--lr", "0.005", SMALL);
    RunResult r = MPIRUN(2, "train", f.data, "-o", f.b, "--steps", "50", "--valid-every", "10", "--dropout", "0",
                         "--lr-schedule", "constant", "--lr", "0.005", "--emb", "16", "--hidden", "16",
                         "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16", "--log-every", "25",
                         "--precision", "f32");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "");
    /* one start line and one line per 25 steps, from process 0; without --threads the
       two processes share the host's cores */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long each = cores > 2 ? cores / 2 : 1;
    char *head = strf("train: recurrent model (selected by --emb), 320 pairs (valid 40), 20253 parameters, "
                      "2 processes of %ld thread%s, fp32 products\n", each, each == 1 ? "" : "s");
    cr_expect(strncmp(r.err, head, strlen(head)) == 0, "%s", r.err);
    free(head);
    cr_expect_eq(count_lines(r.err, "train: "), 1, "%s", r.err);
    cr_expect_eq(count_lines(r.err, "epoch "), 2, "%s", r.err);
    cr_expect_eq(count_lines(r.err, "epoch 5 step 25  loss "), 1, "%s", r.err);
    cr_expect_eq(count_lines(r.err, "epoch 10 step 50  loss "), 1, "%s", r.err);
    /* those of --valid-every 10; the epoch ends' (every 5 steps) are fewer than
       --log-every 25 steps after the last shown */
    cr_expect_eq(count_lines(r.err, "valid step "), 5, "%s", r.err);
    run_free(&r);
    char *la = strf("%s.log.jsonl", f.a), *lb = strf("%s.log.jsonl", f.b);
    cr_expect_eq(count_in_file(lb, "{\"event\": \"start\""), 1);
    cr_expect_eq(count_in_file(lb, "\"processes\": 2}"), 1);
    cr_expect_eq(count_in_file(la, "\"processes\""), 0);
    free(la);
    free(lb);
    expect_same_runs(f.a, f.b, 1, 50, REL, false);
    fix_free(&f);
}

/* The same for the Transformer (every position at once, layer norms, its own output
   layer): 30 steps, dropout off. */
Test(mpi, a_transformer_on_two_processes_matches_one_process)
{
    Fix f = fix_new();
    for (int np = 1; np <= 2; np++)
        MPIRUN_OK(np, "train", f.data, "-o", np == 1 ? f.a : f.b, "--steps", "30", "--valid-every", "10", "--arch",
                  "transformer", "--model-dim", "32", "--ff", "64", "--heads", "2", "--layers", "1", "--dropout",
                  "0", "--warmup", "10", "--threads", "1", "--quiet", "--precision", "f32");
    expect_same_runs(f.a, f.b, 1, 30, REL, false);
    fix_free(&f);
}

/* Continued training (--init) on two processes takes the steps of one process: both
   start from the same base model. */
Test(mpi, a_finetuning_run_on_two_processes_matches_one_process)
{
    Fix f = fix_new();
    char *base = strf("%s/base.s2s", f.dir);
    MPIRUN_OK(1, "train", f.data, "-o", base, "--steps", "10", "--model-dim", "32", "--ff", "64", "--heads", "2",
              "--layers", "1", "--threads", "1", "--quiet");
    for (int np = 1; np <= 2; np++)
        MPIRUN_OK(np, "train", f.data, "-o", np == 1 ? f.a : f.b, "--init", base, "--steps", "12", "--valid-every",
                  "6", "--dropout", "0", "--threads", "1", "--quiet", "--precision", "f32");
    expect_same_runs(f.a, f.b, 1, 12, REL, false);
    free(base);
    fix_free(&f);
}

/* A fault of the data that every process meets alike is reported once, by process 0,
   and nothing is written. */
Test(mpi, an_error_of_every_process_is_reported_once)
{
    Fix f = fix_new();
    char *before = dir_snapshot(f.dir);
    RunResult r = MPIRUN(2, "train", f.data, "-o", f.a, "--steps", "5", "--arch", "transformer", "--model-dim",
                         "32", "--ff", "64", "--heads", "2", "--layers", "1", "--positions", "learned",
                         "--max-positions", "4", "--threads", "1", "--quiet");
    cr_expect_neq(r.status, 0);
    cr_expect_eq(count_lines(r.err, "s2s: "), 1, "%s", r.err);
    char *want = strf("s2s: %s: --max-positions 4 is too small for the longest pairs", f.data);
    cr_expect(strstr(r.err, want), "%s", r.err);
    char *after = dir_snapshot(f.dir);
    cr_expect_str_eq(after, before);
    run_free(&r);
    free(after);
    free(want);
    free(before);
    fix_free(&f);
}

/* The same number of processes gives the same run bit for bit, dropout included. */
Test(mpi, the_same_process_count_gives_the_same_run)
{
    Fix f = fix_new();
    for (int k = 0; k < 2; k++)
        MPIRUN_OK(2, "train", f.data, "-o", k ? f.b : f.a, "--steps", "15", "--valid-every", "5", "--dropout", "0.2",
                  SMALL);
    expect_same_runs(f.a, f.b, 1, 15, 0, true);
    fix_free(&f);
}

/* Every process maps the same train.ids: two processes give the same run bit for bit
   as two on a copy of the directory without .ids files (read from train.tsv), and a
   damaged train.ids is refused in one line, nothing written. */
Test(mpi, every_process_maps_the_same_ids_file)
{
    Fix f = fix_new();
    char *old = strf("%s/old", f.dir);
    char *cmd = strf("cp -r '%s' '%s' && rm '%s/train.ids' '%s/valid.ids' '%s/test.ids'", f.data, old, old, old,
                     old);
    cr_assert_eq(system(cmd), 0);
    for (int k = 0; k < 2; k++)
        MPIRUN_OK(2, "train", k ? old : f.data, "-o", k ? f.b : f.a, "--steps", "15", "--valid-every", "5",
                  "--dropout", "0.2", SMALL);
    expect_same_runs(f.a, f.b, 1, 15, 0, true);

    char *ids = strf("%s/train.ids", f.data);
    FILE *fp = fopen(ids, "r+b");
    cr_assert_not_null(fp);
    cr_assert_eq(fseek(fp, -2, SEEK_END), 0);
    cr_assert_eq(fputc(0x55, fp), 0x55);
    fclose(fp);
    char *m = strf("%s/m.s2s", f.dir);
    char *before = dir_snapshot(f.dir);
    RunResult r = MPIRUN(2, "train", f.data, "-o", m, "--steps", "5", SMALL);
    cr_expect_eq(r.status, 1);
    cr_expect_eq(count_lines(r.err, "s2s: "), 1, "%s", r.err);
    char *want = strf("s2s: %s: checksum mismatch (the file is damaged); run 's2s prepare' again to rewrite it\n",
                      ids);
    cr_expect(strstr(r.err, want), "%s", r.err);
    char *after = dir_snapshot(f.dir);
    cr_expect_str_eq(after, before);
    run_free(&r);
    free(after);
    free(before);
    free(want);
    free(m);
    free(ids);
    free(cmd);
    free(old);
    fix_free(&f);
}

/* Validation is split across the processes and its sums added up: with the same
   weights (learning rate 0) one, two and three processes log the same valid loss,
   perplexity and BLEU, digit for digit. */
Test(mpi, split_validation_equals_one_process)
{
    Fix f = fix_new();
    char *want = NULL;
    for (int np = 1; np <= 3; np++) {
        char *model = strf("%s/v%d.s2s", f.dir, np), *log = strf("%s.log.jsonl", model);
        MPIRUN_OK(np, "train", f.data, "-o", model, "--steps", "10", "--valid-every", "5", "--lr", "0",
                  "--lr-schedule", "constant", "--batch", "16", SMALL);
        char *v = valid_lines(log);
        /* steps 5 and 10 (epoch ends come every 20 batches of 16) */
        cr_expect_eq(count_in_file(log, "{\"event\": \"valid\""), 2, "%s", v);
        if (!want) {
            want = v;
            cr_expect(!strstr(v, "\"bleu\": 0,"), "BLEU 0 tests little: %s", v);
        } else {
            cr_expect_str_eq(v, want, "%d processes", np);
            free(v);
        }
        free(log);
        free(model);
    }
    free(want);
    fix_free(&f);
}

/* MODEL.state does not depend on the number of processes: 20 steps on two, resumed
   to 40 on one and (from a copy) on three, give the losses and weights of 40 steps on
   one. */
Test(mpi, a_state_saved_by_two_processes_resumes_on_one_and_three)
{
    Fix f = fix_new();
    MPIRUN_OK(1, "train", f.data, "-o", f.a, "--steps", "40", "--valid-every", "10", "--dropout", "0", SMALL);
    for (int np = 1; np <= 3; np += 2) {
        char *sub = strf("%s/n%d", f.dir, np), *model = strf("%s/m.s2s", sub);
        cr_assert_eq(mkdir(sub, 0755), 0);
        MPIRUN_OK(2, "train", f.data, "-o", model, "--steps", "20", "--valid-every", "10", "--dropout", "0", SMALL);
        MPIRUN_OK(np, "train", "-o", model, "--resume", "--steps", "40", "--threads", "1", "--quiet");
        char *log = strf("%s.log.jsonl", model);
        cr_expect_eq(count_in_file(log, "{\"event\": \"resume\", \"step\": 20,"), 1);
        expect_same_runs(f.a, model, 21, 20, REL, false);
        free(log);
        free(model);
        free(sub);
    }
    fix_free(&f);
}

/* --time: process 0's clock decides, and every process stops after the same step. */
Test(mpi, the_time_limit_stops_every_process_together)
{
    Fix f = fix_new();
    char *log = strf("%s.log.jsonl", f.a);
    MPIRUN_OK(2, "train", f.data, "-o", f.a, "--time", "0.02", "--valid-every", "0", SMALL);
    char *text = slurp(log, NULL);
    cr_assert_not_null(text);
    char *stop = strstr(text, "{\"event\": \"stop\", \"reason\": \"time\", \"step\": ");
    cr_assert_not_null(stop, "%s", text);
    double elapsed = -1;
    char *el = strstr(stop, "\"elapsed\": ");
    cr_assert_not_null(el);
    sscanf(el, "\"elapsed\": %lf", &elapsed);
    cr_expect(elapsed >= 1.2 && elapsed < 30, "elapsed %g", elapsed);
    free(text);
    free(log);
    fix_free(&f);
}

/* The arguments of a run on two processes that trains data into model until it is
   stopped (printing no step lines on the way). */
#define UNTIL_STOPPED(data, model)                                                                           \
    "train", (data), "-o", (model), "--epochs", "100000", "--valid-every", "0", "--log-every", "1000000", \
        "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16",    \
        "--threads", "1"

/* Waits until the log holds at least n step lines (30 s at most). */
static void wait_steps(const char *log, int n)
{
    for (int i = 0; i < 600 && count_in_file(log, "\"event\": \"step\"") < n; i++)
        usleep(50000);
    cr_assert(count_in_file(log, "\"event\": \"step\"") >= n, "no training steps after 30 s");
}

/* The run stopped by a signal: its message, the log's stop line, and a --resume on two
   processes that continues from the saved step. */
static void expect_saved_and_resumable(const char *out_path, const char *data, const char *model)
{
    char *out = slurp(out_path, NULL), *log = strf("%s.log.jsonl", model);
    cr_assert_not_null(out);
    long stopped = -1;
    char *at = strstr(out, "interrupted at step ");
    cr_assert_not_null(at, "%s", out);
    sscanf(at, "interrupted at step %ld", &stopped);
    char *stop = strf("{\"event\": \"stop\", \"reason\": \"signal\", \"step\": %ld,", stopped);
    cr_expect_eq(count_in_file(log, stop), 1);
    char *upto = strf("%ld", stopped + 3);
    RunResult r = MPIRUN(2, "train", data, "-o", model, "--epochs", "100000", "--valid-every", "0",
                         "--steps", upto, "--resume", SMALL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *resumed = strf("{\"event\": \"stop\", \"reason\": \"steps\", \"step\": %ld,", stopped + 3);
    cr_expect_eq(count_in_file(log, resumed), 1);
    run_free(&r);
    free(resumed);
    free(upto);
    free(stop);
    free(log);
    free(out);
}

/* mpirun passes SIGUSR1 on to every process at once: each finishes its step, they stop
   together, process 0 saves, and everything exits 0. */
Test(mpi, sigusr1_to_mpirun_stops_every_process_and_exits_0)
{
    Fix f = fix_new();
    char *outp = strf("%s/out", f.dir), *log = strf("%s.log.jsonl", f.a);
    const char *args[] = {UNTIL_STOPPED(f.data, f.a), NULL};
    pid_t pid = spawn_mpirun(2, args, outp);
    wait_steps(log, 3);
    kill(pid, SIGUSR1);
    cr_expect_eq(wait_exit(pid), 0);
    expect_saved_and_resumable(outp, f.data, f.a);
    free(log);
    free(outp);
    fix_free(&f);
}

/* SIGINT to mpirun (Ctrl-C): Open MPI's mpirun sends the processes SIGTERM after
   odls_base_sigkill_timeout seconds and SIGKILL as long after that; given that time,
   every process finishes its step, process 0 saves, and the run resumes. mpirun
   itself exits 1, as after any abort. */
Test(mpi, sigint_to_mpirun_saves_and_the_run_resumes, .timeout = 120)
{
    Fix f = fix_new();
    char *outp = strf("%s/out", f.dir), *log = strf("%s.log.jsonl", f.a);
    const char *args[] = {UNTIL_STOPPED(f.data, f.a), NULL};
    setenv("OMPI_MCA_odls_base_sigkill_timeout", "5", 1);
    pid_t pid = spawn_mpirun(2, args, outp);
    unsetenv("OMPI_MCA_odls_base_sigkill_timeout");
    wait_steps(log, 3);
    kill(pid, SIGINT);
    wait_exit(pid);
    char *out = slurp(outp, NULL);
    cr_expect(!strstr(out, "signal 9") && !strstr(out, "Killed"), "%s", out);
    free(out);
    expect_saved_and_resumable(outp, f.data, f.a);
    free(log);
    free(outp);
    fix_free(&f);
}

/* The pid of the process of rank `rank` among the children of mpirun (-1 if none). */
static pid_t child_of_rank(pid_t parent, int rank)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    pid_t found = -1;
    char want[64];
    snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
    for (struct dirent *de; found < 0 && (de = readdir(d));) {
        long pid = strtol(de->d_name, NULL, 10);
        if (pid <= 0)
            continue;
        char *stat = strf("/proc/%ld/stat", pid), *envp = strf("/proc/%ld/environ", pid);
        char *s = slurp(stat, NULL);
        char *rp = s ? strrchr(s, ')') : NULL;
        long ppid = 0;
        if (rp && sscanf(rp + 2, "%*c %ld", &ppid) == 1 && ppid == parent) {
            size_t len;
            char *env = slurp(envp, &len);
            for (size_t i = 0; env && i < len; i += strlen(env + i) + 1)
                if (strcmp(env + i, want) == 0)
                    found = (pid_t)pid;
            free(env);
        }
        free(s);
        free(stat);
        free(envp);
    }
    closedir(d);
    return found;
}

/* One process killed with SIGKILL: mpirun ends the job, the files of the last
   checkpoint load, and --resume continues from it. */
Test(mpi, a_killed_process_ends_the_job_and_the_run_resumes)
{
    Fix f = fix_new();
    const char *model = f.a;
    char *outp = strf("%s/out", f.dir), *log = strf("%s.log.jsonl", model);
    const char *args[] = {"train", f.data, "-o", model, "--epochs", "100000", "--valid-every", "3", "--emb", "16",
                          "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16",
                          "--threads", "1", "--quiet", NULL};
    pid_t pid = spawn_mpirun(2, args, outp);
    wait_steps(log, 10);
    pid_t victim = child_of_rank(pid, 1);
    cr_assert(victim > 0, "no process of rank 1 under mpirun %d", (int)pid);
    kill(victim, SIGKILL);
    int st = wait_exit(pid);
    cr_expect_neq(st, 0);
    char *last = strf("%s.last", model), *state = strf("%s.state", model);
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, last, false, &e), 0, "%s", e.msg);
    long saved = -1;
    sscanf(mf.history, "{\"steps\": %ld,", &saved);
    cr_expect(saved >= 3, "%s", mf.history);
    model_file_free(&mf);
    char *upto = strf("%ld", saved + 4);
    RunResult r = MPIRUN(2, "train", "-o", model, "--resume", "--steps", upto, "--threads", "1", "--quiet");
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *resumed = strf("{\"event\": \"resume\", \"step\": %ld,", saved);
    char *stopped = strf("{\"event\": \"stop\", \"reason\": \"steps\", \"step\": %ld,", saved + 4);
    cr_expect_eq(count_in_file(log, resumed), 1);
    cr_expect_eq(count_in_file(log, stopped), 1);
    run_free(&r);
    free(stopped);
    free(resumed);
    free(upto);
    free(last);
    free(state);
    free(log);
    free(outp);
    fix_free(&f);
}
