/* Solvers as operators (parlops_op_create_inverse): nested solves on a 2D Laplacian (plus a shift)
 * split unevenly over the ranks, against the known solution x* of A x* = b (b = A x*) and the
 * recomputed true residual. Run at 1, 2, 3 and 4 ranks.
 *  - FGMRES with an inner CG (a few iterations, rtol 1e-2, running out of iterations accepted);
 *  - CG preconditioned by an inner Jacobi-CG to 1e-12 (converges in a couple of iterations);
 *  - the inverse applied by itself, after the solver it came from was destroyed;
 *  - an inverse set as its own solver's preconditioner;
 *  - an inner solve that does not converge (PARLOPS_ERR_NOT_CONVERGED on every rank), and one whose
 *    preconditioner callback fails on one rank only (PARLOPS_ERR_CALLBACK on every rank, no hang);
 *  - bad input: no operator, a least-squares method, no adjoint, `accept_max_iter` differing
 *    between ranks.
 * Prints "nested_solve: N passed, M failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <mpi.h>

#include "expect.h"

#define M_GRID 14
#define N_ROWS (M_GRID * M_GRID)

static int64_t lo_, n_local_;

/* this rank's rows: uneven (rank 0 three short of an even split, the last three long) */
static void split(void) {
  int64_t base = N_ROWS / size_, lens[64], start = 0;
  for (int r = 0; r < size_; r++) lens[r] = base + (r == size_ - 1 ? N_ROWS % size_ : 0);
  if (size_ > 1) {
    lens[0] -= 3;
    lens[size_ - 1] += 3;
  }
  for (int r = 0; r < rank_; r++) start += lens[r];
  lo_ = start;
  n_local_ = lens[rank_];
}

/* rows lo_..lo_+n_local_ of the 5-point Laplacian + 0.05 I (global column indices) */
static parlops_op *laplacian(const parlops_layout *rows) {
  int64_t *rp = malloc((size_t)(n_local_ + 1) * sizeof *rp), *ci = malloc((size_t)(5 * n_local_) * sizeof *ci);
  double *v = malloc((size_t)(5 * n_local_) * sizeof *v);
  int64_t k = 0;
  rp[0] = 0;
  for (int64_t i = 0; i < n_local_; i++) {
    int64_t g = lo_ + i, gx = g % M_GRID, gy = g / M_GRID;
    int64_t cols[5] = {g - M_GRID, g - 1, g, g + 1, g + M_GRID};
    int ok[5] = {gy > 0, gx > 0, 1, gx < M_GRID - 1, gy < M_GRID - 1};
    for (int j = 0; j < 5; j++)
      if (ok[j]) {
        ci[k] = cols[j];
        v[k++] = j == 2 ? 4.05 : -1.0;
      }
    rp[i + 1] = k;
  }
  parlops_op *A = NULL;
  EXPECT(parlops_op_create_csr(rows, rows, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &A), PARLOPS_OK, NULL);
  free(rp);
  free(ci);
  free(v);
  return A;
}

/* ||x - x*|| / ||x*|| */
static double error_of(const parlops_vec *x, const parlops_vec *xs) {
  parlops_vec *d = NULL;
  double dn = -1, xn = -1;
  parlops_vec_duplicate(x, &d);
  parlops_vec_copy(x, d);
  parlops_vec_axpy(d, PARLOPS_REAL(-1), xs);
  parlops_vec_norm(d, PARLOPS_NORM_2, 0, &dn);
  parlops_vec_norm(xs, PARLOPS_NORM_2, 0, &xn);
  parlops_vec_destroy(&d);
  return dn / xn;
}

/* the solve converged, ||b - A x|| meets the rule it was given, and x is within `tol` of x* */
static void expect_solution(const char *name, parlops_solver *s, const parlops_op *A, const parlops_vec *b,
                            const parlops_vec *x, const parlops_vec *xs, double rtol, double tol) {
  parlops_solve_info info;
  parlops_vec *r = NULL;
  double rn = -1, bn = -1;
  int ok = parlops_solver_info(s, &info) == PARLOPS_OK && info.reason > 0 && parlops_vec_duplicate(b, &r) == PARLOPS_OK &&
           parlops_op_apply(A, x, r) == PARLOPS_OK && parlops_vec_axpby(r, PARLOPS_REAL(1), b, PARLOPS_REAL(-1)) == PARLOPS_OK &&
           parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn) == PARLOPS_OK && parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn) == PARLOPS_OK;
  double err = error_of(x, xs);
  ok = ok && rn <= 1.01 * rtol * bn + 1e-13 * bn && err <= tol;
  if (rank_ == 0)
    printf("%-48s %3d iterations, reason %d, ||b-Ax||/||b|| %.2e, error %.2e\n", name, (int)info.iterations,
           (int)info.reason, rn / bn, err);
  if (!ok) fprintf(stderr, "rank %d: %s: reason %d, residual %g (rtol %g), error %g\n", rank_, name, (int)info.reason, rn / bn, rtol, err);
  expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_vec_destroy(&r);
}

