/* Shared helpers for the Criterion test suite. */
#ifndef S2S_TESTS_HELPERS_H
#define S2S_TESTS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

/* The outcome of running the real s2s binary (path from $S2S, default ./s2s). */
typedef struct RunResult {
    int status;     /* exit status, or 128+signal when killed */
    char *out;      /* stdout, NUL-terminated */
    char *err;      /* stderr, NUL-terminated */
    size_t out_len, err_len;
} RunResult;

/* Runs s2s with the NULL-terminated args (without the program name), feeding
   stdin_data (NULL: empty stdin). */
RunResult run_s2s(const char *stdin_data, const char *const *args);
#define RUN_S2S(stdin_data, ...) run_s2s((stdin_data), (const char *const[]){__VA_ARGS__, NULL})
/* Runs the program argv[0] (a path) with argv (NULL-terminated) the same way. */
RunResult run_prog(const char *stdin_data, const char *const *argv);
#define RUN_PROG(stdin_data, ...) run_prog((stdin_data), (const char *const[]){__VA_ARGS__, NULL})
void run_free(RunResult *r);

/* A fresh empty directory under /tmp; rm_rf removes it and everything below. */
char *tmpdir_new(void);
void rm_rf(const char *path);
/* path_fmt with printf arguments, freshly allocated. */
char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whole file or NULL when it cannot be read; len may be NULL. */
char *slurp(const char *path, size_t *len);
void write_file(const char *path, const char *data);
int file_exists(const char *path);
/* Number of entries in a directory, not counting . and .. (-1 if it cannot be opened). */
int dir_count(const char *path);

/* A listing of a directory tree: one line "PATH SIZE CRC32" per file (PATH relative to
   dir, symbolic links shown as "PATH -> TARGET", directories as "PATH/"), sorted. Two
   equal snapshots mean nothing was created, removed or changed below dir. */
char *dir_snapshot(const char *dir);

/* Starts s2s (path from $S2S) with args (NULL-terminated, without the program name),
   stdout and stderr to out_path, without waiting. */
int spawn_s2s(const char *const *args, const char *out_path);
/* Waits for a child: its exit status, or 128+signal when killed. */
int wait_exit(int pid);
/* Occurrences of needle in the file at path (0 when it cannot be read). */
int count_in_file(const char *path, const char *needle);

/* A fresh temporary directory holding data/, `s2s prepare data/sample.tsv` with its
   defaults (the caller removes it with rm_rf). */
char *sample_prepared_dir(void);
/* The same with bpe (not NULL) joint subword merges (`--bpe N --joint`). */
char *sample_prepared_dir_with(const char *bpe);

/* The full Tatoeba corpus when present beside the repository, else NULL. */
const char *fra_corpus(void);

/* The products of nn_gemm in bf16 (nn/bf16.h) and true; or, on a CPU without bf16
   instructions, checks that bf16 is refused with its message and stays fp32, and false. */
bool bf16_on_or_refused(void);

#endif
