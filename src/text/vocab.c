#include "text/vocab.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/json.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/lines.h"

static const char *const specials[VOCAB_NSPECIAL] = {"<pad>", "<unk>", "<bos>", "<eos>"};

/* ---- counter ---- */

struct VocabCounter {
    StrTab t;
};

VocabCounter *vocab_counter_new(void)
{
    VocabCounter *c = XNEW(VocabCounter, 1);
    strtab_init(&c->t, 1024, true);
    return c;
}

void vocab_counter_free(VocabCounter *c)
{
    if (c)
        strtab_free(&c->t);
    free(c);
}

void vocab_counter_add(VocabCounter *c, const char *tok, size_t len, uint64_t n)
{
    uint32_t id = strtab_intern(&c->t, tok, len); /* may move c->t.cnt */
    c->t.cnt[id] += n;
}

size_t vocab_counter_add_line(VocabCounter *c, const char *toks, size_t len)
{
    size_t n = 0, i = 0, start, k;
    while ((k = lines_word(toks, len, &i, &start)) > 0) {
        vocab_counter_add(c, toks + start, k, 1);
        n++;
    }
    return n;
}

size_t vocab_counter_types(const VocabCounter *c) { return c->t.n; }

const char *vocab_counter_at(const VocabCounter *c, size_t i, size_t *len, uint64_t *count)
{
    CHECK(i < c->t.n);
    *len = strtab_len(&c->t, (uint32_t)i);
    *count = c->t.cnt[i];
    return strtab_str(&c->t, (uint32_t)i);
}

/* ---- vocabulary ---- */

struct Vocab {
    StrTab t; /* entry index = id */
};

static Vocab *vocab_new(size_t expect)
{
    Vocab *v = XNEW(Vocab, 1);
    strtab_init(&v->t, expect, true);
    return v;
}

void vocab_free(Vocab *v)
{
    if (v)
        strtab_free(&v->t);
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
    int c = memcmp(strtab_str(t, x), strtab_str(t, y), lx < ly ? lx : ly);
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
        if (ct->cnt[e] >= min_freq && special_id(strtab_str(ct, (uint32_t)e), ct->len[e]) < 0)
            idx[m++] = (uint32_t)e;
    qsort_r(idx, m, sizeof *idx, by_count_then_bytes, (void *)ct);
    if (max_vocab && m > max_vocab - VOCAB_NSPECIAL)
        m = max_vocab - VOCAB_NSPECIAL;
    Vocab *v = vocab_new(m + VOCAB_NSPECIAL);
    for (int i = 0; i < VOCAB_NSPECIAL; i++)
        strtab_intern(&v->t, specials[i], 5);
    for (size_t k = 0; k < m; k++) {
        uint32_t e = idx[k];
        uint32_t id = strtab_add_hashed(&v->t, strtab_str(ct, e), ct->len[e], ct->hash[e]);
        v->t.cnt[id] = ct->cnt[e];
    }
    free(idx);
    return v;
}

size_t vocab_size(const Vocab *v) { return v->t.n; }

bool vocab_equal(const Vocab *a, const Vocab *b)
{
    size_t n = vocab_size(a);
    if (n != vocab_size(b))
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(vocab_token(a, (int32_t)i), vocab_token(b, (int32_t)i)) != 0)
            return false;
    return true;
}

int32_t vocab_id(const Vocab *v, const char *tok, size_t len)
{
    uint32_t id = strtab_find(&v->t, tok, len);
    return id == STRTAB_NONE ? VOCAB_UNK : (int32_t)id;
}

const char *vocab_token(const Vocab *v, int32_t id)
{
    CHECK(id >= 0 && (size_t)id < v->t.n);
    return strtab_str(&v->t, (uint32_t)id);
}

uint64_t vocab_count(const Vocab *v, int32_t id)
{
    CHECK(id >= 0 && (size_t)id < v->t.n);
    return v->t.cnt[id];
}

size_t vocab_encode(const Vocab *v, const char *toks, size_t len, int32_t *ids, size_t cap,
                    size_t *n_unk)
{
    size_t n = 0, unk = 0, i = 0, start, k;
    while ((k = lines_word(toks, len, &i, &start)) > 0) {
        int32_t id = vocab_id(v, toks + start, k);
        if (id == VOCAB_UNK)
            unk++;
        if (n < cap)
            ids[n] = id;
        n++;
    }
    if (n_unk)
        *n_unk = unk;
    return n;
}

void vocab_format(const Vocab *v, Buf *out)
{
    for (size_t e = 0; e < v->t.n; e++) {
        buf_append(out, strtab_str(&v->t, (uint32_t)e), v->t.len[e]);
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
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        data += 3;
        len -= 3;
    }
    Vocab *v = vocab_new(len / 8 + 16);
    Lines r;
    lines_init(&r, name, data, len);
    const char *p;
    size_t n;
    int rc;
    while ((rc = lines_next(&r, &p, &n, e)) > 0) {
        size_t lineno = r.lineno;
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
        uint64_t h = strtab_hash(p, tn);
        uint32_t prev = strtab_find_hashed(&v->t, p, tn, h);
        if (prev != STRTAB_NONE) {
            if (sp >= 0)
                rc = err_set(e, "%s:%zu: special token '%s' out of place (it belongs on line %d)",
                             name, lineno, specials[sp], sp + 1);
            else
                rc = err_set(e, "%s:%zu: duplicate token '%.*s' (first on line %" PRIu32 ")", name,
                             lineno, shown_len(p, tn), p, prev + 1);
            break;
        }
        uint32_t id = strtab_add_hashed(&v->t, p, tn, h);
        v->t.cnt[id] = sp >= 0 ? 0 : cnt; /* specials count 0, whatever the file says */
    }
    if (rc == 0 && r.lineno < VOCAB_NSPECIAL)
        rc = err_set(e, "%s: missing special token '%s' (expected on line %zu)", name,
                     specials[r.lineno], r.lineno + 1);
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
    if (file_read_lines(path, &data, &len, e) != 0)
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