static parlops_solver *solver(const parlops_comm *c, parlops_method m, const parlops_op *A, double rtol, int64_t max_iter) {
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, m, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, rtol, 0.0, 1e5, max_iter), PARLOPS_OK, NULL);
  return s;
}

/* a preconditioner callback (identity) that fails on `fail_rank` from its `fail_after`-th call on */
static int fail_rank = -1, calls = 0;
static int ident(void *ctx, const void *x, void *y) {
  (void)ctx;
  for (int64_t i = 0; i < n_local_; i++) ((double *)y)[i] = ((const double *)x)[i];
  return (rank_ == fail_rank && ++calls >= 3) ? 7 : 0;
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(30);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  split();
  parlops_comm *c = NULL;
  parlops_layout *rows = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, N_ROWS, n_local_, &rows), PARLOPS_OK, NULL);
  parlops_op *A = laplacian(rows);
  parlops_vec *xs = NULL, *b = NULL, *x = NULL;
  EXPECT(parlops_vec_create(rows, PARLOPS_F64, PARLOPS_MEMORY_HOST, &xs), PARLOPS_OK, NULL);
  parlops_vec_duplicate(xs, &b);
  parlops_vec_duplicate(xs, &x);
  double *xd = NULL;
  int64_t len = 0;
  parlops_vec_local_array(xs, (void **)&xd, &len);
  for (int64_t i = 0; i < len; i++) xd[i] = 1.0 + sin(0.37 * (double)(lo_ + i));
  EXPECT(parlops_op_apply(A, xs, b), PARLOPS_OK, NULL);

  /* FGMRES with an inner CG of at most 6 iterations */
  {
    parlops_solver *inner = solver(c, PARLOPS_METHOD_CG, A, 1e-2, 6), *outer = solver(c, PARLOPS_METHOD_FGMRES, A, 1e-10, 200);
    parlops_op *Minv = NULL;
    EXPECT(parlops_op_create_inverse(inner, true, &Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(outer, Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(outer, b, x), PARLOPS_OK, NULL);
    expect_solution("FGMRES, inner CG (6 iterations at most)", outer, A, b, x, xs, 1e-10, 1e-8);
    parlops_solve_info with, without;
    parlops_solver_info(outer, &with);
    parlops_solver *plain = solver(c, PARLOPS_METHOD_FGMRES, A, 1e-10, 500);
    EXPECT(parlops_solver_solve(plain, b, x), PARLOPS_OK, NULL);
    expect_solution("FGMRES, no preconditioner", plain, A, b, x, xs, 1e-10, 1e-8);
    parlops_solver_info(plain, &without);
    expect("the inner CG saves outer iterations", with.iterations < without.iterations ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
           PARLOPS_OK, NULL);
    parlops_solver_destroy(&plain);
    parlops_op_destroy(&Minv);
    parlops_solver_destroy(&outer);
    parlops_solver_destroy(&inner);
  }
  /* CG preconditioned by a tight inner Jacobi-CG: an exact inverse, so very few outer iterations */
  {
    parlops_solver *inner = solver(c, PARLOPS_METHOD_CG, A, 1e-12, 1000), *outer = solver(c, PARLOPS_METHOD_CG, A, 1e-10, 50);
    EXPECT(parlops_solver_set_jacobi(inner), PARLOPS_OK, NULL);
    parlops_op *Minv = NULL;
    EXPECT(parlops_op_create_inverse(inner, false, &Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(outer, Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(outer, b, x), PARLOPS_OK, NULL);
    expect_solution("CG, inner Jacobi-CG to 1e-12", outer, A, b, x, xs, 1e-10, 1e-8);
    parlops_solve_info info;
    parlops_solver_info(outer, &info);
    expect("an exact inner solve: at most 3 outer iterations", info.iterations <= 3 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
           PARLOPS_OK, NULL);
    /* the inverse by itself, after its solver is gone: y = A^{-1} b = x* */
    parlops_solver_destroy(&inner);
    parlops_vec_fill(x, PARLOPS_REAL(123.0));
    EXPECT(parlops_op_apply(Minv, b, x), PARLOPS_OK, NULL);
    double err = error_of(x, xs);
    expect("A^{-1} b = x* after the solver was destroyed", err < 1e-9 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* no adjoint */
    EXPECT(parlops_op_apply_adjoint(Minv, b, x), PARLOPS_ERR_NOT_SUPPORTED, "adjoint of an inverse");
    double rel = 0;
    EXPECT(parlops_op_dottest(Minv, 7, &rel), PARLOPS_ERR_NOT_SUPPORTED, "adjoint");
    parlops_op_destroy(&Minv);
    parlops_solver_destroy(&outer);
  }
  /* an inverse of a solver set as that solver's own preconditioner (the snapshot has none) */
  {
    parlops_solver *s = solver(c, PARLOPS_METHOD_GMRES, A, 1e-10, 100);
    parlops_op *Minv = NULL;
    EXPECT(parlops_op_create_inverse(s, false, &Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(s, Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
    expect_solution("GMRES preconditioned by its own inverse", s, A, b, x, xs, 1e-10, 1e-8);
    parlops_op_destroy(&Minv);
    parlops_solver_destroy(&s);
  }
  /* an inner solve that does not converge: every rank fails the outer solve */
  {
    parlops_solver *inner = solver(c, PARLOPS_METHOD_CG, A, 1e-12, 2), *outer = solver(c, PARLOPS_METHOD_FGMRES, A, 1e-10, 100);
    parlops_op *Minv = NULL;
    EXPECT(parlops_op_create_inverse(inner, false, &Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(outer, Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_solve(outer, b, x), PARLOPS_ERR_NOT_CONVERGED, "PARLOPS_DIVERGED_MAX_ITER after 2 iterations");
    EXPECT(parlops_op_apply(Minv, b, x), PARLOPS_ERR_NOT_CONVERGED, "inner CG");
    parlops_op_destroy(&Minv);
    parlops_solver_destroy(&outer);
    parlops_solver_destroy(&inner);
  }
  /* the inner solve's preconditioner fails on the last rank only, at its third call */
  {
    parlops_solver *inner = solver(c, PARLOPS_METHOD_CG, A, 1e-3, 50), *outer = solver(c, PARLOPS_METHOD_FGMRES, A, 1e-10, 100);
    parlops_op *P = NULL, *Minv = NULL;
    EXPECT(parlops_op_create_shell(rows, rows, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, ident, NULL, NULL, &P), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(inner, P), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_inverse(inner, true, &Minv), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(outer, Minv), PARLOPS_OK, NULL);
    fail_rank = size_ - 1;
    calls = 0;
    EXPECT(parlops_solver_solve(outer, b, x), PARLOPS_ERR_CALLBACK, NULL);
    fail_rank = -1;
    EXPECT(parlops_solver_solve(outer, b, x), PARLOPS_OK, NULL);
    expect_solution("FGMRES, inner CG with a shell preconditioner", outer, A, b, x, xs, 1e-10, 1e-8);
    parlops_op_destroy(&Minv);
    parlops_op_destroy(&P);
    parlops_solver_destroy(&outer);
    parlops_solver_destroy(&inner);
  }
  /* bad input */
  {
    parlops_solver *s = NULL, *ls = NULL;
    parlops_op *Minv = NULL;
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_inverse(s, false, &Minv), PARLOPS_ERR_INVALID_ARGUMENT, "no operator");
    EXPECT(parlops_op_create_inverse(NULL, false, &Minv), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
    EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_inverse(s, false, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'out'");
    if (size_ > 1)
      EXPECT(parlops_op_create_inverse(s, rank_ == 1, &Minv), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "accept_max_iter");
    expect("no operator made on failure", Minv == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_solver_create(c, PARLOPS_METHOD_LSQR, &ls), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_operator(ls, A), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_inverse(ls, false, &Minv), PARLOPS_ERR_NOT_SUPPORTED, "LSQR");
    parlops_solver_destroy(&ls);
    parlops_solver_destroy(&s);
  }
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&xs);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&rows);
  parlops_comm_destroy(&c);
  int f = failed, total = 0;
  MPI_Allreduce(&f, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("nested_solve: %d passed, %d failed (all ranks)\n", passed, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
