/* Unit tests of the vocabulary (src/text/vocab.c). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "text/vocab.h"

static VocabCounter *count_lines(const char *const *lines)
{
    VocabCounter *c = vocab_counter_new();
    for (size_t i = 0; lines[i]; i++)
        vocab_counter_add_line(c, lines[i], strlen(lines[i]));
    return c;
}

static char *formatted(const Vocab *v)
{
    Buf b = {0};
    vocab_format(v, &b);
    return buf_take(&b);
}

static void expect_parse_error(const char *text, const char *msg)
{
    Vocab *v = (Vocab *)1;
    Err e = {{0}};
    cr_assert_eq(vocab_parse(&v, "V", text, strlen(text), &e), -1, "accepted: %s", text);
    cr_assert_null(v);
    cr_assert_str_eq(e.msg, msg);
}

#define SPECIALS "<pad>\t0\n<unk>\t0\n<bos>\t0\n<eos>\t0\n"

Test(vocab, order_is_count_desc_then_bytes_asc)
{
    const char *lines[] = {"b a c a", "a b . .", "zz \xC3\xA9 e", "d  d  ", "B", NULL};
    VocabCounter *c = count_lines(lines);
    cr_assert_eq(vocab_counter_types(c), 9);
    Vocab *v = vocab_build(c, 1, 0);
    char *s = formatted(v);
    cr_assert_str_eq(s, SPECIALS "a\t3\n.\t2\nb\t2\nd\t2\nB\t1\nc\t1\ne\t1\nzz\t1\n\xC3\xA9\t1\n");
    cr_assert_eq(vocab_size(v), 13);
    free(s);
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, prefix_sorts_before_longer_token)
{
    VocabCounter *c = vocab_counter_new();
    vocab_counter_add(c, "ab", 2, 1);
    vocab_counter_add(c, "a", 1, 1);
    vocab_counter_add(c, "abc", 3, 1);
    vocab_counter_add(c, "a", 1, 0);
    Vocab *v = vocab_build(c, 1, 0);
    cr_assert_str_eq(vocab_token(v, 4), "a");
    cr_assert_str_eq(vocab_token(v, 5), "ab");
    cr_assert_str_eq(vocab_token(v, 6), "abc");
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, min_freq_and_max_vocab_counting_specials)
{
    const char *lines[] = {"x x x y y z w w w w", "y", NULL};
    VocabCounter *c = count_lines(lines);
    Vocab *v = vocab_build(c, 2, 0);
    char *s = formatted(v);
    cr_assert_str_eq(s, SPECIALS "w\t4\nx\t3\ny\t3\n");
    free(s);
    vocab_free(v);

    v = vocab_build(c, 1, 6); /* 4 specials + 2 tokens */
    s = formatted(v);
    cr_assert_str_eq(s, SPECIALS "w\t4\nx\t3\n");
    free(s);
    vocab_free(v);

    v = vocab_build(c, 1, 4);
    cr_assert_eq(vocab_size(v), 4);
    vocab_free(v);

    v = vocab_build(c, 5, 0);
    s = formatted(v);
    cr_assert_str_eq(s, SPECIALS);
    free(s);
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, special_spellings_are_not_regular_entries)
{
    const char *lines[] = {"<unk> <unk> <pad> hi hi", NULL};
    VocabCounter *c = count_lines(lines);
    Vocab *v = vocab_build(c, 1, 0);
    cr_assert_eq(vocab_size(v), 5);
    cr_assert_eq(vocab_id(v, "<unk>", 5), VOCAB_UNK);
    cr_assert_eq(vocab_id(v, "<pad>", 5), VOCAB_PAD);
    cr_assert_eq(vocab_id(v, "<eos>", 5), VOCAB_EOS);
    cr_assert_eq(vocab_id(v, "<bos>", 5), VOCAB_BOS);
    cr_assert_eq(vocab_id(v, "hi", 2), 4);
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, lookup_and_encode)
{
    const char *lines[] = {"le chat . le chien .", NULL};
    VocabCounter *c = count_lines(lines);
    Vocab *v = vocab_build(c, 1, 0);
    /* . 2, le 2, chat 1, chien 1 */
    cr_assert_eq(vocab_id(v, ".", 1), 4);
    cr_assert_eq(vocab_id(v, "le", 2), 5);
    cr_assert_eq(vocab_id(v, "chat", 4), 6);
    cr_assert_eq(vocab_id(v, "chats", 4), 6); /* len limits the lookup */
    cr_assert_eq(vocab_id(v, "chats", 5), VOCAB_UNK);
    cr_assert_eq(vocab_id(v, "", 0), VOCAB_UNK);
    cr_assert_str_eq(vocab_token(v, 7), "chien");
    cr_assert_str_eq(vocab_token(v, 0), "<pad>");
    cr_assert_eq(vocab_count(v, 5), 2);
    cr_assert_eq(vocab_count(v, VOCAB_EOS), 0);

    int32_t ids[8];
    size_t unk = 99;
    const char *t = "le  loup chat .";
    cr_assert_eq(vocab_encode(v, t, strlen(t), ids, 8, &unk), 4);
    cr_assert_eq(unk, 1);
    int32_t want[] = {5, VOCAB_UNK, 6, 4};
    cr_assert_arr_eq(ids, want, sizeof want);
    /* cap limits what is written, not the count */
    int32_t two[3] = {-7, -7, -7};
    cr_assert_eq(vocab_encode(v, t, strlen(t), two, 2, NULL), 4);
    cr_assert_eq(two[0], 5);
    cr_assert_eq(two[1], VOCAB_UNK);
    cr_assert_eq(two[2], -7);
    cr_assert_eq(vocab_encode(v, "", 0, ids, 8, &unk), 0);
    cr_assert_eq(unk, 0);
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, many_tokens_hash_table_growth)
{
    VocabCounter *c = vocab_counter_new();
    char tok[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 20000; i++) {
            int n = snprintf(tok, sizeof tok, "t%d", i);
            vocab_counter_add(c, tok, (size_t)n, (uint64_t)(i % 7 == 0 ? 2 : 1));
        }
    cr_assert_eq(vocab_counter_types(c), 20000);
    Vocab *v = vocab_build(c, 4, 0); /* only i % 7 == 0 reach 6 */
    cr_assert_eq(vocab_size(v), 4 + 2858);
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(tok, sizeof tok, "t%d", i);
        int32_t id = vocab_id(v, tok, (size_t)n);
        if (i % 7 == 0) {
            cr_assert_geq(id, 4);
            cr_assert_str_eq(vocab_token(v, id), tok);
            cr_assert_eq(vocab_count(v, id), 6);
        } else {
            cr_assert_eq(id, VOCAB_UNK);
        }
    }
    /* same count: bytewise order, "t0" < "t10003" < "t10010" < ... */
    cr_assert_str_eq(vocab_token(v, 4), "t0");
    cr_assert_str_eq(vocab_token(v, 5), "t10003");
    vocab_free(v);
    vocab_counter_free(c);
}

