/* Adam against torch.optim.Adam, clipping against torch.nn.utils.clip_grad_norm_, and
   the learning-rate schedules' exact rates. */
#include <criterion/criterion.h>
#include <math.h>

#include "train/optim.h"

static void expect_close(const char *what, int i, double got, double want, double tol)
{
    cr_expect(fabs(got - want) <= tol, "%s[%d]: %.9g, expected %.9g", what, i, got, want);
}

/* Expected parameters after each of three steps, produced once with torch 1.13
   (float32) by:
     p = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
     opt = torch.optim.Adam([p], lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd)
     for g in grads: p.grad = torch.tensor(g); opt.step()
   with the gradients of `grads` below, for wd = 0 and wd = 0.01.
   By hand, step 1: m̂ = g and v̂ = g², so every parameter moves by lr·sign(g) = 0.1
   (up to eps): [0.4, -0.9, 1.9]. */
static const float grads[3][3] = {{0.1f, -0.2f, 0.3f}, {-0.05f, 0.4f, 0.0f}, {0.2f, 0.1f, -1.5f}};
static const double want_nowd[3][3] = {{0.400000006, -0.899999976, 1.89999998},
                                       {0.373366296, -0.936610341, 1.83299422},
                                       {0.307555139, -0.978175461, 1.88548923}};
static const double want_wd[3][3] = {{0.400000006, -0.900000036, 1.89999998},
                                     {0.368503481, -0.933872044, 1.82869935},
                                     {0.300888062, -0.972317517, 1.87949562}};

static void run_adam(double wd, const double want[3][3])
{
    Adam a;
    optim_adam_init(&a, 3, OPTIM_BETA1, OPTIM_BETA2, OPTIM_EPS, wd);
    float p[3] = {0.5f, -1.0f, 2.0f};
    for (int s = 0; s < 3; s++) {
        float g[3] = {grads[s][0], grads[s][1], grads[s][2]};
        optim_adam_step(&a, p, g, 0.1);
        cr_expect_eq(a.step, s + 1);
        for (int i = 0; i < 3; i++) {
            expect_close("param", s * 3 + i, p[i], want[s][i], 1e-6);
            cr_expect_eq(g[i], grads[s][i], "gradients are left unchanged");
        }
    }
    optim_adam_free(&a);
}

Test(optim, adam_matches_torch_three_steps) { run_adam(0.0, want_nowd); }
Test(optim, adam_l2_weight_decay_matches_torch_three_steps) { run_adam(0.01, want_wd); }

Test(optim, adam_moments_after_one_step)
{
    Adam a;
    optim_adam_init(&a, 2, 0.9, 0.999, 1e-8, 0);
    cr_assert_eq(a.v, a.m + 2, "moments share one allocation");
    float p[2] = {0, 0}, g[2] = {2, -1};
    optim_adam_step(&a, p, g, 0.01);
    expect_close("m", 0, a.m[0], 0.2, 1e-7);
    expect_close("m", 1, a.m[1], -0.1, 1e-7);
    expect_close("v", 0, a.v[0], 0.004, 1e-9);
    expect_close("v", 1, a.v[1], 0.001, 1e-9);
    expect_close("p", 0, p[0], -0.01, 1e-8);
    expect_close("p", 1, p[1], 0.01, 1e-8);
    optim_adam_free(&a);
}

/* torch.nn.utils.clip_grad_norm_ on grad [3, -4, 12] with max_norm 6.5 returns 13 and
   leaves [1.49999988, -1.99999988, 5.99999952] (coefficient 6.5 / (13 + 1e-6)). */
Test(optim, clip_scales_when_norm_exceeds_max)
{
    float g[3] = {3, -4, 12};
    double n = optim_clip_grad_norm(g, 3, 6.5);
    cr_expect_eq(n, 13.0);
    const double want[3] = {1.49999988, -1.99999988, 5.99999952};
    for (int i = 0; i < 3; i++)
        expect_close("clipped", i, g[i], want[i], 1e-7);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(g[i], (float)((double)(i == 0 ? 3 : i == 1 ? -4 : 12) *
                                   (float)(6.5 / (13 + 1e-6))));
}

Test(optim, clip_leaves_gradients_at_or_below_max)
{
    float g[3] = {3, -4, 12};
    cr_expect_eq(optim_clip_grad_norm(g, 3, 13.0), 13.0);
    cr_expect(g[0] == 3 && g[1] == -4 && g[2] == 12);
    cr_expect_eq(optim_clip_grad_norm(g, 3, 0), 13.0, "max_norm 0 only measures");
    cr_expect(g[0] == 3 && g[1] == -4 && g[2] == 12);
    float z[2] = {0, 0};
    cr_expect_eq(optim_clip_grad_norm(z, 2, 1.0), 0.0);
}

