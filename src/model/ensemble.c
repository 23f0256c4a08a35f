#include "model/ensemble.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/work.h"
#include "nn/loss.h"

struct EnsWork {
    int n;
    Work **member; /* one Work per member, sized as the ensemble's */
    real *logp;    /* (max_b, Vt) the mean log-probabilities of the last step */
    int *src, *src_len; /* the batch's rows before a move, restored for each member */
};

void model_ensemble_init(Model *e, Model *members, int n)
{
    CHECK(n >= 1);
    memset(e, 0, sizeof *e);
    e->cfg = members[0].cfg;
    ModelConfig *cfgs = XNEW(ModelConfig, n);
    for (int i = 0; i < n; i++) {
        CHECK(members[i].cfg.src_vocab == e->cfg.src_vocab && members[i].cfg.tgt_vocab == e->cfg.tgt_vocab);
        cfgs[i] = members[i].cfg;
    }
    e->cfg.n_members = n;
    e->cfg.member_cfg = cfgs;
    e->members = members;
    e->show_layer = e->show_head = -1;
}

void model_ensemble_free(Model *e)
{
    free((void *)e->cfg.member_cfg);
    memset(e, 0, sizeof *e);
}

static Work *member_work(const Work *w, int i, WorkKind kind)
{
    return work_new(&w->cfg.member_cfg[i], w->max_b, w->max_s, w->max_t, kind);
}

EnsWork *ens_work_new(Work *w)
{
    CHECK(w->kind == WORK_DECODE);
    EnsWork *x = XCNEW(EnsWork, 1);
    int n = w->cfg.n_members;
    x->n = n;
    x->member = XNEW(Work *, n);
    for (int i = 0; i < n; i++)
        x->member[i] = member_work(w, i, w->kind);
    x->logp = XNEW(real, (size_t)w->max_b * (size_t)w->cfg.tgt_vocab);
    x->src = XNEW(int, (size_t)w->max_b * (size_t)w->max_s);
    x->src_len = XNEW(int, (size_t)w->max_b);
    return x;
}

void ens_work_free(EnsWork *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->n; i++)
        work_free(x->member[i]);
    free(x->logp);
    free(x->src);
    free(x->src_len);
    free(x->member);
    free(x);
}

size_t ens_work_bytes(const Work *w)
{
    size_t n = sizeof(EnsWork) + (size_t)w->cfg.n_members * sizeof(Work *) +
               (size_t)w->max_b * (size_t)w->cfg.tgt_vocab * sizeof(real) +
               ((size_t)w->max_b * (size_t)w->max_s + (size_t)w->max_b) * sizeof(int);
    for (int i = 0; i < w->cfg.n_members; i++)
        n += work_bytes(&w->cfg.member_cfg[i], w->max_b, w->max_s, w->max_t, w->kind);
    return n;
}

void ens_encode(Model *m, Work *w, const Batch *b)
{
    for (int i = 0; i < m->cfg.n_members; i++)
        model_encode(&m->members[i], w->ens->member[i], b);
    w->B = b->B;
    w->S = b->S;
    w->T = 0;
}

void ens_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t)
{
    int n = m->cfg.n_members, B = b->B, V = m->cfg.tgt_vocab;
    real *lp = w->ens->logp;
    memset(lp, 0, (size_t)B * V * sizeof *lp);
    for (int i = 0; i < n; i++) {
        Work *mw = w->ens->member[i];
        model_decode_step(&m->members[i], mw, b, prev, t);
        const real *lg = work_step_logits(mw);
        for (int r = 0; r < B; r++) {
            const real *x = lg + (size_t)r * V;
            real *y = lp + (size_t)r * V;
            real lse = (real)nn_log_sum_exp(x, V);
            for (int v = 0; v < V; v++)
                y[v] += (x[v] - lse) / (real)n;
        }
    }
    w->T = t + 1;
}

const real *ens_step_logits(const Work *w) { return w->ens->logp; }

const real *ens_step_attention(const Work *w) { return work_step_attention(w->ens->member[0]); }

/* Each member moves the batch's rows in b; every member must start from the same rows. */
static void save_rows(Work *w, const Batch *b)
{
    memcpy(w->ens->src, b->src, (size_t)b->S * b->B * sizeof *b->src);
    memcpy(w->ens->src_len, b->src_len, (size_t)b->B * sizeof *b->src_len);
}

static void restore_rows(Work *w, Batch *b, int B)
{
    memcpy(b->src, w->ens->src, (size_t)b->S * B * sizeof *b->src);
    memcpy(b->src_len, w->ens->src_len, (size_t)B * sizeof *b->src_len);
    b->B = B;
}

void ens_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n)
{
    int B = b->B;
    save_rows(w, b);
    for (int i = 0; i < m->cfg.n_members; i++) {
        if (i)
            restore_rows(w, b, B);
        model_expand_rows(&m->members[i], w->ens->member[i], b, from, n);
    }
    w->B = n;
}

void ens_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t)
{
    for (int i = 0; i < m->cfg.n_members; i++)
        model_select_rows(&m->members[i], w->ens->member[i], b, from, t);
}
