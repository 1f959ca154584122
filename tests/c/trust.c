/* The second audit's cases (issue 38, sections 1-3), one test each, at 1-4 ranks: every rank must
 * get the same status within the watchdog's time (no hang, abort or crash), and no call may report
 * success with a wrong answer.
 *
 * Usage: trust [CASE ...]   (default: every case that the rank count allows; the names below)
 *        trust --hypre PATH  (PARLOPS_HYPRE_LIBRARY is set to PATH by the caller: parlops_config_report
 *                             must return, and BoomerAMG must fail on every rank naming PATH)
 * Prints "trust (N ranks): P passed, F failed" on rank 0.
 * Built with -DPARLOPS_OLD_API against the library before issue 38 (no communicator argument for
 * block_dot, orthonormalize, low_rank and layout_stack; no PARLOPS_ERR_BUSY) to show which cases
 * failed there (run one case per process: a hang ends the process). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

#include <mpi.h>

#include "expect.h"

#ifdef PARLOPS_OLD_API
#define PARLOPS_ERR_BUSY 18
#define BLOCK_DOT(c, ...) parlops_vec_block_dot(__VA_ARGS__)
#define ORTHONORMALIZE(c, ...) parlops_vec_orthonormalize(__VA_ARGS__)
#define LOW_RANK(c, ...) parlops_op_low_rank(__VA_ARGS__)
#define LAYOUT_STACK(c, ...) parlops_layout_stack(__VA_ARGS__)
#else
#define BLOCK_DOT(c, ...) parlops_vec_block_dot(c, __VA_ARGS__)
#define ORTHONORMALIZE(c, ...) parlops_vec_orthonormalize(c, __VA_ARGS__)
#define LOW_RANK(c, ...) parlops_op_low_rank(c, __VA_ARGS__)
#define LAYOUT_STACK(c, ...) parlops_layout_stack(c, __VA_ARGS__)
#endif

static parlops_comm *c = NULL;
static parlops_layout *l = NULL; /* 30 entries, split unevenly (rank 0 short by 3, the last long by 3) */
static int64_t lo = 0, len = 0;
static int last = 0, multi = 0;

/* the 1D Laplacian tridiag(-1, 2, -1) + 0.1 I of l, 64-bit indices */
static parlops_op *laplacian(void) {
  int64_t rp[64], ci[192];
  double v[192];
  int64_t k = 0;
  rp[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) ci[k] = g - 1, v[k++] = -1.0;
    ci[k] = g, v[k++] = 2.1;
    if (g < 29) ci[k] = g + 1, v[k++] = -1.0;
    rp[i + 1] = k;
  }
  parlops_op *A = NULL;
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &A), PARLOPS_OK, NULL);
  return A;
}

static parlops_vec *vec(uint64_t seed) {
  parlops_vec *v = NULL;
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &v), PARLOPS_OK, NULL);
  if (seed) EXPECT(parlops_vec_set_random(v, PARLOPS_RANDOM_GAUSSIAN, seed), PARLOPS_OK, NULL);
  return v;
}

/* ||b - A x|| <= rule? (the true residual, recomputed) */
static double true_residual(const parlops_op *A, const parlops_vec *b, const parlops_vec *x) {
  parlops_vec *r = NULL;
  double rn = 0.0;
  parlops_vec_duplicate(b, &r);
  parlops_op_apply(A, x, r);
  parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0));
  parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn);
  parlops_vec_destroy(&r);
  return rn;
}

/* ---- shells: y = s x (s = 2), failing on fail_rank; `reenter` applies `reenter_op` from inside */
static int fail_rank = -1;
static parlops_op *reenter_op = NULL;
static parlops_vec *reenter_x = NULL, *reenter_y = NULL;
static int shell(void *ctx, const void *x, void *y) {
  (void)ctx;
  for (int64_t i = 0; i < len; i++) ((double *)y)[i] = 2.0 * ((const double *)x)[i];
  return rank_ == fail_rank ? 7 : 0;
}
static int reenter(void *ctx, const void *x, void *y) {
  (void)ctx;
  for (int64_t i = 0; i < len; i++) ((double *)y)[i] = ((const double *)x)[i];
  if (!reenter_op) return 0;
  parlops_status st = parlops_op_apply(reenter_op, reenter_x, reenter_y);
  return st == PARLOPS_OK ? 0 : 9;
}
static parlops_op *shell_op(parlops_apply_fn f) {
  parlops_op *S = NULL;
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, f, f, NULL, &S), PARLOPS_OK, NULL);
  return S;
}

