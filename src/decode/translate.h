/*
 * Text in, text out: the translation pipeline shared by `s2s translate`, `s2s eval`
 * and validation during training. It works on a model and vocabularies already in
 * memory (not on a model file).
 *
 * For each line: tok_line with the model's source options (text_src_opts) →
 * vocab_encode (unknown tokens become <unk>) → greedy decoding (decode/greedy.h) →
 * the target tokens (vocab_token; a special the model emits, such as <unk>, is
 * written as its name) joined by spaces → detok_line for the target language.
 * A line without tokens (empty or blank) translates to "".
 */
#ifndef S2S_DECODE_TRANSLATE_H
#define S2S_DECODE_TRANSLATE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/file.h"
#include "model/seq2seq.h"
#include "text/vocab.h"

typedef struct TranslateOpts {
    int batch;   /* sentences decoded together, >= 1 */
    int max_len; /* most output tokens per sentence; 0: 2·source tokens + 10 */
} TranslateOpts;

/* Counts over one call (optional). */
typedef struct TranslateStats {
    long lines;      /* lines given */
    long sentences;  /* lines with at least one token (the ones decoded) */
    long src_tokens; /* source tokens */
    long src_unk;    /* of which not in the source vocabulary */
    long hyp_tokens; /* output tokens */
} TranslateStats;

/*
 * Translates lines[i][0..lens[i]) for i < n (lens NULL: the lines are
 * NUL-terminated). On success out[0..n) receive NUL-terminated strings (xmalloc'd;
 * free them with translate_free) and st, when not NULL, the counts. The first bad
 * line fails the whole call before any decoding, and out is then left untouched
 * (LINE is line_no[i], or i + 1 when line_no is NULL; N is 1-based within the line):
 *   "NAME:LINE: invalid UTF-8 at byte N", "NAME:LINE: NUL byte at byte N",
 *   "NAME:LINE: too long to translate: T tokens (at most K for this model and output
 *   length limit)" when one sentence alone would need more decoding memory than
 *   GREEDY_WORK_BUDGET (K = greedy_max_src_len(model, o->max_len), a few thousand
 *   tokens for small models, some hundreds for the reference one; a --max-len
 *   smaller than the default 2·T + 10 raises it).
 * src, tgt must be the model's vocabularies (their sizes are checked).
 */
int translate_lines(Model *m, const Vocab *src, const Vocab *tgt, const TextConfig *tc,
                    const char *const *lines, const size_t *lens, int n, const char *name,
                    const long *line_no, const TranslateOpts *o, char **out,
                    TranslateStats *st, Err *e);

/* Frees out[0..n) (not the array itself). */
void translate_free(char **out, int n);

/* Appends the detokenized text of target ids[0..len) (the last step above). */
void translate_detok(const Vocab *tgt, const TextConfig *tc, const int *ids, int len, Buf *out);

#endif
