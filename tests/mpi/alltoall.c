/* MPI_Alltoall of 1 and 4096 ints per pair, and MPI_Alltoallv with a different count for every
   pair; every element names its sender, receiver and position. */
#include <stdlib.h>

#include "check.h"

static int Value(int from, int to, int i) {
  return from * 1000000 + to * 10000 + i % 10000;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int counts[] = {1, 4096};
  for (int c = 0; c < 2; ++c) {
    int per = counts[c];
    int* out = malloc((size_t)n * per * sizeof(int));
    int* in = malloc((size_t)n * per * sizeof(int));
    for (int to = 0; to < n; ++to)
      for (int i = 0; i < per; ++i) out[to * per + i] = Value(rank, to, i);
    MPI_Alltoall(out, per, MPI_INT, in, per, MPI_INT, MPI_COMM_WORLD);
    for (int from = 0; from < n; ++from)
      for (int i = 0; i < per; ++i)
        CHECK(in[from * per + i] == Value(from, rank, i), "alltoall %d: from %d element %d: %d",
              per, from, i, in[from * per + i]);
    free(out);
    free(in);
  }
  /* Alltoallv: rank r sends (r + to + 1) * 100 ints to rank to. */
  int *scount = malloc(n * sizeof(int)), *sdispl = malloc(n * sizeof(int));
  int *rcount = malloc(n * sizeof(int)), *rdispl = malloc(n * sizeof(int));
  int stotal = 0, rtotal = 0;
  for (int p = 0; p < n; ++p) {
    scount[p] = (rank + p + 1) * 100;
    sdispl[p] = stotal;
    stotal += scount[p];
    rcount[p] = (p + rank + 1) * 100;
    rdispl[p] = rtotal;
    rtotal += rcount[p];
  }
  int* out = malloc(stotal * sizeof(int));
  int* in = malloc(rtotal * sizeof(int));
  for (int to = 0; to < n; ++to)
    for (int i = 0; i < scount[to]; ++i) out[sdispl[to] + i] = Value(rank, to, i);
  MPI_Alltoallv(out, scount, sdispl, MPI_INT, in, rcount, rdispl, MPI_INT, MPI_COMM_WORLD);
  for (int from = 0; from < n; ++from)
    for (int i = 0; i < rcount[from]; ++i)
      CHECK(in[rdispl[from] + i] == Value(from, rank, i), "alltoallv from %d element %d: %d", from,
            i, in[rdispl[from] + i]);
  if (rank == 0) printf("alltoall: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
