/* Ping-pong between rank 0 and every other rank in turn, 1 byte to 1 MiB, each message's bytes
   checked on arrival (a pattern of size, iteration and position, so a stale or shifted buffer
   fails). Prints the round-trip time per size, in MPI_Wtime (wall) seconds. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static unsigned char Pattern(int size, int iter, int peer, int i) {
  return (unsigned char)(i * 7 + size * 3 + iter * 11 + peer * 13 + 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n >= 2, "needs 2 ranks, has %d", n);
  const int iters = 8;
  unsigned char* buf = malloc(1 << 20);
  for (int peer = 1; peer < n; ++peer) {
    for (int size = 1; size <= (1 << 20); size *= 16) {
      double t0 = MPI_Wtime();
      for (int it = 0; it < iters; ++it) {
        if (rank == 0) {
          for (int i = 0; i < size; ++i) buf[i] = Pattern(size, it, peer, i);
          MPI_Send(buf, size, MPI_BYTE, peer, it, MPI_COMM_WORLD);
          memset(buf, 0, size);
          MPI_Status st;
          MPI_Recv(buf, size, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st);
          int got;
          MPI_Get_count(&st, MPI_BYTE, &got);
          CHECK(got == size, "pong of %d bytes from %d came back with %d", size, peer, got);
          for (int i = 0; i < size; ++i)
            CHECK(buf[i] == (unsigned char)~Pattern(size, it, peer, i),
                  "pong from %d, size %d, byte %d: %u", peer, size, i, buf[i]);
        } else if (rank == peer) {
          memset(buf, 0, size);
          MPI_Recv(buf, size, MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          for (int i = 0; i < size; ++i) {
            CHECK(buf[i] == Pattern(size, it, peer, i), "ping size %d, byte %d: %u", size, i,
                  buf[i]);
            buf[i] = (unsigned char)~buf[i];
          }
          MPI_Send(buf, size, MPI_BYTE, 0, it, MPI_COMM_WORLD);
        }
      }
      if (rank == 0)
        printf("pingpong 0<->%d %8d bytes: %.1f us per round trip\n", peer, size,
               (MPI_Wtime() - t0) / iters * 1e6);
    }
  }
  free(buf);
  if (rank == 0) printf("pingpong: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
