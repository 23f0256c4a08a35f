#include "decode/beam.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/plan.h"
#include "nn/loss.h"
#include "nn/ops.h"
#include "nn/parallel.h"
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
    int bank; /* constrained search: the constraint tokens met with it */
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
    /* the constrained search (BeamCons): each live hypothesis's state, by slot */
    struct CState *cst, *ncst;        /* (R) */
    real *xrow;                       /* (V) */
    Cand *ccand;                      /* (ccap) */
    int ccap;
    int *bank_n, *bank_take;          /* (bcap) */
    int bcap;
} Search;

/* A hypothesis's progress through its sentence's constraints: the phrases met (bits),
   the one in progress (-1: none) and its tokens produced so far, and the constraint
   tokens met in all (its bank). */
typedef struct CState {
    uint64_t met;
    int cur, pos, bank;
} CState;

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
    if (o->cons) {
        s->cst = XNEW(CState, RM);
        s->ncst = XNEW(CState, RM);
        s->xrow = XNEW(real, V);
    }
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
    free(s->cst);
    free(s->ncst);
    free(s->xrow);
    free(s->ccand);
    free(s->bank_n);
    free(s->bank_take);
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


/* Records candidate cd of sentence i at step t (its parent's attention row arow) as
   the sentence's live hypothesis nl: records and scores go by sentence and slot, the
   model's rows by the sentence's base. */
static void keep_live(Search *s, int i, int t, int nl, const Cand *cd, const real *arow)
{
    Sent *st = &s->sent[i];
    const int S = s->S, nr = i * s->K + nl;
    size_t rec = (size_t)t * s->R + nr;
    s->rec_tok[rec] = cd->tok;
    s->rec_par[rec] = cd->slot;
    s->rec_pos[rec] = nn_argmax(arow, st->len);
    if (s->rec_att)
        for (int j = 0; j < S; j++)
            s->rec_att[rec * S + j] = (float)arow[j];
    s->ncum[nr] = cd->score;
    s->from[st->base + nl] = st->base + cd->slot;
    s->prev[st->base + nl] = cd->tok;
}

/* After a step of sentence i that left nl live hypotheses and finished fin: narrows its
   width and marks it done when nothing live can beat its list any more (returns
   whether it did); else the live scores (and, with cons, the constraint states) become
   the current ones. */
static bool settle(Search *s, int i, int nl, int fin, bool cons)
{
    Sent *st = &s->sent[i];
    const int K = s->K;
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
    for (int j = 0; j < nl; j++) {
        s->cum[i * K + j] = s->ncum[i * K + j];
        if (cons)
            s->cst[i * K + j] = s->ncst[i * K + j];
    }
    return false;
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
            s->cand[nc++] = (Cand){s->cum[i * K + j] + ((double)x[s->ids[q]] - lse), j, q, s->ids[q], 0};
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
        keep_live(s, i, t, nl++, cd, arow);
    }
    return settle(s, i, nl, fin, false);
}

/* ---- the constrained search (BeamCons, beam.h) ---- */

static int cons_total(const BeamCons *c)
{
    int n = 0;
    for (int k = 0; k < c->n; k++)
        n += c->len[k];
    return n;
}

static bool is_glue(const BeamCons *c, int tok)
{
    return c->glue && tok >= 0 && c->glue[tok];
}

/* The state after tok, which follows prev. */
static CState cstate_next(const BeamCons *c, CState st, int prev, int tok)
{
    if (st.cur >= 0) {
        if (c->tok[st.cur][st.pos] == tok) {
            st.pos++;
            st.bank++;
            if (st.pos == c->len[st.cur]) {
                st.met |= (uint64_t)1 << st.cur;
                st.cur = -1;
                st.pos = 0;
            }
            return st;
        }
        st.bank -= st.pos; /* the phrase is left: its progress is lost */
        st.cur = -1;
        st.pos = 0;
    }
    if (is_glue(c, prev)) /* inside a word: no phrase starts here */
        return st;
    for (int k = 0; k < c->n; k++) {
        if ((st.met >> k & 1) || c->tok[k][0] != tok)
            continue;
        st.bank++;
        if (c->len[k] == 1)
            st.met |= (uint64_t)1 << k;
        else
            st.cur = k, st.pos = 1;
        break;
    }
    return st;
}

