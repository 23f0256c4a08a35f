/* What a run keeps: the history of the model files, MODEL.state (saved, loaded, its
   options for --resume) and the checkpoint files (train/trainer.h). */
#include "train/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32.h"
#include "base/file.h"
#include "base/safetensors.h"
#include "model/file.h"
#include "train/dist.h"
#include "train/options.h"
#include "train/outputs.h"

/* Puts the moving average of the weights in place of the weights (on), or back (off):
   the two arrays trade contents, so nothing is allocated. */
void trainer_use_ema(Trainer *t, bool on)
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

static void history_json(const Trainer *t, Buf *b)
{
    const Progress *p = &t->p;
    bool have_valid = p->last_valid_step > 0;
    JsonWriter w;
    json_writer_init(&w, b, JSON_LINE);
    json_open_object(&w, NULL);
    json_put_int(&w, "steps", p->step);
    json_put_f64(&w, "epochs", (double)p->epoch + batch_plan_done(&t->plan));
    trainer_put_num6(&w, "best_valid_bleu", p->best_bleu, p->best_bleu >= 0);
    json_put_int(&w, "best_step", p->best_step);
    json_put_f64(&w, "seconds", round(p->seconds * 10) / 10);
    json_put_int(&w, "train_tokens", p->tokens);
    trainer_put_num6(&w, "valid_loss", p->last_valid_loss, have_valid);
    trainer_put_num6(&w, "valid_ppl", p->last_valid_ppl, have_valid);
    trainer_put_num6(&w, "valid_bleu", p->last_valid_bleu, have_valid && p->last_valid_bleu >= 0);
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
       seed and batch sizes at the top, which trainer_load_state checks, the others under
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

/* The state at path is of this configuration and these vocabularies (the run's data). */
static int state_matches(const Trainer *t, const StFile *f, const char *path, Err *e)
{
    Buf cfg = {0}, vs = {0}, vt = {0};
    model_config_json(&t->m.cfg, &t->data.text, &cfg);
    vocab_lines(t->data.src_vocab, &vs);
    vocab_lines(t->data.tgt_vocab, &vt);
    int rc = 0;
    if (!meta_equals(f, "s2s.config", &cfg)) {
        const char *was = st_meta(f, "s2s.config");
        char shown[1024]; /* the file's own text, escaped (and cut if longer than a configuration) */
        rc = err_set(e, "%s: --resume with a different model configuration: the run used %s", path,
                     was ? json_show(shown, sizeof shown, was, strlen(was)) : "(none)");
    } else if (!meta_equals(f, "s2s.vocab.src", &vs) || !meta_equals(f, "s2s.vocab.tgt", &vt)) {
        rc = err_set(e, "%s: --resume with different data: the vocabularies of %s differ from the run's",
                     path, t->o->data);
    }
    buf_free(&cfg);
    buf_free(&vs);
    buf_free(&vt);
    return rc;
}

/* The progress members of the state (r, its JSON object), into t: counters, the
   schedule, the last validation, --init and the checkpoints; after checking that the
   run had this data, seed and batch sizes. */
static int state_progress_read(Trainer *t, const JsonVal *r, const char *path, Err *e)
{
    Progress *p = &t->p;
    long adam_step, pairs, bsize, btok, seed, bad, sched_since, have;
    double sched_lr = 0, sched_best = 0;
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
        return -1;
    const JsonVal *tok = json_get(r, "tokens"), *hb = json_get(r, "sched_have_best");
    if (!tok || !tok->is_int || !hb || hb->type != JSON_BOOL)
        return err_set(e, "%s: s2s.state: 'tokens' or 'sched_have_best' missing", path);
    have = hb->b;
    p->tokens = tok->u.num.i;
    if (init_from_state(t, json_get(r, "init"), e) != 0 || ckpts_from_state(t, json_get(r, "checkpoints"), e) != 0)
        return -1;
    if (pairs != t->data.train.set.n || (uint64_t)seed != t->o->seed || bsize != t->o->batch.batch ||
        btok != t->o->batch.tokens)
        return err_set(e, "%s: --resume needs the run's data, --seed, --batch and --batch-tokens "
                          "(it had %ld training pairs, seed %ld, batch %ld, batch-tokens %ld)",
                       path, pairs, seed, bsize, btok);
    t->adam.step = adam_step;
    p->bad_valid = (int)bad;
    t->sched.lr = sched_lr;
    t->sched.best = sched_best;
    t->sched.have_best = have;
    t->sched.since = sched_since;
    return 0;
}

/* The tensors of the state, into t: weights, Adam moments, the random generators, and
   the moving average when the run keeps one. */
static int state_tensors_read(Trainer *t, const StFile *f, const char *path, Err *e)
{
    Progress *p = &t->p;
    size_t n = t->m.layout.total;
    int64_t shape[1] = {(int64_t)n}, rshape[2] = {2, 4};
    const StTensor *tp = st_expect(f, "params", ST_F32, 1, shape, e), *tm, *tv, *tr;
    if (!tp || !(tm = st_expect(f, "adam.m", ST_F32, 1, shape, e)) ||
        !(tv = st_expect(f, "adam.v", ST_F32, 1, shape, e)) ||
        !(tr = st_expect(f, "rng", ST_U64, 2, rshape, e)))
        return -1;
    if (t->ema) {
        const StTensor *te = st_tensor(f, "ema");
        if (!te)
            return err_set(e, "%s: the run kept no moving average of the weights (--ema)", path);
        if (!st_expect(f, "ema", ST_F32, 1, shape, e))
            return -1;
        memcpy(t->ema, te->data, n * sizeof(real));
    }
    memcpy(t->m.params, tp->data, n * sizeof(real));
    memcpy(t->adam.m, tm->data, n * sizeof(real));
    memcpy(t->adam.v, tv->data, n * sizeof(real));
    memcpy(p->epoch_rng.s, tr->data, sizeof p->epoch_rng.s);
    memcpy(p->drop_rng.s, (const uint64_t *)tr->data + 4, sizeof p->drop_rng.s);
    return 0;
}

/* Restores weights, moments and progress from MODEL.state, after checking that it
   belongs to this data and configuration. */
int trainer_load_state(Trainer *t, Err *e)
{
    const char *path = t->path_state;
    StFile *f;
    if (st_load(&f, path, TRAIN_FORMAT_STATE, e) != 0)
        return -1;
    int rc = -1;
    Json doc = {0};
    bool parsed = false;
    if (state_matches(t, f, path, e) != 0)
        goto out;
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
    if (doc.root->type != JSON_OBJECT) {
        err_set(e, "%s: s2s.state: expected a JSON object", path);
        goto out;
    }
    if (state_progress_read(t, doc.root, path, e) != 0 || state_tensors_read(t, f, path, e) != 0)
        goto out;
    rc = 0;
out:
    if (parsed)
        json_free(&doc);
    st_close(f);
    return rc;
}

/* A count in the JSON object text[] under key, or -1 when absent or not a count. */
long trainer_json_count(const char *text, const char *key)
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
    long step = trainer_json_count(st_meta(f, KEY_STATE), "step");
    long last_step = trainer_json_count(last->history, "steps");
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
    /* the header only: the weights and moments are read once, by trainer_load_state */
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
        char shown[96]; /* the file's own text, escaped and cut: the message stays one line */
        err_set(e, "%s: not an s2s training state (format '%s', expected '%s')", path,
                meta[0] ? json_show(shown, sizeof shown, meta[0], strlen(meta[0])) : "none", TRAIN_FORMAT_STATE);
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
int trainer_checkpoint(Trainer *t, bool best, bool keep, Err *e)
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
    t->p.seconds = trainer_elapsed(t);
    Buf h = {0};
    history_json(t, &h);
    /* the model files hold the moving average when there is one */
    trainer_use_ema(t, true);
    int rc = model_file_save(t->path_last, &t->m, t->data.src_vocab, t->data.tgt_vocab,
                             &t->data.text, h.data, e);
    if (rc == 0 && best)
        rc = model_file_save(t->o->model, &t->m, t->data.src_vocab, t->data.tgt_vocab,
                             &t->data.text, h.data, e);
    if (rc == 0 && keep && t->o->keep_ckpt > 0)
        rc = keep_checkpoint(t, h.data, e);
    trainer_use_ema(t, false);
    if (rc == 0)
        rc = save_state(t, e);
    if (rc == 0)
        t->ckpt_step = t->p.step;
    buf_free(&h);
    return rc;
}

/* --init: the weights (and their average) start as BASE's, which has this run's
   configuration and vocabularies (checked before). */
void trainer_start_from_base(Trainer *t)
{
    const ModelFile *b = t->o->base;
    CHECK(b->model.layout.total == t->m.layout.total);
    memcpy(t->m.params, b->model.params, t->m.layout.total * sizeof(real));
    if (t->ema)
        memcpy(t->ema, t->m.params, t->m.layout.total * sizeof(real));
    const char *crc = b->file ? st_meta(b->file, ST_KEY_CRC32) : NULL;
    t->init_from = init_json(t->o->init, crc ? crc : "", trainer_json_count(b->history, "steps"));
}
