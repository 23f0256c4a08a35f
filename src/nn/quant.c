#include "nn/quant.h"

#include <math.h>
#include <stdatomic.h>
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

/* Row r, column c of the interleaved layout: blocks of QLANES rows, and within a block
   the QLANES rows' weights of column c side by side, so that one column step updates
   QLANES outputs with one vector operation and no sum across lanes. */
static size_t q_at(const QMatrix *q, int r, int c)
{
    return ((size_t)(r / QLANES) * (size_t)q->cols + (size_t)c) * QLANES + (size_t)(r % QLANES);
}

/* int8: row r, column c in blocks of QLANES rows and, within a block, groups of 4
   columns: the block's 16 rows' 4 weights of a group side by side (64 bytes), the operand
   of one 16-lane 8-bit dot product. */
static size_t q8_at(const QMatrix *q, int r, int c)
{
    return (((size_t)(r / QLANES) * (size_t)q->groups + (size_t)(c / 4)) * QLANES + (size_t)(r % QLANES)) * 4 +
           (size_t)(c % 4);
}

/* The largest |x[i]| (NaN skipped), in QLANES running lanes so that it vectorises. */
NN_SIMD static float q8_absmax(const float *x, int n)
{
    float m[QLANES] = {0};
    int i = 0;
    for (; i + QLANES <= n; i += QLANES)
        for (int l = 0; l < QLANES; l++)
            m[l] = fabsf(x[i + l]) > m[l] ? fabsf(x[i + l]) : m[l];
    float mx = 0;
    for (int l = 0; l < QLANES; l++)
        mx = m[l] > mx ? m[l] : mx;
    for (; i < n; i++)
        mx = fabsf(x[i]) > mx ? fabsf(x[i]) : mx;
    return mx;
}

/* k[i] = round(x[i] / s) (to nearest even) within [-127, 127]; NaN gives 0. */
NN_SIMD static void q8_steps(int8_t *k, const float *x, int n, float s)
{
    for (int i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / s);
        k[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v == v ? v : 0);
    }
}

typedef struct Q8Pack {
    QMatrix *q;
    const float *W;
} Q8Pack;

/* Blocks [lo, hi) of an int8 matrix: each row's scale, steps and sum, its groups of 4
   copied into place. */
static void q8_pack_range(void *ctx, size_t lo, size_t hi)
{
    const Q8Pack *j = ctx;
    QMatrix *q = j->q;
    const int cols = q->cols, G = q->groups;
    int8_t *k = XNEW(int8_t, (size_t)G * 4);
    for (size_t r = lo * QLANES; r < hi * QLANES; r++) {
        if (r >= (size_t)q->rows) {
            q->scale[r] = 1;
            continue;
        }
        const float *w = j->W + r * (size_t)cols;
        float mx = q8_absmax(w, cols);
        float s = mx > 0 ? mx / 127.0f : 1.0f;
        q->scale[r] = s;
        memset(k, 0, (size_t)G * 4);
        q8_steps(k, w, cols, s);
        int32_t sum = 0;
        for (int c = 0; c < cols; c++)
            sum += k[c];
        q->comp[r] = 128 * sum;
        int8_t *dst = q->i8 + q8_at(q, (int)r, 0);
        for (int g = 0; g < G; g++)
            memcpy(dst + (size_t)g * QLANES * 4, k + 4 * g, 4);
    }
    free(k);
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
    q->groups = (cols + 3) / 4;
    q->i8 = XCNEW(int8_t, padded * (size_t)q->groups * 4);
    q->scale = XNEW(float, padded);
    q->comp = XCNEW(int32_t, padded);
    Q8Pack j = {.q = q, .W = W};
    nn_parallel_for(padded / QLANES, 8, q8_pack_range, &j);
}

void nn_qmat_free(QMatrix *q)
{
    free(q->bf16);
    free(q->i8);
    free(q->scale);
    free(q->comp);
    memset(q, 0, sizeof *q);
}

float nn_qmat_weight(const QMatrix *q, int r, int c)
{
    if (q->prec == PREC_BF16)
        return nn_float_from_bf16(q->bf16[q_at(q, r, c)]);
    return q->scale[r] * (float)q->i8[q8_at(q, r, c)];
}

void nn_qset_add(QSet *s, const float *W, int rows, int cols, Precision prec)
{
    if (!W || rows <= 0 || cols <= 0)
        return;
    s->of = xrealloc_array(s->of, (size_t)s->n + 1, sizeof *s->of);
    s->q = xrealloc_array(s->q, (size_t)s->n + 1, sizeof *s->q);
    s->of[s->n] = W;
    nn_qmat_init(&s->q[s->n], W, rows, cols, prec);
    s->n++;
}

