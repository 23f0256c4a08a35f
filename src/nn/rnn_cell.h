/* Pointwise gate math of one GRU or LSTM step, exactly as PyTorch nn.GRU / nn.LSTM.
   The matrix products stay with the caller (nn_linear_*), so the input projections of
   all time steps can be one gemm:
     gi = x W_ih^T + b_ih,  gh = h W_hh^T + b_hh.
   Backward accumulates (+=) into its gradients. */
#ifndef S2S_NN_RNN_CELL_H
#define S2S_NN_RNN_CELL_H

#include "nn/real.h"

/* Reals per batch row and hidden unit in a GRU cache: r, z, n, gh_n. */
#define NN_GRU_CACHE 4
/* Reals per batch row and hidden unit in an LSTM cache: i, f, g, o, tanh(c'). */
#define NN_LSTM_CACHE 5

/* GRU, gate order r, z, n:
     r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n),
     h' = (1 − z) ⊙ n + z ⊙ h.
   h_out may not alias the inputs. */
void nn_gru_cell_forward(real *h_out,     // (B,H)
                         real *cache,     // (B,4H) written: r | z | n | gh_n per row
                         const real *gi,  // (B,3H)
                         const real *gh,  // (B,3H)
                         const real *h,   // (B,H)
                         int B, int H);
/* From dh_out: dgi += dL/dgi, dgh += dL/dgh (both required, distinct buffers),
   dh += dL/dh (NULL: skip). */
void nn_gru_cell_backward(real *dgi,           // (B,3H)
                          real *dgh,           // (B,3H)
                          real *dh,            // (B,H) or NULL
                          const real *dh_out,  // (B,H)
                          const real *cache,   // (B,4H)
                          const real *h,       // (B,H)
                          int B, int H);

/* LSTM, gate order i, f, g, o: a = gi + gh,
     i = σ(a_i), f = σ(a_f), g = tanh(a_g), o = σ(a_o),
     c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh(c').
   gh may be NULL when gi already holds the sum. Outputs may not alias the inputs. */
void nn_lstm_cell_forward(real *h_out,     // (B,H)
                          real *c_out,     // (B,H)
                          real *cache,     // (B,5H) written: i | f | g | o | tanh(c') per row
                          const real *gi,  // (B,4H)
                          const real *gh,  // (B,4H) or NULL
                          const real *c,   // (B,H)
                          int B, int H);
/* From dh_out and dc_out: dgates += dL/da (the same for gi and gh, which add),
   dc += dL/dc (NULL: skip). */
void nn_lstm_cell_backward(real *dgates,       // (B,4H)
                           real *dc,           // (B,H) or NULL
                           const real *dh_out, // (B,H)
                           const real *dc_out, // (B,H)
                           const real *cache,  // (B,5H)
                           const real *c,      // (B,H)
                           int B, int H);

#endif
