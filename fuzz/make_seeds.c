/* Writes the seed model files of the model_file fuzz target: tiny random models with
   vocabularies of a few words, so that the fuzzer starts from valid files of every
   kind: recurrent (GRU and LSTM, one and two layers, uni- and bidirectional, tied
   embeddings, Bahdanau's attention and Luong's path with a local window, multihead
   attention, each bridge) and the Transformer (post- and pre-norm, sinusoidal and
   learned positions, one vocabulary with shared embeddings and BPE codes on both sides).
   Usage: make_seeds DIR (built and run by `make fuzz-seeds`). */
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/rng.h"
#include "model/file.h"

static Vocab *vocab_of(const char *words)
{
    Buf b = {0};
    buf_printf(&b, "<pad>\n<unk>\n<bos>\n<eos>\n%s", words);
    Vocab *v;
    Err e;
    if (vocab_from_lines(&v, "seed", b.data, b.len, &e) != 0)
        die_err(&e);
    buf_free(&b);
    return v;
}

/* A model of configuration c with random weights (seed) as DIR/NAME.s2s. */
static void write_seed(const char *dir, const char *name, const ModelConfig *c, const Vocab *src,
                       const Vocab *tgt, const TextConfig *t, uint64_t seed)
{
    Err e;
    if (model_config_check(c, &e) != 0)
        die_err(&e);
    Model m;
    model_init(&m, c, false);
    Rng r;
    rng_seed(&r, seed);
    model_init_random(&m, &r);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.s2s", dir, name);
    if (model_file_save(path, &m, src, tgt, t, "{\"steps\": 1, \"valid\": [{\"bleu\": 0.5}]}", &e) != 0)
        die_err(&e);
    model_free(&m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    static const struct {
        const char *name;
        Cell cell;
        int layers;
        bool bidir, tie, keep_case;
        const char *dir;
        AttnKind attention;
        int heads;
        LocalKind local;
        bool input_feed;
        BridgeKind bridge;
    } seeds[] = {
        {"gru1", CELL_GRU, 1, false, false, false, "en-fr", ATT_BAHDANAU, 1, LOCAL_NONE, false, BRIDGE_LINEAR},
        {"gru2_bidir", CELL_GRU, 2, true, false, true, "fr-en", ATT_BAHDANAU, 1, LOCAL_NONE, false, BRIDGE_LINEAR},
        {"lstm1_bidir_tied", CELL_LSTM, 1, true, true, false, "en-fr", ATT_BAHDANAU, 1, LOCAL_NONE, false,
         BRIDGE_LINEAR},
        {"lstm1_general_localp_feed", CELL_LSTM, 1, false, false, false, "en-fr", ATT_LUONG_GENERAL, 1, LOCAL_P,
         true, BRIDGE_ZERO},
        {"gru1_multihead_pool", CELL_GRU, 1, true, false, false, "en-fr", ATT_MULTIHEAD, 2, LOCAL_NONE, false,
         BRIDGE_ATTN_POOL},
    };
    Vocab *vs = vocab_of("a\ncat\n.");
    Vocab *vt = vocab_of("un\nchat\n.\nl'");
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        ModelConfig c = model_config_default();
        c.cell = seeds[i].cell;
        c.layers = seeds[i].layers;
        c.bidir = seeds[i].bidir;
        c.emb = 2;
        c.hidden = 2;
        c.dec_hidden = 3;
        c.attn = 2;
        c.deep_out = seeds[i].tie ? 2 : 3;
        c.tie_embeddings = seeds[i].tie;
        c.attention = seeds[i].attention;
        c.heads = seeds[i].heads;
        c.local = seeds[i].local;
        c.window = seeds[i].local == LOCAL_NONE ? 0 : 1;
        c.input_feed = seeds[i].input_feed;
        c.bridge = seeds[i].bridge;
        c.src_vocab = (int)vocab_size(vs);
        c.tgt_vocab = (int)vocab_size(vt);
        TextConfig t = {.keep_case = seeds[i].keep_case};
        CHECK(direction_parse(seeds[i].dir, &t.dir) == 0);
        write_seed(argv[1], seeds[i].name, &c, vs, vt, &t, 1 + i);
    }

    /* The Transformer: one joint vocabulary and its codes, or the two vocabularies of words above. */
    static const char codes[] = "#version: 0.2\nc a\nca t</w>\nu n</w>\n";
    Bpe *bpe;
    Err e;
    if (bpe_parse(&bpe, "seed codes", codes, sizeof codes - 1, &e) != 0)
        die_err(&e);
    Vocab *joint = vocab_of("a</w>\ncat</w>\nun</w>\nch\nat</w>\n.</w>");
    static const struct {
        const char *name;
        NormKind norm;
        PosKind positions;
        int layers;
        bool shared;
    } tfs[] = {
        {"transformer_post_sinusoidal_joint_bpe", NORM_POST, POS_SINUSOIDAL, 1, true},
        {"transformer2_pre_learned_tied", NORM_PRE, POS_LEARNED, 2, false},
    };
    for (size_t i = 0; i < sizeof tfs / sizeof tfs[0]; i++) {
        ModelConfig c = model_config_transformer();
        c.layers = tfs[i].layers;
        c.model_dim = 4;
        c.emb = 4;
        c.heads = 2;
        c.ff = 3;
        c.norm = tfs[i].norm;
        c.positions = tfs[i].positions;
        c.max_positions = tfs[i].positions == POS_LEARNED ? 5 : 0;
        c.share_embeddings = tfs[i].shared;
        c.tie_embeddings = true;
        TextConfig t = {0};
        CHECK(direction_parse("en-fr", &t.dir) == 0);
        const Vocab *s = tfs[i].shared ? joint : vs, *g = tfs[i].shared ? joint : vt;
        if (tfs[i].shared)
            t.src_bpe = t.tgt_bpe = bpe;
        c.src_vocab = (int)vocab_size(s);
        c.tgt_vocab = (int)vocab_size(g);
        write_seed(argv[1], tfs[i].name, &c, s, g, &t, 11 + i);
    }
    vocab_free(vs);
    vocab_free(vt);
    vocab_free(joint);
    bpe_free(bpe);
    return 0;
}