const QMatrix *nn_qset_find(const QSet *s, const float *W, int rows, int cols)
{
    for (int i = 0; i < s->n; i++)
        if (s->of[i] == W && s->q[i].rows == rows && s->q[i].cols == cols)
            return &s->q[i];
    return NULL;
}

void nn_qset_free(QSet *s)
{
    for (int i = 0; i < s->n; i++)
        nn_qmat_free(&s->q[i]);
    free(s->of);
    free(s->q);
    memset(s, 0, sizeof *s);
}

typedef struct QJob {
    float *y;
    const float *x, *b;
    const QMatrix *q;
    int N;
    /* int8: the input rows quantized (N, groups·4) and their scales */
    const uint8_t *xq;
    const uint64_t *x16; /* (N, groups) each group's 4 values as 16-bit lanes */
    const float *xs;
} QJob;

enum { QBLOCKS = 4 }; /* row blocks summed together: independent chains that hide latency */

/* ---- bf16: weights widened to float, the sums in float over the columns in order */

/* 16 floats and 16 bf16 as GCC vectors: one AVX-512 register in the x86-64-v4 clone, two
   AVX2 registers in the v3 one, four SSE registers otherwise. */
typedef float v16f __attribute__((vector_size(64)));
typedef uint16_t v16h __attribute__((vector_size(32)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

/* The 16 weights at `at` as floats (inlined into each clone: no vector crosses a call). */
static inline __attribute__((always_inline)) void q_load(v16f *out, const QMatrix *q, size_t at)
{
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
static void bf16_range(void *ctx, size_t lo, size_t hi)
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
                    j->y[(size_t)m * Out + r] = acc[i][l] + (j->b ? j->b[r] : 0);
                }
        }
    }
}

/* ---- int8: the input rows quantized too, the sums exact in 32-bit integers

   Input row x becomes u = round(x / sx) + 128 in [1, 255] with sx = max|x| / 127, so that
   a group of 4 is the unsigned operand of an 8-bit dot product (AVX-512 VNNI's vpdpbusd);
   sum u·q = sum (u - 128)·q + 128·sum q, and comp holds 128·sum q for each row. The integer
   sums are exact on every path, so the VNNI kernel and the portable one give the same
   bits; y = float(acc - comp) · (sx · scale) + b. */

enum { Q8_ROWS = 8 }; /* input rows per pass over the weights */

/* x (cols) into u (groups·4, the padding 128, which is 0 after the offset); returns sx,
   0 when x is all zeros (and NaN counts as 0). */
static float q8_quantize_row(uint8_t *u, const float *x, int cols, int groups)
{
    float mx = q8_absmax(x, cols);
    float sx = mx / 127.0f;
    memset(u, 0, (size_t)groups * 4);
    if (mx > 0)
        q8_steps((int8_t *)u, x, cols, sx);
    for (int c = 0; c < groups * 4; c++)
        u[c] ^= 0x80; /* k + 128 */
    return sx;
}

static inline __attribute__((always_inline)) void q8_finish(const QJob *j, const int32_t acc[QLANES], int m,
                                                            size_t blk)
{
    const QMatrix *q = j->q;
    const size_t Out = (size_t)q->rows;
    const float sx = j->xs[m];
    float *y = j->y + (size_t)m * Out;
    for (int l = 0; l < QLANES; l++) {
        size_t r = blk * QLANES + (size_t)l;
        if (r >= Out)
            break;
        y[r] = (float)(acc[l] - q->comp[r]) * (sx * q->scale[r]) + (j->b ? j->b[r] : 0);
    }
}

/* The portable kernel: NB blocks from b0 against N input rows, a group at a time; each
   lane's 4 bytes are taken apart by shifts (sign-extending) and multiplied in 32 bits. */
