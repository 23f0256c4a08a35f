/* Whole-model gradient check: the loss of a tiny encoder–decoder against central
   finite differences for every entry of every parameter tensor (double precision,
   tolerance of gradcheck.h). GRU and LSTM, 1 and 2 layers, bidirectional, padding on
   both sides of the batch, with and without dropout (the dropout masks are redrawn
   from the same seed on every evaluation, so the loss is a fixed function). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "model/seq2seq.h"

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

static void run_check(Cell cell, int layers, bool bidir, bool dropout, bool tie)
{
    Ctx c = {0};
    ModelConfig cfg = {
        .cell = cell, .layers = layers, .bidir = bidir, .emb = 3, .hidden = 4, .dec_hidden = 5,
        .attn = 3, .deep_out = tie ? 3 : 4, .dropout = dropout ? 0.3f : 0, .label_smoothing = 0.1f,
        .tie_embeddings = tie, .src_vocab = 7, .tgt_vocab = 6,
    };
    model_init(&c.m, &cfg, true);
    Rng rng;
    rng_seed(&rng, 7);
    model_init_random(&c.m, &rng);
    /* larger weights than the default init make the check more demanding */
    for (size_t i = 0; i < c.m.layout.total; i++)
        c.m.params[i] *= 1.5;
    tiny_batch(&c.b);
    c.w = work_new(&cfg, 3, 4, 3, true);
    c.dropout = dropout;
    c.scale = (real)1 / (real)c.b.ntok;

    Rng drng;
    rng_seed(&drng, 42);
    model_forward(&c.m, c.w, &c.b, dropout ? &drng : NULL);
    memset(c.m.grads, 0, c.m.layout.total * sizeof(real));
    model_backward(&c.m, c.w, &c.b, c.scale);

    for (int i = 0; i < c.m.layout.n; i++) {
        const ParamInfo *p = &c.m.layout.info[i];
        gc_check(p->name, c.m.params + p->offset, p->size, c.m.grads + p->offset, NULL, loss_of, &c);
    }
    work_free(c.w);
    model_free(&c.m);
}

Test(gradcheck_model, gru_1layer_bidir) { run_check(CELL_GRU, 1, true, false, false); }
Test(gradcheck_model, gru_2layer_bidir) { run_check(CELL_GRU, 2, true, false, false); }
Test(gradcheck_model, lstm_1layer_bidir) { run_check(CELL_LSTM, 1, true, false, false); }
Test(gradcheck_model, lstm_2layer_bidir) { run_check(CELL_LSTM, 2, true, false, false); }
Test(gradcheck_model, gru_2layer_unidir) { run_check(CELL_GRU, 2, false, false, false); }
Test(gradcheck_model, gru_2layer_dropout) { run_check(CELL_GRU, 2, true, true, false); }
Test(gradcheck_model, lstm_2layer_dropout) { run_check(CELL_LSTM, 2, true, true, false); }
Test(gradcheck_model, gru_tied_embeddings) { run_check(CELL_GRU, 1, true, false, true); }
