/* The Transformer's parameters (their walk in the order of its PyTorch module's
   state_dict, views, initialisation), the checks of its options, and the matrices its
   decoder step quantizes. */
#include "model/transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/params.h"

static void add_attn(ParamWalk *w, TfAttnWeights *a, const char *prefix, int d)
{
    a->in_w = param_addf(w, 3 * d, d, "%s.in_proj_weight", prefix);
    a->in_b = param_addf(w, 3 * d, 0, "%s.in_proj_bias", prefix);
    a->out_w = param_addf(w, d, d, "%s.out_proj.weight", prefix);
    a->out_b = param_addf(w, d, 0, "%s.out_proj.bias", prefix);
}

static void add_layer(ParamWalk *w, TfLayerWeights *lw, const char *stack, int l, bool decoder, const ModelConfig *c)
{
    int d = c->model_dim, F = c->ff;
    char prefix[PARAM_NAME_MAX];
    snprintf(prefix, sizeof prefix, "%s.layers.%d.self_attn", stack, l);
    add_attn(w, &lw->self, prefix, d);
    if (decoder) {
        snprintf(prefix, sizeof prefix, "%s.layers.%d.multihead_attn", stack, l);
        add_attn(w, &lw->cross, prefix, d);
    }
    lw->ff1_w = param_addf(w, F, d, "%s.layers.%d.linear1.weight", stack, l);
    lw->ff1_b = param_addf(w, F, 0, "%s.layers.%d.linear1.bias", stack, l);
    lw->ff2_w = param_addf(w, d, F, "%s.layers.%d.linear2.weight", stack, l);
    lw->ff2_b = param_addf(w, d, 0, "%s.layers.%d.linear2.bias", stack, l);
    for (int k = 0; k < (decoder ? 3 : 2); k++) {
        lw->norm_g[k] = param_addf(w, d, 0, "%s.layers.%d.norm%d.weight", stack, l, k + 1);
        lw->norm_b[k] = param_addf(w, d, 0, "%s.layers.%d.norm%d.bias", stack, l, k + 1);
    }
}

/* The Transformer, in the order of its PyTorch module's state_dict. */
void tf_walk(ParamWalk *w, void *views, const ModelConfig *c)
{
    TfWeights *ws = views;
    memset(ws, 0, sizeof *ws);
    int d = c->model_dim;
    ws->src_emb = param_add(w, "src_emb.weight", c->src_vocab, d);
    ws->tgt_emb = c->share_embeddings ? ws->src_emb : param_add(w, "tgt_emb.weight", c->tgt_vocab, d);
    if (c->positions == POS_LEARNED) {
        ws->src_pos = param_add(w, "src_pos.weight", c->max_positions, d);
        ws->tgt_pos = param_add(w, "tgt_pos.weight", c->max_positions, d);
    }
    for (int l = 0; l < c->layers; l++)
        add_layer(w, &ws->enc[l], "encoder", l, false, c);
    if (c->norm == NORM_PRE) {
        ws->enc_norm_g = param_add(w, "encoder.norm.weight", d, 0);
        ws->enc_norm_b = param_add(w, "encoder.norm.bias", d, 0);
    }
    for (int l = 0; l < c->layers; l++)
        add_layer(w, &ws->dec[l], "decoder", l, true, c);
    if (c->norm == NORM_PRE) {
        ws->dec_norm_g = param_add(w, "decoder.norm.weight", d, 0);
        ws->dec_norm_b = param_add(w, "decoder.norm.bias", d, 0);
    }
    ws->proj_w = c->tie_embeddings ? ws->tgt_emb : param_add(w, "out.proj.weight", c->tgt_vocab, d);
    ws->proj_b = param_add(w, "out.proj.bias", c->tgt_vocab, 0);
}

int tf_max_positions(const Model *m) { return m->cfg.positions == POS_LEARNED ? m->cfg.max_positions : 0; }

/* nn.Transformer's initialisation for the layers (Xavier-uniform weights, zero attention
   biases, PyTorch's default U(±1/sqrt(fan_in)) for the feed-forward biases, norms 1
   and 0); embeddings, learned positions and the output projection N(0, 1/d) (the token
   embeddings are scaled by sqrt(d) on the way in), its bias 0. */
void tf_init_random(Model *m, Rng *rng)
{
    int d = m->cfg.model_dim;
    for (int i = 0; i < m->layout.n; i++) {
        const ParamInfo *p = &m->layout.info[i];
        real *x = m->params + p->offset;
        const char *n = p->name;
        bool is_norm = strstr(n, ".norm") != NULL;
        if (strstr(n, "_emb.") || strstr(n, "_pos.") || strcmp(n, "out.proj.weight") == 0) {
            double sd = 1.0 / sqrt((double)d);
            for (size_t k = 0; k < p->size; k++)
                x[k] = (real)(sd * rng_normal(rng));
        } else if (is_norm) {
            bool gain = strstr(n, ".weight") != NULL;
            for (size_t k = 0; k < p->size; k++)
                x[k] = gain ? 1 : 0;
        } else if (p->ndim == 2) {
            double bound = sqrt(6.0 / (double)(p->shape[0] + p->shape[1]));
            for (size_t k = 0; k < p->size; k++)
                x[k] = (real)((2.0 * rng_uniform(rng) - 1.0) * bound);
        } else if (strstr(n, ".linear")) {
            /* the bias of linear1 (fan-in d) or linear2 (fan-in F) */
            int fan_in = strstr(n, ".linear1.") ? d : m->cfg.ff;
            double bound = 1.0 / sqrt((double)fan_in);
            for (size_t k = 0; k < p->size; k++)
                x[k] = (real)((2.0 * rng_uniform(rng) - 1.0) * bound);
        } else {
            memset(x, 0, p->size * sizeof *x); /* attention and output biases */
        }
    }
}