/* ================================================================ 1. hangs */

static void case_block_dot_empty(void) {
  parlops_vec *v = vec(1);
  const parlops_vec *xs[2] = {v, v};
  parlops_scalar out[4];
  int n = rank_ == last ? 0 : 1;
  EXPECT(BLOCK_DOT(c, n, xs, n, xs, out), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "nx");
  EXPECT(BLOCK_DOT(c, 0, xs, 0, xs, out), PARLOPS_OK, NULL); /* empty on every rank: nothing to do */
  EXPECT(BLOCK_DOT(c, 1, xs, 1, xs, out), PARLOPS_OK, NULL);
  parlops_vec_destroy(&v);
}

static void case_orthonormalize_empty(void) {
  parlops_vec *v = vec(2), *w = vec(3);
  parlops_vec *vs[2] = {v, w};
  EXPECT(ORTHONORMALIZE(c, rank_ == last ? 0 : 2, vs, NULL, NULL), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, NULL);
  EXPECT(ORTHONORMALIZE(c, 0, vs, NULL, NULL), PARLOPS_OK, NULL);
  EXPECT(ORTHONORMALIZE(c, 2, vs, NULL, NULL), PARLOPS_OK, NULL);
  parlops_vec_destroy(&v);
  parlops_vec_destroy(&w);
}

static void case_low_rank_empty(void) {
  parlops_vec *v = vec(4);
  const parlops_vec *us[1] = {v};
  double d[1] = {1.0};
  parlops_op *L = NULL;
  EXPECT(LOW_RANK(c, rank_ == last ? 0 : 1, us, d, &L), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  expect("low_rank k = 0 on one rank: no operator", L == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_vec_destroy(&v);
}

static void case_layout_stack_empty(void) {
  const parlops_layout *ps[2] = {l, l};
  parlops_layout *sl = NULL;
  EXPECT(LAYOUT_STACK(c, rank_ == last ? 0 : 2, ps, &sl), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  expect("layout_stack n = 0 on one rank: no layout", sl == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
}

static void case_pc_one_rank(void) {
  parlops_op *A = laplacian(), *D = NULL, *J = NULL;
  parlops_vec *b = vec(5), *x = vec(0), *d = vec(0);
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  /* set on one rank only */
  if (rank_ == last) EXPECT(parlops_solver_set_preconditioner(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "preconditioner");
  /* a different preconditioner on one rank (a diagonal there, the Laplacian elsewhere: their
   * applies communicate differently) */
  EXPECT(parlops_vec_fill(d, PARLOPS_REAL(0.5)), PARLOPS_OK, NULL);
  EXPECT(parlops_op_diagonal_matrix(d, &D), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_IC0, 1.0, &J), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, rank_ == last ? D : A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, NULL);
  /* a different operator on one rank */
  EXPECT(parlops_solver_set_preconditioner(s, NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, rank_ == last ? D : A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, NULL);
  /* the same on every rank: converges, true residual checked */
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, J), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 200), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  parlops_solve_info info;
  parlops_solver_info(s, &info);
  double bn;
  parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn);
  expect("the same preconditioner everywhere: converged, true residual within the rule",
         info.reason > 0 && true_residual(A, b, x) <= 1e-10 * bn * 1.0001 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_solver_destroy(&s);
  parlops_op_destroy(&J);
  parlops_op_destroy(&D);
  parlops_op_destroy(&A);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&d);
}

static void case_block_pattern(void) {
  parlops_op *A = laplacian(), *K = NULL;
  const parlops_op *bl[4] = {A, NULL, NULL, A};
  /* a 1 x 1 pattern on one rank, 2 x 2 elsewhere (the hang at 3-4 ranks, a one-sided error at 2) */
  EXPECT(parlops_op_block(c, PARLOPS_F64, rank_ == last ? 1 : 2, rank_ == last ? 1 : 2, bl, &K),
         multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, NULL);
  parlops_op_destroy(&K);
  /* the same shape, another block given on one rank */
  const parlops_op *bl2[4] = {A, rank_ == last ? A : NULL, NULL, A};
  EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, bl2, &K), multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, NULL);
  parlops_op_destroy(&K);
  parlops_op_destroy(&A);
}

