#include "model/config.h"

ModelConfig model_config_default(void)
{
    return (ModelConfig){
        .cell = CELL_GRU, .layers = 1, .bidir = true, .emb = 256, .hidden = 256,
        .dec_hidden = 256, .attn = 256, .deep_out = 256, .dropout = 0.1f,
        .label_smoothing = 0.1f, .tie_embeddings = false,
    };
}

const char *cell_name(Cell c) { return c == CELL_GRU ? "gru" : "lstm"; }

int model_config_check(const ModelConfig *c, Err *e)
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
    if (!(c->dropout >= 0 && c->dropout < 1))
        return err_set(e, "--dropout must be in [0, 1), got %g", c->dropout);
    if (!(c->label_smoothing >= 0 && c->label_smoothing < 1))
        return err_set(e, "--label-smoothing must be in [0, 1), got %g", c->label_smoothing);
    if (c->tie_embeddings && c->deep_out != c->emb)
        return err_set(e, "--tie-embeddings needs --deep-out equal to --emb (%d != %d)", c->deep_out, c->emb);
    if (c->src_vocab < 5 || c->tgt_vocab < 5)
        return err_set(e, "vocabularies must hold the 4 specials and at least one token (source %d, target %d)",
                       c->src_vocab, c->tgt_vocab);
    return 0;
}
