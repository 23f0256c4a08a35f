#include "decode/beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/plan.h"
#include "text/vocab.h"

/* Bytes the search records per row and output step (token, back-pointer, source
   position, scores), and per row, step and source position with attention rows. */
#define REC_PER_T (3 * sizeof(int) + 2 * sizeof(double))
#define REC_PER_TS(att) ((att) ? sizeof(float) : 0)

static void hyp_free(BeamHyp *h)
{
    free(h->ids);
    free(h->src_pos);
    free(h->attn);
    memset(h, 0, sizeof *h);
}

void beam_out_free(BeamOut *o)
{
    for (int i = 0; i < o->n; i++) {
        for (int k = 0; k < o->count[i]; k++)
            hyp_free(&o->hyps[i][k]);
        free(o->hyps[i]);
    }
    free(o->count);
    free(o->hyps);
    memset(o, 0, sizeof *o);
}

double beam_norm(double raw, int len, double alpha)
{
    if (len <= 0 || alpha == 0)
        return raw;
    return raw / pow((double)len, alpha);
}

int beam_max_src_len(const ModelConfig *c, int max_len, int beam, bool attention)
{
    CHECK(beam >= 1);
    return decode_max_src_len_rows(c, max_len, beam, REC_PER_T, REC_PER_TS(attention));
}

/* The k largest of x[0..V) by value (ties: lowest id), best first, into ids; returns
   how many (min(k, V)). */
static int top_tokens(const real *x, int V, int k, int *ids)
{
    int n = 0;
    for (int v = 0; v < V; v++) {
        if (n == k && !(x[v] > x[ids[n - 1]]))
            continue;
        int p = n < k ? n++ : k - 1;
        while (p > 0 && x[v] > x[ids[p - 1]]) {
            ids[p] = ids[p - 1];
            p--;
        }
        ids[p] = v;
    }
    return n;
}

/* log Σ exp(x[v]), in double. */
static double log_sum_exp(const real *x, int V)
{
    double mx = x[0];
    for (int v = 1; v < V; v++)
        if (x[v] > mx)
            mx = x[v];
    double s = 0;
    for (int v = 0; v < V; v++)
        s += exp((double)x[v] - mx);
    return mx + log(s);
}

typedef struct Cand {
    double score;
    int slot, rank, tok;
} Cand;