static inline __attribute__((always_inline)) void q8_blocks_generic(const QJob *j, size_t b0, const int NB,
                                                                    const int N)
{
    const QMatrix *q = j->q;
    const size_t G = (size_t)q->groups, Kp = G * 4;
    v16i acc[QBLOCKS][Q8_ROWS];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < NB; i++)
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++)
            acc[i][n] = (v16i){0};
    for (size_t g = 0; g < G; g++)
        _Pragma("GCC unroll 8")
        for (int i = 0; i < NB; i++) {
            v16u wu;
            memcpy(&wu, q->i8 + ((b0 + (size_t)i) * G + g) * QLANES * 4, sizeof wu);
            v16i w0 = (v16i)(wu << 24) >> 24, w1 = (v16i)(wu << 16) >> 24, w2 = (v16i)(wu << 8) >> 24,
                 w3 = (v16i)wu >> 24;
            _Pragma("GCC unroll 8")
            for (int n = 0; n < N; n++) {
                const uint8_t *u = j->xq + (size_t)n * Kp + g * 4;
                acc[i][n] += w0 * (int32_t)u[0] + w1 * (int32_t)u[1] + w2 * (int32_t)u[2] + w3 * (int32_t)u[3];
            }
        }
    _Pragma("GCC unroll 8")
    for (int i = 0; i < NB; i++)
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++) {
            int32_t a[QLANES];
            memcpy(a, &acc[i][n], sizeof a);
            q8_finish(j, a, n, b0 + (size_t)i);
        }
}

NN_SIMD static void q8_range_generic(void *ctx, size_t lo, size_t hi)
{
    const QJob *j = ctx;
    for (size_t b0 = lo; b0 < hi;) {
        const int nb = hi - b0 >= 2 ? 2 : 1;
        switch (j->N * 2 + nb - 1) {
#define Q8G(n) \
    case 2 * (n): q8_blocks_generic(j, b0, 1, n); break; \
    case 2 * (n) + 1: q8_blocks_generic(j, b0, 2, n); break;
            Q8G(1) Q8G(2) Q8G(3) Q8G(4) Q8G(5) Q8G(6) Q8G(7) Q8G(8)
#undef Q8G
        default: BUG("q8_range_generic: %d rows", j->N);
        }
        b0 += (size_t)nb;
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define Q8_X86 1
#define Q8_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* The same sums with vpdpbusd: one instruction per block and group and input row. */
static inline __attribute__((always_inline)) Q8_VNNI_TARGET void q8_blocks_vnni(const QJob *j, size_t b0,
                                                                               const int NB, const int N)
{
    const QMatrix *q = j->q;
    const size_t G = (size_t)q->groups, Kp = G * 4;
    const int8_t *w = q->i8 + b0 * G * QLANES * 4;
    __m512i acc[QBLOCKS][Q8_ROWS];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < NB; i++)
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++)
            acc[i][n] = _mm512_setzero_si512();
    for (size_t g = 0; g < G; g++) {
        __m512i wv[QBLOCKS];
        _Pragma("GCC unroll 8")
        for (int i = 0; i < NB; i++)
            wv[i] = _mm512_loadu_si512(w + ((size_t)i * G + g) * QLANES * 4);
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++) {
            int32_t u4;
            memcpy(&u4, j->xq + (size_t)n * Kp + g * 4, sizeof u4);
            const __m512i xv = _mm512_set1_epi32(u4);
            _Pragma("GCC unroll 8")
            for (int i = 0; i < NB; i++)
                acc[i][n] = _mm512_dpbusd_epi32(acc[i][n], xv, wv[i]);
        }
    }
    _Pragma("GCC unroll 8")
    for (int i = 0; i < NB; i++)
        _Pragma("GCC unroll 8")
        for (int n = 0; n < N; n++) {
            int32_t a[QLANES];
            _mm512_storeu_si512(a, acc[i][n]);
            q8_finish(j, a, n, b0 + (size_t)i);
        }
}

/* One input row: 4 blocks at a time (4 independent chains); more rows: 2 blocks, and
   the rows' chains are independent already. */
static Q8_VNNI_TARGET void q8_range_vnni(void *ctx, size_t lo, size_t hi)
{
    const QJob *j = ctx;
    for (size_t b0 = lo; b0 < hi;) {
        const int most = j->N == 1 ? 4 : 2, nb = hi - b0 >= (size_t)most ? most : 1;
        switch (j->N * 8 + nb) {
        case 8 + 4: q8_blocks_vnni(j, b0, 4, 1); break;
        case 8 + 1: q8_blocks_vnni(j, b0, 1, 1); break;
#define Q8V(n) \
    case 8 * (n) + 1: q8_blocks_vnni(j, b0, 1, n); break; \
    case 8 * (n) + 2: q8_blocks_vnni(j, b0, 2, n); break;
            Q8V(2) Q8V(3) Q8V(4) Q8V(5) Q8V(6) Q8V(7) Q8V(8)
#undef Q8V
        default: BUG("q8_range_vnni: %d rows", j->N);
        }
        b0 += (size_t)nb;
    }
}

/* Without VNNI: the weights sign-extended to 16 bits and multiplied by the input's 4
   values (16-bit lanes, 0..255) with pmaddwd, which adds each pair of products into 32
   bits exactly; a block's 16 rows end up as 32 pair sums, added two by two at the end.
   Integer sums, so the same bits as VNNI. The rows of x go one after the other over a
   block's weights, which stay in L1 after the first. */
