/* s2s serve: the models of a few language pairs over HTTP (serve/server.h), loaded
   through the library's interface (include/s2s.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/file.h"
#include "base/lines.h"
#include "base/opt.h"
#include "cmd_search.h"
#include "commands.h"
#include "s2s.h"
#include "serve/server.h"

typedef struct SvOpts {
    const char *host, *log, *keys, *cors, *glossary;
    bool glossary_ignore_case;
    int port, max_conns, max_conns_per_ip, max_texts, max_beam, idle_timeout, max_batch;
    long max_body, max_chars;
    double head_timeout, request_timeout, batch_wait;
    DecodeArgs d;
} SvOpts;

#define AT(field) .off = offsetof(SvOpts, field)

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--host", .kind = OPT_STR, AT(host), .arg = "ADDR",
     .help = "the address to listen on (default 127.0.0.1: this\n"
             "machine only; 0.0.0.0 or :: for every network)"},
    {.name = "--port", .kind = OPT_INT, AT(port), .min = 0, .max = 65535, .arg = "N",
     .help = "the port (default {}; 0: any free port, printed)"},
    {.name = "--log", .kind = OPT_STR, AT(log), .arg = "FILE",
     .help = "append the log (a line per request) to FILE instead of\nstderr"},
    {.name = "--api-keys", .kind = OPT_STR, AT(keys), .arg = "FILE",
     .help = "require a key (api_key) in every translation request:\n"
             "FILE holds the keys, one a line"},
    {.name = "--cors", .kind = OPT_STR, AT(cors), .arg = "ORIGIN",
     .help = "let pages of ORIGIN ('*': any) call the server\n"
             "(Access-Control-Allow-Origin; answers preflights)"},
    {.name = "--glossary", .kind = OPT_STR, AT(glossary), .arg = "FILE",
     .help = "lines 'SOURCE TERM<TAB>TARGET TERM': where a source term\n"
             "occurs in a text, its target term is a constraint\n"
             "(every request, both APIs; docs/constraints.md)"},
    {.name = "--glossary-ignore-case", .kind = OPT_TRUE, AT(glossary_ignore_case),
     .help = "match the glossary's source terms whatever their case"},
    {.kind = OPT_SECTION, .help = "limits:"},
    {.name = "--max-body", .kind = OPT_LONG, AT(max_body), .min = 1024, .max = 1L << 30, .arg = "BYTES",
     .help = "refuse a request body over BYTES (413; default {})"},
    {.name = "--max-chars", .kind = OPT_LONG, AT(max_chars), .min = 1, .max = 100000000, .arg = "N",
     .help = "refuse a request of more than N characters in all (400;\n"
             "default {}; LibreTranslate's --char-limit)"},
    {.name = "--max-texts", .kind = OPT_INT, AT(max_texts), .min = 1, .max = 100000, .arg = "N",
     .help = "refuse a request of more than N texts in q (400;\n"
             "default {}; LibreTranslate's --batch-limit)"},
    {.name = "--max-beam", .kind = OPT_INT, AT(max_beam), .min = 1, .max = 100, .arg = "K",
     .help = "the largest beam a native request may ask (default {})"},
    {.name = "--max-conns", .kind = OPT_INT, AT(max_conns), .min = 1, .max = 100000, .arg = "N",
     .help = "at most N connections at once: a new one closes the\n"
             "oldest that has no request in progress, or is closed\n"
             "(default {}, or what the open-file limit allows)"},
    {.name = "--max-conns-per-ip", .kind = OPT_INT, AT(max_conns_per_ip), .min = 1, .max = 100000, .arg = "N",
     .help = "at most N connections from one address (an IPv6 /64);\n"
             "more are closed as soon as they are accepted (default\n"
             "{}; behind a proxy, as many as --max-conns)"},
    {.name = "--head-timeout", .kind = OPT_DOUBLE, AT(head_timeout), .fmin = 0.1, .fmax = 3600, .arg = "S",
     .help = "close a new connection whose request head is not in S\n"
             "seconds after it opened (default {})"},
    {.name = "--timeout", .kind = OPT_INT, AT(idle_timeout), .min = 1, .max = 3600, .arg = "S",
     .help = "close a kept-alive connection whose next request head\n"
             "is not in S seconds after its last answer, and a request\n"
             "without traffic for S seconds (default {})"},
    {.name = "--request-timeout", .kind = OPT_DOUBLE, AT(request_timeout), .fmin = 0.1, .fmax = 3600,
     .arg = "S",
     .help = "answer 408 to a request whose body has not arrived S\n"
             "seconds after it began (default {})"},
    {.name = "--max-batch", .kind = OPT_INT, AT(max_batch), .min = 1, .max = 100000, .arg = "N",
     .help = "texts of concurrent requests decoded together, at most\n"
             "(default {}; sorted by length, then in batches of --batch)"},
    {.name = "--batch-wait", .kind = OPT_DOUBLE, AT(batch_wait), .fmin = 0, .fmax = 1000, .arg = "MS",
     .help = "while a connection may still send a request, a batch\n"
             "waits for it at most MS milliseconds (default {})"},
    {.kind = OPT_SECTION, .help = "decoding (a native request may change beam, length penalty, max len\n"
                                  "and splitting; the rest is the server's):"},
    DECODE_SEARCH_ROWS(SvOpts, d),
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "serve", .rows = rows, .size = sizeof(SvOpts), .what = "MODEL *", .col = 23,
    .head = "usage: s2s serve MODEL [MODEL...] [options]\n"
            "\n"
            "Serves the model files over HTTP/1.1 with LibreTranslate's API, so that its\n"
            "clients can use them: POST /translate (q, source, target, format, alternatives,\n"
            "api_key; JSON or form body) and GET /languages. Each MODEL translates the\n"
            "language pair it was trained on; several files of one pair decode as an\n"
            "ensemble, as in s2s translate. POST /s2s/translate is the native endpoint:\n"
            "scores, n-best lists, attention and decoding options. GET / is a web page,\n"
            "GET /health a status. The texts of concurrent requests are decoded together\n"
            "and each gets what s2s translate gives it. A line per request goes to the log.\n"
            "SIGINT or SIGTERM stops accepting, answers the requests in flight, and exits 0.\n"
            "Details and examples: docs/cli/serve.md.\n"
            "\n",
    .foot = "",
};

/* The keys of FILE: its non-blank lines, trimmed of spaces and tabs. */
static char **read_keys(const char *path, int *n)
{
    char *data;
    size_t len;
    Err e;
    if (file_read_lines(path, &data, &len, &e) != 0)
        die_err(&e);
    char **keys = NULL;
    *n = 0;
    Lines rd;
    lines_init(&rd, path, data, len);
    const char *a;
    size_t k;
    int got;
    while ((got = lines_next(&rd, &a, &k, &e)) > 0) {
        while (k && (*a == ' ' || *a == '\t'))
            a++, k--;
        while (k && (a[k - 1] == ' ' || a[k - 1] == '\t'))
            k--;
        if (k) {
            XRENEW(keys, *n + 1);
            keys[(*n)++] = xstrndup(a, k);
        }
    }
    if (got < 0)
        die_err(&e);
    free(data);
    if (*n == 0)
        die("%s: no API key in the file (one a line)", path);
    return keys;
}

