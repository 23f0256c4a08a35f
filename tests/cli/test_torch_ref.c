/* End-to-end: the PyTorch reference (scripts/torch_ref.py) checks itself.
   Skipped when the interpreter named by $PYTHON (default /usr/bin/python3) has no torch. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static void skip_without_torch(void)
{
    char *cmd = strf("'%s' -c 'import torch' >/dev/null 2>&1", python_bin());
    int rc = system(cmd);
    free(cmd);
    if (rc != 0)
        cr_skip_test("%s cannot import torch", python_bin());
}

/* Runs a shell command, returns its exit status and its stdout+stderr in *out. */
static int run_capture(const char *cmd, char **out)
{
    FILE *fp = popen(cmd, "r");
    cr_assert(fp != NULL, "popen failed: %s", cmd);
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += got;
        if (cap - n - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int st = pclose(fp);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

Test(torch_ref, selftest_passes)
{
    skip_without_torch();
    char *cmd = strf("'%s' scripts/torch_ref.py selftest 2>&1", python_bin());
    char *out = NULL;
    int rc = run_capture(cmd, &out);
    cr_assert_eq(rc, 0, "selftest failed:\n%s", out);
    cr_assert(strncmp(out, "selftest: ok (", 14) == 0 && strstr(out, "FAIL") == NULL, "output:\n%s", out);
    free(out);
    free(cmd);
}

Test(torch_ref, parity_names_a_missing_model)
{
    skip_without_torch();
    char *dir = tmpdir_new();
    char cwd[4096];
    cr_assert(getcwd(cwd, sizeof cwd) != NULL);
    char *cmd = strf("cd '%s' && '%s' '%s/scripts/torch_ref.py' parity nope.safetensors b.safetensors "
                     "out.safetensors 2>&1", dir, python_bin(), cwd);
    char *out = NULL;
    int rc = run_capture(cmd, &out);
    cr_assert_eq(rc, 1, "output:\n%s", out);
    cr_assert_str_eq(out, "torch_ref.py: nope.safetensors: No such file or directory\n");
    cr_assert_eq(dir_count(dir), 0, "nothing may be written");
    free(out);
    free(cmd);
    rm_rf(dir);
    free(dir);
}

/* torch_ref.py train takes the direction of the prepared data (and refuses a --config
   that says another). */
Test(torch_ref, train_takes_the_direction_of_the_data)
{
    skip_without_torch();
    char *dir = tmpdir_new();
    char *data = strf("%s/fe", dir), *model = strf("%s/fe.s2s", dir);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data, "--direction", "fr-en");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    const char *tiny = "{\"emb\": 8, \"hidden\": 8, \"dec_hidden\": 8, \"attn\": 8, \"deep_out\": 8}";
    char *cmd = strf("'%s' scripts/torch_ref.py train '%s' --steps 1 --s2s ./s2s -o '%s' --config '%s' 2>&1",
                     python_bin(), data, model, tiny);
    char *out = NULL;
    int rc = run_capture(cmd, &out);
    cr_assert_eq(rc, 0, "output:\n%s", out);
    free(out);
    r = RUN_S2S(NULL, "info", model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\ndirection: fr-en (fr to en)\n"), "%s", r.out);
    run_free(&r);
    free(cmd);
    cmd = strf("'%s' scripts/torch_ref.py train '%s' --steps 1 --s2s ./s2s -o '%s.2' --config '{\"direction\": \"en-fr\"}' 2>&1",
               python_bin(), data, model);
    rc = run_capture(cmd, &out);
    cr_expect_eq(rc, 1, "output:\n%s", out);
    char *want = strf("torch_ref.py: --config: 'direction' is \"en-fr\", but %s was prepared with \"fr-en\"\n", data);
    cr_expect_str_eq(out, want);
    free(want);
    free(out);
    free(cmd);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}
