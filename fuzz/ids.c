/* Fuzz target: the reader of a split's token ids (ids_view, ids_check). The input is
   checked as it is (almost always a checksum fault), then with its checksum made right
   and its own fingerprint expected, so that the offsets and the ids are checked too; on
   success the lengths must describe the ids exactly and every id be in its vocabulary. */
#include <stdlib.h>

#include "base/crc32.h"
#include "data/ids.h"
#include "fuzz.h"

static void check_valid(const IdsView *v, const size_t nvocab[2], const int *sl, const int *tl)
{
    size_t at = 0;
    for (size_t i = 0; i < v->n; i++) {
        CHECK(sl[i] >= 1 && sl[i] <= IDS_MAX_LEN && tl[i] >= 1 && tl[i] <= IDS_MAX_LEN);
        for (int j = 0; j < sl[i]; j++)
            CHECK(v->ids[at + (size_t)j] >= 0 && (size_t)v->ids[at + (size_t)j] < nvocab[0]);
        at += (size_t)sl[i];
        for (int j = 0; j < tl[i]; j++)
            CHECK(v->ids[at + (size_t)j] >= 0 && (size_t)v->ids[at + (size_t)j] < nvocab[1]);
        at += (size_t)tl[i];
    }
    CHECK(at == v->nids);
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
    CHECK(size == IDS_HEADER + 8 * (2 * v.n + 1) + 4 * v.nids);
    const size_t nvocab[2] = {40, 50};
    int *sl = xmalloc_array(v.n ? v.n : 1, sizeof *sl), *tl = xmalloc_array(v.n ? v.n : 1, sizeof *tl);
    IdsPrint other = {{v.print.vocab[0] + 1, v.print.vocab[1]}, {v.print.bpe[0], v.print.bpe[1]}};
    if (ids_check(&v, &v.print, nvocab, sl, tl, false, &e) == 0)
        check_valid(&v, nvocab, sl, tl);
    else
        fuzz_check_msg(&e, "fuzz.ids: ");
    /* the checksum made right: the body is read */
    uint32_t crc = crc32_update(0, copy + 16, size - 16);
    for (int i = 0; i < 4; i++)
        copy[12 + i] = (unsigned char)(crc >> (8 * i));
    v.crc = crc;
    if (ids_check(&v, &v.print, nvocab, sl, tl, false, &e) == 0) {
        check_valid(&v, nvocab, sl, tl);
        /* another fingerprint is refused, naming vocab.src */
        CHECK(ids_check(&v, &other, nvocab, NULL, NULL, false, &e) != 0);
        CHECK(strstr(e.msg, "vocab.src") != NULL);
    } else {
        fuzz_check_msg(&e, "fuzz.ids: ");
    }
    free(sl);
    free(tl);
    free(copy);
    return 0;
}
