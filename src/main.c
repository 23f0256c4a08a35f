/* s2s: the subcommand table. */
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "commands.h"
#include "nn/linalg.h"
#include "s2s.h"

#define S2S_VERSION S2S_VERSION_STRING

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    /* commands: one line each, in the order `s2s --help` lists them */
    {"prepare", cmd_prepare, "split a corpus into train/valid/test and build vocabularies"},
    {"train", cmd_train, "train an encoder-decoder with attention"},
    {"translate", cmd_translate, "translate sentences with a model file"},
    {"eval", cmd_eval, "translate a TSV file's sources and score them (BLEU, chrF)"},
    {"serve", cmd_serve, "serve models over HTTP: LibreTranslate's API and a web page"},
    {"score", cmd_score, "BLEU and chrF of a hypothesis file against reference files"},
    {"average", cmd_average, "average the weights of model files of one configuration"},
    {"export", cmd_export, "write a model in CTranslate2's format"},
    {"info", cmd_info, "show a model file's configuration, sizes and training summary"},
    {"tokenize", cmd_tokenize, "tokenize or detokenize text on stdin, line by line"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: s2s COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; commands[i].name; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n's2s COMMAND --help' describes one command.\n");
}

/* Sets the environment variable var to value unless it is set: whether it did. */
static bool set_unless_set(const char *var, const char *value)
{
    return !getenv(var) && setenv(var, value, 1) == 0;
}

/* How many BLAS threads an address-space limit (ulimit -v) holds, for a command that
   multiplies matrices: each thread that multiplies, the calling one included, maps a
   128 MiB buffer (and OpenBLAS retries forever when the mapping is refused, so the
   process would hang), on top of about 64 MiB the process needs with a small model.
   0: no limit. A limit that holds no thread is refused in one line, and the process
   ends without waiting for the OpenBLAS threads already started. */
static int blas_threads_fit(const char *cmd)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    /* one malloc arena: each thread's own arena would reserve 64 MiB of address space */
    mallopt(M_ARENA_MAX, 1);
    const unsigned long long mib = 1ULL << 20, limit = (unsigned long long)rl.rlim_cur;
    unsigned long long fit = limit > 64 * mib ? (limit - 64 * mib) / (128 * mib) : 0;
    if (fit == 0) {
        fprintf(stderr,
                "s2s: the address-space limit (ulimit -v %llu) is too small for s2s %s: its matrix products "
                "need at least %llu kB (64 MiB and 128 MiB per thread)\n",
                limit / 1024, cmd, 192 * mib / 1024);
        _exit(1);
    }
    return fit > 1024 ? 1024 : (int)fit;
}

/* Whether a command computes matrix products: the others need no BLAS threads. */
static bool uses_blas(const char *cmd)
{
    return strcmp(cmd, "train") == 0 || strcmp(cmd, "translate") == 0 || strcmp(cmd, "eval") == 0 ||
           strcmp(cmd, "serve") == 0;
}

/* OpenBLAS reads its settings only when the library loads, so s2s runs itself again
   once, before anything else, with those it needs unless the user set them (nothing is
   lost if exec fails):
   - OPENBLAS_NUM_THREADS=1 for the commands that do no matrix products (and the help):
     OpenBLAS starts a worker per core when it loads, each mapping a 128 MiB buffer, and
     under an address-space limit a worker whose mapping is refused retries forever
     while the process waits for it at exit; with none they run in about 50 MB.
   - OPENBLAS_NUM_THREADS=N for the commands that do, when a limit holds fewer threads
     than there are cores (blas_threads_fit); nn_blas_limit then caps the thread
     counts of nn_set_threads at N, which takes the buffers before the command's model
     and batches.
   - OPENBLAS_THREAD_TIMEOUT=4 for `s2s train`: OpenBLAS's workers spin (calling
     sched_yield) for 2^28 cycles after each product before they sleep, competing with
     the worker pool's threads (nn/parallel.h) for the same cores; 2^4 gives 14 % more
     Transformer training tokens/s (bench/README.md). */
static void blas_settings(int argc, char **argv)
{
    const char *cmd = argc >= 2 ? argv[1] : "";
    bool again = false;
    int fit = 0;
    if (!uses_blas(cmd)) {
        again |= set_unless_set("OPENBLAS_NUM_THREADS", "1");
    } else if ((fit = blas_threads_fit(cmd)) > 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > 0 && fit > cores)
            fit = (int)cores;
        char n[16];
        snprintf(n, sizeof n, "%d", fit);
        if (fit < cores)
            again |= set_unless_set("OPENBLAS_NUM_THREADS", n);
    }
    if (strcmp(cmd, "train") == 0)
        again |= set_unless_set("OPENBLAS_THREAD_TIMEOUT", "4");
    if (again)
        execv("/proc/self/exe", argv);
    if (fit > 0)
        nn_blas_limit(fit);
}

int main(int argc, char **argv)
{
    /* A file-size limit (ulimit -f) then makes a write fail with EFBIG, which every
       writer reports as it reports a full disk (one line naming the file, the previous
       file kept, no temporary left), instead of killing the process mid-write. */
    signal(SIGXFSZ, SIG_IGN);
    /* A mapped file truncated by someone else ends the command with one line (base/file.h). */
    file_map_watch_enable();
    blas_settings(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, OPT_DUMP) == 0) {
        /* for programs (base/opt.h): the version and the commands, a line each */
        printf("s2s-commands\t1\nversion\t%s\n", S2S_VERSION);
        for (size_t i = 0; commands[i].name; i++)
            printf("command\t%s\t%s\n", commands[i].name, commands[i].summary);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("s2s %s\n", S2S_VERSION);
        return 0;
    }
    for (size_t i = 0; commands[i].name; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    die_usage("unknown command '%s' (see 's2s --help')", name);
}
