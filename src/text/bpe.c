/* Byte-pair encoding: learning merges, the codes file, segmentation (see bpe.h). */
#include "text/bpe.h"

#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/strtab.h"
#include "base/utf8.h"
#include "base/lines.h"

#define NONE STRTAB_NONE

/* ---- a map from a pair of symbol ids to a uint32 ---- */

typedef struct PairTab {
    uint64_t *key; /* UINT64_MAX when empty */
    uint32_t *val;
    size_t n, mask;
} PairTab;

static inline uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t)a << 32 | b; }

static inline size_t pair_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDULL;
    k ^= k >> 33;
    return (size_t)k;
}

static void pairs_init(PairTab *p)
{
    p->n = 0;
    p->mask = 1023;
    p->key = XNEW(uint64_t, p->mask + 1);
    memset(p->key, 0xFF, (p->mask + 1) * sizeof *p->key);
    p->val = XNEW(uint32_t, p->mask + 1);
}

static void pairs_free(PairTab *p)
{
    free(p->key);
    free(p->val);
}

static uint32_t pairs_get(const PairTab *p, uint64_t k)
{
    for (size_t i = pair_hash(k) & p->mask; p->key[i] != UINT64_MAX; i = (i + 1) & p->mask)
        if (p->key[i] == k)
            return p->val[i];
    return NONE;
}

/* Inserts k -> v when k is absent; returns the value k maps to. */
static uint32_t pairs_put(PairTab *p, uint64_t k, uint32_t v)
{
    size_t i = pair_hash(k) & p->mask;
    for (; p->key[i] != UINT64_MAX; i = (i + 1) & p->mask)
        if (p->key[i] == k)
            return p->val[i];
    p->key[i] = k;
    p->val[i] = v;
    if (2 * ++p->n > p->mask + 1) {
        size_t old = p->mask + 1;
        uint64_t *ok = p->key;
        uint32_t *ov = p->val;
        p->mask = 2 * old - 1;
        p->key = XNEW(uint64_t, 2 * old);
        memset(p->key, 0xFF, 2 * old * sizeof *p->key);
        p->val = XNEW(uint32_t, 2 * old);
        for (size_t j = 0; j < old; j++)
            if (ok[j] != UINT64_MAX) {
                size_t s = pair_hash(ok[j]) & p->mask;
                while (p->key[s] != UINT64_MAX)
                    s = (s + 1) & p->mask;
                p->key[s] = ok[j];
                p->val[s] = ov[j];
            }
        free(ok);
        free(ov);
    }
    return v;
}

/* ---- the merges ---- */

struct Bpe {
    StrTab sym;
    uint32_t *ma, *mb, *mab; /* merge i: symbols A, B and AB */
    size_t n, cap;
    PairTab rank;            /* (A, B) -> the first merge of that pair */
};

static Bpe *bpe_new(void)
{
    Bpe *b = XCNEW(Bpe, 1);
    strtab_init(&b->sym, 512, false);
    pairs_init(&b->rank);
    return b;
}

void bpe_free(Bpe *b)
{
    if (!b)
        return;
    strtab_free(&b->sym);
    pairs_free(&b->rank);
    free(b->ma);
    free(b->mb);
    free(b->mab);
    free(b);
}

size_t bpe_merges(const Bpe *b) { return b->n; }

bool bpe_equal(const Bpe *a, const Bpe *b)
{
    if (!a || !b)
        return a == b;
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(bpe_merge_first(a, i), bpe_merge_first(b, i)) != 0 ||
            strcmp(bpe_merge_second(a, i), bpe_merge_second(b, i)) != 0)
            return false;
    return true;
}
const char *bpe_merge_first(const Bpe *b, size_t i) { CHECK(i < b->n); return strtab_str(&b->sym, b->ma[i]); }
const char *bpe_merge_second(const Bpe *b, size_t i) { CHECK(i < b->n); return strtab_str(&b->sym, b->mb[i]); }

