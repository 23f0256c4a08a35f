/* UTF-8 validation and decoding helpers shared by the corpus reader and the vocabulary. */
#ifndef S2S_TEXT_UTF8VAL_H
#define S2S_TEXT_UTF8VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Checks that s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates,
 * nothing above U+10FFFF). Returns n when it is, else the offset of the first byte
 * of the first ill-formed sequence. NUL bytes are well-formed here.
 */
size_t utf8val_check(const char *s, size_t n);

/* Decodes one code point from well-formed UTF-8; returns its length in bytes (>= 1). */
size_t utf8val_decode(const char *s, size_t n, uint32_t *cp);

/* Unicode White_Space (ASCII blanks, U+0085, U+00A0, U+1680, U+2000..U+200A,
   U+2028, U+2029, U+202F, U+205F, U+3000). */
bool utf8val_is_space(uint32_t cp);

/* True when well-formed s[0..n) is empty or contains only White_Space. */
bool utf8val_blank(const char *s, size_t n);

/* True when well-formed s[0..n) contains a White_Space character. */
bool utf8val_has_space(const char *s, size_t n);

#endif
