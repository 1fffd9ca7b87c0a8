/* MPI_Allreduce: sums of longs and maxima and minima of doubles, 1 to 100000 elements (which takes
   Open MPI's tuned collectives through their small- and large-message algorithms), and
   MPI_Reduce and MPI_Bcast to and from a root that is not 0. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int lengths[] = {1, 1000, 100000};
  for (int l = 0; l < 3; ++l) {
    int len = lengths[l];
    long *in = malloc(len * sizeof(long)), *sum = malloc(len * sizeof(long));
    double *d = malloc(len * sizeof(double)), *mx = malloc(len * sizeof(double)),
           *mn = malloc(len * sizeof(double));
    for (int i = 0; i < len; ++i) {
      in[i] = (long)rank * i + 1;
      d[i] = (double)((rank * 7 + i) % n) + 0.5;
    }
    MPI_Allreduce(in, sum, len, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(d, mx, len, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(d, mn, len, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    for (int i = 0; i < len; ++i) {
      long want = (long)i * n * (n - 1) / 2 + n;
      CHECK(sum[i] == want, "sum of %d, element %d: %ld, want %ld", len, i, sum[i], want);
      double hi = -1, lo = 1e9;
      for (int r = 0; r < n; ++r) {
        double v = (double)((r * 7 + i) % n) + 0.5;
        hi = v > hi ? v : hi;
        lo = v < lo ? v : lo;
      }
      CHECK(mx[i] == hi && mn[i] == lo, "max/min of %d, element %d: %g/%g, want %g/%g", len, i,
            mx[i], mn[i], hi, lo);
    }
    free(in);
    free(sum);
    free(d);
    free(mx);
    free(mn);
  }
  int root = n - 1;
  long mine = rank + 1, total = 0;
  MPI_Reduce(&mine, &total, 1, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
  if (rank == root) CHECK(total == (long)n * (n + 1) / 2, "reduce at %d: %ld", root, total);
  MPI_Bcast(&total, 1, MPI_LONG, root, MPI_COMM_WORLD);
  CHECK(total == (long)n * (n + 1) / 2, "bcast from %d: %ld", root, total);
  if (rank == 0) printf("allreduce: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
