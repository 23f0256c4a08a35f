/*
 * The GRU/LSTM encoder–decoder with every attention variant of docs/model.md: the
 * encoder, the bridge, the decoder steps and the output layer, each forward beside its
 * backward, and the recurrent model's operations (rnn_ops).
 *
 * The batch is sorted by source length, so at encoder time step t the valid rows are
 * the prefix [0, n_t). Rows beyond it keep a zero state and a zero output, which is
 * what PyTorch's packed sequences compute.
 */
#include "model/rnn.h"
#include "model/rnn_params.h"
#include "model/rnn_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/attend.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/ops.h"
#include "nn/rnn_cell.h"

/* ------------------------------------------------------------------ encoder */

/* Rows valid at source position t: the batch is sorted by length. */
static int active_rows(const Batch *b, int t)
{
    int n = b->B;
    while (n > 0 && b->src_len[n - 1] <= t)
        n--;
    return n;
}

/* One direction of one encoder layer: its weights, buffers and sizes. */
typedef struct EncPass {
    const RnnWeights *rw;
    RnnWeights *gw;
    EncDir *ed;
    bool reverse, lstm;
    int B, S, H, GH, C; /* GH: G·H gate values per row, C: cached values per unit */
    size_t step;        /* B·H: one position's states */
} EncPass;

static EncPass enc_pass(const Model *m, RnnWork *w, int l, int dir, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    bool lstm = c->cell == CELL_LSTM;
    return (EncPass){.rw = &rnn_weights(m)->enc[l][dir], .gw = &rnn_grads(m)->enc[l][dir], .ed = &w->enc[l][dir],
                     .reverse = dir == 1, .lstm = lstm, .B = b->B, .S = b->S, .H = c->hidden,
                     .GH = model_gates(c) * c->hidden, .C = lstm ? NN_LSTM_CACHE : NN_GRU_CACHE,
                     .step = (size_t)b->B * c->hidden};
}

/* The position of step k of the pass and the one before it in the pass's direction
   (outside [0, S) at the first step). */
static int pass_pos(const EncPass *p, int k) { return p->reverse ? p->S - 1 - k : k; }
static int pass_prev(const EncPass *p, int t) { return p->reverse ? t + 1 : t - 1; }

/* Direction dir (1: right to left) of encoder layer l over the whole batch, from its
   input x (S,B,in_size). */
static void enc_dir_forward(const Model *m, RnnWork *w, int l, int dir, const real *x, int in_size, const Batch *b)
{
    EncPass p = enc_pass(m, w, l, dir, b);
    EncDir *ed = p.ed;
    size_t step = p.step;
    /* Input projections of all positions in one product. */
    nn_linear_forward(ed->gi, x, p.rw->w_ih, p.rw->b_ih, &(LinearShape){p.S * p.B, in_size, p.GH});
    memset(ed->st, 0, (size_t)p.S * step * sizeof(real));
    if (p.lstm)
        memset(ed->cst, 0, (size_t)p.S * step * sizeof(real));
    for (int k = 0; k < p.S; k++) {
        int t = pass_pos(&p, k), tp = pass_prev(&p, t), n = active_rows(b, t);
        bool first = tp < 0 || tp >= p.S;
        const real *h = first ? w->zeros : ed->st + (size_t)tp * step;
        real *gi = ed->gi + (size_t)t * p.B * p.GH;
        nn_linear_forward(w->egh, h, p.rw->w_hh, p.rw->b_hh, &(LinearShape){n, p.H, p.GH});
        real *cache = ed->cache + (size_t)t * p.B * p.C * p.H;
        if (p.lstm) {
            const real *cprev = first ? w->zeros : ed->cst + (size_t)tp * step;
            nn_lstm_cell_forward(ed->st + (size_t)t * step, ed->cst + (size_t)t * step, cache, gi, w->egh, cprev, n,
                                 p.H);
        } else {
            nn_gru_cell_forward(ed->st + (size_t)t * step, cache, gi, w->egh, h, n, p.H);
        }
    }
}

