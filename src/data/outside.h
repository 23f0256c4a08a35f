/*
 * Valid and test sets from outside the corpus (`s2s prepare --valid-files SRC TGT`,
 * `--test-files SRC TGT`): parallel files read as corpus_read_parallel reads them,
 * strictly (a bad line is an error even with --skip-bad: an evaluation set is not
 * changed behind the user's back), tokenized as the corpus is. prepare drops every
 * corpus pair whose tokenized source occurs in one of them, so nothing of valid or
 * test is seen in training.
 */
#ifndef S2S_DATA_OUTSIDE_H
#define S2S_DATA_OUTSIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "text/corpus.h"
#include "text/tokenize.h"
#include "text/vocab.h"

typedef struct Outside {
    Corpus c;
    Buf toks;         /* each pair's source tokens, then its target tokens, NUL-terminated */
    size_t *soff, *toff; /* (c.n) offsets into toks */
    size_t *sorted;   /* (c.n) pair indices by source tokens (bytewise), then index */
} Outside;

/* Reads and tokenizes the parallel files src_path and tgt_path. Messages name the
   file and line ("FILE:LINE: German side has no tokens"). */
int outside_load(Outside *x, const char *src_path, const char *tgt_path, const TokOpts *src,
                 const TokOpts *tgt, Lang src_lang, Lang tgt_lang, Err *e);

/* The first line (in file order) of x whose source tokens are those of toks[0..len),
   or 0 when none. */
size_t outside_find(const Outside *x, const char *toks, size_t len);

/* Fails when valid and test share a source sentence: "VALID:LINE: same source sentence as
   TEST:LINE; the valid and test files must not overlap", for the first such valid line. */
int outside_check_disjoint(const Outside *valid, const Outside *test, Err *e);

/* Appends the pairs as source<TAB>target lines to out and adds their counts: pairs,
   tokens and <unk> tokens of each side. */
void outside_write(const Outside *x, const Vocab *src, const Vocab *tgt, Buf *out, size_t *pairs,
                   uint64_t tokens[2], uint64_t unk[2]);

void outside_free(Outside *x);

#endif
