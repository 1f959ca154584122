/* The objects the one-rank-differs guard (tests/c/gen_collective_guard.py) calls with, the
 * alternatives it substitutes, and its checks. Every rank builds the same world; a case changes one
 * argument on one rank (or on every rank), calls, and requires every rank's status to be the same
 * within the watchdog's time. */
#ifndef PARLOPS_COLLECTIVE_WORLD_H
#define PARLOPS_COLLECTIVE_WORLD_H
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <parlops.h>

static int rank_ = 0, size_ = 1;
/* the rank whose argument is changed (-1: none, the valid call; -2: every rank) */
static int victim_ = -1;
/* shell callbacks fail (return 7) on this rank */
static int fail_rank = -1;
/* the lifetime cases' state (see lt_arm below) */
static int lt_kind = -1, lt_fired = 0;
static void *lt_handle = NULL;
static parlops_status lt_status = PARLOPS_OK;
static char lt_msg[256];
static long lt_cases = 0, lt_reached = 0;
static long passed = 0, failed = 0, cases = 0;
static const char *cur_fn = "", *cur_param = "", *cur_variant = "";
static const char *only_fn = NULL; /* -f: run one function */

static void on_alarm(int sig) {
  (void)sig;
  char msg[512];
  int n = snprintf(msg, sizeof msg, "rank %d: TIMEOUT (hang) in %s, argument '%s' %s, changed on %s %d\n", rank_,
                   cur_fn, cur_param, cur_variant, victim_ == -2 ? "every rank" : "rank", victim_);
  if (write(2, msg, (size_t)n) < 0) _exit(4);
  _exit(3);
}
static void on_crash(int sig) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "rank %d: CRASH (signal %d) in %s, argument '%s' %s, changed on rank %d\n", rank_,
                   sig, cur_fn, cur_param, cur_variant, victim_);
  if (write(2, msg, (size_t)n) < 0) _exit(4);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Is this rank's argument changed in the current case? */
static int mutated(void) { return victim_ == -2 || (victim_ >= 0 && rank_ == victim_); }

static void begin(const char *fn, const char *param, const char *variant, int victim) {
  cur_fn = fn;
  cur_param = param;
  cur_variant = variant;
  victim_ = victim;
  fail_rank = -1;
  alarm(60);
}

/* Every rank's status must be the same (and OK for the valid call). */
static void expect_same(parlops_status st, int must_be_ok) {
  int mine = (int)st, all[64] = {0};
  MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  int same = 1;
  for (int i = 0; i < size_; i++) same = same && all[i] == all[0];
  int ok = same && (!must_be_ok || st == PARLOPS_OK);
  cases++;
  if (ok) {
    passed++;
    return;
  }
  failed++;
  char buf[256] = "";
  for (int i = 0; i < size_ && i < 16; i++) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " %d", all[i]);
  fprintf(stderr, "rank %d: FAILED %s, argument '%s' %s (changed on %s %d): statuses by rank [%s ]; this rank's message: %s\n",
          rank_, cur_fn, cur_param, cur_variant, victim_ == -2 ? "every rank" : "rank", victim_, buf,
          st == PARLOPS_OK ? "(none)" : parlops_last_error());
}
/* A lifetime case: where the callback ran, the destroy was refused with PARLOPS_ERR_BUSY (the handle
 * is passed to the running call) and the call still got the valid call's status, alike on every
 * rank. */
static void expect_lifetime(parlops_status st, parlops_status valid) {
  lt_kind = -1;
  int mine[2] = {(int)st, lt_fired ? (int)lt_status : -1}, all[128] = {0};
  MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
  int ok = 1, reached = 0;
  for (int i = 0; i < size_; i++) {
    ok = ok && all[2 * i] == (int)valid && all[2 * i + 1] == all[1];
    reached = reached || all[2 * i + 1] != -1;
  }
  ok = ok && (all[1] == -1 || all[1] == PARLOPS_ERR_BUSY);
  cases++;
  lt_cases++;
  lt_reached += reached;
  if (getenv("LT_SHOW") && rank_ == 0) printf("lifetime %s %s: %s\n", cur_fn, cur_param, reached ? "reached" : "no callback");
  if (ok) {
    passed++;
    return;
  }
  failed++;
  fprintf(stderr,
          "rank %d: FAILED %s: '%s' destroyed from a shell callback during the call: the destroy returned %d "
          "(PARLOPS_ERR_BUSY = %d expected), the call %d (the valid call %d); messages: '%s', '%s'\n",
          rank_, cur_fn, cur_param, lt_fired ? (int)lt_status : -1, (int)PARLOPS_ERR_BUSY, (int)st, (int)valid, lt_msg,
          st == PARLOPS_OK ? "" : parlops_last_error());
}

