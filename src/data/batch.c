#include "data/batch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/ids.h"

enum { TOK_PAD = 0, TOK_UNK = 1, TOK_BOS = 2, TOK_EOS = 3, DEFAULT_CHUNK = 100 };

/* The parts of joined pair i: their count, then their indices in d->base. */
static const int *join_of(const PairSet *d, int i)
{
    return d->join + 4 * (size_t)(i - d->base->n);
}

static int is_joined(const PairSet *d, int i) { return d->base && i >= d->base->n; }

/* The length of side tgt (0 source, 1 target) of joined pair i: the sum of its parts'. */
static int joined_len(const PairSet *d, int i, int tgt)
{
    const int *j = join_of(d, i);
    if (j[0] < 0)
        return j[2 + tgt];
    int len = 0;
    for (int k = 1; k <= j[0]; k++)
        len += tgt ? pair_tgt_len(d->base, j[k]) : pair_src_len(d->base, j[k]);
    return len;
}

int pair_src_len(const PairSet *d, int i)
{
    if (d->base)
        return is_joined(d, i) ? joined_len(d, i, 0) : pair_src_len(d->base, i);
    if (d->ids)
        return (int)(ids_off(d->ids, 2 * (size_t)i + 1) - ids_off(d->ids, 2 * (size_t)i));
    return d->src_len[i];
}

int pair_tgt_len(const PairSet *d, int i)
{
    if (d->base)
        return is_joined(d, i) ? joined_len(d, i, 1) : pair_tgt_len(d->base, i);
    if (d->ids)
        return (int)(ids_off(d->ids, 2 * (size_t)i + 2) - ids_off(d->ids, 2 * (size_t)i + 1));
    return d->tgt ? d->tgt_len[i] : 0;
}

const int *pair_src(const PairSet *d, int i)
{
    if (d->base) {
        CHECK(!is_joined(d, i));
        return pair_src(d->base, i);
    }
    if (d->ids)
        return d->ids->ids + ids_off(d->ids, 2 * (size_t)i);
    return d->src[i];
}

const int *pair_tgt(const PairSet *d, int i)
{
    if (d->base) {
        CHECK(!is_joined(d, i));
        return pair_tgt(d->base, i);
    }
    if (d->ids)
        return d->ids->ids + ids_off(d->ids, 2 * (size_t)i + 1);
    return d->tgt ? d->tgt[i] : NULL;
}

int pair_check(const PairSet *d, int i, Err *e)
{
    if (d->base) {
        if (is_joined(d, i))
            return 0;
        d = d->base;
    }
    return d->ids ? ids_pair_check(d->ids, (size_t)i, e) : 0;
}

void pair_extent(const PairSet *d, int *max_s, int *max_t, int *min_t)
{
    if (d->ids) {
        *max_s = d->ids->max_src;
        *max_t = d->ids->max_tgt;
        *min_t = d->ids->min_tgt;
        return;
    }
    int ms = 0, mt = 0, lt = 0, from = 0;
    if (d->base) { /* the base's extent, then the joined pairs' */
        pair_extent(d->base, &ms, &mt, &lt);
        from = d->base->n;
    }
    for (int i = from; i < d->n; i++) {
        int s = pair_src_len(d, i), t = pair_tgt_len(d, i);
        ms = s > ms ? s : ms;
        mt = t > mt ? t : mt;
        lt = i == 0 || t < lt ? t : lt;
    }
    *max_s = ms;
    *max_t = mt;
    *min_t = lt;
}

