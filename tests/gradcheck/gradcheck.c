#include "gradcheck.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(real) == sizeof(double), "gradient checks need -DS2S_REAL_DOUBLE");

static void **allocs;
static size_t nallocs, capallocs;

static real *track(real *p)
{
    if (nallocs == capallocs) {
        capallocs = capallocs ? 2 * capallocs : 64;
        allocs = realloc(allocs, capallocs * sizeof *allocs);
        cr_assert(allocs != NULL);
    }
    allocs[nallocs++] = p;
    return p;
}

real *gc_zeros(size_t n)
{
    real *p = calloc(n ? n : 1, sizeof(real));
    cr_assert(p != NULL);
    return track(p);
}

real *gc_rand(Rng *r, size_t n, double scale)
{
    real *p = gc_zeros(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (real)(scale * (2 * rng_uniform(r) - 1));
    return p;
}

real *gc_copy(const real *x, size_t n)
{
    real *p = gc_zeros(n);
    if (n)
        memcpy(p, x, n * sizeof(real));
    return p;
}

void gc_free_all(void)
{
    for (size_t i = 0; i < nallocs; i++)
        free(allocs[i]);
    free(allocs);
    allocs = NULL;
    nallocs = capallocs = 0;
}

double gc_dot(const real *w, const real *out, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)w[i] * (double)out[i];
    return s;
}

double gc_check(const char *what, real *x, size_t n, const real *grad, const real *base,
                GcLoss loss, void *ctx)
{
    double worst = 0, worst_abs = 0, worst_rel = 0;
    size_t wi = 0;
    double wa = 0, wn = 0;
    for (size_t i = 0; i < n; i++) {
        real keep = x[i];
        x[i] = keep + GC_STEP;
        double lp = loss(ctx);
        x[i] = keep - GC_STEP;
        double lm = loss(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * GC_STEP);
        double ana = (double)grad[i] - (base ? (double)base[i] : 0.0);
        double diff = fabs(ana - num);
        double mag = fmax(fabs(ana), fabs(num));
        double ratio = diff / (GC_ABS_TOL + GC_REL_TOL * mag);
        if (diff > worst_abs)
            worst_abs = diff;
        if (mag >= 1e-4 && diff / mag > worst_rel)
            worst_rel = diff / mag;
        if (ratio > worst || i == 0) {
            worst = ratio;
            wi = i;
            wa = ana;
            wn = num;
        }
    }
    loss(ctx); /* leave the forward buffers as they were for the unperturbed inputs */
    cr_log_info("gradcheck %-24s n=%-4zu max|a-n|=%.3e max rel(|g|>=1e-4)=%.3e tol ratio=%.3f",
                what, n, worst_abs, worst_rel, worst);
    cr_expect(worst <= 1.0,
              "%s: entry %zu analytic %.12g numeric %.12g (|diff| %.3e > %.1e + %.1e*max)",
              what, wi, wa, wn, fabs(wa - wn), GC_ABS_TOL, GC_REL_TOL);
    return worst;
}

void gc_expect_zero(const char *what, const real *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (x[i] != 0) {
            cr_expect(x[i] == 0, "%s: entry %zu is %.17g, expected exactly 0", what, i,
                      (double)x[i]);
            return;
        }
    }
}
