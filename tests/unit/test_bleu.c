/*
 * BLEU as sacreBLEU 2.x computes it by default (13a, exp smoothing).
 *
 * Expected values are worked out by hand in the comments, or are values that
 * sacreBLEU's own documentation and test suite state for the same input (said
 * where so). Tolerances: closed-form values within 1e-9 relative; values that
 * sacreBLEU publishes rounded are compared at their published precision, and
 * score lines are compared as exact strings (sacreBLEU prints 2 decimals for
 * the score, 1 for precisions, 3 for BP and ratio).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/bleu.h"
#include "helpers.h"

#define REFS(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void assert_tok(const char *in, const char *want, long ntok)
{
    Buf b = {0};
    Err e;
    long n = bleu_tokenize(in, &b, &e);
    cr_assert_eq(n, ntok, "token count of \"%s\": %ld", in, n);
    cr_assert_str_eq(b.data ? b.data : "", want, "tokenizing \"%s\"", in);
    buf_free(&b);
}

static char *format(const BleuResult *r, const char *sig)
{
    Buf b = {0};
    bleu_format(r, sig, &b);
    return buf_take(&b);
}

/* ---- 13a tokenizer ---------------------------------------------------------- */

Test(bleu_tok, punctuation_is_split)
{
    /* ',' is followed by a non-digit (rule 3), '!' is in the punctuation class. */
    assert_tok("Hello, world!", "Hello , world !", 4);
}

Test(bleu_tok, punctuation_class_members)
{
    /* Characters from each range of the class ({-~ [-` space-& (-+ :-@ /) are
       split off (the others of the class: see the quote, '$', '&' and parenthesis
       cases); the apostrophe (0x27) is not in the class and stays in the word. */
    assert_tok("l'homme [x]{y}~z|w\\v^u_t`s@r#q%p*o+n=m/l;k:j?i<h>g",
               "l'homme [ x ] { y } ~ z | w \\ v ^ u _ t ` s @ r # q % p * o + n = m / l ; k : j ? i "
               "< h > g",
               43);
}

Test(bleu_tok, decimal_point_between_digits_stays)
{
    /* "3.5": '.' preceded and followed by digits matches neither rule 2 nor 3;
       the final '.' is followed by the padding space (rule 3). */
    assert_tok("It costs 3.5 euros.", "It costs 3.5 euros .", 5);
    assert_tok("$5.00, 1.5.", "$ 5.00 , 1.5 .", 5);
}

Test(bleu_tok, thousands_comma_stays)
{
    assert_tok("1,000 people", "1,000 people", 2);
    /* "3,000.50-4": comma and point between digits stay; rule 4 splits "0-". */
    assert_tok("3,000.50-4", "3,000.50 - 4", 3);
}

Test(bleu_tok, points_after_letters_split)
{
    /* Rule 2 splits every '.' preceded by a non-digit. */
    assert_tok("e.g. this", "e . g . this", 5);
    assert_tok("a.b.c", "a . b . c", 5);
    assert_tok("U.S.A.", "U . S . A .", 6);
}

Test(bleu_tok, point_and_digit_edges)
{
    /* ".5": padded " .5 ", the space before '.' is a non-digit → ". 5".
       "5.": the '.' is followed by the padding space → "5 .".
       "x.5": preceded by a letter (rule 2). "5.x": followed by a letter (rule 3). */
    assert_tok(".5", ". 5", 2);
    assert_tok("5.", "5 .", 2);
    assert_tok("x.5", "x . 5", 3);
    assert_tok("5.x", "5 . x", 3);
    assert_tok("1..5", "1 . . 5", 4);
}

Test(bleu_tok, matches_do_not_overlap)
{
    /* "a.,5" padded " a.,5 ". Rule 2 matches "a." and resumes at ',', which is
       followed by '5' (not [.,]), so ',' is not split by rule 2; rule 3 needs a
       non-digit after ',' and sees '5'. The ",5" stays one token — an
       overlapping search would have matched ".," as well. */
    assert_tok("a.,5", "a . ,5", 3);
    assert_tok(".,5", ". ,5", 2);
    /* "5.,5": '5' is a digit, so rule 2 matches ".," (the '.' as [^0-9]) → "5. , 5";
       rule 3 then splits the '.' before the space. */
    assert_tok("5.,5", "5 . , 5", 4);
}

