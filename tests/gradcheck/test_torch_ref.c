/* Parity with PyTorch (float64): GRU and LSTM cells driven through nn_linear with the
   PyTorch weight layout, and F.cross_entropy with label smoothing and ignore_index.
   The reference values come from torch_ref.py (torch_ref.h). Tolerance 1e-13. */
#include <criterion/criterion.h>
#include <math.h>

#include "gradcheck.h"
#include "nn/linalg.h"
#include "nn/loss.h"
#include "nn/rnn_cell.h"
#include "torch_ref.h"

TestSuite(gc_torch_ref, .fini = gc_free_all);

static void expect_close(const char *what, const real *got, const real *want, int n)
{
    for (int i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= 1e-13, "%s[%d]: %.17g, PyTorch %.17g", what, i,
                  got[i], want[i]);
}

Test(gc_torch_ref, gru_cell_matches_pytorch)
{
    real *gi = gc_zeros(TR_B * 3 * TR_H), *gh = gc_zeros(TR_B * 3 * TR_H);
    real *h1 = gc_zeros(TR_B * TR_H), *cache = gc_zeros(TR_B * NN_GRU_CACHE * TR_H);
    nn_linear_forward(gi, tr_x, tr_gru_w_ih, tr_gru_b_ih, &(LinearShape){TR_B, TR_I, 3 * TR_H});
    nn_linear_forward(gh, tr_h, tr_gru_w_hh, tr_gru_b_hh, &(LinearShape){TR_B, TR_H, 3 * TR_H});
    nn_gru_cell_forward(h1, cache, gi, gh, tr_h, TR_B, TR_H);
    expect_close("gru h'", h1, tr_gru_h_out, TR_B * TR_H);
}

Test(gc_torch_ref, lstm_cell_matches_pytorch)
{
    real *gates = gc_zeros(TR_B * 4 * TR_H);
    real *h1 = gc_zeros(TR_B * TR_H), *c1 = gc_zeros(TR_B * TR_H);
    real *cache = gc_zeros(TR_B * NN_LSTM_CACHE * TR_H);
    /* Both products summed into one buffer, then the cell with gh = NULL. */
    nn_linear_forward(gates, tr_x, tr_lstm_w_ih, tr_lstm_b_ih, &(LinearShape){TR_B, TR_I, 4 * TR_H});
    nn_linear_forward_acc(gates, tr_h, tr_lstm_w_hh, tr_lstm_b_hh, &(LinearShape){TR_B, TR_H, 4 * TR_H});
    nn_lstm_cell_forward(h1, c1, cache, gates, NULL, tr_c, TR_B, TR_H);
    expect_close("lstm h'", h1, tr_lstm_h_out, TR_B * TR_H);
    expect_close("lstm c'", c1, tr_lstm_c_out, TR_B * TR_H);
}

Test(gc_torch_ref, xent_matches_pytorch_loss_and_gradient)
{
    real *p = gc_zeros(TR_N * TR_V), *g = gc_zeros(TR_N * TR_V);
    int count = -1;
    double loss = nn_xent_forward(p, &count, tr_logits, tr_targets, TR_N, TR_V, TR_EPS, TR_PAD);
    cr_expect_eq(count, TR_N - 1);
    cr_expect(fabs(loss - TR_XENT_LOSS) <= 1e-13 * TR_XENT_LOSS, "loss %.17g, PyTorch %.17g",
              loss, TR_XENT_LOSS);
    nn_xent_backward(g, p, tr_targets, TR_N, TR_V, TR_EPS, TR_PAD, 1);
    expect_close("xent dlogits", g, tr_xent_dlogits, TR_N * TR_V);
}
