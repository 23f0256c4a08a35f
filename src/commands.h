/* The subcommands, one file each (src/cmd_NAME.c). argv[0] is the subcommand name. */
#ifndef S2S_COMMANDS_H
#define S2S_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/opt.h"
#include "decode/translate.h"
#include "model/file.h"
#include "nn/quant.h"

int cmd_prepare(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* OPT_PARSE parsers (base/opt.h): an ISO 639 code into a Lang, a --direction
   (en-XX or XX-en) into a Direction. */
int cmd_opt_lang(const char *value, void *field);
int cmd_opt_direction(const char *value, void *field);
#define CMD_DIRECTION_CHOICES "en-XX or XX-en with XX an ISO 639 language code"

/* The decoding options of translate and eval (src/cmd_decode.c). */
typedef struct DecodeArgs {
    TranslateOpts to;    /* beam, length penalty, unknown-word replacement, limits */
    const char *output;  /* -o/--output FILE, or NULL */
    int threads;         /* 0: the cores free now (base/cores.h) */
    Precision prec;      /* --precision: the vocabulary projection's weights */
} DecodeArgs;

/* Their defaults. */
DecodeArgs decode_args_default(void);
/* Their rows in the option table (base/opt.h) of a command whose options struct T
   holds them as the member d. */
#define DECODE_OPTION_ROWS(T, d)                                                                           \
    {.name = "--output", .alias = "-o", .kind = OPT_STR, .off = offsetof(T, d.output), .arg = "FILE",     \
     .help = "write the translations to FILE (a text file: never the\n"                                   \
             "model, an input or a binary file), replaced only once\n"                                    \
             "every line is translated"},                                                                  \
    {.name = "--out", .kind = OPT_STR, .off = offsetof(T, d.output)},                                      \
    DECODE_SEARCH_ROWS(T, d)
/* The rows without the output file (s2s serve). */
#define DECODE_SEARCH_ROWS(T, d)                                                                           \
    {.name = "--beam", .kind = OPT_INT, .off = offsetof(T, d.to.beam), .min = 1, .max = 100, .arg = "K",  \
     .help = "beam size (default {}; 1 is greedy decoding)"},                                              \
    {.name = "--length-penalty", .kind = OPT_DOUBLE, .off = offsetof(T, d.to.alpha), .fmin = 0, .fmax = 10, \
     .arg = "A",                                                                                           \
     .help = "rank finished hypotheses by logprob / len^A, where len\n"                                   \
             "counts the output tokens and <eos> (default 1.0; 0: raw\n"                                  \
             "log-probability)"},                                                                          \
    {.name = "--replace-unk", .kind = OPT_TRUE, .off = offsetof(T, d.to.replace_unk),                      \
     .help = "replace each <unk> in the output by the source token\n"                                     \
             "with the highest attention weight at that step"},                                            \
    {.name = "--no-split", .kind = OPT_FALSE, .off = offsetof(T, d.to.split),                               \
     .help = "translate each line whole: without it a line is split\n"                                   \
             "into sentences, translated one by one and joined by\n"                                     \
             "spaces (never with --nbest or the attention options)"},                                      \
    {.name = "--no-copy-numbers", .kind = OPT_FALSE, .off = offsetof(T, d.to.copy_numbers),                \
     .help = "let the model write numbers as it will: without it\n"                                      \
             "every number of a source (a word of digits) must\n"                                        \
             "appear in its translation (docs/constraints.md)"},                                           \
    {.name = "--max-len", .kind = OPT_INT, .off = offsetof(T, d.to.max_len), .min = 1, .max = 10000,       \
     .arg = "N",                                                                                           \
     .help = "at most N output tokens per sentence (default: twice the\n"                                 \
             "source tokens plus 10)"},                                                                    \
    {.name = "--batch", .kind = OPT_INT, .off = offsetof(T, d.to.batch), .min = 1, .max = 100000,          \
     .arg = "B", .help = "sentences decoded together (default {})"},                                       \
    {.name = "--precision", .kind = OPT_ENUM, .off = offsetof(T, d.prec), .names = precision_names,        \
     .min = 0, .max = PREC_KINDS - 1, .choices = "int8, bf16 or f32", .arg = "P",                          \
     .help = "int8 (default), bf16 or f32: the weights of the decoder\n"                                  \
             "step's products (int8: one scale per row, each input row\n"                                 \
             "quantized too, exact integer sums; bf16 halves f32's\n"                                     \
             "memory but decodes slower than f32 on a CPU without\n"                                      \
             "bf16 arithmetic)"},                                                                          \
    {.name = "--threads", .kind = OPT_INT, .off = offsetof(T, d.threads), .min = 1, .max = 1024,          \
     .arg = "N", .help = "threads (default: the cores other processes leave free)"}

/* The model files translate and eval decode with: one, or an ensemble of several with
   the same vocabularies and tokenizer settings (model/match.h). use is what decoding
   takes: the first file's vocabularies and settings, and the ensemble's model when
   there are several. Dies with the first file that cannot be loaded or does not match. */
typedef struct DecodeModels {
    ModelFile *files;
    Model *members;
    int n;
    ModelFile use;
} DecodeModels;
void decode_models_load(DecodeModels *dm, const char *const *paths, int n, Precision prec);
/* The same over files already loaded from paths (files[0..n), which dm takes over:
   decode_models_free frees them). */
void decode_models_take(DecodeModels *dm, const ModelFile *files, const char *const *paths, int n, Precision prec);
void decode_models_free(DecodeModels *dm);

/* Before decoding: refuses an output that is an input, the model or a binary file
   (base/file.h; exits 1), and sets the threads. */
void decode_args_start(const DecodeArgs *d, const char *const *inputs, size_t n);
/* decode_args_start on the model files models[0..n) and input (NULL: none), then
   decode_models_load of the models. */
void decode_start(const DecodeArgs *d, const char *const *models, int n, const char *input,
                  DecodeModels *dm);

#endif
