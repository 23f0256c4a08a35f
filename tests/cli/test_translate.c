/* End-to-end tests of `s2s translate`. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decode/translate.h"
#include "text/tokenize.h"
#include "helpers.h"
#include "model/rnn.h"
#include "model_fixture.h"

typedef struct Fix {
    char *dir;
    char *chain;  /* model file: the chain j' ai vu le chat ! <eos> */
    char *random; /* model file: random weights */
} Fix;

static Fix fix_new(void)
{
    Fix f = {tmpdir_new(), NULL, NULL};
    f.chain = strf("%s/chain.s2s", f.dir);
    f.random = strf("%s/random.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 9); /* seed 9: varied, non-empty outputs */
    fixture_save(f.random, &m, NULL);
    fixture_chain_text(&m);
    fixture_save(f.chain, &m, NULL);
    model_free(&m);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->chain);
    free(f->random);
}

Test(cli_translate, arguments_one_output_line_each)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S(NULL, "translate", f.chain, "The cat.", "", " \t ", "Hello!");
    expect_ok(&r, CHAIN_OUT "\n\n\n" CHAIN_OUT "\n");
    r = RUN_S2S(NULL, "translate", f.chain, "--", "-x");
    expect_ok(&r, CHAIN_OUT "\n");
    fix_free(&f);
}

Test(cli_translate, stdin_lines_and_line_count)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S("the cat\n\nhello\n", "translate", f.chain);
    expect_ok(&r, CHAIN_OUT "\n\n" CHAIN_OUT "\n");
    r = RUN_S2S("no newline at the end", "translate", f.chain);
    expect_ok(&r, CHAIN_OUT "\n");
    r = RUN_S2S("", "translate", f.chain);
    expect_ok(&r, "");
    r = RUN_S2S("\n\n  \n", "translate", f.chain);
    expect_ok(&r, "\n\n\n");
    r = RUN_S2S("\xEF\xBB\xBFthe cat\r\n\r\na dog\r\n", "translate", f.chain);
    expect_ok(&r, CHAIN_OUT "\n\n" CHAIN_OUT "\n");
    fix_free(&f);
}

/* The same sentences through arguments, stdin, -i and -o give the same lines, and the
   library's translate_lines gives them too. */
Test(cli_translate, arguments_stdin_and_files_agree)
{
    Fix f = fix_new();
    const char *sent[] = {"The big black cat sleeps.", "", "hello", "a dog eats the cat",
                          "unknown words here", "   ", "the"};
    enum { N = sizeof sent / sizeof sent[0] };
    char *text = strf("%s\n%s\n%s\n%s\n%s\n%s\n%s\n", sent[0], sent[1], sent[2], sent[3],
                      sent[4], sent[5], sent[6]);

    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, f.random, false, &e), 0, "%s", e.msg);
    model_set_precision(&mf.model, PREC_INT8);
    char *out[N];
    TranslateOpts to = {.batch = 3, .max_len = 0, .beam = 5, .alpha = 1.0}; /* the defaults of s2s translate,
                                                                                  int8 included */
    TranslateStats st;
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){sent, NULL, N, "x", NULL, NULL}, &to, out, &st, &e),
                 0, "%s", e.msg);
    cr_assert_eq(st.lines, N);
    cr_assert_eq(st.sentences, 5);
    cr_assert_eq(st.src_tokens, 6 + 1 + 5 + 3 + 1);
    cr_assert_eq(st.src_unk, 3 + 1); /* "unknown words here", "." */
    char *want = strf("%s\n%s\n%s\n%s\n%s\n%s\n%s\n", out[0], out[1], out[2], out[3], out[4],
                      out[5], out[6]);
    cr_assert_str_eq(out[1], "");
    cr_assert_str_eq(out[5], "");
    for (int i = 0; i < N; i++)
        cr_assert(i == 1 || i == 5 || strlen(out[i]) > 0, "line %d: empty translation", i);
    cr_assert(strcmp(out[0], out[2]) != 0 && strcmp(out[2], out[3]) != 0);
    translate_free(out, N);
    model_file_free(&mf);

    RunResult r = RUN_S2S(NULL, "translate", f.random, sent[0], sent[1], sent[2], sent[3], sent[4],
                          sent[5], sent[6]);
    expect_ok(&r, want);
    r = RUN_S2S(text, "translate", f.random);
    expect_ok(&r, want);
    r = RUN_S2S(text, "translate", f.random, "--batch", "1", "--threads", "1");
    expect_ok(&r, want);
    r = RUN_S2S(text, "translate", "--batch=2", f.random, "-i", "-");
    expect_ok(&r, want);

    char *in = strf("%s/in.txt", f.dir), *o = strf("%s/out.txt", f.dir);
    write_file(in, text);
    r = RUN_S2S(NULL, "translate", f.random, "-i", in);
    expect_ok(&r, want);
    r = RUN_S2S(NULL, "translate", f.random, "--input", in, "-o", o);
    expect_ok(&r, "");
    char *got = slurp(o, NULL);
    cr_assert_str_eq(got, want);
    free(got);
    write_file(o, "old\n");
    r = RUN_S2S(text, "translate", f.random, "--output", o);
    expect_ok(&r, "");
    got = slurp(o, NULL);
    cr_assert_str_eq(got, want);
    free(got);
    cr_assert_eq(dir_count(f.dir), 4, "no temporary file is left behind");

    free(in);
    free(o);
    free(want);
    free(text);
    fix_free(&f);
}

