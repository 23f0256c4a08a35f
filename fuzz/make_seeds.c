/* Writes the seed model files of the model_file fuzz target: tiny random models
   (GRU and LSTM, one and two layers, uni- and bidirectional, tied embeddings) with
   vocabularies of a few words, so that the fuzzer starts from valid files.
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
    } seeds[] = {
        {"gru1", CELL_GRU, 1, false, false, false, "en-fr"},
        {"gru2_bidir", CELL_GRU, 2, true, false, true, "fr-en"},
        {"lstm1_bidir_tied", CELL_LSTM, 1, true, true, false, "en-fr"},
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
        c.src_vocab = (int)vocab_size(vs);
        c.tgt_vocab = (int)vocab_size(vt);
        Model m;
        model_init(&m, &c, false);
        Rng r;
        rng_seed(&r, 1 + i);
        model_init_random(&m, &r);
        TextConfig t = {.keep_case = seeds[i].keep_case};
        CHECK(direction_parse(seeds[i].dir, &t.dir) == 0);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.s2s", argv[1], seeds[i].name);
        Err e;
        if (model_file_save(path, &m, vs, vt, &t, "{\"steps\": 1, \"valid\": [{\"bleu\": 0.5}]}", &e) != 0)
            die_err(&e);
        model_free(&m);
    }
    vocab_free(vs);
    vocab_free(vt);
    return 0;
}
