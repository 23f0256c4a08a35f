/* Constrained decoding end to end (docs/constraints.md): every constraint in every
   output where it fits, avoided phrases never, prefixes first, the unconstrained beam
   unchanged, glossaries, and the bad inputs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model_fixture.h"

typedef struct Fix {
    char *dir, *model, *model2, *tf; /* two GRU models, a Transformer */
} Fix;

static Fix fix_new(void)
{
    Fix f = {tmpdir_new(), NULL, NULL, NULL};
    f.model = strf("%s/m.s2s", f.dir);
    f.model2 = strf("%s/m2.s2s", f.dir);
    f.tf = strf("%s/tf.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 9);
    fixture_save(f.model, &m, NULL);
    model_free(&m);
    fixture_text_model(&m, 12);
    fixture_save(f.model2, &m, NULL);
    model_free(&m);
    ModelConfig c = fixture_transformer(NORM_PRE, POS_SINUSOIDAL, fixture_src_size(), fixture_tgt_size());
    fixture_model_from(&m, &c, 13);
    fixture_save(f.tf, &m, NULL);
    model_free(&m);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->model);
    free(f->model2);
    free(f->tf);
}

/* Whether the words w (space-separated) occur in line, as whole words: after its start
   or a space, before its end, a space or punctuation. */
static bool has_words(const char *line, size_t len, const char *w)
{
    char *l = strf(" %.*s ", (int)len, line), *x = strf(" %s", w);
    bool r = false;
    for (const char *p = l; !r && (p = strstr(p, x)); p++) {
        char next = p[strlen(x)];
        r = next == ' ' || next == '.' || next == '!' || next == '?' || next == ',';
    }
    free(l);
    free(x);
    return r;
}

static const char *const words[] = {"the", "cat", "dog", "a", "sleeps", "eats", "hello", "big", "black"};

/* Source i of the test set: 1 to 9 words of the fixture vocabulary. */
static char *source(int i)
{
    Buf b = {0};
    int n = 1 + (i * 7) % 9;
    for (int k = 0; k < n; k++)
        buf_printf(&b, "%s%s", k ? " " : "", words[(i * 5 + k * 3) % 9]);
    return buf_take(&b);
}

/* The constraints of source i: one or two of these (words of the target vocabulary
   whose detokenized form is themselves). */
static const char *const phrases[] = {"chien", "mange le", "un chat", "bonjour", "dort", "le chien dort"};

Test(constraints, every_constraint_appears_in_every_hypothesis)
{
    Fix f = fix_new();
    enum { N = 24 };
    Buf in = {0};
    for (int i = 0; i < N; i++) {
        char *src = source(i);
        const char *a = phrases[i % 6], *b = phrases[(i + 2) % 6];
        if (i % 3 == 0)
            buf_printf(&in, "{\"text\": \"%s\", \"constraints\": [\"%s\"]}\n", src, a);
        else
            buf_printf(&in, "{\"text\": \"%s\", \"constraints\": [\"%s\", \"%s\"]}\n", src, a, b);
        free(src);
    }
    char *path = strf("%s/in.jsonl", f.dir);
    write_file(path, in.data);
    const char *beams[] = {"1", "3", "5"};
    const char *models[] = {f.model, f.tf};
    for (int mi = 0; mi < 2; mi++)
    for (int bi = 0; bi < 3; bi++) {
        int nb = atoi(beams[bi]);
        const char *model = models[mi];
        RunResult r = nb > 1 ? RUN_S2S(NULL, "translate", model, "-i", path, "--constraints", "--beam", beams[bi],
                                       "--nbest", beams[bi])
                             : RUN_S2S(NULL, "translate", model, "-i", path, "--constraints", "--beam", "1");
        cr_assert_eq(r.status, 0, "%s", r.err);
        int lines = 0;
        for (char *p = r.out, *nl; (nl = strchr(p, '\n')); p = nl + 1, lines++) {
            int idx = lines;
            const char *text = p;
            size_t len = (size_t)(nl - p);
            if (nb > 1) { /* "I ||| TEXT ||| SCORE" */
                idx = atoi(p);
                text = strstr(p, "||| ") + 4;
                len = (size_t)(strstr(text, " |||") - text);
            }
            const char *a = phrases[idx % 6], *b = phrases[(idx + 2) % 6];
            cr_expect(has_words(text, len, a), "%s, beam %d, line %d: '%.*s' lacks '%s'", model, nb, idx, (int)len,
                      text, a);
            if (idx % 3)
                cr_expect(has_words(text, len, b), "%s, beam %d, line %d: '%.*s' lacks '%s'", model, nb, idx,
                          (int)len, text, b);
        }
        cr_expect(nb > 1 ? lines >= N && lines <= N * nb : lines == N, "beam %d: %d lines", nb, lines);
        run_free(&r);
    }
    /* an ensemble, with attention pictures: the same guarantee */
    char *svg = strf("%s/svg", f.dir);
    RunResult r = RUN_S2S(NULL, "translate", f.model, f.model2, "-i", path, "--constraints", "--attention-svg", svg);
    cr_assert_eq(r.status, 0, "%s", r.err);
    int i = 0;
    for (char *p = r.out, *nl; (nl = strchr(p, '\n')); p = nl + 1, i++)
        cr_expect(has_words(p, (size_t)(nl - p), phrases[i % 6]), "ensemble line %d: %.*s", i, (int)(nl - p), p);
    cr_expect_eq(dir_count(svg), N);
    run_free(&r);
    free(svg);
    free(path);
    buf_free(&in);
    fix_free(&f);
}

