/*
 * `s2s serve`: LibreTranslate's HTTP API, a native endpoint and a web page over the
 * models of a few language pairs, on libmicrohttpd.
 *
 * Routes (docs/cli/serve.md):
 *   POST /translate      LibreTranslate's request (serve/request.h), JSON or form body
 *   GET  /languages      each source language with its targets
 *   GET  /frontend/settings  LibreTranslate's settings for its front ends (character
 *                        limit, whether a key is required, the first pair)
 *   POST /s2s/translate  the native request: scores, n-best lists with scores,
 *                        attention (weights and their SVG), decoding options
 *   GET  /health         {"status": "ok", ...} with counts
 *   GET  /               the web page (serve/page.html, built into the binary)
 * Anything else is 404, a known route with another method 405 (with Allow), and with
 * --cors ORIGIN, OPTIONS answers a preflight. Every error is {"error": "MESSAGE"}.
 *
 * One libmicrohttpd thread (epoll) reads and answers every connection. A translation
 * request, once its body is in, is suspended while serve/batcher.h decodes it, so that
 * other connections go on; the decoding thread resumes it with its result. Bounds: a
 * body over max_body is refused with 413 as soon as it passes the limit; a request whose
 * body has not arrived within request_timeout seconds of its start gets 408, and one
 * without traffic for idle_timeout seconds is closed.
 *
 * The server translates through the library's interface (include/s2s.h) alone: a
 * pair is an s2s_translator, its glossary one of its options.
 *
 * Connections (docs/reliability.md): a new connection from an address (an IPv6 one by
 * its /64) that already has max_conns_per_ip open is closed as soon as it is accepted.
 * A connection that has no request in progress waits: a new one must complete its
 * request head within head_timeout seconds of its accept, one kept alive after an
 * answer within idle_timeout seconds of it, or it is shut down (a thread of its own
 * watches the deadlines, which whatever the client sends meanwhile does not move). At
 * max_conns open, a new connection shuts down the oldest waiting one, new ones before
 * kept ones, and is refused only when none waits. /health counts what was refused,
 * shut down to make room (evicted), timed out (a head or body late) and closed idle.
 */
#ifndef S2S_SERVE_SERVER_H
#define S2S_SERVE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "s2s.h"
#include "serve/request.h"

/* One language pair: the model (or ensemble) that translates it, loaded with the
   server's options (its glossary among them). */
typedef struct ServePair {
    const s2s_translator *tr;
    const char *name; /* its files, for the log and /health */
} ServePair;

typedef struct ServeConfig {
    const char *host;        /* an address or a name to bind */
    int port;                /* 0: any free port (serve_port tells which) */
    ServePair *pairs;
    int npairs;
    s2s_translator_options opts; /* the defaults of a request (nbest 1) */
    const char *precision;   /* the weights' precision, for /health and the native check */
    ServeLimits lim;
    size_t max_body;         /* bytes */
    int max_conns;           /* open at once (serve_files_needed tells the files this takes) */
    int max_conns_per_ip;    /* open at once from one address */
    double head_timeout;     /* seconds from a connection's accept to its first request head */
    int idle_timeout;        /* seconds: between requests, and without traffic in one */
    double request_timeout;  /* seconds from a request's start to its whole body */
    int batch_texts;         /* most texts decoded together */
    double batch_wait_ms;
    const char *cors;        /* Access-Control-Allow-Origin, or NULL */
    char **keys;             /* accepted API keys (nkeys > 0: a key is required) */
    int nkeys;
    FILE *log;               /* a line per request */
} ServeConfig;

typedef struct Server Server;

/* The open files a server of max_conns connections may need: those, the connections
   shut down and not yet closed, the listening socket, epoll's, the log's, and more. */
long serve_files_needed(int max_conns);

/* Binds and starts serving; NULL with e set ("cannot listen on HOST:PORT: ..."). */
Server *serve_start(const ServeConfig *c, Err *e);
int serve_port(const Server *s);
/* Stops accepting, lets the requests in flight finish (at most `grace` seconds), stops. */
void serve_stop(Server *s, double grace);

/* The web page's bytes (serve/page.c). */
extern const char serve_page_html[];
extern const unsigned serve_page_len;

#endif
