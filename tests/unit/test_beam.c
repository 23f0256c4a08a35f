/* Beam search and the model's row moves: model_expand_rows/model_select_rows against
   direct decoding, beam 1 against greedy, batch independence, a step-by-step
   reference of the documented search, finished hypotheses, length normalisation and
   the attention records. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "decode/beam.h"
#include "decode/greedy.h"
#include "nn/parallel.h"
#include "model_fixture.h"

enum { VS = 13, VT = 15 };


/* The logits (V) and attention (len) of the last of the steps that feed <bos>,
   prefix[0..np) on a batch of one row, the source alone. */
static void direct(Model *m, const int *src, int len, const int *prefix, int np, real *logits,
                   real *att)
{
    Work *w = work_new(m, 1, len, np + 1, false);
    int zero = 0, l = len;
    Batch b = {.B = 1, .S = len, .src = (int *)src, .src_len = &l, .tgt_in = &zero,
               .tgt_out = &zero};
    model_encode(m, w, &b);
    for (int t = 0; t <= np; t++) {
        int prev = t ? prefix[t - 1] : 2;
        model_decode_step(m, w, &b, &prev, t);
    }
    memcpy(logits, work_step_logits(w), (size_t)m->cfg.tgt_vocab * sizeof *logits);
    if (att)
        memcpy(att, work_step_attention(w), (size_t)len * sizeof *att);
    work_free(w);
}

/* ------------------------------------------------------------ row moves */

/* Three sources, longest first as a Batch wants them, and their expansion to N rows. */
enum { RB = 3, RN = 7, RT = 6, RS = 5 };
static const int r_lens[RB] = {5, 3, 2};
static const int r_ids[RB][RS] = {{4, 7, 9, 5, 11}, {6, 5, 12}, {8, 4}};
static const int r_from[RN] = {0, 0, 0, 1, 1, 2, 2};

typedef struct RowsBatch {
    int src[RS * RN], src_len[RN], zero[RN];
    Batch b;
} RowsBatch;

/* The batch of the rows from[0..n) of the three sources (n == RB with from NULL). */
static void rows_batch(RowsBatch *rb, const int *from, int n)
{
    memset(rb, 0, sizeof *rb);
    for (int r = 0; r < n; r++) {
        int i = from ? from[r] : r;
        rb->src_len[r] = r_lens[i];
        for (int k = 0; k < r_lens[i]; k++)
            rb->src[k * n + r] = r_ids[i][k];
    }
    rb->b = (Batch){.B = n, .S = RS, .src = rb->src, .src_len = rb->src_len, .tgt_in = rb->zero,
                    .tgt_out = rb->zero};
}

/* Encodes the three sources and expands them to the RN rows of r_from. */
static Work *encode_expanded(Model *m, RowsBatch *rb)
{
    Work *w = work_new(m, RN, RS, RT, false);
    rows_batch(rb, NULL, RB);
    model_encode(m, w, &rb->b);
    model_expand_rows(m, w, &rb->b, r_from, RN);
    return w;
}

/* model_expand_rows rewrites the batch, and decoding the expanded rows agrees with
   encoding the repeated sources directly (the encoder's products then have other
   sizes, so the agreement is to float rounding, not to the bit). */
static void check_expand(const ModelConfig *c, uint64_t seed)
{
    Model m;
    fixture_model_from(&m, c, seed);
    RowsBatch a, d;
    Work *w = encode_expanded(&m, &a);
    cr_assert_eq(a.b.B, RN);
    for (int r = 0; r < RN; r++) {
        cr_assert_eq(a.b.src_len[r], r_lens[r_from[r]]);
        for (int k = 0; k < RS; k++)
            cr_assert_eq(a.b.src[k * RN + r], k < r_lens[r_from[r]] ? r_ids[r_from[r]][k] : 0);
    }
    rows_batch(&d, r_from, RN);
    Work *wd = work_new(&m, RN, RS, RT, false);
    model_encode(&m, wd, &d.b);
    int prev[RN];
    double worst = 0;
    for (int t = 0; t < RT; t++) {
        for (int r = 0; r < RN; r++)
            prev[r] = t ? 4 + (r * 5 + t * 3) % (VT - 4) : 2;
        model_decode_step(&m, w, &a.b, prev, t);
        model_decode_step(&m, wd, &d.b, prev, t);
        const real *x = work_step_logits(w), *y = work_step_logits(wd);
        for (int q = 0; q < RN * VT; q++) {
            double diff = fabs((double)x[q] - y[q]);
            worst = diff > worst ? diff : worst;
        }
        x = work_step_attention(w);
        y = work_step_attention(wd);
        for (int q = 0; q < RN * RS; q++)
            cr_assert(fabs((double)x[q] - y[q]) <= 1e-5, "step %d: attention %d: %g vs %g", t, q, x[q], y[q]);
    }
    cr_assert(worst <= 1e-5, "logits differ by %g", worst);
    work_free(w);
    work_free(wd);
    model_free(&m);
}

