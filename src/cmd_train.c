/* s2s train: options, data preparation for a raw corpus, signals; the loop is
   src/train/trainer.c. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/opt.h"
#include "commands.h"
#include "data/prepare.h"
#include "train/dist.h"
#include "train/outputs.h"
#include "train/trainer.h"

static void usage(FILE *out)
{
    TrainOpts d = train_opts_default();
    fprintf(out,
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
"(SIGINT, SIGTERM or SIGUSR1) finishes the step, ""saves, and exits.\n"
"It replaces only files of those kinds: any other file at one of those paths, or\n"
"an input given as -o, is refused before training, as is a second run on MODEL\n"
"while one is running (MODEL.lock).\n"
"Started by mpirun (an s2s built with 'make MPI=1'), N processes train one model:\n"
"each takes its share of the rows of every batch, the gradients are summed, and\n"
"process 0 writes the files; mpirun passes SIGUSR1 on at once (docs/distributed.md).\n"
"\n"
"model:\n"
"  --arch rnn|transformer   Transformer (default) or recurrent encoder-decoder;\n"
"                           without --arch, an option of the recurrent model\n"
"                           alone (--cell, --emb, --attention, ...) selects it\n"
"  --layers N               encoder and decoder layers (default 3; recurrent %d)\n"
"recurrent (--arch rnn):\n"
"  --cell gru|lstm          recurrent cell (default gru)\n"
"  --no-bidir               unidirectional encoder (default bidirectional)\n"
"  --emb N                  embedding size (default %d)\n"
"  --hidden N               encoder size per direction (default %d)\n"
"  --dec-hidden N           decoder size (default %d)\n"
"  --attn-size N            attention size (default %d)\n"
"  --attention NAME         bahdanau (default), luong-dot, luong-general,\n"
"                           luong-concat, scaled-dot or multihead (docs/attention.md)\n"
"  --heads H                heads of multihead; H divides --attn-size (default 4)\n"
"  --local m|p              local attention (Luong kinds): window centred at the\n"
"                           step (m) or at a predicted position (p)\n"
"  --window D               half-width of the local window (default 10)\n"
"  --input-feed             feed the previous attentional state to the decoder\n"
"                           (Luong kinds)\n"
"  --bridge linear|zero|attn-pool   decoder initial state (default linear)\n"
"  --deep-out N             deep-output size (default %d)\n"
"Transformer (--arch transformer, docs/model.md):\n"
"  --model-dim D            model width d (default 256)\n"
"  --heads H                attention heads; H divides d (default 4)\n"
"  --ff N                   feed-forward width (default 1024)\n"
"  --norm post|pre          layer norm after each residual (default) or before\n"
"                           each sublayer\n"
"  --positions sinusoidal|learned   position code (default sinusoidal)\n"
"  --max-positions N        rows of the learned position tables (default 256);\n"
"                           longer training pairs are skipped\n"
"both:\n"
"  --dropout P              dropout (default %g)\n"
"  --label-smoothing E      label smoothing (default %g)\n"
"  --tie-embeddings         output projection shares the target embeddings\n"
"                           (recurrent: needs --deep-out equal to --emb)\n"
"training:\n"
"  --bpe N                  subword merges learned on both sides together for a\n"
"                           corpus DATA (default %ld; 0: word vocabularies)\n"
"  --direction en-XX|XX-en  the languages of a corpus DATA (as s2s prepare's;\n"
"                           default en-fr)\n"
"  --batch B                sentences per batch (default %d; 0: no limit)\n"
"  --batch-tokens N         at most N padded target tokens per batch (default: off)\n"
"  --lr R                   Adam learning rate (default %g)\n"
"  --beta1 B --beta2 B --adam-eps E   Adam constants (default %g %g %g)\n"
"  --weight-decay W         L2 weight decay (default 0)\n"
"  --clip C                 clip the global gradient norm to C (default %g; 0: off)\n"
"  --lr-schedule S          constant, warmup-decay, warmup-cosine or plateau\n"
"                           (default: warmup-cosine for the Transformer, plateau for\n"
"                           the recurrent model; plateau halves the rate when valid\n"
"                           BLEU has not improved for --lr-patience steps, down to\n"
"                           --lr / 100; warmup-cosine falls as a half cosine to 0 at\n"
"                           the end of the budget: --steps, --time or --epochs)\n"
"  --lr-patience N          steps without a better valid BLEU before the plateau\n"
"                           schedule halves the rate (default %ld)\n"
"  --min-delta B            BLEU points a validation must gain over the best to\n"
"                           count as better, for the schedule and --patience\n"
"                           (default %g)\n"
"  --warmup N               warmup steps of warmup-decay and warmup-cosine\n"
"                           (default %ld)\n"
"  --epochs N               stop after N epochs (default %ld without --steps or\n"
"                           --time, else no limit; 0: no limit)\n"
"  --steps N                stop after N steps (default: no limit)\n"
"  --time MINUTES           stop after this much time (default: no limit)\n"
"  --valid-every N          validate every N steps and at each epoch end\n"
"                           (default %ld; 0: epoch ends only)\n"
"  --valid-max N            decode at most N valid pairs for BLEU (default: all)\n"
"  --patience K             stop after K validations without a better BLEU\n"
"                           (default: never)\n"
"  --ema D                  keep an exponential moving average of the weights with\n"
"                           decay D (default %g for the Transformer, 0: none for\n"
"                           the recurrent model); validation, MODEL and MODEL.last\n"
"                           use the average\n"
"  --keep-checkpoints N     keep the models of the last N validations as\n"
"                           MODEL.ckpt.STEP, for s2s average (default 0)\n"
"  --seed S                 seed of initialisation, batches and dropout (default %llu)\n"
"  --threads N              threads (default: all cores; under mpirun, per process,\n"
"                           the cores shared by the host's processes)\n"
"  --resume                 continue the run saved in MODEL.state, with its data\n"
"                           and options (DATA and flags need not be given again;\n"
"                           only --time, --steps, --epochs, --patience, --threads,\n"
"                           --log-every and --quiet may differ)\n"
"  --force                  start over even if MODEL.state exists (replaces\n"
"                           s2s's own files only)\n"
"  --log-every N            without a terminal, a progress line every N steps\n"
"                           (default %ld)\n"
"  --quiet                  no progress output\n"
"  -h, --help               this help\n"
"\n"
"The same data, options, seed and threads give the same losses, also across\n"
"--resume.\n",
            d.cfg.layers, d.cfg.emb, d.cfg.hidden, d.cfg.dec_hidden, d.cfg.attn, d.cfg.deep_out,
            d.cfg.dropout, d.cfg.label_smoothing, (long)TRAIN_BPE, d.batch.batch, d.lr, d.beta1, d.beta2, d.eps,
            d.clip, d.sched_patience, d.min_delta, (long)TRAIN_WARMUP, d.epochs, d.valid_every, TRAIN_EMA,
            (unsigned long long)d.seed, d.log_every);
}

static void on_signal(int sig)
{
    if (train_stop_requested) {
        /* A second signal: stop now. Files on disk are complete (atomic writes). */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    train_stop_requested = 1;
}

