#include "model/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/*
 * The one place that defines the order, names and shapes of the parameters.
 * It either records ParamInfo entries (info != NULL) or binds pointers (base != NULL).
 */
typedef struct Walker {
    ParamInfo *info;
    int n;
    size_t total;
    real *base;
} Walker;

static real *add(Walker *w, const char *name, int rows, int cols)
{
    size_t size = (size_t)rows * (size_t)(cols ? cols : 1);
    if (w->info) {
        ParamInfo *p = &w->info[w->n];
        CHECK(strlen(name) < PARAM_NAME_MAX);
        strcpy(p->name, name);
        p->ndim = cols ? 2 : 1;
        p->shape[0] = rows;
        p->shape[1] = cols;
        p->offset = w->total;
        p->size = size;
    }
    real *ptr = w->base ? w->base + w->total : NULL;
    w->n++;
    w->total += size;
    return ptr;
}

static void add_rnn(Walker *w, RnnWeights *rw, const char *module, int layer, const char *suffix,
                    int gates, int hc, int in)
{
    char name[PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.weight_ih_l%d%s", module, layer, suffix);
    rw->w_ih = add(w, name, gates * hc, in);
    snprintf(name, sizeof name, "%s.weight_hh_l%d%s", module, layer, suffix);
    rw->w_hh = add(w, name, gates * hc, hc);
    snprintf(name, sizeof name, "%s.bias_ih_l%d%s", module, layer, suffix);
    rw->b_ih = add(w, name, gates * hc, 0);
    snprintf(name, sizeof name, "%s.bias_hh_l%d%s", module, layer, suffix);
    rw->b_hh = add(w, name, gates * hc, 0);
}

static void walk(Walker *w, Weights *out, const ModelConfig *c)
{
    Weights dummy;
    Weights *ws = out ? out : &dummy;
    memset(ws, 0, sizeof *ws);
    int G = model_gates(c), E = c->emb, H = c->hidden, D = c->dec_hidden, A = c->attn,
        P = c->deep_out, K = model_enc_size(c), dirs = c->bidir ? 2 : 1;
    char name[PARAM_NAME_MAX];

    ws->src_emb = add(w, "src_emb.weight", c->src_vocab, E);
    ws->tgt_emb = add(w, "tgt_emb.weight", c->tgt_vocab, E);
    for (int l = 0; l < c->layers; l++)
        for (int d = 0; d < dirs; d++)
            add_rnn(w, &ws->enc[l][d], "encoder", l, d ? "_reverse" : "", G, H, l ? K : E);
    bool linear_maps = c->bridge != BRIDGE_ZERO;
    for (int l = 0; l < c->layers && linear_maps; l++) {
        snprintf(name, sizeof name, "bridge.%d.weight", l);
        ws->bridge_w[l] = add(w, name, D, K);
        snprintf(name, sizeof name, "bridge.%d.bias", l);
        ws->bridge_b[l] = add(w, name, D, 0);
    }
    if (c->cell == CELL_LSTM)
        for (int l = 0; l < c->layers && linear_maps; l++) {
            snprintf(name, sizeof name, "bridge_c.%d.weight", l);
            ws->bridge_cw[l] = add(w, name, D, K);
            snprintf(name, sizeof name, "bridge_c.%d.bias", l);
            ws->bridge_cb[l] = add(w, name, D, 0);
        }
    if (c->bridge == BRIDGE_ATTN_POOL) {
        ws->pool_w = add(w, "bridge_pool.proj.weight", A, K);
        ws->pool_b = add(w, "bridge_pool.proj.bias", A, 0);
        ws->pool_ctx = add(w, "bridge_pool.context.weight", 1, A);
    }
    AttnKind at = c->attention;
    if (model_attn_projects_query(c))
        ws->att_q = add(w, "attention.query.weight", A, D);
    int Ak = model_key_size(c);
    if (Ak)
        ws->att_k = add(w, "attention.key.weight", Ak, K);
    if (at == ATT_BAHDANAU)
        ws->att_kb = add(w, "attention.key.bias", A, 0);
    if (model_attn_additive(c))
        ws->att_v = add(w, "attention.v.weight", 1, A);
    if (at == ATT_MULTIHEAD) {
        ws->att_val = add(w, "attention.value.weight", A, K);
        ws->att_out = add(w, "attention.out.weight", K, A);
    }
    if (c->local == LOCAL_P) {
        ws->att_pos = add(w, "attention.pos.weight", A, D);
        ws->att_pos_v = add(w, "attention.pos_v.weight", 1, A);
    }
    for (int l = 0; l < c->layers; l++)
        add_rnn(w, &ws->dec[l], "decoder", l, "", G, D, l ? D : model_dec_in_size(c));
    ws->pre_w = add(w, "out.pre.weight", P, model_pre_in_size(c));
    ws->pre_b = add(w, "out.pre.bias", P, 0);
    ws->proj_w = c->tie_embeddings ? ws->tgt_emb : add(w, "out.proj.weight", c->tgt_vocab, P);
    ws->proj_b = add(w, "out.proj.bias", c->tgt_vocab, 0);
}

static void add_tf_attn(Walker *w, TfAttnWeights *a, const char *prefix, int d)
{
    char name[PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.in_proj_weight", prefix);
    a->in_w = add(w, name, 3 * d, d);
    snprintf(name, sizeof name, "%s.in_proj_bias", prefix);
    a->in_b = add(w, name, 3 * d, 0);
    snprintf(name, sizeof name, "%s.out_proj.weight", prefix);
    a->out_w = add(w, name, d, d);
    snprintf(name, sizeof name, "%s.out_proj.bias", prefix);
    a->out_b = add(w, name, d, 0);
}

static void add_tf_layer(Walker *w, TfLayerWeights *lw, const char *stack, int l, bool decoder,
                         int d, int F)
{
    char prefix[PARAM_NAME_MAX], name[PARAM_NAME_MAX + 16];
    snprintf(prefix, sizeof prefix, "%s.layers.%d.self_attn", stack, l);
    add_tf_attn(w, &lw->self, prefix, d);
    if (decoder) {
        snprintf(prefix, sizeof prefix, "%s.layers.%d.multihead_attn", stack, l);
        add_tf_attn(w, &lw->cross, prefix, d);
    }
    snprintf(name, sizeof name, "%s.layers.%d.linear1.weight", stack, l);
    lw->ff1_w = add(w, name, F, d);
    snprintf(name, sizeof name, "%s.layers.%d.linear1.bias", stack, l);
    lw->ff1_b = add(w, name, F, 0);
    snprintf(name, sizeof name, "%s.layers.%d.linear2.weight", stack, l);
    lw->ff2_w = add(w, name, d, F);
    snprintf(name, sizeof name, "%s.layers.%d.linear2.bias", stack, l);
    lw->ff2_b = add(w, name, d, 0);
    for (int k = 0; k < (decoder ? 3 : 2); k++) {
        snprintf(name, sizeof name, "%s.layers.%d.norm%d.weight", stack, l, k + 1);
        lw->norm_g[k] = add(w, name, d, 0);
        snprintf(name, sizeof name, "%s.layers.%d.norm%d.bias", stack, l, k + 1);
        lw->norm_b[k] = add(w, name, d, 0);
    }
}

/* The Transformer, in the order of its PyTorch module's state_dict. */
static void walk_tf(Walker *w, TfWeights *out, const ModelConfig *c)
{
    TfWeights dummy;
    TfWeights *ws = out ? out : &dummy;
    memset(ws, 0, sizeof *ws);
    int d = c->model_dim, F = c->ff;
    ws->src_emb = add(w, "src_emb.weight", c->src_vocab, d);
    ws->tgt_emb = add(w, "tgt_emb.weight", c->tgt_vocab, d);
    if (c->positions == POS_LEARNED) {
        ws->src_pos = add(w, "src_pos.weight", c->max_positions, d);
        ws->tgt_pos = add(w, "tgt_pos.weight", c->max_positions, d);
    }
    for (int l = 0; l < c->layers; l++)
        add_tf_layer(w, &ws->enc[l], "encoder", l, false, d, F);
    if (c->norm == NORM_PRE) {
        ws->enc_norm_g = add(w, "encoder.norm.weight", d, 0);
        ws->enc_norm_b = add(w, "encoder.norm.bias", d, 0);
    }
    for (int l = 0; l < c->layers; l++)
        add_tf_layer(w, &ws->dec[l], "decoder", l, true, d, F);
    if (c->norm == NORM_PRE) {
        ws->dec_norm_g = add(w, "decoder.norm.weight", d, 0);
        ws->dec_norm_b = add(w, "decoder.norm.bias", d, 0);
    }
    ws->proj_w = c->tie_embeddings ? ws->tgt_emb : add(w, "out.proj.weight", c->tgt_vocab, d);
    ws->proj_b = add(w, "out.proj.bias", c->tgt_vocab, 0);
}

static void walk_any(Walker *w, const ModelConfig *c)
{
    if (c->arch == ARCH_TRANSFORMER)
        walk_tf(w, NULL, c);
    else
        walk(w, NULL, c);
}

void param_layout_init(ParamLayout *l, const ModelConfig *c)
{
    Walker count = {0};
    walk_any(&count, c);
    Walker rec = {.info = xcalloc((size_t)count.n, sizeof(ParamInfo))};
    walk_any(&rec, c);
    l->info = rec.info;
    l->n = rec.n;
    l->total = rec.total;
}

void param_layout_free(ParamLayout *l)
{
    free(l->info);
    l->info = NULL;
    l->n = 0;
}

void weights_bind(Weights *w, real *base, const ModelConfig *c)
{
    Walker bind = {.base = base};
    walk(&bind, w, c);
}

void tf_weights_bind(TfWeights *w, real *base, const ModelConfig *c)
{
    Walker bind = {.base = base};
    walk_tf(&bind, w, c);
}

int param_find(const ParamLayout *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->info[i].name, name) == 0)
            return i;
    return -1;
}