/* model_select_rows: rows of one sentence trade decoder states at every step (a random
   map, repeats allowed), and each row's logits and attention are those of the same
   expanded batch decoded from the start with the histories the rows end up with. A
   row's products round according to its position in the batch (OpenBLAS), and a row's
   ancestors sat at other positions, so the agreement is to rounding; a wrong state
   would differ by orders of magnitude more. */
static void check_select(const ModelConfig *c, uint64_t seed)
{
    Model m;
    fixture_model_from(&m, c, seed);
    RowsBatch a, d;
    Work *w = encode_expanded(&m, &a);
    Rng rng;
    rng_seed(&rng, seed + 100);
    int hist[RN][RT], prev[RN], from[RN], moved = 0;
    for (int t = 0; t < RT; t++) {
        int tmp[RN][RT];
        memcpy(tmp, hist, sizeof tmp);
        for (int r = 0; r < RN; r++) {
            int lo = r, hi = r;
            while (lo > 0 && r_from[lo - 1] == r_from[r])
                lo--;
            while (hi + 1 < RN && r_from[hi + 1] == r_from[r])
                hi++;
            from[r] = lo + (int)rng_below(&rng, (uint64_t)(hi - lo + 1));
            moved += from[r] != r;
            memcpy(hist[r], tmp[from[r]], sizeof hist[r]);
        }
        model_select_rows(&m, w, &a.b, from, t);
        for (int r = 0; r < RN; r++)
            prev[r] = t ? hist[r][t - 1] : 2;
        model_decode_step(&m, w, &a.b, prev, t);

        /* the reference: a fresh expanded batch fed each row's final history */
        Work *wd = encode_expanded(&m, &d);
        for (int u = 0; u <= t; u++) {
            for (int r = 0; r < RN; r++)
                prev[r] = u ? hist[r][u - 1] : 2;
            model_decode_step(&m, wd, &d.b, prev, u);
        }
        const real *x = work_step_logits(w), *y = work_step_logits(wd);
        for (int q = 0; q < RN * VT; q++)
            cr_assert(fabs((double)x[q] - y[q]) <= 1e-5, "step %d: logit %d: %.9g vs %.9g", t, q, x[q], y[q]);
        x = work_step_attention(w);
        y = work_step_attention(wd);
        for (int q = 0; q < RN * RS; q++)
            cr_assert(fabs((double)x[q] - y[q]) <= 1e-6, "step %d: attention %d: %.9g vs %.9g", t, q, x[q], y[q]);
        work_free(wd);
        for (int r = 0; r < RN; r++)
            hist[r][t] = 4 + (int)rng_below(&rng, VT - 4);
    }
    cr_assert(moved > 10);
    work_free(w);
    model_free(&m);
}

/* model_expand_rows between steps: after three steps on the seven rows, keep three rows
   of different sentences (in another order) and go on; each kept row decodes as its
   sentence with its own history does, alone. */
