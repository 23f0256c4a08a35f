/* Model configuration: sizes and options, and their JSON form in the model file. */
#ifndef S2S_MODEL_CONFIG_H
#define S2S_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

#define MODEL_MAX_LAYERS 4 /* recurrent layers */
#define TF_MAX_LAYERS 12   /* Transformer layers per stack */

/* The model family (docs/model.md): the recurrent encoder–decoder or the Transformer. */
typedef enum Arch { ARCH_RNN = 0, ARCH_TRANSFORMER, ARCH_KINDS } Arch;
/* Transformer: layer normalisation after each residual sum (the paper) or before each
   sublayer, with a final normalisation per stack. */
typedef enum NormKind { NORM_POST = 0, NORM_PRE, NORM_KINDS } NormKind;
typedef enum PosKind { POS_SINUSOIDAL = 0, POS_LEARNED, POS_KINDS } PosKind;

typedef enum Cell { CELL_GRU = 0, CELL_LSTM = 1 } Cell;

/* The attention mechanism (docs/model.md, "Attention variants and bridges"). Every kind
   but ATT_BAHDANAU takes Luong's path: the decoder RNN runs first and its current state
   is the query. */
typedef enum AttnKind {
    ATT_BAHDANAU = 0,
    ATT_LUONG_DOT,
    ATT_LUONG_GENERAL,
    ATT_LUONG_CONCAT,
    ATT_SCALED_DOT,
    ATT_MULTIHEAD,
    ATT_KINDS
} AttnKind;

typedef enum LocalKind { LOCAL_NONE = 0, LOCAL_M, LOCAL_P, LOCAL_KINDS } LocalKind;
typedef enum BridgeKind { BRIDGE_LINEAR = 0, BRIDGE_ZERO, BRIDGE_ATTN_POOL, BRIDGE_KINDS } BridgeKind;

/* Names as in options and the model file, indexed by the enums. */
extern const char *const attn_names[ATT_KINDS];
extern const char *const local_names[LOCAL_KINDS];
extern const char *const bridge_names[BRIDGE_KINDS];
extern const char *const arch_names[ARCH_KINDS];
extern const char *const norm_names[NORM_KINDS];
extern const char *const pos_names[POS_KINDS];

typedef struct ModelConfig {
    Arch arch;
    Cell cell;
    int layers;        /* encoder and decoder layers (each stack, for the Transformer) */
    bool bidir;        /* bidirectional encoder */
    int emb;           /* E: embedding size */
    int hidden;        /* H: encoder hidden size per direction */
    int dec_hidden;    /* D: decoder hidden size */
    int attn;          /* A: attention size */
    int deep_out;      /* P: deep-output size (the attentional state on Luong's path) */
    AttnKind attention;
    int heads;         /* multihead and the Transformer; 1 otherwise */
    LocalKind local;
    int window;        /* half-width of a local window; 0 when global */
    bool input_feed;   /* Luong's path only */
    BridgeKind bridge;
    /* Transformer only (the recurrent fields above are unused by it but emb: d) */
    int model_dim;     /* d */
    int ff;            /* width of the feed-forward layers */
    NormKind norm;
    PosKind positions;
    int max_positions; /* rows of the learned position tables; 0 with sinusoidal */
    float dropout;
    float label_smoothing;
    bool tie_embeddings; /* out.proj.weight is tgt_emb.weight (needs P == E, or d) */
    bool share_embeddings; /* Transformer: tgt_emb.weight is src_emb.weight (one vocabulary) */
    int src_vocab, tgt_vocab;
} ModelConfig;

/* The reference configuration (bi-GRU 256, Bahdanau 256, deep output 256). */
ModelConfig model_config_default(void);
/* The Transformer's defaults: d 256, 3 + 3 layers, 4 heads, ff 1024, post-norm,
   sinusoidal positions, dropout 0.1, label smoothing 0.1. */
ModelConfig model_config_transformer(void);
/* The checks every kind shares (vocabularies, dropout, label smoothing); each kind's
   own follow in its ModelOps check (model_config_check, model/model.h). */
int model_config_check_common(const ModelConfig *c, Err *e);
/* K: size of one encoder state (2H when bidirectional). */
static inline int model_enc_size(const ModelConfig *c) { return c->bidir ? 2 * c->hidden : c->hidden; }
/* G: gates per cell (3 for GRU, 4 for LSTM). */
static inline int model_gates(const ModelConfig *c) { return c->cell == CELL_GRU ? 3 : 4; }
const char *cell_name(Cell c);
const char *attn_name(AttnKind a);
const char *local_name(LocalKind l);
const char *bridge_name(BridgeKind b);
/* The attention kind named s (attn_names), or -1 when unknown. */
int attn_from_name(const char *s);

/* Luong's path: every mechanism but Bahdanau's. */
static inline bool model_luong(const ModelConfig *c) { return c->attention != ATT_BAHDANAU; }
/* Additive scores vᵀ tanh(q + k) (bahdanau, luong-concat); with scaled-dot and multihead
   they are the kinds with a query projection attention.query. */
static inline bool model_attn_additive(const ModelConfig *c)
{
    return c->attention == ATT_BAHDANAU || c->attention == ATT_LUONG_CONCAT;
}
static inline bool model_attn_projects_query(const ModelConfig *c)
{
    return model_attn_additive(c) || c->attention == ATT_SCALED_DOT || c->attention == ATT_MULTIHEAD;
}
/* Width of the attention keys: A for additive and scaled kinds, D for luong-general and
   for luong-dot when K != D; 0 when luong-dot uses the encoder states themselves. */
int model_key_size(const ModelConfig *c);
/* Width of the layer-0 decoder input. */
int model_dec_in_size(const ModelConfig *c);
/* Width of the input of out.pre: [s; c; y] on Bahdanau's path, [c; s] on Luong's. */
int model_pre_in_size(const ModelConfig *c);

/*
 * Reading the s2s.config object (model/file.h): each kind's ModelOps config_get reads
 * its own keys with these; each one fills e ("WHERE: 'KEY' must be ...") and returns
 * -1 when the key's value is not what it must be (the key must be present).
 */
/* The index in allowed[0..n) of the string value of key, or -1. */
int cfg_str(const JsonVal *root, const char *key, const char *const *allowed, int n,
            const char *where, Err *e);
int cfg_int(const JsonVal *root, const char *key, int lo, int hi, int *out, const char *where, Err *e);
int cfg_bool(const JsonVal *root, const char *key, bool *out, const char *where, Err *e);
/* A number in [0, 1). */
int cfg_unit(const JsonVal *root, const char *key, float *out, const char *where, Err *e);
/* The integer keys of s2s.config: each one's range and field of ModelConfig. */
typedef struct IntKey {
    const char *key;
    int lo, hi;
    size_t off;
} IntKey;
#define INT_KEY(k, lo, hi, field) {k, lo, hi, offsetof(ModelConfig, field)}
/* Every key of keys (ended by a NULL key) into its field of c, in order; the first bad
   one is the error. */
int cfg_ints(const JsonVal *root, const IntKey *keys, ModelConfig *c, const char *where, Err *e);
/* The keys every kind has (tie_embeddings, dropout, label_smoothing), read; and
   written, in the order of the file (dropout, label_smoothing, tie_embeddings). */
int cfg_common(const JsonVal *root, ModelConfig *c, const char *where, Err *e);
void cfg_put_common(const ModelConfig *c, JsonWriter *w);

#endif