/* Clipping folded into Adam (train_step's path) gives the weights and moments, bit for
   bit, of clipping the gradients and then stepping, and leaves the gradients as they were. */
Test(optim, adam_with_folded_clipping_equals_clip_then_adam)
{
    enum { N = 1000 };
    static float p1[N], p2[N], g1[N], g2[N];
    for (int i = 0; i < N; i++) {
        p1[i] = p2[i] = (float)sin(i * 0.37);
        g1[i] = g2[i] = (float)(3 * cos(i * 1.3));
    }
    Adam a1, a2;
    optim_adam_init(&a1, N, OPTIM_BETA1, OPTIM_BETA2, OPTIM_EPS, 0);
    optim_adam_init(&a2, N, OPTIM_BETA1, OPTIM_BETA2, OPTIM_EPS, 0);
    for (int s = 0; s < 3; s++) {
        double max = s == 1 ? 1e9 : 1.0; /* step 2 does not clip */
        float keep[N];
        for (int i = 0; i < N; i++)
            keep[i] = g2[i];
        double n1 = optim_clip_grad_norm(g1, N, max);
        optim_adam_step(&a1, p1, g1, 1e-2);
        double n2 = optim_grad_norm(g2, N);
        cr_expect_eq(n1, n2);
        optim_adam_step_scaled(&a2, p2, g2, optim_clip_coef(n2, max), 1e-2);
        for (int i = 0; i < N; i++) {
            cr_assert_eq(p1[i], p2[i], "step %d: param %d: %.9g vs %.9g", s, i, p1[i], p2[i]);
            cr_assert_eq(a1.m[i], a2.m[i], "step %d: m %d", s, i);
            cr_assert_eq(a1.v[i], a2.v[i], "step %d: v %d", s, i);
            cr_assert_eq(g2[i], keep[i], "step %d: the gradient %d changed", s, i);
            g1[i] = g2[i] = (float)(2 * cos(i * 0.7 + s));
        }
    }
    cr_expect_eq(optim_clip_coef(13.0, 13.0), 1.0f);
    cr_expect_eq(optim_clip_coef(13.0, 0), 1.0f);
    cr_expect_eq(optim_clip_coef(13.0, 6.5), (float)(6.5 / (13 + 1e-6)));
    optim_adam_free(&a1);
    optim_adam_free(&a2);
}

Test(optim, constant_schedule)
{
    Sched s = optim_sched_make(SCHED_CONSTANT, 0.001);
    cr_expect_eq(optim_sched_lr(&s, 1), 0.001);
    cr_expect_eq(optim_sched_lr(&s, 100000), 0.001);
    cr_expect(!optim_sched_observe(&s, 1, 1.0));
    cr_expect_eq(optim_sched_lr(&s, 7), 0.001);
}

Test(optim, warmup_decay_schedule_exact_rates)
{
    Sched s = optim_sched_make(SCHED_WARMUP_DECAY, 0.002);
    s.warmup = 100;
    cr_expect_eq(optim_sched_lr(&s, 1), 0.002 * 1 / 100.0);
    cr_expect_eq(optim_sched_lr(&s, 50), 0.002 * 50 / 100.0);
    cr_expect_eq(optim_sched_lr(&s, 100), 0.002);
    cr_expect_eq(optim_sched_lr(&s, 400), 0.001);
    cr_expect_eq(optim_sched_lr(&s, 10000), 0.002 * 0.1);
    expect_close("lr", 200, optim_sched_lr(&s, 200), 0.002 / sqrt(2.0), 1e-15);
    s.warmup = 0;
    cr_expect_eq(optim_sched_lr(&s, 1), 0.002);
    cr_expect_eq(optim_sched_lr(&s, 5000), 0.002);
}

Test(optim, plateau_halves_on_no_improvement_down_to_floor)
{
    /* patience 1 step: every validation without improvement halves the rate */
    Sched s = optim_sched_make(SCHED_PLATEAU, 0.008);
    s.min_lr = 0.0015;
    cr_expect(!optim_sched_observe(&s, 1, 10.0)); /* first metric: best */
    cr_expect_eq(optim_sched_lr(&s, 1), 0.008);
    cr_expect(!optim_sched_observe(&s, 2, 12.0)); /* improved */
    cr_expect_eq(optim_sched_lr(&s, 2), 0.008);
    cr_expect(optim_sched_observe(&s, 3, 12.0)); /* equal: not an improvement */
    cr_expect_eq(optim_sched_lr(&s, 3), 0.004);
    cr_expect(optim_sched_observe(&s, 4, 11.0));
    cr_expect_eq(optim_sched_lr(&s, 4), 0.002);
    cr_expect(optim_sched_observe(&s, 5, 11.5)); /* floor */
    cr_expect_eq(optim_sched_lr(&s, 5), 0.0015);
    cr_expect(!optim_sched_observe(&s, 6, 11.0)); /* at the floor: no reduction */
    cr_expect_eq(optim_sched_lr(&s, 6), 0.0015);
    cr_expect(!optim_sched_observe(&s, 7, 13.0));
    cr_expect_eq(s.best, 13.0);
}

