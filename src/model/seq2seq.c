/*
 * The GRU/LSTM encoder–decoder with every attention variant of docs/model.md.
 *
 * Layout: everything is time-major. Source positions (S,B,·), target steps (T,B,·).
 * The batch is sorted by source length, so at encoder time step t the valid rows are
 * the prefix [0, n_t). Rows beyond it keep a zero state and a zero output, which is
 * what PyTorch's packed sequences compute.
 */
#include "model/seq2seq.h"

#include "model/attend.h"
#include "model/transformer.h"
#include "model/ensemble.h"
#include "model/work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/ops.h"
#include "nn/rnn_cell.h"

/* ------------------------------------------------------------------ model */

static void model_bind(Model *m, bool with_grads);

void model_init(Model *m, const ModelConfig *cfg, bool with_grads)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->show_layer = m->show_head = -1;
    param_layout_init(&m->layout, cfg);
    m->params = xcalloc(m->layout.total, sizeof(real));
    if (with_grads)
        m->grads = xcalloc(m->layout.total, sizeof(real));
    model_bind(m, with_grads);
}

void model_init_view(Model *m, const ModelConfig *cfg, const real *params)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->show_layer = m->show_head = -1;
    param_layout_init(&m->layout, cfg);
    m->params = (real *)params; /* never written: decoding only reads the weights */
    m->params_borrowed = true;
    model_bind(m, false);
}

static void model_bind(Model *m, bool with_grads)
{
    const ModelConfig *cfg = &m->cfg;
    if (cfg->arch == ARCH_TRANSFORMER) {
        tf_weights_bind(&m->tw, m->params, cfg);
        if (with_grads)
            tf_weights_bind(&m->tg, m->grads, cfg);
    } else {
        weights_bind(&m->w, m->params, cfg);
        if (with_grads)
            weights_bind(&m->g, m->grads, cfg);
    }
}

void model_free(Model *m)
{
    model_set_precision(m, PREC_F32);
    param_layout_free(&m->layout);
    if (!m->params_borrowed)
        free(m->params);
    free(m->grads);
    memset(m, 0, sizeof *m);
}

void model_init_random(Model *m, Rng *rng)
{
    if (m->cfg.arch == ARCH_TRANSFORMER) {
        tf_init_random(m, rng);
        return;
    }
    const ModelConfig *c = &m->cfg;
    for (int i = 0; i < m->layout.n; i++) {
        const ParamInfo *p = &m->layout.info[i];
        real *x = m->params + p->offset;
        if (strstr(p->name, "_emb.")) {
            for (size_t k = 0; k < p->size; k++)
                x[k] = (real)rng_normal(rng);
            continue;
        }
        /* fan_in: the hidden size for RNN tensors (as nn.GRU/nn.LSTM), else the input width */
        int fan_in;
        if (strncmp(p->name, "encoder.", 8) == 0)
            fan_in = c->hidden;
        else if (strncmp(p->name, "decoder.", 8) == 0)
            fan_in = c->dec_hidden;
        else if (p->ndim == 2)
            fan_in = p->shape[1];
        else {
            /* a linear layer's bias: the fan-in of its weight (the tied projection's is P) */
            char wname[PARAM_NAME_MAX];
            size_t n = strlen(p->name) - strlen("bias");
            snprintf(wname, sizeof wname, "%.*sweight", (int)n, p->name);
            int wi = param_find(&m->layout, wname);
            fan_in = wi >= 0 ? m->layout.info[wi].shape[1] : c->deep_out;
        }
        double bound = 1.0 / sqrt((double)fan_in);
        for (size_t k = 0; k < p->size; k++)
            x[k] = (real)((2.0 * rng_uniform(rng) - 1.0) * bound);
    }
}

/* ------------------------------------------------------------------ work */

