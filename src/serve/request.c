/* Translation requests: JSON or form fields into a ServeRequest (serve/request.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/utf8.h"
#include "serve/request.h"

void serve_request_init(ServeRequest *r, ServeApi api)
{
    *r = (ServeRequest){.api = api, .beam = -1, .nbest = -1, .max_len = -1, .split = -1,
                        .attention = -1, .alpha = -1};
}

void serve_request_free(ServeRequest *r)
{
    for (int i = 0; i < r->nq; i++)
        free(r->q[i]);
    free(r->q);
    free(r->qlen);
    free(r->source);
    free(r->target);
    free(r->format);
    free(r->api_key);
    free(r->precision);
    for (int k = 0; k < r->cons.n; k++)
        free(r->cons.phrases[k]);
    for (int k = 0; k < r->cons.navoid; k++)
        free(r->cons.avoid[k]);
    free(r->cons.phrases);
    free(r->cons.avoid);
    free(r->cons.prefix);
    serve_request_init(r, r->api);
}

static int bad(int *status, Err *e, const char *fmt, const char *a)
{
    *status = 400;
    return err_set(e, fmt, a);
}

/* A field's value as either body gives it: a JSON value, or a form string. */
typedef struct Val {
    const JsonVal *json; /* NULL: a form string */
    const char *s;
    size_t n;
} Val;

static int val_str(const Val *v, const char *key, char **out, int *status, Err *e)
{
    const char *s = v->s;
    size_t n = v->n;
    if (v->json) {
        if (v->json->type != JSON_STRING)
            return bad(status, e, "Invalid request: %s parameter is not a string", key);
        s = v->json->u.str.s;
        n = v->json->u.str.len;
    }
    if (*out)
        return bad(status, e, "Invalid request: %s parameter given twice", key);
    if (memchr(s, '\0', n))
        return bad(status, e, "Invalid request: %s holds a NUL character", key);
    *out = xstrndup(s, n);
    return 0;
}

/* A form field's number (strtod's syntax, finite): whether it is one. */
static bool form_number(const Val *v, double *x)
{
    char tmp[64], *end;
    if (v->n == 0 || v->n >= sizeof tmp)
        return false;
    memcpy(tmp, v->s, v->n);
    tmp[v->n] = '\0';
    *x = strtod(tmp, &end);
    return !*end && isfinite(*x);
}

/* An integer in [lo, hi]: a JSON integer, or a form field holding one. */
static int val_int(const Val *v, const char *key, int lo, int hi, int *out, int *status, Err *e)
{
    double x;
    if (v->json ? v->json->type != JSON_NUMBER || !v->json->is_int : !form_number(v, &x) || x != floor(x))
        return bad(status, e, "Invalid request: %s parameter is not a number", key);
    if (v->json)
        x = v->json->u.num.i < lo ? lo - 1.0 : v->json->u.num.i > hi ? hi + 1.0 : (double)v->json->u.num.i;
    if (x < lo || x > hi) {
        *status = 400;
        return err_set(e, "Invalid request: %s must be between %d and %d", key, lo, hi);
    }
    *out = (int)x;
    return 0;
}

static int val_double(const Val *v, const char *key, double lo, double hi, double *out, int *status,
                      Err *e)
{
    double x;
    if (v->json ? v->json->type != JSON_NUMBER : !form_number(v, &x))
        return bad(status, e, "Invalid request: %s parameter is not a number", key);
    if (v->json)
        x = v->json->u.num.d;
    if (!(x >= lo && x <= hi)) {
        *status = 400;
        return err_set(e, "Invalid request: %s must be between %g and %g", key, lo, hi);
    }
    *out = x;
    return 0;
}

/* true/false: a JSON boolean, or the form strings "true", "false", "1", "0". */
static int val_bool(const Val *v, const char *key, int *out, int *status, Err *e)
{
    if (v->json) {
        if (v->json->type != JSON_BOOL)
            return bad(status, e, "Invalid request: %s parameter is not a boolean", key);
        *out = v->json->b;
        return 0;
    }
    if ((v->n == 4 && !memcmp(v->s, "true", 4)) || (v->n == 1 && v->s[0] == '1'))
        *out = 1;
    else if ((v->n == 5 && !memcmp(v->s, "false", 5)) || (v->n == 1 && v->s[0] == '0'))
        *out = 0;
    else
        return bad(status, e, "Invalid request: %s parameter is not a boolean", key);
    return 0;
}

/* An array of strings (JSON only; a form field is one string, taken as an array of
   one). */
