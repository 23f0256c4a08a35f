/* base/safetensors against PyTorch: files written here are read by torch through
   scripts/safetensors_io.py, and files it writes are read here. Skipped (never
   passed) when the interpreter in $PYTHON (default /usr/bin/python3) has no torch. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "base/safetensors.h"
#include "helpers.h"

static char *tmp;

static void setup(void) { tmp = tmpdir_new(); }

static void teardown(void)
{
    rm_rf(tmp);
    free(tmp);
}

TestSuite(safetensors_torch, .init = setup, .fini = teardown);

typedef struct Proc {
    int status;
    char *out, *err;
} Proc;

/* Runs scripts/safetensors_io.py with two or three arguments. Skips the test when
   the interpreter cannot import torch (the script exits 77) or does not run. */
static Proc run_script(const char *a1, const char *a2, const char *a3)
{
    char *out = path_join(tmp, "py.out"), *err = path_join(tmp, "py.err");
    const char *py = python_bin();
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execl(py, py, "scripts/safetensors_io.py", a1, a2, a3, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    Proc p = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(out, NULL),
              slurp(err, NULL)};
    free(out);
    free(err);
    if (p.status == 127)
        cr_skip_test("torch not installed: cannot run %s", py);
    if (p.status == 77) {
        char *nl = strchr(p.err, '\n');
        if (nl)
            *nl = '\0';
        cr_skip_test("%s", p.err);
    }
    return p;
}

static void proc_free(Proc *p)
{
    free(p->out);
    free(p->err);
}

/* The values of scripts/safetensors_io.py selftest_value(). */
static double value_f(int64_t i) { return (double)(i * 37 % 101) * 0.25 - 12.5; }

#define SELFTEST_FORMAT "s2s-selftest-1"
#define SELFTEST_NOTE "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9d\x84\x9e"

static float enc_w[15], dec_b[7], scalar[1];
static uint8_t mask[5];
static int32_t ids[6];
static int64_t step[2];
static double big[3];

static StTensor selftest_tensors[8] = {
    {"enc.w", ST_F32, 2, {3, 5}, enc_w},
    {"dec.b", ST_F32, 1, {7}, dec_b},
    {"scalar", ST_F32, 0, {0}, scalar},
    {"empty", ST_F32, 2, {0, 4}, NULL},
    {"mask", ST_U8, 1, {5}, mask},
    {"ids", ST_I32, 2, {2, 3}, ids},
    {"step", ST_I64, 1, {2}, step},
    {"big", ST_F64, 1, {3}, big},
};

static char *write_selftest_input(void)
{
    for (int i = 0; i < 15; i++)
        enc_w[i] = (float)value_f(i);
    for (int i = 0; i < 7; i++)
        dec_b[i] = (float)value_f(i);
    scalar[0] = (float)value_f(0);
    for (int i = 0; i < 5; i++)
        mask[i] = (uint8_t)(i * 13 % 256);
    for (int i = 0; i < 6; i++)
        ids[i] = i * 7919 - 40000;
    for (int i = 0; i < 2; i++)
        step[i] = (int64_t)(i + 1) * ((int64_t)1 << 40) + i;
    for (int i = 0; i < 3; i++)
        big[i] = value_f(i);
    const char *k[] = {ST_KEY_FORMAT, "note"};
    const char *v[] = {SELFTEST_FORMAT, SELFTEST_NOTE};
    char *path = path_join(tmp, "in.st");
    Err e = {{0}};
    cr_assert_eq(st_write(path, selftest_tensors, 8, k, v, 2, &e), 0, "%s", e.msg);
    return path;
}

