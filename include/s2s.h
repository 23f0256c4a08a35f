/*
 * s2s.h: the s2s library, libs2s (shared: libs2s.so.0; static: libs2s.a; pkg-config
 * name s2s). One header is the whole public interface: what `s2s translate`, `s2s eval`,
 * `s2s score`, `s2s tokenize`, `s2s info` and `s2s export` do, for a program; those
 * commands and `s2s serve` are built on it.
 *
 *   s2s_translator  a loaded model file, or an ensemble of several, with its decoding
 *                   options: s2s_translator_load / s2s_translator_free
 *   s2s_result      the translations of one batch of texts (n-best lists with scores,
 *                   attention on request): s2s_translate / s2s_result_free
 *   s2s_translate_constrained  the same, with each text's constraints given apart
 *   s2s_translate_batch  the same, with lengths, the texts' name in errors and the
 *                   attention of one head
 *   s2s_attention_svg, s2s_attention_text  a text's attention drawn as an SVG
 *                   document, or as a text heatmap
 *   s2s_evaluate    a test set translated and scored, as `s2s eval` reports it
 *   s2s_score       corpus BLEU and chrF2 of hypotheses against references, as sacreBLEU
 *                   (s2s_score_metrics, s2s_score_sentence)
 *   s2s_tokenize, s2s_detokenize, s2s_translator_info, s2s_translator_tensor
 *   s2s_tokenizer   tokenizing without a model
 *   s2s_export_ctranslate2  the model in CTranslate2's format
 *   s2s_language_code, s2s_language_name  ISO 639 codes and the languages' names
 *
 * Conventions. Every *_load or function that returns an allocated object has its *_free
 * (NULL is accepted by each *_free). Errors are values: a function that can fail takes
 * an `s2s_error *` (NULL: not wanted), returns NULL or -1 on failure and fills it with a
 * status and a one-line message (the same text `s2s` prints after "s2s: "); on success
 * it sets the status to S2S_OK and the message to "". The library never exits, never
 * prints and installs no signal handler. Running out of memory is the one exception:
 * it aborts the process with a one-line message on stderr, as the command does.
 *
 * Threads. A loaded translator is read-only: any number of threads may call
 * s2s_translate, s2s_tokenize, s2s_detokenize and s2s_translator_info on the same
 * translator at once, and each call's result is the same as alone (the results do not
 * depend on the thread count). Two translators share nothing a call changes. What the
 * process shares: the threads of the matrix products (OpenBLAS) and of s2s's worker
 * pool. Their count is one setting of the process, set by each s2s_translator_load
 * (options.threads; the last load's count applies to every translator); the pool runs
 * one call's loops at a time, and a call that finds it busy runs its loops on its own
 * thread. s2s_translator_load and s2s_translator_free of one translator must not race
 * with other calls on that translator.
 *
 * Model files are mapped, not copied: a file truncated by another program while a
 * translator uses it raises SIGBUS.
 */
#ifndef S2S_H
#define S2S_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define S2S_VERSION_MAJOR 0
#define S2S_VERSION_MINOR 2
#define S2S_VERSION_PATCH 0
#define S2S_VERSION_STRING "0.2.0"

/* The most layers of a Transformer's stack. */
#define S2S_MAX_LAYERS 12

/* The library's version, "MAJOR.MINOR.PATCH" (S2S_VERSION_STRING of its build). */
const char *s2s_version(void);

/* ---- errors ---- */

typedef enum s2s_status {
    S2S_OK = 0,
    S2S_ERR_ARGUMENT = 1, /* a bad argument or option value */
    S2S_ERR_MODEL = 2,    /* a model file that cannot be read, is not a model file, or
                             cannot join an ensemble; a glossary that cannot be read */
    S2S_ERR_INPUT = 3,    /* a text that cannot be translated, scored or tokenized
                             (invalid UTF-8, a NUL byte, too long, a bad constraint) */
    S2S_ERR_OUTPUT = 4,   /* a file or directory that cannot be written */
} s2s_status;

typedef struct s2s_error {
    int code;           /* s2s_status */
    char message[1024]; /* one line, no newline; "" with S2S_OK */
} s2s_error;

/* ---- loading ---- */

