#include "helpers.h"

#include "base/crc32.h"
#include "nn/bf16.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    va_end(ap);
    return s;
}

char *file_in(const char *dir, const char *name) { return strf("%s/%s", dir, name); }

char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += got;
        if (cap - n - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    fclose(fp);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void write_file(const char *path, const char *data)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        abort();
    fwrite(data, 1, strlen(data), fp);
    fclose(fp);
}

void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fwrite(data, 1, n, fp), n);
    cr_assert_eq(fclose(fp), 0);
}

void expect_file(const char *dir, const char *name, const char *want)
{
    char *path = file_in(dir, name);
    char *got = slurp(path, NULL);
    cr_assert_not_null(got, "%s missing", path);
    cr_assert_str_eq(got, want, "%s:\n%s", name, got);
    free(got);
    free(path);
}

int count_newlines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int dir_count(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

char *tmpdir_new(void)
{
    char *t = strdup("/tmp/s2s-test-XXXXXX");
    if (!mkdtemp(t))
        abort();
    return t;
}

void rm_rf(const char *path)
{
    char *cmd = strf("rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", path);
    free(cmd);
}

void assert_rel(double got, double want, double rel)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "got %.17g, want %.17g", got, want);
}

const char *fra_corpus(void)
{
    static const char *p = "../shared/data/fra.txt";
    return file_exists(p) ? p : NULL;
}

RunResult run_prog(const char *stdin_data, const char *const *argv)
{
    RunResult r = {0};
    char *dir = tmpdir_new();
    char *in = strf("%s/in", dir), *out = strf("%s/out", dir), *err = strf("%s/err", dir);
    write_file(in, stdin_data ? stdin_data : "");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(out, &r.out_len);
    r.err = slurp(err, &r.err_len);
    rm_rf(dir);
    free(in);
    free(out);
    free(err);
    free(dir);
    return r;
}

const char *s2s_bin(void)
{
    const char *p = getenv("S2S");
    return p && *p ? p : "./s2s";
}

const char *python_bin(void)
{
    const char *p = getenv("PYTHON");
    return p && *p ? p : "/usr/bin/python3";
}

RunResult run_s2s(const char *stdin_data, const char *const *args)
{
    const char *bin = s2s_bin();
    size_t n = 0;
    while (args[n])
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = bin;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = args[i];
    RunResult r = run_prog(stdin_data, argv);
    free(argv);
    return r;
}

