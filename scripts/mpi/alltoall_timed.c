/* The MPI side of the congestion experiment (docs/experiments/mpi-congestion.md): ITERATIONS
   all-to-alls of BYTES per pair, each between barriers and timed at rank 0 with MPI_Wtime, and
   the data checked. Prints one line per iteration: its index and its time in microseconds of
   wall time. Unmodified MPI: it knows nothing of the emulator.
     alltoall_timed ITERATIONS BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int iters = argc > 1 ? atoi(argv[1]) : 20;
  int bytes = argc > 2 ? atoi(argv[2]) : 65536;
  int count = bytes / (int)sizeof(int);
  int* out = malloc((size_t)n * count * sizeof(int));
  int* in = malloc((size_t)n * count * sizeof(int));
  for (int it = 0; it < iters; ++it) {
    for (int to = 0; to < n; ++to)
      for (int i = 0; i < count; ++i) out[to * count + i] = it * 7919 + rank * 104729 + to * 31 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Alltoall(out, count, MPI_INT, in, count, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    for (int from = 0; from < n; ++from)
      for (int i = 0; i < count; ++i)
        if (in[from * count + i] != it * 7919 + from * 104729 + rank * 31 + i) {
          fprintf(stderr, "rank %d: iteration %d, from %d, element %d wrong\n", rank, it, from, i);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
    if (rank == 0) printf("%d %.1f\n", it, t * 1e6);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
