/*
 * Greedy decoding of a set of source sentences (token ids) with a Model.
 *
 * Each sentence is decoded on its own terms: the decoder starts from <bos>, takes at
 * every step the arg-max of the logits (ties go to the lowest id, as torch.argmax)
 * and stops at <eos> (id 3, not part of the output) or once the output holds
 * greedy_limit(src_len, max_len) tokens. An empty source gives an empty output and
 * never reaches the model.
 *
 * Non-empty sources are sorted by length (ascending, ties in input order) and decoded
 * `batch` at a time; the batch keeps running until each of its rows has stopped or
 * reached its own limit (rows that stopped keep being fed <eos>, and their results
 * are no longer read). Every row of the model's computation depends on that row
 * only, so a sentence gets the same ids whatever batch it is decoded in (the BLAS
 * products of a row round according to the batch's size and the row's position, so
 * the logits may differ in their last bits, which changes an id only on a tie to
 * within rounding). The
 * model's Work and the batch buffers are allocated once for the whole set; nothing
 * is allocated per step.
 *
 * Memory: the model's Work keeps every step of a batch (see model/seq2seq.h), about
 * B·T·(S·A + 2·Vt) floats for B rows, S source and T output positions. When `batch`
 * rows of the longest sentence would need more than GREEDY_WORK_BUDGET bytes, fewer
 * rows (at least one) are decoded at a time; this changes speed, never results.
 */
#ifndef S2S_DECODE_GREEDY_H
#define S2S_DECODE_GREEDY_H

#include <stddef.h>

#include "base/err.h"
#include "model/seq2seq.h"
#include "data/batch.h"

/* Bytes of model activations a decoding batch may use before it gets fewer rows. */
#define GREEDY_WORK_BUDGET ((size_t)1 << 30)

/* Decoded outputs, in input order: sentence i is ids[i][0 .. len[i]), token ids of
   the target vocabulary without <bos> and <eos>. ids[i] is never NULL. */
typedef struct Hyps {
    int n;
    int *len;  /* (n) */
    int **ids; /* (n) pointers into mem */
    int *mem;  /* every sentence's ids, one after another */
} Hyps;

void hyps_free(Hyps *h);

/* The most output tokens of a sentence with src_len source tokens: max_len when
   max_len > 0, else 2·src_len + 10 (docs/model.md). */
int greedy_limit(int src_len, int max_len);

/* The most source tokens one sentence may have so that a single row of decoding
   (output limit greedy_limit(S, max_len)) fits in GREEDY_WORK_BUDGET; at most
   1 << 20. Longer sources are refused by translate_lines (decode/translate.h). */
int greedy_max_src_len(const ModelConfig *c, int max_len);

/* The first index of the largest of x[0..n) (n >= 1): the lowest id on ties, as
   torch.argmax. */
int greedy_argmax(const real *x, int n);

/* The bytes of a decoding batch of `rows` rows with S source and T output positions:
   its Work (work_bytes, exactly) and, per row, per_t bytes per output step and per_ts
   bytes per output step and source position (beam search's records); and the most
   source tokens for which one batch of `rows` rows fits in GREEDY_WORK_BUDGET (at most
   1 << 20); greedy_max_src_len is the latter for one row and nothing more. */
size_t greedy_rows_bytes(const ModelConfig *c, int S, int T, int rows, size_t per_t,
                         size_t per_ts);
/* The most sentences, from 1 to want, of rows_per rows each that fit in
   GREEDY_WORK_BUDGET together (1 when even one does not). */
int greedy_fit_batch(const ModelConfig *c, int S, int T, int want, int rows_per, size_t per_t,
                     size_t per_ts);
int greedy_max_src_len_rows(const ModelConfig *c, int max_len, int rows, size_t per_t,
                            size_t per_ts);

/*
 * The decoding plan shared with beam search (decode/beam.h): checks every source id
 * (error as greedy_decode's), writes to order[0..*nn) the indices of the non-empty
 * sources sorted by length (ascending, ties in input order), and the longest source
 * and output limit among them to *max_s, *max_t (0 when there are none). order holds
 * d->n entries.
 */
int greedy_plan(const ModelConfig *c, const PairSet *d, int max_len, int *order, int *nn,
                int *max_s, int *max_t, Err *e);

/*
 * Decodes the sources of d (d->tgt is ignored) with m, `batch` (>= 1) sentences at a
 * time at most, each output limited by greedy_limit(len, max_len) (max_len >= 0).
 * Fills *out (free it with hyps_free) and returns 0; returns -1 with e set and *out
 * empty when a source holds an id outside the model's source vocabulary
 * ("sentence 7: token 2: id 9000 is not in the source vocabulary (size 5000)",
 * sentence and token counted from 1).
 */
int greedy_decode(Model *m, const PairSet *d, int batch, int max_len, Hyps *out, Err *e);

#endif
