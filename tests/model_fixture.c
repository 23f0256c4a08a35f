#include "model_fixture.h"

#include <criterion/criterion.h>
#include <string.h>

#include "base/buf.h"
#include "base/rng.h"
#include "decode/greedy.h"

const char *const fixture_src_tokens[] = {"the", "cat", "dog", "a", "sleeps", "eats",
                                          "hello", "big", "black", NULL};
const char *const fixture_tgt_tokens[] = {"le", "chat", "chien", "dort", "mange", "un",
                                          "bonjour", "!", "j'", "ai", "vu", ".", NULL};

static int count(const char *const *t)
{
    int n = 0;
    while (t[n])
        n++;
    return n;
}

int fixture_src_size(void) { return 4 + count(fixture_src_tokens); }
int fixture_tgt_size(void) { return 4 + count(fixture_tgt_tokens); }

ModelConfig fixture_config(Cell cell, int layers, bool bidir, int vs, int vt)
{
    cr_assert(vt <= FIXTURE_DIM);
    ModelConfig c = model_config_default();
    c.cell = cell;
    c.layers = layers;
    c.bidir = bidir;
    c.emb = c.deep_out = FIXTURE_DIM;
    c.hidden = 10;
    c.dec_hidden = 12;
    c.attn = 9;
    c.src_vocab = vs;
    c.tgt_vocab = vt;
    return c;
}

ModelConfig fixture_variant(Cell cell, AttnKind att, LocalKind local, bool feed, BridgeKind bridge,
                            int vs, int vt)
{
    ModelConfig c = fixture_config(cell, 1, true, vs, vt);
    c.attention = att;
    c.local = local;
    c.window = local == LOCAL_NONE ? 0 : 2;
    c.input_feed = feed;
    c.bridge = bridge;
    if (att == ATT_MULTIHEAD) {
        c.attn = 12;
        c.heads = 3;
    }
    return c;
}

ModelConfig fixture_transformer(NormKind norm, PosKind pos, int vs, int vt)
{
    ModelConfig c = model_config_transformer();
    c.layers = 2;
    c.model_dim = 12;
    c.heads = 3;
    c.ff = 20;
    c.norm = norm;
    c.positions = pos;
    c.max_positions = pos == POS_LEARNED ? 64 : 0;
    c.src_vocab = vs;
    c.tgt_vocab = vt;
    return c;
}

void fixture_model_from(Model *m, const ModelConfig *c, uint64_t seed)
{
    Err e;
    cr_assert_eq(model_config_check(c, &e), 0, "%s", e.msg);
    model_init(m, c, false);
    Rng rng;
    rng_seed(&rng, seed);
    model_init_random(m, &rng);
}

void fixture_model(Model *m, Cell cell, int layers, bool bidir, int vs, int vt, uint64_t seed)
{
    ModelConfig c = fixture_config(cell, layers, bidir, vs, vt);
    fixture_model_from(m, &c, seed);
}

static void zero(Model *m) { memset(m->params, 0, m->layout.total * sizeof(real)); }

void fixture_chain(Model *m, const int *chain, int n, int next)
{
    const ModelConfig *c = &m->cfg;
    int E = c->emb, P = c->deep_out, F = c->dec_hidden + model_enc_size(c) + E;
    cr_assert(E == FIXTURE_DIM && P == E && c->tgt_vocab <= E && !c->tie_embeddings);
    zero(m);
    for (int v = 0; v < c->tgt_vocab; v++)
        rnn_weights(m)->tgt_emb[(size_t)v * E + v] = 1; /* y = one-hot of the previous token */
    for (int p = 0; p < P; p++)
        rnn_weights(m)->pre_w[(size_t)p * F + (F - E) + p] = 1; /* o = tanh(y) */
    int from = 2; /* <bos> */
    for (int k = 0; k <= n; k++) {
        int to = k < n ? chain[k] : next;
        rnn_weights(m)->proj_w[(size_t)to * P + from] = 10;
        from = to;
    }
}

void fixture_constant(Model *m, int tok)
{
    zero(m);
    rnn_weights(m)->proj_b[tok] = 1;
}

static Vocab *vocab_of(const char *name, const char *const *toks)
{
    Buf b = {0};
    buf_puts(&b, "<pad>\n<unk>\n<bos>\n<eos>");
    for (int i = 0; toks[i]; i++) {
        buf_putc(&b, '\n');
        buf_puts(&b, toks[i]);
    }
    Vocab *v;
    Err e;
    cr_assert_eq(vocab_from_lines(&v, name, b.data, b.len, &e), 0, "%s", e.msg);
    buf_free(&b);
    return v;
}

void fixture_vocabs(Vocab **src, Vocab **tgt)
{
    *src = vocab_of("src", fixture_src_tokens);
    *tgt = vocab_of("tgt", fixture_tgt_tokens);
}

