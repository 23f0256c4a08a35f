/* The model files that `translate` and `eval` decode with (src/cmd_decode.c). */
#ifndef S2S_CMD_DECODE_H
#define S2S_CMD_DECODE_H

#include <stddef.h>

#include "cmd_search.h"
#include "decode/translate.h"
#include "model/file.h"
#include "nn/quant.h"

/* The decoding options as the decoder takes them (nbest as given: 0 stays 0), and
   the precision of the products. */
TranslateOpts decode_translate_opts(const DecodeArgs *d);
Precision decode_precision(const DecodeArgs *d);

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
/* decode_args_start on the model files models[0..n) and input (NULL: none), then
   decode_models_load of the models. */
void decode_start(const DecodeArgs *d, const char *const *models, int n, const char *input,
                  DecodeModels *dm);

#endif
