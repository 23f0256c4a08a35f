#include "text/vocab.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/json.h"
#include "base/utf8.h"

static const char *const specials[VOCAB_NSPECIAL] = {"<pad>", "<unk>", "<bos>", "<eos>"};

/* ---- string table: interned tokens with counts, open addressing, linear probing ---- */

typedef struct StrTab {
    Buf arena;      /* token bytes, each followed by '\0' */
    size_t *off;    /* entry -> offset in arena */
    uint32_t *len;
    uint64_t *cnt;
    uint64_t *hash;
    size_t n, cap;
    uint32_t *slot; /* entry + 1, or 0 when empty */
    size_t mask;    /* number of slots - 1 (a power of two minus one) */
} StrTab;

static uint64_t hash_bytes(const char *s, size_t n)
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
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 29;
    return h;
}

static void st_init(StrTab *t, size_t expect)
{
    memset(t, 0, sizeof *t);
    size_t nslot = 64;
    while (nslot < 2 * expect)
        nslot *= 2;
    t->slot = xcalloc(nslot, sizeof *t->slot);
    t->mask = nslot - 1;
}

static void st_free(StrTab *t)
{
    buf_free(&t->arena);
    free(t->off);
    free(t->len);
    free(t->cnt);
    free(t->hash);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static inline const char *st_str(const StrTab *t, size_t i) { return t->arena.data + t->off[i]; }

/* The entry of s[0..n) with hash h, or -1. */
static long st_find(const StrTab *t, const char *s, size_t n, uint64_t h)
{
    size_t i = (size_t)h & t->mask;
    uint32_t k;
    while ((k = t->slot[i]) != 0) {
        size_t e = k - 1;
        if (t->hash[e] == h && t->len[e] == n && memcmp(st_str(t, e), s, n) == 0)
            return (long)e;
        i = (i + 1) & t->mask;
    }
    return -1;
}

static void st_grow(StrTab *t)
{
    size_t nslot = (t->mask + 1) * 2;
    free(t->slot);
    t->slot = xcalloc(nslot, sizeof *t->slot);
    t->mask = nslot - 1;
    for (size_t e = 0; e < t->n; e++) {
        size_t i = (size_t)t->hash[e] & t->mask;
        while (t->slot[i])
            i = (i + 1) & t->mask;
        t->slot[i] = (uint32_t)(e + 1);
    }
}

/* Adds s[0..n) (known to be absent) with count cnt; returns its entry. */
static size_t st_add(StrTab *t, const char *s, size_t n, uint64_t h, uint64_t cnt)
{
    CHECK(t->n < UINT32_MAX - 1 && n < UINT32_MAX);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->off = xrealloc_array(t->off, t->cap, sizeof *t->off);
        t->len = xrealloc_array(t->len, t->cap, sizeof *t->len);
        t->cnt = xrealloc_array(t->cnt, t->cap, sizeof *t->cnt);
        t->hash = xrealloc_array(t->hash, t->cap, sizeof *t->hash);
    }
    size_t e = t->n++;
    t->off[e] = t->arena.len;
    t->len[e] = (uint32_t)n;
    t->cnt[e] = cnt;
    t->hash[e] = h;
    buf_append(&t->arena, s, n);
    buf_putc(&t->arena, '\0');
    if (2 * t->n > t->mask + 1) {
        st_grow(t);
    } else {
        size_t i = (size_t)h & t->mask;
        while (t->slot[i])
            i = (i + 1) & t->mask;
        t->slot[i] = (uint32_t)(e + 1);
    }
    return e;
}

/* ---- counter ---- */

struct VocabCounter {
    StrTab t;
};

VocabCounter *vocab_counter_new(void)
{
    VocabCounter *c = xmalloc(sizeof *c);
    st_init(&c->t, 1024);
    return c;
}

void vocab_counter_free(VocabCounter *c)
{
    if (!c)
        return;
    st_free(&c->t);
    free(c);
}

void vocab_counter_add(VocabCounter *c, const char *tok, size_t len, uint64_t n)
{
    uint64_t h = hash_bytes(tok, len);
    long e = st_find(&c->t, tok, len, h);
    if (e >= 0)
        c->t.cnt[e] += n;
    else
        st_add(&c->t, tok, len, h, n);
}

size_t vocab_counter_add_line(VocabCounter *c, const char *toks, size_t len)
{
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && toks[i] == ' ')
            i++;
        size_t start = i;
        while (i < len && toks[i] != ' ')
            i++;
        if (i > start) {
            vocab_counter_add(c, toks + start, i - start, 1);
            n++;
        }
    }
    return n;
}

size_t vocab_counter_types(const VocabCounter *c) { return c->t.n; }