typedef enum s2s_precision {
    S2S_PRECISION_INT8 = 0, /* one scale per row, each input row quantized too */
    S2S_PRECISION_BF16 = 1,
    S2S_PRECISION_F32 = 2,
} s2s_precision;

/* The options of `s2s translate` (docs/cli/translate.md), each default beside it, as
   s2s_translator_options_default returns them. Those marked "load" are fixed when the
   translator is loaded; the others may also be given again at each s2s_translate. */
typedef struct s2s_translator_options {
    int beam;              /* 5: beam size, 1..100 (1: greedy decoding) */
    int nbest;             /* 1: hypotheses per text, 1..beam, best first */
    double length_penalty; /* 1.0: hypotheses ranked by log-probability / length^A, 0..10
                              (0: raw log-probability) */
    int max_len;           /* 0: most output tokens per sentence, 1..10000 (0: twice the
                              source tokens plus 10) */
    int batch;             /* 64: sentences decoded together, 1..100000 */
    int split;             /* 1: split each text into sentences, translate them apart
                              and join them by spaces (only with nbest 1 and without
                              attention; `s2s translate --nbest N` never splits) */
    int copy_numbers;      /* 1: every number of a source must appear in its output */
    int replace_unk;       /* 0: replace an output <unk> by the most attended source token */
    int constraints;       /* 0: a text that starts with '{' is a JSON object with
                              members text, constraints, avoid, prefix
                              (docs/constraints.md) */
    int attention;         /* 0: return each text's attention (s2s_result_attention) */
    int attention_layer;   /* 0, load: Transformer decoder layer whose attention is
                              returned, 1-based, at most S2S_MAX_LAYERS (0: the last;
                              heads' mean) */
    s2s_precision precision; /* S2S_PRECISION_INT8, load: the decoder step's weights */
    int threads;           /* 0, load: threads of the process (0: the cores other
                              processes leave free when it is loaded); shared by every
                              translator of the process (above) */
    const char *glossary;  /* NULL, load: a glossary file, lines "SOURCE<TAB>TARGET":
                              each source term found in a text makes its target term a
                              constraint (copied at load) */
    int glossary_ignore_case; /* 0, load: match the glossary's terms whatever their case */
} s2s_translator_options;

s2s_translator_options s2s_translator_options_default(void);

typedef struct s2s_translator s2s_translator;

/* Loads the model files paths[0..npaths) (npaths >= 1; several decode as an ensemble:
   each step's scores the mean of the models' log-probabilities; they need the same
   vocabularies and tokenizer settings) with opts (NULL: the defaults). NULL on failure,
   with err set, e.g. S2S_ERR_MODEL "m.s2s: No such file or directory". */
s2s_translator *s2s_translator_load(const char *const *paths, int npaths,
                                    const s2s_translator_options *opts, s2s_error *err);
void s2s_translator_free(s2s_translator *tr);

/* ---- translating ---- */

typedef struct s2s_result s2s_result;

/* Translates texts[0..n) (UTF-8, NUL-terminated; an empty or blank text gives "") with
   the translator's options, or with opts when not NULL (its "load" fields ignored).
   NULL on failure: the first bad text fails the call, its error naming it
   "text:I: ..." with I 1-based. */
s2s_result *s2s_translate(const s2s_translator *tr, const char *const *texts, int n,
                          const s2s_translator_options *opts, s2s_error *err);
void s2s_result_free(s2s_result *r);

/* The number of texts. */
int s2s_result_count(const s2s_result *r);
/* Hypotheses of text i (1..nbest; 0 when i is out of range). */
int s2s_result_hypotheses(const s2s_result *r, int i);
/* Hypothesis k of text i (k = 0: the best): its detokenized text (owned by r; NULL
   when out of range) and its score, the length-normalised log-probability that
   `s2s translate --nbest` prints (NaN when out of range; with splitting, the mean of
   the sentences' scores). */
const char *s2s_result_text(const s2s_result *r, int i, int k);
double s2s_result_score(const s2s_result *r, int i, int k);

/* The attention of the best hypothesis of a text: output_len rows (its output tokens,
   then "<eos>" when it ended so) over source_len source tokens (after subword
   splitting). Pointers into the result. */
typedef struct s2s_attention {
    int source_len, output_len;
    const char *const *source;
    const char *const *output;
    const float *weights; /* (output_len, source_len), row-major; each row sums to 1 */
} s2s_attention;