static void finish_case(void) {
  fail_rank = -1;
  victim_ = -1;
}

/* ---- the lifetime cases: a shell callback destroys a handle passed to the running call, which must
 * refuse it (PARLOPS_ERR_BUSY) and go on to the valid call's result. lt_kind: the handle's type (the
 * generator's order: comm, layout, vec, op, solver, hypre_options, options, prox), -1 when disarmed. */
static void lt_arm(int kind, const void *h) {
  lt_kind = h ? kind : -1;
  lt_handle = (void *)h;
  lt_fired = 0;
  lt_status = PARLOPS_OK;
  lt_msg[0] = 0;
}
static void lt_fire(void) {
  if (lt_kind < 0 || lt_fired) return;
  lt_fired = 1;
  void *h = lt_handle;
  switch (lt_kind) {
  case 0: lt_status = parlops_comm_destroy((parlops_comm **)&h); break;
  case 1: lt_status = parlops_layout_destroy((parlops_layout **)&h); break;
  case 2: lt_status = parlops_vec_destroy((parlops_vec **)&h); break;
  case 3: lt_status = parlops_op_destroy((parlops_op **)&h); break;
  case 4: lt_status = parlops_solver_destroy((parlops_solver **)&h); break;
  case 5: lt_status = parlops_hypre_options_destroy((parlops_hypre_options **)&h); break;
  case 6: lt_status = parlops_options_destroy((parlops_options **)&h); break;
  default: lt_status = parlops_prox_destroy((parlops_prox **)&h); break;
  }
  snprintf(lt_msg, sizeof lt_msg, "%s", lt_status == PARLOPS_OK ? "" : parlops_last_error());
}

/* ---- callbacks: y = 2 x (real doubles), failing on fail_rank */
typedef struct {
  int64_t n;
} shell_ctx;
static int cb_ok(void *ctx, const void *x, void *y) {
  const shell_ctx *c = ctx;
  for (int64_t i = 0; i < c->n; i++) ((double *)y)[i] = 2.0 * ((const double *)x)[i];
  lt_fire();
  return rank_ == fail_rank ? 7 : 0;
}
static int cb_fail(void *ctx, const void *x, void *y) {
  (void)ctx;
  (void)x;
  (void)y;
  return 7;
}
/* the diagonal of y = 2 x (2 on every row), failing on fail_rank */
static int cb_diag_ok(void *ctx, void *d) {
  const shell_ctx *c = ctx;
  for (int64_t i = 0; i < c->n; i++) ((double *)d)[i] = 2.0;
  lt_fire();
  return rank_ == fail_rank ? 7 : 0;
}
static int cb_diag_fail(void *ctx, void *d) {
  (void)ctx;
  (void)d;
  return 7;
}
static void cb_destroy(void *ctx) { (void)ctx; }
/* a proximal operator's callbacks (real doubles): the soft threshold at tau, |x|_1, the identity as
 * a gradient; failing on fail_rank */
static int cb_prox_ok(void *ctx, double tau, const void *x, void *y) {
  const shell_ctx *c = ctx;
  for (int64_t i = 0; i < c->n; i++) {
    double v = ((const double *)x)[i], a = fabs(v) - tau;
    ((double *)y)[i] = a > 0 ? (v > 0 ? a : -a) : 0.0;
  }
  lt_fire();
  return rank_ == fail_rank ? 7 : 0;
}
static int cb_prox_fail(void *ctx, double tau, const void *x, void *y) {
  (void)ctx;
  (void)tau;
  (void)x;
  (void)y;
  return 7;
}
static int cb_prox_value(void *ctx, const void *x, double *v) {
  const shell_ctx *c = ctx;
  *v = 0;
  for (int64_t i = 0; i < c->n; i++) *v += fabs(((const double *)x)[i]);
  lt_fire();
  return rank_ == fail_rank ? 7 : 0;
}
static int cb_prox_grad(void *ctx, const void *x, void *g) {
  const shell_ctx *c = ctx;
  for (int64_t i = 0; i < c->n; i++) ((double *)g)[i] = ((const double *)x)[i];
  lt_fire();
  return rank_ == fail_rank ? 7 : 0;
}

