/* The recurrent model's activations (RnnWork, carved from one allocation) and the row
   moves of beam search. */
#include "model/rnn_work.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/rnn_cell.h"

static void work_carve(RnnWork *w, Carver *cv)
{
    const ModelConfig *c = &w->base.cfg;
    size_t B = (size_t)w->base.max_b, S = (size_t)w->base.max_s, T = (size_t)w->base.max_t;
    size_t E = (size_t)c->emb, H = (size_t)c->hidden, D = (size_t)c->dec_hidden,
           A = (size_t)c->attn, P = (size_t)c->deep_out,
           K = (size_t)model_enc_size(c), G = (size_t)model_gates(c);
    size_t C = c->cell == CELL_GRU ? NN_GRU_CACHE : NN_LSTM_CACHE;
    bool tr = w->base.training, lstm = c->cell == CELL_LSTM;
    int dirs = c->bidir ? 2 : 1;
    size_t Hh = (size_t)c->heads, Ak = (size_t)model_key_size(c), Din = (size_t)model_dec_in_size(c),
           F = (size_t)model_pre_in_size(c);
    AttnKind at = c->attention;
    bool add_att = model_attn_additive(c), proj_q = model_attn_projects_query(c),
         multi = at == ATT_MULTIHEAD,
         pool = c->bridge == BRIDGE_ATTN_POOL, local_p = c->local == LOCAL_P;

    w->xs = carve(cv, S * B * E);
    w->xs_mask = carve(cv, S * B * E);
    for (int l = 0; l < c->layers; l++) {
        if (l > 0) {
            w->lin[l] = carve(cv, S * B * K);
            w->lin_mask[l] = carve(cv, S * B * K);
        }
        w->out[l] = carve(cv, S * B * K);
        if (tr)
            w->dout[l] = carve(cv, S * B * K);
        for (int d = 0; d < dirs; d++) {
            EncDir *ed = &w->enc[l][d];
            ed->gi = carve(cv, S * B * G * H);
            ed->st = carve(cv, S * B * H);
            ed->cache = carve(cv, S * B * C * H);
            if (lstm)
                ed->cst = carve(cv, S * B * H);
            if (tr) {
                ed->dst = carve(cv, S * B * H);
                ed->dgi = carve(cv, S * B * G * H);
                if (lstm)
                    ed->dcst = carve(cv, S * B * H);
            }
        }
    }
    if (tr) {
        w->dlin = carve(cv, S * B * K);
        w->dxs = carve(cv, S * B * E);
        w->edgh = carve(cv, B * G * H);
        w->dbin = carve(cv, B * K);
        if (Ak)
            w->dkeys = carve(cv, S * B * Ak);
        if (multi)
            w->dvals = carve(cv, S * B * A);
        if (pool) {
            w->dpool_u = carve(cv, S * B * A);
            w->dpool_q = carve(cv, B * A);
            w->dpool_e = carve(cv, B * S);
            w->dpool_a = carve(cv, B * S);
            w->dpool_m = carve(cv, B * K);
        }
    }
    w->zeros = carve(cv, B * (H > D ? (H > P ? H : P) : (D > P ? D : P)));
    w->base.rows_tmp_len = B * (D > P ? D : P);
    w->base.rows_tmp = carve(cv, w->base.rows_tmp_len);
    w->egh = carve(cv, B * G * H);
    if (Ak)
        w->keys = carve(cv, S * B * Ak);
    if (multi)
        w->vals = carve(cv, S * B * A);
    if (pool) {
        w->pool_u = carve(cv, S * B * A);
        w->pool_q = carve(cv, B * A);
        w->pool_e = carve(cv, B * S);
        w->pool_a = carve(cv, B * S);
        w->pool_m = carve(cv, B * K);
    }

    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        if (l > 0) {
            dl->in = carve(cv, T * B * D);
            dl->mask = carve(cv, T * B * D);
        }
        dl->gi = carve(cv, B * G * D);
        dl->gh = carve(cv, B * G * D);
        dl->s = carve(cv, T * B * D);
        dl->cache = carve(cv, T * B * C * D);
        dl->s0 = carve(cv, B * D);
        dl->bin = carve(cv, B * K);
        if (lstm) {
            dl->c = carve(cv, T * B * D);
            dl->c0 = carve(cv, B * D);
            dl->cbin = carve(cv, B * K);
        }
        if (tr) {
            dl->ds = carve(cv, T * B * D);
            dl->ds0 = carve(cv, B * D);
            if (l > 0)
                dl->din = carve(cv, B * D);
            if (lstm) {
                dl->dc = carve(cv, T * B * D);
                dl->dc0 = carve(cv, B * D);
            }
        }
    }
    w->y = carve(cv, T * B * E);
    w->y_mask = carve(cv, T * B * E);
    if (proj_q)
        w->q = carve(cv, T * B * A);
    if (add_att)
        w->att_cache = carve(cv, S * B * A);
    w->e = carve(cv, T * Hh * B * S);
    w->a = carve(cv, T * Hh * B * S);
    if (local_p) {
        w->asoft = carve(cv, T * Hh * B * S);
        w->pos_h = carve(cv, T * B * A);
        w->pos_x = carve(cv, T * B);
        w->pos_sig = carve(cv, T * B);
        w->pos_p = carve(cv, T * B);
    }
    if (multi) {
        w->ashow = carve(cv, T * B * S);
        w->heads_o = carve(cv, T * B * A);
    }
    w->ctx = carve(cv, T * B * K);
    w->x0 = carve(cv, T * B * Din);
    w->feat = carve(cv, T * B * F);
    w->pre = carve(cv, T * B * P);
    w->pre_drop = carve(cv, T * B * P);
    w->pre_mask = carve(cv, T * B * P);
    carve_output(&w->base, cv);
    if (tr) {
        w->dy = carve(cv, T * B * E);
        w->dq = carve(cv, B * A);
        w->de = carve(cv, Hh * B * S);
        w->da = carve(cv, Hh * B * S);
        if (local_p) {
            w->dasoft = carve(cv, Hh * B * S);
            w->dpos_h = carve(cv, B * A);
            w->dpos_x = carve(cv, B);
            w->dpos_p = carve(cv, B);
        }
        if (multi)
            w->dheads_o = carve(cv, B * A);
        w->dctx = carve(cv, T * B * K);
        w->dx0 = carve(cv, B * Din);
        w->dgi = carve(cv, B * G * D);
        w->dgh = carve(cv, B * G * D);
        w->dfeat = carve(cv, T * B * F);
        w->dpre = carve(cv, T * B * P);
    }
}


