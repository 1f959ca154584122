/* New values in a CSR matrix and the preconditioners that follow them (issue 32, section 4), at any
 * rank count with uneven rows: a 2D diffusion matrix whose coefficient changes, made by
 * parlops_op_create_csr and by parlops_op_create_parcsr (copied and wrapped), given new values with
 * parlops_op_csr_update_values, must apply exactly (bit for bit) as a matrix made from the new values;
 * BoomerAMG, block Jacobi and Chebyshev refreshed on it must apply exactly as ones made on the new
 * matrix (so a PCG solve takes the same iterations: checked on the true residual); a solver's reuse
 * policy sets its preconditioner up when it says (counted with parlops_op_setup_count); and the bad
 * input fails on every rank naming it: a changed pattern (counts, wrapped arrays), arrays that do not
 * fit the matrix's origin, values changed or a refresh asked from inside a running solve (BUSY), a
 * zero diagonal at an AMG refresh (the old set-up stays and applies).
 * Prints "refresh (N ranks): P passed, F failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

#define M 20 /* grid points per side: M*M rows */
static int64_t lo, len;
static parlops_comm *comm;
static parlops_layout *rows;

/* the coefficient at node g, family `f` at time t: smooth, or (f = 1) a jump of 1000 */
static double kappa(int64_t g, int f, double t) {
  double x = (double)(g % M) / M, y = (double)(g / M) / M;
  if (f == 1) return x > 0.5 ? 1000.0 : 1.0;
  return 1.0 + 0.5 * sin(3.0 * x + t) * cos(2.0 * y - t);
}

/* this rank's rows of sigma I + sum over grid edges k_e (e_i - e_j)(e_i - e_j)^T, k_e the mean of
 * its nodes' coefficients; columns increasing in each row */
static int64_t ptr[M * M + 1], col[5 * M * M];
static double val[5 * M * M];
static void assemble(int f, double t) {
  int64_t k = 0;
  ptr[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i, x = g % M, y = g / M;
    int64_t nb[4] = {y > 0 ? g - M : -1, x > 0 ? g - 1 : -1, x < M - 1 ? g + 1 : -1, y < M - 1 ? g + M : -1};
    double diag = 0.1;
    int64_t kd = -1;
    for (int j = 0; j < 4; j++) {
      if (j == 2) kd = k++; /* the diagonal between the left and right neighbours */
      if (nb[j] < 0) continue;
      double ke = 0.5 * (kappa(g, f, t) + kappa(nb[j], f, t));
      col[k] = nb[j];
      val[k++] = -ke;
      diag += ke;
    }
    col[kd] = g;
    val[kd] = diag;
    ptr[i + 1] = k;
  }
}

static parlops_op *csr_now(void) {
  parlops_op *A = NULL;
  EXPECT(parlops_op_create_csr(rows, rows, PARLOPS_F64, PARLOPS_INDEX_I64, ptr, col, val, &A), PARLOPS_OK, NULL);
  return A;
}

/* max |P x - Q x| over the ranks, for a fixed random x */
static double differ(const parlops_op *P, const parlops_op *Q) {
  parlops_vec *x = NULL, *y = NULL, *z = NULL;
  parlops_op_create_vecs(P, &x, &y);
  parlops_vec_duplicate(y, &z);
  parlops_vec_set_random(x, PARLOPS_RANDOM_GAUSSIAN, 7);
  parlops_status s1 = parlops_op_apply(P, x, y), s2 = parlops_op_apply(Q, x, z);
  static double a[M * M], b[M * M];
  parlops_vec_copy_to_host(y, a);
  parlops_vec_copy_to_host(z, b);
  double d = (s1 == PARLOPS_OK && s2 == PARLOPS_OK) ? 0.0 : INFINITY;
  for (int64_t i = 0; i < len; i++) d = fmax(d, fabs(a[i] - b[i]) + (a[i] != b[i] ? 1e-300 : 0.0));
  double all;
  MPI_Allreduce(&d, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&y);
  parlops_vec_destroy(&z);
  return all;
}

