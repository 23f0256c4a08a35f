/* The text layer of decoding: tokenization, unknown words, detokenization, errors. */
#include <criterion/criterion.h>
#include <string.h>

#include "decode/beam.h"
#include "decode/greedy.h"
#include "decode/translate.h"
#include "model_fixture.h"

typedef struct Fix {
    Model m;
    Vocab *src, *tgt;
    TextConfig tc;
} Fix;

/* The chain model: every line with a token translates to "j' ai vu le chat !". */
static Fix fix_chain(void)
{
    Fix f;
    fixture_text_model(&f.m, 1);
    fixture_chain_text(&f.m);
    fixture_vocabs(&f.src, &f.tgt);
    f.tc = (TextConfig){.dir = DIRECTION_EN_FR, .keep_case = false};
    return f;
}

/* The fixture as the ModelFile translate_lines takes (a shallow copy of the model). */
static ModelFile fix_file(const Fix *f)
{
    return (ModelFile){.model = f->m, .src = f->src, .tgt = f->tgt, .text = f->tc};
}

static void fix_free(Fix *f)
{
    model_free(&f->m);
    vocab_free(f->src);
    vocab_free(f->tgt);
}

Test(translate, lines_to_detokenized_text_with_counts)
{
    Fix f = fix_chain();
    ModelFile mf = fix_file(&f);
    const char *lines[] = {"The CAT sleeps.", "", " \t", "zebra, hello", "a dog\tXXX"};
    const size_t lens[] = {15, 0, 2, 12, 5}; /* the last line stops before the tab */
    char *out[5];
    TranslateOpts o = {.batch = 2, .max_len = 0};
    TranslateStats st;
    Err e;
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines, lens, 5, "in", NULL, NULL},
                                 &o, out, &st, &e), 0, "%s", e.msg);
    const char *want[] = {"j'ai vu le chat !", "", "", "j'ai vu le chat !", "j'ai vu le chat !"};
    for (int i = 0; i < 5; i++)
        cr_assert_str_eq(out[i], want[i], "line %d", i);
    cr_assert_eq(st.lines, 5);
    cr_assert_eq(st.sentences, 3);
    cr_assert_eq(st.src_tokens, 4 + 3 + 2); /* the cat sleeps . | zebra , hello | a dog */
    cr_assert_eq(st.src_unk, 3);            /* . zebra , */
    cr_assert_eq(st.hyp_tokens, 18);
    translate_free(out, 5);
    for (int i = 0; i < 5; i++)
        cr_assert_null(out[i]);
    fix_free(&f);
}

Test(translate, invalid_utf8_names_the_line_and_leaves_out_alone)
{
    Fix f = fix_chain();
    ModelFile mf = fix_file(&f);
    const char *lines[] = {"the cat", "ok \xE2\x82", "\xFF"};
    const long line_no[] = {10, 42, 57};
    char *out[3] = {(char *)1, (char *)2, (char *)3};
    TranslateOpts o = {.batch = 8, .max_len = 0};
    Err e;
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines, NULL, 3, "valid.tsv", line_no, NULL},
                                 &o, out, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "valid.tsv:42: invalid UTF-8 at byte 4");
    cr_assert(out[0] == (char *)1 && out[1] == (char *)2 && out[2] == (char *)3);
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines + 2, NULL, 1, "<stdin>", NULL, NULL},
                                 &o, out, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "<stdin>:1: invalid UTF-8 at byte 1");
    fix_free(&f);
}

/* A NUL byte and a line longer than one sentence's decoding budget fail the call like
   invalid UTF-8: the first bad line is named, nothing is decoded, out is untouched. */
Test(translate, nul_bytes_and_overlong_lines_name_the_line)
{
    Fix f = fix_chain();
    ModelFile mf = fix_file(&f);
    const int limit = decode_max_src_len(&f.m, 0);
    cr_assert_eq(limit, 8097, "limit %d", limit);
    const int k = beam_max_src_len(&f.m, 0, 1, false); /* with the search's records */
    cr_assert_eq(k, 8096, "with the records %d", k);
    cr_assert_gt(beam_max_src_len(&f.m, 5, 1, false), 100000);
    Buf long_line = {0};
    for (int i = 0; i <= k; i++)
        buf_puts(&long_line, i ? " cat" : "cat");
    const char *lines[] = {"the cat", "a\0b", long_line.data, "x\xff\0"};
    const size_t lens[] = {7, 3, long_line.len, 3};
    char *out[4] = {(char *)1, (char *)2, (char *)3, (char *)4};
    TranslateOpts o = {.batch = 8, .max_len = 0};
    Err e;
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines, lens, 4, "in", NULL, NULL},
                                 &o, out, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "in:2: NUL byte at byte 2");
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines + 2, lens + 2, 2, "in", NULL, NULL},
                                 &o, out, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "in:1: too long to translate: 8097 tokens (at most 8096 for this "
                            "model, beam size and output length limit)");
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){lines + 3, lens + 3, 1, "in", NULL, NULL},
                                 &o, out, NULL, &e), -1);
    cr_assert_str_eq(e.msg, "in:1: invalid UTF-8 at byte 2");
    cr_assert(out[0] == (char *)1 && out[1] == (char *)2 && out[2] == (char *)3 &&
              out[3] == (char *)4);
    /* With an output limit of 2 tokens the same line translates. */
    const char *ok[] = {long_line.data};
    cr_assert_eq(translate_lines(&mf, &(TranslateInput){ok, NULL, 1, "in", NULL, NULL},
                                 &(TranslateOpts){.batch = 1, .max_len = 2}, out, NULL, &e),
                 0, "%s", e.msg);
    cr_assert_str_eq(out[0], "j'ai");
    translate_free(out, 1);
    buf_free(&long_line);
    fix_free(&f);
}

Test(translate, detok_follows_the_target_language)
{
    Vocab *src, *tgt;
    fixture_vocabs(&src, &tgt);
    const int ids[] = {fixture_tgt_id("j'"), fixture_tgt_id("ai"), fixture_tgt_id("vu"), 1,
                       fixture_tgt_id("!"), fixture_tgt_id(".")};
    TextConfig fr = {.dir = DIRECTION_EN_FR}, en = {.dir = DIRECTION_FR_EN};
    Buf b = {0};
    translate_detok(tgt, &fr, ids, 6, &b);
    cr_assert_str_eq(b.data, "j'ai vu <unk> !.");
    buf_clear(&b);
    translate_detok(tgt, &en, ids, 6, &b);
    cr_assert_str_eq(b.data, "j' ai vu <unk>!.");
    buf_clear(&b);
    translate_detok(tgt, &fr, ids, 0, &b);
    cr_assert_eq(b.len, 0);
    buf_free(&b);
    vocab_free(src);
    vocab_free(tgt);
}
