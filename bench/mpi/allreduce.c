/* Times the gradient allreduce of data-parallel training (train/dist.h's dist_sum_real,
   one MPI_Allreduce of floats) for a given parameter count, as
     mpirun -np N build/mpi/s2s-allreduce PARAMS [REPS]
   and prints, from process 0, the median and the quartiles of REPS calls (after 3
   unmeasured ones), the bytes a ring allreduce sends each way per process,
   2 (N - 1) / N x 4 x PARAMS, and the bandwidth that makes. docs/distributed.md. */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "train/dist.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    Err e;
    if (dist_init(&argc, &argv, &e) != 0) {
        fprintf(stderr, "s2s-allreduce: %s\n", e.msg);
        return 1;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: mpirun -np N s2s-allreduce PARAMS [REPS]\n");
        dist_finalize();
        return 2;
    }
    size_t n = (size_t)strtoull(argv[1], NULL, 10);
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (n == 0 || reps < 1) {
        fprintf(stderr, "s2s-allreduce: PARAMS and REPS must be positive\n");
        dist_finalize();
        return 2;
    }
    real *g = XCNEW(real, n);
    double *t = XNEW(double, reps);
    for (int i = -3; i < reps; i++) {
        for (size_t k = 0; k < n; k++)
            g[k] = (real)(k % 7) * 0.25f;
        dist_barrier();
        double t0 = clock_now();
        dist_sum_real(g, n);
        double dt = clock_now() - t0;
        if (i >= 0)
            t[i] = dt;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    int N = dist_size();
    double bytes = 2.0 * (N - 1) / N * 4.0 * (double)n;
    if (dist_rank() == 0)
        printf("processes %d, %zu floats (%.1f MB): allreduce median %.2f ms (quartiles %.2f, %.2f) over %d; "
               "ring bytes each way per process %.1f MB, %.2f GB/s (%.1f Gb/s)\n",
               N, n, 4.0 * (double)n / 1e6, t[reps / 2] * 1e3, t[reps / 4] * 1e3, t[3 * reps / 4] * 1e3, reps,
               bytes / 1e6, bytes / t[reps / 2] / 1e9, 8 * bytes / t[reps / 2] / 1e9);
    free(g);
    free(t);
    dist_finalize();
    return 0;
}