size_t rnn_work_bytes(const Model *m, const WorkShape *s)
{
    RnnWork w = {0};
    work_base_init(&w.base, m, s);
    Carver count = {0};
    work_carve(&w, &count);
    size_t n = sizeof w + count.used * sizeof(real);
    if (m->cfg.local != LOCAL_NONE)
        n += 2 * (size_t)s->max_t * (size_t)s->max_b * sizeof(int);
    return n;
}

Work *rnn_work_new(const Model *m, const WorkShape *s)
{
    RnnWork *w = XCNEW(RnnWork, 1);
    work_base_init(&w->base, m, s);
    Carver count = {0};
    work_carve(w, &count);
    w->mem = xcalloc(count.used, sizeof(real));
    Carver cv = {.base = w->mem};
    work_carve(w, &cv);
    if (m->cfg.local != LOCAL_NONE) {
        w->lo = XCNEW(int, (size_t)s->max_t * s->max_b);
        w->hi = XCNEW(int, (size_t)s->max_t * s->max_b);
    }
    return &w->base;
}

void rnn_work_free(Work *base)
{
    RnnWork *w = (RnnWork *)base;
    free(w->mem);
    free(w->lo);
    free(w->hi);
    free(w);
}

void rnn_expand_rows(Model *m, Work *base, const Batch *b, const int *from, int n)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, D = c->dec_hidden, top = c->layers - 1, t = base->T;
    work_gather_rows(base, w->out[top], w->out[top], S, B, n, (size_t)model_enc_size(c), from);
    if (model_key_size(c))
        work_gather_rows(base, w->keys, w->keys, S, B, n, (size_t)model_key_size(c), from);
    if (c->attention == ATT_MULTIHEAD)
        work_gather_rows(base, w->vals, w->vals, S, B, n, (size_t)c->attn, from);
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        work_gather_rows(base, state_at(dl->s, dl->s0, t, n, D), state_at(dl->s, dl->s0, t, B, D), 1, B, n,
                         (size_t)D, from);
        if (c->cell == CELL_LSTM)
            work_gather_rows(base, state_at(dl->c, dl->c0, t, n, D), state_at(dl->c, dl->c0, t, B, D), 1, B, n,
                             (size_t)D, from);
    }
    if (c->input_feed && t > 0)
        work_gather_rows(base, state_at(w->pre, NULL, t, n, c->deep_out), state_at(w->pre, NULL, t, B, c->deep_out),
                         1, B, n, (size_t)c->deep_out, from);
}

void rnn_select_rows(Model *m, Work *base, const Batch *b, const int *from, int t)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &m->cfg;
    int B = b->B, D = c->dec_hidden;
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        real *x = state_at(dl->s, dl->s0, t, B, D);
        work_gather_rows(base, x, x, 1, B, B, (size_t)D, from);
        if (c->cell == CELL_LSTM) {
            x = state_at(dl->c, dl->c0, t, B, D);
            work_gather_rows(base, x, x, 1, B, B, (size_t)D, from);
        }
    }
    if (c->input_feed && t > 0) {
        real *x = state_at(w->pre, NULL, t, B, c->deep_out);
        work_gather_rows(base, x, x, 1, B, B, (size_t)c->deep_out, from);
    }
}
