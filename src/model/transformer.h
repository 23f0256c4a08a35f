/* The Transformer of "Attention Is All You Need" (docs/model.md "The Transformer"): its
   weights and its operations (tf_ops). Internal to src/model/ (transformer.c: the
   stacks and their Work; transformer_params.c: the parameter walk, initialisation,
   checks and quantization); tests read the weights through tf_weights. */
#ifndef S2S_MODEL_TRANSFORMER_H
#define S2S_MODEL_TRANSFORMER_H

#include "model/work.h"

/* The Transformer's tensors, named as PyTorch's nn.TransformerEncoderLayer /
   nn.TransformerDecoderLayer state_dict (docs/model.md). */
typedef struct TfAttnWeights {
    real *in_w, *in_b;   /* in_proj_weight (3d,d): rows q | k | v; in_proj_bias (3d) */
    real *out_w, *out_b; /* out_proj.weight (d,d), out_proj.bias (d) */
} TfAttnWeights;

typedef struct TfLayerWeights {
    TfAttnWeights self;       /* self_attn */
    TfAttnWeights cross;      /* multihead_attn: decoder layers only */
    real *ff1_w, *ff1_b;      /* linear1 (F,d) (F) */
    real *ff2_w, *ff2_b;      /* linear2 (d,F) (d) */
    real *norm_g[3], *norm_b[3]; /* norm1, norm2, norm3 (decoder) (d) */
} TfLayerWeights;

typedef struct TfWeights {
    real *src_emb, *tgt_emb;  /* (Vs,d) (Vt,d) */
    real *src_pos, *tgt_pos;  /* (max_positions,d) learned positions only */
    TfLayerWeights enc[TF_MAX_LAYERS], dec[TF_MAX_LAYERS];
    real *enc_norm_g, *enc_norm_b, *dec_norm_g, *dec_norm_b; /* (d) pre-norm only */
    real *proj_w, *proj_b;    /* (Vt,d), tgt_emb when tied; (Vt) */
} TfWeights;

/* A Transformer's views of its parameters and gradients (m->impl). */
static inline TfWeights *tf_weights(const Model *m) { return (TfWeights *)m->impl; }
static inline TfWeights *tf_grads(const Model *m) { return (TfWeights *)m->impl + 1; }

extern const ModelOps tf_ops;

/* transformer_params.c */
int tf_check(const ModelConfig *c, Err *e);
void tf_walk(ParamWalk *w, void *views, const ModelConfig *c);
void tf_init_random(Model *m, Rng *rng);
int tf_max_positions(const Model *m);
void tf_quantize(Model *m, Precision p);
/* Its part of s2s.config (ModelOps config_keys, config_put, config_get). */
extern const char *const tf_config_keys[];
extern const char *const tf_config_optional[];
void tf_config_put(const ModelConfig *c, JsonWriter *w);
int tf_config_get(const JsonVal *root, ModelConfig *c, const char *where, Err *e);

#endif
