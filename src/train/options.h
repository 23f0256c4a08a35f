/* The options of `s2s train`: one table (base/opt.h) drives the parsing, the help, the
   checks of --resume and of the architecture, and the options saved in MODEL.state. */
#ifndef S2S_TRAIN_OPTIONS_H
#define S2S_TRAIN_OPTIONS_H

#include "base/opt.h"
#include "train/trainer.h"

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
