/* Never losing work: non-finite steps, signals, SIGKILL during saves, and write
   failures at save time. Small models (size 16) keep every run short. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/safetensors.h"
#include "helpers.h"
#include "model/file.h"

#define SMALL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
              "--deep-out", "16", "--threads", "1"

/* Starts s2s with args (NULL-terminated, without the program name), stdout and stderr
   to err_path; fsize > 0 limits the size of files it writes (RLIMIT_FSIZE). SIGXFSZ
   keeps its default disposition (the process would die of it): s2s must ignore it
   itself, so that a write over the limit fails with EFBIG, as on a full disk. */
static pid_t spawn(const char *const *args, const char *err_path, long fsize)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        signal(SIGXFSZ, SIG_DFL);
        if (fsize > 0) {
            struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        const char *argv[40];
        int n = 0;
        argv[n++] = s2s_bin();
        for (int i = 0; args[i] && n < 39; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* No temporary file (PATH.tmp.PID) is left in dir. */
static void expect_no_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *de; (de = readdir(d));)
        cr_expect(!strstr(de->d_name, ".tmp."), "temporary file left: %s", de->d_name);
    closedir(d);
}

static void expect_loadable(const char *model, bool need_best)
{
    char *last = strf("%s.last", model), *state = strf("%s.state", model);
    ModelFile mf;
    Err e;
    cr_expect_eq(model_file_load(&mf, last, false, &e), 0, "%s", e.msg);
    model_file_free(&mf);
    if (need_best || file_exists(model)) {
        cr_expect_eq(model_file_load(&mf, model, false, &e), 0, "%s", e.msg);
        model_file_free(&mf);
    }
    StFile *f;
    cr_expect_eq(st_load(&f, state, "s2s-state-1", &e), 0, "%s", e.msg);
    st_close(f);
    free(last);
    free(state);
}

