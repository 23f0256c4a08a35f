/* Form bodies into a ServeRequest through libmicrohttpd's post processor (serve/form.h). */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/form.h"

bool serve_form_type(const char *type)
{
    return type && (!strncasecmp(type, "application/x-www-form-urlencoded", 33) ||
                    !strncasecmp(type, "multipart/form-data", 19));
}

/* The field read so far is whole: it goes to the request (unless a fault came first). */
static void flush(ServeForm *f)
{
    if (!f->key)
        return;
    if (!f->status && serve_request_field(f->rq, f->key, f->val.data ? f->val.data : "", f->val.len, &f->status,
                                          &f->err) != 0 && !f->status)
        f->status = 400;
    free(f->key);
    f->key = NULL;
    buf_clear(&f->val);
}

/* A piece of a field from the post processor: off is where it lies in the value, 0
   for the first piece of a field. */
static enum MHD_Result field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                             const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
                             size_t size)
{
    ServeForm *f = cls;
    if (!key)
        return MHD_YES;
    if (!f->key || off == 0 || strcmp(f->key, key) != 0) {
        flush(f);
        f->key = xstrdup(key);
    }
    if (size)
        buf_append(&f->val, data, size);
    return MHD_YES;
}

int serve_form_start(ServeForm *f, struct MHD_Connection *conn, ServeRequest *rq)
{
    *f = (ServeForm){.rq = rq};
    f->pp = MHD_create_post_processor(conn, 16 * 1024, field, f);
    return f->pp ? 0 : -1;
}

void serve_form_feed(ServeForm *f, const char *data, size_t n)
{
    if (!f->status && MHD_post_process(f->pp, data, n) != MHD_YES && !f->status) {
        f->status = 400;
        err_set(&f->err, "Invalid request: a malformed form body");
    }
}

int serve_form_end(ServeForm *f)
{
    if (f->pp)
        MHD_destroy_post_processor(f->pp);
    f->pp = NULL;
    flush(f);
    return f->status ? -1 : 0;
}

void serve_form_free(ServeForm *f)
{
    if (f->pp)
        MHD_destroy_post_processor(f->pp);
    f->pp = NULL;
    free(f->key);
    f->key = NULL;
    buf_free(&f->val);
}
