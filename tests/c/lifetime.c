/* The lifetime test: for every running call that takes user callbacks (a solve, several right-hand
 * sides, an operator apply, a shell's diagonal,
 * the randomized eigensolver, a Chebyshev set-up, a Jacobi solve, the proximal solvers), every callback the API offers that
 * reaches it (the operator's and the preconditioner's apply callbacks, the operator's diagonal
 * callback, the monitor, the iterate monitor, a context's destroy callback), and every object the
 * call depends on, the callback destroys that
 * object, and the documented outcome must follow:
 *   - a handle passed to the running call (s, b, x of a solve; A, x, y of an apply; A, omega, u of
 *     the eigensolver; A of a set-up) cannot be destroyed until the call returns: PARLOPS_ERR_BUSY,
 *     and the handle stays usable;
 *   - a vector lent to the iterate monitor cannot be destroyed at all: PARLOPS_ERR_BUSY;
 *   - an object the call holds by reference (the operator and preconditioner set on the solver, a
 *     layout, the communicator, the solver behind an inverse, a block of a block operator) may be
 *     destroyed: PARLOPS_OK, and the call goes on with its own reference;
 * and in every case the call's result is right (a solve converges to the known solution, checked on
 * the true residual; an apply gives the product; the eigenvalues are the diagonal's). Run at 1, 2, 3
 * and 4 ranks. tests/examples.sh fails when the header has a handle type or a callback type that
 * the tables below do not name.
 * Prints "lifetime (N ranks): P passed, F failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "expect.h"

#ifdef PARLOPS_OLD_API /* built against the library before issue 38, to show what failed there */
#define PARLOPS_ERR_BUSY 18
#endif

/* What the header offers, each covered by a scenario below (checked by tests/examples.sh). */
static const char *const handle_types[] = {"parlops_comm", "parlops_layout", "parlops_vec", "parlops_op",
                                           "parlops_solver", "parlops_hypre_options", "parlops_options",
                                           "parlops_prox"};
static const char *const callback_types[] = {"parlops_apply_fn", "parlops_destroy_fn", "parlops_monitor_fn",
                                             "parlops_monitor_iterate_fn", "parlops_diagonal_fn",
                                             "parlops_eig_monitor_fn", "parlops_prox_fn", "parlops_prox_value_fn",
                                             "parlops_prox_grad_fn"};

#define N 24

/* where a destroy is made from */
enum cb { CB_OP, CB_PC, CB_MONITOR, CB_ITERATE, CB_DESTROY_CTX, CB_DIAG, CB_EIGMON, CB_PROX, NCB };
static const char *const cb_names[] = {"operator callback (parlops_apply_fn)", "preconditioner callback (parlops_apply_fn)",
                                       "monitor (parlops_monitor_fn)", "iterate monitor (parlops_monitor_iterate_fn)",
                                       "context destroy callback (parlops_destroy_fn)",
                                       "the operator's diagonal callback (parlops_diagonal_fn)",
                                       "the eigensolver's monitor (parlops_eig_monitor_fn)",
                                       "a proximal operator's callback (parlops_prox_fn, _value_fn, _grad_fn)"};

/* the objects of one scenario */
static struct {
  parlops_comm *c;
  parlops_layout *l, *l_ref;
  parlops_vec *b, *x, *y, *om[4], *u[2], *lent;
  parlops_op *A, *M, *Minv, *B, *Ad, *A_check;
  parlops_solver *s_saved;
  parlops_solver *s, *s_inner;
  parlops_hypre_options *ho;
  parlops_options *opts;
  parlops_prox *pf, *pg, *pl1, *plop;
  double ref_pd[N], ref_pg[N], ref_admm[N], ref_pdop[N];
  int64_t lo, len;
} S;

/* the scenario running now: where to destroy from, which handle (a pointer to it), at which call of
 * the callback; the status the destroy got */
static int which_cb = -1, target_kind = -1, fire_at = 2, calls = 0, fired = 0;
static void **target = NULL;
static parlops_status got = PARLOPS_OK;
static char got_msg[512];

static parlops_status destroy_kind(int kind, void **h) {
  switch (kind) {
  case 0: return parlops_comm_destroy((parlops_comm **)h);
  case 1: return parlops_layout_destroy((parlops_layout **)h);
  case 2: return parlops_vec_destroy((parlops_vec **)h);
  case 3: return parlops_op_destroy((parlops_op **)h);
  case 5: return parlops_hypre_options_destroy((parlops_hypre_options **)h);
  case 6: return parlops_options_destroy((parlops_options **)h);
  case 7: return parlops_prox_destroy((parlops_prox **)h);
  default: return parlops_solver_destroy((parlops_solver **)h);
  }
}

