/* The recurrent model's activations (RnnWork, carved from one allocation) and the row
   moves of beam search. */
#include "model/rnn_work.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/rnn_cell.h"

/* The sizes and switches the carving reads (rnn_work.h names the sizes). */
typedef struct Dims {
    size_t B, S, T, E, H, D, A, P, K, G, C, Hh, Ak, Din, F;
    int dirs;
    bool tr, lstm, multi, pool, local_p;
} Dims;

static Dims dims_of(const Work *w)
{
    const ModelConfig *c = &w->cfg;
    return (Dims){.B = (size_t)w->max_b, .S = (size_t)w->max_s, .T = (size_t)w->max_t, .E = (size_t)c->emb,
                  .H = (size_t)c->hidden, .D = (size_t)c->dec_hidden, .A = (size_t)c->attn,
                  .P = (size_t)c->deep_out, .K = (size_t)model_enc_size(c), .G = (size_t)model_gates(c),
                  .C = c->cell == CELL_GRU ? NN_GRU_CACHE : NN_LSTM_CACHE, .Hh = (size_t)c->heads,
                  .Ak = (size_t)model_key_size(c), .Din = (size_t)model_dec_in_size(c),
                  .F = (size_t)model_pre_in_size(c), .dirs = c->bidir ? 2 : 1, .tr = w->training,
                  .lstm = c->cell == CELL_LSTM, .multi = c->attention == ATT_MULTIHEAD,
                  .pool = c->bridge == BRIDGE_ATTN_POOL, .local_p = c->local == LOCAL_P};
}

/* The encoder's layers: inputs, outputs, each direction's states and gates. */
static void carve_encoder(RnnWork *w, Carver *cv, const Dims *z, int layers)
{
    size_t SB = z->S * z->B;
    w->xs = carve(cv, SB * z->E);
    w->xs_mask = carve(cv, SB * z->E);
    for (int l = 0; l < layers; l++) {
        if (l > 0) {
            w->lin[l] = carve(cv, SB * z->K);
            w->lin_mask[l] = carve(cv, SB * z->K);
        }
        w->out[l] = carve(cv, SB * z->K);
        if (z->tr)
            w->dout[l] = carve(cv, SB * z->K);
        for (int d = 0; d < z->dirs; d++) {
            EncDir *ed = &w->enc[l][d];
            ed->gi = carve(cv, SB * z->G * z->H);
            ed->st = carve(cv, SB * z->H);
            ed->cache = carve(cv, SB * z->C * z->H);
            if (z->lstm)
                ed->cst = carve(cv, SB * z->H);
            if (z->tr) {
                ed->dst = carve(cv, SB * z->H);
                ed->dgi = carve(cv, SB * z->G * z->H);
                if (z->lstm)
                    ed->dcst = carve(cv, SB * z->H);
            }
        }
    }
}

/* The attention keys and values and the pooling bridge's buffers, or (grad) their
   gradients. */
static void carve_keys(RnnWork *w, Carver *cv, const Dims *z, bool grad)
{
    size_t B = z->B, S = z->S, A = z->A;
    if (z->Ak)
        *(grad ? &w->dkeys : &w->keys) = carve(cv, S * B * z->Ak);
    if (z->multi)
        *(grad ? &w->dvals : &w->vals) = carve(cv, S * B * A);
    if (z->pool) {
        *(grad ? &w->dpool_u : &w->pool_u) = carve(cv, S * B * A);
        *(grad ? &w->dpool_q : &w->pool_q) = carve(cv, B * A);
        *(grad ? &w->dpool_e : &w->pool_e) = carve(cv, B * S);
        *(grad ? &w->dpool_a : &w->pool_a) = carve(cv, B * S);
        *(grad ? &w->dpool_m : &w->pool_m) = carve(cv, B * z->K);
    }
}

/* The decoder's layers: states, gates and the bridge's inputs. */
static void carve_decoder(RnnWork *w, Carver *cv, const Dims *z, int layers)
{
    size_t B = z->B, T = z->T, D = z->D, TBD = z->T * z->B * z->D;
    for (int l = 0; l < layers; l++) {
        DecLayer *dl = &w->dec[l];
        if (l > 0) {
            dl->in = carve(cv, TBD);
            dl->mask = carve(cv, TBD);
        }
        dl->gi = carve(cv, B * z->G * D);
        dl->gh = carve(cv, B * z->G * D);
        dl->s = carve(cv, TBD);
        dl->cache = carve(cv, T * B * z->C * D);
        dl->s0 = carve(cv, B * D);
        dl->bin = carve(cv, B * z->K);
        if (z->lstm) {
            dl->c = carve(cv, TBD);
            dl->c0 = carve(cv, B * D);
            dl->cbin = carve(cv, B * z->K);
        }
        if (z->tr) {
            dl->ds = carve(cv, TBD);
            dl->ds0 = carve(cv, B * D);
            if (l > 0)
                dl->din = carve(cv, B * D);
            if (z->lstm) {
                dl->dc = carve(cv, TBD);
                dl->dc0 = carve(cv, B * D);
            }
        }
    }
}

