/* The decoding options that `translate`, `eval` and `serve` share (src/cmd_search.c),
   in the library's terms (include/s2s.h): the rows of their tables and one default, so
   that the three spell, bound and default them alike. */
#ifndef S2S_CMD_SEARCH_H
#define S2S_CMD_SEARCH_H

#include <stddef.h>

#include "base/opt.h"
#include "s2s.h"

typedef struct DecodeArgs {
    s2s_translator_options o; /* beam, length penalty, splitting, limits, precision,
                                 threads (0: the cores other processes leave free) */
    const char *output;       /* -o/--output FILE, or NULL */
} DecodeArgs;

/* --precision's values, by s2s_precision: "int8", "bf16", "f32". */
extern const char *const decode_precision_names[3];

/* Their defaults: s2s_translator_options_default's, threads 0. */
DecodeArgs decode_args_default(void);

/* The model file path loaded as translate loads it (every check), its weights left as
   stored (f32, one thread): what info and export read. Dies with the library's message. */
s2s_translator *cmd_load_as_stored(const char *path);

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
    {.name = "--beam", .kind = OPT_INT, .off = offsetof(T, d.o.beam), .min = 1, .max = 100, .arg = "K",  \
     .help = "beam size (default {}; 1 is greedy decoding)"},                                              \
    {.name = "--length-penalty", .kind = OPT_DOUBLE, .off = offsetof(T, d.o.length_penalty), .fmin = 0, .fmax = 10, \
     .arg = "A",                                                                                           \
     .help = "rank finished hypotheses by logprob / len^A, where len\n"                                   \
             "counts the output tokens and <eos> (default 1.0; 0: raw\n"                                  \
             "log-probability)"},                                                                          \
    {.name = "--replace-unk", .kind = OPT_TRUE, .off = offsetof(T, d.o.replace_unk), .flags = OPT_INT_FLAG, \
     .help = "replace each <unk> in the output by the source token\n"                                     \
             "with the highest attention weight at that step"},                                            \
    {.name = "--no-split", .kind = OPT_FALSE, .off = offsetof(T, d.o.split), .flags = OPT_INT_FLAG,         \
     .help = "translate each line whole: without it a line is split\n"                                   \
             "into sentences, translated one by one and joined by\n"                                     \
             "spaces (never with --nbest or the attention options)"},                                      \
    {.name = "--no-copy-numbers", .kind = OPT_FALSE, .off = offsetof(T, d.o.copy_numbers),                 \
     .flags = OPT_INT_FLAG,                                                                                \
     .help = "let the model write numbers as it will: without it\n"                                      \
             "every number of a source (a word of digits) must\n"                                        \
             "appear in its translation (docs/constraints.md)"},                                           \
    {.name = "--max-len", .kind = OPT_INT, .off = offsetof(T, d.o.max_len), .min = 1, .max = 10000,       \
     .arg = "N",                                                                                           \
     .help = "at most N output tokens per sentence (default: twice the\n"                                 \
             "source tokens plus 10)"},                                                                    \
    {.name = "--batch", .kind = OPT_INT, .off = offsetof(T, d.o.batch), .min = 1, .max = 100000,          \
     .arg = "B", .help = "sentences decoded together (default {})"},                                       \
    {.name = "--precision", .kind = OPT_ENUM, .off = offsetof(T, d.o.precision),                            \
     .names = decode_precision_names, .min = 0, .max = 2, .choices = "int8, bf16 or f32", .arg = "P",      \
     .help = "int8 (default), bf16 or f32: the weights of the decoder\n"                                  \
             "step's products (int8: one scale per row, each input row\n"                                 \
             "quantized too, exact integer sums; bf16 halves f32's\n"                                     \
             "memory but decodes slower than f32 on a CPU without\n"                                      \
             "bf16 arithmetic)"},                                                                          \
    {.name = "--threads", .kind = OPT_INT, .off = offsetof(T, d.o.threads), .min = 1, .max = 1024,          \
     .arg = "N", .help = "threads (default: the cores other processes leave free)"}

#endif
