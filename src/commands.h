/* The subcommands, one file each (src/cmd_NAME.c). argv[0] is the subcommand name. */
#ifndef S2S_COMMANDS_H
#define S2S_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/opt.h"
#include "decode/translate.h"
#include "model/file.h"

int cmd_prepare(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_average(int argc, char **argv);

/* OPT_PARSE parsers (base/opt.h): an ISO 639 code into a Lang, a --direction
   (en-XX or XX-en) into a Direction. */
int cmd_opt_lang(const char *value, void *field);
int cmd_opt_direction(const char *value, void *field);
#define CMD_DIRECTION_CHOICES "en-XX or XX-en with XX an ISO 639 language code"

/* The decoding options of translate and eval (src/cmd_decode.c). */
typedef struct DecodeArgs {
    TranslateOpts to;    /* beam, length penalty, unknown-word replacement, limits */
    const char *output;  /* -o/--output FILE, or NULL */
    int threads;         /* 0: all cores */
    Precision prec;      /* --precision: the vocabulary projection's weights */
} DecodeArgs;

/* Their help lines, and their defaults. */
extern const char decode_options_help[];
DecodeArgs decode_args_default(void);
/* Takes the current option of o when it is one of them; false otherwise. */
bool decode_args_parse(Opts *o, DecodeArgs *d);
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
void decode_models_free(DecodeModels *dm);

/* Before decoding: refuses an output that is an input, the model or a binary file
   (base/file.h; exits 1), and sets the threads. */
void decode_args_start(const DecodeArgs *d, const char *const *inputs, size_t n);

#endif
