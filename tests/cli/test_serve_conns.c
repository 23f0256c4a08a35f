/* End-to-end tests of the connection limits of `s2s serve` (docs/reliability.md): an
   address's share, the ceiling and who makes room at it, the head timeout against the
   idle timeout of a kept-alive connection, and the memory of thousands of idle
   connections. Clients on other addresses of the loopback network (127.0.0.2, ...)
   stand for other machines. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"
#include "helpers.h"
#include "model_fixture.h"
#include "serve_util.h"

/* What docs/cli/serve.md states an idle connection costs the server at most. */
#define IDLE_CONN_BOUND_KB 8

/* GET path from the address `from`, on a connection of its own. */
static HttpRes get_from(int port, const char *from, const char *path)
{
    int fd = http_open_from(port, from);
    cr_assert(fd >= 0, "cannot connect from %s", from);
    char *req = strf("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    http_send(fd, req);
    free(req);
    return http_read(fd);
}

/* A translation request from `from`; the body of its answer (fails the test unless 200). */
static char *translate_from(int port, const char *from)
{
    int fd = http_open_from(port, from);
    cr_assert(fd >= 0, "cannot connect from %s", from);
    const char *body = "{\"q\": \"the cat sleeps .\", \"source\": \"en\", \"target\": \"fr\"}";
    char *req = strf("POST /translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(body), body);
    http_send(fd, req);
    free(req);
    HttpRes h = http_read(fd);
    cr_assert_eq(h.status, 200, "from %s: %d %s", from, h.status, h.body);
    return h.body;
}

/* /health's connection counts, asked from 127.0.0.2 (whose own connection is open). */
typedef struct Counts {
    long open, refused, evicted, timed_out, idle_closed;
} Counts;

static Counts counts(int port)
{
    HttpRes h = get_from(port, "127.0.0.2", "/health");
    cr_assert_eq(h.status, 200, "%s", h.body);
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, h.body, strlen(h.body), &e), 0, "%s: %s", e.msg, h.body);
    const JsonVal *c = json_get(doc.root, "connections");
    cr_assert(c, "no connections in %s", h.body);
    Counts n = {json_get(c, "open")->u.num.i, json_get(c, "refused")->u.num.i, json_get(c, "evicted")->u.num.i,
                json_get(c, "timed_out")->u.num.i, json_get(c, "idle_closed")->u.num.i};
    json_free(&doc);
    http_res_free(&h);
    return n;
}

#define EXPECT_COUNTS(got, o, r, e, t, i)                                                                     \
    cr_expect((got).open == (o) && (got).refused == (r) && (got).evicted == (e) && (got).timed_out == (t) && \
                  (got).idle_closed == (i),                                                                   \
              "open %ld refused %ld evicted %ld timed_out %ld idle_closed %ld, not %d %d %d %d %d", (got).open, \
              (got).refused, (got).evicted, (got).timed_out, (got).idle_closed, (o), (r), (e), (t), (i))

/* A translation request that leaves its connection open (libmicrohttpd closes the
   connection of an answer given as soon as the head is in: a GET's). */
static void ask_kept(int fd)
{
    const char *body = "{\"q\": \"a cat\", \"source\": \"en\", \"target\": \"fr\"}";
    char *req = strf("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(body), body);
    http_send(fd, req);
    free(req);
    HttpRes h = http_read_one(fd);
    cr_assert_eq(h.status, 200, "%s", h.body);
    http_res_free(&h);
}

/* Raises this process's open-file limit to its hard limit: whether it holds n. */
static bool files_for(long n)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY || (long)rl.rlim_cur >= n;
}

