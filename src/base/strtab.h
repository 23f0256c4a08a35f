/*
 * An interned-string table: each distinct byte string is stored once, in an arena,
 * and gets an id, 0, 1, 2... in the order strings were first added. Lookup is by
 * open addressing with linear probing over a power-of-two slot array kept at most
 * half full. Optionally every id carries a 64-bit count (word frequencies).
 *
 *   StrTab t;
 *   strtab_init(&t, 1000, false);
 *   uint32_t id = strtab_intern(&t, "chat", 4);       (0: the first string)
 *   strtab_find(&t, "chat", 4) == id;  strtab_find(&t, "chien", 5) == STRTAB_NONE
 *   strtab_str(&t, id) is "chat", NUL-terminated; strtab_len(&t, id) is 4
 *   strtab_free(&t);
 *
 * Strings may hold any bytes, NUL included (strtab_len gives the length). The
 * pointer strtab_str returns is valid until the next addition.
 */
#ifndef S2S_BASE_STRTAB_H
#define S2S_BASE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"

/* What the lookups return for a string the table does not hold. */
#define STRTAB_NONE UINT32_MAX

typedef struct StrTab {
    Buf arena;      /* the strings' bytes, each followed by '\0' */
    size_t *off;    /* id -> offset of its bytes in arena */
    uint32_t *len;  /* id -> length in bytes */
    uint64_t *hash; /* id -> strtab_hash of its bytes */
    uint64_t *cnt;  /* id -> count, 0 when added; NULL for a table without counts */
    size_t n, cap;  /* ids given; room in the arrays above */
    uint32_t *slot; /* id + 1, or 0 for an empty slot */
    size_t mask;    /* number of slots - 1 */
} StrTab;

/* An empty table with room for about `expect` strings before it grows; with counts,
   t->cnt[id] is a count that the caller updates. */
void strtab_init(StrTab *t, size_t expect, bool counts);
/* Releases everything and leaves t empty (freeing it twice is harmless). */
void strtab_free(StrTab *t);
/* Forgets every string (ids start again at 0) and keeps the room: cost proportional to
   the number of strings, for a table refilled many times. */
void strtab_clear(StrTab *t);

/* The hash the table uses (64 bits, a multiply-xorshift over 8-byte words; the
   length is mixed in first, so tails that read the same bytes differ by it). */
static inline uint64_t strtab_hash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    /* the last 0 to 7 bytes, read with fixed-size loads (overlapping when n is 5 to 7) */
    uint64_t w = 0;
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        w = (uint64_t)a << 32 | b;
    } else if (n > 0) {
        w = (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n / 2] << 8 |
            (unsigned char)s[n - 1];
    }
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 29;
    return h;
}

static inline size_t strtab_size(const StrTab *t) { return t->n; }
/* The bytes of id, NUL-terminated. */
static inline const char *strtab_str(const StrTab *t, uint32_t id) { return t->arena.data + t->off[id]; }
static inline uint32_t strtab_len(const StrTab *t, uint32_t id) { return t->len[id]; }

/* The id of s[0..n), whose strtab_hash is h, or STRTAB_NONE. */
static inline uint32_t strtab_find_hashed(const StrTab *t, const char *s, size_t n, uint64_t h)
{
    for (size_t i = (size_t)h & t->mask; t->slot[i]; i = (i + 1) & t->mask) {
        uint32_t id = t->slot[i] - 1;
        if (t->hash[id] == h && t->len[id] == n && memcmp(strtab_str(t, id), s, n) == 0)
            return id;
    }
    return STRTAB_NONE;
}

static inline uint32_t strtab_find(const StrTab *t, const char *s, size_t n)
{
    return strtab_find_hashed(t, s, n, strtab_hash(s, n));
}

/* Adds s[0..n), which the table must not hold yet, with its strtab_hash h (a caller
   that looked it up has it already); returns the new id. Its count starts at 0. */
uint32_t strtab_add_hashed(StrTab *t, const char *s, size_t n, uint64_t h);
/* The id of s[0..n), added first when absent. */
uint32_t strtab_intern(StrTab *t, const char *s, size_t n);

#endif
