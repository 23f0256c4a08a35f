/* Weights stored in fewer bits for decoding (translate/eval --precision): bf16 (the top
   16 bits of a float, rounded to nearest even) or int8 with one scale per output row
   (w ≈ scale·q, scale = max|w| / 127, q = round(w / scale)). The weights are stored in
   blocks of 16 rows interleaved by column, so that a product updates 16 outputs per
   vector step (each column's weights converted to float on the fly, the sums in float,
   over the columns in order) and reads the compact weights once per input row. The vocabulary projection, the largest matrix of a decoder step (17 MB in
   float for 16,699 × 256), is what decoding spends its time reading. */
#ifndef S2S_NN_QUANT_H
#define S2S_NN_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/real.h"

typedef enum Precision { PREC_F32 = 0, PREC_BF16, PREC_INT8, PREC_KINDS } Precision;
extern const char *const precision_names[PREC_KINDS]; /* "f32", "bf16", "int8" */
/* The precision named `name`, or -1. */
int precision_from_name(const char *name);

typedef struct QMatrix {
    Precision prec; /* PREC_BF16 or PREC_INT8 */
    int rows, cols; /* (Out, In) as the float matrix */
    uint16_t *bf16; /* with PREC_BF16: blocks of 16 rows (the last padded with zeros),
                       each (cols, 16) */
    int8_t *i8;     /* with PREC_INT8: blocks of 16 rows, each in groups of 4 columns
                       (the last padded with zeros), a group the 16 rows' 4 weights */
    float *scale;   /* (rows, padded to 16) with PREC_INT8 */
    int32_t *comp;  /* (rows, padded to 16) with PREC_INT8: 128 · the row's sum of q */
    int groups;     /* with PREC_INT8: ceil(cols / 4) */
} QMatrix;

/* bf16 of x, rounded to nearest even (NaN stays NaN), and back. */
static inline uint16_t nn_bf16_from_float(float x)
{
    uint32_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; /* to nearest, ties to even */
    return (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40u) /* NaN: quiet, a NaN */
                                           : (uint16_t)r;
}

static inline float nn_float_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    __builtin_memcpy(&x, &u, sizeof x);
    return x;
}

/* Quantizes W (rows, cols), PyTorch layout (Out, In). */
void nn_qmat_init(QMatrix *q, const float *W, int rows, int cols, Precision prec);
void nn_qmat_free(QMatrix *q);
/* The float value the quantized weight (r, c) stands for. */
float nn_qmat_weight(const QMatrix *q, int r, int c);
/* y = x W^T + b with W the dequantized matrix: y (N, rows), x (N, cols), b (rows) or
   NULL. bf16: x in float, the sums in float. int8: each row of x is quantized too, to
   8 bits with its own scale (max|x| / 127, rounded to nearest), and the sums are exact
   integers, so the result is the same on every CPU. For the decoder's few rows (beam
   widths, small batches). */
void nn_qmat_forward(float *y, const float *x, const QMatrix *q, const float *b, int N);

/* Quantized copies of some of a model's matrices, each found by the float matrix it
   stands for and its shape. */
typedef struct QSet {
    int n;
    const float **of; /* (n) the float matrices */
    QMatrix *q;       /* (n) */
} QSet;

/* Adds W (rows, cols) in precision prec; a NULL W adds nothing. */
void nn_qset_add(QSet *s, const float *W, int rows, int cols, Precision prec);
/* The copy of W (rows, cols), or NULL. */
const QMatrix *nn_qset_find(const QSet *s, const float *W, int rows, int cols);
void nn_qset_free(QSet *s);

/* The kernels of int8 products, all giving the same bits: portable C, SSE2 and AVX2
   (16-bit products added in pairs, pmaddwd), AVX-512 VNNI (vpdpbusd). */
typedef enum Q8Kernel { Q8_PORTABLE = 0, Q8_SSE2, Q8_AVX2, Q8_VNNI, Q8_KERNELS } Q8Kernel;
extern const char *const q8_kernel_names[Q8_KERNELS]; /* "portable", "sse2", "avx2", "vnni" */
/* Whether this CPU can run kernel k. */
bool nn_q8_kernel_available(int k);
/* The kernel int8 products use from now on: k, if the CPU can run it (else false and no
   change), or with k < 0 the fastest it can: VNNI, else AVX2, else SSE2 (the portable
   kernel off x86). For tests and the benchmark. */
bool nn_q8_kernel_set(int k);
/* The kernel in use (the fastest this CPU has unless set). */
int nn_q8_kernel(void);

#endif