/* Fills *a with text i's attention: 0, or -1 when the call had no attention option or
   i is out of range. A text without tokens has source_len = output_len = 0. */
int s2s_result_attention(const s2s_result *r, int i, s2s_attention *a);

/* The constraints of one text, given apart from it (docs/constraints.md): phrases its
   translation must contain, phrases it must not, and the text it must start with
   (NULL: none), each as the target language writes it. */
typedef struct s2s_constraints {
    const char *const *require; /* (nrequire) */
    int nrequire;
    const char *const *avoid;   /* (navoid) */
    int navoid;
    const char *prefix;
} s2s_constraints;

/* s2s_translate with cons[i] (all fields zero: none) the constraints of texts[i], on
   top of the glossary's terms (cons NULL: none at all, as s2s_translate). The texts
   are plain: with constraints set in the options (the translator's or opts) the call
   fails (S2S_ERR_ARGUMENT). Errors as s2s_translate's, those of a constraint naming
   the text ("text:I: constraint K: 'WORD' is not in the model's target vocabulary";
   S2S_ERR_INPUT). */
s2s_result *s2s_translate_constrained(const s2s_translator *tr, const char *const *texts,
                                      const s2s_constraints *cons, int n,
                                      const s2s_translator_options *opts, s2s_error *err);

/* A batch of texts with what s2s_translate_batch takes beyond s2s_translate. */
typedef struct s2s_batch {
    const char *const *texts;    /* (n) */
    const size_t *lengths;       /* (n) each text's bytes (a NUL byte within is an
                                    error naming it), or NULL: NUL-terminated texts */
    const s2s_constraints *constraints; /* (n) given apart, as s2s_translate_constrained,
                                    or NULL */
    int n;
    const char *name;            /* errors name a text "NAME:LINE: ..." (NULL: "text") */
    long first_line;             /* LINE of texts[0], 1-based (0: 1) */
    int attention_head;          /* with the attention option and a Transformer: the head
                                    of the attention layer whose weights are returned,
                                    1-based (0: the heads' mean); the translations do
                                    not depend on it */
} s2s_batch;

/* s2s_translate_constrained of b's texts, with those of b's fields. */
s2s_result *s2s_translate_batch(const s2s_translator *tr, const s2s_batch *b,
                                const s2s_translator_options *opts, s2s_error *err);

/* a drawn as a standalone SVG 1.1 document: a cell per weight (darker is higher), the
   source tokens above, the output tokens at the left, title its <title> (NULL: empty;
   the source text, say). NULL when a has no tokens (source_len or output_len 0).
   Free with s2s_string_free. */
char *s2s_attention_svg(const s2s_attention *a, const char *title);

/* a as the text heatmap `s2s translate --show-attention` prints: a legend line, the
   source tokens across, then a line per output token, each weight a shade (" ·░▒▓█"
   from 0 to 1). NULL when a has no tokens. Free with s2s_string_free. */
char *s2s_attention_text(const s2s_attention *a);

/* ---- evaluating ---- */

typedef struct s2s_evaluation s2s_evaluation;

/* What `s2s eval` does with a test set: the file tsv (lines "SOURCE<TAB>REFERENCE" in
   the model's direction; further columns ignored) read, its distinct sources translated
   once each with the translator's options or opts (a source holding JSON with the
   constraints option), scored by corpus BLEU and chrF2 against every reference of their
   source, the references' perplexity under the model (not for an ensemble), and with
   by_length the same by source length (1-8, 9-15, 16-30, >30 words). NULL on failure:
   S2S_ERR_INPUT "TSV:LINE: ..." for a file that cannot be read or a line that cannot
   be translated. */
s2s_evaluation *s2s_evaluate(const s2s_translator *tr, const char *tsv, int by_length,
                             const s2s_translator_options *opts, s2s_error *err);
void s2s_evaluation_free(s2s_evaluation *ev);

/* The report as `s2s eval` prints it: its text block, or with json its JSON object on
   one line (each ending in a newline). Owned by ev. */
const char *s2s_evaluation_report(const s2s_evaluation *ev, int json);
/* The translation of every line of the file (that of its source), one a line, as
   `s2s eval -o FILE` writes them. Owned by ev. */
const char *s2s_evaluation_translations(const s2s_evaluation *ev);

