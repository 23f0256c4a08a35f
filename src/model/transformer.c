/*
 * The Transformer (docs/model.md "The Transformer"), time-major like the recurrent
 * model: source rows (S,B,d), target rows (T,B,d), row i·B + b for position i of
 * sentence b. A stack is a list of sublayers (self-attention, attention over the
 * encoder output, feed-forward), each with its residual connection and layer norm:
 *   post-norm: y = LN(x + drop(f(x)))        pre-norm: y = x + drop(f(LN(x)))
 * and, with pre-norm, a final LN per stack. Every sublayer's forward has its backward
 * beside it; backward accumulates into m->grads.
 *
 * Decoding keeps, per decoder layer, the keys and values of its self-attention for
 * every step so far (the cache) and the keys and values of the encoder output
 * (computed once in tf_encode), so a step costs one row per sentence.
 */
#include "model/transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/work.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/ops.h"

#define LN_EPS 1e-5f

enum { SUB_SELF = 0, SUB_CROSS, SUB_FF };

/* One sublayer with its residual and norm. in is the stream entering (a buffer of the
   sublayer before); the stream leaving is ln (post-norm) or sum (pre-norm). */
typedef struct TfSub {
    int kind;
    const real *in;     /* (N,d) */
    real *ln;           /* (N,d) */
    real *mean, *rstd;  /* (N) */
    real *sum;          /* (N,d) in + drop(f(...)): f writes here, dropout and the
                           residual follow in place */
    real *mask;         /* (N,d) the dropout mask of f's output (training) */
    /* attention */
    real *qkv;          /* self (N,3d); cross: the queries (N,d) */
    real *kv;           /* cross: keys | values of the encoder output (S,B,2d) */
    real *ctx;          /* (N,d) the heads' outputs, before out_proj */
    real *a, *adrop;    /* (B,H,Tq,Tk) weights and their dropout mask (training) */
    /* feed-forward */
    real *h;            /* (N,F) ReLU output after dropout (its mask is not kept: a
                           kept unit is one whose value is > 0) */
} TfSub;

typedef struct TfLayer {
    TfSub sub[3];
    real *cache; /* decoding: (max_t,B,2d) self-attention keys | values of every step */
} TfLayer;

typedef struct TfWork {
    Work base;
    real *pe;                  /* (max(S,T), d) sinusoidal positions */
    real *xs, *xs_mask;        /* (S,B,d) encoder input after dropout, its mask */
    real *xt, *xt_mask;        /* (Nt,d) decoder input */
    TfLayer enc[TF_MAX_LAYERS], dec[TF_MAX_LAYERS];
    real *enc_ln, *enc_mean, *enc_rstd; /* pre-norm: the final norm of each stack */
    real *dec_ln, *dec_mean, *dec_rstd;
    const real *memory;        /* (S,B,d) the encoder's output */
    const real *top;           /* (Nt,d) the decoder's output */
    real *ashow;               /* (B,S) decoding: the attention shown (Work.show_layer,
                                  show_head) */
    /* gradients (training) */
    real *dx, *dy, *dtmp, *dln;  /* (max(S,T)·B, d) */
    real *dqkv;                  /* (max(S,T)·B, 3d) */
    real *dctx;                  /* (max(S,T)·B, d) */
    real *dh;                    /* (max(S,T)·B, F) */
    real *de;                    /* (B,H,max,max) */
    real *dmem, *dkv;            /* (S,B,d) (S,B,2d) */
    real p;                      /* the dropout of the last forward pass (0 without rng) */
} TfWork;

/* ------------------------------------------------------------------ sizes */

static int tf_max_len(const TfWork *w) { return w->base.max_s > w->base.max_t ? w->base.max_s : w->base.max_t; }

/* Rows of the decoder's buffers: every step, or one step when decoding. */
static size_t tgt_rows(const TfWork *w)
{
    return (size_t)(w->base.kind == WORK_DECODE ? 1 : w->base.max_t) * (size_t)w->base.max_b;
}

