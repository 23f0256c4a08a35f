#include "model/attend.h"

#include <math.h>
#include <string.h>

#include "base/err.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/ops.h"

/* The encoder states the keys are made from, and the states contexts are made of. */
static const real *enc_states(const Model *m, const RnnWork *w)
{
    return w->out[m->cfg.layers - 1];
}

static real *enc_dstates(const Model *m, RnnWork *w)
{
    return w->dout[m->cfg.layers - 1];
}

/* Keys of the dot kinds: the projected keys, or the encoder states themselves. */
static const real *dot_keys(const Model *m, const RnnWork *w)
{
    return model_key_size(&m->cfg) ? w->keys : enc_states(m, w);
}

static real dot_scale(const ModelConfig *c)
{
    if (c->attention == ATT_SCALED_DOT || c->attention == ATT_MULTIHEAD)
        return (real)(1.0 / sqrt((double)c->attn / c->heads));
    return 1;
}

/* ------------------------------------------------------------------ keys */

void attend_keys_forward(const Model *m, RnnWork *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int N = b->S * b->B, K = model_enc_size(c), Ak = model_key_size(c);
    if (Ak)
        nn_linear_forward(w->keys, enc_states(m, w), rnn_weights(m)->att_k, rnn_weights(m)->att_kb,
                          &(LinearShape){N, K, Ak});
    if (c->attention == ATT_MULTIHEAD)
        nn_linear_forward(w->vals, enc_states(m, w), rnn_weights(m)->att_val, NULL,
                          &(LinearShape){N, K, c->attn});
}

void attend_keys_zero_grad(const Model *m, RnnWork *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    size_t N = (size_t)b->S * b->B;
    int Ak = model_key_size(c);
    if (Ak)
        memset(w->dkeys, 0, N * Ak * sizeof(real));
    if (c->attention == ATT_MULTIHEAD)
        memset(w->dvals, 0, N * c->attn * sizeof(real));
}

void attend_keys_backward(Model *m, RnnWork *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int N = b->S * b->B, K = model_enc_size(c), Ak = model_key_size(c);
    if (Ak)
        nn_linear_backward(enc_dstates(m, w), rnn_grads(m)->att_k, rnn_grads(m)->att_kb, w->dkeys, enc_states(m, w),
                           rnn_weights(m)->att_k, &(LinearShape){N, K, Ak});
    if (c->attention == ATT_MULTIHEAD)
        nn_linear_backward(enc_dstates(m, w), rnn_grads(m)->att_val, NULL, w->dvals, enc_states(m, w),
                           rnn_weights(m)->att_val, &(LinearShape){N, K, c->attn});
}

/* ------------------------------------------------------------------ one step */

/* Window bounds of step t for every row (local attention only). */
static void local_window(const ModelConfig *c, RnnWork *w, const Batch *b, int t)
{
    int B = b->B, Dw = c->window;
    int *lo = w->lo + (size_t)t * B, *hi = w->hi + (size_t)t * B;
    const real *p = w->pos_p + (size_t)t * B;
    for (int r = 0; r < B; r++) {
        int n = b->src_len[r], l, h;
        if (c->local == LOCAL_M) {
            int centre = t < n - 1 ? t : n - 1;
            l = centre - Dw;
            h = centre + Dw;
        } else {
            l = (int)ceil((double)(p[r] - (real)Dw));
            h = (int)floor((double)(p[r] + (real)Dw));
        }
        lo[r] = l < 0 ? 0 : l;
        hi[r] = h > n - 1 ? n - 1 : h;
        CHECK(lo[r] <= hi[r]);
    }
}

