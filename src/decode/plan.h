/*
 * The plan that greedy decoding and beam search share: which sentences are decoded
 * (sorted by length), how many output tokens a sentence may get, and how many rows and
 * how long a source fit in the memory budget of one decoding batch.
 */
#ifndef S2S_DECODE_PLAN_H
#define S2S_DECODE_PLAN_H

#include <stddef.h>

#include "base/err.h"
#include "data/batch.h"
#include "model/model.h"

/* Bytes of model activations a decoding batch may use before it gets fewer rows. */
#define DECODE_WORK_BUDGET ((size_t)1 << 30)

/* The most output tokens of a sentence with src_len source tokens: max_len when
   max_len > 0, else 2·src_len + 10 (docs/model.md); with learned positions at most
   max_positions − 1 (the table's rows). */
int decode_limit(const Model *m, int src_len, int max_len);

/* The most source tokens one sentence may have so that a single row of decoding
   (output limit decode_limit(m, S, max_len)) fits in DECODE_WORK_BUDGET; at most
   1 << 20, and at most max_positions with learned positions. Longer sources are refused by translate_lines (decode/translate.h). */
int decode_max_src_len(const Model *m, int max_len);

/* The bytes of a decoding batch of `rows` rows with S source and T output positions:
   its Work (work_bytes, exactly) and, per row, per_t bytes per output step and per_ts
   bytes per output step and source position (beam search's records); and the most
   source tokens for which one batch of `rows` rows fits in DECODE_WORK_BUDGET (at most
   1 << 20); decode_max_src_len is the latter for one row and nothing more. */
size_t decode_rows_bytes(const Model *m, int S, int T, int rows, size_t per_t,
                         size_t per_ts);
/* The most sentences, from 1 to want, of rows_per rows each that fit in
   DECODE_WORK_BUDGET together (1 when even one does not). */
int decode_fit_batch(const Model *m, int S, int T, int want, int rows_per, size_t per_t,
                     size_t per_ts);
int decode_max_src_len_rows(const Model *m, int max_len, int rows, size_t per_t,
                            size_t per_ts);

/*
 * The decoding plan shared with beam search (decode/beam.h): checks every source id
 * (error as greedy_decode's), writes to order[0..*nn) the indices of the non-empty
 * sources sorted by length (ascending, ties in input order), and the longest source
 * and output limit among them to *max_s, *max_t (0 when there are none). order holds
 * d->n entries.
 */
int decode_plan(const Model *m, const PairSet *d, int max_len, int *order, int *nn,
                int *max_s, int *max_t, Err *e);

#endif
