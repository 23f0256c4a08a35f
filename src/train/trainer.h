/*
 * The training loop of `s2s train`: minibatches from a prepared directory, Adam with
 * clipping and a learning-rate schedule, periodic validation (loss, perplexity,
 * greedy BLEU), checkpoints and the log.
 *
 * Files, for an output path MODEL:
 *   MODEL            the best model so far by valid BLEU (every checkpoint when the
 *                    valid split is empty)
 *   MODEL.last       the latest model
 *   MODEL.ckpt.STEP  with --keep-checkpoints N, the model of each of the last N
 *                    validations (for s2s average)
 *   MODEL.state      everything --resume needs: weights, Adam moments, step, epoch,
 *                    position in the epoch, random generator states, schedule state
 *   MODEL.log.jsonl  one JSON object a line: {"event":"start"...}, one "step" line
 *                    per step, "valid" lines, and a "stop" line
 * Every file is replaced atomically; MODEL.state is written after MODEL.last.
 * With --ema D the model files hold the exponential moving average of the weights
 * (validation scores it too); MODEL.state holds the weights and the average.
 *
 * Reproducibility: the same data, options, seed and threads give the same losses at
 * every step, and a run resumed from MODEL.state continues exactly as the
 * uninterrupted run would have.
 */
#ifndef S2S_TRAIN_TRAINER_H
#define S2S_TRAIN_TRAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "model/config.h"
#include "model/file.h"
#include "data/batch.h"
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
    int threads;       /* <= 0: all cores, shared by the run's processes on a host */
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
/* The share of joined examples (--concat) of the Transformer's recipe. */
#define TRAIN_CONCAT 0.1
/* The renamed pairs (--copy-names) of the Transformer's recipe, on subword data. */
#define TRAIN_COPY_NAMES 0.5
/* The learning rate of a run that starts from a model (--init) unless --lr is given: a
   tenth of the recipe's, which kept most of the base model's quality on general text
   while gaining as much on the new domain (docs/finetune.md). */
#define TRAIN_INIT_LR 1e-4

/* Runs training, as one of the processes of train/dist.h (process 0 alone writes the
   files, the log and the progress). Returns 0 (stopped by a limit, patience, or a
   signal after saving), or -1 with e set; files written before an error stay valid.
   Over several processes, an error that every process reached alike (a setup that
   failed on any of them, too many non-finite steps, weights that differ) returns
   TRAIN_FAILED_ALL on every process, with the message on the one that reports it and
   e->msg empty on the others; -1 is then an error of this process alone, while the
   others may wait for it (the caller ends them: dist_abort). */
#define TRAIN_FAILED_ALL (-2)
int train_run(const TrainOpts *o, Err *e);

/* The options of the run saved in MODEL.state: model configuration (vocabulary sizes
   included), *data (the prepared directory, absolute; the caller frees it), optimiser,
   schedule, batches, seed, validation and limits; the rest (threads, output) as
   train_opts_default. So that `--resume` needs no flag retyped. Returns 0, 1 when the
   state predates saved options (nothing set), or -1 with e set. */
int train_saved_opts(const char *model, TrainOpts *out, char **data, Err *e);

/* The weights the run trained, before their moving average (--ema): the "params" of the
   training state at path, checked against last (MODEL.last of the same checkpoint, read
   from last_path: the same configuration, vocabularies and step), e.g.
     m.s2s.state: step 900, but m.s2s.last is of step 1000: not the same checkpoint
   On success *w points into *f, the mapped state (st_close when done). */
int train_state_weights(const char *path, const ModelFile *last, const char *last_path, struct StFile **f,
                        const real **w, Err *e);

/* Set by SIGINT/SIGTERM handlers: the loop finishes its step, saves, and returns. */
extern volatile int train_stop_requested;

#endif
