/* The model's parameters: named views into one flat array (weights, gradients and
   optimiser moments all share this layout). Names and shapes are those of
   docs/model.md, i.e. the PyTorch module's state_dict. */
#ifndef S2S_MODEL_PARAMS_H
#define S2S_MODEL_PARAMS_H

#include <stddef.h>

#include "model/config.h"
#include "nn/real.h"

typedef struct RnnWeights {
    real *w_ih, *w_hh, *b_ih, *b_hh; /* (G*Hc,In) (G*Hc,Hc) (G*Hc) (G*Hc) */
} RnnWeights;

typedef struct Weights {
    real *src_emb;                           /* (Vs,E) */
    real *tgt_emb;                           /* (Vt,E) */
    RnnWeights enc[MODEL_MAX_LAYERS][2];     /* [layer][direction] */
    real *bridge_w[MODEL_MAX_LAYERS];        /* (D,K) */
    real *bridge_b[MODEL_MAX_LAYERS];        /* (D) */
    real *bridge_cw[MODEL_MAX_LAYERS];       /* (D,K), LSTM only */
    real *bridge_cb[MODEL_MAX_LAYERS];       /* (D), LSTM only */
    real *pool_w, *pool_b, *pool_ctx;        /* (A,K) (A) (1,A): attn-pool bridge */
    /* attention; NULL where the variant has no such tensor (docs/model.md) */
    real *att_q;                             /* (A,D) */
    real *att_k;                             /* (Ak,K), Ak = model_key_size */
    real *att_kb;                            /* (A) Bahdanau */
    real *att_v;                             /* (1,A) additive kinds */
    real *att_val;                           /* (A,K) multihead */
    real *att_out;                           /* (K,A) multihead */
    real *att_pos;                           /* (A,D) local-p */
    real *att_pos_v;                         /* (1,A) local-p */
    RnnWeights dec[MODEL_MAX_LAYERS];
    real *pre_w;                             /* (P, model_pre_in_size) */
    real *pre_b;                             /* (P) */
    real *proj_w;                            /* (Vt,P); tgt_emb when tied */
    real *proj_b;                            /* (Vt) */
} Weights;

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

#define PARAM_NAME_MAX 48

typedef struct ParamInfo {
    char name[PARAM_NAME_MAX];
    int ndim;
    int shape[2];
    size_t offset; /* in reals from the start of the flat array */
    size_t size;   /* in reals */
} ParamInfo;

typedef struct ParamLayout {
    ParamInfo *info;
    int n;
    size_t total; /* reals in the flat array */
} ParamLayout;

/* Builds the layout for a configuration; free with param_layout_free. */
void param_layout_init(ParamLayout *l, const ModelConfig *c);
void param_layout_free(ParamLayout *l);
/* Points every field of w into base (an array of l->total reals); recurrent models. */
void weights_bind(Weights *w, real *base, const ModelConfig *c);
/* The same for the Transformer. */
void tf_weights_bind(TfWeights *w, real *base, const ModelConfig *c);
/* Index of a tensor by name, -1 when absent. */
int param_find(const ParamLayout *l, const char *name);

#endif
