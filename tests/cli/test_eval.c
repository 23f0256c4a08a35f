/* End-to-end tests of `s2s eval`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "base/json.h"
#include <math.h>
#include "helpers.h"
#include "model_fixture.h"

typedef struct Fix {
    char *dir, *chain, *random, *tsv, *out;
} Fix;

static Fix fix_new(const char *tsv)
{
    Fix f = {.dir = tmpdir_new()};
    f.chain = strf("%s/chain.s2s", f.dir);
    f.random = strf("%s/random.s2s", f.dir);
    f.tsv = strf("%s/test.tsv", f.dir);
    f.out = strf("%s/hyp.txt", f.dir);
    Model m;
    fixture_text_model(&m, 9);
    fixture_save(f.random, &m, NULL);
    fixture_chain_text(&m);
    fixture_save(f.chain, &m, NULL);
    model_free(&m);
    write_file(f.tsv, tsv);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->chain);
    free(f->random);
    free(f->tsv);
    free(f->out);
}

/* BLEU's and chrF's statistics of segments hyp[s] (or, with hyp NULL, one1 for every
   segment) against refs[s][0..nref[s]). */
static void add_segments(BleuStats *bs, ChrfStats *cs, const char *const *hyp, const char *one1,
                         const char *const *const *refs, const size_t *nref, int nseg)
{
    bleu_init(bs);
    chrf_init(cs);
    Err e;
    for (int s = 0; s < nseg; s++) {
        const char *h = hyp ? hyp[s] : one1;
        cr_assert_eq(bleu_add(bs, h, refs[s], nref[s], &e), 0, "%s", e.msg);
        cr_assert_eq(chrf_add(cs, h, refs[s], nref[s], &e), 0, "%s", e.msg);
    }
}

/* The expected stdout for segments hyp[s] against refs[s][0..nref[s]). */
static char *expected_scores(const char *const *hyp, const char *const *const *refs,
                             const size_t *nref, int nseg)
{
    BleuStats bs;
    ChrfStats cs;
    add_segments(&bs, &cs, hyp, NULL, refs, nref, nseg);
    BleuResult br;
    bleu_score(&bs, &br);
    Buf out = {0}, sig = {0};
    bleu_format(&br, NULL, &out);
    bleu_signature(&bs, &sig);
    buf_printf(&out, "\nBLEU signature: %s\n", sig.data);
    chrf_format(chrf_score(&cs), NULL, &out);
    buf_clear(&sig);
    chrf_signature(&cs, &sig);
    buf_printf(&out, "\nchrF2 signature: %s\n", sig.data);
    buf_free(&sig);
    bleu_free(&bs);
    chrf_free(&cs);
    return buf_take(&out);
}

/* Three distinct sources; "the cat" has two references (lines 1 and 3). Every
   hypothesis is CHAIN_OUT. */
#define TSV                                         \
    "the cat\tJ'ai vu le chat !\n"                  \
    "hello\tbonjour !\n"                            \
    "the cat\tj'ai vu un chat.\textra column\n"     \
    "\n"                                            \
    "a dog\tle chien a vu le chat !\n"

