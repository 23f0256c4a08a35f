#include "model/config.h"

#include <string.h>

ModelConfig model_config_default(void)
{
    return (ModelConfig){
        .cell = CELL_GRU, .layers = 1, .bidir = true, .emb = 256, .hidden = 256,
        .dec_hidden = 256, .attn = 256, .deep_out = 256, .dropout = 0.1f,
        .label_smoothing = 0.1f, .tie_embeddings = false, .attention = ATT_BAHDANAU,
        .heads = 1, .local = LOCAL_NONE, .window = 0, .input_feed = false,
        .bridge = BRIDGE_LINEAR,
        /* the Transformer's sizes, used with arch = ARCH_TRANSFORMER only */
        .model_dim = 256, .ff = 1024, .norm = NORM_POST, .positions = POS_SINUSOIDAL,
        .max_positions = 0,
    };
}

ModelConfig model_config_transformer(void)
{
    ModelConfig c = model_config_default();
    c.arch = ARCH_TRANSFORMER;
    c.layers = 3;
    c.heads = 4;
    return c;
}

const char *cell_name(Cell c) { return c == CELL_GRU ? "gru" : "lstm"; }

const char *const attn_names[ATT_KINDS] = {
    "bahdanau", "luong-dot", "luong-general", "luong-concat", "scaled-dot", "multihead",
};
const char *const local_names[LOCAL_KINDS] = {"none", "m", "p"};
const char *const bridge_names[BRIDGE_KINDS] = {"linear", "zero", "attn-pool"};

const char *const arch_names[ARCH_KINDS] = {"rnn", "transformer"};
const char *const norm_names[NORM_KINDS] = {"post", "pre"};
const char *const pos_names[POS_KINDS] = {"sinusoidal", "learned"};

const char *attn_name(AttnKind a) { return attn_names[a]; }
const char *local_name(LocalKind l) { return local_names[l]; }
const char *bridge_name(BridgeKind b) { return bridge_names[b]; }

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

int attn_from_name(const char *s) { return lookup(attn_names, ATT_KINDS, s); }
int local_from_name(const char *s) { return lookup(local_names, LOCAL_KINDS, s); }
int bridge_from_name(const char *s) { return lookup(bridge_names, BRIDGE_KINDS, s); }
int arch_from_name(const char *s) { return lookup(arch_names, ARCH_KINDS, s); }
int norm_from_name(const char *s) { return lookup(norm_names, NORM_KINDS, s); }
int pos_from_name(const char *s) { return lookup(pos_names, POS_KINDS, s); }

int model_key_size(const ModelConfig *c)
{
    switch (c->attention) {
    case ATT_LUONG_DOT:
        return model_enc_size(c) == c->dec_hidden ? 0 : c->dec_hidden;
    case ATT_LUONG_GENERAL:
        return c->dec_hidden;
    default:
        return c->attn;
    }
}

int model_dec_in_size(const ModelConfig *c)
{
    if (!model_luong(c))
        return c->emb + model_enc_size(c);
    return c->emb + (c->input_feed ? c->deep_out : 0);
}

int model_pre_in_size(const ModelConfig *c)
{
    return model_luong(c) ? model_enc_size(c) + c->dec_hidden
                          : c->dec_hidden + model_enc_size(c) + c->emb;
}

static int common_check(const ModelConfig *c, Err *e)
{
    if (!(c->dropout >= 0 && c->dropout < 1))
        return err_set(e, "--dropout must be in [0, 1), got %g", c->dropout);
    if (!(c->label_smoothing >= 0 && c->label_smoothing < 1))
        return err_set(e, "--label-smoothing must be in [0, 1), got %g", c->label_smoothing);
    if (c->src_vocab < 5 || c->tgt_vocab < 5)
        return err_set(e, "vocabularies must hold the 4 specials and at least one token (source %d, target %d)",
                       c->src_vocab, c->tgt_vocab);
    return 0;
}

static int transformer_check(const ModelConfig *c, Err *e)
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
    if (c->positions == POS_SINUSOIDAL && c->max_positions != 0)
        return err_set(e, "--max-positions needs --positions learned");
    return common_check(c, e);
}

int model_config_check(const ModelConfig *c, Err *e)
{
    if (c->arch == ARCH_TRANSFORMER)
        return transformer_check(c, e);
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
    return common_check(c, e);
}

int model_max_positions(const ModelConfig *c)
{
    if (c->n_members) {
        int lim = 0;
        for (int i = 0; i < c->n_members; i++) {
            int k = model_max_positions(&c->member_cfg[i]);
            if (k && (!lim || k < lim))
                lim = k;
        }
        return lim;
    }
    return c->arch == ARCH_TRANSFORMER && c->positions == POS_LEARNED ? c->max_positions : 0;
}