static void case_chebyshev_callback(void) {
  parlops_op *A = laplacian(), *S = shell_op(shell), *B = NULL, *Bd = NULL, *C = NULL;
  /* [A S; S A]: a diagonal (A's), and a shell callback inside */
  const parlops_op *bl[4] = {A, S, S, A};
  EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, bl, &B), PARLOPS_OK, NULL);
  fail_rank = last; /* the set-up's power iteration */
  EXPECT(parlops_op_create_chebyshev(B, 3, -1.0, -1.0, &C), PARLOPS_ERR_CALLBACK, "returned 7");
  fail_rank = -1;
  EXPECT(parlops_op_create_chebyshev(B, 3, 1.0, 5.0, &C), PARLOPS_OK, NULL);
  /* its apply inside PCG on [A 0; 0 A] */
  const parlops_op *bd[4] = {A, NULL, NULL, A};
  EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, bd, &Bd), PARLOPS_OK, NULL);
  parlops_vec *bx = NULL, *by = NULL;
  EXPECT(parlops_op_create_vecs(Bd, &bx, &by), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_set_random(by, PARLOPS_RANDOM_UNIFORM, 6), PARLOPS_OK, NULL);
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, Bd), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, C), PARLOPS_OK, NULL);
  fail_rank = last;
  EXPECT(parlops_solver_solve(s, by, bx), PARLOPS_ERR_CALLBACK, "returned 7");
  EXPECT(parlops_op_apply(C, by, bx), PARLOPS_ERR_CALLBACK, "returned 7");
  fail_rank = -1;
  EXPECT(parlops_solver_solve(s, by, bx), PARLOPS_OK, NULL);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&bx);
  parlops_vec_destroy(&by);
  parlops_op_destroy(&C);
  parlops_op_destroy(&Bd);
  parlops_op_destroy(&B);
  parlops_op_destroy(&S);
  parlops_op_destroy(&A);
}

/* every option handed to hypre, at its extremes, on every rank (a huge sweep count looped for
 * ever, a huge level count crashed inside hypre) and on one rank */