/* The output of run r, which must succeed, as a string to free. */
static char *ok_out(RunResult *r)
{
    cr_assert_eq(r->status, 0, "status %d, stderr: %s", r->status, r->err);
    char *out = strf("%s", r->out);
    run_free(r);
    return out;
}

/* A line of two sentences translates as its sentences do apart, joined by one space;
   with --no-split, --nbest or an attention option it translates whole, as the
   library does without splitting. */
Test(cli_translate, sentences_split_and_joined)
{
    Fix f = fix_new();
    const char *one = "The big black cat sleeps.", *two = "A dog eats the cat!";
    char *line = strf("  %s  %s ", one, two), *text = strf("%s\nhello\n%s\n", line, one);
    RunResult r = RUN_S2S(NULL, "translate", f.random, one, two);
    char *apart = ok_out(&r), *nl = strchr(apart, '\n');
    cr_assert(nl && nl > apart && nl[1] != '\n' && strcmp(nl + 1, "\n") != 0, "%s", apart);
    *nl = ' ';
    r = RUN_S2S(NULL, "translate", f.random, line);
    expect_ok(&r, apart);

    /* in a batch of lines, through stdin, one line at a time too */
    r = RUN_S2S(NULL, "translate", f.random, one);
    char *first = ok_out(&r);
    r = RUN_S2S(NULL, "translate", f.random, "hello");
    char *hello = ok_out(&r);
    char *want = strf("%s%s%s", apart, hello, first);
    r = RUN_S2S(text, "translate", f.random);
    expect_ok(&r, want);
    r = RUN_S2S(text, "translate", f.random, "--batch", "1");
    expect_ok(&r, want);

    /* whole: --no-split, and the library without splitting */
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, f.random, false, &e), 0, "%s", e.msg);
    model_set_precision(&mf.model, PREC_INT8);
    TranslateOpts to = {.batch = 64, .beam = 5, .alpha = 1.0};
    TranslateResult res;
    const char *lines[] = {line};
    cr_assert_eq(translate_run(&mf, &(TranslateInput){lines, NULL, 1, "x", NULL, NULL}, &to, &res, NULL, &e),
                 0, "%s", e.msg);
    char *whole = strf("%s\n", res.hyps[0][0].text);
    char *nbest = strf("0 ||| %s ||| %.6f\n", res.hyps[0][0].text, res.hyps[0][0].score);
    cr_assert_str_neq(whole, apart, "the test needs a line the model translates otherwise whole");
    translate_result_free(&res);
    model_file_free(&mf);
    r = RUN_S2S(NULL, "translate", f.random, line, "--no-split");
    expect_ok(&r, whole);
    r = RUN_S2S(NULL, "translate", f.random, line, "--nbest", "1");
    expect_ok(&r, nbest);
    r = RUN_S2S(NULL, "translate", f.random, line, "--show-attention");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.out, whole);
    run_free(&r);

    free(nbest);
    free(whole);
    free(want);
    free(hello);
    free(first);
    free(apart);
    free(text);
    free(line);
    fix_free(&f);
}