/* Appends the merge (a, b); returns the id of the merged symbol. */
static uint32_t add_merge(Bpe *b, uint32_t x, uint32_t y)
{
    size_t lx = b->sym.len[x], ly = b->sym.len[y];
    char *cat = xmalloc(lx + ly);
    memcpy(cat, strtab_str(&b->sym, x), lx);
    memcpy(cat + lx, strtab_str(&b->sym, y), ly);
    uint32_t xy = strtab_intern(&b->sym, cat, lx + ly);
    free(cat);
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        XRENEW(b->ma, b->cap);
        XRENEW(b->mb, b->cap);
        XRENEW(b->mab, b->cap);
    }
    CHECK(b->n < NONE);
    b->ma[b->n] = x;
    b->mb[b->n] = y;
    b->mab[b->n] = xy;
    pairs_put(&b->rank, pair_key(x, y), (uint32_t)b->n);
    b->n++;
    return xy;
}

/* The symbol ids of word[0..len): its code points, the last with "</w>" (lookup NULL:
   interned into t, else looked up, NONE when unknown). starts[i] is the byte offset
   of symbol i. Returns the number of symbols. */
static size_t word_symbols(StrTab *t, const StrTab *lookup, const char *w, size_t len, uint32_t *ids,
                           uint32_t *starts)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq((const unsigned char *)w + i, len - i);
        if (k == 0)
            k = 1; /* a stray byte is a symbol of its own */
        char tmp[4 + sizeof BPE_EOW];
        const char *s = w + i;
        size_t sl = k;
        if (i + k == len) {
            memcpy(tmp, w + i, k);
            memcpy(tmp + k, BPE_EOW, sizeof BPE_EOW - 1);
            s = tmp;
            sl = k + sizeof BPE_EOW - 1;
        }
        starts[n] = (uint32_t)i;
        ids[n++] = lookup ? strtab_find(lookup, s, sl) : strtab_intern(t, s, sl);
        i += k;
    }
    return n;
}

/* ---- learning ---- */

typedef struct IdVec {
    uint32_t *v;
    uint32_t n, cap;
} IdVec;

static void idvec_push(IdVec *a, uint32_t x)
{
    if (a->n == a->cap) {
        CHECK(a->cap < UINT32_MAX / 2);
        a->cap = a->cap ? 2 * a->cap : 4;
        XRENEW(a->v, a->cap);
    }
    a->v[a->n++] = x;
}

typedef struct HeapEnt {
    int64_t count;
    uint32_t pair;
} HeapEnt;

typedef struct Learner {
    Bpe *b;
    /* words: symbols sym[off[w] .. off[w] + len[w]) */
    uint32_t *sym;
    size_t *off;
    uint32_t *len;
    uint64_t *cnt;
    uint32_t *wstamp;
    size_t nw;
    /* pairs */
    PairTab pid;  /* (A, B) -> pair id */
    uint32_t *pa, *pb, *pstamp;
    int64_t *pcnt;
    IdVec *pwords; /* the words holding the pair (possibly stale, possibly repeated) */
    size_t np, pcap;
    uint32_t *touched;
    size_t ntouched, tcap;
    HeapEnt *heap;
    size_t hn, hcap;
} Learner;

/* The better of two heap entries: the higher count, then the greater pair. */
static bool ent_better(const Learner *l, HeapEnt x, HeapEnt y)
{
    if (x.count != y.count)
        return x.count > y.count;
    const StrTab *t = &l->b->sym;
    for (int k = 0; k < 2; k++) {
        uint32_t a = k ? l->pb[x.pair] : l->pa[x.pair], b = k ? l->pb[y.pair] : l->pa[y.pair];
        if (a == b)
            continue;
        size_t la = t->len[a], lb = t->len[b];
        int c = memcmp(strtab_str(t, a), strtab_str(t, b), la < lb ? la : lb);
        if (c)
            return c > 0;
        return la > lb;
    }
    return false;
}

static void heap_push(Learner *l, HeapEnt x)
{
    if (l->hn == l->hcap) {
        l->hcap = l->hcap ? 2 * l->hcap : 1024;
        XRENEW(l->heap, l->hcap);
    }
    size_t i = l->hn++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ent_better(l, x, l->heap[p]))
            break;
        l->heap[i] = l->heap[p];
        i = p;
    }
    l->heap[i] = x;
}

static void heap_pop(Learner *l)
{
    HeapEnt x = l->heap[--l->hn];
    size_t i = 0, n = l->hn;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ent_better(l, l->heap[c + 1], l->heap[c]))
            c++;
        if (!ent_better(l, l->heap[c], x))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    if (n)
        l->heap[i] = x;
}

