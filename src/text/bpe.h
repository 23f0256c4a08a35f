/*
 * Byte-pair encoding (Sennrich, Haddow and Birch 2016), with the semantics of
 * subword-nmt's learn_bpe.py and apply_bpe.py (codes format version 0.2).
 *
 * A word is a token of text/tokenize.h. Its symbols are first its code points, the
 * last one carrying the end-of-word marker "</w>" ("chat" -> c h a t</w>); a merge
 * `A B` replaces every adjacent A B, left to right without overlap ("x x x" -> "xx x"),
 * by the symbol AB.
 *
 * Learning (bpe_learn) counts every adjacent pair of symbols over the word types,
 * weighted by the words' counts, and repeatedly merges the most frequent pair. Ties go
 * to the greatest pair, comparing the first symbols bytewise, then the second ones
 * (as subword-nmt, which takes the maximum of (count, pair) over Python strings). It
 * stops after the requested number of merges, or before one whose count is below
 * min_freq, or when no pair is left. Pair counts are kept exact after each merge (each
 * changed word's pairs are taken out and its new pairs put in), an index from each pair
 * to the words holding it limits a merge's work to those words, and a binary heap with
 * lazy deletion (entries whose count is out of date are dropped when they surface)
 * finds the best pair. The merges equal those of recounting every pair at every step
 * (tests/unit/test_bpe.c holds such a learner and compares them on data/sample.tsv);
 * subword-nmt's own incremental counts can leave a merged pair below zero, which makes
 * a difference only if other merges form that pair again.
 *
 * Applying (bpe_segment_word) follows apply_bpe.py: among the word's adjacent pairs
 * that are merges, take the one of lowest rank (first in the file), merge all its
 * occurrences left to right, and repeat until no pair is a merge; then drop "</w>".
 * The units are written with the continuation marker "@@" on every unit but the
 * last: "chatons" -> "cha@@ tons". The tokenizer writes "@" as a token of its own, so
 * no token ends in "@@" and bpe_join undoes bpe_segment_line exactly.
 *
 * Codes file (bpe_parse, bpe_format): UTF-8 text, the first line "#version: 0.2",
 * then one merge a line, the two symbols separated by one space ("e s</w>"), in rank
 * order. CRLF line ends are accepted. Any other line (empty, one symbol, three, a
 * tab, invalid UTF-8, a NUL byte) is an error "NAME:LINE: ...". A merge given twice
 * keeps its first rank, as in subword-nmt.
 */
#ifndef S2S_TEXT_BPE_H
#define S2S_TEXT_BPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/rng.h"
#include "text/tokenize.h"
#include "text/vocab.h"

#define BPE_VERSION_LINE "#version: 0.2"
#define BPE_EOW "</w>"

typedef struct Bpe Bpe;

/* Why bpe_learn stopped. */
typedef enum BpeStop { BPE_STOP_MERGES = 0, BPE_STOP_MIN_FREQ = 1, BPE_STOP_NO_PAIRS = 2 } BpeStop;

typedef struct BpeLearnStats {
    long merges;       /* merges learned */
    BpeStop stop;
    uint64_t last_count; /* the count of the last merge learned (0 when none) */
} BpeLearnStats;

/* Learns at most merges (>= 0) merges from the word types and counts of words
   (tokens without whitespace), stopping before a pair seen fewer than min_freq (>= 1)
   times. st may be NULL. */
Bpe *bpe_learn(const VocabCounter *words, long merges, uint64_t min_freq, BpeLearnStats *st);

/* Parses a codes file held in data[0..len); name is used in messages. */
int bpe_parse(Bpe **out, const char *name, const char *data, size_t len, Err *e);
/* Reads and parses the codes file at path. */
int bpe_load(Bpe **out, const char *path, Err *e);
/* Appends the codes file text (header and every merge, duplicates included). */
void bpe_format(const Bpe *b, Buf *out);
/* Writes the codes file atomically. */
int bpe_save(const Bpe *b, const char *path, Err *e);
void bpe_free(Bpe *b);

/* Number of merges (lines after the header). */
size_t bpe_merges(const Bpe *b);
/* Whether a and b are the same merges in the same order (NULL: a side of words). */
bool bpe_equal(const Bpe *a, const Bpe *b);
/* The symbols of merge i (0 <= i < bpe_merges), NUL-terminated. */
const char *bpe_merge_first(const Bpe *b, size_t i);
const char *bpe_merge_second(const Bpe *b, size_t i);

/* Appends the units of word[0..len) (no spaces, valid UTF-8, len >= 1) separated by
   single spaces, "@@" ending each unit but the last; returns the number of units. */
size_t bpe_segment_word(const Bpe *b, const char *word, size_t len, Buf *out);
/* The same for each token of the space-separated toks[0..len), the units of all
   tokens separated by single spaces; returns the total number of units. */
size_t bpe_segment_line(const Bpe *b, const char *toks, size_t len, Buf *out);
/* tok_line, then, when b is not NULL, bpe_segment_line on its tokens: appends the
   units to out and returns their number, or -1 with e set as tok_line. */
long bpe_tok_line(const Bpe *b, const char *s, size_t len, const TokOpts *o, Buf *out, Err *e);
/*
 * BPE-dropout (Provilkov, Emelianenko and Voita 2020): a segmentation drawn at random
 * around bpe_segment_word's, for training. At every merge step each adjacent pair of
 * symbols that is a merge is left out with probability p; the remaining pair of lowest
 * rank is merged at its remaining places, left to right without overlap; when every
 * pair is left out the word stays as it is. p = 0 gives bpe_segment_word's units.
 * The units are then numbered in a vocabulary: a unit the vocabulary lacks is replaced
 * by the two symbols it was merged from, recursively; where that ends in a code point
 * the vocabulary lacks ("q@@" where "q" is always merged with "u"), the word is
 * segmented without dropout instead, so dropout never adds an <unk>.
 */
typedef struct BpeIds BpeIds;
/* The symbols of b numbered in v (the unit of a symbol: without "</w>" at a word's
   end, else with "@@"). b and v must outlive it. */
BpeIds *bpe_ids_new(const Bpe *b, const Vocab *v);
void bpe_ids_free(BpeIds *m);
/* The ids of word[0..len) (no spaces, len >= 1) segmented with dropout p (0 to 1,
   drawing from r) into out, which has room for len ids (a word has at most one unit a
   byte); returns their number. */
size_t bpe_ids_word(const BpeIds *m, const char *word, size_t len, double p, Rng *r, int32_t *out);

/* Whether unit (NUL-terminated) is glued to the next one: it ends in "@@" after at
   least one character. */
bool bpe_glued(const char *unit);
/* A table of vocab_size(v) flags, bpe_glued of each entry (xmalloc'd). */
bool *bpe_glue_table(const Vocab *v);
/* Joins units back into tokens: a unit ending in "@@" loses the marker and is glued
   to the next one (a marker at the end of the line is dropped). Appends to out. */
void bpe_join(const char *units, size_t len, Buf *out);

#endif
