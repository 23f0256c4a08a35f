#include "pair_fixture.h"

#include <stdlib.h>

Pairs pairs_make(int n, int (*len)(int i, int tgt), int (*tok)(int i, int tgt, int k))
{
    Pairs p;
    p.src = calloc((size_t)n, sizeof(int *));
    p.tgt = calloc((size_t)n, sizeof(int *));
    p.sl = calloc((size_t)n, sizeof(int));
    p.tl = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        p.sl[i] = len(i, 0);
        p.tl[i] = len(i, 1);
        p.src[i] = malloc((size_t)(p.sl[i] + 1) * sizeof(int));
        p.tgt[i] = malloc((size_t)(p.tl[i] + 1) * sizeof(int));
        for (int k = 0; k < p.sl[i]; k++)
            p.src[i][k] = tok(i, 0, k);
        for (int k = 0; k < p.tl[i]; k++)
            p.tgt[i][k] = tok(i, 1, k);
    }
    p.set = (PairSet){.n = n, .src = p.src, .src_len = p.sl, .tgt = p.tgt, .tgt_len = p.tl};
    return p;
}

void pairs_free(Pairs *p)
{
    for (int i = 0; i < p->set.n; i++) {
        free(p->src[i]);
        free(p->tgt[i]);
    }
    free(p->src);
    free(p->tgt);
    free(p->sl);
    free(p->tl);
}
