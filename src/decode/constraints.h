/*
 * The input forms of constraints (docs/constraints.md): a line of `translate
 * --constraints` (or a source of `eval --constraints`, or a request of `s2s serve`) as a
 * JSON object, and a glossary.
 *
 * A line is a JSON object {"text": "...", "constraints": ["...", ...], "avoid":
 * ["...", ...], "prefix": "..."} (Sockeye's input form; every member but "text"
 * optional, no other member), or, when it does not start with '{', plain text.
 *
 * A glossary is a UTF-8 text file of lines "SOURCE TERM<TAB>TARGET TERM" (blank lines
 * and lines starting with '#' are skipped; at most GLOSSARY_MAX_TERMS terms). Where a
 * source term occurs in a line, as whole tokens of the model's source tokenizer
 * (case-insensitively with ignore_case), its target term becomes a constraint of that
 * line (once, however often the term occurs; the line's own constraints first).
 */
#ifndef S2S_DECODE_CONSTRAINTS_H
#define S2S_DECODE_CONSTRAINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "decode/translate.h"
#include "text/tokenize.h"

/* One input line: 0 with *text (xmalloc'd, *tlen bytes) and *c filled (empty for plain
   text), or -1 with e set ("invalid JSON: ...", "\"constraints\" must be an array of
   strings", "unknown member \"x\"", "no \"text\"", ...). */
int cons_parse_line(const char *line, size_t len, char **text, size_t *tlen, TranslateCons *c, Err *e);

#define GLOSSARY_MAX_TERMS 100000
typedef struct Glossary Glossary;

/* Reads a glossary for source text tokenized with src (FILE:LINE: in errors: "no tab",
   "empty source term", "empty target term", "invalid UTF-8 at byte N", "more than
   100000 terms"). */
int glossary_load(const char *path, const TokOpts *src, bool ignore_case, Glossary **g, Err *e);
int glossary_parse(const char *name, const char *data, size_t len, const TokOpts *src, bool ignore_case,
                   Glossary **g, Err *e);
size_t glossary_terms(const Glossary *g);
/* Adds to c the target terms of the source terms in line[0..len) (a line that does not
   tokenize adds nothing). */
void glossary_apply(const Glossary *g, const char *line, size_t len, TranslateCons *c);
void glossary_free(Glossary *g);

#endif