Test(serve_conns, one_address_gets_its_share_and_the_others_are_answered)
{
    ServeModel f = serve_model_new();
    ServeProc p = SERVE_START(f.enfr);
    /* 300 connections from 127.0.0.1 that send nothing: 16 (--max-conns-per-ip's
       default) are kept, the 284 after them are closed at once */
    enum { N = 300, SHARE = 16 };
    int fd[N];
    for (int i = 0; i < N; i++) {
        fd[i] = http_open(p.port);
        cr_assert(fd[i] >= 0, "connection %d", i);
    }
    int closed = 0;
    for (int i = SHARE; i < N; i++)
        closed += http_wait_closed(fd[i], 1.0) >= 0;
    cr_expect_eq(closed, N - SHARE, "%d of the %d over the share closed within a second", closed, N - SHARE);
    for (int i = 0; i < SHARE; i++)
        cr_expect(!http_closed(fd[i]), "connection %d of the share was closed", i);
    /* another address is answered at once */
    double t0 = now_s();
    char *got = translate_from(p.port, "127.0.0.2");
    double took = now_s() - t0;
    cr_expect(took < 1.0, "the request from 127.0.0.2 took %.3f s", took);
    cr_expect(!strncmp(got, "{\"translatedText\": \"", 20), "%s", got);
    free(got);
    Counts n = counts(p.port);
    EXPECT_COUNTS(n, SHARE + 1, N - SHARE, 0, 0, 0);
    /* one more from 127.0.0.1, a request this time: closed at once, unanswered */
    t0 = now_s();
    int more = http_open(p.port);
    cr_assert(more >= 0);
    http_send(more, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    HttpRes h = http_read(more);
    took = now_s() - t0;
    cr_expect_eq(h.status, 0, "over its share, 127.0.0.1 was answered: %d %s", h.status, h.body);
    cr_expect(took < 1.0, "closing it took %.3f s", took);
    http_res_free(&h);
    n = counts(p.port);
    EXPECT_COUNTS(n, SHARE + 1, N - SHARE + 1, 0, 0, 0);
    /* its share free again, 127.0.0.1 is answered */
    for (int i = 0; i < N; i++)
        close(fd[i]);
    usleep(200000);
    h = get_from(p.port, "127.0.0.1", "/languages");
    cr_expect_eq(h.status, 200, "%s", h.body);
    http_res_free(&h);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    serve_model_free(&f);
}

Test(serve_conns, at_the_ceiling_the_oldest_waiting_connection_makes_room)
{
    ServeModel f = serve_model_new();
    ServeProc p = SERVE_START(f.enfr, "--max-conns", "20", "--max-conns-per-ip", "100", "--head-timeout", "60");
    /* a connection kept alive after an answer, then 19 that send nothing: 20, the ceiling */
    int kept = http_open(p.port);
    cr_assert(kept >= 0);
    ask_kept(kept);
    enum { IDLE = 19 };
    int fd[IDLE];
    for (int i = 0; i < IDLE; i++) {
        fd[i] = http_open(p.port);
        cr_assert(fd[i] >= 0);
        usleep(2000); /* each older than the next */
    }
    usleep(200000);
    /* a request gets through: the oldest connection that never sent a request head
       makes room, not the older kept-alive one */
    free(translate_from(p.port, "127.0.0.3"));
    cr_expect(http_wait_closed(fd[0], 1.0) >= 0, "the oldest idle connection is still open");
    for (int i = 1; i < IDLE; i++)
        cr_expect(!http_closed(fd[i]), "idle connection %d was closed", i);
    cr_expect(!http_closed(kept), "the kept-alive connection was closed");
    /* 19 open, and /health's own connection makes 20 */
    Counts n = counts(p.port);
    EXPECT_COUNTS(n, 20, 0, 1, 0, 0);
    /* one more idle connection makes 20, and the next request closes fd[1] */
    int newest = http_open(p.port);
    cr_assert(newest >= 0);
    usleep(100000);
    free(translate_from(p.port, "127.0.0.3"));
    cr_expect(http_wait_closed(fd[1], 1.0) >= 0, "the second idle connection is still open");
    for (int i = 2; i < IDLE; i++)
        cr_expect(!http_closed(fd[i]), "idle connection %d was closed", i);
    cr_expect(!http_closed(newest) && !http_closed(kept), "the newest or the kept-alive connection was closed");
    close(newest);
    /* the kept-alive connection is still served */
    ask_kept(kept);
    for (int i = 0; i < IDLE; i++)
        close(fd[i]);
    close(kept);
    usleep(200000);

    /* 20 requests in progress (heads in, bodies not): none waits, so a new connection
       is refused, and /health's too */
    enum { BUSY = 20 };
    int busy[BUSY];
    for (int i = 0; i < BUSY; i++) {
        busy[i] = http_open(p.port);
        cr_assert(busy[i] >= 0);
        http_send(busy[i], "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           "Content-Length: 100\r\n\r\n");
    }
    usleep(300000);
    int late = http_open_from(p.port, "127.0.0.4");
    cr_assert(late >= 0);
    cr_expect(http_wait_closed(late, 1.0) >= 0, "a connection beyond 20 busy ones was kept");
    close(late);
    for (int i = 0; i < BUSY; i++)
        cr_expect(!http_closed(busy[i]), "busy connection %d was closed", i);
    HttpRes refused = get_from(p.port, "127.0.0.2", "/health");
    cr_expect_eq(refused.status, 0, "%s", refused.body);
    http_res_free(&refused);
    for (int i = 0; i < BUSY; i++)
        close(busy[i]);
    usleep(300000);
    n = counts(p.port);
    EXPECT_COUNTS(n, 1, 2, 2, 0, 0);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    serve_model_free(&f);
}

Test(serve_conns, a_late_head_is_closed_after_the_head_timeout_a_kept_connection_after_the_idle_one,
     .timeout = 120)
{
    ServeModel f = serve_model_new();
    ServeProc p = SERVE_START(f.enfr, "--head-timeout", "1", "--timeout", "3");
    double t0 = now_s();
    /* half a request head, then nothing */
    int half = http_open(p.port);
    cr_assert(half >= 0);
    http_send(half, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Ty");
    /* a head a byte every 100 ms: the traffic does not move its deadline */
    int drip = http_open(p.port);
    cr_assert(drip >= 0);
    const char *head = "GET /languages HTTP/1.1\r\nHost: x\r\nUser-Agent: slow\r\n\r\n";
    /* a kept-alive connection, answered at once */
    int kept = http_open(p.port);
    cr_assert(kept >= 0);
    ask_kept(kept);
    double answered = now_s();
    double drip_closed = -1, half_closed = -1;
    for (size_t i = 0; head[i] && drip_closed < 0; i++) {
        char c[2] = {head[i], 0};
        http_send(drip, c);
        if (http_wait_closed(drip, 0.1) >= 0)
            drip_closed = now_s() - t0;
        if (half_closed < 0 && http_closed(half))
            half_closed = now_s() - t0;
    }
    if (half_closed < 0 && http_wait_closed(half, 1.0) >= 0)
        half_closed = now_s() - t0;
    cr_expect(drip_closed >= 0.95 && drip_closed < 1.6, "the dripping head closed after %.3f s", drip_closed);
    cr_expect(half_closed >= 0.95 && half_closed < 1.6, "the half head closed after %.3f s", half_closed);
    /* 2 s after its answer (over --head-timeout, under --timeout) the kept connection
       still takes a request */
    usleep((useconds_t)((answered + 2.0 - now_s()) * 1e6));
    cr_expect(!http_closed(kept), "the kept-alive connection was closed within --timeout");
    ask_kept(kept);
    double kept_closed = http_wait_closed(kept, 5.0);
    cr_expect(kept_closed >= 2.95 && kept_closed < 3.6, "the kept-alive connection closed %.3f s after its answer",
              kept_closed);
    Counts n = counts(p.port);
    EXPECT_COUNTS(n, 1, 0, 0, 2, 1);
    close(half);
    close(drip);
    close(kept);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    serve_model_free(&f);
}

/* 2,000 connections that send nothing, 16 from each of 125 addresses: a request is
   answered within a second, and the server's memory grows by at most
   IDLE_CONN_BOUND_KB a connection. */
Test(serve_conns, two_thousand_idle_connections_cost_what_the_docs_say)
{
    enum { N = 2000, PER = 16 };
    if (!files_for(N + 200))
        cr_skip_test("the open-file limit (ulimit -Hn) is under %d: 2,000 connections not tested", N + 200);
    ServeModel f = serve_model_new();
    /* a head timeout that outlasts the test's own pace */
    ServeProc p = SERVE_START(f.enfr, "--head-timeout", "120");
    /* what the first requests allocate is in before the measure */
    for (int i = 0; i < 3; i++)
        free(translate_from(p.port, "127.0.0.2"));
    usleep(200000);
    long before = proc_rss_kb(p.pid);
    cr_assert(before > 0);
    int *fd = malloc(N * sizeof *fd);
    for (int i = 0; i < N; i++) {
        char *from = strf("127.0.%d.%d", 1 + i / PER / 250, 1 + (i / PER) % 250);
        fd[i] = http_open_from(p.port, from);
        cr_assert(fd[i] >= 0, "connection %d from %s", i, from);
        free(from);
    }
    usleep(500000);
    long after = proc_rss_kb(p.pid);
    double t0 = now_s();
    char *got = translate_from(p.port, "127.0.0.2");
    double took = now_s() - t0;
    free(got);
    cr_expect(took < 1.0, "with 2,000 idle connections a request took %.3f s", took);
    Counts n = counts(p.port);
    EXPECT_COUNTS(n, N + 1, 0, 0, 0, 0);
    cr_log_info("2,000 idle connections: VmRSS %ld kB -> %ld kB, %.0f bytes each", before, after,
                (after - before) * 1024.0 / N);
#ifndef __SANITIZE_ADDRESS__
    cr_expect(after - before <= (long)N * IDLE_CONN_BOUND_KB, "2,000 idle connections: %ld kB -> %ld kB (%.0f bytes each)",
              before, after, (after - before) * 1024.0 / N);
#else
    /* `make asan`: AddressSanitizer's red zones and quarantine are in the measure */
#endif
    for (int i = 0; i < N; i++)
        close(fd[i]);
    free(fd);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    serve_model_free(&f);
}

/* Under an open-file limit of 1,024 (or the hard limit, when lower) the default
   ceiling comes down to what it holds, saying so, and a --max-conns it cannot hold is
   refused in one line. */
Test(serve_conns, the_open_file_limit_bounds_the_ceiling)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    long lim = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 1024 ? (long)rl.rlim_max : 1024;
    if (lim <= 128)
        cr_skip_test("the open-file limit (ulimit -Hn) is %ld: not tested", lim);
    rl.rlim_cur = rl.rlim_max = (rlim_t)lim;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    ServeModel f = serve_model_new();
    RunResult r = RUN_S2S(NULL, "serve", f.enfr, "--max-conns", "5000");
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: serve: --max-conns 5000 needs 5128 open files; the limit is %ld (ulimit -n)\n", lim);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    ServeProc p = SERVE_START(f.enfr);
    char *log;
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, &log), 0);
    want = strf("s2s serve: at most %ld connections (the open-file limit, ulimit -n, is %ld)\n", lim - 128, lim);
    cr_expect(strstr(log, want), "%s", log);
    free(want);
    free(log);
    serve_model_free(&f);
}

