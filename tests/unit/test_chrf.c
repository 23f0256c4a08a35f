/*
 * chrF as sacreBLEU 2.x computes it by default (chrF2: 6 character orders, no
 * word n-grams, beta 2, whitespace removed, effective-order averaging).
 *
 * Expected values are worked out by hand in the comments, or are values that
 * sacreBLEU's documentation and test suite state for the same input (said
 * where so; the test-suite cases used here do not depend on beta). Closed-form
 * values are compared within 1e-9 relative; published rounded values at their
 * precision.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/chrf.h"
#include "helpers.h"

#define REFS(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static double sent(const char *hyp, const char *const *refs, size_t nrefs)
{
    double score = -1.0;
    Err e;
    cr_assert_eq(chrf_sentence(hyp, refs, nrefs, &score, &e), 0, "%s", e.msg);
    return score;
}

Test(chrf, identical_scores_100)
{
    /* "abcdef" (space removed): every order has P = R = 1 → exactly 100. */
    cr_assert_eq(sent("abc def", REFS("abc def")), 100.0);
    /* sacreBLEU test suite (effective-order mode): "a" vs "a" → 100. */
    cr_assert_eq(sent("a", REFS("a")), 100.0);
}

Test(chrf, no_common_character_scores_0)
{
    /* Orders 1-3 are effective but nothing matches: P = R = 0 → 0. */
    cr_assert_eq(sent("abc", REFS("xyz")), 0.0);
}

Test(chrf, sacrebleu_effective_order_cases)
{
    /* sacreBLEU test suite, eps_smoothing=False (these do not depend on beta):
       "aa" vs "ab" → 25: order 1 P = R = 1/2, order 2 P = R = 0, orders 3-6 have
       no reference n-grams → effective order 2, P = R = 1/4.
       "a b c" vs "abc" → 100 (whitespace removed). "" vs "reference" → 0. */
    cr_assert_eq(sent("aa", REFS("ab")), 25.0);
    cr_assert_eq(sent("a b c", REFS("abc")), 100.0);
    cr_assert_eq(sent("", REFS("reference")), 0.0);
    cr_assert_eq(sent("", REFS("c")), 0.0);

    /* Corpus ["a", "b"] vs ["a", "c"] → 50: order 1 sums to hyp 2, ref 2, match 1. */
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "a", REFS("a"), &e), 0);
    cr_assert_eq(chrf_add(&s, "b", REFS("c"), &e), 0);
    cr_assert_eq(chrf_score(&s), 50.0);
    chrf_free(&s);
}

Test(chrf, equal_precision_and_recall)
{
    /* "abcd" vs "abce": order 1 3/4, order 2 2/3, order 3 1/2, order 4 0/1
       (P = R each time); orders 5-6 have no reference n-grams.
       F = P = R = (3/4 + 2/3 + 1/2 + 0)/4 = 23/48 → 47.91666... */
    assert_rel(sent("abcd", REFS("abce")), 100.0 * 23.0 / 48.0, 1e-9);
}

Test(chrf, recall_weighted_more_than_precision)
{
    /* hyp "abc", ref "abcdef": orders 1-3 match fully, P = 1 each, R = 3/6, 2/5,
       1/4; orders 4-6: the hypothesis has no n-grams → not effective.
       P = 1, R = (1/2 + 2/5 + 1/4)/3 = 23/60;
       F = 5PR/(4P + R) = (115/60)/(263/60) = 115/263 → 43.7262357... */
    assert_rel(sent("abc", REFS("abcdef")), 100.0 * 115.0 / 263.0, 1e-9);
    /* Swapped: P = 23/60, R = 1; F = (115/60)/(92/60 + 1) = 115/152 → 75.657894... */
    assert_rel(sent("abcdef", REFS("abc")), 100.0 * 115.0 / 152.0, 1e-9);
}

Test(chrf, orders_missing_from_the_reference_drop_hypothesis_counts)
{
    /* As sacreBLEU's _get_match_statistics: for an order the reference has no
       n-grams of, the hypothesis count is recorded as 0. This shows at corpus
       level.
       Seg 1: "abcdef" vs "abc": (hyp, ref, match) = o1 (6,3,3), o2 (5,2,2),
              o3 (4,1,1), o4-o6 (0,0,0) — not (3,0,0), (2,0,0), (1,0,0).
       Seg 2: "ghijkl" vs itself: o1..o6 = (6,6,6) (5,5,5) ... (1,1,1).
       Sums: o1 (12,9,9) o2 (10,7,7) o3 (8,5,5) o4 (3,3,3) o5 (2,2,2) o6 (1,1,1).
       P = (9/12 + 7/10 + 5/8 + 1 + 1 + 1)/6 = 203/240, R = 1.
       F = 5P/(4P + 1) = 1015/1052 → 96.4828897... (with the seg-1 hypothesis
       counts kept, P would be (… + 1/2 + 1/2 + 1/2)/6 instead). */
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "abcdef", REFS("abc"), &e), 0);
    cr_assert_eq(chrf_add(&s, "ghijkl", REFS("ghijkl"), &e), 0);
    long long hyp[6] = {12, 10, 8, 3, 2, 1}, ref[6] = {9, 7, 5, 3, 2, 1};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(s.hyp[i], hyp[i], "order %d", i + 1);
        cr_assert_eq(s.ref[i], ref[i], "order %d", i + 1);
        cr_assert_eq(s.match[i], ref[i], "order %d", i + 1);
    }
    assert_rel(chrf_score(&s), 100.0 * 1015.0 / 1052.0, 1e-9);
    chrf_free(&s);
}