/* Backward of enc_dir_forward: dx (S,B,in_size) += the gradient of its input. */
static void enc_dir_backward(const Model *m, RnnWork *w, int l, int dir, const real *x, real *dx, int in_size,
                             const Batch *b)
{
    EncPass p = enc_pass(m, w, l, dir, b);
    EncDir *ed = p.ed;
    size_t step = p.step;
    memset(ed->dgi, 0, (size_t)p.S * p.B * p.GH * sizeof(real));
    for (int k = p.S - 1; k >= 0; k--) {
        int t = pass_pos(&p, k), tp = pass_prev(&p, t), n = active_rows(b, t);
        bool first = tp < 0 || tp >= p.S;
        const real *h = first ? w->zeros : ed->st + (size_t)tp * step;
        real *dh = first ? NULL : ed->dst + (size_t)tp * step;
        real *dgi = ed->dgi + (size_t)t * p.B * p.GH;
        const real *cache = ed->cache + (size_t)t * p.B * p.C * p.H;
        memset(w->edgh, 0, (size_t)n * p.GH * sizeof(real));
        if (p.lstm) {
            const real *cprev = first ? w->zeros : ed->cst + (size_t)tp * step;
            real *dcprev = first ? NULL : ed->dcst + (size_t)tp * step;
            nn_lstm_cell_backward(dgi, dcprev, ed->dst + (size_t)t * step, ed->dcst + (size_t)t * step, cache, cprev,
                                  n, p.H);
            memcpy(w->edgh, dgi, (size_t)n * p.GH * sizeof(real));
        } else {
            nn_gru_cell_backward(dgi, w->edgh, dh, ed->dst + (size_t)t * step, cache, h, n, p.H);
        }
        nn_linear_backward(dh, p.gw->w_hh, p.gw->b_hh, w->edgh, h, p.rw->w_hh, &(LinearShape){n, p.H, p.GH});
    }
    nn_linear_backward(dx, p.gw->w_ih, p.gw->b_ih, ed->dgi, x, p.rw->w_ih,
                       &(LinearShape){p.S * p.B, in_size, p.GH});
}

/* The decoder's initial states s0 (and c0) of every layer (docs/model.md, step 3 and
   "bridges"); the linear maps read dl->bin / dl->cbin. */
static void bridge_forward(Model *m, RnnWork *w, const Batch *b)
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
            nn_linear_forward(s0, bin, k ? rnn_weights(m)->bridge_cw[l] : rnn_weights(m)->bridge_w[l],
                              k ? rnn_weights(m)->bridge_cb[l] : rnn_weights(m)->bridge_b[l],
                              &(LinearShape){B, K, D});
            nn_tanh_forward(s0, s0, (size_t)B * D);
        }
    }
}

/* Backward of one layer's linear map(s): the gradient of its input into w->dbin (k = 0:
   s0, 1: c0), and, for the linear bridge, into the encoder states it was made of. */
static void bridge_backward(Model *m, RnnWork *w, const Batch *b, int l, int k)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, H = c->hidden, K = model_enc_size(c), D = c->dec_hidden;
    DecLayer *dl = &w->dec[l];
    real *s0 = k ? dl->c0 : dl->s0, *ds0 = k ? dl->dc0 : dl->ds0;
    /* ds0 becomes the gradient before tanh, in place */
    nn_tanh_backward_inplace(ds0, s0, (size_t)B * D);
    real *dbin = w->dbin;
    memset(dbin, 0, (size_t)B * K * sizeof(real));
    nn_linear_backward(dbin, k ? rnn_grads(m)->bridge_cw[l] : rnn_grads(m)->bridge_w[l], k ? rnn_grads(m)->bridge_cb[l] : rnn_grads(m)->bridge_b[l],
                       ds0, k ? dl->cbin : dl->bin, k ? rnn_weights(m)->bridge_cw[l] : rnn_weights(m)->bridge_w[l],
                       &(LinearShape){B, K, D});
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

