/* MPI ping-pong between ranks 0 and 1, as the OSU and IMB ping-pongs measure it: for each size
   (1 B to 4 MiB, x4), a warm-up, then round trips timed with MPI_Wtime. Prints one line per size:
   the size, the one-way latency (half the round trip) in microseconds and the bandwidth
   (size / one-way time) in MB/s (10^6 bytes). Run by bench/mpi_bench.sh. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 2) {
    if (rank == 0) fprintf(stderr, "pingpong_bench: needs exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int scale = argc > 1 ? atoi(argv[1]) : 1; /* iterations x scale */
  const int max = 4 << 20;
  char* buf = malloc(max);
  memset(buf, 1, max);
  if (rank == 0) printf("%10s %14s %14s\n", "bytes", "latency_us", "bandwidth_MBps");
  for (int size = 1; size <= max; size *= 4) {
    int iters = (size <= 65536 ? 200 : 20) * scale, warm = iters / 10 + 1;
    double t0 = 0;
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
      }
      if (rank == 0) {
        MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    double one_way = (MPI_Wtime() - t0) / iters / 2;
    if (rank == 0) printf("%10d %14.2f %14.2f\n", size, one_way * 1e6, size / one_way / 1e6);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
