/* s2s average: the mean of the weights of model files of one configuration. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "base/safetensors.h"
#include "commands.h"
#include "model/file.h"
#include "model/match.h"
#include "train/outputs.h"
#include "train/trainer.h"

typedef struct AverageArgs {
    const char *out;
} AverageArgs;

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--output", .alias = "-o", .kind = OPT_STR, .off = offsetof(AverageArgs, out), .arg = "OUT",
     .help = "the model file to write"},
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "average", .rows = rows, .size = sizeof(AverageArgs), .what = "MODEL", .col = 21,
    .head = "usage: s2s average MODEL [MODEL...] -o OUT\n"
            "\n"
            "Writes to OUT a model file whose weights are the means of the MODEL files' weights\n"
            "(each mean computed in double precision, in the order given), for instance the\n"
            "checkpoints that s2s train --keep-checkpoints keeps. The files must share the\n"
            "configuration and both vocabularies; the first difference is an error that names\n"
            "it, and nothing is written. OUT takes the first file's vocabularies and settings;\n"
            "its training summary lists the files averaged. OUT is written atomically and may\n"
            "replace a model file, never another file or one of the inputs.\n"
            "\n"
            "A MODEL may also be a training state, MODEL.state: it stands for the weights that\n"
            "training ran on, before their moving average (s2s train --ema), with the\n"
            "configuration and vocabularies of MODEL.last, written at the same checkpoint.\n"
            "'s2s average m.s2s.state -o raw.s2s' gives the model without the average.\n"
            "\n",
    .foot = "",
};

static int check_output(const char *out, char *const *inputs, size_t n, Err *e)
{
    if (file_check_not_input(out, "-o", (const char *const *)inputs, n, e) != 0)
        return -1;
    struct stat st;
    if (lstat(out, &st) != 0)
        return errno == ENOENT ? 0 : err_set(e, "%s: %s", out, strerror(errno));
    if (S_ISREG(st.st_mode) && st_has_format(out, ST_FORMAT_MODEL))
        return 0;
    if (S_ISLNK(st.st_mode) && stat(out, &st) == 0 && S_ISREG(st.st_mode) && st_has_format(out, ST_FORMAT_MODEL))
        return 0;
    return err_set(e, "%s: exists and is not an s2s model file; refusing to replace it; choose another -o", out);
}

/* One MODEL argument: a model file, or a training state standing for its weights. */
typedef struct Input {
    ModelFile mf;   /* the model file, or for a state the MODEL.last beside it */
    StFile *state;  /* a state's mapping, or NULL */
    const real *w;  /* the weights to average */
} Input;

/* For a training state MODEL.state, the MODEL.last beside it (fresh); NULL for any other
   file. A state with another name is an error (*companion NULL, -1). */
static int state_companion(const char *path, char **companion, Err *e)
{
    *companion = NULL;
    if (!st_has_format(path, TRAIN_FORMAT_STATE))
        return 0;
    size_t n = strlen(path), k = strlen(".state");
    if (n <= k || strcmp(path + n - k, ".state") != 0)
        return err_set(e, "%s: a training state, but not named MODEL.state: its model file MODEL.last "
                          "cannot be found", path);
    char *stem = xstrdup(path);
    stem[n - k] = '\0';
    *companion = path_suffixed(stem, ".last");
    free(stem);
    return 0;
}

static int input_load(Input *in, const char *path, const char *companion, Err *e)
{
    in->state = NULL;
    if (model_file_load(&in->mf, companion ? companion : path, false, e) != 0)
        return -1;
    in->w = in->mf.model.params;
    if (companion && train_state_weights(path, &in->mf, companion, &in->state, &in->w, e) != 0) {
        model_file_free(&in->mf);
        return -1;
    }
    return 0;
}

static void input_free(Input *in)
{
    if (in->state)
        st_close(in->state);
    model_file_free(&in->mf);
}

int cmd_average(int argc, char **argv)
{
    AverageArgs args = {0};
    char **inputs = XNEW(char *, (size_t)argc);
    int seen[sizeof rows / sizeof *rows];
    size_t n = (size_t)opt_parse(&table, &args, argc, argv, seen, (const char **)inputs, argc);
    const char *out = args.out;
    if (n == 0)
        die_usage("average: missing MODEL arguments (see 's2s average --help')");
    if (!out)
        die_usage("average: missing -o OUT (see 's2s average --help')");

    Err e = {0};
    /* the inputs and the MODEL.last files that states are read with: none may be OUT */
    char **read = XNEW(char *, 2 * n), **companion = XCNEW(char *, n);
    size_t n_read = 0;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        rc = state_companion(inputs[k], &companion[k], &e);
        read[n_read++] = inputs[k];
        if (companion[k])
            read[n_read++] = companion[k];
    }
    if (rc == 0)
        rc = check_output(out, read, n_read, &e);
    free(read);
    if (rc != 0) { /* nothing allocated is left behind for the leak checker */
        for (size_t k = 0; k < n; k++)
            free(companion[k]);
        free(companion);
        free(inputs);
        die_err(&e);
    }
    Input first;
    if (input_load(&first, inputs[0], companion[0], &e) != 0)
        die_err(&e);
    size_t total = first.mf.model.layout.total;
    double *sum = XNEW(double, total);
    for (size_t i = 0; i < total; i++)
        sum[i] = first.w[i];
    for (size_t k = 1; k < n; k++) {
        Input in;
        if (input_load(&in, inputs[k], companion[k], &e) != 0 ||
            model_match_for_average(&first.mf, inputs[0], &in.mf, inputs[k], &e) != 0)
            die_err(&e);
        for (size_t i = 0; i < total; i++)
            sum[i] += in.w[i];
        input_free(&in);
    }
    Model mean; /* the loaded weights are read-only (a mapped file) */
    model_init(&mean, &first.mf.model.cfg, false);
    for (size_t i = 0; i < total; i++)
        mean.params[i] = (real)(sum[i] / (double)n);
    free(sum);

    Buf h = {0};
    buf_puts(&h, "{\"average_of\": [");
    for (size_t k = 0; k < n; k++) {
        if (k)
            buf_puts(&h, ", ");
        buf_json_str(&h, inputs[k], strlen(inputs[k]));
    }
    buf_puts(&h, "]}");
    if (model_file_save(out, &mean, first.mf.src, first.mf.tgt, &first.mf.text, h.data, &e) != 0)
        die_err(&e);
    model_free(&mean);
    if (n == 1)
        printf("%s: the weights of %s (%zu)\n", out, inputs[0], total);
    else
        printf("%s: the mean of %zu model files (%zu weights each)\n", out, n, total);
    buf_free(&h);
    input_free(&first);
    for (size_t k = 0; k < n; k++)
        free(companion[k]);
    free(companion);
    free(inputs);
    return 0;
}
