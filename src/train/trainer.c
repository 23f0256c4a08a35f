/* The training loop of `s2s train` (train/trainer.h): the options' defaults, the setup
   before the first step, the loop, and train_run. What it shows and logs is in
   progress.c, MODEL.state and the checkpoints in state.c, validation in validate.c. */
#include "train/internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "model/file.h"
#include "nn/bf16.h"
#include "nn/linalg.h"
#include "data/prepare.h"
#include "train/dist.h"
#include "train/fault.h"

volatile int train_stop_requested;

/* Removes the temporary files (PATH.tmp.PID, base/file.h) that a killed run left
   beside MODEL, MODEL.last and MODEL.state, when their process is gone. */
static void remove_stale_temporaries(const char *model)
{
    const char *slash = strrchr(model, '/');
    char *dir = path_dir(model);
    const char *base = slash ? slash + 1 : model;
    size_t bl = strlen(base);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return;
    }
    static const char *const kinds[] = {".tmp.", ".last.tmp.", ".state.tmp."};
    for (struct dirent *de; (de = readdir(d));) {
        if (strncmp(de->d_name, base, bl) != 0)
            continue;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            size_t kl = strlen(kinds[k]);
            const char *rest = de->d_name + bl;
            if (strncmp(rest, kinds[k], kl) != 0)
                continue;
            char *end;
            long pid = strtol(rest + kl, &end, 10);
            if (end == rest + kl || *end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                continue;
            char *path = path_join(dir, de->d_name);
            unlink(path);
            free(path);
        }
    }
    closedir(d);
    free(dir);
}

static int prepare_outputs(Trainer *t, Err *e)
{
    const TrainOpts *o = t->o;
    /* The outputs were claimed (train/outputs.h) before the data was prepared. Check that the directory takes new files before spending time on training. */
    char *probe = xmalloc(strlen(o->model) + 32);
    sprintf(probe, "%s.probe-%ld", o->model, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f) {
        int err = errno;
        free(probe);
        return err_set(e, "%s: cannot write there: %s", o->model, strerror(err));
    }
    fclose(f);
    unlink(probe);
    free(probe);
    remove_stale_temporaries(o->model);
    t->log = fopen(t->path_log, o->resume ? "a" : "w");
    if (!t->log)
        return err_set(e, "%s: %s", t->path_log, strerror(errno));
    return 0;
}

static void trainer_free(Trainer *t)
{
    if (t->log)
        fclose(t->log);
    work_free(t->work);
    batch_buf_free(&t->bb);
    batch_plan_free(&t->plan);
    concat_free(&t->concat);
    names_free(&t->names);
    bpe_dropout_free(&t->bpe_drop);
    batch_plan_free(&t->vplan);
    free(t->mine);
    optim_adam_free(&t->adam);
    if (t->m.params)
        model_free(&t->m);
    prepared_free(&t->data);
    free(t->path_last);
    free(t->path_state);
    free(t->path_log);
    free(t->ema);
    free(t->init_from);
    free(t->ckpts);
}

/* Why the loop stopped, for the log and the message. */
typedef enum Stop { STOP_NONE, STOP_EPOCHS, STOP_STEPS, STOP_TIME, STOP_PATIENCE, STOP_SIGNAL } Stop;
static const char *const stop_names[] = {"none", "epochs", "steps", "time", "patience", "signal"};

/* Over several processes a signal and the time limit are what the processes agreed on
   at the last step (process 0's clock decides), so that they all stop together. */
static Stop limit_reached(const Trainer *t)
{
    const TrainOpts *o = t->o;
    if (t->size > 1 ? (t->voted & STEP_STOP_SIGNAL) != 0 : train_stop_requested != 0)
        return STOP_SIGNAL;
    if (o->steps && t->p.step >= o->steps)
        return STOP_STEPS;
    if (t->size > 1 ? (t->voted & STEP_STOP_TIME) != 0 : o->minutes > 0 && trainer_elapsed(t) >= o->minutes * 60)
        return STOP_TIME;
    if (o->epochs && t->p.epoch >= o->epochs)
        return STOP_EPOCHS;
    return STOP_NONE;
}

