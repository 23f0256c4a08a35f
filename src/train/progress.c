/* What a run shows and logs: the progress line and messages on stderr, and the lines of
   MODEL.log.jsonl (train/trainer.h). */
#include "train/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "train/optim.h"

static void clear_line(Trainer *t)
{
    if (t->line_shown) {
        fputs("\r\033[K", stderr);
        t->line_shown = false;
    }
}

void trainer_say(Trainer *t, const char *fmt, ...)
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
void trainer_log_open(JsonWriter *w, Buf *b, const char *event)
{
    json_writer_init(w, b, JSON_LINE);
    json_open_object(w, NULL);
    json_put_str(w, "event", event);
}

/* Ends the line begun by trainer_log_open and writes it. */
void trainer_log_close(Trainer *t, JsonWriter *w)
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
double trainer_done_fraction(const Trainer *t)
{
    const TrainOpts *o = t->o;
    double f = -1;
    if (o->steps)
        f = fmax(f, (double)t->p.step / (double)o->steps);
    if (o->minutes > 0)
        f = fmax(f, trainer_elapsed(t) / (o->minutes * 60));
    if (o->epochs)
        f = fmax(f, ((double)t->p.epoch + batch_plan_done(&t->plan)) / (double)o->epochs);
    return f;
}

void trainer_show_progress(Trainer *t, double loss, double ppl, double tok_s, double lr, bool force)
{
    if (t->o->quiet || t->rank != 0)
        return;
    double now = clock_now();
    bool plain_due = !t->live && t->o->log_every > 0 && t->p.step % t->o->log_every == 0;
    if (t->live ? (!force && now - t->t_shown < 0.25) : !plain_due)
        return;
    t->t_shown = now;
    char el[32], eta[32] = "?";
    double f = trainer_done_fraction(t), e = trainer_elapsed(t);
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

/* A number of the history and the log: 6 significant digits, null when not finite or
   when there is none (have false). */
void trainer_put_num6(JsonWriter *w, const char *key, double x, bool have)
{
    if (have)
        json_put_double(w, key, "%.6g", x);
    else
        json_put_null(w, key);
}

/* The log line of a training step of ntok target tokens at rate lr. */
void trainer_log_step(Trainer *t, Buf *b, const StepResult *r, double lr, long ntok, double tok_s)
{
    JsonWriter w;
    trainer_log_open(&w, b, "step");
    json_put_int(&w, "step", t->p.step);
    json_put_int(&w, "epoch", t->p.epoch + 1);
    trainer_put_num6(&w, "loss", r->loss / (double)ntok, true);
    trainer_put_num6(&w, "ppl", exp(r->nll / (double)ntok), true);
    trainer_put_num6(&w, "grad_norm", r->grad_norm, true);
    trainer_put_num6(&w, "lr", lr, true);
    json_put_int(&w, "tokens", ntok);
    json_put_double(&w, "tok_s", "%.0f", tok_s);
    json_put_double(&w, "elapsed", "%.3f", trainer_elapsed(t));
    if (t->size > 1) /* the allreduces' share of the step */
        json_put_double(&w, "allreduce_s", "%.4f", r->comm_s);
    trainer_log_close(t, &w);
}

/* The first log line of a run: "start", or "resume" with the step it resumes at. */
void trainer_log_start(Trainer *t, const ModelConfig *cfg, int threads, Buf *b)
{
    const TrainOpts *o = t->o;
    Buf cj = {0};
    model_config_json(cfg, &t->data.text, &cj);
    JsonWriter w;
    trainer_log_open(&w, b, o->resume ? "resume" : "start");
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
    trainer_log_close(t, &w);
    buf_free(&cj);
}