Test(cli_eval, multi_reference_bleu_and_chrf_of_known_hypotheses)
{
    Fix f = fix_new(TSV);
    const char *hyp[] = {CHAIN_OUT, CHAIN_OUT, CHAIN_OUT};
    const char *r0[] = {"J'ai vu le chat !", "j'ai vu un chat."}, *r1[] = {"bonjour !"},
               *r2[] = {"le chien a vu le chat !"};
    const char *const *refs[] = {r0, r1, r2};
    const size_t nref[] = {2, 1, 1};
    char *want = expected_scores(hyp, refs, nref, 3);
    /* Worked out by hand (13a tokens, case-sensitive): the hypothesis has 5 tokens, 15
       in all; closest reference lengths 5, 2, 7. Matches per order, segment by
       segment: 5+1+4 of 15, 4+0+3 of 12, 2+0+2 of 9, 1+0+1 of 6 ("J'ai" is not
       "j'ai"; the second reference of segment 1 supplies "j'ai" and "j'ai vu"). */
    const char *bleu_line = "BLEU = 48.99 66.7/58.3/44.4/33.3 (BP = 1.000 ratio = 1.071 "
                            "hyp_len = 15 ref_len = 14)\n";
    cr_assert(strncmp(want, bleu_line, strlen(bleu_line)) == 0, "%s", want);
    cr_assert(strstr(want, "BLEU signature: nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp\n"), "%s", want);

    RunResult r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--out", f.out);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    const char *rest = r.out + strlen(want);
    const char *counts = "lines = 4, distinct sources = 3, source tokens = 5, unknown = 0 (0.00%), "
                         "output tokens = 18\ndecoding: beam 5, length penalty 1, int8, ";
    cr_assert(strncmp(rest, "perplexity = ", 13) == 0, "%s", rest);
    const char *nl = strchr(rest, '\n');
    cr_assert(nl && strncmp(nl + 1, counts, strlen(counts)) == 0, "%s", rest);
    const char *secs = nl + 1 + strlen(counts);
    cr_assert(strlen(secs) == strlen("0.00 s\n") && strcmp(secs + 4, " s\n") == 0, "%s", secs);
    cr_assert_str_eq(r.err, "");
    run_free(&r);
    char *got = slurp(f.out, NULL);
    cr_assert_str_eq(got, CHAIN_OUT "\n" CHAIN_OUT "\n" CHAIN_OUT "\n" CHAIN_OUT "\n");
    free(got);

    /* Scoring each line on its own would differ: the duplicate source counts once. */
    const char *s0[] = {"J'ai vu le chat !"}, *s1[] = {"j'ai vu un chat."};
    const char *hyp4[] = {CHAIN_OUT, CHAIN_OUT, CHAIN_OUT, CHAIN_OUT};
    const char *const *refs4[] = {s0, r1, s1, r2};
    const size_t nref4[] = {1, 1, 1, 1};
    char *per_line = expected_scores(hyp4, refs4, nref4, 4);
    cr_assert_str_neq(per_line, want);
    free(per_line);
    free(want);
    fix_free(&f);
}

Test(cli_eval, hypotheses_match_translate)
{
    Fix f = fix_new("the big black cat sleeps\tle gros chat noir dort\n"
                    "a dog eats\tun chien mange\n"
                    "hello\tbonjour\n"
                    "the big black cat sleeps\tle gros chat dort\n"
                    "zebra\tzèbre\n");
    const char *in = "the big black cat sleeps\na dog eats\nhello\nthe big black cat sleeps\nzebra\n";
    const char *const beams[][4] = {{"--beam", "5", "--length-penalty", "1"},
                                    {"--beam", "1", "--length-penalty", "0"},
                                    {"--beam", "3", "--length-penalty", "0.5"}};
    for (int k = 0; k < 3; k++) {
        RunResult r = RUN_S2S(NULL, "eval", f.random, f.tsv, "--out", f.out, "--batch", "2",
                              "--max-len", "7", "--threads", "1", beams[k][0], beams[k][1],
                              beams[k][2], beams[k][3]);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        cr_assert(strncmp(r.out, "BLEU = ", 7) == 0, "%s", r.out);
        cr_assert(strstr(r.out, "\nlines = 5, distinct sources = 4, source tokens = 10, unknown = 1 "
                                "(10.00%), output tokens = "), "%s", r.out);
        cr_assert_str_eq(r.err, "");
        run_free(&r);
        char *hyp = slurp(f.out, NULL);
        r = RUN_S2S(in, "translate", f.random, "--max-len", "7", beams[k][0], beams[k][1],
                    beams[k][2], beams[k][3]);
        cr_assert_eq(r.status, 0);
        cr_assert_str_eq(hyp, r.out);
        run_free(&r);
        free(hyp);
    }
    fix_free(&f);
}

/* eval splits sources into sentences as translate does, and both take --no-split. */
Test(cli_eval, sentence_splitting_matches_translate)
{
    Fix f = fix_new("The big black cat sleeps. A dog eats.\tle chat dort. un chien mange.\n"
                    "hello\tbonjour\n");
    const char *in = "The big black cat sleeps. A dog eats.\nhello\n";
    const char *const modes[] = {"--beam=5", "--no-split"};
    for (int k = 0; k < 2; k++) {
        RunResult r = RUN_S2S(NULL, "eval", f.random, f.tsv, "--out", f.out, modes[k]);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        run_free(&r);
        char *hyp = slurp(f.out, NULL);
        r = RUN_S2S(in, "translate", f.random, modes[k]);
        cr_assert_eq(r.status, 0);
        cr_assert_str_eq(hyp, r.out);
        run_free(&r);
        free(hyp);
    }
    fix_free(&f);
}