void fixture_text_model(Model *m, uint64_t seed)
{
    fixture_model(m, CELL_GRU, 1, true, fixture_src_size(), fixture_tgt_size(), seed);
}

int fixture_tgt_id(const char *tok)
{
    for (int i = 0; fixture_tgt_tokens[i]; i++)
        if (strcmp(fixture_tgt_tokens[i], tok) == 0)
            return 4 + i;
    cr_assert_fail("'%s' is not a fixture target token", tok);
    return -1;
}

void fixture_chain_text(Model *m)
{
    const int chain[] = {fixture_tgt_id("j'"), fixture_tgt_id("ai"), fixture_tgt_id("vu"),
                         fixture_tgt_id("le"), fixture_tgt_id("chat"), fixture_tgt_id("!")};
    fixture_chain(m, chain, 6, 3);
}

void fixture_save(const char *path, const Model *m, const char *history)
{
    fixture_save_dir(path, m, history, DIRECTION_EN_FR);
}

void fixture_save_dir(const char *path, const Model *m, const char *history, Direction d)
{
    Vocab *s, *t;
    fixture_vocabs(&s, &t);
    TextConfig tc = {.dir = d, .keep_case = false};
    Err e;
    cr_assert_eq(model_file_save(path, m, s, t, &tc, history, &e), 0, "%s", e.msg);
    vocab_free(s);
    vocab_free(t);
}

/* The output projection's weight (the target embeddings when tied) and bias, of
   either architecture. */
static const ParamInfo *param_of(const Model *m, const char *name, const char *fallback)
{
    int i = param_find(&m->layout, name);
    if (i < 0 && fallback)
        i = param_find(&m->layout, fallback);
    cr_assert(i >= 0, "model has no %s", name);
    return &m->layout.info[i];
}

void fixture_mix_eos(Model *m, int n, int *const *src, const int *len)
{
    const ParamInfo *pw = param_of(m, "out.proj.weight", "tgt_emb.weight");
    real *proj_b = m->params + param_of(m, "out.proj.bias", NULL)->offset;
    for (size_t q = 0; q < pw->size; q++)
        m->params[pw->offset + q] *= 4;
    PairSet d = {.n = n, .src = src, .src_len = len};
    real base = proj_b[3], best_bias = base;
    int best = -1;
    for (int k = -10; k <= 20; k++) {
        proj_b[3] = base + (real)k / 10;
        Hyps h;
        Err e;
        cr_assert_eq(greedy_decode(m, &d, 8, 0, &h, &e), 0, "%s", e.msg);
        int stopped = 0, at_limit = 0;
        for (int i = 0; i < n; i++) {
            if (len[i] == 0)
                continue;
            stopped += h.len[i] < decode_limit(m, len[i], 0);
            at_limit += h.len[i] == decode_limit(m, len[i], 0);
        }
        int score = stopped < at_limit ? stopped : at_limit;
        if (score > best) {
            best = score;
            best_bias = proj_b[3];
        }
        hyps_free(&h);
    }
    proj_b[3] = best_bias;
}

Srcs srcs_random(int n, int max_len, int vs, uint64_t seed)
{
    Srcs s = {n, calloc((size_t)(n ? n : 1), sizeof(int)), calloc((size_t)(n ? n : 1), sizeof(int *))};
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        s.len[i] = (int)rng_below(&rng, (uint64_t)max_len + 1);
        s.ids[i] = malloc((size_t)(s.len[i] + 1) * sizeof(int));
        for (int k = 0; k < s.len[i]; k++)
            s.ids[i][k] = 1 + (int)rng_below(&rng, (uint64_t)vs - 1);
    }
    return s;
}

void srcs_free(Srcs *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->ids[i]);
    free(s->ids);
    free(s->len);
}

void expect_same_weights(const char *a, const char *b)
{
    ModelFile x, y;
    Err e;
    cr_assert_eq(model_file_load(&x, a, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&y, b, false, &e), 0, "%s", e.msg);
    cr_assert_eq(x.model.layout.total, y.model.layout.total, "%s and %s differ in size", a, b);
    cr_assert_gt(x.model.layout.total, 0);
    size_t diff = 0;
    for (size_t i = 0; i < x.model.layout.total; i++)
        diff += memcmp(&x.model.params[i], &y.model.params[i], sizeof(real)) != 0;
    cr_expect_eq(diff, 0, "%zu of %zu weights differ between %s and %s", diff, x.model.layout.total, a, b);
    model_file_free(&x);
    model_file_free(&y);
}

void fixture_load_file(const char *path, ModelFile *mf)
{
    Err e;
    cr_assert_eq(model_file_load(mf, path, false, &e), 0, "%s", e.msg);
}
