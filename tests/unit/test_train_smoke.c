/* End-to-end sanity of the training pieces: a small GRU model trained with
   batch_fill, model_forward_backward, clipping and Adam memorises 8 made-up
   pairs; greedy decoding then reproduces every target exactly; in fp32 and with the
   products in bf16 (nn/bf16.h), whose step is also compared with fp32's. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "model/model.h"
#include "data/batch.h"
#include "nn/bf16.h"
#include "train/optim.h"

_Static_assert(sizeof(real) == sizeof(float), "the main test binary uses the float engine");

enum { NPAIR = 8, VOCAB = 16, STEPS = 200 };

/* Ids 4..15 are words (0..3 are the specials). */
static int s0[] = {4, 5, 6}, s1[] = {7, 8}, s2[] = {9, 10, 11, 12}, s3[] = {13},
           s4[] = {5, 4}, s5[] = {6, 7, 8, 9, 10}, s6[] = {11, 14}, s7[] = {15, 12, 4};
static int t0[] = {6, 5, 4}, t1[] = {8, 8, 7}, t2[] = {12, 11}, t3[] = {13, 13, 13, 14},
           t4[] = {4}, t5[] = {10, 9, 8, 7, 6}, t6[] = {14, 11, 15}, t7[] = {4, 12};

static void memorise(void)
{
    int *src[NPAIR] = {s0, s1, s2, s3, s4, s5, s6, s7};
    int *tgt[NPAIR] = {t0, t1, t2, t3, t4, t5, t6, t7};
    int sl[NPAIR] = {3, 2, 4, 1, 2, 5, 2, 3};
    int tl[NPAIR] = {3, 3, 2, 4, 1, 5, 3, 2};
    PairSet d = {.n = NPAIR, .src = src, .src_len = sl, .tgt = tgt, .tgt_len = tl};

    ModelConfig cfg = model_config_default();
    cfg.emb = cfg.hidden = cfg.dec_hidden = cfg.attn = cfg.deep_out = 32;
    cfg.dropout = 0;
    cfg.label_smoothing = 0;
    cfg.src_vocab = cfg.tgt_vocab = VOCAB;
    cr_assert_eq(model_config_check(&cfg, NULL), 0);
    Model m;
    model_init(&m, &cfg, true);
    Rng rng;
    rng_seed(&rng, 2024);
    model_init_random(&m, &rng);

    BatchOpts o = {NPAIR, 0, 0};
    int mb, ms, mt;
    batch_limits(&d, &o, &mb, &ms, &mt);
    cr_assert(mb == NPAIR && ms == 5 && mt == 6);
    BatchBuf bb;
    batch_buf_init(&bb, mb, ms, mt);
    Work *w = work_new(&m, mb, ms, mt, true);
    BatchPlan plan = {0};
    Adam adam;
    optim_adam_init(&adam, m.layout.total, OPTIM_BETA1, OPTIM_BETA2, OPTIM_EPS, 0);
    Sched sched = optim_sched_make(SCHED_WARMUP_DECAY, 0.01);
    sched.warmup = 10;

    double first = 0, last = 0;
    Batch b;
    for (int step = 1; step <= STEPS; step++) {
        const int *rows;
        int nrows;
        cr_assert_eq(batch_plan_start(&plan, &d, &o, &rng, NULL), 0);
        cr_assert_eq(batch_plan_next(&plan, &rows, &nrows, NULL), 1);
        cr_assert_eq(nrows, NPAIR);
        batch_fill(&b, &bb, &d, rows, NPAIR);
        cr_assert_eq(batch_plan_next(&plan, &rows, &nrows, NULL), 0, "one batch an epoch");
        memset(m.grads, 0, m.layout.total * sizeof(real));
        double loss = model_forward_backward(&m, w, &b, NULL) / (double)b.ntok;
        optim_clip_grad_norm(m.grads, m.layout.total, 5.0);
        optim_adam_step(&adam, m.params, m.grads, optim_sched_lr(&sched, step));
        if (step == 1)
            first = loss;
        last = loss;
    }
    cr_expect(first > 2.0, "initial loss %g is about log(%d)", first, VOCAB);
    cr_expect(last < 0.02, "loss after %d steps: %g (from %g)", STEPS, last, first);

    /* Greedy decoding of the same batch. */
    int order[NPAIR] = {0, 1, 2, 3, 4, 5, 6, 7};
    batch_fill(&b, &bb, &d, order, NPAIR);
    model_encode(&m, w, &b);
    int prev[NPAIR], out[NPAIR][8], done[NPAIR] = {0}, len[NPAIR] = {0};
    for (int r = 0; r < NPAIR; r++)
        prev[r] = 2;
    for (int t = 0; t < mt; t++) {
        model_decode_step(&m, w, &b, prev, t);
        const real *lg = work_step_logits(w);
        for (int r = 0; r < NPAIR; r++) {
            int best = 0;
            for (int v = 1; v < VOCAB; v++)
                if (lg[r * VOCAB + v] > lg[r * VOCAB + best])
                    best = v;
            prev[r] = best;
            if (!done[r]) {
                out[r][len[r]++] = best;
                done[r] = best == 3;
            }
        }
    }
    for (int r = 0; r < NPAIR; r++) {
        int i = bb.rows[r];
        cr_expect_eq(len[r], tl[i] + 1, "pair %d: %d tokens decoded", i, len[r]);
        for (int k = 0; k < tl[i] && k < len[r]; k++)
            cr_expect_eq(out[r][k], tgt[i][k], "pair %d token %d: %d, expected %d", i, k,
                         out[r][k], tgt[i][k]);
        cr_expect_eq(out[r][len[r] - 1], 3, "pair %d ends with <eos>", i);
    }

    optim_adam_free(&adam);
    batch_plan_free(&plan);
    work_free(w);
    batch_buf_free(&bb);
    model_free(&m);
}

Test(train_smoke, memorises_eight_pairs)
{
    memorise();
}

/* With the products in bf16, where the CPU has bf16 instructions; elsewhere bf16 is
   refused with its message and nn_gemm stays fp32. */
Test(train_smoke, memorises_eight_pairs_in_bf16)
{
    if (bf16_on_or_refused())
        memorise();
}
