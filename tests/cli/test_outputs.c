/* Never destroying a user's file: what `s2s train`, `translate -o`, `eval --out` and
   `prepare -o` may replace, one training run per model, and the lock of a killed run.
   Each refusal is checked to leave the directory exactly as it was (every file's size
   and CRC-32, no file added or removed). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#define SMALL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
              "--deep-out", "16", "--threads", "1", "--quiet"

/* A fresh directory with corpus.tsv, a copy of data/sample.tsv. */
static char *corpus_dir(char **corpus)
{
    char *dir = tmpdir_new();
    size_t n;
    char *text = slurp("data/sample.tsv", &n);
    cr_assert_not_null(text);
    *corpus = strf("%s/corpus.tsv", dir);
    write_file(*corpus, text);
    free(text);
    return dir;
}

/* Runs s2s with args and expects exit status `status`, stderr `err` exactly, and dir
   unchanged. */
static void expect_refused(const char *dir, int status, const char *err, const char *const *args)
{
    char *before = dir_snapshot(dir);
    RunResult r = run_s2s(NULL, args);
    char *after = dir_snapshot(dir);
    cr_expect_eq(r.status, status, "status %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, err);
    cr_expect_str_eq(after, before, "the directory changed");
    run_free(&r);
    free(before);
    free(after);
}

#define REFUSED(dir, status, err, ...) expect_refused((dir), (status), (err), (const char *const[]){__VA_ARGS__, NULL})

Test(outputs, the_corpus_as_output_is_refused)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", corpus, corpus);
    REFUSED(dir, 1, want, "train", corpus, "-o", corpus, "--steps", "2", SMALL);
    REFUSED(dir, 1, want, "train", corpus, "-o", corpus, "--steps", "2", "--force", SMALL);
    /* the same file by another spelling */
    char *other = strf("%s/./corpus.tsv", dir);
    char *want2 = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", other, corpus);
    REFUSED(dir, 1, want2, "train", corpus, "-o", other, "--steps", "2", SMALL);
    free(want2);
    free(other);
    free(want);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

Test(outputs, a_symlink_or_hard_link_to_the_corpus_is_refused)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *sym = strf("%s/m.s2s", dir), *hard = strf("%s/h.s2s", dir);
    cr_assert_eq(symlink("corpus.tsv", sym), 0);
    cr_assert_eq(link(corpus, hard), 0);
    char *want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", sym, corpus);
    REFUSED(dir, 1, want, "train", corpus, "-o", sym, "--steps", "2", SMALL);
    free(want);
    want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", hard, corpus);
    REFUSED(dir, 1, want, "train", corpus, "-o", hard, "--steps", "2", "--force", SMALL);
    /* a symlink to the corpus where MODEL.log.jsonl goes */
    char *log = strf("%s/x.s2s.log.jsonl", dir), *x = strf("%s/x.s2s", dir);
    cr_assert_eq(symlink(corpus, log), 0);
    free(want);
    want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", log, corpus);
    REFUSED(dir, 1, want, "train", corpus, "-o", x, "--steps", "2", SMALL);
    free(x);
    free(log);
    free(want);
    free(sym);
    free(hard);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

/* A file that is not ours at any output path: refused, with --force too. */
Test(outputs, a_foreign_file_at_any_output_is_refused)
{
    static const struct {
        const char *suffix, *kind;
    } cases[] = {
        {"", "an s2s model file"},
        {".last", "an s2s model file"},
        {".state", "an s2s training state"},
        {".log.jsonl", "an s2s training log"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *corpus, *dir = corpus_dir(&corpus);
        char *model = strf("%s/notes.txt", dir), *path = strf("%s%s", model, cases[i].suffix);
        write_file(path, "my notes: do not lose them\n");
        char *want = strf("s2s: %s: exists and is not %s; refusing to replace it; choose another -o\n", path,
                          cases[i].kind);
        REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", SMALL);
        REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", "--force", SMALL);
        free(want);
        free(path);
        free(model);
        free(corpus);
        rm_rf(dir);
        free(dir);
    }
}

Test(outputs, a_foreign_directory_at_model_d_is_refused)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *model = strf("%s/m.s2s", dir), *md = strf("%s/m.s2s.d", dir), *mine = strf("%s/m.s2s.d/mine.txt", dir);
    cr_assert_eq(mkdir(md, 0777), 0);
    write_file(mine, "mine\n");
    char *want = strf("s2s: %s: exists and is not a directory written by s2s prepare; refusing to replace "
                      "it; choose another -o\n", md);
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", SMALL);
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", "--force", SMALL);
    /* a file where the directory would go */
    rm_rf(md);
    write_file(md, "a file\n");
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", SMALL);
    free(want);
    free(mine);
    free(md);
    free(model);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

/* The corpus inside MODEL.d/ under a name prepare writes: preparing would replace it. */
Test(outputs, a_corpus_among_prepares_outputs_is_refused)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *model = strf("%s/m.s2s", dir), *md = strf("%s/m.s2s.d", dir);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", md);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *train = strf("%s/train.tsv", md);
    char *want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", train, train);
    REFUSED(dir, 1, want, "train", train, "-o", model, "--steps", "2", SMALL);
    /* prepare itself: its output directory holding its input */
    REFUSED(dir, 1, want, "prepare", train, "-o", md);
    free(want);
    free(train);
    free(md);
    free(model);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

/* --force starts our own run over, and only ours. */
Test(outputs, force_restarts_our_run)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *model = strf("%s/m.s2s", dir), *logp = strf("%s/m.s2s.log.jsonl", dir);
    RunResult r = RUN_S2S(NULL, "train", corpus, "-o", model, "--steps", "2", SMALL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *state = strf("%s.state", model);
    char *want = strf("s2s: %s exists: add --resume to continue that run, or --force to start over\n", state);
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", SMALL);
    r = RUN_S2S(NULL, "train", corpus, "-o", model, "--steps", "3", "--force", SMALL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"start\""), 1);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"stop\", \"reason\": \"steps\", \"step\": 3,"), 1);
    char *lock = strf("%s.lock", model);
    cr_expect(!file_exists(lock), "%s left after the run", lock);
    /* our run, but the log replaced by a user's file: still refused with --force */
    write_file(logp, "a file of mine\n");
    free(want);
    want = strf("s2s: %s: exists and is not an s2s training log; refusing to replace it; choose another -o\n", logp);
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", "--force", SMALL);
    free(lock);
    free(want);
    free(state);
    free(logp);
    free(model);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

