/* The interactive prompt of `s2s translate`, driven as a user would through a
   pseudo-terminal: typing, line editing, history, commands, Ctrl-D and Ctrl-C. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "helpers.h"
#include "model_fixture.h"

typedef struct Pty {
    int fd;
    pid_t pid;
    Buf seen; /* everything read so far */
    size_t mark; /* expect() searches from here */
} Pty;

/* Starts `s2s translate model EXTRA...` (extra: up to 4 arguments, NULL-terminated,
   or NULL) on a new pseudo-terminal. */
static Pty pty_start(const char *model, const char *const *extra)
{
    Pty p = {.fd = posix_openpt(O_RDWR | O_NOCTTY)};
    cr_assert(p.fd >= 0, "posix_openpt: %s", strerror(errno));
    cr_assert(grantpt(p.fd) == 0 && unlockpt(p.fd) == 0);
    char *slave = strdup(ptsname(p.fd));
    const char *s2s = s2s_bin();
    p.pid = fork();
    cr_assert(p.pid >= 0);
    if (p.pid == 0) {
        setsid();
        int s = open(slave, O_RDWR);
        if (s < 0)
            _exit(127);
        struct termios t;
        tcgetattr(s, &t);
        cfsetispeed(&t, B38400);
        cfsetospeed(&t, B38400);
        tcsetattr(s, TCSANOW, &t);
        dup2(s, 0);
        dup2(s, 1);
        dup2(s, 2);
        if (s > 2)
            close(s);
        close(p.fd);
        setenv("TERM", "xterm", 1);
        unsetenv("HOME"); /* no ~/.editrc: the default key bindings */
        const char *argv[8] = {s2s, "translate", model};
        for (int k = 0; extra && extra[k] && k < 4; k++)
            argv[3 + k] = extra[k];
        execv(s2s, (char *const *)argv);
        _exit(127);
    }
    free(slave);
    return p;
}

/* Reads until needle appears after the mark (then moves the mark past it), for at most
   10 seconds. */
static void expect(Pty *p, const char *needle)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (p->seen.data && strstr(p->seen.data + p->mark, needle)) {
            p->mark = (size_t)(strstr(p->seen.data + p->mark, needle) - p->seen.data) + strlen(needle);
            return;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = 10 - ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec));
        cr_assert(left > 0, "waited 10 s for '%s'; the terminal showed:\n%s", needle,
                  p->seen.data ? p->seen.data + p->mark : "");
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        char buf[4096];
        ssize_t k = read(p->fd, buf, sizeof buf);
        cr_assert(k > 0, "the program closed the terminal before '%s':\n%s", needle,
                  p->seen.data ? p->seen.data + p->mark : "");
        buf_append(&p->seen, buf, (size_t)k);
    }
}

/* Types keys once the prompt shows, and 50 ms later: like a user, who sees it first.
   Keys typed before libedit has put the terminal in raw mode are the terminal driver's
   (a Ctrl-D there is an end-of-file mark in canonical mode); typing the instant the
   prompt appeared made the program miss a Ctrl-D twice in a few dozen runs under load. */
static void type(Pty *p, const char *keys)
{
    expect(p, "> ");
    usleep(50 * 1000);
    size_t n = strlen(keys);
    cr_assert_eq(write(p->fd, keys, n), (ssize_t)n);
}

/* Waits for the program to end (at most 10 s) and returns its exit status. */
static int pty_wait(Pty *p)
{
    int st = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        char buf[4096];
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        ssize_t n = 0;
        if (poll(&pf, 1, 10) > 0 && (pf.revents & POLLIN))
            n = read(p->fd, buf, sizeof buf);
        if (n > 0)
            buf_append(&p->seen, buf, (size_t)n);
        else
            usleep(2000); /* the terminal is closed, or quiet */
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
            close(p->fd);
            buf_free(&p->seen);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) < 10);
    /* What the program was doing: its state and kernel wait channel, for the report. */
    char path[64], state[256] = "?", wchan[64] = "?";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p->pid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(state, sizeof state, f))
            state[0] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)p->pid);
    f = fopen(path, "r");
    if (f) {
        if (!fgets(wchan, sizeof wchan, f))
            wchan[0] = '\0';
        fclose(f);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &st, 0);
    cr_assert_fail("the program did not end (stat: %s; wchan: %s); the terminal showed:\n%s", state, wchan,
                   p->seen.data ? p->seen.data : "");
    return -1;
}

