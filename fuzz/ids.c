/* Fuzz target: the reader of a split's token ids (ids_view, ids_open, ids_pair_check).
   The input is opened as it is (almost always a checksum fault), then with its
   checksums made right (every block's and the header's) and its own fingerprint
   expected, so that the extents, the offsets and the ids are checked too: every pair
   that passes must lie within the ids, have sides of 1 to the recorded longest ids,
   and hold ids of its vocabulary. */
#include <stdlib.h>

#include "base/crc32.h"
#include "data/batch.h"
#include "data/ids.h"
#include "fuzz.h"

static void put32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

/* Opens v and checks every pair; what passes is checked against the rules. */
static void read_all(IdsView *v, const IdsPrint *want)
{
    const size_t nvocab[2] = {40, 50};
    Err e;
    if (ids_open(v, want, nvocab, &e) != 0) {
        fuzz_check_msg(&e, "fuzz.ids: ");
        return;
    }
    PairSet set = {.n = (int)v->n, .ids = v};
    for (size_t i = 0; i < v->n; i++) {
        if (ids_pair_check(v, i, &e) != 0) {
            fuzz_check_msg(&e, "fuzz.ids: ");
            continue;
        }
        int sl = pair_src_len(&set, (int)i), tl = pair_tgt_len(&set, (int)i);
        CHECK(sl >= 1 && sl <= v->max_src && tl >= v->min_tgt && tl <= v->max_tgt);
        const int *s = pair_src(&set, (int)i), *t = pair_tgt(&set, (int)i);
        CHECK(s >= v->ids && t + tl <= v->ids + v->nids);
        for (int j = 0; j < sl; j++)
            CHECK(s[j] >= 0 && (size_t)s[j] < nvocab[0]);
        for (int j = 0; j < tl; j++)
            CHECK(t[j] >= 0 && (size_t)t[j] < nvocab[1]);
    }
    ids_close(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, aligned for the ids, so that a read past len is caught. */
    unsigned char *copy = xmalloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    IdsView v;
    Err e;
    if (ids_view(&v, copy, size, "fuzz.ids", &e) != 0) {
        fuzz_check_msg(&e, "fuzz.ids: ");
        free(copy);
        return 0;
    }
    size_t body = 8 * (2 * v.n + 1) + 4 * v.nids;
    CHECK(v.nblocks == (body + IDS_BLOCK - 1) / IDS_BLOCK && size == IDS_HEADER + body + 4 * v.nblocks);
    read_all(&v, &v.print);
    /* the checksums made right: the pairs are read */
    unsigned char *table = copy + IDS_HEADER + body;
    for (size_t k = 0; k < v.nblocks; k++) {
        size_t at = k * IDS_BLOCK, m = body - at < IDS_BLOCK ? body - at : IDS_BLOCK;
        put32(table + 4 * k, crc32_update(0, copy + IDS_HEADER + at, m));
    }
    put32(copy + 12, crc32_update(crc32_update(0, copy + 16, IDS_HEADER - 16), table, 4 * v.nblocks));
    CHECK(ids_view(&v, copy, size, "fuzz.ids", &e) == 0);
    read_all(&v, &v.print);
    /* another fingerprint is refused, naming vocab.src */
    IdsPrint other = {{v.print.vocab[0] + 1, v.print.vocab[1]}, {v.print.bpe[0], v.print.bpe[1]}};
    CHECK(ids_open(&v, &other, (const size_t[2]){40, 50}, &e) != 0);
    CHECK(strstr(e.msg, "vocab.src") != NULL);
    free(copy);
    return 0;
}
