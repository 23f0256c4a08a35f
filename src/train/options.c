#include "train/options.h"

#include <limits.h>
#include <stddef.h>

#include "data/prepare.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The field of a row, its kind, and its bounds. */
#define AT(field) .off = offsetof(TrainOpts, field)
#define FLAG(nm, kd, field) .name = nm, .kind = kd, AT(field)
#define INT(nm, field, lo, hi) .name = nm, .kind = OPT_INT, AT(field), .min = lo, .max = hi
#define LONG(nm, field, lo, hi) .name = nm, .kind = OPT_LONG, AT(field), .min = lo, .max = hi
#define REAL(nm, kd, field, lo, hi) .name = nm, .kind = kd, AT(field), .fmin = lo, .fmax = hi
#define ENUM(nm, field, list, lo, hi) .name = nm, .kind = OPT_ENUM, AT(field), .names = list, .min = lo, .max = hi

_Static_assert(sizeof(Arch) == sizeof(int) && sizeof(Cell) == sizeof(int) && sizeof(AttnKind) == sizeof(int) &&
                   sizeof(LocalKind) == sizeof(int) && sizeof(BridgeKind) == sizeof(int) &&
                   sizeof(NormKind) == sizeof(int) && sizeof(PosKind) == sizeof(int) &&
                   sizeof(SchedKind) == sizeof(int) && sizeof(TrainPrecision) == sizeof(int),
               "OPT_ENUM fields are ints");

static const char *const cell_names[] = {"gru", "lstm"};

TrainOpts train_opts_default(void)
{
    return (TrainOpts){
        .cfg = model_config_default(),
        .batch = {.batch = 64, .tokens = 0, .chunk = 0},
        .lr = 1e-3, .beta1 = OPTIM_BETA1, .beta2 = OPTIM_BETA2, .eps = OPTIM_EPS,
        .weight_decay = 0, .clip = 1.0,
        .sched = SCHED_PLATEAU, .warmup = 0, .sched_patience = 2000, .min_delta = 0.1,
        .epochs = 10, .valid_every = 1000, .patience = 0,
        .seed = 1, .log_every = 100, .progress = -1,
        .bpe = TRAIN_BPE, .direction = DIRECTION_EN_FR, .precision = TRAIN_PREC_F32,
    };
}

const char *const train_precision_names[TRAIN_PREC_KINDS] = {"auto", "f32", "bf16"};

/* as cmd_opt_direction (commands.h), which this library layer does not reach */
static int parse_direction(const char *v, void *field)
{
    return prepare_direction_parse(v, field);
}

/* The flags of a row: FIXED or CHANGE, then other bits ("FIXED | TRAIN_RNN"). */
#define FIXED .flags = TRAIN_FIXED
#define CHANGE .flags = TRAIN_CHANGE

