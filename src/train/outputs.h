/*
 * The files a training run writes, claimed before anything is written.
 *
 * For an output path MODEL a run writes MODEL, MODEL.last, MODEL.state,
 * MODEL.log.jsonl, MODEL.ckpt.STEP (--keep-checkpoints) and, when DATA is a corpus
 * file, the prepared directory MODEL.d/.
 * It may replace only files of its own kind: a model file (its header's format tag),
 * a training state (its tag), a training log (its first line), a prepared directory
 * (it holds prepare.json). Anything else that exists at one of those paths, and any
 * output path that is the same file as an input (device and inode: "x", "./x", a hard
 * link and a symlink are all the same file), is refused before training starts, with
 * --force as without it.
 *
 * One run per model: the claim holds an advisory lock on MODEL.lock for the whole run
 * (released at the end of the process, also when it is killed), so a second run on the
 * same MODEL, or a --resume of a live one, is refused with the running process's id.
 */
#ifndef S2S_TRAIN_OUTPUTS_H
#define S2S_TRAIN_OUTPUTS_H

#include <stdbool.h>

#include "base/err.h"
#include "base/file.h"

#define TRAIN_FORMAT_STATE "s2s-state-1"

typedef struct TrainClaim {
    FileLock lock;
} TrainClaim;

/* Claims MODEL's outputs for a run on DATA (a prepared directory, or a corpus file
   that will be prepared into MODEL.d/) that starts from the model file base (--init;
   NULL: none), which is an input too. resume: MODEL.state must exist; otherwise it
   must not, unless force. Returns 0 with the lock held, or -1 with e set (one line
   naming the path) and nothing written. */
int train_claim(TrainClaim *c, const char *model, const char *data, const char *base, bool resume, bool force,
                Err *e);
/* Releases the lock and removes MODEL.lock. */
void train_release(TrainClaim *c);

#endif
