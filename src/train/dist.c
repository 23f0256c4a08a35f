#include "train/dist.h"

#include <stdlib.h>

#ifdef S2S_MPI

#include <mpi.h>

const bool dist_built_with_mpi = true;

static bool joined;
static int rank, size = 1, local_size = 1;

int dist_init(int *argc, char ***argv, Err *e)
{
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return err_set(e, "MPI_Init failed");
    joined = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_size(local, &local_size);
        MPI_Comm_free(&local);
    }
    return 0;
}

void dist_finalize(void)
{
    if (joined)
        MPI_Finalize();
    joined = false;
}

void dist_abort(int code)
{
    if (joined)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int dist_rank(void) { return rank; }
int dist_size(void) { return size; }
int dist_local_size(void) { return local_size; }

/* MPI counts are ints: long arrays go in pieces. */
#define PIECE ((size_t)1 << 30)

static void sum(void *x, size_t n, size_t elem, MPI_Datatype type)
{
    if (size == 1)
        return;
    for (size_t off = 0; off < n; off += PIECE) {
        size_t k = n - off < PIECE ? n - off : PIECE;
        MPI_Allreduce(MPI_IN_PLACE, (char *)x + off * elem, (int)k, type, MPI_SUM, MPI_COMM_WORLD);
    }
}

void dist_sum_real(real *x, size_t n) { sum(x, n, sizeof *x, sizeof(real) == 4 ? MPI_FLOAT : MPI_DOUBLE); }
void dist_sum_f64(double *x, size_t n) { sum(x, n, sizeof *x, MPI_DOUBLE); }
void dist_sum_i64(long long *x, size_t n) { sum(x, n, sizeof *x, MPI_LONG_LONG); }

int dist_max_int(int x)
{
    int m = x;
    if (size > 1)
        MPI_Allreduce(&x, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

bool dist_same_u32(uint32_t x)
{
    long long v[2] = {(long long)x, -(long long)x}, m[2];
    if (size == 1)
        return true;
    MPI_Allreduce(v, m, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return m[0] == -m[1]; /* the largest equals the smallest */
}

void dist_bcast(void *buf, size_t bytes, int root)
{
    if (size == 1)
        return;
    for (size_t off = 0; off < bytes; off += PIECE) {
        size_t k = bytes - off < PIECE ? bytes - off : PIECE;
        MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

void dist_barrier(void)
{
    if (size > 1)
        MPI_Barrier(MPI_COMM_WORLD);
}

#else

const bool dist_built_with_mpi = false;

/* The variables MPI launchers set to the number of processes they started. */
static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                            "MV2_COMM_WORLD_SIZE"};

int dist_init(int *argc, char ***argv, Err *e)
{
    for (size_t i = 0; i < sizeof launcher_vars / sizeof *launcher_vars; i++) {
        const char *v = getenv(launcher_vars[i]);
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && end != v && n > 1)
            return err_set(e, "started as one of %ld processes (%s=%s), but this s2s is built without "
                              "MPI: build it with 'make MPI=1'", n, launcher_vars[i], v);
    }
    return 0;
}

void dist_finalize(void) {}
void dist_abort(int code) { exit(code); }
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
int dist_local_size(void) { return 1; }
void dist_sum_real(real *x, size_t n) {}
void dist_sum_f64(double *x, size_t n) {}
void dist_sum_i64(long long *x, size_t n) {}
int dist_max_int(int x) { return x; }
bool dist_same_u32(uint32_t x) { return true; }
void dist_bcast(void *buf, size_t bytes, int root) {}
void dist_barrier(void) {}

#endif
