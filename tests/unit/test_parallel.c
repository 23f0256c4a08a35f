/* The worker pool: every index is visited exactly once, and the loops that use it (the
   softmax loss, gradient clipping, Adam, layer norm, dropout) give the same bits with any
   number of threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/rng.h"
#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/rnn_cell.h"
#include "nn/ops.h"
#include "nn/parallel.h"
#include "train/optim.h"

static void count_visits(void *ctx, size_t lo, size_t hi)
{
    int *seen = ctx;
    for (size_t i = lo; i < hi; i++)
        seen[i]++;
}

Test(parallel, every_index_once_for_any_threads_and_grain)
{
    const size_t sizes[] = {0, 1, 2, 7, 64, 1000, 100003};
    const size_t grains[] = {1, 3, 1000};
    const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        nn_parallel_set_threads(threads[t]);
        cr_assert_eq(nn_parallel_threads(), threads[t]);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
                int *seen = calloc(sizes[s] + 1, sizeof(int));
                nn_parallel_for(sizes[s], grains[g], count_visits, seen);
                for (size_t i = 0; i < sizes[s]; i++)
                    cr_assert_eq(seen[i], 1, "threads %d n %zu grain %zu: index %zu seen %d times",
                                 threads[t], sizes[s], grains[g], i, seen[i]);
                free(seen);
            }
    }
    nn_parallel_set_threads(1);
}

static real *random_array(size_t n, uint64_t seed, double scale)
{
    Rng r;
    rng_seed(&r, seed);
    real *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (real)((2 * rng_uniform(&r) - 1) * scale);
    return x;
}

Test(parallel, loss_clipping_and_adam_do_not_depend_on_threads)
{
    /* more rows and blocks than one round of the loss (1,024 rows) and of the norm
       (16 blocks) */
    enum { N = 1100, V = 33 };
    size_t n = 17 * NN_PAR_BLOCK + 17;
    real *logits = random_array((size_t)N * V, 1, 8);
    int targets[N];
    for (int i = 0; i < N; i++)
        targets[i] = i % 5 == 0 ? 0 : 1 + (i * 37) % (V - 1);
    int want_count = 0;
    for (int i = 0; i < N; i++)
        want_count += targets[i] != 0;
    double loss[2];
    real *probs[2], *grads[2], *params[2];
    double norm[2];
    for (int k = 0; k < 2; k++) {
        nn_parallel_set_threads(k ? 3 : 1);
        probs[k] = malloc((size_t)N * V * sizeof(real));
        int count = 0;
        loss[k] = nn_xent_forward(probs[k], &count, logits, targets, N, V, 0.1f, 0);
        cr_assert_eq(count, want_count);
        nn_xent_backward_inplace(probs[k], targets, N, V, 0.1f, 0, 0.5f);

        grads[k] = random_array(n, 2, 1);
        params[k] = random_array(n, 3, 1);
        norm[k] = optim_clip_grad_norm(grads[k], n, 1.0);
        Adam a;
        optim_adam_init(&a, n, 0.9, 0.999, 1e-8, 0.01);
        optim_adam_step(&a, params[k], grads[k], 1e-3);
        optim_adam_step(&a, params[k], grads[k], 1e-3);
        optim_adam_free(&a);
    }
    cr_expect(loss[0] == loss[1], "loss %.17g vs %.17g", loss[0], loss[1]);
    double want = 0; /* the label-smoothed loss, directly */
    for (int i = 0; i < N; i++) {
        if (targets[i] == 0)
            continue;
        const real *x = logits + (size_t)i * V;
        double m = x[0], se = 0, sx = 0;
        for (int k = 1; k < V; k++)
            m = x[k] > m ? x[k] : m;
        for (int k = 0; k < V; k++) {
            se += exp(x[k] - m);
            sx += x[k];
        }
        double lse = m + log(se);
        want += 0.9 * (lse - x[targets[i]]) + 0.1 * (lse - sx / V);
    }
    cr_expect(fabs(loss[0] - want) <= 1e-5 * fabs(want), "loss %.9g, directly %.9g", loss[0], want);
    cr_expect(norm[0] == norm[1], "norm %.17g vs %.17g", norm[0], norm[1]);
    cr_expect(norm[0] > 1, "the gradients were clipped (norm %g)", norm[0]);
    cr_expect(memcmp(probs[0], probs[1], (size_t)N * V * sizeof(real)) == 0, "loss gradients differ");
    cr_expect(memcmp(grads[0], grads[1], n * sizeof(real)) == 0, "clipped gradients differ");
    cr_expect(memcmp(params[0], params[1], n * sizeof(real)) == 0, "parameters after Adam differ");
    for (int k = 0; k < 2; k++) {
        free(probs[k]);
        free(grads[k]);
        free(params[k]);
    }
    free(logits);
    nn_parallel_set_threads(1);
}

