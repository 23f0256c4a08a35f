/*
 * Text in, text out: the translation pipeline shared by `s2s translate`, `s2s eval`
 * and validation during training. It works on a ModelFile already in memory (model,
 * vocabularies, text settings), not on a path.
 *
 * For each line: tok_line with the model's source options (text_src_opts) → with
 * source BPE codes (TextConfig.src_bpe), the subword units of each token →
 * vocab_encode (unknown tokens become <unk>) → beam search (decode/beam.h; beam 1 is
 * greedy decoding) → the target tokens (vocab_token; a special the model emits, such
 * as <unk>, is written as its name, unless replace_unk) joined by spaces → with
 * target codes, bpe_join (units ending in "@@" glued to the next) → detok_line for the
 * target language. A line without tokens (empty or blank) translates to "".
 *
 * Sentence splitting (TranslateOpts.split; used only with nbest 1 and without
 * attention, which are per line): each line is split into sentences by sent_split
 * (text/sentences.h) for the source language; the sentences of all the lines are
 * decoded together, in one call, as lines of their own (errors still name their line),
 * and each line's translation is its sentences' translations in order, joined by single
 * spaces (empty ones left out), its score their mean. A line of one sentence, a blank
 * line and a line with invalid UTF-8 or a NUL byte are decoded whole, exactly as
 * without splitting.
 *
 * Unknown-word replacement (Luong et al. 2015, replace_unk): an output <unk> becomes
 * the source token (as the tokenizer wrote it) with the highest attention weight at
 * the step that produced it.
 */
#ifndef S2S_DECODE_TRANSLATE_H
#define S2S_DECODE_TRANSLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/file.h"
#include "model/model.h"
#include "text/corpus.h"
#include "text/vocab.h"

typedef struct TranslateOpts {
    int batch;        /* sentences decoded together, >= 1 */
    int max_len;      /* most output tokens per sentence; 0: 2·source tokens + 10 */
    int beam;         /* beam size; 0 or 1: greedy decoding */
    int nbest;        /* hypotheses per line, 1..beam (0: 1) */
    double alpha;     /* length penalty exponent (decode/beam.h), >= 0 */
    bool replace_unk; /* output <unk> → the most attended source token */
    bool attention;   /* fill TranslateResult.align */
    bool split;       /* with nbest 1 and without attention: split lines into sentences */
    bool copy_numbers; /* a source's numbers (words of digits) are constraints of its output */
    /* the attention that align and replace_unk use, of a Transformer (model_attention_layers
       > 0; other models have one): decoder layer, 1-based, 0 the last; and its head,
       1-based, 0 the mean of the heads */
    int attention_layer, attention_head;
} TranslateOpts;

/* Counts over one call (optional). */
typedef struct TranslateStats {
    long lines;      /* lines given */
    long sentences;  /* sentences decoded: lines (with split, their sentences) with at
                        least one token */
    long src_tokens; /* source tokens */
    long src_unk;    /* of which not in the source vocabulary */
    long hyp_tokens; /* output tokens */
} TranslateStats;

/* One hypothesis of a line: detokenized text and its length-normalised score. */
typedef struct TranslateHyp {
    char *text;
    double score;
} TranslateHyp;

/* The attention of a line's best hypothesis: ntgt rows (its output tokens, after
   unknown-word replacement, then "<eos>" when it ended with <eos>) over nsrc source
   tokens. A line without tokens has nsrc = ntgt = 0. */
typedef struct TranslateAlign {
    int nsrc, ntgt;
    char **src, **tgt;
    float *w; /* (ntgt, nsrc) */
} TranslateAlign;

typedef struct TranslateResult {
    int n;
    int *count;            /* (n) hypotheses of line i, 1..nbest */
    TranslateHyp **hyps;   /* hyps[i][0..count[i]), best first */
    TranslateAlign *align; /* (n) with opts.attention, else NULL */
} TranslateResult;

void translate_result_free(TranslateResult *r);

/* The constraints of a line (decode/beam.h BeamCons, docs/constraints.md), as text:
   phrases its output must contain, phrases it must not, and the text it starts with
   (NULL: none). Each is tokenized and split into subword units as the model's target
   side is. A line with constraints is translated whole (not split into sentences). */
