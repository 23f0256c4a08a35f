#include "text/utf8val.h"

#include <string.h>

size_t utf8val_check(const char *str, size_t n)
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
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong */
            else if (c == 0xED)
                hi = 0x9F; /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90; /* overlong */
            else if (c == 0xF4)
                hi = 0x8F; /* above U+10FFFF */
        } else {
            return i;
        }
        if (i + need >= n)
            return i; /* truncated at the end */
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += need + 1;
    }
    return n;
}

size_t utf8val_decode(const char *str, size_t n, uint32_t *cp)
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

bool utf8val_is_space(uint32_t cp)
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

bool utf8val_blank(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        i += utf8val_decode(s + i, n - i, &cp);
        if (!utf8val_is_space(cp))
            return false;
    }
    return true;
}

bool utf8val_has_space(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        i += utf8val_decode(s + i, n - i, &cp);
        if (utf8val_is_space(cp))
            return true;
    }
    return false;
}