static void encoder_forward(Model *m, RnnWork *w, const Batch *b, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, E = c->emb, H = c->hidden, K = model_enc_size(c);
    size_t SB = (size_t)S * B;

    nn_embedding_forward(w->xs, b->src, rnn_weights(m)->src_emb, S * B, c->src_vocab, E);
    nn_dropout_forward(w->xs, w->xs_mask, w->xs, SB * E, rng ? c->dropout : 0, rng);
    for (int l = 0; l < c->layers; l++) {
        const real *x = w->xs;
        int in_size = E;
        if (l > 0) {
            nn_dropout_forward(w->lin[l], w->lin_mask[l], w->out[l - 1], SB * K, rng ? c->dropout : 0, rng);
            x = w->lin[l];
            in_size = K;
        }
        for (int d = 0; d < (c->bidir ? 2 : 1); d++)
            enc_dir_forward(m, w, l, d, x, in_size, b);
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

static void encoder_backward(Model *m, RnnWork *w, const Batch *b)
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
                bridge_backward(m, w, b, l, k);
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
                bridge_backward(m, w, b, l, k);
        const real *x = l > 0 ? w->lin[l] : w->xs;
        int in_size = l > 0 ? K : E;
        real *dx = l > 0 ? w->dlin : w->dxs;
        memset(dx, 0, SB * in_size * sizeof(real));
        for (int d = 0; d < dirs; d++)
            enc_dir_backward(m, w, l, d, x, dx, in_size, b);
        if (l > 0) {
            memset(w->dout[l - 1], 0, SB * K * sizeof(real));
            nn_dropout_backward(w->dout[l - 1], w->dlin, w->lin_mask[l], SB * K);
        }
    }
    /* embedding dropout, then the lookup */
    nn_dropout_backward_inplace(w->dxs, w->xs_mask, SB * E);
    nn_embedding_backward(rnn_grads(m)->src_emb, w->dxs, b->src, S * B, c->src_vocab, E);
}

/* ------------------------------------------------------------------ decoder */

/* The decoder RNN layers at step t, layer 0 reading x0 (B, model_dec_in_size). */
static void dec_rnn_forward(Model *m, RnnWork *w, const Batch *b, int t, const real *x0, Rng *rng)
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
            nn_dropout_forward(in, dl->mask + (size_t)t * BD, w->dec[l - 1].s + (size_t)t * BD, BD, rng ? c->dropout : 0, rng);
            x = in;
            in_size = D;
        }
        const real *h = t ? dl->s + (size_t)(t - 1) * BD : dl->s0;
        work_step_linear(&w->base, dl->gi, x, rnn_weights(m)->dec[l].w_ih, rnn_weights(m)->dec[l].b_ih,
                         &(LinearShape){B, in_size, G * D});
        work_step_linear(&w->base, dl->gh, h, rnn_weights(m)->dec[l].w_hh, rnn_weights(m)->dec[l].b_hh,
                         &(LinearShape){B, D, G * D});
        real *cache = dl->cache + (size_t)t * B * C * D;
        if (lstm) {
            const real *cp = t ? dl->c + (size_t)(t - 1) * BD : dl->c0;
            nn_lstm_cell_forward(dl->s + (size_t)t * BD, dl->c + (size_t)t * BD, cache, dl->gi, dl->gh, cp, B, D);
        } else {
            nn_gru_cell_forward(dl->s + (size_t)t * BD, cache, dl->gi, dl->gh, h, B, D);
        }
    }
}

/* Backward of the decoder RNN layers at step t (top state gradients complete) into
   w->dx0, the gradient of the layer-0 input (zeroed here). */
