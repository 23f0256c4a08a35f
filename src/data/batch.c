#include "data/batch.h"

#include <stdlib.h>
#include <string.h>

enum { TOK_PAD = 0, TOK_BOS = 2, TOK_EOS = 3, DEFAULT_CHUNK = 100 };

typedef struct Key {
    int s, t, i;
} Key;

static int key_cmp(const void *pa, const void *pb)
{
    const Key *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int tgt_len_of(const PairSet *d, int i) { return d->tgt ? d->tgt_len[i] : 0; }

void batch_plan_free(BatchPlan *p)
{
    free(p->start);
    free(p->idx);
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

int batch_plan(BatchPlan *p, const PairSet *d, const BatchOpts *o, Rng *rng, Err *e)
{
    CHECK(o->batch > 0 || o->tokens > 0);
    CHECK(d->n >= 0);
    for (int i = 0; i < d->n; i++)
        if (d->src_len[i] < 1)
            return err_set(e, "pair %d has an empty source", i + 1);
    const int n = d->n;
    const int chunk = o->chunk > 0 ? o->chunk : DEFAULT_CHUNK;

    int *order = xmalloc_array((size_t)(n), sizeof *order);
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (rng)
        rng_shuffle(rng, order, (size_t)n, sizeof *order);

    Key *keys = xmalloc_array((size_t)(n), sizeof *keys);
    /* Batch k of the cut is keys[bstart[k] .. bstart[k+1]); at most n batches. */
    int *bstart = xmalloc_array((size_t)(n + 1), sizeof *bstart);
    int nb = 0;
    int pos = 0;
    while (pos < n) {
        /* Chunk [pos, end): chunk × batch pairs, or chunk × tokens target tokens. */
        int end = pos;
        if (o->batch > 0) {
            long lim = (long)chunk * o->batch;
            end = (long)(n - pos) < lim ? n : pos + (int)lim;
        } else {
            long budget = (long)chunk * o->tokens, sum = 0;
            while (end < n && sum < budget)
                sum += tgt_len_of(d, order[end++]) + 1;
        }
        for (int k = pos; k < end; k++) {
            int i = order[k];
            keys[k] = (Key){d->src_len[i], tgt_len_of(d, i), i};
        }
        qsort(keys + pos, (size_t)(end - pos), sizeof *keys, key_cmp);
        int count = 0, maxt = 0;
        for (int k = pos; k < end; k++) {
            int t = keys[k].t;
            if (!fits(o, count, maxt, t)) {
                count = 0;
                maxt = 0;
            }
            if (count == 0)
                bstart[nb++] = k;
            count++;
            if (t + 1 > maxt)
                maxt = t + 1;
        }
        pos = end;
    }
    bstart[nb] = n;

    int *border = xmalloc_array((size_t)(nb), sizeof *border);
    for (int k = 0; k < nb; k++)
        border[k] = k;
    if (rng)
        rng_shuffle(rng, border, (size_t)nb, sizeof *border);

    p->start = xrealloc_array(p->start, (size_t)(nb + 1), sizeof *p->start);
    p->idx = xrealloc_array(p->idx, (size_t)(n), sizeof *p->idx);
    p->nbatch = nb;
    int w = 0;
    for (int k = 0; k < nb; k++) {
        p->start[k] = w;
        for (int j = bstart[border[k]]; j < bstart[border[k] + 1]; j++)
            p->idx[w++] = keys[j].i;
    }
    p->start[nb] = w;
    CHECK(w == n);
    free(border);
    free(bstart);
    free(keys);
    free(order);
    return 0;
}

void batch_limits(const PairSet *d, const BatchOpts *o, int *max_b, int *max_s, int *max_t)
{
    int ms = 1, mt = 1, min_t = 0;
    for (int i = 0; i < d->n; i++) {
        if (d->src_len[i] > ms)
            ms = d->src_len[i];
        int t = tgt_len_of(d, i) + 1;
        if (t > mt)
            mt = t;
        if (i == 0 || t < min_t)
            min_t = t;
    }
    long mb = d->n > 0 ? d->n : 1;
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

void batch_fill(Batch *b, BatchBuf *bb, const PairSet *d, const int *idx, int n)
{
    CHECK(n >= 1 && n <= bb->max_b);
    int *rows = bb->rows;
    /* Insertion sort by source length, descending; stable. */
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        CHECK(i >= 0 && i < d->n);
        int j = k;
        while (j > 0 && d->src_len[rows[j - 1]] < d->src_len[i]) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = i;
    }
    const int S = d->src_len[rows[0]];
    int T = 0;
    if (d->tgt)
        for (int r = 0; r < n; r++)
            if (d->tgt_len[rows[r]] + 1 > T)
                T = d->tgt_len[rows[r]] + 1;
    CHECK(S >= 1 && S <= bb->max_s && T <= bb->max_t);
    memset(bb->src, 0, (size_t)S * (size_t)n * sizeof(int));
    memset(bb->tgt_in, 0, (size_t)T * (size_t)n * sizeof(int));
    memset(bb->tgt_out, 0, (size_t)T * (size_t)n * sizeof(int));
    long ntok = 0;
    for (int r = 0; r < n; r++) {
        int i = rows[r];
        int sl = d->src_len[i];
        CHECK(sl >= 1);
        bb->src_len[r] = sl;
        for (int s = 0; s < sl; s++)
            bb->src[s * n + r] = d->src[i][s];
        if (!d->tgt)
            continue;
        int tl = d->tgt_len[i];
        bb->tgt_in[r] = TOK_BOS;
        for (int t = 0; t < tl; t++) {
            bb->tgt_in[(t + 1) * n + r] = d->tgt[i][t];
            bb->tgt_out[t * n + r] = d->tgt[i][t];
        }
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