Test(constraints, the_unconstrained_beam_is_unchanged)
{
    Fix f = fix_new();
    Buf plain = {0}, mixed = {0};
    for (int i = 0; i < 20; i++) {
        char *src = source(i);
        buf_printf(&plain, "%s\n", src);
        if (i % 2)
            buf_printf(&mixed, "{\"text\": \"%s\", \"constraints\": [\"chien\"], \"avoid\": [\"le\"]}\n", src);
        else if (i % 4 == 0)
            buf_printf(&mixed, "{\"text\": \"%s\"}\n", src);
        else
            buf_printf(&mixed, "%s\n", src);
        free(src);
    }
    RunResult a = RUN_S2S(plain.data, "translate", f.model, "--beam", "4", "--nbest", "2");
    RunResult b = RUN_S2S(mixed.data, "translate", f.model, "--beam", "4", "--nbest", "2", "--constraints");
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    /* the lines without constraints (even ones) are the same, scores included */
    char *pa = a.out, *pb = b.out;
    for (int i = 0; i < 20; i++)
        for (int k = 0; k < 2; k++) {
            char *na = strchr(pa, '\n'), *nb = strchr(pb, '\n');
            cr_assert(na && nb);
            if (i % 2 == 0)
                cr_expect(na - pa == nb - pb && !memcmp(pa, pb, (size_t)(na - pa)), "line %d: %.*s vs %.*s", i,
                          (int)(na - pa), pa, (int)(nb - pb), pb);
            pa = na + 1;
            pb = nb + 1;
        }
    run_free(&a);
    run_free(&b);
    buf_free(&plain);
    buf_free(&mixed);
    fix_free(&f);
}

