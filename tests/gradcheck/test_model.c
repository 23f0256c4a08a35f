/* Whole-model gradient check: the loss of a tiny encoder–decoder against central
   finite differences for every entry of every parameter tensor (double precision,
   tolerance of gradcheck.h). GRU and LSTM, 1 and 2 layers, bidirectional, padding on
   both sides of the batch, with and without dropout (the dropout masks are redrawn
   from the same seed on every evaluation, so the loss is a fixed function), and every
   attention variant, local window, input feeding and bridge. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "model/model.h"

typedef struct Ctx {
    Model m;
    Work *w;
    Batch b;
    bool dropout;
    real scale;
} Ctx;

static double loss_of(void *p)
{
    Ctx *c = p;
    Rng rng;
    rng_seed(&rng, 42);
    return model_forward(&c->m, c->w, &c->b, c->dropout ? &rng : NULL) * c->scale;
}

/* B=3 sentences, source lengths 4, 2, 1; target lengths 3, 1, 2 (with <eos>). */
static void tiny_batch(Batch *b)
{
    static int src[4 * 3] = {
        5, 6, 4,
        4, 5, 0,
        6, 0, 0,
        5, 0, 0,
    };
    static int len[3] = {4, 2, 1};
    static int tin[3 * 3] = {
        2, 2, 2,
        4, 0, 5,
        5, 0, 0,
    };
    static int tout[3 * 3] = {
        4, 3, 5,
        5, 0, 3,
        3, 0, 0,
    };
    *b = (Batch){.B = 3, .S = 4, .T = 3, .src = src, .src_len = len, .tgt_in = tin, .tgt_out = tout, .ntok = 6};
}

static ModelConfig tiny_config(Cell cell, int layers, bool bidir, bool tie)
{
    ModelConfig cfg = model_config_default();
    cfg.cell = cell;
    cfg.layers = layers;
    cfg.bidir = bidir;
    cfg.emb = 3;
    cfg.hidden = 4;
    cfg.dec_hidden = 5;
    cfg.attn = 3;
    cfg.deep_out = tie ? 3 : 4;
    cfg.dropout = 0;
    cfg.label_smoothing = 0.1f;
    cfg.tie_embeddings = tie;
    cfg.src_vocab = 7;
    cfg.tgt_vocab = 6;
    return cfg;
}

static void check_config(ModelConfig cfg, bool dropout)
{
    Ctx c = {0};
    if (dropout)
        cfg.dropout = 0.3f;
    model_init(&c.m, &cfg, true);
    Rng rng;
    rng_seed(&rng, 7);
    model_init_random(&c.m, &rng);
    /* larger weights than the default init make the check more demanding */
    for (size_t i = 0; i < c.m.layout.total; i++)
        c.m.params[i] *= 1.5;
    tiny_batch(&c.b);
    c.w = work_new(&c.m, 3, 4, 3, true);
    c.dropout = dropout;
    c.scale = (real)1 / (real)c.b.ntok;

    Rng drng;
    rng_seed(&drng, 42);
    memset(c.m.grads, 0, c.m.layout.total * sizeof(real));
    model_forward_backward(&c.m, c.w, &c.b, dropout ? &drng : NULL);

    for (int i = 0; i < c.m.layout.n; i++) {
        const ParamInfo *p = &c.m.layout.info[i];
        gc_check(p->name, c.m.params + p->offset, p->size, c.m.grads + p->offset, NULL, loss_of, &c);
    }
    work_free(c.w);
    model_free(&c.m);
}

static void run_check(Cell cell, int layers, bool bidir, bool dropout, bool tie)
{
    check_config(tiny_config(cell, layers, bidir, tie), dropout);
}

Test(gradcheck_model, gru_1layer_bidir) { run_check(CELL_GRU, 1, true, false, false); }
Test(gradcheck_model, gru_2layer_bidir) { run_check(CELL_GRU, 2, true, false, false); }
Test(gradcheck_model, lstm_1layer_bidir) { run_check(CELL_LSTM, 1, true, false, false); }
Test(gradcheck_model, lstm_2layer_bidir) { run_check(CELL_LSTM, 2, true, false, false); }
Test(gradcheck_model, gru_2layer_unidir) { run_check(CELL_GRU, 2, false, false, false); }
Test(gradcheck_model, gru_2layer_dropout) { run_check(CELL_GRU, 2, true, true, false); }
Test(gradcheck_model, lstm_2layer_dropout) { run_check(CELL_LSTM, 2, true, true, false); }
Test(gradcheck_model, gru_tied_embeddings) { run_check(CELL_GRU, 1, true, false, true); }

/* The attention variants and bridges of docs/model.md. Windows of half-width 1 over
   sources of 4, 2 and 1 tokens cut real positions off; local-p's Gaussian makes the
   loss depend on the predicted position, whose gradient is checked through it. */
static ModelConfig variant(Cell cell, AttnKind att, LocalKind local, bool feed)
{
    ModelConfig cfg = tiny_config(cell, 1, true, false);
    cfg.attention = att;
    cfg.local = local;
    cfg.window = local == LOCAL_NONE ? 0 : 1;
    cfg.input_feed = feed;
    if (att == ATT_MULTIHEAD) {
        cfg.attn = 4;
        cfg.heads = 2;
    }
    return cfg;
}

