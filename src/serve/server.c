/* `s2s serve` over libmicrohttpd (serve/server.h). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/utf8.h"
#include "decode/align.h"
#include "decode/constraints.h"
#include "serve/batcher.h"
#include "serve/form.h"
#include "serve/server.h"
#include "text/lang.h"

/* One connection, from its accept to its close. While it has no request in progress
   it waits in one of the server's two lists, oldest first: `fresh` (it has sent no
   complete request head yet) or `kept` (kept alive after an answer). */
typedef struct Conn {
    struct Conn *prev, *next;
    struct ConnList *list;    /* the list it waits in, or NULL while a request is in progress */
    int fd;
    unsigned char addr[16];   /* its address as counted (addr_key) */
    double since;             /* when it began to wait: its accept, or its last answer */
    bool closing;             /* shut down by the server, not yet closed by libmicrohttpd */
} Conn;

typedef struct ConnList {
    Conn *head, *tail;
} ConnList;

/* The open connections of an address (addr_key), in an open-addressing table. */
typedef struct AddrCount {
    unsigned char key[16];
    int n; /* 0: an empty slot */
} AddrCount;

struct Server {
    ServeConfig c;
    struct MHD_Daemon *d;
    ServeBatcher *batcher;
    int port;
    atomic_long inflight, requests;
    long conns;               /* open connections (the polling thread's alone) */
    AddrCount *addrs;         /* (naddrs, a power of two) the polling thread's alone */
    size_t naddrs;
    uint64_t addr_seed;
    pthread_mutex_t conn_mu;  /* the lists, closing and each Conn's list and closing */
    ConnList fresh, kept;
    long closing;             /* connections shut down, not yet closed */
    atomic_long refused, evicted, timed_out, idle_closed;
    pthread_t sweeper;
    pthread_cond_t sweep_cv;  /* (conn_mu) signalled to stop the sweeper */
    bool sweeping;            /* (conn_mu) */
    atomic_bool stopping;
    pthread_mutex_t log_mu;
};

enum Route { R_NONE, R_TRANSLATE, R_NATIVE, R_LANGUAGES, R_SETTINGS, R_HEALTH, R_PAGE, R_PREFLIGHT };

/* One request, from its first byte to its answer. */
typedef struct Req {
    Server *s;
    struct MHD_Connection *conn;
    enum Route route;
    char method[8], url[64];
    double t0;
    bool submitted;          /* its job went to the batcher */
    /* body */
    Buf body;
    ServeForm fr;            /* a form body's reader (form) */
    bool form, answered;
    int status;              /* an error found while reading (0: none) */
    Err err;
    /* translation */
    ServeRequest rq;
    int pair;
    bool auto_source;
    ServeJob job;
    atomic_bool done;
    TranslateCons *cons;     /* (texts) the constraints of each text, or NULL */
    int texts;               /* for the log */
    int answer;              /* status sent */
} Req;

/* ---- responses ---- */

static enum MHD_Result send_body(Req *r, int status, const char *type, char *data, size_t len, bool owned)
{
    struct MHD_Response *resp = owned ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE)
                                      : MHD_create_response_from_buffer(len, data, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (owned)
            free(data);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", type);
    if (r->s->c.cors) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->s->c.cors);
        MHD_add_response_header(resp, "Vary", "Origin");
    }
    if (atomic_load(&r->s->stopping))
        MHD_add_response_header(resp, "Connection", "close");
    if (status == 405)
        MHD_add_response_header(resp, "Allow", r->route == R_TRANSLATE || r->route == R_NATIVE ? "POST" : "GET");
    if (status == 204) {
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Content-Type");
        MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
    }
    enum MHD_Result ok = MHD_queue_response(r->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    r->answered = true;
    r->answer = status;
    return ok;
}

static enum MHD_Result send_json(Req *r, int status, Buf *b)
{
    buf_putc(b, '\n');
    size_t len = b->len;
    return send_body(r, status, "application/json", buf_take(b), len, true);
}

static enum MHD_Result send_error(Req *r, int status, const char *msg)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "error", msg);
    json_close(&w);
    return send_json(r, status, &b);
}

/* ---- the log ---- */