static void work_carve(Work *w, Carver *cv)
{
    const ModelConfig *c = &w->cfg;
    size_t B = (size_t)w->max_b, S = (size_t)w->max_s, T = (size_t)w->max_t;
    size_t E = (size_t)c->emb, H = (size_t)c->hidden, D = (size_t)c->dec_hidden,
           A = (size_t)c->attn, P = (size_t)c->deep_out,
           K = (size_t)model_enc_size(c), G = (size_t)model_gates(c);
    size_t C = c->cell == CELL_GRU ? NN_GRU_CACHE : NN_LSTM_CACHE;
    bool tr = w->training, lstm = c->cell == CELL_LSTM;
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
    w->rows_tmp_len = B * (D > P ? D : P);
    w->rows_tmp = carve(cv, w->rows_tmp_len);
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
    carve_output(w, cv);
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

size_t work_bytes(const ModelConfig *cfg, int max_b, int max_s, int max_t, WorkKind kind)
{
    Work w = {.cfg = *cfg, .max_b = max_b, .max_s = max_s, .max_t = max_t, .kind = kind,
              .training = kind == WORK_TRAIN};
    if (cfg->n_members)
        return sizeof w + ens_work_bytes(&w);
    if (cfg->arch == ARCH_TRANSFORMER)
        return sizeof w + tf_work_bytes(&w);
    Carver count = {0};
    work_carve(&w, &count);
    size_t n = sizeof w + count.used * sizeof(real);
    if (cfg->local != LOCAL_NONE)
        n += 2 * (size_t)max_t * (size_t)max_b * sizeof(int);
    return n;
}

Work *work_new(const ModelConfig *cfg, int max_b, int max_s, int max_t, WorkKind kind)
{
    Work *w = xcalloc(1, sizeof *w);
    w->cfg = *cfg;
    w->max_b = max_b;
    w->max_s = max_s;
    w->max_t = max_t;
    w->kind = kind;
    w->training = kind == WORK_TRAIN;
    if (cfg->n_members) {
        w->ens = ens_work_new(w);
        return w;
    }
    if (cfg->arch == ARCH_TRANSFORMER) {
        w->tf = tf_work_new(w);
        return w;
    }
    Carver count = {0};
    work_carve(w, &count);
    w->mem = xcalloc(count.used, sizeof(real));
    Carver cv = {.base = w->mem};
    work_carve(w, &cv);
    if (cfg->local != LOCAL_NONE) {
        w->lo = xcalloc((size_t)max_t * max_b, sizeof(int));
        w->hi = xcalloc((size_t)max_t * max_b, sizeof(int));
    }
    return w;
}

void work_free(Work *w)
{
    if (!w)
        return;
    tf_work_free(w->tf);
    ens_work_free(w->ens);
    free(w->mem);
    free(w->lo);
    free(w->hi);
    free(w);
}

const real *work_logits(const Work *w)
{
    CHECK(w->kind == WORK_SCORE && w->T * w->B <= w->out_rows);
    return w->logits;
}

/* ------------------------------------------------------------------ encoder */

/* Rows valid at source position t: the batch is sorted by length. */
static int active_rows(const Batch *b, int t)
{
    int n = b->B;
    while (n > 0 && b->src_len[n - 1] <= t)
        n--;
    return n;
}

static void dropout_fwd(real *out, real *mask, const real *in, size_t n, real p, Rng *rng)
{
    nn_dropout_forward(out, mask, in, n, rng ? p : 0, rng);
}

/* One direction of one encoder layer over the whole batch. */
static void enc_dir_forward(Work *w, const RnnWeights *rw, EncDir *ed, const real *x, int in_size,
                            bool reverse, const Batch *b)
{
    const ModelConfig *c = &w->cfg;
    int B = b->B, S = b->S, H = c->hidden, G = model_gates(c);
    bool lstm = c->cell == CELL_LSTM;
    int C = lstm ? NN_LSTM_CACHE : NN_GRU_CACHE;
    size_t step = (size_t)B * H;

    /* Input projections of all positions in one product. */
    nn_linear_forward(ed->gi, x, rw->w_ih, rw->b_ih, S * B, in_size, G * H);
    memset(ed->st, 0, (size_t)S * step * sizeof(real));
    if (lstm)
        memset(ed->cst, 0, (size_t)S * step * sizeof(real));
    for (int k = 0; k < S; k++) {
        int t = reverse ? S - 1 - k : k;
        int n = active_rows(b, t);
        int tp = reverse ? t + 1 : t - 1; /* previous position in this direction */
        bool first = tp < 0 || tp >= S;
        const real *h = first ? w->zeros : ed->st + (size_t)tp * step;
        real *gi = ed->gi + (size_t)t * B * G * H;
        nn_linear_forward(w->egh, h, rw->w_hh, rw->b_hh, n, H, G * H);
        real *cache = ed->cache + (size_t)t * B * C * H;
        if (lstm) {
            const real *cprev = first ? w->zeros : ed->cst + (size_t)tp * step;
            nn_lstm_cell_forward(ed->st + (size_t)t * step, ed->cst + (size_t)t * step, cache, gi,
                                 w->egh, cprev, n, H);
        } else {
            nn_gru_cell_forward(ed->st + (size_t)t * step, cache, gi, w->egh, h, n, H);
        }
    }
}

static void enc_dir_backward(Work *w, const RnnWeights *rw, RnnWeights *gw, EncDir *ed,
                             const real *x, real *dx, int in_size, bool reverse, const Batch *b)
{
    const ModelConfig *c = &w->cfg;
    int B = b->B, S = b->S, H = c->hidden, G = model_gates(c);
    bool lstm = c->cell == CELL_LSTM;
    int C = lstm ? NN_LSTM_CACHE : NN_GRU_CACHE;
    size_t step = (size_t)B * H;

    memset(ed->dgi, 0, (size_t)S * B * G * H * sizeof(real));
    for (int k = S - 1; k >= 0; k--) {
        int t = reverse ? S - 1 - k : k;
        int n = active_rows(b, t);
        int tp = reverse ? t + 1 : t - 1;
        bool first = tp < 0 || tp >= S;
        const real *h = first ? w->zeros : ed->st + (size_t)tp * step;
        real *dh = first ? NULL : ed->dst + (size_t)tp * step;
        real *dgi = ed->dgi + (size_t)t * B * G * H;
        const real *cache = ed->cache + (size_t)t * B * C * H;
        memset(w->edgh, 0, (size_t)n * G * H * sizeof(real));
        if (lstm) {
            const real *cprev = first ? w->zeros : ed->cst + (size_t)tp * step;
            real *dcprev = first ? NULL : ed->dcst + (size_t)tp * step;
            nn_lstm_cell_backward(dgi, dcprev, ed->dst + (size_t)t * step, ed->dcst + (size_t)t * step,
                                  cache, cprev, n, H);
            memcpy(w->edgh, dgi, (size_t)n * G * H * sizeof(real));
        } else {
            nn_gru_cell_backward(dgi, w->edgh, dh, ed->dst + (size_t)t * step, cache, h, n, H);
        }
        nn_linear_backward(dh, gw->w_hh, gw->b_hh, w->edgh, h, rw->w_hh, n, H, G * H);
    }
    nn_linear_backward(dx, gw->w_ih, gw->b_ih, ed->dgi, x, rw->w_ih, S * B, in_size, G * H);
}

/* The decoder's initial states s0 (and c0) of every layer (docs/model.md, step 3 and
   "bridges"); the linear maps read dl->bin / dl->cbin. */
static void bridge_forward(Model *m, Work *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, H = c->hidden, K = model_enc_size(c), D = c->dec_hidden;
    bool lstm = c->cell == CELL_LSTM;
    if (c->bridge == BRIDGE_ATTN_POOL)
        attend_pool_forward(m, w, b);
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        for (int k = 0; k < 2 && (k == 0 || lstm); k++) {
            real *bin = k ? dl->cbin : dl->bin, *s0 = k ? dl->c0 : dl->s0;
            if (c->bridge == BRIDGE_ZERO) {
                memset(s0, 0, (size_t)B * D * sizeof(real));
                continue;
            }
            if (c->bridge == BRIDGE_ATTN_POOL) {
                memcpy(bin, w->pool_m, (size_t)B * K * sizeof(real));
            } else {
                /* [final forward state; backward state at position 0] of layer l */
                for (int r = 0; r < B; r++) {
                    const EncDir *f = &w->enc[l][0];
                    const real *src = k ? f->cst : f->st;
                    memcpy(bin + (size_t)r * K, src + ((size_t)(b->src_len[r] - 1) * B + r) * H,
                           (size_t)H * sizeof(real));
                    if (c->bidir) {
                        const EncDir *bw = &w->enc[l][1];
                        const real *bsrc = k ? bw->cst : bw->st;
                        memcpy(bin + (size_t)r * K + H, bsrc + (size_t)r * H, (size_t)H * sizeof(real));
                    }
                }
            }
            nn_linear_forward(s0, bin, k ? m->w.bridge_cw[l] : m->w.bridge_w[l],
                              k ? m->w.bridge_cb[l] : m->w.bridge_b[l], B, K, D);
            nn_tanh_forward(s0, s0, (size_t)B * D);
        }
    }
}

