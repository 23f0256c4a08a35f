#include "data/names.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/rng.h"
#include "data/ids.h"

static bool is_name_unit(const char *t)
{
    size_t n = strlen(t);
    if (n < 2 || t[0] < 'A' || t[0] > 'Z' || bpe_glued(t))
        return false;
    bool lower = false;
    for (size_t k = 0; k < n; k++) {
        bool up = t[k] >= 'A' && t[k] <= 'Z', lo = t[k] >= 'a' && t[k] <= 'z';
        if (!up && !lo)
            return false;
        lower |= lo;
    }
    return lower;
}

/* Whether x[k] is a whole word (it ends one, and x[k-1] does not glue to it). */
static bool whole(const int *x, int k, const bool *glue)
{
    return !glue[x[k]] && (k == 0 || !glue[x[k - 1]]);
}

/* The first position of a whole-word id in x[0..n), or -1. */
static int find_word(const int *x, int n, int id, const bool *glue)
{
    for (int k = 0; k < n; k++)
        if (x[k] == id && whole(x, k, glue))
            return k;
    return -1;
}

/* An invented name into b: 2 to 4 syllables (onset, vowel, sometimes a coda). */
static void invent(Rng *r, Buf *b)
{
    static const char *const onset[] = {"b",  "c",  "d",  "f",  "g",  "h",  "j",  "k",  "l",  "m",
                                        "n",  "p",  "r",  "s",  "t",  "v",  "w",  "z",  "br", "ch",
                                        "dr", "gr", "kr", "sh", "st", "tr", "th", "zh", "sl", "pl"};
    static const char *const vowel[] = {"a", "e", "i", "o", "u", "y", "ai", "ei", "ou", "ia", "io", "ae"};
    static const char *const coda[] = {"n", "r", "l", "s", "k", "m", "t", "sz", "ck", "nd"};
    int syl = 2 + (int)rng_below(r, 3);
    size_t start = b->len;
    for (int k = 0; k < syl; k++) {
        buf_puts(b, onset[rng_below(r, sizeof onset / sizeof *onset)]);
        buf_puts(b, vowel[rng_below(r, sizeof vowel / sizeof *vowel)]);
        if (rng_below(r, 3) == 0)
            buf_puts(b, coda[rng_below(r, sizeof coda / sizeof *coda)]);
    }
    b->data[start] = (char)(b->data[start] - 'a' + 'A');
}

/* name (len bytes) as ids of a side's vocabulary to ids (room for NAMES_MAX_UNITS): the
   count, or -1 when it does not segment into 1 to NAMES_MAX_UNITS known units. */
static int encode_name(const char *name, size_t len, const Vocab *v, const Bpe *bpe, const TokOpts *o,
                       Buf *scratch, int *ids)
{
    Err e;
    buf_clear(scratch);
    long nt = bpe_tok_line(bpe, name, len, o, scratch, &e);
    if (nt < 1 || nt > NAMES_MAX_UNITS)
        return -1;
    size_t unk = 0;
    size_t got = vocab_encode(v, scratch->data, scratch->len, (int32_t *)ids, NAMES_MAX_UNITS, &unk);
    return got == (size_t)nt && unk == 0 ? (int)nt : -1;
}

