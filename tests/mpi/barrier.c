/* MPI_Barrier holds every rank until the last arrives: rank r arrives r * 20 ms late, and no rank
   may leave before the last one entered. The ranks share this machine's CLOCK_MONOTONIC (Open
   MPI's MPI_Wtime counts from each process's own MPI_Init, so it does not compare across
   ranks). Repeated with the late rank rotating. */
#include <time.h>
#include <unistd.h>

#include "check.h"

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int round = 0; round < 3; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(((rank + round) % n) * 20000);
    double entered = Now();
    MPI_Barrier(MPI_COMM_WORLD);
    double left = Now();
    double last_entry;
    MPI_Allreduce(&entered, &last_entry, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(left >= last_entry, "round %d: left at %.6f, before the last rank entered at %.6f", round,
          left, last_entry);
  }
  if (rank == 0) printf("barrier: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