/* The longest sides of a joined pair (--concat): CONCAT_MAX_TOKENS, or fewer where
   learned positions are fewer (as check_positions). */
static ConcatOpts concat_opts(const Trainer *t)
{
    ConcatOpts c = {.share = t->o->concat, .max_s = CONCAT_MAX_TOKENS, .max_t = CONCAT_MAX_TOKENS,
                    .rename = t->o->copy_names, .names = t->o->copy_names > 0 ? &t->names : NULL,
                    .names_from = &t->data.train.set};
    int rows = model_max_positions(&t->m);
    if (rows && rows < c.max_s)
        c.max_s = rows;
    if (rows && rows - 1 < c.max_t)
        c.max_t = rows - 1;
    return c;
}

/* The longest sides of a training pair segmented with --bpe-dropout: those of a joined
   pair, or the split's longest if longer. */
static void bpe_dropout_bounds(const Trainer *t, int *max_s, int *max_t)
{
    ConcatOpts c = concat_opts(t);
    int ms, mt, lt;
    pair_extent(&t->data.train.set, &ms, &mt, &lt);
    *max_s = ms > c.max_s ? ms : c.max_s;
    *max_t = mt > c.max_t ? mt : c.max_t;
}

/* The examples of the current epoch: the training pairs (segmented anew with
   --bpe-dropout), and joined and renamed pairs with --concat and --copy-names. */
static int epoch_examples(Trainer *t, Err *e)
{
    ConcatOpts c = concat_opts(t);
    const PairSet *base = &t->data.train.set;
    if (t->o->bpe_dropout > 0) {
        if (bpe_dropout_epoch(&t->bpe_drop, base, t->o->seed, t->p.epoch, e) != 0)
            return -1;
        base = &t->bpe_drop.set;
    }
    return concat_epoch(&t->concat, base, &c, t->o->seed, t->p.epoch, e);
}

/* The end of an epoch: the next epoch's examples and plan, then a validation unless one
   just happened (*stop and *why set when patience is exhausted). */
static int epoch_end(Trainer *t, bool *stop, Stop *why, Err *e)
{
    Progress *p = &t->p;
    p->epoch++;
    p->batch = 0;
    p->epoch_rng = t->data_rng;
    if (epoch_examples(t, e) != 0 || batch_plan_start(&t->plan, &t->concat.set, &t->o->batch, &t->data_rng, e) != 0)
        return -1;
    if (p->sched_step != p->step && trainer_validate(t, true, stop, e) != 0)
        return -1;
    if (*stop)
        *why = STOP_PATIENCE;
    return 0;
}

/* This process's rows of the batch rows[nrows] in *b, *nmine of them (over several
   processes there may be none). Returns the target tokens of the whole batch. */
static long fill_batch(Trainer *t, const int *rows, int nrows, Batch *b, int *nmine)
{
    const TrainOpts *o = t->o;
    const PairSet *d = &t->concat.set;
    int n = nrows;
    long ntok = 0;
    if (t->size > 1) {
        /* rows r, r + size, ... of the batch (sorted by length): even shares */
        n = 0;
        for (int j = 0; j < nrows; j++) {
            ntok += pair_tgt_len(d, rows[j]) + 1;
            if (j % t->size == t->rank)
                t->mine[n++] = rows[j];
        }
        rows = t->mine;
    }
    if (n > 0)
        batch_fill(b, &t->bb, d, rows, n);
    if (n > 0 && o->token_dropout > 0) /* keyed by the step: the same on --resume */
        batch_token_dropout(b, t->bb.rows, o->token_dropout, o->seed ^ rng_mix(0x6b657973ULL + (uint64_t)t->p.step));
    if (t->size == 1)
        ntok = b->ntok;
    *nmine = n;
    return ntok;
}

/* The rate of the next step: the schedule's at its step and share of the budget. */
static double step_lr(Trainer *t)
{
    double lr = optim_sched_lr_at(&t->sched, t->p.step + 1, trainer_done_fraction(t)) * t->p.lr_scale;
    /* a schedule that follows the clock: every process takes process 0's rate */
    if (t->size > 1 && t->o->sched == SCHED_WARMUP_COSINE && t->o->minutes > 0)
        dist_bcast(&lr, sizeof lr, 0);
    return lr;
}

