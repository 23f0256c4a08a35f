#include "decode/plan.h"

#include <stdlib.h>

#include "text/vocab.h"

int decode_limit(const Model *m, int src_len, int max_len)
{
    CHECK(src_len >= 0 && src_len <= (1 << 28) && max_len >= 0);
    int lim = max_len > 0 ? max_len : 2 * src_len + 10;
    /* learned positions: the table's rows are the most steps (the last feeds <eos>) */
    int rows = model_max_positions(m);
    if (rows && lim > rows - 1)
        lim = rows - 1;
    return lim;
}

/* The most source tokens the model itself can take (its learned positions). */
static int model_src_cap(const Model *m)
{
    int rows = model_max_positions(m);
    return rows ? rows : 1 << 20;
}

size_t decode_rows_bytes(const Model *m, int S, int T, int rows, size_t per_t,
                         size_t per_ts)
{
    return work_bytes(m, rows, S, T, false) + (size_t)rows * (size_t)T * (per_t + (size_t)S * per_ts);
}

int decode_fit_batch(const Model *m, int S, int T, int want, int rows_per, size_t per_t,
                     size_t per_ts)
{
    int lo = 1, hi = want > 1 ? want : 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (decode_rows_bytes(m, S, T, mid * rows_per, per_t, per_ts) <= DECODE_WORK_BUDGET)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int decode_max_src_len_rows(const Model *m, int max_len, int rows, size_t per_t,
                            size_t per_ts)
{
    /* the bytes grow with S; 1 << 20 keeps the arithmetic far from overflow */
    int lo = 0, hi = model_src_cap(m);
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (decode_rows_bytes(m, mid, decode_limit(m, mid, max_len), rows, per_t, per_ts) <=
            DECODE_WORK_BUDGET)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int decode_max_src_len(const Model *m, int max_len)
{
    return decode_max_src_len_rows(m, max_len, 1, 0, 0);
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

int decode_plan(const Model *m, const PairSet *d, int max_len, int *order, int *nn,
                int *max_s, int *max_t, Err *e)
{
    const int n = d->n;
    LenKey *keys = xmalloc_array((size_t)(n), sizeof *keys);
    int k = 0, ms = 0, mt = 0;
    for (int i = 0; i < n; i++) {
        int len = pair_src_len(d, i);
        CHECK(len >= 0);
        for (int j = 0; j < len; j++) {
            int id = pair_src(d, i)[j];
            if (id < 0 || id >= m->cfg.src_vocab) {
                free(keys);
                return err_set(e, "sentence %d: token %d: id %d is not in the source "
                                  "vocabulary (size %d)", i + 1, j + 1, id, m->cfg.src_vocab);
            }
        }
        if (len == 0)
            continue;
        if (len > model_src_cap(m)) {
            free(keys);
            return err_set(e, "sentence %d: %d tokens, more than the model's %d positions", i + 1,
                           len, model_src_cap(m));
        }
        keys[k++] = (LenKey){len, i};
        if (len > ms)
            ms = len;
        int lim = decode_limit(m, len, max_len);
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