static void carve_sub(TfSub *s, int kind, Carver *cv, size_t N, size_t Nkv, size_t att, const Work *w)
{
    int d = w->cfg.model_dim, F = w->cfg.ff;
    bool training = w->training;
    s->kind = kind;
    s->ln = carve(cv, N * d);
    s->mean = carve(cv, N);
    s->rstd = carve(cv, N);
    s->sum = carve(cv, N * d);
    s->mask = training ? carve(cv, N * d) : NULL;
    if (kind == SUB_FF) {
        s->h = carve(cv, N * F);
        return;
    }
    s->qkv = carve(cv, N * (kind == SUB_SELF ? 3 : 1) * d);
    if (kind == SUB_CROSS)
        s->kv = carve(cv, Nkv * 2 * d);
    s->ctx = carve(cv, N * d);
    s->a = carve(cv, att);
    s->adrop = training ? carve(cv, att) : NULL;
}

static void tf_carve(Work *base, Carver *cv)
{
    TfWork *t = (TfWork *)base;
    const TfWork *w = t;
    const ModelConfig *c = &w->base.cfg;
    int d = c->model_dim, F = c->ff, H = c->heads, L = c->layers;
    bool tr = w->base.training, dec = w->base.kind == WORK_DECODE;
    size_t B = (size_t)w->base.max_b, S = (size_t)w->base.max_s, T = (size_t)w->base.max_t, M = (size_t)tf_max_len(w);
    size_t Ns = S * B, Nt = tgt_rows(w), Tq = dec ? 1 : T;
    t->pe = carve(cv, M * d);
    t->xs = carve(cv, Ns * d);
    t->xs_mask = tr ? carve(cv, Ns * d) : NULL;
    t->xt = carve(cv, Nt * d);
    t->xt_mask = tr ? carve(cv, Nt * d) : NULL;
    for (int l = 0; l < L; l++) {
        carve_sub(&t->enc[l].sub[0], SUB_SELF, cv, Ns, 0, B * H * S * S, &t->base);
        carve_sub(&t->enc[l].sub[1], SUB_FF, cv, Ns, 0, 0, &t->base);
        carve_sub(&t->dec[l].sub[0], SUB_SELF, cv, Nt, 0, B * H * Tq * T, &t->base);
        carve_sub(&t->dec[l].sub[1], SUB_CROSS, cv, Nt, Ns, B * H * Tq * S, &t->base);
        carve_sub(&t->dec[l].sub[2], SUB_FF, cv, Nt, 0, 0, &t->base);
        t->dec[l].cache = dec ? carve(cv, T * B * 2 * d) : NULL;
    }
    if (c->norm == NORM_PRE) {
        t->enc_ln = carve(cv, Ns * d);
        t->enc_mean = carve(cv, Ns);
        t->enc_rstd = carve(cv, Ns);
        t->dec_ln = carve(cv, Nt * d);
        t->dec_mean = carve(cv, Nt);
        t->dec_rstd = carve(cv, Nt);
    }
    carve_output(&t->base, cv);
    t->ashow = dec ? carve(cv, B * S) : NULL;
    if (tr) {
        size_t Nm = M * B;
        t->dx = carve(cv, Nm * d);
        t->dy = carve(cv, Nm * d);
        t->dtmp = carve(cv, Nm * d);
        t->dln = carve(cv, Nm * d);
        t->dqkv = carve(cv, Nm * 3 * d);
        t->dctx = carve(cv, Nm * d);
        t->dh = carve(cv, Nm * F);
        t->de = carve(cv, B * H * M * M);
        t->dmem = carve(cv, Ns * d);
        t->dkv = carve(cv, Ns * 2 * d);
    }
    if (dec) {
        t->base.rows_tmp_len = T * B * 2 * d > S * B * 2 * d ? T * B * 2 * d : S * B * 2 * d;
        t->base.rows_tmp = carve(cv, t->base.rows_tmp_len);
    }
}

static size_t tf_work_bytes(const Model *m, const WorkShape *s)
{
    TfWork t = {0};
    work_base_init(&t.base, m, s);
    return sizeof t + work_carved_bytes(&t.base, tf_carve);
}

