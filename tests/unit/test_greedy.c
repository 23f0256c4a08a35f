/* Greedy decoding: batch independence, the length limit, <eos>, ties, empty sources. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "decode/greedy.h"
#include "nn/ops.h"
#include "model_fixture.h"

enum { NSENT = 40, VS = 13, VT = 15 };

/* A data set of n sources; ids and lengths given or random. */
static Srcs srcs_of_lengths(const int *lens, int n)
{
    Srcs s = {n, calloc((size_t)(n ? n : 1), sizeof(int)), calloc((size_t)(n ? n : 1), sizeof(int *))};
    for (int i = 0; i < n; i++) {
        s.len[i] = lens[i];
        s.ids[i] = malloc((size_t)(lens[i] + 1) * sizeof(int));
        for (int k = 0; k < lens[i]; k++)
            s.ids[i][k] = 4 + (i + k) % 5;
    }
    return s;
}


static PairSet pairs(const Srcs *s) { return (PairSet){.n = s->n, .src = s->ids, .src_len = s->len}; }

static Hyps decode(Model *m, const Srcs *s, int batch, int max_len)
{
    PairSet d = pairs(s);
    Hyps h;
    Err e;
    cr_assert_eq(greedy_decode(m, &d, batch, max_len, &h, &e), 0, "%s", e.msg);
    cr_assert_eq(h.n, s->n);
    return h;
}

/* One sentence decoded by hand with the model's single-step API, as a reference. */
static int decode_by_hand(Model *m, const int *src, int len, int max_len, int *out)
{
    int lim = max_len > 0 ? max_len : 2 * len + 10;
    int V = m->cfg.tgt_vocab;
    Work *w = work_new(m, 1, len, lim, false);
    int zero = 0;
    Batch b = {.B = 1, .S = len, .T = 0, .src = (int *)src, .src_len = &len,
               .tgt_in = &zero, .tgt_out = &zero};
    model_encode(m, w, &b);
    int prev = 2, n = 0;
    for (int t = 0; t < lim; t++) {
        model_decode_step(m, w, &b, &prev, t);
        const real *lg = work_step_logits(w);
        int best = 0;
        for (int v = 1; v < V; v++)
            if (lg[v] > lg[best])
                best = v;
        if (best == 3)
            break;
        out[n++] = best;
        prev = best;
    }
    work_free(w);
    return n;
}

static void expect_same(const Hyps *a, const Hyps *b, const char *what)
{
    cr_assert_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        cr_assert_eq(a->len[i], b->len[i], "%s: sentence %d: %d vs %d tokens", what, i, a->len[i],
                     b->len[i]);
        for (int k = 0; k < a->len[i]; k++)
            cr_assert_eq(a->ids[i][k], b->ids[i][k], "%s: sentence %d token %d", what, i, k);
    }
}

static void check_batch_independence_in(const ModelConfig *c, uint64_t seed, Precision prec)
{
    Model m;
    fixture_model_from(&m, c, seed);
    Srcs s = srcs_random(NSENT, 12, VS, seed + 1);
    fixture_mix_eos(&m, s.n, s.ids, s.len);
    model_set_precision(&m, prec);

    Hyps one = decode(&m, &s, 1, 0);
    int stopped = 0, at_limit = 0, empty_src = 0;
    int *ref = malloc(64 * sizeof(int));
    for (int i = 0; i < s.n; i++) {
        int lim = decode_limit(&m, s.len[i], 0);
        cr_assert(one.ids[i] != NULL);
        cr_assert(one.len[i] <= lim);
        for (int k = 0; k < one.len[i]; k++)
            cr_assert(one.ids[i][k] != 3 && one.ids[i][k] >= 0 && one.ids[i][k] < VT);
        if (s.len[i] == 0) {
            cr_assert_eq(one.len[i], 0);
            empty_src++;
            continue;
        }
        stopped += one.len[i] < lim;
        at_limit += one.len[i] == lim;
        int n = decode_by_hand(&m, s.ids[i], s.len[i], 0, ref);
        cr_assert_eq(n, one.len[i], "sentence %d: %d tokens by hand, %d decoded", i, n, one.len[i]);
        for (int k = 0; k < n; k++)
            cr_assert_eq(ref[k], one.ids[i][k], "sentence %d token %d", i, k);
    }
    cr_assert(stopped >= 5 && at_limit >= 5 && empty_src >= 1,
              "the data should mix early stops (%d), full-length outputs (%d) and empty sources (%d)",
              stopped, at_limit, empty_src);

    const int batches[] = {2, 3, 7, 16, 64};
    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
        Hyps h = decode(&m, &s, batches[k], 0);
        char what[32];
        snprintf(what, sizeof what, "batch %d", batches[k]);
        expect_same(&one, &h, what);
        hyps_free(&h);
    }
    /* The same with a fixed limit. */
    Hyps a = decode(&m, &s, 1, 5), b = decode(&m, &s, 6, 5);
    expect_same(&a, &b, "max_len 5");
    for (int i = 0; i < s.n; i++)
        cr_assert(a.len[i] <= 5);
    hyps_free(&a);
    hyps_free(&b);

    free(ref);
    hyps_free(&one);
    srcs_free(&s);
    model_free(&m);
}

