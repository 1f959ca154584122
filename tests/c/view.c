/* parlops_solver_view (issue 33, section 2) at 1-4 ranks: the text names what the next solve runs
 * (method, tolerances, the operator's kind, sizes and split, the preconditioner tree with its
 * set-ups, hypre's options as set, a nested solver's settings), is the same on every rank, follows
 * the settings as they change, and keeps the buffer protocol (needed length, truncation with a NUL,
 * NULL buffer with length 0); bad arguments are refused naming them.
 * Prints "view (N ranks): P passed, F failed" on rank 0. */
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

static char text[16384];

static void has(const char *what, const char *needle) {
  int ok = strstr(text, needle) != NULL;
  expect(what, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (!ok && rank_ == 0) fprintf(stderr, "  the view has no \"%s\":\n%s\n", needle, text);
}

static void view(const parlops_solver *s) {
  size_t need = 0;
  EXPECT(parlops_solver_view(s, text, sizeof text, &need), PARLOPS_OK, NULL);
  if (getenv("VIEW_PRINT") && rank_ == 0) printf("%s\n", text);
  expect("the view fits and says its length", need > 1 && need <= sizeof text && strlen(text) + 1 == need ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
         PARLOPS_OK, NULL);
  /* the same text on every rank: its length and a checksum */
  long sum[2] = {(long)need, 0}, lo[2], hi[2];
  for (size_t i = 0; text[i]; i++) sum[1] = (sum[1] * 31 + (unsigned char)text[i]) % 1000000007L;
  MPI_Allreduce(sum, lo, 2, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(sum, hi, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  expect("the same view on every rank", lo[0] == hi[0] && lo[1] == hi[1] ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK,
         NULL);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  parlops_comm *comm = NULL;
  parlops_layout *l = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &comm), PARLOPS_OK, NULL);
  /* uneven: rank r holds 10 + 3 r rows of the tridiagonal matrix tridiag(-1, 2.5, -1) */
  int64_t len = 10 + 3 * rank_, lo = 0, n = 0;
  MPI_Exscan(&len, &lo, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) lo = 0;
  MPI_Allreduce(&len, &n, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, len, &l), PARLOPS_OK, NULL);
  static int64_t ptr[64], col[192];
  static double val[192];
  int64_t k = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) col[k] = g - 1, val[k++] = -1.0;
    col[k] = g, val[k++] = 2.5;
    if (g < n - 1) col[k] = g + 1, val[k++] = -1.0;
    ptr[i + 1] = k;
  }
  parlops_op *A = NULL, *bj = NULL, *amg = NULL, *inv = NULL;
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, ptr, col, val, &A), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_block_jacobi(A, PARLOPS_LOCAL_ILU0, 1.0, &bj), PARLOPS_OK, NULL);
  parlops_solver *s = NULL, *inner = NULL;
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_GMRES, &s), PARLOPS_OK, NULL);

  /* nothing set yet */
  view(s);
  has("the method", "GMRES (PARLOPS_METHOD_GMRES)");
  has("no operator", "operator: not set");
  has("no preconditioner", "preconditioner: none");

  /* settings, the operator and block Jacobi */
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, bj), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-7, 1e-30, 1e4, 77), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_restart(s, 12), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_pc_reuse(s, 10, 1.5), PARLOPS_OK, NULL);
  view(s);
  has("tolerances", "rtol 1e-7, atol 1e-30, dtol 1e4, max_iter 77");
  has("restart", "restart 12, orthogonalization PARLOPS_ORTHOG_CLASSICAL");
  has("reuse policy", "every 10 solve(s) or when the iterations grow by 1.5x");
  char want[256];
  snprintf(want, sizeof want, "CSR %ldx%ld [PARLOPS_F64; %ld x %ld; rows split 10", (long)n, (long)n, (long)n, (long)n);
  has("the operator, its type, sizes and split", want);
  has("block Jacobi, its set-ups", "block Jacobi ILU(0)");
  has("set-ups counted", "set-ups run 1");

  /* a nested solve as the preconditioner, and BoomerAMG inside it (when hypre is there) */
  parlops_amg_options ao;
  parlops_amg_options_init(&ao);
  ao.strong_threshold = 0.375;
  parlops_status st = parlops_op_create_boomeramg(A, &ao, &amg);
  EXPECT(parlops_solver_create(comm, PARLOPS_METHOD_CG, &inner), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(inner, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(inner, 1e-3, 0.0, 1e5, 9), PARLOPS_OK, NULL);
  if (st == PARLOPS_OK) EXPECT(parlops_solver_set_preconditioner(inner, amg), PARLOPS_OK, NULL);
  EXPECT(parlops_op_create_inverse(inner, true, &inv), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, inv), PARLOPS_OK, NULL);
  view(s);
  has("the nested solver's settings", "solves with CG: rtol 1e-3, atol 0e0, max_iter 9");
  if (st == PARLOPS_OK) {
    has("BoomerAMG in the tree", "BoomerAMG (");
    has("hypre's options as set", "StrongThreshold = 3.75e-1");
  }
  /* Jacobi, least squares */
  EXPECT(parlops_solver_set_jacobi(s), PARLOPS_OK, NULL);
  view(s);
  has("Jacobi", "preconditioner: Jacobi");

  /* the buffer protocol and bad arguments */
  size_t need = 0, need2 = 0;
  EXPECT(parlops_solver_view(s, NULL, 0, &need), PARLOPS_OK, NULL);
  char small[8];
  memset(small, 'x', sizeof small);
  EXPECT(parlops_solver_view(s, small, sizeof small, &need2), PARLOPS_OK, NULL);
  expect("truncated with a NUL, the length the same", need == need2 && small[7] == '\0' && strlen(small) == 7 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL,
         PARLOPS_OK, NULL);
  EXPECT(parlops_solver_view(s, NULL, 5, &need), PARLOPS_ERR_NULL_ARGUMENT, "buf");
  EXPECT(parlops_solver_view(NULL, text, sizeof text, NULL), PARLOPS_ERR_NULL_ARGUMENT, "'s'");
  EXPECT(parlops_solver_view((const parlops_solver *)A, text, sizeof text, NULL), PARLOPS_ERR_INVALID_HANDLE, "parlops_solver");

  parlops_solver_destroy(&inner);
  parlops_solver_destroy(&s);
  parlops_op_destroy(&inv);
  if (amg) parlops_op_destroy(&amg);
  parlops_op_destroy(&bj);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&comm);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("view (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  MPI_Finalize();
  return sum[1] ? 1 : 0;
}
