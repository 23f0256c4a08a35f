/*
 * Shared pieces of the evaluation metrics (BLEU, chrF): an exact n-gram
 * counting table over small integer symbols, and the UTF-8 / whitespace
 * conventions both metrics share.
 *
 * Whitespace: both metrics split (BLEU) or strip (chrF) text exactly where
 * sacreBLEU's `str.split()` / `str.rstrip()` would, i.e. on every code point
 * that Python's str.isspace() accepts: U+0009..U+000D, U+001C..U+001F, U+0020,
 * U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F,
 * U+3000. (Zero-width space U+200B and U+FEFF are not whitespace.)
 */
#ifndef S2S_EVAL_NGRAM_H
#define S2S_EVAL_NGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

/* Longest n-gram the table holds (chrF uses 6 characters, BLEU 4 words). */
#define NGRAM_MAX_N 6

/* One distinct n-gram of the current segment with its counters. */
typedef struct NgramEntry {
    uint32_t sym[NGRAM_MAX_N]; /* symbols (token ids or code points); unused ones 0 */
    uint32_t n;                /* order, 1..NGRAM_MAX_N */
    uint32_t slot;             /* its slot in the hash index (for ngram_clear) */
    uint32_t hyp;              /* occurrences in the hypothesis */
    uint32_t cur;              /* occurrences in the reference being counted */
    uint32_t best;             /* largest `cur` over the references counted so far */
    uint32_t stamp;            /* which reference `cur` belongs to (0: none yet) */
    uint64_t hash;             /* ngram_hash of the key */
} NgramEntry;

/* Open-addressing hash table; entries are stored densely in insertion order. An
   all-zero table is empty and ready. */
typedef struct NgramTable {
    NgramEntry *e;
    size_t len, cap;
    uint32_t *slots; /* entry index + 1; 0 is empty */
    size_t nslots;   /* power of two, or 0 */
} NgramTable;

void ngram_free(NgramTable *t);
/* Forgets all entries (cost proportional to the number of entries). */
void ngram_clear(NgramTable *t);
/*
 * Keys are hashed incrementally so that all orders starting at one position
 * cost one step each: h = NGRAM_HASH_SEED; for each symbol h = ngram_hash_step(h, sym);
 * after n steps, ngram_hash_final(h) is the hash of the n-gram.
 */
#define NGRAM_HASH_SEED 0x9E3779B97F4A7C15ull
static inline uint64_t ngram_hash_step(uint64_t h, uint32_t sym)
{
    h ^= sym;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}
static inline uint64_t ngram_hash_final(uint64_t h)
{
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 32);
}
/* The hash of sym[0..n-1], as the steps above compute it. */
uint64_t ngram_hash(const uint32_t *sym, unsigned n);

/* The entry for sym[0..n-1] whose hash is h, inserted with zero counters when
   absent. The pointer is valid until the next ngram_add. */
NgramEntry *ngram_add(NgramTable *t, const uint32_t *sym, unsigned n, uint64_t h);
/* The entry for sym[0..n-1] whose hash is h, or NULL. */
NgramEntry *ngram_find(const NgramTable *t, const uint32_t *sym, unsigned n, uint64_t h);

/* Adds every n-gram of sym[0..len) with n <= order to t, counting its occurrences
   in `hyp`. */
void ngram_count_hyp(NgramTable *t, const uint32_t *sym, size_t len, unsigned order);
/*
 * Matches reference number `stamp` (1, 2, ...; a new number for each reference of
 * the segment), ref[0..len), against the n-grams (n <= order) already in t; n-grams
 * t lacks are ignored. Of an entry: `cur` counts its occurrences in this reference,
 * `best` becomes the largest `cur` of any reference so far. With match not NULL,
 * match[n-1] += min(hyp, cur at the end) summed over the entries of order n.
 */
void ngram_count_ref(NgramTable *t, const uint32_t *ref, size_t len, unsigned order,
                     uint32_t stamp, long long *match);

/* True for the code points Python's str.isspace() accepts (list above). */
bool ngram_is_space_slow(uint32_t cp);
static inline bool ngram_is_space(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
    return ngram_is_space_slow(cp);
}

/*
 * Decodes one UTF-8 code point of s[0..len-1] (len > 0) into *cp and returns
 * its length in bytes, or -1 when the bytes there are not valid UTF-8
 * (truncated, overlong, surrogate, beyond U+10FFFF, stray continuation).
 */
int ngram_utf8_next_slow(const char *s, size_t len, uint32_t *cp);
static inline int ngram_utf8_next(const char *s, size_t len, uint32_t *cp)
{
    if ((unsigned char)s[0] < 0x80) {
        *cp = (unsigned char)s[0];
        return 1;
    }
    return ngram_utf8_next_slow(s, len, cp);
}

/* sacreBLEU 2.0 and 2.1 drop NULL and empty references (a reference of spaces is
   kept); from 2.2 on only NULL ones, and "" is a reference of length 0 (keep_empty). */
static inline bool ngram_ref_present(const char *r, bool keep_empty)
{
    return r != NULL && (keep_empty || r[0] != '\0');
}
/* The references of one segment that count; 0 is the caller's error
   (ngram_no_ref_error). */
size_t ngram_refs_present(const char *const *refs, size_t nrefs, bool keep_empty);
int ngram_no_ref_error(Err *e);
/* The nrefs of a corpus after one more segment with `kept` references, nsegs
   segments before it: kept while every segment has had the same number, else var. */
long ngram_nrefs_after(long nrefs, long long nsegs, size_t kept, long var);
/* Appends the signature's "nrefs:N", or "nrefs:var" when nrefs is var, to out. */
void ngram_put_nrefs(Buf *out, long nrefs, long var);

/*
 * Python's str.lower() on the UTF-8 string s, appended to out: each code point's
 * lowercase mapping (utf8proc's), U+0130 to "i" and U+0307 as Python's full mapping
 * has it, and a capital sigma to a final sigma (U+03C2) when a cased letter comes
 * before it and none after it (case-ignorable code points skipped on both sides),
 * else to U+03C3. Returns 0, or -1 with *bad the byte offset (0-based) of invalid
 * UTF-8 (out then holds a part of the text).
 */
int ngram_lower(const char *s, Buf *out, size_t *bad);

#endif
