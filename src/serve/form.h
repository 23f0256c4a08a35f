/*
 * A form body (application/x-www-form-urlencoded or multipart/form-data) read into a
 * ServeRequest (serve/request.h). libmicrohttpd's post processor decodes the body as it
 * arrives and hands each field over in pieces; a field is whole when the next one
 * begins (another key, or the same key again) or the body ends, and goes to
 * serve_request_field then. The first fault stops the reading: a field
 * serve_request_field refuses (its status and message), or a body the post processor
 * cannot decode (400 "Invalid request: a malformed form body").
 */
#ifndef S2S_SERVE_FORM_H
#define S2S_SERVE_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "serve/request.h"

struct MHD_Connection;
struct MHD_PostProcessor;

typedef struct ServeForm {
    struct MHD_PostProcessor *pp;
    ServeRequest *rq;
    char *key;  /* the field being read, or NULL */
    Buf val;    /* what has come of its value */
    int status; /* the first fault's (0: none) */
    Err err;
} ServeForm;

/* Whether a Content-Type names a form body. */
bool serve_form_type(const char *type);
/* Starts reading conn's body (its Content-Type a form's) into rq: 0, or -1 when the
   post processor cannot read it (a multipart type without a boundary). */
int serve_form_start(ServeForm *f, struct MHD_Connection *conn, ServeRequest *rq);
/* n more bytes of the body (ignored after a fault). */
void serve_form_feed(ServeForm *f, const char *data, size_t n);
/* The body is in: its last field goes over. 0, or -1 with status and err set. */
int serve_form_end(ServeForm *f);
void serve_form_free(ServeForm *f);

#endif
