/*
 * A rule-based sentence splitter for one line of UTF-8 text (used by translation,
 * decode/translate.h, so that a line of several sentences is decoded one sentence at a
 * time).
 *
 * A sentence ends after a run of the marks . ! ? … (U+2026), such as "?!" or "...",
 * when what follows is, in this order: any spaces and closing quotes or brackets that
 * close every quote or bracket still open; at least one space after the last of them
 * (a space is a tab, CR, LF or a Unicode separator Zs such as U+00A0 and U+202F); and
 * then the start of the next sentence: an uppercase or titlecase letter (Lu, Lt, so
 * "É" too), a letter of a script without case (Lo), a decimal digit (Nd), an opening
 * quote or bracket, or ¿ ¡. The sentence then ends after the last closing quote or
 * bracket: in `Il a dit : « Viens. » Puis il est parti.` the first sentence ends
 * with "»".
 *
 * Quotes and brackets: ( [ { « ‹ “ „ open (closed by ) ] } » › ” and “ for „); '"'
 * closes an open '"' and otherwise opens one. A closing mark closes the innermost open
 * one it matches (those opened after it are closed with it); a closing mark that
 * matches none is plain text; single quotes are apostrophes and never count. Nothing
 * splits while a quote or bracket is open, so an unclosed one ends splitting for the
 * rest of the line.
 *
 * A single '.' does not end a sentence when the word before it (the non-space text
 * before it, less opening quotes and brackets) is:
 *   - an abbreviation of the language, compared with its case:
 *       English: Mr Mrs Ms Dr Prof St Jr Sr vs etc Mt Gen Capt Lt Col Sgt Rev Inc
 *                Ltd Co Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec, and No Nos
 *                before a digit only ("No. 5", but "No. Go away." splits)
 *       French:  M MM Mme Mmes Mlle Mlles Dr Pr Me Mgr St Ste etc cf av apr
 *       other languages: Dr St etc
 *   - one uppercase letter (an initial: "J. K. Rowling");
 *   - single letters joined by dots ("U.S.", "e.g.", "i.e.", "a.m.", "p.m.").
 * A '.' between digits ("3.14") has no space after it and never ends a sentence.
 *
 * Each sentence is a span of the line, its text kept exactly: it starts at its first
 * non-space character and ends after its last non-space one (the spaces between
 * sentences and at both ends of the line belong to none). A blank line has no
 * sentence; a line without a boundary is one sentence. Invalid UTF-8 bytes count as
 * plain text, one byte each.
 */
#ifndef S2S_TEXT_SENTENCES_H
#define S2S_TEXT_SENTENCES_H

#include <stddef.h>

#include "text/lang.h"

typedef struct SentSpan {
    size_t off, len; /* the sentence is line[off .. off + len) */
} SentSpan;

/* Splits line[0..len) of language lang into sentences: their count, and their spans
   in order in *spans (xmalloc'd, at least one element even for a count of 0; the
   caller frees it). */
size_t sent_split(const char *line, size_t len, Lang lang, SentSpan **spans);

#endif
