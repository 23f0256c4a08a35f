/* BPE-dropout over a training split (s2s train --bpe-dropout P): each epoch the
   split's sentences are segmented anew, every merge left out with probability P
   (text/bpe.h, bpe_ids_word), so that the model sees each word in several
   segmentations and learns its pieces (Provilkov, Emelianenko and Voita 2020). The
   epoch's pairs are held in memory; the fixed segmentation (the split's ids) stays for
   validation, decoding and name copying. A side without codes (words) keeps its ids. */
#ifndef S2S_DATA_BPE_DROPOUT_H
#define S2S_DATA_BPE_DROPOUT_H

#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "data/batch.h"
#include "data/prepared.h"

typedef struct BpeDropout {
    double p;
    int n;                /* pairs */
    int max[2];           /* a side segmented longer than this keeps its fixed ids */
    const Vocab *v[2];
    BpeIds *m[2];         /* NULL for a side of words */
    Buf tok[2];           /* each pair's tokens, space-separated, one after the other */
    size_t *off[2];       /* (n + 1) pair i's tokens: tok[s].data[off[s][i] .. off[s][i + 1]) */
    int *ids;             /* the epoch's ids, both sides of every pair */
    size_t cap;           /* ints allocated at ids */
    int **src, **tgt, *sl, *tl;
    PairSet set;          /* the epoch's pairs (in memory) */
} BpeDropout;

/* Reads d's training text (DIR/train.tsv) and tokenizes it as prepare did: the pairs
   must be those of d->train, in its order (an error naming the file otherwise). p is
   the dropout (0 < p < 1); max_s and max_t bound the segmented sides. Zero-initialise
   bd first; free it with bpe_dropout_free, also after a failure. */
int bpe_dropout_init(BpeDropout *bd, const Prepared *d, double p, int max_s, int max_t, Err *e);

/* Segments every pair anew for epoch `epoch` into bd->set: the same seed and epoch give
   the same pairs. A side longer than its bound keeps the fixed ids of fixed (the split
   the text was read for; -1 when its pair fails pair_check). */
int bpe_dropout_epoch(BpeDropout *bd, const PairSet *fixed, uint64_t seed, long epoch, Err *e);
void bpe_dropout_free(BpeDropout *bd);

#endif