/* ---- the world */
#define NV 16
static struct {
  parlops_comm *c, *self, *c_other;
  parlops_layout *l, *l_same, *l2, *lb, *lnd, *le, *lself, *lsl;
  parlops_vec *v[NV], *v2[NV], *vf, *vb, *vnd, *vsl, *vself, *vg[2], *bx[4];
  parlops_comm *cg;
  parlops_layout *lg;
  parlops_op *A, *A_same, *A2, *S, *D, *Bk, *Bd, *Aself, *Pnd, *Ainv, *AmgA;
  parlops_solver *s, *s_same, *s_other;
  parlops_hypre_options *ho, *ho_same, *ho_other;
  parlops_options *opts, *opts_same, *opts_other;
  parlops_prox *pr, *pr_same, *pr2, *psh, *pl2;
  double amg_vec[64];
  shell_ctx sctx, sctx2, sctx_self;
  int64_t lo, len, lo2, len2;
} W;
static parlops_comm *dead_comm;
static parlops_layout *dead_layout;
static parlops_vec *dead_vec;
static parlops_op *dead_op;
static parlops_solver *dead_solver;
static parlops_hypre_options *dead_hypre_options;
static parlops_options *dead_options;
static parlops_prox *dead_prox;

/* the lifetime cases' operator: the shell W.S where a recipe gives the CSR matrix W.A (same shape) */
static void *lt_sub_op(const parlops_op *h) { return (void *)(h == W.A ? W.S : h); }

#define CHECK(call)                                                                                      \
  do {                                                                                                   \
    parlops_status st_ = (call);                                                                         \
    if (st_ != PARLOPS_OK) {                                                                             \
      fprintf(stderr, "rank %d: world setup failed: %s: %s\n", rank_, #call, parlops_last_error());     \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                                      \
    }                                                                                                    \
  } while (0)

/* alternatives: (handle, another of the same shape, another of another shape) */
static struct {
  const void *h, *same, *other;
} alts[256];
static int nalts;
static void reg(const void *h, const void *same, const void *other) {
  alts[nalts].h = h;
  alts[nalts].same = same;
  alts[nalts].other = other;
  nalts++;
}
static const void *alt_of(const void *h, int other, const void *fallback) {
  for (int i = 0; i < nalts; i++)
    if (alts[i].h == h) return other ? alts[i].other : alts[i].same;
  return fallback;
}
static const parlops_layout *alt_same_layout(const parlops_layout *h) { return alt_of(h, 0, W.l_same); }
static const parlops_layout *alt_other_layout(const parlops_layout *h) { return alt_of(h, 1, W.l2); }
static parlops_vec *alt_same_vec(const parlops_vec *h) { return (parlops_vec *)alt_of(h, 0, W.v[NV - 1]); }
static parlops_vec *alt_other_vec(const parlops_vec *h) { return (parlops_vec *)alt_of(h, 1, W.v2[NV - 1]); }
static const parlops_op *alt_same_op(const parlops_op *h) { return alt_of(h, 0, W.D); }
static const parlops_op *alt_other_op(const parlops_op *h) { return alt_of(h, 1, W.A2); }
static parlops_solver *alt_same_solver(const parlops_solver *h) { return (parlops_solver *)alt_of(h, 0, W.s_same); }
static parlops_solver *alt_other_solver(const parlops_solver *h) { return (parlops_solver *)alt_of(h, 1, W.s_other); }
static const parlops_hypre_options *alt_same_hypre_options(const parlops_hypre_options *h) {
  return alt_of(h, 0, W.ho_same);
}
static const parlops_hypre_options *alt_other_hypre_options(const parlops_hypre_options *h) {
  return alt_of(h, 1, W.ho_other);
}
static const parlops_options *alt_same_options(const parlops_options *h) { return alt_of(h, 0, W.opts_same); }
static const parlops_options *alt_other_options(const parlops_options *h) { return alt_of(h, 1, W.opts_other); }
static const parlops_prox *alt_same_prox(const parlops_prox *h) { return alt_of(h, 0, W.pr_same); }
static const parlops_prox *alt_other_prox(const parlops_prox *h) { return alt_of(h, 1, W.pr2); }
static inline const parlops_comm *alt_same_comm(const parlops_comm *h) { return h; }
static inline const parlops_comm *alt_other_comm(const parlops_comm *h) { return h; }
/* a live handle of another type, passed where this type is expected */
static inline const void *wrong_type_comm(void) { return W.l; }
static const void *wrong_type_layout(void) { return W.v[0]; }
static const void *wrong_type_vec(void) { return W.A; }
static const void *wrong_type_op(void) { return W.v[0]; }
static inline const void *wrong_type_solver(void) { return W.A; }
static inline const void *wrong_type_hypre_options(void) { return W.s; }
static inline const void *wrong_type_options(void) { return W.ho; }
static inline const void *wrong_type_prox(void) { return W.A; }

/* in-place patches of a recipe's arrays (the recipe refills them for every case) */
static void *arr_patch(void *const *arr, void *val) {
  if (arr) ((void **)arr)[0] = val;
  return (void *)arr;
}
static const void *f64_patch(const void *p, double d) {
  if (p) ((double *)p)[0] = isnan(d) ? d : ((double *)p)[0] + d;
  return p;
}
static const void *idx_patch(const void *p, int64_t d) {
  if (p) ((int64_t *)p)[0] += d;
  return p;
}
static const void *idx_set(const void *p, int64_t v) {
  if (p) ((int64_t *)p)[0] = v;
  return p;
}
static const double *dbl_patch(const double *p, double d) { return f64_patch(p, d); }
static const int64_t *i64_patch(const int64_t *p, int64_t d) { return idx_patch(p, d); }
static const int64_t *i64_set(const int64_t *p, int64_t v) { return idx_set(p, v); }
static const int *int_patch(const int *p, int d) {
  if (p) ((int *)p)[0] += d;
  return p;
}
static const int *int_set(const int *p, int v) {
  if (p) ((int *)p)[0] = v;
  return p;
}
static const bool *bool_flip(const bool *p) {
  if (p) ((bool *)p)[0] = !p[0];
  return p;
}

/* the tridiagonal matrix tridiag(-1, 2.5, -1) of layout (lo, len) and global size n, 64-bit indices */
static int64_t csr_ptr[64], csr_idx[256];
static double csr_val[256];
static void tridiag(int64_t lo, int64_t len, int64_t n) {
  int64_t k = 0;
  csr_ptr[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) { csr_idx[k] = g - 1; csr_val[k++] = -1.0; }
    csr_idx[k] = g; csr_val[k++] = 2.5;
    if (g < n - 1) { csr_idx[k] = g + 1; csr_val[k++] = -1.0; }
    csr_ptr[i + 1] = k;
  }
}

