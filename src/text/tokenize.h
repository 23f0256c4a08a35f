/*
 * Tokenizer and detokenizer (utf8proc). English and French have rules of their own
 * (below); every other language (text/lang.h) gets the generic rules: those of English
 * for tokens, and for spacing English's plus quote pairing (see detok_line).
 *
 * Normalisation (tok_normalize, and the first step of tok_line):
 *   - NFKC (ligatures "ﬁ" -> "fi", fullwidth "Ａ！" -> "A!", "…" -> "...");
 *   - the typographic apostrophes U+2018 U+2019 U+201B U+02BC U+2032 U+2035 and
 *     the acute accent U+00B4 become ', the no-break spaces U+00A0 U+202F (and
 *     every other space NFKC maps) become a plain space U+0020;
 *   - unless keep_case, utf8proc case folding ("ÉCOLE" -> "école", "ß" -> "ss",
 *     final sigma "ς" -> "σ");
 *   - nothing else: spacing, control characters and line structure are kept.
 *   An all-ASCII line takes a fast path (copy, lowercase A-Z) that gives the same
 *   result as the full path.
 *
 * Invalid UTF-8 (bad lead or continuation bytes, truncated or overlong sequences,
 * surrogates, code points above U+10FFFF) is an error with the message
 * "invalid UTF-8 at byte N", where N is the 1-based offset, within the given
 * bytes, of the first byte of the first invalid sequence. Callers prefix
 * "file:line: ". On error nothing is appended to out.
 *
 * Tokenization works on extended grapheme clusters of the normalised line (so a
 * combining accent, an emoji with its skin tone or variation selector, a ZWJ
 * emoji sequence or a flag never split). A cluster is classified by its first
 * code point:
 *   - space: Unicode separators Z*, control characters Cc (tab, CR, ...) and
 *     U+200B ZERO WIDTH SPACE. They separate tokens and are never part of one.
 *   - ignorable: format characters that form their own cluster (soft hyphen
 *     U+00AD, BOM U+FEFF, U+2060, bidi marks): dropped, without splitting a word.
 *   - word: letters L*, marks M*, numbers N*. Runs of word clusters form a token.
 *   - punctuation P* and symbols S* (emoji, currency, math; also private-use and
 *     unassigned code points): each cluster is a token of its own, except the
 *     word-internal joiners below.
 * Joiners (a single-code-point cluster between two word clusters stays inside
 * the word):
 *   - apostrophe ': "don't", "isn't", "tom's", "i'm", "we'll", "aujourd'hui".
 *     French only: when the part of the word before the apostrophe is one of the
 *     elided forms c d j l m n s t qu jusqu lorsqu puisqu quoiqu quelqu (compared
 *     without regard to ASCII case), the token ends after the apostrophe:
 *     "j'ai" -> "j'" "ai", "qu'il" -> "qu'" "il", "quelqu'un" -> "quelqu'" "un";
 *     also before punctuation: "d'«" -> "d'" "«".
 *     Other words keep their apostrophe ("aujourd'hui", "presqu'île",
 *     "prud'homme"). An apostrophe or quote that is not word-internal is
 *     punctuation: "'hello'" -> "'" "hello" "'", "boys'" -> "boys" "'".
 *   - hyphen - (U+002D) and U+2010: hyphenated words stay whole, in both
 *     languages: "peut-être", "est-ce", "a-t-il", "rendez-vous", "well-known",
 *     "1990-2000". A hyphen next to a space or punctuation is its own token.
 *   - . , : between two decimal digits: numbers stay whole: "3.5", "1,000",
 *     "3,5", "12:30", "2.000.000". "/" is always split ("9/11" -> "9" "/" "11").
 *   - . between two letters: abbreviations "a.m." -> "a.m" ".", "u.s." -> "u.s" ".".
 *   - a - that starts a token (after a space or at the start of the line) and is
 *     followed by a digit is a sign: "-5" stays one token.
 * Scripts written without spaces (Chinese, Japanese, Thai) are not segmented: a
 * run of letters stays one token up to the next space, punctuation or symbol
 * ("私は学生です。" -> "私は学生です" "。").
 */
#ifndef S2S_TEXT_TOKENIZE_H
#define S2S_TEXT_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "text/lang.h"

typedef struct TokOpts {
    Lang lang;
    bool keep_case; /* false: lowercase with utf8proc case folding */
} TokOpts;

/*
 * Checks that s[0..len) is valid UTF-8: 0, or -1 with e set to
 * "invalid UTF-8 at byte N" (N 1-based, as above).
 */
int tok_check_utf8(const char *s, size_t len, Err *e);

/*
 * Normalises one line: NFKC, typographic apostrophes to ', U+00A0 and U+202F to
 * spaces, case folding unless keep_case. Appends to out. Returns 0, or -1 with e
 * set on invalid UTF-8 ("invalid UTF-8 at byte N", N 1-based), out unchanged.
 */
int tok_normalize(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e);

/*
 * Tokenizes one line (normalising it first) and appends its tokens to out,
 * separated by single spaces (tokens never contain whitespace). An empty or
 * whitespace-only line appends nothing. Returns the number of tokens, or -1 with
 * e set on invalid UTF-8 (out unchanged).
 */
long tok_line(const char *s, size_t len, const TokOpts *o, Buf *out, Err *e);

/*
 * Joins space-separated tokens into natural text for lang; appends to out.
 * Tokens are separated by one space except:
 *   - no space before: , . % … and closing brackets ) ] } (Pe) and closing quotes
 *     (Pf); in English also before ! ? : ; — in French a plain space U+0020 comes
 *     before ! ? : ; (normalisation turned the no-break spaces into plain ones),
 *     except between consecutive ! and ? ("?!", "!!");
 *   - no space after: opening brackets ( [ { (Ps), opening quotes (Pi), ¿ ¡, and
 *     in French the elided forms (a token longer than one byte ending in ',
 *     "j'" "ai" -> "j'ai");
 *   - « » ‹ ›: in English they attach inward like other quotes; in French they
 *     are spaced on both sides ("« oui »");
 *   - currency symbols (Sc): English attaches them to the following token
 *     ("$5"), French to the preceding one ("15$");
 *   - / attaches on both sides ("9/11", "carbone/azote");
 *   - " alternates between opening (attached to the next token) and closing
 *     (attached to the previous one); a lone ' closes an open single quote,
 *     opens one when another lone ' follows later in the line, is a plural
 *     possessive after a token ending in s ("boys' club"), and opens otherwise;
 *   - in the generic rules (neither English nor French) quotes pair up: „ opens
 *     and the next “ or ” closes it („Hallo“, „Hallo”), and of the guillemets
 *     « » ‹ › the first opens and the next closes, whichever way they point
 *     («Привет», »Hallo«, »Hej»).
 * detok_line(tok_line(s)) gives tok_normalize(s) for ordinary English and French
 * sentences tokenized with keep_case. Scripts without spaces are not re-joined.
 */
void detok_line(const char *tokens, size_t len, Lang lang, Buf *out);

#endif
