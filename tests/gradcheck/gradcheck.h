/* Shared helpers for the gradient checks. These tests are compiled with
   -DS2S_REAL_DOUBLE, so `real` is double here.

   Method: a test defines a scalar L = Σ w ⊙ out with fixed random weights w (so the
   upstream gradient is w), runs the backward pass once, and compares every gradient
   entry with the central difference (L(x + h) − L(x − h)) / (2h), h = GC_STEP.
   An entry passes when |analytic − numeric| <= GC_ABS_TOL + GC_REL_TOL · max(|analytic|,
   |numeric|). */
#ifndef S2S_TESTS_GRADCHECK_H
#define S2S_TESTS_GRADCHECK_H

#include <stddef.h>

#include "base/rng.h"
#include "nn/real.h"

#define GC_STEP 1e-6
#define GC_ABS_TOL 1e-7
#define GC_REL_TOL 1e-6

/* Runs the forward pass with the current inputs and returns L. */
typedef double (*GcLoss)(void *ctx);

/* Zeroed buffer of n reals, freed by gc_free_all (the suites' .fini). */
real *gc_zeros(size_t n);
/* Buffer of n reals uniform in [-scale, scale). */
real *gc_rand(Rng *r, size_t n, double scale);
/* A copy of x. */
real *gc_copy(const real *x, size_t n);
void gc_free_all(void);

/* Σ w[i] · out[i]. */
double gc_dot(const real *w, const real *out, size_t n);

/* Checks the gradient of loss(ctx) with respect to the n entries of x. The analytic
   gradient is grad − base (base: the value grad held before backward, so that
   accumulation is checked too; NULL means 0). x is restored afterwards. Fails the
   current test with the worst entry when one is out of tolerance, and logs the worst
   absolute and relative errors (criterion --verbose; relative over entries >= 1e-4). Returns the worst ratio
   |a − n| / (GC_ABS_TOL + GC_REL_TOL · max(|a|, |n|)) (<= 1 passes). */
double gc_check(const char *what, real *x, size_t n, const real *grad, const real *base,
                GcLoss loss, void *ctx);

/* Fails the current test unless every entry of x is exactly 0 (naming what and the
   first offending index). */
void gc_expect_zero(const char *what, const real *x, size_t n);

#endif