Test(constraints, avoided_phrases_never_appear_and_prefixes_come_first)
{
    Fix f = fix_new();
    /* the unconstrained outputs, and their words avoided one at a time */
    Buf plain = {0};
    for (int i = 0; i < 12; i++) {
        char *src = source(i);
        buf_printf(&plain, "%s\n", src);
        free(src);
    }
    RunResult u = RUN_S2S(plain.data, "translate", f.model);
    cr_assert_eq(u.status, 0);
    Buf in = {0};
    char *p = u.out;
    char *avoided[12];
    for (int i = 0; i < 12; i++) {
        char *nl = strchr(p, '\n');
        char *sp = memchr(p, ' ', (size_t)(nl - p));
        avoided[i] = strndup(p, (size_t)((sp ? sp : nl) - p)); /* its first word */
        char *src = source(i);
        buf_printf(&in, "{\"text\": \"%s\", \"avoid\": [\"%s\"], \"prefix\": \"bonjour le chat\"}\n", src, avoided[i]);
        free(src);
        p = nl + 1;
    }
    RunResult r = RUN_S2S(in.data, "translate", f.model, "--constraints", "--beam", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    p = r.out;
    for (int i = 0; i < 12; i++) {
        char *nl = strchr(p, '\n');
        size_t len = (size_t)(nl - p);
        cr_expect(!strncmp(p, "bonjour le chat", 15), "line %d: %.*s", i, (int)len, p);
        /* the prefix's own words are the translator's; after it, the avoided word is not */
        if (strcmp(avoided[i], "bonjour") && strcmp(avoided[i], "le") && strcmp(avoided[i], "chat"))
            cr_expect(!has_words(p, len, avoided[i]), "line %d: '%.*s' holds '%s'", i, (int)len, p, avoided[i]);
        else
            cr_expect(!has_words(p + 15, len - 15, avoided[i]), "line %d: '%.*s' holds '%s'", i, (int)len, p, avoided[i]);
        free(avoided[i]);
        p = nl + 1;
    }
    run_free(&r);
    run_free(&u);
    buf_free(&in);
    buf_free(&plain);
    fix_free(&f);
}

Test(constraints, glossary_terms_become_constraints)
{
    Fix f = fix_new();
    char *gl = strf("%s/glossary.tsv", f.dir);
    write_file(gl, "# terms\nblack dog\tchien\nCat\tun chat\n\nhello\tbonjour !\n");
    RunResult r = RUN_S2S("the black dog sleeps\nthe cat eats\na big black dog\nhello\n", "translate", f.model,
                          "--glossary", gl, "--glossary-ignore-case");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *p = r.out;
    const char *want[4] = {"chien", "un chat", "chien", "bonjour !"};
    for (int i = 0; i < 4; i++) {
        char *nl = strchr(p, '\n');
        cr_expect(has_words(p, (size_t)(nl - p), want[i]), "line %d: '%.*s' lacks '%s'", i, (int)(nl - p), p, want[i]);
        p = nl + 1;
    }
    run_free(&r);
    /* case matters without --glossary-ignore-case on a cased term ("Cat" is not "cat" in
       a lowercased model's input? the model lowercases, so the glossary's terms are
       tokenized as its source is: the match holds) */
    r = RUN_S2S("the cat eats\n", "translate", f.model, "--glossary", gl);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(has_words(r.out, strlen(r.out) - 1, "un chat"), "%s", r.out);
    run_free(&r);
    free(gl);
    fix_free(&f);
}

Test(constraints, bad_inputs_get_one_line_and_leave_no_output)
{
    Fix f = fix_new();
    char *in = strf("%s/in.txt", f.dir), *out = strf("%s/out.txt", f.dir), *msg;
    struct {
        const char *line, *err;
    } cases[] = {
        {"{\"text\": \"the cat\", \"constraints\": [\"chien\"]", "invalid JSON: JSON: expected ',' or '}' at byte 44 (end of input)"},
        {"{\"text\": \"the cat\", \"constraints\": \"chien\"}", "\"constraints\" must be an array of strings"},
        {"{\"text\": \"the cat\", \"constraints\": [1]}", "\"constraints\" item 1: JSON: expected a string at byte 36, found a number"},
        {"{\"constraints\": [\"chien\"]}", "no \"text\" member"},
        {"{\"text\": \"the cat\", \"constrains\": [\"chien\"]}", "unknown member \"constrains\" (text, constraints, avoid, prefix)"},
        {"{\"text\": \"the cat\", \"constraints\": [\" \"]}", "constraint 1 is empty"},
        {"{\"text\": \"the cat\", \"constraints\": [\"chien\", \"zèbre\"]}",
         "constraint 2: 'zèbre' is not in the model's target vocabulary"},
        {"{\"text\": \"the cat\", \"prefix\": \"zèbre\"}", "the prefix: 'zèbre' is not in the model's target vocabulary"},
        {"{\"text\": \"the cat\", \"constraints\": [\"le chien dort\"], \"avoid\": [\"chien\"]}",
         "constraint 1 holds avoided phrase 1"},
        {"{\"text\": \"a\", \"constraints\": [\"le chien dort le chat mange le chien dort le chat mange\"]}",
         "the prefix and the constraints need 12 tokens, more than the output limit of this sentence (10; --max-len)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = strf("the dog\n%s\n", cases[i].line);
        write_file(in, text);
        free(text);
        msg = strf("s2s: %s:2: %s\n", in, cases[i].err);
        const char *extra = strstr(cases[i].err, "--max-len") ? "10" : "100";
        RunResult r = RUN_S2S(NULL, "translate", f.model, "-i", in, "-o", out, "--constraints", "--max-len", extra);
        expect_fail(&r, 1, msg);
        cr_expect(!file_exists(out), "case %zu left %s", i, out);
        free(msg);
    }
    /* glossaries */
    char *gl = strf("%s/g.tsv", f.dir);
    write_file(in, "the dog\n");
    write_file(gl, "cat\tchat\ndog chien\n");
    msg = strf("s2s: %s:2: no tab between the source term and the target term\n", gl);
    RunResult r = RUN_S2S(NULL, "translate", f.model, "-i", in, "-o", out, "--glossary", gl);
    expect_fail(&r, 1, msg);
    free(msg);
    write_file(gl, "cat\t \n");
    msg = strf("s2s: %s:1: empty target term\n", gl);
    r = RUN_S2S(NULL, "translate", f.model, "-i", in, "--glossary", gl);
    expect_fail(&r, 1, msg);
    free(msg);
    write_file(gl, "cat\tchat\tchatte\n");
    msg = strf("s2s: %s:1: more than one tab\n", gl);
    r = RUN_S2S(NULL, "translate", f.model, "-i", in, "--glossary", gl);
    expect_fail(&r, 1, msg);
    free(msg);
    Buf big = {0};
    for (int i = 0; i <= 100000; i++)
        buf_printf(&big, "w%d\tchat\n", i);
    write_file(gl, big.data);
    buf_free(&big);
    msg = strf("s2s: %s:100001: more than 100000 terms\n", gl);
    r = RUN_S2S(NULL, "translate", f.model, "-i", in, "--glossary", gl);
    expect_fail(&r, 1, msg);
    free(msg);
    cr_expect(!file_exists(out));
    r = RUN_S2S(NULL, "translate", f.model, "--glossary-ignore-case", "a");
    cr_expect_eq(r.status, 2);
    run_free(&r);
    free(gl);
    free(in);
    free(out);
    fix_free(&f);
}

Test(constraints, eval_scores_constrained_sources)
{
    Fix f = fix_new();
    char *tsv = strf("%s/test.tsv", f.dir);
    write_file(tsv, "{\"text\": \"the cat sleeps\", \"constraints\": [\"chien\"]}\tle chien dort\n"
                    "the dog eats\tle chien mange\n"
                    "{\"text\": \"the cat sleeps\", \"constraints\": [\"bonjour\"]}\tbonjour\n");
    char *hyp = strf("%s/hyp.txt", f.dir);
    RunResult r = RUN_S2S(NULL, "eval", f.model, tsv, "--constraints", "-o", hyp, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *h = slurp(hyp, NULL);
    char *l2 = strchr(h, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    cr_expect(has_words(h, (size_t)(l2 - h - 1), "chien"), "%s", h);
    cr_expect(has_words(l3, strlen(l3) - 1, "bonjour"), "%s", h);
    RunResult t = RUN_S2S(NULL, "translate", f.model, "the dog eats");
    cr_expect(!strncmp(l2, t.out, strlen(t.out)), "%s vs %s", l2, t.out);
    cr_expect(strstr(r.out, "\"lines\": 3") || strstr(r.out, "\"lines\":3"), "%s", r.out);
    run_free(&t);
    free(h);
    run_free(&r);
    free(hyp);
    free(tsv);
    fix_free(&f);
}

/* Numbers (docs/constraints.md): by default each word of digits of a source is a
   constraint of its output, exactly as if given with --constraints; a line without
   numbers, and a number the vocabulary cannot write, decode as with
   --no-copy-numbers; split sentences get their own numbers. A model trained briefly on
   the sample's subwords, whose digits are units. */
Test(constraints, numbers_are_copied_unless_asked_not_to)
{
    char *dir = sample_prepared_dir_with("300");
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "20", "--emb", "16", "--hidden", "16", "--dec-hidden",
                "16", "--attn-size", "16", "--deep-out", "16", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    static const struct {
        const char *src, *numbers; /* the numbers, as a JSON array's members */
    } lines[] = {
        {"I have 3 cats.", "\"3\""},
        {"I was born in 1990.", "\"1990\""},
        {"Room 12 is on the left.", "\"12\""},
        {"I waited 10 minutes and 5 seconds.", "\"10\", \"5\""},
        {"I have 3 cats and 3 dogs.", "\"3\""},
        {"The cat sleeps.", NULL},
        {"It is 3.5 meters long.", NULL}, /* a decimal: not a word of digits */
    };
    Buf plain = {0}, json = {0};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        buf_printf(&plain, "%s\n", lines[i].src);
        if (lines[i].numbers)
            buf_printf(&json, "{\"text\": \"%s\", \"constraints\": [%s]}\n", lines[i].src, lines[i].numbers);
        else
            buf_printf(&json, "%s\n", lines[i].src);
    }
    RunResult a = RUN_S2S(plain.data, "translate", m);
    RunResult b = RUN_S2S(json.data, "translate", m, "--no-copy-numbers", "--constraints");
    RunResult c = RUN_S2S(plain.data, "translate", m, "--no-copy-numbers");
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    cr_assert_eq(c.status, 0, "%s", c.err);
    cr_expect_str_eq(a.out, b.out);
    const char *pa = a.out, *pc = c.out;
    int copied = 0;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *na = strchr(pa, '\n'), *nc = strchr(pc, '\n');
        cr_assert(na && nc);
        if (!lines[i].numbers)
            cr_expect(na - pa == nc - pc && !memcmp(pa, pc, (size_t)(na - pa)), "line %zu: %.*s vs %.*s", i,
                      (int)(na - pa), pa, (int)(nc - pc), pc);
        else
            copied += na - pa != nc - pc || memcmp(pa, pc, (size_t)(na - pa));
        pa = na + 1;
        pc = nc + 1;
    }
    cr_expect_gt(copied, 0, "copying changed no line:\n%s", a.out);
    /* the numbers are whole words of the output */
    pa = a.out;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *na = strchr(pa, '\n');
        for (const char *q = lines[i].numbers; q && (q = strchr(q, '"')); q++) {
            const char *end = strchr(q + 1, '"');
            char *num = strf("%.*s", (int)(end - q - 1), q + 1);
            cr_expect(has_words(pa, (size_t)(na - pa), num), "line %zu: no %s in %.*s", i, num, (int)(na - pa), pa);
            free(num);
            q = end;
        }
        pa = na + 1;
    }
    /* two sentences of one line: each with its own numbers, as translated alone */
    RunResult d = RUN_S2S("I have 3 cats. Room 12 is on the left.\n", "translate", m);
    cr_assert_eq(d.status, 0, "%s", d.err);
    const char *l1 = a.out, *l3 = strchr(strchr(a.out, '\n') + 1, '\n') + 1;
    char *want = strf("%.*s %.*s\n", (int)(strchr(l1, '\n') - l1), l1, (int)(strchr(l3, '\n') - l3), l3);
    cr_expect_str_eq(d.out, want);
    free(want);
    run_free(&d);
    run_free(&a);
    run_free(&b);
    run_free(&c);
    buf_free(&plain);
    buf_free(&json);
    free(data);
    free(m);
    rm_rf(dir);
    free(dir);
}