/* Backward of one layer's linear map(s): the gradient of its input into w->dbin (k = 0:
   s0, 1: c0), and, for the linear bridge, into the encoder states it was made of. */
static void bridge_layer_backward(Model *m, Work *w, const Batch *b, int l, int k)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, H = c->hidden, K = model_enc_size(c), D = c->dec_hidden;
    DecLayer *dl = &w->dec[l];
    real *s0 = k ? dl->c0 : dl->s0, *ds0 = k ? dl->dc0 : dl->ds0;
    /* ds0 becomes the gradient before tanh, in place */
    nn_tanh_backward_inplace(ds0, s0, (size_t)B * D);
    real *dbin = w->dbin;
    memset(dbin, 0, (size_t)B * K * sizeof(real));
    nn_linear_backward(dbin, k ? m->g.bridge_cw[l] : m->g.bridge_w[l], k ? m->g.bridge_cb[l] : m->g.bridge_b[l],
                       ds0, k ? dl->cbin : dl->bin, k ? m->w.bridge_cw[l] : m->w.bridge_w[l], B, K, D);
    if (c->bridge == BRIDGE_ATTN_POOL) {
        for (size_t i = 0; i < (size_t)B * K; i++)
            w->dpool_m[i] += dbin[i];
        return;
    }
    for (int r = 0; r < B; r++) {
        real *df = (k ? w->enc[l][0].dcst : w->enc[l][0].dst) + ((size_t)(b->src_len[r] - 1) * B + r) * H;
        for (int i = 0; i < H; i++)
            df[i] += dbin[(size_t)r * K + i];
        if (c->bidir) {
            real *dbw = (k ? w->enc[l][1].dcst : w->enc[l][1].dst) + (size_t)r * H;
            for (int i = 0; i < H; i++)
                dbw[i] += dbin[(size_t)r * K + H + i];
        }
    }
}

static void encoder_forward(Model *m, Work *w, const Batch *b, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, E = c->emb, H = c->hidden, K = model_enc_size(c);
    size_t SB = (size_t)S * B;

    nn_embedding_forward(w->xs, b->src, m->w.src_emb, S * B, c->src_vocab, E);
    dropout_fwd(w->xs, w->xs_mask, w->xs, SB * E, c->dropout, rng);
    for (int l = 0; l < c->layers; l++) {
        const real *x = w->xs;
        int in_size = E;
        if (l > 0) {
            dropout_fwd(w->lin[l], w->lin_mask[l], w->out[l - 1], SB * K, c->dropout, rng);
            x = w->lin[l];
            in_size = K;
        }
        for (int d = 0; d < (c->bidir ? 2 : 1); d++)
            enc_dir_forward(w, &m->w.enc[l][d], &w->enc[l][d], x, in_size, d == 1, b);
        if (c->bidir) {
            const real *parts[2] = {w->enc[l][0].st, w->enc[l][1].st};
            int widths[2] = {H, H};
            nn_concat_forward(w->out[l], parts, widths, 2, S * B);
        } else {
            memcpy(w->out[l], w->enc[l][0].st, SB * H * sizeof(real));
        }
    }
    attend_keys_forward(m, w, b);
    bridge_forward(m, w, b);
}

