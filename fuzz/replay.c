/* Runs one fuzz target's checks on fixed inputs, without libFuzzer: linked with a
   target fuzz/NAME.c by any compiler, it is how the committed seeds of every target are
   replayed by `make test` (and under ASan and UBSan by `make asan`), so that what fuzzing
   found and kept keeps passing.
   Usage: replay PATH...   (a directory stands for its files, in name order)
   Prints "replay: N inputs" and exits 0 when every input passed; a failed check aborts
   after naming the input; an unreadable path is one line and exit 2. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "fuzz.h"

/* The input being run, named by the abort handler. */
static char current[4096];

static void on_abort(int sig)
{
    static const char pre[] = "replay: failed on ";
    ssize_t w = write(STDERR_FILENO, pre, sizeof pre - 1);
    w = write(STDERR_FILENO, current, strlen(current));
    w = write(STDERR_FILENO, "\n", 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path)
{
    char *text;
    size_t len;
    Err e;
    if (file_read_all(path, &text, &len, &e) != 0) {
        fprintf(stderr, "replay: %s\n", e.msg);
        exit(2);
    }
    snprintf(current, sizeof current, "%s", path);
    /* An exact-size copy, so that a read past the end is caught. */
    uint8_t *data = xmalloc(len ? len : 1);
    if (len)
        memcpy(data, text, len);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    free(text);
    return 1;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot read %s: no such file or directory\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot read the directory %s\n", path);
        exit(2);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap)
            XRENEW(names, cap = cap ? 2 * cap : 64);
        names[n++] = xstrdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        Buf p = {0};
        buf_printf(&p, "%s/%s", path, names[i]);
        count += run_file(p.data);
        buf_free(&p);
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: replay PATH...\n");
        return 2;
    }
    signal(SIGABRT, on_abort);
    int count = 0;
    for (int i = 1; i < argc; i++)
        count += run_path(argv[i]);
    printf("replay: %d inputs\n", count);
    return 0;
}