static void check(const char *what, int ok) {
  expect(what, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (!ok && rank_ == 0) fprintf(stderr, "  (%s)\n", what);
}

static int64_t setups(const parlops_op *m) {
  int64_t n = -1;
  parlops_op_setup_count(m, &n);
  return n;
}

/* a PCG solve of A x = 1 with M, rtol 1e-10: its iterations, after checking ||1 - A x|| on the true
 * residual when it converged (-1 when it did not) */
static int64_t pcg(parlops_solver *s, const parlops_op *A) {
  parlops_vec *x = NULL, *b = NULL, *r = NULL;
  parlops_op_create_vecs(A, &x, &b);
  parlops_vec_duplicate(b, &r);
  parlops_vec_fill(b, (parlops_scalar){1.0, 0.0});
  parlops_vec_fill(x, (parlops_scalar){0.0, 0.0});
  parlops_solver_set_operator(s, A);
  parlops_status st = parlops_solver_solve(s, b, x);
  parlops_solve_info info;
  parlops_solver_info(s, &info);
  int64_t its = -1;
  if (st == PARLOPS_OK && info.reason > 0) {
    double nr = 0, nb = 0;
    parlops_op_apply(A, x, r);
    parlops_vec_axpby(r, (parlops_scalar){1.0, 0.0}, b, (parlops_scalar){-1.0, 0.0});
    parlops_vec_norm(r, PARLOPS_NORM_2, 0, &nr);
    parlops_vec_norm(b, PARLOPS_NORM_2, 0, &nb);
    check("a converged solve's true residual meets rtol", nr <= 1.0001e-10 * nb);
    its = info.iterations;
  }
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&r);
  return its;
}

static parlops_solver *pcg_with(parlops_op *pc) {
  parlops_solver *s = NULL;
  parlops_solver_create(comm, PARLOPS_METHOD_CG, &s);
  parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 2000);
  parlops_solver_set_preconditioner(s, pc);
  return s;
}

/* from inside a solve: the statuses of a values update of A and of a refresh of M */
static parlops_op *busy_a, *busy_m;
static parlops_status busy_upd = PARLOPS_OK, busy_ref = PARLOPS_OK;
static int busy_monitor(void *ctx, int64_t it, double rn) {
  (void)ctx;
  (void)rn;
  if (it == 1) {
    busy_upd = parlops_op_csr_update_values(busy_a, ptr[len], val, 0, NULL);
    busy_ref = parlops_op_refresh(busy_m, 1, NULL);
  }
  return 0;
}