static Work *tf_work_new(const Model *m, const WorkShape *s)
{
    TfWork *t = XCNEW(TfWork, 1);
    work_base_init(&t->base, m, s);
    work_carve_all(&t->base, tf_carve);
    int d = m->cfg.model_dim;
    for (int p = 0; p < tf_max_len(t); p++)
        nn_sinusoid(t->pe + (size_t)p * d, p, d);
    return &t->base;
}

static void tf_work_free(Work *w) { free(w); }

/* ------------------------------------------------------------------ embeddings */

/* One side's embedding: its table and learned positions (with their gradients), its
   vocabulary, and the Work's buffers for the output and its dropout mask. */
typedef struct Side {
    const real *E, *pos;
    real *dE, *dpos;
    int V;
    real *x, *mask;
} Side;

static Side side_of(const Model *m, TfWork *w, bool target)
{
    const TfWeights *W = tf_weights(m), *G = tf_grads(m);
    if (target)
        return (Side){.E = W->tgt_emb, .pos = W->tgt_pos, .dE = G->tgt_emb, .dpos = G->tgt_pos,
                      .V = m->cfg.tgt_vocab, .x = w->xt, .mask = w->xt_mask};
    return (Side){.E = W->src_emb, .pos = W->src_pos, .dE = G->src_emb, .dpos = G->src_pos,
                  .V = m->cfg.src_vocab, .x = w->xs, .mask = w->xs_mask};
}

/* x = drop(E[ids]·sqrt(d) + pos(t)) for rows (t0 + i/B, i%B), i < N, with the Work's
   dropout; no mask: no dropout. */
static void embed_forward(const Model *m, const TfWork *w, const Side *sd, const int *ids, int N, int B, int t0,
                          Rng *rng)
{
    int d = m->cfg.model_dim;
    real scale = (real)sqrt((double)d), *x = sd->x;
    nn_embedding_forward(x, ids, sd->E, N, sd->V, d);
    const real *pe = m->cfg.positions == POS_LEARNED ? sd->pos : w->pe;
    for (int i = 0; i < N; i++) {
        int t = t0 + i / B;
        CHECK(m->cfg.positions != POS_LEARNED || t < m->cfg.max_positions);
        real *row = x + (size_t)i * d;
        const real *pt = pe + (size_t)t * d;
        for (int k = 0; k < d; k++)
            row[k] = row[k] * scale + pt[k];
    }
    if (sd->mask)
        nn_dropout_forward(x, sd->mask, x, (size_t)N * d, w->p, rng);
}

/* dx (N,d) is the gradient of the embedding's output (destroyed). */
static void embed_backward(const Model *m, const Side *sd, real *dx, const int *ids, int N, int B)
{
    int d = m->cfg.model_dim;
    nn_dropout_backward_inplace(dx, sd->mask, (size_t)N * d);
    if (sd->dpos)
        for (int i = 0; i < N; i++) {
            real *g = sd->dpos + (size_t)(i / B) * d;
            const real *r = dx + (size_t)i * d;
            for (int k = 0; k < d; k++)
                g[k] += r[k];
        }
    nn_scale(dx, (size_t)N * d, (real)sqrt((double)d));
    nn_embedding_backward(sd->dE, dx, ids, N, sd->V, d);
}

/* ------------------------------------------------------------------ sublayers */

typedef struct Ctx {
    const Model *m;
    TfWork *w;
    const Batch *b;
    int Tq, Tk;          /* query and key positions of the attention sublayers */
    int causal;          /* self-attention: -1 or the position of query 0 */
    const real *kv_self; /* decoding: the cache, else NULL */
    bool masks;          /* training Work: dropout masks are written (all ones when p = 0) */
    real p;              /* dropout */
} Ctx;

static MhaShape self_shape(const Ctx *x, int d)
{
    const ModelConfig *c = &x->m->cfg;
    MhaShape s = {.Tq = x->Tq, .B = x->b->B, .H = c->heads, .dh = d / c->heads, .ldq = 3 * d,
                  .ldo = d, .scale = (real)(1.0 / sqrt((double)(d / c->heads)))};
    if (x->kv_self) { /* one decoding step over the cache */
        s.Tk = x->causal + 1;
        s.ldk = s.ldv = 2 * d;
        s.causal = -1;
        s.klen = NULL;
    } else {
        s.Tk = x->Tq;
        s.ldk = s.ldv = 3 * d;
        s.causal = x->causal;
        s.klen = x->causal >= 0 ? NULL : x->b->src_len;
    }
    return s;
}

