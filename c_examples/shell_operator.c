/* Your own operator as a parlops operator (PETSc's MATSHELL): callbacks get this rank's parts of x
 * and y. Here the operator is y_i = w_i x_i + (x_{i-1} + x_{i+1}) / 2 inside this rank's part (a local
 * tridiagonal block per rank); the context holds the weights. The program checks it against the
 * same matrix built as a parlops CSR operator, runs the dot test, and composes it: (S + S^H) / 2.
 * Run: mpiexec -n 2 ./shell_operator [global_length] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <parlops.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, parlops_status_string(s_),          \
              parlops_last_error());                                                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

typedef struct {
  int64_t len;
  double *w;
} shell_ctx;

/* y = S x on this rank's part. Return 0 on success. */
static int forward(void *ctx, const void *x_local, void *y_local) {
  const shell_ctx *c = ctx;
  const double *x = x_local;
  double *y = y_local;
  for (int64_t i = 0; i < c->len; ++i) {
    double s = c->w[i] * x[i];
    if (i > 0) s += 0.5 * x[i - 1];
    if (i + 1 < c->len) s += 0.5 * x[i + 1];
    y[i] = s;
  }
  return 0;
}

/* x = S^H y: the local block is symmetric, so the same stencil. */
static int adjoint(void *ctx, const void *y_local, void *x_local) { return forward(ctx, y_local, x_local); }

static void destroy_ctx(void *ctx) {
  shell_ctx *c = ctx;
  free(c->w);
  free(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
  parlops_comm *comm;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  int rank;
  CHECK(parlops_comm_rank(comm, &rank));
  parlops_layout *l;
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, PARLOPS_DECIDE, &l));
  int64_t start, len;
  CHECK(parlops_layout_local_range(l, &start, &len));

  shell_ctx *ctx = malloc(sizeof *ctx);
  ctx->len = len;
  ctx->w = malloc((len > 0 ? len : 1) * sizeof(double));
  for (int64_t i = 0; i < len; ++i) ctx->w[i] = 2.0 + sin((double)(start + i));
  parlops_op *S;
  CHECK(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, ctx, forward, adjoint, destroy_ctx, &S));

  /* The same matrix as CSR, from local rows with global column indices. */
  int64_t *rp = malloc((len + 1) * sizeof(int64_t)), *ci = malloc((3 * len + 1) * sizeof(int64_t));
  double *v = malloc((3 * len + 1) * sizeof(double));
  int64_t nnz = 0;
  rp[0] = 0;
  for (int64_t i = 0; i < len; ++i) {
    if (i > 0) { ci[nnz] = start + i - 1; v[nnz++] = 0.5; }
    ci[nnz] = start + i; v[nnz++] = ctx->w[i];
    if (i + 1 < len) { ci[nnz] = start + i + 1; v[nnz++] = 0.5; }
    rp[i + 1] = nnz;
  }
  parlops_op *C;
  CHECK(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &C));
  free(rp); free(ci); free(v);

  parlops_vec *x, *y1, *y2;
  CHECK(parlops_op_create_vecs(S, &x, &y1));
  CHECK(parlops_vec_duplicate(y1, &y2));
  double *xl;
  CHECK(parlops_vec_local_array(x, (void **)&xl, NULL));
  for (int64_t i = 0; i < len; ++i) xl[i] = cos(0.01 * (double)(start + i));
  CHECK(parlops_op_apply(S, x, y1));
  CHECK(parlops_op_apply(C, x, y2));
  CHECK(parlops_vec_axpy(y2, PARLOPS_REAL(-1.0), y1));
  double diff, ny, err, errsym;
  CHECK(parlops_vec_norm(y2, PARLOPS_NORM_INF, 0, &diff));
  CHECK(parlops_vec_norm(y1, PARLOPS_NORM_2, 0, &ny));
  CHECK(parlops_op_dottest(S, 1, &err));

  /* Compositions hold references: no data is copied. */
  parlops_op *SH, *sum, *sym;
  CHECK(parlops_op_adjoint(S, &SH));
  CHECK(parlops_op_sum(S, SH, &sum));
  CHECK(parlops_op_scale(sum, PARLOPS_REAL(0.5), &sym));
  CHECK(parlops_op_dottest(sym, 2, &errsym));
  if (rank == 0) {
    printf("norm2(S x) = %.10e\n", ny);
    printf("max |S x - C x| = %.1e (shell vs CSR)\n", diff);
    printf("dot test: shell %.1e, (S + S^H)/2 %.1e\n", err, errsym);
  }
  CHECK(parlops_op_destroy(&S)); /* sum and sym still hold S: destroy_ctx runs with the last one */
  CHECK(parlops_op_destroy(&SH));
  CHECK(parlops_op_destroy(&sum));
  CHECK(parlops_op_destroy(&sym));
  CHECK(parlops_op_destroy(&C));
  CHECK(parlops_vec_destroy(&x)); CHECK(parlops_vec_destroy(&y1)); CHECK(parlops_vec_destroy(&y2));
  CHECK(parlops_layout_destroy(&l));
  CHECK(parlops_comm_destroy(&comm));
  MPI_Finalize();
  return (diff < 1e-14 && err < 1e-13 && errsym < 1e-13) ? 0 : 1;
}
