/* MPI_Comm_split into even and odd ranks (keys reversing the order), then collectives and point
   to point inside each half: sizes, ranks, sums and a ring, all checked; and MPI_Comm_dup of the
   world with an allgather through the duplicate. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int color = rank % 2;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &half);
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  int want_size = color == 0 ? (n + 1) / 2 : n / 2;
  CHECK(hsize == want_size, "half %d has %d ranks, want %d", color, hsize, want_size);
  /* Keys -rank: the highest world rank of the half is its rank 0. */
  int highest = (n - 1) % 2 == color ? n - 1 : n - 2;
  CHECK(hrank == (highest - rank) / 2, "world %d is rank %d of its half", rank, hrank);
  long mine = rank, sum = 0, want = 0;
  for (int r = color; r < n; r += 2) want += r;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, half);
  CHECK(sum == want, "sum in half %d: %ld, want %ld", color, sum, want);
  if (hsize > 1) {
    int to = (hrank + 1) % hsize, from = (hrank + hsize - 1) % hsize, got = -1, world_of_from;
    MPI_Sendrecv(&rank, 1, MPI_INT, to, 5, &got, 1, MPI_INT, from, 5, half, MPI_STATUS_IGNORE);
    world_of_from = highest - 2 * from;
    CHECK(got == world_of_from, "ring in half %d: got %d from half rank %d, want %d", color, got,
          from, world_of_from);
  }
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int* all = malloc(n * sizeof(int));
  MPI_Allgather(&hrank, 1, MPI_INT, all, 1, MPI_INT, dup);
  for (int r = 0; r < n; ++r) {
    int h = ((n - 1) % 2 == r % 2 ? n - 1 : n - 2);
    CHECK(all[r] == (h - r) / 2, "allgather: world %d says half rank %d", r, all[r]);
  }
  free(all);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  if (rank == 0) printf("comm_split: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
