#include "decode/beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/plan.h"
#include "nn/loss.h"
#include "nn/ops.h"
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

int beam_max_src_len(const Model *m, int max_len, int beam, bool attention)
{
    CHECK(beam >= 1);
    return decode_max_src_len_rows(m, max_len, beam, REC_PER_T, REC_PER_TS(attention));
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

/* One sentence of a batch: its live hypotheses are on rows base .. base+nlive-1 of the
   model's batch; its records and scores go by slot (i·K + slot, i its index in the
   batch); it keeps its finished hypotheses, best first, in kept[0..nkept). */
typedef struct Sent {
    int id;      /* index in the input */
    int len;     /* source tokens */
    int lim;     /* output limit */
    int width;   /* rows it may still use: K less the hypotheses it finished */
    int nlive;   /* live hypotheses */
    int base;    /* its first row in the model's batch */
    int nkept;
    bool done;
    BeamHyp *kept; /* (N) */
} Sent;

/* The state of a search over batches of at most B sentences, allocated once: R = nb·K
   rows, sentence i on rows from base, step t's records of slot r at t·R + r. */
typedef struct Search {
    const BeamOpts *o;
    int K, N, R, S, V;
    int *rec_tok, *rec_par, *rec_pos; /* (max_t, R) token, parent slot, source position */
    float *rec_att;                   /* (max_t, R, S) or NULL */
    double *cum, *ncum;               /* (R) raw scores of the live hypotheses, by slot */
    Sent *sent;                       /* (B) */
    BeamHyp *kept;                    /* (B, N) behind sent[i].kept */
    int *from, *prev, *from2, *prev2; /* (R) the rows' parents and last tokens */
    Cand *cand;                       /* (K·K) */
    int *ids;                         /* (K) */
} Search;

static void search_init(Search *s, const BeamOpts *o, int B, int max_s, int max_t, int V)
{
    const int K = o->beam, N = o->nbest ? o->nbest : 1, RM = B * K;
    *s = (Search){.o = o, .K = K, .N = N, .V = V};
    size_t recs = (size_t)max_t * RM;
    s->rec_tok = XNEW(int, recs);
    s->rec_par = XNEW(int, recs);
    s->rec_pos = XNEW(int, recs);
    if (o->attention)
        s->rec_att = XNEW(float, recs * (size_t)max_s);
    s->cum = XNEW(double, RM);
    s->ncum = XNEW(double, RM);
    s->sent = XCNEW(Sent, B);
    s->kept = XCNEW(BeamHyp, (size_t)B * N);
    for (int i = 0; i < B; i++)
        s->sent[i].kept = s->kept + (size_t)i * N;
    s->from = XNEW(int, RM);
    s->prev = XNEW(int, RM);
    s->from2 = XNEW(int, RM);
    s->prev2 = XNEW(int, RM);
    s->cand = XNEW(Cand, (size_t)K * K);
    s->ids = XNEW(int, K);
}

static void search_free(Search *s)
{
    free(s->rec_tok);
    free(s->rec_par);
    free(s->rec_pos);
    free(s->rec_att);
    free(s->cum);
    free(s->ncum);
    free(s->sent);
    free(s->kept);
    free(s->from);
    free(s->prev);
    free(s->from2);
    free(s->prev2);
    free(s->cand);
    free(s->ids);
}

/* Records candidate c of sentence i at step t (whose parent's attention row at this
   step is att) as a finished hypothesis, if it makes the list. */
static void finish(Search *s, int i, int t, const Cand *c, const real *att)
{
    Sent *st = &s->sent[i];
    int src_len = st->len;
    bool eos = c->tok == VOCAB_EOS;
    int n = t + !eos, K = s->K, N = s->N, R = s->R, S = s->S;
    double score = beam_norm(c->score, n + eos, s->o->alpha);
    BeamHyp *kept = st->kept;
    int *nk = &st->nkept;
    if (*nk == N && !(score > kept[N - 1].score))
        return;
    BeamHyp h = {.len = n, .eos = eos, .logprob = c->score, .score = score};
    h.ids = xmalloc_array((size_t)(n), sizeof *h.ids);
    h.src_pos = xmalloc_array((size_t)(n), sizeof *h.src_pos);
    if (s->rec_att)
        h.attn = xmalloc_array((size_t)(n + eos) * src_len, sizeof *h.attn);
    if (!eos) {
        h.ids[t] = c->tok;
        h.src_pos[t] = nn_argmax(att, src_len);
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


/* One step of sentence i at step t: the best K·K continuations of its live
   hypotheses (logits lg, attention att over S source positions, rows from st->base),
   the width best of them, finished ones to its list, the others to its slots, rows
   (from, prev) and records. Marks the sentence done when nothing live can beat its
   list any more; returns whether it did. */
static bool sentence_step(Search *s, int i, int t, const real *lg, const real *att)
{
    Sent *st = &s->sent[i];
    const int K = s->K, V = s->V, S = s->S;
    int nc = 0;
    for (int j = 0; j < st->nlive; j++) {
        const real *x = lg + (size_t)(st->base + j) * V;
        int nt = top_tokens(x, V, st->width, s->ids);
        double lse = nn_log_sum_exp_max(x, V, x[s->ids[0]]); /* ids[0]: the largest */
        for (int q = 0; q < nt; q++)
            s->cand[nc++] = (Cand){s->cum[i * K + j] + ((double)x[s->ids[q]] - lse), j, q, s->ids[q]};
    }
    qsort(s->cand, (size_t)nc, sizeof *s->cand, cand_cmp);
    int take = nc < st->width ? nc : st->width, nl = 0, fin = 0;
    for (int q = 0; q < take; q++) {
        const Cand *cd = &s->cand[q];
        int pr = st->base + cd->slot; /* the parent's row */
        const real *arow = att + (size_t)pr * S;
        if (cd->tok == VOCAB_EOS || t + 1 == st->lim) {
            finish(s, i, t, cd, arow);
            fin++;
            continue;
        }
        int nr = i * K + nl; /* records and scores go by sentence and slot */
        size_t rec = (size_t)t * s->R + nr;
        s->rec_tok[rec] = cd->tok;
        s->rec_par[rec] = cd->slot;
        s->rec_pos[rec] = nn_argmax(arow, st->len);
        if (s->rec_att)
            for (int j = 0; j < S; j++)
                s->rec_att[rec * S + j] = (float)arow[j];
        s->ncum[nr] = cd->score;
        s->from[st->base + nl] = pr;
        s->prev[st->base + nl] = cd->tok;
        nl++;
    }
    st->width -= fin;
    st->nlive = nl;
    bool stop = nl == 0;
    if (!stop && st->nkept == s->N) {
        double worst = st->kept[s->N - 1].score, bound = -INFINITY;
        for (int j = 0; j < nl; j++) {
            double bj = beam_norm(s->ncum[i * K + j], st->lim, s->o->alpha);
            if (bj > bound)
                bound = bj;
        }
        stop = bound <= worst;
    }
    if (stop) {
        st->done = true;
        for (int j = 0; j < nl; j++) {
            s->from[st->base + j] = st->base + j;
            s->prev[st->base + j] = VOCAB_EOS;
        }
        return true;
    }
    for (int j = 0; j < nl; j++)
        s->cum[i * K + j] = s->ncum[i * K + j];
    return false;
}

/* Moves the rows of the sentences still running together (each keeps width rows) and
   drops the others; returns the number of rows. */
static int compact_rows(Search *s, Model *m, Work *w, Batch *b, int nb)
{
    int r2 = 0;
    for (int i = 0; i < nb; i++) {
        Sent *st = &s->sent[i];
        if (st->done)
            continue;
        for (int j = 0; j < st->width; j++) {
            s->from2[r2 + j] = s->from[st->base + j];
            s->prev2[r2 + j] = s->prev[st->base + j];
        }
        st->base = r2;
        r2 += st->width;
    }
    model_expand_rows(m, w, b, s->from2, r2);
    memcpy(s->prev, s->prev2, (size_t)r2 * sizeof *s->prev);
    return r2;
}

/* Hands each sentence's list to out (the search's copy is cleared). */
static void deliver(Search *s, int nb, BeamOut *out)
{
    for (int i = 0; i < nb; i++) {
        Sent *st = &s->sent[i];
        CHECK(st->nkept >= 1);
        out->count[st->id] = st->nkept;
        out->hyps[st->id] = XNEW(BeamHyp, st->nkept);
        memcpy(out->hyps[st->id], st->kept, (size_t)st->nkept * sizeof *st->kept);
        memset(st->kept, 0, (size_t)s->N * sizeof *st->kept);
    }
}

int beam_decode(Model *m, const PairSet *d, const BeamOpts *o, BeamOut *out, Err *e)
{
    CHECK(o->beam >= 1 && o->nbest >= 0 && o->nbest <= o->beam && o->batch >= 1 &&
          o->max_len >= 0 && o->alpha >= 0 && d->n >= 0);
    memset(out, 0, sizeof *out);
    const ModelConfig *c = &m->cfg;
    const int n = d->n, K = o->beam;

    int *order = XNEW(int, n);
    int nn, max_s, max_t;
    if (decode_plan(m, d, o->max_len, order, &nn, &max_s, &max_t, e) != 0) {
        free(order);
        return -1;
    }
    out->n = n;
    out->count = XCNEW(int, n);
    out->hyps = XCNEW(BeamHyp *, n);
    for (int i = 0; i < n; i++) {
        if (pair_src_len(d, i) == 0) {
            out->count[i] = 1;
            out->hyps[i] = XCNEW(BeamHyp, 1);
            out->hyps[i][0].ids = XNEW(int, 1);
            out->hyps[i][0].src_pos = XNEW(int, 1);
        }
    }
    if (nn == 0) {
        free(order);
        return 0;
    }

    int B = decode_fit_batch(m, max_s, max_t, o->batch < nn ? o->batch : nn, K, REC_PER_T,
                             REC_PER_TS(o->attention));
    Work *w = work_new(m, B * K, max_s, max_t, false);
    BatchBuf bb;
    batch_buf_init(&bb, B * K, max_s, 1);
    const PairSet src = {.n = n, .src = d->src, .src_len = d->src_len};
    Search s;
    search_init(&s, o, B, max_s, max_t, c->tgt_vocab);

    for (int k = 0; k < nn; k += B) {
        int nb = nn - k < B ? nn - k : B, R = nb * K;
        Batch b;
        batch_fill(&b, &bb, &src, order + k, nb);
        for (int i = 0; i < nb; i++)
            s.sent[i] = (Sent){.id = bb.rows[i], .len = b.src_len[i],
                               .lim = decode_limit(m, b.src_len[i], o->max_len), .width = K, .nlive = 1,
                               .base = i * K, .kept = s.sent[i].kept};
        model_encode(m, w, &b);
        for (int r = 0; r < R; r++) {
            s.from[r] = r / K;
            s.prev[r] = VOCAB_BOS;
            s.cum[r] = 0;
        }
        model_expand_rows(m, w, &b, s.from, R);
        s.R = R;
        s.S = b.S;
        int left = nb, rows = R; /* rows: the model's rows now */
        for (int t = 0; left > 0; t++) {
            model_decode_step(m, w, &b, s.prev, t);
            const real *lg = work_step_logits(w), *att = work_step_attention(w);
            for (int r = 0; r < rows; r++) {
                s.from[r] = r;
                s.prev[r] = VOCAB_EOS;
            }
            for (int i = 0; i < nb; i++)
                if (!s.sent[i].done && sentence_step(&s, i, t, lg, att))
                    left--;
            if (left == 0)
                break;
            /* Sentence i needs width rows from now on (its live hypotheses, never more
               than that). When a quarter of the rows or more would idle, drop them. Not
               with K = 1, whose rows stay those of greedy_decode. */
            int need = 0;
            for (int i = 0; i < nb; i++)
                need += s.sent[i].done ? 0 : s.sent[i].width;
            if (K > 1 && need <= rows - rows / 4)
                rows = compact_rows(&s, m, w, &b, nb);
            else
                model_select_rows(m, w, &b, s.from, t + 1);
        }
        deliver(&s, nb, out);
    }
    search_free(&s);
    batch_buf_free(&bb);
    work_free(w);
    free(order);
    return 0;
}