static void dec_rnn_backward(Model *m, RnnWork *w, const Batch *b, int t)
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
            nn_linear_backward(dh, rnn_grads(m)->dec[l].w_hh, rnn_grads(m)->dec[l].b_hh, w->dgi, h, rnn_weights(m)->dec[l].w_hh,
                               &(LinearShape){B, D, G * D});
        } else {
            memset(w->dgh, 0, (size_t)B * G * D * sizeof(real));
            nn_gru_cell_backward(w->dgi, w->dgh, dh, dl->ds + (size_t)t * BD, cache, h, B, D);
            nn_linear_backward(dh, rnn_grads(m)->dec[l].w_hh, rnn_grads(m)->dec[l].b_hh, w->dgh, h, rnn_weights(m)->dec[l].w_hh,
                               &(LinearShape){B, D, G * D});
        }
        if (l > 0) {
            memset(dl->din, 0, BD * sizeof(real));
            nn_linear_backward(dl->din, rnn_grads(m)->dec[l].w_ih, rnn_grads(m)->dec[l].b_ih, w->dgi, dl->in + (size_t)t * BD,
                               rnn_weights(m)->dec[l].w_ih, &(LinearShape){B, D, G * D});
            nn_dropout_backward(w->dec[l - 1].ds + (size_t)t * BD, dl->din, dl->mask + (size_t)t * BD, BD);
        } else {
            nn_linear_backward(w->dx0, rnn_grads(m)->dec[0].w_ih, rnn_grads(m)->dec[0].b_ih, w->dgi, w->x0 + (size_t)t * B * Din,
                               rnn_weights(m)->dec[0].w_ih, &(LinearShape){B, Din, G * D});
        }
    }
}

/* One decoder step t from the target embeddings y[t] (already looked up). Bahdanau's
   path: attention with s_{t-1}, then the RNN on [y; c_t]. Luong's path: the RNN on y
   (or [y; h~_{t-1}]), attention with s_t, then h~_t = tanh(out.pre · [c_t; s_t]) into
   w->pre. */
static void dec_step_forward(Model *m, RnnWork *w, const Batch *b, int t, Rng *rng)
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
    work_step_linear(&w->base, pre, feat, rnn_weights(m)->pre_w, rnn_weights(m)->pre_b,
                     &(LinearShape){B, F, P});
    nn_tanh_forward(pre, pre, (size_t)B * P);
}

/* Backward of dec_step_forward at step t, after output_backward and the steps after t. */
static void dec_step_backward(Model *m, RnnWork *w, const Batch *b, int t)
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
    nn_linear_backward(dfeat, rnn_grads(m)->pre_w, rnn_grads(m)->pre_b, dpre, w->feat + (size_t)t * B * F, rnn_weights(m)->pre_w,
                       &(LinearShape){B, F, P});
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

/* The output layer's input for steps [t0, t0+nt), after its dropout: on Bahdanau's
   path the deep output from [s_t; c_t; y] (Luong's path computed h~_t in dec_step_forward). */
static void output_forward(Model *m, RnnWork *w, const Batch *b, int t0, int nt, Rng *rng)
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
        work_step_linear(&w->base, pre, w->feat + off * F, rnn_weights(m)->pre_w, rnn_weights(m)->pre_b,
                         &(LinearShape){N, F, P});
        nn_tanh_forward(pre, pre, (size_t)N * P);
    }
    nn_dropout_forward(w->pre_drop + off * P, w->pre_mask + off * P, pre, (size_t)N * P, rng ? c->dropout : 0, rng);
}

/* Backward of output_forward over steps [t0, t0+nt): w->dpre holds the gradient of its
   output (forward with grad) and gets that of the deep output / attentional state
   (before its dropout); on Bahdanau's path the deep output's backward adds into the
   top decoder states' ds, dctx and dy. */
static void output_backward(Model *m, RnnWork *w, const Batch *b, int t0, int nt)
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
        nn_linear_backward(dfeat, rnn_grads(m)->pre_w, rnn_grads(m)->pre_b, dpre, w->feat + off * F, rnn_weights(m)->pre_w,
                           &(LinearShape){N, F, P});
        real *parts[3] = {w->dec[top].ds + off * D, w->dctx + off * K, w->dy + off * E};
        int widths[3] = {D, K, E};
        nn_concat_backward(parts, dfeat, widths, 3, N);
    }
}

