#include "eval/ngram.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/err.h"

void ngram_free(NgramTable *t)
{
    free(t->e);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void ngram_clear(NgramTable *t)
{
    for (size_t i = 0; i < t->len; i++)
        t->slots[t->e[i].slot] = 0;
    t->len = 0;
}

uint64_t ngram_hash(const uint32_t *sym, unsigned n)
{
    uint64_t h = NGRAM_HASH_SEED;
    for (unsigned i = 0; i < n; i++)
        h = ngram_hash_step(h, sym[i]);
    return ngram_hash_final(h);
}

static bool same_key(const NgramEntry *e, const uint32_t *sym, unsigned n, uint64_t h)
{
    if (e->hash != h || e->n != n)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (e->sym[i] != sym[i])
            return false;
    return true;
}

/* Slot where the key lives, or the empty slot where it would be inserted. */
static size_t probe(const NgramTable *t, const uint32_t *sym, unsigned n, uint64_t h)
{
    size_t mask = t->nslots - 1;
    size_t i = (size_t)h & mask;
    while (t->slots[i] && !same_key(&t->e[t->slots[i] - 1], sym, n, h))
        i = (i + 1) & mask;
    return i;
}

static void grow(NgramTable *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 256;
    free(t->slots);
    t->slots = xcalloc(nslots, sizeof *t->slots);
    t->nslots = nslots;
    for (size_t k = 0; k < t->len; k++) {
        NgramEntry *e = &t->e[k];
        size_t i = probe(t, e->sym, e->n, e->hash);
        t->slots[i] = (uint32_t)(k + 1);
        e->slot = (uint32_t)i;
    }
}

NgramEntry *ngram_add(NgramTable *t, const uint32_t *sym, unsigned n, uint64_t h)
{
    CHECK(n >= 1 && n <= NGRAM_MAX_N);
    if ((t->len + 1) * 2 > t->nslots)
        grow(t);
    size_t i = probe(t, sym, n, h);
    if (t->slots[i])
        return &t->e[t->slots[i] - 1];
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 128;
        t->e = xrealloc_array(t->e, t->cap, sizeof *t->e);
    }
    CHECK(t->len < UINT32_MAX);
    NgramEntry *e = &t->e[t->len];
    memset(e, 0, sizeof *e);
    memcpy(e->sym, sym, n * sizeof *sym);
    e->n = n;
    e->hash = h;
    e->slot = (uint32_t)i;
    t->slots[i] = (uint32_t)(++t->len);
    return e;
}

NgramEntry *ngram_find(const NgramTable *t, const uint32_t *sym, unsigned n, uint64_t h)
{
    if (!t->nslots)
        return NULL;
    size_t i = probe(t, sym, n, h);
    return t->slots[i] ? &t->e[t->slots[i] - 1] : NULL;
}

void ngram_count_hyp(NgramTable *t, const uint32_t *sym, size_t len, unsigned order)
{
    for (size_t i = 0; i < len; i++) {
        uint64_t h = NGRAM_HASH_SEED;
        for (unsigned n = 1; n <= order && i + n <= len; n++) {
            h = ngram_hash_step(h, sym[i + n - 1]);
            ngram_add(t, sym + i, n, ngram_hash_final(h))->hyp++;
        }
    }
}

void ngram_count_ref(NgramTable *t, const uint32_t *ref, size_t len, unsigned order,
                     uint32_t stamp, long long *match)
{
    for (size_t i = 0; i < len; i++) {
        uint64_t h = NGRAM_HASH_SEED;
        for (unsigned n = 1; n <= order && i + n <= len; n++) {
            h = ngram_hash_step(h, ref[i + n - 1]);
            NgramEntry *en = ngram_find(t, ref + i, n, ngram_hash_final(h));
            if (!en)
                continue;
            if (en->stamp != stamp) {
                en->stamp = stamp;
                en->cur = 0;
            }
            if (++en->cur > en->best)
                en->best = en->cur;
            /* min(hyp count, ref count) = reference occurrences up to hyp's count */
            if (match && en->cur <= en->hyp)
                match[n - 1]++;
        }
    }
}