static int val_strs(const Val *v, const char *key, char ***out, int *n, int *status, Err *e)
{
    if (*out)
        return bad(status, e, "Invalid request: %s parameter given twice", key);
    if (!v->json) {
        if (memchr(v->s, '\0', v->n))
            return bad(status, e, "Invalid request: %s holds a NUL character", key);
        *out = XNEW(char *, 1);
        (*out)[0] = xstrndup(v->s, v->n);
        *n = 1;
        return 0;
    }
    if (v->json->type != JSON_ARRAY)
        return bad(status, e, "Invalid request: %s parameter is not an array of strings", key);
    *out = XNEW(char *, v->json->u.c.n ? v->json->u.c.n : 1);
    for (size_t k = 0; k < v->json->u.c.n; k++) {
        const JsonVal *it = &v->json->u.c.items[k];
        if (it->type != JSON_STRING || memchr(it->u.str.s, '\0', it->u.str.len)) {
            *status = 400;
            return err_set(e, "Invalid request: %s[%zu] is not a string without NUL characters", key, k);
        }
        (*out)[(*n)++] = xstrndup(it->u.str.s, it->u.str.len);
    }
    return 0;
}

static void q_add(ServeRequest *r, const char *s, size_t n)
{
    XRENEW(r->q, r->nq + 1);
    XRENEW(r->qlen, r->nq + 1);
    r->q[r->nq] = xstrndup(s, n);
    r->qlen[r->nq] = n;
    r->nq++;
}

static int set_q(ServeRequest *r, const Val *v, int *status, Err *e)
{
    if (r->has_q)
        return bad(status, e, "Invalid request: %s parameter given twice", "q");
    r->has_q = true;
    if (!v->json) {
        q_add(r, v->s, v->n);
        return 0;
    }
    const JsonVal *j = v->json;
    if (j->type == JSON_STRING) {
        q_add(r, j->u.str.s, j->u.str.len);
        return 0;
    }
    if (j->type != JSON_ARRAY)
        return bad(status, e, "Invalid request: %s parameter is not a string or an array of strings", "q");
    r->q_array = true;
    for (size_t i = 0; i < j->u.c.n; i++) {
        const JsonVal *it = &j->u.c.items[i];
        if (it->type != JSON_STRING) {
            *status = 400;
            return err_set(e, "Invalid request: q[%zu] is not a string", i);
        }
        q_add(r, it->u.str.s, it->u.str.len);
    }
    return 0;
}

static int set_field(ServeRequest *r, const char *key, const Val *v, int *status, Err *e)
{
    if (!strcmp(key, "q"))
        return set_q(r, v, status, e);
    if (!strcmp(key, "source"))
        return val_str(v, key, &r->source, status, e);
    if (!strcmp(key, "target"))
        return val_str(v, key, &r->target, status, e);
    if (!strcmp(key, "format"))
        return val_str(v, key, &r->format, status, e);
    if (!strcmp(key, "api_key"))
        return val_str(v, key, &r->api_key, status, e);
    if (r->api == SERVE_LIBRE) {
        if (!strcmp(key, "alternatives")) {
            /* LibreTranslate takes a number or a string of one */
            Val s = *v;
            if (v->json && v->json->type == JSON_STRING)
                s = (Val){NULL, v->json->u.str.s, v->json->u.str.len};
            return val_int(&s, key, 0, 1000, &r->alternatives, status, e);
        }
        return 0; /* LibreTranslate ignores what it does not know */
    }
    if (!strcmp(key, "beam"))
        return val_int(v, key, 1, 1000, &r->beam, status, e);
    if (!strcmp(key, "nbest"))
        return val_int(v, key, 1, 1000, &r->nbest, status, e);
    if (!strcmp(key, "max_len"))
        return val_int(v, key, 1, 1000000, &r->max_len, status, e);
    if (!strcmp(key, "length_penalty"))
        return val_double(v, key, 0, 10, &r->alpha, status, e);
    if (!strcmp(key, "split"))
        return val_bool(v, key, &r->split, status, e);
    if (!strcmp(key, "attention"))
        return val_bool(v, key, &r->attention, status, e);
    if (!strcmp(key, "precision"))
        return val_str(v, key, &r->precision, status, e);
    if (!strcmp(key, "prefix"))
        return val_str(v, key, &r->cons.prefix, status, e);
    if (!strcmp(key, "constraints"))
        return val_strs(v, key, &r->cons.phrases, &r->cons.n, status, e);
    if (!strcmp(key, "avoid"))
        return val_strs(v, key, &r->cons.avoid, &r->cons.navoid, status, e);
    if (!ascii_printable(key, 64))
        return bad(status, e, "%s", "Invalid request: an unknown parameter");
    return bad(status, e, "Invalid request: unknown parameter '%s'", key);
}

