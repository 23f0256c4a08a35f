/* A running `s2s serve` for the tests (serve_util.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "helpers.h"
#include "model_fixture.h"
#include "serve_util.h"

ServeModel serve_model_new(void)
{
    ServeModel f = {tmpdir_new(), NULL};
    f.enfr = strf("%s/en-fr.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 9);
    fixture_save(f.enfr, &m, NULL);
    model_free(&m);
    return f;
}

void serve_model_free(ServeModel *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->enfr);
}

ServeProc serve_proc_start(const char *const *args)
{
    ServeProc p = {0};
    p.dir = tmpdir_new();
    p.out = strf("%s/out", p.dir);
    const char *argv[64];
    int n = 0;
    argv[n++] = "serve";
    for (int i = 0; args[i] && n < 60; i++)
        argv[n++] = args[i];
    argv[n++] = "--port";
    argv[n++] = "0";
    argv[n] = NULL;
    p.pid = spawn_s2s(argv, p.out);
    for (int t = 0; t < 12000; t++) {
        char *text = slurp(p.out, NULL);
        const char *at = text ? strstr(text, "listening on http://127.0.0.1:") : NULL;
        if (at) {
            p.port = atoi(at + strlen("listening on http://127.0.0.1:"));
            free(text);
            return p;
        }
        int st;
        if (waitpid(p.pid, &st, WNOHANG) == p.pid)
            cr_assert_fail("s2s serve exited before listening: %s", text ? text : "");
        free(text);
        usleep(10000);
    }
    kill(p.pid, SIGKILL);
    cr_assert_fail("s2s serve did not say where it listens within 120 s");
    return p;
}

int serve_proc_stop(ServeProc *p, int sig, char **log)
{
    kill(p->pid, sig);
    int st = wait_exit(p->pid);
    if (log)
        *log = slurp(p->out, NULL);
    rm_rf(p->dir);
    free(p->dir);
    free(p->out);
    *p = (ServeProc){0};
    return st;
}

char **translate_output(const char *model, const char *const *sents, int n, const char *const *opts)
{
    const char **args = calloc((size_t)n + 40, sizeof *args);
    int k = 0;
    args[k++] = "translate";
    args[k++] = model;
    for (int i = 0; opts && opts[i] && k < 38; i++)
        args[k++] = opts[i];
    for (int i = 0; i < n; i++)
        args[k++] = sents[i];
    args[k] = NULL;
    RunResult r = run_s2s(NULL, args);
    free(args);
    cr_assert_eq(r.status, 0, "translate: %s", r.err);
    char **out = calloc((size_t)n + 1, sizeof *out);
    char *p = r.out;
    for (int i = 0; i < n; i++) {
        char *nl = strchr(p, '\n');
        cr_assert(nl, "translate gave fewer lines than sentences: %s", r.out);
        out[i] = strndup(p, (size_t)(nl - p));
        p = nl + 1;
    }
    run_free(&r);
    return out;
}

void lines_free(char **lines)
{
    for (int i = 0; lines[i]; i++)
        free(lines[i]);
    free(lines);
}

bool have_curl(void)
{
    return access("/usr/bin/curl", X_OK) == 0;
}

HttpRes http_req(int port, const char *method, const char *path, const char *type, const char *body,
                 const char *const *extra)
{
    const char *argv[64];
    int n = 0;
    char *url = strf("http://127.0.0.1:%d%s", port, path);
    char *hdr = type ? strf("Content-Type: %s", type) : NULL;
    argv[n++] = "/usr/bin/curl";
    argv[n++] = "-s";
    argv[n++] = "--noproxy";
    argv[n++] = "*";
    argv[n++] = "-X";
    argv[n++] = method;
    argv[n++] = "-w";
    argv[n++] = "\n%{http_code}";
    if (hdr) {
        argv[n++] = "-H";
        argv[n++] = hdr;
    }
    if (body) {
        argv[n++] = "--data-binary";
        argv[n++] = "@-";
    }
    for (int i = 0; extra && extra[i] && n < 60; i++)
        argv[n++] = extra[i];
    argv[n++] = url;
    argv[n] = NULL;
    RunResult r = run_prog(body ? body : "", argv);
    HttpRes h = {0};
    char *nl = strrchr(r.out, '\n');
    if (nl) {
        h.status = atoi(nl + 1);
        *nl = '\0';
    }
    h.body = strdup(r.out);
    run_free(&r);
    free(url);
    free(hdr);
    return h;
}

void http_res_free(HttpRes *r)
{
    free(r->body);
    r->body = NULL;
}

int http_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

void http_send(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

HttpRes http_read(int fd)
{
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            b = realloc(b, cap *= 2);
        ssize_t k = recv(fd, b + len, cap - len - 1, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    close(fd);
    b[len] = '\0';
    HttpRes h = {0};
    const char *body = strstr(b, "\r\n\r\n");
    if (len > 12 && !strncmp(b, "HTTP/1.1 ", 9))
        h.status = atoi(b + 9);
    h.body = strdup(body ? body + 4 : "");
    free(b);
    return h;
}

int http_open_from(int port, const char *from)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in src = {.sin_family = AF_INET}, a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || inet_pton(AF_INET, from, &src.sin_addr) != 1 || bind(fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

HttpRes http_read_one(int fd)
{
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    HttpRes h = {0};
    long want = -1; /* head and body, once the head is in */
    for (;;) {
        if (want < 0) {
            b[len] = '\0';
            const char *end = strstr(b, "\r\n\r\n");
            const char *cl = end ? strcasestr(b, "\r\nContent-Length: ") : NULL;
            if (end && cl && cl < end)
                want = (long)(end + 4 - b) + atol(cl + 18);
        }
        if (want >= 0 && (long)len >= want)
            break;
        if (len + 1024 > cap)
            b = realloc(b, cap *= 2);
        ssize_t k = recv(fd, b + len, cap - len - 1, 0);
        if (k <= 0) {
            free(b);
            h.body = strdup("");
            return h;
        }
        len += (size_t)k;
    }
    b[len] = '\0';
    if (!strncmp(b, "HTTP/1.1 ", 9))
        h.status = atoi(b + 9);
    h.body = strdup(strstr(b, "\r\n\r\n") + 4);
    free(b);
    return h;
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double http_wait_closed(int fd, double secs)
{
    double t0 = now_s();
    for (;;) {
        double left = t0 + secs - now_s();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0) == 1) {
            char c;
            ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT);
            if (k == 0 || (k < 0 && errno == ECONNRESET))
                return now_s() - t0;
            if (k > 0)
                return -1;
        }
        if (now_s() - t0 >= secs)
            return -1;
    }
}

bool http_closed(int fd)
{
    return http_wait_closed(fd, 0) >= 0;
}

long proc_rss_kb(int pid)
{
    char *path = strf("/proc/%d/status", pid);
    char *text = slurp(path, NULL);
    free(path);
    const char *at = text ? strstr(text, "\nVmRSS:") : NULL;
    long kb = at ? atol(at + 8) : -1;
    free(text);
    return kb;
}
