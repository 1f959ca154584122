/* Feeds every solver function bad input (including on one rank only) and checks statuses and
 * converged reasons on every rank: indefinite matrix, NaN right-hand side, max iterations, a monitor
 * stopping on one rank, a callback operator failing on one rank in the middle of a solve, Jacobi on
 * a zero diagonal. Each case runs under an alarm. Run at 1 and 3 ranks.
 * Prints "bad_input_solver: N passed, M failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <mpi.h>

#include "expect.h"

static int fail_rank = -1, fail_after = 0, calls = 0;

/* y = 2 x + (shift) on local parts; fails (returns 5) on fail_rank after fail_after calls */
static int diag_fwd(void *ctx, const void *x, void *y) {
  const int64_t *len = ctx;
  for (int64_t i = 0; i < *len; ++i) ((double *)y)[i] = 2.0 * ((const double *)x)[i];
  calls++;
  return (rank_ == fail_rank && calls > fail_after) ? 5 : 0;
}

static int stop_rank = -1;
static int monitor(void *ctx, int64_t it, double rnorm) {
  (void)ctx;
  (void)rnorm;
  return rank_ == stop_rank && it >= 2;
}

/* iterate monitor: checks that r = b - A x has the norm the method tests (CG: the true residual) to
   1e-8 ||b||, and declares convergence on every rank from iteration `conv_at` on (stop_rank stops) */
static int conv_at = -1, iterate_calls = 0, iterate_bad = 0;
static double iterate_bnorm = 1.0;
static int monitor_iterate(void *ctx, int64_t it, double rnorm, const parlops_vec *x, const parlops_vec *r) {
  (void)ctx;
  double nr = -1, nx = -1;
  iterate_calls++;
  if (parlops_vec_norm(r, PARLOPS_NORM_2, 0.0, &nr) != PARLOPS_OK || parlops_vec_norm(x, PARLOPS_NORM_2, 0.0, &nx) != PARLOPS_OK ||
      fabs(nr - rnorm) > 1e-8 * iterate_bnorm || !(nx >= 0))
    iterate_bad++;
  if (rank_ == stop_rank && it >= 2) return PARLOPS_MONITOR_STOP;
  return conv_at >= 0 && it >= conv_at ? PARLOPS_MONITOR_CONVERGED : PARLOPS_MONITOR_CONTINUE;
}