Test(reliability, nonfinite_steps_are_skipped_then_training_stops)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    setenv("S2S_FAULT_NONFINITE", "3,6,7,8,9,10", 1);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--valid-every", "4", "--quiet", SMALL);
    unsetenv("S2S_FAULT_NONFINITE");
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: step 10: 5 steps in a row had a non-finite loss or gradient; stopped "
                      "(%s.last and %s.state hold step 8)\n", model, model);
    cr_expect_str_eq(r.err, want);
    char *logp = strf("%s.log.jsonl", model);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"nonfinite\""), 6);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"nonfinite\", \"step\": 6, \"lr_scale\": 0.25}"), 1);
    /* the files hold step 8, with finite weights */
    char *last = strf("%s.last", model);
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, last, false, &e), 0, "%s", e.msg);
    cr_expect(strncmp(mf.history, "{\"steps\": 8,", 12) == 0, "%s", mf.history);
    size_t bad = 0;
    for (size_t i = 0; i < mf.model.layout.total; i++)
        bad += !isfinite(mf.model.params[i]);
    cr_expect_eq(bad, 0, "%zu non-finite weights", bad);
    model_file_free(&mf);
    expect_loadable(model, true);
    run_free(&r);
    free(last);
    free(logp);
    free(want);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* SIGINT (Ctrl-C) or SIGTERM (kill, a batch system's stop) in the middle of a run:
   the step finishes, the files are saved, exit 0, and --resume continues. */
static void signal_saves_and_the_run_resumes(int sig)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    char *logp = strf("%s.log.jsonl", model);
    const char *args[] = {"train", data, "-o", model, "--epochs", "100000", "--valid-every", "0",
                          "--log-every", "1000000", SMALL, NULL};
    pid_t pid = spawn(args, errp, 0);
    /* wait for a few steps */
    for (int i = 0; i < 600 && count_in_file(logp, "\"event\": \"step\"") < 3; i++)
        usleep(50000);
    cr_assert(count_in_file(logp, "\"event\": \"step\"") >= 3, "no training steps after 30 s");
    kill(pid, sig);
    cr_expect_eq(wait_exit(pid), 0);
    char *err = slurp(errp, NULL);
    char *want = strf("continue with the same command and --resume\n");
    cr_expect(strstr(err, ": saved ") && strstr(err, want), "%s", err);
    cr_expect_eq(count_in_file(logp, "{\"event\": \"stop\", \"reason\": \"signal\""), 1);
    expect_loadable(model, false);
    long stopped = -1;
    char *at = strstr(err, "interrupted at step ");
    cr_assert_not_null(at, "%s", err);
    sscanf(at, "interrupted at step %ld", &stopped);
    char *upto = strf("%ld", stopped + 2);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--epochs", "100000", "--valid-every", "0",
                          "--steps", upto, "--resume", "--quiet", SMALL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *stop = strf("{\"event\": \"stop\", \"reason\": \"steps\", \"step\": %ld,", stopped + 2);
    cr_expect_eq(count_in_file(logp, stop), 1);
    run_free(&r);
    free(stop);
    free(upto);
    free(want);
    free(err);
    free(logp);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* DATA/train.ids truncated by someone else while a run reads it (mapped): one line
   naming the file, exit 1 (not a crash by SIGBUS), and the checkpoint on disk whole. */
Test(reliability, a_training_file_truncated_under_the_run_is_one_line)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    char *logp = strf("%s.log.jsonl", model), *ids = strf("%s/train.ids", data);
    const char *args[] = {"train", data, "-o", model, "--epochs", "100000", "--valid-every", "2",
                          "--log-every", "1000000", SMALL, NULL};
    pid_t pid = spawn(args, errp, 0);
    for (int i = 0; i < 600 && count_in_file(logp, "\"event\": \"valid\"") < 1; i++)
        usleep(50000);
    cr_assert(count_in_file(logp, "\"event\": \"valid\"") >= 1, "no validation after 30 s");
    cr_assert_eq(truncate(ids, 0), 0); /* every page gone: the next read faults */
    int st = wait_exit(pid);
    cr_expect_eq(st, 1, "exit %d", st);
    char *err = slurp(errp, NULL);
    char *want = strf("s2s: %s: the file was truncated while in use; files written before are whole: prepare "
                      "the data again, then --resume\n", ids);
    size_t ne = strlen(err), nw = strlen(want);
    cr_expect(ne >= nw && strcmp(err + ne - nw, want) == 0, "the last line is not '%s':\n%s", want, err);
    expect_loadable(model, false);
    free(want);
    free(err);
    free(ids);
    free(logp);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

Test(reliability, sigint_saves_and_the_run_resumes) { signal_saves_and_the_run_resumes(SIGINT); }

Test(reliability, sigterm_saves_and_the_run_resumes) { signal_saves_and_the_run_resumes(SIGTERM); }

/* SIGKILL at random moments while checkpoints are written at every step: whatever
   the moment, the files on disk load, and the run resumes from them. */
Test(reliability, sigkill_during_saves_leaves_loadable_files)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    char *last = strf("%s.last", model);
    const char *first[] = {"train", data, "-o", model, "--steps", "1", "--valid-every", "1", "--quiet", SMALL, NULL};
    cr_assert_eq(wait_exit(spawn(first, errp, 0)), 0);
    srand(12345);
    for (int round = 0; round < 12; round++) {
        const char *args[] = {"train", data, "-o", model, "--epochs", "100000", "--valid-every", "1",
                              "--resume", "--quiet", SMALL, NULL};
        pid_t pid = spawn(args, errp, 0);
        usleep(100000 + (useconds_t)(rand() % 400) * 1000);
        kill(pid, SIGKILL);
        cr_expect_eq(wait_exit(pid), 128 + SIGKILL);
        expect_loadable(model, true);
    }
    const char *more[] = {"train", data, "-o", model, "--epochs", "100000", "--steps", "1000000",
                          "--time", "0.01", "--resume", "--quiet", SMALL, NULL};
    int st = wait_exit(spawn(more, errp, 0));
    char *err = slurp(errp, NULL);
    cr_expect_eq(st, 0, "resume after the kills: %s", err);
    /* and that run removed what the killed ones left behind */
    expect_no_temporaries(dir);
    free(err);
    free(last);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* A write that fails at save time (here RLIMIT_FSIZE: EFBIG, as a full disk gives
   ENOSPC) is a one-line error naming the file; the previous files stay as they were
   and no temporary file is left behind. */
Test(reliability, a_failed_save_keeps_the_previous_files)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    const char *first[] = {"train", data, "-o", model, "--steps", "2", "--quiet", SMALL, NULL};
    cr_assert_eq(wait_exit(spawn(first, errp, 0)), 0);
    char *last = strf("%s.last", model), *state = strf("%s.state", model);
    size_t nb, nl, ns;
    char *b0 = slurp(model, &nb), *l0 = slurp(last, &nl), *s0 = slurp(state, &ns);
    cr_assert(b0 && l0 && s0);
    const char *args[] = {"train", data, "-o", model, "--steps", "4", "--resume", "--quiet", SMALL, NULL};
    int st = wait_exit(spawn(args, errp, 20000)); /* model files are larger than 20 kB */
    cr_expect_eq(st, 1);
    char *err = slurp(errp, NULL);
    char *want = strf("s2s: %s.last: ", model);
    cr_expect(strncmp(err, want, strlen(want)) == 0 && strstr(err, "File too large") &&
                  strchr(err, '\n') == err + strlen(err) - 1,
              "%s", err);
    size_t nb1, nl1, ns1;
    char *b1 = slurp(model, &nb1), *l1 = slurp(last, &nl1), *s1 = slurp(state, &ns1);
    cr_expect(nb1 == nb && memcmp(b0, b1, nb) == 0, "%s changed", model);
    cr_expect(nl1 == nl && memcmp(l0, l1, nl) == 0, "%s changed", last);
    cr_expect(ns1 == ns && memcmp(s0, s1, ns) == 0, "%s changed", state);
    expect_no_temporaries(dir);
    free(b0); free(l0); free(s0); free(b1); free(l1); free(s1);
    free(want);
    free(err);
    free(last);
    free(state);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* translate -o under a file-size limit: the write fails (the process is not killed by
   SIGXFSZ), one line names the output, exit 1, the previous output is unchanged and no
   temporary is left. */
Test(reliability, a_file_size_limit_stops_translate_in_one_line)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    char *src = strf("%s/src.txt", dir), *out = strf("%s/out.txt", dir);
    const char *first[] = {"train", data, "-o", model, "--steps", "2", "--quiet", SMALL, NULL};
    cr_assert_eq(wait_exit(spawn(first, errp, 0)), 0);
    char *text = slurp("data/sample.tsv", NULL);
    cr_assert_not_null(text);
    for (char *p = text; (p = strchr(p, '\t'));) { /* the sources alone */
        char *nl = strchr(p, '\n');
        memmove(p, nl, strlen(nl) + 1);
    }
    write_file(src, text);
    write_file(out, "before\n");
    const char *args[] = {"translate", model, "-i", src, "-o", out, "--threads", "1", NULL};
    int st = wait_exit(spawn(args, errp, 300)); /* 400 lines of output are longer */
    cr_expect_eq(st, 1, "exit %d", st);
    char *err = slurp(errp, NULL), *want = strf("s2s: %s", out);
    cr_expect(strncmp(err, want, strlen(want)) == 0 && strstr(err, "File too large") &&
                  strchr(err, '\n') == err + strlen(err) - 1,
              "%s", err);
    char *after = slurp(out, NULL);
    cr_expect_str_eq(after, "before\n");
    expect_no_temporaries(dir);
    free(after);
    free(want);
    free(err);
    free(text);
    free(src);
    free(out);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Temporary files of a killed run (PATH.tmp.PID of a process that is gone) are removed
   when training starts; those of a live process are left alone. */
Test(reliability, stale_temporaries_are_removed)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    cr_assert_eq(waitpid(dead, NULL, 0), dead);
    char *stale1 = strf("%s.last.tmp.%ld", model, (long)dead), *stale2 = strf("%s.tmp.%ld", model, (long)dead);
    char *live = strf("%s.state.tmp.%ld", model, (long)getpid()), *other = strf("%s/m.s2s.lastXtmp.1", dir);
    write_file(stale1, "x");
    write_file(stale2, "x");
    write_file(live, "x");
    write_file(other, "x");
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", "--quiet", SMALL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(!file_exists(stale1) && !file_exists(stale2), "stale temporaries kept");
    cr_expect(file_exists(live) && file_exists(other), "a file that is not stale was removed");
    run_free(&r);
    free(stale1); free(stale2); free(live); free(other);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* A second Ctrl-C ends the process at once (killed by SIGINT) unless the first one's
   save already finished (exit 0); either way the files on disk load. */
Test(reliability, a_second_sigint_exits_at_once_and_files_stay_whole)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *errp = strf("%s/err", dir);
    char *logp = strf("%s.log.jsonl", model);
    const char *first[] = {"train", data, "-o", model, "--steps", "1", "--valid-every", "1", "--quiet", SMALL, NULL};
    cr_assert_eq(wait_exit(spawn(first, errp, 0)), 0);
    const char *args[] = {"train", data, "-o", model, "--epochs", "100000", "--valid-every", "1",
                          "--resume", "--quiet", SMALL, NULL};
    pid_t pid = spawn(args, errp, 0);
    for (int i = 0; i < 600 && count_in_file(logp, "\"event\": \"step\"") < 4; i++)
        usleep(20000);
    kill(pid, SIGINT);
    kill(pid, SIGINT);
    int st = wait_exit(pid);
    cr_expect(st == 128 + SIGINT || st == 0, "status %d", st);
    expect_loadable(model, true);
    free(logp);
    free(errp);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* Under an address-space limit (ulimit -v 120000) too small for OpenBLAS's worker
   threads (128 MiB each), the commands that do no matrix products still end, exit 0,
   at once (they start no worker): tokenize, the help. */
Test(reliability, commands_without_matrix_products_run_under_a_small_memory_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer reserves more address space than any such limit");
#else
    char *cmd = strf("ulimit -v 120000 && echo 'The cat.' | timeout 20 %s tokenize && timeout 20 %s --help "
                     ">/dev/null && echo 'The cat.' | timeout 20 %s tokenize --lang fr", s2s_bin(), s2s_bin(),
                     s2s_bin());
    RunResult r = RUN_PROG(NULL, "/bin/sh", "-c", cmd);
    cr_expect_eq(r.status, 0, "exit %d (124: a hang): %s", r.status, r.err);
    cr_expect_str_eq(r.out, "The cat .\nThe cat .\n");
    run_free(&r);
    free(cmd);
#endif
}

/* Endless input (/dev/zero) is refused after a bounded read: one line naming the file
   and line, exit 1, within seconds and under a memory limit far below what reading it
   whole would take (the limit is left out under AddressSanitizer, which reserves more
   address space than any such limit). */
Test(reliability, endless_input_is_refused_after_a_bounded_read)
{
    char *dir = tmpdir_new(), *model = strf("%s/m.s2s", dir), *pz = strf("%s/p", dir);
    /* a foreign file of 1 GiB (sparse) given as a model: its first 8 bytes refuse it */
    char *big = strf("%s/big.s2s", dir);
    FILE *f = fopen(big, "wb");
    cr_assert(f && fwrite("AAAAAAAA", 1, 8, f) == 8 && fclose(f) == 0);
    cr_assert_eq(truncate(big, 1L << 30), 0);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", model, "--steps", "1", SMALL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
#if defined(__SANITIZE_ADDRESS__)
    const char *limit = "true";
#else
    const char *limit = "ulimit -v 400000";
#endif
    const char *S = s2s_bin();
    struct {
        char *cmd, *want;
    } cases[] = {
        {strf("%s score /dev/zero data/sample.tsv", S), strf("s2s: /dev/zero:1: NUL byte at byte 1\n")},
        {strf("echo 'The cat.' | %s tokenize --bpe /dev/zero", S), strf("s2s: /dev/zero:1: NUL byte at byte 1\n")},
        {strf("%s tokenize < /dev/zero", S),
         strf("s2s: <stdin>:1: a line longer than 16777216 bytes (not a text file?)\n")},
        {strf("%s translate %s < /dev/zero", S, model),
         strf("s2s: <stdin>:1: a line longer than 16777216 bytes (not a text file?)\n")},
        {strf("%s translate %s -i /dev/zero", S, model), strf("s2s: /dev/zero:1: NUL byte at byte 1\n")},
        {strf("%s eval %s /dev/zero", S, model), strf("s2s: /dev/zero:1: NUL byte at byte 1\n")},
        {strf("%s prepare /dev/zero -o %s", S, pz), strf("s2s: /dev/zero:1: NUL byte at byte 1\n")},
        {strf("%s info %s", S, big), strf("s2s: %s: not a model file: header length 4702111234474983745 is absurd "
                                          "(more than 100000000 bytes)\n", big)},
        {strf("%s average %s %s -o %s/avg.s2s", S, big, big, dir),
         strf("s2s: %s: not a model file: header length 4702111234474983745 is absurd (more than 100000000 "
              "bytes)\n", big)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *sh = strf("%s && exec timeout 60 sh -c \"%s\"", limit, cases[i].cmd);
        r = RUN_PROG(NULL, "/bin/sh", "-c", sh);
        cr_expect_eq(r.status, 1, "%s: exit %d (124: no end)", cases[i].cmd, r.status);
        cr_expect_str_eq(r.err, cases[i].want, "%s", cases[i].cmd);
        run_free(&r);
        free(sh);
        free(cases[i].cmd);
        free(cases[i].want);
    }
    cr_expect(!file_exists(pz), "prepare wrote %s", pz);
    free(big);
    free(pz);
    free(model);
    rm_rf(dir);
    free(dir);
}

/* The commands that multiply matrices under an address-space limit: below what one
   BLAS thread needs, one line and exit 1 at once; above it, as many BLAS threads as fit
   take their buffers first, so the command either runs (eval) or stops in one line when
   its own allocations do not fit (train) — never hangs. */
Test(reliability, matrix_commands_under_a_memory_limit_run_or_stop_in_one_line)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer reserves more address space than any such limit");
#else
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *small = strf("%s/small.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", SMALL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    const char *S = s2s_bin();
    char *cmd = strf("ulimit -v 150000 && exec timeout -k 5 60 %s translate %s 'I have a cat.'", S, model);
    r = RUN_PROG(NULL, "/bin/sh", "-c", cmd);
    cr_expect_eq(r.status, 1, "exit %d (124: a hang)", r.status);
    cr_expect_str_eq(r.err, "s2s: the address-space limit (ulimit -v 150000) is too small for s2s translate: its "
                            "matrix products need at least 196608 kB (64 MiB and 128 MiB per thread)\n");
    run_free(&r);
    free(cmd);
    cmd = strf("ulimit -v 250000 && exec timeout -k 5 60 %s eval %s %s/test.tsv", S, model, data);
    r = RUN_PROG(NULL, "/bin/sh", "-c", cmd);
    cr_expect_eq(r.status, 0, "exit %d (124: a hang): %s", r.status, r.err);
    cr_expect(strncmp(r.out, "BLEU = ", 7) == 0, "%s", r.out);
    run_free(&r);
    free(cmd);
    cmd = strf("ulimit -v 250000 && exec timeout -k 5 60 %s train %s -o %s --steps 2 --quiet", S, data, small);
    r = RUN_PROG(NULL, "/bin/sh", "-c", cmd);
    cr_expect(r.status == 0 || (r.status == 1 && strncmp(r.err, "s2s: out of memory (asked for ", 30) == 0 &&
                                strchr(r.err, '\n') == r.err + strlen(r.err) - 1),
              "exit %d (124: a hang): %s", r.status, r.err);
    run_free(&r);
    free(cmd);
    free(small);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
#endif
}
