/* Error reporting: library code fills an Err and returns -1; commands print it. */
#ifndef S2S_BASE_ERR_H
#define S2S_BASE_ERR_H

#include <stddef.h>

#define S2S_NORETURN __attribute__((noreturn))
#define S2S_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* One error message, without the "s2s: " prefix and without a newline. */
typedef struct Err {
    char msg[1024];
} Err;

/* Sets e->msg (when e is not NULL) and returns -1, so callers can `return err_set(...)`. */
int err_set(Err *e, const char *fmt, ...) S2S_PRINTF(2, 3);

/* Prints "s2s: MESSAGE" on stderr and exits with status 1 (runtime error). */
void die(const char *fmt, ...) S2S_PRINTF(1, 2) S2S_NORETURN;
/* Prints "s2s: MESSAGE" and a hint to run --help, exits with status 2 (usage error). */
void die_usage(const char *fmt, ...) S2S_PRINTF(1, 2) S2S_NORETURN;
/* Prints "s2s: " e->msg and exits 1. */
void die_err(const Err *e) S2S_NORETURN;
/* A broken invariant: prints file:line and aborts. Use through BUG(). */
void bug_at(const char *file, int line, const char *fmt, ...) S2S_PRINTF(3, 4) S2S_NORETURN;
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK(cond) do { if (!(cond)) BUG("check failed: %s", #cond); } while (0)

/* Allocation that cannot fail: on exhaustion it dies with a one-line message. */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* n elements of `size` bytes, the product checked for overflow (which dies as
   exhaustion does); n may be 0. Use through the macros, which write the size once:
     int *ids = XNEW(int, n);   Pair *p = XCNEW(Pair, n);   XRENEW(ids, 2 * n); */
void *xmalloc_array(size_t n, size_t size);
void *xrealloc_array(void *p, size_t n, size_t size);
#define XNEW(T, n) ((T *)xmalloc_array((size_t)(n), sizeof(T)))
#define XCNEW(T, n) ((T *)xcalloc((size_t)(n), sizeof(T)))
#define XRENEW(p, n) ((p) = xrealloc_array((p), (size_t)(n), sizeof *(p)))
char *xstrndup(const char *s, size_t n);

#endif