Test(bleu_tok, hyphen_split_only_after_digit)
{
    assert_tok("10-20 well-known 3-a", "10 - 20 well-known 3 - a", 7);
    /* Non-overlapping matches scan on after each "d-": both hyphens split. */
    assert_tok("1-2-3", "1 - 2 - 3", 5);
}

Test(bleu_tok, quotes_and_parentheses)
{
    assert_tok("He said \"hi\" ('yes')", "He said \" hi \" ( 'yes' )", 8);
}

Test(bleu_tok, entities_unescaped)
{
    assert_tok("&quot;A&quot; &amp; B &lt;C&gt;", "\" A \" & B < C >", 8);
}

Test(bleu_tok, entities_unescaped_in_sequence)
{
    /* Each replacement runs over the whole string in the order &quot; &amp;
       &lt; &gt;: "&amp;lt;" becomes "&lt;" and then "<"; "&amp;quot;" becomes
       "&quot;" after the &quot; pass, so it stays and its '&' and ';' split. */
    assert_tok("&amp;lt; &amp;quot;", "< & quot ;", 4);
}

Test(bleu_tok, skipped_and_line_breaks)
{
    /* "<skipped>" removed, "-\n" joins "b" and "c", "\n" becomes a space. */
    assert_tok("a <skipped> b-\nc\nd", "a bc d", 3);
    /* The line is right-stripped first, so a final "-\n" loses only the "\n". */
    assert_tok("end-\n", "end-", 1);
    assert_tok("end-\nx", "endx", 1);
}

Test(bleu_tok, non_ascii_untouched)
{
    /* Accented letters are outside every ASCII class; a non-ASCII letter before
       '.' counts as [^0-9]. */
    assert_tok("Déjà vu, naïve café.", "Déjà vu , naïve café .", 6);
    assert_tok("é.5", "é . 5", 3);
    assert_tok("Je l'ai vu à 10h30.", "Je l'ai vu à 10h30 .", 6);
}

Test(bleu_tok, unicode_whitespace_separates_tokens)
{
    /* As Python's str.split(): U+00A0 and U+3000 separate, U+200B (zero-width
       space, not whitespace) does not. */
    assert_tok("a\xc2\xa0" "b\xe3\x80\x80" "c\xe2\x80\x8b" "d", "a b c\xe2\x80\x8b" "d", 3);
}

Test(bleu_tok, empty_and_blank_lines_have_no_tokens)
{
    assert_tok("", "", 0);
    assert_tok("  \t ", "", 0);
}

Test(bleu_tok, invalid_utf8_is_an_error)
{
    Buf b = {0};
    Err e;
    cr_assert_eq(bleu_tokenize("ab\xff", &b, &e), -1);
    cr_assert_str_eq(e.msg, "invalid UTF-8 at byte 2");
    buf_free(&b);
}

static void assert_tok_opts(const char *in, BleuTokenizer tok, bool lowercase, const char *want, long ntok)
{
    Buf b = {0};
    Err e;
    BleuOpts o = {.tok = tok, .lowercase = lowercase};
    long n = bleu_tokenize_opts(in, &o, &b, &e);
    cr_assert_eq(n, ntok, "token count of \"%s\": %ld", in, n);
    cr_assert_str_eq(b.data ? b.data : "", want, "tokenizing \"%s\"", in);
    buf_free(&b);
}

Test(bleu_tok, intl_splits_punctuation_and_symbols_by_category)
{
    /* (\P{N})(\p{P}) -> "\1 \2 ", (\p{P})(\P{N}) -> " \1 \2", (\p{S}) -> " \1 ". */
    assert_tok_opts("«Bonjour», dit-il.", BLEU_TOK_INTL, false, "« Bonjour » , dit - il .", 8);
    /* "¿" (Po) before a letter; "€" (Sc), "+" and "=" (Sm) are symbols. */
    assert_tok_opts("¿Qué? x+y=z 5€", BLEU_TOK_INTL, false, "¿ Qué ? x + y = z 5 €", 10);
    /* Punctuation between digits stays ("1,000", "3.5"); so does a final "." after a
       digit, mteval-v14's quirk: nothing follows it for the second pattern. */
    assert_tok_opts("Il a payé 1,000 pour 3.5 kg en 2024.", BLEU_TOK_INTL, false,
                    "Il a payé 1,000 pour 3.5 kg en 2024.", 9);
    assert_tok_opts("en 2024. Oui", BLEU_TOK_INTL, false, "en 2024 . Oui", 4);
    /* Matches do not overlap: "a!!" -> "a ! " + "!" in pass 1. */
    assert_tok_opts("a!!", BLEU_TOK_INTL, false, "a ! !", 3);
    assert_tok_opts("  ", BLEU_TOK_INTL, false, "", 0);
}