static void check_batch_independence_of(const ModelConfig *c, uint64_t seed)
{
    check_batch_independence_in(c, seed, PREC_F32);
}

static void check_batch_independence(Cell cell, int layers, bool bidir, uint64_t seed)
{
    ModelConfig c = fixture_config(cell, layers, bidir, VS, VT);
    check_batch_independence_of(&c, seed);
}

/* The attention variants: every row's weights stay inside its own sentence (and
   window), so batching, padding included, changes nothing. */
static void check_variant(AttnKind att, LocalKind local, bool feed, BridgeKind bridge, uint64_t seed)
{
    ModelConfig c = fixture_variant(CELL_GRU, att, local, feed, bridge, VS, VT);
    check_batch_independence_of(&c, seed);
}

Test(greedy, batches_give_the_same_ids_luong_dot) { check_variant(ATT_LUONG_DOT, LOCAL_NONE, false, BRIDGE_LINEAR, 21); }
Test(greedy, batches_give_the_same_ids_luong_concat_attn_pool) { check_variant(ATT_LUONG_CONCAT, LOCAL_NONE, false, BRIDGE_ATTN_POOL, 22); }
Test(greedy, batches_give_the_same_ids_multihead_local_p_feed) { check_variant(ATT_MULTIHEAD, LOCAL_P, true, BRIDGE_LINEAR, 23); }
Test(greedy, batches_give_the_same_ids_local_m_zero_bridge) { check_variant(ATT_LUONG_GENERAL, LOCAL_M, false, BRIDGE_ZERO, 24); }
Test(greedy, batches_give_the_same_ids_scaled_dot_feed) { check_variant(ATT_SCALED_DOT, LOCAL_NONE, true, BRIDGE_LINEAR, 25); }

/* The Transformer: cached steps, batches of other sizes (padding in the encoder's
   self-attention and the attention over it) give the same ids. */
static void check_transformer(NormKind norm, PosKind pos, uint64_t seed)
{
    ModelConfig c = fixture_transformer(norm, pos, VS, VT);
    check_batch_independence_of(&c, seed);
}
Test(greedy, batches_give_the_same_ids_transformer_post_norm) { check_transformer(NORM_POST, POS_SINUSOIDAL, 31); }
Test(greedy, batches_give_the_same_ids_transformer_pre_norm_learned) { check_transformer(NORM_PRE, POS_LEARNED, 32); }

Test(greedy, batches_give_the_same_ids_gru) { check_batch_independence(CELL_GRU, 1, true, 11); }
Test(greedy, batches_give_the_same_ids_gru_2_layers) { check_batch_independence(CELL_GRU, 2, false, 12); }
Test(greedy, batches_give_the_same_ids_lstm) { check_batch_independence(CELL_LSTM, 2, true, 13); }

