/* s2s prepare: corpus → train/valid/test splits, vocabularies and a report. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/opt.h"
#include "commands.h"
#include "data/prepare.h"
#include "model/file.h"
#include "text/lang.h"
#include "text/split.h"
#include "text/vocab.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define AT(field) .off = offsetof(PrepareOpts, field)
#define LONG(nm, field, lo, hi) .name = nm, .kind = OPT_LONG, AT(field), .min = lo, .max = hi

/* --bpe-codes: the same file for both sides. */
static int parse_codes_both(const char *v, void *field)
{
    const char **codes = field;
    codes[0] = codes[1] = v;
    return 0;
}

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "options:"},
    {.name = "--output", .alias = "-o", .kind = OPT_STR, AT(dir), .arg = "DIR", .help = "output directory (required)"},
    {.name = "--direction", .kind = OPT_PARSE, AT(direction), .parse = cmd_opt_direction,
     .choices = CMD_DIRECTION_CHOICES, .arg = "en-XX|XX-en",
     .help = "CORPUS's languages, English first, and which column\nis the source; XX an ISO 639 code (default en-fr)"},
    /* --src and --tgt share one help line */
    {.name = "--src", .kind = OPT_STR, AT(src_file), .arg = "FILE, --tgt FILE", .help = "parallel files instead of CORPUS"},
    {.name = "--tgt", .kind = OPT_STR, AT(tgt_file)},
    {.name = "--src-lang", .kind = OPT_PARSE, AT(direction.src), .parse = cmd_opt_lang,
     .choices = "an ISO 639 language code", .arg = "CODE",
     .help = "the language of --src (default: its extension, as in\n"
             "train.de or train.de.gz, when that is a code)"},
    {.name = "--tgt-lang", .kind = OPT_PARSE, AT(direction.tgt), .parse = cmd_opt_lang,
     .choices = "an ISO 639 language code", .arg = "CODE", .help = "the language of --tgt (the same default)"},
    {LONG("--valid", valid, 0, 100000000), .arg = "N",
     .help = "validation pairs (default: 10% of the pairs after the\n"
             "length filter, rounded down, at most " STR(SPLIT_DEFAULT_MAX) ")"},
    {LONG("--test", test, 0, 100000000), .arg = "N", .help = "test pairs (same default as --valid)"},
    {.name = "--valid-files", .kind = OPT_STR2, AT(valid_files), .arg = "SRC TGT",
     .help = "the valid split from these parallel files instead"},
    {.name = "--test-files", .kind = OPT_STR2, AT(test_files), .arg = "SRC TGT",
     .help = "the test split from these parallel files instead;\n"
             "corpus pairs whose source is in either are dropped\n"
             "(counted in prepare.json); the two must not share a\n"
             "source sentence"},
    {LONG("--seed", seed, 0, LONG_MAX), .arg = "S", .help = "shuffling seed (default {}); same seed, same files"},
    {LONG("--min-freq", min_freq, 1, 1000000000), .arg = "K",
     .help = "keep tokens seen at least K times in train (default 2)"},
    {LONG("--max-vocab", max_vocab, VOCAB_NSPECIAL + 1, 100000000), .arg = "V",
     .help = "at most V vocabulary entries, the 4 specials included\n(default: no limit)"},
    {LONG("--max-len", max_len, 0, 100000), .arg = "L",
     .help = "drop pairs with more than L tokens on either side\n(default {}; 0: no limit)"},
    {.name = "--lowercase", .kind = OPT_FALSE, AT(keep_case),
     .help = "lowercase (case folding) when tokenizing; by default\n"
             "case is kept, so that models write cased text and\n"
             "BLEU is case-sensitive as sacreBLEU's default"},
    {.name = "--keep-case", .kind = OPT_TRUE, AT(keep_case), .help = "keep case (the default)"},
    {.name = "--skip-bad", .kind = OPT_TRUE, AT(skip_bad), .help = "skip and count malformed lines instead of failing"},
    {LONG("--bpe", bpe, 1, 10000000), .arg = "N",
     .help = "learn N byte-pair-encoding merges on the training split\n"
             "(after tokenization) and use subword units; writes the\n"
             "merges to DIR/bpe.src and DIR/bpe.tgt (subword-nmt's\n"
             "codes format); --min-freq then defaults to 1"},
    {LONG("--bpe-min-freq", bpe_min_freq, 1, 1000000000), .arg = "K",
     .help = "stop before a pair seen fewer than K times (default {});\n"
             "of pairs seen equally often, the greatest (bytewise:\n"
             "first symbols, then second ones) is merged first"},
    {.name = "--joint", .kind = OPT_TRUE, AT(joint), .help = "one merge list and one vocabulary for both sides"},
    {.name = "--bpe-codes", .kind = OPT_PARSE, AT(bpe_codes), .parse = parse_codes_both, .arg = "FILE",
     .help = "use the merges of FILE (for example from subword-nmt's\n"
             "learn_bpe.py) for both sides instead of learning them"},
    {.name = "--bpe-codes-src", .kind = OPT_STR, AT(bpe_codes[0]), .arg = "FILE",
     .help = "the same for the source side only (words on the other\nside unless --bpe-codes-tgt is given too)"},
    {.name = "--bpe-codes-tgt", .kind = OPT_STR, AT(bpe_codes[1]), .arg = "FILE",
     .help = "the same for the target side only"},
    {.name = "--model", .kind = OPT_STR, AT(model), .arg = "FILE",
     .help = "the languages, case, BPE codes and vocabularies of a\n"
             "model file instead of learned ones, so that the model\n"
             "can go on training on DIR (s2s train DIR --init FILE);\n"
             "prints the share of tokens it cannot represent"},
    OPT_HELP_ROW,
    {0},
};

