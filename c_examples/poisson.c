/* The Poisson problem with parlops: each rank assembles its rows of the 2D 5-point Laplacian on an
 * n x n grid (Dirichlet), b = 1, x0 = 0, and CG solves to ||r|| <= 1e-8 ||b||. Prints the
 * configuration report, iterations, final residual, time per iteration and the memory bandwidth the
 * iterations achieved on the bytes the method must move per row (counted below). With `matfree`,
 * the same operator without a matrix (parlops_op_poisson): the same iterations, fewer bytes.
 * Run: mpiexec -n 2 ./poisson [n] [cg|cg-sr|cg-pipe] [jacobi|none] [matfree] [options]   (fortran/examples/poisson.f90)
 * Run-time options, from the command line after the words above or from PARLOPS_OPTIONS, switch the
 * solver without recompiling, as PETSc's KSPSetFromOptions does (docs/options.md):
 *   PARLOPS_OPTIONS="-ksp_type gmres -ksp_gmres_restart 50 -pc_type amg -ksp_view" mpiexec -n 2 ./poisson */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  CHECK(PARLOPS_CHECK_VERSION()); /* the library loaded keeps this header's ABI */
  int64_t n = argc > 1 ? atoll(argv[1]) : 400, N = n * n;
  const char *mname = argc > 2 ? argv[2] : "cg";
  int jacobi = argc > 3 && strcmp(argv[3], "jacobi") == 0;
  int matfree = argc > 4 && strcmp(argv[4], "matfree") == 0;
  parlops_method method = strcmp(mname, "cg-sr") == 0     ? PARLOPS_METHOD_CG_SINGLE_REDUCTION
                          : strcmp(mname, "cg-pipe") == 0 ? PARLOPS_METHOD_CG_PIPELINED
                                                          : PARLOPS_METHOD_CG;

  parlops_comm *comm;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  int rank, size;
  CHECK(parlops_comm_rank(comm, &rank));
  CHECK(parlops_comm_size(comm, &size));
  size_t need;
  CHECK(parlops_config_report(comm, NULL, 0, &need));
  char *report = malloc(need);
  CHECK(parlops_config_report(comm, report, need, NULL));
  if (rank == 0) printf("%s", report);
  free(report);

  parlops_layout *layout;
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &layout));
  int64_t start, len;
  CHECK(parlops_layout_local_range(layout, &start, &len));
  int64_t *rp = malloc((len + 1) * sizeof(int64_t)), *ci = malloc((5 * len + 1) * sizeof(int64_t));
  double *va = malloc((5 * len + 1) * sizeof(double));
  int64_t nnz = 0;
  rp[0] = 0;
  for (int64_t r = start; r < start + len; ++r) {
    int64_t i = r / n, j = r % n;
    if (i > 0) { ci[nnz] = r - n; va[nnz++] = -1.0; }
    if (j > 0) { ci[nnz] = r - 1; va[nnz++] = -1.0; }
    ci[nnz] = r; va[nnz++] = 4.0;
    if (j < n - 1) { ci[nnz] = r + 1; va[nnz++] = -1.0; }
    if (i < n - 1) { ci[nnz] = r + n; va[nnz++] = -1.0; }
    rp[r - start + 1] = nnz;
  }
  parlops_op *A;
  if (matfree) {
    int64_t dims[2] = {n, n};
    CHECK(parlops_op_poisson(layout, 2, dims, PARLOPS_F64, &A));
  } else {
    CHECK(parlops_op_create_csr(layout, layout, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &A));
  }
  free(rp); free(ci); free(va);
  int64_t gnnz = nnz;
  MPI_Allreduce(MPI_IN_PLACE, &gnnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

  parlops_vec *x, *b, *r;
  CHECK(parlops_op_create_vecs(A, &x, &b));
  CHECK(parlops_vec_duplicate(b, &r));
  CHECK(parlops_vec_fill(b, PARLOPS_REAL(1.0)));

  parlops_solver *ksp;
  CHECK(parlops_solver_create(comm, method, &ksp));
  CHECK(parlops_solver_set_operator(ksp, A));
  if (jacobi) CHECK(parlops_solver_set_jacobi(ksp));
  CHECK(parlops_solver_set_tolerances(ksp, 1e-8, 0.0, 1e5, 100000));
  /* run-time options: the environment's, then the command line's (which win) */
  parlops_options *opts;
  CHECK(parlops_options_create(comm, &opts));
  CHECK(parlops_options_insert_env(opts, NULL));
  CHECK(parlops_options_insert_args(opts, argc, argv));
  size_t given = 0;
  CHECK(parlops_options_left(opts, NULL, 0, &given));
  CHECK(parlops_solver_set_from_options(ksp, opts, NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  CHECK(parlops_solver_solve(ksp, b, x));
  double t = MPI_Wtime() - t0, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  parlops_solve_info info;
  CHECK(parlops_solver_info(ksp, &info));

  /* the true residual */
  CHECK(parlops_op_apply(A, x, r));
  CHECK(parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0)));
  double rn, bn;
  CHECK(parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn));
  CHECK(parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn));
  /* Bytes an iteration must move, per row (doubles): the operator: the matrix (parlops stores the
   * column indices of a 5-point matrix in 32 bits: 12 bytes per non-zero, plus a 4-byte row pointer;
   * nothing without a matrix), x read once and y written: 16. The vector work, with parlops' fused
   * passes: CG 72 (p.q inside the product; x += a p and r -= a q with r.r: 48; p = r + b p: 24),
   * single-reduction CG 72, pipelined CG 104; with Jacobi (passes not fused) CG 112, single-reduction
   * 144, pipelined 240. Against the machine's STREAM triad bandwidth, this gives the floor. */
  double matrix = matfree ? 0.0 : 12.0 * (double)gnnz / (double)N + 4.0;
  double vec = jacobi ? (method == PARLOPS_METHOD_CG ? 112.0 : method == PARLOPS_METHOD_CG_SINGLE_REDUCTION ? 144.0 : 240.0)
                      : (method == PARLOPS_METHOD_CG_PIPELINED ? 104.0 : 72.0);
  double per_row = matrix + 16.0 + vec;
  double bytes = per_row * (double)N;
  if (rank == 0) {
    printf("Poisson %lld x %lld (%lld unknowns) on %d rank(s), %s%s, %s\n", (long long)n, (long long)n, (long long)N,
           size, given ? "(run-time options)" : mname, jacobi ? " + Jacobi" : "", matfree ? "matrix-free" : "CSR matrix");
    printf("iterations = %lld\n", (long long)info.iterations);
    printf("converged reason = %d\n", (int)info.reason);
    printf("final residual norm = %.6e (relative %.3e; true %.3e)\n", info.final_residual_norm,
           info.final_residual_norm / bn, rn / bn);
    if (given == 0)
      printf("time = %.3f s, %.3f ms per iteration, %.2f GB/s on the %.0f bytes per row an iteration must move\n", tmax,
             1e3 * tmax / (double)info.iterations, bytes * (double)info.iterations / tmax / 1e9, per_row);
    else /* the options may have changed what an iteration moves */
      printf("time = %.3f s, %.3f ms per iteration\n", tmax, 1e3 * tmax / (double)info.iterations);
  }
  int ok = info.reason > 0 && rn / bn < 1e-7;
  CHECK(parlops_options_destroy(&opts)); /* reports options no solver used (rank 0) */
  CHECK(parlops_solver_destroy(&ksp));
  CHECK(parlops_vec_destroy(&x)); CHECK(parlops_vec_destroy(&b)); CHECK(parlops_vec_destroy(&r));
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&layout));
  CHECK(parlops_comm_destroy(&comm));
  CHECK(parlops_finalize()); /* PARLOPS_LOG=finalize: the run's timing table; MPI is the caller's */
  MPI_Finalize();
  return ok ? 0 : 1;
}
