/* translate/eval --precision: the decoder step's weights in int8 (the default), bf16 or f32. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

Test(precision_cli, int8_is_the_default_and_bf16_and_f32_translate)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *m = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", m, "--steps", "60", "--model-dim", "32", "--ff", "64",
                          "--layers", "1", "--heads", "2", "--threads", "1", "--quiet", "--valid-every", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    RunResult plain = RUN_S2S(NULL, "translate", m, "I have a cat.", "We are late.", "--threads", "1");
    RunResult int8 = RUN_S2S(NULL, "translate", m, "I have a cat.", "We are late.", "--threads", "2", "--precision",
                             "int8");
    cr_assert_eq(plain.status, 0, "%s", plain.err);
    cr_expect_str_eq(int8.out, plain.out, "the default is int8, the same on any number of threads");
    for (int p = 0; p < 2; p++) {
        const char *prec = p ? "f32" : "bf16";
        RunResult q = RUN_S2S(NULL, "translate", m, "I have a cat.", "We are late.", "--threads", "1",
                              "--precision", prec);
        cr_expect_eq(q.status, 0, "%s: %s", prec, q.err);
        int lines = 0;
        for (const char *s = q.out; *s; s++)
            lines += *s == '\n';
        cr_expect_eq(lines, 2, "%s: %s", prec, q.out);
        run_free(&q);
    }
    run_free(&int8);
    char *test = strf("%s/test.tsv", data);
    r = RUN_S2S(NULL, "eval", m, test, "--threads", "1", "--precision", "int8", "--beam", "1");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "BLEU = ", 7) == 0, "%s", r.out);
    RunResult d = RUN_S2S(NULL, "eval", m, test, "--threads", "1", "--beam", "1");
    /* the same scores and counts; the last line's decoding time may differ */
    char *dt = strstr(d.out, "decoding: "), *rt = strstr(r.out, "decoding: ");
    cr_assert(dt && rt, "%s", d.out);
    cr_expect_eq(dt - d.out, rt - r.out, "eval's default is int8 too:\n%s\n%s", d.out, r.out);
    cr_expect(strncmp(d.out, r.out, (size_t)(rt - r.out)) == 0, "eval's default is int8 too:\n%s\n%s", d.out,
              r.out);
    run_free(&d);
    run_free(&r);
    r = RUN_S2S(NULL, "translate", m, "x", "--precision", "fp8");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "s2s: translate: option --precision must be int8, bf16 or f32, got 'fp8'\n");
    run_free(&r);
    run_free(&plain);
    free(test);
    free(data);
    free(m);
    rm_rf(dir);
    free(dir);
}