Test(cli_translate, max_len_and_the_default_limit)
{
    Fix f = fix_new();
    char *path = strf("%s/const.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 4);
    fixture_constant(&m, fixture_tgt_id("mange"));
    fixture_save(path, &m, NULL);
    model_free(&m);

    /* 2 source tokens: 2·2 + 10 = 14 output tokens. */
    Buf want = {0};
    for (int k = 0; k < 14; k++)
        buf_puts(&want, k ? " mange" : "mange");
    buf_puts(&want, "\n\nmange mange mange mange mange mange mange mange mange mange mange mange\n");
    /* Greedy decoding runs to the limit. So does beam search with the default length
       penalty 1: log p(<eos>) = log 1/(e + 15) = -2.875 at once, while mange^L <eos> scores
       (-1.875·L - 2.875) / (L + 1) and the cut hypothesis at the limit -1.875. With
       penalty 0.6 the empty output wins (-2.875 against -1.875·14 / 14^0.6 = -5.39). */
    RunResult r = RUN_S2S("the cat\n\nhello\n", "translate", path, "--beam", "1");
    expect_ok(&r, want.data);
    r = RUN_S2S("the cat\n\nhello\n", "translate", path, "--max-len", "3", "--beam", "1");
    expect_ok(&r, "mange mange mange\n\nmange mange mange\n");
    r = RUN_S2S(NULL, "translate", path, "--max-len=1", "the big black cat", "--beam", "1");
    expect_ok(&r, "mange\n");
    r = RUN_S2S("the cat\n\nhello\n", "translate", path);
    expect_ok(&r, want.data);
    r = RUN_S2S("the cat\n\nhello\n", "translate", path, "--length-penalty", "0.6");
    expect_ok(&r, "\n\n\n");
    /* with a limit of 1 the cut hypothesis "mange" (-1.875) beats "<eos>" (-2.875) */
    r = RUN_S2S(NULL, "translate", path, "--max-len=1", "the big black cat");
    expect_ok(&r, "mange\n");
    buf_free(&want);
    free(path);
    fix_free(&f);
}

Test(cli_translate, many_lines_are_batched)
{
    Fix f = fix_new();
    const char *pool[] = {"the cat", "", "a dog eats", "hello", "the big black cat sleeps"};
    Buf in = {0}, want = {0};
    for (int i = 0; i < 10000; i++) {
        const char *s = pool[(i * 7 + i / 3) % 5];
        buf_puts(&in, s);
        buf_putc(&in, '\n');
        buf_puts(&want, *s ? CHAIN_OUT "\n" : "\n");
    }
    RunResult r = RUN_S2S(in.data, "translate", f.chain);
    cr_assert_eq(count_newlines(r.out), 10000);
    expect_ok(&r, want.data);

    /* A random model: batch sizes do not change the translations. */
    buf_clear(&in);
    for (int i = 0; i < 300; i++)
        buf_printf(&in, "%s %s\n", pool[i % 5], pool[(i / 5) % 5]);
    RunResult a = RUN_S2S(in.data, "translate", f.random, "--batch", "1");
    RunResult b = RUN_S2S(in.data, "translate", f.random);
    RunResult c = RUN_S2S(in.data, "translate", f.random, "--batch", "7");
    cr_assert_eq(a.status, 0);
    cr_assert_eq(count_newlines(a.out), 300);
    cr_assert_str_eq(a.out, b.out);
    cr_assert_str_eq(a.out, c.out);
    run_free(&a);
    run_free(&b);
    run_free(&c);
    buf_free(&in);
    buf_free(&want);
    fix_free(&f);
}

Test(cli_translate, invalid_utf8_names_the_line_and_writes_nothing)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S("the cat\nok\nbad \xC3\x28\n", "translate", f.chain);
    expect_fail(&r, 1, "s2s: <stdin>:3: invalid UTF-8 at byte 5\n");

    char *in = strf("%s/in.txt", f.dir), *o = strf("%s/out.txt", f.dir);
    write_file(in, "\xEF\xBB\xBF\xFF\nthe cat\n");
    r = RUN_S2S(NULL, "translate", f.chain, "-i", in, "-o", o);
    char *want = strf("s2s: %s:1: invalid UTF-8 at byte 1\n", in);
    expect_fail(&r, 1, want);
    free(want);
    cr_assert(!file_exists(o), "-o file created on error");
    write_file(o, "old contents\n");
    r = RUN_S2S(NULL, "translate", f.chain, "-i", in, "-o", o);
    cr_assert_eq(r.status, 1);
    run_free(&r);
    char *got = slurp(o, NULL);
    cr_assert_str_eq(got, "old contents\n");
    free(got);
    cr_assert_eq(dir_count(f.dir), 4);

    r = RUN_S2S(NULL, "translate", f.chain, "fine", "caf\xC3\xA9 \xE9t\xE9");
    expect_fail(&r, 1, "s2s: sentence argument 2: invalid UTF-8 at byte 7\n");
    free(in);
    free(o);
    fix_free(&f);
}