static void log_line(Server *s, const char *fmt, ...) S2S_PRINTF(2, 3);
static void log_line(Server *s, const char *fmt, ...)
{
    if (!s->c.log)
        return;
    char when[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->log_mu);
    fprintf(s->c.log, "%s ", when);
    vfprintf(s->c.log, fmt, ap);
    fputc('\n', s->c.log);
    fflush(s->c.log);
    pthread_mutex_unlock(&s->log_mu);
    va_end(ap);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    Server *s = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    log_line(s, "libmicrohttpd: %s", msg);
}

/* ---- connections ---- */

/* libmicrohttpd's own limit stays this far above max_conns, so that the accept policy
   sees every new connection (at its own limit libmicrohttpd stops accepting, leaving
   new clients waiting in the backlog) and connections shut down but not yet closed
   have room. */
enum { CONN_SLACK = 64 };

/* The address a connection counts against: an IPv4 address as its IPv4-mapped IPv6
   form, an IPv6 address by its /64 prefix (what one host or one network is given). */
static void addr_key(const struct sockaddr *a, unsigned char key[16])
{
    memset(key, 0, 16);
    if (a->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
    } else if (a->sa_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (!memcmp(b, mapped, 12))
            memcpy(key, b, 16);
        else
            memcpy(key, b, 8);
    }
}

static size_t addr_home(const Server *s, const unsigned char *key)
{
    uint64_t h = s->addr_seed;
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 0x100000001b3ULL;
    h ^= h >> 29;
    return (size_t)h & (s->naddrs - 1);
}

/* The slot that holds key, or the empty slot where it would go. */
static size_t addr_slot(const Server *s, const unsigned char *key)
{
    size_t i = addr_home(s, key);
    while (s->addrs[i].n && memcmp(s->addrs[i].key, key, 16) != 0)
        i = (i + 1) & (s->naddrs - 1);
    return i;
}

/* Adds d (+1 or -1) to the count of key; a count that reaches 0 leaves the table
   (linear probing's backward shift, so that no slot is left marked deleted). */
static void addr_add(Server *s, const unsigned char *key, int d)
{
    size_t mask = s->naddrs - 1, i = addr_slot(s, key);
    if (d > 0) {
        memcpy(s->addrs[i].key, key, 16);
        s->addrs[i].n += d;
        return;
    }
    if (!s->addrs[i].n || (s->addrs[i].n += d) > 0)
        return;
    for (size_t j = i;;) {
        s->addrs[i].n = 0;
        size_t home;
        do {
            j = (j + 1) & mask;
            if (!s->addrs[j].n)
                return;
            home = addr_home(s, s->addrs[j].key);
        } while (i <= j ? i < home && home <= j : i < home || home <= j);
        s->addrs[i] = s->addrs[j];
        i = j;
    }
}

static void list_append(ConnList *l, Conn *c)
{
    c->list = l;
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_remove(Conn *c)
{
    ConnList *l = c->list;
    if (!l)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->list = NULL;
    c->prev = c->next = NULL;
}

/* Shuts a waiting connection down (conn_mu held): its client sees the connection
   closed, and libmicrohttpd, reading its end, closes it (notify_connection). Only the
   polling thread closes a connection's descriptor, and only after the notification
   that takes it out of the lists, so fd is still this connection's. */
static void conn_shut(Server *s, Conn *c, atomic_long *count)
{
    list_remove(c);
    c->closing = true;
    s->closing++;
    shutdown(c->fd, SHUT_RDWR);
    atomic_fetch_add(count, 1);
}

/* A connection whose request head is in leaves its list; false when the server has
   already shut it down. */
static bool conn_busy(Server *s, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Conn *c = ci ? ci->socket_context : NULL;
    if (!c)
        return true;
    pthread_mutex_lock(&s->conn_mu);
    bool open = !c->closing;
    list_remove(c);
    pthread_mutex_unlock(&s->conn_mu);
    /* while a request is in progress, libmicrohttpd closes the connection after
       idle_timeout seconds without traffic; a waiting connection has no timeout of
       libmicrohttpd's (the sweeper's deadlines instead), which keeps it in the list
       that libmicrohttpd does not walk whole at each event */
    if (open)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)s->c.idle_timeout);
    return open;
}