static const OptRow rows[] = {
    {.kind = OPT_SECTION, .help = "model:"},
    {ENUM("--arch", cfg.arch, arch_names, 0, ARCH_KINDS - 1), FIXED | TRAIN_SHAPE, .arg = "rnn|transformer",
     .help = "Transformer (default) or recurrent encoder-decoder;\n"
             "without --arch, an option of the recurrent model\n"
             "alone (--cell, --emb, --attention, ...) selects it"},
    {INT("--layers", cfg.layers, 1, TF_MAX_LAYERS), FIXED | TRAIN_SHAPE, .arg = "N",
     .help = "encoder and decoder layers (default 3; recurrent {})"},
    {.kind = OPT_SECTION, .help = "recurrent (--arch rnn):"},
    {ENUM("--cell", cfg.cell, cell_names, 0, 1), FIXED | TRAIN_RNN, .arg = "gru|lstm",
     .help = "recurrent cell (default gru)"},
    {FLAG("--no-bidir", OPT_FALSE, cfg.bidir), FIXED | TRAIN_RNN,
     .help = "unidirectional encoder (default bidirectional)"},
    {INT("--emb", cfg.emb, 1, 8192), FIXED | TRAIN_RNN, .arg = "N", .help = "embedding size (default {})"},
    {INT("--hidden", cfg.hidden, 1, 8192), FIXED | TRAIN_RNN, .arg = "N",
     .help = "encoder size per direction (default {})"},
    {INT("--dec-hidden", cfg.dec_hidden, 1, 8192), FIXED | TRAIN_RNN, .arg = "N",
     .help = "decoder size (default {})"},
    {INT("--attn-size", cfg.attn, 1, 8192), FIXED | TRAIN_RNN, .arg = "N", .help = "attention size (default {})"},
    {ENUM("--attention", cfg.attention, attn_names, 0, ATT_KINDS - 1), FIXED | TRAIN_RNN, .arg = "NAME",
     .help = "bahdanau (default), luong-dot, luong-general,\n"
             "luong-concat, scaled-dot or multihead (docs/attention.md)"},
    {INT("--heads", cfg.heads, 1, 8192), FIXED | TRAIN_SHAPE, .arg = "H",
     .help = "heads of multihead; H divides --attn-size (default 4)"},
    {ENUM("--local", cfg.local, local_names, LOCAL_M, LOCAL_KINDS - 1), FIXED | TRAIN_RNN, .arg = "m|p",
     .help = "local attention (Luong kinds): window centred at the\n"
             "step (m) or at a predicted position (p)"},
    {INT("--window", cfg.window, 1, 8192), FIXED | TRAIN_RNN, .arg = "D",
     .help = "half-width of the local window (default 10)"},
    {FLAG("--input-feed", OPT_TRUE, cfg.input_feed), FIXED | TRAIN_RNN,
     .help = "feed the previous attentional state to the decoder\n(Luong kinds)"},
    {ENUM("--bridge", cfg.bridge, bridge_names, 0, BRIDGE_KINDS - 1), FIXED | TRAIN_RNN,
     .arg = "linear|zero|attn-pool", .help = "decoder initial state (default linear)"},
    {INT("--deep-out", cfg.deep_out, 1, 8192), FIXED | TRAIN_RNN, .arg = "N",
     .help = "deep-output size (default {})"},
    {.kind = OPT_SECTION, .help = "Transformer (--arch transformer, docs/model.md):"},
    {INT("--model-dim", cfg.model_dim, 1, 8192), FIXED | TRAIN_TF, .arg = "D",
     .help = "model width d (default 256)"},
    {.name = "--heads", .kind = OPT_DOC, .arg = "H", .help = "attention heads; H divides d (default 4)"},
    {INT("--ff", cfg.ff, 1, 65536), FIXED | TRAIN_TF, .arg = "N", .help = "feed-forward width (default 1024)"},
    {ENUM("--norm", cfg.norm, norm_names, 0, NORM_KINDS - 1), FIXED | TRAIN_TF, .arg = "post|pre",
     .help = "layer norm after each residual, or before each\nsublayer (default)"},
    {ENUM("--positions", cfg.positions, pos_names, 0, POS_KINDS - 1), FIXED | TRAIN_TF,
     .arg = "sinusoidal|learned", .help = "position code (default sinusoidal)"},
    {INT("--max-positions", cfg.max_positions, 1, 65536), FIXED | TRAIN_TF, .arg = "N",
     .help = "rows of the learned position tables (default 256\n"
             "with --positions learned; sinusoidal positions have\n"
             "no table, and the model file says max_positions 0)"},
    {FLAG("--share-embeddings", OPT_TRUE, cfg.share_embeddings), FIXED | TRAIN_TF,
     .help = "one embedding table for source and target (needs one\n"
             "vocabulary: a corpus DATA, or prepare --joint); with\n"
             "--tie-embeddings the output projection too. Without\n"
             "these options (and their --no- forms), the recipe\n"
             "shares and ties where the training split has fewer\n"
             "than " STR(TRAIN_SHARE_BELOW) " pairs and one vocabulary"},
    {FLAG("--no-share-embeddings", OPT_FALSE, cfg.share_embeddings), FIXED | TRAIN_TF,
     .help = "two embedding tables, whatever the corpus"},
    {.kind = OPT_SECTION, .help = "both:"},
    {REAL("--dropout", OPT_FLOAT, cfg.dropout, 0, 0.99), FIXED, .arg = "P", .help = "dropout (default {})"},
    {REAL("--label-smoothing", OPT_FLOAT, cfg.label_smoothing, 0, 0.99), FIXED, .arg = "E",
     .help = "label smoothing (default {})"},
    {FLAG("--tie-embeddings", OPT_TRUE, cfg.tie_embeddings), FIXED | TRAIN_SHAPE,
     .help = "output projection shares the target embeddings\n(recurrent: needs --deep-out equal to --emb)"},
    {FLAG("--no-tie-embeddings", OPT_FALSE, cfg.tie_embeddings), FIXED | TRAIN_SHAPE,
     .help = "an output projection of its own, whatever the corpus"},
    {.kind = OPT_SECTION, .help = "training:"},
    {.name = "--init", .kind = OPT_STR, AT(init), .arg = "BASE",
     .help = "start from the model file BASE: its weights (its\n"
             "average), architecture, case, codes and vocabularies;\n"
             "a corpus DATA is prepared with them; the training\n"
             "options are this run's (docs/finetune.md)"},
    {LONG("--bpe", bpe, 0, 10000000), .arg = "N",
     .help = "subword merges learned on both sides together for a\n"
             "corpus DATA (default {}; 0: word vocabularies)"},
    {.name = "--direction", .kind = OPT_PARSE, AT(direction), .parse = parse_direction,
     .choices = "en-XX or XX-en with XX an ISO 639 language code", .arg = "en-XX|XX-en",
     .help = "the languages of a corpus DATA (as s2s prepare's;\ndefault en-fr)"},
    {REAL("--concat", OPT_DOUBLE, concat, 0, 0.9), FIXED | OPT_KEY_OPTIONAL, .key = "concat", .arg = "P",
     .help = "share P of each epoch's examples made of 2 or 3\n"
             "random pairs joined, source to source, target to\n"
             "target (default " STR(TRAIN_CONCAT) " for the Transformer, 0 for the\n"
             "recurrent model; docs/quality.md)"},
    {REAL("--copy-names", OPT_DOUBLE, copy_names, 0, 1), FIXED | OPT_KEY_OPTIONAL, .key = "copy_names", .arg = "P",
     .help = "each epoch, add P times as many pairs as hold a name\n"
             "on both sides (\"Tom\" -> \"Tom\"), each with its name\n"
             "replaced by an invented one, so that names the corpus\n"
             "lacks are carried over (default " STR(TRAIN_COPY_NAMES) " for the Transformer\n"
             "on subwords, else 0; docs/quality.md)"},
    {REAL("--bpe-dropout", OPT_DOUBLE, bpe_dropout, 0, 0.9), FIXED | OPT_KEY_OPTIONAL, .key = "bpe_dropout",
     .arg = "P",
     .help = "each epoch, segment the training split anew with\n"
             "every BPE merge left out with probability P, so that\n"
             "words are seen in their pieces (default 0; decoding\n"
             "and validation keep the fixed segmentation;\n"
             "docs/quality.md, \"New sentences\")"},
    {REAL("--token-dropout", OPT_DOUBLE, token_dropout, 0, 0.9), FIXED | OPT_KEY_OPTIONAL,
     .key = "token_dropout", .arg = "P",
     .help = "replace each source and decoder-input token of a\n"
             "training batch by <unk> with probability P (default 0;\n"
             "never at validation or decoding; docs/quality.md)"},
    {INT("--batch", batch.batch, 0, 1000000), FIXED | TRAIN_TOP, .key = "batch_size", .arg = "B",
     .help = "sentences per batch (default {}; 0: no limit)"},
    {LONG("--batch-tokens", batch.tokens, 0, 100000000), FIXED | TRAIN_TOP, .key = "batch_tokens", .arg = "N",
     .help = "at most N padded target tokens per batch (default: off)"},
    {REAL("--lr", OPT_DOUBLE, lr, 0, 10), FIXED, .key = "lr", .arg = "R",
     .help = "Adam learning rate (default {}; with --init " STR(TRAIN_INIT_LR) ")"},
    /* the three Adam constants share one help line */
    {REAL("--beta1", OPT_DOUBLE, beta1, 0, 0.999999), FIXED, .key = "beta1", .arg = "B --beta2 B --adam-eps E",
     .help = "Adam constants (default {} {--beta2} {--adam-eps})"},
    {REAL("--beta2", OPT_DOUBLE, beta2, 0, 0.999999), FIXED, .key = "beta2"},
    {REAL("--adam-eps", OPT_DOUBLE, eps, 0, 1), FIXED, .key = "eps"},
    {REAL("--weight-decay", OPT_DOUBLE, weight_decay, 0, 1), FIXED, .key = "weight_decay", .arg = "W",
     .help = "L2 weight decay (default 0)"},
    {REAL("--clip", OPT_DOUBLE, clip, 0, 1e6), FIXED, .key = "clip", .arg = "C",
     .help = "clip the global gradient norm to C (default {}; 0: off)"},
    {ENUM("--lr-schedule", sched, optim_sched_names, 0, SCHED_KINDS - 1), FIXED, .key = "schedule",
     .choices = "constant, warmup-decay, warmup-cosine or plateau", .arg = "S",
     .help = "constant, warmup-decay, warmup-cosine or plateau\n"
             "(default: warmup-cosine for the Transformer, plateau for\n"
             "the recurrent model; plateau halves the rate when valid\n"
             "BLEU has not improved for --lr-patience steps, down to\n"
             "--lr / 100; warmup-cosine falls as a half cosine to 0 at\n"
             "the end of the budget: --steps, --time or --epochs)"},
    {LONG("--lr-patience", sched_patience, 1, LONG_MAX), FIXED, .key = "lr_patience", .arg = "N",
     .help = "steps without a better valid BLEU before the plateau\nschedule halves the rate (default {})"},
    {REAL("--min-delta", OPT_DOUBLE, min_delta, 0, 100), FIXED, .key = "min_delta", .arg = "B",
     .help = "BLEU points a validation must gain over the best to\n"
             "count as better, for the schedule and --patience\n(default {})"},
    {LONG("--warmup", warmup, 0, 100000000), FIXED, .key = "warmup", .arg = "N",
     .help = "warmup steps of warmup-decay and warmup-cosine\n(default " STR(TRAIN_WARMUP) ", or fewer: --warmup-share)"},
    {REAL("--warmup-share", OPT_DOUBLE, warmup_share, 0, 1), FIXED | OPT_KEY_OPTIONAL, .key = "warmup_share",
     .arg = "F",
     .help = "warmup-cosine: the warmup also ends at this share of\n"
             "the budget, if that comes first (default " STR(TRAIN_WARMUP_SHARE) "\n"
             "without --warmup, else 0: W steps alone)"},
    {LONG("--epochs", epochs, 0, 1000000), CHANGE, .key = "epochs", .arg = "N",
     .help = "stop after N epochs (default {} without --steps or\n--time, else no limit; 0: no limit)"},
    {LONG("--steps", steps, 0, LONG_MAX), CHANGE, .key = "steps", .arg = "N",
     .help = "stop after N steps (default: no limit)"},
    {REAL("--time", OPT_DOUBLE, minutes, 0, 1e7), CHANGE, .key = "minutes", .arg = "MINUTES",
     .help = "stop after this much time (default: no limit)"},
    {LONG("--valid-every", valid_every, 0, LONG_MAX), FIXED, .key = "valid_every", .arg = "N",
     .help = "validate every N steps and at each epoch end\n(default {}; 0: epoch ends only)"},
    {LONG("--valid-max", valid_max, 0, LONG_MAX), FIXED, .key = "valid_max", .arg = "N",
     .help = "decode at most N valid pairs for BLEU (default: all)"},
    {INT("--patience", patience, 0, 1000000), CHANGE, .key = "patience", .arg = "K",
     .help = "stop after K validations without a better BLEU\n(default: never)"},
    {REAL("--ema", OPT_DOUBLE, ema, 0, 0.999999), FIXED | OPT_KEY_OPTIONAL, .key = "ema", .arg = "D",
     .help = "keep an exponential moving average of the weights with\n"
             "decay D (default " STR(TRAIN_EMA) " for the Transformer, 0: none for\n"
             "the recurrent model); validation, MODEL and MODEL.last\n"
             "use the average"},
    {LONG("--keep-checkpoints", keep_ckpt, 0, 1000000), FIXED | OPT_KEY_OPTIONAL, .key = "keep_checkpoints",
     .arg = "N",
     .help = "keep the models of the last N validations as\nMODEL.ckpt.STEP, for s2s average (default 0)"},
    {.name = "--seed", .kind = OPT_U64, AT(seed), .min = 0, .max = LONG_MAX, FIXED | TRAIN_TOP, .key = "seed",
     .arg = "S", .help = "seed of initialisation, batches and dropout (default {})"},
    {INT("--threads", threads, 1, 1024), CHANGE, .arg = "N",
     .help = "threads (default: the cores other processes leave\nfree; under mpirun, per process, the cores shared\nby the host's processes)"},
    {ENUM("--precision", precision, train_precision_names, 0, TRAIN_PREC_KINDS - 1), CHANGE | OPT_KEY_OPTIONAL,
     .key = "precision", .arg = "P",
     .choices = "auto, f32 or bf16",
     .help = "of the matrix products: f32, bf16 (inputs rounded to\n"
             "bf16, sums in fp32; the weights, gradients, Adam and the\n"
             "loss stay fp32; needs AVX512-BF16 or AMX) or auto: bf16\n"
             "where the CPU has it (default auto; a run started\n"
             "before it existed resumes in f32)"},
    {FLAG("--resume", OPT_TRUE, resume),
     .help = "continue the run saved in MODEL.state, with its data\n"
             "and options (DATA and flags need not be given again;\n"
             "only --time, --steps, --epochs, --patience, --threads,\n"
             "--precision, --log-every and --quiet may differ)"},
    {FLAG("--force", OPT_TRUE, force),
     .help = "start over even if MODEL.state exists (replaces\ns2s's own files only)"},
    {LONG("--log-every", log_every, 1, LONG_MAX), CHANGE, .arg = "N",
     .help = "without a terminal, a progress line every N steps\n(default {})"},
    {FLAG("--quiet", OPT_TRUE, quiet), CHANGE, .help = "no progress output"},
    {.name = "--help", .alias = "-h", .kind = OPT_HELP, .help = "this help"},
    {.name = "--output", .alias = "-o", .kind = OPT_STR, AT(model)},
    {0},
};