/* A model file with random weights in dir (freshly allocated path). */
static char *random_model(const char *dir)
{
    char *path = strf("%s/random.s2s", dir);
    Model m;
    fixture_text_model(&m, 9);
    fixture_save(path, &m, NULL);
    model_free(&m);
    return path;
}

/* The translation of `sentence` by s2s translate outside the prompt. */
static char *translation(const char *model, const char *sentence, const char *beam)
{
    RunResult r = RUN_S2S(NULL, "translate", model, sentence, "--beam", beam);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *s = strf("\r\n%.*s\r\n", (int)strcspn(r.out, "\n"), r.out);
    run_free(&r);
    return s;
}

Test(cli_repl, translate_edit_recall_commands_and_ctrl_d)
{
    char *dir = tmpdir_new(), *model = random_model(dir);
    char *cat5 = translation(model, "the cat", "5"), *cat1 = translation(model, "the cat", "1"),
         *hello1 = translation(model, "hello", "1");
    cr_assert_str_neq(cat1, hello1);

    Pty p = pty_start(model, NULL);
    expect(&p, "beam 5; :help lists the commands, Ctrl-D quits\r\n");
    type(&p, "the dog\x7f\x7f\x7f" "cat\r"); /* three backspaces: "the cat" */
    expect(&p, cat5);
    type(&p, ":beam 1\r");
    expect(&p, "\r\nbeam 1\r\n");
    type(&p, "hello\r");
    expect(&p, hello1);
    type(&p, "\x10\x10\x10\r"); /* Ctrl-P three times: back to "the cat" */
    expect(&p, cat1);
    type(&p, ":attn on\r");
    expect(&p, "attention on\r\n");
    type(&p, "the cat\r");
    expect(&p, cat1);
    expect(&p, "source across, output down;");
    expect(&p, "the cat\r\n");
    type(&p, ":attn off\r");
    expect(&p, "attention off\r\n");
    type(&p, ":foo\r");
    expect(&p, "\r\nunknown command ':foo' (:help lists the commands)\r\n");
    type(&p, ":nbest 2\r");
    expect(&p, "\r\n:nbest must be between 1 and the beam size 1, got 2\r\n");
    type(&p, ":beam 3\r");
    expect(&p, "\r\nbeam 3\r\n");
    type(&p, ":nbest 2\r");
    expect(&p, "\r\nn-best 2\r\n");
    type(&p, "the cat\r");
    expect(&p, "\r\n1. ");
    expect(&p, "\r\n2. ");
    type(&p, ":beam x\r");
    expect(&p, "\r\n:beam must be between 1 and 100, got x\r\n");
    type(&p, ":help\r");
    expect(&p, ":quit          leave (also Ctrl-D or Ctrl-C)\r\n");
    type(&p, "\x04"); /* Ctrl-D on an empty line */
    cr_assert_eq(pty_wait(&p), 0);

    free(cat5);
    free(cat1);
    free(hello1);
    rm_rf(dir);
    free(dir);
    free(model);
}

Test(cli_repl, ctrl_c_and_quit_leave_cleanly)
{
    char *dir = tmpdir_new(), *model = random_model(dir);
    char *cat = translation(model, "the cat", "5");

    Pty p = pty_start(model, NULL);
    type(&p, "the cat\r");
    expect(&p, cat);
    type(&p, "half a line\x03"); /* Ctrl-C */
    cr_assert_eq(pty_wait(&p), 0);

    char *svg = strf("%s/svg", dir);
    p = pty_start(model, (const char *const[]){"--show-attention", "--attention-svg", svg, NULL});
    type(&p, "the cat\r");
    expect(&p, cat);
    expect(&p, "source across, output down;");
    type(&p, "  \r");
    type(&p, "hello\r");
    expect(&p, "source across, output down;");
    type(&p, "  :quit\r");
    cr_assert_eq(pty_wait(&p), 0);
    /* one picture per translated line, numbered from 1 since the prompt opened */
    cr_assert_eq(dir_count(svg), 2);
    char *p2 = strf("%s/0002.svg", svg), *pic = slurp(p2, NULL);
    cr_assert(pic && strstr(pic, "<title>line 2: hello \xE2\x86\x92 "), "%s", pic ? pic : "no 0002.svg");
    free(pic);
    free(p2);
    free(svg);

    /* Not a terminal: the ordinary line-by-line behaviour (cli_translate). */
    free(cat);
    rm_rf(dir);
    free(dir);
    free(model);
}