/* An answered connection that libmicrohttpd keeps open waits for its next request. */
static void conn_kept(Server *s, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Conn *c = ci ? ci->socket_context : NULL;
    if (!c)
        return;
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    pthread_mutex_lock(&s->conn_mu);
    if (!c->closing && !c->list) {
        c->since = clock_now();
        list_append(&s->kept, c);
    }
    pthread_mutex_unlock(&s->conn_mu);
}

/* A new connection: refused (closed at once) when its address has max_conns_per_ip
   open, or when max_conns are open and none of them waits; otherwise accepted, and at
   max_conns the oldest waiting connection, a fresh one first, is shut down for it.
   Connections shut down and not yet closed may take half of CONN_SLACK more; beyond,
   a new one is refused until libmicrohttpd has closed them (within its next turn). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    Server *s = cls;
    unsigned char key[16];
    addr_key(addr, key);
    if (s->addrs[addr_slot(s, key)].n >= s->c.max_conns_per_ip) {
        atomic_fetch_add(&s->refused, 1);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_YES;
    pthread_mutex_lock(&s->conn_mu);
    bool full = s->conns - s->closing >= s->c.max_conns;
    Conn *old = !full ? NULL : s->fresh.head ? s->fresh.head : s->kept.head;
    if ((full && !old) || s->conns >= (long)s->c.max_conns + CONN_SLACK / 2) {
        atomic_fetch_add(&s->refused, 1);
        ok = MHD_NO;
    } else if (old) {
        conn_shut(s, old, &s->evicted);
    }
    pthread_mutex_unlock(&s->conn_mu);
    return ok;
}

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    Server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        Conn *c = XCNEW(Conn, 1);
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        c->fd = fd ? fd->connect_fd : -1;
        if (ad)
            addr_key(ad->client_addr, c->addr);
        addr_add(s, c->addr, 1);
        pthread_mutex_lock(&s->conn_mu);
        c->since = clock_now();
        list_append(&s->fresh, c);
        pthread_mutex_unlock(&s->conn_mu);
        *socket_context = c;
        s->conns++;
        serve_batcher_expect(s->batcher, 1);
        return;
    }
    Conn *c = *socket_context;
    if (c) {
        pthread_mutex_lock(&s->conn_mu);
        list_remove(c);
        if (c->closing)
            s->closing--;
        pthread_mutex_unlock(&s->conn_mu);
        addr_add(s, c->addr, -1);
        free(c);
        *socket_context = NULL;
    }
    s->conns--;
    serve_batcher_expect(s->batcher, -1);
}

/* The sweeper thread: shuts down a fresh connection head_timeout seconds after its
   accept and a kept one idle_timeout seconds after its last answer. Each list is in
   the order of its deadlines; it looks again at the next one, at most 0.1 s later
   (a connection that joins a list has a later deadline than any before it). */
static void *sweep(void *arg)
{
    Server *s = arg;
    pthread_mutex_lock(&s->conn_mu);
    while (s->sweeping) {
        double now = clock_now(), next = now + 0.1;
        while (s->fresh.head && s->fresh.head->since + s->c.head_timeout <= now)
            conn_shut(s, s->fresh.head, &s->timed_out);
        while (s->kept.head && s->kept.head->since + s->c.idle_timeout <= now)
            conn_shut(s, s->kept.head, &s->idle_closed);
        if (s->fresh.head && s->fresh.head->since + s->c.head_timeout < next)
            next = s->fresh.head->since + s->c.head_timeout;
        if (s->kept.head && s->kept.head->since + s->c.idle_timeout < next)
            next = s->kept.head->since + s->c.idle_timeout;
        /* the condition variable's clock is clock_now's (CLOCK_MONOTONIC) */
        struct timespec at = {.tv_sec = (time_t)next};
        at.tv_nsec = (long)((next - (double)at.tv_sec) * 1e9);
        pthread_cond_timedwait(&s->sweep_cv, &s->conn_mu, &at);
    }
    pthread_mutex_unlock(&s->conn_mu);
    return NULL;
}

/* ---- languages ---- */

/* The pair that translates src into tgt, or -1. */
static int find_pair(const Server *s, const Lang *src, const Lang *tgt)
{
    for (int i = 0; i < s->c.npairs; i++) {
        const Direction *d = &s->c.pairs[i].model->text.dir;
        if (lang_eq(d->src, *src) && lang_eq(d->tgt, *tgt))
            return i;
    }
    return -1;
}

