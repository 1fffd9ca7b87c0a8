/* A token around the ring, every rank adding its rank each lap (10 laps, or argv[1]: a long run
   for the failure test); then a 256 KiB block shifted one step around the ring with
   MPI_Sendrecv, checked against its sender. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  const int laps = argc > 1 ? atoi(argv[1]) : 10;
  long token = 0;
  for (int lap = 0; lap < laps; ++lap) {
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
    }
  }
  if (rank == 0)
    CHECK(token == (long)laps * n * (n - 1) / 2, "token %ld after %d laps", token, laps);
  const int count = 65536;
  int* out = malloc(count * sizeof(int));
  int* in = malloc(count * sizeof(int));
  for (int i = 0; i < count; ++i) out[i] = rank * 1000003 + i;
  MPI_Sendrecv(out, count, MPI_INT, next, 99, in, count, MPI_INT, prev, 99, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int i = 0; i < count; ++i)
    CHECK(in[i] == prev * 1000003 + i, "block from %d, element %d: %d", prev, i, in[i]);
  free(out);
  free(in);
  if (rank == 0) printf("ring: ok (%d ranks, token %ld)\n", n, token);
  MPI_Finalize();
  return 0;
}
