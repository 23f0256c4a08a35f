/* s2s export: a model file in another engine's format (CTranslate2's), through the
   library's interface (include/s2s.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/opt.h"
#include "cmd_search.h"
#include "commands.h"
#include "s2s.h"

typedef struct ExportArgs {
    bool ctranslate2;
} ExportArgs;

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--ctranslate2", .kind = OPT_TRUE, .off = offsetof(ExportArgs, ctranslate2),
     .help = "CTranslate2's model format (the one format; required)"},
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "export", .rows = rows, .size = sizeof(ExportArgs), .what = "MODEL DIR", .col = 18,
    .head = "usage: s2s export --ctranslate2 MODEL DIR\n"
            "\n"
            "Writes the Transformer of the model file MODEL to the directory DIR in\n"
            "CTranslate2's model format (TransformerSpec), in float32: model.bin, config.json,\n"
            "the vocabularies, the BPE codes of each side (source.bpe, target.bpe) and\n"
            "TOKENIZATION.txt, which says how text goes in and out (s2s tokenize). Any tool\n"
            "built on CTranslate2 can then run it, quantized as it loads it (int8 and others).\n"
            "DIR must not exist or be an empty directory; it appears only when every file is\n"
            "complete. A recurrent model, or several MODEL files (an ensemble), are refused:\n"
            "CTranslate2 has no such model kind. docs/cli/export.md has the details.\n"
            "\n",
    .foot = "",
};

int cmd_export(int argc, char **argv)
{
    ExportArgs args = {0};
    const char **pos = XNEW(const char *, (size_t)argc);
    int seen[sizeof rows / sizeof *rows];
    int n = opt_parse(&table, &args, argc, argv, seen, pos, argc);
    if (!args.ctranslate2) {
        free(pos);
        die_usage("export: missing the format, --ctranslate2 (see 's2s export --help')");
    }
    if (n < 2) {
        free(pos);
        die_usage("export: expected MODEL DIR (see 's2s export --help')");
    }
    if (n > 2) {
        int models = n - 1;
        free(pos);
        die_usage("export: %d MODEL files: an ensemble cannot be exported, CTranslate2 has no such model "
                  "kind; export one MODEL at a time",
                  models);
    }
    const char *model = pos[0], *dir = pos[1];
    free(pos);
    s2s_translator *tr = cmd_load_as_stored(model);
    s2s_error err;
    if (s2s_export_ctranslate2(tr, dir, &err) != 0) {
        s2s_translator_free(tr);
        die("%s", err.message);
    }
    printf("%s: %s in CTranslate2's format (TransformerSpec, float32)\n", dir, model);
    s2s_translator_free(tr);
    return 0;
}
