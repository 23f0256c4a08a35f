/* Fuzz target: the BPE codes file parser (bpe_parse); on success a format/parse round
   trip, and the input's bytes, as tokens, segmented and joined back. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/utf8.h"
#include "fuzz.h"
#include "text/bpe.h"

static void check_bpe(const Bpe *b, const uint8_t *data, size_t size)
{
    /* What bpe_format writes parses back to the same merges, and formats the same. */
    Buf t = {0}, t2 = {0};
    bpe_format(b, &t);
    Bpe *back;
    Err e;
    if (bpe_parse(&back, "again", t.data, t.len, &e) != 0)
        BUG("formatted codes do not parse: %s", e.msg);
    CHECK(bpe_merges(back) == bpe_merges(b));
    for (size_t i = 0; i < bpe_merges(b); i++) {
        CHECK(strcmp(bpe_merge_first(back, i), bpe_merge_first(b, i)) == 0);
        CHECK(strcmp(bpe_merge_second(back, i), bpe_merge_second(b, i)) == 0);
    }
    bpe_format(back, &t2);
    CHECK(t2.len == t.len && memcmp(t2.data, t.data, t.len) == 0);
    bpe_free(back);
    buf_free(&t);
    buf_free(&t2);

    /* The valid UTF-8 prefix of the input without '@', NUL, newlines and tabs, as
       space-separated tokens: segmenting and joining gives the tokens back. */
    size_t n = utf8_check((const char *)data, size);
    Buf toks = {0}, units = {0}, joined = {0};
    for (size_t i = 0; i < n; i++) {
        char c = (char)data[i];
        if (c == '@' || c == '\0' || c == '\n' || c == '\t' || c == '\r')
            c = ' ';
        if (c == ' ' && (toks.len == 0 || toks.data[toks.len - 1] == ' '))
            continue;
        buf_putc(&toks, c);
    }
    while (toks.len && toks.data[toks.len - 1] == ' ')
        toks.len--;
    size_t k = bpe_segment_line(b, toks.data ? toks.data : "", toks.len, &units);
    CHECK((k == 0) == (toks.len == 0));
    bpe_join(units.data ? units.data : "", units.len, &joined);
    CHECK(joined.len == toks.len && (toks.len == 0 || memcmp(joined.data, toks.data, toks.len) == 0));
    buf_free(&toks);
    buf_free(&units);
    buf_free(&joined);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that a read past len is caught. */
    char *copy = xmalloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    Bpe *b;
    Err e;
    if (bpe_parse(&b, "fuzz.codes", copy, size, &e) == 0) {
        check_bpe(b, data, size);
        bpe_free(b);
    } else {
        CHECK(b == NULL);
        fuzz_check_msg(&e, "fuzz.codes:");
    }
    free(copy);
    return 0;
}
