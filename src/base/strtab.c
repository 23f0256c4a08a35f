#include "base/strtab.h"

#include <stdlib.h>

void strtab_init(StrTab *t, size_t expect, bool counts)
{
    memset(t, 0, sizeof *t);
    size_t nslot = 64;
    while (nslot < 2 * expect)
        nslot *= 2;
    t->slot = XCNEW(uint32_t, nslot);
    t->mask = nslot - 1;
    if (counts)
        t->cnt = XNEW(uint64_t, 1); /* non-NULL marks a table with counts */
}

void strtab_free(StrTab *t)
{
    buf_free(&t->arena);
    free(t->off);
    free(t->len);
    free(t->hash);
    free(t->cnt);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

void strtab_clear(StrTab *t)
{
    /* each string's slot is on its probe path from its hash; emptied slots are passed
       over, as the search is for the id itself */
    for (uint32_t id = 0; id < t->n; id++) {
        size_t i = (size_t)t->hash[id] & t->mask;
        while (t->slot[i] != id + 1)
            i = (i + 1) & t->mask;
        t->slot[i] = 0;
    }
    t->n = 0;
    buf_clear(&t->arena);
}

static void place(StrTab *t, uint32_t id)
{
    size_t i = (size_t)t->hash[id] & t->mask;
    while (t->slot[i])
        i = (i + 1) & t->mask;
    t->slot[i] = id + 1;
}

uint32_t strtab_add_hashed(StrTab *t, const char *s, size_t n, uint64_t h)
{
    CHECK(t->n < STRTAB_NONE - 1 && n < UINT32_MAX);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        XRENEW(t->off, t->cap);
        XRENEW(t->len, t->cap);
        XRENEW(t->hash, t->cap);
        if (t->cnt)
            XRENEW(t->cnt, t->cap);
    }
    uint32_t id = (uint32_t)t->n++;
    t->off[id] = t->arena.len;
    t->len[id] = (uint32_t)n;
    t->hash[id] = h;
    if (t->cnt)
        t->cnt[id] = 0;
    buf_append(&t->arena, s, n);
    buf_putc(&t->arena, '\0');
    if (2 * t->n > t->mask + 1) {
        size_t nslot = 2 * (t->mask + 1);
        free(t->slot);
        t->slot = XCNEW(uint32_t, nslot);
        t->mask = nslot - 1;
        for (uint32_t k = 0; k < t->n; k++)
            place(t, k);
    } else {
        place(t, id);
    }
    return id;
}

uint32_t strtab_intern(StrTab *t, const char *s, size_t n)
{
    uint64_t h = strtab_hash(s, n);
    uint32_t id = strtab_find_hashed(t, s, n, h);
    return id != STRTAB_NONE ? id : strtab_add_hashed(t, s, n, h);
}