void attend_step_forward(const Model *m, RnnWork *w, const Batch *b, int t, const real *query)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, A = c->attn, D = c->dec_hidden, K = model_enc_size(c), Hh = c->heads;
    size_t BS = (size_t)B * S, step = (size_t)t * Hh * BS;
    real *e = w->e + step, *a = w->a + step;
    real *q = model_attn_projects_query(c) ? w->q + (size_t)t * B * A : NULL;

    if (q)
        work_step_linear(&w->base, q, query, rnn_weights(m)->att_q, NULL, &(LinearShape){B, D, A});
    if (model_attn_additive(c))
        nn_attn_score_forward(e, w->att_cache, q, w->keys, rnn_weights(m)->att_v,
                              &(AttnShape){.S = S, .B = B, .A = A});
    else if (q)
        nn_attn_dot_forward(e, q, w->keys,
                            &(AttnShape){.S = S, .B = B, .A = A, .H = Hh, .scale = dot_scale(c)});
    else
        nn_attn_dot_forward(e, query, dot_keys(m, w),
                            &(AttnShape){.S = S, .B = B, .A = D, .H = 1, .scale = 1});

    if (c->local == LOCAL_NONE) {
        for (int h = 0; h < Hh; h++)
            nn_masked_softmax_forward(a + h * BS, e + h * BS, b->src_len, B, S);
    } else {
        if (c->local == LOCAL_P) {
            real *ph = w->pos_h + (size_t)t * B * A, *x = w->pos_x + (size_t)t * B;
            work_step_linear(&w->base, ph, query, rnn_weights(m)->att_pos, NULL, &(LinearShape){B, D, A});
            nn_tanh_forward(ph, ph, (size_t)B * A);
            nn_linear_forward(x, ph, rnn_weights(m)->att_pos_v, NULL, &(LinearShape){B, A, 1});
            nn_local_pos_forward(w->pos_p + (size_t)t * B, w->pos_sig + (size_t)t * B, x, b->src_len, B);
        }
        local_window(c, w, b, t);
        const int *lo = w->lo + (size_t)t * B, *hi = w->hi + (size_t)t * B;
        real *soft = c->local == LOCAL_P ? w->asoft + step : a;
        for (int h = 0; h < Hh; h++)
            nn_window_softmax_forward(soft + h * BS, e + h * BS, lo, hi, B, S);
        if (c->local == LOCAL_P)
            for (int h = 0; h < Hh; h++)
                nn_gauss_window_forward(a + h * BS, soft + h * BS, w->pos_p + (size_t)t * B, lo, hi,
                                        &(AttnShape){.S = S, .B = B, .sigma = (real)c->window / 2});
    }

    real *ctx = w->ctx + (size_t)t * B * K;
    if (c->attention == ATT_MULTIHEAD) {
        real *o = w->heads_o + (size_t)t * B * A;
        nn_attn_context_forward(o, a, w->vals, &(AttnShape){.S = S, .B = B, .A = A, .H = Hh});
        work_step_linear(&w->base, ctx, o, rnn_weights(m)->att_out, NULL, &(LinearShape){B, A, K});
        real *show = w->ashow + (size_t)t * BS;
        for (size_t i = 0; i < BS; i++) {
            real s = 0;
            for (int h = 0; h < Hh; h++)
                s += a[h * BS + i];
            show[i] = s / (real)Hh;
        }
    } else {
        nn_attn_context_forward(ctx, a, enc_states(m, w),
                                &(AttnShape){.S = S, .B = B, .A = K, .H = 1});
    }
}

void attend_step_backward(Model *m, RnnWork *w, const Batch *b, int t, const real *query, real *dquery)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, A = c->attn, D = c->dec_hidden, K = model_enc_size(c), Hh = c->heads;
    size_t BS = (size_t)B * S, step = (size_t)t * Hh * BS;
    const real *a = w->a + step;
    const real *dctx = w->dctx + (size_t)t * B * K;

    memset(w->da, 0, Hh * BS * sizeof(real));
    if (c->attention == ATT_MULTIHEAD) {
        memset(w->dheads_o, 0, (size_t)B * A * sizeof(real));
        nn_linear_backward(w->dheads_o, rnn_grads(m)->att_out, NULL, dctx, w->heads_o + (size_t)t * B * A,
                           rnn_weights(m)->att_out, &(LinearShape){B, A, K});
        nn_attn_context_backward(w->da, w->dvals, w->dheads_o, a, w->vals,
                                 &(AttnShape){.S = S, .B = B, .A = A, .H = Hh});
    } else {
        nn_attn_context_backward(w->da, enc_dstates(m, w), dctx, a, enc_states(m, w),
                                 &(AttnShape){.S = S, .B = B, .A = K, .H = 1});
    }

    memset(w->de, 0, Hh * BS * sizeof(real));
    if (c->local == LOCAL_NONE) {
        for (int h = 0; h < Hh; h++)
            nn_masked_softmax_backward(w->de + h * BS, w->da + h * BS, a + h * BS, b->src_len, B, S);
    } else {
        const int *lo = w->lo + (size_t)t * B, *hi = w->hi + (size_t)t * B;
        const real *soft = a, *dsoft = w->da;
        if (c->local == LOCAL_P) {
            soft = w->asoft + step;
            memset(w->dasoft, 0, Hh * BS * sizeof(real));
            memset(w->dpos_p, 0, (size_t)B * sizeof(real));
            const real *p = w->pos_p + (size_t)t * B;
            for (int h = 0; h < Hh; h++)
                nn_gauss_window_backward(w->dasoft + h * BS, w->dpos_p, w->da + h * BS, soft + h * BS, p,
                                         lo, hi, &(AttnShape){.S = S, .B = B, .sigma = (real)c->window / 2});
            dsoft = w->dasoft;
            /* p = n · sigmoid(pos_v · tanh(pos · query)) */
            memset(w->dpos_x, 0, (size_t)B * sizeof(real));
            nn_local_pos_backward(w->dpos_x, w->dpos_p, w->pos_sig + (size_t)t * B, b->src_len, B);
            const real *ph = w->pos_h + (size_t)t * B * A;
            memset(w->dpos_h, 0, (size_t)B * A * sizeof(real));
            nn_linear_backward(w->dpos_h, rnn_grads(m)->att_pos_v, NULL, w->dpos_x, ph, rnn_weights(m)->att_pos_v,
                               &(LinearShape){B, A, 1});
            nn_tanh_backward_inplace(w->dpos_h, ph, (size_t)B * A);
            nn_linear_backward(dquery, rnn_grads(m)->att_pos, NULL, w->dpos_h, query, rnn_weights(m)->att_pos,
                               &(LinearShape){B, D, A});
        }
        for (int h = 0; h < Hh; h++)
            nn_window_softmax_backward(w->de + h * BS, dsoft + h * BS, soft + h * BS, lo, hi, B, S);
    }

    const real *q = model_attn_projects_query(c) ? w->q + (size_t)t * B * A : NULL;
    if (q)
        memset(w->dq, 0, (size_t)B * A * sizeof(real));
    if (model_attn_additive(c)) {
        /* the tanh values of this step, recomputed: keeping them for every step took
           T·S·B·A floats (167 MB for a batch of 64 pairs of 50 tokens) */
        nn_attn_score_cache(w->att_cache, q, w->keys, &(AttnShape){.S = S, .B = B, .A = A});
        nn_attn_score_backward(w->dq, w->dkeys, rnn_grads(m)->att_v, w->de, w->att_cache, rnn_weights(m)->att_v,
                               &(AttnShape){.S = S, .B = B, .A = A});
    }
    else if (q)
        nn_attn_dot_backward(w->dq, w->dkeys, w->de, q, w->keys,
                             &(AttnShape){.S = S, .B = B, .A = A, .H = Hh, .scale = dot_scale(c)});
    else
        nn_attn_dot_backward(dquery, model_key_size(c) ? w->dkeys : enc_dstates(m, w), w->de, query,
                             dot_keys(m, w), &(AttnShape){.S = S, .B = B, .A = D, .H = 1, .scale = 1});
    if (q)
        nn_linear_backward(dquery, rnn_grads(m)->att_q, NULL, w->dq, query, rnn_weights(m)->att_q,
                           &(LinearShape){B, D, A});
}