Test(cli_translate, model_file_errors)
{
    Fix f = fix_new();
    char *missing = strf("%s/none.s2s", f.dir), *want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    RunResult r = RUN_S2S("the cat\n", "translate", missing);
    expect_fail(&r, 1, want);
    free(want);

    /* Cut in half: one line that names the file. */
    size_t len;
    char *data = slurp(f.random, &len);
    char *half = strf("%s/half.s2s", f.dir);
    FILE *fp = fopen(half, "wb");
    fwrite(data, 1, len / 2, fp);
    fclose(fp);
    r = RUN_S2S("the cat\n", "translate", half);
    cr_assert_eq(r.status, 1);
    char *prefix = strf("s2s: %s: ", half);
    cr_assert(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s", r.err);
    cr_assert_eq(count_newlines(r.err), 1, "%s", r.err);
    const char *tail = "truncated file?)\n";
    cr_assert(strlen(r.err) > strlen(tail) && strcmp(r.err + strlen(r.err) - strlen(tail), tail) == 0,
              "%s", r.err);
    cr_assert_str_eq(r.out, "");
    run_free(&r);

    /* A file that is not a model. */
    char *text = strf("%s/text.s2s", f.dir);
    fp = fopen(text, "wb");
    fwrite("\x10\0\0\0\0\0\0\0{\"a\": 1}        ", 1, 24, fp);
    fclose(fp);
    want = strf("s2s: %s: not an s2s model (no s2s.format in the metadata, expected 's2s-model-1')\n", text);
    r = RUN_S2S("the cat\n", "translate", text);
    expect_fail(&r, 1, want);
    free(want);

    free(text);
    free(prefix);
    free(half);
    free(data);
    free(missing);
    fix_free(&f);
}

Test(cli_translate, usage_errors)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S(NULL, "translate", f.chain, "--bogus");
    expect_fail(&r, 2, "s2s: translate: unknown option '--bogus' (see 's2s translate --help')\n");
    r = RUN_S2S(NULL, "translate");
    expect_fail(&r, 2, "s2s: translate: missing MODEL argument (see 's2s translate --help')\n");
    r = RUN_S2S(NULL, "translate", f.chain, "the cat", "-i", "in.txt");
    expect_fail(&r, 2, "s2s: translate: give SENTENCE arguments or -i FILE, not both\n");
    r = RUN_S2S(NULL, "translate", f.chain, "--batch", "0");
    expect_fail(&r, 2, "s2s: translate: option --batch must be between 1 and 100000, got 0\n");
    r = RUN_S2S(NULL, "translate", f.chain, "--max-len", "x");
    expect_fail(&r, 2, "s2s: translate: option --max-len expects an integer, got 'x'\n");
    r = RUN_S2S(NULL, "translate", f.chain, "--threads");
    expect_fail(&r, 2, "s2s: translate: option --threads needs a value\n");
    r = RUN_S2S(NULL, "translate", "--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "usage: s2s translate MODEL [MODEL...] [SENTENCE...] [options]\n", 62) == 0, "%s",
              r.out);
    cr_assert_str_eq(r.err, "");
    run_free(&r);
    fix_free(&f);
}

/* ------------------------------------------------------------ beam search and its outputs */

/* Two n-best outputs hold the same lines, the scores equal to float rounding: a row's
   products round according to the batch it is in (OpenBLAS), which moves the sixth
   decimal now and then. */
static void expect_same_nbest(const char *a, const char *b)
{
    int line = 1;
    while (*a || *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        cr_assert(ea && eb, "line %d: one output ends early", line);
        const char *sa = strstr(a, " ||| "), *sb = strstr(b, " ||| ");
        sa = sa ? strstr(sa + 5, " ||| ") : NULL;
        sb = sb ? strstr(sb + 5, " ||| ") : NULL;
        cr_assert(sa && sb && sa < ea && sb < eb, "line %d: not an n-best line", line);
        cr_assert(sa - a == sb - b && memcmp(a, b, (size_t)(sa - a)) == 0, "line %d: %.*s vs %.*s",
                  line, (int)(ea - a), a, (int)(eb - b), b);
        double x = strtod(sa + 5, NULL), y = strtod(sb + 5, NULL);
        cr_assert(fabs(x - y) <= 2e-6, "line %d: score %.6f vs %.6f", line, x, y);
        a = ea + 1;
        b = eb + 1;
        line++;
    }
}

/* --nbest: "INDEX ||| TEXT ||| SCORE" lines, INDEX the 0-based line, the scores those of
   the library, best first; the first of each line is the plain translation. */
