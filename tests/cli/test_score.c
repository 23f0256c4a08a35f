/*
 * End-to-end tests of `s2s score`: sacreBLEU's command line (2.6.0) on files.
 *
 * Expected lines are sacreBLEU's published values (its README and test suite, as the
 * unit tests of eval/ cite them), or worked out by hand in the comments from the
 * definitions: 13a/intl/none tokens, clipped n-gram counts against the most generous
 * reference, the closest reference length, exp smoothing, BP = exp(1 - ref/hyp).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define V "|version:2.6.0"
#define BLEU_SIG "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp" V
#define CHRF_SIG "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no" V

typedef struct Fix {
    char *dir;
    char *hyp, *r1, *r2;
} Fix;

static Fix fix_new(const char *hyp, const char *r1, const char *r2)
{
    Fix f = {tmpdir_new(), NULL, NULL, NULL};
    f.hyp = strf("%s/hyp.txt", f.dir);
    f.r1 = strf("%s/ref1.txt", f.dir);
    f.r2 = strf("%s/ref2.txt", f.dir);
    write_file(f.hyp, hyp);
    write_file(f.r1, r1);
    if (r2)
        write_file(f.r2, r2);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->hyp);
    free(f->r1);
    free(f->r2);
}

/* sacreBLEU's README corpus: three segments, two reference files. */
static const char readme_hyp[] = "The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n";
static const char readme_r1[] = "The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n";
static const char readme_r2[] = "The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n";

Test(cli_score, sacrebleu_readme_corpus_text)
{
    /* Published: BLEU 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17
       ref_len = 18), chrF2 59.73, nrefs:2. The text form aligns the lines at '='; the
       score has -w decimals (1 by default, as sacreBLEU's command line). */
    Fix f = fix_new(readme_hyp, readme_r1, readme_r2);
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "-w", "2");
    expect_ok(&r, "  BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V " = 48.53 82.4/50.0/45.5/37.5 "
                  "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n"
                  "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" V " = 59.73\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2);
    expect_ok(&r, "  BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V " = 48.5 82.4/50.0/45.5/37.5 "
                  "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n"
                  "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" V " = 59.7\n");
    /* One metric: no alignment. */
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "--metrics", "chrf", "--width", "2");
    expect_ok(&r, "chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" V " = 59.73\n");
    /* The hypotheses from stdin. */
    r = RUN_S2S(readme_hyp, "score", "-", f.r1, f.r2, "-m", "bleu", "-w", "2");
    expect_ok(&r, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V " = 48.53 82.4/50.0/45.5/37.5 "
                  "(BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n");
    fix_free(&f);
}

Test(cli_score, sacrebleu_readme_corpus_json)
{
    /* sacreBLEU's -f json: json.dumps(indent=1) of each score, a list for two; the
       score is float(f"{score:.{w}f}"). */
    Fix f = fix_new(readme_hyp, readme_r1, readme_r2);
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "--json", "-w", "2");
    expect_ok(&r, "[\n{\n \"name\": \"BLEU\",\n \"score\": 48.53,\n"
                  " \"signature\": \"nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V "\",\n"
                  " \"verbose_score\": \"82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\",\n"
                  " \"nrefs\": \"2\",\n \"case\": \"mixed\",\n \"eff\": \"no\",\n \"tok\": \"13a\",\n"
                  " \"smooth\": \"exp\",\n \"version\": \"2.6.0\"\n},\n"
                  "{\n \"name\": \"chrF2\",\n \"score\": 59.73,\n"
                  " \"signature\": \"nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" V "\",\n"
                  " \"nrefs\": \"2\",\n \"case\": \"mixed\",\n \"eff\": \"yes\",\n \"nc\": \"6\",\n"
                  " \"nw\": \"0\",\n \"space\": \"no\",\n \"version\": \"2.6.0\"\n}\n]\n");
    /* One metric: the object alone. Width 0: 59.73 -> "60" -> 60.0. */
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "--json", "-m", "chrf", "-w", "0");
    expect_ok(&r, "{\n \"name\": \"chrF2\",\n \"score\": 60.0,\n"
                  " \"signature\": \"nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no" V "\",\n"
                  " \"nrefs\": \"2\",\n \"case\": \"mixed\",\n \"eff\": \"yes\",\n \"nc\": \"6\",\n"
                  " \"nw\": \"0\",\n \"space\": \"no\",\n \"version\": \"2.6.0\"\n}\n");
    fix_free(&f);
}

