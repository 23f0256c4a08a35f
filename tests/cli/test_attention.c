/* s2s train with each attention variant and bridge: the loss falls on the sample
   corpus, the model file records the variant, `s2s info` shows it, and `s2s translate`
   uses it with no flags. Option combinations that make no sense fail before training. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

#define SMALL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
              "--deep-out", "16", "--threads", "1", "--quiet", "--steps", "40", "--valid-every", "0", \
              "--lr-schedule", "constant", "--lr", "0.005"

/* First and last (step 40) losses of a training log. */
static void first_last_loss(const char *log_path, double *first, double *last)
{
    char *log = slurp(log_path, NULL);
    cr_assert_not_null(log, "%s", log_path);
    const char *p = strstr(log, "\"event\": \"step\"");
    cr_assert_not_null(p, "no step line in %s", log_path);
    cr_assert_eq(sscanf(strstr(p, "\"loss\": "), "\"loss\": %lf", first), 1);
    const char *q = strstr(log, "\"step\": 40,");
    cr_assert_not_null(q, "no step 40 in %s", log_path);
    const char *l = strstr(q, "\"loss\": ");
    cr_assert_not_null(l);
    cr_assert_eq(sscanf(l, "\"loss\": %lf", last), 1);
    free(log);
}

typedef struct Variant {
    const char *name;
    const char *args[12];
    const char *info[4]; /* lines `s2s info` must print */
} Variant;

static const Variant variants[] = {
    {"luong-dot", {"--attention", "luong-dot"}, {"  attention: luong-dot\n"}},
    {"luong-general", {"--attention", "luong-general", "--cell", "lstm"}, {"  attention: luong-general\n", "  cell: lstm\n"}},
    {"luong-concat", {"--attention", "luong-concat"}, {"  attention: luong-concat\n"}},
    {"scaled-dot", {"--attention", "scaled-dot"}, {"  attention: scaled-dot\n"}},
    {"multihead", {"--attention", "multihead", "--heads", "4"}, {"  attention: multihead\n", "  heads: 4\n"}},
    {"local-m", {"--attention", "luong-general", "--local", "m", "--window", "2"},
     {"  local: m\n", "  window: 2\n"}},
    {"local-p", {"--attention", "luong-general", "--local", "p", "--cell", "lstm"},
     {"  local: p\n", "  window: 10\n"}},
    {"input-feed", {"--attention", "luong-general", "--input-feed"}, {"  input_feed: true\n"}},
    {"multihead-local-p-feed", {"--attention", "multihead", "--heads", "2", "--local", "p", "--window", "3", "--input-feed"},
     {"  heads: 2\n", "  local: p\n", "  window: 3\n", "  input_feed: true\n"}},
    {"bridge-zero", {"--bridge", "zero", "--cell", "lstm"}, {"  bridge: zero\n"}},
    {"bridge-attn-pool", {"--bridge", "attn-pool", "--attention", "scaled-dot"}, {"  bridge: attn-pool\n"}},
};

static void train_variant(const char *data, const char *dir, const Variant *v)
{
    char *model = strf("%s/%s.s2s", dir, v->name);
    const char *args[40] = {"train", data, "-o", model, SMALL};
    size_t n = 0;
    while (args[n])
        n++;
    for (size_t i = 0; v->args[i]; i++)
        args[n++] = v->args[i];
    RunResult r = run_s2s(NULL, args);
    cr_assert_eq(r.status, 0, "%s: %s", v->name, r.err);
    run_free(&r);

    char *logp = strf("%s.log.jsonl", model);
    double first = 0, last = 0;
    first_last_loss(logp, &first, &last);
    cr_expect(first > 5.0 && last < first - 1.0, "%s: loss %g at step 1, %g at step 40", v->name, first, last);

    char *last_model = strf("%s.last", model);
    r = RUN_S2S(NULL, "info", last_model);
    cr_assert_eq(r.status, 0, "%s: %s", v->name, r.err);
    for (size_t i = 0; i < 4 && v->info[i]; i++)
        cr_expect(strstr(r.out, v->info[i]) != NULL, "%s: info lacks '%s':\n%s", v->name, v->info[i], r.out);
    run_free(&r);

    r = RUN_S2S(NULL, "translate", last_model, "I am cold.", "Who are you?", "--threads", "1");
    cr_assert_eq(r.status, 0, "%s: %s", v->name, r.err);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_expect_eq(lines, 2, "%s: %s", v->name, r.out);
    run_free(&r);
    free(last_model);
    free(logp);
    free(model);
}

Test(attention, every_variant_trains_and_translates)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        train_variant(data, dir, &variants[i]);
    rm_rf(dir);
    free(dir);
    free(data);
}

Test(attention, senseless_combinations_exit_2_before_training)
{
    static const struct { const char *args[10]; const char *msg; } cases[] = {
        {{"train", "d", "-o", "m", "--attention", "luong"},
         "s2s: train: option --attention must be bahdanau, luong-dot, luong-general, luong-concat, scaled-dot or "
         "multihead, got 'luong'\n"},
        {{"train", "d", "-o", "m", "--window", "5"}, "s2s: train: --window needs --local m or --local p\n"},
        {{"train", "d", "-o", "m", "--attention", "luong-dot", "--window", "5"},
         "s2s: train: --window needs --local m or --local p\n"},
        {{"train", "d", "-o", "m", "--input-feed"},
         "s2s: train: --input-feed needs a Luong-path attention (luong-dot, luong-general, luong-concat, "
         "scaled-dot or multihead), not bahdanau\n"},
        {{"train", "d", "-o", "m", "--local", "m"},
         "s2s: train: --local needs a Luong-path attention (luong-dot, luong-general, luong-concat, scaled-dot "
         "or multihead), not bahdanau\n"},
        {{"train", "d", "-o", "m", "--local", "x", "--attention", "luong-dot"},
         "s2s: train: option --local must be m or p, got 'x'\n"},
        {{"train", "d", "-o", "m", "--attention", "bahdanau", "--heads", "2"},
         "s2s: train: --heads needs --attention multihead\n"},
        {{"train", "d", "-o", "m", "--attention", "multihead", "--heads", "3"},
         "s2s: train: --heads 3 does not divide --attn-size 256\n"},
        {{"train", "d", "-o", "m", "--bridge", "mean"},
         "s2s: train: option --bridge must be linear, zero or attn-pool, got 'mean'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RunResult r = run_s2s(NULL, cases[i].args);
        cr_expect_eq(r.status, 2, "case %zu: status %d (%s)", i, r.status, r.err);
        cr_expect_str_eq(r.err, cases[i].msg, "case %zu", i);
        run_free(&r);
    }
}