/* A client that opens connections and drops them does not fill the log: libmicrohttpd
   writes a line for many such drops, and the server shows at most 10 of its lines a
   minute (counting the rest in the next minute's first line). 200 connections from 200
   addresses, opened and dropped (half of them after half a request): at most 10
   libmicrohttpd lines, and the server still answers. */
Test(serve_conns, dropped_connections_do_not_fill_the_log)
{
    ServeModel f = serve_model_new();
    ServeProc p = SERVE_START(f.enfr);
    for (int i = 0; i < 200; i++) {
        char from[32];
        snprintf(from, sizeof from, "127.0.%d.%d", 1 + i / 100, 2 + i % 100); /* within every share */
        int fd = http_open_from(p.port, from);
        cr_assert(fd >= 0);
        if (i % 2)
            http_send(fd, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\nq=I");
        close(fd);
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
    /* the drops reach the server in a moment (until then they count against this
       address's share): the next request is answered within 5 s */
    int status = 0;
    for (double t0 = now_s(); status != 200 && now_s() - t0 < 5;) {
        int fd = http_open(p.port);
        cr_assert(fd >= 0);
        http_send(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        HttpRes res = http_read(fd);
        status = res.status;
        http_res_free(&res);
        close(fd);
    }
    cr_expect_eq(status, 200);
    char *log;
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, &log), 0);
    int lines = 0;
    for (const char *q = log; (q = strstr(q, "libmicrohttpd: ")); q++)
        lines++;
    cr_expect(lines <= 10, "%d libmicrohttpd lines:\n%s", lines, log);
    cr_log_info("200 dropped connections: %d libmicrohttpd lines", lines);
    free(log);
    serve_model_free(&f);
}
