#include "nn/rnn_cell.h"

#include <stddef.h>

void nn_gru_cell_forward(real *h_out, real *cache, const real *gi, const real *gh,
                         const real *h, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const real *restrict xi = gi + (size_t)b * 3 * H;
        const real *restrict xh = gh + (size_t)b * 3 * H;
        const real *restrict hp = h + (size_t)b * H;
        real *restrict c = cache + (size_t)b * NN_GRU_CACHE * H;
        real *restrict r = c, *restrict z = c + H, *restrict n = c + 2 * H;
        real *restrict ghn = c + 3 * H;
        real *restrict ho = h_out + (size_t)b * H;
        for (int j = 0; j < H; j++) {
            r[j] = r_sigmoid(xi[j] + xh[j]);
            z[j] = r_sigmoid(xi[H + j] + xh[H + j]);
            ghn[j] = xh[2 * H + j];
        }
        for (int j = 0; j < H; j++) {
            n[j] = R_TANH(xi[2 * H + j] + r[j] * ghn[j]);
            ho[j] = ((real)1 - z[j]) * n[j] + z[j] * hp[j];
        }
    }
}

void nn_gru_cell_backward(real *dgi, real *dgh, real *dh, const real *dh_out,
                          const real *cache, const real *h, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const real *restrict c = cache + (size_t)b * NN_GRU_CACHE * H;
        const real *restrict r = c, *restrict z = c + H, *restrict n = c + 2 * H;
        const real *restrict ghn = c + 3 * H;
        const real *restrict hp = h + (size_t)b * H;
        const real *restrict d = dh_out + (size_t)b * H;
        real *restrict gi = dgi + (size_t)b * 3 * H;
        real *restrict gh = dgh + (size_t)b * 3 * H;
        for (int j = 0; j < H; j++) {
            real dn = d[j] * ((real)1 - z[j]);
            real dz = d[j] * (hp[j] - n[j]);
            real dan = dn * ((real)1 - n[j] * n[j]);
            real dr = dan * ghn[j];
            real dar = dr * r[j] * ((real)1 - r[j]);
            real daz = dz * z[j] * ((real)1 - z[j]);
            gi[j] += dar;
            gi[H + j] += daz;
            gi[2 * H + j] += dan;
            gh[j] += dar;
            gh[H + j] += daz;
            gh[2 * H + j] += dan * r[j];
        }
        if (dh) {
            real *restrict g = dh + (size_t)b * H;
            for (int j = 0; j < H; j++)
                g[j] += d[j] * z[j];
        }
    }
}

void nn_lstm_cell_forward(real *h_out, real *c_out, real *cache, const real *gi,
                          const real *gh, const real *c, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const real *restrict xi = gi + (size_t)b * 4 * H;
        const real *restrict cp = c + (size_t)b * H;
        real *k = cache + (size_t)b * NN_LSTM_CACHE * H;
        real *restrict ig = k, *restrict fg = k + H, *restrict gg = k + 2 * H;
        real *restrict og = k + 3 * H, *restrict tc = k + 4 * H;
        real *restrict ho = h_out + (size_t)b * H, *restrict co = c_out + (size_t)b * H;
        if (gh) {
            const real *restrict xh = gh + (size_t)b * 4 * H;
            for (int j = 0; j < H; j++) {
                ig[j] = r_sigmoid(xi[j] + xh[j]);
                fg[j] = r_sigmoid(xi[H + j] + xh[H + j]);
                gg[j] = R_TANH(xi[2 * H + j] + xh[2 * H + j]);
                og[j] = r_sigmoid(xi[3 * H + j] + xh[3 * H + j]);
            }
        } else {
            for (int j = 0; j < H; j++) {
                ig[j] = r_sigmoid(xi[j]);
                fg[j] = r_sigmoid(xi[H + j]);
                gg[j] = R_TANH(xi[2 * H + j]);
                og[j] = r_sigmoid(xi[3 * H + j]);
            }
        }
        for (int j = 0; j < H; j++) {
            co[j] = fg[j] * cp[j] + ig[j] * gg[j];
            tc[j] = R_TANH(co[j]);
            ho[j] = og[j] * tc[j];
        }
    }
}

void nn_lstm_cell_backward(real *dgates, real *dc, const real *dh_out, const real *dc_out,
                           const real *cache, const real *c, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const real *k = cache + (size_t)b * NN_LSTM_CACHE * H;
        const real *restrict ig = k, *restrict fg = k + H, *restrict gg = k + 2 * H;
        const real *restrict og = k + 3 * H, *restrict tc = k + 4 * H;
        const real *restrict cp = c + (size_t)b * H;
        const real *restrict dho = dh_out + (size_t)b * H;
        const real *restrict dco = dc_out + (size_t)b * H;
        real *restrict da = dgates + (size_t)b * 4 * H;
        for (int j = 0; j < H; j++) {
            real dct = dco[j] + dho[j] * og[j] * ((real)1 - tc[j] * tc[j]);
            da[j] += dct * gg[j] * ig[j] * ((real)1 - ig[j]);
            da[H + j] += dct * cp[j] * fg[j] * ((real)1 - fg[j]);
            da[2 * H + j] += dct * ig[j] * ((real)1 - gg[j] * gg[j]);
            da[3 * H + j] += dho[j] * tc[j] * og[j] * ((real)1 - og[j]);
        }
        if (dc) {
            real *restrict g = dc + (size_t)b * H;
            for (int j = 0; j < H; j++)
                g[j] += (dco[j] + dho[j] * og[j] * ((real)1 - tc[j] * tc[j])) * fg[j];
        }
    }
}