Test(bleu_tok, none_splits_on_whitespace_only)
{
    assert_tok_opts("a,b  c.\t&amp; ", BLEU_TOK_NONE, false, "a,b c. &amp;", 3);
    assert_tok_opts("", BLEU_TOK_NONE, false, "", 0);
}

Test(bleu_tok, lowercase_as_python)
{
    /* Python's str.lower(): "İ" -> "i" + U+0307; a capital sigma is final (ς) after
       a cased letter when no cased letter follows (case-ignorable "." skipped), else
       σ: "ΑΣ." -> "ας.", a lone "Σ" -> "σ", "ΣΑ" -> "σα". */
    assert_tok_opts("İstanbul ΑΣ. Σ ΣΑ ÉTÉ", BLEU_TOK_NONE, true,
                    "i\xcc\x87stanbul ας. σ σα été", 5);
    /* Lowercasing comes before 13a's rules. */
    assert_tok_opts("The CAT.", BLEU_TOK_13A, true, "the cat .", 3);
}

Test(bleu, empty_references_kept_with_keep_empty)
{
    /* sacreBLEU 2.2 and later: "" is a reference of length 0 and counts in nrefs. */
    BleuOpts o = {.keep_empty = true};
    BleuStats s;
    bleu_init_opts(&s, &o);
    Err e;
    const char *refs[2] = {"", "a b c d"};
    cr_assert_eq(bleu_add(&s, "a b c d", refs, 2, &e), 0);
    cr_assert_eq(s.nrefs, 2);
    cr_assert_eq(s.ref_len, 4);
    cr_assert_eq(bleu_add(&s, "a b", refs, 1, &e), 0);
    cr_assert_eq(s.nrefs, BLEU_NREFS_VAR);
    cr_assert_eq(s.ref_len, 4); /* "" has length 0 */
    Buf sig = {0};
    bleu_signature_opts(&s, true, &sig);
    cr_assert_str_eq(sig.data, "nrefs:var|case:mixed|eff:yes|tok:13a|smooth:exp");
    buf_free(&sig);
    bleu_free(&s);

    o = (BleuOpts){.tok = BLEU_TOK_INTL, .lowercase = true};
    bleu_init_opts(&s, &o);
    cr_assert_eq(bleu_add(&s, "a", refs, 2, &e), 0);
    cr_assert_eq(s.nrefs, 1);
    bleu_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:1|case:lc|eff:no|tok:intl|smooth:exp");
    buf_free(&sig);
    bleu_free(&s);
}

/* ---- scores ------------------------------------------------------------------ */

Test(bleu, identical_hypothesis_scores_100)
{
    /* 7 tokens "The cat sat on the mat ."; every n-gram matches: p = 100 for all
       orders, BP = 1, score = exp(4·ln 100 / 4) = 100 (to rounding). */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("The cat sat on the mat.", REFS("The cat sat on the mat."), false, &r, &e), 0);
    assert_rel(r.score, 100.0, 1e-9);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)");
    free(line);
}

Test(bleu, no_match_scores_0)
{
    /* No n-gram matches at all: sacreBLEU returns 0 with all precisions 0,
       even though exp smoothing would give nonzero ones. sys 2 > ref 1: BP 1. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("abc def", REFS("xyz"), false, &r, &e), 0);
    cr_assert_eq(r.score, 0.0);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 2.000 hyp_len = 2 ref_len = 1)");
    free(line);
    /* sacreBLEU issue #141 example, test suite value 0.0 (also with effective order). */
    cr_assert_eq(bleu_sentence("this is a cat", REFS("okay thanks"), true, &r, &e), 0);
    cr_assert_eq(r.score, 0.0);
}

