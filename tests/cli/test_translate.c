/* End-to-end tests of `s2s translate`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/translate.h"
#include "helpers.h"
#include "model_fixture.h"

/* Every non-empty line translates to this with the chain model below. */
#define CHAIN_OUT "j'ai vu le chat !"

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
    const int chain[] = {fixture_tgt_id("j'"), fixture_tgt_id("ai"), fixture_tgt_id("vu"),
                         fixture_tgt_id("le"), fixture_tgt_id("chat"), fixture_tgt_id("!")};
    fixture_chain(&m, chain, 6, 3);
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

static void expect_ok(RunResult *r, const char *out)
{
    cr_assert_eq(r->status, 0, "status %d, stderr: %s", r->status, r->err);
    cr_assert_str_eq(r->err, "");
    cr_assert_str_eq(r->out, out);
    run_free(r);
}

static void expect_fail(RunResult *r, int status, const char *err)
{
    cr_assert_eq(r->status, status, "status %d, stderr: %s", r->status, r->err);
    cr_assert_str_eq(r->err, err);
    cr_assert_str_eq(r->out, "");
    run_free(r);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
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
    char *out[N];
    TranslateOpts to = {.batch = 3, .max_len = 0, .beam = 5, .alpha = 1.0}; /* the defaults of s2s translate */
    TranslateStats st;
    cr_assert_eq(translate_lines(&mf.model, mf.src, mf.tgt, &mf.text, sent, NULL, N, "x", NULL,
                                 &to, out, &st, &e), 0, "%s", e.msg);
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
    RunResult r = RUN_S2S("the cat\n\nhello\n", "translate", path);
    expect_ok(&r, want.data);
    r = RUN_S2S("the cat\n\nhello\n", "translate", path, "--max-len", "3");
    expect_ok(&r, "mange mange mange\n\nmange mange mange\n");
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
    cr_assert_eq(count_lines(r.out), 10000);
    expect_ok(&r, want.data);

    /* A random model: batch sizes do not change the translations. */
    buf_clear(&in);
    for (int i = 0; i < 300; i++)
        buf_printf(&in, "%s %s\n", pool[i % 5], pool[(i / 5) % 5]);
    RunResult a = RUN_S2S(in.data, "translate", f.random, "--batch", "1");
    RunResult b = RUN_S2S(in.data, "translate", f.random);
    RunResult c = RUN_S2S(in.data, "translate", f.random, "--batch", "7");
    cr_assert_eq(a.status, 0);
    cr_assert_eq(count_lines(a.out), 300);
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
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
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
    cr_assert(strncmp(r.out, "usage: s2s translate MODEL [SENTENCE...] [options]\n", 51) == 0, "%s", r.out);
    cr_assert_str_eq(r.err, "");
    run_free(&r);
    fix_free(&f);
}