Test(vocab, save_load_round_trip)
{
    const char *lines[] = {"\xC3\xA7" "a va ? \xC3\xA7" "a", "va", NULL};
    VocabCounter *c = count_lines(lines);
    Vocab *v = vocab_build(c, 1, 0);
    char *dir = tmpdir_new();
    char *path = strf("%s/vocab.fr", dir);
    Err e;
    cr_assert_eq(vocab_save(v, path, &e), 0, "%s", e.msg);
    char *text = slurp(path, NULL);
    cr_assert_str_eq(text, SPECIALS "va\t2\n\xC3\xA7" "a\t2\n?\t1\n");
    Vocab *w;
    cr_assert_eq(vocab_load(&w, path, &e), 0, "%s", e.msg);
    cr_assert_eq(vocab_size(w), vocab_size(v));
    for (int32_t i = 0; i < (int32_t)vocab_size(v); i++) {
        cr_assert_str_eq(vocab_token(w, i), vocab_token(v, i));
        cr_assert_eq(vocab_count(w, i), vocab_count(v, i));
        cr_assert_eq(vocab_id(w, vocab_token(v, i), strlen(vocab_token(v, i))), i);
    }
    cr_assert_eq(dir_count(dir), 1); /* no temporary left behind */
    vocab_free(w);
    vocab_free(v);
    vocab_counter_free(c);
    rm_rf(dir);
    free(text);
    free(path);
    free(dir);
}

Test(vocab, load_accepts_bom_crlf_no_final_newline_and_any_order)
{
    Vocab *v;
    Err e;
    const char *t = "\xEF\xBB\xBF<pad>\t0\r\n<unk>\t0\r\n<bos>\t5\n<eos>\t0\nb\t1\na\t7";
    cr_assert_eq(vocab_parse(&v, "V", t, strlen(t), &e), 0, "%s", e.msg);
    cr_assert_eq(vocab_size(v), 6);
    cr_assert_eq(vocab_id(v, "b", 1), 4);
    cr_assert_eq(vocab_id(v, "a", 1), 5);
    cr_assert_eq(vocab_count(v, 5), 7);
    vocab_free(v);
}

