/* Shared checks of the fuzz targets (each fuzz/NAME.c is one libFuzzer target). A
   failed check aborts through BUG(), which libFuzzer reports as a crash. */
#ifndef S2S_FUZZ_FUZZ_H
#define S2S_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error message is one non-empty line that starts with prefix. */
static inline void fuzz_check_msg(const Err *e, const char *prefix)
{
    size_t n = strnlen(e->msg, sizeof e->msg);
    if (n == 0 || n == sizeof e->msg)
        BUG("empty or unterminated error message");
    if (memchr(e->msg, '\n', n))
        BUG("error message of more than one line: %s", e->msg);
    if (strncmp(e->msg, prefix, strlen(prefix)) != 0)
        BUG("error message does not start with '%s': %s", prefix, e->msg);
}

/* A copy of data[0..size) with a NUL after it, owned by the caller. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = xmalloc(size + 1);
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