static int cand_cmp(const void *pa, const void *pb)
{
    const Cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The state of one batch: R = nb·K rows, sentence i on rows i·K .. i·K+K-1, its live
   hypotheses on the first nlive[i] of them. Step t's records of row r are at t·R + r. */
typedef struct Search {
    const BeamOpts *o;
    int K, N, R, S, V;
    int *rec_tok, *rec_par, *rec_pos; /* (max_t, R) token, parent slot, source position */
    float *rec_att;                   /* (max_t, R, S) or NULL */
    double *cum, *ncum;               /* (R) raw scores of the live hypotheses */
    BeamHyp *kept;                    /* (nb, N) finished, best first */
    int *nkept;                       /* (nb) */
} Search;

/* Records candidate c of sentence i at step t (parent row pr, whose attention row at
   this step is att) as a finished hypothesis, if it makes the list. */
static void finish(Search *s, int i, int t, const Cand *c, const real *att, int src_len)
{
    bool eos = c->tok == VOCAB_EOS;
    int n = t + !eos, K = s->K, N = s->N, R = s->R, S = s->S;
    double score = beam_norm(c->score, n + eos, s->o->alpha);
    BeamHyp *kept = s->kept + (size_t)i * N;
    int *nk = &s->nkept[i];
    if (*nk == N && !(score > kept[N - 1].score))
        return;
    BeamHyp h = {.len = n, .eos = eos, .logprob = c->score, .score = score};
    h.ids = xmalloc((size_t)(n ? n : 1) * sizeof *h.ids);
    h.src_pos = xmalloc((size_t)(n ? n : 1) * sizeof *h.src_pos);
    if (s->rec_att)
        h.attn = xmalloc((size_t)(n + eos) * src_len * sizeof *h.attn);
    if (!eos) {
        h.ids[t] = c->tok;
        h.src_pos[t] = decode_argmax(att, src_len);
    }
    if (h.attn)
        for (int j = 0; j < src_len; j++)
            h.attn[(size_t)t * src_len + j] = (float)att[j];
    for (int u = t - 1, slot = c->slot; u >= 0; u--) {
        size_t rec = (size_t)u * R + (size_t)i * K + slot;
        h.ids[u] = s->rec_tok[rec];
        h.src_pos[u] = s->rec_pos[rec];
        if (h.attn)
            memcpy(h.attn + (size_t)u * src_len, s->rec_att + rec * S, (size_t)src_len * sizeof *h.attn);
        slot = s->rec_par[rec];
    }
    int p;
    if (*nk < N) {
        p = (*nk)++;
    } else {
        hyp_free(&kept[N - 1]);
        p = N - 1;
    }
    while (p > 0 && score > kept[p - 1].score) {
        kept[p] = kept[p - 1];
        p--;
    }
    kept[p] = h;
}

int beam_decode(Model *m, const PairSet *d, const BeamOpts *o, BeamOut *out, Err *e)
{
    CHECK(o->beam >= 1 && o->nbest >= 0 && o->nbest <= o->beam && o->batch >= 1 &&
          o->max_len >= 0 && o->alpha >= 0 && d->n >= 0);
    memset(out, 0, sizeof *out);
    const ModelConfig *c = &m->cfg;
    const int n = d->n, K = o->beam, N = o->nbest ? o->nbest : 1, V = c->tgt_vocab;
    size_t cnt = (size_t)(n ? n : 1);

    int *order = xmalloc(cnt * sizeof *order);
    int nn, max_s, max_t;
    if (decode_plan(c, d, o->max_len, order, &nn, &max_s, &max_t, e) != 0) {
        free(order);
        return -1;
    }
    out->n = n;
    out->count = xcalloc(cnt, sizeof *out->count);
    out->hyps = xcalloc(cnt, sizeof *out->hyps);
    for (int i = 0; i < n; i++) {
        if (d->src_len[i] == 0) {
            out->count[i] = 1;
            out->hyps[i] = xcalloc(1, sizeof **out->hyps);
            out->hyps[i][0].ids = xmalloc(sizeof(int));
            out->hyps[i][0].src_pos = xmalloc(sizeof(int));
        }
    }
    if (nn == 0) {
        free(order);
        return 0;
    }

    int B = decode_fit_batch(c, max_s, max_t, o->batch < nn ? o->batch : nn, K, REC_PER_T,
                             REC_PER_TS(o->attention));
    const int RM = B * K;
    Work *w = work_new(c, RM, max_s, max_t, false);
    BatchBuf bb;
    batch_buf_init(&bb, RM, max_s, 1);
    const PairSet src = {n, d->src, d->src_len, NULL, NULL};
    Search s = {.o = o, .K = K, .N = N, .V = V};
    size_t recs = (size_t)max_t * RM;
    s.rec_tok = xmalloc(recs * sizeof *s.rec_tok);
    s.rec_par = xmalloc(recs * sizeof *s.rec_par);
    s.rec_pos = xmalloc(recs * sizeof *s.rec_pos);
    if (o->attention)
        s.rec_att = xmalloc(recs * (size_t)max_s * sizeof *s.rec_att);
    s.cum = xmalloc((size_t)RM * sizeof *s.cum);
    s.ncum = xmalloc((size_t)RM * sizeof *s.ncum);
    s.kept = xcalloc((size_t)B * N, sizeof *s.kept);
    s.nkept = xmalloc((size_t)B * sizeof *s.nkept);
    int *from = xmalloc((size_t)RM * sizeof *from), *prev = xmalloc((size_t)RM * sizeof *prev);
    int *from2 = xmalloc((size_t)RM * sizeof *from2), *prev2 = xmalloc((size_t)RM * sizeof *prev2);
    int *base = xmalloc((size_t)B * sizeof *base);
    int *sent = xmalloc((size_t)B * sizeof *sent), *lim = xmalloc((size_t)B * sizeof *lim);
    int *width = xmalloc((size_t)B * sizeof *width), *nlive = xmalloc((size_t)B * sizeof *nlive);
    int *slen = xmalloc((size_t)B * sizeof *slen);
    char *done = xmalloc((size_t)B);
    Cand *cand = xmalloc((size_t)K * K * sizeof *cand);
    int *ids = xmalloc((size_t)K * sizeof *ids);

    for (int k = 0; k < nn; k += B) {
        int nb = nn - k < B ? nn - k : B, R = nb * K;
        Batch b;
        batch_fill(&b, &bb, &src, order + k, nb);
        for (int i = 0; i < nb; i++) {
            sent[i] = bb.rows[i];
            slen[i] = b.src_len[i];
            lim[i] = decode_limit(slen[i], o->max_len);
            width[i] = K;
            nlive[i] = 1;
            done[i] = 0;
            s.nkept[i] = 0;
            base[i] = i * K;
        }
        model_encode(m, w, &b);
        for (int r = 0; r < R; r++) {
            from[r] = r / K;
            prev[r] = VOCAB_BOS;
            s.cum[r] = 0;
        }
        model_expand_rows(m, w, &b, from, R);
        s.R = R;
        s.S = b.S;
        int left = nb, rows = R; /* rows: the model's rows now, sentence i's from base[i] */
        for (int t = 0; left > 0; t++) {
            model_decode_step(m, w, &b, prev, t);
            const real *lg = work_step_logits(w), *att = work_step_attention(w);
            for (int r = 0; r < rows; r++) {
                from[r] = r;
                prev[r] = VOCAB_EOS;
            }
            for (int i = 0; i < nb; i++) {
                if (done[i])
                    continue;
                int nc = 0;
                for (int j = 0; j < nlive[i]; j++) {
                    const real *x = lg + (size_t)(base[i] + j) * V;
                    int nt = top_tokens(x, V, width[i], ids);
                    double lse = log_sum_exp(x, V);
                    for (int q = 0; q < nt; q++)
                        cand[nc++] = (Cand){s.cum[i * K + j] + ((double)x[ids[q]] - lse), j, q, ids[q]};
                }
                qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
                int take = nc < width[i] ? nc : width[i], nl = 0, fin = 0;
                for (int q = 0; q < take; q++) {
                    const Cand *cd = &cand[q];
                    int pr = base[i] + cd->slot; /* the parent's row */
                    const real *arow = att + (size_t)pr * b.S;
                    if (cd->tok == VOCAB_EOS || t + 1 == lim[i]) {
                        finish(&s, i, t, cd, arow, slen[i]);
                        fin++;
                        continue;
                    }
                    int nr = i * K + nl; /* records and scores go by sentence and slot */
                    size_t rec = (size_t)t * R + nr;
                    s.rec_tok[rec] = cd->tok;
                    s.rec_par[rec] = cd->slot;
                    s.rec_pos[rec] = decode_argmax(arow, slen[i]);
                    if (s.rec_att)
                        for (int j = 0; j < b.S; j++)
                            s.rec_att[rec * b.S + j] = (float)arow[j];
                    s.ncum[nr] = cd->score;
                    from[base[i] + nl] = pr;
                    prev[base[i] + nl] = cd->tok;
                    nl++;
                }
                width[i] -= fin;
                nlive[i] = nl;
                bool stop = nl == 0;
                if (!stop && s.nkept[i] == N) {
                    double worst = s.kept[(size_t)i * N + N - 1].score, bound = -INFINITY;
                    for (int j = 0; j < nl; j++) {
                        double bj = beam_norm(s.ncum[i * K + j], lim[i], o->alpha);
                        if (bj > bound)
                            bound = bj;
                    }
                    stop = bound <= worst;
                }
                if (stop) {
                    done[i] = 1;
                    left--;
                    for (int j = 0; j < nl; j++) {
                        from[base[i] + j] = base[i] + j;
                        prev[base[i] + j] = VOCAB_EOS;
                    }
                    continue;
                }
                for (int j = 0; j < nl; j++)
                    s.cum[i * K + j] = s.ncum[i * K + j];
            }
            if (left == 0)
                break;
            /* Sentence i needs width[i] rows from now on (its live hypotheses, never more
               than that). When a quarter of the rows or more would idle, drop them: the
               rows of each sentence still running move together, done ones go. Not with
               K = 1, whose rows stay those of greedy_decode. */
            int need = 0;
            for (int i = 0; i < nb; i++)
                need += done[i] ? 0 : width[i];
            if (K > 1 && need <= rows - rows / 4) {
                int r2 = 0;
                for (int i = 0; i < nb; i++) {
                    if (done[i])
                        continue;
                    for (int j = 0; j < width[i]; j++) {
                        from2[r2 + j] = from[base[i] + j];
                        prev2[r2 + j] = prev[base[i] + j];
                    }
                    base[i] = r2;
                    r2 += width[i];
                }
                model_expand_rows(m, w, &b, from2, r2);
                memcpy(prev, prev2, (size_t)r2 * sizeof *prev);
                rows = r2;
            } else {
                model_select_rows(m, w, &b, from, t + 1);
            }
        }
        for (int i = 0; i < nb; i++) {
            int nk = s.nkept[i];
            CHECK(nk >= 1);
            out->count[sent[i]] = nk;
            out->hyps[sent[i]] = xmalloc((size_t)nk * sizeof **out->hyps);
            memcpy(out->hyps[sent[i]], s.kept + (size_t)i * N, (size_t)nk * sizeof **out->hyps);
            memset(s.kept + (size_t)i * N, 0, (size_t)N * sizeof *s.kept);
        }
    }
    free(base);
    free(prev2);
    free(from2);
    free(ids);
    free(cand);
    free(done);
    free(slen);
    free(nlive);
    free(width);
    free(lim);
    free(sent);
    free(prev);
    free(from);
    free(s.nkept);
    free(s.kept);
    free(s.ncum);
    free(s.cum);
    free(s.rec_att);
    free(s.rec_pos);
    free(s.rec_par);
    free(s.rec_tok);
    batch_buf_free(&bb);
    work_free(w);
    free(order);
    return 0;
}
