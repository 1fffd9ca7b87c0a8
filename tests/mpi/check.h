/* What every test program here shares: a failed check names the rank and what it found, and
   ends the job with status 1, so mpirun's status says whether the results were right. */
#ifndef IBEMU_TESTS_MPI_CHECK_H
#define IBEMU_TESTS_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      int r_;                                                      \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                          \
      fprintf(stderr, "rank %d: %s:%d: ", r_, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                \
      fprintf(stderr, "\n");                                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                \
    }                                                              \
  } while (0)

#endif
