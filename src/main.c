/* s2s: the subcommand table. */
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "commands.h"

#define S2S_VERSION "0.1.0"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    /* commands: one line each, in the order `s2s --help` lists them */
    {"prepare", cmd_prepare, "split a corpus into train/valid/test and build vocabularies"},
    {"train", cmd_train, "train an encoder-decoder with attention"},
    {"translate", cmd_translate, "translate sentences with a model file"},
    {"eval", cmd_eval, "translate a TSV file's sources and score them (BLEU, chrF)"},
    {"info", cmd_info, "show a model file's configuration, sizes and training summary"},
    {"tokenize", cmd_tokenize, "tokenize or detokenize text on stdin, line by line"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: s2s COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; commands[i].name; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n's2s COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("s2s %s\n", S2S_VERSION);
        return 0;
    }
    for (size_t i = 0; commands[i].name; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    die_usage("unknown command '%s' (see 's2s --help')", name);
}