static void case_amg_ranges(void) {
  parlops_op *A = laplacian(), *M = NULL;
  /* without a hypre for this MPI (an MPICH build: Debian's hypre is built on Open MPI) the options
   * are still checked first on every rank; on one rank only, the others' "no hypre" comes first */
  parlops_status have = parlops_op_create_boomeramg(A, NULL, &M);
  parlops_op_destroy(&M);
  int have_hypre = have == PARLOPS_OK;
  if (!have_hypre && rank_ == 0) printf("trust: no usable hypre (%s): options checked on every rank only\n", parlops_last_error());
  expect("BoomerAMG with hypre's defaults: made, or not supported on every rank",
         have == PARLOPS_OK || have == PARLOPS_ERR_NOT_SUPPORTED ? PARLOPS_OK : have, PARLOPS_OK, NULL);
  struct {
    const char *name;
    size_t off;
  } f[] = {{"coarsen_type", offsetof(parlops_amg_options, coarsen_type)},
           {"interp_type", offsetof(parlops_amg_options, interp_type)},
           {"relax_type", offsetof(parlops_amg_options, relax_type)},
           {"num_sweeps", offsetof(parlops_amg_options, num_sweeps)},
           {"max_levels", offsetof(parlops_amg_options, max_levels)},
           {"agg_num_levels", offsetof(parlops_amg_options, agg_num_levels)},
           {"num_functions", offsetof(parlops_amg_options, num_functions)},
           {"dof_ordering", offsetof(parlops_amg_options, dof_ordering)},
           {"print_level", offsetof(parlops_amg_options, print_level)}};
  int32_t bad[] = {INT_MAX, INT_MIN + 1, 1000};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    for (size_t j = 0; j < sizeof bad / sizeof *bad; j++) {
      /* INT_MIN + 1 and the like: negative means hypre's default, except where no default exists */
      if (bad[j] < 0 && strcmp(f[i].name, "num_functions") && strcmp(f[i].name, "dof_ordering") &&
          strcmp(f[i].name, "print_level"))
        continue;
      for (int one = 0; one <= (multi && have_hypre); one++) {
        parlops_amg_options o;
        parlops_amg_options_init(&o);
        if (!one || rank_ == last) *(int32_t *)((char *)&o + f[i].off) = bad[j];
        char name[160];
        snprintf(name, sizeof name, "BoomerAMG options.%s = %d on %s", f[i].name, bad[j], one ? "one rank" : "every rank");
        expect(name, parlops_op_create_boomeramg(A, &o, &M), PARLOPS_ERR_INVALID_ARGUMENT, f[i].name);
        expect("no operator after a refused option", M == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
      }
    }
  parlops_amg_options o;
  parlops_amg_options_init(&o);
  o.strong_threshold = NAN;
  EXPECT(parlops_op_create_boomeramg(A, &o, &M), PARLOPS_ERR_INVALID_ARGUMENT, "strong_threshold");
  o.strong_threshold = 2.0;
  EXPECT(parlops_op_create_boomeramg(A, &o, &M), PARLOPS_ERR_INVALID_ARGUMENT, "strong_threshold");
  /* the bounds themselves are accepted */
  if (!have_hypre) {
    parlops_op_destroy(&A);
    return;
  }
  parlops_amg_options_init(&o);
  o.num_sweeps = 100;
  o.max_levels = 100;
  o.agg_num_levels = 0;
  o.coarsen_type = 8;
  o.relax_type = 18;
  o.interp_type = 6;
  EXPECT(parlops_op_create_boomeramg(A, &o, &M), PARLOPS_OK, NULL);
  parlops_op_destroy(&M);
  parlops_op_destroy(&A);
}

/* graphs that contain themselves through a shell: the shell's callback applies the composite */
static void case_self_graphs(void) {
  parlops_op *R = shell_op(reenter), *A = laplacian();
  parlops_vec *x = vec(7), *y = vec(0), *z = vec(0);
  reenter_x = x;
  reenter_y = z;
  /* an inverse of a solver on the shell */
  parlops_solver *s = NULL;
  parlops_op *G = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, R), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_inverse(s, true, &G), PARLOPS_OK, NULL);
  reenter_op = G;
  EXPECT(parlops_op_apply(G, x, y), PARLOPS_ERR_CALLBACK, "returned 9");
  /* a block operator holding the shell */
  parlops_op *B = NULL;
  const parlops_op *bl[4] = {A, R, NULL, A};
  EXPECT(parlops_op_block(c, PARLOPS_F64, 2, 2, bl, &B), PARLOPS_OK, NULL);
  parlops_vec *bx = NULL, *by = NULL;
  EXPECT(parlops_op_create_vecs(B, &bx, &by), PARLOPS_OK, NULL);
  reenter_op = B;
  reenter_x = bx;
  reenter_y = by;
  parlops_vec *bz = NULL;
  EXPECT(parlops_vec_duplicate(by, &bz), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply(B, bx, bz), PARLOPS_ERR_CALLBACK, "returned 9");
  /* a block lower-triangular preconditioner whose diagonal preconditioner is the shell */
  parlops_op *BL = NULL;
  const parlops_op *dg[2] = {R, A};
  EXPECT(parlops_op_block_lower_triangular(B, 2, dg, &BL), PARLOPS_OK, NULL);
  reenter_op = BL;
  EXPECT(parlops_op_apply(BL, bx, bz), PARLOPS_ERR_CALLBACK, "returned 9");
  reenter_op = NULL;
  parlops_op_destroy(&BL);
  parlops_op_destroy(&B);
  parlops_op_destroy(&G);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&bx);
  parlops_vec_destroy(&by);
  parlops_vec_destroy(&bz);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&y);
  parlops_vec_destroy(&z);
  parlops_op_destroy(&R);
  parlops_op_destroy(&A);
}

/* ================================================================ 2. aborts and crashes */

