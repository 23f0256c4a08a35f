#include "data/concat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "data/ids.h"

int concat_epoch(Concat *c, const PairSet *base, const ConcatOpts *o, uint64_t seed, long epoch, Err *e)
{
    CHECK(o->share >= 0 && o->share <= 0.9);
    int n = base->n;
    double want = n > 0 ? floor((double)n * o->share / (1 - o->share) + 0.5) : 0;
    int m = want < (double)(INT32_MAX - n) ? (int)want : INT32_MAX - n;
    if (m == 0) {
        c->set = *base;
        return 0;
    }
    if ((size_t)m * 4 > c->cap) {
        c->cap = (size_t)m * 4;
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
    c->set = (PairSet){.n = n + m, .base = base, .join = c->join};
    return 0;
}

void concat_free(Concat *c)
{
    free(c->join);
    memset(c, 0, sizeof *c);
}
