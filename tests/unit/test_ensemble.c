/* Ensembles (model_ensemble_init): each step's scores are the mean of the members'
   log-probabilities, behind the one model interface; a model with itself decodes as the
   model alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/beam.h"
#include "decode/greedy.h"
#include "model/ensemble.h"
#include "model_fixture.h"

enum { VS = 13, VT = 15, NSENT = 24 };

static PairSet pairs(const Srcs *s) { return (PairSet){.n = s->n, .src = s->ids, .src_len = s->len}; }

/* log-softmax of row x (V), in double */
static void log_softmax(const real *x, int V, double *out)
{
    double mx = x[0], sum = 0;
    for (int v = 1; v < V; v++)
        mx = x[v] > mx ? x[v] : mx;
    for (int v = 0; v < V; v++)
        sum += exp((double)x[v] - mx);
    for (int v = 0; v < V; v++)
        out[v] = (double)x[v] - mx - log(sum);
}

/* Greedy decoding of an RNN and a Transformer together: every output token is the
   arg-max of the mean of the two models' log-probabilities given the tokens before it,
   each model run on its own, step by step, on that prefix. */
Test(ensemble, greedy_takes_the_best_mean_log_probability_of_its_members)
{
    Model ms[2], ens;
    fixture_model(&ms[0], CELL_GRU, 1, true, VS, VT, 11);
    ModelConfig tc = fixture_transformer(NORM_POST, POS_SINUSOIDAL, VS, VT);
    fixture_model_from(&ms[1], &tc, 12);
    model_ensemble_init(&ens, ms, 2);
    Srcs s = srcs_random(NSENT, 7, VS, 5);
    PairSet d = pairs(&s);
    Hyps h;
    Err e;
    cr_assert_eq(greedy_decode(&ens, &d, 5, 6, &h, &e), 0, "%s", e.msg);
    double lp[2][VT];
    int checked = 0;
    for (int i = 0; i < NSENT; i++) {
        int len = s.len[i];
        if (len == 0)
            continue;
        Work *w[2];
        int zero = 0;
        Batch b[2];
        for (int k = 0; k < 2; k++) {
            w[k] = work_new(&ms[k], 1, len, 8, WORK_DECODE);
            b[k] = (Batch){.B = 1, .S = len, .src = s.ids[i], .src_len = &len, .tgt_in = &zero, .tgt_out = &zero};
            model_encode(&ms[k], w[k], &b[k]);
        }
        int prev = 2;
        for (int t = 0; t <= h.len[i]; t++) {
            for (int k = 0; k < 2; k++) {
                model_decode_step(&ms[k], w[k], &b[k], &prev, t);
                log_softmax(work_step_logits(w[k]), VT, lp[k]);
            }
            int best = 0;
            for (int v = 1; v < VT; v++)
                if (lp[0][v] + lp[1][v] > lp[0][best] + lp[1][best])
                    best = v;
            int got = t < h.len[i] ? h.ids[i][t] : 3; /* <eos> ends it, or the limit 6 */
            if (t == h.len[i] && h.len[i] == 6)
                break;
            cr_expect_eq(got, best, "sentence %d step %d: token %d, the best mean is %d", i, t, got, best);
            prev = got;
            checked++;
        }
        for (int k = 0; k < 2; k++)
            work_free(w[k]);
    }
    cr_expect_gt(checked, NSENT, "too few steps checked");
    hyps_free(&h);
    srcs_free(&s);
    model_ensemble_free(&ens);
    model_free(&ms[0]);
    model_free(&ms[1]);
}

/* A model with itself: the same tokens as the model alone under beam search (the mean
   of two equal log-probabilities, renormalised, is the model's log-probability to
   float rounding), and the same scores to 1e-4. */
Test(ensemble, a_model_with_itself_decodes_as_the_model)
{
    Model ms[2], ens, one;
    ModelConfig tc = fixture_transformer(NORM_PRE, POS_SINUSOIDAL, VS, VT);
    fixture_model_from(&one, &tc, 21);
    fixture_model_from(&ms[0], &tc, 21);
    fixture_model_from(&ms[1], &tc, 21);
    model_ensemble_init(&ens, ms, 2);
    Srcs s = srcs_random(NSENT, 7, VS, 6);
    PairSet d = pairs(&s);
    BeamOpts o = {.beam = 4, .nbest = 4, .batch = 3, .max_len = 0, .alpha = 0.6};
    BeamOut a, b;
    Err e;
    cr_assert_eq(beam_decode(&one, &d, &o, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(beam_decode(&ens, &d, &o, &b, &e), 0, "%s", e.msg);
    for (int i = 0; i < NSENT; i++) {
        cr_assert_eq(a.count[i], b.count[i], "sentence %d", i);
        for (int k = 0; k < a.count[i]; k++) {
            const BeamHyp *x = &a.hyps[i][k], *y = &b.hyps[i][k];
            cr_expect_eq(x->len, y->len, "sentence %d hypothesis %d", i, k);
            cr_expect(x->len == y->len && memcmp(x->ids, y->ids, (size_t)x->len * sizeof *x->ids) == 0,
                      "sentence %d hypothesis %d: other tokens", i, k);
            cr_expect(fabs(x->score - y->score) < 1e-4, "sentence %d: score %.7f vs %.7f", i, x->score, y->score);
        }
    }
    beam_out_free(&a);
    beam_out_free(&b);
    srcs_free(&s);
    model_ensemble_free(&ens);
    model_free(&one);
    model_free(&ms[0]);
    model_free(&ms[1]);
}
