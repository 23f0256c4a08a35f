#include "train/trainer.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/crc32.h"
#include "base/file.h"
#include "base/json.h"
#include "base/safetensors.h"
#include "decode/greedy.h"
#include "decode/plan.h"
#include "decode/translate.h"
#include "eval/bleu.h"
#include "model/file.h"
#include "nn/bf16.h"
#include "nn/linalg.h"
#include "data/bpe_dropout.h"
#include "data/concat.h"
#include "data/names.h"
#include "data/prepare.h"
#include "data/prepared.h"
#include "train/dist.h"
#include "train/fault.h"
#include "train/options.h"
#include "train/outputs.h"
#include "train/step.h"

#define KEY_STATE "s2s.state"

volatile int train_stop_requested;

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

/* Puts the moving average of the weights in place of the weights (on), or back (off):
   the two arrays trade contents, so nothing is allocated. */
static void use_ema(Trainer *t, bool on)
{
    if (!t->ema || t->ema_in == on)
        return;
    real *a = t->m.params, *b = t->ema;
    for (size_t i = 0, n = t->m.layout.total; i < n; i++) {
        real x = a[i];
        a[i] = b[i];
        b[i] = x;
    }
    t->ema_in = on;
}

static double elapsed(const Trainer *t) { return t->seconds_base + (clock_now() - t->t_start); }

/* ------------------------------------------------------------------ log and display */

static void clear_line(Trainer *t)
{
    if (t->line_shown) {
        fputs("\r\033[K", stderr);
        t->line_shown = false;
    }
}

