/* Run-time options (issue 33, section 1) at 1-4 ranks: options from a string, the environment and
 * main's arguments switch the method, tolerances and preconditioner of a solver (checked in its view
 * and by solving, against the true residual); two prefixed solvers take their own options; a
 * misspelt option is reported with the name it was likely meant to be; a bad value, a setting the
 * method does not take and options that differ between ranks fail on every rank naming the option,
 * leaving the solver as it was; -pc_type needs the operator; AMS is refused with the reason.
 * Prints "options (N ranks): P passed, F failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

static char text[16384];

static void has(const char *what, const char *needle) {
  int ok = strstr(text, needle) != NULL;
  expect(what, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (!ok && rank_ == 0) fprintf(stderr, "  the text has no \"%s\":\n%s\n", needle, text);
}

static void view(const parlops_solver *s) {
  EXPECT(parlops_solver_view(s, text, sizeof text, NULL), PARLOPS_OK, NULL);
}

static void left(const parlops_options *o) {
  EXPECT(parlops_options_left(o, text, sizeof text, NULL), PARLOPS_OK, NULL);
}

static parlops_layout *l;
static parlops_op *A;
static parlops_vec *b, *x, *r;

/* solve, and check the reason and the true residual against the tolerance the solver holds */
static void solves(const char *what, parlops_solver *s) {
  EXPECT(parlops_vec_fill(x, PARLOPS_REAL(0.0)), PARLOPS_OK, NULL);
  parlops_status st = parlops_solver_solve(s, b, x);
  same_everywhere(what, st, PARLOPS_OK);
  parlops_solve_info info;
  EXPECT(parlops_solver_info(s, &info), PARLOPS_OK, NULL);
  double rtol = 0, atol = 0, dtol = 0, rn = 0, bn = 0;
  int64_t mi = 0;
  EXPECT(parlops_solver_get_tolerances(s, &rtol, &atol, &dtol, &mi), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply(A, x, r), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0)), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn), PARLOPS_OK, NULL);
  int ok = info.reason > 0 && rn <= 10 * fmax(rtol * bn, atol);
  char name[200];
  snprintf(name, sizeof name, "%s: converged (reason %d, %lld its) with the true residual %.2e <= 10 x %.1e ||b||", what,
           (int)info.reason, (long long)info.iterations, rn / bn, rtol);
  expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  parlops_comm *comm = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &comm), PARLOPS_OK, NULL);
  /* uneven: rank r holds 40 + 9 r rows of the 1D Laplacian tridiag(-1, 2.01, -1) */
  int64_t len = 40 + 9 * rank_, lo = 0, n = 0;
  MPI_Exscan(&len, &lo, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) lo = 0;
  MPI_Allreduce(&len, &n, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, len, &l), PARLOPS_OK, NULL);
  static int64_t ptr[128], col[384];
  static double val[384];
  int64_t k = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) col[k] = g - 1, val[k++] = -1.0;
    col[k] = g, val[k++] = 2.01;
    if (g < n - 1) col[k] = g + 1, val[k++] = -1.0;
    ptr[i + 1] = k;
  }
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, ptr, col, val, &A), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_vecs(A, &x, &b), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_duplicate(b, &r), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_fill(b, PARLOPS_REAL(1.0)), PARLOPS_OK, NULL);

  /* ---- from a string: GMRES with block Jacobi */
  parlops_options *o = NULL;
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-ksp_type gmres -ksp_gmres_restart 20 -ksp_rtol 1e-10 -ksp_max_it 500 "
                                          "-pc_type bjacobi -sub_pc_type ilu -ksp_gmres_modifiedgramschmidt"),
         PARLOPS_OK, NULL);
  parlops_solver *s = NULL;
  parlops_status st;
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_timing(s, true), PARLOPS_OK, NULL); /* off by default */
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);
  view(s);
  has("-ksp_type gmres", "GMRES (PARLOPS_METHOD_GMRES)");
  has("-ksp_gmres_restart 20 and modified Gram-Schmidt", "restart 20, orthogonalization PARLOPS_ORTHOG_MODIFIED");
  has("-ksp_rtol, -ksp_max_it", "rtol 1e-10");
  has("-ksp_max_it", "max_iter 500");
  has("-pc_type bjacobi -sub_pc_type ilu", "ILU(0)");
  solves("GMRES + block Jacobi from options", s);

  /* ---- where the solve's time went (parlops_solver_log, parlops_solver_log_view) */
  {
    parlops_solve_info info;
    EXPECT(parlops_solver_info(s, &info), PARLOPS_OK, NULL);
    int64_t c[9] = {0}, b[9] = {0};
    double sec[9] = {0}, out[9] = {0};
    for (int ph = 0; ph < 9; ph++) EXPECT(parlops_solver_log(s, ph, &c[ph], &sec[ph], &out[ph], &b[ph]), PARLOPS_OK, NULL);
    double sum = 0;
    for (int ph = 0; ph < 7; ph++) sum += out[ph];
    int ok = c[PARLOPS_LOG_OPERATOR] >= info.iterations && c[PARLOPS_LOG_PRECONDITIONER] >= info.iterations &&
             c[PARLOPS_LOG_REDUCTION] >= info.iterations && c[PARLOPS_LOG_VECTOR] >= info.iterations &&
             c[PARLOPS_LOG_SOLVE] == 1 && sec[PARLOPS_LOG_SOLVE] > 0 &&
             fabs(sum + out[PARLOPS_LOG_REST] - sec[PARLOPS_LOG_SOLVE]) <= 1e-9 * sec[PARLOPS_LOG_SOLVE] + 1e-12 &&
             (size_ == 1 || (c[PARLOPS_LOG_HALO] >= info.iterations && b[PARLOPS_LOG_HALO] > 0)) &&
             b[PARLOPS_LOG_REDUCTION] > 0 && sec[PARLOPS_LOG_HALO] <= sec[PARLOPS_LOG_OPERATOR] + sec[PARLOPS_LOG_PRECONDITIONER];
    char name[300];
    snprintf(name, sizeof name,
             "the log counts %lld operator, %lld preconditioner applications, %lld reductions, %lld halo exchanges in "
             "%lld iterations; the phases outside one another and the rest add up to the solve's time",
             (long long)c[1], (long long)c[2], (long long)c[3], (long long)c[4], (long long)info.iterations);
    expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_solver_log(s, 9, NULL, NULL, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "phase");
    size_t need = 0;
    EXPECT(parlops_solver_log_view(s, text, sizeof text, &need), PARLOPS_OK, NULL);
    has("the log view's phases", "operator applications");
    has("the log view's total", "the phases outside one another take");
    long mine = (long)need, lo_ = 0, hi_ = 0;
    MPI_Allreduce(&mine, &lo_, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi_, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    expect("the same log view on every rank", lo_ == hi_ ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    st = parlops_solver_log_view(s, NULL, 5, NULL);
    same_everywhere("log view with a NULL buffer of length 5", st, PARLOPS_ERR_NULL_ARGUMENT);
  }
  left(o);
  expect("every option was used", text[0] == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- a bad value: every rank fails naming the option; the solver keeps its settings */
  EXPECT(parlops_options_insert_string(o, "-ksp_rtol abc"), PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("-ksp_rtol abc", st, PARLOPS_ERR_INVALID_ARGUMENT);
  EXPECT(st, PARLOPS_ERR_INVALID_ARGUMENT, "-ksp_rtol");
  double rtol = 0;
  EXPECT(parlops_solver_get_tolerances(s, &rtol, NULL, NULL, NULL), PARLOPS_OK, NULL);
  expect("the solver keeps rtol 1e-10", rtol == 1e-10 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-ksp_rtol 1e-9 -ksp_type cg -ksp_pc_side left"), PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("-ksp_type cg -ksp_pc_side left", st, PARLOPS_ERR_NOT_SUPPORTED);
  EXPECT(st, PARLOPS_ERR_NOT_SUPPORTED, "-ksp_pc_side");
  view(s);
  has("a refused set leaves the method", "GMRES (PARLOPS_METHOD_GMRES)");
  has("a refused set leaves the tolerances", "rtol 1e-10");
  EXPECT(parlops_options_insert_string(o, "-options_left no"), PARLOPS_OK, NULL); /* quiet: they are left */
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);

  /* ---- options that differ between ranks fail on every rank, naming them */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, rank_ == size_ - 1 && size_ > 1 ? "-ksp_atol 1e-3 -options_left 0"
                                                                          : "-ksp_atol 1e-4 -options_left 0"),
         PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  if (size_ > 1) {
    same_everywhere("-ksp_atol differing on the last rank", st, PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS);
    EXPECT(st, PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "-ksp_atol");
  } else {
    EXPECT(st, PARLOPS_OK, NULL);
  }
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);

  /* ---- GCRO-DR from options: the method, its restart and recycle lengths, twice (the kept space) */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-ksp_type gcrodr -ksp_gmres_restart 12 -ksp_gcrodr_recycle 4 "
                                          "-ksp_atol 0 -ksp_rtol 1e-9 -pc_type jacobi"),
         PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);
  solves("GCRO-DR(12, 4) + Jacobi from options", s);
  solves("GCRO-DR(12, 4) + Jacobi from options, again with the kept space", s);
  view(s);
  has("-ksp_type gcrodr", "GCRO-DR (PARLOPS_METHOD_GCRODR)");
  has("-ksp_gmres_restart 12 -ksp_gcrodr_recycle 4", "restart 12, recycling 4 vectors (4 kept now)");
  left(o);
  expect("every GCRO-DR option was used", text[0] == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  /* deflated CG from options, then GCRO-DR again with a recycle length its restart refuses */
  EXPECT(parlops_options_insert_string(o, "-ksp_type dcg -ksp_dcg_recycle 5 -ksp_rtol 1e-9"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);
  solves("deflated CG (k 5) + Jacobi from options", s);
  solves("deflated CG (k 5) + Jacobi from options, again with the kept space", s);
  view(s);
  has("-ksp_type dcg", "deflated CG (PARLOPS_METHOD_CG_DEFLATED)");
  has("-ksp_dcg_recycle 5", "recycling 5 vectors (5 kept now)");
  EXPECT(parlops_options_insert_string(o, "-ksp_type gcrodr -ksp_gcrodr_recycle 12 -options_left 0"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);
  st = parlops_solver_solve(s, b, x);
  same_everywhere("-ksp_gcrodr_recycle 12 with restart 12", st, PARLOPS_ERR_INVALID_ARGUMENT);
  EXPECT(st, PARLOPS_ERR_INVALID_ARGUMENT, "k < m");
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);

  /* ---- two prefixed solvers in one program, and a misspelt option reported by name */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-u_ksp_type cg -u_pc_type jacobi -u_ksp_rtol 1e-9 "
                                          "-p_ksp_type minres -p_ksp_max_it 300 -p_ksp_rtol 1e-7 -p_ksp_tyep cg"),
         PARLOPS_OK, NULL);
  parlops_solver *su = NULL, *sp = NULL;
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_GMRES, &su), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_GMRES, &sp), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(su, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(sp, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(su, o, "u_"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(sp, o, "p_"), PARLOPS_OK, NULL);
  view(su);
  has("u_: CG", "CG (PARLOPS_METHOD_CG)");
  has("u_: Jacobi", "Jacobi");
  has("u_: rtol", "rtol 1e-9");
  view(sp);
  has("p_: MINRES", "MINRES (PARLOPS_METHOD_MINRES)");
  has("p_: max_it", "max_iter 300");
  solves("u_ (CG + Jacobi)", su);
  solves("p_ (MINRES)", sp);
  left(o);
  has("the misspelt option is left", "name:-p_ksp_tyep value: cg");
  has("with the name it was likely meant to be", "did you mean -p_ksp_type?");
  expect("only the misspelt option is left", strchr(text, '\n') == text + strlen(text) - 1 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
         PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-options_left false"), PARLOPS_OK, NULL);
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);

  /* ---- the environment and main's arguments (words that are not options are left alone) */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  setenv("PARLOPS_TEST_OPTIONS", "-ksp_type fgmres -ksp_rtol 1e-6 -options_left 0", 1);
  EXPECT(parlops_options_insert_env(o, "PARLOPS_TEST_OPTIONS"), PARLOPS_OK, NULL);
  char a0[] = "prog", a1[] = "mesh.dat", a2[] = "-ksp_type", a3[] = "bcgs", a4[] = "-ksp_converged_reason",
       a5[] = "false", a6[] = "extra";
  char *av[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
  EXPECT(parlops_options_insert_args(o, 7, av), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, ""), PARLOPS_OK, NULL);
  view(s);
  has("the arguments' -ksp_type replaces the environment's", "BiCGStab (PARLOPS_METHOD_BICGSTAB)");
  has("the environment's -ksp_rtol", "rtol 1e-6");
  solves("BiCGStab from the arguments", s);
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);

  /* ---- preconditioners: BoomerAMG by hypre's names and PETSc's, Chebyshev; AMS refused */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-ksp_type cg -pc_type hypre -pc_hypre_type boomeramg -options_left 0 "
                                          "-pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_strong_threshold 0.5 "
                                          "-pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_relax_type_all l1scaled-Jacobi"),
         PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("-pc_type hypre", st, PARLOPS_OK);
  if (st == PARLOPS_OK) {
    view(s);
    has("BoomerAMG", "BoomerAMG");
    has("HMIS by PETSc's name", "CoarsenType = 10");
    has("strong threshold", "StrongThreshold = 5e-1");
    has("P_max (PETSc's alias)", "PMaxElmts = 4");
    has("relax_type_all by PETSc's name", "RelaxType = 18");
    solves("BoomerAMG-CG from options", s);
  }
  EXPECT(parlops_options_insert_string(o, "-pc_hypre_boomeramg_coarsen_type nosuch"), PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("an unknown coarsening", st, PARLOPS_ERR_INVALID_ARGUMENT);
  EXPECT(st, PARLOPS_ERR_INVALID_ARGUMENT, "HMIS");
  EXPECT(parlops_options_insert_string(o, "-pc_hypre_boomeramg_coarsen_type 10 -pc_type chebyshev "
                                          "-pc_chebyshev_degree 4"),
         PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);
  view(s);
  has("Chebyshev", "Chebyshev");
  solves("Chebyshev-CG from options", s);
  EXPECT(parlops_options_insert_string(o, "-pc_type ams"), PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("-pc_type ams", st, PARLOPS_ERR_NOT_SUPPORTED);
  EXPECT(st, PARLOPS_ERR_NOT_SUPPORTED, "discrete gradient");
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);

  /* ---- -pc_type builds from the operator: without one it is refused, Jacobi is not */
  EXPECT(parlops_options_create(comm, &o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_insert_string(o, "-pc_type bjacobi -options_left 0"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  st = parlops_solver_set_from_options(s, o, NULL);
  same_everywhere("-pc_type bjacobi without an operator", st, PARLOPS_ERR_INVALID_ARGUMENT);
  EXPECT(st, PARLOPS_ERR_INVALID_ARGUMENT, "set the operator");
  EXPECT(parlops_options_insert_string(o, "-pc_type jacobi"), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_from_options(s, o, NULL), PARLOPS_OK, NULL);

  /* ---- bad arguments */
  EXPECT(parlops_options_insert_string(o, "ksp_type gmres"), PARLOPS_ERR_INVALID_ARGUMENT, "ksp_type");
  EXPECT(parlops_options_insert_string(o, "-ksp_type 'gmres"), PARLOPS_ERR_INVALID_ARGUMENT, "unclosed");
  EXPECT(parlops_options_insert_string(o, "-ksp.type gmres"), PARLOPS_ERR_INVALID_ARGUMENT, "-ksp.type");
  EXPECT(parlops_options_insert_string(o, NULL), PARLOPS_ERR_NULL_ARGUMENT, "text");
  EXPECT(parlops_options_insert_args(o, -1, av), PARLOPS_ERR_INVALID_ARGUMENT, "argc");
  EXPECT(parlops_options_insert_args(o, 2, NULL), PARLOPS_ERR_NULL_ARGUMENT, "argv");
  EXPECT(parlops_options_create(NULL, &o), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  st = parlops_solver_set_from_options(s, o, "u-");
  same_everywhere("a prefix with '-'", st, PARLOPS_ERR_INVALID_ARGUMENT);
  st = parlops_solver_set_from_options(s, NULL, NULL);
  same_everywhere("NULL options", st, PARLOPS_ERR_NULL_ARGUMENT);
  EXPECT(parlops_options_left(o, NULL, 5, NULL), PARLOPS_ERR_NULL_ARGUMENT, "buf");
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL);
  EXPECT(parlops_options_destroy(&o), PARLOPS_OK, NULL); /* NULL: nothing to do */

  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_destroy(&x), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_destroy(&b), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_destroy(&r), PARLOPS_OK, NULL);
  EXPECT(parlops_op_destroy(&A), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_destroy(&l), PARLOPS_OK, NULL);
  EXPECT(parlops_comm_destroy(&comm), PARLOPS_OK, NULL);
  int tot[2] = {passed, failed}, all[2];
  MPI_Allreduce(tot, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("options (%d ranks): %d passed, %d failed\n", size_, all[0], all[1]);
  MPI_Finalize();
  return all[0] > 0 && all[1] == 0 ? 0 : 1;
}