static int key_cmp(const void *pa, const void *pb)
{
    const PlanKey *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

void batch_plan_free(BatchPlan *p)
{
    free(p->keys);
    free(p->start);
    free(p->order);
    free(p->rows);
    memset(p, 0, sizeof *p);
}

/* Whether pair i (target length t) may join a batch of `count` pairs whose longest
   target is maxt. */
static int fits(const BatchOpts *o, int count, int maxt, int t)
{
    if (count == 0)
        return 1;
    if (o->batch > 0 && count >= o->batch)
        return 0;
    if (o->tokens > 0) {
        long m = (long)(t + 1 > maxt ? t + 1 : maxt);
        if ((long)(count + 1) * m > o->tokens)
            return 0;
    }
    return 1;
}

static int plan_chunk(BatchPlan *p, Err *e);

int batch_plan_start(BatchPlan *p, const PairSet *d, const BatchOpts *o, Rng *rng, Err *e)
{
    CHECK(o->batch > 0 || o->tokens > 0);
    CHECK(d->n >= 0);
    p->d = d;
    p->o = *o;
    if (p->o.chunk <= 0)
        p->o.chunk = DEFAULT_CHUNK;
    p->shuffle = rng != NULL;
    for (int k = 0; k < 4; k++)
        p->key[k] = rng ? rng_u64(rng) : 0;
    p->seed = rng ? rng_u64(rng) : 0;
    p->half = 1;
    while (p->half < 31 && ((uint64_t)1 << (2 * p->half)) < (uint64_t)d->n)
        p->half++;
    p->taken = 0;
    p->chunks = 0;
    p->pairs_out = 0;
    p->nb = p->next = 0;
    return d->n > 0 ? plan_chunk(p, e) : 0;
}

/* Position j of the epoch's order: a Feistel network of 4 rounds over 2·half bits,
   walked until it lands below n (a bijection of 0..n-1; fewer than 4 rounds of walking
   on average, as 4^half < 4n). */
static int order_at(const BatchPlan *p, int j)
{
    if (!p->shuffle)
        return j;
    const uint64_t mask = ((uint64_t)1 << p->half) - 1;
    uint64_t x = (uint64_t)j;
    do {
        uint64_t l = x >> p->half, r = x & mask;
        for (int k = 0; k < 4; k++) {
            uint64_t f = rng_mix(r ^ p->key[k]) & mask;
            uint64_t t = l ^ f;
            l = r;
            r = t;
        }
        x = l << p->half | r;
    } while (x >= (uint64_t)p->d->n);
    return (int)x;
}

static void grow(BatchPlan *p, int need)
{
    if (need <= p->cap)
        return;
    int cap = p->cap ? p->cap : 256;
    while (cap < need)
        cap = cap > INT32_MAX / 2 ? need : 2 * cap;
    p->keys = xrealloc_array(p->keys, (size_t)cap, sizeof *p->keys);
    p->start = xrealloc_array(p->start, (size_t)cap + 1, sizeof *p->start);
    p->order = xrealloc_array(p->order, (size_t)cap, sizeof *p->order);
    p->rows = xrealloc_array(p->rows, (size_t)cap, sizeof *p->rows);
    p->cap = cap;
}

/* The key of pair i (the m-th of its chunk), checked; -1 (message naming the pair) when
   it cannot be batched. The pages of a mapped set go back to the page cache every 64
   pairs (ids_release): the kernel maps up to 16 cached neighbours of each page read, so
   the pages of a chunk's scattered pairs would otherwise stay resident. */
static int key_of(const PairSet *d, int i, int m, PlanKey *k, Err *e)
{
    if (pair_ids(d) && (m & 63) == 63)
        ids_release(pair_ids(d));
    if (pair_check(d, i, e) != 0)
        return -1;
    int s = pair_src_len(d, i);
    if (s < 1)
        return err_set(e, "pair %d has an empty source", i + 1);
    *k = (PlanKey){s, pair_tgt_len(d, i), i};
    return 0;
}

/* Plans the next chunk: pairs taken .. taken + m of the order. */
static int plan_chunk(BatchPlan *p, Err *e)
{
    const PairSet *d = p->d;
    const BatchOpts *o = &p->o;
    int m = 0;
    if (o->batch > 0) {
        long lim = (long)o->chunk * o->batch;
        m = (long)(d->n - p->taken) < lim ? d->n - p->taken : (int)lim;
        grow(p, m);
        for (int k = 0; k < m; k++)
            if (key_of(d, order_at(p, p->taken + k), k, &p->keys[k], e) != 0)
                return -1;
    } else {
        long budget = (long)o->chunk * o->tokens, sum = 0;
        while (p->taken + m < d->n && sum < budget) {
            grow(p, m + 1);
            if (key_of(d, order_at(p, p->taken + m), m, &p->keys[m], e) != 0)
                return -1;
            sum += p->keys[m++].t + 1;
        }
    }
    qsort(p->keys, (size_t)m, sizeof *p->keys, key_cmp);
    int nb = 0, count = 0, maxt = 0;
    for (int k = 0; k < m; k++) {
        int t = p->keys[k].t;
        if (!fits(o, count, maxt, t)) {
            count = 0;
            maxt = 0;
        }
        if (count == 0)
            p->start[nb++] = k;
        count++;
        if (t + 1 > maxt)
            maxt = t + 1;
    }
    p->start[nb] = m;
    for (int k = 0; k < nb; k++)
        p->order[k] = k;
    if (p->shuffle) {
        Rng r;
        rng_seed(&r, p->seed ^ rng_mix((uint64_t)p->chunks + 1));
        rng_shuffle(&r, p->order, (size_t)nb, sizeof *p->order);
    }
    p->taken += m;
    p->chunks++;
    p->nb = nb;
    p->next = 0;
    return 0;
}

int batch_plan_next(BatchPlan *p, const int **rows, int *n, Err *e)
{
    if (pair_ids(p->d)) /* the pages of the batch before: see key_of */
        ids_release(pair_ids(p->d));
    if (p->next == p->nb) {
        if (p->taken == p->d->n)
            return 0;
        if (plan_chunk(p, e) != 0)
            return -1;
    }
    int k = p->order[p->next++];
    int c = 0;
    for (int j = p->start[k]; j < p->start[k + 1]; j++)
        p->rows[c++] = p->keys[j].i;
    p->pairs_out += c;
    *rows = p->rows;
    *n = c;
    return 1;
}

double batch_plan_done(const BatchPlan *p)
{
    return p->d && p->d->n ? (double)p->pairs_out / (double)p->d->n : 0.0;
}

void batch_limits(const PairSet *d, const BatchOpts *o, int *max_b, int *max_s, int *max_t)
{
    batch_limits_n(d, d->n, o, max_b, max_s, max_t);
}

void batch_limits_n(const PairSet *d, long n, const BatchOpts *o, int *max_b, int *max_s, int *max_t)
{
    CHECK(n >= d->n && n <= INT32_MAX);
    int ms, mt, min_t;
    pair_extent(d, &ms, &mt, &min_t);
    ms = ms > 1 ? ms : 1;
    mt = mt + 1;
    min_t = d->n > 0 ? min_t + 1 : 0;
    long mb = n > 0 ? n : 1;
    if (o->batch > 0 && o->batch < mb)
        mb = o->batch;
    if (o->tokens > 0 && min_t > 0) {
        long by_tokens = o->tokens / min_t;
        if (by_tokens < 1)
            by_tokens = 1;
        if (by_tokens < mb)
            mb = by_tokens;
    }
    *max_b = (int)mb;
    *max_s = ms;
    *max_t = mt;
}

void batch_buf_init(BatchBuf *bb, int max_b, int max_s, int max_t)
{
    CHECK(max_b >= 1 && max_s >= 1 && max_t >= 1);
    bb->max_b = max_b;
    bb->max_s = max_s;
    bb->max_t = max_t;
    size_t B = (size_t)max_b, S = (size_t)max_s, T = (size_t)max_t;
    bb->mem = xmalloc((S * B + B + 2 * T * B + B) * sizeof(int));
    bb->src = bb->mem;
    bb->src_len = bb->src + S * B;
    bb->tgt_in = bb->src_len + B;
    bb->tgt_out = bb->tgt_in + T * B;
    bb->rows = bb->tgt_out + T * B;
}

void batch_buf_free(BatchBuf *bb)
{
    free(bb->mem);
    memset(bb, 0, sizeof *bb);
}

/* Writes side tgt (0 source, 1 target) of pair i to dst[0], dst[stride], ... */
static void put_side(const PairSet *d, int i, int tgt, int *dst, int n)
{
    if (is_joined(d, i)) {
        const int *j = join_of(d, i);
        if (j[0] < 0) { /* held at mat */
            const int *x = d->mat + j[1] + (tgt ? j[2] : 0);
            for (int t = 0; t < j[2 + tgt]; t++)
                dst[(size_t)t * (size_t)n] = x[t];
            return;
        }
        for (int k = 1; k <= j[0]; k++) {
            put_side(d->base, j[k], tgt, dst, n);
            dst += (size_t)(tgt ? pair_tgt_len(d->base, j[k]) : pair_src_len(d->base, j[k])) * (size_t)n;
        }
        return;
    }
    int len = tgt ? pair_tgt_len(d, i) : pair_src_len(d, i);
    const int *x = tgt ? pair_tgt(d, i) : pair_src(d, i);
    for (int t = 0; t < len; t++)
        dst[(size_t)t * (size_t)n] = x[t];
}

void batch_fill(Batch *b, BatchBuf *bb, const PairSet *d, const int *idx, int n)
{
    CHECK(n >= 1 && n <= bb->max_b);
    int *rows = bb->rows;
    /* Insertion sort by source length, descending; stable. */
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        CHECK(i >= 0 && i < d->n);
        int j = k;
        while (j > 0 && pair_src_len(d, rows[j - 1]) < pair_src_len(d, i)) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = i;
    }
    const int S = pair_src_len(d, rows[0]), has_tgt = pair_has_tgt(d);
    int T = 0;
    if (has_tgt)
        for (int r = 0; r < n; r++)
            if (pair_tgt_len(d, rows[r]) + 1 > T)
                T = pair_tgt_len(d, rows[r]) + 1;
    CHECK(S >= 1 && S <= bb->max_s && T <= bb->max_t);
    memset(bb->src, 0, (size_t)S * (size_t)n * sizeof(int));
    memset(bb->tgt_in, 0, (size_t)T * (size_t)n * sizeof(int));
    memset(bb->tgt_out, 0, (size_t)T * (size_t)n * sizeof(int));
    long ntok = 0;
    for (int r = 0; r < n; r++) {
        int i = rows[r];
        int sl = pair_src_len(d, i);
        CHECK(sl >= 1);
        bb->src_len[r] = sl;
        put_side(d, i, 0, bb->src + r, n);
        if (!has_tgt)
            continue;
        int tl = pair_tgt_len(d, i);
        bb->tgt_in[r] = TOK_BOS;
        put_side(d, i, 1, bb->tgt_in + n + r, n);
        put_side(d, i, 1, bb->tgt_out + r, n);
        bb->tgt_out[tl * n + r] = TOK_EOS;
        ntok += tl + 1;
    }
    b->B = n;
    b->S = S;
    b->T = T;
    b->src = bb->src;
    b->src_len = bb->src_len;
    b->tgt_in = bb->tgt_in;
    b->tgt_out = bb->tgt_out;
    b->ntok = ntok;
}

void batch_token_dropout(Batch *b, const int *rows, double p, uint64_t key)
{
    CHECK(p >= 0 && p < 1);
    const int B = b->B;
    for (int r = 0; r < B; r++) {
        Rng g;
        rng_seed(&g, key ^ rng_mix(0x746f6b656eULL + (uint64_t)rows[r]));
        for (int s = 0; s < b->src_len[r]; s++)
            if (rng_uniform(&g) < p)
                b->src[(size_t)s * (size_t)B + (size_t)r] = TOK_UNK;
        for (int t = 1; t < b->T; t++) {
            int *x = &b->tgt_in[(size_t)t * (size_t)B + (size_t)r];
            if (*x == TOK_PAD)
                break;
            if (rng_uniform(&g) < p)
                *x = TOK_UNK;
        }
    }
}
