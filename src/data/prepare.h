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
#include "base/json.h"
#include "data/outside.h"
#include "data/prepared.h"
#include "model/file.h"
#include "text/bpe.h"
#include "text/corpus.h"
#include "text/vocab.h"

/* The vocabularies and codes of an existing model (s2s train --init, s2s prepare
   --model): the pairs are segmented with its codes and numbered with its vocabularies
   instead of ones learned from the training split, so that the model can go on
   training on them. Borrowed: prepare_run copies what it keeps. */
typedef struct PrepareLike {
    const char *name;      /* the model file, for prepare.json and the summary */
    TextConfig text;       /* its direction and case */
    const Vocab *vocab[2]; /* source, target */
    const Bpe *bpe[2];     /* NULL: a side of words */
} PrepareLike;

typedef struct PrepareOpts {
    const char *corpus;  /* input file (Tatoeba layout: English first), or NULL and: */
    const char *src_file, *tgt_file; /* parallel files, in direction.src and .tgt */
    const char *valid_files[2], *test_files[2]; /* outside sets (data/outside.h), or NULL */
    const char *dir;     /* output directory */
    Direction direction;
    long valid, test;    /* pairs of valid and test; -1: split_default_size */
    long seed;           /* shuffling seed */
    long min_freq;       /* vocabulary: tokens seen at least this often in train; 0: 2 for
                            words, 1 for subwords (every unit of the training split) */
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
    bool said_direction; /* a corpus whose direction was given: the summary need not name it */
    const char *model;       /* s2s prepare --model: the file behind like */
    const PrepareLike *like; /* a model's codes and vocabularies (bpe, bpe_codes, joint,
                                min_freq and max_vocab then unused), or NULL */
} PrepareOpts;

/* The codes and vocabularies of a loaded model file, named name (borrowed from mf). */
PrepareLike prepare_like_model(const ModelFile *mf, const char *name);

/* Whether the prepared directory d was made with like's direction, case, codes and
   vocabularies: 0, or -1 with e set to one line that names d's directory, like's model
   and what differs. */
int prepare_like_check(const PrepareLike *like, const Prepared *d, Err *e);

/* The defaults of `s2s prepare` (corpus and dir NULL). */
PrepareOpts prepare_opts_default(void);

/* A --direction of a Tatoeba file: en-XX or XX-en, XX an ISO 639 code other than en
   (canonical: "en-deu" is "en-de"); 0, or -1 when s is not one. */
int prepare_direction_parse(const char *s, Direction *d);

/* The language of a parallel file from its name: the extension, after a ".gz"
   ("train.de", "news.deu.gz"), when it is an ISO 639-1 code, the three-letter code of
   such a language, or one of a few corpus languages without a two-letter code (cmn,
   yue, kab, ...); else -1: other three-letter codes are not taken (.txt, .src and
   .tgt are ISO 639-3 codes that no one means as languages). */
int prepare_lang_from_name(const char *path, Lang *out);

/* Reads the input of o: o->corpus in o->direction, or the parallel files. */
int prepare_read_input(const PrepareOpts *o, Corpus *c, Err *e);

/* Loads the outside valid and test sets of o into x[0], x[1] (zeroed when not given)
   and checks that they do not overlap. */
int prepare_load_outside(const PrepareOpts *o, Outside x[2], Err *e);

/* prepare.json's member "corpus": the file, or [source, target] files on one line. */
void prepare_put_inputs(JsonWriter *w, const PrepareOpts *o);

/* The members "valid_files" and "test_files" of prepare.json's options, when either
   is given: [source, target] on one line, null for the one not given. Nothing
   otherwise. */
void prepare_put_outside(JsonWriter *w, const PrepareOpts *o);

/* Prepares o->corpus (or the parallel files) into o->dir. On success appends the summary lines ("prepare: ..."
   with newlines) to summary when not NULL and returns 0; else -1 with e set (one line
   naming the file and line) and nothing written. */
int prepare_run(const PrepareOpts *o, Buf *summary, Err *e);

#endif
