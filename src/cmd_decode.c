/* The decoding options that `translate`, `eval` and `serve` share (cmd_search.h), and
   the model files that translate and eval decode with (cmd_decode.h). */
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "cmd_decode.h"
#include "model/ensemble.h"
#include "model/match.h"
#include "nn/linalg.h"

_Static_assert(sizeof(s2s_precision) == sizeof(int), "--precision is an OPT_ENUM field");

const char *const decode_precision_names[3] = {
    [S2S_PRECISION_INT8] = "int8", [S2S_PRECISION_BF16] = "bf16", [S2S_PRECISION_F32] = "f32"};

DecodeArgs decode_args_default(void)
{
    return (DecodeArgs){.o = s2s_translator_options_default()};
}

TranslateOpts decode_translate_opts(const DecodeArgs *d)
{
    const s2s_translator_options *o = &d->o;
    return (TranslateOpts){.batch = o->batch, .max_len = o->max_len, .beam = o->beam, .nbest = o->nbest,
                           .alpha = o->length_penalty, .replace_unk = o->replace_unk != 0,
                           .split = o->split != 0, .copy_numbers = o->copy_numbers != 0};
}

Precision decode_precision(const DecodeArgs *d)
{
    return d->o.precision == S2S_PRECISION_F32 ? PREC_F32 : d->o.precision == S2S_PRECISION_BF16 ? PREC_BF16 : PREC_INT8;
}

void decode_args_start(const DecodeArgs *d, const char *const *inputs, size_t n)
{
    Err e;
    if (d->output && file_check_text_output(d->output, "-o", inputs, n, &e) != 0)
        die_err(&e);
    nn_set_threads(d->o.threads);
}

/* The file dm->files[i] (paths[i]) joins dm: checked against the first, its decoding
   products in prec. */
static void decode_models_add(DecodeModels *dm, int i, const char *const *paths, Precision prec)
{
    Err e;
    if (i && model_match_for_ensemble(&dm->files[0], paths[0], &dm->files[i], paths[i], &e) != 0)
        die_err(&e);
    model_set_precision(&dm->files[i].model, prec);
    dm->members[i] = dm->files[i].model;
}

static void decode_models_alloc(DecodeModels *dm, int n)
{
    CHECK(n >= 1);
    dm->n = n;
    dm->files = XNEW(ModelFile, n);
    dm->members = XNEW(Model, n);
}

static void decode_models_finish(DecodeModels *dm)
{
    dm->use = dm->files[0];
    if (dm->n > 1)
        model_ensemble_init(&dm->use.model, dm->members, dm->n);
}

void decode_models_load(DecodeModels *dm, const char *const *paths, int n, Precision prec)
{
    decode_models_alloc(dm, n);
    for (int i = 0; i < n; i++) {
        Err e;
        if (model_file_load(&dm->files[i], paths[i], false, &e) != 0)
            die_err(&e);
        decode_models_add(dm, i, paths, prec);
    }
    decode_models_finish(dm);
}

void decode_start(const DecodeArgs *d, const char *const *models, int n, const char *input,
                  DecodeModels *dm)
{
    const char **inputs = XNEW(const char *, n + 1);
    for (int i = 0; i < n; i++)
        inputs[i] = models[i];
    inputs[n] = input;
    decode_args_start(d, inputs, (size_t)n + 1);
    free(inputs);
    decode_models_load(dm, models, n, decode_precision(d));
}

void decode_models_free(DecodeModels *dm)
{
    if (dm->n > 1)
        model_ensemble_free(&dm->use.model);
    for (int i = 0; i < dm->n; i++) {
        dm->files[i].model = dm->members[i];
        model_file_free(&dm->files[i]);
    }
    free(dm->files);
    free(dm->members);
}