/* Whether a hypothesis in state st after token tok can still meet every constraint
   in `left` more steps: its unmet constraint tokens, and one more to end its word when
   tok is a unit inside a word and no phrase is in progress. */
static bool can_finish(const BeamCons *c, int total, const CState *st, int tok, int left)
{
    int need = total - st->bank + (st->cur < 0 && is_glue(c, tok));
    return need <= left;
}

/* Whether avoided phrase k would end with the next token of the hypothesis (slot
   `slot` of sentence i at step t): its tokens but the last are the hypothesis's last
   ones, starting a word. */
static bool phrase_barred(const Search *s, const BeamCons *c, int i, int t, int slot, int k)
{
    const int *a = c->avoid[k];
    int L = c->alen[k];
    if (L - 1 > t)
        return false;
    int sl = slot;
    for (int u = t - 1, q = L - 2; q >= 0; u--, q--) {
        size_t rec = (size_t)u * s->R + (size_t)i * s->K + sl;
        if (s->rec_tok[rec] != a[q])
            return false;
        sl = s->rec_par[rec];
    }
    /* sl is now the slot at step t - L: the token before the phrase must end a word */
    int before = t - L >= 0 ? s->rec_tok[(size_t)(t - L) * s->R + (size_t)i * s->K + sl] : VOCAB_BOS;
    return !is_glue(c, before);
}

static void cand_push(Search *s, int *nc, Cand c)
{
    if (*nc == s->ccap) {
        s->ccap = s->ccap ? 2 * s->ccap : 64;
        XRENEW(s->ccand, s->ccap);
    }
    s->ccand[(*nc)++] = c;
}

