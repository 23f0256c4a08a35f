/* Made-up sentence pairs for the data tests: a PairSet over token arrays the fixture
   owns, every token derived from its pair and place so that a test can recognise it. */
#ifndef S2S_TESTS_PAIR_FIXTURE_H
#define S2S_TESTS_PAIR_FIXTURE_H

#include "data/batch.h"

typedef struct Pairs {
    PairSet set;
    int **src, **tgt, *sl, *tl; /* (n) the set's arrays */
} Pairs;

/* n pairs: pair i has len(i, 0) source tokens tok(i, 0, k) and len(i, 1) target tokens
   tok(i, 1, k), k = 0, 1, ... (a length may be 0). */
Pairs pairs_make(int n, int (*len)(int i, int tgt), int (*tok)(int i, int tgt, int k));
void pairs_free(Pairs *p);

#endif