Test(cli_score, sacrebleu_published_single_segments)
{
    /* sacreBLEU's test suite: "am I am a character sequence" against "I am a symbol
       string sequence a a": counts 4/2/1/0 of 6/5/4/3, exp smoothing, BP exp(1 - 8/6)
       = 0.717, BLEU 23.2635 (the unit test derives it). */
    Fix f = fix_new("am I am a character sequence\n", "I am a symbol string sequence a a\n", NULL);
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu", "-w", "4");
    expect_ok(&r, "BLEU|" BLEU_SIG " = 23.2635 66.7/40.0/25.0/16.7 (BP = 0.717 ratio = 0.750 hyp_len = 6 ref_len = 8)\n");
    fix_free(&f);

    /* sacreBLEU issue #98, sentence BLEU (effective order) 8.493: 14 hypothesis
       tokens, 10 reference tokens; 5/14 unigrams (de, zahăr, în, alb, ;), 2/13 bigrams
       (de zahăr, alb ;), 0/12 and 0/11 above: p = 35.7, 15.4, 100/(2·12) = 4.2,
       100/(4·11) = 2.3; BP 1, ratio 1.4. */
    f = fix_new("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;\n",
                "producţia de zahăr brut se exprimă în zahăr alb;\n", NULL);
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "--sentence", "-m", "bleu", "-w", "3");
    expect_ok(&r, "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp" V " = 8.493 35.7/15.4/4.2/2.3 "
                  "(BP = 1.000 ratio = 1.400 hyp_len = 14 ref_len = 10)\n");
    fix_free(&f);

    /* sacreBLEU's chrF test suite (effective order): "aa" vs "ab" 25, "a b c" vs
       "abc" 100, "" vs "reference" 0; one line each with --sentence (-sl). */
    f = fix_new("aa\na b c\n\n", "ab\nabc\nreference\n", NULL);
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-sl", "-m", "chrf");
    expect_ok(&r, "chrF2|" CHRF_SIG " = 25.0\nchrF2|" CHRF_SIG " = 100.0\nchrF2|" CHRF_SIG " = 0.0\n");
    fix_free(&f);
}

Test(cli_score, cased_multi_reference_by_hand)
{
    /*
     * Line 1: "The cat sat on the mat." against "the cat sat on the mat." and "The
     * cat is on the mat.": 7 tokens each (13a splits the final "."). Unigrams 7/7
     * ("The" from ref 2, "sat" from ref 1); bigrams 6/6 ("The cat" from ref 2, "cat
     * sat" from ref 1); trigrams 4/5 ("The cat sat" is in neither: case counts);
     * 4-grams 3/4. Line 2: "A dog barks." against "No dog barked." (4 tokens) and "A
     * dog barks loudly." (5): the closest length is 4; unigrams 4/4, bigrams 2/3 ("A
     * dog", "dog barks"), trigrams 1/2, 4-grams 0/1.
     * Corpus: 11/11, 8/9, 5/7, 3/5, lengths 11 and 11, BP 1:
     *   BLEU = 100 · (1 · 8/9 · 5/7 · 3/5)^(1/4) = 100 · (8/21)^(1/4) = 78.5629.
     * With --sentence, line 1 alone: 100 · (1 · 1 · 4/5 · 3/4)^(1/4) = 100 · 0.6^(1/4) =
     * 88.0112; line 2 alone: every order has n-grams, so the effective order is 4, and
     * its 4-gram 0/1 is smoothed to 100/(2·1) = 50:
     *   100 · (1 · 2/3 · 1/2 · 1/2)^(1/4) = 100 · (1/6)^(1/4) = 63.8943.
     */
    Fix f = fix_new("The cat sat on the mat.\nA dog barks.\n", "the cat sat on the mat.\nNo dog barked.\n",
                    "The cat is on the mat.\nA dog barks loudly.\n");
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "-m", "bleu", "-w", "4");
    expect_ok(&r, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V " = 78.5629 100.0/88.9/71.4/60.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "-m", "bleu", "-w", "4", "--sentence");
    expect_ok(&r, "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp" V " = 88.0112 100.0/100.0/80.0/75.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)\n"
                  "BLEU|nrefs:2|case:mixed|eff:yes|tok:13a|smooth:exp" V " = 63.8943 100.0/66.7/50.0/50.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n");
    fix_free(&f);
}

