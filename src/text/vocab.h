/*
 * Token vocabulary: ids for the tokens of one language, built from counts.
 *
 * Ids 0..3 are the specials <pad>, <unk>, <bos>, <eos>; the regular tokens follow in
 * frequency-descending order, ties broken by bytewise-ascending token. A token
 * spelled like a special is never a regular entry (it maps to the special's id).
 *
 * File format (UTF-8 text, written by vocab_save): one entry a line, in id order,
 * `TOKEN<TAB>COUNT`, the four specials first with count 0. vocab_load accepts a
 * leading BOM and CRLF line ends, and rejects with "FILE:LINE: ..." a line without
 * exactly one tab, a count that is not a decimal integer, an empty token, a token
 * with whitespace or invalid UTF-8, a duplicate token, and a special that is
 * missing or out of place. The count on a special's line is not checked; the
 * specials count 0 (vocab_count) whatever it says.
 */
#ifndef S2S_TEXT_VOCAB_H
#define S2S_TEXT_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum {
    VOCAB_PAD = 0,
    VOCAB_UNK = 1,
    VOCAB_BOS = 2,
    VOCAB_EOS = 3,
    VOCAB_NSPECIAL = 4,
};

typedef struct Vocab Vocab;

/* Token counts, the input of vocab_build. */
typedef struct VocabCounter VocabCounter;

VocabCounter *vocab_counter_new(void);
void vocab_counter_free(VocabCounter *c);
/* Adds n occurrences of tok[0..len). */
void vocab_counter_add(VocabCounter *c, const char *tok, size_t len, uint64_t n);
/* Adds each token of a space-separated token string; returns how many. */
size_t vocab_counter_add_line(VocabCounter *c, const char *toks, size_t len);
/* Number of distinct tokens counted. */
size_t vocab_counter_types(const VocabCounter *c);
/* Token i (0 <= i < vocab_counter_types, in first-seen order), NUL-terminated, with
   its length and count. */
const char *vocab_counter_at(const VocabCounter *c, size_t i, size_t *len, uint64_t *count);

/*
 * The vocabulary of the tokens counted at least min_freq times (min_freq >= 1),
 * in the order described above. max_vocab limits the total size, the four specials
 * included (so the embedding tables have at most max_vocab rows); 0 means no limit,
 * otherwise it must be >= VOCAB_NSPECIAL. Regular tokens beyond it are dropped from
 * the end of the order.
 */
Vocab *vocab_build(const VocabCounter *c, uint64_t min_freq, size_t max_vocab);

/* Reads and validates a vocabulary file. */
int vocab_load(Vocab **out, const char *path, Err *e);
/* The same on data[0..len); name is used in messages. */
int vocab_parse(Vocab **out, const char *name, const char *data, size_t len, Err *e);
/* Writes the file format, atomically. */
int vocab_save(const Vocab *v, const char *path, Err *e);
/* Appends the file format to out. */
void vocab_format(const Vocab *v, Buf *out);
/* Appends the tokens of v joined by '\n' (the form a model file stores). */
void vocab_lines(const Vocab *v, Buf *out);
/* Builds a vocabulary from tokens joined by '\n' (counts 0). Errors are vocab_parse's,
   "NAME:LINE: ..." with LINE = id + 1; a token holding a tab or CR is refused as
   holding whitespace. */
int vocab_from_lines(Vocab **out, const char *name, const char *s, size_t len, Err *e);
void vocab_free(Vocab *v);

/* Number of entries, specials included. */
size_t vocab_size(const Vocab *v);
/* Whether a and b hold the same tokens with the same ids (counts aside). */
bool vocab_equal(const Vocab *a, const Vocab *b);
/* The id of tok[0..len), VOCAB_UNK when absent. */
int32_t vocab_id(const Vocab *v, const char *tok, size_t len);
/* The token of an id (0 <= id < vocab_size), NUL-terminated. */
const char *vocab_token(const Vocab *v, int32_t id);
/* The count recorded for an id (0 for the specials). */
uint64_t vocab_count(const Vocab *v, int32_t id);

/*
 * Maps the space-separated tokens of toks[0..len) to ids (runs of spaces count as
 * one separator). Writes at most cap ids to ids and returns the number of tokens,
 * which may exceed cap; a string of len bytes has at most (len + 1) / 2 tokens.
 * When n_unk is not NULL, it receives how many of them mapped to <unk>.
 */
size_t vocab_encode(const Vocab *v, const char *toks, size_t len, int32_t *ids, size_t cap,
                    size_t *n_unk);

#endif
