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
#include "nn/bf16.h"
#include "train/dist.h"
#include "train/options.h"
#include "train/outputs.h"
#include "train/trainer.h"

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
static TrainClaim claim = {.lock = {.fd = -1}};
static void release_claim(void) { train_release(&claim); }

/* Ends the process with status after leaving the run's processes; every process of
   the run calls it. The claim is released, and every process waits for the others to
   get there, before any leaves: once one has exited with a failure, mpirun may kill
   the others before their exit handlers run. */
static void quit(int status)
{
    train_release(&claim);
    dist_barrier();
    dist_finalize();
    exit(status);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const OptTable *const table = &train_option_table;

/* Whether the option name was given. */
static bool given(const int *seen, const char *name)
{
    return opt_seen(table, seen, name);
}

static void *field(TrainOpts *o, const OptRow *r)
{
    return (char *)o + r->off;
}

/* The row of the first option given (in command-line order) among those with all of
   flags set whose value in o differs from the one in other (other NULL: any), or -1. */
static int first_given(const int *seen, unsigned flags, TrainOpts *o, TrainOpts *other)
{
    int first = -1;
    for (int i = 0; table->rows[i].kind != OPT_END; i++) {
        const OptRow *r = &table->rows[i];
        if (!seen[i] || (r->flags & flags) != flags || (first >= 0 && seen[first] < seen[i]))
            continue;
        if (!other || memcmp(field(o, r), field(other, r), opt_field_size(r)) != 0)
            first = i;
    }
    return first;
}

/* --resume: the run's options come from MODEL.state; those given again must equal
   them unless they may change (TRAIN_CHANGE). Returns the run's data directory. */
static char *resume_opts(TrainOpts *o, TrainOpts saved, char *data, const int *seen)
{
    int k = first_given(seen, TRAIN_FIXED, o, &saved);
    if (k >= 0)
        die_usage("train: %s differs from the run in %s.state; on --resume only " TRAIN_MAY_CHANGE " may change",
                  table->rows[k].name, o->model);
    /* Options the state does not hold (the display, the output, the threads) come from
       the command line, and so do the saved ones that may change when given. Limits
       given now replace the run's limits together (the epoch limit then follows the
       usual rule); without any, the run continues to its own budget. */
    bool limits = given(seen, "--time") || given(seen, "--steps") || given(seen, "--epochs");
    int minutes = opt_find(table->rows, "--time"), steps = opt_find(table->rows, "--steps"),
        epochs = opt_find(table->rows, "--epochs");
    for (int i = 0; table->rows[i].kind != OPT_END; i++) {
        const OptRow *r = &table->rows[i];
        bool limit = i == minutes || i == steps || i == epochs;
        if (!(r->flags & TRAIN_FIXED) && (!r->key || seen[i] || (limits && limit)))
            memcpy(field(&saved, r), field(o, r), opt_field_size(r));
    }
    saved.progress = o->progress;
    *o = saved;
    return data;
}

/* Process 0: claims the outputs (train/outputs.h) and prepares a corpus file into
   prepared (MODEL.d/; NULL when data is a prepared directory). */
static int claim_and_prepare(const TrainOpts *o, const char *data, const char *prepared, Err *e)
{
    if (access(data, F_OK) != 0)
        return err_set(e, "%s: cannot open: %s", data, strerror(errno));
    if (train_claim(&claim, o->model, data, o->init, o->resume, o->force, e) != 0)
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
    po.direction = o->direction;
    po.said_direction = true; /* train's first line and its help name the languages */
    po.bpe = o->bpe;
    po.joint = o->bpe > 0;
    po.progress = !o->quiet;
    PrepareLike like;
    if (o->base) {
        like = prepare_like_model(o->base, o->init);
        po.like = &like;
        po.keep_case = like.text.keep_case;
    }
    Buf summary = {0};
    if (prepare_run(&po, &summary, e) != 0)
        return -1;
    if (!o->quiet)
        fputs(summary.data ? summary.data : "", stderr);
    buf_free(&summary);
    return 0;
}

/* The Transformer's configuration from the options given (seen), its defaults for the
   sizes not given. */
static void complete_transformer(ModelConfig *cfg, const int *seen)
{
    ModelConfig t = model_config_transformer();
    t.model_dim = cfg->model_dim;
    t.ff = cfg->ff;
    t.norm = given(seen, "--norm") ? cfg->norm : TRAIN_NORM;
    t.positions = cfg->positions;
    t.dropout = cfg->dropout;
    t.label_smoothing = cfg->label_smoothing;
    t.tie_embeddings = cfg->tie_embeddings;
    t.share_embeddings = cfg->share_embeddings;
    t.layers = given(seen, "--layers") ? cfg->layers : t.layers;
    t.heads = given(seen, "--heads") ? cfg->heads : t.heads;
    bool max_positions = given(seen, "--max-positions");
    t.max_positions = t.positions == POS_LEARNED ? (max_positions ? cfg->max_positions : 256) : 0;
    if (max_positions && t.positions != POS_LEARNED)
        die_usage("train: --max-positions needs --positions learned");
    *cfg = t;
}

/* The recurrent model's configuration: the options given, defaults for heads and the
   window where the attention has them. */
static void complete_rnn(ModelConfig *cfg, const int *seen)
{
    bool heads = given(seen, "--heads"), window = given(seen, "--window");
    if (given(seen, "--layers") && cfg->layers > MODEL_MAX_LAYERS)
        die_usage("train: option --layers must be between 1 and %d, got %d", MODEL_MAX_LAYERS, cfg->layers);
    if (heads && cfg->attention != ATT_MULTIHEAD)
        die_usage("train: --heads needs --attention multihead");
    cfg->heads = cfg->attention == ATT_MULTIHEAD ? (heads ? cfg->heads : 4) : 1;
    if (window && cfg->local == LOCAL_NONE)
        die_usage("train: --window needs --local m or --local p");
    cfg->window = cfg->local == LOCAL_NONE ? 0 : (window ? cfg->window : 10);
}

/* What each architecture brings to s2s train: the table's rows of it alone (the other
   architectures refuse them; given without --arch they select it), how its
   configuration is completed, and its schedule and weight average unless given
   (docs/transformer.md, docs/quality.md). */
typedef struct Recipe {
    unsigned rows;
    void (*complete)(ModelConfig *cfg, const int *seen);
    SchedKind sched;
    double ema;
    double concat; /* --concat */
    double copy_names; /* --copy-names, on subword data */
    long share_below; /* one table for both sides, tied to the output, under this many
                         training pairs (one vocabulary; no --init) */
} Recipe;

static const Recipe recipes[ARCH_KINDS] = {
    [ARCH_RNN] = {TRAIN_RNN, complete_rnn, SCHED_PLATEAU, 0, 0, 0},
    [ARCH_TRANSFORMER] = {TRAIN_TF, complete_transformer, SCHED_WARMUP_COSINE, TRAIN_EMA, TRAIN_CONCAT,
                          TRAIN_COPY_NAMES, TRAIN_SHARE_BELOW},
};

/* Without --arch: the architecture one of whose own options is given, else the
   default recipe's, the Transformer. */
static Arch arch_of_options(const int *seen)
{
    for (int a = 0; a < ARCH_KINDS; a++)
        if (first_given(seen, recipes[a].rows, NULL, NULL) >= 0)
            return (Arch)a;
    return ARCH_TRANSFORMER;
}

/* Completes the model configuration for its architecture from the options given
   (seen): the options of another architecture alone are refused. */
static void arch_opts(ModelConfig *cfg, const int *seen)
{
    Arch arch = cfg->arch;
    for (int a = 0; a < ARCH_KINDS; a++) {
        int k = a == (int)arch ? -1 : first_given(seen, recipes[a].rows, NULL, NULL);
        if (k >= 0)
            die_usage("train: option %s does not apply to --arch %s", table->rows[k].name, arch_names[arch]);
    }
    recipes[arch].complete(cfg, seen);
    cfg->arch = arch;
}

/* The command line into *o (seen: as opt_parse fills it); returns DATA, or NULL with
   --resume when it is not given. */
static const char *parse_args(int argc, char **argv, TrainOpts *o, int *seen)
{
    const char *pos[2] = {NULL, NULL};
    *o = train_opts_default();
    int npos = opt_parse(table, o, argc, argv, seen, pos, 2);
    const char *data = pos[0];
    if (npos == 2 && o->init)
        die_usage("train: --init takes one model, and %s would make an ensemble; average the models "
                  "first (s2s average %s %s -o BASE) and give --init BASE", pos[1], o->init, pos[1]);
    if (npos == 2)
        die_usage("train: unexpected argument '%s' (see 's2s train --help')", pos[1]);
    if (o->init && o->resume)
        die_usage("train: --init and --resume exclude each other: a resumed run continues from its "
                  "state, which already started from its --init");
    if (!data && !o->resume)
        die_usage("train: missing DATA argument (see 's2s train --help')");
    if (!o->model)
        die_usage("train: missing option -o MODEL (see 's2s train --help')");
    if (o->batch.batch == 0 && o->batch.tokens == 0)
        die_usage("train: --batch 0 needs --batch-tokens N");
    if (o->resume && o->force)
        die_usage("train: --resume and --force exclude each other");
    /* A budget given alone is used whole: the epoch limit is then off unless given. */
    if (!given(seen, "--epochs") && (o->steps > 0 || o->minutes > 0))
        o->epochs = 0;
    return data;
}

/* --init BASE: the run's configuration is BASE's. Options of the other architecture
   are refused, and so are shape options (TRAIN_SHAPE, TRAIN_RNN, TRAIN_TF) whose value
   differs from BASE's; --dropout and --label-smoothing are the run's, BASE's unless
   given. */
static void base_arch(TrainOpts *o, const int *seen)
{
    const ModelConfig *b = &o->base->model.cfg;
    int k;
    for (int other = 0; other < ARCH_KINDS; other++)
        if (other != (int)b->arch && (k = first_given(seen, recipes[other].rows, NULL, NULL)) >= 0)
            die_usage("train: option %s does not apply to %s, a %s", table->rows[k].name, o->init,
                      model_ops_for(b)->title);
    TrainOpts want = *o;
    want.cfg = *b;
    unsigned shape[2] = {TRAIN_SHAPE, recipes[b->arch].rows};
    for (int i = 0; i < 2; i++) {
        k = first_given(seen, shape[i], o, &want);
        if (k >= 0)
            die_usage("train: %s differs from %s; with --init the architecture is the base model's "
                      "(see 's2s info %s')", table->rows[k].name, o->init, o->init);
    }
    float dropout = o->cfg.dropout, smoothing = o->cfg.label_smoothing;
    o->cfg = *b;
    if (given(seen, "--dropout"))
        o->cfg.dropout = dropout;
    if (given(seen, "--label-smoothing"))
        o->cfg.label_smoothing = smoothing;
}

/* The model file of --init, loaded once for the whole run. */
static ModelFile base;

/* --init BASE: loads it (a missing, damaged or foreign file, or a training state, is
   refused: exit 1) and takes its languages; a corpus DATA is prepared with its codes. */
static void load_base(TrainOpts *o, const int *seen)
{
    Err e;
    if (given(seen, "--bpe"))
        die_usage("train: option --bpe does not apply with --init: the codes and vocabularies are those of %s",
                  o->init);
    if (model_file_load(&base, o->init, false, &e) != 0)
        die("train: --init %s", e.msg);
    if (given(seen, "--direction") && strcmp(o->direction.name, base.text.dir.name) != 0)
        die_usage("train: --direction %s, but %s translates %s", o->direction.name, o->init,
                  base.text.dir.name);
    o->direction = base.text.dir;
    o->base = &base;
}

/* The architecture and what depends on it: without --arch, the run's architecture
   when resuming (saved, NULL otherwise), else the recurrent model if an option of it
   alone is given, else the Transformer (the default); then the model configuration, and
   the schedule and weight average of the architecture unless given. */
static void arch_and_defaults(TrainOpts *o, const TrainOpts *saved, const int *seen)
{
    if (o->base) {
        base_arch(o, seen);
    } else {
        if (!given(seen, "--arch")) {
            o->cfg.arch = saved ? saved->cfg.arch : arch_of_options(seen);
            int k = saved ? -1 : first_given(seen, recipes[ARCH_RNN].rows, NULL, NULL);
            if (o->cfg.arch == ARCH_RNN && k >= 0) /* named in train's first line */
                o->arch_by = table->rows[k].name;
        }
        arch_opts(&o->cfg, seen);
    }
    const Recipe *r = &recipes[o->cfg.arch];
    if (!given(seen, "--lr-schedule"))
        o->sched = r->sched;
    if (!given(seen, "--ema") && r->ema > 0)
        o->ema = r->ema;
    if (!given(seen, "--concat"))
        o->concat = r->concat;
    if (!given(seen, "--precision"))
        o->precision = TRAIN_PREC_AUTO; /* the saved one on --resume */
    if (!given(seen, "--copy-names")) {
        o->copy_names = r->copy_names;
        o->copy_names_recipe = r->copy_names > 0;
    }
    /* the embeddings as the corpus size asks (trainer.c), unless one of their options is
       given; a resumed run has its model's, a run from BASE its BASE's */
    bool emb_given = given(seen, "--share-embeddings") || given(seen, "--no-share-embeddings") ||
                     given(seen, "--tie-embeddings") || given(seen, "--no-tie-embeddings");
    if (!o->resume && !o->base && !emb_given)
        o->share_below = r->share_below;
    if (o->base && !given(seen, "--lr"))
        o->lr = TRAIN_INIT_LR;
    bool warmup_sched = o->sched == SCHED_WARMUP_DECAY || o->sched == SCHED_WARMUP_COSINE;
    if (warmup_sched && !given(seen, "--warmup"))
        o->warmup = TRAIN_WARMUP;
    if (o->sched == SCHED_WARMUP_COSINE && !given(seen, "--warmup") && !given(seen, "--warmup-share"))
        o->warmup_share = TRAIN_WARMUP_SHARE;
    if (given(seen, "--warmup-share") && o->sched != SCHED_WARMUP_COSINE)
        die_usage("train: --warmup-share needs --lr-schedule warmup-cosine");
    if (given(seen, "--warmup") && !warmup_sched)
        die_usage("train: --warmup needs --lr-schedule warmup-decay or warmup-cosine");
    if (given(seen, "--lr-patience") && o->sched != SCHED_PLATEAU)
        die_usage("train: --lr-patience needs --lr-schedule plateau");
}

/* The options of the command line completed: the architecture, its defaults, and with
   --resume the run's options (got 1: a state that predates saved options). Returns
   DATA; *saved_data: the run's, which the caller frees. */
static const char *resolve_opts(TrainOpts *o, const char *data, const int *seen, char **saved_data)
{
    TrainOpts saved;
    int got = 1;
    Err e;
    *saved_data = NULL;
    if (o->resume && (got = train_saved_opts(o->model, &saved, saved_data, &e)) < 0)
        die_err(&e);
    if (o->init)
        load_base(o, seen);
    arch_and_defaults(o, got == 0 ? &saved : NULL, seen);
    if (o->resume) {
        if (got == 0)
            *saved_data = resume_opts(o, saved, *saved_data, seen);
        if (!data)
            data = *saved_data;
        if (!data)
            die_usage("train: %s.state predates saved options: give DATA and the run's options with --resume",
                      o->model);
    }
    ModelConfig check = o->cfg;
    check.src_vocab = check.tgt_vocab = 5; /* sizes come from the data */
    if (model_config_check(&check, &e) != 0)
        die_usage("train: %s", e.msg);
    if (o->precision == TRAIN_PREC_BF16 && nn_set_precision(PREC_BF16, &e) != 0)
        die_usage("train: --precision bf16: %s", e.msg);
    nn_set_precision(PREC_F32, &e); /* train_run sets the run's */
    if (given(seen, "--direction") && is_dir(data))
        die_usage("train: option --direction is for a corpus DATA; %s was prepared with its own", data);
    if (given(seen, "--bpe") && is_dir(data))
        die_usage("train: option --bpe is for a corpus DATA; %s was prepared with its own", data);
    return data;
}

/* Trains o on data, as one process or one of several started by mpirun
   (docs/distributed.md); returns 0 or exits with the error. */
static int run(TrainOpts *o, const char *data, int argc, char **argv)
{
    Err e;
    if (dist_init(&argc, &argv, &e) != 0)
        die_usage("train: %s", e.msg);
    bool lead = dist_rank() == 0;

    /* Nothing is written before the outputs are known to be ours and the lock is held.
       Process 0 claims them and prepares a corpus; the others wait for its outcome. */
    char *prepared = NULL;
    if (!is_dir(data)) {
        prepared = xmalloc(strlen(o->model) + 3);
        sprintf(prepared, "%s.d", o->model);
    }
    int ok = !lead || claim_and_prepare(o, data, prepared, &e) == 0;
    dist_bcast(&ok, sizeof ok, 0);
    if (!ok) {
        if (lead)
            fprintf(stderr, "s2s: %s\n", e.msg);
        quit(1);
    }
    o->data = prepared ? prepared : data;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* mpirun passes SIGUSR1 on to every process at once (and SIGINT, as SIGTERM, only
       after a delay): the same stop */
    sigaction(SIGUSR1, &sa, NULL);

    int rc = train_run(o, &e);
    free(prepared);
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

int cmd_train(int argc, char **argv)
{
    TrainOpts o;
    int *seen = XNEW(int, opt_count(table->rows));
    char *saved_data;
    const char *data = parse_args(argc, argv, &o, seen);
    data = resolve_opts(&o, data, seen, &saved_data);
    free(seen);
    int rc = run(&o, data, argc, argv);
    free(saved_data);
    if (o.base)
        model_file_free(&base);
    return rc;
}
