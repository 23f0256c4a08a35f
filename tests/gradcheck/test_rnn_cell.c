/* Gradient checks (double precision) for the GRU and LSTM cell gate math, and their
   forward values on a 1×1 case computed by hand.
   Tolerance: |analytic − numeric| <= 1e-7 + 1e-6 · max(|analytic|, |numeric|). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/rnn_cell.h"

TestSuite(gc_rnn_cell, .fini = gc_free_all);

enum { B = 3, H = 4 };

/* ---- GRU ---- */

typedef struct {
    real *gi, *gh, *h, *hout, *cache, *w;
} GruCtx;

static double gru_loss(void *p)
{
    GruCtx *c = p;
    nn_gru_cell_forward(c->hout, c->cache, c->gi, c->gh, c->h, B, H);
    return gc_dot(c->w, c->hout, B * H);
}

Test(gc_rnn_cell, gru_gradients)
{
    Rng r;
    rng_seed(&r, 50);
    GruCtx c;
    c.gi = gc_rand(&r, B * 3 * H, 2);
    c.gh = gc_rand(&r, B * 3 * H, 2);
    c.h = gc_rand(&r, B * H, 1);
    c.hout = gc_zeros(B * H);
    c.cache = gc_zeros(B * NN_GRU_CACHE * H);
    c.w = gc_rand(&r, B * H, 1);
    gru_loss(&c);
    real *dgi = gc_rand(&r, B * 3 * H, 1), *dgh = gc_rand(&r, B * 3 * H, 1);
    real *dh = gc_rand(&r, B * H, 1);
    real *dgi0 = gc_copy(dgi, B * 3 * H), *dgh0 = gc_copy(dgh, B * 3 * H);
    real *dh0 = gc_copy(dh, B * H);
    nn_gru_cell_backward(dgi, dgh, dh, c.w, c.cache, c.h, B, H);
    gc_check("gru dgi", c.gi, B * 3 * H, dgi, dgi0, gru_loss, &c);
    gc_check("gru dgh", c.gh, B * 3 * H, dgh, dgh0, gru_loss, &c);
    gc_check("gru dh", c.h, B * H, dh, dh0, gru_loss, &c);

    /* dh = NULL skips only dh. */
    real *dgi2 = gc_copy(dgi0, B * 3 * H), *dgh2 = gc_copy(dgh0, B * 3 * H);
    nn_gru_cell_backward(dgi2, dgh2, NULL, c.w, c.cache, c.h, B, H);
    cr_expect(memcmp(dgi2, dgi, sizeof(real) * B * 3 * H) == 0);
    cr_expect(memcmp(dgh2, dgh, sizeof(real) * B * 3 * H) == 0);
}

Test(gc_rnn_cell, gru_1x1_by_hand)
{
    /* r = σ(0.5 + 0.1), z = σ(−0.3 + 0.4), n = tanh(0.2 + r·(−0.6)),
       h' = (1 − z)·n + z·0.7 */
    real gi[3] = {0.5, -0.3, 0.2}, gh[3] = {0.1, 0.4, -0.6}, h[1] = {0.7};
    real hout[1], cache[NN_GRU_CACHE];
    nn_gru_cell_forward(hout, cache, gi, gh, h, 1, 1);
    cr_expect(fabs(cache[0] - 0.6456563062257954) < 1e-15, "r %.17g", cache[0]);
    cr_expect(fabs(cache[1] - 0.52497918747894) < 1e-15, "z %.17g", cache[1]);
    cr_expect(fabs(cache[2] - -0.18523062998308043) < 1e-15, "n %.17g", cache[2]);
    cr_expect(fabs(hout[0] - 0.2794970268769073) < 1e-15, "h' %.17g", hout[0]);
}

/* ---- LSTM ---- */

typedef struct {
    real *gi, *gh, *c, *hout, *cout, *cache, *wh, *wc;
    int sum_in_gi; /* pass gh = NULL with gi holding gi + gh */
    real *gsum;
} LstmCtx;

static double lstm_loss(void *p)
{
    LstmCtx *c = p;
    if (c->sum_in_gi) {
        for (int i = 0; i < B * 4 * H; i++)
            c->gsum[i] = c->gi[i] + c->gh[i];
        nn_lstm_cell_forward(c->hout, c->cout, c->cache, c->gsum, NULL, c->c, B, H);
    } else {
        nn_lstm_cell_forward(c->hout, c->cout, c->cache, c->gi, c->gh, c->c, B, H);
    }
    return gc_dot(c->wh, c->hout, B * H) + gc_dot(c->wc, c->cout, B * H);
}

static void check_lstm(int sum_in_gi)
{
    Rng r;
    rng_seed(&r, 60 + sum_in_gi);
    LstmCtx c = {.sum_in_gi = sum_in_gi};
    c.gi = gc_rand(&r, B * 4 * H, 2);
    c.gh = gc_rand(&r, B * 4 * H, 2);
    c.gsum = gc_zeros(B * 4 * H);
    c.c = gc_rand(&r, B * H, 1.5);
    c.hout = gc_zeros(B * H);
    c.cout = gc_zeros(B * H);
    c.cache = gc_zeros(B * NN_LSTM_CACHE * H);
    c.wh = gc_rand(&r, B * H, 1);
    c.wc = gc_rand(&r, B * H, 1);
    lstm_loss(&c);
    real *dg = gc_rand(&r, B * 4 * H, 1), *dc = gc_rand(&r, B * H, 1);
    real *dg0 = gc_copy(dg, B * 4 * H), *dc0 = gc_copy(dc, B * H);
    nn_lstm_cell_backward(dg, dc, c.wh, c.wc, c.cache, c.c, B, H);
    gc_check(sum_in_gi ? "lstm(sum) dgates/gi" : "lstm dgates/gi", c.gi, B * 4 * H, dg, dg0,
             lstm_loss, &c);
    gc_check(sum_in_gi ? "lstm(sum) dgates/gh" : "lstm dgates/gh", c.gh, B * 4 * H, dg, dg0,
             lstm_loss, &c);
    gc_check(sum_in_gi ? "lstm(sum) dc" : "lstm dc", c.c, B * H, dc, dc0, lstm_loss, &c);

    real *dg2 = gc_copy(dg0, B * 4 * H);
    nn_lstm_cell_backward(dg2, NULL, c.wh, c.wc, c.cache, c.c, B, H);
    cr_expect(memcmp(dg2, dg, sizeof(real) * B * 4 * H) == 0);
}

Test(gc_rnn_cell, lstm_gradients) { check_lstm(0); }
Test(gc_rnn_cell, lstm_gradients_with_summed_gates) { check_lstm(1); }

Test(gc_rnn_cell, lstm_1x1_by_hand)
{
    /* i = σ(0.6), f = σ(0.1), g = tanh(−0.4), o = σ(0.7),
       c' = f·0.7 + i·g, h' = o·tanh(c') */
    real gi[4] = {0.5, -0.3, 0.2, 0.9}, gh[4] = {0.1, 0.4, -0.6, -0.2}, c[1] = {0.7};
    real hout[1], cout[1], cache[NN_LSTM_CACHE];
    nn_lstm_cell_forward(hout, cout, cache, gi, gh, c, 1, 1);
    cr_expect(fabs(cout[0] - 0.12216898771122534) < 1e-15, "c' %.17g", cout[0]);
    cr_expect(fabs(hout[0] - 0.08122810833851889) < 1e-15, "h' %.17g", hout[0]);
    cr_expect(fabs(cache[4] - tanh(cout[0])) < 1e-15);
}