Test(greedy, limit_is_twice_the_source_plus_10_or_max_len)
{
    ModelConfig c = fixture_config(CELL_GRU, 1, true, VS, VT);
    Model mc;
    model_init(&mc, &c, false);
    cr_assert_eq(decode_limit(&mc, 0, 0), 10);
    cr_assert_eq(decode_limit(&mc, 7, 0), 24);
    cr_assert_eq(decode_limit(&mc, 7, 3), 3);
    model_free(&mc);
    /* learned positions: no more steps than the table has rows (the last feeds <eos>) */
    ModelConfig t = fixture_transformer(NORM_POST, POS_LEARNED, VS, VT);
    t.max_positions = 20;
    Model mt;
    model_init(&mt, &t, false);
    cr_assert_eq(decode_limit(&mt, 7, 0), 19);
    cr_assert_eq(decode_limit(&mt, 7, 3), 3);
    model_free(&mt);
    t.positions = POS_SINUSOIDAL;
    t.max_positions = 0;
    model_init(&mt, &t, false);
    cr_assert_eq(decode_limit(&mt, 7, 0), 24);
    model_free(&mt);
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 5);
    fixture_constant(&m, 5);
    const int lens[] = {1, 3, 7, 3};
    Srcs s = srcs_of_lengths(lens, 4);
    const int maxes[] = {0, 4, 1, 30};
    for (int j = 0; j < 4; j++) {
        Hyps h = decode(&m, &s, 2, maxes[j]);
        for (int i = 0; i < 4; i++) {
            int want = maxes[j] ? maxes[j] : 2 * lens[i] + 10;
            cr_assert_eq(h.len[i], want, "max_len %d, sentence %d: %d tokens", maxes[j], i,
                         h.len[i]);
            for (int k = 0; k < h.len[i]; k++)
                cr_assert_eq(h.ids[i][k], 5);
        }
        hyps_free(&h);
    }
    srcs_free(&s);
    model_free(&m);
}

Test(greedy, stops_at_eos_which_is_not_part_of_the_output)
{
    Model m;
    fixture_model(&m, CELL_LSTM, 1, true, VS, VT, 6);
    const int chain[] = {7, 5, 12, 5 + 1};
    fixture_chain(&m, chain, 4, 3);
    const int lens[] = {2, 5, 1, 9, 4};
    Srcs s = srcs_of_lengths(lens, 5);
    for (int batch = 1; batch <= 5; batch += 2) {
        Hyps h = decode(&m, &s, batch, 0);
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(h.len[i], 4, "batch %d sentence %d: %d tokens", batch, i, h.len[i]);
            cr_assert_eq(memcmp(h.ids[i], chain, sizeof chain), 0);
        }
        hyps_free(&h);
    }
    /* A limit below the chain's length cuts it. */
    Hyps h = decode(&m, &s, 3, 3);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(h.len[i], 3);
        cr_assert_eq(memcmp(h.ids[i], chain, 3 * sizeof(int)), 0);
    }
    hyps_free(&h);
    /* <eos> right away: empty outputs. */
    fixture_constant(&m, 3);
    h = decode(&m, &s, 2, 0);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(h.len[i], 0);
    hyps_free(&h);
    srcs_free(&s);
    model_free(&m);
}

Test(greedy, ties_go_to_the_lowest_id)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 7);
    fixture_constant(&m, 9);
    rnn_weights(&m)->proj_b[7] = 1; /* 7 and 9 tie */
    const int lens[] = {2};
    Srcs s = srcs_of_lengths(lens, 1);
    Hyps h = decode(&m, &s, 1, 3);
    cr_assert_eq(h.len[0], 3);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(h.ids[0][k], 7);
    hyps_free(&h);
    /* All logits 0: <pad> (id 0) wins, and is an ordinary output token. */
    fixture_constant(&m, 9);
    rnn_weights(&m)->proj_b[9] = 0;
    h = decode(&m, &s, 1, 0);
    cr_assert_eq(h.len[0], 14);
    for (int k = 0; k < 14; k++)
        cr_assert_eq(h.ids[0][k], 0);
    hyps_free(&h);
    srcs_free(&s);
    model_free(&m);
}

Test(greedy, empty_sources_give_empty_outputs)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 8);
    fixture_constant(&m, 5); /* a decoded empty source would give 10 tokens */
    const int lens[] = {0, 1, 0, 0, 2};
    Srcs s = srcs_of_lengths(lens, 5);
    Hyps h = decode(&m, &s, 2, 0);
    const int want[] = {0, 12, 0, 0, 14};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(h.len[i], want[i], "sentence %d: %d tokens", i, h.len[i]);
        cr_assert(h.ids[i] != NULL);
    }
    hyps_free(&h);
    srcs_free(&s);

    const int none[] = {0, 0};
    s = srcs_of_lengths(none, 2);
    h = decode(&m, &s, 4, 0);
    cr_assert(h.len[0] == 0 && h.len[1] == 0 && h.ids[0] && h.ids[1]);
    hyps_free(&h);
    srcs_free(&s);

    s = srcs_of_lengths(NULL, 0);
    h = decode(&m, &s, 4, 0);
    cr_assert_eq(h.n, 0);
    hyps_free(&h);
    srcs_free(&s);
    model_free(&m);
}

