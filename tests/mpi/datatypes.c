/* Derived datatypes: a column of a row-major matrix (MPI_Type_vector) sent from rank 0 to every
   rank, which receives it into a contiguous array; a struct of int, padding and double
   (MPI_Type_create_struct, resized to the C struct's extent) in an array; an indexed type
   (MPI_Type_indexed) gathering scattered elements; all checked element by element. */
#include <stddef.h>
#include <stdlib.h>

#include "check.h"

#define ROWS 300
#define COLS 50

struct Particle {
  int id;
  char tag;
  double x[3];
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  MPI_Datatype column;
  MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  static double matrix[ROWS][COLS];
  double got[ROWS];
  for (int p = 1; p < n; ++p) {
    int col = p % COLS;
    if (rank == 0) {
      for (int r = 0; r < ROWS; ++r)
        for (int c = 0; c < COLS; ++c) matrix[r][c] = r * 1000.0 + c + p * 0.25;
      MPI_Send(&matrix[0][col], 1, column, p, 1, MPI_COMM_WORLD);
    } else if (rank == p) {
      MPI_Recv(got, ROWS, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int r = 0; r < ROWS; ++r)
        CHECK(got[r] == r * 1000.0 + col + p * 0.25, "column %d row %d: %g", col, r, got[r]);
    }
  }

  MPI_Datatype particle_raw, particle;
  int lens[] = {1, 1, 3};
  MPI_Aint displ[] = {offsetof(struct Particle, id), offsetof(struct Particle, tag),
                      offsetof(struct Particle, x)};
  MPI_Datatype types[] = {MPI_INT, MPI_CHAR, MPI_DOUBLE};
  MPI_Type_create_struct(3, lens, displ, types, &particle_raw);
  MPI_Type_create_resized(particle_raw, 0, sizeof(struct Particle), &particle);
  MPI_Type_commit(&particle);
  enum { kParticles = 1000 };
  struct Particle* ps = calloc(kParticles, sizeof(struct Particle));
  int root = n - 1;
  if (rank == root)
    for (int i = 0; i < kParticles; ++i) {
      ps[i].id = i * 3;
      ps[i].tag = (char)('a' + i % 26);
      for (int d = 0; d < 3; ++d) ps[i].x[d] = i + d / 4.0;
    }
  MPI_Bcast(ps, kParticles, particle, root, MPI_COMM_WORLD);
  for (int i = 0; i < kParticles; ++i) {
    CHECK(ps[i].id == i * 3 && ps[i].tag == (char)('a' + i % 26), "particle %d: id %d tag %c", i,
          ps[i].id, ps[i].tag);
    for (int d = 0; d < 3; ++d) CHECK(ps[i].x[d] == i + d / 4.0, "particle %d x[%d]", i, d);
  }

  /* Indexed: elements 0, 10-12, 100-199 of an array, as one message of 104 ints. */
  MPI_Datatype picks;
  int blocks[] = {1, 3, 100}, starts[] = {0, 10, 100};
  MPI_Type_indexed(3, blocks, starts, MPI_INT, &picks);
  MPI_Type_commit(&picks);
  int src[200], dst[104];
  for (int i = 0; i < 200; ++i) src[i] = rank * 1000 + i;
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  MPI_Sendrecv(src, 1, picks, next, 2, dst, 104, MPI_INT, prev, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  int want_at[104], k = 0;
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < blocks[b]; ++i) want_at[k++] = starts[b] + i;
  for (int i = 0; i < 104; ++i)
    CHECK(dst[i] == prev * 1000 + want_at[i], "indexed element %d: %d", i, dst[i]);

  MPI_Type_free(&column);
  MPI_Type_free(&particle_raw);
  MPI_Type_free(&particle);
  MPI_Type_free(&picks);
  free(ps);
  if (rank == 0) printf("datatypes: ok (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