Test(vocab, load_errors_name_file_and_line)
{
    expect_parse_error("", "V: missing special token '<pad>' (expected on line 1)");
    expect_parse_error("<pad>\t0\n<unk>\t0\n", "V: missing special token '<bos>' (expected on line 3)");
    expect_parse_error("<unk>\t0\n", "V:1: expected special token '<pad>' on line 1, found '<unk>'");
    expect_parse_error("<pad>\t0\n<unk>\t0\n<eos>\t0\n<bos>\t0\n",
                       "V:3: expected special token '<bos>' on line 3, found '<eos>'");
    expect_parse_error("<pad>\t0\n<unk>\t0\nhello\t3\n",
                       "V:3: expected special token '<bos>' on line 3, found 'hello'");
    expect_parse_error(SPECIALS "a\t1\n<unk>\t0\n",
                       "V:6: special token '<unk>' out of place (it belongs on line 2)");
    expect_parse_error(SPECIALS "a\t1\nb\t1\na\t3\n", "V:7: duplicate token 'a' (first on line 5)");
    expect_parse_error(SPECIALS "a\n", "V:5: malformed line (expected TOKEN<TAB>COUNT)");
    expect_parse_error(SPECIALS "a\t1\tx\n", "V:5: malformed line (expected TOKEN<TAB>COUNT)");
    expect_parse_error(SPECIALS "\n", "V:5: empty line (expected TOKEN<TAB>COUNT)");
    expect_parse_error(SPECIALS "a\t\n", "V:5: count '' is not a non-negative integer");
    expect_parse_error(SPECIALS "a\t-1\n", "V:5: count '-1' is not a non-negative integer");
    expect_parse_error(SPECIALS "a\t1x\n", "V:5: count '1x' is not a non-negative integer");
    expect_parse_error(SPECIALS "a\t99999999999999999999\n",
                       "V:5: count '99999999999999999999' is not a non-negative integer");
    expect_parse_error(SPECIALS "\t1\n", "V:5: empty token");
    expect_parse_error(SPECIALS "a b\t1\n", "V:5: token 'a b' contains whitespace");
    expect_parse_error(SPECIALS "a\xC2\xA0" "b\t1\n", "V:5: token 'a\xC2\xA0" "b' contains whitespace");
    expect_parse_error(SPECIALS "ok\t1\nca\xFF\t1\n", "V:6: invalid UTF-8 at byte 3");
    expect_parse_error("<pad>\t0\n<unk>\t0\r\n\r\n", "V:3: empty line (expected TOKEN<TAB>COUNT)");
}

/* Found by fuzz/vocab.c: the count on a special's line was recorded, so vocab_count
   of a special could be other than 0, and the round trip kept it. */
Test(vocab, fuzz_found_counted_specials)
{
    static const char *const texts[] = {
        "<pad>\t0\n<unk>\t1\n<bos>\t0\n<eos>\t6",
        "<pad>\t7\n<unk>\t0\n<bos>\t18446744073709551615\n<eos>\t0\na\t3\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        Vocab *v;
        Err e;
        cr_assert_eq(vocab_parse(&v, "V", texts[i], strlen(texts[i]), &e), 0, "%s", e.msg);
        for (int32_t id = 0; id < VOCAB_NSPECIAL; id++)
            cr_expect_eq(vocab_count(v, id), 0, "text %zu: special %d counts %" PRIu64, i, id,
                         vocab_count(v, id));
        char *f = formatted(v);
        cr_expect_eq(strncmp(f, SPECIALS, strlen(SPECIALS)), 0, "text %zu: formatted as %s", i, f);
        free(f);
        vocab_free(v);
    }
}

Test(vocab, load_nul_byte_and_missing_file)
{
    const char t[] = SPECIALS "a\0b\t1\n";
    Vocab *v;
    Err e;
    cr_assert_eq(vocab_parse(&v, "V", t, sizeof t - 1, &e), -1);
    cr_assert_str_eq(e.msg, "V:5: NUL byte at byte 2");
    cr_assert_eq(vocab_load(&v, "/nonexistent/vocab.src", &e), -1);
    cr_assert_null(v);
    cr_assert_str_eq(e.msg, "/nonexistent/vocab.src: cannot open: No such file or directory");
}

Test(vocab, max_count_round_trips)
{
    Vocab *v;
    Err e;
    const char *t = SPECIALS "a\t18446744073709551615\n";
    cr_assert_eq(vocab_parse(&v, "V", t, strlen(t), &e), 0, "%s", e.msg);
    cr_assert_eq(vocab_count(v, 4), UINT64_MAX);
    char *s = formatted(v);
    cr_assert_str_eq(s, t);
    free(s);
    vocab_free(v);
}
