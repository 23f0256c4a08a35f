/* Tokenizer and detokenizer for English and French (utf8proc). */
#ifndef S2S_TEXT_TOKENIZE_H
#define S2S_TEXT_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

typedef enum Lang { LANG_EN = 0, LANG_FR = 1 } Lang;

typedef struct TokOpts {
    Lang lang;
    bool keep_case; /* false: lowercase with utf8proc case folding */
} TokOpts;

/* "en" / "fr" to Lang; -1 when unknown. */
int lang_parse(const char *s);
const char *lang_name(Lang l);

/*
 * Normalises one line: NFKC, typographic apostrophes to ', U+00A0 and U+202F to
 * spaces, case folding unless keep_case. Appends to out. Invalid UTF-8 is an error
 * whose message gives the byte offset ("invalid UTF-8 at byte N").
 */
int tok_normalize(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e);

/*
 * Tokenizes one line (normalising it first) and appends its tokens to out,
 * separated by single spaces (tokens never contain whitespace). An empty or
 * whitespace-only line appends nothing. Returns the number of tokens, or -1 with
 * e set on invalid UTF-8.
 */
long tok_line(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e);

/* Joins space-separated tokens into natural text for lang; appends to out. */
void detok_line(const char *tokens, size_t len, Lang lang, Buf *out);

#endif