Test(gradcheck_model, luong_dot_projected_keys) { check_config(variant(CELL_GRU, ATT_LUONG_DOT, LOCAL_NONE, false), false); }
Test(gradcheck_model, luong_dot_plain)
{
    ModelConfig cfg = variant(CELL_LSTM, ATT_LUONG_DOT, LOCAL_NONE, false);
    cfg.bidir = false;
    cfg.hidden = cfg.dec_hidden; /* K == D: no attention tensors at all */
    check_config(cfg, false);
}
Test(gradcheck_model, luong_general) { check_config(variant(CELL_GRU, ATT_LUONG_GENERAL, LOCAL_NONE, false), false); }
Test(gradcheck_model, luong_concat_lstm) { check_config(variant(CELL_LSTM, ATT_LUONG_CONCAT, LOCAL_NONE, false), false); }
Test(gradcheck_model, scaled_dot) { check_config(variant(CELL_GRU, ATT_SCALED_DOT, LOCAL_NONE, false), false); }
Test(gradcheck_model, multihead) { check_config(variant(CELL_GRU, ATT_MULTIHEAD, LOCAL_NONE, false), false); }
Test(gradcheck_model, local_m) { check_config(variant(CELL_GRU, ATT_LUONG_GENERAL, LOCAL_M, false), false); }
Test(gradcheck_model, local_p) { check_config(variant(CELL_LSTM, ATT_LUONG_GENERAL, LOCAL_P, false), false); }
Test(gradcheck_model, local_p_multihead) { check_config(variant(CELL_GRU, ATT_MULTIHEAD, LOCAL_P, false), false); }
Test(gradcheck_model, input_feed) { check_config(variant(CELL_GRU, ATT_LUONG_GENERAL, LOCAL_NONE, true), false); }
Test(gradcheck_model, input_feed_local_p_2layer_dropout)
{
    ModelConfig cfg = variant(CELL_LSTM, ATT_LUONG_CONCAT, LOCAL_P, true);
    cfg.layers = 2;
    check_config(cfg, true);
}
Test(gradcheck_model, bridge_zero)
{
    ModelConfig cfg = tiny_config(CELL_LSTM, 2, true, false);
    cfg.bridge = BRIDGE_ZERO;
    check_config(cfg, false);
}
Test(gradcheck_model, bridge_attn_pool_gru)
{
    ModelConfig cfg = tiny_config(CELL_GRU, 2, true, false);
    cfg.bridge = BRIDGE_ATTN_POOL;
    check_config(cfg, false);
}
Test(gradcheck_model, bridge_attn_pool_lstm_luong)
{
    ModelConfig cfg = variant(CELL_LSTM, ATT_SCALED_DOT, LOCAL_M, true);
    cfg.bridge = BRIDGE_ATTN_POOL;
    check_config(cfg, false);
}

/* The Transformer: d = 4, 2 heads, ff 6, padding on both sides (source lengths 4, 2,
   1; padded target rows only ever attend to earlier positions). */
static ModelConfig tf_config(int layers, NormKind norm, PosKind pos, bool tie)
{
    ModelConfig cfg = model_config_transformer();
    cfg.layers = layers;
    cfg.model_dim = 4;
    cfg.heads = 2;
    cfg.ff = 6;
    cfg.norm = norm;
    cfg.positions = pos;
    cfg.max_positions = pos == POS_LEARNED ? 5 : 0;
    cfg.tie_embeddings = tie;
    cfg.dropout = 0;
    cfg.label_smoothing = 0.1f;
    cfg.src_vocab = 7;
    cfg.tgt_vocab = 6;
    return cfg;
}

Test(gradcheck_model, transformer_post_norm_sinusoidal) { check_config(tf_config(1, NORM_POST, POS_SINUSOIDAL, false), false); }
Test(gradcheck_model, transformer_pre_norm_sinusoidal) { check_config(tf_config(1, NORM_PRE, POS_SINUSOIDAL, false), false); }
Test(gradcheck_model, transformer_post_norm_learned_tied_2layer) { check_config(tf_config(2, NORM_POST, POS_LEARNED, true), false); }
Test(gradcheck_model, transformer_pre_norm_learned_2layer) { check_config(tf_config(2, NORM_PRE, POS_LEARNED, false), false); }
Test(gradcheck_model, transformer_pre_norm_tied_dropout) { check_config(tf_config(2, NORM_PRE, POS_SINUSOIDAL, true), true); }
/* One table for the source and target embeddings and the output (7 tokens a side). */
Test(gradcheck_model, transformer_shared_and_tied_embeddings)
{
    ModelConfig cfg = tf_config(2, NORM_POST, POS_SINUSOIDAL, true);
    cfg.share_embeddings = true;
    cfg.tgt_vocab = cfg.src_vocab;
    check_config(cfg, false);
}
Test(gradcheck_model, transformer_post_norm_dropout) { check_config(tf_config(1, NORM_POST, POS_LEARNED, false), true); }