/* A step whose loss or gradient was not finite (r): its update was skipped (weights and
   moments stay as they were) and the rate is lowered. After TRAIN_MAX_BAD_STEPS such
   steps in a row, -1 with e set. */
static int step_skipped(Trainer *t, const StepResult *r, Buf *lb, Err *e)
{
    Progress *p = &t->p;
    JsonWriter w;
    p->bad_steps++;
    p->lr_scale *= 0.5;
    trainer_say(t, "step %ld: non-finite %s; update skipped, learning rate scaled by %g", p->step + 1,
                isfinite(r->loss) ? "gradient" : "loss", p->lr_scale);
    trainer_log_open(&w, lb, "nonfinite");
    json_put_int(&w, "step", p->step + 1);
    trainer_put_num6(&w, "lr_scale", p->lr_scale, true);
    trainer_log_close(t, &w);
    if (p->bad_steps < TRAIN_MAX_BAD_STEPS)
        return 0;
    t->agreed = true; /* the loss and gradient are the same on every process */
    if (t->ckpt_step >= 0)
        return err_set(e, "step %ld: %ld steps in a row had a non-finite loss or gradient; "
                          "stopped (%s and %s hold step %ld)", p->step + 1, p->bad_steps,
                       t->path_last, t->path_state, t->ckpt_step);
    return err_set(e, "step %ld: %ld steps in a row had a non-finite loss or gradient; "
                      "stopped before any checkpoint", p->step + 1, p->bad_steps);
}

static int train_loop(Trainer *t, Stop *why, Err *e)
{
    const TrainOpts *o = t->o;
    Progress *p = &t->p;
    Model *m = &t->m;
    Buf lb = {0};
    Batch b;
    double tok_t0 = clock_now(); /* target tokens per second of this process, validation excluded */
    long long tok_window = 0;
    bool stop = false;
    int rc = 0;
    *why = STOP_NONE;
    const int *rows;
    int nrows;
    while (!stop) {
        if ((*why = limit_reached(t)) != STOP_NONE)
            break;
        int got = batch_plan_next(&t->plan, &rows, &nrows, e);
        if (got < 0) {
            rc = -1;
            break;
        }
        if (got == 0) {
            /* end of an epoch: validate unless that just happened */
            if ((rc = epoch_end(t, &stop, why, e)) != 0)
                break;
            continue;
        }
        int nmine;
        long ntok = fill_batch(t, rows, nrows, &b, &nmine);
        bool late = t->rank == 0 && o->minutes > 0 && trainer_elapsed(t) >= o->minutes * 60;
        unsigned vote = (train_stop_requested ? STEP_STOP_SIGNAL : 0u) | (late ? STEP_STOP_TIME : 0u);
        double lr = step_lr(t);
        StepOpts so = {.drop = m->cfg.dropout > 0 ? &p->drop_rng : NULL, .clip = o->clip, .lr = lr,
                       .poison = fault_nonfinite(p->step + 1), .stop = vote};
        StepResult r = train_step_dist(m, t->work, &t->adam, nmine > 0 ? &b : NULL, ntok, &so);
        t->voted = r.stop;
        if (!r.applied) {
            if ((rc = step_skipped(t, &r, &lb, e)) != 0)
                break;
        } else {
            p->bad_steps = 0;
        }
        p->step++;
        p->batch++;
        p->tokens += ntok;
        tok_window += ntok; /* every process's tokens: process 0 shows their sum per second */
        double train_s = clock_now() - tok_t0 - t->valid_seconds;
        double tok_s = train_s > 0 ? (double)tok_window / train_s : 0;
        double loss = r.loss / (double)ntok, ppl = exp(r.nll / (double)ntok);
        trainer_log_step(t, &lb, &r, lr, ntok, tok_s);
        trainer_show_progress(t, loss, ppl, tok_s, lr, false);
        if (o->valid_every > 0 && p->step % o->valid_every == 0) {
            if ((rc = trainer_validate(t, true, &stop, e)) != 0)
                break;
            if (stop)
                *why = STOP_PATIENCE;
        }
    }
    buf_free(&lb);
    return rc;
}

/* With learned positions every training and valid pair must fit the table: a source
   of at most max_positions tokens, a target of at most max_positions − 1 (<bos> or
   <eos> takes one more step). */