int serve_request_json(ServeRequest *r, const char *body, size_t len, int *status, Err *e)
{
    Json doc;
    Err je;
    if (json_parse(&doc, body, len, &je) != 0) {
        *status = 400;
        return err_set(e, "Invalid JSON: %s", je.msg);
    }
    int rc = 0;
    if (doc.root->type != JSON_OBJECT)
        rc = bad(status, e, "%s", "Invalid JSON format");
    for (size_t k = 0; rc == 0 && k < doc.root->u.c.n; k++) {
        const JsonKey *key = &doc.root->u.c.keys[k];
        if (strlen(key->s) != key->len) {
            rc = bad(status, e, "%s", "Invalid request: a parameter name holds a NUL byte");
            break;
        }
        Val v = {&doc.root->u.c.items[k], NULL, 0};
        rc = set_field(r, key->s, &v, status, e);
    }
    json_free(&doc);
    return rc;
}

int serve_request_field(ServeRequest *r, const char *key, const char *value, size_t n, int *status,
                        Err *e)
{
    Val v = {NULL, value, n};
    return set_field(r, key, &v, status, e);
}

int serve_request_check(ServeRequest *r, const ServeLimits *lim, int *status, Err *e)
{
    *status = 400;
    if (!r->has_q || r->nq == 0)
        return err_set(e, "Invalid request: missing q parameter");
    if (!r->source)
        return err_set(e, "Invalid request: missing source parameter");
    if (!r->target)
        return err_set(e, "Invalid request: missing target parameter");
    if (r->format && strcmp(r->format, "text") != 0) {
        if (!ascii_printable(r->format, 32))
            return err_set(e, "Invalid request: unknown format");
        return err_set(e, "%s format is not supported", r->format);
    }
    if (r->nq > lim->max_texts)
        return err_set(e, "Invalid request: %d texts exceed the limit of %d", r->nq, lim->max_texts);
    r->chars = 0;
    for (int i = 0; i < r->nq; i++) {
        size_t ok = utf8_check(r->q[i], r->qlen[i]);
        if (ok != r->qlen[i])
            return r->q_array ? err_set(e, "Invalid request: q[%d]: invalid UTF-8 at byte %zu", i, ok + 1)
                              : err_set(e, "Invalid request: q: invalid UTF-8 at byte %zu", ok + 1);
        const char *nul = memchr(r->q[i], '\0', r->qlen[i]);
        if (nul)
            return r->q_array ? err_set(e, "Invalid request: q[%d]: NUL character at byte %zu", i,
                                        (size_t)(nul - r->q[i]) + 1)
                              : err_set(e, "Invalid request: q: NUL character at byte %zu",
                                        (size_t)(nul - r->q[i]) + 1);
        for (size_t k = 0; k < r->qlen[i]; k++)
            r->chars += ((unsigned char)r->q[i][k] & 0xC0) != 0x80;
    }
    const char *what[3] = {"constraints", "avoid", "prefix"};
    for (int w = 0; w < 3; w++) {
        int n = w == 0 ? r->cons.n : w == 1 ? r->cons.navoid : r->cons.prefix != NULL;
        char **list = w == 0 ? r->cons.phrases : w == 1 ? r->cons.avoid : &r->cons.prefix;
        for (int k = 0; k < n; k++) {
            size_t len = strlen(list[k]);
            if (!utf8_valid(list[k], len))
                return err_set(e, "Invalid request: %s: invalid UTF-8", what[w]);
            for (size_t j = 0; j < len; j++)
                r->chars += ((unsigned char)list[k][j] & 0xC0) != 0x80;
        }
    }
    if (r->chars > lim->max_chars)
        return err_set(e, "Invalid request: request (%ld) exceeds text limit (%ld)", r->chars, lim->max_chars);
    if (r->api == SERVE_LIBRE && r->alternatives > lim->beam - 1)
        return err_set(e, "Invalid request: alternatives must be at most %d (the beam size minus 1)",
                       lim->beam - 1);
    if (r->beam > lim->max_beam)
        return err_set(e, "Invalid request: beam must be at most %d (the server's --max-beam)", lim->max_beam);
    int beam = r->beam > 0 ? r->beam : lim->beam;
    if (r->nbest > beam)
        return err_set(e, "Invalid request: nbest must not exceed the beam (%d > %d)", r->nbest, beam);
    if (r->max_len > lim->max_len)
        return err_set(e, "Invalid request: max_len must be at most %d", lim->max_len);
    *status = 0;
    return 0;
}