static uint32_t pair_id(Learner *l, uint32_t a, uint32_t b)
{
    uint32_t id = pairs_put(&l->pid, pair_key(a, b), (uint32_t)l->np);
    if (id == l->np) {
        if (l->np == l->pcap) {
            l->pcap = l->pcap ? 2 * l->pcap : 4096;
            XRENEW(l->pa, l->pcap);
            XRENEW(l->pb, l->pcap);
            XRENEW(l->pstamp, l->pcap);
            XRENEW(l->pcnt, l->pcap);
            XRENEW(l->pwords, l->pcap);
        }
        CHECK(l->np < NONE - 1);
        l->pa[id] = a;
        l->pb[id] = b;
        l->pstamp[id] = 0;
        l->pcnt[id] = 0;
        l->pwords[id] = (IdVec){0};
        l->np++;
    }
    return id;
}

/* Adds d to the count of (a, b) and notes the pair as touched in round stamp. */
static uint32_t pair_add(Learner *l, uint32_t a, uint32_t b, int64_t d, uint32_t stamp)
{
    uint32_t p = pair_id(l, a, b);
    l->pcnt[p] += d;
    if (l->pstamp[p] != stamp) {
        l->pstamp[p] = stamp;
        if (l->ntouched == l->tcap) {
            l->tcap = l->tcap ? 2 * l->tcap : 1024;
            XRENEW(l->touched, l->tcap);
        }
        l->touched[l->ntouched++] = p;
    }
    return p;
}

static void learner_free(Learner *l)
{
    free(l->sym);
    free(l->off);
    free(l->len);
    free(l->cnt);
    free(l->wstamp);
    pairs_free(&l->pid);
    for (size_t p = 0; p < l->np; p++)
        free(l->pwords[p].v);
    free(l->pa);
    free(l->pb);
    free(l->pstamp);
    free(l->pcnt);
    free(l->pwords);
    free(l->touched);
    free(l->heap);
}

/* Merges every (a, b) of word w into ab, updating the pair counts. */
static void merge_word(Learner *l, size_t w, uint32_t a, uint32_t b, uint32_t ab, uint32_t stamp)
{
    uint32_t *s = l->sym + l->off[w];
    size_t n = l->len[w];
    int64_t f = (int64_t)l->cnt[w];
    bool found = false;
    for (size_t i = 0; i + 1 < n && !found; i++)
        found = s[i] == a && s[i + 1] == b;
    if (!found)
        return; /* a stale entry of the index */
    for (size_t i = 0; i + 1 < n; i++)
        pair_add(l, s[i], s[i + 1], -f, stamp);
    size_t k = 0;
    for (size_t i = 0; i < n; k++) {
        if (i + 1 < n && s[i] == a && s[i + 1] == b) {
            s[k] = ab;
            i += 2;
        } else {
            s[k] = s[i++];
        }
    }
    l->len[w] = (uint32_t)k;
    for (size_t i = 0; i + 1 < k; i++) {
        uint32_t p = pair_add(l, s[i], s[i + 1], f, stamp);
        /* pairs without the new symbol were in the word before: already indexed */
        if (s[i] == ab || s[i + 1] == ab)
            idvec_push(&l->pwords[p], (uint32_t)w);
    }
}