/* The evaluation's figures. */
typedef struct s2s_evaluation_figures {
    double bleu, chrf;        /* corpus BLEU and chrF2, 0..100 */
    double perplexity;        /* of the references; 0 for an ensemble or no token */
    long long lines, sources; /* lines of the file, distinct sources */
} s2s_evaluation_figures;
s2s_evaluation_figures s2s_evaluation_get(const s2s_evaluation *ev);

/* ---- tokens ---- */

typedef enum s2s_side { S2S_SOURCE = 0, S2S_TARGET = 1 } s2s_side;

/* text as the model sees that side: tokenized (its language, its case setting) and,
   with BPE codes, split into subword units; tokens separated by single spaces, as
   `s2s tokenize --lang L [--lowercase] [--bpe CODES]` writes them. NULL on failure
   (S2S_ERR_INPUT "invalid UTF-8 at byte N"). Free with s2s_string_free. */
char *s2s_tokenize(const s2s_translator *tr, s2s_side side, const char *text, s2s_error *err);
/* The reverse, for that side's language: subword units joined, then detokenized, as
   `s2s tokenize --detok --lang L`. */
char *s2s_detokenize(const s2s_translator *tr, s2s_side side, const char *tokens, s2s_error *err);
void s2s_string_free(char *s);

/* ---- a tokenizer without a model ---- */

typedef struct s2s_tokenizer s2s_tokenizer;

/* The tokenizer of `s2s tokenize --lang LANG [--lowercase] [--bpe CODES]`: lang an ISO
   639 code (NULL: "en"), lowercase to fold case, bpe_codes a codes file of `s2s
   prepare --bpe` or subword-nmt that splits the tokens into subword units (NULL:
   none). NULL on failure: S2S_ERR_ARGUMENT "'zz' is not an ISO 639 language code",
   or S2S_ERR_MODEL with the codes file's message. Read-only once made: any number of
   threads may use it at once. */
s2s_tokenizer *s2s_tokenizer_new(const char *lang, int lowercase, const char *bpe_codes, s2s_error *err);
void s2s_tokenizer_free(s2s_tokenizer *t);

/* text[0..len) (it may hold a NUL byte, an error) as `s2s tokenize` writes a line: its
   tokens (or units) separated by single spaces, "" for a blank text. NULL on failure
   (S2S_ERR_INPUT "invalid UTF-8 at byte N", "NUL byte at byte N"). Free with
   s2s_string_free. */
char *s2s_tokenizer_tokenize(const s2s_tokenizer *t, const char *text, size_t len, s2s_error *err);
/* The reverse, as `s2s tokenize --detok`: units joined (a token ending in "@@" glued to
   the next), then the tokens joined into text of the tokenizer's language. */
char *s2s_tokenizer_detokenize(const s2s_tokenizer *t, const char *tokens, size_t len, s2s_error *err);
/* Only the units joined, as `s2s tokenize --join`: what the codes split, exactly. */
char *s2s_join_units(const char *tokens, size_t len, s2s_error *err);

/* ---- the model ---- */

/* What `s2s info` shows of a translator's (first) model file. Owned by the translator. */
typedef struct s2s_model_info {
    const char *arch;         /* "rnn" or "transformer" */
    const char *direction;    /* "en-fr" */
    const char *source_lang, *target_lang; /* ISO 639 codes */
    int keep_case;            /* 0: text is lowercased before tokenizing */
    long long source_vocab, target_vocab;   /* vocabulary sizes, specials included */
    long long source_merges, target_merges; /* BPE merges (0: that side is words) */
    long long parameters;
    int models;               /* files loaded: 1, or the ensemble's size */
    const char *config_json;  /* the s2s.config object (docs/model.md), one line */
    const char *history_json; /* the s2s.history object: the training summary */
    int attention_layers;     /* decoder layers whose attention can be returned
                                 (attention_layer, 1..this), 0 for a recurrent model */
    int attention_heads;      /* their heads (s2s_batch.attention_head), 0 for a
                                 recurrent model */
    int tensors;              /* the model's tensors (s2s_translator_tensor) */
} s2s_model_info;

const s2s_model_info *s2s_translator_info(const s2s_translator *tr);