/* Raises the soft limit on open files to the hard one: the soft limit after. */
static long raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit up = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 100000000 ? 100000000 : (long)rl.rlim_cur;
}

int cmd_serve(int argc, char **argv)
{
    SvOpts o = {.host = "127.0.0.1", .port = 5000, .max_body = 1L << 20, .max_chars = 5000,
                .max_texts = 128, .max_beam = 10, .max_conns = 4096, .max_conns_per_ip = 16,
                .head_timeout = 5, .idle_timeout = 10,
                .request_timeout = 30, .batch_wait = 5, .max_batch = 64, .d = decode_args_default()};
    /* texts of random lengths decode faster in smaller length-sorted batches: the
       default --batch of s2s serve is 16 (bench/README.md) */
    o.d.o.batch = 16;
    const char **pos = XNEW(const char *, argc > 0 ? argc : 1);
    int seen[sizeof rows / sizeof *rows];
    int npos = opt_parse(&table, &o, argc, argv, seen, pos, argc);
    if (npos == 0)
        die_usage("serve: missing MODEL argument (see 's2s serve --help')");
    if (o.glossary_ignore_case && !o.glossary)
        die_usage("serve: --glossary-ignore-case needs --glossary FILE");
    if (o.d.o.beam > o.max_beam)
        die_usage("serve: --beam %d is over --max-beam %d", o.d.o.beam, o.max_beam);
    o.d.o.nbest = 1;

    /* a file for each connection: the soft limit goes up to the hard one, and without
       --max-conns the ceiling comes down to what the limit holds */
    long files = raise_file_limit();
    if (files < serve_files_needed(o.max_conns)) {
        long room = files - serve_files_needed(0);
        if (opt_seen(&table, seen, "--max-conns") || room < 1)
            die("serve: --max-conns %d needs %ld open files; the limit is %ld (ulimit -n)", o.max_conns,
                serve_files_needed(o.max_conns), files);
        fprintf(stderr, "s2s serve: at most %ld connections (the open-file limit, ulimit -n, is %ld)\n", room, files);
        o.max_conns = (int)room;
    }

    /* the pairs: files of one direction form an ensemble, in the order given. Each
       file is loaded alone first (its direction is in it); the files of a direction
       that has several are loaded again, together. */
    s2s_translator_options to = o.d.o;
    to.glossary = o.glossary;
    to.glossary_ignore_case = o.glossary_ignore_case;
    s2s_translator **alone = XNEW(s2s_translator *, npos);
    for (int i = 0; i < npos; i++) {
        s2s_error err;
        if (!(alone[i] = s2s_translator_load(&pos[i], 1, &to, &err)))
            die("%s", err.message);
    }
    ServePair *pairs = XNEW(ServePair, npos);
    int npairs = 0;
    bool *taken = XCNEW(bool, npos);
    for (int i = 0; i < npos; i++) {
        if (taken[i])
            continue;
        const char *dir = s2s_translator_info(alone[i])->direction;
        const char **group = XNEW(const char *, npos);
        int n = 0;
        Buf name = {0};
        for (int k = i; k < npos; k++)
            if (!taken[k] && !strcmp(s2s_translator_info(alone[k])->direction, dir)) {
                taken[k] = true;
                group[n++] = pos[k];
                buf_printf(&name, "%s%s", name.len ? " " : "", pos[k]);
            }
        s2s_translator *tr = alone[i];
        if (n > 1) {
            s2s_error err;
            if (!(tr = s2s_translator_load(group, n, &to, &err)))
                die("%s", err.message);
            for (int k = i; k < npos; k++)
                if (alone[k] && !strcmp(s2s_translator_info(alone[k])->direction, dir) && k != i) {
                    s2s_translator_free(alone[k]);
                    alone[k] = NULL;
                }
            s2s_translator_free(alone[i]);
        }
        alone[i] = NULL;
        pairs[npairs++] = (ServePair){.tr = tr, .name = buf_take(&name)};
        free(group);
    }
    free(taken);
    free(alone);
    FILE *log = stderr;
    if (o.log && !(log = fopen(o.log, "a")))
        die("cannot open the log %s: %s", o.log, strerror(errno));
    ServeConfig c = {
        .host = o.host, .port = o.port, .pairs = pairs, .npairs = npairs, .opts = o.d.o,
        .precision = decode_precision_names[o.d.o.precision],
        .lim = {.max_texts = o.max_texts, .max_chars = o.max_chars, .max_beam = o.max_beam,
                .max_len = 10000, .beam = o.d.o.beam},
        .max_body = (size_t)o.max_body, .max_conns = o.max_conns, .max_conns_per_ip = o.max_conns_per_ip,
        .head_timeout = o.head_timeout, .idle_timeout = o.idle_timeout,
        .request_timeout = o.request_timeout, .batch_texts = o.max_batch, .batch_wait_ms = o.batch_wait,
        .cors = o.cors, .log = log};
    if (o.keys)
        c.keys = read_keys(o.keys, &c.nkeys);

    /* the signals that stop the server are taken by sigwait below, in this thread
       only: every thread started from here on blocks them */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    Err e;
    Server *s = serve_start(&c, &e);
    if (!s)
        die_err(&e);
    const bool v6 = strchr(o.host, ':') != NULL;
    for (int i = 0; i < npairs; i++)
        fprintf(stderr, "s2s serve: %s from %s (%s, beam %d)\n", s2s_translator_info(pairs[i].tr)->direction,
                pairs[i].name, c.precision, o.d.o.beam);
    printf("s2s serve: listening on http://%s%s%s:%d/\n", v6 ? "[" : "", o.host, v6 ? "]" : "", serve_port(s));
    fflush(stdout);

    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "s2s serve: %s: answering the requests in flight, then stopping\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    serve_stop(s, 60);
    fprintf(stderr, "s2s serve: stopped\n");

    for (int i = 0; i < npairs; i++) {
        s2s_translator_free((s2s_translator *)pairs[i].tr);
        free((char *)pairs[i].name);
    }
    for (int i = 0; i < c.nkeys; i++)
        free(c.keys[i]);
    free(c.keys);
    free(pairs);
    free(pos);
    if (log != stderr)
        fclose(log);
    return 0;
}
