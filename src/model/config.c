#include "model/config.h"

#include <string.h>

#include "base/buf.h"

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

int attn_from_name(const char *s)
{
    for (int i = 0; i < ATT_KINDS; i++)
        if (strcmp(attn_names[i], s) == 0)
            return i;
    return -1;
}

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

int model_config_check_common(const ModelConfig *c, Err *e)
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

/* ------------------------------------------------------------------ s2s.config (model/file.h) */

int cfg_str(const JsonVal *root, const char *key, const char *const *allowed, int n,
            const char *where, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (v->type == JSON_STRING)
        for (int i = 0; i < n; i++)
            if (strcmp(v->u.str.s, allowed[i]) == 0)
                return i;
    Buf b = {0};
    for (int i = 0; i < n; i++)
        buf_printf(&b, "%s\"%s\"", i ? " or " : "", allowed[i]);
    err_set(e, "%s: '%s' must be %s", where, key, b.data);
    buf_free(&b);
    return -1;
}

int cfg_int(const JsonVal *root, const char *key, int lo, int hi, int *out, const char *where, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (v->type != JSON_NUMBER || !v->is_int || v->u.num.i < lo || v->u.num.i > hi)
        return err_set(e, "%s: '%s' must be an integer in %d..%d", where, key, lo, hi);
    *out = (int)v->u.num.i;
    return 0;
}

int cfg_bool(const JsonVal *root, const char *key, bool *out, const char *where, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (v->type != JSON_BOOL)
        return err_set(e, "%s: '%s' must be true or false", where, key);
    *out = v->b;
    return 0;
}

int cfg_unit(const JsonVal *root, const char *key, float *out, const char *where, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (v->type != JSON_NUMBER || !(v->u.num.d >= 0 && v->u.num.d < 1))
        return err_set(e, "%s: '%s' must be a number in [0, 1)", where, key);
    *out = (float)v->u.num.d;
    return 0;
}

int cfg_ints(const JsonVal *root, const IntKey *keys, ModelConfig *c, const char *where, Err *e)
{
    for (const IntKey *k = keys; k->key; k++)
        if (cfg_int(root, k->key, k->lo, k->hi, (int *)((char *)c + k->off), where, e))
            return -1;
    return 0;
}

int cfg_common(const JsonVal *root, ModelConfig *c, const char *where, Err *e)
{
    return cfg_bool(root, "tie_embeddings", &c->tie_embeddings, where, e) ||
                   cfg_unit(root, "dropout", &c->dropout, where, e) ||
                   cfg_unit(root, "label_smoothing", &c->label_smoothing, where, e)
               ? -1
               : 0;
}

void cfg_put_common(const ModelConfig *c, JsonWriter *w)
{
    json_put_f32(w, "dropout", c->dropout);
    json_put_f32(w, "label_smoothing", c->label_smoothing);
    json_put_bool(w, "tie_embeddings", c->tie_embeddings);
}
