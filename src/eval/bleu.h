/*
 * Corpus BLEU computed exactly as sacreBLEU 2.x does by default:
 * BLEU(tokenize='13a', smooth_method='exp', lowercase=False,
 * effective_order=False, max_ngram_order=4).
 *
 * Per segment: both sides go through the 13a tokenizer (bleu_tokenize); the
 * hypothesis n-grams (1..4) are clipped by the largest count of that n-gram in
 * any single reference; the reference length is the reference length closest
 * to the hypothesis length (ties: the shorter). Counts, totals and lengths are
 * summed over the corpus and combined once (bleu_compute).
 *
 * References: a segment may have any number of references. Missing (NULL) and
 * empty ("") references are dropped, as sacreBLEU 2.0 and 2.1 drop them (from 2.2
 * on, "" is kept: BleuOpts.keep_empty); a segment left with none is an error
 * (sacreBLEU raises "Empty or `None` reference sentence found"). A whitespace-only
 * reference is kept and has length 0.
 *
 * Text is UTF-8; invalid UTF-8 is an error. Non-ASCII characters pass through
 * 13a untouched, except that Unicode whitespace (see eval/ngram.h) separates
 * tokens, as Python's str.split() does.
 */
#ifndef S2S_EVAL_BLEU_H
#define S2S_EVAL_BLEU_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

#define BLEU_MAX_ORDER 4
/* BleuStats.nrefs when segments had different numbers of references. */
#define BLEU_NREFS_VAR (-1)

/*
 * sacreBLEU's tokenizers (BLEU(tokenize=...)):
 *   13a   mteval-v13a, above (the default);
 *   none  no tokenization: the text is split on whitespace as it is;
 *   intl  mteval-v14's international tokenization (sacreBLEU's tokenizer_intl):
 *         on code points, (\P{N})(\p{P}) -> "\1 \2 ", then (\p{P})(\P{N}) -> " \1 \2",
 *         then (\p{S}) -> " \1 " (Unicode categories: N number, P punctuation, S
 *         symbol, from utf8proc), each a left-to-right replacement of non-overlapping
 *         matches; then split on whitespace. So punctuation stays between two digits
 *         ("3.5", "1,000"), and a punctuation mark after a digit at the end of the
 *         line stays attached ("2024."), as in mteval-v14.
 * Every tokenizer first drops trailing whitespace (rstrip), as BLEU does.
 */
typedef enum BleuTokenizer { BLEU_TOK_13A, BLEU_TOK_NONE, BLEU_TOK_INTL } BleuTokenizer;
/* "13a", "none", "intl": the names of the signature's tok: field. */
extern const char *const bleu_tokenizer_names[3];
/* The tokenizer named s, or -1. */
int bleu_tokenizer_parse(const char *s);

/* BLEU's options; all-zero is sacreBLEU's default as described above. */
typedef struct BleuOpts {
    BleuTokenizer tok;
    bool lowercase;  /* Python's str.lower() before tokenizing (eval/ngram.h); case:lc */
    bool keep_empty; /* an empty reference counts as a reference of length 0, as from
                        sacreBLEU 2.2 on (before: dropped, as above) */
} BleuOpts;

typedef struct BleuResult {
    double score;                      /* 0..100 */
    double precisions[BLEU_MAX_ORDER]; /* 0..100, after 'exp' smoothing */
    double bp;                         /* brevity penalty */
    double ratio;                      /* sys_len / ref_len; 0 when ref_len is 0 */
    long long sys_len, ref_len;
    long long counts[BLEU_MAX_ORDER];  /* clipped matches per order */
    long long totals[BLEU_MAX_ORDER];  /* hypothesis n-grams per order */
} BleuResult;

struct BleuScratch;

/* Streaming corpus accumulator: bleu_init, bleu_add per segment, bleu_score. */
typedef struct BleuStats {
    long long sys_len, ref_len;
    long long counts[BLEU_MAX_ORDER];
    long long totals[BLEU_MAX_ORDER];
    long long nsegs;
    /* References per segment (after dropping empty ones): 0 before the first
       segment, BLEU_NREFS_VAR once two segments disagree. */
    long nrefs;
    BleuOpts opts;
    struct BleuScratch *scratch; /* reusable per-segment buffers */
} BleuStats;

/* bleu_init: the default options; bleu_init_opts: those of o. */
void bleu_init(BleuStats *s);
void bleu_init_opts(BleuStats *s, const BleuOpts *o);
void bleu_free(BleuStats *s);

/*
 * Adds one segment: hypothesis hyp against refs[0..nrefs-1]. Returns 0, or -1
 * with e set (and s unchanged) when no non-empty reference is given
 * ("no reference (empty references are ignored)") or a string is not UTF-8
 * ("invalid UTF-8 at byte N of the hypothesis" / "... of reference K", K from 1).
 */
int bleu_add(BleuStats *s, const char *hyp, const char *const *refs, size_t nrefs, Err *e);

/*
 * sacreBLEU's compute_bleu with 'exp' smoothing from sufficient statistics:
 * BP = exp(1 - ref/sys) when sys < ref (0 when sys is 0), else 1; no matches of
 * any order → score 0 and precisions 0; otherwise, per order n while
 * totals[n] > 0: p_n = 100·counts/totals, or 100/(2^k·totals) for the k-th
 * order with zero matches; an order with totals 0 stops the loop and keeps
 * p_n = 0, which makes the score 0 unless effective_order, where the mean is
 * taken over the orders before it. score = BP·exp(Σ log p_n / N).
 */
void bleu_compute(const long long counts[BLEU_MAX_ORDER], const long long totals[BLEU_MAX_ORDER],
                  long long sys_len, long long ref_len, bool effective_order, BleuResult *r);
/* The corpus score so far (effective_order off, sacreBLEU's default). An empty
   corpus scores 0 (with BP 1, since sys_len == ref_len == 0). */
void bleu_score(const BleuStats *s, BleuResult *r);

/*
 * One segment on its own. effective_order=false is BLEU().sentence_score;
 * sacrebleu.sentence_bleu() uses effective_order=true. Errors as bleu_add.
 */
int bleu_sentence(const char *hyp, const char *const *refs, size_t nrefs, bool effective_order,
                  BleuResult *r, Err *e);

/*
 * The 13a tokenizer: appends the tokens of s to out separated by single
 * spaces; returns the number of tokens, or -1 with e set on invalid UTF-8
 * ("invalid UTF-8 at byte N").
 */
long bleu_tokenize(const char *s, Buf *out, Err *e);
/* The same with o's tokenizer and lowercasing. */
long bleu_tokenize_opts(const char *s, const BleuOpts *o, Buf *out, Err *e);

/*
 * Appends sacreBLEU's score line, e.g. "BLEU = 48.53 82.4/50.0/45.5/37.5
 * (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"; with a signature,
 * "BLEU|SIGNATURE = 48.53 ...".
 */
void bleu_format(const BleuResult *r, const char *signature, Buf *out);

/*
 * Appends "nrefs:N|case:mixed|eff:no|tok:13a|smooth:exp": sacreBLEU's
 * signature without its "|version:..." field. N is "var" when segments had
 * different numbers of references (as sacreBLEU prints), and 0 for an empty
 * corpus (which sacreBLEU refuses to score).
 */
void bleu_signature(const BleuStats *s, Buf *out);
/* The same for s's options: case:lc with lowercase, tok: its tokenizer, and eff:yes
   when the score was computed with effective_order. */
void bleu_signature_opts(const BleuStats *s, bool effective_order, Buf *out);

#endif
