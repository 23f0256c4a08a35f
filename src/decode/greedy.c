#include "decode/greedy.h"

#include <stdlib.h>
#include <string.h>

#include "nn/rnn_cell.h"
#include "text/vocab.h"

void hyps_free(Hyps *h)
{
    free(h->len);
    free(h->ids);
    free(h->mem);
    memset(h, 0, sizeof *h);
}

int greedy_limit(int src_len, int max_len)
{
    CHECK(src_len >= 0 && src_len <= (1 << 28) && max_len >= 0);
    return max_len > 0 ? max_len : 2 * src_len + 10;
}

size_t greedy_rows_bytes(const ModelConfig *c, int S, int T, int rows, size_t per_t,
                         size_t per_ts)
{
    return work_bytes(c, rows, S, T, false) + (size_t)rows * (size_t)T * (per_t + (size_t)S * per_ts);
}

int greedy_fit_batch(const ModelConfig *c, int S, int T, int want, int rows_per, size_t per_t,
                     size_t per_ts)
{
    int lo = 1, hi = want > 1 ? want : 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (greedy_rows_bytes(c, S, T, mid * rows_per, per_t, per_ts) <= GREEDY_WORK_BUDGET)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int greedy_max_src_len_rows(const ModelConfig *c, int max_len, int rows, size_t per_t,
                            size_t per_ts)
{
    /* the bytes grow with S; 1 << 20 keeps the arithmetic far from overflow */
    int lo = 0, hi = 1 << 20;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (greedy_rows_bytes(c, mid, greedy_limit(mid, max_len), rows, per_t, per_ts) <=
            GREEDY_WORK_BUDGET)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int greedy_max_src_len(const ModelConfig *c, int max_len)
{
    return greedy_max_src_len_rows(c, max_len, 1, 0, 0);
}

int greedy_argmax(const real *x, int n)
{
    int best = 0;
    for (int v = 1; v < n; v++)
        if (x[v] > x[best])
            best = v;
    return best;
}

typedef struct LenKey {
    int len, i;
} LenKey;

static int len_key_cmp(const void *pa, const void *pb)
{
    const LenKey *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

int greedy_plan(const ModelConfig *c, const PairSet *d, int max_len, int *order, int *nn,
                int *max_s, int *max_t, Err *e)
{
    const int n = d->n;
    LenKey *keys = xmalloc((size_t)(n ? n : 1) * sizeof *keys);
    int k = 0, ms = 0, mt = 0;
    for (int i = 0; i < n; i++) {
        int len = d->src_len[i];
        CHECK(len >= 0);
        for (int j = 0; j < len; j++) {
            int id = d->src[i][j];
            if (id < 0 || id >= c->src_vocab) {
                free(keys);
                return err_set(e, "sentence %d: token %d: id %d is not in the source "
                                  "vocabulary (size %d)", i + 1, j + 1, id, c->src_vocab);
            }
        }
        if (len == 0)
            continue;
        keys[k++] = (LenKey){len, i};
        if (len > ms)
            ms = len;
        int lim = greedy_limit(len, max_len);
        if (lim > mt)
            mt = lim;
    }
    qsort(keys, (size_t)k, sizeof *keys, len_key_cmp);
    for (int j = 0; j < k; j++)
        order[j] = keys[j].i;
    free(keys);
    *nn = k;
    *max_s = ms;
    *max_t = mt;
    return 0;
}

int greedy_decode(Model *m, const PairSet *d, int batch, int max_len, Hyps *out, Err *e)
{
    CHECK(batch >= 1 && max_len >= 0 && d->n >= 0);
    memset(out, 0, sizeof *out);
    const ModelConfig *c = &m->cfg;
    const int n = d->n, V = c->tgt_vocab;

    int *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
    int nn, max_s, max_t;
    if (greedy_plan(c, d, max_len, order, &nn, &max_s, &max_t, e) != 0) {
        free(order);
        return -1;
    }

    out->n = n;
    out->len = xcalloc((size_t)(n ? n : 1), sizeof *out->len);
    out->ids = xmalloc((size_t)(n ? n : 1) * sizeof *out->ids);
    size_t *off = xcalloc((size_t)(n ? n : 1), sizeof *off);
    size_t used = 0, cap = 0;
    int *mem = NULL;

    if (nn > 0) {
        int B = greedy_fit_batch(c, max_s, max_t, batch < nn ? batch : nn, 1, 0, 0);
        Work *w = work_new(c, B, max_s, max_t, false);
        BatchBuf bb;
        batch_buf_init(&bb, B, max_s, 1);
        const PairSet src = {n, d->src, d->src_len, NULL, NULL};
        int *prev = xmalloc((size_t)B * sizeof *prev);
        int *lim = xmalloc((size_t)B * sizeof *lim);
        int *rlen = xmalloc((size_t)B * sizeof *rlen);
        char *live = xmalloc((size_t)B);
        int *toks = xmalloc((size_t)B * (size_t)max_t * sizeof *toks); /* (B, max_t) */
        cap = (size_t)nn * 16;
        mem = xmalloc(cap * sizeof *mem);

        for (int k = 0; k < nn; k += B) {
            int nb = nn - k < B ? nn - k : B;
            Batch b;
            batch_fill(&b, &bb, &src, order + k, nb);
            model_encode(m, w, &b);
            for (int r = 0; r < nb; r++) {
                prev[r] = VOCAB_BOS;
                lim[r] = greedy_limit(b.src_len[r], max_len);
                rlen[r] = 0;
                live[r] = 1;
            }
            int left = nb;
            for (int t = 0; left > 0; t++) {
                model_decode_step(m, w, &b, prev, t);
                const real *lg = work_step_logits(w);
                for (int r = 0; r < nb; r++) {
                    if (!live[r])
                        continue;
                    int best = greedy_argmax(lg + (size_t)r * V, V);
                    if (best != VOCAB_EOS)
                        toks[(size_t)r * max_t + rlen[r]++] = best;
                    if (best == VOCAB_EOS || rlen[r] == lim[r]) {
                        live[r] = 0;
                        left--;
                        best = VOCAB_EOS;
                    }
                    prev[r] = best;
                }
            }
            for (int r = 0; r < nb; r++) {
                int i = bb.rows[r];
                if (used + (size_t)rlen[r] > cap) {
                    while (used + (size_t)rlen[r] > cap)
                        cap *= 2;
                    mem = xrealloc(mem, cap * sizeof *mem);
                }
                memcpy(mem + used, toks + (size_t)r * max_t, (size_t)rlen[r] * sizeof *mem);
                out->len[i] = rlen[r];
                off[i] = used;
                used += (size_t)rlen[r];
            }
        }
        free(toks);
        free(live);
        free(rlen);
        free(lim);
        free(prev);
        batch_buf_free(&bb);
        work_free(w);
    }
    if (!mem)
        mem = xmalloc(sizeof *mem);
    out->mem = mem;
    for (int i = 0; i < n; i++)
        out->ids[i] = mem + off[i];
    free(off);
    free(order);
    return 0;
}