Test(bleu, exp_smoothing_for_zero_higher_orders)
{
    /* hyp "the cat sat on a mat" vs ref "the cat is on the mat" (6 tokens each).
       1-grams: the cat on mat match → 4/6.  2-grams: "the cat" → 1/5.
       3-grams 0/4, 4-grams 0/3: exp smoothing gives 100/(2·4) = 12.5 and then
       100/(4·3) = 8.333...  BP = 1.
       score = (400/6 · 20 · 12.5 · 100/12)^(1/4) = (1e7/72)^(1/4) ≈ 19.3049. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("the cat sat on a mat", REFS("the cat is on the mat"), false, &r, &e), 0);
    cr_assert_eq(r.counts[0], 4);
    cr_assert_eq(r.counts[1], 1);
    cr_assert_eq(r.counts[2], 0);
    cr_assert_eq(r.counts[3], 0);
    cr_assert_eq(r.totals[0], 6);
    cr_assert_eq(r.totals[3], 3);
    assert_rel(r.precisions[0], 400.0 / 6.0, 1e-12);
    assert_rel(r.precisions[1], 20.0, 1e-12);
    assert_rel(r.precisions[2], 12.5, 1e-12);
    assert_rel(r.precisions[3], 100.0 / 12.0, 1e-12);
    assert_rel(r.score, pow(1e7 / 72.0, 0.25), 1e-9);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 19.30 66.7/20.0/12.5/8.3 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)");
    free(line);
}

Test(bleu, brevity_penalty)
{
    /* hyp "the cat sat on the" (5) vs ref "the cat sat on the mat" (6): all
       n-grams match (5/5, 4/4, 3/3, 2/2); BP = exp(1 − 6/5) = exp(−0.2).
       score = 100·exp(−0.2) ≈ 81.8731. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("the cat sat on the", REFS("the cat sat on the mat"), false, &r, &e), 0);
    assert_rel(r.bp, exp(-0.2), 1e-12);
    assert_rel(r.score, 100.0 * exp(-0.2), 1e-9);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 81.87 100.0/100.0/100.0/100.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 ref_len = 6)");
    free(line);
}

Test(bleu, hypothesis_shorter_than_max_order)
{
    /* hyp "the cat" (2 tokens) vs a 6-token ref: p1 = p2 = 100, but there are
       no 3-grams (total 0): sacreBLEU stops there leaving p3 = p4 = 0, whose
       log is taken as -9999999999, so the score is 0. BP = exp(1 − 3). With
       effective order the mean runs over 2 orders: 100·exp(−2) ≈ 13.5335. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("the cat", REFS("the cat sat on the mat"), false, &r, &e), 0);
    cr_assert_eq(r.score, 0.0);
    assert_rel(r.bp, exp(-2.0), 1e-12);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 0.00 100.0/100.0/0.0/0.0 (BP = 0.135 ratio = 0.333 hyp_len = 2 ref_len = 6)");
    free(line);
    cr_assert_eq(bleu_sentence("the cat", REFS("the cat sat on the mat"), true, &r, &e), 0);
    assert_rel(r.score, 100.0 * exp(-2.0), 1e-9);
}

Test(bleu, multi_reference_clipping_and_closest_length)
{
    /* hyp "the the the cat" (4); refs "the cat" (2), "the the dog sat down now" (6).
       Closest length: |4−2| = |4−6| = 2, a tie → the shorter, 2 (so BP = 1).
       Clipping uses the max count in ONE reference: "the" ×3 in hyp, 1 in ref1,
       2 in ref2 → 2 (not the sum 3); "cat" → 1: 1-grams 3/4.
       2-grams: "the the" ×2 (ref2 has 1) → 1, "the cat" → 1: 2/3.
       3-grams 0/2 → 100/(2·2) = 25; 4-grams 0/1 → 100/(4·1) = 25.
       score = (75 · 200/3 · 25 · 25)^(1/4) = 3125000^(1/4) = 25·8^(1/4) ≈ 42.0448. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("the the the cat", REFS("the cat", "the the dog sat down now"), false, &r, &e), 0);
    cr_assert_eq(r.ref_len, 2);
    cr_assert_eq(r.counts[0], 3);
    cr_assert_eq(r.counts[1], 2);
    assert_rel(r.score, 25.0 * pow(8.0, 0.25), 1e-9);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 42.04 75.0/66.7/25.0/25.0 (BP = 1.000 ratio = 2.000 hyp_len = 4 ref_len = 2)");
    free(line);

    /* A strictly closer reference wins regardless of order: 5 is closer to 4. */
    cr_assert_eq(bleu_sentence("a b c d", REFS("a b", "a b c d e"), false, &r, &e), 0);
    cr_assert_eq(r.ref_len, 5);
}