/* a 2 x 2^40 grid: the last rank holds one point, so its ghost line is 2^40 values (8 TiB) */
static void case_poisson_huge_halo(void) {
  int64_t nx = (int64_t)1 << 40, total = 2 * nx;
  int64_t mine = rank_ == 0 ? total - (multi ? 1 : 0) : rank_ == last ? 1 : 0;
  parlops_layout *lh = NULL;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, total, mine, &lh), PARLOPS_OK, NULL);
  int64_t dims[2] = {2, nx};
  parlops_op *P = NULL;
  if (multi) EXPECT(parlops_op_poisson(lh, 2, dims, PARLOPS_F64, &P), PARLOPS_ERR_OUT_OF_MEMORY, NULL);
  parlops_op_destroy(&P);
  parlops_layout_destroy(&lh);
}

/* destroying the solver, x or b from the iterate monitor, CG and GMRES */
static parlops_solver *mon_s = NULL;
static parlops_vec *mon_b = NULL, *mon_x = NULL;
static int mon_what = 0;
static parlops_status mon_got[3];
static int mon_destroy(void *ctx, int64_t it, double r, const parlops_vec *x, const parlops_vec *res) {
  (void)ctx;
  (void)r;
  (void)x;
  (void)res;
  if (it == 2) {
    mon_got[0] = mon_what == 0 ? parlops_solver_destroy(&mon_s) : mon_what == 1 ? parlops_vec_destroy(&mon_x)
                                                                                 : parlops_vec_destroy(&mon_b);
  }
  return PARLOPS_MONITOR_CONTINUE;
}
static void case_destroy_from_monitor(void) {
  parlops_op *A = laplacian();
  int methods[2] = {PARLOPS_METHOD_CG, PARLOPS_METHOD_GMRES};
  for (int m = 0; m < 2; m++)
    for (mon_what = 0; mon_what < 3; mon_what++) {
      mon_b = vec(8);
      mon_x = vec(0);
      mon_got[0] = PARLOPS_OK;
      EXPECT(parlops_solver_create(c, methods[m], &mon_s), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_set_operator(mon_s, A), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_set_tolerances(mon_s, 1e-10, 0.0, 1e5, 500), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_set_monitor_iterate(mon_s, mon_destroy, NULL), PARLOPS_OK, NULL);
      parlops_solver *keep = mon_s;
      EXPECT(parlops_solver_solve(mon_s, mon_b, mon_x), PARLOPS_OK, NULL);
      char name[160];
      snprintf(name, sizeof name, "%s: destroying %s from the iterate monitor is refused (BUSY)", m ? "GMRES" : "CG",
               mon_what == 0 ? "the solver" : mon_what == 1 ? "x" : "b");
      expect(name, mon_got[0], PARLOPS_ERR_BUSY, NULL);
      parlops_solve_info info;
      EXPECT(parlops_solver_info(keep, &info), PARLOPS_OK, NULL);
      double bn;
      parlops_vec_norm(mon_b, PARLOPS_NORM_2, 0, &bn);
      expect("... and the solve converged, true residual within the rule",
             info.reason > 0 && true_residual(A, mon_b, mon_x) <= 1e-10 * bn * 1.0001 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
             PARLOPS_OK, NULL);
      EXPECT(parlops_solver_destroy(&keep), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_destroy(&mon_b), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_destroy(&mon_x), PARLOPS_OK, NULL);
    }
  parlops_op_destroy(&A);
}

/* ================================================================ 3. wrong answers */