Test(cli_eval, errors)
{
    Fix f = fix_new("the cat\tle chat\nno tab here\n");
    RunResult r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--out", f.out);
    char *want = strf("s2s: %s:2: only one column (expected English<TAB>French)\n", f.tsv);
    expect_fail(&r, 1, want);
    free(want);
    cr_assert(!file_exists(f.out));

    char *missing = strf("%s/none.tsv", f.dir);
    r = RUN_S2S(NULL, "eval", f.chain, missing);
    want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    expect_fail(&r, 1, want);
    free(want);

    write_file(f.tsv, "");
    r = RUN_S2S(NULL, "eval", f.chain, f.tsv);
    want = strf("s2s: %s: no sentence pairs\n", f.tsv);
    expect_fail(&r, 1, want);
    free(want);

    r = RUN_S2S(NULL, "eval", missing, f.tsv);
    want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    expect_fail(&r, 1, want);
    free(want);

    r = RUN_S2S(NULL, "eval", f.chain);
    expect_fail(&r, 2, "s2s: eval: missing TSV argument (see 's2s eval --help')\n");
    r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "more");
    expect_fail(&r, 2, "s2s: eval: unexpected argument 'more' (see 's2s eval --help')\n");
    r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--bleu");
    expect_fail(&r, 2, "s2s: eval: unknown option '--bleu' (see 's2s eval --help')\n");
    r = RUN_S2S(NULL, "eval", "--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "usage: s2s eval MODEL [MODEL...] TSV [options]\n", 47) == 0, "%s", r.out);
    run_free(&r);
    cr_assert(!file_exists(f.out));
    free(missing);
    fix_free(&f);
}

/* Perplexity of the references under the chain model, worked out by hand: after a
   token of the chain its successor has the logit a = 10·tanh(1) and every other
   token 0 (16 target tokens); after <bos>, "j'" is the successor. */
