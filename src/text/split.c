#include "text/split.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/rng.h"

const char *const prepared_files[PREPARED_NFILES] = {"train.tsv", "valid.tsv", "test.tsv",
                                                    "vocab.src", "vocab.tgt", "prepare.json"};
const char *const prepared_ids_files[SPLIT_COUNT] = {"train.ids", "valid.ids", "test.ids"};

const char *split_name(SplitId s)
{
    switch (s) {
    case SPLIT_TRAIN: return "train";
    case SPLIT_VALID: return "valid";
    case SPLIT_TEST: return "test";
    default: BUG("bad split %d", (int)s);
    }
}

size_t split_default_size(size_t n_pairs)
{
    size_t tenth = n_pairs / 10;
    return tenth < SPLIT_DEFAULT_MAX ? tenth : SPLIT_DEFAULT_MAX;
}

static int key_cmp(const SplitKey *a, const SplitKey *b)
{
    int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    if (c)
        return c;
    return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

static int by_key_then_index(const void *pa, const void *pb, void *arg)
{
    const SplitKey *keys = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int c = key_cmp(&keys[a], &keys[b]);
    if (c)
        return c;
    return a < b ? -1 : a > b;
}

size_t split_assign(const SplitKey *keys, size_t n, size_t n_valid, size_t n_test, uint64_t seed,
                    uint8_t *out, size_t counts[SPLIT_COUNT])
{
    for (int s = 0; s < SPLIT_COUNT; s++)
        counts[s] = 0;
    if (n == 0)
        return 0;
    size_t *idx = xmalloc_array(n, sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, by_key_then_index, (void *)keys);

    /* Groups are runs of equal keys in idx: group g spans idx[start[g] .. start[g + 1]). */
    size_t *start = xmalloc_array(n + 1, sizeof *start);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key_cmp(&keys[idx[i - 1]], &keys[idx[i]]) != 0)
            start[ng++] = i;
    start[ng] = n;

    size_t *order = xmalloc_array(ng, sizeof *order);
    for (size_t g = 0; g < ng; g++)
        order[g] = g;
    Rng rng;
    rng_seed(&rng, seed);
    rng_shuffle(&rng, order, ng, sizeof *order);

    for (size_t k = 0; k < ng; k++) {
        size_t g = order[k];
        size_t size = start[g + 1] - start[g];
        SplitId s = SPLIT_TRAIN;
        if (counts[SPLIT_VALID] + size <= n_valid)
            s = SPLIT_VALID;
        else if (counts[SPLIT_TEST] + size <= n_test)
            s = SPLIT_TEST;
        counts[s] += size;
        for (size_t i = start[g]; i < start[g + 1]; i++)
            out[idx[i]] = (uint8_t)s;
    }
    free(order);
    free(start);
    free(idx);
    return ng;
}