static void encoder_backward(Model *m, Work *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, E = c->emb, H = c->hidden, K = model_enc_size(c);
    size_t SB = (size_t)S * B;
    int top = c->layers - 1;
    bool lstm = c->cell == CELL_LSTM;

    attend_keys_backward(m, w, b);
    if (c->bridge == BRIDGE_ATTN_POOL) {
        /* the pooled vector is made of the top layer's outputs: its gradient goes into
           w->dout[top] before the layers run backward */
        memset(w->dpool_m, 0, (size_t)B * K * sizeof(real));
        for (int l = 0; l < c->layers; l++)
            for (int k = 0; k < 2 && (k == 0 || lstm); k++)
                bridge_layer_backward(m, w, b, l, k);
        attend_pool_backward(m, w, b);
    }

    for (int l = top; l >= 0; l--) {
        int dirs = c->bidir ? 2 : 1;
        for (int d = 0; d < dirs; d++) {
            memset(w->enc[l][d].dst, 0, SB * H * sizeof(real));
            if (lstm)
                memset(w->enc[l][d].dcst, 0, SB * H * sizeof(real));
        }
        /* outputs → per-direction states; invalid positions carry no gradient */
        if (c->bidir) {
            real *parts[2] = {w->enc[l][0].dst, w->enc[l][1].dst};
            int widths[2] = {H, H};
            nn_concat_backward(parts, w->dout[l], widths, 2, S * B);
        } else {
            memcpy(w->enc[l][0].dst, w->dout[l], SB * H * sizeof(real));
        }
        for (int t = 0; t < S; t++) {
            int n = active_rows(b, t);
            for (int d = 0; d < dirs; d++) {
                memset(w->enc[l][d].dst + ((size_t)t * B + n) * H, 0, (size_t)(B - n) * H * sizeof(real));
            }
        }
        if (c->bridge == BRIDGE_LINEAR)
            for (int k = 0; k < 2 && (k == 0 || lstm); k++)
                bridge_layer_backward(m, w, b, l, k);
        const real *x = l > 0 ? w->lin[l] : w->xs;
        int in_size = l > 0 ? K : E;
        real *dx = l > 0 ? w->dlin : w->dxs;
        memset(dx, 0, SB * in_size * sizeof(real));
        for (int d = 0; d < dirs; d++)
            enc_dir_backward(w, &m->w.enc[l][d], &m->g.enc[l][d], &w->enc[l][d], x, dx, in_size, d == 1, b);
        if (l > 0) {
            memset(w->dout[l - 1], 0, SB * K * sizeof(real));
            nn_dropout_backward(w->dout[l - 1], w->dlin, w->lin_mask[l], SB * K);
        }
    }
    /* embedding dropout, then the lookup */
    nn_dropout_backward_inplace(w->dxs, w->xs_mask, SB * E);
    nn_embedding_backward(m->g.src_emb, w->dxs, b->src, S * B, c->src_vocab, E);
}

/* ------------------------------------------------------------------ decoder */

/* The decoder RNN layers at step t, layer 0 reading x0 (B, model_dec_in_size). */
static void dec_rnn_forward(Model *m, Work *w, const Batch *b, int t, const real *x0, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, D = c->dec_hidden, G = model_gates(c);
    bool lstm = c->cell == CELL_LSTM;
    int C = lstm ? NN_LSTM_CACHE : NN_GRU_CACHE;
    size_t BD = (size_t)B * D;
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        const real *x = x0;
        int in_size = model_dec_in_size(c);
        if (l > 0) {
            real *in = dl->in + (size_t)t * BD;
            dropout_fwd(in, dl->mask + (size_t)t * BD, w->dec[l - 1].s + (size_t)t * BD, BD, c->dropout, rng);
            x = in;
            in_size = D;
        }
        const real *h = t ? dl->s + (size_t)(t - 1) * BD : dl->s0;
        model_step_linear(m, w, dl->gi, x, m->w.dec[l].w_ih, m->w.dec[l].b_ih, B, in_size, G * D);
        model_step_linear(m, w, dl->gh, h, m->w.dec[l].w_hh, m->w.dec[l].b_hh, B, D, G * D);
        real *cache = dl->cache + (size_t)t * B * C * D;
        if (lstm) {
            const real *cp = t ? dl->c + (size_t)(t - 1) * BD : dl->c0;
            nn_lstm_cell_forward(dl->s + (size_t)t * BD, dl->c + (size_t)t * BD, cache, dl->gi, dl->gh, cp, B, D);
        } else {
            nn_gru_cell_forward(dl->s + (size_t)t * BD, cache, dl->gi, dl->gh, h, B, D);
        }
    }
}

/* One decoder step t from the target embeddings y[t] (already looked up). Bahdanau's
   path: attention with s_{t-1}, then the RNN on [y; c_t]. Luong's path: the RNN on y
   (or [y; h~_{t-1}]), attention with s_t, then h~_t = tanh(out.pre · [c_t; s_t]) into
   w->pre. */