/* Layer norm forward and backward (rows on every thread; the gain and bias gradients
   a column range per thread, each summed over the rows in order): the same bits with 1
   and 3 threads, accumulated onto what the gradients held. */
Test(parallel, layernorm_does_not_depend_on_threads)
{
    enum { N = 333, C = 96 };
    real *x = random_array((size_t)N * C, 4, 3), *dy = random_array((size_t)N * C, 5, 1);
    real *g = random_array(C, 6, 1), *b = random_array(C, 7, 1);
    real *y[2], *dx[2], *dg[2], *db[2], mean[2][N], rstd[2][N];
    for (int k = 0; k < 2; k++) {
        nn_parallel_set_threads(k ? 3 : 1);
        y[k] = malloc((size_t)N * C * sizeof(real));
        dx[k] = random_array((size_t)N * C, 8, 1);
        dg[k] = random_array(C, 9, 1);
        db[k] = random_array(C, 10, 1);
        const LnShape ln = {N, C, 1e-5f};
        const LnStats stat = {mean[k], rstd[k]};
        nn_layernorm_forward(y[k], &stat, x, g, b, &ln);
        nn_layernorm_backward(dx[k], dg[k], db[k], dy, x, &stat, g, &ln);
    }
    cr_expect(memcmp(y[0], y[1], (size_t)N * C * sizeof(real)) == 0, "outputs differ");
    cr_expect(memcmp(mean[0], mean[1], sizeof mean[0]) == 0 && memcmp(rstd[0], rstd[1], sizeof rstd[0]) == 0,
              "statistics differ");
    cr_expect(memcmp(dx[0], dx[1], (size_t)N * C * sizeof(real)) == 0, "input gradients differ");
    cr_expect(memcmp(dg[0], dg[1], C * sizeof(real)) == 0, "gain gradients differ");
    cr_expect(memcmp(db[0], db[1], C * sizeof(real)) == 0, "bias gradients differ");
    /* row 0 normalised: mean 0, variance 1 before the gain and bias */
    double s = 0, ss = 0;
    for (int c = 0; c < C; c++) {
        double v = (y[0][c] - b[c]) / g[c];
        s += v;
        ss += v * v;
    }
    cr_expect(fabs(s / C) < 1e-5 && fabs(ss / C - 1) < 1e-3, "row 0: mean %g, variance %g", s / C, ss / C);
    for (int k = 0; k < 2; k++) {
        free(y[k]);
        free(dx[k]);
        free(dg[k]);
        free(db[k]);
    }
    free(x);
    free(dy);
    free(g);
    free(b);
    nn_parallel_set_threads(1);
}

/* Dropout masks: the same bits with 1 and 3 threads, one draw from the generator per
   call, and a different mask for the next call. */
