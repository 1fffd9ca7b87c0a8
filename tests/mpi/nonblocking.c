/* Non-blocking point to point: every rank posts receives from every other rank first (three tags,
   three sizes up to 200 KB, so eager and rendezvous transfers overlap), then the sends, and
   completes them with MPI_Test polling for half, MPI_Waitall for the rest. Also MPI_Iallreduce
   overlapping the traffic. */
#include <stdlib.h>

#include "check.h"

#define NTAGS 3
static const int kCount[NTAGS] = {1, 2000, 50000};

static int Value(int from, int to, int tag, int i) {
  return (from * 31 + to * 17 + tag * 7 + i) ^ 0x5a5a;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int nreq = 2 * NTAGS * n;
  MPI_Request* req = malloc(nreq * sizeof(MPI_Request));
  int** in = malloc(NTAGS * n * sizeof(int*));
  int** out = malloc(NTAGS * n * sizeof(int*));
  int k = 0;
  for (int p = 0; p < n; ++p)
    for (int t = 0; t < NTAGS; ++t) {
      in[p * NTAGS + t] = calloc(kCount[t], sizeof(int));
      MPI_Irecv(in[p * NTAGS + t], kCount[t], MPI_INT, p, t, MPI_COMM_WORLD, &req[k++]);
    }
  long mine = rank, sum = -1;
  MPI_Request red;
  MPI_Iallreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &red);
  for (int p = 0; p < n; ++p)
    for (int t = NTAGS - 1; t >= 0; --t) { /* the tags in the other order than the receives */
      int* b = out[p * NTAGS + t] = malloc(kCount[t] * sizeof(int));
      for (int i = 0; i < kCount[t]; ++i) b[i] = Value(rank, p, t, i);
      MPI_Isend(b, kCount[t], MPI_INT, p, t, MPI_COMM_WORLD, &req[k++]);
    }
  /* The first half by polling. */
  for (int i = 0; i < nreq / 2; ++i) {
    int done = 0;
    while (!done) MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
  }
  MPI_Waitall(nreq - nreq / 2, req + nreq / 2, MPI_STATUSES_IGNORE);
  MPI_Wait(&red, MPI_STATUS_IGNORE);
  CHECK(sum == (long)n * (n - 1) / 2, "iallreduce: %ld", sum);
  for (int p = 0; p < n; ++p)
    for (int t = 0; t < NTAGS; ++t)
      for (int i = 0; i < kCount[t]; ++i)
        CHECK(in[p * NTAGS + t][i] == Value(p, rank, t, i), "from %d tag %d element %d: %d", p, t,
              i, in[p * NTAGS + t][i]);
  if (rank == 0) printf("nonblocking: ok (%d ranks, %d requests each)\n", n, nreq);
  MPI_Finalize();
  return 0;
}
