/* Float-precision engine: forward values of linear, GRU, LSTM and cross-entropy
   against a naive double-precision reference computed from the same float inputs.
   Tolerance: |float − reference| <= 1e-5 · max(1, |reference|). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/rnn_cell.h"

_Static_assert(sizeof(real) == sizeof(float), "the main test binary uses the float engine");

static void fill(Rng *r, float *x, size_t n, double scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(scale * (2 * rng_uniform(r) - 1));
}

static void expect_near(const char *what, double got, double ref)
{
    cr_expect(fabs(got - ref) <= 1e-5 * fmax(1, fabs(ref)), "%s: %.9g, reference %.9g", what,
              got, ref);
}

static double sigm(double x) { return 1 / (1 + exp(-x)); }

/* y[n,o] = Σ_i x[n,i] W[o,i] + b[o] in double. */
static void ref_linear(double *y, const float *x, const float *W, const float *b, int N,
                       int In, int Out)
{
    for (int n = 0; n < N; n++)
        for (int o = 0; o < Out; o++) {
            double s = b ? b[o] : 0;
            for (int i = 0; i < In; i++)
                s += (double)x[n * In + i] * W[o * In + i];
            y[n * Out + o] = s;
        }
}

enum { N = 5, IN = 33, HID = 24 };

Test(nn_float, linear_and_linear_acc_match_double_reference)
{
    Rng r;
    rng_seed(&r, 100);
    float x[N * IN], W[HID * IN], b[HID], y[N * HID];
    double ref[N * HID];
    fill(&r, x, N * IN, 1);
    fill(&r, W, HID * IN, 0.5);
    fill(&r, b, HID, 0.5);
    nn_linear_forward(y, x, W, b, &(LinearShape){N, IN, HID});
    ref_linear(ref, x, W, b, N, IN, HID);
    for (int i = 0; i < N * HID; i++)
        expect_near("linear", y[i], ref[i]);
    nn_linear_forward_acc(y, x, W, NULL, &(LinearShape){N, IN, HID});
    ref_linear(ref, x, W, b, N, IN, HID);
    double ref2[N * HID];
    ref_linear(ref2, x, W, NULL, N, IN, HID);
    for (int i = 0; i < N * HID; i++)
        expect_near("linear_acc", y[i], ref[i] + ref2[i]);
}

Test(nn_float, gru_step_matches_double_reference)
{
    Rng r;
    rng_seed(&r, 101);
    enum { H = 16 };
    float x[N * IN], h[N * H], Wih[3 * H * IN], Whh[3 * H * H], bih[3 * H], bhh[3 * H];
    float gi[N * 3 * H], gh[N * 3 * H], hout[N * H], cache[N * NN_GRU_CACHE * H];
    fill(&r, x, N * IN, 1);
    fill(&r, h, N * H, 1);
    fill(&r, Wih, 3 * H * IN, 0.3);
    fill(&r, Whh, 3 * H * H, 0.3);
    fill(&r, bih, 3 * H, 0.3);
    fill(&r, bhh, 3 * H, 0.3);
    nn_linear_forward(gi, x, Wih, bih, &(LinearShape){N, IN, 3 * H});
    nn_linear_forward(gh, h, Whh, bhh, &(LinearShape){N, H, 3 * H});
    nn_gru_cell_forward(hout, cache, gi, gh, h, N, H);
    double ri[N * 3 * H], rh[N * 3 * H];
    ref_linear(ri, x, Wih, bih, N, IN, 3 * H);
    ref_linear(rh, h, Whh, bhh, N, H, 3 * H);
    for (int n = 0; n < N; n++)
        for (int j = 0; j < H; j++) {
            const double *a = ri + n * 3 * H, *c = rh + n * 3 * H;
            double rr = sigm(a[j] + c[j]), z = sigm(a[H + j] + c[H + j]);
            double nn = tanh(a[2 * H + j] + rr * c[2 * H + j]);
            expect_near("gru h'", hout[n * H + j], (1 - z) * nn + z * h[n * H + j]);
        }
}

Test(nn_float, lstm_step_matches_double_reference)
{
    Rng r;
    rng_seed(&r, 102);
    enum { H = 16 };
    float x[N * IN], h[N * H], c[N * H], Wih[4 * H * IN], Whh[4 * H * H], bih[4 * H],
        bhh[4 * H];
    float gi[N * 4 * H], gh[N * 4 * H], hout[N * H], cout[N * H], cache[N * NN_LSTM_CACHE * H];
    fill(&r, x, N * IN, 1);
    fill(&r, h, N * H, 1);
    fill(&r, c, N * H, 2);
    fill(&r, Wih, 4 * H * IN, 0.3);
    fill(&r, Whh, 4 * H * H, 0.3);
    fill(&r, bih, 4 * H, 0.3);
    fill(&r, bhh, 4 * H, 0.3);
    nn_linear_forward(gi, x, Wih, bih, &(LinearShape){N, IN, 4 * H});
    nn_linear_forward(gh, h, Whh, bhh, &(LinearShape){N, H, 4 * H});
    nn_lstm_cell_forward(hout, cout, cache, gi, gh, c, N, H);
    double ri[N * 4 * H], rh[N * 4 * H];
    ref_linear(ri, x, Wih, bih, N, IN, 4 * H);
    ref_linear(rh, h, Whh, bhh, N, H, 4 * H);
    for (int n = 0; n < N; n++)
        for (int j = 0; j < H; j++) {
            const double *a = ri + n * 4 * H, *b = rh + n * 4 * H;
            double i = sigm(a[j] + b[j]), f = sigm(a[H + j] + b[H + j]);
            double g = tanh(a[2 * H + j] + b[2 * H + j]), o = sigm(a[3 * H + j] + b[3 * H + j]);
            double c1 = f * c[n * H + j] + i * g;
            expect_near("lstm c'", cout[n * H + j], c1);
            expect_near("lstm h'", hout[n * H + j], o * tanh(c1));
        }
}