Test(cli_translate, nbest_lines)
{
    Fix f = fix_new();
    const char *sent[] = {"the cat", "", "hello", "a dog eats the big cat"};
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, f.random, false, &e), 0, "%s", e.msg);
    model_set_precision(&mf.model, PREC_INT8); /* translate's default */
    TranslateOpts to = {.batch = 64, .beam = 4, .nbest = 3, .alpha = 1.0};
    TranslateResult res;
    cr_assert_eq(translate_run(&mf, &(TranslateInput){sent, NULL, 4, "x", NULL, NULL}, &to, &res, NULL, &e),
                 0, "%s", e.msg);
    Buf want = {0}, best = {0};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(res.count[i], i == 1 ? 1 : 3);
        for (int k = 0; k < res.count[i]; k++) {
            buf_printf(&want, "%d ||| %s ||| %.6f\n", i, res.hyps[i][k].text, res.hyps[i][k].score);
            if (k)
                cr_assert(res.hyps[i][k].score <= res.hyps[i][k - 1].score);
        }
        buf_printf(&best, "%s\n", res.hyps[i][0].text);
    }
    cr_assert(strstr(want.data, "1 |||  ||| 0.000000\n"), "%s", want.data);
    translate_result_free(&res);
    model_file_free(&mf);

    RunResult r = RUN_S2S(NULL, "translate", f.random, sent[0], sent[1], sent[2], sent[3], "--beam",
                          "4", "--nbest", "3");
    expect_ok(&r, want.data);
    r = RUN_S2S("the cat\n\nhello\na dog eats the big cat\n", "translate", f.random, "--beam=4",
                "--nbest=3", "--batch", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    expect_same_nbest(r.out, want.data); /* other batches: scores to rounding */
    run_free(&r);
    r = RUN_S2S(NULL, "translate", f.random, sent[0], sent[1], sent[2], sent[3], "--beam", "4");
    expect_ok(&r, best.data);
    buf_free(&want);
    buf_free(&best);
    fix_free(&f);
}

/* Beam results do not depend on the batch size, n-best lists included. */
Test(cli_translate, beam_results_do_not_depend_on_the_batch)
{
    Fix f = fix_new();
    const char *pool[] = {"the cat", "", "a dog eats", "hello", "the big black cat sleeps"};
    Buf in = {0};
    for (int i = 0; i < 200; i++)
        buf_printf(&in, "%s %s\n", pool[i % 5], pool[(i / 5) % 5]);
    RunResult a = RUN_S2S(in.data, "translate", f.random, "--batch", "1", "--nbest", "5");
    RunResult b = RUN_S2S(in.data, "translate", f.random, "--nbest", "5");
    RunResult c = RUN_S2S(in.data, "translate", f.random, "--batch", "7", "--nbest", "5");
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(count_newlines(a.out), 5 * 192 + 8, "5 hypotheses a line, 1 for each of the 8 blank ones");
    expect_same_nbest(a.out, b.out);
    expect_same_nbest(a.out, c.out);
    run_free(&a);
    run_free(&b);
    run_free(&c);
    buf_free(&in);
    fix_free(&f);
}

/* A model whose output holds <unk>: the chain le <unk> ! <eos>. */
static char *unk_chain_model(const Fix *f)
{
    char *path = strf("%s/unk.s2s", f->dir);
    Model m;
    fixture_text_model(&m, 3);
    const int chain[] = {fixture_tgt_id("le"), 1, fixture_tgt_id("!")};
    fixture_chain(&m, chain, 3, 3);
    fixture_save(path, &m, NULL);
    model_free(&m);
    return path;
}

Test(cli_translate, replace_unk_takes_the_most_attended_source_token)
{
    Fix f = fix_new();
    char *unk = unk_chain_model(&f);
    /* zero weights: uniform attention, whose first position wins the tie */
    RunResult r = RUN_S2S(NULL, "translate", unk, "Zebra cat", "the zebra");
    expect_ok(&r, "le <unk> !\nle <unk> !\n");
    r = RUN_S2S(NULL, "translate", unk, "Zebra cat", "the zebra", "--replace-unk");
    expect_ok(&r, "le zebra !\nle the !\n");
    free(unk);

    /* A random model made to say <unk> at every step: each one becomes the source token
       of that row's largest attention weight. */
    char *path = strf("%s/unks.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 9);
    rnn_weights(&m)->proj_b[1] += 100;
    fixture_save(path, &m, NULL);
    model_free(&m);
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, path, false, &e), 0, "%s", e.msg);
    const char *sent[] = {"the big dog eats a zebra", "hello cat"};
    TranslateOpts to = {.batch = 2, .max_len = 6, .beam = 3, .alpha = 1.0, .replace_unk = true,
                        .attention = true};
    TranslateResult res;
    cr_assert_eq(translate_run(&mf, &(TranslateInput){sent, NULL, 2, "x", NULL, NULL}, &to, &res, NULL, &e),
                 0, "%s", e.msg);
    Buf want = {0};
    int moved = 0;
    for (int i = 0; i < 2; i++) {
        const TranslateAlign *a = &res.align[i];
        cr_assert_eq(a->ntgt, 6);
        Buf toks = {0};
        for (int t = 0; t < a->ntgt; t++) {
            int best = 0;
            for (int j = 1; j < a->nsrc; j++)
                if (a->w[t * a->nsrc + j] > a->w[t * a->nsrc + best])
                    best = j;
            moved += best != 0;
            cr_assert_str_eq(a->tgt[t], a->src[best]);
            buf_printf(&toks, "%s%s", t ? " " : "", a->src[best]);
        }
        detok_line(toks.data, toks.len, LANG_FR, &want);
        buf_putc(&want, '\n');
        buf_free(&toks);
    }
    cr_assert(moved >= 3, "the attention should not always peak at the first token");
    translate_result_free(&res);
    model_file_free(&mf);
    r = RUN_S2S(NULL, "translate", path, sent[0], sent[1], "--beam", "3", "--max-len", "6",
                "--replace-unk");
    expect_ok(&r, want.data);
    buf_free(&want);
    free(path);
    fix_free(&f);
}