/* One tensor of a model, as `s2s info --tensors` lists it. */
typedef struct s2s_tensor {
    const char *name;  /* as PyTorch's state_dict names it: "encoder.layers.0.ff.0.weight" */
    int ndim;          /* 1 or 2 */
    int shape[2];      /* shape[1] 0 when ndim is 1 */
    long long size;    /* values */
} s2s_tensor;

/* Tensor i (0 <= i < info->tensors, in the file's order) of the translator's (first)
   model into *out (name owned by the translator): 0, or -1 when i is out of range. */
int s2s_translator_tensor(const s2s_translator *tr, int i, s2s_tensor *out);

/* ---- exporting ---- */

/* The translator's model written to the directory dir in CTranslate2's format (a
   TransformerSpec in float32, with its vocabularies; docs/cli/export.md). dir must not
   exist or be an empty directory: the files are written beside it and renamed into
   place once complete, so a failure leaves dir as it was. 0, or -1 with err set:
   S2S_ERR_ARGUMENT for an ensemble or a recurrent model, S2S_ERR_OUTPUT when dir cannot
   be written. */
int s2s_export_ctranslate2(const s2s_translator *tr, const char *dir, s2s_error *err);

/* ---- languages ---- */

/* s as an ISO 639 code, as model files and `s2s prepare --src-lang` take them: a
   two-letter ISO 639-1 code, a three-letter ISO 639-2 (T or B) or 639-3 code, in
   lowercase. 0 with its canonical form in code (the two-letter code where the language
   has one: "deu" and "ger" give "de"; else the three-letter one: "kab"), or -1 (code
   then "") when s is not such a code. */
int s2s_language_code(const char *s, char code[4]);

/* The English name of the language of code s ("de" or "deu": "German"), for the
   languages of ISO 639-1; NULL for another code ("kab") or what is not a code.
   Static storage. */
const char *s2s_language_name(const char *s);

/* ---- scoring ---- */

/* The version of sacreBLEU whose scores and signatures s2s_score gives. */
#define S2S_SACREBLEU_VERSION "2.6.0"

typedef struct s2s_score_options {
    const char *tokenize; /* "13a": BLEU's tokenizer: "13a", "intl" or "none" */
    int lowercase;        /* 0: case-insensitive BLEU (sacreBLEU's -lc) */
    int chrf_lowercase;   /* 0: case-insensitive chrF */
} s2s_score_options;

s2s_score_options s2s_score_options_default(void);

/* What `s2s score HYP REF...` prints: corpus BLEU and chrF2, 0..100, unrounded. */
typedef struct s2s_scores {
    double bleu;
    double precisions[4];   /* n-gram precisions, 0..100 */
    double brevity_penalty;
    double ratio;           /* hypothesis length / reference length */
    long long hyp_len, ref_len;
    double chrf;
    char bleu_signature[256]; /* "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" */
    char chrf_signature[256];
} s2s_scores;

/* Scores hyps[0..n) against nrefs references each: reference r of hypothesis i is
   refs[r * n + i]. opts NULL: the defaults. 0, or -1 with err set (S2S_ERR_ARGUMENT
   for no hypotheses or no references, S2S_ERR_INPUT "hypothesis I: ..." or
   "reference R:I: ..." for bad UTF-8, I and R 1-based). */
int s2s_score(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
              const s2s_score_options *opts, s2s_scores *out, s2s_error *err);

/* The metrics of s2s_score_metrics and s2s_score_sentence, or'ed. */
#define S2S_METRIC_BLEU 1
#define S2S_METRIC_CHRF 2

/* s2s_score with only the metrics asked (S2S_METRIC_BLEU, S2S_METRIC_CHRF or both);
   the fields of the other are 0 and its signature "". */
int s2s_score_metrics(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
                      const s2s_score_options *opts, int metrics, s2s_scores *out, s2s_error *err);

/* One hypothesis scored alone against refs[0..nrefs), as `s2s score --sentence`
   (sacreBLEU's -sl) scores each line: BLEU with effective order (its signature says
   eff:yes) and chrF2, those of metrics. Errors as s2s_score's. */
int s2s_score_sentence(const char *hyp, const char *const *refs, size_t nrefs, const s2s_score_options *opts,
                       int metrics, s2s_scores *out, s2s_error *err);

#ifdef __cplusplus
}
#endif

#endif
