/* s2s prepare: corpus → train/valid/test splits, vocabularies and a report. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/opt.h"
#include "commands.h"
#include "data/prepare.h"
#include "text/lang.h"
#include "text/split.h"
#include "text/vocab.h"

static void usage(FILE *out)
{
    fprintf(out,
"usage: s2s prepare CORPUS -o DIR [options]\n"
"       s2s prepare --src FILE --tgt FILE -o DIR [options]\n"
"\n"
"Reads a Tatoeba/manythings file (English<TAB>Other[<TAB>attribution] a line), or\n"
"two parallel plain files (line i of --tgt translates line i of --src); .gz files\n"
"are decompressed. Tokenizes the pairs, drops over-long ones, splits them into\n"
"train/valid/test and builds the source and target vocabularies from the training\n"
"split. Writes to DIR:\n"
"  train.tsv valid.tsv test.tsv  source<TAB>target a line, the original text\n"
"  vocab.src vocab.tgt           token<TAB>count a line; <pad> <unk> <bos> <eos> first\n"
"  prepare.json                  options, counts, OOV rates, length histograms\n"
"DIR is created, with missing parents, when missing. It may exist if it is empty or holds\n"
"only these files, which are replaced; anything else there is an error. Nothing is\n"
"written unless the whole corpus is valid. The summary goes to stderr.\n"
"\n"
"options:\n"
"  -o, --output DIR        output directory (required)\n"
"  --direction en-XX|XX-en CORPUS's languages, English first, and which column\n"
"                          is the source; XX an ISO 639 code (default en-fr)\n"
"  --src FILE, --tgt FILE  parallel files instead of CORPUS\n"
"  --src-lang CODE         the language of --src (default: its extension, as in\n"
"  --tgt-lang CODE         train.de or train.de.gz, when that is a code)\n"
"  --valid N               validation pairs (default: 10%% of the pairs after the\n"
"                          length filter, rounded down, at most %d)\n"
"  --test N                test pairs (same default as --valid)\n"
"  --valid-files SRC TGT   the valid split from these parallel files instead\n"
"  --test-files SRC TGT    the test split from these parallel files instead;\n"
"                          corpus pairs whose source is in either are dropped\n"
"                          (counted in prepare.json); the two must not share a\n"
"                          source sentence\n"
"  --seed S                shuffling seed (default 1); same seed, same files\n"
"  --min-freq K            keep tokens seen at least K times in train (default 2)\n"
"  --max-vocab V           at most V vocabulary entries, the 4 specials included\n"
"                          (default: no limit)\n"
"  --max-len L             drop pairs with more than L tokens on either side\n"
"                          (default 50; 0: no limit)\n"
"  --lowercase             lowercase (case folding) when tokenizing; by default\n"
"                          case is kept, so that models write cased text and\n"
"                          BLEU is case-sensitive as sacreBLEU's default\n"
"  --keep-case             keep case (the default)\n"
"  --skip-bad              skip and count malformed lines instead of failing\n"
"  --bpe N                 learn N byte-pair-encoding merges on the training split\n"
"                          (after tokenization) and use subword units; writes the\n"
"                          merges to DIR/bpe.src and DIR/bpe.tgt (subword-nmt's\n"
"                          codes format); --min-freq then defaults to 1\n"
"  --bpe-min-freq K        stop before a pair seen fewer than K times (default 2);\n"
"                          of pairs seen equally often, the greatest (bytewise:\n"
"                          first symbols, then second ones) is merged first\n"
"  --joint                 one merge list and one vocabulary for both sides\n"
"  --bpe-codes FILE        use the merges of FILE (for example from subword-nmt's\n"
"                          learn_bpe.py) for both sides instead of learning them\n"
"  --bpe-codes-src FILE    the same for the source side only (words on the other\n"
"                          side unless --bpe-codes-tgt is given too)\n"
"  --bpe-codes-tgt FILE    the same for the target side only\n"
"  -h, --help              this help\n"
"\n"
"Pairs that share a source sentence (after tokenization) always go to the same\n"
"split, so no source sentence of valid or test occurs in train. Valid and test get\n"
"whole groups of pairs and never more than N pairs each.\n",
            SPLIT_DEFAULT_MAX);
}

static void parse_args(PrepareOpts *p, int argc, char **argv)
{
    *p = prepare_opts_default();
    p->progress = true;
    int langs_given = 0; /* bit 0: --src-lang, bit 1: --tgt-lang */
    bool direction_given = false;
    bool bpe_min_freq_given = false, codes_both = false;
    Opts o;
    opts_init(&o, "prepare", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o)) {
            if (p->corpus)
                opts_unknown(&o);
            p->corpus = opts_arg(&o, "CORPUS");
        } else if (opts_is(&o, "--src")) {
            p->src_file = opts_str(&o);
        } else if (opts_is(&o, "--tgt")) {
            p->tgt_file = opts_str(&o);
        } else if (opts_is(&o, "--src-lang") || opts_is(&o, "--tgt-lang")) {
            bool src = opts_is(&o, "--src-lang");
            const char *v = opts_str(&o);
            if (lang_parse(v, src ? &p->direction.src : &p->direction.tgt) != 0)
                die_usage("prepare: option --%s-lang must be an ISO 639 language code, got '%s'",
                          src ? "src" : "tgt", v);
            langs_given |= src ? 1 : 2;
        } else if (opts_is(&o, "--help") || opts_is(&o, "-h")) {
            usage(stdout);
            exit(0);
        } else if (opts_is(&o, "-o") || opts_is(&o, "--output")) {
            p->dir = opts_str(&o);
        } else if (opts_is(&o, "--direction")) {
            const char *v = opts_str(&o);
            Direction d;
            if (prepare_direction_parse(v, &d) != 0)
                die_usage("prepare: option --direction must be en-XX or XX-en with XX an ISO 639 "
                          "language code, got '%s'", v);
            p->direction = d;
            direction_given = true;
        } else if (opts_is(&o, "--valid-files")) {
            opts_str2(&o, &p->valid_files[0], &p->valid_files[1]);
        } else if (opts_is(&o, "--test-files")) {
            opts_str2(&o, &p->test_files[0], &p->test_files[1]);
        } else if (opts_is(&o, "--valid")) {
            p->valid = opts_long(&o, 0, 100000000);
        } else if (opts_is(&o, "--test")) {
            p->test = opts_long(&o, 0, 100000000);
        } else if (opts_is(&o, "--seed")) {
            p->seed = opts_long(&o, 0, LONG_MAX);
        } else if (opts_is(&o, "--min-freq")) {
            p->min_freq = opts_long(&o, 1, 1000000000);
        } else if (opts_is(&o, "--max-vocab")) {
            p->max_vocab = opts_long(&o, VOCAB_NSPECIAL + 1, 100000000);
        } else if (opts_is(&o, "--max-len")) {
            p->max_len = opts_long(&o, 0, 100000);
        } else if (opts_is(&o, "--lowercase")) {
            opts_bool(&o);
            p->keep_case = false;
        } else if (opts_is(&o, "--keep-case")) {
            opts_bool(&o);
            p->keep_case = true;
        } else if (opts_is(&o, "--skip-bad")) {
            opts_bool(&o);
            p->skip_bad = true;
        } else if (opts_is(&o, "--bpe")) {
            p->bpe = opts_long(&o, 1, 10000000);
        } else if (opts_is(&o, "--bpe-min-freq")) {
            p->bpe_min_freq = opts_long(&o, 1, 1000000000);
            bpe_min_freq_given = true;
        } else if (opts_is(&o, "--joint")) {
            opts_bool(&o);
            p->joint = true;
        } else if (opts_is(&o, "--bpe-codes")) {
            p->bpe_codes[0] = p->bpe_codes[1] = opts_str(&o);
            codes_both = true;
        } else if (opts_is(&o, "--bpe-codes-src")) {
            p->bpe_codes[0] = opts_str(&o);
        } else if (opts_is(&o, "--bpe-codes-tgt")) {
            p->bpe_codes[1] = opts_str(&o);
        } else {
            opts_unknown(&o);
        }
    }
    bool codes = p->bpe_codes[0] || p->bpe_codes[1];
    if (p->bpe && codes)
        die_usage("prepare: --bpe learns merges and --bpe-codes reads them: give one of them");
    if (bpe_min_freq_given && !p->bpe)
        die_usage("prepare: option --bpe-min-freq needs --bpe");
    if (p->joint && codes && !codes_both)
        die_usage("prepare: --joint needs one merge list for both sides: --bpe N or --bpe-codes FILE");
    if (p->src_file || p->tgt_file) {
        if (p->corpus)
            die_usage("prepare: give CORPUS or --src and --tgt, not both");
        if (!p->src_file || !p->tgt_file)
            die_usage("prepare: option %s needs %s too", p->src_file ? "--src" : "--tgt",
                      p->src_file ? "--tgt" : "--src");
        if (direction_given)
            die_usage("prepare: option --direction is for a CORPUS file; name the languages of "
                      "--src and --tgt with --src-lang and --tgt-lang");
        const char *file[2] = {p->src_file, p->tgt_file};
        Lang *lang[2] = {&p->direction.src, &p->direction.tgt};
        for (int k = 0; k < 2; k++)
            if (!(langs_given & (1 << k)) && prepare_lang_from_name(file[k], lang[k]) != 0)
                die_usage("prepare: cannot tell the language of %s from its name; give --%s-lang",
                          file[k], k ? "tgt" : "src");
        p->direction = direction_make(p->direction.src, p->direction.tgt);
    } else if (langs_given) {
        die_usage("prepare: options --src-lang and --tgt-lang name the languages of --src and "
                  "--tgt; for a CORPUS file use --direction");
    } else if (!p->corpus) {
        die_usage("prepare: missing CORPUS argument (see 's2s prepare --help')");
    }
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
    return 0;
}
