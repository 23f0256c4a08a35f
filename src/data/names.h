/* Name copying (s2s train --copy-names): training pairs whose source and target hold
   the same capitalized word (a name: "Tom" -> "Tom") are added again with that word
   replaced, on both sides, by an invented name split into subword units, so that the
   model learns to carry over names it has never seen instead of translating them into
   the words it knows. data/concat.h adds the renamed pairs to an epoch's examples. */
#ifndef S2S_DATA_NAMES_H
#define S2S_DATA_NAMES_H

#include <stdint.h>

#include "base/err.h"
#include "data/batch.h"
#include "text/bpe.h"
#include "text/corpus.h"
#include "text/vocab.h"

/* Invented names made (fewer when some need a unit the vocabularies lack). */
#define NAMES_INVENTED 4096
/* The most subword units of an invented name (one a letter: 4 syllables of 6). */
#define NAMES_MAX_UNITS 24

typedef struct NameCopy {
    int ncand;
    int *cand;    /* (2 · ncand) a base pair's index and the source id of its name */
    int *tgt_of;  /* (source vocabulary) a name unit's target id, or -1 */
    bool *sglue, *tglue; /* (each vocabulary) units not ending a word ("@@") */
    int nnames;
    int *off;     /* (2 · nnames + 1) name k: source ids ids[off[2k] .. off[2k+1]),
                     target ids ids[off[2k+1] .. off[2k+2]) */
    int *ids;
} NameCopy;

/* The names of base (a training set) with vocabularies and codes of both sides (both
   subword: words cannot spell an invented name). A name unit is a vocabulary entry of
   two or more ASCII letters, the first a capital, with a lowercase letter, not ending
   in "@@" and present in both vocabularies. A candidate is a pair where such a unit
   is a whole word of the source and its twin a whole word of the target (the first
   such unit of the source). The invented names are fixed by seed: 2 to 4 syllables
   of ASCII letters, capitalized, starting with a consonant. -1 when a pair of a
   mapped set fails its check. */
int names_init(NameCopy *nc, const PairSet *base, const Vocab *const v[2], const Bpe *const bpe[2],
               const TokOpts opts[2], uint64_t seed, Err *e);
void names_free(NameCopy *nc);

/* Pair i of base renamed: writes its source then its target, candidate c's name (every
   whole-word occurrence on each side) replaced by invented name k, to out (room for
   max_s + max_t ints); *s and *t get the lengths. 0, or -1 when a side would be longer
   than max_s or max_t. */
int names_rename(const NameCopy *nc, const PairSet *base, int c, int k, int max_s, int max_t, int *out,
                 int *s, int *t);

#endif