Test(nn_float, xent_matches_double_reference)
{
    Rng r;
    rng_seed(&r, 103);
    enum { R = 6, V = 50, PAD = 0 };
    const int y[R] = {7, PAD, 49, 1, 23, PAD};
    const double eps = 0.1;
    float x[R * V], p[R * V], g[R * V] = {0};
    fill(&r, x, R * V, 6);
    x[3 * V + 5] = 80; /* a large logit */
    int count;
    double loss = nn_xent_forward(p, &count, x, y, R, V, (float)eps, PAD);
    nn_xent_backward(g, p, y, R, V, (float)eps, PAD, 0.5f);
    cr_expect_eq(count, 4);
    double ref = 0;
    for (int n = 0; n < R; n++) {
        if (y[n] == PAD) {
            for (int k = 0; k < V; k++)
                cr_expect(g[n * V + k] == 0, "ignored row %d got a gradient", n);
            continue;
        }
        double m = -INFINITY, s = 0, mean = 0;
        for (int k = 0; k < V; k++)
            m = fmax(m, x[n * V + k]);
        for (int k = 0; k < V; k++)
            s += exp(x[n * V + k] - m);
        double lse = m + log(s);
        for (int k = 0; k < V; k++) {
            mean += (lse - x[n * V + k]) / V;
            double pk = exp(x[n * V + k] - lse);
            expect_near("xent p", p[n * V + k], pk);
            expect_near("xent dlogits", g[n * V + k],
                        0.5 * (pk - ((k == y[n]) * (1 - eps) + eps / V)));
        }
        ref += (1 - eps) * (lse - x[n * V + y[n]]) + eps * mean;
    }
    expect_near("xent loss", loss, ref);
}

/* nn_linear_forward_few against a product in double, for every row count it takes, an
   input width that is not a multiple of the vector (the tail) and an odd number of
   outputs (the last pair of rows alone); and the same bits on 1 and 2 threads. */
Test(nn, few_rows_product_matches_the_product_on_any_thread_count)
{
    enum { In = 37, Out = 1001 };
    Rng r;
    rng_seed(&r, 5);
    real *W = malloc(sizeof(real) * In * Out), *x = malloc(sizeof(real) * NN_FEW_ROWS * In);
    real *b = malloc(sizeof(real) * Out), *y1 = malloc(sizeof(real) * NN_FEW_ROWS * Out);
    real *y2 = malloc(sizeof(real) * NN_FEW_ROWS * Out);
    for (int i = 0; i < In * Out; i++)
        W[i] = (real)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < NN_FEW_ROWS * In; i++)
        x[i] = (real)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < Out; i++)
        b[i] = (real)(rng_uniform(&r) * 2 - 1);
    for (int rows = 1; rows <= NN_FEW_ROWS; rows++) {
        for (int with_b = 0; with_b < 2; with_b++) {
            nn_set_threads(1);
            nn_linear_forward_few(y1, x, W, with_b ? b : NULL, &(LinearShape){rows, In, Out});
            nn_set_threads(2);
            nn_linear_forward_few(y2, x, W, with_b ? b : NULL, &(LinearShape){rows, In, Out});
            cr_expect(memcmp(y1, y2, sizeof(real) * (size_t)rows * Out) == 0, "rows %d: 1 and 2 threads differ", rows);
            for (int n = 0; n < rows; n++)
                for (int o = 0; o < Out; o++) {
                    double s = with_b ? b[o] : 0;
                    for (int k = 0; k < In; k++)
                        s += (double)x[n * In + k] * W[o * In + k];
                    cr_expect(fabs(y1[n * Out + o] - s) < 1e-5, "rows %d y[%d,%d] = %g, want %g", rows, n, o,
                              (double)y1[n * Out + o], s);
                }
        }
    }
    nn_set_threads(1);
    free(W);
    free(x);
    free(b);
    free(y1);
    free(y2);
}

/* log Σ exp(x) given the maximum (the beam's log-softmax): within 1e-6 of the sum in
   double, for lengths that are not multiples of its 16 lanes, logits spread over a wide
   range, and a maximum that occurs more than once. */
Test(nn_float, log_sum_exp_given_the_maximum_matches_double_reference)
{
    Rng r;
    rng_seed(&r, 7);
    const int lens[] = {1, 15, 16, 17, 1000, 16699};
    static float x[16699];
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        int V = lens[k];
        fill(&r, x, (size_t)V, 20);
        float mx = x[0];
        for (int v = 1; v < V; v++)
            mx = x[v] > mx ? x[v] : mx;
        if (V > 2)
            x[V / 2] = mx;
        double s = 0;
        for (int v = 0; v < V; v++)
            s += exp((double)x[v] - mx);
        double ref = mx + log(s), got = nn_log_sum_exp_max(x, V, mx);
        cr_expect(fabs(got - ref) <= 1e-6, "V %d: %.9g, reference %.9g", V, got, ref);
        cr_expect(fabs(nn_log_sum_exp(x, V) - ref) <= 1e-6, "V %d: nn_log_sum_exp", V);
    }
}