static int check_positions(const Model *m, const Prepared *d, Err *e)
{
    int rows = model_max_positions(m);
    if (!rows)
        return 0;
    int ms = 0, mt = 0;
    const Split *splits[2] = {&d->train, &d->valid};
    for (int k = 0; k < 2; k++) {
        int s, t, lt;
        pair_extent(&splits[k]->set, &s, &t, &lt);
        ms = s > ms ? s : ms;
        mt = t > mt ? t : mt;
    }
    if (ms > rows || mt + 1 > rows)
        return err_set(e, "%s: --max-positions %d is too small for the longest pairs (%d source, %d target "
                          "tokens); give at least --max-positions %d or prepare with a smaller --max-len",
                       d->dir, rows, ms, mt, ms > mt + 1 ? ms : mt + 1);
    return 0;
}

/* --share-embeddings: the data's two vocabularies must be one, token for token. */
static int check_shared_vocab(const Prepared *d, const ModelConfig *cfg, Err *e)
{
    if (!cfg->share_embeddings)
        return 0;
    if (!vocab_equal(d->src_vocab, d->tgt_vocab))
        return err_set(e, "%s: --share-embeddings needs one vocabulary for both sides (s2s prepare --joint)",
                       d->dir);
    return 0;
}

/* The data and the model: the configuration completed against the data (*cfg), and what
   --copy-names and --bpe-dropout need of the data, all checked. */
static int setup_model(Trainer *t, TrainOpts *own, ModelConfig *cfg, Err *e)
{
    const TrainOpts *o = t->o;
    if (prepared_load(&t->data, o->data, e) != 0)
        return -1;
    if (own->copy_names_recipe && (!t->data.bpe[0] || !t->data.bpe[1]))
        own->copy_names = 0; /* the recipe's names need subwords; the state saves the 0 */
    if (own->share_below > 0 && t->data.train.set.n < own->share_below &&
        vocab_equal(t->data.src_vocab, t->data.tgt_vocab)) {
        own->cfg.share_embeddings = own->cfg.tie_embeddings = true; /* the state saves the model's */
    }
    *cfg = o->cfg;
    cfg->src_vocab = (int)vocab_size(t->data.src_vocab);
    cfg->tgt_vocab = (int)vocab_size(t->data.tgt_vocab);
    Err ce;
    if (o->base) { /* the data must be numbered as BASE numbers it */
        PrepareLike like = prepare_like_model(o->base, o->init);
        if (prepare_like_check(&like, &t->data, e) != 0)
            return -1;
    }
    if (check_shared_vocab(&t->data, cfg, e) != 0)
        return -1;
    if (model_config_check(cfg, &ce) != 0) /* the options were checked with placeholder sizes: this is about the data */
        return err_set(e, "%s: %s", o->data, ce.msg);
    model_init(&t->m, cfg, true);
    if (check_positions(&t->m, &t->data, e) != 0)
        return -1;
    if (o->copy_names > 0) {
        if (!t->data.bpe[0] || !t->data.bpe[1])
            return err_set(e, "%s: --copy-names needs subword vocabularies on both sides (s2s prepare --bpe)",
                           o->data);
        const Vocab *v[2] = {t->data.src_vocab, t->data.tgt_vocab};
        const Bpe *b[2] = {t->data.bpe[0], t->data.bpe[1]};
        TokOpts to[2] = {text_src_opts(&t->data.text), text_tgt_opts(&t->data.text)};
        if (names_init(&t->names, &t->data.train.set, v, b, to, (uint64_t)o->seed, e) != 0)
            return -1;
    }
    if (o->bpe_dropout > 0) {
        if (!t->data.bpe[0] && !t->data.bpe[1])
            return err_set(e, "%s: --bpe-dropout needs subword vocabularies (s2s prepare --bpe)", o->data);
        int bs, bt;
        bpe_dropout_bounds(t, &bs, &bt);
        if (bpe_dropout_init(&t->bpe_drop, &t->data, o->bpe_dropout, bs, bt, e) != 0)
            return -1;
    }
    return 0;
}

/* The optimiser, the schedule, the progress of a new run and the weights: those of
   MODEL.state (--resume), of BASE (--init), or random. */