/* The claim of this run, released (MODEL.lock removed) however the process exits. */
static TrainClaim claim;
static void release_claim(void) { train_release(&claim); }

/* Ends the process with status after leaving the run's processes. */
static void quit(int status)
{
    dist_finalize();
    exit(status);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether the command-line argument arg ("--lr" or "--lr=0.1") is the option name. */
static bool given_is(const char *arg, const char *name)
{
    size_t len = strcspn(arg, "=");
    return strlen(name) == len && strncmp(arg, name, len) == 0;
}

/* The options that must be as the run had them on --resume (any other may differ:
   the limits, --patience, --threads and the display). */
#define FIELD(name, member) {name, offsetof(TrainOpts, member), sizeof(((TrainOpts *)0)->member)}
static const struct {
    const char *name;
    size_t off, size;
} resume_fields[] = {
    FIELD("--arch", cfg.arch), FIELD("--model-dim", cfg.model_dim), FIELD("--ff", cfg.ff),
    FIELD("--norm", cfg.norm), FIELD("--positions", cfg.positions),
    FIELD("--max-positions", cfg.max_positions),
    FIELD("--cell", cfg.cell), FIELD("--layers", cfg.layers), FIELD("--no-bidir", cfg.bidir),
    FIELD("--emb", cfg.emb), FIELD("--hidden", cfg.hidden), FIELD("--dec-hidden", cfg.dec_hidden),
    FIELD("--attn-size", cfg.attn), FIELD("--attention", cfg.attention), FIELD("--heads", cfg.heads),
    FIELD("--local", cfg.local), FIELD("--window", cfg.window), FIELD("--input-feed", cfg.input_feed),
    FIELD("--bridge", cfg.bridge), FIELD("--deep-out", cfg.deep_out), FIELD("--dropout", cfg.dropout),
    FIELD("--label-smoothing", cfg.label_smoothing), FIELD("--tie-embeddings", cfg.tie_embeddings),
    FIELD("--batch", batch.batch), FIELD("--batch-tokens", batch.tokens), FIELD("--lr", lr),
    FIELD("--beta1", beta1), FIELD("--beta2", beta2), FIELD("--adam-eps", eps),
    FIELD("--weight-decay", weight_decay), FIELD("--clip", clip), FIELD("--lr-schedule", sched),
    FIELD("--warmup", warmup), FIELD("--lr-patience", sched_patience), FIELD("--min-delta", min_delta),
    FIELD("--valid-every", valid_every), FIELD("--valid-max", valid_max), FIELD("--seed", seed),
    FIELD("--ema", ema), FIELD("--keep-checkpoints", keep_ckpt),
};
#undef FIELD

/* --resume: the run's options come from MODEL.state; those given again must equal
   them, except the ones a resumed run may change. Returns the run's data directory. */
static char *resume_opts(TrainOpts *o, TrainOpts saved, char *data, const char *const *given,
                         int ngiven)
{
    for (int g = 0; g < ngiven; g++)
        for (size_t k = 0; k < sizeof resume_fields / sizeof *resume_fields; k++)
            if (given_is(given[g], resume_fields[k].name) &&
                memcmp((const char *)o + resume_fields[k].off, (const char *)&saved + resume_fields[k].off,
                       resume_fields[k].size) != 0)
                die_usage("train: %s differs from the run in %s.state; on --resume only --time, --steps, "
                          "--epochs, --patience, --threads, --log-every and --quiet may change",
                          resume_fields[k].name, o->model);
    /* the run's options, with the limits and the display given now */
    saved.model = o->model;
    saved.resume = true;
    saved.threads = o->threads;
    saved.log_every = o->log_every;
    saved.quiet = o->quiet;
    saved.progress = o->progress;
    /* Limits given now replace the run's limits together (the epoch limit then follows
       the usual rule); without any, the run continues to its own budget. */
    bool limits = false;
    for (int g = 0; g < ngiven; g++) {
        limits = limits || given_is(given[g], "--time") || given_is(given[g], "--steps") ||
                 given_is(given[g], "--epochs");
        if (given_is(given[g], "--patience"))
            saved.patience = o->patience;
    }
    if (limits) {
        saved.minutes = o->minutes;
        saved.steps = o->steps;
        saved.epochs = o->epochs;
    }
    *o = saved;
    return data;
}

/* Process 0: claims the outputs (train/outputs.h) and prepares a corpus file into
   prepared (MODEL.d/; NULL when data is a prepared directory). */
static int claim_and_prepare(const TrainOpts *o, const char *data, const char *prepared, Direction direction,
                             long bpe, Err *e)
{
    if (access(data, F_OK) != 0)
        return err_set(e, "%s: cannot open: %s", data, strerror(errno));
    if (train_claim(&claim, o->model, data, o->resume, o->force, e) != 0)
        return -1;
    atexit(release_claim);
    if (!prepared)
        return 0;
    /* A corpus file is prepared into MODEL.d/ first (kept for --resume and eval). */
    char marker[PATH_MAX];
    snprintf(marker, sizeof marker, "%s/prepare.json", prepared);
    if (o->resume && access(marker, F_OK) == 0)
        return 0;
    PrepareOpts po = prepare_opts_default();
    po.corpus = data;
    po.dir = prepared;
    po.direction = direction;
    po.bpe = bpe;
    po.joint = bpe > 0;
    po.progress = !o->quiet;
    Buf summary = {0};
    if (prepare_run(&po, &summary, e) != 0)
        return -1;
    if (!o->quiet)
        fputs(summary.data ? summary.data : "", stderr);
    buf_free(&summary);
    return 0;
}

/* The options of one architecture only; given with the other, they are refused. */
static const char *const rnn_only[] = {"--cell", "--no-bidir", "--emb", "--hidden", "--dec-hidden",
                                       "--attn-size", "--attention", "--local", "--window",
                                       "--input-feed", "--bridge", "--deep-out", NULL};
static const char *const tf_only[] = {"--model-dim", "--ff", "--norm", "--positions",
                                      "--max-positions", NULL};

/* Completes the model configuration for the architecture from the flags given (0: a
   size not given). */
static void arch_opts(ModelConfig *cfg, Arch arch, const char *const *given, int ngiven, int layers,
                      int heads, int window, int max_positions)
{
    const char *const *other = arch == ARCH_TRANSFORMER ? rnn_only : tf_only;
    for (int g = 0; g < ngiven; g++)
        for (const char *const *k = other; *k; k++)
            if (given_is(given[g], *k))
                die_usage("train: option %s does not apply to --arch %s", *k, arch_names[arch]);
    if (arch == ARCH_TRANSFORMER) {
        ModelConfig t = model_config_transformer();
        t.model_dim = cfg->model_dim;
        t.ff = cfg->ff;
        t.norm = cfg->norm;
        t.positions = cfg->positions;
        t.dropout = cfg->dropout;
        t.label_smoothing = cfg->label_smoothing;
        t.tie_embeddings = cfg->tie_embeddings;
        t.layers = layers ? layers : t.layers;
        t.heads = heads ? heads : t.heads;
        t.max_positions = t.positions == POS_LEARNED ? (max_positions ? max_positions : 256) : 0;
        if (max_positions && t.positions != POS_LEARNED)
            die_usage("train: --max-positions needs --positions learned");
        *cfg = t;
        return;
    }
    if (layers > MODEL_MAX_LAYERS)
        die_usage("train: option --layers must be between 1 and %d, got %d", MODEL_MAX_LAYERS, layers);
    if (layers)
        cfg->layers = layers;
    if (heads && cfg->attention != ATT_MULTIHEAD)
        die_usage("train: --heads needs --attention multihead");
    cfg->heads = cfg->attention == ATT_MULTIHEAD ? (heads ? heads : 4) : 1;
    if (window && cfg->local == LOCAL_NONE)
        die_usage("train: --window needs --local m or --local p");
    cfg->window = cfg->local == LOCAL_NONE ? 0 : (window ? window : 10);
}

int cmd_train(int argc, char **argv)
{
    TrainOpts o = train_opts_default();
    const char *data = NULL;
    bool warmup_set = false, epochs_set = false, lr_patience_set = false;
    int heads = 0, window = 0, layers = 0, max_positions = 0; /* 0: not given */
    Arch arch = ARCH_TRANSFORMER;
    bool sched_set = false;
    Direction direction = DIRECTION_EN_FR; /* of a corpus DATA */
    bool direction_given = false, bpe_given = false, ema_set = false;
    long bpe = TRAIN_BPE; /* of a corpus DATA */
    Opts op;
    opts_init(&op, "train", argc, argv);
    const char **given = XNEW(const char *, argc); /* the options on the command line */
    int ngiven = 0;
    while (opts_next(&op)) {
        if (!opts_positional(&op))
            given[ngiven++] = op.cur;
        if (opts_positional(&op)) {
            if (data)
                opts_unknown(&op);
            data = opts_arg(&op, "DATA");
        } else if (opts_is(&op, "--help") || opts_is(&op, "-h")) {
            usage(stdout);
            exit(0);
        } else if (opts_is(&op, "-o") || opts_is(&op, "--output")) {
            o.model = opts_str(&op);
        } else if (opts_is(&op, "--direction")) {
            const char *v = opts_str(&op);
            if (prepare_direction_parse(v, &direction) != 0)
                die_usage("train: option --direction must be en-XX or XX-en with XX an ISO 639 "
                          "language code, got '%s'", v);
            direction_given = true;
        } else if (opts_is(&op, "--bpe")) {
            bpe = opts_long(&op, 0, 10000000);
            bpe_given = true;
        } else if (opts_is(&op, "--arch")) {
            const char *v = opts_str(&op);
            int k = arch_from_name(v);
            if (k < 0)
                die_usage("train: option --arch must be rnn or transformer, got '%s'", v);
            arch = (Arch)k;
        } else if (opts_is(&op, "--model-dim")) {
            o.cfg.model_dim = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--ff")) {
            o.cfg.ff = (int)opts_long(&op, 1, 65536);
        } else if (opts_is(&op, "--norm")) {
            const char *v = opts_str(&op);
            int k = norm_from_name(v);
            if (k < 0)
                die_usage("train: option --norm must be post or pre, got '%s'", v);
            o.cfg.norm = (NormKind)k;
        } else if (opts_is(&op, "--positions")) {
            const char *v = opts_str(&op);
            int k = pos_from_name(v);
            if (k < 0)
                die_usage("train: option --positions must be sinusoidal or learned, got '%s'", v);
            o.cfg.positions = (PosKind)k;
        } else if (opts_is(&op, "--max-positions")) {
            max_positions = (int)opts_long(&op, 1, 65536);
        } else if (opts_is(&op, "--cell")) {
            const char *v = opts_str(&op);
            if (strcmp(v, "gru") == 0)
                o.cfg.cell = CELL_GRU;
            else if (strcmp(v, "lstm") == 0)
                o.cfg.cell = CELL_LSTM;
            else
                die_usage("train: option --cell must be gru or lstm, got '%s'", v);
        } else if (opts_is(&op, "--layers")) {
            layers = (int)opts_long(&op, 1, TF_MAX_LAYERS);
        } else if (opts_is(&op, "--no-bidir")) {
            opts_bool(&op);
            o.cfg.bidir = false;
        } else if (opts_is(&op, "--emb")) {
            o.cfg.emb = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--hidden")) {
            o.cfg.hidden = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--dec-hidden")) {
            o.cfg.dec_hidden = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--attn-size")) {
            o.cfg.attn = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--attention")) {
            const char *v = opts_str(&op);
            int k = attn_from_name(v);
            if (k < 0)
                die_usage("train: option --attention must be bahdanau, luong-dot, luong-general, luong-concat, "
                          "scaled-dot or multihead, got '%s'", v);
            o.cfg.attention = (AttnKind)k;
        } else if (opts_is(&op, "--heads")) {
            heads = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--local")) {
            const char *v = opts_str(&op);
            int k = local_from_name(v);
            if (k <= LOCAL_NONE)
                die_usage("train: option --local must be m or p, got '%s'", v);
            o.cfg.local = (LocalKind)k;
        } else if (opts_is(&op, "--window")) {
            window = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--input-feed")) {
            opts_bool(&op);
            o.cfg.input_feed = true;
        } else if (opts_is(&op, "--bridge")) {
            const char *v = opts_str(&op);
            int k = bridge_from_name(v);
            if (k < 0)
                die_usage("train: option --bridge must be linear, zero or attn-pool, got '%s'", v);
            o.cfg.bridge = (BridgeKind)k;
        } else if (opts_is(&op, "--deep-out")) {
            o.cfg.deep_out = (int)opts_long(&op, 1, 8192);
        } else if (opts_is(&op, "--dropout")) {
            o.cfg.dropout = (float)opts_double(&op, 0, 0.99);
        } else if (opts_is(&op, "--label-smoothing")) {
            o.cfg.label_smoothing = (float)opts_double(&op, 0, 0.99);
        } else if (opts_is(&op, "--tie-embeddings")) {
            opts_bool(&op);
            o.cfg.tie_embeddings = true;
        } else if (opts_is(&op, "--batch")) {
            o.batch.batch = (int)opts_long(&op, 0, 1000000);
        } else if (opts_is(&op, "--batch-tokens")) {
            o.batch.tokens = opts_long(&op, 0, 100000000);
        } else if (opts_is(&op, "--lr")) {
            o.lr = opts_double(&op, 0, 10);
        } else if (opts_is(&op, "--beta1")) {
            o.beta1 = opts_double(&op, 0, 0.999999);
        } else if (opts_is(&op, "--beta2")) {
            o.beta2 = opts_double(&op, 0, 0.999999);
        } else if (opts_is(&op, "--adam-eps")) {
            o.eps = opts_double(&op, 0, 1);
        } else if (opts_is(&op, "--weight-decay")) {
            o.weight_decay = opts_double(&op, 0, 1);
        } else if (opts_is(&op, "--clip")) {
            o.clip = opts_double(&op, 0, 1e6);
        } else if (opts_is(&op, "--lr-schedule")) {
            const char *v = opts_str(&op);
            SchedKind k;
            if (optim_sched_parse(v, &k) != 0)
                die_usage("train: option --lr-schedule must be constant, warmup-decay, warmup-cosine or plateau, "
                          "got '%s'", v);
            o.sched = k;
            sched_set = true;
        } else if (opts_is(&op, "--warmup")) {
            o.warmup = opts_long(&op, 0, 100000000);
            warmup_set = true;
        } else if (opts_is(&op, "--epochs")) {
            o.epochs = opts_long(&op, 0, 1000000);
            epochs_set = true;
        } else if (opts_is(&op, "--lr-patience")) {
            o.sched_patience = opts_long(&op, 1, LONG_MAX);
            lr_patience_set = true;
        } else if (opts_is(&op, "--min-delta")) {
            o.min_delta = opts_double(&op, 0, 100);
        } else if (opts_is(&op, "--steps")) {
            o.steps = opts_long(&op, 0, LONG_MAX);
        } else if (opts_is(&op, "--time")) {
            o.minutes = opts_double(&op, 0, 1e7);
        } else if (opts_is(&op, "--valid-every")) {
            o.valid_every = opts_long(&op, 0, LONG_MAX);
        } else if (opts_is(&op, "--valid-max")) {
            o.valid_max = opts_long(&op, 0, LONG_MAX);
        } else if (opts_is(&op, "--patience")) {
            o.patience = (int)opts_long(&op, 0, 1000000);
        } else if (opts_is(&op, "--seed")) {
            o.seed = (uint64_t)opts_long(&op, 0, LONG_MAX);
        } else if (opts_is(&op, "--threads")) {
            o.threads = (int)opts_long(&op, 1, 1024);
        } else if (opts_is(&op, "--resume")) {
            opts_bool(&op);
            o.resume = true;
        } else if (opts_is(&op, "--force")) {
            opts_bool(&op);
            o.force = true;
        } else if (opts_is(&op, "--log-every")) {
            o.log_every = opts_long(&op, 1, LONG_MAX);
        } else if (opts_is(&op, "--quiet")) {
            opts_bool(&op);
            o.quiet = true;
        } else if (opts_is(&op, "--ema")) {
            o.ema = opts_double(&op, 0, 0.999999);
            ema_set = true;
        } else if (opts_is(&op, "--keep-checkpoints")) {
            o.keep_ckpt = opts_long(&op, 0, 1000000);
        } else {
            opts_unknown(&op);
        }
    }
    if (!data && !o.resume)
        die_usage("train: missing DATA argument (see 's2s train --help')");
    if (!o.model)
        die_usage("train: missing option -o MODEL (see 's2s train --help')");
    if (o.batch.batch == 0 && o.batch.tokens == 0)
        die_usage("train: --batch 0 needs --batch-tokens N");
    if (o.resume && o.force)
        die_usage("train: --resume and --force exclude each other");
    /* A budget given alone is used whole: the epoch limit is then off unless given. */
    if (!epochs_set && (o.steps > 0 || o.minutes > 0))
        o.epochs = 0;
    /* --resume: the run's options, read once; without --arch the run's architecture
       decides which flags apply. got 1: a state that predates saved options. */
    TrainOpts saved;
    char *saved_data = NULL;
    int got = 1;
    Err e;
    if (o.resume && (got = train_saved_opts(o.model, &saved, &saved_data, &e)) < 0)
        die_err(&e);
    /* Without --arch: the run's architecture when resuming, else the recurrent model if
       an option of it alone is given, else the Transformer (the default). */
    bool arch_given = false, rnn_option = false;
    for (int g = 0; g < ngiven; g++) {
        arch_given = arch_given || given_is(given[g], "--arch");
        for (const char *const *k = rnn_only; *k; k++)
            rnn_option = rnn_option || given_is(given[g], *k);
    }
    if (!arch_given)
        arch = got == 0 ? saved.cfg.arch : rnn_option ? ARCH_RNN : ARCH_TRANSFORMER;
    arch_opts(&o.cfg, arch, given, ngiven, layers, heads, window, max_positions);
    /* The schedule of the architecture unless one is given (docs/transformer.md). */
    if (!sched_set)
        o.sched = arch == ARCH_TRANSFORMER ? SCHED_WARMUP_COSINE : SCHED_PLATEAU;
    /* The Transformer's recipe averages its weights (docs/quality.md). */
    if (!ema_set && arch == ARCH_TRANSFORMER)
        o.ema = TRAIN_EMA;
    if ((o.sched == SCHED_WARMUP_DECAY || o.sched == SCHED_WARMUP_COSINE) && !warmup_set)
        o.warmup = TRAIN_WARMUP;
    if (warmup_set && o.sched != SCHED_WARMUP_DECAY && o.sched != SCHED_WARMUP_COSINE)
        die_usage("train: --warmup needs --lr-schedule warmup-decay or warmup-cosine");
    if (lr_patience_set && o.sched != SCHED_PLATEAU)
        die_usage("train: --lr-patience needs --lr-schedule plateau");
    if (o.resume) {
        if (got == 0)
            saved_data = resume_opts(&o, saved, saved_data, given, ngiven);
        if (!data)
            data = saved_data;
        if (!data)
            die_usage("train: %s.state predates saved options: give DATA and the run's options with --resume",
                      o.model);
    }
    ModelConfig check = o.cfg;
    check.src_vocab = check.tgt_vocab = 5; /* sizes come from the data */
    if (model_config_check(&check, &e) != 0)
        die_usage("train: %s", e.msg);

    if (direction_given && is_dir(data))
        die_usage("train: option --direction is for a corpus DATA; %s was prepared with its own",
                  data);
    if (bpe_given && is_dir(data))
        die_usage("train: option --bpe is for a corpus DATA; %s was prepared with its own", data);
    /* One process, or one of several started by mpirun (docs/distributed.md). */
    if (dist_init(&argc, &argv, &e) != 0)
        die_usage("train: %s", e.msg);
    bool lead = dist_rank() == 0;

    /* Nothing is written before the outputs are known to be ours and the lock is held.
       Process 0 claims them and prepares a corpus; the others wait for its outcome. */
    char *prepared = NULL;
    if (!is_dir(data)) {
        prepared = xmalloc(strlen(o.model) + 3);
        sprintf(prepared, "%s.d", o.model);
    }
    int ok = !lead || claim_and_prepare(&o, data, prepared, direction, bpe, &e) == 0;
    dist_bcast(&ok, sizeof ok, 0);
    if (!ok) {
        if (lead)
            fprintf(stderr, "s2s: %s\n", e.msg);
        quit(1);
    }
    o.data = prepared ? prepared : data;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* mpirun passes SIGUSR1 on to every process at once (and SIGINT, as SIGTERM, only
       after a delay): the same stop */
    sigaction(SIGUSR1, &sa, NULL);

    int rc = train_run(&o, &e);
    free(prepared);
    free(saved_data);
    free(given);
    if (rc == TRAIN_FAILED_ALL) {
        /* every process stopped alike: one of them says why */
        if (e.msg[0] && dist_rank() == 0)
            fprintf(stderr, "s2s: %s\n", e.msg);
        else if (e.msg[0])
            fprintf(stderr, "s2s: process %d of %d: %s\n", dist_rank(), dist_size(), e.msg);
        quit(1);
    }
    if (rc != 0) {
        if (dist_size() == 1)
            die_err(&e);
        /* this process alone: the others may be waiting for it */
        fprintf(stderr, "s2s: process %d of %d: %s\n", dist_rank(), dist_size(), e.msg);
        dist_abort(1);
    }
    dist_finalize();
    return 0;
}