static MhaShape cross_shape(const Ctx *x, int d)
{
    const ModelConfig *c = &x->m->cfg;
    return (MhaShape){.Tq = x->Tq, .Tk = x->b->S, .B = x->b->B, .H = c->heads, .dh = d / c->heads,
                      .ldq = d, .ldk = 2 * d, .ldv = 2 * d, .ldo = d, .klen = x->b->src_len,
                      .causal = -1, .scale = (real)(1.0 / sqrt((double)(d / c->heads)))};
}

/* s->sum = f(fin), before dropout and the residual. */
static void sub_f_forward(const Ctx *x, const TfLayerWeights *lw, TfSub *s, const real *fin, int N,
                          Rng *rng)
{
    const ModelConfig *c = &x->m->cfg;
    int d = c->model_dim, F = c->ff;
    real p = x->p;
    if (s->kind == SUB_FF) {
        work_step_linear(&x->w->base, s->h, fin, lw->ff1_w, lw->ff1_b, &(LinearShape){N, d, F});
        nn_relu_forward(s->h, s->h, (size_t)N * F);
        if (x->masks) /* the mask goes to scratch: backward needs only h > 0 */
            nn_dropout_forward(s->h, x->w->dh, s->h, (size_t)N * F, p, rng);
        work_step_linear(&x->w->base, s->sum, s->h, lw->ff2_w, lw->ff2_b, &(LinearShape){N, F, d});
        return;
    }
    const TfAttnWeights *aw = s->kind == SUB_SELF ? &lw->self : &lw->cross;
    MhaShape sh = s->kind == SUB_SELF ? self_shape(x, d) : cross_shape(x, d);
    const real *K, *V;
    if (s->kind == SUB_SELF) {
        work_step_linear(&x->w->base, s->qkv, fin, aw->in_w, aw->in_b, &(LinearShape){N, d, 3 * d});
        if (x->kv_self) { /* append this step's keys and values to the cache */
            real *row = (real *)x->kv_self + (size_t)x->causal * N * 2 * d;
            for (int i = 0; i < N; i++)
                memcpy(row + (size_t)i * 2 * d, s->qkv + (size_t)i * 3 * d + d, 2 * (size_t)d * sizeof(real));
            K = x->kv_self;
        } else {
            K = s->qkv + d;
        }
    } else {
        work_step_linear(&x->w->base, s->qkv, fin, aw->in_w, aw->in_b, &(LinearShape){N, d, d});
        K = s->kv;
    }
    V = K + d;
    if (p > 0)
        nn_dropout_mask(s->adrop, (size_t)sh.B * sh.H * sh.Tq * sh.Tk, p, rng);
    nn_mha_forward(s->ctx, s->a, p > 0 ? s->adrop : NULL, &(MhaQkv){s->qkv, K, V}, &sh);
    work_step_linear(&x->w->base, s->sum, s->ctx, aw->out_w, aw->out_b, &(LinearShape){N, d, d});
}

/* Runs sublayer k of a layer on the stream `in`; returns the stream leaving it. */
static const real *sub_forward(const Ctx *x, const TfLayerWeights *lw, TfSub *s, int k,
                               const real *in, int N, Rng *rng)
{
    const ModelConfig *c = &x->m->cfg;
    int d = c->model_dim;
    size_t n = (size_t)N * d;
    s->in = in;
    bool pre = c->norm == NORM_PRE;
    const LnShape ln = {N, d, LN_EPS};
    const LnStats stat = {s->mean, s->rstd};
    if (pre)
        nn_layernorm_forward(s->ln, &stat, in, lw->norm_g[k], lw->norm_b[k], &ln);
    sub_f_forward(x, lw, s, pre ? s->ln : in, N, rng);
    if (x->masks)
        nn_dropout_forward(s->sum, s->mask, s->sum, n, x->p, rng);
    for (size_t i = 0; i < n; i++)
        s->sum[i] += in[i];
    if (pre)
        return s->sum;
    nn_layernorm_forward(s->ln, &stat, s->sum, lw->norm_g[k], lw->norm_b[k], &ln);
    return s->ln;
}