static void fill_vecs(void) {
  for (int i = 0; i < NV; i++) {
    parlops_vec_set_random(W.v[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(i + 1));
    parlops_vec_set_random(W.v2[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(i + 101));
  }
}

static void make_world(void) {
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &W.c));
  CHECK(parlops_comm_create(MPI_COMM_SELF, &W.self));
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_SCATTER, 13, PARLOPS_DECIDE, &W.l));
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_SCATTER, 13, PARLOPS_DECIDE, &W.l_same));
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_SCATTER, 7, PARLOPS_DECIDE, &W.l2));
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_BROADCAST, 13, PARLOPS_DECIDE, &W.lb));
  CHECK(parlops_layout_create(W.self, PARLOPS_PARTITION_SCATTER, 5, PARLOPS_DECIDE, &W.lself));
  /* rank 0 empty (when there are others), the rest split the 13 */
  int64_t mine = size_ == 1 ? 13 : rank_ == 0 ? 0 : 13 / (size_ - 1) + (rank_ <= 13 % (size_ - 1) ? 1 : 0);
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_SCATTER, 13, mine, &W.le));
  int64_t shape[2] = {5, 4};
  CHECK(parlops_layout_create_nd(W.c, PARLOPS_PARTITION_SCATTER, 2, shape, 0, PARLOPS_DECIDE, &W.lnd));
  const parlops_layout *parts[2] = {W.l, W.l2};
  CHECK(parlops_layout_stack(W.c, 2, parts, &W.lsl));
  parlops_layout_local_range(W.l, &W.lo, &W.len);
  parlops_layout_local_range(W.l2, &W.lo2, &W.len2);
  for (int i = 0; i < NV; i++) {
    CHECK(parlops_vec_create(W.l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.v[i]));
    CHECK(parlops_vec_create(W.l2, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.v2[i]));
  }
  fill_vecs();
  CHECK(parlops_vec_create(W.l, PARLOPS_F32, PARLOPS_MEMORY_HOST, &W.vf));
  CHECK(parlops_vec_create(W.lb, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.vb));
  CHECK(parlops_vec_create(W.lnd, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.vnd));
  CHECK(parlops_vec_create(W.lsl, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.vsl));
  CHECK(parlops_vec_create(W.lself, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.vself));
  tridiag(W.lo, W.len, 13);
  CHECK(parlops_op_create_csr(W.l, W.l, PARLOPS_F64, PARLOPS_INDEX_I64, csr_ptr, csr_idx, csr_val, &W.A));
  CHECK(parlops_op_create_csr(W.l, W.l, PARLOPS_F64, PARLOPS_INDEX_I64, csr_ptr, csr_idx, csr_val, &W.A_same));
  tridiag(W.lo2, W.len2, 7);
  CHECK(parlops_op_create_csr(W.l2, W.l2, PARLOPS_F64, PARLOPS_INDEX_I64, csr_ptr, csr_idx, csr_val, &W.A2));
  int64_t slo, slen;
  parlops_layout_local_range(W.lself, &slo, &slen);
  tridiag(0, 5, 5);
  CHECK(parlops_op_create_csr(W.lself, W.lself, PARLOPS_F64, PARLOPS_INDEX_I64, csr_ptr, csr_idx, csr_val, &W.Aself));
  W.sctx.n = W.len;
  CHECK(parlops_op_create_shell(W.l, W.l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.sctx, cb_ok, cb_ok, cb_destroy, &W.S));
  CHECK(parlops_op_diagonal_matrix(W.v[NV - 2], &W.D));
  int64_t dims[2] = {5, 4};
  CHECK(parlops_op_poisson(W.lnd, 2, dims, PARLOPS_F64, &W.Pnd));
  /* [A S; S A]: a diagonal (for Jacobi and Chebyshev) and shell callbacks inside */
  const parlops_op *blk[4] = {W.A, W.S, W.S, W.A};
  CHECK(parlops_op_block(W.c, PARLOPS_F64, 2, 2, blk, &W.Bk));
  const parlops_op *blkd[4] = {W.A, NULL, NULL, W.A2};
  CHECK(parlops_op_block(W.c, PARLOPS_F64, 2, 2, blkd, &W.Bd));
  for (int i = 0; i < 4; i += 2) CHECK(parlops_op_create_vecs(W.Bk, &W.bx[i], &W.bx[i + 1]));
  for (int i = 0; i < 4; i++) CHECK(parlops_vec_set_random(W.bx[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(200 + i)));
  CHECK(parlops_comm_split(W.c, rank_ % 2, &W.cg));
  CHECK(parlops_layout_create(W.cg, PARLOPS_PARTITION_SCATTER, 9, PARLOPS_DECIDE, &W.lg));
  for (int i = 0; i < 2; i++) {
    CHECK(parlops_vec_create(W.lg, PARLOPS_F64, PARLOPS_MEMORY_HOST, &W.vg[i]));
    CHECK(parlops_vec_set_random(W.vg[i], PARLOPS_RANDOM_UNIFORM, (uint64_t)(300 + i)));
  }
  CHECK(parlops_solver_create(W.c, PARLOPS_METHOD_CG, &W.s));
  CHECK(parlops_solver_set_operator(W.s, W.A));
  CHECK(parlops_solver_set_preconditioner(W.s, W.S));
  CHECK(parlops_solver_set_tolerances(W.s, 1e-10, 0.0, 1e5, 200));
  CHECK(parlops_solver_create(W.c, PARLOPS_METHOD_CG, &W.s_same));
  CHECK(parlops_solver_set_operator(W.s_same, W.D));
  CHECK(parlops_solver_create(W.c, PARLOPS_METHOD_GMRES, &W.s_other));
  CHECK(parlops_solver_set_operator(W.s_other, W.A2));
  CHECK(parlops_op_create_inverse(W.s, false, &W.Ainv));
  /* dead handles of each type */
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &dead_comm));
  parlops_comm *dc = dead_comm;
  parlops_comm_destroy(&dc);
  CHECK(parlops_layout_create(W.c, PARLOPS_PARTITION_SCATTER, 13, PARLOPS_DECIDE, &dead_layout));
  parlops_layout *dl = dead_layout;
  parlops_layout_destroy(&dl);
  CHECK(parlops_vec_create(W.l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &dead_vec));
  parlops_vec *dv = dead_vec;
  parlops_vec_destroy(&dv);
  CHECK(parlops_op_identity(W.l, PARLOPS_F64, &dead_op));
  parlops_op *dop = dead_op;
  parlops_op_destroy(&dop);
  CHECK(parlops_solver_create(W.c, PARLOPS_METHOD_CG, &dead_solver));
  parlops_solver *ds = dead_solver;
  parlops_solver_destroy(&ds);
  /* hypre's options: a set, the same values in another set, other values */
  CHECK(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, &W.ho));
  CHECK(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, &W.ho_same));
  CHECK(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, &W.ho_other));
  parlops_hypre_options *hos[2] = {W.ho, W.ho_same};
  for (int i = 0; i < 2; i++) {
    CHECK(parlops_hypre_options_set_real(hos[i], "StrongThreshold", 0.5));
    CHECK(parlops_hypre_options_set_int(hos[i], "PMaxElmts", 4));
  }
  CHECK(parlops_hypre_options_set_int(W.ho_other, "PMaxElmts", 2));
  for (int i = 0; i < 64; i++) W.amg_vec[i] = 1.0;
  CHECK(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, &dead_hypre_options));
  parlops_hypre_options *dho = dead_hypre_options;
  parlops_hypre_options_destroy(&dho);
  /* run-time options: a set, the same options in another set, other options (all quiet when freed) */
  CHECK(parlops_options_create(W.c, &W.opts));
  CHECK(parlops_options_create(W.c, &W.opts_same));
  CHECK(parlops_options_create(W.c, &W.opts_other));
  CHECK(parlops_options_insert_string(W.opts, "-options_left no -g_ksp_converged_reason 0"));
  CHECK(parlops_options_insert_string(W.opts_same, "-options_left no -g_ksp_converged_reason 0"));
  CHECK(parlops_options_insert_string(W.opts_other, "-options_left no -g_ksp_view 0"));
  CHECK(parlops_options_create(W.c, &dead_options));
  parlops_options *dopt = dead_options;
  parlops_options_destroy(&dopt);
  /* proximal operators: L1 on W.l, the same on another object, L1 on W.l2, the callbacks, L2 */
  CHECK(parlops_prox_create_l1(W.l, PARLOPS_F64, 0.5, &W.pr));
  CHECK(parlops_prox_create_l1(W.l, PARLOPS_F64, 0.5, &W.pr_same));
  CHECK(parlops_prox_create_l1(W.l2, PARLOPS_F64, 0.5, &W.pr2));
  CHECK(parlops_prox_create_shell(W.l, PARLOPS_F64, &W.sctx, cb_prox_ok, cb_prox_ok, cb_prox_value, cb_prox_grad,
                                  cb_destroy, &W.psh));
  CHECK(parlops_prox_create_l2(W.l, PARLOPS_F64, 1.0, W.v[5], NULL, 0.0, true, &W.pl2));
  CHECK(parlops_prox_create_l1(W.l, PARLOPS_F64, 0.5, &dead_prox));
  parlops_prox *dpr = dead_prox;
  parlops_prox_destroy(&dpr);
  /* alternatives */
  reg(W.psh, W.pr, W.pr2);
  reg(W.pl2, W.pr, W.pr2);
  reg(W.l, W.l_same, W.l2);
  reg(W.l2, W.l, W.l);
  reg(W.lnd, W.l, W.l2);
  reg(W.lb, W.l, W.l2);
  for (int i = 0; i < NV; i++) {
    reg(W.v[i], W.v[(i + 7) % NV], W.v2[i]);
    reg(W.v2[i], W.v2[(i + 7) % NV], W.v[i]);
  }
  reg(W.A, W.D, W.A2);
  reg(W.A_same, W.A, W.A2);
  reg(W.S, W.A, W.A2);
  reg(W.D, W.A, W.A2);
  reg(W.A2, W.A2, W.A);
  reg(W.Bk, W.Bd, W.A);
  reg(W.s, W.s_same, W.s_other);
  for (int i = 0; i < 4; i++) reg(W.bx[i], W.bx[(i + 1) % 4], W.v[i]);
  reg(W.vg[0], W.vg[1], W.v[0]);
  reg(W.vg[1], W.vg[0], W.v[1]);
}

#endif
