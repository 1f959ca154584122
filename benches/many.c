/* Several right-hand sides of one operator, in one interleaved run: parlops_solver_solve_many (block
 * CG: the operator applied to the whole block at once, the CSR matrix read once for all columns)
 * next to k sequential parlops_solver_solve calls of CG, on the 2D 5-point Poisson matrix (n x n,
 * assembled as CSR), k Gaussian random right-hand sides, each column to rtol from x = 0.
 * Per round and way: the wall time of all k solves (the slowest rank's), the iterations (block CG's
 * for the block; the sum and the largest of CG's), the operator applications (parlops' own log:
 * one per vector). Every column's true residual ||b_j - A x_j|| <= rtol ||b_j|| is recomputed here
 * (exit 1 otherwise). Reported: the time ratio block / sequential as the median of each round's
 * own ratio (the two ways alternate which goes first). The JSON rows (tools/bench_report.py) give
 * the iterations and the time of all k solves as "ms_per_it".
 * Usage: many rounds n k rtol [json] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parlops.h>

#include "bench_util.h"


enum { MAXK = 64 };
static int rank_, size_;


typedef struct {
  int64_t iters, most, apps;
  double seconds;
} Run;

/* the k solves, as one block (`block`) or one after another */
static Run solve(parlops_comm *comm, parlops_op *A, int k, double rtol, int block, parlops_vec **b, parlops_vec **x,
                 parlops_vec *r) {
  parlops_solver *s = NULL;
  CHECKP(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s));
  CHECKP(parlops_solver_set_tolerances(s, rtol, 0.0, 1e10, 1000000));
  CHECKP(parlops_solver_set_timing(s, true));
  CHECKP(parlops_solver_set_operator(s, A));
  Run out = {0, 0, 0, 0.0};
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (block) {
    CHECKP(parlops_solver_solve_many(s, k, (const parlops_vec *const *)b, x));
    int64_t apps = 0;
    CHECKP(parlops_solver_log(s, PARLOPS_LOG_OPERATOR, &apps, NULL, NULL, NULL));
    out.apps = apps;
  } else {
    for (int j = 0; j < k; j++) {
      CHECKP(parlops_solver_solve(s, b[j], x[j]));
      int64_t apps = 0;
      CHECKP(parlops_solver_log(s, PARLOPS_LOG_OPERATOR, &apps, NULL, NULL, NULL));
      out.apps += apps;
      parlops_solve_info info;
      CHECKP(parlops_solver_info(s, &info));
      out.iters += info.iterations;
      if (info.iterations > out.most) out.most = info.iterations;
    }
  }
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  out.seconds = tmax;
  for (int j = 0; j < k; j++) {
    parlops_solve_info info;
    if (block) {
      CHECKP(parlops_solver_info_column(s, j, &info));
      out.iters = out.most = info.iterations;
    } else {
      info.reason = PARLOPS_CONVERGED_RTOL;
    }
    double bn = 0, rn = 0;
    CHECKP(parlops_op_apply(A, x[j], r));
    CHECKP(parlops_vec_axpby(r, PARLOPS_REAL(1.0), b[j], PARLOPS_REAL(-1.0)));
    CHECKP(parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn));
    CHECKP(parlops_vec_norm(b[j], PARLOPS_NORM_2, 0, &bn));
    if (info.reason <= 0 || !(rn <= rtol * bn * (1 + 1e-6))) {
      if (rank_ == 0)
        fprintf(stderr, "many: %s column %d: reason %d, true residual %.3e > %.1e ||b||\n",
                block ? "block CG" : "CG", j, (int)info.reason, rn / bn, rtol);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CHECKP(parlops_vec_fill(x[j], PARLOPS_REAL(0.0)));
  }
  CHECKP(parlops_solver_destroy(&s));
  return out;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (argc < 5) {
    if (rank_ == 0) fprintf(stderr, "usage: many rounds n k rtol [json]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]), k = atoi(argv[3]);
  int64_t n = atoll(argv[2]);
  double rtol = atof(argv[4]);
  const char *json = argc > 5 ? argv[5] : NULL;
  if (rounds < 1 || rounds > 256) rounds = 3;
  if (k < 1 || k > MAXK) k = 8;
  parlops_comm *comm = NULL;
  CHECKP(parlops_comm_create(MPI_COMM_WORLD, &comm));
  int64_t N = n * n, len = 0, start = 0;
  parlops_layout *l = bench_rows(comm, N, &start, &len);
  int64_t *rp = malloc((size_t)(len + 1) * sizeof *rp), *ci = malloc((size_t)(5 * len + 1) * sizeof *ci);
  double *va = malloc((size_t)(5 * len + 1) * sizeof *va);
  int64_t nz = 0;
  rp[0] = 0;
  for (int64_t row = start; row < start + len; ++row) {
    int64_t i = row / n, j = row % n;
    if (i > 0) ci[nz] = row - n, va[nz++] = -1.0;
    if (j > 0) ci[nz] = row - 1, va[nz++] = -1.0;
    ci[nz] = row, va[nz++] = 4.0;
    if (j < n - 1) ci[nz] = row + 1, va[nz++] = -1.0;
    if (i < n - 1) ci[nz] = row + n, va[nz++] = -1.0;
    rp[row - start + 1] = nz;
  }
  parlops_op *A = NULL;
  CHECKP(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &A));
  parlops_vec *b[MAXK], *x[MAXK], *r = NULL;
  for (int j = 0; j < k; j++) {
    CHECKP(parlops_op_create_vecs(A, &x[j], &b[j]));
    CHECKP(parlops_vec_set_random(b[j], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(100 + j)));
  }
  CHECKP(parlops_vec_duplicate(b[0], &r));
  if (rank_ == 0)
    printf("many: %d Gaussian right-hand sides of the 2D Poisson matrix (CSR, %lld x %lld grid, %lld rows), rtol %g "
           "from x = 0, %d rank(s)\n",
           k, (long long)n, (long long)n, (long long)N, rtol, size_);
  double ratio[256], tb[256], ts[256];
  Run rb = {0}, rs = {0};
  for (int round = 0; round < rounds; ++round) {
    for (int o = 0; o < 2; ++o) {
      int block = (o + round) % 2 == 0;
      Run v = solve(comm, A, k, rtol, block, b, x, r);
      if (block)
        rb = v;
      else
        rs = v;
    }
    tb[round] = rb.seconds;
    ts[round] = rs.seconds;
    ratio[round] = rb.seconds / rs.seconds;
    if (rank_ == 0)
      printf("  round %d: block CG %lld iterations, %lld applications, %.3f s; %d CG solves %lld iterations (at most "
             "%lld), %lld applications, %.3f s\n",
             round, (long long)rb.iters, (long long)rb.apps, rb.seconds, k, (long long)rs.iters, (long long)rs.most,
             (long long)rs.apps, rs.seconds);
  }
  double rt = median(ratio, rounds);
  if (rank_ == 0) {
    printf("many: block CG of %d columns / %d CG solves: time %.3f / %.3f s, ratio %.2f (median of %d rounds); "
           "iterations %lld against %lld (at most %lld a column); applications %lld / %lld\n",
           k, k, median(tb, rounds), median(ts, rounds), rt, rounds, (long long)rb.iters, (long long)rs.iters,
           (long long)rs.most, (long long)rb.apps, (long long)rs.apps);
    if (json) {
      char prob[96], n0[96], n1[96];
      snprintf(prob, sizeof prob, "%d right-hand sides: 2D Poisson (CSR)", k);
      snprintf(n0, sizeof n0, "parlops CG x %d", k);
      snprintf(n1, sizeof n1, "parlops block CG (%d)", k);
      const char *names[2] = {n0, n1};
      const double *t[2] = {ts, tb};
      long long its[2] = {(long long)rs.iters, (long long)rb.iters};
      bench_json_pair(json, prob, (long long)N, size_, names, t, rounds, its, rt, "");
    }
  }
  for (int j = 0; j < k; j++) {
    parlops_vec_destroy(&b[j]);
    parlops_vec_destroy(&x[j]);
  }
  parlops_vec_destroy(&r);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&comm);
  free(rp);
  free(ci);
  free(va);
  MPI_Finalize();
  return 0;
}