static int setup_weights(Trainer *t, Err *e)
{
    const TrainOpts *o = t->o;
    optim_adam_init(&t->adam, t->m.layout.total, o->beta1, o->beta2, o->eps, o->weight_decay);
    t->sched = optim_sched_make(o->sched, o->lr);
    t->sched.warmup = o->warmup;
    t->sched.warmup_share = o->warmup_share;
    t->sched.patience = o->sched_patience;
    t->sched.threshold = o->min_delta;
    t->sched.higher_better = true;
    t->sched.min_lr = o->lr / 100;
    t->p.best_bleu = t->p.sched_bleu = -1;
    t->p.lr_scale = 1;
    rng_seed(&t->p.epoch_rng, o->seed);
    rng_seed(&t->p.drop_rng, o->seed ^ 0x9e3779b97f4a7c15ULL);
    if (o->ema > 0) {
        t->ema = XNEW(real, t->m.layout.total);
        t->adam.ema = t->ema;
        t->adam.ema_decay = o->ema;
    }
    if (o->resume) {
        if (trainer_load_state(t, e) != 0)
            return -1;
        t->ckpt_step = t->p.step;
    } else if (o->base) {
        trainer_start_from_base(t);
    } else {
        Rng init;
        rng_seed(&init, o->seed ^ 0xd1b54a32d192ed03ULL);
        model_init_random(&t->m, &init);
        if (t->ema)
            memcpy(t->ema, t->m.params, t->m.layout.total * sizeof(real));
    }
    return 0;
}

/* The epoch's plan, from the generator saved at its start; a resumed run passes over
   the batches it has done. Its first chunk is checked before anything is written. */
static int setup_plan(Trainer *t, Err *e)
{
    t->data_rng = t->p.epoch_rng;
    if (epoch_examples(t, e) != 0 ||
        batch_plan_start(&t->plan, &t->concat.set, &t->o->batch, &t->data_rng, e) != 0)
        return -1;
    for (long k = 0; k < t->p.batch; k++) {
        const int *rows;
        int nrows, got = batch_plan_next(&t->plan, &rows, &nrows, e);
        if (got == 0)
            return err_set(e, "%s: batch %ld of epoch %ld, but the epoch has %ld batches", t->path_state,
                           t->p.batch, t->p.epoch + 1, k);
        if (got < 0)
            return -1;
    }
    return 0;
}

/* The batch buffers and the model's work space, for the largest batch of either split. */
static void setup_buffers(Trainer *t)
{
    const TrainOpts *o = t->o;
    int mb, ms, mt, vb = 0, vs = 0, vt = 0;
    /* joined and renamed pairs are longer, and more: a batch of the whole epoch holds them */
    ConcatOpts c = concat_opts(t);
    batch_limits_n(&t->data.train.set, concat_most(&t->data.train.set, &c), &o->batch, &mb, &ms, &mt);
    if (o->concat > 0 || o->copy_names > 0) {
        ms = ms > c.max_s ? ms : c.max_s;
        mt = mt > c.max_t + 1 ? mt : c.max_t + 1;
    }
    if (o->bpe_dropout > 0) {
        int bs, bt;
        bpe_dropout_bounds(t, &bs, &bt);
        ms = ms > bs ? ms : bs;
        mt = mt > bt + 1 ? mt : bt + 1;
    }
    if (t->data.valid.set.n)
        batch_limits(&t->data.valid.set, &o->batch, &vb, &vs, &vt);
    mb = mb > vb ? mb : vb;
    ms = ms > vs ? ms : vs;
    mt = mt > vt ? mt : vt;
    batch_buf_init(&t->bb, mb, ms, mt);
    t->work = work_new(&t->m, mb, ms, mt, true);
    if (t->size > 1)
        t->mine = XNEW(int, mb);
}

/* Everything before the first step: data, model, state, buffers, the log. */
static int trainer_setup(Trainer *t, TrainOpts *own, ModelConfig *cfg, Err *e)
{
    if (setup_model(t, own, cfg, e) != 0 || setup_weights(t, e) != 0 || setup_plan(t, e) != 0)
        return -1;
    if (t->rank == 0 && prepare_outputs(t, e) != 0)
        return -1;
    setup_buffers(t);
    return 0;
}

