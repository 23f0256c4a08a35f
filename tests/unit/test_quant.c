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

static void random_problem(Rng *r, float *W, float *b, float *x, int out, int in, int rows)
{
    for (int i = 0; i < out * in; i++)
        W[i] = (float)rng_normal(r);
    for (int i = 0; i < out; i++)
        b[i] = (float)rng_normal(r);
    for (int i = 0; i < rows * in; i++)
        x[i] = (float)rng_normal(r);
}

/* bf16: y = x W^T + b with the dequantized W and x in float, for 1 to 19 input rows and a
   width that is not a multiple of the 16 lanes: within float rounding of a
   double-precision sum; and the quantization itself is small (8 bits kept). */
Test(quant, bf16_product_uses_the_dequantized_weights)
{
    enum { OUT = 37, IN = 45 };
    Rng r;
    rng_seed(&r, 9);
    float *W = malloc(sizeof(float) * OUT * IN), *b = malloc(sizeof(float) * OUT);
    float *x = malloc(sizeof(float) * 19 * IN), *y = malloc(sizeof(float) * 19 * OUT);
    random_problem(&r, W, b, x, OUT, IN, 19);
    QMatrix q;
    nn_qmat_init(&q, W, OUT, IN, PREC_BF16);
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
    cr_expect_lt(worst, 1e-6, "%.3g of the row's magnitude off the dequantized product", worst);
    cr_expect_lt(wq, 4e-3, "quantization error %.3g", wq);
    nn_qmat_free(&q);
    free(W);
    free(b);
    free(x);
    free(y);
}

/* int8: the product as nn/quant.h defines it, written out here: each input row to
   round(x / sx) with sx = max|x| / 127, the weights to their int8 steps, the sum of
   products as an exact integer, y = float(sum) · (sx · scale) + b. Bit for bit, for 1 to
   21 input rows (passes of 8 and remainders), widths that are not multiples of 4 or 16,
   with every kernel this CPU can run (the portable one everywhere; SSE2 on every x86-64;
   AVX2 and VNNI where the CPU has them, as the log says). */
static void int8_reference(float *y, const float *x, const QMatrix *q, const float *b, int N)
{
    int In = q->cols, Out = q->rows;
    for (int m = 0; m < N; m++) {
        const float *xm = x + (size_t)m * In;
        float mx = 0;
        for (int k = 0; k < In; k++)
            mx = fabsf(xm[k]) > mx ? fabsf(xm[k]) : mx;
        float sx = mx / 127.0f;
        for (int o = 0; o < Out; o++) {
            long long d = 0;
            for (int k = 0; k < In; k++) {
                long qx = mx > 0 ? lrintf(xm[k] / sx) : 0;
                long qw = lrintf(nn_qmat_weight(q, o, k) / q->scale[o]);
                d += qx * qw;
            }
            y[(size_t)m * Out + o] = (float)d * (sx * q->scale[o]) + (b ? b[o] : 0);
        }
    }
}

Test(quant, int8_product_is_the_exact_integer_sum_on_every_path)
{
    const int shapes[][2] = {{37, 45}, {16, 64}, {70, 3}, {5, 257}, {33, 1024}};
    Rng r;
    rng_seed(&r, 11);
    int had = nn_q8_kernel(), tried = 0;
    for (int k = 0; k < Q8_KERNELS; k++) {
        if (!nn_q8_kernel_set(k)) {
            cr_log_info("int8 kernel %s: not on this CPU", q8_kernel_names[k]);
            continue;
        }
        tried++;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int OUT = shapes[s][0], IN = shapes[s][1];
            float *W = malloc(sizeof(float) * OUT * IN), *b = malloc(sizeof(float) * OUT);
            float *x = malloc(sizeof(float) * 21 * IN), *y = malloc(sizeof(float) * 21 * OUT),
                  *want = malloc(sizeof(float) * 21 * OUT);
            random_problem(&r, W, b, x, OUT, IN, 21);
            for (int i = 0; i < IN; i++)
                x[2 * IN + i] = 0; /* an all-zero row gives the bias */
            QMatrix q;
            nn_qmat_init(&q, W, OUT, IN, PREC_INT8);
            for (int n = 1; n <= 21; n += 4) {
                nn_qmat_forward(y, x, &q, s % 2 ? NULL : b, n);
                int8_reference(want, x, &q, s % 2 ? NULL : b, n);
                for (int i = 0; i < n * OUT; i++)
                    cr_assert_eq(memcmp(&y[i], &want[i], sizeof(float)), 0,
                                 "%s kernel, %d x %d, %d rows, output %d: %.9g, want %.9g", q8_kernel_names[k],
                                 OUT, IN, n, i, y[i], want[i]);
                if (n > 2)
                    for (int o = 0; o < OUT; o++)
                        cr_assert_eq(y[2 * OUT + o], s % 2 ? 0.0f : b[o]);
            }
            nn_qmat_free(&q);
            free(W);
            free(b);
            free(x);
            free(y);
            free(want);
        }
    }
    cr_expect_geq(tried, 1);
    cr_expect(nn_q8_kernel_set(Q8_PORTABLE), "the portable kernel runs everywhere");
    nn_q8_kernel_set(had);
}

/* And the quantization error of the whole int8 product stays small against the float
   product: 7 bits and a sign for weights and inputs. */
Test(quant, int8_product_is_close_to_the_float_product)
{
    enum { OUT = 64, IN = 256, N = 5 };
    Rng r;
    rng_seed(&r, 12);
    float *W = malloc(sizeof(float) * OUT * IN), *b = malloc(sizeof(float) * OUT);
    float *x = malloc(sizeof(float) * N * IN), *y = malloc(sizeof(float) * N * OUT);
    random_problem(&r, W, b, x, OUT, IN, N);
    QMatrix q;
    nn_qmat_init(&q, W, OUT, IN, PREC_INT8);
    nn_qmat_forward(y, x, &q, b, N);
    double worst = 0;
    for (int m = 0; m < N; m++)
        for (int o = 0; o < OUT; o++) {
            double exact = b[o], mag = fabs(b[o]);
            for (int k = 0; k < IN; k++) {
                exact += (double)x[m * IN + k] * W[o * IN + k];
                mag += fabs((double)x[m * IN + k] * W[o * IN + k]);
            }
            double err = fabs(y[m * OUT + o] - exact) / mag;
            worst = err > worst ? err : worst;
        }
    cr_expect_lt(worst, 1.5e-2, "quantization error %.3g of the row's magnitude", worst);
    nn_qmat_free(&q);
    free(W);
    free(b);
    free(x);
    free(y);
}
