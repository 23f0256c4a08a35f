/*
 * The body of a translation request, LibreTranslate's or the native one, read into a
 * ServeRequest and checked against the server's limits. Nothing here knows HTTP: the
 * server (serve/server.h) hands over a JSON body whole, or a form body field by field
 * as libmicrohttpd's post processor decodes it.
 *
 * Fields (docs/cli/serve.md):
 *   q             a string, or an array of strings (the response then holds arrays);
 *                 in a form, a string
 *   source        a language code, or "auto"
 *   target        a language code
 *   format        "text" ("html" is refused: 400 "html format is not supported")
 *   alternatives  LibreTranslate: how many more translations of each text (0..beam-1)
 *   api_key       checked by the server when it has --api-keys
 * and, in the native request only (a LibreTranslate request ignores unknown fields, as
 * LibreTranslate does; a native one refuses them):
 *   beam, length_penalty, max_len, nbest, split, attention, precision (which must be
 *   the server's own: the weights are quantized once, at start), and the constraints
 *   of every text of q: constraints and avoid (arrays of strings), prefix (a string).
 *
 * Every fault is a status (400, or 413 for a body over the limit) and a message of one
 * line that names it, as LibreTranslate words its own where it has one ("Invalid
 * request: missing q parameter", "zz is not supported", "xml format is not supported",
 * "Invalid request: alternatives parameter is not a number").
 */
#ifndef S2S_SERVE_REQUEST_H
#define S2S_SERVE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

typedef enum ServeApi { SERVE_LIBRE, SERVE_NATIVE } ServeApi;

/* What a request may ask, set by the server's command line. */
typedef struct ServeLimits {
    int max_texts;  /* strings in q */
    long max_chars; /* characters (code points) of all of q together */
    int max_beam;   /* the largest beam a native request may ask */
    int max_len;    /* the largest max_len a native request may ask */
    int beam;       /* the server's beam: alternatives are at most beam - 1 */
} ServeLimits;

/* The constraints a native request gives every text of q (s2s.h's s2s_constraints). */
typedef struct ServeCons {
    int n;
    char **phrases; /* constraints: (n) */
    int navoid;
    char **avoid;   /* (navoid) */
    char *prefix;   /* NULL when absent */
} ServeCons;

typedef struct ServeRequest {
    ServeApi api;
    int nq;
    char **q;       /* (nq) NUL-terminated copies */
    size_t *qlen;
    bool has_q, q_array;
    char *source, *target, *format, *api_key, *precision; /* NULL when absent */
    int alternatives;
    /* native; -1 (alpha < 0) when not given */
    int beam, nbest, max_len, split, attention;
    double alpha;
    ServeCons cons; /* native: constraints, avoid, prefix */
    long chars;     /* code points of all of q, filled by serve_request_check */
} ServeRequest;

void serve_request_init(ServeRequest *r, ServeApi api);
void serve_request_free(ServeRequest *r);

/* A whole JSON body: 0, or -1 with *status and e set (400). */
int serve_request_json(ServeRequest *r, const char *body, size_t len, int *status, Err *e);
/* One field of a form body (value of n bytes, already decoded): 0, or -1 as above. A
   field given twice is refused. */
int serve_request_field(ServeRequest *r, const char *key, const char *value, size_t n,
                        int *status, Err *e);
/* After the body: required fields present, q within the limits, valid UTF-8 without
   NUL bytes, options within their ranges. 0, or -1 with *status and e set. */
int serve_request_check(ServeRequest *r, const ServeLimits *lim, int *status, Err *e);

#endif