const char *vocab_counter_at(const VocabCounter *c, size_t i, size_t *len, uint64_t *count)
{
    CHECK(i < c->t.n);
    *len = c->t.len[i];
    *count = c->t.cnt[i];
    return st_str(&c->t, i);
}

/* ---- vocabulary ---- */

struct Vocab {
    StrTab t; /* entry index = id */
};

static Vocab *vocab_new(size_t expect)
{
    Vocab *v = xmalloc(sizeof *v);
    st_init(&v->t, expect);
    return v;
}

void vocab_free(Vocab *v)
{
    if (!v)
        return;
    st_free(&v->t);
    free(v);
}

static int special_id(const char *s, size_t n)
{
    if (n != 5 || s[0] != '<')
        return -1;
    for (int i = 0; i < VOCAB_NSPECIAL; i++)
        if (memcmp(s, specials[i], 5) == 0)
            return i;
    return -1;
}

static int by_count_then_bytes(const void *a, const void *b, void *arg)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const StrTab *t = arg;
    if (t->cnt[x] != t->cnt[y])
        return t->cnt[x] > t->cnt[y] ? -1 : 1;
    size_t lx = t->len[x], ly = t->len[y];
    int c = memcmp(st_str(t, x), st_str(t, y), lx < ly ? lx : ly);
    if (c)
        return c;
    return lx < ly ? -1 : lx > ly ? 1 : 0;
}

Vocab *vocab_build(const VocabCounter *c, uint64_t min_freq, size_t max_vocab)
{
    CHECK(min_freq >= 1);
    CHECK(max_vocab == 0 || max_vocab >= VOCAB_NSPECIAL);
    const StrTab *ct = &c->t;
    uint32_t *idx = XNEW(uint32_t, ct->n);
    size_t m = 0;
    for (size_t e = 0; e < ct->n; e++)
        if (ct->cnt[e] >= min_freq && special_id(st_str(ct, e), ct->len[e]) < 0)
            idx[m++] = (uint32_t)e;
    qsort_r(idx, m, sizeof *idx, by_count_then_bytes, (void *)ct);
    if (max_vocab && m > max_vocab - VOCAB_NSPECIAL)
        m = max_vocab - VOCAB_NSPECIAL;
    Vocab *v = vocab_new(m + VOCAB_NSPECIAL);
    for (int i = 0; i < VOCAB_NSPECIAL; i++)
        st_add(&v->t, specials[i], 5, hash_bytes(specials[i], 5), 0);
    for (size_t k = 0; k < m; k++) {
        const char *s = st_str(ct, idx[k]);
        size_t n = ct->len[idx[k]];
        st_add(&v->t, s, n, ct->hash[idx[k]], ct->cnt[idx[k]]);
    }
    free(idx);
    return v;
}

size_t vocab_size(const Vocab *v) { return v->t.n; }

int32_t vocab_id(const Vocab *v, const char *tok, size_t len)
{
    long e = st_find(&v->t, tok, len, hash_bytes(tok, len));
    return e < 0 ? VOCAB_UNK : (int32_t)e;
}

const char *vocab_token(const Vocab *v, int32_t id)
{
    CHECK(id >= 0 && (size_t)id < v->t.n);
    return st_str(&v->t, (size_t)id);
}

uint64_t vocab_count(const Vocab *v, int32_t id)
{
    CHECK(id >= 0 && (size_t)id < v->t.n);
    return v->t.cnt[id];
}

size_t vocab_encode(const Vocab *v, const char *toks, size_t len, int32_t *ids, size_t cap,
                    size_t *n_unk)
{
    size_t n = 0, unk = 0, i = 0;
    while (i < len) {
        while (i < len && toks[i] == ' ')
            i++;
        size_t start = i;
        while (i < len && toks[i] != ' ')
            i++;
        if (i > start) {
            int32_t id = vocab_id(v, toks + start, i - start);
            if (id == VOCAB_UNK)
                unk++;
            if (n < cap)
                ids[n] = id;
            n++;
        }
    }
    if (n_unk)
        *n_unk = unk;
    return n;
}

void vocab_format(const Vocab *v, Buf *out)
{
    for (size_t e = 0; e < v->t.n; e++) {
        buf_append(out, st_str(&v->t, e), v->t.len[e]);
        buf_printf(out, "\t%" PRIu64 "\n", v->t.cnt[e]);
    }
}

int vocab_save(const Vocab *v, const char *path, Err *e)
{
    Buf b = {0};
    vocab_format(v, &b);
    int rc = atomic_write(path, b.data ? b.data : "", b.len, e);
    buf_free(&b);
    return rc;
}