Test(greedy, ids_outside_the_source_vocabulary_are_an_error)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 9);
    const int lens[] = {2, 3};
    Srcs s = srcs_of_lengths(lens, 2);
    s.ids[1][2] = VS;
    PairSet d = pairs(&s);
    Hyps h;
    Err e;
    cr_assert_eq(greedy_decode(&m, &d, 4, 0, &h, &e), -1);
    cr_assert_str_eq(e.msg, "sentence 2: token 3: id 13 is not in the source vocabulary (size 13)");
    cr_assert(h.n == 0 && h.len == NULL && h.ids == NULL && h.mem == NULL);
    s.ids[1][2] = -1;
    cr_assert_eq(greedy_decode(&m, &d, 4, 0, &h, &e), -1);
    cr_assert_str_eq(e.msg, "sentence 2: token 3: id -1 is not in the source vocabulary (size 13)");
    srcs_free(&s);
    model_free(&m);
}

Test(greedy, targets_in_the_set_are_ignored)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 10);
    Srcs s = srcs_random(10, 6, VS, 99);
    Hyps a = decode(&m, &s, 3, 0);
    int t0[] = {4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 5, 6, 7, 8, 9, 10, 11, 12, 4, 5, 6};
    int *tgt[10];
    int tl[10];
    for (int i = 0; i < 10; i++) {
        tgt[i] = t0;
        tl[i] = 30; /* longer than any decoding step count */
    }
    PairSet d = {.n = s.n, .src = s.ids, .src_len = s.len, .tgt = tgt, .tgt_len = tl};
    Hyps b;
    Err e;
    cr_assert_eq(greedy_decode(&m, &d, 3, 0, &b, &e), 0);
    expect_same(&a, &b, "with targets");
    hyps_free(&a);
    hyps_free(&b);
    srcs_free(&s);
    model_free(&m);
}

/* In bf16 and int8 every row is computed on its own too (int8 quantizes each input row
   with its own scale), so batches of any size, the few-row passes of 8 included, give
   the same ids as one sentence at a time and as the step API by hand. */
static void check_quantized(const ModelConfig *c, uint64_t seed, Precision prec)
{
    check_batch_independence_in(c, seed, prec);
}
Test(greedy, int8_batches_give_the_same_ids_gru_2_layers)
{
    ModelConfig c = fixture_config(CELL_GRU, 2, true, VS, VT);
    check_quantized(&c, 12, PREC_INT8);
}
Test(greedy, int8_batches_give_the_same_ids_multihead_local_p_feed)
{
    ModelConfig c = fixture_variant(CELL_GRU, ATT_MULTIHEAD, LOCAL_P, true, BRIDGE_LINEAR, VS, VT);
    check_quantized(&c, 23, PREC_INT8);
}
Test(greedy, int8_batches_give_the_same_ids_transformer)
{
    ModelConfig c = fixture_transformer(NORM_POST, POS_SINUSOIDAL, VS, VT);
    check_quantized(&c, 31, PREC_INT8);
}
Test(greedy, bf16_batches_give_the_same_ids_lstm)
{
    ModelConfig c = fixture_config(CELL_LSTM, 2, true, VS, VT);
    check_quantized(&c, 13, PREC_BF16);
}

/* --precision covers every matrix a decoder step multiplies by, in the shape the step
   uses it: the recurrent decoder's gates (each layer), attention's query, position and
   output products, the deep output and the projection; the Transformer decoder's
   sublayers (the cross-attention's query rows only) and the projection. */
static void expect_quantized(const Model *m, const real *W, int rows, int cols, const char *what)
{
    cr_expect(nn_qset_find(&m->quant, W, rows, cols) != NULL, "%s (%d x %d) is not quantized", what, rows, cols);
}