/* --show-attention: the exact heatmap on stderr, translations alone on stdout. With
   zero weights the attention is uniform: 1/2 for two tokens (▓), 1/3 for three (▒). */
Test(cli_translate, show_attention_text_heatmap)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S("the cat\n\nzebra, hello\n", "translate", f.chain, "--show-attention");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, CHAIN_OUT "\n\n" CHAIN_OUT "\n");
    const char *legend = "source across, output down; \xC2\xB7 < 0.1 \xE2\x96\x91 < 0.3 "
                         "\xE2\x96\x92 < 0.5 \xE2\x96\x93 < 0.7 \xE2\x96\x88\n";
    Buf want = {0};
    const char *rows[] = {"j'   ", "ai   ", "vu   ", "le   ", "chat ", "!    ", "<eos>"};
    buf_printf(&want, "line 1: %s      the cat\n", legend);
    for (int k = 0; k < 7; k++)
        buf_printf(&want, "%s \xE2\x96\x93\xE2\x96\x93\xE2\x96\x93 \xE2\x96\x93\xE2\x96\x93\xE2\x96\x93\n", rows[k]);
    buf_printf(&want, "line 3: %s      zebra , hello\n", legend);
    const char *m5 = "\xE2\x96\x92\xE2\x96\x92\xE2\x96\x92\xE2\x96\x92\xE2\x96\x92";
    for (int k = 0; k < 7; k++)
        buf_printf(&want, "%s %s \xE2\x96\x92 %s\n", rows[k], m5, m5);
    cr_assert_str_eq(r.err, want.data);
    run_free(&r);
    buf_free(&want);
    fix_free(&f);
}

/* Runs python's XML parser on path and returns the text of every <text>, '|'-joined,
   after the document's <title>; NULL when python cannot run. */
static char *svg_texts(const char *path)
{
    const char *py = python_bin();
    char *cmd = strf("%s -c 'import sys, xml.etree.ElementTree as E\n"
                     "r = E.parse(sys.argv[1]).getroot()\n"
                     "n = \"{http://www.w3.org/2000/svg}\"\n"
                     "t = [r.find(n + \"title\").text] + [x.text for x in r.iter(n + \"text\")]\n"
                     "print(len(list(r.iter(n + \"rect\"))), \"|\".join(t))' %s 2>&1",
                     py, path);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p)
        return NULL;
    Buf out = {0};
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, p)) > 0)
        buf_append(&out, buf, k);
    int st = pclose(p);
    if (st != 0) {
        cr_log_error("python: %s", out.data ? out.data : "");
        buf_free(&out);
        return NULL;
    }
    return buf_take(&out);
}

