/* Validation of a run: valid loss and perplexity, greedy BLEU (both shared out over the
   processes of train/dist.h), and what a validation decides (train/trainer.h). */
#include "train/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/greedy.h"
#include "decode/plan.h"
#include "decode/translate.h"
#include "eval/bleu.h"
#include "train/dist.h"

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

/* Over several processes, this process's share of the valid sources *srcs: process r
   decodes the batches k ≡ r (mod size) of the one-process plan (the same sentences
   together, so the same outputs), and process 0 the empty sources as well. *srcs becomes
   the share, in *src and *len (freed after decoding), *batch the plan's batch size, and
   (*mine)[j] the sentence of output j. */
static int bleu_share(const Trainer *t, PairSet *srcs, int *batch, int **mine, int ***src, int **len, Err *e)
{
    const Split *v = &t->data.valid;
    int n = srcs->n;
    int *order = XNEW(int, n), nn, ms, mt, nm = 0;
    if (decode_plan(&t->m, srcs, 0, order, &nn, &ms, &mt, e) != 0) {
        free(order);
        return -1;
    }
    int B = nn ? decode_fit_batch(&t->m, ms, mt, *batch < nn ? *batch : nn, 1, 0, 0) : 1;
    int *m = XNEW(int, n);
    for (int j = 0; j < nn; j++)
        if (j / B % t->size == t->rank)
            m[nm++] = order[j];
    for (int i = 0; i < n && t->rank == 0; i++)
        if (srcs->src_len[i] == 0) /* never decoded: an empty output */
            m[nm++] = i;
    *src = XNEW(int *, nm);
    *len = XNEW(int, nm);
    for (int j = 0; j < nm; j++) {
        (*src)[j] = v->gsrc[m[j]];
        (*len)[j] = v->gsrc_len[m[j]];
    }
    *srcs = (PairSet){.n = nm, .src = *src, .src_len = *len};
    *batch = B;
    *mine = m;
    free(order);
    return 0;
}

/* The BLEU statistics of every process, summed (one process: as they are). */
static void bleu_sum(BleuStats *bs)
{
    long long sums[3 + 2 * BLEU_MAX_ORDER] = {bs->sys_len, bs->ref_len, bs->nsegs};
    memcpy(sums + 3, bs->counts, sizeof bs->counts);
    memcpy(sums + 3 + BLEU_MAX_ORDER, bs->totals, sizeof bs->totals);
    dist_sum_i64(sums, sizeof sums / sizeof *sums);
    bs->sys_len = sums[0];
    bs->ref_len = sums[1];
    bs->nsegs = sums[2];
    memcpy(bs->counts, sums + 3, sizeof bs->counts);
    memcpy(bs->totals, sums + 3 + BLEU_MAX_ORDER, sizeof bs->totals);
}

/* Greedy BLEU of the valid split: each distinct source is translated once and
   scored against all of its references (at most --valid-max sources). Over several
   processes each decodes its share (bleu_share) and the statistics are summed. */
static int valid_bleu(Trainer *t, double *bleu, Err *e)
{
    const Split *v = &t->data.valid;
    int n = (int)v->groups.n;
    if (t->o->valid_max > 0 && n > t->o->valid_max)
        n = (int)t->o->valid_max;
    PairSet srcs = {.n = n, .src = v->gsrc, .src_len = v->gsrc_len};
    Hyps h;
    int batch = t->o->batch.batch > 0 ? t->o->batch.batch : 64;
    int *mine = NULL, **msrc = NULL, *mlen = NULL; /* mine[j]: the sentence of output j */
    if (t->size > 1 && bleu_share(t, &srcs, &batch, &mine, &msrc, &mlen, e) != 0)
        return -1;
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
            rc = err_set(e, "%s:%zu: %s", v->text.name, v->text.pairs[v->groups.member[v->groups.start[g]]].line,
                         be.msg);
    }
    bleu_sum(&bs);
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

/* The log line of the validation just recorded in t->p, begun at clock time t0. */
static void log_valid(Trainer *t, bool have_valid, bool best, double t0)
{
    const Progress *p = &t->p;
    /* at an epoch end the epoch just completed, else the current one (1-based) */
    long ep = p->batch == 0 && p->epoch > 0 ? p->epoch : p->epoch + 1;
    Buf b = {0};
    JsonWriter w;
    trainer_log_open(&w, &b, "valid");
    json_put_int(&w, "step", p->step);
    json_put_int(&w, "epoch", ep);
    trainer_put_num6(&w, "loss", p->last_valid_loss, have_valid);
    trainer_put_num6(&w, "ppl", p->last_valid_ppl, have_valid);
    trainer_put_num6(&w, "bleu", p->last_valid_bleu, have_valid);
    json_put_bool(&w, "best", best);
    /* the rate in force: the schedule's at this step and share of the budget */
    double lr = optim_sched_lr_at(&t->sched, p->step > 0 ? p->step : 1, trainer_done_fraction(t)) * p->lr_scale;
    trainer_put_num6(&w, "lr", lr, true);
    json_put_double(&w, "seconds", "%.3f", clock_now() - t0);
    json_put_double(&w, "elapsed", "%.3f", trainer_elapsed(t));
    trainer_log_close(t, &w);
    buf_free(&b);
}

/* Validates, logs, updates best/patience/schedule and writes the checkpoint files.
   Scheduled validations (every --valid-every steps and at epoch ends) also drive the
   learning-rate schedule and --patience; the extra one after a stop by --steps or
   --time does not, so that a run stopped there and resumed continues exactly as the
   uninterrupted run. Sets *stop when patience is exhausted. */
int trainer_validate(Trainer *t, bool scheduled, bool *stop, Err *e)
{
    Progress *p = &t->p;
    double t0 = clock_now();
    bool have_valid = t->data.valid.set.n > 0;
    double loss = 0, ppl = 0, bleu = -1;
    if (have_valid) {
        trainer_use_ema(t, true);
        valid_loss(t, &loss, &ppl);
        int vrc = valid_bleu(t, &bleu, e);
        trainer_use_ema(t, false);
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
            trainer_say(t, "valid BLEU did not improve: learning rate lowered to %.3g", t->sched.lr);
    }
    log_valid(t, have_valid, best, t0);
    t->valid_seconds += clock_now() - t0;
    /* On stderr, the validations of --valid-every and the last one, and those at epoch
       ends at most every --log-every steps: a small corpus's epochs are a few steps
       long (the log has every validation). */
    bool every = t->o->valid_every > 0 && p->step % t->o->valid_every == 0;
    if (have_valid && (every || !scheduled || p->step - t->valid_shown >= t->o->log_every)) {
        trainer_say(t, "valid step %ld: loss %.3f ppl %.2f BLEU %.2f%s (%.1f s)", p->step, loss, ppl, bleu,
                    best ? " (best)" : "", clock_now() - t0);
        t->valid_shown = p->step;
    }
    if (trainer_checkpoint(t, best, true, e) != 0)
        return -1;
    if (t->o->patience > 0 && p->bad_valid >= t->o->patience) {
        trainer_say(t, "stopping: no better valid BLEU in %d validations (best %.2f at step %ld)",
                    p->bad_valid, p->best_bleu, p->best_step);
        *stop = true;
    }
    return 0;
}
