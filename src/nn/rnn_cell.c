#include "nn/rnn_cell.h"

#include <stddef.h>

#include "nn/parallel.h"

/* The arguments of one cell call; each function below runs rows [lo, hi) of the batch
   (every row on its own: the same bits with any number of threads). */
typedef struct CellJob {
    real *o1, *o2, *o3;
    const real *i1, *i2, *i3, *i4;
    int H;
} CellJob;

/* rows of 4 K elements or more a thread */
static void cell_rows(int B, int H, ParFn fn, CellJob *j)
{
    j->H = H;
    nn_parallel_for((size_t)B, 4096 / ((size_t)H + 1) + 1, fn, j);
}

/* y = σ(a + b) or tanh(a + b) (b may be NULL) over n elements. Kept out of line, one
   function per activation, so that each loop is simple enough to vectorise with the
   inline exp of nn/real.h. */
static void __attribute__((noinline)) sigmoid_sum(real *restrict y, const real *restrict a,
                                                  const real *restrict b, int n)
{
    if (b)
        for (int j = 0; j < n; j++)
            y[j] = r_sigmoid(a[j] + b[j]);
    else
        for (int j = 0; j < n; j++)
            y[j] = r_sigmoid(a[j]);
}

static void __attribute__((noinline)) tanh_sum(real *restrict y, const real *restrict a,
                                               const real *restrict b, int n)
{
    if (b)
        for (int j = 0; j < n; j++)
            y[j] = R_TANH(a[j] + b[j]);
    else
        for (int j = 0; j < n; j++)
            y[j] = R_TANH(a[j]);
}

static void gru_forward_rows(void *ctx, size_t lo, size_t hi)
{
    const CellJob *J = ctx;
    real *h_out = J->o1, *cache = J->o2;
    const real *gi = J->i1, *gh = J->i2, *h = J->i3;
    const int H = J->H;
    for (int b = (int)lo; b < (int)hi; b++) {
        const real *xi = gi + (size_t)b * 3 * H;
        const real *xh = gh + (size_t)b * 3 * H;
        const real *restrict hp = h + (size_t)b * H;
        real *c = cache + (size_t)b * NN_GRU_CACHE * H;
        real *restrict r = c, *restrict z = c + H, *restrict n = c + 2 * H;
        real *restrict ghn = c + 3 * H;
        real *restrict ho = h_out + (size_t)b * H;
        sigmoid_sum(r, xi, xh, 2 * H); /* r and z */
        for (int j = 0; j < H; j++) { /* ho holds n's pre-activation for a moment */
            ghn[j] = xh[2 * H + j];
            ho[j] = xi[2 * H + j] + r[j] * ghn[j];
        }
        tanh_sum(n, ho, NULL, H);
        for (int j = 0; j < H; j++)
            ho[j] = ((real)1 - z[j]) * n[j] + z[j] * hp[j];
    }
}

void nn_gru_cell_forward(real *h_out, real *cache, const real *gi, const real *gh,
                         const real *h, int B, int H)
{
    cell_rows(B, H, gru_forward_rows, &(CellJob){.o1 = h_out, .o2 = cache, .i1 = gi, .i2 = gh, .i3 = h});
}

static void gru_backward_rows(void *ctx, size_t lo, size_t hi)
{
    const CellJob *J = ctx;
    real *dgi = J->o1, *dgh = J->o2, *dh = J->o3;
    const real *dh_out = J->i1, *cache = J->i2, *h = J->i3;
    const int H = J->H;
    for (int b = (int)lo; b < (int)hi; b++) {
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

void nn_gru_cell_backward(real *dgi, real *dgh, real *dh, const real *dh_out,
                          const real *cache, const real *h, int B, int H)
{
    cell_rows(B, H, gru_backward_rows,
              &(CellJob){.o1 = dgi, .o2 = dgh, .o3 = dh, .i1 = dh_out, .i2 = cache, .i3 = h});
}

static void lstm_forward_rows(void *ctx, size_t lo, size_t hi)
{
    const CellJob *J = ctx;
    real *h_out = J->o1, *c_out = J->o2, *cache = J->o3;
    const real *gi = J->i1, *gh = J->i2, *c = J->i3;
    const int H = J->H;
    for (int b = (int)lo; b < (int)hi; b++) {
        const real *restrict xi = gi + (size_t)b * 4 * H;
        const real *restrict cp = c + (size_t)b * H;
        real *k = cache + (size_t)b * NN_LSTM_CACHE * H;
        real *restrict ig = k, *restrict fg = k + H, *restrict gg = k + 2 * H;
        real *restrict og = k + 3 * H, *restrict tc = k + 4 * H;
        real *restrict ho = h_out + (size_t)b * H, *restrict co = c_out + (size_t)b * H;
        const real *xh = gh ? gh + (size_t)b * 4 * H : NULL;
        sigmoid_sum(ig, xi, xh, 2 * H); /* i and f */
        tanh_sum(gg, xi + 2 * H, xh ? xh + 2 * H : NULL, H);
        sigmoid_sum(og, xi + 3 * H, xh ? xh + 3 * H : NULL, H);
        for (int j = 0; j < H; j++)
            co[j] = fg[j] * cp[j] + ig[j] * gg[j];
        tanh_sum(tc, co, NULL, H);
        for (int j = 0; j < H; j++)
            ho[j] = og[j] * tc[j];
    }
}

void nn_lstm_cell_forward(real *h_out, real *c_out, real *cache, const real *gi,
                          const real *gh, const real *c, int B, int H)
{
    cell_rows(B, H, lstm_forward_rows, &(CellJob){.o1 = h_out, .o2 = c_out, .o3 = cache, .i1 = gi, .i2 = gh, .i3 = c});
}

static void lstm_backward_rows(void *ctx, size_t lo, size_t hi)
{
    const CellJob *J = ctx;
    real *dgates = J->o1, *dc = J->o2;
    const real *dh_out = J->i1, *dc_out = J->i2, *cache = J->i3, *c = J->i4;
    const int H = J->H;
    for (int b = (int)lo; b < (int)hi; b++) {
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

void nn_lstm_cell_backward(real *dgates, real *dc, const real *dh_out, const real *dc_out,
                           const real *cache, const real *c, int B, int H)
{
    cell_rows(B, H, lstm_backward_rows,
              &(CellJob){.o1 = dgates, .o2 = dc, .i1 = dh_out, .i2 = dc_out, .i3 = cache, .i4 = c});
}
