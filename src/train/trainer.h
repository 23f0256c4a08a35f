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
#include "model/file.h"
#include "train/options.h"

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