Test(cli_score, lowercase_by_hand)
{
    /*
     * "The Cat sat." against "the cat SAT.": cased, only "." matches: 1/4, then 0/3,
     * 0/2, 0/1 smoothed to 100/(2·3), 100/(4·2), 100/(8·1):
     *   BLEU = (25 · 16.667 · 12.5 · 12.5)^(1/4) = 15.97. -lc: everything matches, 100.
     * Greek capitals lowercase as Python does: a sigma that ends a word is final
     * ("ΟΔΟΣ" -> "οδος", "ΤΟΥΣ" -> "τους") and one that starts it is not ("ΣΟΦΙΑ" ->
     * "σοφια"), so the line matches its lowercase reference exactly: 100. -lc is BLEU's
     * (as sacreBLEU's): chrF stays cased and finds no common character (0);
     * --chrf-lowercase makes it 100.
     */
    Fix f = fix_new("The Cat sat.\nΟΔΟΣ ΚΑΙ ΣΟΦΙΑ ΤΟΥΣ\n", "the cat SAT.\nοδος και σοφια τους\n", NULL);
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu", "-sl", "-w", "2");
    expect_ok(&r, "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp" V " = 15.97 25.0/16.7/12.5/12.5 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n"
                  "BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp" V " = 0.00 0.0/0.0/0.0/0.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu", "-sl", "-lc");
    expect_ok(&r, "BLEU|nrefs:1|case:lc|eff:yes|tok:13a|smooth:exp" V " = 100.0 100.0/100.0/100.0/100.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n"
                  "BLEU|nrefs:1|case:lc|eff:yes|tok:13a|smooth:exp" V " = 100.0 100.0/100.0/100.0/100.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n");
    fix_free(&f);

    f = fix_new("ΟΔΟΣ ΚΑΙ ΣΟΦΙΑ ΤΟΥΣ\n", "οδος και σοφια τους\n", NULL);
    /* "BLEU|" + its 55-character signature: 60; "chrF2|" + 59: 65, so 5 spaces of
       alignment. */
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "--lowercase");
    expect_ok(&r, "     BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:exp" V " = 100.0 100.0/100.0/100.0/100.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n"
                  "chrF2|" CHRF_SIG " = 0.0\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "chrf", "--chrf-lowercase");
    expect_ok(&r, "chrF2|nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no" V " = 100.0\n");
    fix_free(&f);
}

