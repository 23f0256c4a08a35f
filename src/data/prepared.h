/* The training data of a `prepare` directory, in memory: the tokenizer settings
   (prepare.json), both vocabularies, and the train and valid splits as token ids,
   with the valid split's original text kept for BLEU. */
#ifndef S2S_DATA_PREPARED_H
#define S2S_DATA_PREPARED_H

#include "base/err.h"
#include "text/corpus.h"
#include "text/bpe.h"
#include "text/vocab.h"
#include "data/batch.h"
#include "data/ids.h"

/* One split: pairs as ids (a PairSet over ids, or over map), and the raw text (empty
   for a mapped split). */
typedef struct Split {
    Corpus text;   /* source<TAB>target lines of SPLIT.tsv */
    PairSet set;   /* ids without <bos>/<eos> */
    int *ids;      /* one allocation behind set, or NULL when mapped */
    IdsMap map;    /* SPLIT.ids mapped (base NULL when read from the text) */
    int **src, **tgt;
    int *src_len, *tgt_len;
    long src_tokens, tgt_tokens, src_unk, tgt_unk; /* counted when read from the text */
    /* Pairs grouped by identical source text (for multi-reference BLEU);
       gsrc/gsrc_len view the source ids of each group's first pair. */
    SourceGroups groups;
    int **gsrc, *gsrc_len;
} Split;

typedef struct Prepared {
    char *dir;
    TextConfig text;     /* its src_bpe, tgt_bpe are bpe[0], bpe[1] */
    Bpe *bpe[2];         /* bpe.src, bpe.tgt when prepare.json lists them, else NULL */
    Vocab *src_vocab, *tgt_vocab;
    Split train, valid;
    double train_oov[2]; /* the training split's share of <unk> tokens, source and target, as
                            prepare.json records it (-1: it does not) */
    long train_pairs;    /* the training split's pairs as prepare.json records them (-1: it
                            does not); train.ids must hold as many */
} Prepared;

/* Loads DIR/prepare.json, vocab.src, vocab.tgt, train.tsv and valid.tsv, and bpe.src
   and bpe.tgt when prepare.json's "bpe" gives a side merges (older directories have no
   "bpe": words). The training split is DIR/train.ids mapped read-only (ids_map: its
   header, version and fingerprint checked, an error naming it otherwise; each pair is
   checked when the plan first reaches it); a
   directory without it (prepared before .ids files existed) has train.tsv read
   instead. Read from text, pairs are tokenized and, on a side with codes, segmented.
   Errors name the file (and line). A pair whose source or target has no token is an
   error (prepare never writes one). */
int prepared_load(Prepared *d, const char *dir, Err *e);

/* Reads the prepared directory dir as prepared_load does from text, every split
   (test.tsv too), and writes each one's ids to SPLIT.ids (prepared_ids_files). */
int prepared_write_ids(const char *dir, Err *e);

/* The fingerprint of d's vocabularies and codes, as SPLIT.ids records it. */
void prepared_print(const Prepared *d, IdsPrint *p);
void prepared_free(Prepared *d);


#endif
