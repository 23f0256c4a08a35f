/* Gradient check (double precision, central differences, tolerance of gradcheck.h) of
   the chunked output layer (src/model/output.c): 7 rows in chunks of 3 (the last one
   short), two of them padding, against the gradients of the input rows (written), of
   the projection and of its bias (accumulated onto what they held). The loss and the
   negative log-likelihood do not depend on the chunk. */
#include <criterion/criterion.h>
#include <math.h>

#include "gradcheck.h"
#include "model/output.h"

TestSuite(gc_output, .fini = gc_free_all);

enum { N = 7, P = 3, V = 5 };
static const int targets[N] = {3, 0, 4, 1, 2, 0, 1};

typedef struct {
    OutputLayer o;
    real *h;
    real scale;
} OutCtx;

static double out_loss(void *q)
{
    OutCtx *c = q;
    OutputLayer o = c->o;
    o.gw = o.gb = NULL;
    return c->scale * output_loss(&o, c->h, targets, N, 0, NULL).loss;
}

Test(gc_output, chunked_gradients_of_rows_projection_and_bias)
{
    Rng r;
    rng_seed(&r, 90);
    real *w = gc_rand(&r, V * P, 1.5), *b = gc_rand(&r, V, 0.5);
    real *gw = gc_rand(&r, V * P, 1), *gb = gc_rand(&r, V, 1);
    real *gw0 = gc_copy(gw, V * P), *gb0 = gc_copy(gb, V);
    OutCtx c = {.o = {.w = w, .b = b, .gw = gw, .gb = gb, .P = P, .V = V, .eps = 0.1, .chunk = 3,
                      .logits = gc_zeros(3 * V)},
                .h = gc_rand(&r, N * P, 2), .scale = 0.37};
    real *dh = gc_rand(&r, N * P, 1); /* overwritten, padded rows included */
    OutputLoss with = output_loss(&c.o, c.h, targets, N, c.scale, dh);

    /* the same rows in one chunk, without gradients, keeping the logits */
    OutputLayer whole = c.o;
    whole.gw = whole.gb = NULL;
    whole.chunk = N;
    whole.logits = gc_zeros(N * V);
    whole.probs = gc_zeros(N * V);
    OutputLoss one = output_loss(&whole, c.h, targets, N, 0, NULL);
    cr_expect(fabs(with.loss - one.loss) <= 1e-13 * fabs(one.loss), "loss %.17g in chunks, %.17g whole",
              with.loss, one.loss);
    double nll = 0;
    for (int i = 0; i < N; i++) {
        const real *x = whole.logits + i * V;
        double ref = b[0];
        for (int k = 0; k < P; k++)
            ref += w[k] * c.h[i * P + k];
        cr_expect(fabs(x[0] - ref) <= 1e-12, "logit (%d,0) %.17g, expected %.17g", i, x[0], ref);
        if (targets[i] == 0)
            continue;
        double mx = x[0], s = 0;
        for (int k = 1; k < V; k++)
            mx = x[k] > mx ? x[k] : mx;
        for (int k = 0; k < V; k++)
            s += exp(x[k] - mx);
        nll += mx + log(s) - x[targets[i]];
    }
    cr_expect(fabs(with.nll - nll) <= 1e-12 * nll, "nll %.17g, expected %.17g", with.nll, nll);
    cr_expect(fabs(one.nll - nll) <= 1e-12 * nll, "nll (one chunk) %.17g, expected %.17g", one.nll, nll);
    for (int i = 0; i < N; i++)
        if (targets[i] == 0)
            gc_expect_zero("dh of a padded row", dh + i * P, P);

    gc_check("output dh", c.h, N * P, dh, NULL, out_loss, &c);
    gc_check("output proj_w", w, V * P, gw, gw0, out_loss, &c);
    gc_check("output proj_b", b, V, gb, gb0, out_loss, &c);
}

Test(gc_output, chunk_rows)
{
    cr_expect_eq(output_chunk_rows(10000, 16699), 251);
    cr_expect_eq(output_chunk_rows(100, 16699), 100);
    cr_expect_eq(output_chunk_rows(10000, 1 << 20), 64);
    cr_expect_eq(output_chunk_rows(10000, 6), 10000);
    cr_expect_eq(output_chunk_rows(0, 6), 1);
}