static bool has_lang(const Server *s, const Lang *l, bool as_src)
{
    for (int i = 0; i < s->c.npairs; i++) {
        const Direction *d = &s->c.pairs[i].model->text.dir;
        if (lang_eq(as_src ? d->src : d->tgt, *l))
            return true;
    }
    return false;
}

static void put_languages(Server *s, Buf *b)
{
    JsonWriter w;
    json_writer_init(&w, b, JSON_LINE);
    json_open_array(&w, NULL);
    /* each source once, in the order of the models */
    for (int i = 0; i < s->c.npairs; i++) {
        const Lang *src = &s->c.pairs[i].model->text.dir.src;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = lang_eq(s->c.pairs[k].model->text.dir.src, *src);
        if (seen)
            continue;
        json_open_object(&w, NULL);
        json_put_str(&w, "code", src->code);
        json_put_str(&w, "name", lang_label(src));
        json_open_array(&w, "targets");
        for (int k = i; k < s->c.npairs; k++)
            if (lang_eq(s->c.pairs[k].model->text.dir.src, *src))
                json_put_str(&w, NULL, s->c.pairs[k].model->text.dir.tgt.code);
        json_close(&w);
        json_close(&w);
    }
    json_close(&w);
}

/* Picks the pair of a checked request: 0, or -1 with status and message set. */
static int pick_pair(Req *r)
{
    Server *s = r->s;
    ServeRequest *q = &r->rq;
    Lang tgt, src;
    r->status = 400;
    if (lang_parse(q->target, &tgt) != 0 || !has_lang(s, &tgt, false)) {
        if (!ascii_printable(q->target, 33))
            return err_set(&r->err, "Invalid request: target is not a language code");
        return err_set(&r->err, "%s is not supported", q->target);
    }
    if (!strcmp(q->source, "auto")) {
        int found = -1, count = 0;
        for (int i = 0; i < s->c.npairs; i++)
            if (lang_eq(s->c.pairs[i].model->text.dir.tgt, tgt))
                found = i, count++;
        if (count > 1)
            return err_set(&r->err, "Invalid request: source auto: several languages translate into %s; give one",
                           tgt.code);
        r->pair = found;
        r->auto_source = true;
        return 0;
    }
    if (lang_parse(q->source, &src) != 0 || !has_lang(s, &src, true)) {
        if (!ascii_printable(q->source, 33))
            return err_set(&r->err, "Invalid request: source is not a language code");
        return err_set(&r->err, "%s is not supported", q->source);
    }
    r->pair = find_pair(s, &src, &tgt);
    if (r->pair < 0)
        return err_set(&r->err, "Invalid request: no model translates %s into %s", src.code, tgt.code);
    return 0;
}

/* ---- translation ---- */

static void job_done(ServeJob *j, void *arg)
{
    Req *r = arg;
    atomic_store(&r->done, true);
    MHD_resume_connection(r->conn);
}

static bool key_ok(const Server *s, const char *key)
{
    if (s->c.nkeys == 0)
        return true;
    if (!key)
        return false;
    for (int i = 0; i < s->c.nkeys; i++)
        if (!strcmp(s->c.keys[i], key))
            return true;
    return false;
}

