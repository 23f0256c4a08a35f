/* One scored set's BLEU and chrF (eval/scores.h) agree with bleu_add and chrf_add. */
#include <criterion/criterion.h>
#include <string.h>

#include "eval/chrf.h"
#include "eval/scores.h"

Test(scores, multi_reference_segments_as_bleu_and_chrf)
{
    const char *hyp[] = {"The cat sat on the mat.", "A dog barks."};
    const char *refs[] = {"The cat sat on the mat.", "A cat was on the mat.", "The dog barks."};
    const size_t start[] = {0, 2, 3};
    TextScores s;
    size_t bad = 99;
    Err e;
    cr_assert_eq(scores_compute(&s, hyp, 2, refs, start, &bad, &e), 0, "%s", e.msg);
    cr_assert_eq(bad, 99);

    BleuStats bs;
    ChrfStats cs;
    bleu_init(&bs);
    chrf_init(&cs);
    cr_assert_eq(bleu_add(&bs, hyp[0], refs, 2, &e), 0);
    cr_assert_eq(bleu_add(&bs, hyp[1], refs + 2, 1, &e), 0);
    cr_assert_eq(chrf_add(&cs, hyp[0], refs, 2, &e), 0);
    cr_assert_eq(chrf_add(&cs, hyp[1], refs + 2, 1, &e), 0);
    BleuResult br;
    bleu_score(&bs, &br);
    Buf line = {0}, sig = {0}, csig = {0};
    bleu_format(&br, NULL, &line);
    bleu_signature(&bs, &sig);
    chrf_signature(&cs, &csig);
    cr_assert_eq(s.bleu.score, br.score);
    cr_assert_eq(s.chrf, chrf_score(&cs));
    cr_assert_str_eq(s.bleu_line.data, line.data);
    cr_assert_str_eq(s.bleu_signature.data, sig.data);
    cr_assert_str_eq(s.chrf_signature.data, csig.data);
    cr_assert_str_eq(s.bleu_signature.data, "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp");
    buf_free(&line);
    buf_free(&sig);
    buf_free(&csig);
    bleu_free(&bs);
    chrf_free(&cs);
    scores_free(&s);
}

Test(scores, the_first_bad_segment_is_named)
{
    const char *hyp[] = {"fine", "no reference", "bad \xFF"};
    const char *refs[] = {"fine", "", "x"};
    const size_t start[] = {0, 1, 2, 3};
    TextScores s;
    size_t bad = 99;
    Err e;
    cr_assert_eq(scores_compute(&s, hyp, 3, refs, start, &bad, &e), -1);
    cr_assert_eq(bad, 1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    cr_assert_null(s.bleu_line.data);
    cr_assert_eq(scores_compute(&s, hyp + 2, 1, refs + 2, start, &bad, &e), -1);
    cr_assert_eq(bad, 0);
    cr_assert(strstr(e.msg, "invalid UTF-8") != NULL, "%s", e.msg);
}
