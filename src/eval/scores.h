/*
 * Corpus BLEU and chrF2 of detokenized hypotheses against references, as sacreBLEU
 * 2.x computes them by default (bleu.h, chrf.h), with the score line and the two
 * signatures: what `s2s eval` prints for one scored set, without the model.
 */
#ifndef S2S_EVAL_SCORES_H
#define S2S_EVAL_SCORES_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "eval/bleu.h"

/* The sacreBLEU release whose command line `s2s score` (and the library's s2s_score)
   reproduces, as their signatures say (2.2 and later keep empty references; 2.4.3 to
   2.6.0 compute and print alike). */
#define SACREBLEU_VERSION "2.6.0"

typedef struct TextScores {
    BleuResult bleu;
    Buf bleu_line;      /* bleu_format without a signature: "BLEU = 48.53 82.4/..." */
    Buf bleu_signature; /* bleu_signature */
    double chrf;        /* chrF2, 0..100 */
    Buf chrf_signature; /* chrf_signature */
} TextScores;

/* Scores hyp[i] against refs[ref_start[i] .. ref_start[i + 1]) for i < n. Returns 0,
   or -1 with e set to the message of bleu_add or chrf_add for the first segment that
   fails, whose index goes to *bad; *s is then empty. */
int scores_compute(TextScores *s, const char *const *hyp, size_t n, const char *const *refs,
                   const size_t *ref_start, size_t *bad, Err *e);

void scores_free(TextScores *s);

#endif