typedef struct TranslateCons {
    int n;
    char **phrases;
    int navoid;
    char **avoid;
    char *prefix;
} TranslateCons;

static inline bool translate_cons_empty(const TranslateCons *c)
{
    return !c || (c->n == 0 && c->navoid == 0 && !c->prefix);
}
void translate_cons_free(TranslateCons *c);

/* The lines of one call: lines[i][0..lens[i]) for i < n (lens NULL: the lines are
   NUL-terminated), named "NAME:LINE" in errors, LINE being line_no[i], or i + 1 when
   line_no is NULL; cons, when not NULL, the constraints of each line. */
typedef struct TranslateInput {
    const char *const *lines;
    const size_t *lens;
    int n;
    const char *name;
    const long *line_no;
    const TranslateCons *cons;
} TranslateInput;

/*
 * Translates the lines of in with the model, vocabularies and text settings of mf (a
 * loaded file, or an ensemble's DecodeModels.use). On success out[0..in->n) receive
 * NUL-terminated strings (xmalloc'd; free them with translate_free) and st, when not
 * NULL, the counts. The first bad line fails the whole call before any decoding, and
 * out is then left untouched (N is 1-based within the line):
 *   "NAME:LINE: invalid UTF-8 at byte N", "NAME:LINE: NUL byte at byte N",
 *   "NAME:LINE: too long to translate: T tokens (at most K for this model, beam size
 *   and output length limit)" when one sentence alone would need more decoding memory
 *   than DECODE_WORK_BUDGET (K = beam_max_src_len(model, o->max_len, beam,
 *   o->attention): a few thousand tokens for small models, some hundreds for the
 *   reference one; a larger beam lowers it, a --max-len smaller than the default
 *   2·T + 10 raises it).
 * and for a line's constraints:
 *   "NAME:LINE: constraint K is empty" (K 1-based; "avoided phrase K", "the prefix"),
 *   "NAME:LINE: constraint K: 'WORD' is not in the model's target vocabulary" (the
 *   prefix likewise; an avoided phrase with such a word is left out: the model cannot
 *   write it), "NAME:LINE: more than 64 constraints",
 *   "NAME:LINE: constraint K holds avoided phrase J",
 *   "NAME:LINE: the prefix and the constraints need N tokens, more than the output
 *   limit of this sentence (L; --max-len)".
 * mf->src, mf->tgt must be the model's vocabularies (their sizes are checked).
 */
int translate_lines(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o, char **out,
                    TranslateStats *st, Err *e);

/* The same, with every hypothesis and, with o->attention, the alignments, into *res
   (free it with translate_result_free). On failure *res is left empty. */
int translate_run(ModelFile *mf, const TranslateInput *in, const TranslateOpts *o,
                  TranslateResult *res, TranslateStats *st, Err *e);

/* The result of translate_nll: the summed negative log-likelihood (natural log) and
   the tokens scored; exp(nll / ntok) is the perplexity. */
typedef struct TranslateNll {
    double nll;
    long ntok;
} TranslateNll;

/*
 * Teacher-forced scoring of references: for each line i of src, the source and the
 * reference refs[i] (lengths in ref_lens, NULL: NUL-terminated) are tokenized and
 * encoded as for training, and the model's negative log-likelihood of the reference
 * tokens and <eos> given the source is summed (from the softmax of the logits: no
 * label smoothing, whatever the model file says). Pairs whose source has no tokens are
 * skipped. Fills *out (ntok counts <eos>). Errors as translate_lines, for the source
 * or the reference of the line ("NAME:LINE: reference: invalid UTF-8 at byte N" for a
 * reference).
 */
int translate_nll(ModelFile *mf, const TranslateInput *src, const char *const *refs,
                  const size_t *ref_lens, TranslateNll *out, Err *e);

/* Frees out[0..n) (not the array itself). */
void translate_free(char **out, int n);

/* Appends the detokenized text of target ids[0..len) (the last step above). */
void translate_detok(const Vocab *tgt, const TextConfig *tc, const int *ids, int len, Buf *out);

#endif