Test(cli_translate, attention_svg_files)
{
    Fix f = fix_new();
    char *dir = strf("%s/svg", f.dir);
    RunResult r = RUN_S2S("the cat\n\na <b> & 'c'\n", "translate", f.chain, "--attention-svg", dir);
    expect_ok(&r, CHAIN_OUT "\n\n" CHAIN_OUT "\n");
    cr_assert_eq(dir_count(dir), 2, "one file per line with tokens, no temporary left");
    char *p1 = strf("%s/0001.svg", dir), *p3 = strf("%s/0003.svg", dir);
    char *svg = slurp(p3, NULL);
    cr_assert_not_null(svg);
    cr_assert(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0);
    /* the tokens, escaped */
    cr_assert(strstr(svg, ">&lt;</text>") && strstr(svg, ">&gt;</text>") && strstr(svg, ">&amp;</text>") &&
              strstr(svg, ">&apos;</text>"), "%s", svg);
    int rects = 0;
    for (const char *q = svg; (q = strstr(q, "<rect ")); q++)
        rects++;
    cr_assert_eq(rects, 1 + 7 * 8, "a background and 7 x 8 cells");
    cr_assert(strstr(svg, "<title>&lt; \xE2\x86\x92 chat: 0.125</title>"), "cells have tooltips");
    free(svg);
    char *texts = svg_texts(p3);
    if (!texts)
        cr_skip_test("python cannot parse the SVG here (see the log); structure checked above only");
    cr_assert_str_eq(texts, "57 line 3: a <b> & 'c' \xE2\x86\x92 " CHAIN_OUT "|a|<|b|>|&|'|c|'|j'|ai|vu|le|chat|!|<eos>\n");
    free(texts);
    texts = svg_texts(p1);
    cr_assert_str_eq(texts, "15 line 1: the cat \xE2\x86\x92 " CHAIN_OUT "|the|cat|j'|ai|vu|le|chat|!|<eos>\n");
    free(texts);

    /* An existing directory is reused; a path under a missing one is an error. */
    r = RUN_S2S("hello\n", "translate", f.chain, "--attention-svg", dir);
    expect_ok(&r, CHAIN_OUT "\n");
    cr_assert_eq(dir_count(dir), 2);
    char *bad = strf("%s/none/svg", f.dir);
    r = RUN_S2S("hello\n", "translate", f.chain, "--attention-svg", bad);
    cr_assert_eq(r.status, 1);
    cr_assert(strncmp(r.err, "s2s: ", 5) == 0 && strstr(r.err, bad) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
              "%s", r.err);
    cr_assert_str_eq(r.out, "");
    run_free(&r);
    free(bad);
    free(p1);
    free(p3);
    free(dir);
    fix_free(&f);
}

/* ---- streaming stdin ------------------------------------------------------------ */

/* A running `s2s translate` with pipes on its stdin and stdout. */
typedef struct Coproc {
    pid_t pid;
    int in, out; /* our ends: its stdin, its stdout */
} Coproc;

static Coproc coproc_start(const char *const *args)
{
    const char *bin = s2s_bin();
    int to[2], from[2];
    cr_assert_eq(pipe(to), 0);
    cr_assert_eq(pipe(from), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        size_t n = 0;
        while (args[n])
            n++;
        const char **argv = calloc(n + 2, sizeof *argv);
        argv[0] = bin;
        for (size_t i = 0; i < n; i++)
            argv[i + 1] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    signal(SIGPIPE, SIG_IGN);
    return (Coproc){pid, to[1], from[0]};
}

static void coproc_write(Coproc *c, const char *s)
{
    size_t n = strlen(s);
    cr_assert_eq(write(c->in, s, n), (ssize_t)n, "write: %s", strerror(errno));
}

/* Reads one line (its '\n' included) within timeout_ms; fails the test (and kills the
   process) when none comes. */
static char *coproc_read_line(Coproc *c, int timeout_ms)
{
    Buf b = {0};
    for (;;) {
        struct pollfd p = {.fd = c->out, .events = POLLIN};
        int ready = poll(&p, 1, timeout_ms);
        if (ready <= 0) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
            cr_assert_fail("no output line within %d ms (got \"%s\")", timeout_ms, b.data ? b.data : "");
        }
        char ch;
        ssize_t got = read(c->out, &ch, 1);
        cr_assert_eq(got, 1, "translate closed its output early (got \"%s\")", b.data ? b.data : "");
        buf_putc(&b, ch);
        if (ch == '\n')
            return buf_take(&b);
    }
}

