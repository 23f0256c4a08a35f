/* Model configuration: sizes and options, and their JSON form in the model file. */
#ifndef S2S_MODEL_CONFIG_H
#define S2S_MODEL_CONFIG_H

#include <stdbool.h>

#include "base/buf.h"
#include "base/err.h"

#define MODEL_MAX_LAYERS 4

typedef enum Cell { CELL_GRU = 0, CELL_LSTM = 1 } Cell;

typedef struct ModelConfig {
    Cell cell;
    int layers;        /* encoder and decoder layers */
    bool bidir;        /* bidirectional encoder */
    int emb;           /* E: embedding size */
    int hidden;        /* H: encoder hidden size per direction */
    int dec_hidden;    /* D: decoder hidden size */
    int attn;          /* A: attention size */
    int deep_out;      /* P: deep-output size */
    float dropout;
    float label_smoothing;
    bool tie_embeddings; /* out.proj.weight is tgt_emb.weight (needs P == E) */
    int src_vocab, tgt_vocab;
} ModelConfig;

/* The reference configuration (bi-GRU 256, Bahdanau 256, deep output 256). */
ModelConfig model_config_default(void);
/* Checks sizes and option combinations; the message names the option. */
int model_config_check(const ModelConfig *c, Err *e);
/* K: size of one encoder state (2H when bidirectional). */
static inline int model_enc_size(const ModelConfig *c) { return c->bidir ? 2 * c->hidden : c->hidden; }
/* G: gates per cell (3 for GRU, 4 for LSTM). */
static inline int model_gates(const ModelConfig *c) { return c->cell == CELL_GRU ? 3 : 4; }
const char *cell_name(Cell c);

#endif