int names_init(NameCopy *nc, const PairSet *base, const Vocab *const v[2], const Bpe *const bpe[2],
               const TokOpts opts[2], uint64_t seed, Err *e)
{
    memset(nc, 0, sizeof *nc);
    size_t SV = vocab_size(v[0]);
    nc->tgt_of = XNEW(int, SV ? SV : 1);
    for (size_t i = 0; i < SV; i++) {
        const char *t = vocab_token(v[0], (int32_t)i);
        int32_t j = is_name_unit(t) ? vocab_id(v[1], t, strlen(t)) : -1;
        nc->tgt_of[i] = j >= 0 && j != VOCAB_UNK ? j : -1;
    }
    nc->sglue = bpe_glue_table(v[0]);
    nc->tglue = bpe_glue_table(v[1]);

    /* The candidates. */
    size_t cap = 0;
    IdsView *view = pair_ids(base);
    for (int i = 0; i < base->n; i++) {
        if (view && (i & 1023) == 1023)
            ids_release(view);
        if (pair_check(base, i, e) != 0) {
            names_free(nc);
            return -1;
        }
        const int *s = pair_src(base, i), *t = pair_tgt(base, i);
        int ns = pair_src_len(base, i), nt = pair_tgt_len(base, i);
        for (int k = 0; k < ns; k++) {
            int tw = nc->tgt_of[s[k]];
            if (tw < 0 || !whole(s, k, nc->sglue) || find_word(t, nt, tw, nc->tglue) < 0)
                continue;
            if ((size_t)nc->ncand * 2 + 2 > cap) {
                cap = cap ? 2 * cap : 1024;
                nc->cand = xrealloc_array(nc->cand, cap, sizeof *nc->cand);
            }
            nc->cand[2 * nc->ncand] = i;
            nc->cand[2 * nc->ncand + 1] = s[k];
            nc->ncand++;
            break;
        }
    }
    if (view)
        ids_release(view);

    /* The invented names. */
    Rng r;
    rng_seed(&r, seed ^ rng_mix(0x6e616d6573ULL));
    nc->off = XNEW(int, 2 * NAMES_INVENTED + 1);
    nc->ids = XNEW(int, 2 * NAMES_MAX_UNITS * NAMES_INVENTED);
    Buf name = {0}, scratch = {0};
    int used = 0;
    for (int k = 0; k < NAMES_INVENTED; k++) {
        buf_clear(&name);
        invent(&r, &name);
        int a = encode_name(name.data, name.len, v[0], bpe[0], &opts[0], &scratch, nc->ids + used);
        if (a < 0)
            continue;
        int b = encode_name(name.data, name.len, v[1], bpe[1], &opts[1], &scratch, nc->ids + used + a);
        if (b < 0)
            continue;
        nc->off[2 * nc->nnames] = used;
        nc->off[2 * nc->nnames + 1] = used + a;
        used += a + b;
        nc->nnames++;
    }
    nc->off[2 * nc->nnames] = used;
    buf_free(&name);
    buf_free(&scratch);
    return 0;
}

void names_free(NameCopy *nc)
{
    free(nc->cand);
    free(nc->tgt_of);
    free(nc->sglue);
    free(nc->tglue);
    free(nc->off);
    free(nc->ids);
    memset(nc, 0, sizeof *nc);
}

/* x[0..n) with every whole-word id replaced by by[0..nb) into out: the length, or -1
   when longer than max. */
static int replace(const int *x, int n, int id, const bool *glue, const int *by, int nb, int max, int *out)
{
    int len = 0;
    for (int k = 0; k < n; k++) {
        bool swap = x[k] == id && whole(x, k, glue);
        int add = swap ? nb : 1;
        if (len + add > max)
            return -1;
        if (swap)
            memcpy(out + len, by, (size_t)nb * sizeof *out);
        else
            out[len] = x[k];
        len += add;
    }
    return len;
}

int names_rename(const NameCopy *nc, const PairSet *base, int c, int k, int max_s, int max_t, int *out,
                 int *s, int *t)
{
    CHECK(c >= 0 && c < nc->ncand && k >= 0 && k < nc->nnames);
    int i = nc->cand[2 * c], id = nc->cand[2 * c + 1];
    const int *n = nc->ids + nc->off[2 * k];
    int ns = nc->off[2 * k + 1] - nc->off[2 * k], nt = nc->off[2 * k + 2] - nc->off[2 * k + 1];
    *s = replace(pair_src(base, i), pair_src_len(base, i), id, nc->sglue, n, ns, max_s, out);
    if (*s < 0)
        return -1;
    *t = replace(pair_tgt(base, i), pair_tgt_len(base, i), nc->tgt_of[id], nc->tglue, n + ns, nt, max_t,
                 out + *s);
    return *t < 0 ? -1 : 0;
}