static void case_randomized_sizes(void) {
  parlops_layout *l6 = NULL;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 6, PARLOPS_DECIDE, &l6), PARLOPS_OK, NULL);
  int64_t a, n;
  parlops_layout_local_range(l6, &a, &n);
  parlops_vec *d = NULL, *om[13], *u[8];
  EXPECT(parlops_vec_create(l6, PARLOPS_F64, PARLOPS_MEMORY_HOST, &d), PARLOPS_OK, NULL);
  double dl[6];
  for (int64_t i = 0; i < n; i++) dl[i] = (double)(a + i + 1); /* eigenvalues 1..6 */
  parlops_vec_copy_from_host(d, dl);
  parlops_op *D = NULL;
  EXPECT(parlops_op_diagonal_matrix(d, &D), PARLOPS_OK, NULL);
  for (int i = 0; i < 13; i++) {
    EXPECT(parlops_vec_create(l6, PARLOPS_F64, PARLOPS_MEMORY_HOST, &om[i]), PARLOPS_OK, NULL);
    parlops_vec_set_random(om[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(i + 1));
  }
  for (int i = 0; i < 8; i++) EXPECT(parlops_vec_create(l6, PARLOPS_F64, PARLOPS_MEMORY_HOST, &u[i]), PARLOPS_OK, NULL);
  double ev[8] = {-7, -7, -7, -7, -7, -7, -7, -7};
  EXPECT(parlops_eig_randomized(D, NULL, NULL, 10, (const parlops_vec *const *)om, 1, PARLOPS_RANDOMIZED_DOUBLE_PASS, 8, ev, u),
         PARLOPS_ERR_INVALID_ARGUMENT, "k = 8");
  expect("k > n: nothing written", ev[0] == -7 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  int passes[2] = {PARLOPS_RANDOMIZED_DOUBLE_PASS, PARLOPS_RANDOMIZED_SINGLE_PASS};
  int nos[2] = {10, 13};
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 2; q++) {
      EXPECT(parlops_eig_randomized(D, NULL, NULL, nos[q], (const parlops_vec *const *)om, 1, passes[p], 4, ev, u), PARLOPS_OK,
             NULL);
      double worst = 0;
      for (int i = 0; i < 4; i++) worst = fmax(worst, fabs(ev[i] - (6 - i)));
      char name[128];
      snprintf(name, sizeof name, "n_omega = %d > n = 6 (%s pass): the eigenvalues 6, 5, 4, 3 (worst error %.1e)", nos[q],
               p ? "single" : "double", worst);
      expect(name, worst < 1e-10 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    }
  for (int i = 0; i < 13; i++) parlops_vec_destroy(&om[i]);
  for (int i = 0; i < 8; i++) parlops_vec_destroy(&u[i]);
  parlops_op_destroy(&D);
  parlops_vec_destroy(&d);
  parlops_layout_destroy(&l6);
}

static void case_chebyshev_nan(void) {
  parlops_op *A = laplacian(), *C = NULL;
  EXPECT(parlops_op_create_chebyshev(A, 3, 0.1, NAN, &C), PARLOPS_ERR_INVALID_ARGUMENT, "NaN");
  EXPECT(parlops_op_create_chebyshev(A, 3, NAN, 4.0, &C), PARLOPS_ERR_INVALID_ARGUMENT, "NaN");
  EXPECT(parlops_op_create_chebyshev(A, 3, NAN, -1.0, &C), PARLOPS_ERR_INVALID_ARGUMENT, "NaN");
  expect("no operator", C == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&A);
}

static void case_low_rank_weights(void) {
  parlops_vec *v = vec(9);
  const parlops_vec *us[1] = {v};
  double d[1] = {rank_ == last ? 2.0 : 1.0};
  parlops_op *L = NULL;
  EXPECT(LOW_RANK(c, 1, us, d, &L), multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, "weights");
  if (L) {
    double err = 1;
    EXPECT(parlops_op_dottest(L, 3, &err), PARLOPS_OK, NULL);
    expect("the low-rank operator's dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  }
  parlops_op_destroy(&L);
  parlops_vec_destroy(&v);
}

static void case_zero_preconditioner(void) {
  parlops_op *A = laplacian(), *Z = NULL;
  parlops_vec *zd = vec(0), *b = vec(10), *x = vec(0);
  EXPECT(parlops_op_diagonal_matrix(zd, &Z), PARLOPS_OK, NULL);
  struct {
    int method, left, natural;
    const char *name;
  } m[] = {{PARLOPS_METHOD_MINRES, 0, 0, "MINRES"},
           {PARLOPS_METHOD_RICHARDSON, 0, 0, "Richardson"},
           {PARLOPS_METHOD_GMRES, 1, 0, "left-preconditioned GMRES"},
           {PARLOPS_METHOD_CG, 0, 1, "natural-norm CG"},
           {PARLOPS_METHOD_CG_SINGLE_REDUCTION, 0, 1, "natural-norm single-reduction CG"},
           {PARLOPS_METHOD_CG_PIPELINED, 0, 1, "natural-norm pipelined CG"}};
  double bn;
  parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn);
  for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
    parlops_solver *s = NULL;
    EXPECT(parlops_solver_create(c, m[i].method, &s), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_preconditioner(s, Z), PARLOPS_OK, NULL);
    if (m[i].left) EXPECT(parlops_solver_set_pc_side(s, PARLOPS_PC_LEFT), PARLOPS_OK, NULL);
    if (m[i].natural) EXPECT(parlops_solver_set_norm_type(s, PARLOPS_NORM_TYPE_NATURAL), PARLOPS_OK, NULL);
    for (int atol = 0; atol < 2; atol++) {
      EXPECT(parlops_solver_set_tolerances(s, 1e-8, atol ? 1e-3 : 0.0, 1e5, 100), PARLOPS_OK, NULL);
      EXPECT(parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
      parlops_solve_info info;
      parlops_solver_info(s, &info);
      double rn = true_residual(A, b, x);
      /* a converged reason would need the rule to hold for the true residual */
      int ok = info.reason <= 0 || rn <= fmax(1e-8 * bn, atol ? 1e-3 : 0.0);
      char name[200];
      snprintf(name, sizeof name, "M = 0, %s (atol %g): reason %d, true residual %.2e of ||b|| %.2e: no false convergence",
               m[i].name, atol ? 1e-3 : 0.0, (int)info.reason, rn, bn);
      expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    }
    parlops_solver_destroy(&s);
  }
  parlops_op_destroy(&Z);
  parlops_op_destroy(&A);
  parlops_vec_destroy(&zd);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
}

static void case_stack_overflow(void) {
  parlops_comm *self = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_SELF, &self), PARLOPS_OK, NULL);
  parlops_layout *ls[4] = {NULL, NULL, NULL, NULL}, *sl = NULL;
  for (int i = 0; i < 4; i++)
    EXPECT(parlops_layout_create(self, PARLOPS_PARTITION_SCATTER, (int64_t)1 << 62, PARLOPS_DECIDE, &ls[i]), PARLOPS_OK, NULL);
  EXPECT(LAYOUT_STACK(self, 4, (const parlops_layout *const *)ls, &sl), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
  int64_t g = -1;
  if (sl) parlops_layout_global_len(sl, &g);
  expect("four parts of 2^62: no layout (its length would wrap)", sl == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK,
         NULL);
  parlops_layout_destroy(&sl);
  for (int i = 0; i < 4; i++) parlops_layout_destroy(&ls[i]);
  parlops_comm_destroy(&self);
}

static void case_stale_handle(void) {
  parlops_vec *v = vec(0), *old = NULL;
  EXPECT(parlops_vec_duplicate(v, &old), PARLOPS_OK, NULL);
  parlops_vec *stale = old;
  EXPECT(parlops_vec_destroy(&old), PARLOPS_OK, NULL);
  int reused = 0;
  for (int i = 0; i < 10000; i++) {
    parlops_vec *t = NULL;
    parlops_vec_duplicate(v, &t);
    if (t == stale) reused = 1;
    parlops_vec_destroy(&t);
  }
  expect("10000 creations after a destroy: the destroyed handle's value never comes back", reused ? PARLOPS_ERR_INTERNAL : PARLOPS_OK,
         PARLOPS_OK, NULL);
  EXPECT(parlops_vec_fill(stale, PARLOPS_REAL(3.0)), PARLOPS_ERR_INVALID_HANDLE, "already destroyed");
  parlops_vec_destroy(&v);
}

/* destroying what a running solve uses, from its callbacks (the lifetime test does every pair) */
static parlops_solver *cb_s = NULL;
static parlops_status cb_got = PARLOPS_OK;
static int cb_calls = 0;
static int destroy_solver_cb(void *ctx, const void *x, void *y) {
  (void)ctx;
  for (int64_t i = 0; i < len; i++) ((double *)y)[i] = (2.0 + (double)(lo + i) / 10.0) * ((const double *)x)[i];
  if (++cb_calls == 3) cb_got = parlops_solver_destroy(&cb_s);
  return 0;
}
static void case_destroy_in_use(void) {
  parlops_op *S = shell_op(destroy_solver_cb);
  parlops_vec *b = vec(11), *x = vec(0);
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &cb_s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(cb_s, S), PARLOPS_OK, NULL);
  parlops_solver *keep = cb_s;
  cb_calls = 0;
  EXPECT(parlops_solver_solve(cb_s, b, x), PARLOPS_OK, NULL);
  expect("destroying the solver from its operator's callback: BUSY", cb_got, PARLOPS_ERR_BUSY, NULL);
  parlops_solve_info info;
  EXPECT(parlops_solver_info(keep, &info), PARLOPS_OK, NULL);
  expect("... and the solve went on to converge", info.reason > 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_solver_destroy(&keep), PARLOPS_OK, NULL);
  parlops_op_destroy(&S);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
}

