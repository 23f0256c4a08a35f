/* The GRU/LSTM encoder–decoder with every attention variant of docs/model.md, one
   implementation of the model interface (model/model.h). Its files: rnn.c (the
   encoder, the bridge, the decoder and the output layer, forward beside backward),
   attend.c (attention and the pooling bridge), rnn_work.c (its activations and the row
   moves), rnn_params.c (the parameter walk, initialisation, option checks,
   quantization). */
#ifndef S2S_MODEL_RNN_H
#define S2S_MODEL_RNN_H

#include "model/model.h"

extern const ModelOps rnn_ops;

#endif