Test(cli_score, intl_and_none_tokenizers_by_hand)
{
    /*
     * "«Bonjour», dit-il." against "« Bonjour », dit-elle.".
     * intl: (\P{N})(\p{P}) splits "r»" and "t-" and "l."; (\p{P})(\P{N}) splits "«B",
     * "» ", ", ", "- ", ". ": hypothesis « Bonjour » , dit - il . and reference
     * « Bonjour » , dit - elle . (8 tokens each). Unigrams 7/8, bigrams 5/7 (not "- il",
     * "il ."), trigrams 4/6, 4-grams 3/5; BP 1:
     *   BLEU = 100 · (7/8 · 5/7 · 4/6 · 3/5)^(1/4) = 100 · (1/4)^(1/4) = 70.71.
     * 13a: « and » are not ASCII and stay attached, the hyphen stays: «Bonjour» , dit-il .
     * (4) against « Bonjour » , dit-elle . (6): unigrams 2/4 (",", "."), nothing above:
     * p = 50, 100/(2·3), 100/(4·2), 100/(8·1); BP = exp(1 - 6/4) = 0.607:
     *   BLEU = 0.6065 · (50 · 16.667 · 12.5 · 12.5)^(1/4) = 11.52.
     * none: «Bonjour», dit-il. (2) against «Bonjour», dit-elle. (the second reference
     * below; 2): unigrams 1/2, bigrams 0/1 smoothed to 100/(2·1) = 50, no trigram:
     * the loop stops there, orders 3 and 4 keep precision 0 and the score is 0.
     */
    Fix f = fix_new("«Bonjour», dit-il.\n", "« Bonjour », dit-elle.\n", "«Bonjour», dit-elle.\n");
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu", "--tokenize", "intl", "-w", "2");
    expect_ok(&r, "BLEU|nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp" V " = 70.71 87.5/71.4/66.7/60.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 8 ref_len = 8)\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu", "-w", "2");
    expect_ok(&r, "BLEU|" BLEU_SIG " = 11.52 50.0/16.7/12.5/12.5 (BP = 0.607 ratio = 0.667 hyp_len = 4 ref_len = 6)\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r2, "-m", "bleu", "-tok", "none", "-w", "2");
    expect_ok(&r, "BLEU|nrefs:1|case:mixed|eff:no|tok:none|smooth:exp" V " = 0.00 50.0/50.0/0.0/0.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 2 ref_len = 2)\n");
    fix_free(&f);
}

Test(cli_score, empty_reference_lines_count)
{
    /* Lines are read as sacreBLEU 2.2 and later read them: an empty reference line is
       a reference of length 0 (nrefs counts it). "a b c d" against "" and itself: the
       closest length is 4, 100. Against "" alone: nothing matches, ref_len 0, ratio 0,
       BP 1. Trailing whitespace and a CR before '\n' do not count. */
    Fix f = fix_new("a b c d \r\n", "\n", "a b c d\n");
    RunResult r = RUN_S2S(NULL, "score", f.hyp, f.r1, f.r2, "-m", "bleu");
    expect_ok(&r, "BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp" V " = 100.0 100.0/100.0/100.0/100.0 "
                  "(BP = 1.000 ratio = 1.000 hyp_len = 4 ref_len = 4)\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.r1, "-m", "bleu");
    expect_ok(&r, "BLEU|" BLEU_SIG " = 0.0 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 4 ref_len = 0)\n");
    fix_free(&f);
}

Test(cli_score, errors)
{
    Fix f = fix_new("one\ntwo\nthree\n", "one\ntwo\n", "one\ntw\xC3\x28o\nthree\n");
    char *snap = dir_snapshot(f.dir);
    char *missing = strf("%s/missing.txt", f.dir);

    RunResult r = RUN_S2S(NULL, "score", missing, f.r1);
    char *want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    expect_fail(&r, 1, want);
    free(want);
    r = RUN_S2S(NULL, "score", f.hyp, missing);
    want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    expect_fail(&r, 1, want);
    free(want);

    r = RUN_S2S(NULL, "score", f.hyp, f.r1);
    want = strf("s2s: line counts differ: %s has 3, %s has 2\n", f.hyp, f.r1);
    expect_fail(&r, 1, want);
    free(want);

    r = RUN_S2S(NULL, "score", f.hyp, f.r2);
    want = strf("s2s: %s:2: invalid UTF-8 at byte 3\n", f.r2);
    expect_fail(&r, 1, want);
    free(want);
    FILE *fp = fopen(f.r1, "wb");
    fwrite("one\ntwo\nth\0ree\n", 1, 15, fp);
    fclose(fp);
    r = RUN_S2S(NULL, "score", f.hyp, f.r1);
    want = strf("s2s: %s:3: NUL byte at byte 3\n", f.r1);
    expect_fail(&r, 1, want);
    free(want);
    free(snap);
    snap = dir_snapshot(f.dir);

    r = RUN_S2S(NULL, "score", f.hyp, f.hyp, "--tokenize", "zh");
    expect_fail(&r, 2, "s2s: score: option --tokenize must be 13a, none or intl, got 'zh'\n");
    r = RUN_S2S(NULL, "score", f.hyp);
    expect_fail(&r, 2, "s2s: score: missing REF argument (see 's2s score --help')\n");
    r = RUN_S2S(NULL, "score");
    expect_fail(&r, 2, "s2s: score: missing HYP argument (see 's2s score --help')\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.hyp, "--metrics", "ter");
    expect_fail(&r, 2, "s2s: score: option --metrics must be bleu, chrf or bleu,chrf, got 'ter'\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.hyp, "--json", "--sentence");
    expect_fail(&r, 2, "s2s: score: --json and --sentence cannot be combined (sentence scores are text lines)\n");
    r = RUN_S2S(NULL, "score", "-", "-");
    expect_fail(&r, 2, "s2s: score: only one file can be read from stdin ('-')\n");
    r = RUN_S2S(NULL, "score", f.hyp, f.hyp, "-w", "18");
    expect_fail(&r, 2, "s2s: score: option -w must be between 0 and 17, got 18\n");

    char *empty = strf("%s/empty.txt", f.dir);
    write_file(empty, "");
    r = RUN_S2S(NULL, "score", empty, empty);
    want = strf("s2s: %s: no lines to score\n", empty);
    expect_fail(&r, 1, want);
    free(want);
    unlink(empty);

    char *after = dir_snapshot(f.dir);
    cr_assert_str_eq(after, snap, "score changed its input directory");
    free(after);
    free(snap);
    free(empty);
    free(missing);
    fix_free(&f);
}