/* dfin += the gradient of f's input given dout (the gradient of f's output before
   dropout); the encoder output's gradient (cross-attention) goes to t->dmem. */
static void sub_f_backward(const Ctx *x, const TfLayerWeights *lw, TfLayerWeights *gw, TfSub *s,
                           const real *fin, const real *dout, real *dfin, int N)
{
    const ModelConfig *c = &x->m->cfg;
    TfWork *t = x->w;
    int d = c->model_dim, F = c->ff;
    if (s->kind == SUB_FF) {
        memset(t->dh, 0, (size_t)N * F * sizeof(real));
        nn_linear_backward(t->dh, gw->ff2_w, gw->ff2_b, dout, s->h, lw->ff2_w, &(LinearShape){N, F, d});
        /* ReLU and dropout together: a unit with h > 0 was kept, scaled by 1/(1-p);
           any other was cut by the ReLU or dropped */
        real keep = x->p > 0 ? (real)1 / ((real)1 - x->p) : 1;
        nn_relu_backward_inplace(t->dh, s->h, (size_t)N * F);
        if (keep != 1)
            nn_scale(t->dh, (size_t)N * F, keep);
        nn_linear_backward(dfin, gw->ff1_w, gw->ff1_b, t->dh, fin, lw->ff1_w, &(LinearShape){N, d, F});
        return;
    }
    bool self = s->kind == SUB_SELF;
    const TfAttnWeights *aw = self ? &lw->self : &lw->cross;
    TfAttnWeights *ga = self ? &gw->self : &gw->cross;
    MhaShape sh = self ? self_shape(x, d) : cross_shape(x, d);
    const real *adrop = x->p > 0 ? s->adrop : NULL;
    memset(t->dctx, 0, (size_t)N * d * sizeof(real));
    nn_linear_backward(t->dctx, ga->out_w, ga->out_b, dout, s->ctx, aw->out_w, &(LinearShape){N, d, d});
    if (self) {
        memset(t->dqkv, 0, (size_t)N * 3 * d * sizeof(real));
        nn_mha_backward(&(MhaQkvGrad){t->dqkv, t->dqkv + d, t->dqkv + 2 * d}, t->de, t->dctx, s->a,
                        adrop, &(MhaQkv){s->qkv, s->qkv + d, s->qkv + 2 * d}, &sh);
        nn_linear_backward(dfin, ga->in_w, ga->in_b, t->dqkv, fin, aw->in_w, &(LinearShape){N, d, 3 * d});
        return;
    }
    int Ns = x->b->S * x->b->B;
    memset(t->dqkv, 0, (size_t)N * d * sizeof(real));
    memset(t->dkv, 0, (size_t)Ns * 2 * d * sizeof(real));
    nn_mha_backward(&(MhaQkvGrad){t->dqkv, t->dkv, t->dkv + d}, t->de, t->dctx, s->a, adrop,
                    &(MhaQkv){s->qkv, s->kv, s->kv + d}, &sh);
    nn_linear_backward(dfin, ga->in_w, ga->in_b, t->dqkv, fin, aw->in_w, &(LinearShape){N, d, d});
    /* keys and values: rows d..3d of in_proj over the encoder output */
    nn_linear_backward(t->dmem, ga->in_w + (size_t)d * d, ga->in_b + d, t->dkv, t->memory,
                       aw->in_w + (size_t)d * d, &(LinearShape){Ns, d, 2 * d});
}

/* Given *dy, the gradient of the stream leaving sublayer k, leaves in *dy the gradient
   of the stream entering it (the buffers *dy and *spare may be swapped). */
