/* The output layer of both model families: logits = h Wᵀ + b over the target
   vocabulary, the label-smoothed cross-entropy of nn/loss.h, and in training its
   gradient, computed a chunk of rows at a time so that the logits of a whole batch
   never exist at once (docs/model.md, "The output layer in chunks").
   Internal to src/model/. */
#ifndef S2S_MODEL_OUTPUT_H
#define S2S_MODEL_OUTPUT_H

#include "nn/real.h"

/* Rows per chunk for a vocabulary of V and at most N rows per batch: about 4 Mi
   floats of logits, at least 64 rows (for the matrix products), at most N. */
int output_chunk_rows(int N, int V);

typedef struct OutputLayer {
    const real *w, *b;   /* (V,P), (V) */
    real *gw, *gb;       /* their gradients (accumulated), or NULL: no gradient */
    int P, V;
    real eps;            /* label smoothing */
    int chunk;           /* rows per chunk */
    real *logits;        /* (chunk,V): logits, then probabilities, then their gradient */
    real *probs;         /* (chunk,V), or NULL: probabilities written over the logits */
} OutputLayer;

typedef struct OutputLoss {
    double loss; /* label-smoothed cross-entropy, summed over the non-pad targets */
    double nll;  /* −log p(target), summed over the same */
} OutputLoss;

/* The loss of N rows of h (N,P) against targets (N, 0 = padding). With o->gw: dh (N,P)
   is set to the gradient of loss · scale with respect to h, and o->gw, o->gb accumulate
   theirs. Without: when N <= o->chunk and o->probs is set, o->logits holds all N rows'
   logits afterwards. The sums run in row order, whatever the chunk. */
OutputLoss output_loss(const OutputLayer *o, const real *h, const int *targets, int N, real scale,
                       real *dh);

#endif