/* sentence_step for a sentence with constraints (c). */
static bool sentence_step_cons(Search *s, int i, int t, const real *lg, const real *att, const BeamCons *c)
{
    Sent *st = &s->sent[i];
    const int K = s->K, V = s->V, S = s->S, C = cons_total(c);
    int nc = 0;
    for (int j = 0; j < st->nlive; j++) {
        real *x = s->xrow; /* a copy: barred tokens are set to -inf */
        memcpy(x, lg + (size_t)(st->base + j) * V, (size_t)V * sizeof *x);
        const CState *cs = &s->cst[i * K + j];
        const double cum = s->cum[i * K + j];
        real mx = x[0];
        for (int v = 1; v < V; v++)
            if (x[v] > mx)
                mx = x[v];
        const double lse = nn_log_sum_exp_max(x, V, mx);
        int first = nc;
        const int prev = t == 0 ? VOCAB_BOS : s->rec_tok[(size_t)(t - 1) * s->R + (size_t)i * K + j];
        if (t < c->nprefix) { /* the prefix: its token only */
            int tok = c->prefix[t];
            cand_push(s, &nc, (Cand){cum + ((double)x[tok] - lse), j, 0, tok, cstate_next(c, *cs, prev, tok).bank});
            continue;
        }
        const bool all_met = cs->bank == C;
        const int left = st->lim - t - 1; /* steps after this one */
        /* tokens that advance a constraint (never barred): the next of the phrase in
           progress, and at a word's start the first of each phrase not met */
        int adv[BEAM_MAX_CONSTRAINTS + 1], nadv = 0;
        if (!all_met) {
            if (cs->cur >= 0)
                adv[nadv++] = c->tok[cs->cur][cs->pos];
            for (int k = 0; k < c->n && !is_glue(c, prev); k++) {
                if ((cs->met >> k & 1) || k == cs->cur)
                    continue;
                bool dup = false;
                for (int q = 0; q < nadv && !dup; q++)
                    dup = adv[q] == c->tok[k][0];
                if (!dup)
                    adv[nadv++] = c->tok[k][0];
            }
        }
        for (int q = 0; q < nadv; q++) {
            int v = adv[q];
            CState ns = cstate_next(c, *cs, prev, v);
            if (can_finish(c, C, &ns, v, left))
                cand_push(s, &nc, (Cand){cum + ((double)x[v] - lse), j, -1, v, ns.bank});
            x[v] = -INFINITY; /* proposed already */
        }
        /* the best others: <eos> only when every constraint is met, no avoided phrase,
           none after which the constraints could not be met in time. Any other token
           leaves the phrase in progress (losing its tokens): need0 constraint tokens
           are then unmet, and a unit inside a word needs one more step. */
        if (!all_met)
            x[VOCAB_EOS] = -INFINITY;
        for (int k = 0; k < c->navoid; k++)
            if (phrase_barred(s, c, i, t, j, k))
                x[c->avoid[k][c->alen[k] - 1]] = -INFINITY;
        const int need0 = C - (cs->bank - (cs->cur >= 0 ? cs->pos : 0));
        if (need0 > left)
            continue; /* only the constraints' tokens can finish in time */
        int word_end = -1; /* the best unit that ends a word, kept in any case */
        for (int v = 0; v < V; v++) {
            if (x[v] == -INFINITY)
                continue;
            if (is_glue(c, v)) {
                if (need0 == left)
                    x[v] = -INFINITY;
            } else if (word_end < 0 || x[v] > x[word_end]) {
                word_end = v;
            }
        }
        int nt = top_tokens(x, V, st->width, s->ids);
        if (word_end >= 0 && nt == st->width) { /* the last place to the word end, if not in */
            bool in = false;
            for (int q = 0; q < nt && !in; q++)
                in = s->ids[q] == word_end;
            if (!in)
                s->ids[nt - 1] = word_end;
        }
        for (int q = 0; q < nt; q++) {
            int v = s->ids[q];
            if (x[v] == -INFINITY)
                continue;
            bool dup = false;
            for (int u = first; u < nc && !dup; u++)
                dup = s->ccand[u].tok == v;
            if (!dup)
                cand_push(s, &nc, (Cand){cum + ((double)x[v] - lse), j, q, v, cstate_next(c, *cs, prev, v).bank});
        }
    }
    qsort(s->ccand, (size_t)nc, sizeof *s->ccand, cand_cmp);

    /* dynamic beam allocation: width slots over banks 0..C */
    const int W = st->width, nbank = C + 1;
    if (nbank > s->bcap) {
        s->bcap = nbank;
        XRENEW(s->bank_n, nbank);
        XRENEW(s->bank_take, nbank);
    }
    for (int b = 0; b < nbank; b++)
        s->bank_n[b] = W / nbank + (nbank - 1 - b < W % nbank), s->bank_take[b] = 0;
    /* each bank takes its best candidates up to its share; the rest are marked */
    int taken = 0;
    for (int q = 0; q < nc; q++) {
        Cand *cd = &s->ccand[q];
        if (s->bank_take[cd->bank] < s->bank_n[cd->bank]) {
            s->bank_take[cd->bank]++;
            cd->rank = -2; /* chosen */
            taken++;
        }
    }
    /* slots left go to the best remaining candidates, from the bank that met most down */
    for (int b = C; b >= 0 && taken < W; b--)
        for (int q = 0; q < nc && taken < W; q++)
            if (s->ccand[q].bank == b && s->ccand[q].rank != -2)
                s->ccand[q].rank = -2, taken++;

    int nl = 0, fin = 0;
    for (int q = 0; q < nc; q++) {
        const Cand *cd = &s->ccand[q];
        if (cd->rank != -2)
            continue;
        int pr = st->base + cd->slot;
        const real *arow = att + (size_t)pr * S;
        const int prev = t == 0 ? VOCAB_BOS : s->rec_tok[(size_t)(t - 1) * s->R + (size_t)i * K + cd->slot];
        CState ns = cstate_next(c, s->cst[i * K + cd->slot], prev, cd->tok);
        if (cd->tok == VOCAB_EOS || t + 1 == st->lim) {
            if (ns.bank == C || cd->tok == VOCAB_EOS) /* <eos> came only with every constraint met */
                finish(s, i, t, cd, arow);
            fin++;
            continue;
        }
        s->ncst[i * K + nl] = ns;
        keep_live(s, i, t, nl++, cd, arow);
    }
    return settle(s, i, nl, fin, true);
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
        if (st->nkept == 0) { /* no hypothesis met its constraints (cannot happen: beam.h) */
            st->kept[0] = (BeamHyp){.logprob = -INFINITY, .score = -INFINITY, .ids = XNEW(int, 1),
                                    .src_pos = XNEW(int, 1)};
            st->nkept = 1;
        }
        out->count[st->id] = st->nkept;
        out->hyps[st->id] = XNEW(BeamHyp, st->nkept);
        memcpy(out->hyps[st->id], st->kept, (size_t)st->nkept * sizeof *st->kept);
        memset(st->kept, 0, (size_t)s->N * sizeof *st->kept);
    }
}

