/* bench/flops.c: the model FLOP count of `make bench` against counts done by hand. */
#include <criterion/criterion.h>

#include "../../bench/flops.h"

/* E 2, H 3 (K 6, bidirectional), D 4, A 5, P 6, Vt 7, one GRU layer (G 3). */
static ModelConfig tiny(void)
{
    ModelConfig c = model_config_default();
    c.emb = 2;
    c.hidden = 3;
    c.dec_hidden = 4;
    c.attn = 5;
    c.deep_out = 6;
    c.src_vocab = 9;
    c.tgt_vocab = 7;
    return c;
}

Test(bench_flops, bahdanau_sentence_by_hand)
{
    ModelConfig c = tiny();
    FlopsParts p;
    flops_sentence(&c, 2, 3, &p);
    /* s = 2 source, n = 3 target tokens:
       encoder   s·2 dirs·(2·E·3H + 2·H·3H)      = 2·2·(36 + 54)        = 360
       keys      s·2·K·A                         = 2·2·6·5              = 120
       bridge    2·K·D                           = 2·6·4                = 48
       decoder   n·(2·(E+K)·3D + 2·D·3D)         = 3·(192 + 96)         = 864
       attention n·(2·D·A + 2·A·s + 2·K·s)       = 3·(40 + 20 + 24)     = 252
       output    n·2·(D+K+E)·P                   = 3·2·12·6             = 432
       proj      n·2·P·Vt                        = 3·2·6·7              = 252 */
    cr_expect_eq(p.encoder, 360);
    cr_expect_eq(p.keys, 120);
    cr_expect_eq(p.bridge, 48);
    cr_expect_eq(p.decoder, 864);
    cr_expect_eq(p.attention, 252);
    cr_expect_eq(p.output, 432);
    cr_expect_eq(p.proj, 252);
    cr_expect_eq(flops_parts_total(&p), 2328);
}

Test(bench_flops, luong_general_input_feed_sentence_by_hand)
{
    ModelConfig c = tiny();
    c.attention = ATT_LUONG_GENERAL;
    c.input_feed = true;
    FlopsParts p;
    flops_sentence(&c, 2, 3, &p);
    /* keys are D wide (2·s·K·D = 96); layer-0 input [y; h~] is E+P = 8 wide; no query
       projection: scores 2·D·s = 16, context 2·K·s = 24 per step; out.pre reads
       [c; s], K+D = 10 wide */
    cr_expect_eq(p.keys, 96);
    cr_expect_eq(p.decoder, 3 * (2 * 8 * 12 + 2 * 4 * 12));
    cr_expect_eq(p.attention, 3 * (16 + 24));
    cr_expect_eq(p.output, 3 * 2 * 10 * 6);
    cr_expect_eq(flops_parts_total(&p), 360 + 96 + 48 + 864 + 120 + 360 + 252);
}

Test(bench_flops, transformer_sentence_by_hand)
{
    ModelConfig c = model_config_transformer();
    c.layers = 2;
    c.model_dim = 4;
    c.heads = 2;
    c.ff = 6;
    c.src_vocab = 9;
    c.tgt_vocab = 7;
    FlopsParts p;
    flops_sentence(&c, 3, 2, &p);
    /* d 4, F 6, L 2, s = 3 source, n = 2 target tokens, Vt 7:
       encoder   L·s·(8·d² + 4·d·F)        = 2·3·(128 + 96)          = 1344
       keys      L·s·4·d²                  = 2·3·64                  = 384
       decoder   L·n·(12·d² + 4·d·F)       = 2·2·(192 + 96)          = 1152
       attention L·4·d·(s² + n(n+1)/2 + n·s) = 2·16·(9 + 3 + 6)      = 576
       proj      n·2·d·Vt                  = 2·2·4·7                 = 112 */
    cr_expect_eq(p.encoder, 1344);
    cr_expect_eq(p.keys, 384);
    cr_expect_eq(p.bridge, 0);
    cr_expect_eq(p.decoder, 1152);
    cr_expect_eq(p.attention, 576);
    cr_expect_eq(p.output, 0);
    cr_expect_eq(p.proj, 112);
}

Test(bench_flops, batch_counts_each_row_without_padding)
{
    ModelConfig c = tiny();
    /* row 0: 2 source tokens, targets y1 y2 <eos>; row 1: 1 source token, target <eos> */
    int src[] = {5, 6, 7, 0}, src_len[] = {2, 1};
    int tgt_in[] = {2, 2, 5, 0, 6, 0}, tgt_out[] = {5, 3, 6, 0, 3, 0};
    Batch b = {.B = 2, .S = 2, .T = 3, .src = src, .src_len = src_len, .tgt_in = tgt_in, .tgt_out = tgt_out,
               .ntok = 4};
    /* row 1 (s = 1, n = 1): 180 + 60 + 48 + 288 + 62 + 144 + 84 = 866 */
    cr_expect_eq(flops_forward_batch(&c, &b), 2328 + 866);
    cr_expect_eq(flops_train_batch(&c, &b), 3 * (2328 + 866));
}

Test(bench_flops, synthetic_batch_of_one_length)
{
    /* A batch as `s2s-bench synth --len 2` writes it: every row 2 source and 2 target
       tokens (y1 <eos>), no padding; the Transformer of transformer_sentence_by_hand. */
    ModelConfig c = model_config_transformer();
    c.layers = 2;
    c.model_dim = 4;
    c.heads = 2;
    c.ff = 6;
    c.src_vocab = 9;
    c.tgt_vocab = 7;
    int src[] = {5, 6, 7, 8}, src_len[] = {2, 2};
    int tgt_in[] = {2, 2, 5, 6}, tgt_out[] = {5, 6, 3, 3};
    Batch b = {.B = 2, .S = 2, .T = 2, .src = src, .src_len = src_len, .tgt_in = tgt_in, .tgt_out = tgt_out,
               .ntok = 4};
    /* per row, s = n = 2: encoder 2·2·224 = 896, keys 2·2·64 = 256, decoder 2·2·288 = 1152,
       attention 2·16·(4 + 3 + 4) = 352, proj 2·2·4·7 = 112: 2768 */
    FlopsParts p;
    flops_sentence(&c, 2, 2, &p);
    cr_expect_eq(p.attention, 352);
    cr_expect_eq(flops_parts_total(&p), 2768);
    cr_expect_eq(flops_forward_batch(&c, &b), 2 * 2768);
}
