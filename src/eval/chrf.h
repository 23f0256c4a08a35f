/*
 * chrF computed exactly as sacreBLEU 2.x does by default: CHRF(char_order=6,
 * word_order=0, beta=2, lowercase=False, whitespace=False, eps_smoothing=False),
 * printed as "chrF2".
 *
 * Characters are Unicode code points (the text is decoded from UTF-8; no
 * normalisation, case kept). Whitespace is removed first, as sacreBLEU's
 * ''.join(line.split()) does: every code point Python's str.isspace() accepts
 * (see eval/ngram.h), not only ' '.
 *
 * Per segment and order n = 1..6, against one reference: hyp = number of
 * hypothesis n-grams, ref = number of reference n-grams, match = clipped common
 * n-grams (Counter intersection). As in sacreBLEU's _get_match_statistics, hyp
 * is recorded as 0 for an order the reference has no n-grams of (reference
 * shorter than n characters). With several references, the segment keeps the
 * statistics of the reference with the highest sentence-level chrF (the first
 * one on ties). The corpus sums the statistics and computes the score once.
 *
 * Score (sacreBLEU's _compute_f_score without eps smoothing): over the orders
 * with hyp > 0 and ref > 0 (the "effective order"), average precision
 * match/hyp and recall match/ref; no such order, or both averages 0, scores 0;
 * else 100·(1+β²)·P·R / (β²·P + R) with β = 2.
 *
 * References: missing (NULL) and empty ("") references are dropped (sacreBLEU 2.0
 * and 2.1; keep_empty keeps "", as 2.2 and later); a segment left with none is an
 * error, as in sacreBLEU. Invalid UTF-8 is an error.
 */
#ifndef S2S_EVAL_CHRF_H
#define S2S_EVAL_CHRF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

#define CHRF_CHAR_ORDER 6
#define CHRF_BETA 2
/* ChrfStats.nrefs when segments had different numbers of references. */
#define CHRF_NREFS_VAR (-1)

struct ChrfScratch;

/* Streaming corpus accumulator: chrf_init, chrf_add per segment, chrf_score. */
typedef struct ChrfStats {
    long long hyp[CHRF_CHAR_ORDER];   /* index n-1: statistics of order n */
    long long ref[CHRF_CHAR_ORDER];
    long long match[CHRF_CHAR_ORDER];
    long long nsegs;
    /* References per segment (after dropping empty ones): 0 before the first
       segment, CHRF_NREFS_VAR once two segments disagree. */
    long nrefs;
    bool lowercase;  /* Python's str.lower() first (eval/ngram.h); case:lc */
    bool keep_empty; /* "" is a reference (no n-grams), as from sacreBLEU 2.2 on */
    struct ChrfScratch *scratch;
} ChrfStats;

/* chrf_init: the defaults; set lowercase and keep_empty after it. */
void chrf_init(ChrfStats *s);
void chrf_free(ChrfStats *s);

/*
 * Adds one segment: hypothesis hyp against refs[0..nrefs-1]. Returns 0, or -1
 * with e set (and s unchanged) when no non-empty reference is given
 * ("no reference (empty references are ignored)") or a string is not UTF-8
 * ("invalid UTF-8 at byte N of the hypothesis" / "... of reference K", K from 1).
 */
int chrf_add(ChrfStats *s, const char *hyp, const char *const *refs, size_t nrefs, Err *e);

/* The F-score (0..100) of summed statistics, as described above. */
double chrf_compute(const long long hyp[CHRF_CHAR_ORDER], const long long ref[CHRF_CHAR_ORDER],
                    const long long match[CHRF_CHAR_ORDER]);
/* The corpus score so far; 0 for an empty corpus. */
double chrf_score(const ChrfStats *s);

/* One segment on its own (sacreBLEU's CHRF().sentence_score). Errors as chrf_add. */
int chrf_sentence(const char *hyp, const char *const *refs, size_t nrefs, double *score, Err *e);

/* Appends "chrF2 = 59.73", or "chrF2|SIGNATURE = 59.73" with a signature. */
void chrf_format(double score, const char *signature, Buf *out);

/*
 * Appends "nrefs:N|case:mixed|eff:yes|nc:6|nw:0|space:no": sacreBLEU's
 * signature without "|version:..." (case:lc with lowercase). N is "var" when segments had different
 * numbers of references, and 0 for an empty corpus.
 */
void chrf_signature(const ChrfStats *s, Buf *out);

#endif