/* One decoding stream: its own activations, batch buffer and search, taking the next
   batch of the plan until none is left. Two streams decode a file's batches side by
   side, each on one core: a batch is the same batch whichever stream takes it, so the
   output is the same as one stream's. */
typedef struct Stream {
    Model *m;
    const BeamOpts *o;
    const PairSet *src;
    const int *order;
    int nn, B, K, max_s, max_t;
    atomic_int *next; /* the plan's next batch, by its first position */
    BeamOut *out;
    bool alone;       /* this thread's loops without the pool (two streams) */
} Stream;

static void *stream_run(void *arg)
{
    const Stream *st = arg;
    nn_parallel_alone(st->alone);
    Model *m = st->m;
    const BeamOpts *o = st->o;
    const int B = st->B, K = st->K;
    Work *w = work_new(m, B * K, st->max_s, st->max_t, false);
    work_show_attention(w, o->attention_layer - 1, o->attention_head - 1);
    BatchBuf bb;
    batch_buf_init(&bb, B * K, st->max_s, 1);
    Search s;
    search_init(&s, o, B, st->max_s, st->max_t, m->cfg.tgt_vocab);

    for (;;) {
        int k = atomic_fetch_add(st->next, B);
        if (k >= st->nn)
            break;
        int nb = st->nn - k < B ? st->nn - k : B, R = nb * K;
        Batch b;
        batch_fill(&b, &bb, st->src, st->order + k, nb);
        for (int i = 0; i < nb; i++)
            s.sent[i] = (Sent){.id = bb.rows[i], .len = b.src_len[i],
                               .lim = decode_limit(m, b.src_len[i], o->max_len), .width = K, .nlive = 1,
                               .base = i * K, .kept = s.sent[i].kept};
        model_encode(m, w, &b);
        for (int r = 0; r < R; r++) {
            s.from[r] = r / K;
            s.prev[r] = VOCAB_BOS;
            s.cum[r] = 0;
            if (s.cst)
                s.cst[r] = (CState){.cur = -1};
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
            for (int i = 0; i < nb; i++) {
                const BeamCons *bc = o->cons ? o->cons[s.sent[i].id] : NULL;
                if (!s.sent[i].done && (bc ? sentence_step_cons(&s, i, t, lg, att, bc)
                                          : sentence_step(&s, i, t, lg, att)))
                    left--;
            }
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
        deliver(&s, nb, st->out); /* each sentence's own entries of out */
    }
    search_free(&s);
    batch_buf_free(&bb);
    work_free(w);
    nn_parallel_alone(false);
    return NULL;
}

int beam_decode(Model *m, const PairSet *d, const BeamOpts *o, BeamOut *out, Err *e)
{
    CHECK(o->beam >= 1 && o->nbest >= 0 && o->nbest <= o->beam && o->batch >= 1 &&
          o->max_len >= 0 && o->alpha >= 0 && d->n >= 0);
    memset(out, 0, sizeof *out);
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
    const PairSet src = {.n = n, .src = d->src, .src_len = d->src_len};
    atomic_int next = 0;
    Stream st = {.m = m, .o = o, .src = &src, .order = order, .nn = nn, .B = B, .K = K,
                 .max_s = max_s, .max_t = max_t, .next = &next, .out = out};
    /* Two streams where there are two threads or more, more than one batch and int8
       weights, each decoding on one thread: the products of a decoder step are too small
       to share well between cores, two batches at once share them fully. Not in f32,
       whose products are OpenBLAS's: two callers at once wait for its one pool of
       threads (greedy at batch 1 went from 130 to 67 sentences/s; docs/cli/translate.md) */
    pthread_t second;
    bool int8 = m->quant.n > 0 && m->quant.q[0].prec == PREC_INT8;
    bool two = o->streams != 1 && int8 && nn_parallel_threads() >= 2 && nn > B;
    st.alone = two;
    if (two && pthread_create(&second, NULL, stream_run, &st) != 0)
        two = st.alone = false;
    stream_run(&st);
    if (two)
        pthread_join(second, NULL);
    free(order);
    return 0;
}
