/* The Poisson problem with parlops: each rank assembles its rows of the 2D 5-point Laplacian on an
 * n x n grid (Dirichlet), b = 1, x0 = 0, and CG solves to ||r|| <= 1e-8 ||b||. Prints the
 * configuration report, iterations, final residual, time per iteration and the memory bandwidth the
 * iterations achieved (bytes counted as below).
 * Run: mpiexec -n 2 ./poisson [n] [cg|cg-sr|cg-pipe] [jacobi]          (fortran/examples/poisson.f90) */
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
  int64_t n = argc > 1 ? atoll(argv[1]) : 400, N = n * n;
  const char *mname = argc > 2 ? argv[2] : "cg";
  int jacobi = argc > 3 && strcmp(argv[3], "jacobi") == 0;
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
  CHECK(parlops_op_create_csr(layout, layout, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &A));
  free(rp); free(ci); free(va);

  parlops_vec *x, *b, *r;
  CHECK(parlops_op_create_vecs(A, &x, &b));
  CHECK(parlops_vec_duplicate(b, &r));
  CHECK(parlops_vec_fill(b, PARLOPS_REAL(1.0)));

  parlops_solver *ksp;
  CHECK(parlops_solver_create(comm, method, &ksp));
  CHECK(parlops_solver_set_operator(ksp, A));
  if (jacobi) CHECK(parlops_solver_set_jacobi(ksp));
  CHECK(parlops_solver_set_tolerances(ksp, 1e-8, 0.0, 1e5, 100000));
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
  /* Bytes one unpreconditioned CG iteration moves, per row, as implemented: SpMV 5 x (8 + 8) index and
   * value bytes + 4 row pointer + 16 (x read once, y written) = 100; vector passes: p.q 16,
   * x += a p 24, r -= a q 24, z = r 16, r.z 16, r.r 16, p = z + b p 24 = 136. */
  double bytes = 236.0 * (double)N;
  if (rank == 0) {
    printf("Poisson %lld x %lld (%lld unknowns) on %d rank(s), %s%s\n", (long long)n, (long long)n, (long long)N, size,
           mname, jacobi ? " + Jacobi" : "");
    printf("iterations = %lld\n", (long long)info.iterations);
    printf("converged reason = %d\n", (int)info.reason);
    printf("final residual norm = %.6e (relative %.3e; true %.3e)\n", info.final_residual_norm,
           info.final_residual_norm / bn, rn / bn);
    printf("time = %.3f s, %.3f ms per iteration, %.2f GB/s achieved\n", tmax, 1e3 * tmax / (double)info.iterations,
           bytes * (double)info.iterations / tmax / 1e9);
  }
  int ok = info.reason > 0 && rn / bn < 1e-7;
  CHECK(parlops_solver_destroy(&ksp));
  CHECK(parlops_vec_destroy(&x)); CHECK(parlops_vec_destroy(&b)); CHECK(parlops_vec_destroy(&r));
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&layout));
  CHECK(parlops_comm_destroy(&comm));
  MPI_Finalize();
  return ok ? 0 : 1;
}