Bpe *bpe_learn(const VocabCounter *words, long merges, uint64_t min_freq, BpeLearnStats *st)
{
    CHECK(merges >= 0 && min_freq >= 1);
    Learner l = {0};
    l.b = bpe_new();
    l.nw = vocab_counter_types(words);
    CHECK(l.nw < NONE);
    size_t total = 0;
    for (size_t w = 0; w < l.nw; w++) {
        size_t len;
        uint64_t c;
        vocab_counter_at(words, w, &len, &c);
        total += len;
    }
    l.sym = XNEW(uint32_t, total ? total : 1);
    uint32_t *starts = XNEW(uint32_t, total ? total : 1);
    l.off = XNEW(size_t, l.nw ? l.nw : 1);
    l.len = XNEW(uint32_t, l.nw ? l.nw : 1);
    l.cnt = XNEW(uint64_t, l.nw ? l.nw : 1);
    l.wstamp = XCNEW(uint32_t, l.nw ? l.nw : 1);
    pairs_init(&l.pid);
    size_t at = 0;
    for (size_t w = 0; w < l.nw; w++) {
        size_t len;
        const char *s = vocab_counter_at(words, w, &len, &l.cnt[w]);
        CHECK(len < UINT32_MAX);
        l.off[w] = at;
        l.len[w] = (uint32_t)word_symbols(&l.b->sym, NULL, s, len, l.sym + at, starts);
        CHECK(l.cnt[w] <= INT64_MAX / 4);
        for (size_t i = 0; i + 1 < l.len[w]; i++) {
            uint32_t p = pair_add(&l, l.sym[at + i], l.sym[at + i + 1], (int64_t)l.cnt[w], 1);
            IdVec *pw = &l.pwords[p];
            if (pw->n == 0 || pw->v[pw->n - 1] != w)
                idvec_push(pw, (uint32_t)w);
        }
        at += l.len[w];
    }
    free(starts);
    for (size_t p = 0; p < l.np; p++)
        if (l.pcnt[p] > 0)
            heap_push(&l, (HeapEnt){l.pcnt[p], (uint32_t)p});

    BpeLearnStats s = {.stop = BPE_STOP_MERGES};
    for (long m = 0; m < merges; m++) {
        while (l.hn && l.heap[0].count != l.pcnt[l.heap[0].pair])
            heap_pop(&l); /* stale: the pair's count changed since */
        if (!l.hn) {
            s.stop = BPE_STOP_NO_PAIRS;
            break;
        }
        HeapEnt top = l.heap[0];
        if ((uint64_t)top.count < min_freq) {
            s.stop = BPE_STOP_MIN_FREQ;
            break;
        }
        heap_pop(&l);
        uint32_t a = l.pa[top.pair], b = l.pb[top.pair];
        uint32_t ab = add_merge(l.b, a, b);
        s.merges++;
        s.last_count = (uint64_t)top.count;
        uint32_t stamp = (uint32_t)m + 2;
        IdVec ws = l.pwords[top.pair];
        l.pwords[top.pair] = (IdVec){0};
        l.ntouched = 0;
        for (uint32_t k = 0; k < ws.n; k++) {
            uint32_t w = ws.v[k];
            if (l.wstamp[w] == stamp)
                continue;
            l.wstamp[w] = stamp;
            merge_word(&l, w, a, b, ab, stamp);
        }
        free(ws.v);
        for (size_t k = 0; k < l.ntouched; k++) {
            uint32_t p = l.touched[k];
            if (l.pcnt[p] > 0)
                heap_push(&l, (HeapEnt){l.pcnt[p], p});
        }
    }
    Bpe *out = l.b;
    learner_free(&l);
    if (st)
        *st = s;
    return out;
}

/* ---- the codes file ---- */

int bpe_parse(Bpe **out, const char *name, const char *data, size_t len, Err *e)
{
    *out = NULL;
    Bpe *b = bpe_new();
    Lines r;
    lines_init(&r, name, data, len);
    const char *p;
    size_t n;
    int rc = lines_next(&r, &p, &n, e);
    if (rc == 0) { /* an empty file: its first line is empty */
        p = "";
        n = 0;
        rc = 1;
    }
    if (rc > 0 && (n != strlen(BPE_VERSION_LINE) || memcmp(p, BPE_VERSION_LINE, n) != 0))
        rc = err_set(e, "%s:1: not a BPE codes file (the first line must be '%s')", name,
                     BPE_VERSION_LINE);
    while (rc > 0 && (rc = lines_next(&r, &p, &n, e)) > 0) {
        const char *sp = memchr(p, ' ', n);
        size_t la = sp ? (size_t)(sp - p) : 0, lb = sp ? n - la - 1 : 0;
        if (!sp || la == 0 || lb == 0 || memchr(sp + 1, ' ', lb) || utf8_has_space(p, la) ||
            utf8_has_space(sp + 1, lb))
            rc = err_set(e, "%s:%zu: not a merge (expected two symbols separated by one space)",
                         name, r.lineno);
        else
            add_merge(b, strtab_intern(&b->sym, p, la), strtab_intern(&b->sym, sp + 1, lb));
    }
    if (rc != 0) {
        bpe_free(b);
        return -1;
    }
    *out = b;
    return 0;
}

int bpe_load(Bpe **out, const char *path, Err *e)
{
    char *data;
    size_t len;
    *out = NULL;
    if (file_read_lines(path, &data, &len, e) != 0)
        return -1;
    int rc = bpe_parse(out, path, data, len, e);
    free(data);
    return rc;
}