static void check_shrink(const ModelConfig *c, uint64_t seed)
{
    Model m;
    fixture_model_from(&m, c, seed);
    RowsBatch a;
    Work *w = encode_expanded(&m, &a);
    int hist[RN][RT], prev[RN];
    for (int r = 0; r < RN; r++)
        for (int u = 0; u < RT; u++)
            hist[r][u] = 4 + (r * 7 + u * 5) % (VT - 4);
    for (int t = 0; t < 3; t++) {
        for (int r = 0; r < RN; r++)
            prev[r] = t ? hist[r][t - 1] : 2;
        model_decode_step(&m, w, &a.b, prev, t);
    }
    const int keep[3] = {6, 3, 1};
    model_expand_rows(&m, w, &a.b, keep, 3);
    cr_assert(a.b.B == 3 && a.b.src_len[0] == 2 && a.b.src_len[1] == 3 && a.b.src_len[2] == 5);
    real *want = malloc(VT * sizeof *want), *watt = malloc(RS * sizeof *watt);
    for (int t = 3; t < RT; t++) {
        for (int k = 0; k < 3; k++)
            prev[k] = hist[keep[k]][t - 1];
        model_decode_step(&m, w, &a.b, prev, t);
        const real *lg = work_step_logits(w), *att = work_step_attention(w);
        for (int k = 0; k < 3; k++) {
            int i = r_from[keep[k]];
            direct(&m, r_ids[i], r_lens[i], hist[keep[k]], t, want, watt);
            for (int v = 0; v < VT; v++)
                cr_assert(fabs((double)lg[k * VT + v] - want[v]) <= 1e-5, "step %d row %d logit %d", t, k, v);
            for (int j = 0; j < r_lens[i]; j++)
                cr_assert(fabs((double)att[k * RS + j] - watt[j]) <= 1e-6, "step %d row %d", t, k);
        }
    }
    free(want);
    free(watt);
    work_free(w);
    model_free(&m);
}

static void check_rows_of(const ModelConfig *c, uint64_t seed)
{
    check_expand(c, seed);
    check_select(c, seed);
    check_shrink(c, seed);
}

static void check_rows(Cell cell, int layers, uint64_t seed)
{
    ModelConfig c = fixture_config(cell, layers, true, VS, VT);
    check_rows_of(&c, seed);
}

/* The attention variants carry more state between steps: input feeding's attentional
   state, multihead values, keys of another width or none. */
static ModelConfig variant_config(AttnKind att, LocalKind local, bool feed, BridgeKind bridge)
{
    return fixture_variant(CELL_LSTM, att, local, feed, bridge, VS, VT);
}

Test(model_rows, expand_and_select_multihead_local_p_input_feed)
{
    ModelConfig c = variant_config(ATT_MULTIHEAD, LOCAL_P, true, BRIDGE_ATTN_POOL);
    check_rows_of(&c, 25);
}

Test(model_rows, expand_and_select_luong_dot_local_m_input_feed)
{
    ModelConfig c = variant_config(ATT_LUONG_DOT, LOCAL_M, true, BRIDGE_ZERO);
    check_rows_of(&c, 26);
}

Test(model_rows, expand_and_select_transformer_post_norm)
{
    ModelConfig c = fixture_transformer(NORM_POST, POS_SINUSOIDAL, VS, VT);
    check_rows_of(&c, 25);
}
Test(model_rows, expand_and_select_transformer_pre_norm_learned)
{
    ModelConfig c = fixture_transformer(NORM_PRE, POS_LEARNED, VS, VT);
    check_rows_of(&c, 26);
}

Test(model_rows, expand_and_select_equal_direct_decoding_gru) { check_rows(CELL_GRU, 1, 21); }
Test(model_rows, expand_and_select_equal_direct_decoding_gru_2_layers) { check_rows(CELL_GRU, 2, 22); }
Test(model_rows, expand_and_select_equal_direct_decoding_lstm) { check_rows(CELL_LSTM, 1, 23); }
Test(model_rows, expand_and_select_equal_direct_decoding_lstm_2_layers) { check_rows(CELL_LSTM, 2, 24); }

/* ------------------------------------------------------------ beam search */

