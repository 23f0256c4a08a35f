/* The recurrent model's activations (RnnWork: one allocation carved for the largest
   batch) and the row moves of beam search (rnn_work.c). Internal to src/model/.
   Layout: everything is time-major. Source positions (S,B,·), target steps (T,B,·).
   Sizes: B rows, S source positions, T target steps, E embedding, H encoder hidden
   size, K = model_enc_size, D decoder size, A attention size, P deep output, G gates,
   Hh heads, Ak = model_key_size, Din = model_dec_in_size, F = model_pre_in_size. */
#ifndef S2S_MODEL_RNN_WORK_H
#define S2S_MODEL_RNN_WORK_H

#include <stdbool.h>

#include "model/work.h"

typedef struct EncDir {
    real *gi;    /* (S,B,G*H) input projections of all steps */
    real *st;    /* (S,B,H) hidden states, zero where invalid */
    real *cst;   /* (S,B,H) LSTM cell states */
    real *cache; /* (S,B,C*H) gate values */
    real *dst, *dcst, *dgi; /* gradients of the same */
} EncDir;

typedef struct DecLayer {
    real *in;    /* (T,B,D) input of layers > 0 (dropout of the layer below) */
    real *mask;  /* (T,B,D) its dropout mask */
    real *gi;    /* (B,G*D) scratch */
    real *gh;    /* (B,G*D) scratch */
    real *s;     /* (T,B,D) states */
    real *c;     /* (T,B,D) LSTM cell states */
    real *cache; /* (T,B,C*D) */
    real *ds, *dc, *din; /* (T,B,D) */
    real *s0, *c0, *ds0, *dc0; /* (B,D) initial states and their gradients */
    real *bin, *cbin; /* (B,K) bridge inputs [hf; hb] for h and c */
} DecLayer;

typedef struct RnnWork {
    Work base;
    /* encoder */
    real *xs, *xs_mask;                       /* (S,B,E) */
    real *lin[MODEL_MAX_LAYERS], *lin_mask[MODEL_MAX_LAYERS]; /* (S,B,K) layers > 0 */
    real *out[MODEL_MAX_LAYERS];              /* (S,B,K) layer outputs */
    real *dout[MODEL_MAX_LAYERS];             /* (S,B,K) */
    real *dlin;                               /* (S,B,K) */
    real *dxs;                                /* (S,B,E) */
    EncDir enc[MODEL_MAX_LAYERS][2];
    real *zeros;                              /* (B, max(H,D,P)) */
    real *egh, *edgh;                         /* (B,G*H) scratch */
    real *dbin;                               /* (B,K) */
    /* attention keys and values, once per batch (model/attend.h) */
    real *keys, *dkeys;                       /* (S,B,Ak), NULL when Ak = 0 */
    real *vals, *dvals;                       /* (S,B,A) multihead */
    /* attn-pool bridge */
    real *pool_u, *pool_q, *pool_e, *pool_a, *pool_m;      /* (S,B,A) (B,A) (B,S) (B,S) (B,K) */
    real *dpool_u, *dpool_q, *dpool_e, *dpool_a, *dpool_m; /* the same */
    /* decoder */
    DecLayer dec[MODEL_MAX_LAYERS];
    real *y, *y_mask, *dy;                    /* (T,B,E) */
    real *q, *dq;                             /* (T,B,A), (B,A) projected queries */
    real *att_cache;                          /* (S,B,A) additive kinds: one step's tanh values */
    real *e, *de;                             /* (T,Hh,B,S), (Hh,B,S) scores */
    real *asoft, *dasoft;                     /* (T,Hh,B,S), (Hh,B,S) local-p: before the Gaussian */
    real *a, *da;                             /* (T,Hh,B,S), (Hh,B,S) weights */
    real *ashow;                              /* (T,B,S) multihead: the heads' mean */
    int *lo, *hi;                             /* (T,B) local windows */
    real *pos_h, *pos_x, *pos_sig, *pos_p;    /* (T,B,A) (T,B) (T,B) (T,B) local-p */
    real *dpos_h, *dpos_x, *dpos_p;           /* (B,A) (B) (B) */
    real *heads_o, *dheads_o;                 /* (T,B,A), (B,A) multihead */
    real *ctx, *dctx;                         /* (T,B,K) */
    real *x0, *dx0;                           /* (T,B,Din), (B,Din) layer-0 input */
    real *dgi, *dgh;                          /* (B,G*D) */
    real *feat, *dfeat;                       /* (T,B,F): out.pre's input */
    real *pre, *dpre;                         /* (T,B,P) deep output / attentional state */
    real *pre_drop, *pre_mask;                /* (T,B,P) */
} RnnWork;

size_t rnn_work_bytes(const Model *m, const WorkShape *s);
Work *rnn_work_new(const Model *m, const WorkShape *s);
void rnn_work_free(Work *w);
void rnn_expand_rows(Model *m, Work *w, const Batch *b, const int *from, int n);
void rnn_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t);

#endif
