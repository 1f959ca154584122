/* Krylov subspace recycling on a sequence of systems, in one interleaved run, each system solved to
 * rtol from the previous solution (b = 1):
 *   convdiff  parlops' GCRO-DR(m, k) next to GMRES(m0) on `systems` convection-diffusion systems
 *             whose convection coefficient drifts by 2% a step (the 2D 5-point Laplacian plus
 *             first-order upwind convection of benches/versus.c, c = c0 1.02^s, n x n);
 *   spd       deflated CG (k vectors; m, m0 unused) next to CG on anisotropic diffusion systems
 *             (-(1 + a) d2/dx2 - d2/dy2, 5-point, a = c0 1.02^s).
 * The matrix's values change in place (parlops_op_csr_update_values); with `pc` = ilu (ic) each
 * system gets block Jacobi ILU(0) (IC(0)) of its own matrix, built before the solve (not timed).
 * Per round and method: the operator applications of the whole sequence (counted by parlops'
 * own log, parlops_solver_log: GCRO-DR's A M U at each solve and every true residual included),
 * the iterations, and the wall time of the solves (the slowest rank's). Every solve must converge
 * with its true residual ||b - A x|| <= rtol ||b|| (recomputed here; exit 1 otherwise).
 * Reported: the applications' ratio GCRO-DR / GMRES, and the time ratio as the median of each
 * round's own ratio (the methods alternate which goes first). The JSON rows (tools/bench_report.py)
 * give the applications as "iterations" and the sequence's time as "ms_per_it".
 * Usage: recycle kind(convdiff|spd) rounds n systems m k m0 rtol c0 pc(none|ilu|ic) [json] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parlops.h>

#include "bench_util.h"


static int rank_, size_, spd_;


/* the values of rows [start, start + len) for convection (anisotropy) c, in the order of the pattern */
static void values(int64_t n, int64_t start, int64_t len, double c, double *va) {
  int64_t nz = 0;
  for (int64_t r = start; r < start + len; ++r) {
    int64_t i = r / n, j = r % n;
    if (spd_) {
      if (i > 0) va[nz++] = -1.0;
      if (j > 0) va[nz++] = -1.0 - c;
      va[nz++] = 2.0 * (1.0 + c) + 2.0;
      if (j < n - 1) va[nz++] = -1.0 - c;
      if (i < n - 1) va[nz++] = -1.0;
      continue;
    }
    if (i > 0) va[nz++] = -1.0 - c;
    if (j > 0) va[nz++] = -1.0 - c;
    va[nz++] = 4.0 + 2 * c;
    if (j < n - 1) va[nz++] = -1.0;
    if (i < n - 1) va[nz++] = -1.0;
  }
}

static const char *mname(int method) {
  switch (method) {
    case PARLOPS_METHOD_GCRODR: return "GCRO-DR";
    case PARLOPS_METHOD_CG_DEFLATED: return "deflated CG";
    case PARLOPS_METHOD_CG: return "CG";
    default: return "GMRES";
  }
}

typedef struct {
  int64_t apps, iters;
  double seconds;
} Run;

