/* Quality by source length; see bylength.h. */
#include "eval/bylength.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/ngram.h"

const char *const bylen_bucket_names[BYLEN_BUCKETS] = {"1-8", "9-15", "16-30", ">30"};

size_t bylen_words(const char *s)
{
    size_t len = strlen(s), words = 0;
    bool in_word = false;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = ngram_utf8_next(s + i, len - i, &cp);
        bool space = k > 0 && ngram_is_space(cp);
        if (!space && !in_word)
            words++;
        in_word = !space;
        i += k > 0 ? (size_t)k : 1;
    }
    return words;
}

int bylen_bucket_of(size_t words)
{
    if (words <= 8)
        return 0;
    if (words <= 15)
        return 1;
    return words <= 30 ? 2 : 3;
}

int bylen_ratio_class(size_t hyp_words, size_t src_words)
{
    if (src_words == 0)
        return 0;
    if (2 * hyp_words < src_words)
        return -1;
    return hyp_words > 2 * src_words ? 1 : 0;
}

/* Adds segment i of set to its bucket: counts, and the BLEU and chrF statistics. */
static int add_segment(BylenBucket *b, BleuStats *bs, ChrfStats *cs, const BylenSet *set,
                       size_t i, Err *e)
{
    const char *const *r = set->refs + set->ref_start[i];
    size_t nr = set->ref_start[i + 1] - set->ref_start[i];
    if (bleu_add(bs, set->hyp[i], r, nr, e) != 0 || chrf_add(cs, set->hyp[i], r, nr, e) != 0)
        return -1;
    size_t lines = set->lines ? set->lines[i] : 1;
    int cls = bylen_ratio_class(bylen_words(set->hyp[i]), bylen_words(set->src[i]));
    b->lines += lines;
    b->segments++;
    if (cls < 0)
        b->short_lines += lines;
    else if (cls > 0)
        b->long_lines += lines;
    return 0;
}

/* The bucket's scores and shares from its statistics and counts. */
static void finish_bucket(BylenBucket *b, const BleuStats *bs, const ChrfStats *cs)
{
    if (b->lines == 0)
        return;
    BleuResult br;
    bleu_score(bs, &br);
    b->bleu = br.score;
    b->chrf = chrf_score(cs);
    b->short_share = (double)b->short_lines / (double)b->lines;
    b->long_share = (double)b->long_lines / (double)b->lines;
}

int bylen_compute(BylenBucket b[BYLEN_BUCKETS], const BylenSet *set, size_t *bad, Err *e)
{
    BleuStats bs[BYLEN_BUCKETS];
    ChrfStats cs[BYLEN_BUCKETS];
    memset(b, 0, BYLEN_BUCKETS * sizeof *b);
    for (int k = 0; k < BYLEN_BUCKETS; k++) {
        bleu_init(&bs[k]);
        chrf_init(&cs[k]);
    }
    int rc = 0;
    for (size_t i = 0; i < set->n && rc == 0; i++) {
        int k = bylen_bucket_of(bylen_words(set->src[i]));
        if (add_segment(&b[k], &bs[k], &cs[k], set, i, e) != 0) {
            *bad = i;
            rc = -1;
        }
    }
    for (int k = 0; k < BYLEN_BUCKETS; k++) {
        if (rc == 0)
            finish_bucket(&b[k], &bs[k], &cs[k]);
        bleu_free(&bs[k]);
        chrf_free(&cs[k]);
    }
    if (rc != 0)
        memset(b, 0, BYLEN_BUCKETS * sizeof *b);
    return rc;
}