static void q8_finish_pairs(const QJob *j, const int32_t pairs[2 * QLANES], int n, size_t blk)
{
    int32_t a[QLANES];
    for (int l = 0; l < QLANES; l++)
        a[l] = pairs[2 * l] + pairs[2 * l + 1];
    q8_finish(j, a, n, blk);
}

static __attribute__((target("avx2"))) void q8_range_avx2(void *ctx, size_t lo, size_t hi)
{
    const QJob *j = ctx;
    const QMatrix *q = j->q;
    const size_t G = (size_t)q->groups;
    for (size_t b0 = lo; b0 < hi; b0 += 2) {
        const bool two = b0 + 1 < hi;
        const int8_t *w0 = q->i8 + b0 * G * QLANES * 4, *w1 = two ? w0 + G * QLANES * 4 : w0;
        for (int n = 0; n < j->N; n++) {
            const uint64_t *x16 = j->x16 + (size_t)n * G;
            __m256i a[8];
            _Pragma("GCC unroll 8")
            for (int c = 0; c < 8; c++)
                a[c] = _mm256_setzero_si256();
            for (size_t g = 0; g < G; g++) {
                const __m256i xv = _mm256_set1_epi64x((long long)x16[g]);
                const int8_t *p0 = w0 + g * QLANES * 4, *p1 = w1 + g * QLANES * 4;
                _Pragma("GCC unroll 8")
                for (int c = 0; c < 4; c++) {
                    __m256i v0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p0 + 16 * c)));
                    __m256i v1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p1 + 16 * c)));
                    a[c] = _mm256_add_epi32(a[c], _mm256_madd_epi16(v0, xv));
                    a[4 + c] = _mm256_add_epi32(a[4 + c], _mm256_madd_epi16(v1, xv));
                }
            }
            int32_t pairs[2][2 * QLANES];
            _Pragma("GCC unroll 8")
            for (int c = 0; c < 4; c++) {
                _mm256_storeu_si256((__m256i *)(pairs[0] + 8 * c), a[c]);
                _mm256_storeu_si256((__m256i *)(pairs[1] + 8 * c), a[4 + c]);
            }
            q8_finish_pairs(j, pairs[0], n, b0);
            if (two)
                q8_finish_pairs(j, pairs[1], n, b0 + 1);
        }
    }
}

/* The same with SSE2, which every x86-64 CPU has: 16-byte vectors, the bytes
   sign-extended by unpacking each with itself and shifting right. */
static void q8_range_sse2(void *ctx, size_t lo, size_t hi)
{
    const QJob *j = ctx;
    const QMatrix *q = j->q;
    const size_t G = (size_t)q->groups;
    for (size_t b0 = lo; b0 < hi; b0++) {
        const int8_t *w = q->i8 + b0 * G * QLANES * 4;
        for (int n = 0; n < j->N; n++) {
            const uint64_t *x16 = j->x16 + (size_t)n * G;
            __m128i a[8];
            _Pragma("GCC unroll 8")
            for (int c = 0; c < 8; c++)
                a[c] = _mm_setzero_si128();
            for (size_t g = 0; g < G; g++) {
                const __m128i xv = _mm_set1_epi64x((long long)x16[g]);
                const int8_t *p = w + g * QLANES * 4;
                _Pragma("GCC unroll 8")
                for (int c = 0; c < 4; c++) {
                    __m128i b = _mm_loadu_si128((const __m128i *)(p + 16 * c));
                    __m128i lo16 = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
                    __m128i hi16 = _mm_srai_epi16(_mm_unpackhi_epi8(b, b), 8);
                    a[2 * c] = _mm_add_epi32(a[2 * c], _mm_madd_epi16(lo16, xv));
                    a[2 * c + 1] = _mm_add_epi32(a[2 * c + 1], _mm_madd_epi16(hi16, xv));
                }
            }
            int32_t pairs[2 * QLANES];
            _Pragma("GCC unroll 8")
            for (int c = 0; c < 8; c++)
                _mm_storeu_si128((__m128i *)(pairs + 4 * c), a[c]);
            q8_finish_pairs(j, pairs, n, b0);
        }
    }
}
#endif

const char *const q8_kernel_names[Q8_KERNELS] = {"portable", "sse2", "avx2", "vnni"};

/* -1: not yet chosen. Atomic: translations on several threads may choose it at once
   (they choose the same). */
static atomic_int q8_kernel = -1;