/* one sequence with a fresh solver of `method` */
static Run sequence(parlops_comm *comm, parlops_op *A, double *va, int64_t nnz, int64_t n, int64_t start,
                    int64_t len, int systems, int method, int m, int k, double rtol, double c0, int ilu,
                    parlops_vec *b, parlops_vec *x, parlops_vec *r) {
  parlops_solver *s = NULL;
  CHECKP(parlops_solver_create(comm, method, &s));
  if (method == PARLOPS_METHOD_GCRODR || method == PARLOPS_METHOD_GMRES) CHECKP(parlops_solver_set_restart(s, m));
  if (method == PARLOPS_METHOD_GCRODR || method == PARLOPS_METHOD_CG_DEFLATED) CHECKP(parlops_solver_set_recycle(s, k));
  CHECKP(parlops_solver_set_tolerances(s, rtol, 0.0, 1e10, 1000000));
  CHECKP(parlops_solver_set_initial_guess_nonzero(s, true));
  CHECKP(parlops_solver_set_timing(s, true));
  CHECKP(parlops_solver_set_operator(s, A));
  CHECKP(parlops_vec_fill(x, PARLOPS_REAL(0.0)));
  double bn = 0;
  CHECKP(parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn));
  Run out = {0, 0, 0.0};
  for (int st = 0; st < systems; ++st) {
    values(n, start, len, c0 * pow(1.02, st), va);
    CHECKP(parlops_op_csr_update_values(A, nnz, va, 0, NULL));
    parlops_op *M = NULL;
    if (ilu) {
      CHECKP(parlops_op_create_block_jacobi(A, ilu == 2 ? PARLOPS_LOCAL_IC0 : PARLOPS_LOCAL_ILU0, 0.0, &M));
      CHECKP(parlops_solver_set_preconditioner(s, M));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECKP(parlops_solver_solve(s, b, x));
    double t = MPI_Wtime() - t0, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out.seconds += tmax;
    parlops_solve_info info;
    CHECKP(parlops_solver_info(s, &info));
    int64_t apps = 0;
    CHECKP(parlops_solver_log(s, PARLOPS_LOG_OPERATOR, &apps, NULL, NULL, NULL));
    out.apps += apps;
    out.iters += info.iterations;
    CHECKP(parlops_op_apply(A, x, r));
    CHECKP(parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0)));
    double rn = 0;
    CHECKP(parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn));
    if (info.reason <= 0 || !(rn <= rtol * bn * (1 + 1e-6))) {
      if (rank_ == 0)
        fprintf(stderr, "recycle: %s system %d: reason %d after %lld iterations, true residual %.3e > %.1e ||b||\n",
                mname(method), st, (int)info.reason,
                (long long)info.iterations, rn / bn, rtol);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (M) {
      CHECKP(parlops_solver_set_preconditioner(s, NULL));
      CHECKP(parlops_op_destroy(&M));
    }
  }
  CHECKP(parlops_solver_destroy(&s));
  return out;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (argc < 11) {
    if (rank_ == 0) fprintf(stderr, "usage: recycle kind(convdiff|spd) rounds n systems m k m0 rtol c0 pc(none|ilu|ic) [json]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  spd_ = strcmp(argv[1], "spd") == 0;
  argv++;
  argc--;
  int rounds = atoi(argv[1]), systems = atoi(argv[3]), m = atoi(argv[4]), k = atoi(argv[5]), m0 = atoi(argv[6]);
  int64_t n = atoll(argv[2]);
  double rtol = atof(argv[7]), c0 = atof(argv[8]);
  int ilu = strcmp(argv[9], "ilu") == 0 ? 1 : strcmp(argv[9], "ic") == 0 ? 2 : 0;
  int rec_m = spd_ ? PARLOPS_METHOD_CG_DEFLATED : PARLOPS_METHOD_GCRODR, peer_m = spd_ ? PARLOPS_METHOD_CG : PARLOPS_METHOD_GMRES;
  const char *json = argc > 10 ? argv[10] : NULL;
  if (rounds < 1 || rounds > 256) rounds = 3;
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
    if (i > 0) ci[nz++] = row - n;
    if (j > 0) ci[nz++] = row - 1;
    ci[nz++] = row;
    if (j < n - 1) ci[nz++] = row + 1;
    if (i < n - 1) ci[nz++] = row + n;
    rp[row - start + 1] = nz;
  }
  values(n, start, len, c0, va);
  parlops_op *A = NULL;
  CHECKP(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &A));
  parlops_vec *b = NULL, *x = NULL, *r = NULL;
  CHECKP(parlops_op_create_vecs(A, &x, &b));
  CHECKP(parlops_vec_duplicate(b, &r));
  CHECKP(parlops_vec_fill(b, PARLOPS_REAL(1.0)));
  if (rank_ == 0)
    printf("recycle: %d %s systems, %lld x %lld grid (%lld rows), %s = %g x 1.02^s, rtol %g, "
           "each from the previous solution, %s, %d rank(s)\n",
           systems, spd_ ? "anisotropic diffusion" : "convection-diffusion", (long long)n, (long long)n, (long long)N,
           spd_ ? "anisotropy a" : "c", c0, rtol,
           ilu == 2 ? "block Jacobi IC(0) of each matrix" : ilu ? "block Jacobi ILU(0) of each matrix" : "no preconditioner",
           size_);
  double ratio_t[256], t_r[256], t_g[256];
  Run rr = {0}, rg = {0};
  for (int round = 0; round < rounds; ++round) {
    for (int o = 0; o < 2; ++o) {
      int rec = (o + round) % 2 == 0;
      Run x_ = sequence(comm, A, va, nz, n, start, len, systems, rec ? rec_m : peer_m, rec ? m : m0, k, rtol, c0, ilu,
                        b, x, r);
      if (rec)
        rr = x_;
      else
        rg = x_;
    }
    t_r[round] = rr.seconds;
    t_g[round] = rg.seconds;
    ratio_t[round] = rr.seconds / rg.seconds;
    if (rank_ == 0)
      printf("  round %d: %s %lld applications, %lld iterations, %.3f s; %s %lld applications, "
             "%lld iterations, %.3f s\n",
             round, mname(rec_m), (long long)rr.apps, (long long)rr.iters, rr.seconds, mname(peer_m),
             (long long)rg.apps, (long long)rg.iters, rg.seconds);
  }
  double ra = (double)rr.apps / (double)rg.apps, rt = median(ratio_t, rounds);
  char rname[64], pname[64];
  if (spd_) {
    snprintf(rname, sizeof rname, "deflated CG (k %d)", k);
    snprintf(pname, sizeof pname, "CG");
  } else {
    snprintf(rname, sizeof rname, "GCRO-DR(%d, %d)", m, k);
    snprintf(pname, sizeof pname, "GMRES(%d)", m0);
  }
  if (rank_ == 0) {
    printf("recycle: %s / %s: operator applications %lld / %lld = %.2f (%.0f%% fewer); "
           "time %.3f / %.3f s, ratio %.2f (median of %d rounds)\n",
           rname, pname, (long long)rr.apps, (long long)rg.apps, ra, 100 * (1 - ra), median(t_r, rounds),
           median(t_g, rounds), rt, rounds);
    if (json) {
      /* GMRES/CG first (the peer), "iterations" the operator applications of the sequence,
         "ms_per_it" the sequence's time */
      char prob[96], n0[96], n1[96], extra[48];
      snprintf(prob, sizeof prob, "recycling: %d drifting %s systems%s", systems, spd_ ? "anisotropic" : "convdiff",
               ilu == 2 ? ", block Jacobi IC(0)" : ilu ? ", block Jacobi ILU(0)" : "");
      snprintf(n0, sizeof n0, "parlops %s", pname);
      snprintf(n1, sizeof n1, "parlops %s", rname);
      snprintf(extra, sizeof extra, ",\"apps_ratio\":%.4f", ra);
      const char *names[2] = {n0, n1};
      const double *t[2] = {t_g, t_r};
      long long apps[2] = {(long long)rg.apps, (long long)rr.apps};
      bench_json_pair(json, prob, (long long)N, size_, names, t, rounds, apps, rt, extra);
    }
  }
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
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
