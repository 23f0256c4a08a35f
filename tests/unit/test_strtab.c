/* base/strtab: ids in insertion order, lookups, growth, counts. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/strtab.h"

Test(strtab, ids_in_insertion_order)
{
    StrTab t;
    strtab_init(&t, 0, false);
    cr_assert_eq(strtab_find(&t, "a", 1), STRTAB_NONE);
    cr_assert_eq(strtab_intern(&t, "chat", 4), 0);
    cr_assert_eq(strtab_intern(&t, "chien", 5), 1);
    cr_assert_eq(strtab_intern(&t, "chat", 4), 0);
    cr_assert_eq(strtab_intern(&t, "", 0), 2);
    cr_assert_eq(strtab_intern(&t, "n\0ul", 4), 3);
    cr_assert_eq(strtab_intern(&t, "n", 1), 4);
    cr_assert_eq(strtab_size(&t), 5);
    cr_assert_eq(strtab_find(&t, "chien", 5), 1);
    cr_assert_eq(strtab_find(&t, "chie", 4), STRTAB_NONE);
    cr_assert_eq(strtab_find(&t, "n\0ul", 4), 3);
    cr_assert_str_eq(strtab_str(&t, 1), "chien");
    cr_assert_eq(strtab_len(&t, 3), 4);
    cr_assert_eq(memcmp(strtab_str(&t, 3), "n\0ul", 5), 0);
    cr_assert_null(t.cnt);
    strtab_free(&t);
    strtab_free(&t);
}

Test(strtab, grows_and_counts)
{
    StrTab t;
    strtab_init(&t, 10, true);
    char s[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 20000; i++) {
            int n = snprintf(s, sizeof s, "word%d", i);
            uint64_t h = strtab_hash(s, (size_t)n);
            uint32_t id = strtab_find_hashed(&t, s, (size_t)n, h);
            if (id == STRTAB_NONE) {
                cr_assert_eq(round, 0);
                id = strtab_add_hashed(&t, s, (size_t)n, h);
                cr_assert_eq(t.cnt[id], 0);
            }
            cr_assert_eq(id, (uint32_t)i);
            t.cnt[id] += (uint64_t)i;
        }
    cr_assert_eq(strtab_size(&t), 20000);
    cr_assert_eq(t.cnt[12345], 3 * 12345);
    cr_assert_str_eq(strtab_str(&t, 19999), "word19999");
    strtab_free(&t);
}

/* strtab_clear forgets every string and keeps the room: refilled, a table gives the ids
   a fresh one gives, grown or not, with colliding slots emptied in any order. */
Test(strtab, clear_forgets_every_string)
{
    StrTab t;
    strtab_init(&t, 4, false);
    char s[32];
    for (int round = 0; round < 3; round++) {
        int n = round == 1 ? 5000 : 40; /* round 1 grows the slots, round 2 refills few */
        for (int i = 0; i < n; i++) {
            int len = snprintf(s, sizeof s, "r%d-%d", round % 2, n - i);
            cr_assert_eq(strtab_intern(&t, s, (size_t)len), (uint32_t)i);
        }
        cr_assert_eq(strtab_size(&t), (size_t)n);
        size_t nslot = t.mask + 1;
        strtab_clear(&t);
        cr_assert_eq(strtab_size(&t), 0);
        cr_assert_eq(t.mask + 1, nslot, "the room is kept");
        for (size_t i = 0; i < nslot; i++)
            cr_assert_eq(t.slot[i], 0, "slot %zu still used", i);
        cr_assert_eq(strtab_find(&t, "r0-1", 4), STRTAB_NONE);
    }
    cr_assert_eq(strtab_intern(&t, "chat", 4), 0);
    cr_assert_str_eq(strtab_str(&t, 0), "chat");
    strtab_free(&t);
}