static void dec_step(Model *m, Work *w, const Batch *b, int t, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, E = c->emb, K = model_enc_size(c), D = c->dec_hidden, P = c->deep_out,
        Din = model_dec_in_size(c), F = model_pre_in_size(c), top = c->layers - 1;
    size_t BD = (size_t)B * D;
    real *y = w->y + (size_t)t * B * E;
    real *x0 = w->x0 + (size_t)t * B * Din;
    real *ctx = w->ctx + (size_t)t * B * K;

    if (!model_luong(c)) {
        attend_step_forward(m, w, b, t, t ? w->dec[top].s + (size_t)(t - 1) * BD : w->dec[top].s0);
        const real *parts[2] = {y, ctx};
        int widths[2] = {E, K};
        nn_concat_forward(x0, parts, widths, 2, B);
        dec_rnn_forward(m, w, b, t, x0, rng);
        return;
    }
    if (c->input_feed) {
        const real *parts[2] = {y, t ? w->pre + (size_t)(t - 1) * B * P : w->zeros};
        int widths[2] = {E, P};
        nn_concat_forward(x0, parts, widths, 2, B);
    } else {
        memcpy(x0, y, (size_t)B * E * sizeof(real));
    }
    dec_rnn_forward(m, w, b, t, x0, rng);
    const real *st = w->dec[top].s + (size_t)t * BD;
    attend_step_forward(m, w, b, t, st);
    real *feat = w->feat + (size_t)t * B * F, *pre = w->pre + (size_t)t * B * P;
    const real *parts[2] = {ctx, st};
    int widths[2] = {K, D};
    nn_concat_forward(feat, parts, widths, 2, B);
    model_step_linear(m, w, pre, feat, m->w.pre_w, m->w.pre_b, B, F, P);
    nn_tanh_forward(pre, pre, (size_t)B * P);
}

/* The output layer's input for steps [t0, t0+nt), after its dropout: on Bahdanau's
   path the deep output from [s_t; c_t; y] (Luong's path computed h~_t in dec_step). */
static void output_forward(Model *m, Work *w, const Batch *b, int t0, int nt, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, E = c->emb, K = model_enc_size(c), D = c->dec_hidden, P = c->deep_out,
        top = c->layers - 1, F = model_pre_in_size(c);
    int N = nt * B;
    size_t off = (size_t)t0 * B;
    real *pre = w->pre + off * P;
    if (!model_luong(c)) {
        const real *parts[3] = {w->dec[top].s + off * D, w->ctx + off * K, w->y + off * E};
        int widths[3] = {D, K, E};
        nn_concat_forward(w->feat + off * F, parts, widths, 3, N);
        model_step_linear(m, w, pre, w->feat + off * F, m->w.pre_w, m->w.pre_b, N, F, P);
        nn_tanh_forward(pre, pre, (size_t)N * P);
    }
    dropout_fwd(w->pre_drop + off * P, w->pre_mask + off * P, pre, (size_t)N * P, c->dropout, rng);
}

/* The loss; with grad, also the output layer's gradients (w->dpre gets that of its
   input, m->grads those of the projection), which backward() continues. */
static double forward(Model *m, Work *w, const Batch *b, Rng *rng, bool grad)
{
    if (w->tf)
        return tf_forward(m, w, b, rng, grad);
    const ModelConfig *c = &m->cfg;
    CHECK(w->kind != WORK_DECODE && (!grad || w->training));
    CHECK(b->B <= w->max_b && b->S <= w->max_s && b->T <= w->max_t);
    w->B = b->B;
    w->S = b->S;
    w->T = b->T;
    int B = b->B, T = b->T, E = c->emb;
    encoder_forward(m, w, b, rng);
    nn_embedding_forward(w->y, b->tgt_in, m->w.tgt_emb, T * B, c->tgt_vocab, E);
    dropout_fwd(w->y, w->y_mask, w->y, (size_t)T * B * E, c->dropout, rng);
    for (int t = 0; t < T; t++)
        dec_step(m, w, b, t, rng);
    output_forward(m, w, b, 0, T, rng);
    OutputLayer o = work_output(w, m->w.proj_w, m->w.proj_b, m->g.proj_w, m->g.proj_b, c->deep_out, grad);
    real scale = grad ? (real)(1.0 / (double)b->ntok) : 0;
    OutputLoss r = output_loss(&o, w->pre_drop, b->tgt_out, T * B, scale, grad ? w->dpre : NULL);
    w->nll = r.nll;
    return r.loss;
}

double model_forward(Model *m, Work *w, const Batch *b, Rng *rng) { return forward(m, w, b, rng, false); }

double work_nll(const Work *w) { return w->nll; }

/* Backward of the decoder RNN layers at step t (top state gradients complete) into
   w->dx0, the gradient of the layer-0 input (zeroed here). */
