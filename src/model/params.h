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
/* Points every field of w into base (an array of l->total reals). */
void weights_bind(Weights *w, real *base, const ModelConfig *c);
/* Index of a tensor by name, -1 when absent. */
int param_find(const ParamLayout *l, const char *name);

#endif