/* A warmup of --warmup steps alone (no --warmup-share) that the budget cuts short: the
   rate never reaches --lr. Said at the start when --steps is shorter, at the end when
   the run stopped inside the warmup for another reason. */
static void warn_warmup(Trainer *t, bool at_end)
{
    const TrainOpts *o = t->o;
    bool warms = o->sched == SCHED_WARMUP_COSINE || o->sched == SCHED_WARMUP_DECAY;
    if (!warms || o->warmup <= 0 || (o->sched == SCHED_WARMUP_COSINE && o->warmup_share > 0))
        return;
    bool by_steps = o->steps > 0 && o->steps < o->warmup;
    if (!at_end && by_steps)
        trainer_say(t, "train: warning: --warmup %ld is longer than --steps %ld: the rate never reaches --lr %g",
                    o->warmup, o->steps, o->lr);
    else if (at_end && !by_steps && t->p.step < o->warmup)
        trainer_say(t, "train: warning: stopped at step %ld, inside the %ld warmup steps: "
                       "the rate never reached --lr %g",
                    t->p.step, o->warmup, o->lr);
}

/* --init: where the run starts, and how much of the data BASE's vocabularies miss. */
static void say_base(Trainer *t)
{
    const Prepared *d = &t->data;
    long steps = trainer_json_count(t->o->base->history, "steps");
    char at[48] = "";
    if (steps >= 0)
        snprintf(at, sizeof at, " (step %ld)", steps);
    if (d->train_oov[0] >= 0 && d->train_oov[1] >= 0)
        trainer_say(t, "train: starting from %s%s; tokens of the training split it cannot represent (<unk>): "
                       "%s %.2f%%, %s %.2f%%", t->o->init, at, d->text.dir.src.code, 100 * d->train_oov[0],
                    d->text.dir.tgt.code, 100 * d->train_oov[1]);
    else
        trainer_say(t, "train: starting from %s%s", t->o->init, at);
}

/* The threads of this process: --threads, or without it the host's cores shared by the
   run's processes on the host. */
static int run_threads(const TrainOpts *o)
{
    int want = o->threads;
    if (want <= 0 && dist_local_size() > 1) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        want = cores > dist_local_size() ? (int)(cores / dist_local_size()) : 1;
    }
    return nn_set_threads(want);
}

/* Whether the run goes on after a setup that returned setup on this process: 0, or -1
   (one process), or TRAIN_FAILED_ALL (several, where any of them failed). */
static int setup_agreed(const Trainer *t, int setup, Err *e)
{
    if (t->size == 1)
        return setup != 0 ? -1 : 0;
    /* Go on together or not at all: the first process that failed reports. */
    int first = t->size - dist_max_int(setup != 0 ? t->size - t->rank : 0);
    if (first == t->size)
        return 0;
    if (t->rank != first)
        e->msg[0] = '\0';
    return TRAIN_FAILED_ALL;
}

/* The messages at the start of a run: the model, the data, the processes, and where the
   run starts. */
static void say_start(Trainer *t, const ModelConfig *cfg, int threads, bool bf16)
{
    const TrainOpts *o = t->o;
    char who[96] = "";
    if (t->size > 1)
        snprintf(who, sizeof who, "%d processes of %d thread%s", t->size, threads, threads == 1 ? "" : "s");
    else
        snprintf(who, sizeof who, "%d thread%s", threads, threads == 1 ? "" : "s");
    trainer_say(t, "train: %s%s%s%s, %d pairs (valid %d), %zu parameters, %s, %s products%s",
                model_ops_for(cfg)->title,
                o->arch_by ? " (selected by " : "", o->arch_by ? o->arch_by : "", o->arch_by ? ")" : "",
                t->data.train.set.n, t->data.valid.set.n, t->m.layout.total, who, bf16 ? "bf16" : "fp32",
                o->resume ? "; resuming" : "");
    warn_warmup(t, false);
    if (o->share_below > 0 && o->cfg.share_embeddings)
        trainer_say(t, "train: %d training pairs, fewer than %ld: one embedding table for both sides, tied to "
                       "the output (the recipe for a small corpus; --no-share-embeddings --no-tie-embeddings: "
                       "three)",
                    t->data.train.set.n, o->share_below);
    if (o->copy_names > 0)
        trainer_say(t, "train: --copy-names: %d training pairs hold a name on both sides; %.0f of them renamed "
                       "each epoch, with %d invented names",
                    t->names.ncand, t->names.nnames ? floor(t->names.ncand * o->copy_names + 0.5) : 0.0,
                    t->names.nnames);
    if (o->base)
        say_base(t);
    if (o->resume)
        trainer_say(t, "resuming at step %ld (epoch %ld, batch %ld)", t->p.step, t->p.epoch + 1, t->p.batch);
}