void bpe_format(const Bpe *b, Buf *out)
{
    buf_puts(out, BPE_VERSION_LINE "\n");
    for (size_t i = 0; i < b->n; i++) {
        buf_append(out, strtab_str(&b->sym, b->ma[i]), b->sym.len[b->ma[i]]);
        buf_putc(out, ' ');
        buf_append(out, strtab_str(&b->sym, b->mb[i]), b->sym.len[b->mb[i]]);
        buf_putc(out, '\n');
    }
}

int bpe_save(const Bpe *b, const char *path, Err *e)
{
    Buf t = {0};
    bpe_format(b, &t);
    int rc = atomic_write(path, t.data, t.len, e);
    buf_free(&t);
    return rc;
}

/* ---- segmentation ---- */

size_t bpe_segment_word(const Bpe *b, const char *w, size_t len, Buf *out)
{
    CHECK(len >= 1);
    uint32_t ids_s[64], starts_s[64];
    uint32_t *ids = len <= 64 ? ids_s : XNEW(uint32_t, len);
    uint32_t *st = len <= 64 ? starts_s : XNEW(uint32_t, len);
    size_t n = word_symbols(NULL, &b->sym, w, len, ids, st);
    while (n > 1) {
        uint32_t best = NONE;
        for (size_t i = 0; i + 1 < n; i++)
            if (ids[i] != NONE && ids[i + 1] != NONE) {
                uint32_t r = pairs_get(&b->rank, pair_key(ids[i], ids[i + 1]));
                if (r < best)
                    best = r;
            }
        if (best == NONE)
            break;
        uint32_t x = b->ma[best], y = b->mb[best], xy = b->mab[best];
        size_t k = 0;
        for (size_t i = 0; i < n; k++) {
            st[k] = st[i];
            if (i + 1 < n && ids[i] == x && ids[i + 1] == y) {
                ids[k] = xy;
                i += 2;
            } else {
                ids[k] = ids[i++];
            }
        }
        n = k;
    }
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 < n ? st[i + 1] : len;
        buf_append(out, w + st[i], end - st[i]);
        if (i + 1 < n)
            buf_puts(out, "@@ ");
    }
    if (ids != ids_s) {
        free(ids);
        free(st);
    }
    return n;
}

size_t bpe_segment_line(const Bpe *b, const char *toks, size_t len, Buf *out)
{
    size_t units = 0, i = 0, start, n;
    while ((n = lines_word(toks, len, &i, &start)) > 0) {
        if (units)
            buf_putc(out, ' ');
        units += bpe_segment_word(b, toks + start, n, out);
    }
    return units;
}

long bpe_tok_line(const Bpe *b, const char *s, size_t len, const TokOpts *o, Buf *out, Err *e)
{
    if (!b)
        return tok_line(s, len, o, out, e);
    Buf t = {0};
    long n = tok_line(s, len, o, &t, e);
    if (n > 0)
        n = (long)bpe_segment_line(b, t.data, t.len, out);
    buf_free(&t);
    return n;
}

void bpe_join(const char *units, size_t len, Buf *out)
{
    bool glue = true; /* nothing before the first unit */
    size_t i = 0, start, n;
    while ((n = lines_word(units, len, &i, &start)) > 0) {
        if (!glue)
            buf_putc(out, ' ');
        glue = n >= 2 && units[start + n - 1] == '@' && units[start + n - 2] == '@';
        buf_append(out, units + start, glue ? n - 2 : n);
    }
}

bool bpe_glued(const char *unit)
{
    size_t n = strlen(unit);
    return n > 2 && unit[n - 1] == '@' && unit[n - 2] == '@';
}

bool *bpe_glue_table(const Vocab *v)
{
    size_t V = vocab_size(v);
    bool *g = XCNEW(bool, V ? V : 1);
    for (size_t i = 0; i < V; i++)
        g[i] = bpe_glued(vocab_token(v, (int32_t)i));
    return g;
}

/* ---- BPE-dropout ---- */

struct BpeIds {
    const Bpe *b;
    const Vocab *v;
    int32_t *id;   /* (symbols) the unit's id in the vocabulary, -1 when absent */
    uint32_t *from; /* (symbols) the first merge that makes the symbol, NONE for a code point */
};

