/*
 * Model FLOPs of one training step, counted analytically from the configuration and
 * the batch (bench/README.md, "FLOPs per token", writes the formula out).
 *
 * Only products are counted (matrix products, and the attention's dot products and
 * weighted sums), 2 FLOPs per multiply-add, over the work the model needs: the encoder
 * over each sentence's own source tokens, the decoder over each sentence's own target
 * tokens (<eos> included), attention over the sentence's own source positions (or its
 * local window). Elementwise work (gates, tanh, softmax, the loss, Adam) and padding
 * are not counted. A training step costs 3 times the forward products: the backward
 * pass of every product computes the gradient of its input and of its weight (or of
 * both operands), each as large as the forward product.
 */
#ifndef S2S_BENCH_FLOPS_H
#define S2S_BENCH_FLOPS_H

#include "model/config.h"
#include "model/model.h"

/* Forward FLOPs of the parts of the model, for one sentence of src_len source and
   tgt_len target tokens (<eos> included). */
typedef struct FlopsParts {
    double encoder;   /* RNN layers, both directions (Transformer: encoder layers) */
    double keys;      /* attention keys (and multi-head values; Transformer: those over
                         the encoder output) */
    double bridge;    /* initial decoder state */
    double decoder;   /* decoder RNN layers (Transformer: projections and feed-forward) */
    double attention; /* query, scores, context per step (Transformer: scores and
                         weighted sums of every attention) */
    double output;    /* deep output / attentional state */
    double proj;      /* vocabulary projection */
} FlopsParts;

void flops_sentence(const ModelConfig *c, int src_len, int tgt_len, FlopsParts *out);
/* The sum of the parts. */
double flops_parts_total(const FlopsParts *p);
/* Forward FLOPs of a batch (every row with its own lengths). */
double flops_forward_batch(const ModelConfig *c, const Batch *b);
/* Training FLOPs of a batch: 3 × the forward FLOPs. */
double flops_train_batch(const ModelConfig *c, const Batch *b);

#endif
