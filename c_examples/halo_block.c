/* Which block of an N-D array each rank holds under parlops_op_halo's split (parlops_halo_block),
 * gathered and printed by rank 0, for three arrays on grids of all ranks along one axis.
 * Run: mpiexec -n 2 ./halo_block. The Fortran example fortran/examples/halo_block.f90 prints the
 * same lines (tests/examples.sh compares them). */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <parlops.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, parlops_status_string(s_),          \
              parlops_last_error());                                                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* case c: ndim, dims, and the axis that carries all ranks */
  const int ndims[3] = {2, 3, 2};
  const int64_t dims[3][3] = {{7, 5, 0}, {6, 9, 4}, {11, 3, 0}};
  const int axis[3] = {0, 1, 1};
  int failed = 0;
  for (int c = 0; c < 3; c++) {
    int nd = ndims[c];
    int64_t grid[3] = {1, 1, 1}, mine[6], *all = malloc(sizeof(int64_t) * 6 * (size_t)size);
    grid[axis[c]] = size;
    CHECK(parlops_halo_block(nd, dims[c], grid, size, rank, mine, mine + nd));
    MPI_Gather(mine, 2 * nd, MPI_INT64_T, all, 2 * nd, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      int64_t volume = 0, total = 1;
      for (int d = 0; d < nd; d++) total *= dims[c][d];
      for (int r = 0; r < size; r++) {
        const int64_t *b = all + 2 * nd * r;
        int64_t v = 1;
        printf("halo_block case=%d rank=%d start=", c + 1, r);
        for (int d = 0; d < nd; d++) printf(" %lld", (long long)b[d]);
        printf(" shape=");
        for (int d = 0; d < nd; d++) {
          printf(" %lld", (long long)b[nd + d]);
          v *= b[nd + d];
        }
        printf("\n");
        volume += v;
      }
      if (volume != total) {
        fprintf(stderr, "case %d: the blocks hold %lld entries, the array %lld\n", c + 1,
                (long long)volume, (long long)total);
        failed = 1;
      }
    }
    free(all);
  }
  if (rank == 0 && !failed) printf("ranks = %d, the blocks tile every array\n", size);
  MPI_Finalize();
  return failed;
}