Test(parallel, dropout_does_not_depend_on_threads)
{
    enum { N = 50000 };
    real *x = random_array(N, 11, 1);
    real *y[2], *m[2], *m2 = malloc(N * sizeof(real));
    for (int k = 0; k < 2; k++) {
        nn_parallel_set_threads(k ? 3 : 1);
        y[k] = malloc(N * sizeof(real));
        m[k] = malloc(N * sizeof(real));
        Rng r, r0;
        rng_seed(&r, 12);
        rng_seed(&r0, 12);
        nn_dropout_forward(y[k], m[k], x, N, 0.3f, &r);
        rng_u64(&r0);
        cr_expect_eq(rng_u64(&r), rng_u64(&r0), "dropout took more than one draw");
        if (k == 1)
            nn_dropout_mask(m2, N, 0.3f, &r);
    }
    cr_expect(memcmp(m[0], m[1], N * sizeof(real)) == 0, "masks differ");
    cr_expect(memcmp(y[0], y[1], N * sizeof(real)) == 0, "outputs differ");
    int same = 0, kept = 0;
    for (int i = 0; i < N; i++) {
        same += (m[0][i] == 0) == (m2[i] == 0);
        kept += m[0][i] != 0;
    }
    /* independent masks agree on 0.7² + 0.3² = 58 % of the entries */
    cr_expect(same < N * 0.62 && same > N * 0.54, "next mask agrees on %d of %d", same, N);
    cr_expect(kept > N * 0.69 && kept < N * 0.71, "kept %d of %d", kept, N);
    for (int k = 0; k < 2; k++) {
        free(y[k]);
        free(m[k]);
    }
    free(m2);
    free(x);
    nn_parallel_set_threads(1);
}

/* A long run of small jobs while the threads poll between them (nn_parallel_spin, as
   training runs): every job's every index once, for 2 and 3 threads, with the wait
   between jobs both short (polling) and long (asleep). */
Test(parallel, polling_threads_run_every_job)
{
    enum { JOBS = 20000, N = 37 };
    int *seen = calloc(N, sizeof *seen);
    for (int t = 2; t <= 3; t++) {
        nn_parallel_set_threads(t);
        nn_parallel_spin(100000);
        for (int j = 0; j < JOBS; j++)
            nn_parallel_for(N, 1, count_visits, seen);
        nn_parallel_spin(1000); /* workers asleep before most of these jobs */
        for (int j = 0; j < 50; j++) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
            nn_parallel_for(N, 1, count_visits, seen);
        }
        nn_parallel_spin(0);
    }
    for (int i = 0; i < N; i++)
        cr_assert_eq(seen[i], 2 * (JOBS + 50), "index %d seen %d times", i, seen[i]);
    free(seen);
    nn_parallel_set_threads(1);
}

/* Which thread ran each range of a job. */
typedef struct Runners {
    pthread_t who[8];
    int ranges;
} Runners;

static void note_runner(void *ctx, size_t lo, size_t hi)
{
    Runners *r = ctx;
    for (size_t i = lo; i < hi; i++)
        r->who[i] = pthread_self();
    __atomic_add_fetch(&r->ranges, 1, __ATOMIC_RELAXED);
}

/* A worker that has not started its range (asleep for 2 s after its wake-up, as one the
   scheduler has put aside on a busy machine) holds nothing up: the caller takes every
   range and returns without waiting for it; later jobs still use the workers. */