/* The end of a run that the loop stopped for why: the last checkpoint, the "stop" log
   line and the message. */
static int run_end(Trainer *t, Stop why, Err *e)
{
    const Progress *p = &t->p;
    /* Final checkpoint: validation unless stopped by a signal or just validated. */
    if (why == STOP_SIGNAL) {
        if (trainer_checkpoint(t, false, false, e) != 0)
            return -1;
    } else if (p->last_valid_step != p->step) {
        bool stop;
        if (trainer_validate(t, false, &stop, e) != 0)
            return -1;
    }
    Buf b = {0};
    JsonWriter w;
    trainer_log_open(&w, &b, "stop");
    json_put_str(&w, "reason", stop_names[why]);
    json_put_int(&w, "step", p->step);
    trainer_put_num6(&w, "best_valid_bleu", p->best_bleu, p->best_bleu >= 0);
    json_put_double(&w, "elapsed", "%.3f", trainer_elapsed(t));
    trainer_log_close(t, &w);
    buf_free(&b);
    warn_warmup(t, true);
    if (why == STOP_SIGNAL)
        trainer_say(t, "interrupted at step %ld: saved %s and %s; continue with the same command and --resume",
                    p->step, t->path_last, t->path_state);
    else
        trainer_say(t, "stopped (%s) at step %ld after %.0f s; best valid BLEU %.2f at step %ld; model %s",
                    stop_names[why], p->step, trainer_elapsed(t), p->best_bleu < 0 ? 0 : p->best_bleu,
                    p->best_step, t->o->model);
    if (t->log && ferror(t->log))
        return err_set(e, "%s: write error", t->path_log);
    return 0;
}

int train_run(const TrainOpts *o, Err *e)
{
    TrainOpts own = *o; /* completed against the data by trainer_setup */
    o = &own;
    Trainer t = {.o = o, .ckpt_step = -1, .rank = dist_rank(), .size = dist_size()};
    t.path_last = path_suffixed(o->model, ".last");
    t.path_state = path_suffixed(o->model, ".state");
    t.path_log = path_suffixed(o->model, ".log.jsonl");
    int rc = -1;
    int threads = run_threads(o);
    bool bf16 = o->precision == TRAIN_PREC_BF16 || (o->precision == TRAIN_PREC_AUTO && nn_bf16_native());
    if (nn_set_precision(bf16 ? PREC_BF16 : PREC_F32, e) != 0)
        goto out;
    nn_products_on_pool(threads > 1);
    ModelConfig cfg;
    int setup = setup_agreed(&t, trainer_setup(&t, &own, &cfg, e), e);
    if (setup != 0) {
        rc = setup;
        goto out;
    }
    t.live = o->progress == 1 || (o->progress < 0 && isatty(2));
    t.seconds_base = t.p.seconds;
    t.t_start = clock_now();

    Buf b = {0};
    trainer_log_start(&t, &cfg, threads, &b);
    buf_free(&b);
    say_start(&t, &cfg, threads, bf16);
    Stop why;
    if (train_loop(&t, &why, e) != 0 || run_end(&t, why, e) != 0)
        goto out;
    rc = 0;
out:
    if (rc == -1 && t.agreed && t.size > 1) {
        /* every process stopped alike: process 0 reports */
        if (t.rank != 0)
            e->msg[0] = '\0';
        rc = TRAIN_FAILED_ALL;
    }
    trainer_free(&t);
    nn_products_on_pool(false);
    nn_set_precision(PREC_F32, &(Err){0});
    return rc;
}