const OptTable train_option_table = {
    .cmd = "train",
    .rows = rows,
    .size = sizeof(TrainOpts),
    .what = "DATA",
    .head =
        "usage: s2s train DATA -o MODEL [options]\n"
        "       s2s train --resume -o MODEL [--time M] [--steps N] ...\n"
        "\n"
        "Trains an encoder-decoder with attention. DATA is a directory written by\n"
        "'s2s prepare', or a corpus file, which is first prepared into MODEL.d/ with\n"
        "prepare's defaults, --direction, and joint subwords (--bpe). Without options,\n"
        "the recipe of docs/quality.md: a Transformer, warmup then a cosine decay to the\n"
        "end of the budget, and an average of the weights (--ema). Writes MODEL (the\n"
        "best model by valid BLEU), MODEL.last (the latest), MODEL.state (for --resume)\n"
        "and MODEL.log.jsonl (one JSON object per step and per validation). Ctrl-C\n"
        "(SIGINT, SIGTERM or SIGUSR1) finishes the step, saves, and exits.\n"
        "It replaces only files of those kinds: any other file at one of those paths, or\n"
        "an input given as -o, is refused before training, as is a second run on MODEL\n"
        "while one is running (MODEL.lock).\n"
        "Started by mpirun (an s2s built with 'make MPI=1'), N processes train one model:\n"
        "each takes its share of the rows of every batch, the gradients are summed, and\n"
        "process 0 writes the files; mpirun passes SIGUSR1 on at once (docs/distributed.md).\n"
        "\n",
    .foot = "\n"
            "The same data, options, seed and threads give the same losses, also across\n"
            "--resume.\n",
};