static BeamOut beam(Model *m, const Srcs *s, int K, int nbest, int batch, int max_len,
                    double alpha, bool att)
{
    PairSet d = {.n = s->n, .src = s->ids, .src_len = s->len};
    BeamOpts o = {.beam = K, .nbest = nbest, .batch = batch, .max_len = max_len, .alpha = alpha,
                  .attention = att};
    BeamOut out;
    Err e;
    cr_assert_eq(beam_decode(m, &d, &o, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(out.n, s->n);
    return out;
}

/* The same hypotheses: counts, tokens, source positions; scores within tol (other batch
   sizes round differently, see check_expand; 0: to the bit); with src_len, the
   attention rows to the bit too. */
static void expect_out(const BeamOut *a, const BeamOut *b, double tol, const int *src_len, const char *what)
{
    cr_assert_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        cr_assert_eq(a->count[i], b->count[i], "%s: sentence %d", what, i);
        for (int k = 0; k < a->count[i]; k++) {
            const BeamHyp *x = &a->hyps[i][k], *y = &b->hyps[i][k];
            cr_assert(x->len == y->len && x->eos == y->eos, "%s: sentence %d hyp %d", what, i, k);
            cr_assert(memcmp(x->ids, y->ids, (size_t)x->len * sizeof(int)) == 0, "%s: %d/%d", what, i, k);
            cr_assert(memcmp(x->src_pos, y->src_pos, (size_t)x->len * sizeof(int)) == 0);
            cr_assert(fabs(x->score - y->score) <= tol && fabs(x->logprob - y->logprob) <= tol,
                      "%s: %d/%d: %.17g vs %.17g", what, i, k, x->score, y->score);
            if (src_len && x->attn)
                cr_assert(memcmp(x->attn, y->attn, (size_t)(x->len + x->eos) * (size_t)src_len[i] * sizeof(float)) == 0,
                          "%s: %d/%d: attention", what, i, k);
        }
    }
}

static void expect_same_out(const BeamOut *a, const BeamOut *b, const char *what)
{
    expect_out(a, b, 1e-6, NULL, what);
}

/* With the same batch size the rows are the same computations as greedy's; other batch
   sizes round differently but give the same tokens here. */
static void check_beam1_is_greedy_of(const ModelConfig *c, uint64_t seed)
{
    Model m;
    fixture_model_from(&m, c, seed);
    Srcs s = srcs_random(30, 9, VS, seed + 1);
    fixture_mix_eos(&m, s.n, s.ids, s.len);
    PairSet d = {.n = s.n, .src = s.ids, .src_len = s.len};
    for (int max_len = 0; max_len <= 4; max_len += 4) {
        int stopped = 0, cut = 0;
        const int batches[] = {1, 4, 30};
        for (int k = 0; k < 3; k++) {
            Hyps g;
            Err e;
            cr_assert_eq(greedy_decode(&m, &d, batches[k], max_len, &g, &e), 0);
            for (int j = 0; j < 3; j++) {
                BeamOut o = beam(&m, &s, 1, 1, batches[j], max_len, j == 2 ? 0.7 : 0, false);
                for (int i = 0; i < s.n; i++) {
                    cr_assert_eq(o.count[i], 1);
                    const BeamHyp *h = &o.hyps[i][0];
                    cr_assert_eq(h->len, g.len[i], "batches %d/%d sentence %d: %d vs greedy %d tokens",
                                 batches[j], batches[k], i, h->len, g.len[i]);
                    cr_assert(memcmp(h->ids, g.ids[i], (size_t)h->len * sizeof(int)) == 0,
                              "sentence %d", i);
                    if (s.len[i] && j == 0 && k == 0) {
                        stopped += h->eos;
                        cut += !h->eos;
                    }
                }
                beam_out_free(&o);
            }
            hyps_free(&g);
        }
        if (max_len == 0)
            cr_assert(stopped >= 5 && cut >= 5, "stopped %d, cut %d", stopped, cut);
    }
    srcs_free(&s);
    model_free(&m);
}

static void check_beam1_is_greedy(Cell cell, int layers, uint64_t seed)
{
    ModelConfig c = fixture_config(cell, layers, true, VS, VT);
    check_beam1_is_greedy_of(&c, seed);
}

Test(beam, beam_1_is_greedy_luong_general_input_feed)
{
    ModelConfig c = variant_config(ATT_LUONG_GENERAL, LOCAL_NONE, true, BRIDGE_LINEAR);
    check_beam1_is_greedy_of(&c, 36);
}

Test(beam, beam_1_is_greedy_gru) { check_beam1_is_greedy(CELL_GRU, 1, 31); }
Test(beam, beam_1_is_greedy_lstm_2_layers) { check_beam1_is_greedy(CELL_LSTM, 2, 35); }

/* The documented search, one hypothesis at a time, each prefix decoded from scratch,
   no early stop, every finished hypothesis kept: the best N (stable sort). */
typedef struct RefHyp {
    int len, eos;
    int ids[64];
    double raw, score;
} RefHyp;

static int ref_cmp(const void *pa, const void *pb)
{
    const RefHyp *a = pa, *b = pb;
    return (a->score < b->score) - (a->score > b->score);
}

static int ref_beam(Model *m, const int *src, int len, int K, int max_len, double alpha, RefHyp *fin)
{
    int V = m->cfg.tgt_vocab, lim = decode_limit(m, len, max_len), width = K, nfin = 0;
    RefHyp live[16], next[16];
    int nlive = 1;
    live[0] = (RefHyp){0};
    real *lg = malloc((size_t)V * sizeof *lg);
    typedef struct {
        double sc;
        int slot, tok;
    } C;
    C cand[256];
    for (int t = 0; nlive > 0; t++) {
        int nc = 0;
        for (int j = 0; j < nlive; j++) {
            direct(m, src, len, live[j].ids, t, lg, NULL);
            double mx = lg[0], sum = 0;
            for (int v = 1; v < V; v++)
                mx = lg[v] > mx ? lg[v] : mx;
            for (int v = 0; v < V; v++)
                sum += exp((double)lg[v] - mx);
            double lse = mx + log(sum);
            /* all tokens, ordered by logit then id; the first `width` are proposed */
            int order[64];
            for (int v = 0; v < V; v++)
                order[v] = v;
            for (int a = 1; a < V; a++)
                for (int q = a; q > 0 && lg[order[q]] > lg[order[q - 1]]; q--) {
                    int x = order[q];
                    order[q] = order[q - 1];
                    order[q - 1] = x;
                }
            for (int q = 0; q < width && q < V; q++)
                cand[nc++] = (C){live[j].raw + ((double)lg[order[q]] - lse), j, order[q]};
        }
        /* stable by (score desc, slot asc, rank asc): insertion sort keeps generation order */
        for (int a = 1; a < nc; a++)
            for (int q = a; q > 0 && cand[q].sc > cand[q - 1].sc; q--) {
                C x = cand[q];
                cand[q] = cand[q - 1];
                cand[q - 1] = x;
            }
        int nn = 0, take = nc < width ? nc : width;
        for (int q = 0; q < take; q++) {
            RefHyp h = live[cand[q].slot];
            h.raw = cand[q].sc;
            if (cand[q].tok == 3 || t + 1 == lim) {
                if (cand[q].tok != 3)
                    h.ids[h.len++] = cand[q].tok;
                h.eos = cand[q].tok == 3;
                h.score = beam_norm(h.raw, h.len + h.eos, alpha);
                fin[nfin++] = h;
                width--;
            } else {
                h.ids[h.len++] = cand[q].tok;
                next[nn++] = h;
            }
        }
        memcpy(live, next, sizeof next);
        nlive = nn;
    }
    free(lg);
    /* stable sort by score: insertion */
    for (int a = 1; a < nfin; a++)
        for (int q = a; q > 0 && ref_cmp(&fin[q], &fin[q - 1]) < 0; q--) {
            RefHyp x = fin[q];
            fin[q] = fin[q - 1];
            fin[q - 1] = x;
        }
    return nfin;
}

static void check_against_reference(Cell cell, uint64_t seed, int K, int N, double alpha)
{
    Model m;
    fixture_model(&m, cell, 1, true, VS, VT, seed);
    Srcs s = srcs_random(12, 5, VS, seed + 7);
    fixture_mix_eos(&m, s.n, s.ids, s.len);
    BeamOut a = beam(&m, &s, K, N, 5, 6, alpha, false);
    BeamOut b = beam(&m, &s, K, N, 1, 6, alpha, false);
    BeamOut c = beam(&m, &s, K, N, 12, 6, alpha, false);
    expect_same_out(&a, &b, "batch 5 vs 1");
    expect_same_out(&a, &c, "batch 5 vs 12");
    RefHyp fin[64];
    int multi = 0;
    for (int i = 0; i < s.n; i++) {
        if (s.len[i] == 0) {
            cr_assert(a.count[i] == 1 && a.hyps[i][0].len == 0 && a.hyps[i][0].score == 0);
            continue;
        }
        int nf = ref_beam(&m, s.ids[i], s.len[i], K, 6, alpha, fin);
        int want = nf < N ? nf : N;
        cr_assert_eq(a.count[i], want, "sentence %d: %d hypotheses, reference %d", i, a.count[i], want);
        for (int k = 0; k < want; k++) {
            const BeamHyp *h = &a.hyps[i][k];
            cr_assert(h->len == fin[k].len && h->eos == fin[k].eos, "sentence %d hyp %d: len %d/%d eos %d/%d",
                      i, k, h->len, fin[k].len, h->eos, fin[k].eos);
            cr_assert(memcmp(h->ids, fin[k].ids, (size_t)h->len * sizeof(int)) == 0, "sentence %d hyp %d", i, k);
            cr_assert(fabs(h->logprob - fin[k].raw) < 1e-6 && fabs(h->score - fin[k].score) < 1e-6,
                      "sentence %d hyp %d: %.12g vs %.12g", i, k, h->score, fin[k].score);
            if (k)
                cr_assert(h->score <= a.hyps[i][k - 1].score);
        }
        multi += want > 1;
    }
    if (N > 1)
        cr_assert(multi >= 3);
    beam_out_free(&a);
    beam_out_free(&b);
    beam_out_free(&c);
    srcs_free(&s);
    model_free(&m);
}

Test(beam, matches_the_reference_search_k3) { check_against_reference(CELL_GRU, 41, 3, 3, 0); }
Test(beam, matches_the_reference_search_k5_nbest2_alpha1) { check_against_reference(CELL_LSTM, 42, 5, 2, 1.0); }
Test(beam, matches_the_reference_search_k4_nbest1_alpha06) { check_against_reference(CELL_GRU, 43, 4, 1, 0.6); }

/* Next-token logits that depend on the previous token only: logit[prev][next]. */
static void set_logit(Model *m, int prev, int next, double logit)
{
    rnn_weights(m)->proj_w[(size_t)next * m->cfg.deep_out + prev] = (real)(logit / tanh(1.0));
}

static double lsm(const double *logits, int V, int v)
{
    double s = 0;
    for (int k = 0; k < V; k++)
        s += exp(logits[k]);
    return logits[v] - log(s);
}

/* Greedy takes A (logit 1.0 over B's 0.9) and then meets a flat distribution; beam 2
   keeps B, whose <eos> is sure, and wins. */
Test(beam, beam_finds_what_greedy_misses)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 5);
    const int A = 5, Bt = 6;
    fixture_chain(&m, &A, 0, A); /* zero weights, one-hot carry; <bos> -> A */
    set_logit(&m, 2, A, 1.0);
    set_logit(&m, 2, Bt, 0.9);
    set_logit(&m, Bt, 3, 12.0);
    Srcs s = srcs_random(1, 0, VS, 1);
    s.len[0] = 2;
    s.ids[0] = realloc(s.ids[0], 2 * sizeof(int));
    s.ids[0][0] = 4;
    s.ids[0][1] = 5;
    BeamOut g = beam(&m, &s, 1, 1, 1, 3, 0, false);
    BeamOut b = beam(&m, &s, 2, 2, 1, 3, 0, false);
    /* greedy: A, then all logits 0 after A: <pad> (lowest id) twice, cut at 3 */
    cr_assert_eq(g.hyps[0][0].len, 3);
    cr_assert(g.hyps[0][0].ids[0] == A && g.hyps[0][0].ids[1] == 0 && !g.hyps[0][0].eos);
    cr_assert_eq(b.hyps[0][0].len, 1);
    cr_assert(b.hyps[0][0].ids[0] == Bt && b.hyps[0][0].eos);
    double l0[VT] = {0}, lb[VT] = {0}, flat[VT] = {0};
    l0[A] = 1.0;
    l0[Bt] = 0.9;
    lb[3] = 12.0;
    double want = lsm(l0, VT, Bt) + lsm(lb, VT, 3);
    cr_assert(fabs(b.hyps[0][0].score - want) < 1e-5, "%.9f vs %.9f", b.hyps[0][0].score, want);
    double gw = lsm(l0, VT, A) + 2 * lsm(flat, VT, 0);
    cr_assert(fabs(g.hyps[0][0].score - gw) < 1e-5);
    /* the second best of beam 2: A <pad> <pad> (A <pad> then a tie, lowest id) */
    cr_assert_eq(b.count[0], 2);
    cr_assert(b.hyps[0][1].len == 3 && b.hyps[0][1].ids[0] == A && b.hyps[0][1].ids[1] == 0 &&
              b.hyps[0][1].ids[2] == 0);
    cr_assert(fabs(b.hyps[0][1].score - gw) < 1e-5);
    beam_out_free(&g);
    beam_out_free(&b);
    srcs_free(&s);
    model_free(&m);
}

