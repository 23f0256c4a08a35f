/*
 * `s2s prepare` as a library call, used by `s2s prepare` and by `s2s train CORPUS`.
 *
 * Reads a corpus (English<TAB>French[<TAB>attribution] a line), tokenizes it, drops
 * over-long pairs, splits it into train/valid/test (pairs that share a tokenized source
 * go to one split) and builds the vocabularies from the training split. Writes the
 * files of prepared_files (text/split.h) to DIR: the splits as original text, the
 * vocabularies, prepare.json (options, counts, OOV rates, length histograms).
 *
 * DIR may be absent (it and missing parents are created) or a directory that holds
 * nothing but those files, none of which may be the corpus itself. Nothing is written
 * unless the whole corpus is valid; every file is replaced atomically.
 */
#ifndef S2S_DATA_PREPARE_H
#define S2S_DATA_PREPARE_H

#include <stdbool.h>

#include "base/buf.h"
#include "base/err.h"
#include "text/corpus.h"

typedef struct PrepareOpts {
    const char *corpus;  /* input file */
    const char *dir;     /* output directory */
    Direction direction;
    long valid, test;    /* pairs of valid and test; -1: split_default_size */
    long seed;           /* shuffling seed */
    long min_freq;       /* vocabulary: tokens seen at least this often in train */
    long max_vocab;      /* at most this many entries, specials included; 0: no limit */
    long max_len;        /* drop pairs with more tokens on a side; 0: no limit */
    bool keep_case;
    bool skip_bad;       /* skip and count malformed lines instead of failing */
    bool progress;       /* a progress line on stderr when it is a terminal */
    /* Subwords (data/prepare_bpe.h): learn bpe merges (0: none) until a pair is seen
       fewer than bpe_min_freq times, or read bpe_codes[side] (source, target). */
    long bpe;
    long bpe_min_freq;
    const char *bpe_codes[2];
    bool joint;          /* one merge list and one vocabulary for both sides */
} PrepareOpts;

/* The defaults of `s2s prepare` (corpus and dir NULL). */
PrepareOpts prepare_opts_default(void);

/* Prepares o->corpus into o->dir. On success appends the summary lines ("prepare: ..."
   with newlines) to summary when not NULL and returns 0; else -1 with e set (one line
   naming the file and line) and nothing written. */
int prepare_run(const PrepareOpts *o, Buf *summary, Err *e);

#endif