/* The request's body is in: checks it and queues its job (0), or sets the error (-1). */
static int start_translation(Req *r)
{
    Server *s = r->s;
    ServeRequest *q = &r->rq;
    if (!r->form && serve_request_json(q, r->body.data ? r->body.data : "", r->body.len, &r->status, &r->err) != 0)
        return -1;
    if (!key_ok(s, q->api_key)) {
        r->status = 403;
        return err_set(&r->err, "Invalid API key");
    }
    if (serve_request_check(q, &s->c.lim, &r->status, &r->err) != 0)
        return -1;
    if (q->precision && strcmp(q->precision, s->c.precision) != 0) {
        r->status = 400;
        return err_set(&r->err, "Invalid request: precision is the server's (%s, its --precision)", s->c.precision);
    }
    if (pick_pair(r) != 0)
        return -1;
    TranslateOpts o = s->c.opts;
    if (q->api == SERVE_LIBRE) {
        o.nbest = q->alternatives + 1;
    } else {
        if (q->beam > 0)
            o.beam = q->beam;
        if (q->alpha >= 0)
            o.alpha = q->alpha;
        if (q->max_len > 0)
            o.max_len = q->max_len;
        if (q->split >= 0)
            o.split = q->split;
        o.attention = q->attention == 1;
        o.nbest = q->nbest > 0 ? q->nbest : 1;
    }
    if (o.nbest > o.beam)
        o.beam = o.nbest;
    r->texts = q->nq;
    const Glossary *gl = s->c.pairs[r->pair].glossary;
    if (!translate_cons_empty(&q->cons) || gl) {
        r->cons = XCNEW(TranslateCons, q->nq);
        for (int i = 0; i < q->nq; i++) {
            TranslateCons *c = &r->cons[i];
            const TranslateCons *qc = &q->cons;
            c->phrases = XNEW(char *, qc->n ? qc->n : 1);
            for (int k = 0; k < qc->n; k++)
                c->phrases[c->n++] = xstrdup(qc->phrases[k]);
            c->avoid = XNEW(char *, qc->navoid ? qc->navoid : 1);
            for (int k = 0; k < qc->navoid; k++)
                c->avoid[c->navoid++] = xstrdup(qc->avoid[k]);
            c->prefix = qc->prefix ? xstrdup(qc->prefix) : NULL;
            if (gl)
                glossary_apply(gl, q->q[i], q->qlen[i], c);
        }
    }
    r->job = (ServeJob){.model = s->c.pairs[r->pair].model, .opts = o, .lines = (const char *const *)q->q,
                        .lens = q->qlen, .n = q->nq, .cons = r->cons, .done = job_done, .arg = r};
    MHD_suspend_connection(r->conn);
    r->submitted = true;
    serve_batcher_expect(s->batcher, -1);
    serve_batcher_submit(s->batcher, &r->job);
    return 0;
}

static enum MHD_Result answer_libre(Req *r)
{
    const TranslateResult *res = &r->job.res;
    const ServeRequest *q = &r->rq;
    const Direction *d = &r->s->c.pairs[r->pair].model->text.dir;
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    if (r->auto_source) {
        if (q->q_array)
            json_open_array(&w, "detectedLanguage");
        for (int i = 0; i < res->n; i++) {
            json_open_object(&w, q->q_array ? NULL : "detectedLanguage");
            json_put_int(&w, "confidence", 100);
            json_put_str(&w, "language", d->src.code);
            json_close(&w);
        }
        if (q->q_array)
            json_close(&w);
    }
    if (q->q_array)
        json_open_array(&w, "translatedText");
    for (int i = 0; i < res->n; i++)
        json_put_str(&w, q->q_array ? NULL : "translatedText", res->hyps[i][0].text);
    if (q->q_array)
        json_close(&w);
    if (q->alternatives > 0) {
        if (q->q_array)
            json_open_array(&w, "alternatives");
        for (int i = 0; i < res->n; i++) {
            json_open_array(&w, q->q_array ? NULL : "alternatives");
            for (int k = 1; k < res->count[i]; k++)
                json_put_str(&w, NULL, res->hyps[i][k].text);
            json_close(&w);
        }
        if (q->q_array)
            json_close(&w);
    }
    json_close(&w);
    return send_json(r, 200, &b);
}

