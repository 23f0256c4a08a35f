/* Quality by source length (eval/bylength.h): words, buckets, length ratios, and the
   scores and shares of each bucket. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/bylength.h"

Test(bylength, words_buckets_and_ratios)
{
    cr_assert_eq(bylen_words(""), 0);
    cr_assert_eq(bylen_words(" \t "), 0);
    cr_assert_eq(bylen_words("a"), 1);
    cr_assert_eq(bylen_words("  a  b\tc "), 3);
    cr_assert_eq(bylen_words("a\xc2\xa0" "b"), 2); /* U+00A0 splits, as in Python */
    cr_assert_eq(bylen_words("a\xe2\x80\x8b" "b"), 1); /* U+200B does not */
    cr_assert_eq(bylen_words("J'ai vu le chat !"), 5);

    const size_t words[] = {0, 1, 8, 9, 15, 16, 30, 31, 1000};
    const int bucket[] = {0, 0, 0, 1, 1, 2, 2, 3, 3};
    for (int i = 0; i < 9; i++)
        cr_assert_eq(bylen_bucket_of(words[i]), bucket[i], "%zu words", words[i]);
    cr_assert_str_eq(bylen_bucket_names[0], "1-8");
    cr_assert_str_eq(bylen_bucket_names[1], "9-15");
    cr_assert_str_eq(bylen_bucket_names[2], "16-30");
    cr_assert_str_eq(bylen_bucket_names[3], ">30");

    /* exactly 0.5 and exactly 2.0 are plausible */
    cr_assert_eq(bylen_ratio_class(2, 4), 0);
    cr_assert_eq(bylen_ratio_class(1, 4), -1);
    cr_assert_eq(bylen_ratio_class(0, 1), -1);
    cr_assert_eq(bylen_ratio_class(8, 4), 0);
    cr_assert_eq(bylen_ratio_class(9, 4), 1);
    cr_assert_eq(bylen_ratio_class(3, 1), 1);
    cr_assert_eq(bylen_ratio_class(0, 0), 0);
    cr_assert_eq(bylen_ratio_class(7, 0), 0);
}

#define SRC20 "s s s s s s s s s s s s s s s s s s s s"
#define SRC31 SRC20 " s s s s s s s s s s s"

Test(bylength, buckets_of_known_segments)
{
    /* segment 0: 4 source words, 6 output words, 2 lines; segment 1: 1 source word, 6
       output words (long); segment 2: 20 source words, 5 output words (short), two
       references; segment 3: 31 source words, 5 output words (short) */
    const char *src[] = {"a b c d", "x", SRC20, SRC31};
    const char *hyp[] = {"the cat sat on the mat", "the cat sat on the mat", "one two three four five",
                         "j'ai vu le chat !"};
    const char *refs[] = {"the cat sat on the mat", "the cat sat on the mat", "the cat sat on the mat",
                          "one two three four five", "five", "chat"};
    const size_t start[] = {0, 2, 3, 5, 6}, lines[] = {2, 1, 2, 1};
    const BylenSet set = {src, hyp, 4, refs, start, lines};
    BylenBucket b[BYLEN_BUCKETS];
    size_t bad = 99;
    Err e;
    cr_assert_eq(bylen_compute(b, &set, &bad, &e), 0, "%s", e.msg);
    cr_assert_eq(bad, 99);

    const size_t nlines[] = {3, 0, 2, 1}, nseg[] = {2, 0, 1, 1}, nshort[] = {0, 0, 2, 1},
                 nlong[] = {1, 0, 0, 0};
    for (int k = 0; k < BYLEN_BUCKETS; k++) {
        cr_assert_eq(b[k].lines, nlines[k], "bucket %d", k);
        cr_assert_eq(b[k].segments, nseg[k], "bucket %d", k);
        cr_assert_eq(b[k].short_lines, nshort[k], "bucket %d", k);
        cr_assert_eq(b[k].long_lines, nlong[k], "bucket %d", k);
    }
    cr_assert_eq(b[0].short_share, 0.0);
    cr_assert_eq(b[0].long_share, 1.0 / 3.0);
    cr_assert_eq(b[2].short_share, 1.0);
    cr_assert_eq(b[3].short_share, 1.0);
    /* identical hypotheses and references: 100 */
    cr_assert(fabs(b[0].bleu - 100) < 1e-9, "%.17g", b[0].bleu);
    cr_assert(fabs(b[0].chrf - 100) < 1e-9, "%.17g", b[0].chrf);
    cr_assert(fabs(b[2].bleu - 100) < 1e-9, "%.17g", b[2].bleu);
    cr_assert(fabs(b[2].chrf - 100) < 1e-9, "%.17g", b[2].chrf);
    /* "j'ai vu le chat !" against "chat": BLEU 10.68, chrF2 57.05 (worked out from
       sacreBLEU's definitions in tests/cli/test_eval.c) */
    cr_assert(fabs(b[3].bleu - 10.68) < 0.005, "%.4f", b[3].bleu);
    cr_assert(fabs(b[3].chrf - 57.05) < 0.005, "%.4f", b[3].chrf);
    /* the empty bucket has no score */
    cr_assert(b[1].bleu == 0 && b[1].chrf == 0 && b[1].short_share == 0 && b[1].long_share == 0);

    /* a bucket's BLEU is the corpus BLEU of its segments alone */
    BleuStats bs;
    bleu_init(&bs);
    cr_assert_eq(bleu_add(&bs, hyp[0], refs, 2, &e), 0);
    cr_assert_eq(bleu_add(&bs, hyp[1], refs + 2, 1, &e), 0);
    BleuResult br;
    bleu_score(&bs, &br);
    bleu_free(&bs);
    cr_assert_eq(b[0].bleu, br.score);
}

Test(bylength, lines_default_to_one_and_errors_name_the_segment)
{
    const char *src[] = {"a", "b c"}, *hyp[] = {"x y z", "x"}, *refs[] = {"x", "y"};
    const size_t start[] = {0, 1, 2};
    BylenSet set = {src, hyp, 2, refs, start, NULL};
    BylenBucket b[BYLEN_BUCKETS];
    size_t bad = 99;
    Err e;
    cr_assert_eq(bylen_compute(b, &set, &bad, &e), 0, "%s", e.msg);
    cr_assert_eq(b[0].lines, 2);
    cr_assert_eq(b[0].long_lines, 1);
    cr_assert_eq(b[0].short_lines, 0);
    cr_assert_eq(b[0].long_share, 0.5);

    const char *refs2[] = {"x", ""}; /* segment 1 has no non-empty reference */
    set.refs = refs2;
    cr_assert_eq(bylen_compute(b, &set, &bad, &e), -1);
    cr_assert_eq(bad, 1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    for (int k = 0; k < BYLEN_BUCKETS; k++)
        cr_assert_eq(b[k].lines, 0);
}