static void case_stack_order(void) {
  parlops_layout *l2 = NULL, *sl = NULL;
  /* the same global length, another split: interchangeable only where every rank agrees */
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 30, rank_ == 0 ? 30 : 0, &l2), PARLOPS_OK, NULL);
  const parlops_layout *ps[2] = {rank_ == last ? l2 : l, rank_ == last ? l : l2};
  EXPECT(LAYOUT_STACK(c, 2, ps, &sl), multi ? PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS : PARLOPS_OK, "parts");
  parlops_layout_destroy(&sl);
  parlops_layout_destroy(&l2);
}

/* ================================================================ the hypre loader (own process) */

static void hypre_named(const char *path) {
  char buf[8192];
  size_t need = 0;
  EXPECT(parlops_config_report(c, buf, sizeof buf, &need), PARLOPS_OK, NULL);
  parlops_op *A = laplacian(), *M = NULL;
  EXPECT(parlops_op_create_boomeramg(A, NULL, &M), PARLOPS_ERR_NOT_SUPPORTED, path);
  expect("the named library's error says PARLOPS_HYPRE_LIBRARY", strstr(parlops_last_error(), "PARLOPS_HYPRE_LIBRARY") ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&A);
}

/* ================================================================ main */

static const struct {
  const char *name;
  void (*fn)(void);
  int min_ranks;
} cases[] = {
    {"block_dot_empty", case_block_dot_empty, 2},
    {"orthonormalize_empty", case_orthonormalize_empty, 2},
    {"low_rank_empty", case_low_rank_empty, 2},
    {"layout_stack_empty", case_layout_stack_empty, 2},
    {"pc_one_rank", case_pc_one_rank, 2},
    {"block_pattern", case_block_pattern, 2},
    {"chebyshev_callback", case_chebyshev_callback, 1},
    {"amg_ranges", case_amg_ranges, 1},
    {"self_graphs", case_self_graphs, 1},
    {"poisson_huge_halo", case_poisson_huge_halo, 2},
    {"destroy_from_monitor", case_destroy_from_monitor, 1},
    {"randomized_sizes", case_randomized_sizes, 1},
    {"chebyshev_nan", case_chebyshev_nan, 1},
    {"low_rank_weights", case_low_rank_weights, 2},
    {"zero_preconditioner", case_zero_preconditioner, 1},
    {"stack_overflow", case_stack_overflow, 1},
    {"stale_handle", case_stale_handle, 1},
    {"destroy_in_use", case_destroy_in_use, 1},
    {"stack_order", case_stack_order, 2},
};

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  last = size_ - 1;
  multi = size_ > 1;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  /* 30 entries, rank 0 three short and the last three long of an even split */
  int64_t base = 30 / size_, mine = base + (rank_ == last ? 30 % size_ : 0);
  if (multi) mine += rank_ == 0 ? -3 : rank_ == last ? 3 : 0;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 30, mine, &l), PARLOPS_OK, NULL);
  parlops_layout_local_range(l, &lo, &len);
  if (argc > 2 && strcmp(argv[1], "--hypre") == 0) {
    current = "hypre";
    hypre_named(argv[2]);
  } else {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      int wanted = argc == 1;
      for (int a = 1; a < argc; a++) wanted |= strcmp(argv[a], cases[i].name) == 0;
      if (!wanted || size_ < cases[i].min_ranks) continue;
      current = cases[i].name;
      alarm(60);
      cases[i].fn();
    }
  }
  alarm(0);
  int all = 0;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("trust (%d ranks): %d passed, %d failed\n", size_, passed, all);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&c);
  MPI_Finalize();
  return all != 0;
}