/* Patience counts steps since the last improvement or reduction, whatever the number
   of validations in between. */
Test(optim, plateau_patience_in_steps_and_lower_is_better)
{
    Sched s = optim_sched_make(SCHED_PLATEAU, 1.0);
    s.patience = 100;
    s.higher_better = false;
    cr_expect(!optim_sched_observe(&s, 10, 5.0));
    cr_expect(!optim_sched_observe(&s, 20, 4.0)); /* lower: improved at step 20 */
    for (long step = 25; step < 120; step += 5)
        cr_expect(!optim_sched_observe(&s, step, 4.5), "step %ld", step); /* 99 steps at most */
    cr_expect_eq(optim_sched_lr(&s, 1), 1.0);
    cr_expect(optim_sched_observe(&s, 120, 4.2)); /* 100 steps without improvement: reduce */
    cr_expect_eq(optim_sched_lr(&s, 1), 0.5);
    cr_expect(!optim_sched_observe(&s, 121, 4.1)); /* count restarted at step 120 */
    cr_expect(!optim_sched_observe(&s, 219, 4.1));
    cr_expect(optim_sched_observe(&s, 220, 4.1));
    cr_expect_eq(optim_sched_lr(&s, 1), 0.25);
    cr_expect_eq(s.since, 220);
}

/* An improvement must beat the best by more than the threshold. */
Test(optim, plateau_threshold)
{
    Sched s = optim_sched_make(SCHED_PLATEAU, 1.0);
    s.patience = 10;
    s.threshold = 0.5;
    cr_expect(!optim_sched_observe(&s, 10, 20.0));
    cr_expect(!optim_sched_observe(&s, 15, 20.5)); /* +0.5: not more than the threshold */
    cr_expect_eq(s.best, 20.0);
    cr_expect_eq(s.since, 10);
    cr_expect(optim_sched_observe(&s, 20, 20.4)); /* 10 steps since step 10 */
    cr_expect_eq(optim_sched_lr(&s, 1), 0.5);
    cr_expect(!optim_sched_observe(&s, 25, 20.51)); /* improved */
    cr_expect_eq(s.best, 20.51);
    cr_expect_eq(s.since, 25);
}

Test(optim, schedule_names)
{
    SchedKind k;
    cr_expect_eq(optim_sched_parse("warmup-decay", &k), 0);
    cr_expect_eq(k, SCHED_WARMUP_DECAY);
    cr_expect_eq(optim_sched_parse("plateau", &k), 0);
    cr_expect_eq(k, SCHED_PLATEAU);
    cr_expect_eq(optim_sched_parse("constant", &k), 0);
    cr_expect_eq(k, SCHED_CONSTANT);
    cr_expect_eq(optim_sched_parse("cosine", &k), -1);
    cr_expect_str_eq(optim_sched_name(SCHED_WARMUP_DECAY), "warmup-decay");
}

/* warmup-cosine: linear warmup, then a half cosine over the budget's share done; without
   a budget, constant after the warmup. */
Test(optim, warmup_cosine_follows_the_share_of_the_budget)
{
    Sched s = optim_sched_make(SCHED_WARMUP_COSINE, 1e-3);
    s.warmup = 4;
    cr_expect_float_eq(optim_sched_lr_at(&s, 1, 0.0), 2.5e-4, 1e-15);
    cr_expect_float_eq(optim_sched_lr_at(&s, 2, 0.1), 5e-4 * 0.5 * (1 + cos(M_PI * 0.1)), 1e-15);
    cr_expect_float_eq(optim_sched_lr_at(&s, 10, 0.5), 5e-4, 1e-15);
    cr_expect_float_eq(optim_sched_lr_at(&s, 10, 0.25), 1e-3 * 0.5 * (1 + sqrt(0.5)), 1e-15);
    cr_expect_eq(optim_sched_lr_at(&s, 10, 1.0), 0.0);
    cr_expect_eq(optim_sched_lr_at(&s, 10, 1.7), 0.0, "past the budget it stays at 0");
    cr_expect_eq(optim_sched_lr_at(&s, 10, -1), 1e-3, "no budget: constant after the warmup");
    cr_expect_eq(optim_sched_lr(&s, 3), 7.5e-4);
    SchedKind k;
    cr_expect_eq(optim_sched_parse("warmup-cosine", &k), 0);
    cr_expect_eq(k, SCHED_WARMUP_COSINE);
    cr_expect_str_eq(optim_sched_name(SCHED_WARMUP_COSINE), "warmup-cosine");
}
