#include "flops.h"

/* The Transformer (docs/model.md): per layer and token the projections (q, k, v and
   out: 8·d², with the attention over the encoder output's keys and values counted once
   per source token), the feed-forward 4·d·F, and the attention's two products 4·d per
   visible position (every source position; 1..n target positions, causal). */
static void flops_transformer(const ModelConfig *c, int src_len, int tgt_len, FlopsParts *out)
{
    double d = c->model_dim, F = c->ff, V = c->tgt_vocab, L = c->layers, s = src_len, n = tgt_len;
    *out = (FlopsParts){0};
    out->encoder = L * s * (8 * d * d + 4 * d * F);
    out->keys = L * s * 4 * d * d;                     /* cross-attention keys and values */
    out->decoder = L * n * (8 * d * d + 4 * d * d + 4 * d * F); /* self q,k,v,out; cross q,out; FF */
    out->attention = L * (s * s * 4 * d + n * (n + 1) / 2 * 4 * d + n * s * 4 * d);
    out->proj = n * 2 * d * V;
}

void flops_sentence(const ModelConfig *c, int src_len, int tgt_len, FlopsParts *out)
{
    if (c->arch == ARCH_TRANSFORMER) {
        flops_transformer(c, src_len, tgt_len, out);
        return;
    }
    double E = c->emb, H = c->hidden, D = c->dec_hidden, A = c->attn, P = c->deep_out, V = c->tgt_vocab,
           K = model_enc_size(c), G = model_gates(c), Ak = model_key_size(c), Din = model_dec_in_size(c),
           F = model_pre_in_size(c);
    double s = src_len, n = tgt_len, L = c->layers, dirs = c->bidir ? 2 : 1;
    AttnKind at = c->attention;
    bool additive = at == ATT_BAHDANAU || at == ATT_LUONG_CONCAT;
    bool proj_q = additive || at == ATT_SCALED_DOT || at == ATT_MULTIHEAD;

    /* encoder: per source token and direction, input gates G·H from In, recurrent G·H from H */
    out->encoder = 0;
    for (int l = 0; l < c->layers; l++) {
        double in = l == 0 ? E : K;
        out->encoder += s * dirs * (2 * in * G * H + 2 * H * G * H);
    }
    out->keys = s * (2 * K * Ak + (at == ATT_MULTIHEAD ? 2 * K * A : 0));
    /* bridge: per layer D from K (and the cell state's map for LSTM); attn-pool adds its
       projection and scores per source token */
    out->bridge = 0;
    if (c->bridge != BRIDGE_ZERO)
        out->bridge = L * 2 * K * D * (c->cell == CELL_LSTM ? 2 : 1);
    if (c->bridge == BRIDGE_ATTN_POOL)
        out->bridge += s * (2 * K * A + 2 * A + 2 * K);

    out->decoder = 0;
    for (int l = 0; l < c->layers; l++) {
        double in = l == 0 ? Din : D;
        out->decoder += n * (2 * in * G * D + 2 * D * G * D);
    }
    /* attention per target step over the positions it can see */
    double w = s;
    if (c->local != LOCAL_NONE && 2.0 * c->window + 1 < w)
        w = 2.0 * c->window + 1;
    double score_width = additive ? A : (Ak ? Ak : K);
    double per_step = (proj_q ? 2 * D * A : 0) + 2 * score_width * w;
    if (at == ATT_MULTIHEAD)
        per_step += 2 * A * w + 2 * A * K; /* weighted sum of the values, output map */
    else
        per_step += 2 * K * w;             /* weighted sum of the encoder states */
    if (c->local == LOCAL_P)
        per_step += 2 * D * A + 2 * A;
    out->attention = n * per_step;
    out->output = n * 2 * F * P;
    out->proj = n * 2 * P * V;
}

double flops_parts_total(const FlopsParts *p)
{
    return p->encoder + p->keys + p->bridge + p->decoder + p->attention + p->output + p->proj;
}

double flops_forward_batch(const ModelConfig *c, const Batch *b)
{
    double total = 0;
    for (int r = 0; r < b->B; r++) {
        int n = 0;
        for (int t = 0; t < b->T; t++)
            n += b->tgt_out[(size_t)t * b->B + r] != 0;
        FlopsParts p;
        flops_sentence(c, b->src_len[r], n, &p);
        total += flops_parts_total(&p);
    }
    return total;
}

double flops_train_batch(const ModelConfig *c, const Batch *b)
{
    return 3 * flops_forward_batch(c, b);
}
