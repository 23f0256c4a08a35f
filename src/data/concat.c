#include "data/concat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "data/ids.h"

/* rn renamed pairs (data/names.h) after the *got joined ones of c; *got counts them
   too. */
static int rename_pairs(Concat *c, const PairSet *base, const ConcatOpts *o, int rn, uint64_t seed,
                        long epoch, int *got, Err *e)
{
    const NameCopy *nc = o->names;
    base = o->names_from ? o->names_from : base;
    Rng r;
    rng_seed(&r, seed ^ rng_mix(0x72656e616d65ULL + (uint64_t)epoch));
    IdsView *ids = pair_ids(base);
    size_t used = 0, room = (size_t)o->max_s + (size_t)o->max_t;
    for (int k = 0; k < rn; k++) {
        int cand = (int)rng_below(&r, (uint64_t)nc->ncand), name = (int)rng_below(&r, (uint64_t)nc->nnames);
        if (ids && (k & 63) == 63)
            ids_release(ids);
        if (pair_check(base, nc->cand[2 * cand], e) != 0)
            return -1;
        if (used + room > c->mcap) {
            c->mcap = 2 * (used + room);
            c->mat = xrealloc_array(c->mat, c->mcap, sizeof *c->mat);
        }
        int s, t;
        if (used + room > (size_t)INT32_MAX ||
            names_rename(nc, base, cand, name, o->max_s, o->max_t, c->mat + used, &s, &t) != 0)
            continue;
        int *j = c->join + 4 * (size_t)(*got)++;
        j[0] = -1;
        j[1] = (int)used;
        j[2] = s;
        j[3] = t;
        used += (size_t)s + (size_t)t;
    }
    if (ids)
        ids_release(ids);
    return 0;
}

/* How many joined (*m) and renamed (*rn) examples an epoch of base draws. */
static void epoch_sizes(const PairSet *base, const ConcatOpts *o, int *m, int *rn)
{
    CHECK(o->share >= 0 && o->share <= 0.9 && o->rename >= 0 && o->rename <= 1);
    CHECK(o->rename == 0 || o->names);
    int n = base->n;
    double want = n > 0 ? floor((double)n * o->share / (1 - o->share) + 0.5) : 0;
    *m = want < (double)(INT32_MAX - n) ? (int)want : INT32_MAX - n;
    int ncand = o->rename > 0 ? o->names->ncand : 0;
    double rw = ncand > 0 && o->names->nnames > 0 ? floor((double)ncand * o->rename + 0.5) : 0;
    *rn = rw < (double)(INT32_MAX - n - *m) ? (int)rw : INT32_MAX - n - *m;
}

long concat_most(const PairSet *base, const ConcatOpts *o)
{
    int m, rn;
    epoch_sizes(base, o, &m, &rn);
    return (long)base->n + m + rn;
}

int concat_epoch(Concat *c, const PairSet *base, const ConcatOpts *o, uint64_t seed, long epoch, Err *e)
{
    int n = base->n, m, rn;
    epoch_sizes(base, o, &m, &rn);
    if (m == 0 && rn == 0) {
        c->set = *base;
        return 0;
    }
    if ((size_t)(m + rn) * 4 > c->cap) {
        c->cap = (size_t)(m + rn) * 4;
        c->join = xrealloc_array(c->join, c->cap, sizeof *c->join);
    }
    Rng r;
    rng_seed(&r, seed ^ rng_mix(0x636f6e636174ULL + (uint64_t)epoch));
    IdsView *ids = pair_ids(base);
    for (int k = 0; k < m; k++) {
        int *j = c->join + 4 * (size_t)k, parts = 2 + (int)rng_below(&r, 2), s = 0, t = 0;
        j[0] = 0;
        for (int q = 0; q < parts; q++) {
            int i = (int)rng_below(&r, (uint64_t)n);
            if (ids && (k & 63) == 63 && q == 0) /* as the plan does: see batch.c */
                ids_release(ids);
            if (pair_check(base, i, e) != 0)
                return -1;
            int ps = pair_src_len(base, i), pt = pair_tgt_len(base, i);
            if (j[0] > 0 && (s + ps > o->max_s || t + pt > o->max_t))
                continue;
            j[++j[0]] = i;
            s += ps;
            t += pt;
        }
    }
    if (ids)
        ids_release(ids);
    int got = m;
    if (rn > 0 && rename_pairs(c, base, o, rn, seed, epoch, &got, e) != 0)
        return -1;
    c->set = (PairSet){.n = n + got, .base = base, .join = c->join, .mat = c->mat};
    return 0;
}

void concat_free(Concat *c)
{
    free(c->join);
    free(c->mat);
    memset(c, 0, sizeof *c);
}