static void sub_backward(const Ctx *x, const TfLayerWeights *lw, TfLayerWeights *gw, TfSub *s,
                         int k, real **dy, real **spare, int N)
{
    const ModelConfig *c = &x->m->cfg;
    TfWork *t = x->w;
    int d = c->model_dim;
    size_t n = (size_t)N * d;
    const LnShape ln = {N, d, LN_EPS};
    const LnStats stat = {s->mean, s->rstd};
    if (c->norm == NORM_PRE) {
        /* in + drop(f(LN(in))): the residual passes *dy through; f and LN add to it */
        memcpy(t->dtmp, *dy, n * sizeof(real));
        nn_dropout_backward_inplace(t->dtmp, s->mask, n);
        memset(t->dln, 0, n * sizeof(real));
        sub_f_backward(x, lw, gw, s, s->ln, t->dtmp, t->dln, N);
        nn_layernorm_backward(*dy, gw->norm_g[k], gw->norm_b[k], t->dln, s->in, &stat, lw->norm_g[k], &ln);
        return;
    }
    /* LN(in + drop(f(in))) */
    real *dsum = *spare;
    memset(dsum, 0, n * sizeof(real));
    nn_layernorm_backward(dsum, gw->norm_g[k], gw->norm_b[k], *dy, s->sum, &stat, lw->norm_g[k], &ln);
    memcpy(t->dtmp, dsum, n * sizeof(real));
    nn_dropout_backward_inplace(t->dtmp, s->mask, n);
    sub_f_backward(x, lw, gw, s, s->in, t->dtmp, dsum, N);
    *spare = *dy;
    *dy = dsum;
}

/* ------------------------------------------------------------------ stacks */

static void encoder_forward(Model *m, TfWork *w, const Batch *b, Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    TfWork *t = w;
    int B = b->B, S = b->S, N = S * B, d = c->model_dim;
    Ctx x = {.m = m, .w = w, .b = b, .Tq = S, .Tk = S, .causal = -1, .masks = w->base.training,
             .p = t->p};
    Side src = side_of(m, w, false);
    embed_forward(m, w, &src, b->src, N, B, 0, rng);
    const real *h = t->xs;
    for (int l = 0; l < c->layers; l++)
        for (int k = 0; k < 2; k++)
            h = sub_forward(&x, &tf_weights(m)->enc[l], &t->enc[l].sub[k], k, h, N, rng);
    if (c->norm == NORM_PRE) {
        nn_layernorm_forward(t->enc_ln, &(LnStats){t->enc_mean, t->enc_rstd}, h, tf_weights(m)->enc_norm_g,
                             tf_weights(m)->enc_norm_b, &(LnShape){N, d, LN_EPS});
        h = t->enc_ln;
    }
    t->memory = h;
}

/* Keys and values of the encoder output for every decoder layer's cross-attention. */
static void cross_kv_forward(Model *m, TfWork *w, const Batch *b)
{
    TfWork *t = w;
    int d = m->cfg.model_dim, N = b->S * b->B;
    for (int l = 0; l < m->cfg.layers; l++) {
        const TfAttnWeights *aw = &tf_weights(m)->dec[l].cross;
        nn_linear_forward(t->dec[l].sub[1].kv, t->memory, aw->in_w + (size_t)d * d, aw->in_b + d,
                          &(LinearShape){N, d, 2 * d});
    }
}

/* The decoder over N rows starting at position t0 (all steps in training, one step
   when decoding, which also writes the step's logits (B,V)). */
static void decoder_forward(Model *m, TfWork *w, const Batch *b, const int *ids, int Tq, int t0,
                            Rng *rng)
{
    const ModelConfig *c = &m->cfg;
    TfWork *t = w;
    int B = b->B, N = Tq * B, d = c->model_dim;
    bool decoding = w->base.kind == WORK_DECODE;
    Ctx x = {.m = m, .w = w, .b = b, .Tq = Tq, .causal = decoding ? t0 : 0,
             .masks = w->base.training, .p = t->p};
    Side tgt = side_of(m, w, true);
    embed_forward(m, w, &tgt, ids, N, B, t0, rng);
    const real *h = t->xt;
    for (int l = 0; l < c->layers; l++) {
        x.kv_self = decoding ? t->dec[l].cache : NULL;
        for (int k = 0; k < 3; k++)
            h = sub_forward(&x, &tf_weights(m)->dec[l], &t->dec[l].sub[k], k, h, N, rng);
    }
    if (c->norm == NORM_PRE) {
        nn_layernorm_forward(t->dec_ln, &(LnStats){t->dec_mean, t->dec_rstd}, h, tf_weights(m)->dec_norm_g,
                             tf_weights(m)->dec_norm_b, &(LnShape){N, d, LN_EPS});
        h = t->dec_ln;
    }
    t->top = h;
    if (decoding)
        work_step_linear(&w->base, w->base.logits, h, tf_weights(m)->proj_w, tf_weights(m)->proj_b,
                         &(LinearShape){N, d, c->tgt_vocab});
}

