#include "nn/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/parallel.h"

const char *const precision_names[PREC_KINDS] = {"f32", "bf16", "int8"};

enum { QLANES = 16 }; /* rows of a block: the outputs one vector step updates */

int precision_from_name(const char *name)
{
    for (int i = 0; i < PREC_KINDS; i++)
        if (strcmp(name, precision_names[i]) == 0)
            return i;
    return -1;
}

uint16_t nn_bf16_from_float(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and a NaN */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

float nn_float_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Row r, column c of the interleaved layout: blocks of QLANES rows, and within a block
   the QLANES rows' weights of column c side by side, so that one column step updates
   QLANES outputs with one vector operation and no sum across lanes. */
static size_t q_at(const QMatrix *q, int r, int c)
{
    return ((size_t)(r / QLANES) * (size_t)q->cols + (size_t)c) * QLANES + (size_t)(r % QLANES);
}

void nn_qmat_init(QMatrix *q, const float *W, int rows, int cols, Precision prec)
{
    CHECK(prec == PREC_BF16 || prec == PREC_INT8);
    memset(q, 0, sizeof *q);
    q->prec = prec;
    q->rows = rows;
    q->cols = cols;
    size_t padded = (size_t)(rows + QLANES - 1) / QLANES * QLANES;
    size_t n = padded * (size_t)cols;
    if (prec == PREC_BF16) {
        q->bf16 = XCNEW(uint16_t, n);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++)
                q->bf16[q_at(q, r, c)] = nn_bf16_from_float(W[(size_t)r * cols + c]);
        return;
    }
    q->i8 = XCNEW(int8_t, n);
    q->scale = XNEW(float, padded);
    for (size_t r = (size_t)rows; r < padded; r++)
        q->scale[r] = 1;
    for (int r = 0; r < rows; r++) {
        const float *w = W + (size_t)r * cols;
        float mx = 0;
        for (int c = 0; c < cols; c++)
            mx = fabsf(w[c]) > mx ? fabsf(w[c]) : mx;
        float s = mx > 0 ? mx / 127.0f : 1.0f;
        q->scale[r] = s;
        for (int c = 0; c < cols; c++) {
            float v = nearbyintf(w[c] / s);
            q->i8[q_at(q, r, c)] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
    }
}

void nn_qmat_free(QMatrix *q)
{
    free(q->bf16);
    free(q->i8);
    free(q->scale);
    memset(q, 0, sizeof *q);
}

float nn_qmat_weight(const QMatrix *q, int r, int c)
{
    size_t i = q_at(q, r, c);
    return q->prec == PREC_BF16 ? nn_float_from_bf16(q->bf16[i]) : q->scale[r] * (float)q->i8[i];
}

typedef struct QJob {
    float *y;
    const float *x, *b;
    const QMatrix *q;
    int N;
} QJob;

enum { QBLOCKS = 4 }; /* row blocks summed together: independent chains that hide latency */

/* 16 floats, 16 int8 and 16 bf16 as GCC vectors: one AVX-512 register in the
   x86-64-v4 clone, two AVX2 registers in the v3 one, four SSE registers otherwise. */
typedef float v16f __attribute__((vector_size(64)));
typedef int8_t v16b __attribute__((vector_size(16)));
typedef uint16_t v16h __attribute__((vector_size(32)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef int16_t v16s __attribute__((vector_size(32)));

/* The 16 weights at `at` as floats (inlined into each clone: no vector crosses a call). */
static inline __attribute__((always_inline)) void q_load(v16f *out, const QMatrix *q, size_t at)
{
    if (q->prec == PREC_INT8) {
        v16b b;
        memcpy(&b, q->i8 + at, sizeof b);
        /* through int16 and int32 (sign extensions, then conversion): vector instructions
           at each step, where a direct int8 conversion is done one element at a time */
        *out = __builtin_convertvector(__builtin_convertvector(__builtin_convertvector(b, v16s), v16i), v16f);
        return;
    }
    v16h h;
    memcpy(&h, q->bf16 + at, sizeof h);
    v16u u = __builtin_convertvector(h, v16u) << 16;
    memcpy(out, &u, sizeof u);
}

/* NB blocks from b0 of QLANES rows against input row x: out[i][l] is row
   (b0 + i)·QLANES + l, summed over the columns in order, NB independent sums. */
NN_SIMD static void q_blocks4(float out[][QLANES], const QMatrix *q, const float *x, size_t b0)
{
    const size_t K = (size_t)q->cols, s = K * QLANES;
    size_t at = b0 * s;
    v16f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;
    for (size_t k = 0; k < K; k++, at += QLANES) {
        const float xk = x[k];
        q_load(&w0, q, at);
        q_load(&w1, q, at + s);
        q_load(&w2, q, at + 2 * s);
        q_load(&w3, q, at + 3 * s);
        a0 += xk * w0;
        a1 += xk * w1;
        a2 += xk * w2;
        a3 += xk * w3;
    }
    memcpy(out[0], &a0, sizeof a0);
    memcpy(out[1], &a1, sizeof a1);
    memcpy(out[2], &a2, sizeof a2);
    memcpy(out[3], &a3, sizeof a3);
}

NN_SIMD static void q_blocks1(float out[][QLANES], const QMatrix *q, const float *x, size_t b0)
{
    const size_t K = (size_t)q->cols;
    size_t at = b0 * K * QLANES;
    v16f a = {0}, w;
    for (size_t k = 0; k < K; k++, at += QLANES) {
        q_load(&w, q, at);
        a += x[k] * w;
    }
    memcpy(out[0], &a, sizeof a);
}

/* Row blocks [lo, hi) for every input row. */
static void q_range(void *ctx, size_t lo, size_t hi)
{
    const QJob *j = ctx;
    const QMatrix *q = j->q;
    int Out = q->rows;
    float acc[QBLOCKS][QLANES];
    for (size_t b0 = lo; b0 < hi; b0 += QBLOCKS) {
        int nb = hi - b0 < QBLOCKS ? (int)(hi - b0) : QBLOCKS;
        for (int m = 0; m < j->N; m++) {
            const float *x = j->x + (size_t)m * q->cols;
            if (nb == QBLOCKS)
                q_blocks4(acc, q, x, b0);
            else
                for (int i = 0; i < nb; i++)
                    q_blocks1(acc + i, q, x, b0 + (size_t)i);
            for (int i = 0; i < nb; i++)
                for (int l = 0; l < QLANES; l++) {
                    size_t r = (b0 + (size_t)i) * QLANES + (size_t)l;
                    if (r >= (size_t)Out)
                        break;
                    float s = q->prec == PREC_INT8 ? q->scale[r] : 1.0f;
                    j->y[(size_t)m * Out + r] = acc[i][l] * s + (j->b ? j->b[r] : 0);
                }
        }
    }
}

void nn_qmat_forward(float *y, const float *x, const QMatrix *q, const float *b, int N)
{
    if (N <= 0 || q->rows <= 0)
        return;
    QJob j = {.y = y, .x = x, .b = b, .q = q, .N = N};
    size_t blocks = (size_t)(q->rows + QLANES - 1) / QLANES;
    nn_parallel_for(blocks, 16, q_range, &j);
}
