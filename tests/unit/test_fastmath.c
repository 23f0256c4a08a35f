/* The float exp and tanh of nn/real.h against libm over a dense grid: the accuracy the
   header states, and the edges (underflow to 0, overflow to +inf, NaN, ±1). */
#include <criterion/criterion.h>
#include <math.h>

#include "nn/real.h"

Test(fastmath, exp_within_2_ulp_and_its_edges)
{
    double worst = 0;
    for (float x = -87.0f; x < 88.7f; x += 0.000731f) {
        double want = exp((double)x), got = r_expf(x);
        double rel = fabs(got - want) / want;
        worst = rel > worst ? rel : worst;
    }
    cr_expect(worst <= 2.5e-7, "worst relative error %.3g (2 ulp of float is 2.4e-7)", worst);
    cr_expect(r_expf(0.0f) == 1.0f);
    cr_expect(r_expf(-104.5f) == 0.0f && r_expf(-1000.0f) == 0.0f);
    cr_expect(r_expf(-100.0f) > 0.0f, "gradual underflow, not 0, at -100");
    cr_expect(isinf(r_expf(88.8f)) && isinf(r_expf(1e30f)));
    cr_expect(isnan(r_expf(NAN)));
    cr_expect(r_sigmoid(-1000.0f) == 0.0f && r_sigmoid(1000.0f) == 1.0f);
}

Test(fastmath, tanh_within_a_few_ulp_and_its_edges)
{
    double worst = 0;
    for (float x = -12.0f; x < 12.0f; x += 0.0000917f) {
        double want = tanh((double)x), got = r_tanhf(x);
        double rel = want != 0 ? fabs(got - want) / fabs(want) : fabs(got);
        worst = rel > worst ? rel : worst;
    }
    cr_expect(worst <= 5e-7, "worst relative error %.3g", worst);
    cr_expect(r_tanhf(0.0f) == 0.0f && r_tanhf(1e-30f) == 1e-30f);
    cr_expect(r_tanhf(9.6f) == 1.0f && r_tanhf(-100.0f) == -1.0f && r_tanhf(INFINITY) == 1.0f);
    cr_expect(isnan(r_tanhf(NAN)));
}