/* A hypothesis that finishes at the first step and is never beaten stays the best,
   although the search goes on with the others; with alpha = 1 a longer one wins. */
Test(beam, early_finished_hypotheses_are_kept_and_length_normalisation)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 5);
    const int A = 5, C = 7;
    fixture_chain(&m, &A, 0, A);
    set_logit(&m, 2, 3, 3.0);   /* <bos> -> <eos> */
    set_logit(&m, 2, A, 2.9);   /* <bos> -> A */
    set_logit(&m, A, C, 3.0);   /* A -> C */
    set_logit(&m, C, 3, 9.0);   /* C -> <eos> */
    Srcs s = srcs_random(1, 0, VS, 1);
    s.len[0] = 1;
    s.ids[0][0] = 4;
    double l0[VT] = {0}, la[VT] = {0}, lc[VT] = {0};
    l0[3] = 3.0;
    l0[A] = 2.9;
    la[C] = 3.0;
    lc[3] = 9.0;
    double empty = lsm(l0, VT, 3), acl = lsm(l0, VT, A) + lsm(la, VT, C) + lsm(lc, VT, 3);
    cr_assert(empty > acl && empty < acl / 3, "the test needs the raw and normalised orders to differ");
    BeamOut o = beam(&m, &s, 2, 2, 1, 0, 0, false);
    cr_assert_eq(o.count[0], 2);
    cr_assert(o.hyps[0][0].len == 0 && o.hyps[0][0].eos);
    cr_assert(fabs(o.hyps[0][0].score - empty) < 1e-5);
    cr_assert(o.hyps[0][1].len == 2 && o.hyps[0][1].ids[0] == A && o.hyps[0][1].ids[1] == C);
    cr_assert(fabs(o.hyps[0][1].score - acl) < 1e-5);
    beam_out_free(&o);
    o = beam(&m, &s, 2, 2, 1, 0, 1.0, false);
    cr_assert(o.hyps[0][0].len == 2 && o.hyps[0][0].eos);
    cr_assert(fabs(o.hyps[0][0].score - acl / 3) < 1e-5, "%.9f", o.hyps[0][0].score);
    cr_assert(fabs(o.hyps[0][0].logprob - acl) < 1e-5);
    cr_assert(o.hyps[0][1].len == 0 && fabs(o.hyps[0][1].score - empty) < 1e-5);
    beam_out_free(&o);
    /* nbest 1 keeps the best only */
    o = beam(&m, &s, 2, 1, 1, 0, 0, false);
    cr_assert(o.count[0] == 1 && o.hyps[0][0].len == 0);
    beam_out_free(&o);
    srcs_free(&s);
    model_free(&m);
}