const real *attend_weights(const RnnWork *w, int t)
{
    size_t BS = (size_t)w->base.B * w->base.S;
    if (w->base.cfg.attention == ATT_MULTIHEAD)
        return w->ashow + (size_t)t * BS;
    return w->a + (size_t)t * w->base.cfg.heads * BS;
}

/* ------------------------------------------------------------------ attn-pool bridge */

void attend_pool_forward(const Model *m, RnnWork *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, A = c->attn, K = model_enc_size(c);
    nn_linear_forward(w->pool_u, enc_states(m, w), rnn_weights(m)->pool_w, rnn_weights(m)->pool_b,
                      &(LinearShape){S * B, K, A});
    nn_tanh_forward(w->pool_u, w->pool_u, (size_t)S * B * A);
    for (int r = 0; r < B; r++)
        memcpy(w->pool_q + (size_t)r * A, rnn_weights(m)->pool_ctx, (size_t)A * sizeof(real));
    nn_attn_dot_forward(w->pool_e, w->pool_q, w->pool_u,
                        &(AttnShape){.S = S, .B = B, .A = A, .H = 1, .scale = 1});
    nn_masked_softmax_forward(w->pool_a, w->pool_e, b->src_len, B, S);
    nn_attn_context_forward(w->pool_m, w->pool_a, enc_states(m, w),
                            &(AttnShape){.S = S, .B = B, .A = K, .H = 1});
}

void attend_pool_backward(Model *m, RnnWork *w, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    int B = b->B, S = b->S, A = c->attn, K = model_enc_size(c);
    size_t BS = (size_t)B * S, SBA = BS * A;
    memset(w->dpool_a, 0, BS * sizeof(real));
    nn_attn_context_backward(w->dpool_a, enc_dstates(m, w), w->dpool_m, w->pool_a, enc_states(m, w),
                             &(AttnShape){.S = S, .B = B, .A = K, .H = 1});
    memset(w->dpool_e, 0, BS * sizeof(real));
    nn_masked_softmax_backward(w->dpool_e, w->dpool_a, w->pool_a, b->src_len, B, S);
    memset(w->dpool_q, 0, (size_t)B * A * sizeof(real));
    memset(w->dpool_u, 0, SBA * sizeof(real));
    nn_attn_dot_backward(w->dpool_q, w->dpool_u, w->dpool_e, w->pool_q, w->pool_u,
                         &(AttnShape){.S = S, .B = B, .A = A, .H = 1, .scale = 1});
    for (int r = 0; r < B; r++)
        for (int i = 0; i < A; i++)
            rnn_grads(m)->pool_ctx[i] += w->dpool_q[(size_t)r * A + i];
    nn_tanh_backward_inplace(w->dpool_u, w->pool_u, SBA);
    nn_linear_backward(enc_dstates(m, w), rnn_grads(m)->pool_w, rnn_grads(m)->pool_b, w->dpool_u, enc_states(m, w), rnn_weights(m)->pool_w,
                       &(LinearShape){S * B, K, A});
}