Test(safetensors_torch, torch_reads_ours_and_we_read_torchs)
{
    char *in = write_selftest_input();
    char *out = path_join(tmp, "out.st");
    Proc p = run_script("--selftest", in, out);
    cr_assert_eq(p.status, 0, "selftest failed: %s", p.err);
    cr_assert_str_eq(p.out, "selftest ok: 8 tensors checked, 10 written\n");
    cr_assert_str_eq(p.err, "");

    StFile *f = NULL;
    Err e = {{0}};
    cr_assert_eq(st_load(&f, out, SELFTEST_FORMAT, &e), 0, "%s", e.msg);
    cr_assert_eq(st_count(f), 10);
    cr_assert_str_eq(st_meta(f, "note"), SELFTEST_NOTE " (torch)");
    cr_assert_not_null(st_meta(f, "torch"));
    cr_assert_eq(strlen(st_meta(f, ST_KEY_CRC32)), 8, "torch's file carries the checksum");
    size_t hlen = 0;
    char *raw = slurp(out, &hlen);
    uint64_t h = 0;
    for (int k = 7; k >= 0; k--)
        h = h << 8 | (unsigned char)raw[k];
    cr_assert_eq((8 + h) % 8, 0, "data section aligned by the Python writer");
    free(raw);

    /* Floats became 2x+1, integers x+1, all exactly. */
    for (size_t i = 0; i < 8; i++) {
        const StTensor *want = &selftest_tensors[i];
        const StTensor *t = st_expect(f, want->name, want->dtype, want->ndim, want->shape, &e);
        cr_assert_not_null(t, "%s", e.msg);
        int64_t n = st_numel(t);
        for (int64_t j = 0; j < n; j++) {
            switch (t->dtype) {
            case ST_F32:
                cr_assert_eq(((const float *)t->data)[j], ((const float *)want->data)[j] * 2 + 1,
                             "%s[%" PRId64 "]", t->name, j);
                break;
            case ST_F64:
                cr_assert_eq(((const double *)t->data)[j], ((const double *)want->data)[j] * 2 + 1);
                break;
            case ST_U8:
                cr_assert_eq(((const uint8_t *)t->data)[j], (uint8_t)(((const uint8_t *)want->data)[j] + 1));
                break;
            case ST_I32:
                cr_assert_eq(((const int32_t *)t->data)[j], ((const int32_t *)want->data)[j] + 1);
                break;
            case ST_I64:
                cr_assert_eq(((const int64_t *)t->data)[j], ((const int64_t *)want->data)[j] + 1);
                break;
            default:
                cr_assert_fail("unexpected dtype");
            }
        }
    }
    const int64_t s23[] = {2, 3}, s3[] = {3};
    const StTensor *ar = st_expect(f, "py.arange", ST_F32, 2, s23, &e);
    cr_assert_not_null(ar, "%s", e.msg);
    for (int j = 0; j < 6; j++)
        cr_assert_eq(((const float *)ar->data)[j], (float)j);
    const StTensor *f64 = st_expect(f, "py.f64", ST_F64, 1, s3, &e);
    cr_assert_not_null(f64, "%s", e.msg);
    cr_assert_eq(((const double *)f64->data)[0], 0.1);
    cr_assert_eq(((const double *)f64->data)[1], 1e300);
    cr_assert_eq(((const double *)f64->data)[2], -2.5e-300);
    st_close(f);
    proc_free(&p);
    free(out);
    free(in);
}

Test(safetensors_torch, torch_lists_ours_and_refuses_a_corrupted_one)
{
    char *in = write_selftest_input();
    size_t n = 0;
    char *b = slurp(in, &n);
    /* Flip one bit in the last data byte (the U8 tensor "mask", laid out last). */
    b[n - 1] ^= 0x10;
    char *bad = path_join(tmp, "bad.st");
    FILE *fp = fopen(bad, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(b, 1, n, fp), n);
    fclose(fp);
    Proc p = run_script("--dump", bad, NULL);
    cr_assert_eq(p.status, 1, "stdout: %s", p.out);
    char *want = strf("safetensors_io: %s: checksum mismatch: the file is corrupted\n", bad);
    cr_assert_str_eq(p.err, want);
    free(want);
    proc_free(&p);

    StFile *f = NULL;
    Err e;
    cr_assert_eq(st_load(&f, in, SELFTEST_FORMAT, &e), 0, "%s", e.msg);
    p = run_script("--dump", in, NULL);
    cr_assert_eq(p.status, 0, "%s", p.err);
    char *list = strf("meta s2s.format = " SELFTEST_FORMAT "\n"
                      "meta note = " SELFTEST_NOTE "\n"
                      "meta s2s.crc32 = %s\n"
                      "step I64 [2]\n"
                      "big F64 [3]\n"
                      "enc.w F32 [3, 5]\n"
                      "dec.b F32 [7]\n"
                      "scalar F32 []\n"
                      "empty F32 [0, 4]\n"
                      "ids I32 [2, 3]\n"
                      "mask U8 [5]\n",
                      st_meta(f, ST_KEY_CRC32));
    cr_assert_str_eq(p.out, list);
    free(list);
    st_close(f);
    proc_free(&p);
    free(bad);
    free(b);
    free(in);
}