/* The README example of sacreBLEU 2.x: three segments, two reference sets. */
static const char *readme_hyps[3] = {"The dog bit the man.", "It wasn't surprising.",
                                     "The man had just bitten him."};
static const char *readme_refs[3][2] = {
    {"The dog bit the man.", "The dog had bit the man."},
    {"It was not unexpected.", "No one was surprised."},
    {"The man bit him first.", "The man had bitten the dog."},
};

Test(bleu, sacrebleu_readme_corpus)
{
    /* Published: "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
       hyp_len = 17 ref_len = 18)", signature "nrefs:2|case:mixed|eff:no|tok:13a|
       smooth:exp|version:2.0.0"; sacreBLEU's test suite gives 48.530827. */
    BleuStats s;
    bleu_init(&s);
    Err e;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(bleu_add(&s, readme_hyps[i], readme_refs[i], 2, &e), 0, "%s", e.msg);
    BleuResult r;
    bleu_score(&s, &r);
    cr_assert(fabs(r.score - 48.530827) < 1e-6, "score %.9f", r.score);
    /* 82.4 = 14/17, 50.0 = 7/14, 45.5 = 5/11, 37.5 = 3/8 */
    long long counts[4] = {14, 7, 5, 3}, totals[4] = {17, 14, 11, 8};
    for (int n = 0; n < 4; n++) {
        cr_assert_eq(r.counts[n], counts[n]);
        cr_assert_eq(r.totals[n], totals[n]);
    }
    Buf sig = {0};
    bleu_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp");
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    free(line);
    line = format(&r, sig.data);
    cr_assert_str_eq(line, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp = 48.53 82.4/50.0/45.5/37.5 "
                           "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    free(line);
    buf_free(&sig);
    bleu_free(&s);
}

Test(bleu, sacrebleu_readme_variable_references)
{
    /* The README's variant with the first reference of segment 1 blanked out:
       "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17
       ref_len = 19)" and "nrefs:var". The empty reference is dropped. */
    BleuStats s;
    bleu_init(&s);
    Err e;
    const char *first[2] = {"", "The dog had bit the man."};
    cr_assert_eq(bleu_add(&s, readme_hyps[0], first, 2, &e), 0);
    for (int i = 1; i < 3; i++)
        cr_assert_eq(bleu_add(&s, readme_hyps[i], readme_refs[i], 2, &e), 0);
    cr_assert_eq(s.nrefs, BLEU_NREFS_VAR);
    BleuResult r;
    bleu_score(&s, &r);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 29.44 82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)");
    free(line);
    Buf sig = {0};
    bleu_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp");
    buf_free(&sig);
    bleu_free(&s);
}

Test(bleu, empty_hypotheses_are_scored_not_dropped)
{
    /* sacreBLEU test suite: ('', '', '') against the README references → 0.0.
       sys_len 0 < ref_len: BP 0. The closest reference to length 0 is the
       shortest of each segment: 6 + 5 + 6 = 17. */
    BleuStats s;
    bleu_init(&s);
    Err e;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(bleu_add(&s, "", readme_refs[i], 2, &e), 0);
    BleuResult r;
    bleu_score(&s, &r);
    cr_assert_eq(r.score, 0.0);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 17)");
    free(line);
    bleu_free(&s);
}

Test(bleu, sacrebleu_statistics_case)
{
    /* sacreBLEU test suite: "am I am a character sequence" vs "I am a symbol
       string sequence a a" has counts [4, 2, 1, 0] and totals [6, 5, 4, 3].
       With exp smoothing p = 66.67, 40, 25, 100/(2·3); BP = exp(1 − 8/6):
       score = exp(−1/3)·(200/3 · 40 · 25 · 50/3)^(1/4) ≈ 23.2635. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("am I am a character sequence", REFS("I am a symbol string sequence a a"), false, &r, &e), 0);
    long long counts[4] = {4, 2, 1, 0}, totals[4] = {6, 5, 4, 3};
    for (int n = 0; n < 4; n++) {
        cr_assert_eq(r.counts[n], counts[n]);
        cr_assert_eq(r.totals[n], totals[n]);
    }
    assert_rel(r.score, exp(-1.0 / 3.0) * pow(200.0 / 3.0 * 40.0 * 25.0 * 50.0 / 3.0, 0.25), 1e-9);
}

Test(bleu, compute_from_statistics)
{
    /* sacreBLEU test suite: compute_bleu([9,7,5,3], [10,8,6,4], 11, 11) = 0.8375922397
       (on the 0-1 scale): (90 · 87.5 · 83.33 · 75)^(1/4). */
    long long c[4] = {9, 7, 5, 3}, t[4] = {10, 8, 6, 4};
    BleuResult r;
    bleu_compute(c, t, 11, 11, false, &r);
    cr_assert(fabs(r.score - 83.75922397) < 1e-6, "score %.10f", r.score);
    assert_rel(r.score, pow(90.0 * 87.5 * (500.0 / 6.0) * 75.0, 0.25), 1e-9);

    /* sys_len 0 → 0, BP 0. */
    long long z[4] = {0, 0, 0, 0};
    bleu_compute(z, z, 0, 5, false, &r);
    cr_assert_eq(r.score, 0.0);
    cr_assert_eq(r.bp, 0.0);
}