bool ngram_is_space_slow(uint32_t cp)
{
    switch (cp) {
    case 0x0009: case 0x000A: case 0x000B: case 0x000C: case 0x000D:
    case 0x001C: case 0x001D: case 0x001E: case 0x001F: case 0x0020:
    case 0x0085: case 0x00A0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

int ngram_utf8_next_slow(const char *s, size_t len, uint32_t *cp)
{
    utf8proc_int32_t v;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s,
                                          len > 4 ? 4 : (utf8proc_ssize_t)len, &v);
    if (n <= 0)
        return -1;
    *cp = (uint32_t)v;
    return (int)n;
}

size_t ngram_refs_present(const char *const *refs, size_t nrefs, bool keep_empty)
{
    size_t kept = 0;
    for (size_t k = 0; k < nrefs; k++)
        kept += ngram_ref_present(refs[k], keep_empty);
    return kept;
}

int ngram_no_ref_error(Err *e) { return err_set(e, "no reference (empty references are ignored)"); }

long ngram_nrefs_after(long nrefs, long long nsegs, size_t kept, long var)
{
    if (nsegs == 0)
        return (long)kept;
    return nrefs == (long)kept ? nrefs : var;
}

void ngram_put_nrefs(Buf *out, long nrefs, long var)
{
    if (nrefs == var)
        buf_puts(out, "nrefs:var");
    else
        buf_printf(out, "nrefs:%ld", nrefs);
}

/* ---- Python's str.lower() ------------------------------------------------------ */

/* Python's "cased": letters with case (Lu, Ll, Lt) and anything with a case mapping. */
static bool is_cased(uint32_t cp)
{
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
           utf8proc_tolower((utf8proc_int32_t)cp) != (utf8proc_int32_t)cp ||
           utf8proc_toupper((utf8proc_int32_t)cp) != (utf8proc_int32_t)cp;
}

/* Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk and the word-internal punctuation of
   Word_Break MidLetter, MidNumLet and Single_Quote. */
static bool is_case_ignorable(uint32_t cp)
{
    switch (cp) {
    case 0x0027: case 0x002E: case 0x003A: case 0x00B7: case 0x0387: case 0x055F:
    case 0x05F4: case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13:
    case 0xFE52: case 0xFE55: case 0xFF07: case 0xFF0E: case 0xFF1A:
        return true;
    default:
        break;
    }
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
           c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK;
}

static void put_cp(Buf *out, uint32_t cp)
{
    utf8proc_uint8_t enc[4];
    utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)cp, enc);
    buf_append(out, enc, (size_t)k);
}

int ngram_lower(const char *s, Buf *out, size_t *bad)
{
    size_t n = strlen(s);
    uint32_t *cps = xmalloc_array(n ? n : 1, sizeof *cps);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        int k = ngram_utf8_next(s + i, n - i, &cps[m]);
        if (k < 0) {
            free(cps);
            *bad = i;
            return -1;
        }
        i += (size_t)k;
        m++;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t cp = cps[i];
        if (cp == 0x0130) { /* İ: Python's full lowercase mapping */
            put_cp(out, 'i');
            put_cp(out, 0x0307);
        } else if (cp == 0x03A3) {
            size_t j = i;
            while (j > 0 && is_case_ignorable(cps[j - 1]))
                j--;
            bool final = j > 0 && is_cased(cps[j - 1]);
            if (final) {
                j = i + 1;
                while (j < m && is_case_ignorable(cps[j]))
                    j++;
                final = j == m || !is_cased(cps[j]);
            }
            put_cp(out, final ? 0x03C2 : 0x03C3);
        } else if (cp < 0x80) {
            buf_putc(out, (char)(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
        } else {
            put_cp(out, (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp));
        }
    }
    free(cps);
    return 0;
}
