/* The recurrent model's parameters (their walk in the order of docs/model.md, views,
   initialisation), the checks of its options, and the matrices its decoder step
   quantizes. */
#include "model/rnn_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/params.h"
#include "model/work.h"

static void add_rnn(ParamWalk *w, RnnWeights *rw, const char *module, int layer, const char *suffix, int gates,
                    int hc, int in)
{
    rw->w_ih = param_addf(w, gates * hc, in, "%s.weight_ih_l%d%s", module, layer, suffix);
    rw->w_hh = param_addf(w, gates * hc, hc, "%s.weight_hh_l%d%s", module, layer, suffix);
    rw->b_ih = param_addf(w, gates * hc, 0, "%s.bias_ih_l%d%s", module, layer, suffix);
    rw->b_hh = param_addf(w, gates * hc, 0, "%s.bias_hh_l%d%s", module, layer, suffix);
}

void rnn_walk(ParamWalk *w, void *views, const ModelConfig *c)
{
    Weights *ws = views;
    memset(ws, 0, sizeof *ws);
    int G = model_gates(c), E = c->emb, H = c->hidden, D = c->dec_hidden, A = c->attn,
        P = c->deep_out, K = model_enc_size(c), dirs = c->bidir ? 2 : 1;

    ws->src_emb = param_add(w, "src_emb.weight", c->src_vocab, E);
    ws->tgt_emb = param_add(w, "tgt_emb.weight", c->tgt_vocab, E);
    for (int l = 0; l < c->layers; l++)
        for (int d = 0; d < dirs; d++)
            add_rnn(w, &ws->enc[l][d], "encoder", l, d ? "_reverse" : "", G, H, l ? K : E);
    bool linear_maps = c->bridge != BRIDGE_ZERO;
    for (int l = 0; l < c->layers && linear_maps; l++) {
        ws->bridge_w[l] = param_addf(w, D, K, "bridge.%d.weight", l);
        ws->bridge_b[l] = param_addf(w, D, 0, "bridge.%d.bias", l);
    }
    if (c->cell == CELL_LSTM)
        for (int l = 0; l < c->layers && linear_maps; l++) {
            ws->bridge_cw[l] = param_addf(w, D, K, "bridge_c.%d.weight", l);
            ws->bridge_cb[l] = param_addf(w, D, 0, "bridge_c.%d.bias", l);
        }
    if (c->bridge == BRIDGE_ATTN_POOL) {
        ws->pool_w = param_add(w, "bridge_pool.proj.weight", A, K);
        ws->pool_b = param_add(w, "bridge_pool.proj.bias", A, 0);
        ws->pool_ctx = param_add(w, "bridge_pool.context.weight", 1, A);
    }
    AttnKind at = c->attention;
    if (model_attn_projects_query(c))
        ws->att_q = param_add(w, "attention.query.weight", A, D);
    int Ak = model_key_size(c);
    if (Ak)
        ws->att_k = param_add(w, "attention.key.weight", Ak, K);
    if (at == ATT_BAHDANAU)
        ws->att_kb = param_add(w, "attention.key.bias", A, 0);
    if (model_attn_additive(c))
        ws->att_v = param_add(w, "attention.v.weight", 1, A);
    if (at == ATT_MULTIHEAD) {
        ws->att_val = param_add(w, "attention.value.weight", A, K);
        ws->att_out = param_add(w, "attention.out.weight", K, A);
    }
    if (c->local == LOCAL_P) {
        ws->att_pos = param_add(w, "attention.pos.weight", A, D);
        ws->att_pos_v = param_add(w, "attention.pos_v.weight", 1, A);
    }
    for (int l = 0; l < c->layers; l++)
        add_rnn(w, &ws->dec[l], "decoder", l, "", G, D, l ? D : model_dec_in_size(c));
    ws->pre_w = param_add(w, "out.pre.weight", P, model_pre_in_size(c));
    ws->pre_b = param_add(w, "out.pre.bias", P, 0);
    ws->proj_w = c->tie_embeddings ? ws->tgt_emb : param_add(w, "out.proj.weight", c->tgt_vocab, P);
    ws->proj_b = param_add(w, "out.proj.bias", c->tgt_vocab, 0);
}

int rnn_max_positions(const Model *m) { return 0; }

void rnn_init_random(Model *m, Rng *rng)
{
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

int rnn_check(const ModelConfig *c, Err *e)
{
    if (c->layers < 1 || c->layers > MODEL_MAX_LAYERS)
        return err_set(e, "--layers must be between 1 and %d, got %d", MODEL_MAX_LAYERS, c->layers);
    const struct { const char *flag; int v; } sizes[] = {
        {"--emb", c->emb}, {"--hidden", c->hidden}, {"--dec-hidden", c->dec_hidden},
        {"--attn-size", c->attn}, {"--deep-out", c->deep_out},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v < 1 || sizes[i].v > 8192)
            return err_set(e, "%s must be between 1 and 8192, got %d", sizes[i].flag, sizes[i].v);
    if (c->tie_embeddings && c->deep_out != c->emb)
        return err_set(e, "--tie-embeddings needs --deep-out equal to --emb (%d != %d)", c->deep_out, c->emb);
    if (c->heads < 1 || (c->attention != ATT_MULTIHEAD && c->heads != 1))
        return err_set(e, "--heads needs --attention multihead");
    if (c->attention == ATT_MULTIHEAD && c->attn % c->heads != 0)
        return err_set(e, "--heads %d does not divide --attn-size %d", c->heads, c->attn);
    if (!model_luong(c) && c->local != LOCAL_NONE)
        return err_set(e, "--local needs a Luong-path attention (luong-dot, luong-general, luong-concat, "
                          "scaled-dot or multihead), not %s", attn_name(c->attention));
    if (!model_luong(c) && c->input_feed)
        return err_set(e, "--input-feed needs a Luong-path attention (luong-dot, luong-general, "
                          "luong-concat, scaled-dot or multihead), not %s", attn_name(c->attention));
    if (c->local == LOCAL_NONE && c->window != 0)
        return err_set(e, "--window needs --local m or --local p");
    if (c->local != LOCAL_NONE && (c->window < 1 || c->window > 8192))
        return err_set(e, "--window must be between 1 and 8192, got %d", c->window);
    return model_config_check_common(c, e);
}


/* The matrices a decoding step multiplies by, with the shapes work_step_linear gets. */
void rnn_quantize(Model *m, Precision p)
{
    if (p == PREC_F32)
        return;
    const ModelConfig *c = &m->cfg;
    const Weights *w = rnn_weights(m);
    int D = c->dec_hidden, A = c->attn, G = model_gates(c) * D;
    for (int l = 0; l < c->layers; l++) {
        model_quantize(m, w->dec[l].w_ih, G, l > 0 ? D : model_dec_in_size(c), p);
        model_quantize(m, w->dec[l].w_hh, G, D, p);
    }
    if (model_attn_projects_query(c))
        model_quantize(m, w->att_q, A, D, p);
    if (c->local == LOCAL_P)
        model_quantize(m, w->att_pos, A, D, p);
    if (c->attention == ATT_MULTIHEAD)
        model_quantize(m, w->att_out, model_enc_size(c), A, p);
    model_quantize(m, w->pre_w, c->deep_out, model_pre_in_size(c), p);
    model_quantize(m, w->proj_w, c->tgt_vocab, c->deep_out, p);
}