bool nn_q8_kernel_available(int k)
{
    if (k == Q8_PORTABLE)
        return true;
#ifdef Q8_X86
    __builtin_cpu_init();
    if (k == Q8_SSE2)
        return true;
    if (k == Q8_AVX2)
        return __builtin_cpu_supports("avx2");
    if (k == Q8_VNNI)
        return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
#endif
    return false;
}

bool nn_q8_kernel_set(int k)
{
    if (k < 0) {
        /* the fastest this CPU has, in the enum's order (s2s-bench greedy --batch 1
           --int8-kernel K on an AVX-512 CPU at 2 threads: vnni 956 / 1,039, avx2 546 /
           539, sse2 462 sentences/s; f32 450) */
        int best = Q8_PORTABLE;
        for (int i = Q8_KERNELS - 1; i > Q8_PORTABLE; i--)
            if (nn_q8_kernel_available(i)) {
                best = i;
                break;
            }
        atomic_store_explicit(&q8_kernel, best, memory_order_relaxed);
        return true;
    }
    if (k >= Q8_KERNELS || !nn_q8_kernel_available(k))
        return false;
    atomic_store_explicit(&q8_kernel, k, memory_order_relaxed);
    return true;
}

int nn_q8_kernel(void)
{
    if (atomic_load_explicit(&q8_kernel, memory_order_relaxed) < 0)
        nn_q8_kernel_set(-1);
    return atomic_load_explicit(&q8_kernel, memory_order_relaxed);
}

static void q8_forward(QJob *j, int N)
{
    const QMatrix *q = j->q;
    const size_t G = (size_t)q->groups, Kp = G * 4, rows = (size_t)(N < Q8_ROWS ? N : Q8_ROWS);
    ParFn fn = q8_range_generic;
    switch (nn_q8_kernel()) {
#ifdef Q8_X86
    case Q8_VNNI: fn = q8_range_vnni; break;
    case Q8_AVX2: fn = q8_range_avx2; break;
    case Q8_SSE2: fn = q8_range_sse2; break;
#endif
    default: break;
    }
    /* the 16-bit lanes only for the kernels that read them (pmaddwd's operand) */
    const bool lanes16 = nn_q8_kernel() == Q8_AVX2 || nn_q8_kernel() == Q8_SSE2;
    uint64_t *x16 = XNEW(uint64_t, rows * G + (rows * Kp + 7) / 8); /* then the 8-bit rows */
    uint8_t *xq = (uint8_t *)(x16 + rows * G);
    float xs[Q8_ROWS];
    const size_t blocks = (size_t)(q->rows + QLANES - 1) / QLANES;
    const float *x = j->x;
    float *y = j->y;
    for (int m0 = 0; m0 < N; m0 += Q8_ROWS) {
        int n = N - m0 < Q8_ROWS ? N - m0 : Q8_ROWS;
        for (int m = 0; m < n; m++) {
            uint8_t *u = xq + (size_t)m * Kp;
            xs[m] = q8_quantize_row(u, x + (size_t)(m0 + m) * q->cols, q->cols, q->groups);
            for (size_t g = 0; lanes16 && g < G; g++)
                x16[(size_t)m * G + g] = (uint64_t)u[4 * g] | (uint64_t)u[4 * g + 1] << 16 |
                                         (uint64_t)u[4 * g + 2] << 32 | (uint64_t)u[4 * g + 3] << 48;
        }
        j->N = n;
        j->x = NULL;
        j->xq = xq;
        j->x16 = x16;
        j->xs = xs;
        j->y = y + (size_t)m0 * q->rows;
        /* a share of at least 8 M multiply-adds per thread: a decoding step's products
           at batch 1 (the vocabulary projection is 4.3 M) run faster on one thread than
           waking another (s2s-bench greedy --precision int8 at 2 threads: 1,050-1,090
           sentences/s unsplit, 920-1,000 split at 4 M, 660-690 at 32 K) */
        nn_parallel_for(blocks, (size_t)((1u << 23) / ((size_t)n * Kp * QLANES)) + 1, fn, j);
    }
    free(x16);
}

void nn_qmat_forward(float *y, const float *x, const QMatrix *q, const float *b, int N)
{
    if (N <= 0 || q->rows <= 0)
        return;
    QJob j = {.y = y, .x = x, .b = b, .q = q, .N = N};
    if (q->prec == PREC_INT8) {
        q8_forward(&j, N);
        return;
    }
    size_t blocks = (size_t)(q->rows + QLANES - 1) / QLANES;
    nn_parallel_for(blocks, 16, bf16_range, &j);
}