Test(bleu, sacrebleu_sentence_bleu_unicode_example)
{
    /* sacreBLEU issue #98 example, test suite value 8.493 (epsilon 1e-3) with
       exp smoothing and effective order (sacrebleu.sentence_bleu's default).
       Non-ASCII letters pass through: "producţia" (U+0163) and "Producția"
       (U+021B) are different tokens, "zahăr" matches twice. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
                               REFS("producţia de zahăr brut se exprimă în zahăr alb;"), true, &r, &e), 0);
    cr_assert(fabs(r.score - 8.493) < 1e-3, "score %.6f", r.score);
    cr_assert_eq(r.counts[0], 5); /* de, zahăr, în, alb, ; */
    cr_assert_eq(r.sys_len, 14);
    cr_assert_eq(r.ref_len, 10);
}

Test(bleu, accents_are_distinct_characters)
{
    /* "café" vs "cafe": different tokens, nothing matches → 0; with the accents
       on both sides everything matches → 100. NBSP separates tokens. */
    BleuResult r;
    Err e;
    cr_assert_eq(bleu_sentence("un café noir au lait", REFS("un cafe noir au lait"), false, &r, &e), 0);
    cr_assert_eq(r.counts[0], 4);
    cr_assert_eq(r.counts[3], 0);
    cr_assert_eq(bleu_sentence("un café noir\xc2\xa0" "au lait", REFS("un café noir au lait"), false, &r, &e), 0);
    assert_rel(r.score, 100.0, 1e-9);
}

Test(bleu, empty_and_missing_references_are_dropped)
{
    /* {"", NULL, "the cat sat on the mat"} scores as {"the cat sat on the mat"}
       and counts as one reference. A whitespace-only reference is kept (it is
       not ""), with length 0. */
    BleuStats s;
    bleu_init(&s);
    Err e;
    const char *refs[3] = {"", NULL, "the cat sat on the mat"};
    cr_assert_eq(bleu_add(&s, "the cat sat on the mat", refs, 3, &e), 0);
    cr_assert_eq(s.nrefs, 1);
    BleuResult r;
    bleu_score(&s, &r);
    assert_rel(r.score, 100.0, 1e-9);
    bleu_free(&s);

    cr_assert_eq(bleu_sentence("", REFS(" ", "the cat sat"), false, &r, &e), 0);
    cr_assert_eq(r.ref_len, 0); /* closest to 0 tokens is the blank reference */
    cr_assert_eq(r.bp, 1.0);
}