/* The loss; with grad, also the output layer's gradients (w->dpre gets that of its
   input, m->grads those of the projection), which backward() continues. */
static double rnn_forward(Model *m, Work *base, const Batch *b, Rng *rng, bool grad)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &m->cfg;
    int B = b->B, T = b->T, E = c->emb;
    encoder_forward(m, w, b, rng);
    nn_embedding_forward(w->y, b->tgt_in, rnn_weights(m)->tgt_emb, T * B, c->tgt_vocab, E);
    nn_dropout_forward(w->y, w->y_mask, w->y, (size_t)T * B * E, rng ? c->dropout : 0, rng);
    for (int t = 0; t < T; t++)
        dec_step_forward(m, w, b, t, rng);
    output_forward(m, w, b, 0, T, rng);
    OutputLayer o = work_output(&w->base, rnn_weights(m)->proj_w, rnn_weights(m)->proj_b, rnn_grads(m)->proj_w, rnn_grads(m)->proj_b, c->deep_out, grad);
    real scale = grad ? (real)(1.0 / (double)b->ntok) : 0;
    OutputLoss r = output_loss(&o, w->pre_drop, b->tgt_out, T * B, scale, grad ? w->dpre : NULL);
    w->base.nll = r.nll;
    return r.loss;
}

/* The backward pass after rnn_forward(..., grad): from w->dpre down to the embeddings. */
static void rnn_backward(Model *m, Work *base, const Batch *b)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &m->cfg;
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
    nn_embedding_backward(rnn_grads(m)->tgt_emb, w->dy, b->tgt_in, N, V, E);
    encoder_backward(m, w, b);
}


/* ------------------------------------------------------------------ translation */

static void rnn_encode(Model *m, Work *base, const Batch *b) { encoder_forward(m, (RnnWork *)base, b, NULL); }

static void rnn_decode_step(Model *m, Work *base, const Batch *b, const int *prev, int t)
{
    RnnWork *w = (RnnWork *)base;
    const ModelConfig *c = &m->cfg;
    const Weights *W = rnn_weights(m);
    int B = b->B, E = c->emb;
    nn_embedding_forward(w->y + (size_t)t * B * E, prev, W->tgt_emb, B, c->tgt_vocab, E);
    dec_step_forward(m, w, b, t, NULL);
    output_forward(m, w, b, t, 1, NULL);
    work_step_linear(base, base->logits, w->pre_drop + (size_t)t * B * c->deep_out, W->proj_w, W->proj_b,
                     &(LinearShape){B, c->deep_out, c->tgt_vocab});
}

static const real *rnn_step_attention(const Work *base)
{
    return attend_weights((const RnnWork *)base, base->T - 1);
}

static int rnn_attention_layers(const Model *m) { return 0; }

const ModelOps rnn_ops = {
    .name = "rnn",
    .title = "recurrent model",
    .config_keys = rnn_config_keys,
    .config_optional = rnn_config_optional,
    .config_put = rnn_config_put,
    .config_get = rnn_config_get,
    .check = rnn_check,
    .walk = rnn_walk,
    .views_size = sizeof(Weights),
    .init_random = rnn_init_random,
    .max_positions = rnn_max_positions,
    .work_bytes = rnn_work_bytes,
    .work_new = rnn_work_new,
    .work_free = rnn_work_free,
    .forward = rnn_forward,
    .backward = rnn_backward,
    .encode = rnn_encode,
    .decode_step = rnn_decode_step,
    .step_attention = rnn_step_attention,
    .expand_rows = rnn_expand_rows,
    .select_rows = rnn_select_rows,
    .quantize = rnn_quantize,
    .attention_layers = rnn_attention_layers,
};