static void maybe_fire(int cb) {
  if (cb != which_cb || fired) return;
  if (++calls < fire_at) return;
  fired = 1;
  got = destroy_kind(target_kind, target);
  snprintf(got_msg, sizeof got_msg, "%s", got == PARLOPS_OK ? "" : parlops_last_error());
}

/* A = diag(1 + g / 8) (g the global index), M = I: SPD, CG converges in at most N iterations */
static int op_fwd(void *ctx, const void *xv, void *yv) {
  (void)ctx;
  const double *x = xv;
  double *y = yv;
  for (int64_t i = 0; i < S.len; i++) y[i] = (1.0 + (double)(S.lo + i) / 8.0) * x[i];
  maybe_fire(CB_OP);
  return 0;
}
static int op_diag(void *ctx, void *dv) {
  (void)ctx;
  double *d = dv;
  for (int64_t i = 0; i < S.len; i++) d[i] = 1.0 + (double)(S.lo + i) / 8.0;
  maybe_fire(CB_DIAG);
  return 0;
}
static int pc_fwd(void *ctx, const void *xv, void *yv) {
  (void)ctx;
  const double *x = xv;
  double *y = yv;
  for (int64_t i = 0; i < S.len; i++) y[i] = x[i];
  maybe_fire(CB_PC);
  return 0;
}
static int monitor(void *ctx, int64_t it, double r) {
  (void)ctx;
  (void)it;
  (void)r;
  maybe_fire(CB_MONITOR);
  return 0;
}
static int monitor_iterate(void *ctx, int64_t it, double r, const parlops_vec *x, const parlops_vec *res) {
  (void)ctx;
  (void)it;
  (void)r;
  (void)res;
  S.lent = (parlops_vec *)x; /* the lent iterate, a target of its own */
  maybe_fire(CB_ITERATE);
  return PARLOPS_MONITOR_CONTINUE;
}
static int eig_monitor(void *ctx, int64_t products, int nconv, int n, const double *v, const double *e) {
  (void)ctx;
  (void)products;
  (void)nconv;
  (void)n;
  (void)v;
  (void)e;
  maybe_fire(CB_EIGMON);
  return 0;
}
/* the caller's proximal operator of f(x) = 1/2 ||x - 1||^2: prox (x + tau) / (1 + tau), gradient
 * x - 1, this rank's share of the value */
static int prox_q(void *ctx, double tau, const void *xv, void *yv) {
  (void)ctx;
  const double *x = xv;
  double *y = yv;
  for (int64_t i = 0; i < S.len; i++) y[i] = (x[i] + tau) / (1.0 + tau);
  maybe_fire(CB_PROX);
  return 0;
}
static int prox_q_value(void *ctx, const void *xv, double *v) {
  (void)ctx;
  const double *x = xv;
  *v = 0;
  for (int64_t i = 0; i < S.len; i++) *v += 0.5 * (x[i] - 1.0) * (x[i] - 1.0);
  maybe_fire(CB_PROX);
  return 0;
}
static int prox_q_grad(void *ctx, const void *xv, void *gv) {
  (void)ctx;
  const double *x = xv;
  double *g = gv;
  for (int64_t i = 0; i < S.len; i++) g[i] = x[i] - 1.0;
  maybe_fire(CB_PROX);
  return 0;
}
static parlops_status run_pd(parlops_vec *x, parlops_vec *y) {
  parlops_vec_fill(x, PARLOPS_REAL(0.0));
  parlops_vec_fill(y, PARLOPS_REAL(0.0));
  return parlops_primal_dual(S.pf, S.pg, S.A, NULL, 0.5, 0.25, 1.0, 6, true, x, y);
}
static parlops_status run_pg(parlops_vec *x) {
  parlops_vec_fill(x, PARLOPS_REAL(0.0));
  return parlops_proximal_gradient(S.pg, S.pl1, 0.5, 1.0, 1.0, 6, PARLOPS_ACCELERATION_FISTA, 1e-15, x, NULL);
}
/* ADMM: Op = A = the shell, g the caller's proximal operator (both reach callbacks) */
static parlops_status run_admm(parlops_vec *x, parlops_vec *z) {
  parlops_vec_fill(x, PARLOPS_REAL(0.0));
  parlops_vec_fill(z, PARLOPS_REAL(0.0));
  return parlops_admm_l2(S.pg, S.A, S.b, S.A, 0.25, 4, false, false, 5, 1e-4, x, z);
}
/* primal-dual with f = L2 through the diagonal matrix (held by f), g the caller's, A the shell */
static parlops_status run_pdop(parlops_vec *x, parlops_vec *y) {
  parlops_vec_fill(x, PARLOPS_REAL(0.0));
  parlops_vec_fill(y, PARLOPS_REAL(0.0));
  return parlops_primal_dual(S.plop, S.pg, S.A, NULL, 0.5, 0.25, 1.0, 4, true, x, y);
}
static void ctx_destroy(void *ctx) {
  (void)ctx;
  maybe_fire(CB_DESTROY_CTX);
}