static void dec_rnn_backward(Model *m, Work *w, const Batch *b, int t)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, D = c->dec_hidden, G = model_gates(c), Din = model_dec_in_size(c), top = c->layers - 1;
    bool lstm = c->cell == CELL_LSTM;
    int C = lstm ? NN_LSTM_CACHE : NN_GRU_CACHE;
    size_t BD = (size_t)B * D;
    memset(w->dx0, 0, (size_t)B * Din * sizeof(real));
    for (int l = top; l >= 0; l--) {
        DecLayer *dl = &w->dec[l];
        const real *h = t ? dl->s + (size_t)(t - 1) * BD : dl->s0;
        real *dh = t ? dl->ds + (size_t)(t - 1) * BD : dl->ds0;
        const real *cache = dl->cache + (size_t)t * B * C * D;
        memset(w->dgi, 0, (size_t)B * G * D * sizeof(real));
        if (lstm) {
            const real *cp = t ? dl->c + (size_t)(t - 1) * BD : dl->c0;
            real *dcp = t ? dl->dc + (size_t)(t - 1) * BD : dl->dc0;
            nn_lstm_cell_backward(w->dgi, dcp, dl->ds + (size_t)t * BD, dl->dc + (size_t)t * BD, cache, cp, B, D);
            nn_linear_backward(dh, m->g.dec[l].w_hh, m->g.dec[l].b_hh, w->dgi, h, m->w.dec[l].w_hh, B, D, G * D);
        } else {
            memset(w->dgh, 0, (size_t)B * G * D * sizeof(real));
            nn_gru_cell_backward(w->dgi, w->dgh, dh, dl->ds + (size_t)t * BD, cache, h, B, D);
            nn_linear_backward(dh, m->g.dec[l].w_hh, m->g.dec[l].b_hh, w->dgh, h, m->w.dec[l].w_hh, B, D, G * D);
        }
        if (l > 0) {
            memset(dl->din, 0, BD * sizeof(real));
            nn_linear_backward(dl->din, m->g.dec[l].w_ih, m->g.dec[l].b_ih, w->dgi, dl->in + (size_t)t * BD,
                               m->w.dec[l].w_ih, B, D, G * D);
            nn_dropout_backward(w->dec[l - 1].ds + (size_t)t * BD, dl->din, dl->mask + (size_t)t * BD, BD);
        } else {
            nn_linear_backward(w->dx0, m->g.dec[0].w_ih, m->g.dec[0].b_ih, w->dgi, w->x0 + (size_t)t * B * Din,
                               m->w.dec[0].w_ih, B, Din, G * D);
        }
    }
}

/* Backward of output_forward over steps [t0, t0+nt): w->dpre holds the gradient of its
   output (forward with grad) and gets that of the deep output / attentional state
   (before its dropout); on Bahdanau's path the deep output's backward adds into the
   top decoder states' ds, dctx and dy. */
static void output_backward(Model *m, Work *w, const Batch *b, int t0, int nt)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, E = c->emb, K = model_enc_size(c), D = c->dec_hidden, P = c->deep_out,
        top = c->layers - 1, F = model_pre_in_size(c);
    int N = nt * B;
    size_t off = (size_t)t0 * B;
    real *dpre = w->dpre + off * P;
    nn_dropout_backward_inplace(dpre, w->pre_mask + off * P, (size_t)N * P);
    if (!model_luong(c)) {
        real *dfeat = w->dfeat + off * F;
        nn_tanh_backward_inplace(dpre, w->pre + off * P, (size_t)N * P);
        memset(dfeat, 0, (size_t)N * F * sizeof(real));
        nn_linear_backward(dfeat, m->g.pre_w, m->g.pre_b, dpre, w->feat + off * F, m->w.pre_w, N, F, P);
        real *parts[3] = {w->dec[top].ds + off * D, w->dctx + off * K, w->dy + off * E};
        int widths[3] = {D, K, E};
        nn_concat_backward(parts, dfeat, widths, 3, N);
    }
}

/* Backward of dec_step at step t, after output_backward and the steps after t. */
static void dec_step_backward(Model *m, Work *w, const Batch *b, int t)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, E = c->emb, K = model_enc_size(c), D = c->dec_hidden, P = c->deep_out,
        F = model_pre_in_size(c), top = c->layers - 1;
    size_t BD = (size_t)B * D;
    real *ds_t = w->dec[top].ds + (size_t)t * BD, *dctx = w->dctx + (size_t)t * B * K;
    real *dy = w->dy + (size_t)t * B * E;

    if (!model_luong(c)) {
        dec_rnn_backward(m, w, b, t);
        real *parts[2] = {dy, dctx};
        int widths[2] = {E, K};
        nn_concat_backward(parts, w->dx0, widths, 2, B);
        attend_step_backward(m, w, b, t, t ? w->dec[top].s + (size_t)(t - 1) * BD : w->dec[top].s0,
                             t ? w->dec[top].ds + (size_t)(t - 1) * BD : w->dec[top].ds0);
        return;
    }
    /* h~_t = tanh(out.pre · [c_t; s_t]); dpre_t already holds what step t+1's input
       feeding sent back */
    real *dpre = w->dpre + (size_t)t * B * P, *dfeat = w->dfeat + (size_t)t * B * F;
    nn_tanh_backward_inplace(dpre, w->pre + (size_t)t * B * P, (size_t)B * P);
    memset(dfeat, 0, (size_t)B * F * sizeof(real));
    nn_linear_backward(dfeat, m->g.pre_w, m->g.pre_b, dpre, w->feat + (size_t)t * B * F, m->w.pre_w, B, F, P);
    real *parts[2] = {dctx, ds_t};
    int widths[2] = {K, D};
    nn_concat_backward(parts, dfeat, widths, 2, B);
    attend_step_backward(m, w, b, t, w->dec[top].s + (size_t)t * BD, ds_t);
    dec_rnn_backward(m, w, b, t);
    real *dfeed = c->input_feed && t ? w->dpre + (size_t)(t - 1) * B * P : NULL;
    real *xparts[2] = {dy, dfeed};
    int xwidths[2] = {E, P};
    nn_concat_backward(xparts, w->dx0, xwidths, c->input_feed ? 2 : 1, B);
}