/* hypre's split of the current rows: diag (local columns) and offd (compressed, col_map sorted) */
static int64_t dp[M * M + 1], dj[5 * M * M], op_[M * M + 1], oj[5 * M * M], cmap[5 * M * M], ncmap;
static double da[5 * M * M], oa[5 * M * M];
static void split(void) {
  ncmap = 0;
  for (int64_t k = 0; k < ptr[len]; k++)
    if (col[k] < lo || col[k] >= lo + len) {
      int64_t c = col[k], p = 0;
      while (p < ncmap && cmap[p] < c) p++;
      if (p < ncmap && cmap[p] == c) continue;
      for (int64_t q = ncmap; q > p; q--) cmap[q] = cmap[q - 1];
      cmap[p] = c;
      ncmap++;
    }
  int64_t nd = 0, no = 0;
  dp[0] = op_[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
      if (col[k] >= lo && col[k] < lo + len) {
        dj[nd] = col[k] - lo;
        da[nd++] = val[k];
      } else {
        int64_t p = 0;
        while (cmap[p] != col[k]) p++;
        oj[no] = p;
        oa[no++] = val[k];
      }
    }
    dp[i + 1] = nd;
    op_[i + 1] = no;
  }
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(120);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  /* uneven rows: rank r owns a share growing with r */
  int64_t n = (int64_t)M * M, w = 0, acc = 0;
  for (int r = 0; r < size_; r++) w += r + 2;
  for (int r = 0; r < size_; r++) {
    int64_t share = r == size_ - 1 ? n - acc : n * (r + 2) / w;
    if (r == rank_) lo = acc, len = share;
    acc += share;
  }
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &comm), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, len, &rows), PARLOPS_OK, NULL);
  int hypre = 1;

  /* 1. parlops_op_create_csr: new values apply as a matrix made from them, bit for bit */
  assemble(0, 0.0);
  parlops_op *A = csr_now();
  parlops_amg_options ao;
  parlops_amg_options_init(&ao);
  parlops_op *amg = NULL, *bj = NULL, *ch = NULL;
  parlops_status st = parlops_op_create_boomeramg(A, &ao, &amg);
  if (st == PARLOPS_ERR_NOT_SUPPORTED) hypre = 0; /* an MPICH build: no hypre for it */
  else expect("BoomerAMG on A", st, PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_IC0, 1.0, &bj), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_chebyshev(A, 3, 0.0, 0.0, &ch), PARLOPS_OK, NULL);
  for (int step = 1; step <= 3; step++) {
    assemble(0, 0.7 * step);
    EXPECT(parlops_op_csr_update_values(A, ptr[len], val, 0, NULL), PARLOPS_OK, NULL);
    parlops_op *B = csr_now();
    check("updated CSR applies as one made from the new values (bits)", differ(A, B) == 0.0);
    double e = 1;
    EXPECT(parlops_op_dottest(A, 3, &e), PARLOPS_OK, NULL);
    check("updated CSR passes the dot test", e < 1e-13);
    /* the preconditioners: stale until refreshed, then as made on the new matrix */
    int64_t run = -1;
    parlops_op *bj2 = NULL, *ch2 = NULL;
    EXPECT(parlops_op_create_block_jacobi(B, PARLOPS_LOCAL_IC0, 1.0, &bj2), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_chebyshev(B, 3, 0.0, 0.0, &ch2), PARLOPS_OK, NULL);
    check("block Jacobi is stale before its refresh", differ(bj, bj2) > 0.0);
    EXPECT(parlops_op_refresh(bj, 0, &run), PARLOPS_OK, NULL);
    check("one set-up ran", run == 1);
    check("refreshed block Jacobi applies as one made on the new matrix (bits)", differ(bj, bj2) == 0.0);
    EXPECT(parlops_op_refresh(bj, 0, &run), PARLOPS_OK, NULL);
    check("a second refresh finds nothing to do", run == 0 && setups(bj) == 1 + step);
    EXPECT(parlops_op_refresh(ch, 0, &run), PARLOPS_OK, NULL);
    check("refreshed Chebyshev applies as one made on the new matrix (bits)", run == 1 && differ(ch, ch2) == 0.0);
    if (hypre) {
      parlops_op *amg2 = NULL;
      EXPECT(parlops_op_create_boomeramg(B, &ao, &amg2), PARLOPS_OK, NULL);
      EXPECT(parlops_op_refresh(amg, 0, &run), PARLOPS_OK, NULL);
      check("refreshed BoomerAMG applies as one made on the new matrix (bits)", run == 1 && differ(amg, amg2) == 0.0);
      parlops_solver *s1 = pcg_with(amg), *s2 = pcg_with(amg2);
      int64_t i1 = pcg(s1, A), i2 = pcg(s2, B);
      check("PCG with the refreshed AMG takes the iterations of a new one", i1 > 0 && i1 == i2);
      parlops_solver_destroy(&s1);
      parlops_solver_destroy(&s2);
      parlops_op_destroy(&amg2);
    }
    parlops_op_destroy(&bj2);
    parlops_op_destroy(&ch2);
    parlops_op_destroy(&B);
  }
  if (hypre) check("AMG set-ups counted: 1 + 3 refreshes", setups(amg) == 4);

  /* 2. the reuse policy of a solver */
  if (hypre) {
    parlops_op *m = NULL;
    EXPECT(parlops_op_create_boomeramg(A, &ao, &m), PARLOPS_OK, NULL);
    parlops_solver *s = pcg_with(m);
    /* default (1, 0): set up again at every solve after a change */
    for (int t = 0; t < 3; t++) {
      assemble(0, 3.0 + t);
      parlops_op_csr_update_values(A, ptr[len], val, 0, NULL);
      pcg(s, A);
    }
    check("default policy: a set-up at every solve after a change", setups(m) == 4);
    /* every 3rd solve: at the first solve after the change, then at solves 4 and 7 */
    parlops_solver_set_preconditioner(s, m);
    EXPECT(parlops_solver_set_pc_reuse(s, 3, 0.0), PARLOPS_OK, NULL);
    for (int t = 0; t < 7; t++) {
      assemble(0, 6.0 + 0.1 * t);
      parlops_op_csr_update_values(A, ptr[len], val, 0, NULL);
      pcg(s, A);
    }
    check("every 3rd solve: 3 set-ups in 7 solves", setups(m) == 7);
    /* never by count; when the iterations grew by 20%: a coefficient jump of 1000 */
    parlops_solver_set_preconditioner(s, m);
    EXPECT(parlops_solver_set_pc_reuse(s, 0, 1.2), PARLOPS_OK, NULL);
    EXPECT(parlops_op_refresh(m, 1, NULL), PARLOPS_OK, NULL);
    int64_t i0 = pcg(s, A);
    assemble(1, 0.0);
    parlops_op_csr_update_values(A, ptr[len], val, 0, NULL);
    int64_t i1 = pcg(s, A);
    check("growth policy: no set-up at the first solve on new values", setups(m) == 8 && i1 > i0);
    parlops_op_csr_update_values(A, ptr[len], val, 0, NULL);
    int64_t i2 = pcg(s, A);
    check("growth policy: a set-up once the iterations grew", setups(m) == 9 && i2 > 0 && i2 < i1);
    /* from inside the solve: BUSY on every rank; after it, both work */
    busy_a = A;
    busy_m = m;
    parlops_solver_set_monitor(s, busy_monitor, NULL);
    pcg(s, A);
    same_everywhere("values update from inside a solve on A", busy_upd, PARLOPS_ERR_BUSY);
    same_everywhere("refresh from inside a solve with M", busy_ref, PARLOPS_ERR_BUSY);
    parlops_solver_set_monitor(s, NULL, NULL);
    EXPECT(parlops_op_csr_update_values(A, ptr[len], val, 0, NULL), PARLOPS_OK, NULL);
    EXPECT(parlops_op_refresh(m, 0, NULL), PARLOPS_OK, NULL);
    /* a zero diagonal: the refresh fails on every rank, the old set-up stays and applies */
    int64_t before = setups(m);
    for (int64_t k = ptr[0]; k < ptr[1]; k++)
      if (col[k] == lo) val[k] = 0.0;
    EXPECT(parlops_op_csr_update_values(A, ptr[len], val, 0, NULL), PARLOPS_OK, NULL);
    same_everywhere("AMG refresh on a zero diagonal", parlops_op_refresh(m, 0, NULL), PARLOPS_ERR_INVALID_ARGUMENT);
    check("the failed refresh kept the set-up", setups(m) == before);
    parlops_vec *x = NULL, *y = NULL;
    parlops_op_create_vecs(m, &x, &y);
    parlops_vec_fill(x, (parlops_scalar){1.0, 0.0});
    EXPECT(parlops_op_apply(m, x, y), PARLOPS_OK, NULL);
    parlops_vec_destroy(&x);
    parlops_vec_destroy(&y);
    parlops_solver_destroy(&s);
    parlops_op_destroy(&m);
  }

  /* 3. bad input, on every rank together */
  assemble(0, 0.0);
  same_everywhere("a changed entry count on the last rank",
                  parlops_op_csr_update_values(A, rank_ == size_ - 1 ? ptr[len] + 1 : ptr[len], val, 0, NULL),
                  PARLOPS_ERR_SIZE_MISMATCH);
  EXPECT(parlops_op_csr_update_values(A, ptr[len] + 1, val, 0, NULL), PARLOPS_ERR_SIZE_MISMATCH, "pattern");
  EXPECT(parlops_op_csr_update_values(A, ptr[len], NULL, 0, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "create_csr");
  EXPECT(parlops_op_csr_update_values(A, ptr[len], val, 0, val), PARLOPS_ERR_INVALID_ARGUMENT, "offd_values");
  EXPECT(parlops_op_csr_update_values(A, -1, val, 0, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "nnz");
  /* a rank without rows passes NULL for its no values (rank 1 holds none at 2 or more ranks) */
  {
    int64_t n2 = 4 * size_, len2 = rank_ == 1 ? 0 : (rank_ == 0 && size_ > 1 ? 8 : 4), lo2 = 0;
    MPI_Exscan(&len2, &lo2, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) lo2 = 0;
    static int64_t p2[16], c2[16];
    static double v2[16];
    for (int64_t i = 0; i <= len2; i++) p2[i] = i;
    for (int64_t i = 0; i < len2; i++) c2[i] = lo2 + i, v2[i] = 2.0 + (double)i;
    parlops_layout *l2 = NULL;
    parlops_op *D = NULL;
    EXPECT(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n2, len2, &l2), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_csr(l2, l2, PARLOPS_F64, PARLOPS_INDEX_I64, p2, c2, v2, &D), PARLOPS_OK, NULL);
    EXPECT(parlops_op_csr_update_values(D, len2, len2 ? v2 : NULL, 0, NULL), PARLOPS_OK, NULL);
    parlops_op_destroy(&D);
    parlops_layout_destroy(&l2);
  }
  parlops_op *I = NULL;
  EXPECT(parlops_op_identity(rows, PARLOPS_F64, &I), PARLOPS_OK, NULL);
  EXPECT(parlops_op_csr_update_values(I, 0, val, 0, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "not a CSR");
  int64_t run = -1;
  EXPECT(parlops_op_refresh(I, 1, &run), PARLOPS_OK, NULL);
  check("an operator without a set-up: nothing to refresh", run == 0 && setups(I) == 0);
  parlops_op_destroy(&I);

  /* 4. hypre's split, copied and wrapped */
  split();
  parlops_op *P = NULL, *Wr = NULL;
  EXPECT(parlops_op_create_parcsr(rows, rows, PARLOPS_F64, PARLOPS_INDEX_I64, dp, dj, da, op_, oj, oa, ncmap, cmap,
                                  PARLOPS_COPY, &P),
         PARLOPS_OK, NULL);
  static int64_t wdp[M * M + 1], wdj[5 * M * M], wop[M * M + 1], woj[5 * M * M], wcmap[5 * M * M];
  static double wda[5 * M * M], woa[5 * M * M];
  memcpy(wdp, dp, sizeof dp), memcpy(wdj, dj, sizeof dj), memcpy(wda, da, sizeof da);
  memcpy(wop, op_, sizeof op_), memcpy(woj, oj, sizeof oj), memcpy(woa, oa, sizeof oa), memcpy(wcmap, cmap, sizeof cmap);
  EXPECT(parlops_op_create_parcsr(rows, rows, PARLOPS_F64, PARLOPS_INDEX_I64, wdp, wdj, wda, wop, woj, woa, ncmap, wcmap,
                                  PARLOPS_WRAP, &Wr),
         PARLOPS_OK, NULL);
  assemble(0, 2.5);
  split();
  parlops_op *B = csr_now();
  EXPECT(parlops_op_csr_update_values(P, dp[len], da, op_[len], oa), PARLOPS_OK, NULL);
  check("updated ParCSR (copied) applies as a CSR made from the new values (bits)", differ(P, B) == 0.0);
  EXPECT(parlops_op_csr_update_values(P, dp[len], da, 0, NULL), size_ > 1 ? PARLOPS_ERR_SIZE_MISMATCH : PARLOPS_OK,
         NULL);
  memcpy(wda, da, sizeof da), memcpy(woa, oa, sizeof oa);
  EXPECT(parlops_op_csr_update_values(Wr, dp[len], NULL, op_[len], NULL), PARLOPS_OK, NULL);
  check("updated ParCSR (wrapped, changed in place) applies as a CSR made from the new values (bits)",
        differ(Wr, B) == 0.0);
  EXPECT(parlops_op_csr_update_values(Wr, dp[len], da, op_[len], oa), PARLOPS_ERR_INVALID_ARGUMENT, "never writes");
  /* a wrapped pattern changed: refused, naming the pattern, on every rank (one rank changes it) */
  int64_t keep = wdj[0];
  if (rank_ == 0 && len > 1) wdj[0] = (wdj[0] + 1) % len;
  same_everywhere("a wrapped pattern changed on rank 0",
                  parlops_op_csr_update_values(Wr, dp[len], NULL, op_[len], NULL), PARLOPS_ERR_INVALID_ARGUMENT);
  wdj[0] = keep;
  EXPECT(parlops_op_csr_update_values(Wr, dp[len], NULL, op_[len], NULL), PARLOPS_OK, NULL);
  /* a refresh after the pattern changed: refused on every rank, naming the pattern */
  parlops_op *wbj = NULL;
  EXPECT(parlops_op_create_block_jacobi(Wr, PARLOPS_LOCAL_ILU0, 1.0, &wbj), PARLOPS_OK, NULL);
  if (rank_ == 0 && len > 1) wdj[0] = (wdj[0] + 1) % len;
  same_everywhere("a refresh after a wrapped pattern changed on rank 0", parlops_op_refresh(wbj, 1, NULL),
                  PARLOPS_ERR_INVALID_ARGUMENT);
  wdj[0] = keep;
  EXPECT(parlops_op_refresh(wbj, 1, &run), PARLOPS_OK, NULL);
  check("the restored pattern refreshes", run == 1 && setups(wbj) == 2);
  parlops_op_destroy(&wbj);
  parlops_op_destroy(&B);
  parlops_op_destroy(&P);
  parlops_op_destroy(&Wr);

  if (amg) parlops_op_destroy(&amg);
  parlops_op_destroy(&bj);
  parlops_op_destroy(&ch);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&rows);
  parlops_comm_destroy(&comm);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("refresh (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  MPI_Finalize();
  return sum[1] ? 1 : 0;
}