static void build(void) {
  memset(&S, 0, sizeof S);
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &S.c), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(S.c, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &S.l), PARLOPS_OK, NULL);
  parlops_layout_local_range(S.l, &S.lo, &S.len);
  EXPECT(parlops_op_create_shell_with_diagonal(S.l, S.l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, op_fwd, op_fwd, op_diag,
                                               ctx_destroy, &S.A),
         PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_shell(S.l, S.l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, pc_fwd, pc_fwd, NULL, &S.M), PARLOPS_OK,
         NULL);
  EXPECT(parlops_op_create_vecs(S.A, &S.x, &S.b), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_duplicate(S.b, &S.y), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_layout(S.b, &S.l_ref), PARLOPS_OK, NULL);
  /* a handle of the checker's own on the operator (scenarios destroy S.A) */
  EXPECT(parlops_op_scale(S.A, PARLOPS_REAL(1.0), &S.A_check), PARLOPS_OK, NULL);
  /* b = A 1: the solution is all ones */
  EXPECT(parlops_vec_fill(S.y, PARLOPS_REAL(1.0)), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply(S.A, S.y, S.b), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_create(S.c, PARLOPS_METHOD_CG, &S.s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(S.s, S.A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(S.s, 1e-12, 0.0, 1e5, 200), PARLOPS_OK, NULL);
  /* an inner solver behind an inverse (the inverse of M = I: one iteration), as the preconditioner */
  EXPECT(parlops_solver_create(S.c, PARLOPS_METHOD_CG, &S.s_inner), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(S.s_inner, S.M), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_inverse(S.s_inner, false, &S.Minv), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(S.s, S.Minv), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_monitor(S.s, monitor, NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_monitor_iterate(S.s, monitor_iterate, NULL), PARLOPS_OK, NULL);
  /* a block operator [4D A; M 4D] holding A and M, with a diagonal (4D: a diagonal matrix), for
   * the Chebyshev set-up */
  parlops_vec *dv = NULL;
  EXPECT(parlops_vec_duplicate(S.b, &dv), PARLOPS_OK, NULL);
  double dl[N];
  for (int64_t i = 0; i < S.len; i++) dl[i] = 4.0 * (1.0 + (double)(S.lo + i) / 8.0);
  EXPECT(parlops_vec_copy_from_host(dv, dl), PARLOPS_OK, NULL);
  EXPECT(parlops_op_diagonal_matrix(dv, &S.Ad), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_destroy(&dv), PARLOPS_OK, NULL);
  const parlops_op *blk[4] = {S.Ad, S.A, S.M, S.Ad};
  EXPECT(parlops_op_block(S.c, PARLOPS_F64, 2, 2, blk, &S.B), PARLOPS_OK, NULL);
  for (int i = 0; i < 4; i++) {
    EXPECT(parlops_vec_duplicate(S.b, &S.om[i]), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_set_random(S.om[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(i + 1)), PARLOPS_OK, NULL);
  }
  for (int i = 0; i < 2; i++) EXPECT(parlops_vec_duplicate(S.b, &S.u[i]), PARLOPS_OK, NULL);
  /* a set of hypre options (the constructors that take one copy it; none is held by a call) */
  EXPECT(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, &S.ho), PARLOPS_OK, NULL);
  EXPECT(parlops_hypre_options_set_int(S.ho, "PMaxElmts", 4), PARLOPS_OK, NULL);
  /* run-time options, applied to the solver (which copies the settings; no call holds the set) */
  EXPECT(parlops_options_create(S.c, &S.opts), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(S.opts, "-options_left no -ksp_converged_reason 0"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(S.s, S.opts, NULL), PARLOPS_OK, NULL);
  /* proximal operators: L2 with b (copied), the caller's, L1; the solvers' results without destroys */
  EXPECT(parlops_prox_create_l2(S.l, PARLOPS_F64, 1.0, S.b, NULL, 0.0, true, &S.pf), PARLOPS_OK, NULL);
  EXPECT(parlops_prox_create_shell(S.l, PARLOPS_F64, NULL, prox_q, NULL, prox_q_value, prox_q_grad, NULL, &S.pg),
         PARLOPS_OK, NULL);
  EXPECT(parlops_prox_create_l1(S.l, PARLOPS_F64, 0.1, &S.pl1), PARLOPS_OK, NULL);
  EXPECT(run_pd(S.u[0], S.u[1]), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy_to_host(S.u[0], S.ref_pd), PARLOPS_OK, NULL);
  EXPECT(run_pg(S.u[0]), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy_to_host(S.u[0], S.ref_pg), PARLOPS_OK, NULL);
  EXPECT(run_admm(S.u[0], S.u[1]), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy_to_host(S.u[0], S.ref_admm), PARLOPS_OK, NULL);
  EXPECT(parlops_prox_create_l2_op(S.Ad, 1.0, S.b, NULL, 0.0, true, PARLOPS_METHOD_CGLS, 3, 0.0, NULL, true, &S.plop),
         PARLOPS_OK, NULL);
  EXPECT(run_pdop(S.u[0], S.u[1]), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy_to_host(S.u[0], S.ref_pdop), PARLOPS_OK, NULL);
  /* f anew (its warm start back to zero): the scenario's run repeats the reference's */
  EXPECT(parlops_prox_destroy(&S.plop), PARLOPS_OK, NULL);
  EXPECT(parlops_prox_create_l2_op(S.Ad, 1.0, S.b, NULL, 0.0, true, PARLOPS_METHOD_CGLS, 3, 0.0, NULL, true, &S.plop),
         PARLOPS_OK, NULL);
}

static void teardown(void) {
  void **all[] = {(void **)&S.s,      (void **)&S.s_inner, (void **)&S.B, (void **)&S.Ad, (void **)&S.A_check, (void **)&S.Minv, (void **)&S.M,
                  (void **)&S.A,      (void **)&S.b,       (void **)&S.x, (void **)&S.y,    (void **)&S.om[0],
                  (void **)&S.om[1],  (void **)&S.om[2],   (void **)&S.om[3], (void **)&S.u[0], (void **)&S.u[1],
                  (void **)&S.l_ref,  (void **)&S.l,       (void **)&S.c,     (void **)&S.ho,       (void **)&S.opts,
                  (void **)&S.pf,     (void **)&S.pg,      (void **)&S.pl1, (void **)&S.plop};
  int kinds[] = {4, 4, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 0, 5, 6, 7, 7, 7, 7};
  /* no callback destroys anything now */
  which_cb = -1;
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    parlops_status st = destroy_kind(kinds[i], all[i]);
    expect("teardown: every handle left is live and destroyed", st, PARLOPS_OK, NULL);
  }
}

/* the running calls */
enum call { SOLVE, APPLY, EIG, CHEB, CHEB_A, JACOBI, EIG_KS, SOLVE_MANY, DIAG, PD, PG, ADMM, PDOP, NCALL };
static const char *const call_names[] = {"parlops_solver_solve", "parlops_op_apply", "parlops_eig_randomized",
                                         "parlops_op_create_chebyshev", "parlops_op_create_chebyshev (of the shell)",
                                         "parlops_solver_solve with Jacobi", "parlops_eig_krylov_schur",
                                         "parlops_solver_solve_many", "parlops_op_diagonal", "parlops_primal_dual",
                                         "parlops_proximal_gradient", "parlops_admm_l2",
                                         "parlops_primal_dual with f = L2 through an operator (parlops_prox_create_l2_op)"};

/* Run `call`; check its result. Returns the call's status. */
static parlops_status run(int call, char *what, size_t cap) {
  parlops_status st = PARLOPS_OK;
  double err = 0.0;
  switch (call) {
  case JACOBI:
    parlops_solver_set_preconditioner(S.s, NULL);
    parlops_solver_set_jacobi(S.s);
    /* the solve and its checks */
    /* fall through */
  case SOLVE: {
    st = parlops_solver_solve(S.s, S.b, S.x);
    if (st != PARLOPS_OK) break;
    parlops_solve_info info;
    parlops_solver_info(S.s, &info);
    /* x = 1: the error, and the true residual recomputed */
    parlops_vec_fill(S.y, PARLOPS_REAL(1.0));
    parlops_vec_axpy(S.y, PARLOPS_REAL(-1.0), S.x);
    parlops_vec_norm(S.y, PARLOPS_NORM_INF, 0, &err);
    double rn = 0, bn = 0;
    parlops_op_apply(S.A_check, S.x, S.y);
    parlops_vec_axpby(S.y, PARLOPS_REAL(1.0), S.b, PARLOPS_REAL(-1.0));
    parlops_vec_norm(S.y, PARLOPS_NORM_2, 0, &rn);
    parlops_vec_norm(S.b, PARLOPS_NORM_2, 0, &bn);
    if (info.reason <= 0 || rn > 1e-10 * bn || err > 1e-8) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "reason %d after %lld iterations, ||b - A x|| / ||b|| %.1e, max |x - 1| %.1e", (int)info.reason,
             (long long)info.iterations, bn > 0 ? rn / bn : rn, err);
    break;
  }
  case SOLVE_MANY: {
    /* b and 2 b (solutions 1 and 2), from x = 0: block CG (no iterate monitor: it takes one column) */
    parlops_solver_set_monitor_iterate(S.s, NULL, NULL);
    parlops_vec_copy(S.b, S.u[0]);
    parlops_vec_scale(S.u[0], PARLOPS_REAL(2.0));
    parlops_vec_fill(S.x, PARLOPS_REAL(0.0));
    parlops_vec_fill(S.u[1], PARLOPS_REAL(0.0));
    const parlops_vec *bs[2] = {S.b, S.u[0]};
    parlops_vec *xs[2] = {S.x, S.u[1]};
    st = parlops_solver_solve_many(S.s, 2, bs, xs);
    if (st != PARLOPS_OK) break;
    double worst = 0.0;
    int reason_ok = 1;
    for (int j = 0; j < 2; j++) {
      parlops_solve_info info;
      parlops_solver_info_column(S.s, j, &info);
      reason_ok = reason_ok && info.reason > 0;
      double rn = 0, bn = 0, e = 0;
      parlops_op_apply(S.A_check, xs[j], S.y);
      parlops_vec_axpby(S.y, PARLOPS_REAL(1.0), bs[j], PARLOPS_REAL(-1.0));
      parlops_vec_norm(S.y, PARLOPS_NORM_2, 0, &rn);
      parlops_vec_norm(bs[j], PARLOPS_NORM_2, 0, &bn);
      parlops_vec_fill(S.y, PARLOPS_REAL(1.0 + j));
      parlops_vec_axpy(S.y, PARLOPS_REAL(-1.0), xs[j]);
      parlops_vec_norm(S.y, PARLOPS_NORM_INF, 0, &e);
      if (rn > 1e-10 * bn) reason_ok = 0;
      worst = fmax(worst, fmax(rn / bn, e));
    }
    if (!reason_ok || worst > 1e-8) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "2 columns, worst of ||b - A x|| / ||b|| and max |x - x*| %.1e", worst);
    break;
  }
  case PD:
  case PG:
  case ADMM:
  case PDOP: {
    /* the same iterates, bit for bit, as the run without destroys in build() */
    st = call == PD ? run_pd(S.x, S.y) : call == PG ? run_pg(S.x) : call == ADMM ? run_admm(S.x, S.y) : run_pdop(S.x, S.y);
    if (st != PARLOPS_OK) break;
    double xv[N];
    parlops_vec_copy_to_host(S.x, xv);
    const double *ref = call == PD ? S.ref_pd : call == PG ? S.ref_pg : call == ADMM ? S.ref_admm : S.ref_pdop;
    for (int64_t i = 0; i < S.len; i++)
      if (xv[i] != ref[i]) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "x %s the run without destroys", st == PARLOPS_OK ? "equal to" : "differs from");
    break;
  }
  case DIAG: {
    st = parlops_op_diagonal(S.A, S.y);
    if (st != PARLOPS_OK) break;
    double d[N];
    parlops_vec_copy_to_host(S.y, d);
    for (int64_t i = 0; i < S.len; i++)
      if (d[i] != 1.0 + (double)(S.lo + i) / 8.0) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "the diagonal %s", st == PARLOPS_OK ? "right" : "wrong");
    break;
  }
  case APPLY: {
    parlops_vec_fill(S.x, PARLOPS_REAL(1.0));
    st = parlops_op_apply(S.A, S.x, S.y);
    if (st != PARLOPS_OK) break;
    parlops_vec_axpy(S.y, PARLOPS_REAL(-1.0), S.b); /* A 1 = b */
    parlops_vec_norm(S.y, PARLOPS_NORM_INF, 0, &err);
    if (err > 0) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "max |A 1 - b| %.1e", err);
    break;
  }
  case EIG: {
    double ev[2] = {0, 0};
    st = parlops_eig_randomized(S.A, NULL, NULL, 4, (const parlops_vec *const *)S.om, 2, PARLOPS_RANDOMIZED_DOUBLE_PASS, 2,
                                ev, S.u);
    if (st != PARLOPS_OK) break;
    /* the largest diagonal entry is 1 + (N - 1) / 8; a Rayleigh-Ritz value of it within the spectrum */
    double top = 1.0 + (N - 1) / 8.0;
    if (!(ev[0] <= top * (1 + 1e-12) && ev[0] > 1.0 && ev[1] <= ev[0])) st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "eigenvalues %.6f, %.6f (largest %.6f)", ev[0], ev[1], top);
    break;
  }
  case EIG_KS: {
    /* the pencil (A, M) with M = I and inv = Minv (CG on M): OP = A; the two largest of the diagonal */
    double ev[2] = {0, 0}, res[2] = {1, 1};
    int64_t prods = 0;
    st = parlops_eig_krylov_schur(S.A, S.M, S.Minv, 0.0, S.om[0], 2, 8, 2000, 1e-10, PARLOPS_EIG_LARGEST, eig_monitor, NULL,
                                  ev, res, S.u, &prods);
    if (st != PARLOPS_OK) break;
    double top = 1.0 + (N - 1) / 8.0;
    if (!(fabs(ev[0] - top) <= 1e-8 * top && fabs(ev[1] - (top - 0.125)) <= 1e-8 * top && res[0] <= 1e-10 && res[1] <= 1e-10))
      st = PARLOPS_ERR_INTERNAL;
    snprintf(what, cap, "eigenvalues %.12f, %.12f (exact %.12f, %.12f), residuals %.1e, %.1e in %lld products", ev[0], ev[1],
             top, top - 0.125, res[0], res[1], (long long)prods);
    break;
  }
  case CHEB:
  case CHEB_A: {
    parlops_op *C = NULL;
    st = parlops_op_create_chebyshev(call == CHEB ? S.B : S.A, 3, -1.0, -1.0, &C);
    if (st == PARLOPS_OK) parlops_op_destroy(&C);
    snprintf(what, cap, "set-up %s", st == PARLOPS_OK ? "made" : "failed");
    break;
  }
  }
  return st;
}