/* The attention rows and source positions of every kept hypothesis are those of
   decoding its own tokens directly. */
Test(beam, attention_follows_the_back_pointers)
{
    Model m;
    fixture_model(&m, CELL_GRU, 2, true, VS, VT, 51);
    Srcs s = srcs_random(8, 6, VS, 52);
    fixture_mix_eos(&m, s.n, s.ids, s.len);
    BeamOut o = beam(&m, &s, 4, 4, 3, 0, 0.5, true);
    BeamOut p = beam(&m, &s, 4, 4, 8, 0, 0.5, false);
    expect_same_out(&o, &p, "with and without attention");
    real *lg = malloc(VT * sizeof *lg), *att = malloc(8 * sizeof *att);
    int checked = 0;
    for (int i = 0; i < s.n; i++) {
        if (!s.len[i]) {
            cr_assert_null(o.hyps[i][0].attn);
            continue;
        }
        for (int k = 0; k < o.count[i]; k++) {
            const BeamHyp *h = &o.hyps[i][k];
            cr_assert_not_null(h->attn);
            for (int u = 0; u < h->len + h->eos; u++) {
                direct(&m, s.ids[i], s.len[i], h->ids, u, lg, att);
                int best = 0;
                for (int j = 0; j < s.len[i]; j++) {
                    cr_assert(fabs(h->attn[(size_t)u * s.len[i] + j] - att[j]) < 1e-6,
                              "sentence %d hyp %d step %d", i, k, u);
                    if (att[j] > att[best])
                        best = j;
                }
                if (u < h->len)
                    cr_assert_eq(h->src_pos[u], best);
                checked++;
            }
        }
    }
    cr_assert(checked > 50);
    free(lg);
    free(att);
    beam_out_free(&o);
    beam_out_free(&p);
    srcs_free(&s);
    model_free(&m);
}

