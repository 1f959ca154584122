/* make bench: what keeping parlops' per-phase timings on costs, and how much of a solve its phases
 * account for. CG on the 2D 5-point Poisson matrix (n x n rows, CSR), a fixed number of iterations
 * (rtol 0), timings on and off interleaved over `rounds` rounds; prints the median time per
 * iteration of each, their ratio (on / off: the cost), and the share of the solve's wall time that
 * the phases outside one another account for (PARLOPS_LOG_REST is the remainder).
 * Run: mpiexec -n 2 ./timing_bench [n=1000] [iterations=200] [rounds=7] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <parlops.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, parlops_last_error());                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000, its = argc > 2 ? atoll(argv[2]) : 200;
  int rounds = argc > 3 ? atoi(argv[3]) : 7;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  parlops_comm *comm;
  parlops_layout *l;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n * n, PARLOPS_DECIDE, &l));
  int64_t start, len;
  CHECK(parlops_layout_local_range(l, &start, &len));
  int64_t *rp = malloc(sizeof(int64_t) * (size_t)(len + 1)), *ci = malloc(sizeof(int64_t) * (size_t)(5 * len));
  double *va = malloc(sizeof(double) * (size_t)(5 * len));
  int64_t k = 0;
  rp[0] = 0;
  for (int64_t r = start; r < start + len; r++) {
    int64_t i = r / n, j = r % n;
    if (i > 0) ci[k] = r - n, va[k++] = -1.0;
    if (j > 0) ci[k] = r - 1, va[k++] = -1.0;
    ci[k] = r, va[k++] = 4.0;
    if (j < n - 1) ci[k] = r + 1, va[k++] = -1.0;
    if (i < n - 1) ci[k] = r + n, va[k++] = -1.0;
    rp[r - start + 1] = k;
  }
  parlops_op *A;
  parlops_vec *x, *b;
  CHECK(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &A));
  CHECK(parlops_op_create_vecs(A, &x, &b));
  CHECK(parlops_vec_fill(b, PARLOPS_REAL(1.0)));
  parlops_solver *s;
  CHECK(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s));
  CHECK(parlops_solver_set_operator(s, A));
  CHECK(parlops_solver_set_tolerances(s, 0.0, 0.0, 1e300, its));
  double *t[2] = {malloc(sizeof(double) * (size_t)rounds), malloc(sizeof(double) * (size_t)rounds)};
  double accounted = 1.0;
  CHECK(parlops_solver_solve(s, b, x)); /* warm-up */
  for (int r = 0; r < rounds; r++) {
    for (int on = 0; on < 2; on++) {
      int which = (r % 2) ? 1 - on : on; /* alternate the order within a round */
      CHECK(parlops_solver_set_timing(s, which));
      CHECK(parlops_vec_fill(x, PARLOPS_REAL(0.0)));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      CHECK(parlops_solver_solve(s, b, x));
      double dt = MPI_Wtime() - t0, mx;
      MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[which][r] = mx / (double)its;
      if (which) {
        double wall, rest;
        CHECK(parlops_solver_log(s, PARLOPS_LOG_SOLVE, NULL, &wall, NULL, NULL));
        CHECK(parlops_solver_log(s, PARLOPS_LOG_REST, NULL, &rest, NULL, NULL));
        double a = wall > 0 ? 1.0 - rest / wall : 0.0, amin;
        MPI_Allreduce(&a, &amin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        if (amin < accounted) accounted = amin;
      }
    }
  }
  qsort(t[0], (size_t)rounds, sizeof(double), cmp);
  qsort(t[1], (size_t)rounds, sizeof(double), cmp);
  double off = t[0][rounds / 2], on = t[1][rounds / 2];
  if (rank == 0)
    printf("timings: CG on %lld rows, %d rank(s), %lld iterations x %d rounds: %.4f ms/it with timings, %.4f ms/it "
           "without, ratio %.4f; the phases account for %.1f%% of the solve (least over rounds and ranks)\n",
           (long long)(n * n), size, (long long)its, rounds, 1e3 * on, 1e3 * off, on / off, 100.0 * accounted);
  CHECK(parlops_solver_destroy(&s));
  CHECK(parlops_vec_destroy(&x));
  CHECK(parlops_vec_destroy(&b));
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&l));
  CHECK(parlops_comm_destroy(&comm));
  free(rp), free(ci), free(va), free(t[0]), free(t[1]);
  MPI_Finalize();
  return 0;
}