static void say(Trainer *t, const char *fmt, ...) S2S_PRINTF(2, 3);
static void say(Trainer *t, const char *fmt, ...)
{
    if (t->o->quiet || t->rank != 0)
        return;
    clear_line(t);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Process 0 alone writes the log (the others have none). */
static void log_line(Trainer *t, Buf *b)
{
    if (!t->log) {
        buf_clear(b);
        return;
    }
    buf_putc(b, '\n');
    fwrite(b->data, 1, b->len, t->log);
    fflush(t->log);
    buf_clear(b);
}

/* Starts a log line in b: {"event": event, ... */
static void log_open(JsonWriter *w, Buf *b, const char *event)
{
    json_writer_init(w, b, JSON_LINE);
    json_open_object(w, NULL);
    json_put_str(w, "event", event);
}

/* Ends the line begun by log_open and writes it. */
static void log_close(Trainer *t, JsonWriter *w)
{
    json_close(w);
    log_line(t, w->out);
}

static void fmt_duration(char *dst, size_t cap, double s)
{
    long v = s > 0 && s < 1e9 ? (long)(s + 0.5) : 0;
    if (v >= 3600)
        snprintf(dst, cap, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(dst, cap, "%ld:%02ld", v / 60, v % 60);
}

/* The fraction of the run done, from whichever limit comes first; -1 if unknown. */
static double done_fraction(const Trainer *t)
{
    const TrainOpts *o = t->o;
    double f = -1;
    if (o->steps)
        f = fmax(f, (double)t->p.step / (double)o->steps);
    if (o->minutes > 0)
        f = fmax(f, elapsed(t) / (o->minutes * 60));
    if (o->epochs)
        f = fmax(f, ((double)t->p.epoch + batch_plan_done(&t->plan)) / (double)o->epochs);
    return f;
}

static void show_progress(Trainer *t, double loss, double ppl, double tok_s, double lr, bool force)
{
    if (t->o->quiet || t->rank != 0)
        return;
    double now = clock_now();
    bool plain_due = !t->live && t->o->log_every > 0 && t->p.step % t->o->log_every == 0;
    if (t->live ? (!force && now - t->t_shown < 0.25) : !plain_due)
        return;
    t->t_shown = now;
    char el[32], eta[32] = "?";
    double f = done_fraction(t), e = elapsed(t);
    fmt_duration(el, sizeof el, e);
    if (f > 0.001)
        fmt_duration(eta, sizeof eta, e / f - e);
    char line[256];
    snprintf(line, sizeof line,
             "epoch %ld step %ld  loss %.3f ppl %.2f  %.0f tok/s  lr %.2e  %s elapsed, ETA %s",
             t->p.epoch + 1, t->p.step, loss, ppl, tok_s, lr, el, eta);
    if (t->live) {
        fprintf(stderr, "\r%s\033[K", line);
        t->line_shown = true;
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

/* ------------------------------------------------------------------ history and state */

/* A number of the history and the log: 6 significant digits, null when not finite or
   when there is none (have false). */
static void put_num6(JsonWriter *w, const char *key, double x, bool have)
{
    if (have)
        json_put_double(w, key, "%.6g", x);
    else
        json_put_null(w, key);
}

static void history_json(const Trainer *t, Buf *b)
{
    const Progress *p = &t->p;
    bool have_valid = p->last_valid_step > 0;
    JsonWriter w;
    json_writer_init(&w, b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_int(&w, "steps", p->step);
    json_put_f64(&w, "epochs", (double)p->epoch + batch_plan_done(&t->plan));
    put_num6(&w, "best_valid_bleu", p->best_bleu, p->best_bleu >= 0);
    json_put_int(&w, "best_step", p->best_step);
    json_put_f64(&w, "seconds", round(p->seconds * 10) / 10);
    json_put_int(&w, "train_tokens", p->tokens);
    put_num6(&w, "valid_loss", p->last_valid_loss, have_valid);
    put_num6(&w, "valid_ppl", p->last_valid_ppl, have_valid);
    put_num6(&w, "valid_bleu", p->last_valid_bleu, have_valid && p->last_valid_bleu >= 0);
    json_put_str(&w, "data", t->o->data);
    json_put_int(&w, "train_pairs", t->data.train.set.n);
    json_put_uint(&w, "seed", t->o->seed);
    if (t->init_from)
        json_put_raw(&w, "init", t->init_from);
    json_close(&w);
}

/* The progress members of the state: counters, the schedule, the last validation. */
static void state_progress_json(const Trainer *t, JsonWriter *w)
{
    const Progress *p = &t->p;
    json_put_int(w, "step", p->step);
    json_put_int(w, "epoch", p->epoch);
    json_put_int(w, "batch", p->batch);
    json_put_int(w, "adam_step", t->adam.step);
    json_put_f64(w, "seconds", p->seconds);
    json_put_int(w, "tokens", p->tokens);
    json_put_f64(w, "best_bleu", p->best_bleu);
    json_put_int(w, "best_step", p->best_step);
    json_put_int(w, "bad_valid", p->bad_valid);
    json_put_int(w, "sched_step", p->sched_step);
    json_put_f64(w, "sched_bleu", p->sched_bleu);
    json_put_f64(w, "sched_lr", t->sched.lr);
    json_put_f64(w, "sched_best", t->sched.best);
    json_put_bool(w, "sched_have_best", t->sched.have_best);
    json_put_int(w, "sched_since", t->sched.since);
    json_put_int(w, "last_valid_step", p->last_valid_step);
    json_put_f64(w, "last_valid_loss", p->last_valid_loss);
    json_put_f64(w, "last_valid_ppl", p->last_valid_ppl);
    json_put_f64(w, "last_valid_bleu", p->last_valid_bleu);
    json_put_f64(w, "lr_scale", p->lr_scale);
    json_put_int(w, "bad_steps", p->bad_steps);
    json_put_int(w, "train_pairs", t->data.train.set.n);
    json_open_array_line(w, "checkpoints");
    for (size_t i = 0; i < t->n_ckpts; i++)
        json_put_int(w, NULL, t->ckpts[i]);
    json_close(w);
}

static void state_json(const Trainer *t, Buf *b)
{
    JsonWriter w;
    json_writer_init(&w, b, JSON_LINE);
    json_open_object(&w, NULL);
    state_progress_json(t, &w);
    /* the run's options, so that --resume needs none retyped (train_saved_opts): the
       seed and batch sizes at the top, which load_state checks, the others under
       "options" */
    const TrainOpts *o = t->o;
    opt_json_write(&w, train_option_table.rows, o, TRAIN_TOP, TRAIN_TOP);
    json_open_object(&w, "options");
    char *abs = realpath(o->data, NULL);
    json_put_str(&w, "data", abs ? abs : o->data);
    free(abs);
    opt_json_write(&w, train_option_table.rows, o, TRAIN_TOP, 0);
    json_close(&w);
    if (t->init_from)
        json_put_raw(&w, "init", t->init_from);
    json_close(&w);
}

static int save_state(Trainer *t, Err *e)
{
    size_t n = t->m.layout.total;
    uint64_t rngs[8];
    memcpy(rngs, t->p.epoch_rng.s, sizeof t->p.epoch_rng.s);
    memcpy(rngs + 4, t->p.drop_rng.s, sizeof t->p.drop_rng.s);
    CHECK(!t->ema_in);
    StTensor ts[5] = {
        {.name = "params", .dtype = ST_F32, .ndim = 1, .shape = {(int64_t)n}, .data = t->m.params},
        {.name = "adam.m", .dtype = ST_F32, .ndim = 1, .shape = {(int64_t)n}, .data = t->adam.m},
        {.name = "adam.v", .dtype = ST_F32, .ndim = 1, .shape = {(int64_t)n}, .data = t->adam.v},
        {.name = "rng", .dtype = ST_U64, .ndim = 2, .shape = {2, 4}, .data = rngs},
        {.name = "ema", .dtype = ST_F32, .ndim = 1, .shape = {(int64_t)n}, .data = t->ema},
    };
    Buf st = {0}, cfg = {0}, vs = {0}, vt = {0};
    state_json(t, &st);
    model_config_json(&t->m.cfg, &t->data.text, &cfg);
    vocab_lines(t->data.src_vocab, &vs);
    vocab_lines(t->data.tgt_vocab, &vt);
    const char *keys[] = {ST_KEY_FORMAT, KEY_STATE, "s2s.config", "s2s.vocab.src", "s2s.vocab.tgt"};
    const char *vals[] = {TRAIN_FORMAT_STATE, st.data, cfg.data, vs.data, vt.data};
    int rc = st_write(t->path_state, ts, t->ema ? 5 : 4, keys, vals, 5, e);
    buf_free(&st);
    buf_free(&cfg);
    buf_free(&vs);
    buf_free(&vt);
    return rc;
}

static int state_num(const JsonVal *root, const char *key, double *out, const char *path, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (!v || v->type != JSON_NUMBER)
        return err_set(e, "%s: s2s.state: '%s' missing or not a number", path, key);
    *out = v->u.num.d;
    return 0;
}

static int state_long(const JsonVal *root, const char *key, long *out, const char *path, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (!v || v->type != JSON_NUMBER || !v->is_int || v->u.num.i < 0)
        return err_set(e, "%s: s2s.state: '%s' missing or not a count", path, key);
    *out = (long)v->u.num.i;
    return 0;
}

static bool meta_equals(const StFile *f, const char *key, const Buf *want)
{
    const char *v = st_meta(f, key);
    return v && want->data && strcmp(v, want->data) == 0;
}

/* The provenance of --init: {"file": ..., "crc32": ..., "steps": N} on one line. */
static char *init_json(const char *file, const char *crc, long steps)
{
    Buf b = {0};
    JsonWriter w;
    json_writer_init(&w, &b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_str(&w, "file", file);
    json_put_str(&w, "crc32", crc);
    json_put_int(&w, "steps", steps);
    json_close(&w);
    return b.data;
}

/* The state's "init" (a run started with --init), absent for the others. */
static int init_from_state(Trainer *t, const JsonVal *v, Err *e)
{
    if (!v)
        return 0;
    const JsonVal *f = v->type == JSON_OBJECT ? json_get(v, "file") : NULL;
    const JsonVal *c = v->type == JSON_OBJECT ? json_get(v, "crc32") : NULL;
    const JsonVal *n = v->type == JSON_OBJECT ? json_get(v, "steps") : NULL;
    if (!f || f->type != JSON_STRING || !c || c->type != JSON_STRING || !n || n->type != JSON_NUMBER || !n->is_int)
        return err_set(e, "%s: s2s.state: 'init' is not {\"file\", \"crc32\", \"steps\"}", t->path_state);
    t->init_from = init_json(f->u.str.s, c->u.str.s, (long)n->u.num.i);
    return 0;
}

/* The state's "checkpoints" (absent in a state of an older s2s: none). */
static int ckpts_from_state(Trainer *t, const JsonVal *v, Err *e)
{
    if (!v)
        return 0;
    if (v->type != JSON_ARRAY)
        return err_set(e, "%s: s2s.state: 'checkpoints' is not an array", t->path_state);
    size_t n = json_len(v);
    t->ckpts = n ? XNEW(long, n) : NULL;
    for (size_t i = 0; i < n; i++) {
        const JsonVal *x = json_at(v, i);
        if (x->type != JSON_NUMBER || !x->is_int || x->u.num.i < 0 || (i && x->u.num.i <= t->ckpts[i - 1]))
            return err_set(e, "%s: s2s.state: 'checkpoints' is not a list of ascending steps", t->path_state);
        t->ckpts[t->n_ckpts++] = (long)x->u.num.i;
    }
    return 0;
}

/* Restores weights, moments and progress from MODEL.state, after checking that it
   belongs to this data and configuration. */
static int load_state(Trainer *t, Err *e)
{
    const char *path = t->path_state;
    StFile *f;
    if (st_load(&f, path, TRAIN_FORMAT_STATE, e) != 0)
        return -1;
    int rc = -1;
    Json doc = {0};
    bool parsed = false;
    Buf cfg = {0}, vs = {0}, vt = {0};
    model_config_json(&t->m.cfg, &t->data.text, &cfg);
    vocab_lines(t->data.src_vocab, &vs);
    vocab_lines(t->data.tgt_vocab, &vt);
    if (!meta_equals(f, "s2s.config", &cfg)) {
        const char *was = st_meta(f, "s2s.config");
        err_set(e, "%s: --resume with a different model configuration: the run used %s", path,
                was ? was : "(none)");
        goto out;
    }
    if (!meta_equals(f, "s2s.vocab.src", &vs) || !meta_equals(f, "s2s.vocab.tgt", &vt)) {
        err_set(e, "%s: --resume with different data: the vocabularies of %s differ from the run's",
                path, t->o->data);
        goto out;
    }
    const char *js = st_meta(f, KEY_STATE);
    Err je;
    if (!js) {
        err_set(e, "%s: metadata lacks %s", path, KEY_STATE);
        goto out;
    }
    if (json_parse(&doc, js, strlen(js), &je) != 0) {
        err_set(e, "%s: s2s.state: %s", path, je.msg);
        goto out;
    }
    parsed = true;
    const JsonVal *r = doc.root;
    if (r->type != JSON_OBJECT) {
        err_set(e, "%s: s2s.state: expected a JSON object", path);
        goto out;
    }
    Progress *p = &t->p;
    long adam_step, pairs, bsize, btok, seed, bad, sched_since, have;
    double sched_lr, sched_best;
    if (state_long(r, "step", &p->step, path, e) || state_long(r, "epoch", &p->epoch, path, e) ||
        state_long(r, "batch", &p->batch, path, e) || state_long(r, "adam_step", &adam_step, path, e) ||
        state_num(r, "seconds", &p->seconds, path, e) ||
        state_long(r, "best_step", &p->best_step, path, e) ||
        state_num(r, "best_bleu", &p->best_bleu, path, e) ||
        state_long(r, "bad_valid", &bad, path, e) ||
        state_long(r, "sched_step", &p->sched_step, path, e) ||
        state_num(r, "sched_bleu", &p->sched_bleu, path, e) || state_num(r, "sched_lr", &sched_lr, path, e) ||
        state_num(r, "sched_best", &sched_best, path, e) ||
        state_long(r, "sched_since", &sched_since, path, e) ||
        state_long(r, "last_valid_step", &p->last_valid_step, path, e) ||
        state_num(r, "last_valid_loss", &p->last_valid_loss, path, e) ||
        state_num(r, "last_valid_ppl", &p->last_valid_ppl, path, e) ||
        state_num(r, "last_valid_bleu", &p->last_valid_bleu, path, e) ||
        state_num(r, "lr_scale", &p->lr_scale, path, e) ||
        state_long(r, "bad_steps", &p->bad_steps, path, e) ||
        state_long(r, "train_pairs", &pairs, path, e) || state_long(r, "batch_size", &bsize, path, e) ||
        state_long(r, "batch_tokens", &btok, path, e) || state_long(r, "seed", &seed, path, e))
        goto out;
    const JsonVal *tok = json_get(r, "tokens"), *hb = json_get(r, "sched_have_best");
    if (!tok || !tok->is_int || !hb || hb->type != JSON_BOOL) {
        err_set(e, "%s: s2s.state: 'tokens' or 'sched_have_best' missing", path);
        goto out;
    }
    have = hb->b;
    p->tokens = tok->u.num.i;
    if (init_from_state(t, json_get(r, "init"), e) != 0 || ckpts_from_state(t, json_get(r, "checkpoints"), e) != 0)
        goto out;
    if (pairs != t->data.train.set.n || (uint64_t)seed != t->o->seed || bsize != t->o->batch.batch ||
        btok != t->o->batch.tokens) {
        err_set(e, "%s: --resume needs the run's data, --seed, --batch and --batch-tokens "
                   "(it had %ld training pairs, seed %ld, batch %ld, batch-tokens %ld)",
                path, pairs, seed, bsize, btok);
        goto out;
    }
    size_t n = t->m.layout.total;
    int64_t shape[1] = {(int64_t)n}, rshape[2] = {2, 4};
    const StTensor *tp = st_expect(f, "params", ST_F32, 1, shape, e), *tm, *tv, *tr;
    if (!tp || !(tm = st_expect(f, "adam.m", ST_F32, 1, shape, e)) ||
        !(tv = st_expect(f, "adam.v", ST_F32, 1, shape, e)) ||
        !(tr = st_expect(f, "rng", ST_U64, 2, rshape, e)))
        goto out;
    if (t->ema) {
        const StTensor *te = st_tensor(f, "ema");
        if (!te) {
            err_set(e, "%s: the run kept no moving average of the weights (--ema)", path);
            goto out;
        }
        if (!st_expect(f, "ema", ST_F32, 1, shape, e))
            goto out;
        memcpy(t->ema, te->data, n * sizeof(real));
    }
    memcpy(t->m.params, tp->data, n * sizeof(real));
    memcpy(t->adam.m, tm->data, n * sizeof(real));
    memcpy(t->adam.v, tv->data, n * sizeof(real));
    memcpy(p->epoch_rng.s, tr->data, sizeof p->epoch_rng.s);
    memcpy(p->drop_rng.s, (const uint64_t *)tr->data + 4, sizeof p->drop_rng.s);
    t->adam.step = adam_step;
    p->bad_valid = (int)bad;
    t->sched.lr = sched_lr;
    t->sched.best = sched_best;
    t->sched.have_best = have;
    t->sched.since = sched_since;
    rc = 0;
out:
    if (parsed)
        json_free(&doc);
    buf_free(&cfg);
    buf_free(&vs);
    buf_free(&vt);
    st_close(f);
    return rc;
}

/* A count in the JSON object text[] under key, or -1 when absent or not a count. */
static long json_count(const char *text, const char *key)
{
    Json doc = {0};
    Err je;
    long n = -1;
    if (text && json_parse(&doc, text, strlen(text), &je) == 0 && doc.root->type == JSON_OBJECT) {
        const JsonVal *v = json_get(doc.root, key);
        if (v && v->type == JSON_NUMBER && v->is_int && v->u.num.i >= 0)
            n = (long)v->u.num.i;
    }
    json_free(&doc);
    return n;
}

int train_state_weights(const char *path, const ModelFile *last, const char *last_path, StFile **out,
                        const real **w, Err *e)
{
    StFile *f;
    if (st_map(&f, path, TRAIN_FORMAT_STATE, e) != 0)
        return -1;
    Buf cfg = {0}, vs = {0}, vt = {0};
    model_config_json(&last->model.cfg, &last->text, &cfg);
    vocab_lines(last->src, &vs);
    vocab_lines(last->tgt, &vt);
    long step = json_count(st_meta(f, KEY_STATE), "step"), last_step = json_count(last->history, "steps");
    int64_t shape[1] = {(int64_t)last->model.layout.total};
    const StTensor *tp = NULL;
    if (!meta_equals(f, "s2s.config", &cfg) || !meta_equals(f, "s2s.vocab.src", &vs) ||
        !meta_equals(f, "s2s.vocab.tgt", &vt))
        err_set(e, "%s: not the training state of %s (another configuration or vocabulary)", path, last_path);
    else if (step < 0 || step != last_step)
        err_set(e, "%s: step %ld, but %s is of step %ld: not the same checkpoint", path, step, last_path,
                last_step);
    else
        tp = st_expect(f, "params", ST_F32, 1, shape, e);
    buf_free(&cfg);
    buf_free(&vs);
    buf_free(&vt);
    if (!tp) {
        st_close(f);
        return -1;
    }
    *out = f;
    *w = tp->data;
    return 0;
}

int train_saved_opts(const char *model, TrainOpts *out, char **data, Err *e)
{
    char *path = path_suffixed(model, ".state");
    *data = NULL;
    /* the header only: the weights and moments are read once, by load_state */
    const char *keys[3] = {ST_KEY_FORMAT, "s2s.config", KEY_STATE};
    char *meta[3] = {NULL, NULL, NULL};
    int rc = -1;
    Json doc = {0};
    Err je;
    TextConfig text;
    const char *cfg = NULL, *js = NULL;
    if (access(path, F_OK) != 0) {
        err_set(e, "%s: cannot resume: %s", path, strerror(errno));
        goto out;
    }
    if (st_read_meta(path, keys, 3, meta, e) != 0)
        goto out;
    if (!meta[0] || strcmp(meta[0], TRAIN_FORMAT_STATE) != 0) {
        err_set(e, "%s: not an s2s training state (format '%s', expected '%s')", path,
                meta[0] ? meta[0] : "none", TRAIN_FORMAT_STATE);
        goto out;
    }
    cfg = meta[1];
    js = meta[2];
    *out = train_opts_default();
    out->cfg.src_vocab = out->cfg.tgt_vocab = 5; /* sizes come from the data */
    if (!cfg) {
        err_set(e, "%s: metadata lacks s2s.config", path);
        goto out;
    }
    if (model_config_parse(&out->cfg, &text, cfg, strlen(cfg), path, e) != 0)
        goto out;
    if (!js || json_parse(&doc, js, strlen(js), &je) != 0) {
        err_set(e, "%s: %s: %s", path, KEY_STATE, js ? je.msg : "missing");
        goto out;
    }
    const JsonVal *r = doc.root, *op = json_get(r, "options"), *v;
    if (!op || op->type != JSON_OBJECT) {
        rc = 1; /* written before the options were saved */
        goto out;
    }
    char *where = xmalloc(strlen(path) + sizeof ": s2s.state");
    sprintf(where, "%s: s2s.state", path);
    int bad = opt_json_read(r, train_option_table.rows, out, TRAIN_TOP, TRAIN_TOP, where, e) ||
              opt_json_read(op, train_option_table.rows, out, TRAIN_TOP, 0, where, e);
    free(where);
    if (bad)
        goto out;
    if (!(v = json_get(op, "data")) || v->type != JSON_STRING) {
        err_set(e, "%s: s2s.state: 'data' missing or not valid", path);
        goto out;
    }
    *data = xstrdup(v->u.str.s);
    rc = 0;
out:
    json_free(&doc);
    for (int i = 0; i < 3; i++)
        free(meta[i]);
    free(path);
    return rc;
}

/* --keep-checkpoints N: the model of this validation as MODEL.ckpt.STEP, then the
   oldest checkpoints this run wrote removed until N remain (another file of that name,
   a user's or another run's, is never removed). A file at that path that is not a
   model file is not replaced (an error; train_claim refuses one before training). */
static int keep_checkpoint(Trainer *t, const char *history, Err *e)
{
    char suffix[40];
    snprintf(suffix, sizeof suffix, ".ckpt.%ld", t->p.step);
    char *path = path_suffixed(t->o->model, suffix);
    int rc = 0;
    if (access(path, F_OK) == 0 && !st_has_format(path, ST_FORMAT_MODEL))
        rc = err_set(e, "%s: exists and is not an s2s model file; refusing to replace it", path);
    if (rc == 0)
        rc = model_file_save(path, &t->m, t->data.src_vocab, t->data.tgt_vocab, &t->data.text, history, e);
    free(path);
    if (rc != 0)
        return -1;
    if (t->n_ckpts == 0 || t->ckpts[t->n_ckpts - 1] != t->p.step) {
        t->ckpts = xrealloc_array(t->ckpts, t->n_ckpts + 1, sizeof *t->ckpts);
        t->ckpts[t->n_ckpts++] = t->p.step;
    }
    size_t drop = t->n_ckpts > (size_t)t->o->keep_ckpt ? t->n_ckpts - (size_t)t->o->keep_ckpt : 0;
    for (size_t i = 0; rc == 0 && i < drop; i++) {
        snprintf(suffix, sizeof suffix, ".ckpt.%ld", t->ckpts[i]);
        char *old = path_suffixed(t->o->model, suffix);
        if (unlink(old) != 0 && errno != ENOENT)
            rc = err_set(e, "%s: cannot remove: %s", old, strerror(errno));
        free(old);
    }
    memmove(t->ckpts, t->ckpts + drop, (t->n_ckpts - drop) * sizeof *t->ckpts);
    t->n_ckpts -= drop;
    return rc;
}

/* MODEL.last, MODEL.state, and MODEL when best (or when there is no valid split). */
static int checkpoint(Trainer *t, bool best, bool keep, Err *e)
{
    /* Every process applied the same updates to the same weights; process 0 saves. */
    if (t->size > 1 && !dist_same_u32(crc32_update(0, t->m.params, t->m.layout.total * sizeof(real)))) {
        t->agreed = true;
        return err_set(e, "step %ld: the weights differ between the processes", t->p.step);
    }
    if (t->rank != 0) {
        t->ckpt_step = t->p.step;
        return 0;
    }
    t->p.seconds = elapsed(t);
    Buf h = {0};
    history_json(t, &h);
    /* the model files hold the moving average when there is one */
    use_ema(t, true);
    int rc = model_file_save(t->path_last, &t->m, t->data.src_vocab, t->data.tgt_vocab,
                             &t->data.text, h.data, e);
    if (rc == 0 && best)
        rc = model_file_save(t->o->model, &t->m, t->data.src_vocab, t->data.tgt_vocab,
                             &t->data.text, h.data, e);
    if (rc == 0 && keep && t->o->keep_ckpt > 0)
        rc = keep_checkpoint(t, h.data, e);
    use_ema(t, false);
    if (rc == 0)
        rc = save_state(t, e);
    if (rc == 0)
        t->ckpt_step = t->p.step;
    buf_free(&h);
    return rc;
}

/* ------------------------------------------------------------------ validation */

/* Valid loss (label-smoothed, per token) and perplexity (exp of the plain NLL per token). */
static void valid_loss(Trainer *t, double *loss, double *ppl)
{
    const PairSet *d = &t->data.valid.set;
    Err e;
    /* the valid split is read from the text and checked when loaded */
    if (batch_plan_start(&t->vplan, d, &t->o->batch, NULL, &e) != 0)
        BUG("valid plan: %s", e.msg);
    /* Batch k is scored by process k mod size; each batch's sums are added up in
       batch order, as one process does, so the result does not depend on size. */
    int nb = 0, cap = 64, n, got;
    const int *rows;
    double *part = XNEW(double, 2 * (size_t)cap); /* (nb, 2) loss and nll of each batch */
    Batch b;
    while ((got = batch_plan_next(&t->vplan, &rows, &n, &e)) == 1) {
        if (nb == cap) {
            cap *= 2;
            part = xrealloc_array(part, 2 * (size_t)cap, sizeof *part);
        }
        part[2 * nb] = part[2 * nb + 1] = 0;
        if (nb % t->size == t->rank) {
            batch_fill(&b, &t->bb, d, rows, n);
            part[2 * nb] = model_forward(&t->m, t->work, &b, NULL);
            part[2 * nb + 1] = work_nll(t->work);
        }
        nb++;
    }
    if (got < 0)
        BUG("valid plan: %s", e.msg);
    dist_sum_f64(part, 2 * (size_t)nb); /* each entry is one process's value plus zeros */
    double sum = 0, nll = 0;
    long ntok = 0;
    for (int k = 0; k < nb; k++) {
        sum += part[2 * k];
        nll += part[2 * k + 1];
    }
    for (int i = 0; i < d->n; i++)
        ntok += pair_tgt_len(d, i) + 1; /* <eos> included, as Batch.ntok counts */
    free(part);
    *loss = ntok ? sum / (double)ntok : 0;
    *ppl = ntok ? exp(nll / (double)ntok) : 0;
}

/* Greedy BLEU of the valid split: each distinct source is translated once and
   scored against all of its references (at most --valid-max sources). */
static int valid_bleu(Trainer *t, double *bleu, Err *e)
{
    const Split *v = &t->data.valid;
    int n = (int)v->groups.n;
    if (t->o->valid_max > 0 && n > t->o->valid_max)
        n = (int)t->o->valid_max;
    PairSet srcs = {.n = n, .src = v->gsrc, .src_len = v->gsrc_len};
    Hyps h;
    int batch = t->o->batch.batch > 0 ? t->o->batch.batch : 64;
    /* Over several processes, process r decodes the batches k ≡ r (mod size) of the
       one-process plan (the same sentences together, so the same outputs) and the
       BLEU statistics are summed. mine[j]: the sentence of output j. */
    int *mine = NULL, **msrc = NULL, *mlen = NULL;
    if (t->size > 1) {
        int *order = XNEW(int, n), nn, ms, mt, nm = 0;
        if (decode_plan(&t->m, &srcs, 0, order, &nn, &ms, &mt, e) != 0) {
            free(order);
            return -1;
        }
        int B = nn ? decode_fit_batch(&t->m, ms, mt, batch < nn ? batch : nn, 1, 0, 0) : 1;
        mine = XNEW(int, n);
        for (int j = 0; j < nn; j++)
            if (j / B % t->size == t->rank)
                mine[nm++] = order[j];
        for (int i = 0; i < n && t->rank == 0; i++)
            if (srcs.src_len[i] == 0) /* never decoded: an empty output */
                mine[nm++] = i;
        msrc = XNEW(int *, nm);
        mlen = XNEW(int, nm);
        for (int j = 0; j < nm; j++) {
            msrc[j] = v->gsrc[mine[j]];
            mlen[j] = v->gsrc_len[mine[j]];
        }
        srcs = (PairSet){.n = nm, .src = msrc, .src_len = mlen};
        batch = B;
        free(order);
    }
    int rc = greedy_decode(&t->m, &srcs, batch, 0, &h, e);
    free(msrc);
    free(mlen);
    if (rc != 0) {
        free(mine);
        return -1;
    }
    BleuStats bs;
    bleu_init(&bs);
    Buf hyp = {0};
    const char **refs = xmalloc_array((size_t)(v->set.n), sizeof *refs);
    for (int j = 0; j < srcs.n && rc == 0; j++) {
        int g = mine ? mine[j] : j;
        buf_clear(&hyp);
        translate_detok(t->data.tgt_vocab, &t->data.text, h.ids[j], h.len[j], &hyp);
        size_t nr = 0;
        for (size_t k = v->groups.start[g]; k < v->groups.start[g + 1]; k++)
            refs[nr++] = v->text.pairs[v->groups.member[k]].tgt;
        Err be;
        if (bleu_add(&bs, hyp.data ? hyp.data : "", refs, nr, &be) != 0)
            rc = err_set(e, "%s:%zu: %s", v->text.name, v->text.pairs[v->groups.member[v->groups.start[g]]].line, be.msg);
    }
    long long sums[3 + 2 * BLEU_MAX_ORDER] = {bs.sys_len, bs.ref_len, bs.nsegs};
    memcpy(sums + 3, bs.counts, sizeof bs.counts);
    memcpy(sums + 3 + BLEU_MAX_ORDER, bs.totals, sizeof bs.totals);
    dist_sum_i64(sums, sizeof sums / sizeof *sums);
    bs.sys_len = sums[0];
    bs.ref_len = sums[1];
    bs.nsegs = sums[2];
    memcpy(bs.counts, sums + 3, sizeof bs.counts);
    memcpy(bs.totals, sums + 3 + BLEU_MAX_ORDER, sizeof bs.totals);
    BleuResult r;
    bleu_score(&bs, &r);
    *bleu = r.score;
    free(mine);
    free(refs);
    buf_free(&hyp);
    bleu_free(&bs);
    hyps_free(&h);
    return rc;
}

/* Validates, logs, updates best/patience/schedule and writes the checkpoint files.
   Scheduled validations (every --valid-every steps and at epoch ends) also drive the
   learning-rate schedule and --patience; the extra one after a stop by --steps or
   --time does not, so that a run stopped there and resumed continues exactly as the
   uninterrupted run. Sets *stop when patience is exhausted. */
/* The log line of the validation just recorded in t->p, begun at clock time t0. */
static void log_valid(Trainer *t, bool have_valid, bool best, double t0)
{
    const Progress *p = &t->p;
    /* at an epoch end the epoch just completed, else the current one (1-based) */
    long ep = p->batch == 0 && p->epoch > 0 ? p->epoch : p->epoch + 1;
    Buf b = {0};
    JsonWriter w;
    log_open(&w, &b, "valid");
    json_put_int(&w, "step", p->step);
    json_put_int(&w, "epoch", ep);
    put_num6(&w, "loss", p->last_valid_loss, have_valid);
    put_num6(&w, "ppl", p->last_valid_ppl, have_valid);
    put_num6(&w, "bleu", p->last_valid_bleu, have_valid);
    json_put_bool(&w, "best", best);
    /* the rate in force: the schedule's at this step and share of the budget */
    put_num6(&w, "lr", optim_sched_lr_at(&t->sched, p->step > 0 ? p->step : 1, done_fraction(t)) * p->lr_scale, true);
    json_put_double(&w, "seconds", "%.3f", clock_now() - t0);
    json_put_double(&w, "elapsed", "%.3f", elapsed(t));
    log_close(t, &w);
    buf_free(&b);
}

static int validate(Trainer *t, bool scheduled, bool *stop, Err *e)
{
    Progress *p = &t->p;
    double t0 = clock_now();
    bool have_valid = t->data.valid.set.n > 0;
    double loss = 0, ppl = 0, bleu = -1;
    if (have_valid) {
        use_ema(t, true);
        valid_loss(t, &loss, &ppl);
        int vrc = valid_bleu(t, &bleu, e);
        use_ema(t, false);
        if (vrc != 0)
            return -1;
    }
    p->last_valid_step = p->step;
    p->last_valid_loss = loss;
    p->last_valid_ppl = ppl;
    p->last_valid_bleu = bleu;
    bool best = !have_valid || bleu > p->best_bleu;
    if (have_valid && best) {
        p->best_bleu = bleu;
        p->best_step = p->step;
    }
    if (scheduled)
        p->sched_step = p->step;
    if (have_valid && scheduled) {
        if (p->sched_bleu < 0 || bleu > p->sched_bleu + t->o->min_delta) {
            p->sched_bleu = bleu;
            p->bad_valid = 0;
        } else {
            p->bad_valid++;
        }
        if (optim_sched_observe(&t->sched, p->step, bleu))
            say(t, "valid BLEU did not improve: learning rate lowered to %.3g", t->sched.lr);
    }
    log_valid(t, have_valid, best, t0);
    t->valid_seconds += clock_now() - t0;
    /* On stderr, the validations of --valid-every and the last one, and those at epoch
       ends at most every --log-every steps: a small corpus's epochs are a few steps
       long (the log has every validation). */
    bool every = t->o->valid_every > 0 && p->step % t->o->valid_every == 0;
    if (have_valid && (every || !scheduled || p->step - t->valid_shown >= t->o->log_every)) {
        say(t, "valid step %ld: loss %.3f ppl %.2f BLEU %.2f%s (%.1f s)", p->step, loss, ppl, bleu,
            best ? " (best)" : "", clock_now() - t0);
        t->valid_shown = p->step;
    }
    if (checkpoint(t, best, true, e) != 0)
        return -1;
    if (t->o->patience > 0 && p->bad_valid >= t->o->patience) {
        say(t, "stopping: no better valid BLEU in %d validations (best %.2f at step %ld)",
            p->bad_valid, p->best_bleu, p->best_step);
        *stop = true;
    }
    return 0;
}

/* ------------------------------------------------------------------ the loop */

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
    if (t->size > 1 ? (t->voted & STEP_STOP_TIME) != 0 : o->minutes > 0 && elapsed(t) >= o->minutes * 60)
        return STOP_TIME;
    if (o->epochs && t->p.epoch >= o->epochs)
        return STOP_EPOCHS;
    return STOP_NONE;
}

/* The log line of a training step of ntok target tokens at rate lr. */
static void log_step(Trainer *t, Buf *b, const StepResult *r, double lr, long ntok, double tok_s)
{
    JsonWriter w;
    log_open(&w, b, "step");
    json_put_int(&w, "step", t->p.step);
    json_put_int(&w, "epoch", t->p.epoch + 1);
    put_num6(&w, "loss", r->loss / (double)ntok, true);
    put_num6(&w, "ppl", exp(r->nll / (double)ntok), true);
    put_num6(&w, "grad_norm", r->grad_norm, true);
    put_num6(&w, "lr", lr, true);
    json_put_int(&w, "tokens", ntok);
    json_put_double(&w, "tok_s", "%.0f", tok_s);
    json_put_double(&w, "elapsed", "%.3f", elapsed(t));
    if (t->size > 1) /* the allreduces' share of the step */
        json_put_double(&w, "allreduce_s", "%.4f", r->comm_s);
    log_close(t, &w);
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

static int train_loop(Trainer *t, Stop *why, Err *e)
{
    const TrainOpts *o = t->o;
    Progress *p = &t->p;
    const PairSet *d = &t->concat.set;
    Model *m = &t->m;
    Buf lb = {0};
    JsonWriter w;
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
            p->epoch++;
            p->batch = 0;
            p->epoch_rng = t->data_rng;
            if (epoch_examples(t, e) != 0 || batch_plan_start(&t->plan, d, &o->batch, &t->data_rng, e) != 0) {
                rc = -1;
                break;
            }
            if (p->sched_step != p->step && (rc = validate(t, true, &stop, e)) != 0)
                break;
            if (stop)
                *why = STOP_PATIENCE;
            continue;
        }
        int nmine = nrows;
        long ntok = 0;
        if (t->size > 1) {
            /* rows r, r + size, ... of the batch (sorted by length): even shares */
            nmine = 0;
            for (int j = 0; j < nrows; j++) {
                ntok += pair_tgt_len(d, rows[j]) + 1;
                if (j % t->size == t->rank)
                    t->mine[nmine++] = rows[j];
            }
            rows = t->mine;
        }
        if (nmine > 0)
            batch_fill(&b, &t->bb, d, rows, nmine);
        if (nmine > 0 && o->token_dropout > 0) /* keyed by the step: the same on --resume */
            batch_token_dropout(&b, t->bb.rows, o->token_dropout, o->seed ^ rng_mix(0x6b657973ULL + (uint64_t)p->step));
        if (t->size == 1)
            ntok = b.ntok;
        unsigned vote = (train_stop_requested ? STEP_STOP_SIGNAL : 0u) |
                        (t->rank == 0 && o->minutes > 0 && elapsed(t) >= o->minutes * 60 ? STEP_STOP_TIME : 0u);
        double lr = optim_sched_lr_at(&t->sched, p->step + 1, done_fraction(t)) * p->lr_scale;
        /* a schedule that follows the clock: every process takes process 0's rate */
        if (t->size > 1 && o->sched == SCHED_WARMUP_COSINE && o->minutes > 0)
            dist_bcast(&lr, sizeof lr, 0);
        StepOpts so = {.drop = m->cfg.dropout > 0 ? &p->drop_rng : NULL, .clip = o->clip, .lr = lr,
                       .poison = fault_nonfinite(p->step + 1), .stop = vote};
        StepResult r = train_step_dist(m, t->work, &t->adam, nmine > 0 ? &b : NULL, ntok, &so);
        t->voted = r.stop;
        if (!r.applied) {
            /* Skip the update (weights and moments stay as they were), lower the rate. */
            p->bad_steps++;
            p->lr_scale *= 0.5;
            say(t, "step %ld: non-finite %s; update skipped, learning rate scaled by %g", p->step + 1,
                isfinite(r.loss) ? "gradient" : "loss", p->lr_scale);
            log_open(&w, &lb, "nonfinite");
            json_put_int(&w, "step", p->step + 1);
            put_num6(&w, "lr_scale", p->lr_scale, true);
            log_close(t, &w);
            if (p->bad_steps >= TRAIN_MAX_BAD_STEPS) {
                t->agreed = true; /* the loss and gradient are the same on every process */
                if (t->ckpt_step >= 0)
                    rc = err_set(e, "step %ld: %ld steps in a row had a non-finite loss or gradient; "
                                    "stopped (%s and %s hold step %ld)", p->step + 1, p->bad_steps,
                                 t->path_last, t->path_state, t->ckpt_step);
                else
                    rc = err_set(e, "step %ld: %ld steps in a row had a non-finite loss or gradient; "
                                    "stopped before any checkpoint", p->step + 1, p->bad_steps);
                break;
            }
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
        log_step(t, &lb, &r, lr, ntok, tok_s);
        show_progress(t, loss, ppl, tok_s, lr, false);
        if (o->valid_every > 0 && p->step % o->valid_every == 0) {
            if ((rc = validate(t, true, &stop, e)) != 0)
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

/* --init: the weights (and their average) start as BASE's, which has this run's
   configuration and vocabularies (checked before). */
static void start_from_base(Trainer *t)
{
    const ModelFile *b = t->o->base;
    CHECK(b->model.layout.total == t->m.layout.total);
    memcpy(t->m.params, b->model.params, t->m.layout.total * sizeof(real));
    if (t->ema)
        memcpy(t->ema, t->m.params, t->m.layout.total * sizeof(real));
    const char *crc = b->file ? st_meta(b->file, ST_KEY_CRC32) : NULL;
    t->init_from = init_json(t->o->init, crc ? crc : "", json_count(b->history, "steps"));
}

/* Everything before the first step: data, model, state, buffers, the log. */
static int trainer_setup(Trainer *t, TrainOpts *own, ModelConfig *cfg, Err *e)
{
    const TrainOpts *o = t->o;
    if (prepared_load(&t->data, o->data, e) != 0)
        return -1;
    if (own->copy_names_recipe && (!t->data.bpe[0] || !t->data.bpe[1]))
        own->copy_names = 0; /* the recipe's names need subwords; the state saves the 0 */
    *cfg = o->cfg;
    cfg->src_vocab = (int)vocab_size(t->data.src_vocab);
    cfg->tgt_vocab = (int)vocab_size(t->data.tgt_vocab);
    Err ce;
    if (check_shared_vocab(&t->data, cfg, e) != 0)
        return -1;
    if (o->base) { /* the data must be numbered as BASE numbers it */
        PrepareLike like = prepare_like_model(o->base, o->init);
        if (prepare_like_check(&like, &t->data, e) != 0)
            return -1;
    }
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
        if (load_state(t, e) != 0)
            return -1;
        t->ckpt_step = t->p.step;
    } else if (o->base) {
        start_from_base(t);
    } else {
        Rng init;
        rng_seed(&init, o->seed ^ 0xd1b54a32d192ed03ULL);
        model_init_random(&t->m, &init);
        if (t->ema)
            memcpy(t->ema, t->m.params, t->m.layout.total * sizeof(real));
    }
    /* The epoch's plan, from the generator saved at its start; a resumed run passes over
       the batches it has done. Its first chunk is checked before anything is written. */
    t->data_rng = t->p.epoch_rng;
    if (epoch_examples(t, e) != 0 || batch_plan_start(&t->plan, &t->concat.set, &o->batch, &t->data_rng, e) != 0)
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
    if (t->rank == 0 && prepare_outputs(t, e) != 0)
        return -1;
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
        say(t, "train: warning: --warmup %ld is longer than --steps %ld: the rate never reaches --lr %g",
            o->warmup, o->steps, o->lr);
    else if (at_end && !by_steps && t->p.step < o->warmup)
        say(t, "train: warning: stopped at step %ld, inside the %ld warmup steps: the rate never reached --lr %g",
            t->p.step, o->warmup, o->lr);
}

/* The first log line of a run: "start", or "resume" with the step it resumes at. */
static void log_start(Trainer *t, const ModelConfig *cfg, int threads, Buf *b)
{
    const TrainOpts *o = t->o;
    Buf cj = {0};
    model_config_json(cfg, &t->data.text, &cj);
    JsonWriter w;
    log_open(&w, b, o->resume ? "resume" : "start");
    json_put_int(&w, "step", t->p.step);
    json_put_raw(&w, "config", cj.data);
    json_put_uint(&w, "params", t->m.layout.total);
    json_put_int(&w, "train_pairs", t->data.train.set.n);
    json_put_int(&w, "valid_pairs", t->data.valid.set.n);
    json_put_int(&w, "threads", threads);
    json_put_uint(&w, "seed", o->seed);
    json_put_int(&w, "batch", o->batch.batch);
    json_put_int(&w, "batch_tokens", o->batch.tokens);
    json_put_f64(&w, "lr", o->lr);
    json_put_str(&w, "schedule", optim_sched_name(o->sched));
    if (t->size > 1)
        json_put_int(&w, "processes", t->size);
    log_close(t, &w);
    buf_free(&cj);
}

/* --init: where the run starts, and how much of the data BASE's vocabularies miss. */
static void say_base(Trainer *t)
{
    const Prepared *d = &t->data;
    long steps = json_count(t->o->base->history, "steps");
    char at[48] = "";
    if (steps >= 0)
        snprintf(at, sizeof at, " (step %ld)", steps);
    if (d->train_oov[0] >= 0 && d->train_oov[1] >= 0)
        say(t, "train: starting from %s%s; tokens of the training split it cannot represent (<unk>): "
               "%s %.2f%%, %s %.2f%%", t->o->init, at, d->text.dir.src.code, 100 * d->train_oov[0],
            d->text.dir.tgt.code, 100 * d->train_oov[1]);
    else
        say(t, "train: starting from %s%s", t->o->init, at);
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
    /* Without --threads, the processes of a host share its cores. */
    int want = o->threads;
    if (want <= 0 && dist_local_size() > 1) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        want = cores > dist_local_size() ? (int)(cores / dist_local_size()) : 1;
    }
    int threads = nn_set_threads(want);
    bool bf16 = o->precision == TRAIN_PREC_BF16 || (o->precision == TRAIN_PREC_AUTO && nn_bf16_native());
    if (nn_set_precision(bf16 ? PREC_BF16 : PREC_F32, e) != 0)
        goto out;
    nn_products_on_pool(threads > 1);
    ModelConfig cfg;
    int setup = trainer_setup(&t, &own, &cfg, e);
    if (t.size > 1) {
        /* Go on together or not at all: the first process that failed reports. */
        int first = t.size - dist_max_int(setup != 0 ? t.size - t.rank : 0);
        if (first < t.size) {
            if (t.rank != first)
                e->msg[0] = '\0';
            rc = TRAIN_FAILED_ALL;
            goto out;
        }
    } else if (setup != 0) {
        goto out;
    }
    t.live = o->progress == 1 || (o->progress < 0 && isatty(2));
    t.seconds_base = t.p.seconds;
    t.t_start = clock_now();

    Buf b = {0};
    log_start(&t, &cfg, threads, &b);
    char who[96] = "";
    if (t.size > 1)
        snprintf(who, sizeof who, "%d processes of %d thread%s", t.size, threads, threads == 1 ? "" : "s");
    else
        snprintf(who, sizeof who, "%d thread%s", threads, threads == 1 ? "" : "s");
    say(&t, "train: %s%s%s%s, %d pairs (valid %d), %zu parameters, %s, %s products%s",
        cfg.arch == ARCH_TRANSFORMER ? "Transformer" : "recurrent model", o->arch_by ? " (selected by " : "",
        o->arch_by ? o->arch_by : "", o->arch_by ? ")" : "", t.data.train.set.n, t.data.valid.set.n,
        t.m.layout.total, who, bf16 ? "bf16" : "fp32", o->resume ? "; resuming" : "");
    warn_warmup(&t, false);
    if (o->copy_names > 0)
        say(&t, "train: --copy-names: %d training pairs hold a name on both sides; %.0f of them renamed each "
                "epoch, with %d invented names",
            t.names.ncand, t.names.nnames ? floor(t.names.ncand * o->copy_names + 0.5) : 0.0, t.names.nnames);
    if (o->base)
        say_base(&t);
    if (o->resume)
        say(&t, "resuming at step %ld (epoch %ld, batch %ld)", t.p.step, t.p.epoch + 1, t.p.batch);

    Stop why;
    if (train_loop(&t, &why, e) != 0) {
        buf_free(&b);
        goto out;
    }
    /* Final checkpoint: validation unless stopped by a signal or just validated. */
    if (why == STOP_SIGNAL) {
        if (checkpoint(&t, false, false, e) != 0) {
            buf_free(&b);
            goto out;
        }
    } else if (t.p.last_valid_step != t.p.step) {
        bool stop;
        if (validate(&t, false, &stop, e) != 0) {
            buf_free(&b);
            goto out;
        }
    }
    JsonWriter w;
    log_open(&w, &b, "stop");
    json_put_str(&w, "reason", stop_names[why]);
    json_put_int(&w, "step", t.p.step);
    put_num6(&w, "best_valid_bleu", t.p.best_bleu, t.p.best_bleu >= 0);
    json_put_double(&w, "elapsed", "%.3f", elapsed(&t));
    log_close(&t, &w);
    buf_free(&b);
    warn_warmup(&t, true);
    if (why == STOP_SIGNAL)
        say(&t, "interrupted at step %ld: saved %s and %s; continue with the same command and --resume",
            t.p.step, t.path_last, t.path_state);
    else
        say(&t, "stopped (%s) at step %ld after %.0f s; best valid BLEU %.2f at step %ld; model %s",
            stop_names[why], t.p.step, elapsed(&t), t.p.best_bleu < 0 ? 0 : t.p.best_bleu,
            t.p.best_step, o->model);
    if (t.log && ferror(t.log)) {
        err_set(e, "%s: write error", t.path_log);
        goto out;
    }
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
