/* Small models for the decoding tests: random ones, and hand-set ones whose greedy
   output is known exactly. */
#ifndef S2S_TESTS_MODEL_FIXTURE_H
#define S2S_TESTS_MODEL_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/file.h"
#include "model/model.h"
#include "model/rnn_params.h"
#include "model/transformer.h"

/* Sizes of the fixture models: E = P = FIXTURE_DIM (so a hand-set model can carry the
   previous token one-hot from the embedding to the deep output), other sizes small. */
#define FIXTURE_DIM 16

/* A random model (PyTorch's initialisation from seed) with vs/vt vocabulary entries
   (vt <= FIXTURE_DIM). */
void fixture_model(Model *m, Cell cell, int layers, bool bidir, int vs, int vt, uint64_t seed);
/* The configuration fixture_model uses, to vary before fixture_model_from. */
ModelConfig fixture_config(Cell cell, int layers, bool bidir, int vs, int vt);
void fixture_model_from(Model *m, const ModelConfig *c, uint64_t seed);
/* fixture_config with an attention variant: a window of 2 when local, attn 12 and 3
   heads for multihead. */
ModelConfig fixture_variant(Cell cell, AttnKind att, LocalKind local, bool feed, BridgeKind bridge,
                            int vs, int vt);

/* A small Transformer (2 layers, d 12, 3 heads, ff 20; 64 learned positions). */
ModelConfig fixture_transformer(NormKind norm, PosKind pos, int vs, int vt);

/* Makes the output depend on the previous token only: every weight is zeroed, then
   <bos> -> chain[0] -> chain[1] -> ... -> chain[n-1] -> next. The logit of the next
   token is 10·tanh(1), every other logit is 0 (so after a token outside the chain all
   logits tie and <pad>, id 0, wins). next is usually <eos>. */
void fixture_chain(Model *m, const int *chain, int n, int next);

/* fixture_chain of a text model (fixture_text_model) through the target tokens
   j' ai vu le chat ! to <eos>: every line with a token translates to CHAIN_OUT. */
void fixture_chain_text(Model *m);
#define CHAIN_OUT "j'ai vu le chat !"

/* Every weight zeroed, out.proj.bias[tok] = 1: tok wins every step. */
void fixture_constant(Model *m, int tok);

/* Source tokens (ids 4..) and target tokens (ids 4..) of the fixture vocabularies. */
extern const char *const fixture_src_tokens[];
extern const char *const fixture_tgt_tokens[];
/* Their sizes, the four specials included. */
int fixture_src_size(void);
int fixture_tgt_size(void);
/* Builds the fixture vocabularies. */
void fixture_vocabs(Vocab **src, Vocab **tgt);
/* A random GRU model on the fixture vocabularies. */
void fixture_text_model(Model *m, uint64_t seed);
/* Id of a target token of the fixture vocabulary. */
int fixture_tgt_id(const char *tok);
/* Loads the model file at path into mf, failing the test (with the message) when it
   cannot. */
void fixture_load_file(const char *path, ModelFile *mf);

/* Sharpens the output layer (weights x4) and picks the <eos> bias, on a grid around its
   value (base + k/10, -10 <= k <= 20), whose greedy outputs of the sources
   src[i][0..len[i]) (i < n) best mix stops at <eos> with outputs cut at the default
   limit, so that decoding tests see both. */
void fixture_mix_eos(Model *m, int n, int *const *src, const int *len);

/* Writes m with the fixture vocabularies to path (en-fr, lowercased). history may be
   NULL. */
void fixture_save(const char *path, const Model *m, const char *history);
/* The same in direction d. */
void fixture_save_dir(const char *path, const Model *m, const char *history, Direction d);

/* Source sentences as token ids: n sentences, ids[i][0 .. len[i]). */
typedef struct Srcs {
    int n;
    int *len;
    int **ids;
} Srcs;

/* n random sources of length 0..max_len (ids 1..vs-1), from seed. */
Srcs srcs_random(int n, int max_len, int vs, uint64_t seed);
void srcs_free(Srcs *s);

/* Expects (Criterion) the model files a and b to hold the same number of weights, more
   than none, equal bit for bit. */
void expect_same_weights(const char *a, const char *b);

#endif
