/* The options of `s2s train`: one table (base/opt.h) drives the parsing, the help, the
   checks of --resume and of the architecture, and the options saved in MODEL.state. */
#ifndef S2S_TRAIN_OPTIONS_H
#define S2S_TRAIN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/opt.h"
#include "data/batch.h"
#include "model/config.h"
#include "model/file.h"
#include "text/corpus.h"
#include "train/optim.h"

/* --precision: the matrix products' (nn/bf16.h); auto (s2s train's default) is bf16
   where the CPU has bf16 instructions, else f32. */
typedef enum { TRAIN_PREC_AUTO, TRAIN_PREC_F32, TRAIN_PREC_BF16, TRAIN_PREC_KINDS } TrainPrecision;
extern const char *const train_precision_names[TRAIN_PREC_KINDS];

typedef struct TrainOpts {
    const char *data;  /* a prepare directory */
    const char *model; /* output path MODEL */
    ModelConfig cfg;   /* vocabulary sizes come from the data */
    BatchOpts batch;
    double lr, beta1, beta2, eps, weight_decay, clip;
    SchedKind sched;
    long warmup;       /* warmup-decay and warmup-cosine: W */
    double warmup_share; /* warmup-cosine: the warmup also ends at this share of the budget */
    const char *arch_by; /* the option that selected the architecture without --arch, or NULL */
    long sched_patience;/* plateau: steps without a better valid BLEU before halving */
    double min_delta;  /* BLEU points a validation must gain over the best to count as
                          an improvement (plateau schedule and --patience) */
    long epochs;       /* 0: no limit (the default when --steps or --time is given) */
    long steps;        /* 0: no limit */
    double minutes;    /* 0: no limit */
    long valid_every;  /* steps; 0: at epoch ends only */
    int patience;      /* stop after this many validations without a better BLEU; 0: never */
    long valid_max;    /* at most this many valid pairs are decoded for BLEU (0: all) */
    int threads;       /* <= 0: the free cores (base/cores.h), or under mpirun the host's cores shared by its processes */
    TrainPrecision precision; /* of the matrix products (nn/bf16.h) */
    uint64_t seed;
    bool resume;
    bool force;        /* start over even when MODEL.state exists */
    long log_every;    /* plain progress line every N steps when stderr is no terminal */
    int progress;      /* -1: live line when stderr is a terminal; 0: plain lines; 1: live */
    bool quiet;        /* no progress lines at all */
    double ema;        /* decay of the weights' moving average (0: none); MODEL and
                          MODEL.last then hold the average, MODEL.state both */
    long keep_ckpt;    /* keep the last N validation checkpoints as MODEL.ckpt.STEP */
    double concat;     /* joined pairs' share of an epoch's examples (data/concat.h) */
    double copy_names; /* renamed pairs per pair with a name, each epoch (data/names.h) */
    bool copy_names_recipe; /* copy_names is the recipe's, not given: 0 where a side of the
                               data has word vocabularies (no error, as when given) */
    long share_below;  /* the recipe's choice, made against the data: one embedding table for
                          both sides, tied to the output, when the training split has fewer
                          pairs than this and one vocabulary (0: the options as given; > 0
                          only when no embedding option is given, so with share_embeddings
                          set it says the choice was made) */
    double bpe_dropout; /* each epoch a new segmentation of the training split with every
                           merge left out with this probability (data/bpe_dropout.h) */
    double token_dropout; /* each source and decoder-input token of a training batch
                             replaced by <unk> with this probability */
    long bpe;          /* a corpus DATA: joint subword merges of its preparation */
    Direction direction; /* a corpus DATA: its languages */
    const char *init;  /* --init BASE: the model file the run starts from, or NULL */
    const ModelFile *base; /* BASE, loaded (its vocabularies, codes and configuration are the
                              run's); NULL on --resume, whose state holds the weights */
} TrainOpts;

/* Defaults of `s2s train` (the reference recurrent configuration; the command makes the
   Transformer and its schedule the default, src/cmd_train.c). */
TrainOpts train_opts_default(void);

/* Warmup steps of the warmup-decay schedule unless --warmup is given: about 9 % of the
   steps the Transformer takes in an hour on two cores at ~600 target tokens per batch
   (the paper's 4,000 were for batches of 25,000 tokens; docs/transformer.md). */
#define TRAIN_WARMUP 800
/* ... or sooner, at this share of the budget, so that a short run reaches its peak rate
   (warmup-cosine without --warmup; a 60-minute run on two cores is still at step W). */
#define TRAIN_WARMUP_SHARE 0.1

/* The recipe of `s2s train` (docs/quality.md, measured at 30 and 60 minutes on fra.txt):
   the Transformer keeps an average of its weights with this decay unless --ema is given,
   and a corpus DATA is prepared with this many joint BPE merges unless --bpe is given. */
#define TRAIN_EMA 0.999
#define TRAIN_BPE 16000
/* The Transformer's layer norm unless --norm is given: before each sublayer (docs/quality.md,
   "Pre-norm at the hour": ahead of post-norm at every validation, on 20,000 pairs and on
   fra.txt, at 3,000 steps, 4,000 and the hour). */
#define TRAIN_NORM NORM_PRE
/* The share of joined examples (--concat) of the Transformer's recipe. */
#define TRAIN_CONCAT 0.1
/* The renamed pairs (--copy-names) of the Transformer's recipe, on subword data. */
#define TRAIN_COPY_NAMES 0.5
/* The Transformer's recipe on a corpus of fewer training pairs than this, with one
   vocabulary for both sides: one embedding table for both, tied to the output
   projection (docs/quality.md, "The recipe fits the corpus": it gained on 16,000 pairs,
   and nothing on fra.txt's 158,003). */
#define TRAIN_SHARE_BELOW 50000
/* The learning rate of a run that starts from a model (--init) unless --lr is given: a
   tenth of the recipe's, which kept most of the base model's quality on general text
   while gaining as much on the new domain (docs/finetune.md). */
#define TRAIN_INIT_LR 1e-4


/* Flags of the rows (OptRow.flags), besides base/opt.h's. */
#define TRAIN_FIXED (OPT_USER << 0)  /* given with --resume, must equal the run's */
#define TRAIN_CHANGE (OPT_USER << 1) /* may differ on --resume (named in the refusal) */
#define TRAIN_RNN (OPT_USER << 2)    /* the recurrent model's alone; selects it */
#define TRAIN_TF (OPT_USER << 3)     /* the Transformer's alone */
#define TRAIN_TOP (OPT_USER << 4)    /* saved at the top of the state, not in "options" */
#define TRAIN_SHAPE (OPT_USER << 5)  /* the model's shape (with TRAIN_RNN and TRAIN_TF): with
                                        --init, must equal the base model's */

/* The options that may differ on --resume (the rows of TRAIN_CHANGE), for messages. */
#define TRAIN_MAY_CHANGE \
    "--time, --steps, --epochs, --patience, --threads, --precision, --log-every and --quiet"

/* The rows of the table; the fields are those of TrainOpts. */
extern const OptTable train_option_table;

#endif
