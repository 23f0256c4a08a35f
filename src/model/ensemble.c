#include "model/ensemble.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/work.h"
#include "nn/loss.h"

/* An ensemble's m->impl. */
typedef struct Ensemble {
    int n;
    Model *member;
} Ensemble;

typedef struct EnsWork {
    Work base;     /* base.logits: (max_b, Vt) the mean log-probabilities of the last step */
    int n;
    Work **member; /* one Work per member, sized as the ensemble's */
} EnsWork;

static const Ensemble *ens(const Model *m) { return m->impl; }

static int ens_max_positions(const Model *m)
{
    int lim = 0;
    for (int i = 0; i < ens(m)->n; i++) {
        int k = model_max_positions(&ens(m)->member[i]);
        if (k && (!lim || k < lim))
            lim = k;
    }
    return lim;
}

static size_t ens_work_bytes(const Model *m, const WorkShape *s)
{
    const Ensemble *e = ens(m);
    size_t n = sizeof(EnsWork) + (size_t)e->n * sizeof(Work *) +
               (size_t)s->max_b * (size_t)m->cfg.tgt_vocab * sizeof(real);
    for (int i = 0; i < e->n; i++)
        n += work_bytes(&e->member[i], s->max_b, s->max_s, s->max_t, s->kind);
    return n;
}

static Work *ens_work_new(const Model *m, const WorkShape *s)
{
    CHECK(s->kind == WORK_DECODE);
    const Ensemble *e = ens(m);
    EnsWork *x = XCNEW(EnsWork, 1);
    work_base_init(&x->base, m, s);
    x->n = e->n;
    x->member = XNEW(Work *, e->n);
    for (int i = 0; i < e->n; i++)
        x->member[i] = work_new(&e->member[i], s->max_b, s->max_s, s->max_t, s->kind);
    x->base.logits = XNEW(real, (size_t)s->max_b * (size_t)m->cfg.tgt_vocab);
    return &x->base;
}

static void ens_work_free(Work *w)
{
    EnsWork *x = (EnsWork *)w;
    for (int i = 0; i < x->n; i++)
        work_free(x->member[i]);
    free(x->base.logits);
    free(x->member);
    free(x);
}

static void ens_encode(Model *m, Work *w, const Batch *b)
{
    for (int i = 0; i < ens(m)->n; i++)
        model_encode(&ens(m)->member[i], ((EnsWork *)w)->member[i], b);
}

static void ens_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t)
{
    EnsWork *x = (EnsWork *)w;
    int n = ens(m)->n, B = b->B, V = m->cfg.tgt_vocab;
    real *lp = x->base.logits;
    memset(lp, 0, (size_t)B * V * sizeof *lp);
    for (int i = 0; i < n; i++) {
        Work *mw = x->member[i];
        model_decode_step(&ens(m)->member[i], mw, b, prev, t);
        const real *lg = work_step_logits(mw);
        for (int r = 0; r < B; r++) {
            const real *in = lg + (size_t)r * V;
            real *y = lp + (size_t)r * V;
            real lse = (real)nn_log_sum_exp(in, V);
            for (int v = 0; v < V; v++)
                y[v] += (in[v] - lse) / (real)n;
        }
    }
}

static const real *ens_step_attention(const Work *w) { return work_step_attention(((const EnsWork *)w)->member[0]); }

/* Each member moves its own state; model_expand_rows moves the batch's rows after. */
static void ens_expand_rows(Model *m, Work *w, const Batch *b, const int *from, int n)
{
    EnsWork *x = (EnsWork *)w;
    for (int i = 0; i < ens(m)->n; i++) {
        Model *mm = &ens(m)->member[i];
        mm->ops->expand_rows(mm, x->member[i], b, from, n);
        x->member[i]->B = n;
    }
}

static void ens_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t)
{
    for (int i = 0; i < ens(m)->n; i++)
        model_select_rows(&ens(m)->member[i], ((EnsWork *)w)->member[i], b, from, t);
}

static void ens_quantize(Model *m, Precision p)
{
    for (int i = 0; i < ens(m)->n; i++)
        model_set_precision(&ens(m)->member[i], p);
}

/* The attention shown is the first member's. */
static int ens_attention_layers(const Model *m) { return model_attention_layers(&ens(m)->member[0]); }

static void ens_show_attention(Work *w) { work_show_attention(((EnsWork *)w)->member[0], w->show_layer, w->show_head); }

static const ModelOps ensemble_ops = {
    .name = "ensemble",
    .max_positions = ens_max_positions,
    .work_bytes = ens_work_bytes,
    .work_new = ens_work_new,
    .work_free = ens_work_free,
    .encode = ens_encode,
    .decode_step = ens_decode_step,
    .step_attention = ens_step_attention,
    .expand_rows = ens_expand_rows,
    .select_rows = ens_select_rows,
    .quantize = ens_quantize,
    .attention_layers = ens_attention_layers,
    .show_attention = ens_show_attention,
};

void model_ensemble_init(Model *e, Model *members, int n)
{
    CHECK(n >= 1);
    memset(e, 0, sizeof *e);
    e->cfg = members[0].cfg;
    for (int i = 0; i < n; i++)
        CHECK(members[i].cfg.src_vocab == e->cfg.src_vocab && members[i].cfg.tgt_vocab == e->cfg.tgt_vocab);
    Ensemble *x = XCNEW(Ensemble, 1);
    x->n = n;
    x->member = members;
    e->impl = x;
    e->ops = &ensemble_ops;
}

void model_ensemble_free(Model *e)
{
    free(e->impl);
    memset(e, 0, sizeof *e);
}
