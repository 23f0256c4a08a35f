/* The recurrent model's parameters: its views of the flat arrays (m->impl), the
   parameter walk in the order of docs/model.md, initialisation, the checks of its
   options and the matrices its decoder step quantizes (rnn_params.c). Internal to
   src/model/; tests read the weights through rnn_weights. */
#ifndef S2S_MODEL_RNN_PARAMS_H
#define S2S_MODEL_RNN_PARAMS_H

#include "model/model.h"

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

/* A recurrent model's views of its parameters and gradients (m->impl). */
static inline Weights *rnn_weights(const Model *m) { return (Weights *)m->impl; }
static inline Weights *rnn_grads(const Model *m) { return (Weights *)m->impl + 1; }

int rnn_check(const ModelConfig *c, Err *e);
void rnn_walk(ParamWalk *w, void *views, const ModelConfig *c);
void rnn_init_random(Model *m, Rng *rng);
int rnn_max_positions(const Model *m);
void rnn_quantize(Model *m, Precision p);
/* Its part of s2s.config (ModelOps config_keys, config_put, config_get). */
extern const char *const rnn_config_keys[];
extern const char *const rnn_config_optional[];
void rnn_config_put(const ModelConfig *c, JsonWriter *w);
int rnn_config_get(const JsonVal *root, ModelConfig *c, const char *where, Err *e);

#endif
