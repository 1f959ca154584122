/* Feeds every operator function bad input, including bad arguments on one rank only, and checks the
 * status and message on every rank; each case runs under an alarm. Also checks that a ParCSR operator
 * created with PARLOPS_WRAP reads the caller's arrays in place. Run at 1 and 3 ranks.
 * Prints "bad_input_ops: N passed, M failed" on rank 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <mpi.h>

#include "expect.h"

static int fail_on_rank = -1; /* the callback fails (returns 7) on this rank */

static int fwd(void *ctx, const void *x, void *y) {
  const int64_t *len = ctx;
  for (int64_t i = 0; i < *len; ++i) ((double *)y)[i] = 2.0 * ((const double *)x)[i];
  return rank_ == fail_on_rank ? 7 : 0;
}

/* a callback that applies an operator from inside (its own, or a product holding it), by apply or multadd */
static parlops_op *reenter_op = NULL;
static parlops_vec *reenter_x = NULL, *reenter_y = NULL;
static int reenter_multadd = 0;
static parlops_status reenter_status = PARLOPS_OK;
static char reenter_msg[512];
static int reenter(void *ctx, const void *x, void *y) {
  (void)ctx;
  (void)x;
  (void)y;
  reenter_status = reenter_multadd ? parlops_op_multadd(reenter_op, PARLOPS_REAL(1), reenter_x, PARLOPS_REAL(0), reenter_y)
                                   : parlops_op_apply(reenter_op, reenter_x, reenter_y);
  strncpy(reenter_msg, parlops_last_error(), sizeof reenter_msg - 1);
  return reenter_status == PARLOPS_OK ? 0 : 9;
}
static void expect_reentrant_refused(const char *name) {
  int ok = reenter_status == PARLOPS_ERR_NOT_SUPPORTED && strstr(reenter_msg, "reentrant") != NULL;
  expect(name, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (!ok) fprintf(stderr, "rank %d: %s: inner status %d: %s\n", rank_, name, (int)reenter_status, reenter_msg);
}

/* an operator's callback (y = x) that calls the prox of the L2 proximal operator holding it */
static parlops_prox *nest_p = NULL;
static parlops_vec *nest_x = NULL, *nest_y = NULL;
static parlops_status nest_status = PARLOPS_OK;
static int nest_cb(void *ctx, const void *x, void *y) {
  memcpy(y, x, (size_t)*(int64_t *)ctx * sizeof(double));
  if (nest_p) {
    parlops_prox *p = nest_p;
    nest_p = NULL;
    nest_status = parlops_prox_apply(p, 1.0, nest_x, nest_y);
  }
  return 0;
}

static int destroyed = 0;
static void destroy_ctx(void *ctx) {
  (void)ctx;
  destroyed++;
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(30);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int last = size_ - 1, one = size_ > 1;

  parlops_comm *c = NULL, *self = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  EXPECT(parlops_comm_create(MPI_COMM_SELF, &self), PARLOPS_OK, NULL);
  parlops_layout *l = NULL, *l2 = NULL, *lb = NULL, *ls = NULL;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 12, -1, &l), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 7, -1, &l2), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, 12, -1, &lb), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(self, PARLOPS_PARTITION_SCATTER, 3, -1, &ls), PARLOPS_OK, NULL);
  int64_t start, len;
  parlops_layout_local_range(l, &start, &len);

  /* ---- shell operators and callbacks */
  parlops_op *S = NULL, *A = NULL, *R = NULL, *T = NULL, *loc = NULL;
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, NULL, NULL, NULL, &S),
         PARLOPS_ERR_NULL_ARGUMENT, "forward");
  EXPECT(parlops_op_create_shell(NULL, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, NULL, NULL, &S),
         PARLOPS_ERR_NULL_ARGUMENT, "rows");
  EXPECT(parlops_op_create_shell(l, l, 11, PARLOPS_MEMORY_HOST, &len, fwd, NULL, NULL, &S), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, 3, &len, fwd, NULL, NULL, &S), PARLOPS_ERR_INVALID_ARGUMENT, "memory");
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &len, fwd, NULL, NULL, &S), PARLOPS_ERR_NO_DEVICE, "CUDA");
  if (one) /* host callbacks on some ranks and device callbacks on others: refused everywhere */
    EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, rank_ == last ? PARLOPS_MEMORY_CUDA : PARLOPS_MEMORY_HOST, &len,
                                   fwd, NULL, NULL, &S),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "memory");
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, NULL, NULL, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  if (one) {
    EXPECT(parlops_op_create_shell(l, l, rank_ == last ? PARLOPS_F32 : PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, NULL, NULL, &S),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "dtypes");
    EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, rank_ == 0 ? NULL : fwd, NULL, NULL, &S),
           PARLOPS_ERR_NULL_ARGUMENT, "forward");
  }
  expect("no operator on failure", S == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, NULL, destroy_ctx, &S), PARLOPS_OK, NULL);

  parlops_vec *x = NULL, *y = NULL, *xf = NULL, *x2 = NULL, *xb = NULL;
  EXPECT(parlops_op_create_vecs(S, &x, &y), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F32, PARLOPS_MEMORY_HOST, &xf), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l2, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x2), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(lb, PARLOPS_F64, PARLOPS_MEMORY_HOST, &xb), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_fill(x, PARLOPS_REAL(1)), PARLOPS_OK, NULL);

  EXPECT(parlops_op_apply(NULL, x, y), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_op_apply(S, NULL, y), PARLOPS_ERR_NULL_ARGUMENT, "'x'");
  EXPECT(parlops_op_apply(S, x, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'y'");
  EXPECT(parlops_op_apply(S, x, x), PARLOPS_ERR_INVALID_ARGUMENT, "same vector");
  EXPECT(parlops_op_apply(S, xf, y), PARLOPS_ERR_DTYPE_MISMATCH, "PARLOPS_F32");
  EXPECT(parlops_op_apply(S, x2, y), PARLOPS_ERR_SIZE_MISMATCH, "7");
  EXPECT(parlops_op_apply(S, x, xb), size_ > 1 ? PARLOPS_ERR_SIZE_MISMATCH : PARLOPS_ERR_LAYOUT_MISMATCH, NULL);
  EXPECT(parlops_op_apply_adjoint(S, y, x), PARLOPS_ERR_NOT_SUPPORTED, "adjoint");
  EXPECT(parlops_op_apply(S, x, y), PARLOPS_OK, NULL);
  if (one) {
    EXPECT(parlops_op_apply(S, rank_ == last ? x2 : x, y), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(parlops_op_apply(S, rank_ == 0 ? NULL : x, y), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_op_apply(S, x, rank_ == last ? x : y), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  }
  fail_on_rank = last; /* the callback fails on one rank only: every rank gets PARLOPS_ERR_CALLBACK */
  EXPECT(parlops_op_apply(S, x, y), PARLOPS_ERR_CALLBACK, "returned 7");
  fail_on_rank = -1;
  EXPECT(parlops_op_apply(S, x, y), PARLOPS_OK, NULL);
  parlops_scalar cplx = {1.0, 1.0};
  EXPECT(parlops_op_multadd(S, cplx, x, PARLOPS_REAL(1), y), PARLOPS_ERR_INVALID_ARGUMENT, "alpha");
  EXPECT(parlops_op_multadd(S, PARLOPS_REAL(1), x, PARLOPS_REAL(1), x2), PARLOPS_ERR_SIZE_MISMATCH, "'y'");
  EXPECT(parlops_op_multadd(S, PARLOPS_REAL(2), x, PARLOPS_REAL(1), y), PARLOPS_OK, NULL);
  double nrm = 0;
  EXPECT(parlops_vec_norm(y, PARLOPS_NORM_INF, 0, &nrm), PARLOPS_OK, NULL);
  expect("multadd value (2*2*1 + 2 = 6)", nrm == 6.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_multadd_adjoint(S, PARLOPS_REAL(1), y, PARLOPS_REAL(1), x), PARLOPS_ERR_NOT_SUPPORTED, "adjoint");
  EXPECT(parlops_op_multadd_adjoint(S, PARLOPS_REAL(1), y, PARLOPS_REAL(1), x2), PARLOPS_ERR_SIZE_MISMATCH, "'x'");

  /* ---- queries */
  int64_t m, n;
  parlops_dtype dt;
  parlops_layout *lr = NULL;
  EXPECT(parlops_op_size(NULL, &m, &n), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_op_dtype(S, NULL), PARLOPS_ERR_NULL_ARGUMENT, "dtype");
  EXPECT(parlops_op_layouts(NULL, &lr, NULL), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_op_create_vecs(NULL, &x2, NULL), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_op_diagonal(S, y), PARLOPS_ERR_NOT_SUPPORTED, "diagonal");
  EXPECT(parlops_op_diagonal(S, x2), PARLOPS_ERR_SIZE_MISMATCH, NULL);
  EXPECT(parlops_op_diagonal(S, NULL), PARLOPS_ERR_NULL_ARGUMENT, "d");
  double err;
  EXPECT(parlops_op_dottest(S, 1, &err), PARLOPS_ERR_NOT_SUPPORTED, "adjoint");
  EXPECT(parlops_op_dottest(S, 1, NULL), PARLOPS_ERR_NULL_ARGUMENT, "relative_error");
  if (one) EXPECT(parlops_op_dottest(S, 1, rank_ == last ? NULL : &err), PARLOPS_ERR_NULL_ARGUMENT, NULL);
  EXPECT(parlops_op_dtype(S, &dt), PARLOPS_OK, NULL);

  /* ---- CSR from local rows: this rank's rows of a tridiagonal 12 x 12 */
  int64_t rp[16], ci[48];
  double v[48];
  int64_t nnz = 0;
  rp[0] = 0;
  for (int64_t i = start; i < start + len; ++i) {
    for (int64_t j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < 12) { ci[nnz] = j; v[nnz++] = (double)(i - j + 2); }
    rp[i - start + 1] = nnz;
  }
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &A), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, 5, rp, ci, v, &R), PARLOPS_ERR_INVALID_ARGUMENT, "index_type");
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, NULL, ci, v, &R), len > 0 || 1 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_OK, "row_ptr");
  EXPECT(parlops_op_create_csr(l, lb, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &R), PARLOPS_ERR_NOT_SUPPORTED, "scatter");
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  if (nnz >= 2 && rank_ == last) { int64_t t = ci[0]; ci[0] = ci[1]; ci[1] = t; } /* unsorted on the last rank */
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &R), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  if (nnz >= 2 && rank_ == last) { int64_t t = ci[0]; ci[0] = ci[1]; ci[1] = t; }
  int64_t keep = ci[0];
  if (rank_ == 0) ci[0] = 99; /* out of range on rank 0 */
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &R), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  ci[0] = keep;
  if (rank_ == 0) ci[0] = -3;
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &R), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  ci[0] = keep;
  if (one)
    EXPECT(parlops_op_create_csr(l, l, rank_ == last ? PARLOPS_C128 : PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &R),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "dtypes");
  expect("no operator after failed creates", R == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_csr_arrays(S, NULL, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "not a CSR");
  /* ---- preconditioners: block Jacobi, Chebyshev, BoomerAMG (A: the 12 x 12 CSR above) */
  {
    parlops_op *P = NULL;
    EXPECT(parlops_op_create_block_jacobi(S, PARLOPS_LOCAL_ILU0, 1.0, &P), PARLOPS_ERR_NOT_SUPPORTED, "not a CSR");
    EXPECT(parlops_op_create_block_jacobi(A, 7, 1.0, &P), PARLOPS_ERR_INVALID_ARGUMENT, "kind");
    EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_SSOR, 2.5, &P), PARLOPS_ERR_INVALID_ARGUMENT, "omega");
    if (one)
      EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_SSOR, rank_ == last ? 1.2 : 1.3, &P),
             PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, NULL);
    EXPECT(parlops_op_create_block_jacobi(NULL, PARLOPS_LOCAL_ILU0, 1.0, &P), PARLOPS_ERR_NULL_ARGUMENT, "A");
    EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_ILU0, 1.0, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    /* A (2 on the diagonal, 3 below) is not positive definite: IC(0) fails everywhere, ILU(0) works */
    EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_IC0, 1.0, &P), PARLOPS_ERR_INVALID_ARGUMENT, "not positive");
    EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_ILU0, 1.0, &P), PARLOPS_OK, NULL);
    parlops_op_destroy(&P);
    expect("no preconditioner after failed creates", P == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_chebyshev(A, 0, 0.0, 0.0, &P), PARLOPS_ERR_INVALID_ARGUMENT, "degree");
    EXPECT(parlops_op_create_chebyshev(A, 3, 2.0, 1.0, &P), PARLOPS_ERR_INVALID_ARGUMENT, "lmin");
    EXPECT(parlops_op_create_chebyshev(S, 3, 0.0, 0.0, &P), PARLOPS_ERR_NOT_SUPPORTED, "diagonal");
    if (one)
      EXPECT(parlops_op_create_chebyshev(A, rank_ == last ? 3 : 4, 0.0, 0.0, &P), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
             "degree");
    EXPECT(parlops_op_create_chebyshev(A, 3, 0.5, 4.0, &P), PARLOPS_OK, NULL);
    parlops_op_destroy(&P);
    parlops_amg_options o;
    EXPECT(parlops_amg_options_init(NULL), PARLOPS_ERR_NULL_ARGUMENT, "options");
    EXPECT(parlops_amg_options_init(&o), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_boomeramg(NULL, &o, &P), PARLOPS_ERR_NULL_ARGUMENT, "A");
    o.dof_ordering = 9;
    EXPECT(parlops_op_create_boomeramg(A, &o, &P), PARLOPS_ERR_INVALID_ARGUMENT, "dof_ordering");
    parlops_amg_options_init(&o);
    /* hypre is loaded at run time: without a usable one (MPICH here, hypre built for Open MPI),
       NOT_SUPPORTED on every rank, saying why */
    parlops_status have = parlops_op_create_boomeramg(A, &o, &P);
    expect("BoomerAMG: made, or not supported with a reason",
           have == PARLOPS_OK || (have == PARLOPS_ERR_NOT_SUPPORTED && strstr(parlops_last_error(), "hypre")) ? PARLOPS_OK
                                                                                                              : have,
           PARLOPS_OK, NULL);
    parlops_op_destroy(&P);
    if (have == PARLOPS_OK) {
      EXPECT(parlops_op_create_boomeramg(S, &o, &P), PARLOPS_ERR_NOT_SUPPORTED, "not a CSR");
      o.num_functions = 5;
      EXPECT(parlops_op_create_boomeramg(A, &o, &P), PARLOPS_ERR_INVALID_ARGUMENT, "num_functions");
      parlops_amg_options_init(&o);
      if (one) {
        o.max_levels = rank_ == last ? 3 : 4;
        EXPECT(parlops_op_create_boomeramg(A, &o, &P), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "options");
      }
      expect("no AMG after failed creates", P == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    }
  }
  /* a callback failing on one rank inside a composition whose next operator exchanges halos */
  parlops_op *AS = NULL, *SA = NULL;
  EXPECT(parlops_op_product(A, S, &AS), PARLOPS_OK, NULL);
  EXPECT(parlops_op_sum(S, A, &SA), PARLOPS_OK, NULL);
  fail_on_rank = last;
  EXPECT(parlops_op_apply(AS, x, y), PARLOPS_ERR_CALLBACK, "returned 7");
  EXPECT(parlops_op_apply(SA, x, y), PARLOPS_ERR_CALLBACK, "returned 7");
  fail_on_rank = -1;
  EXPECT(parlops_op_apply(AS, x, y), PARLOPS_OK, NULL);
  parlops_op_destroy(&AS);
  parlops_op_destroy(&SA);

  /* ---- ParCSR split, wrapped: diag with local columns, offd compressed, col_map_offd global */
  int di[16], dj[48], oi[16], oj[48];
  double da[48], oa[48];
  int64_t cmap[2];
  int nd = 0, no = 0, ncm = 0;
  if (start > 0) cmap[ncm++] = start - 1;
  if (start + len < 12 && len > 0) cmap[ncm++] = start + len;
  di[0] = oi[0] = 0;
  for (int64_t i = start; i < start + len; ++i) {
    dj[nd] = (int)(i - start); da[nd++] = 2.0; /* diagonal first, as hypre does */
    for (int64_t j = i - 1; j <= i + 1; j += 2) {
      if (j < 0 || j >= 12) continue;
      double a = (double)(i - j + 2);
      if (j >= start && j < start + len) { dj[nd] = (int)(j - start); da[nd++] = a; }
      else { oj[no] = (j < start) ? 0 : ncm - 1; oa[no++] = a; }
    }
    di[i - start + 1] = nd;
    oi[i - start + 1] = no;
  }
  parlops_op *P = NULL, *Pc = NULL;
  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, oi, oj, oa, ncm, cmap, PARLOPS_WRAP, &P), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, oi, oj, oa, ncm, cmap, PARLOPS_COPY, &Pc), PARLOPS_OK, NULL);
  const void *pd = NULL, *po = NULL;
  EXPECT(parlops_op_csr_arrays(P, &pd, &po), PARLOPS_OK, NULL);
  expect("WRAP reads the caller's arrays", (len == 0 || pd == (const void *)da) && (no == 0 || po == (const void *)oa) ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_csr_arrays(Pc, &pd, &po), PARLOPS_OK, NULL);
  expect("COPY does not", (len == 0 || pd != (const void *)da) ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  /* the wrapped and the local-rows matrices agree */
  parlops_vec *y2 = NULL;
  EXPECT(parlops_vec_duplicate(y, &y2), PARLOPS_OK, NULL);
  double *xl;
  parlops_vec_local_array(x, (void **)&xl, NULL);
  for (int64_t i = 0; i < len; ++i) xl[i] = (double)((start + i) * (start + i) % 7);
  EXPECT(parlops_op_apply(A, x, y), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply(P, x, y2), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_axpy(y2, PARLOPS_REAL(-1), y), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(y2, PARLOPS_NORM_INF, 0, &nrm), PARLOPS_OK, NULL);
  expect("ParCSR (wrapped) equals CSR from local rows", nrm == 0.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  /* x' = 2 A^H y - x' + ... : multadd_adjoint against apply_adjoint */
  parlops_vec *ma1 = NULL, *ma2 = NULL;
  EXPECT(parlops_vec_duplicate(x, &ma1), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_duplicate(x, &ma2), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_fill(ma1, PARLOPS_REAL(1)), PARLOPS_OK, NULL);
  EXPECT(parlops_op_multadd_adjoint(A, PARLOPS_REAL(2), y, PARLOPS_REAL(-1), ma1), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply_adjoint(A, y, ma2), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_scale(ma2, PARLOPS_REAL(2)), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_axpy(ma2, PARLOPS_REAL(-1), ma1), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(ma2, PARLOPS_NORM_INF, 0, &nrm), PARLOPS_OK, NULL);
  expect("multadd_adjoint = 2 A^H y - x", nrm == 1.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_vec_destroy(&ma1);
  parlops_vec_destroy(&ma2);
  /* writes to the caller's arrays show through: zero copy */
  for (int k = 0; k < nd; ++k) da[k] *= 2.0;
  EXPECT(parlops_op_apply(P, x, y2), PARLOPS_OK, NULL);
  double n1, n2;
  parlops_vec_norm(y2, PARLOPS_NORM_1, 0, &n1);
  parlops_vec_norm(y, PARLOPS_NORM_1, 0, &n2);
  expect("wrapped values are read in place", n1 != n2 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  for (int k = 0; k < nd; ++k) da[k] /= 2.0;

  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, oi, oj, oa, ncm, cmap, 7, &R), PARLOPS_ERR_INVALID_ARGUMENT, "ownership");
  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, oi, oj, oa, -1, cmap, PARLOPS_COPY, &R), PARLOPS_ERR_INVALID_ARGUMENT, "num_offd_cols");
  int64_t own[1] = {start};
  int zeros[16] = {0};
  if (len > 0) /* an owned column listed in col_map_offd on rank 0 */
    EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, zeros, NULL, NULL, rank_ == 0 ? 1 : 0, own, PARLOPS_COPY, &R),
           PARLOPS_ERR_INVALID_ARGUMENT, "owned");
  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, NULL, NULL, NULL, ncm, cmap, PARLOPS_COPY, &R),
         size_ > 1 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_OK, "offd_i"); /* 1 rank: no offd needed */
  parlops_op_destroy(&R);
  if (len > 0 && rank_ == last) dj[0] = (int)len + 5; /* local column out of range on one rank */
  EXPECT(parlops_op_create_parcsr(l, l, PARLOPS_F64, PARLOPS_INDEX_I32, di, dj, da, oi, oj, oa, ncm, cmap, PARLOPS_COPY, &R),
         len > 0 || rank_ != last ? PARLOPS_ERR_INVALID_ARGUMENT : PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  dj[0] = 0;

  /* ---- compositions */
  parlops_op *B = NULL, *F = NULL;
  EXPECT(parlops_op_create_shell(l2, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, NULL, NULL, &B), PARLOPS_OK, NULL);
  EXPECT(parlops_op_identity(l, PARLOPS_F32, &F), PARLOPS_OK, NULL);
  EXPECT(parlops_op_sum(A, B, &T), PARLOPS_ERR_SIZE_MISMATCH, "same shape");
  EXPECT(parlops_op_sum(A, F, &T), PARLOPS_ERR_DTYPE_MISMATCH, "PARLOPS_F32");
  EXPECT(parlops_op_sum(A, NULL, &T), PARLOPS_ERR_NULL_ARGUMENT, "B");
  EXPECT(parlops_op_sum(A, A, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_op_difference(A, B, &T), PARLOPS_ERR_SIZE_MISMATCH, NULL);
  EXPECT(parlops_op_product(B, B, &T), PARLOPS_ERR_SIZE_MISMATCH, "columns");
  EXPECT(parlops_op_product(A, F, &T), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  EXPECT(parlops_op_power(B, 2, &T), PARLOPS_ERR_SIZE_MISMATCH, "square");
  EXPECT(parlops_op_power(A, -1, &T), PARLOPS_ERR_INVALID_ARGUMENT, "'k'");
  EXPECT(parlops_op_scale(A, cplx, &T), PARLOPS_ERR_INVALID_ARGUMENT, "alpha");
  EXPECT(parlops_op_adjoint(NULL, &T), PARLOPS_ERR_NULL_ARGUMENT, "A");
  EXPECT(parlops_op_transpose(A, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_op_conj(NULL, &T), PARLOPS_ERR_NULL_ARGUMENT, "A");
  expect("no composition on failure", T == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_power(A, 3, &T), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(T, 3, &err), PARLOPS_OK, NULL);
  expect("dot test of A^3", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- other constructors */
  EXPECT(parlops_op_identity(NULL, PARLOPS_F64, &R), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_op_identity(l, 8, &R), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  EXPECT(parlops_op_zero(l, NULL, PARLOPS_F64, &R), PARLOPS_ERR_NULL_ARGUMENT, "cols");
  EXPECT(parlops_op_diagonal_matrix(NULL, &R), PARLOPS_ERR_NULL_ARGUMENT, "d");
  EXPECT(parlops_op_create_dense(l, l, PARLOPS_F64, NULL, &R), len > 0 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_ERR_NULL_ARGUMENT, NULL);
  EXPECT(parlops_op_create_dense(lb, l, PARLOPS_F64, v, &R), PARLOPS_ERR_NOT_SUPPORTED, "scatter");
  parlops_op *blocks[2] = {A, NULL};
  if (one) EXPECT(parlops_op_block_diag(c, PARLOPS_F64, 1, (const parlops_op *const *)blocks, &R), PARLOPS_ERR_INVALID_ARGUMENT, "local");
  EXPECT(parlops_op_block_diag(c, PARLOPS_F64, -1, NULL, &R), PARLOPS_ERR_INVALID_ARGUMENT, "n_local");
  EXPECT(parlops_op_block_diag(c, PARLOPS_F64, 2, (const parlops_op *const *)blocks, &R), PARLOPS_ERR_NULL_ARGUMENT, NULL);
  EXPECT(parlops_op_block_diag(NULL, PARLOPS_F64, 0, NULL, &R), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_op_identity(ls, PARLOPS_F64, &loc), PARLOPS_OK, NULL);
  blocks[0] = loc;
  EXPECT(parlops_op_block_diag(c, PARLOPS_F32, 1, (const parlops_op *const *)blocks, &R), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  if (one) {
    parlops_layout *lsb = NULL;
    parlops_op *wide = NULL;
    EXPECT(parlops_layout_create(self, PARLOPS_PARTITION_SCATTER, rank_ == last ? 4 : 3, -1, &lsb), PARLOPS_OK, NULL);
    EXPECT(parlops_op_zero(ls, lsb, PARLOPS_F64, &wide), PARLOPS_OK, NULL);
    blocks[0] = wide;
    EXPECT(parlops_op_vstack(c, PARLOPS_F64, 1, (const parlops_op *const *)blocks, &R), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "columns");
    EXPECT(parlops_op_block_diag(c, PARLOPS_F64, rank_ == last ? -2 : 1, (const parlops_op *const *)blocks, &R), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    parlops_op_destroy(&wide);
    parlops_layout_destroy(&lsb);
  }
  expect("no block operator on failure", R == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_destroy(NULL), PARLOPS_ERR_NULL_ARGUMENT, "A");

  /* ---- N-D layouts and stencil operators */
  parlops_layout *ndl = NULL;
  int64_t shp[2] = {6, 4}, bad_shp[2] = {6, -4}, other_shp[2] = {4, 6};
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, NULL, 0, -1, &ndl), PARLOPS_ERR_NULL_ARGUMENT, "global_shape");
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 0, shp, 0, -1, &ndl), PARLOPS_ERR_INVALID_ARGUMENT, "ndim");
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, bad_shp, 0, -1, &ndl), PARLOPS_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp, 1, -1, &ndl), PARLOPS_ERR_NOT_SUPPORTED, "axis 0");
  int64_t huge_shp[2] = {INT64_MAX / 2, 4};
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, huge_shp, 0, -1, &ndl), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp, 0, 9, &ndl), PARLOPS_ERR_INVALID_ARGUMENT, "local_len_along_axis");
  if (one) {
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, rank_ == last ? other_shp : shp, 0, -1, &ndl),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "shape");
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp, 0, rank_ == 0 ? 6 : -1, &ndl), PARLOPS_ERR_SIZE_MISMATCH, "sum to");
  }
  expect("no ndl layout on failure", ndl == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp, 0, -1, &ndl), PARLOPS_OK, NULL);
  int ndim = 0;
  int64_t got[4] = {0};
  EXPECT(parlops_layout_shape(ndl, &ndim, got, 4), PARLOPS_OK, NULL);
  expect("shape read back", ndim == 2 && got[0] == 6 && got[1] == 4 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_layout_shape(ndl, NULL, got, 4), PARLOPS_ERR_NULL_ARGUMENT, "ndim");
  parlops_op *D = NULL;
  EXPECT(parlops_op_first_derivative(ndl, 2, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "axis");
  EXPECT(parlops_op_first_derivative(ndl, 1, 0.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "sampling");
  EXPECT(parlops_op_first_derivative(ndl, 1, 1.0, 9, false, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "kind");
  EXPECT(parlops_op_first_derivative(NULL, 1, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_op_first_derivative(lb, 0, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D), PARLOPS_ERR_NOT_SUPPORTED, "scatter");
  EXPECT(parlops_op_second_derivative(ndl, 0, 1.0, PARLOPS_FORWARD, false, 12, &D), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  EXPECT(parlops_op_laplacian(ndl, NULL, NULL, PARLOPS_F64, &D), PARLOPS_ERR_NULL_ARGUMENT, "weights");
  EXPECT(parlops_op_gradient(ndl, NULL, PARLOPS_CENTERED, true, PARLOPS_F64, &D), PARLOPS_ERR_NULL_ARGUMENT, "sampling");
  if (one) {
    EXPECT(parlops_op_first_derivative(ndl, rank_ == last ? 5 : 0, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D),
           PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_op_second_derivative(ndl, 0, rank_ == 0 ? 0.0 : 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D),
           PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    /* valid everywhere, but not the same operator on every rank */
    EXPECT(parlops_op_first_derivative(ndl, 0, rank_ == last ? 2.0 : 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &D),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "sampling");
    double w1[2] = {1.0, rank_ == last ? 3.0 : 1.0}, s1[2] = {1.0, 1.0};
    EXPECT(parlops_op_laplacian(ndl, w1, s1, PARLOPS_F64, &D), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "weights");
    EXPECT(parlops_op_gradient(ndl, s1, rank_ == last ? PARLOPS_FORWARD : PARLOPS_CENTERED, false, PARLOPS_F64, &D),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "kind");
    expect("no stencil from differing arguments", D == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  }
  /* the matrix-free Poisson operator */
  int64_t pgrid[2] = {6, 4}, pbad[2] = {6, 5}, pzero[2] = {24, 0}, pswap[2] = {4, 6};
  EXPECT(parlops_op_poisson(ndl, 0, pgrid, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "ndim");
  EXPECT(parlops_op_poisson(ndl, 4, pgrid, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "ndim");
  EXPECT(parlops_op_poisson(ndl, 2, NULL, PARLOPS_F64, &D), PARLOPS_ERR_NULL_ARGUMENT, "dims");
  EXPECT(parlops_op_poisson(ndl, 2, pbad, PARLOPS_F64, &D), PARLOPS_ERR_SIZE_MISMATCH, "layout has 24 rows");
  EXPECT(parlops_op_poisson(ndl, 2, pzero, PARLOPS_F64, &D), PARLOPS_ERR_INVALID_ARGUMENT, "dims[1]");
  EXPECT(parlops_op_poisson(ndl, 2, pgrid, 12, &D), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  EXPECT(parlops_op_poisson(ndl, 2, pgrid, PARLOPS_F64, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_op_poisson(NULL, 2, pgrid, PARLOPS_F64, &D), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  if (one)
    EXPECT(parlops_op_poisson(ndl, 2, rank_ == last ? pswap : pgrid, PARLOPS_F64, &D), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
           "Poisson grid extents");
  expect("no stencil on failure", D == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  /* the FFT (ndl: 6 x 4) */
  {
    int ax2[2] = {0, 1}, axdup[2] = {1, -1}, axbad[2] = {0, 2};
    bool fl[2] = {true, false};
    EXPECT(parlops_op_fft(ndl, 2, NULL, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_NULL_ARGUMENT, "axes");
    EXPECT(parlops_op_fft(ndl, 0, ax2, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_INVALID_ARGUMENT, "naxes");
    EXPECT(parlops_op_fft(ndl, 2, axbad, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_INVALID_ARGUMENT, "holds 2");
    EXPECT(parlops_op_fft(ndl, 2, axdup, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_INVALID_ARGUMENT, "twice");
    EXPECT(parlops_op_fft(ndl, 2, ax2, 7, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_INVALID_ARGUMENT, "norm");
    EXPECT(parlops_op_fft(ndl, 2, ax2, 0, false, NULL, NULL, 9, &D), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
    EXPECT(parlops_op_fft(NULL, 2, ax2, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_NULL_ARGUMENT, "layout");
    EXPECT(parlops_op_fft(ndl, 2, ax2, 0, false, NULL, NULL, PARLOPS_C128, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_op_fft(lb, 1, ax2, 0, false, NULL, NULL, PARLOPS_C128, &D), PARLOPS_ERR_NOT_SUPPORTED, "scatter");
    if (one) {
      EXPECT(parlops_op_fft(ndl, 2, ax2, 0, false, rank_ == last ? fl : NULL, NULL, PARLOPS_C128, &D),
             PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "FFT arguments");
      EXPECT(parlops_op_fft(ndl, rank_ == last ? 1 : 2, ax2, 0, false, NULL, NULL, PARLOPS_C128, &D),
             PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "FFT arguments");
      EXPECT(parlops_op_fft(ndl, 2, rank_ == last ? axbad : ax2, 0, false, NULL, NULL, PARLOPS_C128, &D),
             PARLOPS_ERR_INVALID_ARGUMENT, "axes");
    }
    expect("no FFT on failure", D == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_fft(ndl, 2, ax2, PARLOPS_FFT_NORM_1_OVER_N, false, fl, fl, PARLOPS_C64, &D), PARLOPS_OK, NULL);
    EXPECT(parlops_op_dottest(D, 5, &err), PARLOPS_OK, NULL);
    expect("fft dot test (c64)", err < 1e-5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_size(D, &m, &n), PARLOPS_OK, NULL);
    expect("fft is 24 x 24", m == 24 && n == 24 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_destroy(&D), PARLOPS_OK, NULL);
    EXPECT(parlops_op_fft(ndl, 2, ax2, 0, true, NULL, NULL, PARLOPS_F64, &D), PARLOPS_OK, NULL);
    EXPECT(parlops_op_size(D, &m, &n), PARLOPS_OK, NULL);
    expect("real fft along axis 1 is 18 x 24", m == 18 && n == 24 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_op_destroy(&D), PARLOPS_OK, NULL);
  }
  EXPECT(parlops_op_poisson(ndl, 2, pgrid, PARLOPS_C64, &D), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(D, 5, &err), PARLOPS_OK, NULL);
  expect("poisson dot test (c64)", err < 1e-5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_destroy(&D), PARLOPS_OK, NULL);
  double wts[2] = {1.0, 2.0}, dxs[2] = {0.5, 0.25};
  parlops_op *G = NULL;
  EXPECT(parlops_op_laplacian(ndl, wts, dxs, PARLOPS_C128, &D), PARLOPS_OK, NULL);
  EXPECT(parlops_op_gradient(ndl, dxs, PARLOPS_BACKWARD, false, PARLOPS_F32, &G), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(D, 5, &err), PARLOPS_OK, NULL);
  expect("laplacian dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(G, 5, &err), PARLOPS_OK, NULL);
  expect("gradient dot test (f32)", err < 1e-5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_size(G, &m, &n), PARLOPS_OK, NULL);
  expect("gradient is 48 x 24", m == 48 && n == 24 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&D);
  parlops_op_destroy(&G);
  parlops_layout_destroy(&ndl);

  /* ---- Fredholm1, halo, stacked block diagonal */
  parlops_op *Fh = NULL, *H = NULL, *SB = NULL;
  double gl[2 * 3 * 2];
  for (int k = 0; k < 12; ++k) gl[k] = 0.1 * (k + rank_);
  EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 2, 3, 2, 2, NULL, &Fh), PARLOPS_ERR_NULL_ARGUMENT, "g_local");
  EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 2, 3, 2, 0, gl, &Fh), PARLOPS_ERR_INVALID_ARGUMENT, "nz");
  if (one) EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 1, rank_ == last ? 2 : 3, 2, 2, gl, &Fh), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "nx");
  EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 2, 3, 2, 2, gl, &Fh), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(Fh, 9, &err), PARLOPS_OK, NULL);
  expect("Fredholm1 dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  /* non-stationary convolution on a 1-D layout of 20 (rank 0 holds 2 when there are others: less
   * than the halo of 3) */
  {
    parlops_layout *l20 = NULL, *lb20 = NULL;
    parlops_op *Ns = NULL;
    int64_t mine20 = size_ == 1 ? 20 : rank_ == 0 ? 2 : 18 / (size_ - 1) + (rank_ <= 18 % (size_ - 1) ? 1 : 0);
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 20, mine20, &l20), PARLOPS_OK, NULL);
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, 20, -1, &lb20), PARLOPS_OK, NULL);
    double hs7[3 * 7], hs7b[3 * 7];
    for (int k = 0; k < 21; ++k) hs7[k] = hs7b[k] = 0.1 * k - 1.0;
    hs7b[20] = 5.0;
    int64_t ih3[3] = {2, 9, 16}, ihbad[3] = {2, 9, 15}, ihout[3] = {6, 13, 20};
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 3, NULL, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_NULL_ARGUMENT, "hs");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 3, hs7, NULL, PARLOPS_F64, &Ns), PARLOPS_ERR_NULL_ARGUMENT, "ih");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 6, 3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "odd");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 1, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "nfilts");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, -3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "nfilts");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 3, hs7, ihbad, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "constant step");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 3, hs7, ihout, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "0..20");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, 1, 7, 3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INVALID_ARGUMENT, "axis");
    EXPECT(parlops_op_nonstationary_convolve1d(lb20, 0, 7, 3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_NOT_SUPPORTED, "BROADCAST");
    if (one) EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, 7, 3, rank_ == last ? hs7b : hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "non-stationary");
    if (one) EXPECT(parlops_op_nonstationary_convolve1d(l20, 0, rank_ == last ? 5 : 7, 3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "non-stationary");
    EXPECT(parlops_op_nonstationary_convolve1d(l20, -1, 7, 3, hs7, ih3, PARLOPS_F64, &Ns), PARLOPS_OK, NULL);
    EXPECT(parlops_op_dottest(Ns, 4, &err), PARLOPS_OK, NULL);
    expect("non-stationary convolution dot test (a rank thinner than the halo)", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op_destroy(&Ns);
    /* an empty array (4 x 0) along axis 0: made and applied, nothing to do (it divided by zero) */
    int64_t shp40[2] = {4, 0}, ih2[2] = {0, 3};
    parlops_layout *l40 = NULL;
    parlops_vec *x40 = NULL, *y40 = NULL;
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp40, 0, -1, &l40), PARLOPS_OK, NULL);
    EXPECT(parlops_op_nonstationary_convolve1d(l40, 0, 7, 2, hs7, ih2, PARLOPS_F64, &Ns), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_vecs(Ns, &x40, &y40), PARLOPS_OK, NULL);
    EXPECT(parlops_op_apply(Ns, x40, y40), PARLOPS_OK, NULL);
    EXPECT(parlops_op_apply_adjoint(Ns, y40, x40), PARLOPS_OK, NULL);
    parlops_vec_destroy(&x40);
    parlops_vec_destroy(&y40);
    parlops_op_destroy(&Ns);
    parlops_layout_destroy(&l40);
    parlops_layout_destroy(&l20);
    parlops_layout_destroy(&lb20);
  }
  /* MDC: G split by frequency (rank 0 two, rank 1 none from 3 ranks, the others one); nt 9 has 5 */
  parlops_op *Md = NULL;
  double gm[2 * 2 * 3 * 2];
  float gf[2 * 2 * 3];
  for (int k = 0; k < 24; ++k) gm[k] = 0.05 * (k + 1) * (rank_ % 2 ? -1 : 1);
  for (int k = 0; k < 12; ++k) gf[k] = 0.1f * (float)(k + 1 + rank_);
  int64_t nfl = (size_ > 2 && rank_ == 1) ? 0 : (rank_ == 0 ? 2 : 1);
  EXPECT(parlops_op_mdc(c, PARLOPS_C128, 1, 2, 3, 9, 2, 0.004, 10.0, true, false, false, NULL, &Md), PARLOPS_ERR_NULL_ARGUMENT, "g_local");
  EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, 8, 2, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INVALID_ARGUMENT, "odd");
  EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, 9, 0, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INVALID_ARGUMENT, "nv 0");
  EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, 9, 2, NAN, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INVALID_ARGUMENT, "dt");
  EXPECT(parlops_op_mdc(c, 7, nfl, 2, 3, 9, 2, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  if (size_ > 1) EXPECT(parlops_op_mdc(c, PARLOPS_C128, 2, 2, 3, 3, 2, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INVALID_ARGUMENT, "non-negative frequencies");
  if (one) EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, rank_ == last ? 11 : 9, 2, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "nt");
  if (one) EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, 9, 2, 0.004, 10.0, true, rank_ == last, false, gm, &Md), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "conj");
  EXPECT(parlops_op_mdc(c, PARLOPS_C128, nfl, 2, 3, 9, 2, 0.004, 10.0, true, false, false, gm, &Md), PARLOPS_OK, NULL);
  EXPECT(parlops_op_size(Md, &m, &n), PARLOPS_OK, NULL);
  expect("MDC is (9*2*2) x (9*3*2)", m == 36 && n == 54 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(Md, 9, &err), PARLOPS_OK, NULL);
  expect("MDC dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&Md);
  EXPECT(parlops_op_mdc(c, PARLOPS_F32, nfl, 2, 3, 10, 1, 0.004, 10.0, false, true, true, gf, &Md), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(Md, 9, &err), PARLOPS_OK, NULL);
  expect("MDC dot test (real f32 G, one-sided, even nt)", err < 1e-5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&Md);
  /* MPIL2 through an operator and ADMM: the argument named, one rank differing fails every rank */
  {
    parlops_op *Id = NULL;
    parlops_prox *pl = NULL, *g1 = NULL;
    parlops_vec *z = NULL;
    EXPECT(parlops_op_identity(l, PARLOPS_F64, &Id), PARLOPS_OK, NULL);
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, NULL, NULL, 0.0, true, PARLOPS_METHOD_CGLS, 5, 1e-4, NULL, true, &pl),
           PARLOPS_ERR_NULL_ARGUMENT, "'b'");
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, x2, NULL, 0.0, true, PARLOPS_METHOD_CGLS, 5, 1e-4, NULL, true, &pl),
           PARLOPS_ERR_SIZE_MISMATCH, "b");
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, xf, 0.0, true, PARLOPS_METHOD_CGLS, 5, 1e-4, NULL, true, &pl),
           PARLOPS_ERR_DTYPE_MISMATCH, "q");
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, NULL, 0.0, true, 7, 5, 1e-4, NULL, true, &pl), PARLOPS_ERR_INVALID_ARGUMENT,
           "method is 7");
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, NULL, 0.0, true, PARLOPS_METHOD_CG, -1, 1e-4, NULL, true, &pl),
           PARLOPS_ERR_INVALID_ARGUMENT, "niter is -1");
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, NULL, 0.0, true, PARLOPS_METHOD_CG, 5, NAN, NULL, true, &pl),
           PARLOPS_ERR_INVALID_ARGUMENT, "tol is NaN");
    EXPECT(parlops_prox_create_l2_op(Id, 0.0, y, NULL, 0.0, true, PARLOPS_METHOD_CG, 5, 1e-4, NULL, true, &pl),
           PARLOPS_ERR_INVALID_ARGUMENT, "sigma is 0");
    if (one)
      EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, NULL, 0.0, true, PARLOPS_METHOD_CG, rank_ == last ? 4 : 5, 1e-4, NULL,
                                       true, &pl),
             PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "niter");
    expect("no proximal operator on failure", pl == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_prox_create_l2_op(Id, 1.0, y, NULL, 0.0, true, PARLOPS_METHOD_CG, 5, 1e-4, x, true, &pl), PARLOPS_OK,
           NULL);
    EXPECT(parlops_prox_create_l1(l, PARLOPS_F64, 0.5, &g1), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &z), PARLOPS_OK, NULL);
    EXPECT(parlops_admm_l2(NULL, Id, y, Id, 0.25, 3, false, false, 5, 1e-4, x, z), PARLOPS_ERR_NULL_ARGUMENT, "'g'");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.0, 3, false, false, 5, 1e-4, x, z), PARLOPS_ERR_INVALID_ARGUMENT, "tau is 0");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, -1, false, false, 5, 1e-4, x, z), PARLOPS_ERR_INVALID_ARGUMENT,
           "niter is -1");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, 3, false, false, -2, 1e-4, x, z), PARLOPS_ERR_INVALID_ARGUMENT,
           "niter is -2");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, 3, false, false, 5, -1.0, x, z), PARLOPS_ERR_INVALID_ARGUMENT, "tol is -1");
    EXPECT(parlops_admm_l2(g1, Id, x2, Id, 0.25, 3, false, false, 5, 1e-4, x, z), PARLOPS_ERR_SIZE_MISMATCH, "b");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, 3, false, false, 5, 1e-4, x, x), PARLOPS_ERR_INVALID_ARGUMENT,
           "same vector");
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, 3, false, false, 5, 1e-4, xf, z), PARLOPS_ERR_DTYPE_MISMATCH, "x");
    if (one)
      EXPECT(parlops_admm_l2(g1, Id, y, Id, rank_ == last ? 0.5 : 0.25, 3, false, false, 5, 1e-4, x, z),
             PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "tau");
    /* g may itself be collective (an L2 through an operator) */
    EXPECT(parlops_admm_l2(pl, Id, y, Id, 0.25, 3, true, false, 5, 1e-4, x, z), PARLOPS_OK, NULL);
    EXPECT(parlops_admm_l2(g1, Id, y, Id, 0.25, 3, false, true, 5, 1e-4, x, z), PARLOPS_OK, NULL);
    /* a prox called from its own operator's callback: refused (BUSY) on every rank, no hang */
    parlops_op *Nest = NULL;
    parlops_prox *pn = NULL;
    EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, nest_cb, nest_cb, NULL, &Nest), PARLOPS_OK,
           NULL);
    EXPECT(parlops_prox_create_l2_op(Nest, 1.0, y, NULL, 0.0, true, PARLOPS_METHOD_CGLS, 3, 0.0, NULL, true, &pn),
           PARLOPS_OK, NULL);
    nest_x = y;
    nest_p = pn;
    parlops_vec *w = NULL;
    EXPECT(parlops_vec_duplicate(x, &w), PARLOPS_OK, NULL);
    nest_y = w;
    EXPECT(parlops_prox_apply(pn, 0.5, x, z), PARLOPS_OK, NULL);
    expect("a prox from its own operator's callback: PARLOPS_ERR_BUSY",
           nest_status == PARLOPS_ERR_BUSY ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_vec_destroy(&w);
    parlops_prox_destroy(&pn);
    parlops_op_destroy(&Nest);
    parlops_prox_destroy(&pl);
    parlops_prox_destroy(&g1);
    parlops_vec_destroy(&z);
    parlops_op_destroy(&Id);
  }
  int64_t hdims[2] = {7, 5}, hgrid[2] = {1, size_}, badgrid[2] = {2, size_}, hw[2] = {1, 2}, negw[1] = {-1};
  int64_t bst[2], bsh[2];
  EXPECT(parlops_halo_block(2, hdims, hgrid, size_, size_, bst, bsh), PARLOPS_ERR_INVALID_ARGUMENT, "rank");
  EXPECT(parlops_halo_block(2, hdims, badgrid, size_, 0, bst, bsh), PARLOPS_ERR_INVALID_ARGUMENT, "grid");
  EXPECT(parlops_halo_block(2, hdims, NULL, size_, rank_, bst, NULL), PARLOPS_ERR_NULL_ARGUMENT, "shape");
  EXPECT(parlops_halo_block(2, hdims, NULL, size_, rank_, bst, bsh), PARLOPS_OK, NULL);
  EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, badgrid, 1, hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, "grid");
  /* a grid whose product wraps around to the rank count (found by the fuzzer: it panicked) */
  const int64_t wrapgrid[2] = {INT64_MAX, size_ == 1 ? INT64_MAX : 1};
  EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, wrapgrid, 1, hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, "grid");
  EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, hgrid, 3, hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, hgrid, 1, negw, &H), PARLOPS_ERR_INVALID_ARGUMENT, ">= 0");
  EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, NULL, hgrid, 1, hw, &H), PARLOPS_ERR_NULL_ARGUMENT, "dims");
  if (one) EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, hgrid, 1, rank_ == last ? negw : hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  /* a bad dtype or output on one rank only: the others must not enter the (collective) construction alone */
  if (one) EXPECT(parlops_op_halo(c, rank_ == last ? (parlops_dtype)99 : PARLOPS_F64, 2, hdims, hgrid, 1, hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  if (one) EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, hgrid, 1, hw, rank_ == last ? NULL : &H), PARLOPS_ERR_NULL_ARGUMENT, "out");
  expect("no halo on failure", H == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_halo(c, PARLOPS_C64, 2, hdims, NULL, 2, hw, &H), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(H, 9, &err), PARLOPS_OK, NULL);
  expect("Halo dot test", err < 1e-5 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op *pair[2] = {A, P};
  EXPECT(parlops_op_stacked_block_diag(c, PARLOPS_F64, 2, (const parlops_op *const *)pair, &SB), PARLOPS_OK, NULL);
  EXPECT(parlops_op_dottest(SB, 9, &err), PARLOPS_OK, NULL);
  expect("StackedBlockDiag dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_op_destroy(&SB);
  if (one) EXPECT(parlops_op_stacked_block_diag(c, PARLOPS_F64, rank_ == last ? 1 : 2, (const parlops_op *const *)pair, &SB),
                  PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "numbers");
  pair[1] = loc;
  if (one) EXPECT(parlops_op_stacked_block_diag(c, PARLOPS_F64, 2, (const parlops_op *const *)pair, &SB), PARLOPS_ERR_LAYOUT_MISMATCH, "communicator");
  parlops_op_destroy(&Fh);
  parlops_op_destroy(&H);

  /* ---- SUMMA: square grids only */
  parlops_op *SU = NULL;
  int g = 1;
  while ((g + 1) * (g + 1) <= size_) g++;
  int square = g * g == size_;
  int64_t ts, tl, us, ul;
  EXPECT(parlops_summa_tile(5, g, g, &ts, &tl), PARLOPS_ERR_INVALID_ARGUMENT, "index");
  EXPECT(parlops_summa_tile(5, g, square ? rank_ / g : 0, &ts, &tl), PARLOPS_OK, NULL);
  EXPECT(parlops_summa_tile(4, g, square ? rank_ % g : 0, &us, &ul), PARLOPS_OK, NULL);
  double at[20];
  for (int k = 0; k < 20; ++k) at[k] = 1.0 + k;
  EXPECT(parlops_op_create_dense_summa(c, PARLOPS_F64, 5, 4, 3, at, &SU), square ? PARLOPS_OK : PARLOPS_ERR_NOT_SUPPORTED, square ? NULL : "square");
  if (SU) {
    EXPECT(parlops_op_dottest(SU, 4, &err), PARLOPS_OK, NULL);
    expect("SUMMA dot test", err < 1e-13 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op_destroy(&SU);
  }
  EXPECT(parlops_op_create_dense_summa(c, PARLOPS_F64, 5, 4, 3, NULL, &SU), (square && tl * ul > 0) || !square ? (square ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_ERR_NOT_SUPPORTED) : PARLOPS_ERR_NULL_ARGUMENT, NULL);

  /* ---- a failure on one rank never leaves the others waiting (callback, allocation, reentrant use) */
  {
    parlops_op *S2 = NULL, *Ih = NULL, *SR = NULL, *PR = NULL;
    parlops_layout *lhuge = NULL;
    parlops_scalar ev;
    int64_t its;
    EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, fwd, fwd, NULL, &S2), PARLOPS_OK, NULL);
    fail_on_rank = last;
    EXPECT(parlops_op_dottest(S2, 1, &err), PARLOPS_ERR_CALLBACK, "returned 7");
    EXPECT(parlops_op_power_iteration(S2, 5, 0.0, 1, &ev, &its), PARLOPS_ERR_CALLBACK, "returned 7");
    fail_on_rank = -1;
    EXPECT(parlops_op_dottest(S2, 1, &err), PARLOPS_OK, NULL);
    /* 2^40 local entries on rank 0, 1 elsewhere: the work vectors cannot be allocated on rank 0 only */
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, rank_ == 0 ? (int64_t)1 << 40 : 1, &lhuge), PARLOPS_OK, NULL);
    EXPECT(parlops_op_identity(lhuge, PARLOPS_F64, &Ih), PARLOPS_OK, NULL);
    EXPECT(parlops_op_dottest(Ih, 1, &err), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    EXPECT(parlops_op_power_iteration(Ih, 5, 0.0, 1, &ev, &its), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    /* reentrant use: refused with PARLOPS_ERR_NOT_SUPPORTED inside, the callback's failure outside */
    EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, reenter, NULL, NULL, &SR), PARLOPS_OK, NULL);
    reenter_x = x;
    reenter_y = y2;
    reenter_op = SR;
    EXPECT(parlops_op_apply(SR, x, y), PARLOPS_ERR_CALLBACK, "returned 9");
    expect_reentrant_refused("callback applying its own operator");
    reenter_multadd = 1;
    EXPECT(parlops_op_multadd(SR, PARLOPS_REAL(1), x, PARLOPS_REAL(0), y), PARLOPS_ERR_CALLBACK, "returned 9");
    expect_reentrant_refused("callback calling multadd on its own operator");
    reenter_multadd = 0;
    EXPECT(parlops_op_product(SR, A, &PR), PARLOPS_OK, NULL);
    reenter_op = PR;
    EXPECT(parlops_op_apply(PR, x, y), PARLOPS_ERR_CALLBACK, "returned 9");
    expect_reentrant_refused("callback applying a product that holds it");
    parlops_op_destroy(&PR);
    parlops_op_destroy(&SR);
    parlops_op_destroy(&Ih);
    parlops_op_destroy(&S2);
    parlops_layout_destroy(&lhuge);
  }

  /* ---- sizes from the caller: overflow is an argument error; a huge allocation is
   * PARLOPS_ERR_OUT_OF_MEMORY on every rank (never an abort) */
  {
    const int64_t big = (int64_t)1 << 40, b32 = (int64_t)1 << 32;
    parlops_layout *l0 = NULL, *lbig = NULL, *lbigself = NULL, *l32 = NULL, *l32b = NULL, *nd0 = NULL, *ndbig = NULL;
    parlops_op *Z = NULL, *Q = NULL;
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 0, -1, &l0), PARLOPS_OK, NULL);
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, big, -1, &lbig), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_dense(l0, lbig, PARLOPS_F64, NULL, &Q), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, b32, &l32), PARLOPS_OK, NULL);
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, b32, -1, &l32b), PARLOPS_OK, NULL);
    EXPECT(parlops_op_create_dense(l32, l32b, PARLOPS_F64, v, &Q), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
    EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 1, 1, 1, big, gl, &Q), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 1, b32, b32, 1, gl, &Q), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
    EXPECT(parlops_op_create_dense_summa(c, PARLOPS_F64, 1, 1, big, at, &Q), square ? PARLOPS_ERR_OUT_OF_MEMORY : PARLOPS_ERR_NOT_SUPPORTED, NULL);
    EXPECT(parlops_layout_create(self, PARLOPS_PARTITION_SCATTER, big, -1, &lbigself), PARLOPS_OK, NULL);
    EXPECT(parlops_op_zero(ls, lbigself, PARLOPS_F64, &Z), PARLOPS_OK, NULL);
    parlops_op *zs[1] = {Z};
    EXPECT(parlops_op_vstack(c, PARLOPS_F64, 1, (const parlops_op *const *)zs, &Q), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    int64_t shp_big[2] = {1, big}, shp_big2[2] = {3, big};
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp_big, 0, -1, &ndbig), PARLOPS_OK, NULL);
    /* matrix-free: a derivative along the fast axis allocates nothing sized by the shape */
    EXPECT(parlops_op_first_derivative(ndbig, 1, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &Q), PARLOPS_OK, NULL);
    EXPECT(parlops_op_destroy(&Q), PARLOPS_OK, NULL);
    /* the FFT along a 2^40 axis (rank 0 holds the row, the others nothing): its work arrays fail
     * before any plan's tables (rustfft allocates those infallibly) */
    int fax[1] = {1};
    EXPECT(parlops_op_fft(ndbig, 1, fax, PARLOPS_FFT_NORM_NONE, false, NULL, NULL, PARLOPS_C128, &Q), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    /* the MDC of 2^40 + 1 time samples: the same */
    EXPECT(parlops_op_mdc(c, PARLOPS_C128, 1, 1, 1, big + 1, 1, 0.004, 1.0, true, false, false, gm, &Q), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    EXPECT(parlops_op_mdc(c, PARLOPS_C128, 1, b32, b32, 3, 1, 0.004, 1.0, true, false, false, gm, &Q), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
    parlops_layout_destroy(&ndbig);
    /* along axis 0 of 3 x 2^40 its halo is a whole slab: more than can be allocated where 2 ranks
     * hold the slabs, on every rank together */
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shp_big2, 0, -1, &ndbig), PARLOPS_OK, NULL);
    EXPECT(parlops_op_first_derivative(ndbig, 0, 1.0, PARLOPS_CENTERED, false, PARLOPS_F64, &Q),
           size_ > 1 ? PARLOPS_ERR_OUT_OF_MEMORY : PARLOPS_OK, size_ > 1 ? "allocate" : NULL);
    if (Q) EXPECT(parlops_op_destroy(&Q), PARLOPS_OK, NULL);
    EXPECT(parlops_op_laplacian(ndbig, (const double[]){1.0, 0.0}, (const double[]){1.0, 1.0}, PARLOPS_F64, &Q),
           size_ > 1 ? PARLOPS_ERR_OUT_OF_MEMORY : PARLOPS_OK, size_ > 1 ? "allocate" : NULL);
    if (Q) EXPECT(parlops_op_destroy(&Q), PARLOPS_OK, NULL);
    expect("no operator from huge sizes", Q == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* tiles and blocks of the largest extent: no overflow in ceil(n / p) */
    int64_t tmax = INT64_MAX, hgrid2[1] = {2};
    EXPECT(parlops_summa_tile(tmax, 2, 1, &ts, &tl), PARLOPS_OK, NULL);
    expect("SUMMA tile of INT64_MAX", ts == ((int64_t)1 << 62) && tl == tmax - ts ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_halo_block(1, &tmax, hgrid2, 2, 1, bst, bsh), PARLOPS_OK, NULL);
    expect("halo block of INT64_MAX", bst[0] == ((int64_t)1 << 62) && bsh[0] == tmax - bst[0] ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* halo: dims whose product overflows; widths far beyond what can be allocated */
    int64_t d32[2] = {b32, b32}, wbig[2] = {big, 0};
    EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, d32, NULL, 1, hw, &H), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
    EXPECT(parlops_op_halo(c, PARLOPS_F64, 2, hdims, hgrid, 2, wbig, &H), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
    expect("no halo from huge sizes", H == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* a huge extent next to an empty one: a valid empty operator whose applies must not loop over
       the huge extent (found by the fuzzer: these hung) */
    double dte = -1.0;
    EXPECT(parlops_op_create_dense_summa(c, PARLOPS_F64, 0, big, 0, at, &Q), square ? PARLOPS_OK : PARLOPS_ERR_NOT_SUPPORTED, NULL);
    if (Q) {
      EXPECT(parlops_op_dottest(Q, 1, &dte), PARLOPS_OK, NULL);
      EXPECT(parlops_op_destroy(&Q), PARLOPS_OK, NULL);
    }
    EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, big, 0, 0, 1, gl, &Q), PARLOPS_OK, NULL);
    EXPECT(parlops_op_dottest(Q, 1, &dte), PARLOPS_OK, NULL);
    EXPECT(parlops_op_destroy(&Q), PARLOPS_OK, NULL);
    EXPECT(parlops_op_fredholm1(c, PARLOPS_F64, 0, b32, 1, b32, gl, &Q), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
    /* an N-D layout with a zero extent: axis-0 extents must still add up */
    int64_t zshp[2] = {6, 0};
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, zshp, 0, 1, &nd0), PARLOPS_ERR_SIZE_MISMATCH, "sum to");
    EXPECT(parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, zshp, 0, -1, &nd0), PARLOPS_OK, NULL);
    /* a failed create_shell does not call destroy_ctx: the caller keeps its context */
    int before = destroyed;
    EXPECT(parlops_op_create_shell(l, l, 11, PARLOPS_MEMORY_HOST, &len, fwd, NULL, destroy_ctx, &Q), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
    if (one)
      EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &len, rank_ == last ? NULL : fwd, NULL, destroy_ctx, &Q),
             PARLOPS_ERR_NULL_ARGUMENT, "forward");
    expect("destroy_ctx not called on failure", destroyed == before ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_op_destroy(&Z);
    parlops_layout_destroy(&l0); parlops_layout_destroy(&lbig); parlops_layout_destroy(&lbigself);
    parlops_layout_destroy(&l32); parlops_layout_destroy(&l32b); parlops_layout_destroy(&nd0); parlops_layout_destroy(&ndbig);
  }

  /* the shell's context is freed once, when the last operator holding it goes */
  parlops_op *SH = NULL;
  EXPECT(parlops_op_scale(S, PARLOPS_REAL(3), &SH), PARLOPS_OK, NULL);
  EXPECT(parlops_op_destroy(&S), PARLOPS_OK, NULL);
  expect("context kept while referenced", destroyed == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_op_destroy(&SH), PARLOPS_OK, NULL);
  expect("context freed once", destroyed == 1 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  parlops_op_destroy(&A); parlops_op_destroy(&B); parlops_op_destroy(&F); parlops_op_destroy(&T);
  parlops_op_destroy(&P); parlops_op_destroy(&Pc); parlops_op_destroy(&loc);
  parlops_vec_destroy(&x); parlops_vec_destroy(&y); parlops_vec_destroy(&y2); parlops_vec_destroy(&xf);
  parlops_vec_destroy(&x2); parlops_vec_destroy(&xb);
  parlops_layout_destroy(&l); parlops_layout_destroy(&l2); parlops_layout_destroy(&lb); parlops_layout_destroy(&ls);
  parlops_comm_destroy(&c); parlops_comm_destroy(&self);

  alarm(0);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("bad_input_ops (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  MPI_Finalize();
  return sum[1] == 0 ? 0 : 1;
}