void run_free(RunResult *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

void expect_run(RunResult *r, int status, const char *out, const char *err)
{
    cr_assert_eq(r->status, status, "status %d, not %d; stderr: %s", r->status, status, r->err);
    if (err)
        cr_assert_str_eq(r->err, err);
    if (out)
        cr_assert_str_eq(r->out, out);
    run_free(r);
}

void expect_ok(RunResult *r, const char *out) { expect_run(r, 0, out, ""); }

void expect_fail(RunResult *r, int status, const char *err) { expect_run(r, status, "", err); }

void expect_success(const RunResult *r, const char *what)
{
    cr_assert_eq(r->status, 0, "%s: status %d\nstdout: %s\nstderr: %s", what, r->status, r->out, r->err);
}

char *sample_prepared_dir(void)
{
    return sample_prepared_dir_with(NULL);
}

char *sample_prepared_dir_with(const char *bpe)
{
    char *dir = tmpdir_new();
    char *d = strf("%s/data", dir);
    RunResult r = bpe ? RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", d, "--bpe", bpe, "--joint")
                      : RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", d);
    if (r.status != 0) {
        fprintf(stderr, "s2s prepare data/sample.tsv failed: %s", r.err);
        abort();
    }
    run_free(&r);
    free(d);
    return dir;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snapshot_walk(const char *root, const char *rel, char ***lines, size_t *n)
{
    char *path = *rel ? strf("%s/%s", root, rel) : strf("%s", root);
    DIR *d = opendir(path);
    if (!d) {
        free(path);
        return;
    }
    for (struct dirent *de; (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *r = *rel ? strf("%s/%s", rel, de->d_name) : strf("%s", de->d_name);
        char *full = strf("%s/%s", root, r);
        struct stat st;
        char *line;
        if (lstat(full, &st) != 0) {
            line = strf("%s ?", r);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t k = readlink(full, target, sizeof target - 1);
            target[k > 0 ? k : 0] = '\0';
            line = strf("%s -> %s", r, target);
        } else if (S_ISDIR(st.st_mode)) {
            line = strf("%s/", r);
            snapshot_walk(root, r, lines, n);
        } else {
            size_t len = 0;
            char *data = slurp(full, &len);
            line = strf("%s %zu %08x", r, len, data ? crc32_update(0, data, len) : 0u);
            free(data);
        }
        *lines = realloc(*lines, (*n + 1) * sizeof **lines);
        (*lines)[(*n)++] = line;
        free(full);
        free(r);
    }
    closedir(d);
    free(path);
}

char *dir_snapshot(const char *dir)
{
    char **lines = NULL;
    size_t n = 0, total = 1;
    snapshot_walk(dir, "", &lines, &n);
    qsort(lines, n, sizeof *lines, cmp_str);
    for (size_t i = 0; i < n; i++)
        total += strlen(lines[i]) + 1;
    char *out = malloc(total), *p = out;
    *p = '\0';
    for (size_t i = 0; i < n; i++) {
        p += sprintf(p, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    return out;
}

int spawn_prog(const char *const *argv, const char *out_path)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return (int)pid;
}

int spawn_s2s(const char *const *args, const char *out_path)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = s2s_bin();
    for (int i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return spawn_prog(argv, out_path);
}

int wait_exit(int pid)
{
    int st;
    if (waitpid((pid_t)pid, &st, 0) != (pid_t)pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int count_in_file(const char *path, const char *needle)
{
    char *s = slurp(path, NULL);
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p++)
        n++;
    free(s);
    return n;
}

bool bf16_on_or_refused(void)
{
    Err e = {0};
    if (!nn_bf16_native()) {
        cr_expect_eq(nn_set_precision(PREC_BF16, &e), -1);
        cr_expect_str_eq(e.msg, "bf16 products need a CPU with bf16 instructions (AVX512-BF16 or AMX); this one has "
                                "none");
        cr_expect_eq(nn_precision(), PREC_F32);
        return false;
    }
    cr_assert_eq(nn_set_precision(PREC_BF16, &e), 0, "%s", e.msg);
    cr_assert_eq(nn_precision(), PREC_BF16);
    return true;
}

void add_words(const char **argv, int *n, int max, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        cr_assert_lt(*n, max - 1);
        argv[(*n)++] = strdup(w);
    }
    free(copy);
}

char *readme_block(const char *heading, const char *lang)
{
    char *readme = slurp("README.md", NULL);
    cr_assert(readme);
    const char *h = strstr(readme, heading);
    cr_assert(h, "README.md has no '%s'", heading);
    char *fence = strf("```%s\n", lang);
    const char *start = strstr(h, fence);
    cr_assert(start, "no %s block after '%s'", lang, heading);
    start += strlen(fence);
    const char *end = strstr(start, "\n```\n");
    cr_assert(end);
    char *block = strndup(start, (size_t)(end - start) + 1);
    free(fence);
    free(readme);
    return block;
}

char *pc_config(const PcTree *t, const char *args)
{
    const char *argv[24] = {"/usr/bin/env"};
    int n = 1;
    for (int i = 0; i < t->n_env; i++)
        argv[n++] = t->env[i];
    argv[n++] = "pkg-config";
    int first = n;
    add_words(argv, &n, 24, args);
    argv[n++] = "s2s";
    argv[n] = NULL;
    RunResult r = run_prog(NULL, argv);
    expect_success(&r, "pkg-config");
    char *out = strdup(r.out);
    run_free(&r);
    for (int k = first; k < n - 1; k++) /* add_words' copies, not "s2s" */
        free((char *)argv[k]);
    return out;
}

void pc_compile(const PcTree *t, const char *extra, const char *src, const char *exe, bool static_lib)
{
    const char *argv[64] = {"/usr/bin/env", "cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, src};
    int n = 9;
    if (extra)
        add_words(argv, &n, 64, extra);
    char *cflags = pc_config(t, "--cflags"), *libs;
    add_words(argv, &n, 64, cflags);
    if (static_lib) {
        argv[n++] = strf("%s/libs2s.a", t->libdir);
        libs = pc_config(t, "--static --libs");
        char *p = strstr(libs, "-ls2s ");
        if (p)
            memset(p, ' ', 5);
    } else {
        libs = pc_config(t, "--libs");
    }
    add_words(argv, &n, 64, libs);
    argv[n] = NULL;
    RunResult r = run_prog(NULL, argv);
    expect_success(&r, "cc");
    cr_expect_str_eq(r.err, "", "cc: %s", r.err);
    run_free(&r);
    for (int k = 9; k < n; k++) /* add_words' copies and the static library's path */
        free((char *)argv[k]);
    free(cflags);
    free(libs);
}