/* Parses a decimal count; -1 when s[0..n) is not one or overflows. */
static int parse_count(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

/* At most 40 bytes of a token for messages, cut at a character boundary. */
static int shown_len(const char *s, size_t n)
{
    if (n <= 40)
        return (int)n;
    size_t k = 40;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    return (int)k;
}

int vocab_parse(Vocab **out, const char *name, const char *data, size_t len, Err *e)
{
    *out = NULL;
    const char *p = data, *end = data + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    Vocab *v = vocab_new(len / 8 + 16);
    size_t lineno = 0;
    int rc = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t n = (size_t)(line_end - p);
        if (n && p[n - 1] == '\r')
            n--;
        lineno++;
        const char *nul = memchr(p, '\0', n);
        size_t bad = utf8_check(p, nul ? (size_t)(nul - p) : n);
        if (nul && bad == (size_t)(nul - p)) {
            rc = err_set(e, "%s:%zu: NUL byte at byte %zu", name, lineno, bad + 1);
            break;
        }
        if (bad < n) {
            rc = err_set(e, "%s:%zu: invalid UTF-8 at byte %zu", name, lineno, bad + 1);
            break;
        }
        const char *tab = memchr(p, '\t', n);
        if (n == 0) {
            rc = err_set(e, "%s:%zu: empty line (expected TOKEN<TAB>COUNT)", name, lineno);
            break;
        }
        if (!tab || memchr(tab + 1, '\t', n - (size_t)(tab - p) - 1)) {
            rc = err_set(e, "%s:%zu: malformed line (expected TOKEN<TAB>COUNT)", name, lineno);
            break;
        }
        size_t tn = (size_t)(tab - p);
        uint64_t cnt;
        if (parse_count(tab + 1, n - tn - 1, &cnt) != 0) {
            rc = err_set(e, "%s:%zu: count '%.*s' is not a non-negative integer", name, lineno,
                         shown_len(tab + 1, n - tn - 1), tab + 1);
            break;
        }
        if (tn == 0) {
            rc = err_set(e, "%s:%zu: empty token", name, lineno);
            break;
        }
        if (utf8_has_space(p, tn)) {
            rc = err_set(e, "%s:%zu: token '%.*s' contains whitespace", name, lineno,
                         shown_len(p, tn), p);
            break;
        }
        int sp = special_id(p, tn);
        if (lineno <= VOCAB_NSPECIAL && sp != (int)lineno - 1) {
            rc = err_set(e, "%s:%zu: expected special token '%s' on line %zu, found '%.*s'", name,
                         lineno, specials[lineno - 1], lineno, shown_len(p, tn), p);
            break;
        }
        uint64_t h = hash_bytes(p, tn);
        long prev = st_find(&v->t, p, tn, h);
        if (prev >= 0) {
            if (sp >= 0)
                rc = err_set(e, "%s:%zu: special token '%s' out of place (it belongs on line %d)",
                             name, lineno, specials[sp], sp + 1);
            else
                rc = err_set(e, "%s:%zu: duplicate token '%.*s' (first on line %ld)", name, lineno,
                             shown_len(p, tn), p, prev + 1);
            break;
        }
        st_add(&v->t, p, tn, h, sp >= 0 ? 0 : cnt); /* specials count 0, whatever the file says */
        p = nl ? nl + 1 : end;
    }
    if (rc == 0 && lineno < VOCAB_NSPECIAL)
        rc = err_set(e, "%s: missing special token '%s' (expected on line %zu)", name,
                     specials[lineno], lineno + 1);
    if (rc != 0) {
        vocab_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

int vocab_load(Vocab **out, const char *path, Err *e)
{
    char *data;
    size_t len;
    *out = NULL;
    if (file_read_all(path, &data, &len, e) != 0)
        return -1;
    int rc = vocab_parse(out, path, data, len, e);
    free(data);
    return rc;
}

/* ---- the metadata form: tokens in id order joined by '\n' ---- */

void vocab_lines(const Vocab *v, Buf *out)
{
    for (size_t i = 0; i < vocab_size(v); i++) {
        if (i)
            buf_putc(out, '\n');
        buf_puts(out, vocab_token(v, (int32_t)i));
    }
}

int vocab_from_lines(Vocab **out, const char *name, const char *s, size_t len, Err *e)
{
    *out = NULL;
    Buf b = {0};
    size_t start = 0, line = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || s[i] == '\n') {
            line++;
            /* A tab or CR would read as a column or line end of the vocabulary
               file format below: refuse them here, as whitespace. */
            if (memchr(s + start, '\t', i - start) || memchr(s + start, '\r', i - start)) {
                char shown[64];
                buf_free(&b);
                return err_set(e, "%s:%zu: token '%s' contains whitespace", name, line,
                               json_show(shown, sizeof shown, s + start, i - start));
            }
            buf_append(&b, s + start, i - start);
            buf_puts(&b, "\t0\n");
            start = i + 1;
        }
    int rc = vocab_parse(out, name, b.data, b.len, e);
    buf_free(&b);
    return rc;
}
