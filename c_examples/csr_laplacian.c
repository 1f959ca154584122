/* A distributed sparse matrix from C: each rank assembles its own rows of the 2D 5-point Laplacian
 * (n x n grid, Dirichlet boundary, rows numbered i*n + j) with GLOBAL column indices, then applies it
 * and its adjoint, extracts the diagonal and runs the dot test.
 * Run: mpiexec -n 2 ./csr_laplacian [n]      (fortran/examples/csr_laplacian.f90 prints the same) */
#include <math.h>
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
  int64_t n = argc > 1 ? atoll(argv[1]) : 100, N = n * n;

  parlops_comm *comm;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  int rank, size;
  CHECK(parlops_comm_rank(comm, &rank));
  CHECK(parlops_comm_size(comm, &size));
  parlops_layout *layout;
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &layout));
  int64_t start, len;
  CHECK(parlops_layout_local_range(layout, &start, &len));

  /* This rank's rows, columns in increasing order. */
  int64_t *row_ptr = malloc((len + 1) * sizeof(int64_t));
  int64_t *col = malloc((5 * len + 1) * sizeof(int64_t));
  double *val = malloc((5 * len + 1) * sizeof(double));
  int64_t nnz = 0;
  row_ptr[0] = 0;
  for (int64_t r = start; r < start + len; ++r) {
    int64_t i = r / n, j = r % n;
    if (i > 0) { col[nnz] = r - n; val[nnz++] = -1.0; }
    if (j > 0) { col[nnz] = r - 1; val[nnz++] = -1.0; }
    col[nnz] = r; val[nnz++] = 4.0;
    if (j < n - 1) { col[nnz] = r + 1; val[nnz++] = -1.0; }
    if (i < n - 1) { col[nnz] = r + n; val[nnz++] = -1.0; }
    row_ptr[r - start + 1] = nnz;
  }
  parlops_op *A;
  CHECK(parlops_op_create_csr(layout, layout, PARLOPS_F64, PARLOPS_INDEX_I64, row_ptr, col, val, &A));
  free(row_ptr); free(col); free(val); /* the matrix has its own copy */

  parlops_vec *x, *y, *d;
  CHECK(parlops_op_create_vecs(A, &x, &y));
  CHECK(parlops_vec_duplicate(x, &d));
  double *xl;
  CHECK(parlops_vec_local_array(x, (void **)&xl, NULL));
  for (int64_t k = 0; k < len; ++k) {
    int64_t r = start + k, i = r / n, j = r % n;
    xl[k] = sin(3.0 * (i + 1) / (n + 1)) * cos(2.0 * (j + 1) / (n + 1));
  }
  CHECK(parlops_op_apply(A, x, y));
  double ny, nx, ndiag, err;
  CHECK(parlops_vec_norm(y, PARLOPS_NORM_2, 0, &ny));
  CHECK(parlops_op_apply_adjoint(A, y, x)); /* A is symmetric: x = A^2 x0 */
  CHECK(parlops_vec_norm(x, PARLOPS_NORM_2, 0, &nx));
  CHECK(parlops_op_diagonal(A, d));
  CHECK(parlops_vec_norm(d, PARLOPS_NORM_INF, 0, &ndiag));
  CHECK(parlops_op_dottest(A, 7, &err));
  if (rank == 0) {
    printf("ranks = %d, grid = %lld x %lld, unknowns = %lld\n", size, (long long)n, (long long)n, (long long)N);
    printf("norm2(A x) = %.10e\n", ny);
    printf("norm2(A^H A x) = %.10e\n", nx);
    printf("norminf(diag A) = %.10e\n", ndiag);
    printf("dot test %s (relative error %.1e)\n", err < 1e-13 ? "passed" : "FAILED", err);
  }
  CHECK(parlops_vec_destroy(&x)); CHECK(parlops_vec_destroy(&y)); CHECK(parlops_vec_destroy(&d));
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&layout));
  CHECK(parlops_comm_destroy(&comm));
  MPI_Finalize();
  return err < 1e-13 ? 0 : 1;
}
