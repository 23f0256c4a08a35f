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

/* ------------------------------------------------------------------ s2s.config */

/* A recurrent model's keys in s2s.config, in the order written. Its file may lack
   "arch" and the keys added with the attention variants (files written before them):
   they get the defaults (Bahdanau, linear bridge). */
const char *const rnn_config_keys[] = {
    "arch", "cell", "layers", "bidir", "emb", "hidden", "dec_hidden", "attn", "attention", "heads",
    "local", "window", "input_feed", "bridge", "deep_out", "dropout", "label_smoothing",
    "tie_embeddings", NULL,
};
const char *const rnn_config_optional[] = {"arch", "heads", "local", "window", "input_feed", "bridge", NULL};

void rnn_config_put(const ModelConfig *c, JsonWriter *w)
{
    json_put_str(w, "cell", cell_name(c->cell));
    json_put_int(w, "layers", c->layers);
    json_put_bool(w, "bidir", c->bidir);
    json_put_int(w, "emb", c->emb);
    json_put_int(w, "hidden", c->hidden);
    json_put_int(w, "dec_hidden", c->dec_hidden);
    json_put_int(w, "attn", c->attn);
    json_put_str(w, "attention", attn_name(c->attention));
    json_put_int(w, "heads", c->heads);
    json_put_str(w, "local", local_name(c->local));
    json_put_int(w, "window", c->window);
    json_put_bool(w, "input_feed", c->input_feed);
    json_put_str(w, "bridge", bridge_name(c->bridge));
    json_put_int(w, "deep_out", c->deep_out);
    cfg_put_common(c, w);
}

static const IntKey rnn_ints[] = {
    INT_KEY("layers", 1, MODEL_MAX_LAYERS, layers), INT_KEY("emb", 1, 8192, emb),
    INT_KEY("hidden", 1, 8192, hidden),           INT_KEY("dec_hidden", 1, 8192, dec_hidden),
    INT_KEY("attn", 1, 8192, attn),               INT_KEY("deep_out", 1, 8192, deep_out),
    {NULL, 0, 0, 0},
};

int rnn_config_get(const JsonVal *root, ModelConfig *c, const char *where, Err *e)
{
    ModelConfig n = *c;
    n.arch = ARCH_RNN;
    static const char *const cells[] = {"gru", "lstm"};
    int cell = cfg_str(root, "cell", cells, 2, where, e);
    int att = cell < 0 ? -1 : cfg_str(root, "attention", attn_names, ATT_KINDS, where, e);
    if (att < 0)
        return -1;
    n.cell = cell == 0 ? CELL_GRU : CELL_LSTM;
    n.attention = (AttnKind)att;
    n.heads = 1;
    n.local = LOCAL_NONE;
    n.window = 0;
    n.input_feed = false;
    n.bridge = BRIDGE_LINEAR;
    if (json_get(root, "local")) {
        int lk = cfg_str(root, "local", local_names, LOCAL_KINDS, where, e);
        if (lk < 0)
            return -1;
        n.local = (LocalKind)lk;
    }
    if (json_get(root, "bridge")) {
        int bk = cfg_str(root, "bridge", bridge_names, BRIDGE_KINDS, where, e);
        if (bk < 0)
            return -1;
        n.bridge = (BridgeKind)bk;
    }
    if ((json_get(root, "heads") && cfg_int(root, "heads", 1, 8192, &n.heads, where, e)) ||
        (json_get(root, "window") && cfg_int(root, "window", 0, 8192, &n.window, where, e)) ||
        (json_get(root, "input_feed") && cfg_bool(root, "input_feed", &n.input_feed, where, e)))
        return -1;
    if (cfg_ints(root, rnn_ints, &n, where, e) || cfg_bool(root, "bidir", &n.bidir, where, e) ||
        cfg_common(root, &n, where, e))
        return -1;
    const char *bad = NULL;
    if (n.attention != ATT_MULTIHEAD && n.heads != 1)
        bad = "'heads' must be 1 unless 'attention' is \"multihead\"";
    else if (n.attn % n.heads != 0)
        bad = "'heads' must divide 'attn'";
    else if (!model_luong(&n) && (n.local != LOCAL_NONE || n.input_feed))
        bad = "'local' and 'input_feed' need a Luong-path 'attention'";
    else if ((n.local == LOCAL_NONE) != (n.window == 0))
        bad = "'window' must be 0 without 'local' and at least 1 with it";
    if (bad)
        return err_set(e, "%s: %s", where, bad);
    if (n.tie_embeddings && n.deep_out != n.emb)
        return err_set(e, "%s: 'tie_embeddings' needs 'deep_out' equal to 'emb' (%d != %d)", where,
                       n.deep_out, n.emb);
    *c = n;
    return 0;
}