static void expect_reason(const char *name, parlops_solver *s, parlops_reason want) {
  parlops_solve_info info;
  parlops_status st = parlops_solver_info(s, &info);
  expect(name, st == PARLOPS_OK && info.reason == want ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (info.reason != want) fprintf(stderr, "rank %d: %s: reason %d, wanted %d\n", rank_, name, (int)info.reason, (int)want);
}

/* A converged reason must come with a true residual that meets the rule: ||b - A x|| is recomputed
   here and checked against max(rtol ||b||, atol) (1% slack and rounding of the recomputation). */
static void expect_converged(const char *name, parlops_solver *s, const parlops_op *A, const parlops_vec *b,
                             const parlops_vec *x, double rtol, double atol) {
  parlops_solve_info info;
  parlops_vec *r = NULL;
  double rn = -1.0, bn = -1.0, xn = -1.0;
  int ok = parlops_solver_info(s, &info) == PARLOPS_OK && info.reason > 0 && parlops_vec_duplicate(b, &r) == PARLOPS_OK &&
           parlops_op_apply(A, x, r) == PARLOPS_OK && parlops_vec_axpby(r, PARLOPS_REAL(1), b, PARLOPS_REAL(-1)) == PARLOPS_OK &&
           parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn) == PARLOPS_OK && parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn) == PARLOPS_OK &&
           parlops_vec_norm(x, PARLOPS_NORM_2, 0, &xn) == PARLOPS_OK;
  double target = rtol * bn > atol ? rtol * bn : atol;
  ok = ok && rn <= 1.01 * target + 1e-13 * (bn + xn);
  if (!ok)
    fprintf(stderr, "rank %d: %s: reason %d, true residual %g, target %g\n", rank_, name, (int)info.reason, rn, target);
  expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_vec_destroy(&r);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(30);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int last = size_ - 1, one = size_ > 1;

  parlops_comm *c = NULL, *c2 = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c2), PARLOPS_OK, NULL);
  parlops_layout *l = NULL, *l2 = NULL, *lo = NULL;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 20, -1, &l), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 13, -1, &l2), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c2, PARLOPS_PARTITION_SCATTER, 20, -1, &lo), PARLOPS_OK, NULL);
  int64_t start, len;
  parlops_layout_local_range(l, &start, &len);

  /* a tridiagonal SPD matrix, an indefinite one, a zero-diagonal one */
  int64_t rp[32], ci[96];
  double v[96], vi[96], vz[96], vn[96];
  int64_t nnz = 0;
  rp[0] = 0;
  for (int64_t i = start; i < start + len; ++i) {
    for (int64_t j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= 20) continue;
      ci[nnz] = j;
      v[nnz] = j == i ? 2.5 : -1.0;
      vi[nnz] = j == i ? 0.5 : -1.0;
      vz[nnz] = j == i ? 0.0 : -1.0;
      vn[nnz] = j == i ? 2.5 : j < i ? -1.0 : -0.2;
      nnz++;
    }
    rp[i - start + 1] = nnz;
  }
  parlops_op *A = NULL, *Ai = NULL, *Az = NULL, *R = NULL, *Ao = NULL, *S = NULL, *N = NULL;
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &A), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, vi, &Ai), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, vz, &Az), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, vn, &N), PARLOPS_OK, NULL);
  EXPECT(parlops_op_zero(l2, l, PARLOPS_F64, &R), PARLOPS_OK, NULL);
  EXPECT(parlops_op_identity(lo, PARLOPS_F64, &Ao), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, diag_fwd, diag_fwd, NULL, &S), PARLOPS_OK, NULL);

  parlops_vec *b = NULL, *x = NULL, *bf = NULL, *b2 = NULL;
  EXPECT(parlops_op_create_vecs(A, &x, &b), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_fill(b, PARLOPS_REAL(1)), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F32, PARLOPS_MEMORY_HOST, &bf), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l2, PARLOPS_F64, PARLOPS_MEMORY_HOST, &b2), PARLOPS_OK, NULL);

  /* ---- create and settings */
  parlops_solver *s = NULL;
  parlops_solve_info info0;
  EXPECT(parlops_solver_create(NULL, PARLOPS_METHOD_CG, &s), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_solver_create(c, 99, &s), PARLOPS_ERR_INVALID_ARGUMENT, "method");
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INVALID_ARGUMENT, "no operator");
  EXPECT(parlops_solver_set_operator(s, R), PARLOPS_ERR_SIZE_MISMATCH, "square");
  EXPECT(parlops_solver_set_operator(s, Ao), PARLOPS_ERR_LAYOUT_MISMATCH, "communicator");
  EXPECT(parlops_solver_set_operator(NULL, A), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_operator(s, NULL), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_solver_set_tolerances(s, -1.0, 0, 1e5, 100), PARLOPS_ERR_INVALID_ARGUMENT, "rtol -1");
  EXPECT(parlops_solver_set_tolerances(s, NAN, 0, 1e5, 100), PARLOPS_ERR_INVALID_ARGUMENT, "NaN");
  EXPECT(parlops_solver_set_tolerances(s, 1e-8, 0, 0.0, 100), PARLOPS_ERR_INVALID_ARGUMENT, "dtol");
  EXPECT(parlops_solver_set_tolerances(s, 1e-8, 0, 1e5, -5), PARLOPS_ERR_INVALID_ARGUMENT, "max_iter -5");
  EXPECT(parlops_solver_set_restart(s, 0), PARLOPS_ERR_INVALID_ARGUMENT, "restart");
  EXPECT(parlops_solver_set_damping(s, -1.0), PARLOPS_ERR_INVALID_ARGUMENT, "damp");
  EXPECT(parlops_solver_set_sparsity(s, 7, 0.1, 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "kind");
  EXPECT(parlops_solver_set_sparsity(s, PARLOPS_THRESHOLD_SOFT, -0.1, 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "eps");
  EXPECT(parlops_solver_set_cost_tolerances(s, -0.1, 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "rtol");
  EXPECT(parlops_solver_set_cost_tolerances(s, 0.0, NAN), PARLOPS_ERR_INVALID_ARGUMENT, "rtol1");
  EXPECT(parlops_solver_set_cost_tolerances(NULL, 0.1, 0.0), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_preconditioner(s, Ao), PARLOPS_ERR_LAYOUT_MISMATCH, NULL);
  EXPECT(parlops_solver_set_norm_type(s, 5), PARLOPS_ERR_INVALID_ARGUMENT, "norm_type");
  EXPECT(parlops_solver_set_norm_type(NULL, PARLOPS_NORM_TYPE_NATURAL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_convergence_reference(s, 2), PARLOPS_ERR_INVALID_ARGUMENT, "reference");
  EXPECT(parlops_solver_set_convergence_reference(s, -1), PARLOPS_ERR_INVALID_ARGUMENT, "reference");
  EXPECT(parlops_solver_set_convergence_reference(NULL, PARLOPS_REFERENCE_RHS), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_sum_order(s, 3), PARLOPS_ERR_INVALID_ARGUMENT, "order");
  EXPECT(parlops_solver_set_sum_order(s, -1), PARLOPS_ERR_INVALID_ARGUMENT, "order");
  EXPECT(parlops_solver_set_sum_order(NULL, PARLOPS_SUM_SEQUENTIAL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_null_space(NULL, true, 0, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_null_space(s, true, -1, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "'n'");
  EXPECT(parlops_solver_set_null_space(s, false, 2, NULL), PARLOPS_ERR_NULL_ARGUMENT, "vecs");
  {
    const parlops_vec *nv[2] = {b, NULL};
    EXPECT(parlops_solver_set_null_space(s, false, 2, nv), PARLOPS_ERR_NULL_ARGUMENT, "vecs[1]");
  }
  EXPECT(parlops_solver_set_null_space(s, false, 0, NULL), PARLOPS_OK, NULL);
  {
    parlops_solver *ls = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CGLS, &ls), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_null_space(ls, true, 0, NULL), PARLOPS_ERR_NOT_SUPPORTED, "least squares");
    EXPECT(parlops_solver_destroy(&ls), PARLOPS_OK, NULL);
  }
  EXPECT(parlops_solver_set_initial_guess_nonzero(NULL, true), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_keep_history(NULL, true), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_monitor(NULL, monitor, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_monitor_iterate(NULL, monitor_iterate, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_monitor_iterate((parlops_solver *)b, monitor_iterate, NULL), PARLOPS_ERR_INVALID_HANDLE, "'s'");
  EXPECT(parlops_solver_set_trust_region(NULL, 1.0), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_trust_region(s, -1.0), PARLOPS_ERR_INVALID_ARGUMENT, "radius");
  EXPECT(parlops_solver_set_trust_region(s, 0.0 / 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "radius");
  EXPECT(parlops_solver_set_trust_region(s, 1.0 / 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "radius");
  {
    parlops_solver *g = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_MINRES, &g), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_trust_region(g, 1.0), PARLOPS_ERR_NOT_SUPPORTED, "PARLOPS_METHOD_CG");
    EXPECT(parlops_solver_set_trust_region(g, 0.0), PARLOPS_OK, NULL);
    parlops_solver_destroy(&g);
  }
  EXPECT(parlops_solver_set_jacobi(NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_restart(NULL, 5), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_recycle(NULL, 5), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_recycle(s, 5), PARLOPS_ERR_NOT_SUPPORTED, "GCRO-DR");
  {
    /* deflated CG: k differing on one rank is refused on every rank; a kept space of another layout too */
    parlops_solver *dc = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG_DEFLATED, &dc), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_recycle(dc, 10001), PARLOPS_ERR_INVALID_ARGUMENT, "'k'");
    EXPECT(parlops_solver_set_operator(dc, A), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_tolerances(dc, 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_recycle(dc, 3), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(dc, b, x), PARLOPS_OK, NULL);
    expect_reason("deflated CG converges", dc, PARLOPS_CONVERGED_RTOL);
    expect_converged("deflated CG: true residual", dc, A, b, x, 1e-10, 0.0);
    EXPECT(parlops_solver_solve(dc, b, x), PARLOPS_OK, NULL);
    expect_converged("deflated CG with its kept space: true residual", dc, A, b, x, 1e-10, 0.0);
    if (one) {
      EXPECT(parlops_solver_set_recycle(dc, rank_ == last ? 2 : 3), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve(dc, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "recycle");
    }
    EXPECT(parlops_solver_destroy(&dc), PARLOPS_OK, NULL);
  }
  EXPECT(parlops_solver_set_damping(NULL, 0.5), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_richardson_scale(NULL, 0.5), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_set_richardson_scale(s, 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "scale");
  EXPECT(parlops_solver_set_richardson_scale(s, -1.0), PARLOPS_ERR_INVALID_ARGUMENT, "scale");
  EXPECT(parlops_solver_set_richardson_scale(s, 0.0 / 0.0), PARLOPS_ERR_INVALID_ARGUMENT, "scale");
  EXPECT(parlops_solver_set_sparsity(NULL, PARLOPS_THRESHOLD_SOFT, 0.1, 0.0), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_info(NULL, &info0), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  {
    parlops_solver *g = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_GMRES, &g), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_norm_type(g, PARLOPS_NORM_TYPE_NATURAL), PARLOPS_ERR_NOT_SUPPORTED, "natural");
    EXPECT(parlops_solver_set_norm_type(g, PARLOPS_NORM_TYPE_UNPRECONDITIONED), PARLOPS_OK, NULL);
    parlops_solver_destroy(&g);
  }
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);

  /* ---- solve arguments, including on one rank only */
  EXPECT(parlops_solver_solve(s, b, b), PARLOPS_ERR_INVALID_ARGUMENT, "same vector");
  EXPECT(parlops_solver_solve(s, NULL, x), PARLOPS_ERR_NULL_ARGUMENT, "'b'");
  EXPECT(parlops_solver_solve(s, bf, x), PARLOPS_ERR_DTYPE_MISMATCH, "PARLOPS_F32");
  EXPECT(parlops_solver_solve(s, b2, x), PARLOPS_ERR_SIZE_MISMATCH, "13");
  if (one) {
    EXPECT(parlops_solver_solve(s, rank_ == last ? b2 : b, x), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(parlops_solver_solve(s, b, rank_ == 0 ? NULL : x), PARLOPS_ERR_NULL_ARGUMENT, NULL);
  }
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("SPD converges", s, PARLOPS_CONVERGED_RTOL);
  expect_converged("SPD converges: true residual", s, A, b, x, 1e-10, 0.0);
  parlops_solve_info info;
  EXPECT(parlops_solver_info(s, NULL), PARLOPS_ERR_NULL_ARGUMENT, "info");
  EXPECT(parlops_solver_info(s, &info), PARLOPS_OK, NULL);
  expect("iterations counted", info.iterations > 0 && info.iterations <= 20 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  {
    /* several right-hand sides (block CG): each column's true residual; bad input on every rank */
    parlops_vec *y = NULL, *z = NULL;
    EXPECT(parlops_vec_duplicate(x, &y), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_duplicate(x, &z), PARLOPS_OK, NULL);
    const parlops_vec *bb[2] = {b, b}, *bx[2] = {b, y}, *bd[2] = {bf, b}, *bs2[2] = {b, b2};
    parlops_vec *xx[2] = {y, z}, *xsame[2] = {y, y};
    EXPECT(parlops_solver_solve_many(s, 2, bb, xx), PARLOPS_OK, NULL);
    expect_converged("solve_many column 0: true residual", s, A, b, y, 1e-10, 0.0);
    expect_converged("solve_many column 1: true residual", s, A, b, z, 1e-10, 0.0);
    parlops_solve_info ci;
    EXPECT(parlops_solver_info_column(s, 1, &ci), PARLOPS_OK, NULL);
    expect("solve_many: column 1 converged", ci.reason > 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_solver_info_column(s, 2, &ci), PARLOPS_ERR_INVALID_ARGUMENT, "'j'");
    EXPECT(parlops_solver_info_column(s, -1, &ci), PARLOPS_ERR_INVALID_ARGUMENT, "'j'");
    EXPECT(parlops_solver_info_column(s, 0, NULL), PARLOPS_ERR_NULL_ARGUMENT, "info");
    EXPECT(parlops_solver_solve_many(s, 0, NULL, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve_many(s, -1, bb, xx), PARLOPS_ERR_INVALID_ARGUMENT, "'n'");
    EXPECT(parlops_solver_solve_many(s, 2, NULL, xx), PARLOPS_ERR_NULL_ARGUMENT, "'b'");
    EXPECT(parlops_solver_solve_many(s, 2, bb, xsame), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_solver_solve_many(s, 2, bx, xx), PARLOPS_ERR_INVALID_ARGUMENT, "same vector");
    EXPECT(parlops_solver_solve_many(s, 2, bd, xx), PARLOPS_ERR_DTYPE_MISMATCH, "column 0");
    EXPECT(parlops_solver_solve_many(s, 2, bs2, xx), PARLOPS_ERR_SIZE_MISMATCH, "column 1");
    if (one) {
      /* eigenvalue estimates asked for on one rank only (a setting ranks may differ in): the same
         block solve everywhere */
      EXPECT(parlops_solver_set_compute_eigenvalues(s, rank_ == last), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve_many(s, 2, bb, xx), PARLOPS_OK, NULL);
      expect_converged("solve_many, estimates on one rank: column 1", s, A, b, z, 1e-10, 0.0);
      EXPECT(parlops_solver_set_compute_eigenvalues(s, false), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve_many(s, rank_ == last ? 1 : 2, bb, xx), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
             "right-hand sides");
      EXPECT(parlops_solver_solve_many(s, 2, rank_ == last ? bs2 : bb, xx), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    }
    parlops_vec_destroy(&y);
    parlops_vec_destroy(&z);
  }

  /* settings that differ on one rank: every rank refuses the solve instead of stopping apart */
  if (one) {
    EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0, 1e5, rank_ == last ? 7 : 1000), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "differ");
    EXPECT(parlops_solver_set_tolerances(s, rank_ == 0 ? 1e-9 : 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "differ");
    EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);
    if (rank_ == last) EXPECT(parlops_solver_set_monitor(s, monitor, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "differ");
    EXPECT(parlops_solver_set_monitor(s, NULL, NULL), PARLOPS_OK, NULL);
    if (rank_ == 0) EXPECT(parlops_solver_set_monitor_iterate(s, monitor_iterate, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "iterate monitor");
    EXPECT(parlops_solver_set_monitor_iterate(s, NULL, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_trust_region(s, rank_ == last ? 2.0 : 0.0), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "trust-region radius");
    EXPECT(parlops_solver_set_trust_region(s, 0.0), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_convergence_reference(s, rank_ == last ? PARLOPS_REFERENCE_INITIAL_RESIDUAL : PARLOPS_REFERENCE_RHS), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "differ");
    EXPECT(parlops_solver_set_convergence_reference(s, PARLOPS_REFERENCE_RHS), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_richardson_scale(s, rank_ == 0 ? 0.5 : 1.0), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "Richardson scale");
    EXPECT(parlops_solver_set_richardson_scale(s, 1.0), PARLOPS_OK, NULL);
    /* the sum order changes rounding only: ranks may differ, and the solve still meets its rule */
    EXPECT(parlops_solver_set_sum_order(s, rank_ == last ? PARLOPS_SUM_SEQUENTIAL : PARLOPS_SUM_BLOCKED), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
    expect_converged("sum orders differing between ranks", s, A, b, x, 1e-10, 0);
    /* but the reproducible order reduces binned sums: set on one rank only, every rank refuses */
    EXPECT(parlops_solver_set_sum_order(s, rank_ == last ? PARLOPS_SUM_REPRODUCIBLE : PARLOPS_SUM_BLOCKED), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "reproducible sums");
    EXPECT(parlops_solver_set_sum_order(s, PARLOPS_SUM_REPRODUCIBLE), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
    expect_converged("the reproducible order on every rank", s, A, b, x, 1e-10, 0);
    EXPECT(parlops_solver_set_sum_order(s, 3), PARLOPS_ERR_INVALID_ARGUMENT, "order");
    EXPECT(parlops_solver_set_sum_order(s, PARLOPS_SUM_BLOCKED), PARLOPS_OK, NULL);
    /* a null space set on one rank only: every rank refuses the solve */
    EXPECT(parlops_solver_set_null_space(s, rank_ == last, 0, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "null space");
    EXPECT(parlops_solver_set_null_space(s, false, 0, NULL), PARLOPS_OK, NULL);
  }

  /* ---- GCRO-DR: k >= m, a kept space of another layout, k differing on one rank */
  {
    parlops_solver *g = NULL;
    parlops_vec *x2 = NULL;
    parlops_op *A2 = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_GCRODR, &g), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_recycle(g, -1), PARLOPS_ERR_INVALID_ARGUMENT, "'k'");
    EXPECT(parlops_solver_set_operator(g, A), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_restart(g, 6), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_recycle(g, 6), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(g, b, x), PARLOPS_ERR_INVALID_ARGUMENT, "k < m");
    EXPECT(parlops_solver_set_recycle(g, 2), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_tolerances(g, 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(g, b, x), PARLOPS_OK, NULL);
    expect_reason("GCRO-DR converges", g, PARLOPS_CONVERGED_RTOL);
    expect_converged("GCRO-DR: true residual", g, A, b, x, 1e-10, 0.0);
    /* the kept space has A's layout: a system of another size is refused on every rank, and
       solved once set_recycle dropped the space */
    EXPECT(parlops_op_identity(l2, PARLOPS_F64, &A2), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_duplicate(b2, &x2), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_fill(b2, PARLOPS_REAL(1)), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_operator(g, A2), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(g, b2, x2), PARLOPS_ERR_INVALID_ARGUMENT, "recycle space");
    EXPECT(parlops_solver_set_recycle(g, 2), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(g, b2, x2), PARLOPS_OK, NULL);
    expect_reason("GCRO-DR after set_recycle", g, PARLOPS_CONVERGED_RTOL);
    expect_converged("GCRO-DR after set_recycle: true residual", g, A2, b2, x2, 1e-10, 0.0);
    if (one) {
      EXPECT(parlops_solver_set_operator(g, A), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_set_recycle(g, rank_ == last ? 3 : 2), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve(g, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "recycle");
    }
    parlops_vec_destroy(&x2);
    parlops_op_destroy(&A2);
    parlops_solver_destroy(&g);
  }

  /* ---- multi-vectors, eigensolvers, low-rank operators: bad input on every rank and on one rank */
  {
    parlops_vec *v1 = NULL, *v2 = NULL, *u0 = NULL;
    EXPECT(parlops_vec_duplicate(b, &v1), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_duplicate(b, &v2), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_duplicate(b, &u0), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_set_random(v1, PARLOPS_RANDOM_GAUSSIAN, 1), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_set_random(v2, PARLOPS_RANDOM_GAUSSIAN, 2), PARLOPS_OK, NULL);
    const parlops_vec *xs[2] = {b, v1}, *bad_dt[2] = {b, bf}, *bad_len[2] = {b, b2};
    parlops_scalar g[4], a2[2] = {PARLOPS_REAL(1), PARLOPS_REAL(2)};
    EXPECT(parlops_vec_block_dot(c, -1, xs, 2, xs, g), PARLOPS_ERR_INVALID_ARGUMENT, "nx");
    EXPECT(parlops_vec_block_dot(c, 2, xs, 2, xs, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_vec_block_dot(c, 2, bad_dt, 1, xs, g), PARLOPS_ERR_DTYPE_MISMATCH, "x[1]");
    EXPECT(parlops_vec_block_dot(c, 2, bad_len, 1, xs, g), PARLOPS_ERR_SIZE_MISMATCH, "global length 13");
    if (one) EXPECT(parlops_vec_block_dot(c, rank_ == last ? 1 : 2, xs, 2, xs, g), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "nx");
    /* an array entry bad on one rank only: every rank gets the error */
    if (one) {
      const parlops_vec *xs_bad[2] = {b, rank_ == last ? NULL : v1};
      parlops_vec *vs_bad[2] = {v1, rank_ == last ? NULL : v2};
      const parlops_layout *ls_bad[2] = {l, rank_ == last ? NULL : l};
      parlops_layout *sl_bad = NULL;
      parlops_op *lr_bad = NULL;
      double d2[2] = {1.0, 2.0};
      EXPECT(parlops_vec_block_dot(c, 2, xs_bad, 2, xs, g), PARLOPS_ERR_NULL_ARGUMENT, NULL);
      EXPECT(parlops_vec_orthonormalize(c, 2, vs_bad, NULL, NULL), PARLOPS_ERR_NULL_ARGUMENT, NULL);
      EXPECT(parlops_layout_stack(c, 2, ls_bad, &sl_bad), PARLOPS_ERR_NULL_ARGUMENT, NULL);
      EXPECT(parlops_op_low_rank(c, 2, xs_bad, d2, &lr_bad), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    }
    EXPECT(parlops_vec_block_dot(c, 2, xs, 2, xs, g), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_maxpy(v1, 2, a2, xs), PARLOPS_ERR_INVALID_ARGUMENT, "also x[1]");
    EXPECT(parlops_vec_maxpy(v2, 2, NULL, xs), PARLOPS_ERR_NULL_ARGUMENT, "'a'");
    parlops_scalar ai[1] = {{1.0, 1.0}};
    EXPECT(parlops_vec_maxpy(v2, 1, ai, xs), PARLOPS_ERR_INVALID_ARGUMENT, "imaginary");
    EXPECT(parlops_vec_maxpy(v2, 2, a2, bad_dt), PARLOPS_ERR_DTYPE_MISMATCH, "x[1]");
    parlops_vec *same[2] = {v1, v1}, *pair[2] = {v1, v2};
    EXPECT(parlops_vec_orthonormalize(c, 2, same, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "same handle");
    EXPECT(parlops_vec_orthonormalize(c, 2, pair, R, NULL), PARLOPS_ERR_SIZE_MISMATCH, "square");
    if (one) EXPECT(parlops_vec_orthonormalize(c, rank_ == 0 ? 1 : 2, pair, NULL, NULL), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, NULL);
    EXPECT(parlops_vec_copy(v1, v2), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_orthonormalize(c, 2, pair, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "vector 1 depends");
    EXPECT(parlops_vec_set_random(v2, PARLOPS_RANDOM_GAUSSIAN, 2), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_orthonormalize(c, 2, pair, A, g), PARLOPS_OK, NULL);
    /* randomized eigensolver */
    const parlops_vec *om[2] = {v1, v2};
    parlops_vec *us[1] = {u0}, *us_alias[1] = {v1};
    double ev[2] = {-7.0, -7.0}, res[2];
    parlops_vec *us2[2] = {u0, x};
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 1, om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 2, ev, us2), PARLOPS_ERR_INVALID_ARGUMENT, "k = 2");
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, ev, us_alias), PARLOPS_ERR_INVALID_ARGUMENT, "also omega[0]");
    EXPECT(parlops_eig_randomized(A, A, NULL, 2, om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, ev, us), PARLOPS_ERR_INVALID_ARGUMENT, "both");
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, 1, 7, 1, ev, us), PARLOPS_ERR_INVALID_ARGUMENT, "pass");
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, 0, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, ev, us), PARLOPS_ERR_INVALID_ARGUMENT, "power");
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, NULL, us), PARLOPS_ERR_NULL_ARGUMENT, "eigenvalues");
    EXPECT(parlops_eig_randomized(R, NULL, NULL, 2, om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, ev, us), PARLOPS_ERR_SIZE_MISMATCH, "square");
    if (one) EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, rank_ == last ? 2 : 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 1, ev, us), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "power");
    expect("randomized: eigenvalues untouched after failures", ev[0] == -7.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_eig_randomized(A, NULL, NULL, 2, om, 2, PARLOPS_RANDOMIZED_SINGLE_PASS, 1, ev, us), PARLOPS_OK, NULL);
    expect("randomized: a Rayleigh quotient within the spectrum (0.5, 4.5)", ev[0] > 0.5 && ev[0] < 4.5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* Lanczos */
    parlops_vec *lv[1] = {v1};
    EXPECT(parlops_eig_lanczos(A, v1, 10, 0.0, 1, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "tol");
    EXPECT(parlops_eig_lanczos(A, v1, 10, 1e-8, 1, 5, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "which");
    EXPECT(parlops_eig_lanczos(A, v1, 21, 1e-8, 1, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "max_steps");
    EXPECT(parlops_eig_lanczos(A, v1, 10, 1e-8, 1, PARLOPS_EIG_LARGEST, ev, NULL, lv, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "also v0");
    EXPECT(parlops_eig_lanczos(A, b2, 10, 1e-8, 1, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    if (one) EXPECT(parlops_eig_lanczos(A, v1, 10, 1e-8, rank_ == 0 ? 2 : 1, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "n_ev");
    ev[0] = -7.0;
    EXPECT(parlops_eig_lanczos(A, v2, 3, 1e-12, 1, PARLOPS_EIG_LARGEST, ev, res, NULL, NULL), PARLOPS_ERR_NOT_CONVERGED, "did not converge");
    expect("Lanczos: nothing written when not converged", ev[0] == -7.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    int64_t steps = 0;
    EXPECT(parlops_eig_lanczos(A, v2, 20, 1e-10, 1, PARLOPS_EIG_LARGEST, ev, res, lv, &steps), PARLOPS_OK, NULL);
    /* the largest eigenvalue of tridiag(-1, 2.5, -1) of size 20: 2.5 + 2 cos(pi / 21) */
    expect("Lanczos: the largest eigenvalue", fabs(ev[0] - (2.5 + 2.0 * cos(3.14159265358979323846 / 21.0))) < 1e-10 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* Krylov-Schur */
#define KS(a_, b_, inv_, sig_, v_, nev_, ncv_, maxp_, tol_, which_, ev_, res_, vecs_, prods_) \
  parlops_eig_krylov_schur(a_, b_, inv_, sig_, v_, nev_, ncv_, maxp_, tol_, which_, NULL, NULL, ev_, res_, vecs_, prods_)
    EXPECT(KS(A, NULL, NULL, 0, v1, 2, 2, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "ncv = 2");
    EXPECT(KS(A, NULL, NULL, 0, v1, 2, 21, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "ncv = 21");
    EXPECT(KS(A, NULL, NULL, 0, v1, 1, 8, 100, 1e-8, 3, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "which");
    EXPECT(KS(A, NULL, NULL, 0, v1, 1, 8, 100, 1.5, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "tol");
    EXPECT(KS(A, NULL, NULL, 0, v1, 1, 8, 0, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "max_products");
    EXPECT(KS(A, A, NULL, 0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "without inv");
    EXPECT(KS(A, NULL, A, 0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_SMALLEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "without b");
    EXPECT(KS(A, NULL, NULL, 1.0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_NEAREST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "inv is NULL");
    EXPECT(KS(A, NULL, A, NAN, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_NEAREST, ev, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "sigma");
    EXPECT(KS(A, NULL, R, 1.0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_NEAREST, ev, NULL, NULL, NULL), PARLOPS_ERR_SIZE_MISMATCH, "inv");
    EXPECT(KS(A, NULL, NULL, 0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, lv, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "also v0");
    EXPECT(KS(A, NULL, NULL, 0, b2, 1, 8, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(KS(A, NULL, NULL, 0, v1, 1, 8, 100, 1e-8, PARLOPS_EIG_LARGEST, NULL, NULL, NULL, NULL), PARLOPS_ERR_NULL_ARGUMENT, "eigenvalues");
    if (one) EXPECT(KS(A, NULL, NULL, 0, v1, 1, rank_ == last ? 9 : 8, 100, 1e-8, PARLOPS_EIG_LARGEST, ev, NULL, NULL, NULL), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "ncv");
    /* not converged: the values reached are in the message, nothing written */
    ev[0] = -7.0;
    int64_t kprods = 0;
    EXPECT(KS(A, NULL, NULL, 0, v2, 1, 4, 6, 1e-12, PARLOPS_EIG_LARGEST, ev, res, NULL, &kprods), PARLOPS_ERR_NOT_CONVERGED, "did not converge");
    expect("Krylov-Schur: nothing written when not converged", ev[0] == -7.0 && kprods == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(KS(A, NULL, NULL, 0, v2, 1, 6, 400, 1e-10, PARLOPS_EIG_LARGEST, ev, res, lv, &kprods), PARLOPS_OK, NULL);
    expect("Krylov-Schur: the largest eigenvalue", fabs(ev[0] - (2.5 + 2.0 * cos(3.14159265358979323846 / 21.0))) < 1e-10 && res[0] <= 1e-10 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* an operator that is not symmetric, with no limit on the products: refused (it never converges) */
    EXPECT(KS(N, NULL, NULL, 0, v2, 2, 4, INT64_MAX, 1e-8, PARLOPS_EIG_SMALLEST, ev, res, NULL, &kprods), PARLOPS_ERR_INVALID_ARGUMENT, "not Hermitian");
#undef KS
    /* low-rank operator */
    parlops_op *L = NULL;
    const parlops_vec *lu[1] = {v1};
    double dn[1] = {NAN}, d1[1] = {2.0};
    EXPECT(parlops_op_low_rank(c, 1, lu, dn, &L), PARLOPS_ERR_INVALID_ARGUMENT, "d[0]");
    EXPECT(parlops_op_low_rank(c, 0, lu, d1, &L), PARLOPS_ERR_INVALID_ARGUMENT, "k is 0");
    EXPECT(parlops_op_low_rank(c, 1, lu, NULL, &L), PARLOPS_ERR_NULL_ARGUMENT, "'d'");
    EXPECT(parlops_op_low_rank(c, 1, lu, d1, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_op_low_rank(c, 1, lu, d1, &L), PARLOPS_OK, NULL);
    double rel = 1.0;
    EXPECT(parlops_op_dottest(L, 3, &rel), PARLOPS_OK, NULL);
    expect("low-rank operator: the dot test", rel < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op_destroy(&L);
    /* stacked layouts, block operators, block lower-triangular preconditioners */
    parlops_layout *sl = NULL;
    const parlops_layout *two[2] = {l, l}, *mixed[2] = {l, lo};
    EXPECT(parlops_layout_stack(c, 0, two, &sl), PARLOPS_ERR_INVALID_ARGUMENT, "n is 0");
    EXPECT(parlops_layout_stack(c, 2, NULL, &sl), PARLOPS_ERR_NULL_ARGUMENT, "parts");
    EXPECT(parlops_layout_stack(c, 2, mixed, &sl), PARLOPS_ERR_LAYOUT_MISMATCH, "another communicator");
    if (one) EXPECT(parlops_layout_stack(c, rank_ == last ? 1 : 2, two, &sl), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "parts");
    EXPECT(parlops_layout_stack(c, 2, two, &sl), PARLOPS_OK, NULL);
    parlops_vec *sv = NULL;
    EXPECT(parlops_vec_create(sl, PARLOPS_F64, PARLOPS_MEMORY_HOST, &sv), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_stack_set(sv, 1, b), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_stack_get(b, 0, v1), PARLOPS_ERR_INVALID_ARGUMENT, "not a stacked vector");
    EXPECT(parlops_vec_stack_get(sv, 2, v1), PARLOPS_ERR_INVALID_ARGUMENT, "2 parts");
    EXPECT(parlops_vec_stack_get(sv, 0, b2), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(parlops_vec_stack_get(sv, 0, bf), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
    EXPECT(parlops_vec_stack_get(sv, 0, sv), PARLOPS_ERR_INVALID_ARGUMENT, "itself");
    EXPECT(parlops_vec_stack_get(sv, 1, v1), PARLOPS_OK, NULL);
    double svn = 0, bn2 = 0;
    EXPECT(parlops_vec_norm(sv, PARLOPS_NORM_2, 0.0, &svn), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_norm(b, PARLOPS_NORM_2, 0.0, &bn2), PARLOPS_OK, NULL);
    expect("stacked vector: its norm is its one part's", fabs(svn - bn2) < 1e-14 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op *K = NULL, *T = NULL;
    const parlops_op *row_empty[2] = {NULL, NULL}, *kb[4] = {A, NULL, NULL, A}, *kbad[2] = {A, R}, *kmix[4] = {A, NULL, NULL, A};
    if (rank_ == last) kmix[1] = A;
    EXPECT(parlops_op_block(c, PARLOPS_F64, 0, 1, kb, &K), PARLOPS_ERR_INVALID_ARGUMENT, "m = 0");
    EXPECT(parlops_op_block(c, PARLOPS_F64, 1, 2, row_empty, &K), PARLOPS_ERR_INVALID_ARGUMENT, "block row 0 has no operator");
    EXPECT(parlops_op_block(c, PARLOPS_F32, 2, 2, kb, &K), PARLOPS_ERR_DTYPE_MISMATCH, "blocks[0]");
    EXPECT(parlops_op_block(c, PARLOPS_F64, 1, 2, kbad, &K), PARLOPS_ERR_SIZE_MISMATCH, "block row 0");
    if (one) EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, kmix, &K), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "block pattern");
    EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, kb, &K), PARLOPS_OK, NULL);
    const parlops_op *dg[2] = {A, A}, *dgbad[2] = {A, R};
    EXPECT(parlops_op_block_lower_triangular(A, 1, dg, &T), PARLOPS_ERR_INVALID_ARGUMENT, "not a block operator");
    EXPECT(parlops_op_block_lower_triangular(K, 1, dg, &T), PARLOPS_ERR_INVALID_ARGUMENT, "1 diagonal");
    EXPECT(parlops_op_block_lower_triangular(K, 2, dgbad, &T), PARLOPS_ERR_SIZE_MISMATCH, "preconditioner 1");
    EXPECT(parlops_op_block_lower_triangular(K, 2, dg, &T), PARLOPS_OK, NULL);
    EXPECT(parlops_op_dottest(K, 5, &rel), PARLOPS_OK, NULL);
    expect("block operator: the dot test", rel < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op_destroy(&T);
    parlops_op_destroy(&K);
    /* rank groups */
    parlops_comm *gc = NULL;
    EXPECT(parlops_comm_split(c, -1, &gc), PARLOPS_ERR_INVALID_ARGUMENT, "group");
    if (one) EXPECT(parlops_comm_split(c, rank_ == last ? -1 : 0, &gc), PARLOPS_ERR_INVALID_ARGUMENT, "group");
    EXPECT(parlops_comm_split(c, 0, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_comm_split(c, rank_ % 2, &gc), PARLOPS_OK, NULL);
    parlops_layout *gl = NULL;
    parlops_vec *gv = NULL;
    EXPECT(parlops_layout_create(gc, PARLOPS_PARTITION_SCATTER, 9, -1, &gl), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_create(gl, PARLOPS_F64, PARLOPS_MEMORY_HOST, &gv), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_fill(gv, PARLOPS_REAL(2)), PARLOPS_OK, NULL);
    parlops_scalar gd;
    double gn = 0;
    int ngroups = size_ > 1 ? 2 : 1;
    EXPECT(parlops_vec_dot_groups(c, gv, gv, &gd), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_norm_groups(c, gv, PARLOPS_NORM_1, 0.0, &gn), PARLOPS_OK, NULL);
    expect("rank groups: dot and 1-norm across groups", gd.re == 36.0 * ngroups && gn == 18.0 * ngroups ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_vec_dot_groups(c, gv, NULL, &gd), PARLOPS_ERR_NULL_ARGUMENT, "'y'");
    EXPECT(parlops_vec_dot_groups(c, gv, gv, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    if (one) EXPECT(parlops_vec_dot_groups(c, gv, rank_ == last ? NULL : gv, &gd), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_vec_norm_groups(c, gv, 77, 0.0, &gn), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    if (one) EXPECT(parlops_vec_norm_groups(c, rank_ == last ? NULL : gv, PARLOPS_NORM_2, 0.0, &gn), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_vec_dot_groups(c, gv, bf, &gd), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
    parlops_vec_destroy(&gv);
    parlops_layout_destroy(&gl);
    parlops_comm_destroy(&gc);
    parlops_vec_destroy(&sv);
    parlops_layout_destroy(&sl);
    parlops_vec_destroy(&v1);
    parlops_vec_destroy(&v2);
    parlops_vec_destroy(&u0);
  }

  /* ---- reasons */
  EXPECT(parlops_solver_set_operator(s, Ai), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("indefinite matrix in CG", s, PARLOPS_DIVERGED_INDEFINITE_MATRIX);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-12, 0, 1e5, 2), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("max iterations", s, PARLOPS_DIVERGED_MAX_ITER);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0, 1e5, 1000), PARLOPS_OK, NULL);
  double *bl;
  parlops_vec *bn = NULL;
  EXPECT(parlops_vec_duplicate(b, &bn), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy(b, bn), PARLOPS_OK, NULL);
  parlops_vec_local_array(bn, (void **)&bl, NULL);
  if (rank_ == last && len > 0) bl[0] = NAN; /* NaN on one rank only */
  EXPECT(parlops_solver_solve(s, bn, x), PARLOPS_OK, NULL);
  expect_reason("NaN in the right-hand side", s, PARLOPS_DIVERGED_NAN);
  stop_rank = one ? last : 0; /* the monitor asks to stop on one rank only */
  EXPECT(parlops_solver_set_monitor(s, monitor, NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_keep_history(s, true), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("monitor stop on one rank", s, PARLOPS_DIVERGED_USER);
  const double *hist = NULL;
  int64_t hlen = 0;
  EXPECT(parlops_solver_history(s, &hist, &hlen), PARLOPS_OK, NULL);
  expect("history of 3 norms", hlen == 3 && hist != NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_solver_history(s, NULL, &hlen), PARLOPS_ERR_NULL_ARGUMENT, "norms");
  EXPECT(parlops_solver_residual_history(s, NULL, &hlen), PARLOPS_ERR_NULL_ARGUMENT, "norms");
  EXPECT(parlops_solver_residual_history(NULL, &hist, &hlen), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_residual_history(s, &hist, &hlen), PARLOPS_OK, NULL);
  expect("no residual history for CG", hlen == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_monitor(s, NULL, NULL), PARLOPS_OK, NULL);
  /* the iterate monitor: x and r lent to C (norms read inside), a stop on one rank, then the
     caller's rule declared on every rank from iteration 3 */
  EXPECT(parlops_vec_norm(b, PARLOPS_NORM_2, 0.0, &iterate_bnorm), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_monitor_iterate(s, monitor_iterate, NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("iterate monitor stop on one rank", s, PARLOPS_DIVERGED_USER);
  stop_rank = -1;
  conv_at = 3;
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  expect_reason("iterate monitor declares convergence", s, PARLOPS_CONVERGED_USER);
  {
    parlops_solve_info iv;
    EXPECT(parlops_solver_info(s, &iv), PARLOPS_OK, NULL);
    expect("iterate monitor: 3 iterations, x and r read each time",
           iv.iterations == 3 && iterate_calls == 3 + 4 && iterate_bad == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  }
  conv_at = -1;
  EXPECT(parlops_solver_set_monitor_iterate(s, NULL, NULL), PARLOPS_OK, NULL);
  /* trust region: the boundary point (its norm is the radius), a nonzero guess refused on every
     rank, no inverse operator */
  {
    double xn = 0.0;
    parlops_op *inv = NULL;
    EXPECT(parlops_solver_set_trust_region(s, 0.25), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
    expect_reason("trust region: stopped on the boundary", s, PARLOPS_CONVERGED_STEP_LENGTH);
    EXPECT(parlops_vec_norm(x, PARLOPS_NORM_2, 0.0, &xn), PARLOPS_OK, NULL);
    expect("trust region: ||x|| = radius", fabs(xn - 0.25) <= 1e-12 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_inverse(s, false, &inv), PARLOPS_ERR_NOT_SUPPORTED, "trust-region");
    EXPECT(parlops_solver_set_initial_guess_nonzero(s, true), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INVALID_ARGUMENT, "initial guess");
    EXPECT(parlops_solver_set_initial_guess_nonzero(s, false), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_trust_region(s, 0.0), PARLOPS_OK, NULL);
  }
  /* Jacobi on a zero diagonal: every rank gets the error */
  EXPECT(parlops_solver_set_operator(s, Az), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_jacobi(s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INVALID_ARGUMENT, "diagonal");
  /* a callback operator that fails on one rank mid-solve: every rank gets PARLOPS_ERR_CALLBACK */
  parlops_solver *s2 = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG_PIPELINED, &s2), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s2, S), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s2, b, x), PARLOPS_OK, NULL);
  expect_reason("shell operator solve", s2, PARLOPS_CONVERGED_RTOL);
  expect_converged("shell operator solve: true residual", s2, S, b, x, 1e-5, 1e-50);
  /* every method, by its code (0, 1, ... until one is refused): none is left out by a list */
  for (int k = 0;; ++k) {
    parlops_solver *sk = NULL;
    if (parlops_solver_create(c, k, &sk) != PARLOPS_OK) {
      expect("every method tried", k > PARLOPS_METHOD_CG_DEFLATED ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
      break;
    }
    EXPECT(parlops_solver_set_operator(sk, S), PARLOPS_OK, NULL);
    calls = 0;
    fail_after = 0;
    fail_rank = last;
    EXPECT(parlops_solver_solve(sk, b, x), PARLOPS_ERR_CALLBACK, "returned 5");
    fail_rank = -1;
    EXPECT(parlops_solver_destroy(&sk), PARLOPS_OK, NULL);
  }
  /* ---- power iteration */
  parlops_scalar eig;
  int64_t its;
  EXPECT(parlops_op_power_iteration(R, 10, 1e-6, 1, &eig, &its), PARLOPS_ERR_SIZE_MISMATCH, "square");
  EXPECT(parlops_op_power_iteration(A, 10, 1e-6, 1, NULL, &its), PARLOPS_ERR_NULL_ARGUMENT, "eigenvalue");
  EXPECT(parlops_op_power_iteration(A, 0, 1e-6, 1, &eig, &its), PARLOPS_ERR_INVALID_ARGUMENT, "max_iter");
  EXPECT(parlops_op_power_iteration(S, 50, 1e-12, 1, &eig, &its), PARLOPS_OK, NULL);
  expect("power iteration of 2I", fabs(eig.re - 2.0) < 1e-10 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- a panic or a failed allocation on one rank during a solve stops every rank */
  {
    /* a wrapped ParCSR (diagonal 2) whose local column index is corrupted on the last rank */
    int di[32], dj[32], zi[32] = {0};
    double da[32];
    for (int64_t k = 0; k < len; ++k) { di[k] = (int)k; dj[k] = (int)k; da[k] = 2.0; }
    di[len] = (int)len;
    parlops_op *P = NULL;
    parlops_solver *sp = NULL;
    EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, zi, NULL, NULL, 0, NULL, PARLOPS_WRAP, &P),
           PARLOPS_OK, NULL);
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &sp), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_operator(sp, P), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(sp, b, x), PARLOPS_OK, NULL);
    if (rank_ == last && len > 0) dj[0] = 1 << 30;
    EXPECT(parlops_solver_solve(sp, b, x), PARLOPS_ERR_INTERNAL, "panicked");
    dj[0] = 0;
    EXPECT(parlops_solver_destroy(&sp), PARLOPS_OK, NULL);
    parlops_op_destroy(&P);

    /* 2^40 local entries on rank 0: b and x wrap a reserved (never touched) mapping, the solver's
     * work vectors cannot be allocated there */
    const int64_t huge = (int64_t)1 << 40;
    size_t bytes = (size_t)huge * sizeof(double);
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map != MAP_FAILED) {
      parlops_layout *lh = NULL;
      parlops_op *Ih = NULL;
      parlops_vec *bh = NULL, *xh = NULL;
      EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, rank_ == 0 ? huge : 1, &lh), PARLOPS_OK, NULL);
      EXPECT(parlops_op_identity(lh, PARLOPS_F64, &Ih), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_create_with_array(lh, PARLOPS_F64, PARLOPS_MEMORY_HOST, map, &bh), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_create_with_array(lh, PARLOPS_F64, PARLOPS_MEMORY_HOST, map, &xh), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &sp), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_set_operator(sp, Ih), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve(sp, bh, xh), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
      EXPECT(parlops_solver_set_jacobi(sp), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve(sp, bh, xh), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
      EXPECT(parlops_solver_destroy(&sp), PARLOPS_OK, NULL);
      parlops_vec_destroy(&bh); parlops_vec_destroy(&xh); parlops_op_destroy(&Ih); parlops_layout_destroy(&lh);
      munmap(map, bytes);
    }
  }

  EXPECT(parlops_solver_destroy(NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  parlops_solver_destroy(&s);
  parlops_solver_destroy(&s2);
  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);
  parlops_vec_destroy(&b); parlops_vec_destroy(&x); parlops_vec_destroy(&bf); parlops_vec_destroy(&b2); parlops_vec_destroy(&bn);
  parlops_op_destroy(&A); parlops_op_destroy(&Ai); parlops_op_destroy(&Az); parlops_op_destroy(&R); parlops_op_destroy(&Ao); parlops_op_destroy(&S); parlops_op_destroy(&N);
  parlops_layout_destroy(&l); parlops_layout_destroy(&l2); parlops_layout_destroy(&lo);
  parlops_comm_destroy(&c); parlops_comm_destroy(&c2);
  alarm(0);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("bad_input_solver (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  MPI_Finalize();
  return sum[1] == 0 ? 0 : 1;
}
