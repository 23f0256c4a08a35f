#include "base/utf8.h"

#include <string.h>

size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t need;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < need || s[1] < lo || s[1] > hi)
        return 0; /* truncated, or a bad second byte */
    for (size_t k = 2; k < need; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    return need;
}

size_t utf8_check(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path: eight bytes at a time. */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        size_t k = utf8_seq(s + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return n;
}

size_t utf8_decode(const char *str, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (len > n || c < 0x80) { /* ASCII, or a truncated sequence: one byte as is */
        *cp = c;
        return 1;
    }
    uint32_t v = c & (0x7F >> len);
    for (size_t k = 1; k < len; k++)
        v = (v << 6) | (s[k] & 0x3F);
    *cp = v;
    return len;
}

bool utf8_is_space(uint32_t cp)
{
    if (cp < 0x80)
        return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
    switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
    case 0x205F: case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

bool utf8_blank(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        if (!utf8_is_space(cp))
            return false;
    }
    return true;
}

bool utf8_has_space(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        if (utf8_is_space(cp))
            return true;
    }
    return false;
}

bool ascii_printable(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e || n + 1 >= max)
            return false;
    return n > 0;
}