Test(parallel, a_held_up_worker_does_not_hold_the_job)
{
    nn_parallel_set_threads(2);
    Runners r = {0};
    nn_parallel_for(2, 1, note_runner, &r); /* the worker started and asleep */
    nn_parallel_test_delay_workers(2000000000L);
    memset(&r, 0, sizeof r);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    nn_parallel_for(2, 1, note_runner, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    nn_parallel_test_delay_workers(0);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_expect_eq(r.ranges, 2);
    cr_expect(pthread_equal(r.who[0], pthread_self()) && pthread_equal(r.who[1], pthread_self()),
              "the caller ran both ranges");
    cr_expect(s < 1.0, "the call waited %.2f s for the held-up worker", s);
    /* the worker wakes, finds nothing to claim, and takes part in the jobs after */
    struct timespec nap = {2, 200000000};
    nanosleep(&nap, NULL);
    int *seen = calloc(1000, sizeof *seen);
    for (int j = 0; j < 200; j++)
        nn_parallel_for(1000, 1, count_visits, seen);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(seen[i], 200, "index %d seen %d times", i, seen[i]);
    free(seen);
    nn_parallel_set_threads(1);
}

/* k/8 for k in [-16, 16]: every product and sum below is exact in float */
static real eighths(Rng *r)
{
    return (real)((int)rng_below(r, 33) - 16) / 8;
}

/* Products split over the pool (nn_products_on_pool, as training runs them): the exact
   product for every transposition, beta, padded leading dimensions, and both ways of
   splitting (M > N splits rows, else columns), on 2 and 3 threads. */
Test(parallel, products_on_the_pool_are_exact)
{
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {37, 19, 64}, {64, 300, 33}, {200, 17, 130},
                                    {64, 768, 256}, {700, 256, 48}};
    static const real betas[] = {0, 1, 0.5};
    Rng r;
    rng_seed(&r, 17);
    for (int threads = 2; threads <= 3; threads++) {
        nn_parallel_set_threads(threads);
        nn_products_on_pool(true);
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
            for (int t = 0; t < 8; t++) {
                int M = shapes[k][0], N = shapes[k][1], K = shapes[k][2], pad = t & 4 ? 3 : 0;
                bool ta = t & 1, tb = t & 2;
                real beta = betas[(k + (size_t)t) % 3];
                GemmShape s = {.M = M, .N = N, .K = K, .trans_a = ta, .trans_b = tb, .lda = (ta ? M : K) + pad,
                               .ldb = (tb ? K : N) + pad, .ldc = N + pad};
                size_t na = (size_t)(ta ? K : M) * s.lda, nb = (size_t)(tb ? N : K) * s.ldb, nc = (size_t)M * s.ldc;
                real *A = malloc(na * sizeof *A), *B = malloc(nb * sizeof *B), *C = malloc(nc * sizeof *C);
                for (size_t i = 0; i < na; i++)
                    A[i] = eighths(&r);
                for (size_t i = 0; i < nb; i++)
                    B[i] = eighths(&r);
                for (size_t i = 0; i < nc; i++)
                    C[i] = eighths(&r);
                real *C0 = malloc(nc * sizeof *C0);
                memcpy(C0, C, nc * sizeof *C);
                nn_gemm(&s, 1, A, B, beta, C);
                int bad = 0;
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < s.ldc; j++) {
                        double want = C0[(size_t)i * s.ldc + j];
                        if (j < N) {
                            double sum = 0;
                            for (int q = 0; q < K; q++)
                                sum += (double)(ta ? A[(size_t)q * s.lda + i] : A[(size_t)i * s.lda + q]) *
                                       (tb ? B[(size_t)j * s.ldb + q] : B[(size_t)q * s.ldb + j]);
                            want = sum + (double)beta * want;
                        }
                        bad += (double)C[(size_t)i * s.ldc + j] != want;
                    }
                cr_expect_eq(bad, 0, "%d threads, %dx%dx%d trans %d %d pad %d beta %g: %d differ", threads, M, N,
                             K, ta, tb, pad, (double)beta, bad);
                free(A);
                free(B);
                free(C);
                free(C0);
            }
        nn_products_on_pool(false);
    }
    nn_parallel_set_threads(1);
}

/* Bahdanau's scores and their tanh cache (rows of the (S,B) grid on every thread): the
   same bits with 1 and 3 threads, and the cache alone equal to the forward's. */
Test(parallel, attention_scores_do_not_depend_on_threads)
{
    enum { S = 23, B = 37, A = 96 };
    const AttnShape sh = {.S = S, .B = B, .A = A};
    real *q = random_array((size_t)B * A, 21, 2), *K = random_array((size_t)S * B * A, 22, 2),
         *v = random_array(A, 23, 1);
    real *e[2], *cache[2], *again = malloc((size_t)S * B * A * sizeof(real));
    for (int k = 0; k < 2; k++) {
        nn_parallel_set_threads(k ? 3 : 1);
        e[k] = malloc((size_t)B * S * sizeof(real));
        cache[k] = malloc((size_t)S * B * A * sizeof(real));
        nn_attn_score_forward(e[k], cache[k], q, K, v, &sh);
    }
    nn_attn_score_cache(again, q, K, &sh);
    cr_expect(memcmp(e[0], e[1], (size_t)B * S * sizeof(real)) == 0, "scores differ");
    cr_expect(memcmp(cache[0], cache[1], (size_t)S * B * A * sizeof(real)) == 0, "caches differ");
    cr_expect(memcmp(cache[0], again, (size_t)S * B * A * sizeof(real)) == 0, "the recomputed cache differs");
    /* score (b = 5, j = 7) directly */
    double want = 0;
    for (int a = 0; a < A; a++)
        want += v[a] * tanh((double)q[5 * A + a] + K[((size_t)7 * B + 5) * A + a]);
    cr_expect(fabs(e[0][5 * S + 7] - want) <= 1e-5, "score %g, directly %g", (double)e[0][5 * S + 7], want);
    for (int k = 0; k < 2; k++) {
        free(e[k]);
        free(cache[k]);
    }
    free(again);
    free(q);
    free(K);
    free(v);
    nn_parallel_set_threads(1);
}

