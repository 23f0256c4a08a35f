/*
 * Matrix products in bf16 (s2s train --precision bf16): both factors rounded to bf16
 * (to nearest, ties to even), multiplied and accumulated in fp32 by oneDNN's matmul
 * primitive, the result in fp32. The weights, their gradients, Adam's moments and the
 * loss stay in fp32: the standard mixed-precision recipe, with only the products'
 * inputs rounded. nn_gemm (nn/linalg.h) takes this path once nn_set_precision chose it.
 */
#ifndef S2S_NN_BF16_H
#define S2S_NN_BF16_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "nn/quant.h"

/* Whether this CPU multiplies bf16 in hardware (AVX512-BF16 or AMX), as oneDNN sees it
   (false without oneDNN, which is opened on first use). */
bool nn_bf16_native(void);

/* The precision of nn_gemm's float products from now on: PREC_F32 or PREC_BF16 (the
   rounding of nn_bf16_from_float). PREC_BF16 fails (-1, e set) without oneDNN or on a
   CPU without bf16 instructions (emulated, it would be slower than fp32). */
int nn_set_precision(Precision p, Err *e);
Precision nn_precision(void);

/* The threads of the bf16 products (nn_set_threads calls it). */
void nn_bf16_threads(int n);

/* Until nn_bf16_fixed_end, the n floats at p (a model's weights, during a forward and
   backward pass) do not change: the bf16 form of a matrix among them is rounded the
   first time a product reads it and kept (the recurrent weights of every time step, a
   weight in its forward and its backward product). */
void nn_bf16_fixed_begin(const float *p, size_t n);
void nn_bf16_fixed_end(void);

/* The next product's A is the last product's A, unchanged (both as stored): its bf16
   form is not rounded again (nn_linear_backward's two products of dy). Products split
   over the pool (nn_bf16_split) round each thread's part of A themselves and do not
   share it. */
void nn_bf16_same_a(const float *A);

/* From now on, split each bf16 product over the pool's threads by rows of C (oneDNN on
   one thread in each), instead of oneDNN's own OpenMP threads. */
void nn_bf16_split(bool on);

/* C(M,N) = op(A)·op(B) + beta·C in bf16 (A, B rounded), shapes as nn_gemm's: M, N, K
   >= 1; ldx the leading dimensions, trans_x as GemmShape's; C dense (ldc == N). */
void nn_gemm_bf16(int M, int N, int K, bool trans_a, bool trans_b, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc);

#endif
