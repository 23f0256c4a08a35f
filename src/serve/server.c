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
#include "serve/batcher.h"
#include "serve/conns.h"
#include "serve/form.h"
#include "serve/server.h"

struct Server {
    ServeConfig c;
    struct MHD_Daemon *d;
    ServeBatcher *batcher;
    int port;
    atomic_long inflight, requests;
    ServeConns *conns;
    atomic_bool stopping;
    pthread_mutex_t log_mu;
    /* libmicrohttpd's own lines (a line per connection a client drops): at most
       MHD_LOG_BURST a minute, the rest counted (under log_mu) */
    time_t mhd_minute;
    long mhd_shown, mhd_left_out;
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
    s2s_constraints *cons;   /* (texts) the constraints of each text, or NULL */
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

/* libmicrohttpd's lines: MHD_LOG_BURST in any minute, then none until the next minute,
   whose first line is preceded by how many were left out: a client that opens and drops
   connections by the thousand cannot fill the log. */
enum { MHD_LOG_BURST = 10 };

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    Server *s = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long left_out = 0;
    bool show;
    pthread_mutex_lock(&s->log_mu);
    if (ts.tv_sec - s->mhd_minute >= 60) {
        left_out = s->mhd_left_out;
        s->mhd_minute = ts.tv_sec;
        s->mhd_shown = s->mhd_left_out = 0;
    }
    show = s->mhd_shown < MHD_LOG_BURST;
    if (show)
        s->mhd_shown++;
    else
        s->mhd_left_out++;
    pthread_mutex_unlock(&s->log_mu);
    if (left_out > 0)
        log_line(s, "libmicrohttpd: %ld more of its lines left out in the minute before", left_out);
    if (show)
        log_line(s, "libmicrohttpd: %s", msg);
}

/* ---- connections (serve/conns.h) ---- */

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    Server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        serve_conns_opened(s->conns, conn, socket_context);
        serve_batcher_expect(s->batcher, 1);
        return;
    }
    serve_conns_closed(s->conns, socket_context);
    serve_batcher_expect(s->batcher, -1);
}

/* ---- languages ---- */

static const s2s_model_info *pair_info(const Server *s, int i)
{
    return s2s_translator_info(s->c.pairs[i].tr);
}

/* A language's name for /languages: its English name, else its code. */
static const char *lang_label(const char *code)
{
    const char *name = s2s_language_name(code);
    return name ? name : code;
}

/* The pair that translates src into tgt (canonical codes), or -1. */
static int find_pair(const Server *s, const char *src, const char *tgt)
{
    for (int i = 0; i < s->c.npairs; i++) {
        const s2s_model_info *m = pair_info(s, i);
        if (!strcmp(m->source_lang, src) && !strcmp(m->target_lang, tgt))
            return i;
    }
    return -1;
}