BpeIds *bpe_ids_new(const Bpe *b, const Vocab *v)
{
    BpeIds *m = XCNEW(BpeIds, 1);
    size_t n = strtab_size(&b->sym), eow = sizeof BPE_EOW - 1;
    m->b = b;
    m->v = v;
    m->id = XNEW(int32_t, n ? n : 1);
    m->from = XNEW(uint32_t, n ? n : 1);
    Buf u = {0};
    for (size_t s = 0; s < n; s++) {
        const char *str = strtab_str(&b->sym, (uint32_t)s);
        size_t len = strtab_len(&b->sym, (uint32_t)s);
        buf_clear(&u);
        if (len >= eow && memcmp(str + len - eow, BPE_EOW, eow) == 0) {
            buf_append(&u, str, len - eow);
        } else {
            buf_append(&u, str, len);
            buf_puts(&u, "@@");
        }
        int32_t id = u.len ? vocab_id(v, u.data, u.len) : VOCAB_UNK;
        m->id[s] = id == VOCAB_UNK ? -1 : id;
        m->from[s] = NONE;
    }
    buf_free(&u);
    for (size_t i = b->n; i-- > 0;) /* the first merge of a symbol wins */
        m->from[b->mab[i]] = (uint32_t)i;
    return m;
}

void bpe_ids_free(BpeIds *m)
{
    if (!m)
        return;
    free(m->id);
    free(m->from);
    free(m);
}

/* Appends the ids of symbol s (NONE: a code point the codes lack) to out at *k: its
   own, or its parts', or <unk>. */
static void ids_of_symbol(const BpeIds *m, uint32_t s, int32_t *out, size_t *k)
{
    if (s != NONE && m->id[s] >= 0) {
        out[(*k)++] = m->id[s];
    } else if (s != NONE && m->from[s] != NONE) {
        ids_of_symbol(m, m->b->ma[m->from[s]], out, k);
        ids_of_symbol(m, m->b->mb[m->from[s]], out, k);
    } else {
        out[(*k)++] = VOCAB_UNK;
    }
}

size_t bpe_ids_word(const BpeIds *m, const char *w, size_t len, double p, Rng *r, int32_t *out)
{
    CHECK(len >= 1);
    const Bpe *b = m->b;
    uint32_t ids_s[64], starts_s[64], rank_s[64];
    uint32_t *ids = len <= 64 ? ids_s : XNEW(uint32_t, len);
    uint32_t *st = len <= 64 ? starts_s : XNEW(uint32_t, len);
    uint32_t *rank = len <= 64 ? rank_s : XNEW(uint32_t, len); /* the kept merge at i, i + 1 */
    size_t n = word_symbols(NULL, &b->sym, w, len, ids, st);
    while (n > 1) {
        uint32_t best = NONE;
        for (size_t i = 0; i + 1 < n; i++) {
            rank[i] = NONE;
            if (ids[i] == NONE || ids[i + 1] == NONE)
                continue;
            uint32_t rk = pairs_get(&b->rank, pair_key(ids[i], ids[i + 1]));
            if (rk == NONE || (p > 0 && rng_uniform(r) < p))
                continue;
            rank[i] = rk;
            if (rk < best)
                best = rk;
        }
        if (best == NONE)
            break;
        size_t k = 0;
        for (size_t i = 0; i < n; k++) {
            st[k] = st[i];
            if (i + 1 < n && rank[i] == best) {
                ids[k] = b->mab[best];
                i += 2;
            } else {
                ids[k] = ids[i++];
            }
        }
        n = k;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] != NONE) {
            ids_of_symbol(m, ids[i], out, &k);
            continue;
        }
        /* a code point no merge names: the vocabulary may still hold it ("I", ".") */
        char u[8];
        size_t end = i + 1 < n ? st[i + 1] : len, ul = end - st[i];
        memcpy(u, w + st[i], ul);
        if (i + 1 < n) {
            memcpy(u + ul, "@@", 2);
            ul += 2;
        }
        out[k++] = vocab_id(m->v, u, ul);
    }
    if (ids != ids_s) {
        free(ids);
        free(st);
        free(rank);
    }
    if (p > 0) /* a piece the vocabulary lacks ("q@@" where "q" is always merged): the word whole */
        for (size_t q = 0; q < k; q++)
            if (out[q] == VOCAB_UNK)
                return bpe_ids_word(m, w, len, 0, NULL, out);
    return k;
}