Test(greedy, precision_quantizes_every_step_matrix)
{
    ModelConfig c = fixture_variant(CELL_GRU, ATT_MULTIHEAD, LOCAL_P, true, BRIDGE_LINEAR, VS, VT);
    c.layers = 2;
    Model m;
    fixture_model_from(&m, &c, 3);
    model_set_precision(&m, PREC_INT8);
    int D = c.dec_hidden, G = model_gates(&c) * D;
    expect_quantized(&m, rnn_weights(&m)->dec[0].w_ih, G, model_dec_in_size(&c), "layer 0 w_ih");
    expect_quantized(&m, rnn_weights(&m)->dec[0].w_hh, G, D, "layer 0 w_hh");
    expect_quantized(&m, rnn_weights(&m)->dec[1].w_ih, G, D, "layer 1 w_ih");
    expect_quantized(&m, rnn_weights(&m)->dec[1].w_hh, G, D, "layer 1 w_hh");
    expect_quantized(&m, rnn_weights(&m)->att_q, c.attn, D, "att_q");
    expect_quantized(&m, rnn_weights(&m)->att_pos, c.attn, D, "att_pos");
    expect_quantized(&m, rnn_weights(&m)->att_out, model_enc_size(&c), c.attn, "att_out");
    expect_quantized(&m, rnn_weights(&m)->pre_w, c.deep_out, model_pre_in_size(&c), "pre_w");
    expect_quantized(&m, rnn_weights(&m)->proj_w, VT, c.deep_out, "proj_w");
    cr_expect_eq(m.quant.n, 9);
    model_set_precision(&m, PREC_F32);
    cr_expect_eq(m.quant.n, 0, "f32 drops the copies");
    model_free(&m);

    ModelConfig t = fixture_transformer(NORM_PRE, POS_LEARNED, VS, VT);
    fixture_model_from(&m, &t, 4);
    model_set_precision(&m, PREC_BF16);
    int d = t.model_dim;
    for (int l = 0; l < t.layers; l++) {
        const TfLayerWeights *lw = &tf_weights(&m)->dec[l];
        expect_quantized(&m, lw->self.in_w, 3 * d, d, "self in_w");
        expect_quantized(&m, lw->self.out_w, d, d, "self out_w");
        expect_quantized(&m, lw->cross.in_w, d, d, "cross in_w (queries)");
        expect_quantized(&m, lw->cross.out_w, d, d, "cross out_w");
        expect_quantized(&m, lw->ff1_w, t.ff, d, "ff1_w");
        expect_quantized(&m, lw->ff2_w, d, t.ff, "ff2_w");
    }
    expect_quantized(&m, tf_weights(&m)->proj_w, VT, d, "proj_w");
    cr_expect_eq(m.quant.n, 6 * t.layers + 1);
    model_free(&m);
}

/* The arg-max itself against the plain first-largest scan: lengths 1 to 70 (whole lane
   groups and remainders), the largest anywhere, ties, NaN skipped unless it is first. */
static int argmax_scan(const real *x, int n)
{
    int best = 0;
    for (int v = 1; v < n; v++)
        if (x[v] > x[best])
            best = v;
    return best;
}

Test(greedy, argmax_is_the_first_largest_and_skips_nan)
{
    Rng r;
    rng_seed(&r, 5);
    real x[70];
    for (int n = 1; n <= 70; n++)
        for (int trial = 0; trial < 20; trial++) {
            for (int i = 0; i < n; i++)
                x[i] = (real)(rng_uniform(&r) < 0.5 ? (int)(rng_uniform(&r) * 4) : rng_normal(&r));
            if (trial % 4 == 1)
                x[(int)(rng_uniform(&r) * n)] = (real)NAN;
            if (trial % 4 == 2 && n > 1)
                x[n - 1] = 100; /* in the remainder */
            cr_assert_eq(nn_argmax(x, n), argmax_scan(x, n), "n %d trial %d", n, trial);
        }
    real ties[40] = {0};
    ties[17] = ties[33] = 2;
    ties[3] = (real)-0.0;
    cr_expect_eq(nn_argmax(ties, 40), 17);
    ties[0] = (real)NAN;
    cr_expect_eq(nn_argmax(ties, 40), 0, "NaN first stays the answer");
    real zeros[20] = {(real)-0.0, 0};
    cr_expect_eq(nn_argmax(zeros, 20), 0, "-0 and 0 tie: the first");
}
