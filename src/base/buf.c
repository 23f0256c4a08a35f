#include "base/buf.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_reserve(Buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_append(Buf *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(Buf *b, const char *s) { buf_append(b, s, strlen(s)); }

void buf_putc(Buf *b, char c) { buf_append(b, &c, 1); }

void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        BUG("vsnprintf failed for format %s", fmt);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void buf_json_str(Buf *b, const char *s, size_t n)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '\t': buf_puts(b, "\\t"); break;
        default:
            if (c < 0x20)
                buf_printf(b, "\\u%04x", c);
            else
                buf_putc(b, (char)c);
        }
    }
    buf_putc(b, '"');
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c_locale)
        die("cannot create the C locale");
}

locale_t buf_c_locale(void)
{
    pthread_once(&c_locale_once, make_c_locale);
    return c_locale;
}

/* The shortest %.Ng text that reads back as the same value (as Python's repr). */
static void put_shortest(Buf *b, double x, bool single)
{
    if (!isfinite(x)) {
        buf_puts(b, "null");
        return;
    }
    /* numbers are printed in the "C" locale: a decimal comma is not JSON */
    locale_t old = uselocale(buf_c_locale());
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, x);
        if (single ? strtof(tmp, NULL) == (float)x : strtod(tmp, NULL) == x)
            break;
    }
    uselocale(old);
    buf_puts(b, tmp);
}

void buf_json_f32(Buf *b, float x) { put_shortest(b, (double)x, true); }

void buf_json_f64(Buf *b, double x) { put_shortest(b, x, false); }

void buf_clear(Buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_free(Buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *buf_take(Buf *b)
{
    char *p = b->data ? b->data : xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
