/* Fuzz target: the vocabulary file parser (vocab_parse); on success the lookups,
   encoding of the input bytes as tokens, and a format/parse round trip. */
#include <stdlib.h>

#include "base/buf.h"
#include "fuzz.h"
#include "text/vocab.h"

static void check_vocab(const Vocab *v, const uint8_t *data, size_t size)
{
    size_t n = vocab_size(v);
    CHECK(n >= VOCAB_NSPECIAL);
    for (size_t i = 0; i < n; i++) {
        const char *t = vocab_token(v, (int32_t)i);
        CHECK(vocab_id(v, t, strlen(t)) == (int32_t)i);
        CHECK(i >= VOCAB_NSPECIAL || vocab_count(v, (int32_t)i) == 0);
    }
    /* The input bytes as a token string: ids in range, token count bounded. */
    int32_t ids[64];
    size_t unk;
    size_t k = vocab_encode(v, (const char *)data, size, ids, 64, &unk);
    CHECK(k <= (size + 1) / 2 && unk <= k);
    for (size_t i = 0; i < k && i < 64; i++)
        CHECK(ids[i] >= 0 && (size_t)ids[i] < n);
    for (size_t i = 0; i + 1 < size && i < 64; i++)
        CHECK(vocab_id(v, (const char *)data + i, size - i < 8 ? size - i : 8) >= 0);
    /* What vocab_format writes parses back to the same entries. */
    Buf b = {0};
    vocab_format(v, &b);
    Vocab *back;
    Err e;
    if (vocab_parse(&back, "again", b.data, b.len, &e) != 0)
        BUG("formatted vocabulary does not parse: %s", e.msg);
    CHECK(vocab_size(back) == n);
    for (size_t i = 0; i < n; i++) {
        CHECK(strcmp(vocab_token(back, (int32_t)i), vocab_token(v, (int32_t)i)) == 0);
        CHECK(vocab_count(back, (int32_t)i) == vocab_count(v, (int32_t)i));
    }
    vocab_free(back);
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that a read past len is caught. */
    char *copy = xmalloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    Vocab *v;
    Err e;
    if (vocab_parse(&v, "fuzz.vocab", copy, size, &e) == 0) {
        check_vocab(v, data, size);
        vocab_free(v);
    } else {
        CHECK(v == NULL);
        fuzz_check_msg(&e, "fuzz.vocab:");
    }
    free(copy);
    return 0;
}