static bool has_lang(const Server *s, const char *l, bool as_src)
{
    for (int i = 0; i < s->c.npairs; i++) {
        const s2s_model_info *m = pair_info(s, i);
        if (!strcmp(as_src ? m->source_lang : m->target_lang, l))
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
        const char *src = pair_info(s, i)->source_lang;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(pair_info(s, k)->source_lang, src);
        if (seen)
            continue;
        json_open_object(&w, NULL);
        json_put_str(&w, "code", src);
        json_put_str(&w, "name", lang_label(src));
        json_open_array(&w, "targets");
        for (int k = i; k < s->c.npairs; k++)
            if (!strcmp(pair_info(s, k)->source_lang, src))
                json_put_str(&w, NULL, pair_info(s, k)->target_lang);
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
    char tgt[4], src[4];
    r->status = 400;
    if (s2s_language_code(q->target, tgt) != 0 || !has_lang(s, tgt, false)) {
        if (!ascii_printable(q->target, 33))
            return err_set(&r->err, "Invalid request: target is not a language code");
        return err_set(&r->err, "%s is not supported", q->target);
    }
    if (!strcmp(q->source, "auto")) {
        int found = -1, count = 0;
        for (int i = 0; i < s->c.npairs; i++)
            if (!strcmp(pair_info(s, i)->target_lang, tgt))
                found = i, count++;
        if (count > 1)
            return err_set(&r->err, "Invalid request: source auto: several languages translate into %s; give one",
                           tgt);
        r->pair = found;
        r->auto_source = true;
        return 0;
    }
    if (s2s_language_code(q->source, src) != 0 || !has_lang(s, src, true)) {
        if (!ascii_printable(q->source, 33))
            return err_set(&r->err, "Invalid request: source is not a language code");
        return err_set(&r->err, "%s is not supported", q->source);
    }
    r->pair = find_pair(s, src, tgt);
    if (r->pair < 0)
        return err_set(&r->err, "Invalid request: no model translates %s into %s", src, tgt);
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
    s2s_translator_options o = s->c.opts;
    if (q->api == SERVE_LIBRE) {
        o.nbest = q->alternatives + 1;
    } else {
        if (q->beam > 0)
            o.beam = q->beam;
        if (q->alpha >= 0)
            o.length_penalty = q->alpha;
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
    const ServeCons *qc = &q->cons;
    if (qc->n || qc->navoid || qc->prefix) { /* the same for every text of q */
        r->cons = XNEW(s2s_constraints, q->nq);
        for (int i = 0; i < q->nq; i++)
            r->cons[i] = (s2s_constraints){.require = (const char *const *)qc->phrases, .nrequire = qc->n,
                                           .avoid = (const char *const *)qc->avoid, .navoid = qc->navoid,
                                           .prefix = qc->prefix};
    }
    r->job = (ServeJob){.tr = s->c.pairs[r->pair].tr, .opts = o, .lines = (const char *const *)q->q,
                        .n = q->nq, .cons = r->cons, .done = job_done, .arg = r};
    MHD_suspend_connection(r->conn);
    r->submitted = true;
    serve_batcher_expect(s->batcher, -1);
    serve_batcher_submit(s->batcher, &r->job);
    return 0;
}

/* Text k of the job's text i (k = 0: the best), its score, its hypotheses. */
static const char *hyp_text(const Req *r, int i, int k)
{
    return s2s_result_text(r->job.res, r->job.at + i, k);
}

static enum MHD_Result answer_libre(Req *r)
{
    const ServeRequest *q = &r->rq;
    const s2s_model_info *m = pair_info(r->s, r->pair);
    const int n = r->job.n;
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    if (r->auto_source) {
        if (q->q_array)
            json_open_array(&w, "detectedLanguage");
        for (int i = 0; i < n; i++) {
            json_open_object(&w, q->q_array ? NULL : "detectedLanguage");
            json_put_int(&w, "confidence", 100);
            json_put_str(&w, "language", m->source_lang);
            json_close(&w);
        }
        if (q->q_array)
            json_close(&w);
    }
    if (q->q_array)
        json_open_array(&w, "translatedText");
    for (int i = 0; i < n; i++)
        json_put_str(&w, q->q_array ? NULL : "translatedText", hyp_text(r, i, 0));
    if (q->q_array)
        json_close(&w);
    if (q->alternatives > 0) {
        if (q->q_array)
            json_open_array(&w, "alternatives");
        for (int i = 0; i < n; i++) {
            json_open_array(&w, q->q_array ? NULL : "alternatives");
            for (int k = 1; k < s2s_result_hypotheses(r->job.res, r->job.at + i); k++)
                json_put_str(&w, NULL, hyp_text(r, i, k));
            json_close(&w);
        }
        if (q->q_array)
            json_close(&w);
    }
    json_close(&w);
    return send_json(r, 200, &b);
}

static void put_attention(JsonWriter *w, const s2s_attention *a, const char *text)
{
    json_open_object(w, "attention");
    json_open_array(w, "source");
    for (int k = 0; k < a->source_len; k++)
        json_put_str(w, NULL, a->source[k]);
    json_close(w);
    json_open_array(w, "target");
    for (int k = 0; k < a->output_len; k++)
        json_put_str(w, NULL, a->output[k]);
    json_close(w);
    json_open_array(w, "weights");
    for (int t = 0; t < a->output_len; t++) {
        json_open_array(w, NULL);
        for (int k = 0; k < a->source_len; k++)
            json_put_f32(w, NULL, a->weights[(size_t)t * a->source_len + k]);
        json_close(w);
    }
    json_close(w);
    char *svg = a->source_len > 0 ? s2s_attention_svg(a, text) : NULL;
    json_put_str(w, "svg", svg ? svg : "");
    s2s_string_free(svg);
    json_close(w);
}

static enum MHD_Result answer_native(Req *r)
{
    Server *s = r->s;
    const s2s_result *res = r->job.res;
    const s2s_translator_options *o = &r->job.opts;
    const s2s_model_info *m = pair_info(s, r->pair);
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "source", m->source_lang);
    json_put_str(&w, "target", m->target_lang);
    json_put_str(&w, "model", s->c.pairs[r->pair].name);
    json_put_int(&w, "beam", o->beam);
    json_put_double(&w, "length_penalty", "%g", o->length_penalty);
    json_put_str(&w, "precision", s->c.precision);
    json_put_bool(&w, "split", o->split && o->nbest <= 1 && !o->attention);
    json_open_array(&w, "translations");
    for (int i = 0; i < r->job.n; i++) {
        const int at = r->job.at + i;
        json_open_object(&w, NULL);
        json_put_str(&w, "text", hyp_text(r, i, 0));
        json_put_f64(&w, "score", s2s_result_score(res, at, 0));
        if (o->nbest > 1) {
            json_open_array(&w, "nbest");
            for (int k = 0; k < s2s_result_hypotheses(res, at); k++) {
                json_open_object(&w, NULL);
                json_put_str(&w, "text", hyp_text(r, i, k));
                json_put_f64(&w, "score", s2s_result_score(res, at, k));
                json_close(&w);
            }
            json_close(&w);
        }
        s2s_attention a;
        if (o->attention && s2s_result_attention(res, at, &a) == 0)
            put_attention(&w, &a, r->rq.q[i]);
        json_close(&w);
    }
    json_close(&w);
    json_close(&w);
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
        const s2s_model_info *m = pair_info(s, 0);
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
        json_put_str(&w, "code", m->source_lang);
        json_put_str(&w, "name", lang_label(m->source_lang));
        json_close(&w);
        json_open_object(&w, "target");
        json_put_str(&w, "code", m->target_lang);
        json_put_str(&w, "name", lang_label(m->target_lang));
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
        json_put_str(&w, NULL, pair_info(s, i)->direction);
    json_close(&w);
    json_put_str(&w, "precision", s->c.precision);
    json_put_int(&w, "requests", atomic_load(&s->requests));
    json_put_int(&w, "batches", st.batches);
    json_put_int(&w, "texts", st.texts);
    json_put_double(&w, "decoding_seconds", "%.3f", st.busy);
    json_open_object(&w, "connections");
    serve_conns_health(s->conns, &w);
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
        if (!serve_conns_busy(s->conns, conn)) /* past its deadline: already shut down */
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
        serve_conns_kept(s->conns, conn);
    if (!r)
        return;
    if (r->answer == 408 || why == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
        serve_conns_timed_out(s->conns);
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
    serve_job_release(&r->job);
    free(r->cons);
    serve_request_free(&r->rq);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

/* ---- start and stop ---- */

long serve_files_needed(int max_conns)
{
    return (long)max_conns + SERVE_CONN_SLACK + 64;
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
    s->conns = serve_conns_create(c->max_conns, c->max_conns_per_ip, c->head_timeout, c->idle_timeout);
    s->batcher = serve_batcher_start(c->batch_texts, c->batch_wait_ms);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, (uint16_t)c->port, serve_conns_accept, s->conns, handle, s,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)c->max_conns + SERVE_CONN_SLACK,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, s,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->d) {
        serve_batcher_stop(s->batcher);
        serve_batcher_free(s->batcher);
        pthread_mutex_destroy(&s->log_mu);
        serve_conns_free(s->conns);
        free(s);
        return err_set(e, "cannot listen on %s:%d (the port is in use, or the address is not this machine's)",
                       c->host, c->port), NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : c->port;
    serve_conns_start(s->conns);
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
    serve_conns_stop(s->conns);
    MHD_stop_daemon(s->d);
    serve_batcher_free(s->batcher);
    pthread_mutex_destroy(&s->log_mu);
    serve_conns_free(s->conns);
    free(s);
}
