/*
 * One scored set, as `s2s eval` reports it: the distinct sources of a corpus
 * (source<TAB>reference pairs) translated once each, scored by corpus BLEU and chrF2
 * against the references of all their lines (eval/scores.h), and the references'
 * perplexity under the model (translate_nll; one model only, not an ensemble). The
 * report is written as a text block or as one JSON object.
 */
#ifndef S2S_DECODE_EVALUATE_H
#define S2S_DECODE_EVALUATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "decode/translate.h"
#include "eval/bylength.h"
#include "eval/scores.h"
#include "model/file.h"
#include "text/corpus.h"

/* What the report names (borrowed strings): the corpus file as given and the model
   files, one or an ensemble (models[0] is "model" in JSON). */
typedef struct EvalNames {
    const char *tsv;
    const char *const *models;
    int nmodels;
} EvalNames;

typedef struct Evaluation {
    EvalNames names;
    TranslateOpts opts;    /* the decoding settings used */
    const char *precision; /* the decoder step's weights, as --precision names them, or NULL */
    size_t lines, sources; /* corpus lines, distinct sources */
    TranslateStats ts;     /* of the translation of the sources */
    double decode_seconds;
    bool have_ppl;         /* false for an ensemble */
    double ppl;            /* exp(nll / ref_tokens), 0 when no token was scored */
    long ref_tokens;       /* reference tokens scored, <eos> included */
    TextScores scores;
    SourceGroups groups;   /* the corpus's lines by source */
    char **hyp;            /* (sources) the translation of each distinct source */
    bool have_by_length;   /* by_length is filled (evaluate_by_length) */
    BylenBucket by_length[BYLEN_BUCKETS];
    /* evaluate_run: each corpus line's source text and constraints (the caller's) */
    const char *const *text;
    const size_t *text_len;
    const TranslateCons *cons;
} Evaluation;

/* Translates and scores c with mf (its ensemble when names->nmodels > 1). With text
   not NULL, line i's source is text[i][0..text_len[i]) with the constraints cons[i]
   (cons may be NULL: none; eval --constraints: the corpus's source column holds JSON
   lines, which group the lines; the arrays are the caller's and must outlive ev); with
   text NULL, the corpus's source column. Returns 0, or -1 with e set ("NAME:LINE:
   ...", NAME the corpus's) and *ev empty. */
int evaluate_run(Evaluation *ev, ModelFile *mf, const EvalNames *names, const Corpus *c,
                 const TranslateOpts *o, const char *const *text, const size_t *text_len,
                 const TranslateCons *cons, Err *e);

/* Fills ev->by_length from the translations of a finished evaluate_run of c: the
   distinct sources by their word count, each standing for its corpus lines. Returns
   0, or -1 with e set ("NAME:LINE: ..."). */
int evaluate_by_length(Evaluation *ev, const Corpus *c, Err *e);

/* Appends the translation of each corpus line (its source's), one a line. */
void evaluate_hyps(const Evaluation *ev, Buf *out);
/* Appends the text block: BLEU and its signature, chrF2 and its signature, the
   perplexity, the counts, the decoding settings and time; then, when by_length is
   filled, its table. */
void evaluate_text(const Evaluation *ev, Buf *out);
/* Appends the same figures as one JSON object on one line (by_length: the array
   "by_length"). */
void evaluate_json(const Evaluation *ev, Buf *out);

void evaluate_free(Evaluation *ev);

#endif
