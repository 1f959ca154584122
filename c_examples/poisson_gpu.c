/* The Poisson problem of poisson.c solved twice: with vectors in host memory and with vectors in CUDA
 * device memory (PARLOPS_MEMORY_CUDA), optionally moving the halo and the dot products with NCCL.
 * Prints the iterations of both solves and the relative difference of the solutions; exits 0 when the
 * iteration counts are equal and the solutions agree to 1e-10. Where there is no CUDA device, it says
 * so (the message parlops gives) and exits 0.
 * Run: mpiexec -n 1 ./poisson_gpu [n] [nccl]                  (one GPU per rank for nccl) */
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

/* CG on A x = b with vectors in `mem`; the solution's local part is copied into x_host. */
static int64_t solve(parlops_comm *comm, parlops_op *A, parlops_memory mem, const double *b_host,
                     double *x_host, double *seconds) {
  parlops_layout *rows;
  CHECK(parlops_op_layouts(A, &rows, NULL));
  parlops_vec *b, *x;
  CHECK(parlops_vec_create(rows, PARLOPS_F64, mem, &b));
  CHECK(parlops_vec_create(rows, PARLOPS_F64, mem, &x));
  CHECK(parlops_vec_copy_from_host(b, b_host));
  parlops_solver *ksp;
  CHECK(parlops_solver_create(comm, PARLOPS_METHOD_CG, &ksp));
  CHECK(parlops_solver_set_operator(ksp, A));
  CHECK(parlops_solver_set_tolerances(ksp, 1e-10, 0.0, 1e5, 100000));
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  CHECK(parlops_solver_solve(ksp, b, x));
  *seconds = MPI_Wtime() - t0;
  parlops_solve_info info;
  CHECK(parlops_solver_info(ksp, &info));
  CHECK(parlops_vec_copy_to_host(x, x_host));
  CHECK(parlops_solver_destroy(&ksp));
  CHECK(parlops_vec_destroy(&b));
  CHECK(parlops_vec_destroy(&x));
  CHECK(parlops_layout_destroy(&rows));
  return info.reason > 0 ? info.iterations : -1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t n = argc > 1 ? atoll(argv[1]) : 300, N = n * n;
  int use_nccl = argc > 2 && strcmp(argv[2], "nccl") == 0;

  parlops_comm *world, *comm;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &world));
  int rank;
  CHECK(parlops_comm_rank(world, &rank));
  if (use_nccl) {
    parlops_status s = parlops_comm_create_nccl(world, -1, &comm);
    if (s == PARLOPS_ERR_NO_DEVICE) {
      if (rank == 0) printf("poisson_gpu skipped: %s\n", parlops_last_error());
      CHECK(parlops_comm_destroy(&world));
      MPI_Finalize();
      return 0;
    }
    CHECK(s);
  } else {
    comm = world;
  }

  parlops_layout *layout;
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &layout));
  /* device vectors are asked for first: no device is a clean, collective error */
  parlops_vec *probe;
  parlops_status s = parlops_vec_create(layout, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &probe);
  if (s == PARLOPS_ERR_NO_DEVICE) {
    if (rank == 0) printf("poisson_gpu skipped: %s\n", parlops_last_error());
    CHECK(parlops_layout_destroy(&layout));
    if (comm != world) CHECK(parlops_comm_destroy(&comm));
    CHECK(parlops_comm_destroy(&world));
    MPI_Finalize();
    return 0;
  }
  CHECK(s);
  CHECK(parlops_vec_destroy(&probe));
  size_t need;
  CHECK(parlops_config_report(comm, NULL, 0, &need));
  char *report = malloc(need);
  CHECK(parlops_config_report(comm, report, need, NULL));
  if (rank == 0) printf("%s", report);
  free(report);

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

  double *b = malloc((len + 1) * sizeof(double)), *xh = malloc((len + 1) * sizeof(double)),
         *xd = malloc((len + 1) * sizeof(double));
  for (int64_t k = 0; k < len; ++k) b[k] = 1.0 + 0.5 * sin(0.001 * (double)(start + k));
  double th, td;
  int64_t ih = solve(comm, A, PARLOPS_MEMORY_HOST, b, xh, &th);
  int64_t id = solve(comm, A, PARLOPS_MEMORY_CUDA, b, xd, &td);
  double d[2] = {0.0, 0.0}, dm[2];
  for (int64_t k = 0; k < len; ++k) {
    d[0] = fmax(d[0], fabs(xd[k] - xh[k]));
    d[1] = fmax(d[1], fabs(xh[k]));
  }
  MPI_Allreduce(d, dm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double rel = dm[0] / dm[1];
  int ok = ih > 0 && ih == id && rel <= 1e-10;
  if (rank == 0)
    printf("poisson_gpu %lld unknowns%s: host CG %lld its (%.3f s), device CG %lld its (%.3f s), "
           "solution difference %.2e: %s\n",
           (long long)N, use_nccl ? " (NCCL)" : "", (long long)ih, th, (long long)id, td, rel,
           ok ? "ok" : "FAILED");
  free(b); free(xh); free(xd);
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&layout));
  if (comm != world) CHECK(parlops_comm_destroy(&comm));
  CHECK(parlops_comm_destroy(&world));
  MPI_Finalize();
  return ok ? 0 : 1;
}
