/*
 * The processes of a data-parallel training run (docs/distributed.md). Built with
 * S2S_MPI (`make MPI=1`), these are MPI calls on MPI_COMM_WORLD; built without it, the
 * run is one process, rank 0 of 1, and every collective leaves its buffer as it is.
 *
 * Every collective must be called by all processes in the same order; a process that
 * cannot go on while the others may wait in one calls dist_abort.
 */
#ifndef S2S_TRAIN_DIST_H
#define S2S_TRAIN_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "nn/real.h"

/* Whether this s2s was built with MPI. */
extern const bool dist_built_with_mpi;

/* Joins the run's processes (MPI_Init; nothing without MPI). Without MPI, fails when
   the environment says that an MPI launcher started this process as one of N > 1
   (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE, MV2_COMM_WORLD_SIZE), naming the
   variable. Call once, before any other dist_ function. */
int dist_init(int *argc, char ***argv, Err *e);
/* Leaves the run (MPI_Finalize) after dist_init; does nothing otherwise or twice. */
void dist_finalize(void);
/* Ends every process of the run with status code (MPI_Abort; exit without MPI). */
void dist_abort(int code) S2S_NORETURN;

int dist_rank(void); /* 0 .. dist_size() - 1 */
int dist_size(void);
/* The processes of the run on this host (this one included). */
int dist_local_size(void);

/* In place: every process gets the element-wise sum over the processes. */
void dist_sum_real(real *x, size_t n);
void dist_sum_f64(double *x, size_t n);
void dist_sum_i64(long long *x, size_t n);
/* The largest of every process's x. */
int dist_max_int(int x);
/* Whether x is the same on every process. */
bool dist_same_u32(uint32_t x);
/* Copies bytes of root's buf into buf on every other process. */
void dist_bcast(void *buf, size_t bytes, int root);
void dist_barrier(void);

#endif