static const OptTable table = {
    .cmd = "prepare", .rows = rows, .size = sizeof(PrepareOpts), .what = "CORPUS", .col = 26,
    .head = "usage: s2s prepare CORPUS -o DIR [options]\n"
            "       s2s prepare --src FILE --tgt FILE -o DIR [options]\n"
            "\n"
            "Reads a Tatoeba/manythings file (English<TAB>Other[<TAB>attribution] a line), or\n"
            "two parallel plain files (line i of --tgt translates line i of --src); .gz files\n"
            "are decompressed. Tokenizes the pairs, drops over-long ones, splits them into\n"
            "train/valid/test and builds the source and target vocabularies from the training\n"
            "split. Writes to DIR:\n"
            "  train.tsv valid.tsv test.tsv  source<TAB>target a line, the original text\n"
            "  train.ids valid.ids test.ids  the same pairs as token ids, as training reads them\n"
            "  vocab.src vocab.tgt           token<TAB>count a line; <pad> <unk> <bos> <eos> first\n"
            "  bpe.src bpe.tgt               with subwords: each side's merges (codes files)\n"
            "  prepare.json                  options, counts, OOV rates, length histograms\n"
            "DIR is created, with missing parents, when missing. It may exist if it is empty or holds\n"
            "only these files, which are replaced; anything else there is an error. Nothing is\n"
            "written unless the whole corpus is valid. The summary goes to stderr.\n"
            "\n",
    .foot = "\n"
            "Pairs that share a source sentence (after tokenization) always go to the same\n"
            "split, so no source sentence of valid or test occurs in train. Valid and test get\n"
            "whole groups of pairs and never more than N pairs each.\n",
};

/* The options of parallel files: both files, and their languages (given, else from
   their names). */
static void parallel_opts(PrepareOpts *p, const int *seen)
{
    if (p->corpus)
        die_usage("prepare: give CORPUS or --src and --tgt, not both");
    if (!p->src_file || !p->tgt_file)
        die_usage("prepare: option %s needs %s too", p->src_file ? "--src" : "--tgt",
                  p->src_file ? "--tgt" : "--src");
    if (opt_seen(&table, seen, "--direction"))
        die_usage("prepare: option --direction is for a CORPUS file; name the languages of "
                  "--src and --tgt with --src-lang and --tgt-lang");
    const char *file[2] = {p->src_file, p->tgt_file};
    Lang *lang[2] = {&p->direction.src, &p->direction.tgt};
    bool given[2] = {opt_seen(&table, seen, "--src-lang"), opt_seen(&table, seen, "--tgt-lang")};
    for (int k = 0; k < 2; k++)
        if (p->like) { /* the model's languages; a name or a --src-lang that says otherwise is refused */
            const Direction *d = &p->like->text.dir;
            const Lang *want = k ? &d->tgt : &d->src;
            Lang named;
            if (given[k] && strcmp(lang[k]->code, want->code) != 0)
                die_usage("prepare: --%s-lang %s, but %s translates from %s to %s", k ? "tgt" : "src",
                          lang[k]->code, p->model, d->src.code, d->tgt.code);
            if (!given[k] && prepare_lang_from_name(file[k], &named) == 0 && strcmp(named.code, want->code) != 0)
                die_usage("prepare: %s is named as %s text, but %s translates from %s to %s; if it holds %s "
                          "text, give --%s-lang %s", file[k], named.code, p->model, d->src.code, d->tgt.code,
                          want->code, k ? "tgt" : "src", want->code);
            *lang[k] = *want;
        } else if (!given[k] && prepare_lang_from_name(file[k], lang[k]) != 0)
            die_usage("prepare: cannot tell the language of %s from its name (an extension that is a "
                      "language code: .en, .de, .deu, .cmn); give --%s-lang", file[k], k ? "tgt" : "src");
    p->direction = direction_make(p->direction.src, p->direction.tgt);
}

