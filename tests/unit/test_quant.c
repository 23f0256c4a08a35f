/* nn/quant: bf16 rounding, int8 rows with their scales, and the product against the
   dequantized weights. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "nn/quant.h"

static float from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

Test(quant, bf16_rounds_to_nearest_even)
{
    cr_expect_eq(nn_bf16_from_float(1.0f), 0x3F80);
    cr_expect_eq(nn_bf16_from_float(-2.0f), 0xC000);
    /* halfway between 0x3F80 and 0x3F81: to the even one; just above: up */
    cr_expect_eq(nn_bf16_from_float(from_bits(0x3F808000u)), 0x3F80);
    cr_expect_eq(nn_bf16_from_float(from_bits(0x3F818000u)), 0x3F82);
    cr_expect_eq(nn_bf16_from_float(from_bits(0x3F808001u)), 0x3F81);
    cr_expect_eq(nn_bf16_from_float(from_bits(0x3F807FFFu)), 0x3F80);
    /* the largest floats round up to infinity; infinity and NaN stay what they are */
    cr_expect_eq(nn_bf16_from_float(from_bits(0x7F7FFFFFu)), 0x7F80);
    cr_expect_eq(nn_bf16_from_float(INFINITY), 0x7F80);
    cr_expect(isnan(nn_float_from_bf16(nn_bf16_from_float(NAN))));
    cr_expect_eq(nn_float_from_bf16(0x3F80), 1.0f);
    cr_expect_eq(nn_float_from_bf16(0x4049), 3.140625f);
}

Test(quant, int8_rows_scale_by_their_largest_magnitude)
{
    const float W[2][4] = {{0.5f, -1.27f, 0.0f, 0.01f}, {0, 0, 0, 0}};
    QMatrix q;
    nn_qmat_init(&q, &W[0][0], 2, 4, PREC_INT8);
    /* scale 1.27 / 127 = 0.01; 0.5 is 50 steps, 0.01 one */
    cr_expect_float_eq(q.scale[0], 0.01f, 1e-9);
    const int steps[4] = {50, -127, 0, 1};
    for (int c = 0; c < 4; c++)
        cr_expect_eq(nn_qmat_weight(&q, 0, c), q.scale[0] * (float)steps[c], "column %d: %g", c,
                     nn_qmat_weight(&q, 0, c));
    cr_expect_eq(q.scale[1], 1.0f, "an all-zero row keeps scale 1");
    cr_expect_eq(nn_qmat_weight(&q, 1, 2), 0.0f);
    nn_qmat_free(&q);
    cr_expect_eq(precision_from_name("int8"), PREC_INT8);
    cr_expect_eq(precision_from_name("bf16"), PREC_BF16);
    cr_expect_eq(precision_from_name("f32"), PREC_F32);
    cr_expect_eq(precision_from_name("fp16"), -1);
}

/* y = x W^T + b with the dequantized W, for 1 to 19 input rows (passes of 8 and a
   remainder) and a width that is not a multiple of the 16 lanes: within float
   rounding of a double-precision sum. */
Test(quant, the_product_uses_the_dequantized_weights)
{
    enum { OUT = 37, IN = 45 };
    Rng r;
    rng_seed(&r, 9);
    float *W = malloc(sizeof(float) * OUT * IN), *b = malloc(sizeof(float) * OUT);
    float *x = malloc(sizeof(float) * 19 * IN), *y = malloc(sizeof(float) * 19 * OUT);
    for (int i = 0; i < OUT * IN; i++)
        W[i] = (float)rng_normal(&r);
    for (int i = 0; i < OUT; i++)
        b[i] = (float)rng_normal(&r);
    for (int i = 0; i < 19 * IN; i++)
        x[i] = (float)rng_normal(&r);
    for (int p = PREC_BF16; p <= PREC_INT8; p++) {
        QMatrix q;
        nn_qmat_init(&q, W, OUT, IN, (Precision)p);
        double worst = 0, wq = 0;
        for (int n = 1; n <= 19; n += 6) {
            nn_qmat_forward(y, x, &q, b, n);
            for (int m = 0; m < n; m++)
                for (int o = 0; o < OUT; o++) {
                    double want = b[o], exact = b[o], mag = fabs(b[o]);
                    for (int k = 0; k < IN; k++) {
                        want += (double)x[m * IN + k] * nn_qmat_weight(&q, o, k);
                        exact += (double)x[m * IN + k] * W[o * IN + k];
                        mag += fabs((double)x[m * IN + k] * W[o * IN + k]);
                    }
                    double err = fabs(y[m * OUT + o] - want) / mag;
                    worst = err > worst ? err : worst;
                    double qerr = fabs(want - exact) / mag;
                    wq = qerr > wq ? qerr : wq;
                }
        }
        cr_expect_lt(worst, 1e-6, "%s: %.3g of the row's magnitude off the dequantized product",
                     precision_names[p], worst);
        /* and the quantization itself is small: bf16 keeps 8 bits, int8 7 and a sign */
        cr_expect_lt(wq, p == PREC_BF16 ? 4e-3 : 1.5e-2, "%s: quantization error %.3g", precision_names[p], wq);
        nn_qmat_free(&q);
    }
    free(W);
    free(b);
    free(x);
    free(y);
}