/* The GRU and LSTM cells, forward and backward (rows of the batch on every thread): the
   same bits with 1 and 3 threads, accumulated onto what the gradients held. */
Test(parallel, recurrent_cells_do_not_depend_on_threads)
{
    enum { B = 45, H = 200 };
    real *gi = random_array((size_t)B * 4 * H, 31, 2), *gh = random_array((size_t)B * 4 * H, 32, 2),
         *h = random_array((size_t)B * H, 33, 1), *d = random_array((size_t)B * H, 34, 1),
         *dc_out = random_array((size_t)B * H, 35, 1);
    real *out[2][8];
    for (int k = 0; k < 2; k++) {
        nn_parallel_set_threads(k ? 3 : 1);
        real **o = out[k];
        o[0] = malloc((size_t)B * H * sizeof(real));            /* GRU h' */
        o[1] = malloc((size_t)B * 4 * H * sizeof(real));        /* GRU cache */
        o[2] = random_array((size_t)B * 3 * H, 36, 1);          /* GRU dgi */
        o[3] = random_array((size_t)B * 3 * H, 37, 1);          /* GRU dgh */
        o[4] = random_array((size_t)B * H, 38, 1);              /* GRU dh */
        nn_gru_cell_forward(o[0], o[1], gi, gh, h, B, H);
        nn_gru_cell_backward(o[2], o[3], o[4], d, o[1], h, B, H);
        real *hl = malloc((size_t)B * H * sizeof(real)), *cl = malloc((size_t)B * H * sizeof(real));
        o[5] = malloc((size_t)B * 5 * H * sizeof(real));        /* LSTM cache */
        o[6] = random_array((size_t)B * 4 * H, 39, 1);          /* LSTM dgates */
        o[7] = random_array((size_t)B * H, 40, 1);              /* LSTM dc */
        nn_lstm_cell_forward(hl, cl, o[5], gi, gh, h, B, H);
        nn_lstm_cell_backward(o[6], o[7], d, dc_out, o[5], h, B, H);
        free(hl);
        free(cl);
    }
    /* h' of row 3, unit 7, directly */
    const real *x = gi + 3 * 3 * H, *y = gh + 3 * 3 * H;
    double r = 1 / (1 + exp(-((double)x[7] + y[7]))), z = 1 / (1 + exp(-((double)x[H + 7] + y[H + 7])));
    double n = tanh((double)x[2 * H + 7] + r * y[2 * H + 7]);
    double want = (1 - z) * n + z * h[3 * H + 7];
    cr_expect(fabs(out[0][0][3 * H + 7] - want) <= 1e-6, "h' %g, directly %g", (double)out[0][0][3 * H + 7], want);
    static const size_t width[8] = {1, 4, 3, 3, 1, 5, 4, 1};
    static const char *what[8] = {"GRU output", "GRU cache", "GRU dgi", "GRU dgh", "GRU dh", "LSTM cache",
                                  "LSTM dgates", "LSTM dc"};
    for (int i = 0; i < 8; i++) {
        cr_expect(memcmp(out[0][i], out[1][i], (size_t)B * H * width[i] * sizeof(real)) == 0, "%s differs",
                  what[i]);
        free(out[0][i]);
        free(out[1][i]);
    }
    free(gi);
    free(gh);
    free(h);
    free(d);
    free(dc_out);
    nn_parallel_set_threads(1);
}
