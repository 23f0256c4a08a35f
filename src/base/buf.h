/* A growable byte buffer, always NUL-terminated. */
#ifndef S2S_BASE_BUF_H
#define S2S_BASE_BUF_H

#include <locale.h>
#include <stddef.h>
#include "base/err.h"

typedef struct Buf {
    char *data;  /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
} Buf;

/* The "C" locale (made once), in which numbers are written and read whatever
   setlocale() chose: a decimal comma is not JSON. */
locale_t buf_c_locale(void);

void buf_reserve(Buf *b, size_t extra);
void buf_append(Buf *b, const void *p, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) S2S_PRINTF(2, 3);
/* Appends s as a JSON string literal, quotes included. */
void buf_json_str(Buf *b, const char *s, size_t n);
/* Appends a JSON number that reads back to exactly the same value: the shortest
   %.Ng form that does (0.1f gives "0.1", as Python's repr). NaN and infinities are not JSON numbers: they are
   written as null. */
void buf_json_f32(Buf *b, float x);
void buf_json_f64(Buf *b, double x);
void buf_clear(Buf *b);
void buf_free(Buf *b);
/* Returns the contents (never NULL) and leaves b empty; the caller frees it. */
char *buf_take(Buf *b);

#endif