Test(chrf, clipped_matches)
{
    /* "aaaa" vs "aab": order 1 hyp 4, ref 3, match min(4,2) = 2;
       order 2 "aa"×3 vs {aa, ab}: match 1 (hyp 3, ref 2); order 3 "aaa"×2 vs
       {aab}: 0 (hyp 2, ref 1). Orders 4-6: no reference n-grams.
       P = (2/4 + 1/3 + 0)/3 = 5/18, R = (2/3 + 1/2 + 0)/3 = 7/18.
       F = 5PR/(4P + R) = 5·(5/18)(7/18) / (27/18) = 175/486 → 36.0082304... */
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "aaaa", REFS("aab"), &e), 0);
    cr_assert_eq(s.match[0], 2);
    cr_assert_eq(s.match[1], 1);
    cr_assert_eq(s.match[2], 0);
    cr_assert_eq(s.hyp[3], 0);
    assert_rel(chrf_score(&s), 100.0 * 175.0 / 486.0, 1e-9);
    chrf_free(&s);
}

Test(chrf, characters_are_code_points)
{
    /* "éa" vs "èa": 2 code points each; order 1 matches 'a' only (1/2), order 2
       "éa" ≠ "èa" (0/1): F = (1/2 + 0)/2 = 25 exactly. Bytes would have given
       a different value (é = C3 A9 and è = C3 A8 share a byte). */
    cr_assert_eq(sent("\xc3\xa9" "a", REFS("\xc3\xa8" "a")), 25.0);
    cr_assert_eq(sent("déjà vu", REFS("déjà vu")), 100.0);
}

Test(chrf, all_unicode_whitespace_is_removed)
{
    /* Tab, U+00A0 and U+3000 are whitespace (Python's str.split()). */
    cr_assert_eq(sent("a\tb\xc2\xa0" "c\xe3\x80\x80" "d", REFS("abcd")), 100.0);
    /* U+200B is not whitespace and stays a character Z: hyp a b Z c, ref a b c.
       o1: hyp 4, ref 3, match 3; o2: {ab, bZ, Zc} vs {ab, bc}: 1 (hyp 3, ref 2);
       o3: {abZ, bZc} vs {abc}: 0 (hyp 2, ref 1); o4-o6 no reference n-grams.
       P = (3/4 + 1/3 + 0)/3 = 13/36, R = (1 + 1/2 + 0)/3 = 1/2.
       F = 5PR/(4P + R) = (65/72)/(70/36) = 13/28 → 46.4285714... */
    assert_rel(sent("ab\xe2\x80\x8b" "c", REFS("abc")), 100.0 * 13.0 / 28.0, 1e-9);
}

Test(chrf, best_reference_is_chosen_per_segment)
{
    /* hyp "abcdef", refs "abc" (F = 115/152, see above) and "abcdef" (F = 100):
       the segment keeps the second reference's statistics. */
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "abcdef", REFS("abc", "abcdef"), &e), 0);
    cr_assert_eq(s.ref[0], 6);
    cr_assert_eq(s.hyp[5], 1);
    cr_assert_eq(chrf_score(&s), 100.0);
    /* Order does not matter when one is strictly better. */
    cr_assert_eq(sent("abcdef", REFS("abcdef", "abc")), 100.0);
    /* A missing or empty reference is skipped; "x" (F = 0) then "abc". */
    const char *refs[3] = {NULL, "x", "abc"};
    assert_rel(sent("abcdef", refs, 3), 100.0 * 115.0 / 152.0, 1e-9);
    chrf_free(&s);
}

static const char *readme_hyps[3] = {"The dog bit the man.", "It wasn't surprising.",
                                     "The man had just bitten him."};
static const char *readme_refs[3][2] = {
    {"The dog bit the man.", "The dog had bit the man."},
    {"It was not unexpected.", "No one was surprised."},
    {"The man bit him first.", "The man had bitten the dog."},
};