/* The output layer's gradient goes where the backward pass starts: the final norm's
   output (pre-norm) or the decoder's output. */
static real *top_grad(Model *m, TfWork *t) { return m->cfg.norm == NORM_PRE ? t->dln : t->dy; }

static double tf_forward(Model *m, Work *base, const Batch *b, Rng *rng, bool grad)
{
    TfWork *w = (TfWork *)base;
    const ModelConfig *c = &m->cfg;
    const TfWeights *W = tf_weights(m);
    TfWeights *G = tf_grads(m);
    w->p = rng && base->training ? c->dropout : 0;
    encoder_forward(m, w, b, rng);
    cross_kv_forward(m, w, b);
    decoder_forward(m, w, b, b->tgt_in, b->T, 0, rng);
    OutputLayer o = work_output(base, W->proj_w, W->proj_b, grad ? G->proj_w : NULL, grad ? G->proj_b : NULL,
                                c->model_dim, grad);
    real scale = grad ? (real)(1.0 / (double)b->ntok) : 0;
    OutputLoss r = output_loss(&o, w->top, b->tgt_out, b->T * b->B, scale, grad ? top_grad(m, w) : NULL);
    base->nll = r.nll;
    return r.loss;
}

static void tf_backward(Model *m, Work *base, const Batch *b)
{
    const ModelConfig *c = &m->cfg;
    TfWork *t = (TfWork *)base, *w = t;
    int B = b->B, d = c->model_dim, Nt = b->T * B, Ns = b->S * B;
    bool pre = c->norm == NORM_PRE;
    TfWeights *g = tf_grads(m);
    /* the output layer's gradient is in top_grad (tf_forward) */
    real *dy = t->dy, *spare = t->dx;
    if (pre) {
        memset(dy, 0, (size_t)Nt * d * sizeof(real));
        /* the final norm reads the last sublayer's sum */
        nn_layernorm_backward(dy, g->dec_norm_g, g->dec_norm_b, t->dln, t->dec[c->layers - 1].sub[2].sum,
                              &(LnStats){t->dec_mean, t->dec_rstd}, tf_weights(m)->dec_norm_g,
                              &(LnShape){Nt, d, LN_EPS});
    }
    /* decoder stack in reverse; its cross-attention fills dmem */
    memset(t->dmem, 0, (size_t)Ns * d * sizeof(real));
    Ctx x = {.m = m, .w = w, .b = b, .Tq = b->T, .Tk = b->T, .causal = 0, .masks = true, .p = t->p};
    for (int l = c->layers - 1; l >= 0; l--)
        for (int k = 2; k >= 0; k--)
            sub_backward(&x, &tf_weights(m)->dec[l], &g->dec[l], &t->dec[l].sub[k], k, &dy, &spare, Nt);
    Side tgt = side_of(m, t, true), src = side_of(m, t, false);
    embed_backward(m, &tgt, dy, b->tgt_in, Nt, B);
    /* encoder: from the gradient of its output */
    dy = t->dy;
    spare = t->dx;
    if (pre) {
        memset(dy, 0, (size_t)Ns * d * sizeof(real));
        nn_layernorm_backward(dy, g->enc_norm_g, g->enc_norm_b, t->dmem, t->enc[c->layers - 1].sub[1].sum,
                              &(LnStats){t->enc_mean, t->enc_rstd}, tf_weights(m)->enc_norm_g,
                              &(LnShape){Ns, d, LN_EPS});
    } else {
        memcpy(dy, t->dmem, (size_t)Ns * d * sizeof(real));
    }
    x = (Ctx){.m = m, .w = w, .b = b, .Tq = b->S, .Tk = b->S, .causal = -1, .masks = true, .p = t->p};
    for (int l = c->layers - 1; l >= 0; l--)
        for (int k = 1; k >= 0; k--)
            sub_backward(&x, &tf_weights(m)->enc[l], &g->enc[l], &t->enc[l].sub[k], k, &dy, &spare, Ns);
    embed_backward(m, &src, dy, b->src, Ns, B);
}