Test(cli_eval, perplexity_of_the_references_and_json)
{
    Fix f = fix_new("the cat\tj'ai vu le chat !\n"
                    "hello\tle chat\n");
    double a = 10 * tanh(1.0), hi = a - log(exp(a) + 15), lo = -log(exp(a) + 15);
    /* line 1: j' ai vu le chat ! <eos>, all successors: 7 tokens at hi;
       line 2: le (not the successor of <bos>), chat (successor of le), <eos> (not that of chat) */
    double nll = -(7 * hi + lo + hi + lo), ppl = exp(nll / 10);
    RunResult r = RUN_S2S(NULL, "eval", f.chain, f.tsv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *line = strf("\nperplexity = %.2f (10 reference tokens with <eos>, no label smoothing)\n", ppl);
    cr_assert(strstr(r.out, line), "%s\nwanted %s", r.out, line);
    free(line);
    run_free(&r);

    r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--json", "--beam", "2");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    cr_assert(r.out_len > 0 && r.out[r.out_len - 1] == '\n' && strchr(r.out, '\n') == r.out + r.out_len - 1,
              "one line: %s", r.out);
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, r.out, r.out_len, &e), 0, "%s: %s", e.msg, r.out);
    double x;
    const char *str;
    size_t len;
    cr_assert_eq(json_as_num(json_get(doc.root, "perplexity"), &x, &e), 0, "%s", e.msg);
    cr_assert(fabs(x - ppl) < 1e-4 * ppl, "%.9g vs %.9g", x, ppl);
    /* both lines translate to the chain; the BLEU and chrF of that, as the library scores it */
    const char *hyp[] = {CHAIN_OUT, CHAIN_OUT};
    const char *r0[] = {"j'ai vu le chat !"}, *r1[] = {"le chat"};
    const char *const *refs[] = {r0, r1};
    const size_t nref[] = {1, 1};
    char *want = expected_scores(hyp, refs, nref, 2);
    cr_assert_eq(json_as_str(json_get(doc.root, "bleu_line"), &str, &len, &e), 0);
    cr_assert(strncmp(want, str, len) == 0 && want[len] == '\n', "%s vs %s", str, want);
    cr_assert_eq(json_as_num(json_get(doc.root, "bleu"), &x, &e), 0);
    char got[32];
    snprintf(got, sizeof got, "BLEU = %.2f ", x);
    cr_assert(strncmp(want, got, strlen(got)) == 0, "%s vs %s", got, want);
    cr_assert_eq(json_as_str(json_get(doc.root, "bleu_signature"), &str, &len, &e), 0);
    cr_assert_str_eq(str, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp");
    cr_assert_eq(json_as_str(json_get(doc.root, "chrf_signature"), &str, &len, &e), 0);
    cr_assert_str_eq(str, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no");
    cr_assert_eq(json_as_num(json_get(doc.root, "chrf"), &x, &e), 0);
    snprintf(got, sizeof got, "chrF2 = %.2f\n", x);
    cr_assert(strstr(want, got), "%s vs %s", got, want);
    const char *ints[] = {"lines", "sources", "src_tokens", "ref_tokens", "beam", "hyp_tokens"};
    const int64_t vals[] = {2, 2, 3, 10, 2, 12};
    for (int k = 0; k < 6; k++) {
        int64_t v;
        cr_assert_eq(json_as_int(json_get(doc.root, ints[k]), &v, &e), 0, "%s", ints[k]);
        cr_assert_eq(v, vals[k], "%s: %lld", ints[k], (long long)v);
    }
    cr_assert_eq(json_as_str(json_get(doc.root, "precision"), &str, &len, &e), 0);
    cr_assert(len == 4 && strncmp(str, "int8", 4) == 0, "precision %.*s", (int)len, str);
    cr_assert_eq(json_as_num(json_get(doc.root, "decode_seconds"), &x, &e), 0);
    cr_assert(x >= 0 && x < 10);
    free(want);
    json_free(&doc);
    run_free(&r);
    fix_free(&f);
}

/* BLEU and chrF2 of s2s eval worked out by hand from sacreBLEU's definitions, for the
   chain model's "j'ai vu le chat !" against the reference "chat".
   BLEU (13a): 5 hypothesis tokens, 1 reference token; 1-gram matches 1 of 5 (20.0);
   no 2-, 3-, 4-gram matches: exp smoothing gives 100/(2·4) = 12.5, 100/(4·3) = 8.33,
   100/(8·2) = 6.25; BP = 1; BLEU = (20 · 12.5 · 8.33 · 6.25)^(1/4) = 10.68.
   chrF2 (whitespace removed: "j'aivulechat!" vs "chat"): precisions 4/13, 3/12, 2/11,
   1/10 and recalls 1, 1, 1, 1 for orders 1-4 (the reference has no 5- or 6-grams, so
   those orders do not count); P = 0.20988, R = 1, F2 = 5PR / (4P + R) = 57.05. */
Test(cli_eval, bleu_and_chrf_worked_by_hand)
{
    Fix f = fix_new("the cat\tchat\n");
    RunResult r = RUN_S2S(NULL, "eval", f.chain, f.tsv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *want = "BLEU = 10.68 20.0/12.5/8.3/6.2 (BP = 1.000 ratio = 5.000 hyp_len = 5 ref_len = 1)\n"
                       "BLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp\n"
                       "chrF2 = 57.05\n"
                       "chrF2 signature: nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no\n";
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    run_free(&r);
    fix_free(&f);
}

/* The corpus BLEU and chrF2 of CHAIN_OUT for each of nseg segments against refs[s]. */
static void chain_scores(const char *const *const *refs, const size_t *nref, int nseg, double *bleu,
                         double *chrf)
{
    BleuStats bs;
    ChrfStats cs;
    add_segments(&bs, &cs, NULL, CHAIN_OUT, refs, nref, nseg);
    BleuResult br;
    bleu_score(&bs, &br);
    *bleu = br.score;
    *chrf = chrf_score(&cs);
    bleu_free(&bs);
    chrf_free(&cs);
}

#define W10 "the cat the cat the cat the cat the cat"
#define W30 W10 " " W10 " " W10
/* Every output is CHAIN_OUT, 5 words. 1-8 words: "hello" (1 word, long) and "the cat"
   (2 words, long) on two lines; 9-15: 10 words (exactly half: plausible) and 11 words
   (short); 16-30: none; over 30: 31 words (short). */
#define BYLEN_TSV                                   \
    "hello\tbonjour !\n"                            \
    "the cat\tj'ai vu le chat !\n"                  \
    W10 "\tle chat\n"                               \
    "the cat\tJ'ai vu le chat !\n"                  \
    W10 " cat\tun chat noir\n"                      \
    W30 " cat\tchat\n"

Test(cli_eval, by_length_table_and_json)
{
    Fix f = fix_new(BYLEN_TSV);
    const char *a0[] = {"bonjour !"}, *a1[] = {"j'ai vu le chat !", "J'ai vu le chat !"},
               *b0[] = {"le chat"}, *b1[] = {"un chat noir"}, *c0[] = {"chat"};
    const char *const *ra[] = {a0, a1}, *const *rb[] = {b0, b1}, *const *rc[] = {c0};
    const size_t na[] = {1, 2}, nb[] = {1, 1}, nc[] = {1};
    double bleu[4] = {0}, chrf[4] = {0};
    chain_scores(ra, na, 2, &bleu[0], &chrf[0]);
    chain_scores(rb, nb, 2, &bleu[1], &chrf[1]);
    chain_scores(rc, nc, 1, &bleu[3], &chrf[3]);

    RunResult plain = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--out", f.out);
    cr_assert_eq(plain.status, 0, "%s", plain.err);
    cr_assert_null(strstr(plain.out, "by source length"), "%s", plain.out);
    char *hyps = slurp(f.out, NULL);
    cr_assert_str_eq(hyps, CHAIN_OUT "\n" CHAIN_OUT "\n" CHAIN_OUT "\n" CHAIN_OUT "\n" CHAIN_OUT
                           "\n" CHAIN_OUT "\n");
    free(hyps);
    RunResult r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--by-length");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* the usual block up to the decoding time, then the table */
    const char *dec = strstr(plain.out, "\ndecoding: ");
    cr_assert_not_null(dec);
    cr_assert(strncmp(r.out, plain.out, (size_t)(dec - plain.out)) == 0, "%s\nvs\n%s", r.out, plain.out);
    char *table = strf("\nby source length (short: output under 0.5x the source's words, long: over 2x):\n"
                       "source words   lines    BLEU   chrF2   short    long\n"
                       "1-8                3 %7.2f %7.2f    0.0%%  100.0%%\n"
                       "9-15               2 %7.2f %7.2f   50.0%%    0.0%%\n"
                       "16-30              0  no score\n"
                       ">30                1 %7.2f %7.2f  100.0%%    0.0%%\n",
                       bleu[0], chrf[0], bleu[1], chrf[1], bleu[3], chrf[3]);
    const char *s = strstr(r.out, " s\nby source length");
    cr_assert_not_null(s, "%s", r.out);
    cr_assert_str_eq(s + 2, table);
    free(table);
    run_free(&r);
    run_free(&plain);

    r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--by-length", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, r.out, r.out_len, &e), 0, "%s: %s", e.msg, r.out);
    const JsonVal *by = json_get(doc.root, "by_length");
    cr_assert_eq(json_len(by), 4, "%s", r.out);
    const char *names[] = {"1-8", "9-15", "16-30", ">30"};
    const int64_t lines[] = {3, 2, 0, 1};
    const double shorts[] = {0, 0.5, 0, 1}, longs[] = {1, 0, 0, 0};
    for (size_t k = 0; k < 4; k++) {
        const JsonVal *o = json_at(by, k);
        cr_assert_eq(json_len(o), 6);
        const char *str;
        int64_t n;
        cr_assert_eq(json_as_str(json_get(o, "bucket"), &str, NULL, &e), 0);
        cr_assert_str_eq(str, names[k]);
        cr_assert_eq(json_as_int(json_get(o, "lines"), &n, &e), 0);
        cr_assert_eq(n, lines[k], "%s", names[k]);
        const char *keys[] = {"bleu", "chrf", "short", "long"};
        double want[] = {bleu[k], chrf[k], shorts[k], longs[k]};
        for (int j = 0; j < 4; j++) {
            const JsonVal *v = json_get(o, keys[j]);
            if (lines[k] == 0) {
                cr_assert(v && v->type == JSON_NULL, "%s %s", names[k], keys[j]);
                continue;
            }
            double x;
            cr_assert_eq(json_as_num(v, &x, &e), 0, "%s %s", names[k], keys[j]);
            cr_assert(x >= 0 && x <= (j < 2 ? 100 : 1), "%s %s: %g", names[k], keys[j], x);
            cr_assert_eq(x, want[j], "%s %s: %.17g vs %.17g", names[k], keys[j], x, want[j]);
        }
    }
    cr_assert(fabs(bleu[3] - 10.68) < 0.005 && fabs(chrf[3] - 57.05) < 0.005);
    json_free(&doc);
    run_free(&r);
    r = RUN_S2S(NULL, "eval", f.chain, f.tsv, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.out, "by_length"), "%s", r.out);
    run_free(&r);
    fix_free(&f);
}