Test(beam, ids_outside_the_source_vocabulary_are_an_error)
{
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 9);
    Srcs s = srcs_random(3, 4, VS, 3);
    s.len[2] = 2;
    s.ids[2][1] = VS;
    PairSet d = {.n = s.n, .src = s.ids, .src_len = s.len};
    BeamOpts o = {.beam = 3, .nbest = 1, .batch = 2};
    BeamOut out;
    Err e;
    cr_assert_eq(beam_decode(&m, &d, &o, &out, &e), -1);
    cr_assert_str_eq(e.msg, "sentence 3: token 2: id 13 is not in the source vocabulary (size 13)");
    cr_assert(out.n == 0 && out.count == NULL && out.hyps == NULL);
    srcs_free(&s);
    model_free(&m);
}

Test(beam, norm_and_source_limits)
{
    cr_assert_eq(beam_norm(-6, 3, 0), -6);
    cr_assert(fabs(beam_norm(-6, 4, 0.5) - -3) < 1e-15);
    cr_assert_eq(beam_norm(-6, 0, 1), -6);
    Model m;
    fixture_model(&m, CELL_GRU, 1, true, VS, VT, 9);
    int k1 = beam_max_src_len(&m, 0, 1, false), g1 = decode_max_src_len(&m, 0);
    cr_assert(k1 <= g1 && k1 > g1 * 9 / 10, "%d %d", k1, g1);
    int k5 = beam_max_src_len(&m, 0, 5, false), k5a = beam_max_src_len(&m, 0, 5, true);
    cr_assert(k5 < decode_max_src_len(&m, 0) && k5a < k5 && k5a > 100, "%d %d", k5, k5a);
    model_free(&m);
}