/* ------------------------------------------------------------------ decoding */

static void tf_encode(Model *m, Work *base, const Batch *b)
{
    TfWork *w = (TfWork *)base;
    CHECK(base->kind == WORK_DECODE);
    w->p = 0;
    encoder_forward(m, w, b, NULL);
    cross_kv_forward(m, w, b);
}

static void tf_decode_step(Model *m, Work *base, const Batch *b, const int *prev, int t)
{
    TfWork *w = (TfWork *)base;
    CHECK(base->kind == WORK_DECODE && t == base->T);
    decoder_forward(m, w, b, prev, 1, t, NULL);
    /* the attention shown: a layer's weights over the source (the last by default),
       one head's or the heads' mean (base->show_layer, base->show_head) */
    TfWork *tw = w;
    int B = b->B, S = b->S, H = m->cfg.heads;
    int layer = base->show_layer >= 0 && base->show_layer < m->cfg.layers ? base->show_layer : m->cfg.layers - 1;
    int head = base->show_head < H ? base->show_head : -1;
    const real *a = tw->dec[layer].sub[1].a; /* (B,H,1,S) */
    for (int r = 0; r < B; r++)
        for (int j = 0; j < S; j++) {
            real s = 0;
            for (int h = head < 0 ? 0 : head; h < (head < 0 ? H : head + 1); h++)
                s += a[((size_t)r * H + h) * S + j];
            tw->ashow[(size_t)r * S + j] = head < 0 ? s / (real)H : s;
        }
}

static const real *tf_step_attention(const Work *w) { return ((const TfWork *)w)->ashow; }

static void tf_expand_rows(Model *m, Work *base, const Batch *b, const int *from, int n)
{
    TfWork *t = (TfWork *)base;
    int B = b->B, S = b->S;
    size_t width = 2 * (size_t)m->cfg.model_dim;
    for (int l = 0; l < m->cfg.layers; l++) {
        work_gather_rows(base, t->dec[l].sub[1].kv, t->dec[l].sub[1].kv, S, B, n, width, from);
        if (base->T)
            work_gather_rows(base, t->dec[l].cache, t->dec[l].cache, base->T, B, n, width, from);
    }
}

static void tf_select_rows(Model *m, Work *base, const Batch *b, const int *from, int t)
{
    TfWork *tw = (TfWork *)base;
    if (t == 0)
        return;
    for (int l = 0; l < m->cfg.layers; l++)
        work_gather_rows(base, tw->dec[l].cache, tw->dec[l].cache, t, b->B, b->B, 2 * (size_t)m->cfg.model_dim, from);
}

static int tf_attention_layers(const Model *m) { return m->cfg.layers; }

const ModelOps tf_ops = {
    .name = "transformer",
    .title = "Transformer",
    .config_keys = tf_config_keys,
    .config_optional = tf_config_optional,
    .config_put = tf_config_put,
    .config_get = tf_config_get,
    .check = tf_check,
    .walk = tf_walk,
    .views_size = sizeof(TfWeights),
    .init_random = tf_init_random,
    .max_positions = tf_max_positions,
    .work_bytes = tf_work_bytes,
    .work_new = tf_work_new,
    .work_free = tf_work_free,
    .forward = tf_forward,
    .backward = tf_backward,
    .encode = tf_encode,
    .decode_step = tf_decode_step,
    .step_attention = tf_step_attention,
    .expand_rows = tf_expand_rows,
    .select_rows = tf_select_rows,
    .quantize = tf_quantize,
    .attention_layers = tf_attention_layers,
};
