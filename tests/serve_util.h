/* A running `s2s serve` for the tests, and HTTP requests to it through curl. */
#ifndef S2S_TESTS_SERVE_UTIL_H
#define S2S_TESTS_SERVE_UTIL_H

#include <stdbool.h>

/* A temporary directory holding en-fr.s2s, a random en-fr model (model_fixture.h, seed
   9: varied, non-empty outputs); serve_model_free removes it. */
typedef struct ServeModel {
    char *dir;
    char *enfr;
} ServeModel;
ServeModel serve_model_new(void);
void serve_model_free(ServeModel *m);

typedef struct ServeProc {
    int pid;
    int port;
    char *dir; /* a temporary directory holding out (its stdout and stderr) */
    char *out;
} ServeProc;

/* Starts `s2s serve ARGS... --port 0` and waits (at most 120 s) for the line that says
   where it listens; fails the test (Criterion) when it exits or does not say. */
ServeProc serve_proc_start(const char *const *args);
#define SERVE_START(...) serve_proc_start((const char *const[]){__VA_ARGS__, NULL})
/* Sends sig and waits: the exit status (128 + signal when killed). Frees p's fields,
   the directory included; log, when not NULL, receives its output first (free it). */
int serve_proc_stop(ServeProc *p, int sig, char **log);

/* `s2s translate MODEL [OPTS...] SENTENCE...`'s output lines, one a sentence
   (NULL-terminated; fails the test when translate fails); free with lines_free. */
char **translate_output(const char *model, const char *const *sents, int n, const char *const *opts);
void lines_free(char **lines);

/* Whether /usr/bin/curl is installed (the tests that need it skip, saying so, without). */
bool have_curl(void);

typedef struct HttpRes {
    int status; /* 0 when curl failed (connection refused or closed) */
    char *body;
} HttpRes;

/* METHOD http://127.0.0.1:PORT/PATH with the body (NULL: none) of the content type
   (NULL: none), through curl; extra: more curl arguments (NULL-terminated, or NULL). */
HttpRes http_req(int port, const char *method, const char *path, const char *type, const char *body,
                 const char *const *extra);
#define HTTP_JSON(port, path, body) http_req((port), "POST", (path), "application/json", (body), NULL)
#define HTTP_GET(port, path) http_req((port), "GET", (path), NULL, NULL, NULL)
void http_res_free(HttpRes *r);



/* A raw connection, for requests sent in parts: connects to 127.0.0.1:port (-1 on
   failure), sends bytes, and reads an answer to the end of the connection (status 0
   when it was closed without one). */
int http_open(int port);
void http_send(int fd, const char *s);
HttpRes http_read(int fd);

/* http_open from the local address `from` ("127.0.0.2": the loopback network is this
   machine's); -1 on failure. */
int http_open_from(int port, const char *from);
/* One answer on a kept-alive connection (its body by Content-Length), leaving fd open;
   status 0 when the connection was closed first. */
HttpRes http_read_one(int fd);
/* Waits at most secs for the server to close fd (end of stream or reset, nothing read
   before): the seconds it took, or -1 when fd is still open (or the server sent data). */
double http_wait_closed(int fd, double secs);
/* Whether the server has closed fd by now (http_wait_closed without waiting). */
bool http_closed(int fd);

/* Seconds on the monotonic clock. */
double now_s(void);

/* The resident memory of process pid in kB (VmRSS of /proc/PID/status), or -1. */
long proc_rss_kb(int pid);
#endif