/* Closes stdin, reads the rest of the output and waits: the exit status. */
static int coproc_finish(Coproc *c, char **rest)
{
    close(c->in);
    Buf b = {0};
    char tmp[4096];
    ssize_t got;
    while ((got = read(c->out, tmp, sizeof tmp)) > 0)
        buf_append(&b, tmp, (size_t)got);
    close(c->out);
    *rest = buf_take(&b);
    int st;
    cr_assert_eq(waitpid(c->pid, &st, 0), c->pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Each line's translation comes back while stdin is still open, with --batch 1 and
   with the default batch (a partial batch is translated when no more input waits). */
Test(cli_translate, stdin_streams_each_translation_before_eof)
{
    Fix f = fix_new();
    RunResult want = RUN_S2S(NULL, "translate", f.random, "the cat", "a dog eats");
    cr_assert_eq(want.status, 0, "%s", want.err);
    char *nl = strchr(want.out, '\n');
    cr_assert(nl);
    char *want1 = strndup(want.out, (size_t)(nl - want.out + 1)), *want2 = strdup(nl + 1);
    cr_assert_neq(strlen(want1), 1, "the fixture translates to a non-empty line");

    const char *batch[2] = {"1", "64"};
    for (int k = 0; k < 2; k++) {
        Coproc c = coproc_start((const char *const[]){"translate", f.random, "--batch", batch[k], NULL});
        coproc_write(&c, "the cat\n");
        char *got = coproc_read_line(&c, 60000);
        cr_assert_str_eq(got, want1, "--batch %s, first line", batch[k]);
        free(got);
        coproc_write(&c, "a dog eats\n");
        got = coproc_read_line(&c, 60000);
        cr_assert_str_eq(got, want2, "--batch %s, second line", batch[k]);
        free(got);
        char *rest;
        cr_assert_eq(coproc_finish(&c, &rest), 0);
        cr_assert_str_eq(rest, "");
        free(rest);
    }
    free(want1);
    free(want2);
    run_free(&want);
    fix_free(&f);
}

/* Streamed in many batches, stdin gives what -i FILE (translated in one piece) and
   -o give: the same lines, n-best indices and attention line numbers. */
Test(cli_translate, streamed_output_equals_whole_file_output)
{
    Fix f = fix_new();
    const char *pool[] = {"the cat", "", "a dog eats", "hello", "the big black cat sleeps"};
    Buf in = {0};
    for (int i = 0; i < 150; i++)
        buf_printf(&in, "%s %s\n", pool[i % 5], pool[(i / 5) % 5]);
    char *path = strf("%s/in.txt", f.dir), *o = strf("%s/out.txt", f.dir);
    write_file(path, in.data);

    RunResult whole = RUN_S2S(NULL, "translate", f.random, "-i", path);
    cr_assert_eq(whole.status, 0, "%s", whole.err);
    cr_assert_eq(count_newlines(whole.out), 150);
    const char *batches[] = {"1", "7", "64"};
    for (int k = 0; k < 3; k++) {
        RunResult r = RUN_S2S(in.data, "translate", f.random, "--batch", batches[k]);
        expect_ok(&r, whole.out);
    }
    RunResult r = RUN_S2S(in.data, "translate", f.random, "--batch", "7", "-o", o);
    expect_ok(&r, "");
    char *got = slurp(o, NULL);
    cr_assert_str_eq(got, whole.out);
    free(got);

    RunResult nb = RUN_S2S(NULL, "translate", f.random, "-i", path, "--nbest", "2", "--show-attention");
    cr_assert_eq(nb.status, 0, "%s", nb.err);
    r = RUN_S2S(in.data, "translate", f.random, "--batch", "7", "--nbest", "2", "--show-attention");
    cr_assert_eq(r.status, 0, "%s", r.err);
    expect_same_nbest(nb.out, r.out);
    cr_assert(strstr(r.out, "\n149 ||| "), "n-best indices count across batches");
    cr_assert_str_eq(r.err, nb.err);
    cr_assert(strstr(r.err, "line 150: "), "attention line numbers count across batches");
    run_free(&r);
    run_free(&nb);
    run_free(&whole);
    free(path);
    free(o);
    buf_free(&in);
    fix_free(&f);
}

/* A bad line stops the stream there: the batches before it have been written. */
Test(cli_translate, streamed_bad_line_stops_after_earlier_batches)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S("the cat\nhello\nbad \xC3\x28\nthe cat\n", "translate", f.chain, "--batch", "1");
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "s2s: <stdin>:3: invalid UTF-8 at byte 5\n");
    cr_assert_str_eq(r.out, CHAIN_OUT "\n" CHAIN_OUT "\n");
    run_free(&r);
    fix_free(&f);
}

/* A file after the model and before the first sentence is a model: a damaged one is an
   error naming it (exit 1, nothing on stdout), not a sentence made of its name; after
   the first sentence a file's name is text. */
Test(cli_translate, a_damaged_second_model_is_an_error_not_a_sentence)
{
    Fix f = fix_new();
    char *bad = strf("%s/bad.s2s", f.dir);
    size_t len;
    char *bytes = slurp(f.chain, &len);
    cr_assert_not_null(bytes);
    FILE *fp = fopen(bad, "wb");
    cr_assert(fp && fwrite(bytes, 1, 100, fp) == 100 && fclose(fp) == 0);
    free(bytes);
    RunResult r = RUN_S2S(NULL, "translate", f.chain, bad, "I saw the cat.");
    cr_assert_eq(r.status, 1, "status %d, stderr: %s", r.status, r.err);
    char *want = strf("s2s: %s: truncated: the header length says", bad);
    cr_expect(strncmp(r.err, want, strlen(want)) == 0 && strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s",
              r.err);
    cr_expect_str_eq(r.out, "");
    run_free(&r);
    r = RUN_S2S(NULL, "translate", f.chain, "I saw the cat.", bad);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(count_newlines(r.out), 2, "%s", r.out);
    run_free(&r);
    free(want);
    free(bad);
    fix_free(&f);
}