int tf_check(const ModelConfig *c, Err *e)
{
    if (c->layers < 1 || c->layers > TF_MAX_LAYERS)
        return err_set(e, "--layers must be between 1 and %d, got %d", TF_MAX_LAYERS, c->layers);
    if (c->model_dim < 1 || c->model_dim > 8192)
        return err_set(e, "--model-dim must be between 1 and 8192, got %d", c->model_dim);
    if (c->ff < 1 || c->ff > 65536)
        return err_set(e, "--ff must be between 1 and 65536, got %d", c->ff);
    if (c->heads < 1 || c->model_dim % c->heads != 0)
        return err_set(e, "--heads %d does not divide --model-dim %d", c->heads, c->model_dim);
    if (c->positions == POS_LEARNED && (c->max_positions < 1 || c->max_positions > 65536))
        return err_set(e, "--max-positions must be between 1 and 65536, got %d", c->max_positions);
    if (c->share_embeddings && c->src_vocab != c->tgt_vocab)
        return err_set(e, "--share-embeddings needs one vocabulary for both sides (s2s prepare --joint), "
                          "got %d source and %d target tokens", c->src_vocab, c->tgt_vocab);
    if (c->positions == POS_SINUSOIDAL && c->max_positions != 0)
        return err_set(e, "--max-positions needs --positions learned");
    return model_config_check_common(c, e);
}


/* The matrices a decoding step multiplies by, with the shapes work_step_linear gets. */
void tf_quantize(Model *m, Precision p)
{
    if (p == PREC_F32)
        return;
    const ModelConfig *c = &m->cfg;
    const TfWeights *w = tf_weights(m);
    int d = c->model_dim, F = c->ff;
    for (int l = 0; l < c->layers; l++) {
        const TfLayerWeights *lw = &w->dec[l];
        model_quantize(m, lw->self.in_w, 3 * d, d, p);
        model_quantize(m, lw->self.out_w, d, d, p);
        model_quantize(m, lw->cross.in_w, d, d, p); /* the queries' rows: keys and values come from the encoder */
        model_quantize(m, lw->cross.out_w, d, d, p);
        model_quantize(m, lw->ff1_w, F, d, p);
        model_quantize(m, lw->ff2_w, d, F, p);
    }
    model_quantize(m, w->proj_w, c->tgt_vocab, d, p);
}

/* ------------------------------------------------------------------ s2s.config */

/* The Transformer's keys in s2s.config, in the order written. */
const char *const tf_config_keys[] = {
    "arch", "layers", "model_dim", "heads", "ff", "norm", "positions", "max_positions",
    "share_embeddings", "dropout", "label_smoothing", "tie_embeddings", NULL,
};
const char *const tf_config_optional[] = {"share_embeddings", NULL};

void tf_config_put(const ModelConfig *c, JsonWriter *w)
{
    json_put_str(w, "arch", "transformer");
    json_put_int(w, "layers", c->layers);
    json_put_int(w, "model_dim", c->model_dim);
    json_put_int(w, "heads", c->heads);
    json_put_int(w, "ff", c->ff);
    json_put_str(w, "norm", norm_names[c->norm]);
    json_put_str(w, "positions", pos_names[c->positions]);
    json_put_int(w, "max_positions", c->max_positions);
    if (c->share_embeddings) /* written only when true: files without it read as before */
        json_put_bool(w, "share_embeddings", true);
    cfg_put_common(c, w);
}

static const IntKey tf_ints[] = {
    INT_KEY("layers", 1, TF_MAX_LAYERS, layers), INT_KEY("model_dim", 1, 8192, model_dim),
    INT_KEY("heads", 1, 8192, heads),            INT_KEY("ff", 1, 65536, ff),
    INT_KEY("max_positions", 0, 65536, max_positions),
    {NULL, 0, 0, 0},
};

int tf_config_get(const JsonVal *root, ModelConfig *c, const char *where, Err *e)
{
    ModelConfig n = model_config_transformer();
    n.src_vocab = c->src_vocab;
    n.tgt_vocab = c->tgt_vocab;
    int norm = cfg_str(root, "norm", norm_names, NORM_KINDS, where, e);
    int pos = norm < 0 ? -1 : cfg_str(root, "positions", pos_names, POS_KINDS, where, e);
    if (pos < 0)
        return -1;
    n.norm = (NormKind)norm;
    n.positions = (PosKind)pos;
    if (cfg_ints(root, tf_ints, &n, where, e) || cfg_common(root, &n, where, e) ||
        (json_get(root, "share_embeddings") && cfg_bool(root, "share_embeddings", &n.share_embeddings, where, e)))
        return -1;
    if (n.model_dim % n.heads != 0)
        return err_set(e, "%s: 'heads' must divide 'model_dim'", where);
    if ((n.positions == POS_LEARNED) != (n.max_positions > 0))
        return err_set(e, "%s: 'max_positions' must be 0 with sinusoidal positions and at least 1 with learned ones", where);
    *c = n;
    return 0;
}
