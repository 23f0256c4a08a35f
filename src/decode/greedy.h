/*
 * Greedy decoding of a set of source sentences (token ids) with a Model.
 *
 * Each sentence is decoded on its own terms: the decoder starts from <bos>, takes at
 * every step the arg-max of the logits (ties go to the lowest id, as torch.argmax)
 * and stops at <eos> (id 3, not part of the output) or once the output holds
 * decode_limit(src_len, max_len) tokens. An empty source gives an empty output and
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
 * Memory: the model's Work keeps every step of a batch (see model/model.h), about
 * B·T·(S·A + 2·Vt) floats for B rows, S source and T output positions. When `batch`
 * rows of the longest sentence would need more than DECODE_WORK_BUDGET bytes, fewer
 * rows (at least one) are decoded at a time; this changes speed, never results.
 */
#ifndef S2S_DECODE_GREEDY_H
#define S2S_DECODE_GREEDY_H

#include <stddef.h>

#include "base/err.h"
#include "model/model.h"
#include "data/batch.h"
#include "decode/plan.h"

/* Decoded outputs, in input order: sentence i is ids[i][0 .. len[i]), token ids of
   the target vocabulary without <bos> and <eos>. ids[i] is never NULL. */
typedef struct Hyps {
    int n;
    int *len;  /* (n) */
    int **ids; /* (n) pointers into mem */
    int *mem;  /* every sentence's ids, one after another */
} Hyps;

void hyps_free(Hyps *h);

/*
 * Decodes the sources of d (d->tgt is ignored) with m, `batch` (>= 1) sentences at a
 * time at most, each output limited by decode_limit(len, max_len) (max_len >= 0).
 * Fills *out (free it with hyps_free) and returns 0; returns -1 with e set and *out
 * empty when a source holds an id outside the model's source vocabulary
 * ("sentence 7: token 2: id 9000 is not in the source vocabulary (size 5000)",
 * sentence and token counted from 1).
 */
int greedy_decode(Model *m, const PairSet *d, int batch, int max_len, Hyps *out, Err *e);

#endif