/* Two decoding streams (the default where the pool has two threads and the weights are
   int8: two batches at once, each on one thread) give exactly one stream's output:
   scores to the bit, every token, attention rows; for the recurrent model and the
   Transformer, greedy and beam 4, batches of 3 over 40 sentences (in f32, one stream
   either way). */
static void check_streams(Model *m, const char *what)
{
    Srcs s = srcs_random(40, 9, VS, 77);
    for (int K = 1; K <= 4; K += 3) {
        PairSet d = {.n = s.n, .src = s.ids, .src_len = s.len};
        BeamOpts one = {.beam = K, .nbest = 1, .batch = 3, .streams = 1, .attention = true};
        BeamOpts two = one;
        two.streams = 0;
        BeamOut a, b;
        Err e;
        nn_parallel_set_threads(2);
        cr_assert_eq(beam_decode(m, &d, &one, &a, &e), 0, "%s", e.msg);
        cr_assert_eq(beam_decode(m, &d, &two, &b, &e), 0, "%s", e.msg);
        nn_parallel_set_threads(1);
        expect_out(&a, &b, 0, s.len, what);
        beam_out_free(&a);
        beam_out_free(&b);
    }
    srcs_free(&s);
}

Test(beam, two_streams_decode_as_one)
{
    Model m;
    ModelConfig c = fixture_config(CELL_GRU, 1, true, VS, VT);
    fixture_model_from(&m, &c, 5);
    check_streams(&m, "gru f32");
    model_set_precision(&m, PREC_INT8);
    check_streams(&m, "gru int8");
    model_free(&m);
    ModelConfig t = fixture_transformer(NORM_POST, POS_SINUSOIDAL, VS, VT);
    fixture_model_from(&m, &t, 6);
    check_streams(&m, "transformer f32");
    model_set_precision(&m, PREC_INT8);
    check_streams(&m, "transformer int8");
    model_free(&m);
}
