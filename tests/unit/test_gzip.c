/* gzip input (base/gzip.h) and the language of a parallel file from its name. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/gzip.h"
#include "data/prepare.h"

/* data compressed as one gzip member; the caller frees it. */
static unsigned char *gzip_mem(const char *data, size_t *n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, strlen(data)) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)strlen(data);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *n = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

static void expect_inflate(const void *in, size_t n, const char *want)
{
    char *out;
    size_t len;
    Err e;
    cr_assert_eq(gz_inflate("x.gz", in, n, &out, &len, &e), 0, "%s", e.msg);
    cr_assert_eq(len, strlen(want));
    cr_assert_str_eq(out, want);
    free(out);
}

static void expect_corrupt(const void *in, size_t n, const char *want)
{
    char *out = NULL;
    size_t len = 0;
    Err e;
    cr_assert_eq(gz_inflate("x.gz", in, n, &out, &len, &e), -1);
    cr_assert_str_eq(e.msg, want);
    cr_assert_null(out);
}

Test(gzip, members_and_damage)
{
    size_t n1, n2;
    unsigned char *a = gzip_mem("Hi.\tHallo.\n", &n1), *b = gzip_mem("No.\tNein.\n", &n2);
    cr_assert(gz_magic(a, n1));
    cr_assert(!gz_magic("Hi", 2));
    cr_assert(!gz_magic(a, 1));
    expect_inflate(a, n1, "Hi.\tHallo.\n");
    unsigned char *ab = malloc(n1 + n2 + 4);
    memcpy(ab, a, n1);
    memcpy(ab + n1, b, n2);
    expect_inflate(ab, n1 + n2, "Hi.\tHallo.\nNo.\tNein.\n");
    expect_corrupt(ab, n1 + 5, "x.gz: corrupt gzip data (unexpected end of file)");
    expect_corrupt(a, n1 - 1, "x.gz: corrupt gzip data (unexpected end of file)");
    memcpy(ab + n1, "\x1f", 1);
    expect_corrupt(ab, n1 + 1, "x.gz: corrupt gzip data (trailing data after the compressed stream)");
    memcpy(ab + n1, "zz", 2);
    expect_corrupt(ab, n1 + 2, "x.gz: corrupt gzip data (trailing data after the compressed stream)");
    expect_corrupt("", 0, "x.gz: corrupt gzip data (empty file)");
    expect_corrupt("Hi.\tHallo.\n", 11, "x.gz: corrupt gzip data (incorrect header check)");
    a[n1 - 4] ^= 0xff; /* the length in the trailer */
    expect_corrupt(a, n1, "x.gz: corrupt gzip data (incorrect length check)");
    a[n1 - 4] ^= 0xff;
    a[n1 - 8] ^= 0xff; /* the CRC-32 */
    expect_corrupt(a, n1, "x.gz: corrupt gzip data (incorrect data check)");
    free(ab);
    free(a);
    free(b);
}

static const char *lang_of(const char *path)
{
    static Lang l;
    return prepare_lang_from_name(path, &l) == 0 ? l.code : "-";
}

Test(gzip, language_from_file_name)
{
    cr_expect_str_eq(lang_of("train.de"), "de");
    cr_expect_str_eq(lang_of("dir.x/train.deu"), "de");
    cr_expect_str_eq(lang_of("news.de-en.en.gz"), "en");
    cr_expect_str_eq(lang_of("a/b.cmn.gz"), "cmn");
    cr_expect_str_eq(lang_of("a/b.yue"), "yue");
    cr_expect_str_eq(lang_of("all.txt"), "-");
    cr_expect_str_eq(lang_of("train.src"), "-");
    cr_expect_str_eq(lang_of("train.tgt.gz"), "-");
    cr_expect_str_eq(lang_of("train.source"), "-");
    cr_expect_str_eq(lang_of("train"), "-");
    cr_expect_str_eq(lang_of("de"), "-");
    cr_expect_str_eq(lang_of("train.xx"), "-");
    cr_expect_str_eq(lang_of("train.de/"), "-");
    cr_expect_str_eq(lang_of("train.gz"), "-");
    cr_expect_str_eq(lang_of(".gz"), "-");
}