/* The backward pass after forward(..., grad): from w->dpre down to the embeddings. */
static void backward(Model *m, Work *w, const Batch *b)
{
    if (w->tf) {
        tf_backward(m, w, b);
        return;
    }
    const ModelConfig *c = &m->cfg;
    CHECK(w->training && b->B == w->B && b->S == w->S && b->T == w->T);
    int B = b->B, S = b->S, T = b->T, E = c->emb, K = model_enc_size(c), D = c->dec_hidden,
        V = c->tgt_vocab, top = c->layers - 1, N = T * B;
    bool lstm = c->cell == CELL_LSTM;
    size_t BD = (size_t)B * D;

    for (int l = 0; l < c->layers; l++) {
        memset(w->dec[l].ds, 0, (size_t)T * BD * sizeof(real));
        memset(w->dec[l].ds0, 0, BD * sizeof(real));
        if (lstm) {
            memset(w->dec[l].dc, 0, (size_t)T * BD * sizeof(real));
            memset(w->dec[l].dc0, 0, BD * sizeof(real));
        }
    }
    memset(w->dctx, 0, (size_t)N * K * sizeof(real));
    memset(w->dy, 0, (size_t)N * E * sizeof(real));
    memset(w->dout[top], 0, (size_t)S * B * K * sizeof(real));
    attend_keys_zero_grad(m, w, b);

    /* the forward in reverse: output layer over all steps (its projection done with the
       loss), decoder steps from the last, target embeddings (dropout, lookup), encoder */
    output_backward(m, w, b, 0, T);
    for (int t = T - 1; t >= 0; t--)
        dec_step_backward(m, w, b, t);
    nn_dropout_backward_inplace(w->dy, w->y_mask, (size_t)N * E);
    nn_embedding_backward(m->g.tgt_emb, w->dy, b->tgt_in, N, V, E);
    encoder_backward(m, w, b);
}

double model_forward_backward(Model *m, Work *w, const Batch *b, Rng *rng)
{
    double loss = forward(m, w, b, rng, true);
    backward(m, w, b);
    return loss;
}

/* ------------------------------------------------------------------ translation */

void model_encode(Model *m, Work *w, const Batch *b)
{
    if (w->ens) {
        ens_encode(m, w, b);
        return;
    }
    if (w->tf) {
        tf_encode(m, w, b);
        return;
    }
    CHECK(b->B <= w->max_b && b->S <= w->max_s);
    w->B = b->B;
    w->S = b->S;
    w->T = 0;
    encoder_forward(m, w, b, NULL);
}

void model_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t)
{
    if (w->ens) {
        ens_decode_step(m, w, b, prev, t);
        return;
    }
    if (w->tf) {
        tf_decode_step(m, w, b, prev, t);
        return;
    }
    const ModelConfig *c = &m->cfg;
    CHECK(t < w->max_t);
    int B = b->B, E = c->emb;
    nn_embedding_forward(w->y + (size_t)t * B * E, prev, m->w.tgt_emb, B, c->tgt_vocab, E);
    dec_step(m, w, b, t, NULL);
    output_forward(m, w, b, t, 1, NULL);
    model_step_linear(m, w, w->logits, w->pre_drop + (size_t)t * B * c->deep_out, m->w.proj_w, m->w.proj_b, B,
                      c->deep_out, c->tgt_vocab);
    w->T = t + 1;
}

void model_step_linear(const Model *m, const Work *w, real *y, const real *x, const real *W, const real *b, int N,
                       int In, int Out)
{
    if (w->kind == WORK_DECODE) {
#ifndef S2S_REAL_DOUBLE
        const QMatrix *q = nn_qset_find(&m->quant, W, Out, In);
        if (q) {
            nn_qmat_forward(y, x, q, b, N);
            return;
        }
#endif
        if (N > 1 && N <= NN_FEW_ROWS) {
            nn_linear_forward_few(y, x, W, b, N, In, Out);
            return;
        }
    }
    nn_linear_forward(y, x, W, b, N, In, Out);
}

#ifndef S2S_REAL_DOUBLE
/* The matrices a decoding step multiplies by, with the shapes model_step_linear gets. */
static void quantize_step_matrices(Model *m, Precision p)
{
    const ModelConfig *c = &m->cfg;
    QSet *s = &m->quant;
    if (c->arch == ARCH_TRANSFORMER) {
        int d = c->model_dim, F = c->ff;
        for (int l = 0; l < c->layers; l++) {
            const TfLayerWeights *lw = &m->tw.dec[l];
            nn_qset_add(s, lw->self.in_w, 3 * d, d, p);
            nn_qset_add(s, lw->self.out_w, d, d, p);
            nn_qset_add(s, lw->cross.in_w, d, d, p); /* the queries' rows: keys and values come from the encoder */
            nn_qset_add(s, lw->cross.out_w, d, d, p);
            nn_qset_add(s, lw->ff1_w, F, d, p);
            nn_qset_add(s, lw->ff2_w, d, F, p);
        }
        nn_qset_add(s, m->tw.proj_w, c->tgt_vocab, d, p);
        return;
    }
    int D = c->dec_hidden, A = c->attn, G = model_gates(c) * D;
    for (int l = 0; l < c->layers; l++) {
        nn_qset_add(s, m->w.dec[l].w_ih, G, l > 0 ? D : model_dec_in_size(c), p);
        nn_qset_add(s, m->w.dec[l].w_hh, G, D, p);
    }
    if (model_attn_projects_query(c))
        nn_qset_add(s, m->w.att_q, A, D, p);
    if (c->local == LOCAL_P)
        nn_qset_add(s, m->w.att_pos, A, D, p);
    if (c->attention == ATT_MULTIHEAD)
        nn_qset_add(s, m->w.att_out, model_enc_size(c), A, p);
    nn_qset_add(s, m->w.pre_w, c->deep_out, model_pre_in_size(c), p);
    nn_qset_add(s, m->w.proj_w, c->tgt_vocab, c->deep_out, p);
}
#endif