/* Every target step's embeddings, attention, context, decoder input and deep output. */
static void carve_steps(RnnWork *w, Carver *cv, const Dims *z, const ModelConfig *c)
{
    size_t TB = z->T * z->B, B = z->B, S = z->S, A = z->A, Hh = z->Hh;
    w->y = carve(cv, TB * z->E);
    w->y_mask = carve(cv, TB * z->E);
    if (model_attn_projects_query(c))
        w->q = carve(cv, TB * A);
    if (model_attn_additive(c))
        w->att_cache = carve(cv, S * B * A);
    w->e = carve(cv, TB * Hh * S);
    w->a = carve(cv, TB * Hh * S);
    if (z->local_p) {
        w->asoft = carve(cv, TB * Hh * S);
        w->pos_h = carve(cv, TB * A);
        w->pos_x = carve(cv, TB);
        w->pos_sig = carve(cv, TB);
        w->pos_p = carve(cv, TB);
    }
    if (z->multi) {
        w->ashow = carve(cv, TB * S);
        w->heads_o = carve(cv, TB * A);
    }
    w->ctx = carve(cv, TB * z->K);
    w->x0 = carve(cv, TB * z->Din);
    w->feat = carve(cv, TB * z->F);
    w->pre = carve(cv, TB * z->P);
    w->pre_drop = carve(cv, TB * z->P);
    w->pre_mask = carve(cv, TB * z->P);
}

/* The gradients of carve_steps's buffers (of one step where backward reuses them). */
static void carve_step_grads(RnnWork *w, Carver *cv, const Dims *z)
{
    size_t TB = z->T * z->B, B = z->B, A = z->A, HBS = z->Hh * z->B * z->S;
    w->dy = carve(cv, TB * z->E);
    w->dq = carve(cv, B * A);
    w->de = carve(cv, HBS);
    w->da = carve(cv, HBS);
    if (z->local_p) {
        w->dasoft = carve(cv, HBS);
        w->dpos_h = carve(cv, B * A);
        w->dpos_x = carve(cv, B);
        w->dpos_p = carve(cv, B);
    }
    if (z->multi)
        w->dheads_o = carve(cv, B * A);
    w->dctx = carve(cv, TB * z->K);
    w->dx0 = carve(cv, B * z->Din);
    w->dgi = carve(cv, B * z->G * z->D);
    w->dgh = carve(cv, B * z->G * z->D);
    w->dfeat = carve(cv, TB * z->F);
    w->dpre = carve(cv, TB * z->P);
}

static void work_carve(Work *base, Carver *cv)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &w->base.cfg;
    Dims z = dims_of(&w->base);
    size_t B = z.B, H = z.H, D = z.D, P = z.P;
    carve_encoder(w, cv, &z, c->layers);
    if (z.tr) {
        w->dlin = carve(cv, z.S * B * z.K);
        w->dxs = carve(cv, z.S * B * z.E);
        w->edgh = carve(cv, B * z.G * H);
        w->dbin = carve(cv, B * z.K);
        carve_keys(w, cv, &z, true);
    }
    w->zeros = carve(cv, B * (H > D ? (H > P ? H : P) : (D > P ? D : P)));
    w->base.rows_tmp_len = B * (D > P ? D : P);
    w->base.rows_tmp = carve(cv, w->base.rows_tmp_len);
    w->egh = carve(cv, B * z.G * H);
    carve_keys(w, cv, &z, false);
    carve_decoder(w, cv, &z, c->layers);
    carve_steps(w, cv, &z, c);
    carve_output(&w->base, cv);
    if (z.tr)
        carve_step_grads(w, cv, &z);
}

size_t rnn_work_bytes(const Model *m, const WorkShape *s)
{
    RnnWork w = {0};
    work_base_init(&w.base, m, s);
    size_t n = sizeof w + work_carved_bytes(&w.base, work_carve);
    if (m->cfg.local != LOCAL_NONE)
        n += 2 * (size_t)s->max_t * (size_t)s->max_b * sizeof(int);
    return n;
}

Work *rnn_work_new(const Model *m, const WorkShape *s)
{
    RnnWork *w = XCNEW(RnnWork, 1);
    work_base_init(&w->base, m, s);
    work_carve_all(&w->base, work_carve);
    if (m->cfg.local != LOCAL_NONE) {
        w->lo = XCNEW(int, (size_t)s->max_t * s->max_b);
        w->hi = XCNEW(int, (size_t)s->max_t * s->max_b);
    }
    return &w->base;
}

void rnn_work_free(Work *base)
{
    RnnWork *w = (RnnWork *)base;
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