Test(chrf, sacrebleu_readme_corpus)
{
    /* sacreBLEU 2.x README: CHRF().corpus_score on this corpus prints
       "chrF2 = 59.73"; the signature is "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|
       space:no|version:2.0.0". */
    ChrfStats s;
    chrf_init(&s);
    Err e;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(chrf_add(&s, readme_hyps[i], readme_refs[i], 2, &e), 0, "%s", e.msg);
    double score = chrf_score(&s);
    cr_assert(fabs(score - 59.73) <= 0.005, "score %.6f", score);
    Buf sig = {0}, line = {0};
    chrf_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no");
    chrf_format(score, NULL, &line);
    cr_assert_str_eq(line.data, "chrF2 = 59.73");
    buf_clear(&line);
    chrf_format(score, sig.data, &line);
    cr_assert_str_eq(line.data, "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no = 59.73");
    buf_free(&sig);
    buf_free(&line);
    chrf_free(&s);
}

Test(chrf, variable_reference_count_signature)
{
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "a", REFS("a"), &e), 0);
    cr_assert_eq(s.nrefs, 1);
    cr_assert_eq(chrf_add(&s, "b", REFS("b", "c"), &e), 0);
    cr_assert_eq(s.nrefs, CHRF_NREFS_VAR);
    Buf sig = {0};
    chrf_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no");
    buf_free(&sig);
    chrf_free(&s);
}

Test(chrf, empty_hypothesis_and_empty_corpus)
{
    cr_assert_eq(sent("", REFS("abc")), 0.0);
    cr_assert_eq(sent("   ", REFS("abc")), 0.0);
    ChrfStats s;
    chrf_init(&s);
    cr_assert_eq(chrf_score(&s), 0.0);
    Buf sig = {0}, line = {0};
    chrf_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:0|case:mixed|eff:yes|nc:6|nw:0|space:no");
    chrf_format(chrf_score(&s), NULL, &line);
    cr_assert_str_eq(line.data, "chrF2 = 0.00");
    buf_free(&sig);
    buf_free(&line);
    chrf_free(&s);
}

Test(chrf, errors_leave_statistics_unchanged)
{
    ChrfStats s;
    chrf_init(&s);
    Err e;
    cr_assert_eq(chrf_add(&s, "abc", NULL, 0, &e), -1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    cr_assert_eq(chrf_add(&s, "abc", REFS("", NULL), &e), -1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    cr_assert_eq(chrf_add(&s, "ab\xff", REFS("abc"), &e), -1);
    cr_assert_str_eq(e.msg, "invalid UTF-8 at byte 2 of the hypothesis");
    cr_assert_eq(chrf_add(&s, "abc", REFS("abc", "\xc0\x80"), &e), -1); /* overlong NUL */
    cr_assert_str_eq(e.msg, "invalid UTF-8 at byte 0 of reference 2");
    cr_assert_eq(s.nsegs, 0);
    for (int i = 0; i < 6; i++)
        cr_assert(s.hyp[i] == 0 && s.ref[i] == 0 && s.match[i] == 0);
    cr_assert_eq(chrf_add(&s, "abc", REFS("abc"), &e), 0);
    cr_assert_eq(chrf_score(&s), 100.0);
    chrf_free(&s);
}

Test(chrf, compute_from_statistics)
{
    /* No effective order (every order has hyp or ref 0) → 0. */
    long long z[6] = {0}, r[6] = {3, 2, 1, 0, 0, 0};
    cr_assert_eq(chrf_compute(z, r, z), 0.0);
    /* One effective order with P = 1/2, R = 1: F = 5·(1/2)/(2 + 1) = 5/6. */
    long long h1[6] = {2, 0, 0, 0, 0, 0}, r1[6] = {1, 0, 0, 0, 0, 0}, m1[6] = {1, 0, 0, 0, 0, 0};
    assert_rel(chrf_compute(h1, r1, m1), 100.0 * 5.0 / 6.0, 1e-12);
}

Test(chrf, lowercase_and_empty_references)
{
    /* "AB" vs "ab": no common character (0); lowercased, identical (100), case:lc. */
    cr_assert_eq(sent("AB", REFS("ab")), 0.0);
    ChrfStats s;
    chrf_init(&s);
    s.lowercase = true;
    s.keep_empty = true;
    Err e;
    /* "" is kept: its statistics are all 0 and the other reference wins. */
    cr_assert_eq(chrf_add(&s, "AB", REFS("", "ab"), &e), 0, "%s", e.msg);
    cr_assert_eq(s.nrefs, 2);
    cr_assert_eq(chrf_score(&s), 100.0);
    Buf sig = {0};
    chrf_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:2|case:lc|eff:yes|nc:6|nw:0|space:no");
    buf_free(&sig);
    chrf_free(&s);
}
