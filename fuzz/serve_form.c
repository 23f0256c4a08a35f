/* Fuzz target: the form bodies of `s2s serve` as its server reads them
   (serve/form.h): a POST whose body is the input goes over a socket pair to a
   libmicrohttpd daemon of this process (no listening socket, run in this thread),
   whose post processor decodes it for serve_form_feed, in the pieces the input asks.
   The first byte picks LibreTranslate's request or the native one (bit 0), the type
   (bits 1-2: urlencoded; multipart with the boundary XyZ; multipart with the boundary
   the input's first line gives, its characters as RFC 2046 allows; multipart without a
   boundary), and where the body is cut (the next two bytes). A refusal is one line
   of UTF-8 with status 400; an accepted request passes serve_request_check or is
   refused by it in one line, and holds what the checks promise. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/utf8.h"
#include "fuzz.h"
#include "serve/form.h"

typedef struct Call {
    ServeApi api;
    ServeRequest rq;
    ServeForm form;
    bool started; /* serve_form_start took the type */
} Call;

static struct MHD_Daemon *daemon_;
static ServeApi next_api;
static bool answered, ended;

static void check_refusal(const Err *e, int status)
{
    CHECK(status == 400);
    size_t n = strnlen(e->msg, sizeof e->msg);
    CHECK(n > 0 && n < sizeof e->msg);
    CHECK(!memchr(e->msg, '\n', n));
    CHECK(utf8_valid(e->msg, n));
}

/* The request read: refused in one line, or within the limits. */
static void check_request(Call *c)
{
    if (!c->started)
        return;
    if (serve_form_end(&c->form) != 0) {
        check_refusal(&c->form.err, c->form.status);
        return;
    }
    ServeRequest *r = &c->rq;
    ServeLimits lim = {.max_texts = 4, .max_chars = 64, .max_beam = 6, .max_len = 50, .beam = 5};
    int status = 0;
    Err e;
    if (serve_request_check(r, &lim, &status, &e) != 0) {
        check_refusal(&e, status);
        return;
    }
    CHECK(r->nq == 1 && !r->q_array && r->source && r->target); /* a form's q is a string */
    CHECK(r->chars <= lim.max_chars);
    CHECK(utf8_valid(r->q[0], r->qlen[0]) && strlen(r->q[0]) == r->qlen[0]);
    CHECK(r->beam <= lim.max_beam && r->max_len <= lim.max_len);
    CHECK(r->alternatives <= lim.beam - 1);
    CHECK(r->nbest <= (r->beam > 0 ? r->beam : lim.beam));
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    Call *c = *con_cls;
    if (!c) {
        c = XCNEW(Call, 1);
        c->api = next_api;
        serve_request_init(&c->rq, c->api);
        const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        CHECK(serve_form_type(type));
        c->started = serve_form_start(&c->form, conn, &c->rq) == 0;
        *con_cls = c;
        return MHD_YES;
    }
    if (*upload_size) {
        if (c->started)
            serve_form_feed(&c->form, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    check_request(c);
    ended = true;
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
    Call *c = *con_cls;
    if (!c)
        return;
    serve_form_free(&c->form);
    serve_request_free(&c->rq);
    free(c);
    *con_cls = NULL;
    answered = true;
}

static void quiet(void *cls, const char *fmt, va_list ap)
{
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        p += k;
        n -= (size_t)k;
    }
}

/* Runs the daemon until done is set or it has no connection (at most 200 turns). */
static void run_until(const bool *done)
{
    for (int i = 0; i < 200 && !*done; i++) {
        MHD_run(daemon_);
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        if (info && info->num_connections == 0)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    if (!daemon_) {
        daemon_ = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, NULL,
                                   MHD_OPTION_EXTERNAL_LOGGER, quiet, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed,
                                   NULL, MHD_OPTION_END);
        if (!daemon_)
            BUG("cannot start a libmicrohttpd daemon");
    }
    next_api = data[0] & 1 ? SERVE_NATIVE : SERVE_LIBRE;
    const char *body = (const char *)data + 3;
    size_t len = size - 3;
    char type[128];
    switch ((data[0] >> 1) & 3) {
    case 0:
        snprintf(type, sizeof type, "application/x-www-form-urlencoded");
        break;
    case 1:
        snprintf(type, sizeof type, "multipart/form-data; boundary=XyZ");
        break;
    case 2: { /* the boundary: the first line, as far as RFC 2046's characters go (1..70) */
        static const char bchars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";
        size_t k = 0, at = 0;
        int n = snprintf(type, sizeof type, "multipart/form-data; boundary=");
        while (at < len && body[at] != '\n' && k < 70) {
            if (body[at] && strchr(bchars, body[at]))
                type[n + k++] = body[at];
            at++;
        }
        if (k == 0)
            type[n + k++] = 'b';
        type[n + k] = '\0';
        if (at < len)
            at++;
        body += at;
        len -= at;
        break;
    }
    default:
        snprintf(type, sizeof type, "multipart/form-data");
        break;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        BUG("socketpair failed");
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(4242)};
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (MHD_add_connection(daemon_, sv[0], (struct sockaddr *)&peer, sizeof peer) != MHD_YES)
        BUG("MHD_add_connection failed");
    answered = ended = false;
    char head[256];
    int hn = snprintf(head, sizeof head,
                      "POST /translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: %s\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      type, len);
    send_all(sv[1], head, (size_t)hn);
    /* the body in up to three pieces, the daemon reading between them */
    size_t cut[2] = {len ? data[1] % (len + 1) : 0, len ? data[2] % (len + 1) : 0};
    if (cut[0] > cut[1]) {
        size_t t = cut[0];
        cut[0] = cut[1];
        cut[1] = t;
    }
    size_t from = 0;
    for (int k = 0; k < 3; k++) {
        size_t to = k < 2 ? cut[k] : len;
        send_all(sv[1], body + from, to - from);
        from = to;
        MHD_run(daemon_);
    }
    run_until(&ended);
    close(sv[1]);
    run_until(&answered);
    return 0;
}