void model_set_precision(Model *m, Precision p)
{
    for (int i = 0; i < m->cfg.n_members; i++)
        model_set_precision(&m->members[i], p);
#ifndef S2S_REAL_DOUBLE
    nn_qset_free(&m->quant);
#endif
    if (p == PREC_F32 || m->cfg.n_members)
        return;
#ifdef S2S_REAL_DOUBLE
    BUG("model_set_precision: float builds only");
#else
    quantize_step_matrices(m, p);
#endif
}

const real *work_step_logits(const Work *w) { return w->ens ? ens_step_logits(w) : w->logits; }

const real *work_step_attention(const Work *w)
{
    if (w->ens)
        return ens_step_attention(w);
    if (w->tf)
        return tf_step_attention(w);
    return attend_weights(w, w->T - 1);
}

/* Row r of the (S,n,width) array dst becomes row from[r] of the (S,B,width) array src
   (which dst may overlap), for r < n. The copy of src goes to w->rows_tmp when it fits
   (the decoder states that model_select_rows moves at every beam step), else to a
   temporary allocation (the encoder outputs, moved when the batch changes). */
static void gather_rows(Work *w, real *dst, const real *src, int S, int B, int n, size_t width,
                        const int *from)
{
    size_t old = (size_t)S * B * width;
    real *tmp = old <= w->rows_tmp_len ? w->rows_tmp : xmalloc_array((size_t)(old), sizeof *tmp);
    memcpy(tmp, src, old * sizeof *tmp);
    for (int s = 0; s < S; s++)
        for (int r = 0; r < n; r++)
            memcpy(dst + ((size_t)s * n + r) * width, tmp + ((size_t)s * B + from[r]) * width,
                   width * sizeof *dst);
    if (tmp != w->rows_tmp)
        free(tmp);
}

static void gather_ints(int *x, int S, int B, int n, const int *from)
{
    size_t old = (size_t)S * B;
    int *tmp = xmalloc_array((size_t)(old), sizeof *tmp);
    memcpy(tmp, x, old * sizeof *tmp);
    for (int s = 0; s < S; s++)
        for (int r = 0; r < n; r++)
            x[(size_t)s * n + r] = tmp[(size_t)s * B + from[r]];
    free(tmp);
}

/* The decoder state that step t reads, for a batch of B rows: s (or c) of step t-1,
   s0 (c0) at t = 0. */
static real *state_at(real *steps, real *first, int t, int B, int D)
{
    return t ? steps + (size_t)(t - 1) * B * D : first;
}

void model_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n)
{
    if (w->ens) {
        ens_expand_rows(m, w, b, from, n);
        return;
    }
    if (w->tf) {
        tf_expand_rows(m, w, b, from, n);
        return;
    }
    const ModelConfig *c = &m->cfg;
    CHECK(b->B == w->B && n >= 1 && n <= w->max_b);
    int B = b->B, S = b->S, D = c->dec_hidden, top = c->layers - 1, t = w->T;
    for (int r = 0; r < n; r++)
        CHECK(from[r] >= 0 && from[r] < B);
    gather_rows(w, w->out[top], w->out[top], S, B, n, (size_t)model_enc_size(c), from);
    if (model_key_size(c))
        gather_rows(w, w->keys, w->keys, S, B, n, (size_t)model_key_size(c), from);
    if (c->attention == ATT_MULTIHEAD)
        gather_rows(w, w->vals, w->vals, S, B, n, (size_t)c->attn, from);
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        gather_rows(w, state_at(dl->s, dl->s0, t, n, D), state_at(dl->s, dl->s0, t, B, D), 1, B, n,
                    (size_t)D, from);
        if (c->cell == CELL_LSTM)
            gather_rows(w, state_at(dl->c, dl->c0, t, n, D), state_at(dl->c, dl->c0, t, B, D), 1, B,
                        n, (size_t)D, from);
    }
    if (c->input_feed && t > 0)
        gather_rows(w, state_at(w->pre, NULL, t, n, c->deep_out), state_at(w->pre, NULL, t, B, c->deep_out), 1, B,
                    n, (size_t)c->deep_out, from);
    gather_ints(b->src, S, B, n, from);
    gather_ints(b->src_len, 1, B, n, from);
    b->B = w->B = n;
}

void model_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t)
{
    if (w->ens) {
        ens_select_rows(m, w, b, from, t);
        return;
    }
    if (w->tf) {
        tf_select_rows(m, w, b, from, t);
        return;
    }
    const ModelConfig *c = &m->cfg;
    CHECK(b->B == w->B && t >= 0 && t == w->T);
    int B = b->B, D = c->dec_hidden;
    for (int r = 0; r < B; r++)
        CHECK(from[r] >= 0 && from[r] < B);
    for (int l = 0; l < c->layers; l++) {
        DecLayer *dl = &w->dec[l];
        real *x = state_at(dl->s, dl->s0, t, B, D);
        gather_rows(w, x, x, 1, B, B, (size_t)D, from);
        if (c->cell == CELL_LSTM) {
            x = state_at(dl->c, dl->c0, t, B, D);
            gather_rows(w, x, x, 1, B, B, (size_t)D, from);
        }
    }
    if (c->input_feed && t > 0) {
        real *x = state_at(w->pre, NULL, t, B, c->deep_out);
        gather_rows(w, x, x, 1, B, B, (size_t)c->deep_out, from);
    }
}
