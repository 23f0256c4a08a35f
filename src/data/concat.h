/* Concatenation augmentation (Nguyen et al., 2021; Kondo et al., 2021): an epoch's
   training examples are the corpus's pairs and, after them, joined pairs, each two or
   three pairs drawn at random and joined source to source and target to target, so
   that the model sees inputs longer than the corpus's and more than one sentence. */
#ifndef S2S_DATA_CONCAT_H
#define S2S_DATA_CONCAT_H

#include <stdint.h>

#include "base/err.h"
#include "data/batch.h"
#include "data/names.h"

/* The longest side of a joined pair, in tokens, unless the model's positions are
   fewer (learned positions). */
#define CONCAT_MAX_TOKENS 100

typedef struct ConcatOpts {
    double share; /* joined pairs' share of the epoch's examples, 0 to 0.9 */
    int max_s;    /* a joined pair's sides are at most this long: a part that */
    int max_t;    /* would make one longer is left out */
    /* --copy-names (data/names.h): round(names->ncand · rename) renamed pairs added
       after the joined ones; rename 0 to 1, names NULL when 0 */
    double rename;
    const NameCopy *names;
    /* the set the names' candidates index (names_init's base), when not the epoch's
       base (--bpe-dropout segments the base anew each epoch); NULL: base */
    const PairSet *names_from;
} ConcatOpts;

typedef struct Concat {
    PairSet set; /* the epoch's examples */
    int *join;   /* (set.n − base->n) × 4, see PairSet */
    size_t cap;  /* ints allocated at join */
    int *mat;    /* the renamed pairs' ids, see PairSet */
    size_t mcap; /* ints allocated at mat */
} Concat;

/* The examples of epoch `epoch` of base: base's n pairs, then round(n · share /
   (1 − share)) joined pairs, each of 2 or 3 (one chance in two each) pairs drawn
   uniformly, a part left out where it would make a side longer than max_s or max_t
   (the first always stays); then, with rename, renamed pairs, each a candidate of
   names drawn uniformly with an invented name drawn uniformly (one a side would make
   longer than max_s or max_t is left out). The same seed and epoch give the same set; c->set points
   into c and base, which must outlive it. A share of 0 gives base's pairs alone, in a
   set of base's kind. -1 when a drawn pair fails pair_check. Zero-initialise c before
   the first call; free it with concat_free. */
int concat_epoch(Concat *c, const PairSet *base, const ConcatOpts *o, uint64_t seed, long epoch, Err *e);

/* The most examples an epoch of concat_epoch can hold (base's pairs, the joined ones,
   every renamed one). */
long concat_most(const PairSet *base, const ConcatOpts *o);
void concat_free(Concat *c);

#endif
