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
#define R_EXP expf
#define R_LOG logf
#define R_TANH tanhf
#define R_SQRT sqrtf
#define R_FABS fabsf
#define R_CBLAS_GEMM cblas_sgemm
#define R_CBLAS_GEMV cblas_sgemv
#define R_CBLAS_AXPY cblas_saxpy
#endif

/* Logistic sigmoid; exact 0 or 1 at the extremes, never NaN. */
static inline real r_sigmoid(real x) { return (real)1 / ((real)1 + R_EXP(-x)); }

#endif
