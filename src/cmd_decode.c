/* The decoding options that `translate` and `eval` share: parsed by one function, so
   that both spell, bound and default them alike. */
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "commands.h"
#include "model/ensemble.h"
#include "model/match.h"
#include "nn/linalg.h"

const char decode_options_help[] =
    "  -o, --output FILE    write the translations to FILE (a text file: never the\n"
    "                       model, an input or a binary file), replaced only once\n"
    "                       every line is translated\n"
    "  --beam K             beam size (default 5; 1 is greedy decoding)\n"
    "  --length-penalty A   rank finished hypotheses by logprob / len^A, where len\n"
    "                       counts the output tokens and <eos> (default 1.0; 0: raw\n"
    "                       log-probability)\n"
    "  --replace-unk        replace each <unk> in the output by the source token\n"
    "                       with the highest attention weight at that step\n"
    "  --max-len N          at most N output tokens per sentence (default: twice the\n"
    "                       source tokens plus 10)\n"
    "  --batch B            sentences decoded together (default 64)\n"
    "  --precision P        int8 (default), bf16 or f32: the weights of the decoder\n"
    "                       step's products (int8: one scale per row, each input row\n"
    "                       quantized too, exact integer sums)\n"
    "  --threads N          threads (default: all cores)\n";

DecodeArgs decode_args_default(void)
{
    return (DecodeArgs){.to = {.batch = 64, .beam = 5, .nbest = 1, .alpha = 1.0}, .prec = PREC_INT8};
}

bool decode_args_parse(Opts *o, DecodeArgs *d)
{
    if (opts_is(o, "-o") || opts_is(o, "--output") || opts_is(o, "--out"))
        d->output = opts_str(o);
    else if (opts_is(o, "--beam"))
        d->to.beam = (int)opts_long(o, 1, 100);
    else if (opts_is(o, "--length-penalty"))
        d->to.alpha = opts_double(o, 0, 10);
    else if (opts_is(o, "--replace-unk")) {
        opts_bool(o);
        d->to.replace_unk = true;
    }
    else if (opts_is(o, "--max-len"))
        d->to.max_len = (int)opts_long(o, 1, 10000);
    else if (opts_is(o, "--batch"))
        d->to.batch = (int)opts_long(o, 1, 100000);
    else if (opts_is(o, "--precision")) {
        const char *v = opts_str(o);
        int k = precision_from_name(v);
        if (k < 0)
            die_usage("%s: option --precision must be int8, bf16 or f32, got '%s'", o->cmd, v);
        d->prec = (Precision)k;
    }
    else if (opts_is(o, "--threads"))
        d->threads = (int)opts_long(o, 1, 1024);
    else
        return false;
    return true;
}

void decode_args_start(const DecodeArgs *d, const char *const *inputs, size_t n)
{
    Err e;
    if (d->output && file_check_text_output(d->output, "-o", inputs, n, &e) != 0)
        die_err(&e);
    nn_set_threads(d->threads);
}

void decode_models_load(DecodeModels *dm, const char *const *paths, int n, Precision prec)
{
    CHECK(n >= 1);
    Err e;
    dm->n = n;
    dm->files = XNEW(ModelFile, n);
    dm->members = XNEW(Model, n);
    for (int i = 0; i < n; i++) {
        if (model_file_load(&dm->files[i], paths[i], false, &e) != 0)
            die_err(&e);
        if (i && model_match_for_ensemble(&dm->files[0], paths[0], &dm->files[i], paths[i], &e) != 0)
            die_err(&e);
        model_set_precision(&dm->files[i].model, prec);
        dm->members[i] = dm->files[i].model;
    }
    dm->use = dm->files[0];
    if (n > 1)
        model_ensemble_init(&dm->use.model, dm->members, n);
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
    decode_models_load(dm, models, n, d->prec);
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
