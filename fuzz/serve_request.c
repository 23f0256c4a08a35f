/* Fuzz target: the request bodies of `s2s serve` (serve/request.h). The first byte
   picks LibreTranslate's request or the native one, and a JSON body or form fields
   (the rest split at '&' and '=' as the post processor would hand them over, without
   its %-decoding); then the checks against small limits. A refusal is one line; an
   accepted request holds 1..max_texts texts of valid UTF-8 without NUL, at most
   max_chars characters, and its options within the limits. */
#include <stdlib.h>

#include "base/utf8.h"
#include "fuzz.h"
#include "serve/request.h"

static void check_refusal(const Err *e, int status)
{
    CHECK(status == 400);
    size_t n = strnlen(e->msg, sizeof e->msg);
    CHECK(n > 0 && n < sizeof e->msg);
    CHECK(!memchr(e->msg, '\n', n));
    /* what the server puts in a JSON answer must be UTF-8 */
    CHECK(utf8_valid(e->msg, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int mode = data[0] & 3;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    ServeRequest r;
    serve_request_init(&r, mode & 1 ? SERVE_NATIVE : SERVE_LIBRE);
    Err e;
    int status = 0, rc = 0;
    if (mode < 2) {
        rc = serve_request_json(&r, body, len, &status, &e);
    } else {
        size_t at = 0;
        while (rc == 0 && at < len) {
            const char *amp = memchr(body + at, '&', len - at);
            size_t end = amp ? (size_t)(amp - body) : len;
            const char *eq = memchr(body + at, '=', end - at);
            size_t kend = eq ? (size_t)(eq - body) : end;
            char *key = fuzz_cstr((const uint8_t *)body + at, kend - at);
            if (strlen(key) == kend - at) /* the post processor's keys are C strings */
                rc = serve_request_field(&r, key, eq ? eq + 1 : "", eq ? end - kend - 1 : 0, &status, &e);
            free(key);
            at = end + 1;
        }
    }
    if (rc != 0) {
        check_refusal(&e, status);
    } else {
        ServeLimits lim = {.max_texts = 4, .max_chars = 64, .max_beam = 6, .max_len = 50, .beam = 5};
        if (serve_request_check(&r, &lim, &status, &e) != 0) {
            check_refusal(&e, status);
        } else {
            CHECK(r.nq >= 1 && r.nq <= lim.max_texts && r.source && r.target);
            CHECK(r.chars <= lim.max_chars);
            for (int i = 0; i < r.nq; i++) {
                CHECK(utf8_valid(r.q[i], r.qlen[i]));
                CHECK(strlen(r.q[i]) == r.qlen[i]);
            }
            CHECK(r.beam <= lim.max_beam && r.max_len <= lim.max_len);
            CHECK(r.alternatives <= lim.beam - 1);
            CHECK(r.nbest <= (r.beam > 0 ? r.beam : lim.beam));
        }
    }
    serve_request_free(&r);
    return 0;
}
