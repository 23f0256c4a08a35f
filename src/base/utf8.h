/* UTF-8: the one validator (RFC 3629) of the project, decoding and White_Space. */
#ifndef S2S_BASE_UTF8_H
#define S2S_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Checks that s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates,
 * nothing above U+10FFFF). Returns n when it is, else the offset of the first byte
 * of the first ill-formed sequence. NUL bytes are well-formed here.
 */
size_t utf8_check(const char *s, size_t n);
/* True when s[0..n) is well-formed UTF-8. */
static inline bool utf8_valid(const char *s, size_t n) { return utf8_check(s, n) == n; }
/* The length (1..4) of the well-formed sequence at s[0..n) (n >= 1), or 0 when the
   bytes there are not one. */
size_t utf8_seq(const unsigned char *s, size_t n);

/* Decodes one code point from well-formed UTF-8; returns its length in bytes (>= 1). */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Unicode White_Space (ASCII blanks, U+0085, U+00A0, U+1680, U+2000..U+200A,
   U+2028, U+2029, U+202F, U+205F, U+3000). */
bool utf8_is_space(uint32_t cp);

/* True when well-formed s[0..n) is empty or contains only White_Space. */
bool utf8_blank(const char *s, size_t n);

/* True when well-formed s[0..n) contains a White_Space character. */
bool utf8_has_space(const char *s, size_t n);
/* Whether the NUL-terminated s is 1 to max - 1 printable ASCII characters (0x20-0x7e):
   what a message may quote of text a user or client sent. */
bool ascii_printable(const char *s, size_t max);

#endif