/* One run per model: a second run, or a --resume of the live one, is refused naming
   the running process; once it is killed, its lock no longer blocks. */
Test(outputs, one_run_per_model_and_a_killed_runs_lock_does_not_block)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *outp = strf("%s/out", dir);
    char *logp = strf("%s.log.jsonl", model), *lock = strf("%s.lock", model);
    const char *args[] = {"train", data, "-o", model, "--epochs", "100000", "--valid-every", "0", SMALL, NULL};
    int pid = spawn_s2s(args, outp);
    cr_assert(pid > 0);
    /* past the first epoch end (5 steps): MODEL.state exists */
    for (int i = 0; i < 600 && count_in_file(logp, "\"event\": \"step\"") < 7; i++)
        usleep(50000);
    cr_assert(count_in_file(logp, "\"event\": \"step\"") >= 7, "no training steps after 30 s");
    char *want = strf("s2s: %s: another s2s train (process %d) is writing this model; wait for it to end or "
                      "stop it (it holds %s)\n", model, pid, lock);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", "--force", SMALL);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--epochs", "100000", "--valid-every", "0", "--resume",
                "--time", "0.05", SMALL);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"start\""), 1, "the refused runs wrote to the log");
    kill(pid, SIGKILL);
    cr_expect_eq(wait_exit(pid), 128 + SIGKILL);
    cr_expect(file_exists(lock), "the killed run's lock file should still be there");
    r = RUN_S2S(NULL, "train", data, "-o", model, "--epochs", "100000", "--valid-every", "0", "--resume",
                "--time", "0.01", SMALL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(!file_exists(lock), "%s left after the run", lock);
    run_free(&r);
    free(want);
    free(lock);
    free(logp);
    free(outp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* A lock file that is not ours is not written to. */
Test(outputs, a_foreign_lock_file_is_refused)
{
    char *corpus, *dir = corpus_dir(&corpus);
    char *model = strf("%s/m.s2s", dir), *lock = strf("%s/m.s2s.lock", dir);
    write_file(lock, "keys of my lockers\n");
    char *want = strf("s2s: %s: exists and is not an s2s lock file; refusing to use it\n", lock);
    REFUSED(dir, 1, want, "train", corpus, "-o", model, "--steps", "2", SMALL);
    free(want);
    free(lock);
    free(model);
    free(corpus);
    rm_rf(dir);
    free(dir);
}

/* translate -o and eval --out replace a text file, never their input or the model,
   nor a binary file. */
Test(outputs, translate_and_eval_outputs)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", SMALL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *in = strf("%s/in.txt", dir), *test = strf("%s/data/test.tsv", dir), *link_ = strf("%s/link", dir);
    write_file(in, "Hello.\nGood night.\n");
    cr_assert_eq(symlink(model, link_), 0);

    char *want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", in, in);
    REFUSED(dir, 1, want, "translate", model, "-i", in, "-o", in);
    free(want);
    want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", link_, model);
    REFUSED(dir, 1, want, "translate", model, "-i", in, "-o", link_);
    free(want);
    want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", test, test);
    REFUSED(dir, 1, want, "eval", model, test, "--out", test);
    free(want);
    want = strf("s2s: %s: -o would overwrite the input %s (the same file); nothing written\n", model, model);
    REFUSED(dir, 1, want, "eval", model, test, "--out", model);
    free(want);
    /* another model file is not a text file */
    char *last = strf("%s.last", model);
    want = strf("s2s: %s: -o exists and is not a text file (a model or other binary file); refusing to "
                "replace it\n", last);
    REFUSED(dir, 1, want, "translate", model, "-i", in, "-o", last);
    free(want);
    /* a text file is what -o replaces */
    char *out = strf("%s/out.txt", dir);
    write_file(out, "old translations\n");
    r = RUN_S2S(NULL, "translate", model, "-i", in, "-o", out);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *text = slurp(out, NULL);
    cr_expect(text && strcmp(text, "old translations\n") != 0 && count_in_file(out, "\n") == 2, "%s", text);
    free(text);
    free(out);
    free(last);
    free(link_);
    free(test);
    free(in);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}
