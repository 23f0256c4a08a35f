/* The Transformer of "Attention Is All You Need" (docs/model.md "The Transformer"):
   the architecture behind model_* of seq2seq.h when cfg.arch is ARCH_TRANSFORMER.
   Internal to src/model/: seq2seq.c calls these, nothing else does. */
#ifndef S2S_MODEL_TRANSFORMER_H
#define S2S_MODEL_TRANSFORMER_H

#include "model/seq2seq.h"

typedef struct TfWork TfWork;

/* Sizes as work_new; also carves the Work's output buffers (carve_output). */
TfWork *tf_work_new(Work *w);
void tf_work_free(TfWork *t);
/* Bytes tf_work_new allocates for the sizes in w, exactly. */
size_t tf_work_bytes(Work *w);

void tf_init_random(Model *m, Rng *rng);
/* The loss; with grad, also the output layer's gradients (see model_forward_backward),
   and tf_backward the rest. */
double tf_forward(Model *m, Work *w, const Batch *b, Rng *rng, bool grad);
void tf_backward(Model *m, Work *w, const Batch *b);
void tf_encode(Model *m, Work *w, const Batch *b);
void tf_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t);
const real *tf_step_attention(const Work *w);
void tf_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n);
void tf_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t);

#endif
