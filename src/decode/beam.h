/*
 * Beam search over a set of source sentences (token ids) with a Model.
 *
 * Per sentence, with beam size K: the search starts from <bos> and keeps at most K
 * live hypotheses. A hypothesis's raw score is the sum of the log-probabilities
 * (log-softmax of the logits, in double) of its tokens. At each step every live
 * hypothesis proposes its K best next tokens (by logit; ties: lowest id); of these
 * candidates the W best by raw score are taken, where W is K minus the number of
 * hypotheses of the sentence that have finished so far (ties: lowest beam index,
 * then lowest id). A candidate ending in <eos>, or reaching the output limit
 * decode_limit(src_len, max_len) without it, finishes; the others are the next live
 * hypotheses. So the beam narrows as hypotheses finish, and with K = 1 the search is
 * exactly greedy decoding (decode/greedy.h), tokens and stopping point alike.
 *
 * Length normalisation: a finished hypothesis of n output tokens has length
 * len = n + 1 when it ended with <eos> (<eos> counts) and n when it was cut at the
 * limit; its score is raw / len^alpha (alpha = 0: the raw log-probability).
 *
 * Finished hypotheses go into a list of the nbest best by score (a new one enters
 * only if it is strictly better than the worst kept when the list is full; ties keep
 * the earlier). A sentence stops when it has no live hypothesis, or when the list is
 * full and no live hypothesis can still beat the worst kept: log-probabilities are
 * <= 0, so a live hypothesis of raw score r can at best finish with raw score r at the
 * longest length the limit allows, len = limit, which gives the bound r / limit^alpha
 * (r itself for alpha = 0); it stops when every live bound is <= the worst kept
 * score. The bound holds for every alpha >= 0, so no hypothesis that would have made
 * the list is lost.
 *
 * Batches: the non-empty sources are ordered as greedy_decode orders them and decoded
 * `batch` sentences at a time; each sentence's encoder outputs and attention keys are
 * computed once and copied to its K rows (model_expand_rows), and the decoder states
 * follow the surviving hypotheses (model_select_rows). A sentence needs as many rows
 * as its beam is wide; when finished sentences and narrowed beams would leave a
 * quarter of the rows idle or more, the batch is shrunk to the rows still needed
 * (model_expand_rows again; never with K = 1, whose rows stay greedy_decode's). Every row depends on its own
 * sentence only, so the results do not depend on `batch`, up to float rounding (the
 * BLAS products of a row round according to the batch's size and the row's position:
 * scores may differ in their last bits; tokens differ only where two candidates tie
 * to within that rounding, which the tests do not meet). When K rows of the longest
 * sentence times `batch` would need more than DECODE_WORK_BUDGET bytes, fewer
 * sentences are decoded at a time (at least one).
 *
 * For each output token the hypothesis records the source position with the highest
 * attention weight at that step (ties: the first), and, when asked, the whole
 * attention row; these follow the beam's back-pointers.
 */
#ifndef S2S_DECODE_BEAM_H
#define S2S_DECODE_BEAM_H

#include <stdbool.h>

#include "base/err.h"
#include "model/model.h"
#include "data/batch.h"

/*
 * Lexical constraints of one sentence (target ids; docs/constraints.md), searched by
 * dynamic beam allocation (Post & Vilar, NAACL 2018):
 * - each phrase tok[k][0..len[k]) must appear in the output, contiguously. A
 *   hypothesis's state is the set of phrases it has produced and the one it is in the
 *   middle of (how many of its tokens so far); a token that is not that phrase's next
 *   one loses the progress (and may start another phrase). Each hypothesis proposes, as
 *   well as its best tokens, every token that advances a phrase; the candidates are
 *   grouped into banks by the constraint tokens met, the beam's width is shared among
 *   the banks (equal shares, the remainder to the banks that met most), and slots a
 *   bank cannot fill go to the best candidates of the other banks, from the bank that
 *   met most down. <eos> is allowed only once every phrase is met. With subword units
 *   (glue), a phrase starts only at a word's start (after a unit that ends a word), and
 *   a candidate is kept only if the constraint tokens it leaves unmet, and one more
 *   token to end its word when it is a unit that does not, still fit in the steps left
 *   before the output limit: so when the prefix and the phrases fit in the limit,
 *   every output holds them all, as whole words.
 * - no phrase avoid[k][0..alen[k]) is produced as whole words: its last token is barred
 *   after its first alen[k] − 1 when they start a word (a token that advances a
 *   constraint is never barred).
 * - the output starts with prefix[0..nprefix): those steps take those tokens.
 * A sentence without a BeamCons is searched exactly as without constraints.
 */
#define BEAM_MAX_CONSTRAINTS 64
typedef struct BeamCons {
    int n;                   /* phrases that must appear (<= BEAM_MAX_CONSTRAINTS) */
    const int *const *tok;
    const int *len;          /* each >= 1 */
    int navoid;              /* phrases that must not */
    const int *const *avoid;
    const int *alen;         /* each >= 1 */
    int nprefix;             /* tokens the output starts with */
    const int *prefix;
    const bool *glue;        /* (V) subword units that are not the end of a word ("@@"), or NULL */
} BeamCons;

typedef struct BeamOpts {
    int beam;       /* K >= 1 */
    int nbest;      /* hypotheses returned per sentence, 1..K (0: 1) */
    int batch;      /* sentences decoded together, >= 1 */
    int max_len;    /* output limit, 0: 2·source tokens + 10 (decode_limit) */
    double alpha;   /* length penalty exponent, >= 0 */
    bool attention; /* keep every hypothesis's attention rows */
    int attention_layer, attention_head; /* which attention, as in TranslateOpts: 1-based;
                                            0, the last layer and its heads' mean */
    const BeamCons *const *cons; /* (d->n) each sentence's constraints or NULL; NULL: none */
    int streams; /* 0: two batches decoded at once, each on one thread, where the pool has
                    two threads or more, there is more than one batch and the decoder's
                    weights are int8; 1: one at a time, its products shared by the
                    threads. The same output either way. */
} BeamOpts;

typedef struct BeamHyp {
    int len;        /* output tokens, without <eos> */
    bool eos;       /* ended with <eos> (else cut at the output limit) */
    double logprob; /* raw score: summed log-probabilities, <eos> included */
    double score;   /* logprob / (len + eos)^alpha */
    int *ids;       /* (len) target ids */
    int *src_pos;   /* (len) source position of the highest attention weight per token */
    float *attn;    /* (len + eos, src_len) attention rows, or NULL without opts.attention */
} BeamHyp;

/* Results in input order: sentence i has count[i] hypotheses hyps[i][0..count[i]),
   best first. An empty source has one empty hypothesis (score 0, eos false, attn
   NULL). */
typedef struct BeamOut {
    int n;
    int *count;
    BeamHyp **hyps;
} BeamOut;

void beam_out_free(BeamOut *o);

/* raw / len^alpha (len >= 1; len 0 gives raw). */
double beam_norm(double raw, int len, double alpha);

/* The most source tokens one sentence may have so that its K rows (and the search's
   own per-step records) fit in DECODE_WORK_BUDGET; at most 1 << 20. */
int beam_max_src_len(const Model *m, int max_len, int beam, bool attention);

/*
 * Decodes the sources of d (d->tgt is ignored) with m. Fills *out (free it with
 * beam_out_free) and returns 0; returns -1 with e set and *out empty when a source
 * holds an id outside the source vocabulary (the message of greedy_decode).
 */
int beam_decode(Model *m, const PairSet *d, const BeamOpts *o, BeamOut *out, Err *e);

#endif
