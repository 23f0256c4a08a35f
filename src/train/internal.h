/*
 * Inside the training loop of train/trainer.h: the Trainer that its files share and the
 * functions that one of them offers the others. Private to src/train. Each file calls
 * only those of the files below it:
 *
 *   trainer.c   the options' defaults, the setup, the loop, train_run
 *   validate.c  valid loss and BLEU (sharded over the processes), the validation step
 *   state.c     the history, MODEL.state (save, load, the saved options), checkpoints,
 *               the weights' moving average put in place of the weights and back
 *   progress.c  the progress line and messages on stderr, the lines of MODEL.log.jsonl
 */
#ifndef S2S_TRAIN_INTERNAL_H
#define S2S_TRAIN_INTERNAL_H

#include <stdio.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/rng.h"
#include "data/batch.h"
#include "data/bpe_dropout.h"
#include "data/concat.h"
#include "data/names.h"
#include "data/prepared.h"
#include "train/optim.h"
#include "train/step.h"
#include "train/trainer.h"

/* The metadata key of MODEL.state that holds the progress and the options (JSON). */
#define KEY_STATE "s2s.state"

/* Everything that changes as training goes and is saved in MODEL.state. */
typedef struct Progress {
    long step;         /* steps taken */
    long epoch;        /* epochs completed */
    long batch;        /* next batch of the current epoch's plan */
    Rng epoch_rng;     /* data generator at the start of the current epoch */
    Rng drop_rng;      /* dropout generator */
    double seconds;    /* training time so far (validation included) */
    long long tokens;  /* target tokens trained on */
    double best_bleu;  /* best valid BLEU so far; -1 before the first */
    long best_step;
    int bad_valid;     /* scheduled validations since the best of them */
    double sched_bleu; /* best BLEU of the scheduled validations; -1 before the first */
    long sched_step;   /* step of the last scheduled validation */
    double last_valid_loss, last_valid_ppl, last_valid_bleu;
    long last_valid_step;
    double lr_scale;   /* halved on every non-finite step */
    long bad_steps;    /* non-finite steps in a row */
} Progress;

/* Training stops after this many non-finite steps in a row. */
#define TRAIN_MAX_BAD_STEPS 5

typedef struct Trainer {
    const TrainOpts *o;
    Prepared data;
    Model m;
    Adam adam;
    Sched sched;
    Progress p;
    Rng data_rng;
    Concat concat; /* the current epoch's examples (--concat, --copy-names) */
    NameCopy names; /* --copy-names: the training pairs' names, invented names */
    BpeDropout bpe_drop; /* --bpe-dropout: the training split segmented anew each epoch */
    BatchPlan plan, vplan;
    BatchBuf bb;
    Work *work;
    char *path_last, *path_state, *path_log;
    FILE *log;
    bool live; /* live progress line on stderr */
    bool line_shown;
    double t_start;       /* clock_now() at the start of this process's training */
    double seconds_base;  /* p.seconds at that moment */
    double t_shown;
    double valid_seconds; /* spent validating in this process */
    long ckpt_step; /* step of the files on disk; -1 before the first checkpoint */
    long valid_shown; /* step of the last validation shown on stderr */
    real *ema;      /* (layout.total) the weights' moving average (--ema), or NULL */
    bool ema_in;    /* the average is in m.params now (and the weights in ema) */
    int rank, size;  /* this process of the run's processes (train/dist.h) */
    int *mine;       /* (max rows) this process's rows of a batch, when size > 1 */
    unsigned voted;  /* size > 1: the STEP_STOP_ bits the processes agreed on at the last step */
    bool agreed;     /* the error was reached by every process alike */
    /* --init: where the run started, {"file": BASE, "crc32": its weights' s2s.crc32,
       "steps": its history's steps}, for the history and the state; NULL: no --init */
    char *init_from;
    /* --keep-checkpoints: the steps of the MODEL.ckpt.STEP files this run wrote and has
       not removed, ascending (saved in the state); the only ones it removes */
    long *ckpts;
    size_t n_ckpts;
} Trainer;

/* Training time so far, validation included. */
static inline double trainer_elapsed(const Trainer *t) { return t->seconds_base + (clock_now() - t->t_start); }

/* state.c */

/* Puts the moving average of the weights in place of the weights (on), or back (off):
   the two arrays trade contents, so nothing is allocated. */
void trainer_use_ema(Trainer *t, bool on);

/* --init: the weights (and their average) start as BASE's, which has this run's
   configuration and vocabularies (checked before). */
void trainer_start_from_base(Trainer *t);
/* Restores weights, moments and progress from MODEL.state, after checking that it
   belongs to this data and configuration. */
int trainer_load_state(Trainer *t, Err *e);
/* MODEL.last, MODEL.state, and MODEL when best (or when there is no valid split). */
int trainer_checkpoint(Trainer *t, bool best, bool keep, Err *e);
/* A count in the JSON object text[] under key, or -1 when absent or not a count. */
long trainer_json_count(const char *text, const char *key);

/* validate.c */

/* Validates, logs, updates best/patience/schedule and writes the checkpoint files.
   Scheduled validations (every --valid-every steps and at epoch ends) also drive the
   learning-rate schedule and --patience; the extra one after a stop by --steps or
   --time does not, so that a run stopped there and resumed continues exactly as the
   uninterrupted run. Sets *stop when patience is exhausted. */
int trainer_validate(Trainer *t, bool scheduled, bool *stop, Err *e);

/* progress.c */

/* A line on stderr (process 0 alone, none with --quiet), below the progress line. */
void trainer_say(Trainer *t, const char *fmt, ...) S2S_PRINTF(2, 3);
/* The fraction of the run done, from whichever limit comes first; -1 if unknown. */
double trainer_done_fraction(const Trainer *t);
/* The progress line: live on a terminal, else a plain line every --log-every steps. */
void trainer_show_progress(Trainer *t, double loss, double ppl, double tok_s, double lr, bool force);
/* A number of the history and the log: 6 significant digits, null when not finite or
   when there is none (have false). */
void trainer_put_num6(JsonWriter *w, const char *key, double x, bool have);
/* Starts a log line in b: {"event": event, ... */
void trainer_log_open(JsonWriter *w, Buf *b, const char *event);
/* Ends the line begun by trainer_log_open and writes it (process 0 alone has a log). */
void trainer_log_close(Trainer *t, JsonWriter *w);
/* The first log line of a run: "start", or "resume" with the step it resumes at. */
void trainer_log_start(Trainer *t, const ModelConfig *cfg, int threads, Buf *b);
/* The log line of a training step of ntok target tokens at rate lr. */
void trainer_log_step(Trainer *t, Buf *b, const StepResult *r, double lr, long ntok, double tok_s);

#endif