/* The model of --model, loaded once (its codes and vocabularies are borrowed by like). */
static ModelFile model;
static PrepareLike like;

/* --model FILE: the model's languages, case, codes and vocabularies; the options that
   would choose them otherwise are refused, and so is a --direction that differs. */
static void model_opts(PrepareOpts *p, const int *seen)
{
    static const char *const own[] = {"--bpe", "--bpe-codes", "--bpe-codes-src", "--bpe-codes-tgt", "--joint",
                                      "--bpe-min-freq", "--min-freq", "--max-vocab", "--lowercase", "--keep-case"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (opt_seen(&table, seen, own[i]))
            die_usage("prepare: option %s does not apply with --model: the case, codes and vocabularies "
                      "are those of %s", own[i], p->model);
    Err e;
    if (model_file_load(&model, p->model, false, &e) != 0)
        die("prepare: --model %s", e.msg);
    like = prepare_like_model(&model, p->model);
    if (p->said_direction && strcmp(p->direction.name, like.text.dir.name) != 0)
        die_usage("prepare: --direction %s, but %s translates %s", p->direction.name, p->model,
                  like.text.dir.name);
    p->direction = like.text.dir;
    p->said_direction = true;
    p->keep_case = like.text.keep_case;
    p->like = &like;
}

static void parse_args(PrepareOpts *p, int argc, char **argv)
{
    *p = prepare_opts_default();
    p->progress = true;
    int seen[sizeof rows / sizeof *rows];
    opt_parse(&table, p, argc, argv, seen, &p->corpus, 1);
    bool codes = p->bpe_codes[0] || p->bpe_codes[1];
    if (p->bpe && codes)
        die_usage("prepare: --bpe learns merges and --bpe-codes reads them: give one of them");
    if (opt_seen(&table, seen, "--bpe-min-freq") && !p->bpe)
        die_usage("prepare: option --bpe-min-freq needs --bpe");
    if (p->joint && codes && !opt_seen(&table, seen, "--bpe-codes"))
        die_usage("prepare: --joint needs one merge list for both sides: --bpe N or --bpe-codes FILE");
    p->said_direction = opt_seen(&table, seen, "--direction");
    if (p->model)
        model_opts(p, seen);
    if (p->src_file || p->tgt_file)
        parallel_opts(p, seen);
    else if (opt_seen(&table, seen, "--src-lang") || opt_seen(&table, seen, "--tgt-lang"))
        die_usage("prepare: options --src-lang and --tgt-lang name the languages of --src and "
                  "--tgt; for a CORPUS file use --direction");
    else if (!p->corpus)
        die_usage("prepare: missing CORPUS argument (see 's2s prepare --help')");
    if (p->valid_files[0] && p->valid >= 0)
        die_usage("prepare: options --valid and --valid-files exclude each other");
    if (p->test_files[0] && p->test >= 0)
        die_usage("prepare: options --test and --test-files exclude each other");
    if (!p->dir)
        die_usage("prepare: missing option -o DIR (see 's2s prepare --help')");
}

int cmd_prepare(int argc, char **argv)
{
    PrepareOpts po;
    parse_args(&po, argc, argv);
    Buf summary = {0};
    Err e;
    if (prepare_run(&po, &summary, &e) != 0)
        die_err(&e);
    fputs(summary.data ? summary.data : "", stderr);
    buf_free(&summary);
    if (po.like)
        model_file_free(&model);
    return 0;
}
