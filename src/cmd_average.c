/* s2s average: the mean of the weights of model files of one configuration. */
#include <errno.h>
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

static const char usage[] =
    "usage: s2s average MODEL [MODEL...] -o OUT\n"
    "\n"
    "Writes to OUT a model file whose weights are the means of the MODEL files' weights\n"
    "(each mean computed in double precision, in the order given), for instance the\n"
    "checkpoints that s2s train --keep-checkpoints keeps. The files must share the\n"
    "configuration and both vocabularies; the first difference is an error that names\n"
    "it, and nothing is written. OUT takes the first file's vocabularies and settings;\n"
    "its training summary lists the files averaged. OUT is written atomically and may\n"
    "replace a model file, never another file or one of the inputs.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT   the model file to write\n"
    "  -h, --help         this help\n";

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

int cmd_average(int argc, char **argv)
{
    const char *out = NULL;
    char **inputs = XNEW(char *, (size_t)argc);
    size_t n = 0;
    Opts o;
    opts_init(&o, "average", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o))
            inputs[n++] = (char *)opts_arg(&o, "MODEL");
        else if (opts_is(&o, "-o") || opts_is(&o, "--output"))
            out = opts_str(&o);
        else if (opts_is(&o, "-h") || opts_is(&o, "--help")) {
            fputs(usage, stdout);
            free(inputs);
            return 0;
        } else
            opts_unknown(&o);
    }
    if (n == 0)
        die_usage("average: missing MODEL arguments (see 's2s average --help')");
    if (!out)
        die_usage("average: missing -o OUT (see 's2s average --help')");

    Err e = {0};
    if (check_output(out, inputs, n, &e) != 0)
        die_err(&e);
    ModelFile first;
    if (model_file_load(&first, inputs[0], false, &e) != 0)
        die_err(&e);
    size_t total = first.model.layout.total;
    double *sum = XNEW(double, total);
    for (size_t i = 0; i < total; i++)
        sum[i] = first.model.params[i];
    for (size_t k = 1; k < n; k++) {
        ModelFile mf;
        if (model_file_load(&mf, inputs[k], false, &e) != 0 ||
            model_match_for_average(&first, inputs[0], &mf, inputs[k], &e) != 0)
            die_err(&e);
        for (size_t i = 0; i < total; i++)
            sum[i] += mf.model.params[i];
        model_file_free(&mf);
    }
    Model mean; /* the loaded weights are read-only (a mapped file) */
    model_init(&mean, &first.model.cfg, false);
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
    if (model_file_save(out, &mean, first.src, first.tgt, &first.text, h.data, &e) != 0)
        die_err(&e);
    model_free(&mean);
    printf("%s: the mean of %zu model files (%zu weights each)\n", out, n, total);
    buf_free(&h);
    model_file_free(&first);
    free(inputs);
    return 0;
}
