#include "decode/greedy.h"

#include <stdlib.h>
#include <string.h>

#include "nn/ops.h"
#include "text/vocab.h"

void hyps_free(Hyps *h)
{
    free(h->len);
    free(h->ids);
    free(h->mem);
    memset(h, 0, sizeof *h);
}


int greedy_decode(Model *m, const PairSet *d, int batch, int max_len, Hyps *out, Err *e)
{
    CHECK(batch >= 1 && max_len >= 0 && d->n >= 0);
    memset(out, 0, sizeof *out);
    const ModelConfig *c = &m->cfg;
    const int n = d->n, V = c->tgt_vocab;

    int *order = xmalloc_array((size_t)(n), sizeof *order);
    int nn, max_s, max_t;
    if (decode_plan(m, d, max_len, order, &nn, &max_s, &max_t, e) != 0) {
        free(order);
        return -1;
    }

    out->n = n;
    out->len = xcalloc((size_t)(n), sizeof *out->len);
    out->ids = xmalloc_array((size_t)(n), sizeof *out->ids);
    size_t *off = xcalloc((size_t)(n), sizeof *off);
    size_t used = 0, cap = 0;
    int *mem = NULL;

    if (nn > 0) {
        int B = decode_fit_batch(m, max_s, max_t, batch < nn ? batch : nn, 1, 0, 0);
        Work *w = work_new(m, B, max_s, max_t, false);
        BatchBuf bb;
        batch_buf_init(&bb, B, max_s, 1);
        const PairSet src = {.n = n, .src = d->src, .src_len = d->src_len};
        int *prev = xmalloc_array((size_t)B, sizeof *prev);
        int *lim = xmalloc_array((size_t)B, sizeof *lim);
        int *rlen = xmalloc_array((size_t)B, sizeof *rlen);
        char *live = xmalloc((size_t)B);
        int *toks = xmalloc_array((size_t)B * (size_t)max_t, sizeof *toks); /* (B, max_t) */
        cap = (size_t)nn * 16;
        mem = xmalloc_array(cap, sizeof *mem);

        for (int k = 0; k < nn; k += B) {
            int nb = nn - k < B ? nn - k : B;
            Batch b;
            batch_fill(&b, &bb, &src, order + k, nb);
            model_encode(m, w, &b);
            for (int r = 0; r < nb; r++) {
                prev[r] = VOCAB_BOS;
                lim[r] = decode_limit(m, b.src_len[r], max_len);
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
                    int best = nn_argmax(lg + (size_t)r * V, V);
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
                    mem = xrealloc_array(mem, cap, sizeof *mem);
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
