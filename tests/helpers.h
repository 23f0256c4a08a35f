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
/* The s2s under test ($S2S, default ./s2s) and the Python interpreter ($PYTHON, default
   /usr/bin/python3). */
const char *s2s_bin(void);
const char *python_bin(void);

/* Checks a finished run, then frees it: its exit status, and stdout and stderr equal to
   out and err to the byte (NULL: that stream is not checked). */
void expect_run(RunResult *r, int status, const char *out, const char *err);
/* A run that succeeded: status 0, stdout out, nothing on stderr. */
void expect_ok(RunResult *r, const char *out);
/* A run that failed: status, stderr err (NULL: not checked), nothing on stdout. */
void expect_fail(RunResult *r, int status, const char *err);
/* Checks that a run exited 0, naming the step `what` (with stdout and stderr) when it
   did not; r is kept for the caller to read and free. */
void expect_success(const RunResult *r, const char *what);

/* A fresh empty directory under /tmp; rm_rf removes it and everything below. */
char *tmpdir_new(void);
void rm_rf(const char *path);
/* path_fmt with printf arguments, freshly allocated. */
char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* dir/name, freshly allocated. */
char *file_in(const char *dir, const char *name);
/* Whole file or NULL when it cannot be read; len may be NULL. */
char *slurp(const char *path, size_t *len);
void write_file(const char *path, const char *data);
/* The file's n bytes, NUL or not. */
void write_bytes(const char *path, const void *data, size_t n);
/* Checks that dir/name holds exactly want. */
void expect_file(const char *dir, const char *name, const char *want);
/* Newlines in s. */
int count_newlines(const char *s);
int file_exists(const char *path);
/* Number of entries in a directory, not counting . and .. (-1 if it cannot be opened). */
int dir_count(const char *path);

/* A listing of a directory tree: one line "PATH SIZE CRC32" per file (PATH relative to
   dir, symbolic links shown as "PATH -> TARGET", directories as "PATH/"), sorted. Two
   equal snapshots mean nothing was created, removed or changed below dir. */
char *dir_snapshot(const char *dir);

/* Starts the program argv[0] (a path) with argv (NULL-terminated), stdout and stderr to
   out_path, without waiting: its pid (-1 when fork failed). */
int spawn_prog(const char *const *argv, const char *out_path);
/* The same for s2s (path from $S2S) with args (without the program name). */
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

/* Checks that got is within rel of want, relative to |want|. */
void assert_rel(double got, double want, double rel);

/* The full Tatoeba corpus when present beside the repository, else NULL. */
const char *fra_corpus(void);

/* The products of nn_gemm in bf16 (nn/bf16.h) and true; or, on a CPU without bf16
   instructions, checks that bf16 is refused with its message and stays fp32, and false. */
bool bf16_on_or_refused(void);

/* Appends the space-separated words of s to argv (at *n, below max - 1) as strdup'd
   strings. */
void add_words(const char **argv, int *n, int max, const char *s);

/* The fenced block of language lang after the README heading `heading`. */
char *readme_block(const char *heading, const char *lang);

/* An s2s installed under a root directory (make install DESTDIR=, or unpacked
   packages): its library directory, and the environment (n_env of "VAR=value") that
   points pkg-config at its s2s.pc. */
typedef struct PcTree {
    const char *libdir;
    char *const *env;
    int n_env;
} PcTree;
/* pkg-config ARGS s2s against the tree: its output. */
char *pc_config(const PcTree *t, const char *args);
/* cc -std=c11 -Wall -Wextra -Werror with extra flags (NULL: none) and the tree's s2s.pc,
   src into exe (static_lib: libs2s.a); no output on stderr. */
void pc_compile(const PcTree *t, const char *extra, const char *src, const char *exe, bool static_lib);

#endif
