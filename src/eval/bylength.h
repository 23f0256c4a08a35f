/*
 * Quality by source length: a scored set's segments put into four buckets by the
 * number of words of their source (whitespace-separated tokens of the raw line, split
 * where Python's str.split() splits: eval/ngram.h), each bucket with its corpus BLEU
 * and chrF2 (bleu.h, chrf.h: sacreBLEU's corpus scores over the bucket's segments
 * alone) and the share of its lines whose output length is implausible against the
 * source: output words / source words below 0.5 ("short", a sign of omission) or above
 * 2.0 ("long", a sign of hallucination). A source of no words falls in the first
 * bucket and is neither short nor long.
 */
#ifndef S2S_EVAL_BYLENGTH_H
#define S2S_EVAL_BYLENGTH_H

#include <stddef.h>

#include "base/err.h"

#define BYLEN_BUCKETS 4

/* "1-8", "9-15", "16-30", ">30": the buckets' names, by source words. */
extern const char *const bylen_bucket_names[BYLEN_BUCKETS];

typedef struct BylenBucket {
    size_t lines;        /* lines whose source falls in the bucket */
    size_t segments;     /* segments scored (the lines' distinct sources) */
    size_t short_lines;  /* lines whose output has fewer than half the source's words */
    size_t long_lines;   /* lines whose output has more than twice the source's words */
    double short_share;  /* short_lines / lines; 0 when lines is 0 */
    double long_share;   /* long_lines / lines; 0 when lines is 0 */
    double bleu, chrf;   /* 0..100; 0 when lines is 0 (no score) */
} BylenBucket;

/* One scored set: segment i is the output hyp[i] of the source src[i], scored
   against refs[ref_start[i] .. ref_start[i + 1]), and stands for lines[i] lines (1
   each when lines is NULL). */
typedef struct BylenSet {
    const char *const *src;
    const char *const *hyp;
    size_t n;
    const char *const *refs;
    const size_t *ref_start;
    const size_t *lines;
} BylenSet;

/* The number of whitespace-separated words of s (bytes that are not UTF-8 count as
   word characters). */
size_t bylen_words(const char *s);
/* The bucket (0 .. BYLEN_BUCKETS - 1) of a source of `words` words. */
int bylen_bucket_of(size_t words);
/* -1 when hyp_words / src_words < 0.5 (short), 1 when > 2.0 (long), else 0 (and 0
   when src_words is 0). */
int bylen_ratio_class(size_t hyp_words, size_t src_words);

/* Fills b[0 .. BYLEN_BUCKETS) from set. Returns 0, or -1 with e set to the message of
   bleu_add or chrf_add for the first segment that fails, whose index goes to *bad. */
int bylen_compute(BylenBucket b[BYLEN_BUCKETS], const BylenSet *set, size_t *bad, Err *e);

#endif