Test(bleu, segment_without_reference_is_an_error)
{
    BleuStats s;
    bleu_init(&s);
    Err e;
    cr_assert_eq(bleu_add(&s, "a b", NULL, 0, &e), -1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    const char *refs[2] = {"", NULL};
    cr_assert_eq(bleu_add(&s, "a b", refs, 2, &e), -1);
    cr_assert_str_eq(e.msg, "no reference (empty references are ignored)");
    cr_assert_eq(s.nsegs, 0);
    cr_assert_eq(s.sys_len, 0);
    bleu_free(&s);
}

Test(bleu, invalid_utf8_leaves_statistics_unchanged)
{
    BleuStats s;
    bleu_init(&s);
    Err e;
    cr_assert_eq(bleu_add(&s, "a b c", REFS("a b c", "x\xc3"), &e), -1);
    cr_assert_str_eq(e.msg, "invalid UTF-8 at byte 1 of reference 2");
    cr_assert_eq(bleu_add(&s, "\xed\xa0\x80", REFS("a"), &e), -1); /* a UTF-16 surrogate */
    cr_assert_str_eq(e.msg, "invalid UTF-8 at byte 0 of the hypothesis");
    cr_assert_eq(s.nsegs, 0);
    cr_assert_eq(s.sys_len, 0);
    cr_assert_eq(s.ref_len, 0);
    cr_assert_eq(s.totals[0], 0);
    /* The accumulator still works afterwards. */
    cr_assert_eq(bleu_add(&s, "a b c d", REFS("a b c d"), &e), 0);
    BleuResult r;
    bleu_score(&s, &r);
    assert_rel(r.score, 100.0, 1e-9);
    bleu_free(&s);
}

Test(bleu, empty_corpus)
{
    /* Nothing added: all statistics 0 → score 0; sys_len == ref_len → BP 1. */
    BleuStats s;
    bleu_init(&s);
    BleuResult r;
    bleu_score(&s, &r);
    cr_assert_eq(r.score, 0.0);
    char *line = format(&r, NULL);
    cr_assert_str_eq(line, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 0 ref_len = 0)");
    free(line);
    Buf sig = {0};
    bleu_signature(&s, &sig);
    cr_assert_str_eq(sig.data, "nrefs:0|case:mixed|eff:no|tok:13a|smooth:exp");
    buf_free(&sig);
    bleu_free(&s);
}

Test(bleu, streaming_equals_sum_of_segments)
{
    /* Corpus BLEU is not the mean of sentence BLEUs: the statistics add up.
       Segment 1 is the exp-smoothing case (counts 4,1,0,0 / totals 6,5,4,3,
       lengths 6/6), segment 2 the brevity case (5,4,3,2 / 5,4,3,2, lengths 5/6):
       counts 9,5,3,2 / totals 11,9,7,5, sys 11, ref 12.
       score = exp(1 − 12/11) · (900/11 · 500/9 · 300/7 · 40)^(1/4). */
    BleuStats s;
    bleu_init(&s);
    Err e;
    cr_assert_eq(bleu_add(&s, "the cat sat on a mat", REFS("the cat is on the mat"), &e), 0);
    cr_assert_eq(bleu_add(&s, "the cat sat on the", REFS("the cat sat on the mat"), &e), 0);
    BleuResult r;
    bleu_score(&s, &r);
    cr_assert_eq(r.sys_len, 11);
    cr_assert_eq(r.ref_len, 12);
    double want = exp(1.0 - 12.0 / 11.0) * pow(900.0 / 11.0 * 500.0 / 9.0 * 300.0 / 7.0 * 40.0, 0.25);
    assert_rel(r.score, want, 1e-9);
    bleu_free(&s);
}

Test(bleu, ten_thousand_segments)
{
    /* 10,000 segments of 12-20 tokens, hypothesis equal to the first of two
       references: BLEU 100 exactly as a corpus. (How fast is bench/'s question, not a
       test's: a bound on the time failed on a busy machine.) */
    static const char *words[] = {"le", "chat", "noir", "dort", "sur", "la", "table", "de",
                                  "cuisine", "pendant", "que", "Marie", "lit", "un", "livre", "."};
    BleuStats s;
    bleu_init(&s);
    Err e;
    char hyp[256], ref2[256];
    unsigned x = 12345;
    for (int seg = 0; seg < 10000; seg++) {
        size_t len = 0, len2 = 0;
        int ntok = 12 + seg % 9;
        for (int k = 0; k < ntok; k++) {
            x = x * 1103515245u + 12345u;
            const char *w = words[(x >> 16) % 16];
            len += (size_t)snprintf(hyp + len, sizeof hyp - len, "%s%s", k ? " " : "", w);
            len2 += (size_t)snprintf(ref2 + len2, sizeof ref2 - len2, "%s%s", k ? " " : "", k % 3 ? w : "x");
        }
        const char *refs[2] = {hyp, ref2};
        cr_assert_eq(bleu_add(&s, hyp, refs, 2, &e), 0);
    }
    BleuResult r;
    bleu_score(&s, &r);
    assert_rel(r.score, 100.0, 1e-9);
    cr_assert_eq(s.nsegs, 10000);
    cr_assert_eq(r.sys_len, r.ref_len);
    bleu_free(&s);
}