static enum MHD_Result answer_native(Req *r)
{
    Server *s = r->s;
    const TranslateResult *res = &r->job.res;
    const TranslateOpts *o = &r->job.opts;
    const Direction *d = &s->c.pairs[r->pair].model->text.dir;
    Buf b = {0}, svg = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "source", d->src.code);
    json_put_str(&w, "target", d->tgt.code);
    json_put_str(&w, "model", s->c.pairs[r->pair].name);
    json_put_int(&w, "beam", o->beam);
    json_put_double(&w, "length_penalty", "%g", o->alpha);
    json_put_str(&w, "precision", s->c.precision);
    json_put_bool(&w, "split", o->split && o->nbest <= 1 && !o->attention);
    json_open_array(&w, "translations");
    for (int i = 0; i < res->n; i++) {
        json_open_object(&w, NULL);
        json_put_str(&w, "text", res->hyps[i][0].text);
        json_put_f64(&w, "score", res->hyps[i][0].score);
        if (o->nbest > 1) {
            json_open_array(&w, "nbest");
            for (int k = 0; k < res->count[i]; k++) {
                json_open_object(&w, NULL);
                json_put_str(&w, "text", res->hyps[i][k].text);
                json_put_f64(&w, "score", res->hyps[i][k].score);
                json_close(&w);
            }
            json_close(&w);
        }
        if (res->align) {
            const TranslateAlign *a = &res->align[i];
            json_open_object(&w, "attention");
            json_open_array(&w, "source");
            for (int k = 0; k < a->nsrc; k++)
                json_put_str(&w, NULL, a->src[k]);
            json_close(&w);
            json_open_array(&w, "target");
            for (int k = 0; k < a->ntgt; k++)
                json_put_str(&w, NULL, a->tgt[k]);
            json_close(&w);
            json_open_array(&w, "weights");
            for (int t = 0; t < a->ntgt; t++) {
                json_open_array(&w, NULL);
                for (int k = 0; k < a->nsrc; k++)
                    json_put_f32(&w, NULL, a->w[(size_t)t * a->nsrc + k]);
                json_close(&w);
            }
            json_close(&w);
            buf_clear(&svg);
            if (a->nsrc > 0)
                align_svg(a, r->rq.q[i], &svg);
            json_put_str(&w, "svg", svg.data ? svg.data : "");
            json_close(&w);
        }
        json_close(&w);
    }
    json_close(&w);
    json_close(&w);
    buf_free(&svg);
    return send_json(r, 200, &b);
}

/* ---- routing ---- */

static enum Route route_of(const char *url, bool *known)
{
    *known = true;
    if (!strcmp(url, "/translate"))
        return R_TRANSLATE;
    if (!strcmp(url, "/s2s/translate"))
        return R_NATIVE;
    if (!strcmp(url, "/languages"))
        return R_LANGUAGES;
    if (!strcmp(url, "/frontend/settings"))
        return R_SETTINGS;
    if (!strcmp(url, "/health"))
        return R_HEALTH;
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return R_PAGE;
    *known = false;
    return R_NONE;
}

static bool post_route(enum Route rt)
{
    return rt == R_TRANSLATE || rt == R_NATIVE;
}

