/* Unit tests of the split assignment (src/text/split.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/split.h"

/* n keys "k<i / dup>": every key shared by dup consecutive items. */
static SplitKey *make_keys(size_t n, size_t dup, char **store)
{
    SplitKey *k = calloc(n, sizeof *k);
    *store = calloc(n, 16);
    for (size_t i = 0; i < n; i++) {
        char *s = *store + 16 * i;
        int len = snprintf(s, 16, "k%zu", i / dup);
        k[i].s = s;
        k[i].len = (size_t)len;
    }
    return k;
}

static void expect_disjoint(const SplitKey *k, size_t n, const uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (k[i].len == k[j].len && memcmp(k[i].s, k[j].s, k[i].len) == 0)
                cr_assert_eq(out[i], out[j], "key %.*s in two splits", (int)k[i].len, k[i].s);
}

Test(split, names_and_default_size)
{
    cr_assert_str_eq(split_name(SPLIT_TRAIN), "train");
    cr_assert_str_eq(split_name(SPLIT_VALID), "valid");
    cr_assert_str_eq(split_name(SPLIT_TEST), "test");
    cr_assert_eq(split_default_size(0), 0);
    cr_assert_eq(split_default_size(9), 0);
    cr_assert_eq(split_default_size(10), 1);
    cr_assert_eq(split_default_size(345), 34);
    cr_assert_eq(split_default_size(19999), 1999);
    cr_assert_eq(split_default_size(20000), 2000);
    cr_assert_eq(split_default_size(162008), 2000);
}

Test(split, exact_sizes_with_singletons_and_counts_match)
{
    char *store;
    SplitKey *k = make_keys(1000, 1, &store);
    uint8_t out[1000];
    size_t counts[SPLIT_COUNT];
    cr_assert_eq(split_assign(k, 1000, 100, 50, 1, out, counts), 1000);
    cr_assert_eq(counts[SPLIT_VALID], 100);
    cr_assert_eq(counts[SPLIT_TEST], 50);
    cr_assert_eq(counts[SPLIT_TRAIN], 850);
    size_t seen[SPLIT_COUNT] = {0};
    for (size_t i = 0; i < 1000; i++) {
        cr_assert_lt(out[i], SPLIT_COUNT);
        seen[out[i]]++;
    }
    cr_assert_arr_eq(seen, counts, sizeof seen);
    free(k);
    free(store);
}

Test(split, groups_stay_together_and_sizes_are_not_exceeded)
{
    /* keys shared by 3 items: sizes come in multiples of 3, never above the request */
    char *store;
    SplitKey *k = make_keys(600, 3, &store);
    uint8_t out[600];
    size_t counts[SPLIT_COUNT];
    cr_assert_eq(split_assign(k, 600, 50, 40, 7, out, counts), 200);
    cr_assert_eq(counts[SPLIT_VALID], 48);
    cr_assert_eq(counts[SPLIT_TEST], 39);
    cr_assert_eq(counts[SPLIT_TRAIN], 600 - 48 - 39);
    for (size_t i = 0; i < 600; i += 3) {
        cr_assert_eq(out[i], out[i + 1]);
        cr_assert_eq(out[i], out[i + 2]);
    }
    expect_disjoint(k, 600, out);
    free(k);
    free(store);
}

Test(split, mixed_group_sizes_disjoint)
{
    /* keys in scrambled order with repeats of varying counts */
    enum { N = 500 };
    SplitKey k[N];
    char store[N][16];
    for (size_t i = 0; i < N; i++) {
        size_t g = (i * 7919) % 211 % (1 + i % 37);
        int len = snprintf(store[i], 16, "s%zu", g);
        k[i].s = store[i];
        k[i].len = (size_t)len;
    }
    uint8_t out[N];
    size_t counts[SPLIT_COUNT];
    split_assign(k, N, 30, 30, 3, out, counts);
    cr_assert_leq(counts[SPLIT_VALID], 30);
    cr_assert_leq(counts[SPLIT_TEST], 30);
    cr_assert_eq(counts[0] + counts[1] + counts[2], N);
    expect_disjoint(k, N, out);
}

Test(split, prefix_keys_are_different_groups)
{
    SplitKey k[] = {{"ab", 2}, {"abc", 3}, {"ab", 2}, {"a", 1}};
    uint8_t out[4];
    size_t counts[SPLIT_COUNT];
    cr_assert_eq(split_assign(k, 4, 1, 1, 5, out, counts), 3);
    cr_assert_eq(out[0], out[2]);
    cr_assert_eq(counts[SPLIT_VALID], 1);
    cr_assert_eq(counts[SPLIT_TEST], 1);
    cr_assert_eq(counts[SPLIT_TRAIN], 2);
}

Test(split, same_seed_same_assignment_other_seed_differs)
{
    char *store;
    SplitKey *k = make_keys(2000, 2, &store);
    uint8_t a[2000], b[2000], c[2000];
    size_t counts[SPLIT_COUNT];
    split_assign(k, 2000, 200, 200, 42, a, counts);
    split_assign(k, 2000, 200, 200, 42, b, counts);
    split_assign(k, 2000, 200, 200, 43, c, counts);
    cr_assert_arr_eq(a, b, sizeof a);
    cr_assert_arr_neq(a, c, sizeof a);
    free(k);
    free(store);
}

Test(split, independent_of_input_order)
{
    /* the same multiset of keys in another order: each key lands in the same split */
    SplitKey fwd[100], rev[100];
    char store[100][8];
    for (size_t i = 0; i < 100; i++) {
        snprintf(store[i], 8, "w%zu", i);
        fwd[i] = (SplitKey){store[i], strlen(store[i])};
        rev[99 - i] = fwd[i];
    }
    uint8_t a[100], b[100];
    size_t counts[SPLIT_COUNT];
    split_assign(fwd, 100, 10, 10, 9, a, counts);
    split_assign(rev, 100, 10, 10, 9, b, counts);
    for (size_t i = 0; i < 100; i++)
        cr_assert_eq(a[i], b[99 - i]);
}

Test(split, zero_sizes_and_empty_input)
{
    SplitKey k[] = {{"a", 1}, {"b", 1}};
    uint8_t out[2] = {9, 9};
    size_t counts[SPLIT_COUNT];
    cr_assert_eq(split_assign(k, 2, 0, 0, 1, out, counts), 2);
    cr_assert_eq(out[0], SPLIT_TRAIN);
    cr_assert_eq(out[1], SPLIT_TRAIN);
    cr_assert_eq(counts[SPLIT_TRAIN], 2);
    cr_assert_eq(split_assign(k, 0, 5, 5, 1, out, counts), 0);
    cr_assert_eq(counts[SPLIT_TRAIN] + counts[SPLIT_VALID] + counts[SPLIT_TEST], 0);
}
