/* The engine's scalar type. `real` is float in the trainer and double when compiled
   with -DS2S_REAL_DOUBLE (the gradient checks). The math and BLAS names below pick
   the matching single- or double-precision routine. */
#ifndef S2S_NN_REAL_H
#define S2S_NN_REAL_H

#include <math.h>
#include <cblas.h>

#ifdef S2S_REAL_DOUBLE
typedef double real;
#define R_EXP exp
#define R_LOG log
#define R_TANH tanh
#define R_SQRT sqrt
#define R_FABS fabs
#define R_CBLAS_GEMM cblas_dgemm
#define R_CBLAS_GEMV cblas_dgemv
#define R_CBLAS_AXPY cblas_daxpy
#else
typedef float real;
#define R_EXP r_expf
#define R_LOG logf
#define R_TANH r_tanhf
#define R_SQRT sqrtf
#define R_FABS fabsf
#define R_CBLAS_GEMM cblas_sgemm
#define R_CBLAS_GEMV cblas_sgemv
#define R_CBLAS_AXPY cblas_saxpy

/*
 * exp and tanh for float, written without calls or branches so that the compiler
 * vectorises the loops that use them (libm's expf and tanhf are calls, one element at
 * a time).
 * exp: x = n·ln2 + r with |r| <= ln2/2 (ln2 in two parts), e^r by its Taylor
 * polynomial of degree 7 (truncation below 6e-9 relative), times 2^n applied as two
 * factors 2^⌊n/2⌋·2^(n−⌊n/2⌋) so that results underflow gradually; within 2 ulp of
 * expf, 0 below -104, +inf above 88.72, NaN for NaN.
 * tanh: the odd Taylor polynomial to x^13 for |x| < 0.3 (truncation below 1e-8
 * relative), else sign(x)·(e − 1)/(e + 1) with e = exp(2|x|), |x| capped at 9.5 where
 * the result is 1 in float; within a few ulp of tanhf.
 */
/* 2^n for -126 <= n <= 127, from its exponent bits. */
static inline float r_pow2f(int n)
{
    int bits = (n + 127) << 23;
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float r_expf(float x)
{
    float xc = x > -104.0f ? x : -104.0f;
    xc = xc < 88.8f ? xc : 88.8f;
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* nearest integer */
    float r = xc - n * 0.693145751953125f;
    r = r - n * 1.42860682030941723e-6f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int ni = (int)n, n1 = ni >> 1, n2 = ni - n1;
    float y = p * r_pow2f(n1) * r_pow2f(n2);
    y = x > 88.72283f ? (float)INFINITY : y;
    return x != x ? x : y;
}

static inline float r_tanhf(float x)
{
    float ax = x < 0 ? -x : x;
    float x2 = x * x;
    float p = 21844.0f / 6081075.0f;
    p = p * x2 - 1382.0f / 155925.0f;
    p = p * x2 + 62.0f / 2835.0f;
    p = p * x2 - 17.0f / 315.0f;
    p = p * x2 + 2.0f / 15.0f;
    p = p * x2 - 1.0f / 3.0f;
    float small = x + x * x2 * p;
    float e = r_expf(2.0f * (ax < 9.5f ? ax : 9.5f));
    float big = (e - 1.0f) / (e + 1.0f);
    big = x < 0 ? -big : big;
    return ax < 0.3f ? small : (x != x ? x : big);
}
#endif

/*
 * NN_SIMD marks the hot loops of the engine and the optimiser: GCC compiles each such
 * function for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and baseline x86-64, and the loader
 * picks the widest the CPU has, so the binary stays generic. Every path computes the same
 * bits: the build never contracts a·b + c into a fused multiply-add (-ffp-contract=off)
 * and never reassociates sums, so wider vectors only do more of the same elementwise
 * operations at once. Empty on other compilers and targets.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(S2S_NO_SIMD_CLONES)
#define NN_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NN_SIMD
#endif

/* Logistic sigmoid; exact 0 or 1 at the extremes, never NaN. */
static inline real r_sigmoid(real x) { return (real)1 / ((real)1 + R_EXP(-x)); }

#endif
