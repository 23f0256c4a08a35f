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
#include "commands.h"

#define S2S_VERSION "0.1.0"

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
    {"score", cmd_score, "BLEU and chrF of a hypothesis file against reference files"},
    {"average", cmd_average, "average the weights of model files of one configuration"},
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

/* OpenBLAS's worker threads spin (calling sched_yield) for 2^28 cycles after each
   product before they sleep; in training they then compete with the worker pool's
   threads (nn/parallel.h: the optimiser, the softmax rows, dropout, layer norm) for the
   same cores. OpenBLAS reads OPENBLAS_THREAD_TIMEOUT only when the library loads, so
   `s2s train` runs itself again with 2^4 cycles unless the variable is set (14 % more
   Transformer training tokens/s, bench/README.md). Nothing is lost if exec fails. */
static void blas_threads_sleep_soon(char **argv)
{
    if (getenv("OPENBLAS_THREAD_TIMEOUT"))
        return;
    if (setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
}

/* OpenBLAS starts its worker threads when the library loads, each of which maps a
   buffer of 128 MiB and, when an address-space limit (ulimit -v) refuses it, retries
   forever, while the main thread waits for it at exit: a command under such a limit
   would hang after its work. The commands that do no matrix products (and the help)
   run themselves again with OPENBLAS_NUM_THREADS=1, so that no worker starts (they then
   run under a limit of about 50 MB). A value the user set is kept. */
static void blas_threads_none(char **argv)
{
    if (getenv("OPENBLAS_NUM_THREADS"))
        return;
    if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
}

/* The commands that multiply matrices, under an address-space limit (ulimit -v): each
   OpenBLAS thread that multiplies, the calling one included, maps a 128 MiB buffer (and
   retries forever when the mapping is refused, so the process hangs), on top of about
   64 MiB the process needs with a small model. They run themselves again with as many
   BLAS threads as the limit holds (OPENBLAS_NUM_THREADS for the threads OpenBLAS starts
   when it loads, S2S_BLAS_THREADS for nn_set_threads, which also takes the buffers
   before the run's own allocations can fill the limit); a limit that holds none is
   refused in one line, and the process ends without waiting for OpenBLAS's threads. A
   user's OPENBLAS_NUM_THREADS is kept as it is. */
static void blas_threads_fit(char **argv)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    if (getenv("OPENBLAS_NUM_THREADS") || getenv("S2S_BLAS_THREADS")) {
        mallopt(M_ARENA_MAX, 1);
        return;
    }
    /* one malloc arena: each thread's own arena would reserve 64 MiB of address space */
    mallopt(M_ARENA_MAX, 1);
    const unsigned long long mib = 1ULL << 20, limit = (unsigned long long)rl.rlim_cur;
    unsigned long long fit = limit > 64 * mib ? (limit - 64 * mib) / (128 * mib) : 0;
    if (fit == 0) {
        fprintf(stderr,
                "s2s: the address-space limit (ulimit -v %llu) is too small for s2s %s: its matrix products "
                "need at least %llu kB (64 MiB and 128 MiB per thread)\n",
                limit / 1024, argv[1], 192 * mib / 1024);
        _exit(1);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && fit > (unsigned long long)cores)
        fit = (unsigned long long)cores;
    char n[24];
    snprintf(n, sizeof n, "%llu", fit);
    if (setenv("S2S_BLAS_THREADS", n, 1) != 0)
        return;
    if (cores > 0 && fit < (unsigned long long)cores && setenv("OPENBLAS_NUM_THREADS", n, 1) == 0)
        execv("/proc/self/exe", argv);
}

/* Whether a command (argv[1]) computes matrix products: the others need no BLAS threads. */
static bool uses_blas(const char *name)
{
    return strcmp(name, "train") == 0 || strcmp(name, "translate") == 0 || strcmp(name, "eval") == 0;
}

int main(int argc, char **argv)
{
    /* A file-size limit (ulimit -f) then makes a write fail with EFBIG, which every
       writer reports as it reports a full disk (one line naming the file, the previous
       file kept, no temporary left), instead of killing the process mid-write. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2 || !uses_blas(argv[1]))
        blas_threads_none(argv);
    else
        blas_threads_fit(argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("s2s %s\n", S2S_VERSION);
        return 0;
    }
    if (strcmp(name, "train") == 0)
        blas_threads_sleep_soon(argv);
    for (size_t i = 0; commands[i].name; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    die_usage("unknown command '%s' (see 's2s --help')", name);
}