/* One scenario: build, arm the callback, run, check the destroy's status and the call's result,
 * tear down. */
static void scenario(int call, int cb, int kind, void **h, const char *hname, parlops_status want) {
  build();
  which_cb = cb;
  target_kind = kind;
  target = h;
  calls = fired = 0;
  got = PARLOPS_OK;
  got_msg[0] = 0;
  /* a solve's callbacks run many times: the second call, in the middle of it; the others', the first */
  fire_at = call == SOLVE && cb != CB_DESTROY_CTX ? 2 : 1;
  char name[400], what[256] = "";
  snprintf(name, sizeof name, "%s: %s destroys %s", call_names[call], cb_names[cb], hname);
  parlops_status st = run(call, what, sizeof what);
  if (cb == CB_DESTROY_CTX) {
    /* the operator's context goes with the last reference to it, the solver's, here */
    S.s_saved = S.s;
    parlops_op_destroy(&S.B);
    parlops_op_destroy(&S.A_check);
    parlops_op_destroy(&S.A);
    parlops_solver_destroy(&S.s);
  }
  int reached = fired || cb == CB_DESTROY_CTX;
  expect(name, reached ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (!reached) fprintf(stderr, "rank %d: %s: the callback never ran\n", rank_, name);
  int ok = fired && got == want;
  expect(name, ok || !reached ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (fired && got != want)
    fprintf(stderr, "rank %d: %s: the destroy returned %d, documented %d (%s)\n", rank_, name, (int)got, (int)want, got_msg);
  if (want == PARLOPS_ERR_BUSY && fired && !strstr(got_msg, "in use") && !strstr(got_msg, "lent"))
    fprintf(stderr, "rank %d: %s: message does not say why: %s\n", rank_, name, got_msg);
  char res[700];
  snprintf(res, sizeof res, "%s, then the call's result: %s", name, what);
  expect(res, st, PARLOPS_OK, NULL);
  teardown();
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  (void)handle_types;
  (void)callback_types;
  const parlops_status BUSY = PARLOPS_ERR_BUSY, OK = PARLOPS_OK;
  /* a solve: from each callback it reaches, each object it depends on */
  for (int cb = CB_OP; cb <= CB_ITERATE; cb++) {
    scenario(SOLVE, cb, 4, (void **)&S.s, "the solver (passed)", BUSY);
    scenario(SOLVE, cb, 2, (void **)&S.b, "b (passed)", BUSY);
    scenario(SOLVE, cb, 2, (void **)&S.x, "x (passed)", BUSY);
    scenario(SOLVE, cb, 3, (void **)&S.A, "the operator (held by the solver)", OK);
    scenario(SOLVE, cb, 3, (void **)&S.Minv, "the preconditioner (held by the solver)", OK);
    scenario(SOLVE, cb, 3, (void **)&S.M, "the inner operator of the preconditioner (held by it)", OK);
    scenario(SOLVE, cb, 4, (void **)&S.s_inner, "the solver behind the inverse preconditioner (a snapshot is held)", OK);
    scenario(SOLVE, cb, 1, (void **)&S.l, "the layout (held by the vectors)", OK);
    scenario(SOLVE, cb, 1, (void **)&S.l_ref, "a second reference to the layout", OK);
    scenario(SOLVE, cb, 0, (void **)&S.c, "the communicator (held by everything)", OK);
    scenario(SOLVE, cb, 5, (void **)&S.ho, "a set of hypre options (copied by what took it)", OK);
    scenario(SOLVE, cb, 6, (void **)&S.opts, "a set of run-time options (its settings copied by the solver)", OK);
  }
  scenario(SOLVE, CB_ITERATE, 2, (void **)&S.lent, "the iterate lent to it", BUSY);
  /* several right-hand sides (block CG): from the operator's, the preconditioner's and the
   * monitor's callbacks */
  for (int cb = CB_OP; cb <= CB_MONITOR; cb++) {
    scenario(SOLVE_MANY, cb, 4, (void **)&S.s, "the solver (passed)", BUSY);
    scenario(SOLVE_MANY, cb, 2, (void **)&S.b, "b[0] (passed)", BUSY);
    scenario(SOLVE_MANY, cb, 2, (void **)&S.u[1], "x[1] (passed)", BUSY);
    scenario(SOLVE_MANY, cb, 3, (void **)&S.A, "the operator (held by the solver)", OK);
    scenario(SOLVE_MANY, cb, 3, (void **)&S.Minv, "the preconditioner (held by the solver)", OK);
    scenario(SOLVE_MANY, cb, 4, (void **)&S.s_inner, "the solver behind the inverse preconditioner", OK);
    scenario(SOLVE_MANY, cb, 1, (void **)&S.l, "the layout (held by the vectors)", OK);
    scenario(SOLVE_MANY, cb, 0, (void **)&S.c, "the communicator (held by everything)", OK);
  }
  /* the diagonal of a shell (not collective: the caller's callback on each rank) */
  scenario(DIAG, CB_DIAG, 3, (void **)&S.A, "the operator (passed)", BUSY);
  scenario(DIAG, CB_DIAG, 2, (void **)&S.y, "the output vector (passed)", BUSY);
  scenario(DIAG, CB_DIAG, 1, (void **)&S.l, "the layout", OK);
  /* an operator apply, the randomized eigensolver, a Chebyshev set-up: from the operator's callback */
  scenario(APPLY, CB_OP, 3, (void **)&S.A, "the operator (passed)", BUSY);
  scenario(APPLY, CB_OP, 2, (void **)&S.x, "x (passed)", BUSY);
  scenario(APPLY, CB_OP, 2, (void **)&S.y, "y (passed)", BUSY);
  scenario(APPLY, CB_OP, 4, (void **)&S.s, "a solver holding the operator", OK);
  scenario(APPLY, CB_OP, 1, (void **)&S.l, "the layout", OK);
  scenario(EIG, CB_OP, 3, (void **)&S.A, "the operator (passed)", BUSY);
  scenario(EIG, CB_OP, 2, (void **)&S.om[0], "omega[0] (passed)", BUSY);
  scenario(EIG, CB_OP, 2, (void **)&S.u[1], "u[1] (passed)", BUSY);
  scenario(EIG, CB_OP, 2, (void **)&S.b, "a vector it does not use", OK);
  /* Krylov-Schur: from its monitor and from the operator's callback */
  for (int cb = CB_OP; cb <= CB_EIGMON; cb += CB_EIGMON - CB_OP) {
    scenario(EIG_KS, cb, 3, (void **)&S.A, "the operator a (passed)", BUSY);
    scenario(EIG_KS, cb, 3, (void **)&S.M, "the operator b (passed)", BUSY);
    scenario(EIG_KS, cb, 3, (void **)&S.Minv, "the operator inv (passed)", BUSY);
    scenario(EIG_KS, cb, 2, (void **)&S.om[0], "v0 (passed)", BUSY);
    scenario(EIG_KS, cb, 2, (void **)&S.u[1], "vecs[1] (passed)", BUSY);
    scenario(EIG_KS, cb, 4, (void **)&S.s_inner, "the solver behind inv (a snapshot is held)", OK);
    scenario(EIG_KS, cb, 2, (void **)&S.b, "a vector it does not use", OK);
    scenario(EIG_KS, cb, 1, (void **)&S.l, "the layout", OK);
  }
  scenario(CHEB, CB_OP, 3, (void **)&S.B, "the block operator (passed)", BUSY);
  scenario(CHEB, CB_OP, 3, (void **)&S.A, "a block of it (held by the block operator)", OK);
  scenario(CHEB, CB_PC, 3, (void **)&S.M, "another block of it (held by the block operator)", OK);
  /* from the operator's diagonal callback: a Chebyshev set-up on it, a Jacobi solve */
  scenario(CHEB_A, CB_DIAG, 3, (void **)&S.A, "the operator (passed)", BUSY);
  scenario(CHEB_A, CB_DIAG, 4, (void **)&S.s, "a solver holding the operator", OK);
  scenario(CHEB_A, CB_DIAG, 1, (void **)&S.l, "the layout", OK);
  scenario(CHEB_A, CB_DIAG, 0, (void **)&S.c, "the communicator", OK);
  scenario(JACOBI, CB_DIAG, 4, (void **)&S.s, "the solver (passed)", BUSY);
  scenario(JACOBI, CB_DIAG, 2, (void **)&S.b, "b (passed)", BUSY);
  scenario(JACOBI, CB_DIAG, 3, (void **)&S.A, "the operator (held by the solver)", OK);
  scenario(JACOBI, CB_DIAG, 1, (void **)&S.l, "the layout (held by the vectors)", OK);
  /* the proximal solvers: from the proximal operator's callbacks and the operator's */
  for (int cb = CB_OP; cb <= CB_PROX; cb += CB_PROX - CB_OP) {
    scenario(PD, cb, 7, (void **)&S.pf, "f (passed)", BUSY);
    scenario(PD, cb, 7, (void **)&S.pg, "g (passed)", BUSY);
    scenario(PD, cb, 3, (void **)&S.A, "the operator (passed)", BUSY);
    scenario(PD, cb, 2, (void **)&S.x, "x (passed)", BUSY);
    scenario(PD, cb, 2, (void **)&S.y, "y (passed)", BUSY);
    scenario(PD, cb, 2, (void **)&S.b, "f's b (copied by f)", OK);
    scenario(PD, cb, 7, (void **)&S.pl1, "a proximal operator it does not use", OK);
    scenario(PD, cb, 1, (void **)&S.l, "the layout", OK);
    scenario(PD, cb, 0, (void **)&S.c, "the communicator", OK);
  }
  scenario(PG, CB_PROX, 7, (void **)&S.pg, "f (passed)", BUSY);
  scenario(PG, CB_PROX, 7, (void **)&S.pl1, "g (passed)", BUSY);
  scenario(PG, CB_PROX, 2, (void **)&S.x, "x (passed)", BUSY);
  scenario(PG, CB_PROX, 7, (void **)&S.pf, "a proximal operator it does not use", OK);
  scenario(PG, CB_PROX, 1, (void **)&S.l, "the layout", OK);
  /* ADMM (its operators' and g's callbacks), and f = L2 through an operator (held by f) */
  for (int cb = CB_OP; cb <= CB_PROX; cb += CB_PROX - CB_OP) {
    scenario(ADMM, cb, 7, (void **)&S.pg, "g (passed)", BUSY);
    scenario(ADMM, cb, 3, (void **)&S.A, "Op and A (passed)", BUSY);
    scenario(ADMM, cb, 2, (void **)&S.b, "b (passed)", BUSY);
    scenario(ADMM, cb, 2, (void **)&S.x, "x (passed)", BUSY);
    scenario(ADMM, cb, 2, (void **)&S.y, "z (passed)", BUSY);
    scenario(ADMM, cb, 7, (void **)&S.pl1, "a proximal operator it does not use", OK);
    scenario(ADMM, cb, 1, (void **)&S.l, "the layout", OK);
    scenario(ADMM, cb, 0, (void **)&S.c, "the communicator", OK);
    scenario(PDOP, cb, 7, (void **)&S.plop, "f = L2 through an operator (passed)", BUSY);
    scenario(PDOP, cb, 3, (void **)&S.Ad, "f's operator (held by f)", OK);
    scenario(PDOP, cb, 2, (void **)&S.b, "f's b (copied by f)", OK);
  }
  /* from a context's destroy callback, run while the operator goes away after a solve */
  scenario(SOLVE, CB_DESTROY_CTX, 2, (void **)&S.b, "a vector the solve used", OK);
  scenario(SOLVE, CB_DESTROY_CTX, 4, (void **)&S.s_saved, "the solver whose destruction runs it (already unregistered)",
           PARLOPS_ERR_INVALID_HANDLE);
  alarm(0);
  int all = 0;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("lifetime (%d ranks): %d passed, %d failed\n", size_, passed, all);
  MPI_Finalize();
  return all != 0;
}
