/*
 * Line-by-line reading of a text file held in memory (vocabularies, BPE codes):
 *
 *   Lines r;
 *   lines_init(&r, path, data, len);
 *   const char *s; size_t n; int rc;
 *   while ((rc = lines_next(&r, &s, &n, e)) > 0)
 *       ... line r.lineno is s[0..n) ...
 *   if (rc < 0) ... e says which line is bad ...
 *
 * A line ends at '\n' (a CR before it is taken off too) or at the end of the data;
 * text after the last '\n' is a line, an empty rest is not.
 *
 * lines_word splits a line of tokens separated by spaces:
 *
 *   size_t i = 0, start, n;
 *   while ((n = lines_word(s, len, &i, &start)) > 0)
 *       ... the token s[start..start + n) ...
 */
#ifndef S2S_BASE_LINES_H
#define S2S_BASE_LINES_H

#include <stddef.h>

#include "base/err.h"

typedef struct Lines {
    const char *name;  /* for messages */
    const char *p, *end;
    size_t lineno;     /* 1-based number of the line lines_next returned last; 0 before */
} Lines;

void lines_init(Lines *r, const char *name, const char *data, size_t len);
/* Sets s, n to the next line without its line end and returns 1; returns 0 at the
   end of the data; returns -1 with e set when the line holds a NUL byte or invalid
   UTF-8: "NAME:LINE: NUL byte at byte N", "NAME:LINE: invalid UTF-8 at byte N",
   N 1-based, for the first fault of the line. */
int lines_next(Lines *r, const char **s, size_t *n, Err *e);

/* The next token of s[0..len) at or after *i, tokens being separated by runs of
   spaces: sets *start to its offset, moves *i past it and returns its length; returns
   0 when no token is left. */
static inline size_t lines_word(const char *s, size_t len, size_t *i, size_t *start)
{
    size_t k = *i;
    while (k < len && s[k] == ' ')
        k++;
    *start = k;
    while (k < len && s[k] != ' ')
        k++;
    *i = k;
    return k - *start;
}

#endif