static enum MHD_Result answer_get(Req *r)
{
    Server *s = r->s;
    Buf b = {0};
    if (r->route == R_PAGE)
        return send_body(r, 200, "text/html; charset=utf-8", (char *)serve_page_html, serve_page_len, false);
    if (r->route == R_LANGUAGES) {
        put_languages(s, &b);
        return send_json(r, 200, &b);
    }
    JsonWriter w;
    if (r->route == R_SETTINGS) { /* what LibreTranslate's front ends read first */
        const Direction *d = &s->c.pairs[0].model->text.dir;
        json_writer_init(&w, &b, JSON_LINE);
        json_open_object(&w, NULL);
        json_put_int(&w, "charLimit", s->c.lim.max_chars);
        json_put_bool(&w, "apiKeys", s->c.nkeys > 0);
        json_put_bool(&w, "keyRequired", s->c.nkeys > 0);
        json_put_bool(&w, "suggestions", false);
        json_put_bool(&w, "filesTranslation", false);
        json_open_array(&w, "supportedFilesFormat");
        json_close(&w);
        json_open_object(&w, "language");
        json_open_object(&w, "source");
        json_put_str(&w, "code", d->src.code);
        json_put_str(&w, "name", lang_label(&d->src));
        json_close(&w);
        json_open_object(&w, "target");
        json_put_str(&w, "code", d->tgt.code);
        json_put_str(&w, "name", lang_label(&d->tgt));
        json_close(&w);
        json_close(&w);
        json_close(&w);
        return send_json(r, 200, &b);
    }
    ServeBatchStats st = serve_batcher_stats(s->batcher);
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "status", "ok");
    json_open_array(&w, "pairs");
    for (int i = 0; i < s->c.npairs; i++)
        json_put_str(&w, NULL, s->c.pairs[i].model->text.dir.name);
    json_close(&w);
    json_put_str(&w, "precision", s->c.precision);
    json_put_int(&w, "requests", atomic_load(&s->requests));
    json_put_int(&w, "batches", st.batches);
    json_put_int(&w, "texts", st.texts);
    json_put_double(&w, "decoding_seconds", "%.3f", st.busy);
    json_open_object(&w, "connections");
    json_put_int(&w, "open", s->conns);
    json_put_int(&w, "refused", atomic_load(&s->refused));
    json_put_int(&w, "evicted", atomic_load(&s->evicted));
    json_put_int(&w, "timed_out", atomic_load(&s->timed_out));
    json_put_int(&w, "idle_closed", atomic_load(&s->idle_closed));
    json_close(&w);
    json_close(&w);
    return send_json(r, 200, &b);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    Server *s = cls;
    Req *r = *con_cls;
    if (!r) {
        if (!conn_busy(s, conn)) /* past its deadline: already shut down */
            return MHD_NO;
        r = XCNEW(Req, 1);
        *con_cls = r;
        r->s = s;
        r->conn = conn;
        r->t0 = clock_now();
        serve_request_init(&r->rq, SERVE_LIBRE);
        /* what the log and the messages quote: printable ASCII */
        snprintf(r->method, sizeof r->method, "%s", ascii_printable(method, sizeof r->method) ? method : "?");
        snprintf(r->url, sizeof r->url, "%s", ascii_printable(url, sizeof r->url) ? url : "(a path not shown)");
        atomic_fetch_add(&s->inflight, 1);
        atomic_fetch_add(&s->requests, 1);
        bool known;
        r->route = route_of(url, &known);
        if (!known) {
            char msg[128];
            snprintf(msg, sizeof msg, "Not found: %s", r->url);
            return send_error(r, 404, msg);
        }
        if (!strcmp(method, "OPTIONS") && s->c.cors) {
            r->route = R_PREFLIGHT;
            return send_body(r, 204, "text/plain", (char *)"", 0, false);
        }
        bool post = post_route(r->route);
        if (strcmp(method, post ? "POST" : "GET") != 0 && !(!post && !strcmp(method, "HEAD"))) {
            char msg[128];
            snprintf(msg, sizeof msg, "Method not allowed: %s %s", r->method, r->url);
            return send_error(r, 405, msg);
        }
        if (!post)
            return answer_get(r);
        if (r->route == R_NATIVE)
            r->rq.api = SERVE_NATIVE;
        const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (serve_form_type(type)) {
            r->form = true;
            if (serve_form_start(&r->fr, conn, &r->rq) != 0)
                return send_error(r, 400, "Invalid request: a form body without a boundary");
        }
        const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (clen && strtoull(clen, NULL, 10) > s->c.max_body) {
            char msg[128];
            snprintf(msg, sizeof msg, "Request body over %zu bytes (the server's --max-body)", s->c.max_body);
            return send_error(r, 413, msg);
        }
        return MHD_YES;
    }
    if (r->answered) { /* an answer is queued: the rest of the body is dropped */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (clock_now() - r->t0 > s->c.request_timeout) {
            /* libmicrohttpd answers only before the body or after it: the connection is
               closed */
            r->answer = 408;
            return MHD_NO;
        }
        if (r->status == 413)
            return MHD_YES; /* dropped */
        if (r->body.len + n > s->c.max_body) {
            r->status = 413;
            err_set(&r->err, "Request body over %zu bytes (the server's --max-body)", s->c.max_body);
            buf_free(&r->body);
            return MHD_YES;
        }
        if (r->form) {
            r->body.len += n; /* counted only */
            if (!r->status)
                serve_form_feed(&r->fr, upload, n);
        } else {
            buf_append(&r->body, upload, n);
        }
        return MHD_YES;
    }
    /* the body is in, or the job is done */
    if (atomic_load(&r->done)) {
        if (r->job.rc != 0)
            return send_error(r, 400, r->job.err.msg);
        return r->route == R_NATIVE ? answer_native(r) : answer_libre(r);
    }
    if (r->form && serve_form_end(&r->fr) != 0 && !r->status) {
        r->status = r->fr.status;
        r->err = r->fr.err;
    }
    if (r->status || start_translation(r) != 0)
        return send_error(r, r->status ? r->status : 400, r->err.msg);
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
    Server *s = cls;
    Req *r = *con_cls;
    if (why == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        conn_kept(s, conn);
    if (!r)
        return;
    if (r->answer == 408 || why == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
        atomic_fetch_add(&s->timed_out, 1);
    if (r->submitted) /* the connection may send another */
        serve_batcher_expect(s->batcher, 1);
    double ms = (clock_now() - r->t0) * 1e3;
    const char *end = why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed before the answer was sent)";
    if (r->answered)
        log_line(s, "%s %s %d %d texts %.1f ms%s", r->method, r->url, r->answer, r->texts, ms, end);
    else if (r->answer == 408)
        log_line(s, "%s %s 408 %d texts %.1f ms (the body did not arrive within %g s: connection closed)",
                 r->method, r->url, r->texts, ms, s->c.request_timeout);
    else if (why == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
        log_line(s, "%s %s - %d texts %.1f ms (nothing sent or read for %d s: connection closed)", r->method,
                 r->url, r->texts, ms, s->c.idle_timeout);
    else
        log_line(s, "%s %s - %d texts %.1f ms (connection closed before the answer)", r->method, r->url,
                 r->texts, ms);
    serve_form_free(&r->fr);
    buf_free(&r->body);
    if (r->job.res.n)
        translate_result_free(&r->job.res);
    for (int i = 0; r->cons && i < r->texts; i++)
        translate_cons_free(&r->cons[i]);
    free(r->cons);
    serve_request_free(&r->rq);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

/* ---- start and stop ---- */

long serve_files_needed(int max_conns)
{
    return (long)max_conns + CONN_SLACK + 64;
}

Server *serve_start(const ServeConfig *c, Err *e)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", c->port);
    int g = getaddrinfo(c->host, port, &hints, &ai);
    if (g != 0)
        return err_set(e, "cannot listen on %s:%d: %s", c->host, c->port, gai_strerror(g)), NULL;
    Server *s = XCNEW(Server, 1);
    s->c = *c;
    pthread_mutex_init(&s->log_mu, NULL);
    pthread_mutex_init(&s->conn_mu, NULL);
    /* at most max_conns + CONN_SLACK addresses, in a table at most half full */
    s->naddrs = 64;
    while (s->naddrs < 2 * ((size_t)c->max_conns + CONN_SLACK))
        s->naddrs *= 2;
    s->addrs = XCNEW(AddrCount, s->naddrs);
    s->addr_seed = 0xcbf29ce484222325ULL ^ (uint64_t)(clock_now() * 1e9) ^ ((uint64_t)getpid() << 32);
    s->batcher = serve_batcher_start(c->batch_texts, c->batch_wait_ms);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, (uint16_t)c->port, accept_policy, s, handle, s,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)c->max_conns + CONN_SLACK,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, s,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->d) {
        serve_batcher_stop(s->batcher);
        serve_batcher_free(s->batcher);
        pthread_mutex_destroy(&s->log_mu);
        pthread_mutex_destroy(&s->conn_mu);
        free(s->addrs);
        free(s);
        return err_set(e, "cannot listen on %s:%d (the port is in use, or the address is not this machine's)",
                       c->host, c->port), NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : c->port;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->sweep_cv, &ca);
    pthread_condattr_destroy(&ca);
    s->sweeping = true;
    if (pthread_create(&s->sweeper, NULL, sweep, s) != 0)
        die("cannot start the thread that closes late connections");
    return s;
}

int serve_port(const Server *s)
{
    return s->port;
}

void serve_stop(Server *s, double grace)
{
    /* no new connection; the open ones are closed after their next answer */
    atomic_store(&s->stopping, true);
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    double until = clock_now() + grace;
    while (atomic_load(&s->inflight) > 0 && clock_now() < until)
        usleep(10000);
    /* what is still queued is decoded and its connections resumed before they close */
    serve_batcher_stop(s->batcher);
    pthread_mutex_lock(&s->conn_mu);
    s->sweeping = false;
    pthread_cond_signal(&s->sweep_cv);
    pthread_mutex_unlock(&s->conn_mu);
    pthread_join(s->sweeper, NULL);
    pthread_cond_destroy(&s->sweep_cv);
    MHD_stop_daemon(s->d);
    serve_batcher_free(s->batcher);
    pthread_mutex_destroy(&s->log_mu);
    pthread_mutex_destroy(&s->conn_mu);
    free(s->addrs);
    free(s);
}
