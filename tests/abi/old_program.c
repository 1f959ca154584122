/* A program of the 0.1.0 series as it was written before the ABI was versioned: compiled against the
 * header of that tree (tests/abi/v0.1.0/parlops.h, commit f8a4d03, whose library had the soname
 * libparlops.so.0 and no symbol versions) and linked the way that library linked it, then run
 * unchanged against the library of this tree (tests/abi/old_program.sh). It uses the structs passed
 * by pointer (parlops_solve_info, parlops_amg_options, parlops_scalar) and a callback, and checks
 * every answer against its own reference: a 2D Poisson matrix in CSR over uneven rows, CG with
 * BoomerAMG and with a shell-operator preconditioner (Jacobi as a callback), the true residual, a dot
 * product and norms. Prints one line; the verdict is agreed over the ranks and is the exit status. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <parlops.h>

static int fails = 0, rank = 0;
#define CHECK(call)                                                                                \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "rank %d: %s: %s\n", rank, #call, parlops_last_error());                    \
      fails++;                                                                                     \
    }                                                                                              \
  } while (0)
#define EXPECT(cond, what)                                                                         \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "rank %d: FAILED %s\n", rank, what);                                         \
      fails++;                                                                                     \
    }                                                                                              \
  } while (0)

static int64_t nloc;
static int jacobi(void *ctx, const void *x, void *y) { /* diag(A) = 4 */
  (void)ctx;
  for (int64_t i = 0; i < nloc; i++) ((double *)y)[i] = ((const double *)x)[i] / 4.0;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t m = 40, n = m * m;
  /* uneven rows: rank r holds a share proportional to r + 1 */
  int64_t start = 0, tot = (int64_t)size * (size + 1) / 2;
  for (int r = 0; r < rank; r++) start += n * (r + 1) / tot;
  nloc = rank == size - 1 ? n - start : n * (rank + 1) / tot;

  parlops_comm *comm = NULL;
  parlops_layout *lay = NULL;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, nloc, &lay));
  int64_t *ptr = malloc(sizeof(int64_t) * (size_t)(nloc + 1)), *col = malloc(sizeof(int64_t) * (size_t)(5 * nloc));
  double *val = malloc(sizeof(double) * (size_t)(5 * nloc));
  int64_t k = 0;
  ptr[0] = 0;
  for (int64_t r = 0; r < nloc; r++) {
    int64_t g = start + r, i = g / m, j = g % m;
    int64_t nb[5] = {g - m, g - 1, g, g + 1, g + m};
    int ok[5] = {i > 0, j > 0, 1, j < m - 1, i < m - 1};
    for (int q = 0; q < 5; q++)
      if (ok[q]) { col[k] = nb[q]; val[k] = q == 2 ? 4.0 : -1.0; k++; }
    ptr[r + 1] = k;
  }
  parlops_op *A = NULL, *amg = NULL, *pc = NULL;
  CHECK(parlops_op_create_csr(lay, lay, PARLOPS_F64, PARLOPS_INDEX_I64, ptr, col, val, &A));
  parlops_amg_options o;
  CHECK(parlops_amg_options_init(&o));
  o.strong_threshold = 0.25;
  o.coarsen_type = 10;
  CHECK(parlops_op_create_boomeramg(A, &o, &amg));
  CHECK(parlops_op_create_shell(lay, lay, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, jacobi, jacobi, NULL, &pc));

  parlops_vec *b = NULL, *x = NULL, *r = NULL;
  CHECK(parlops_vec_create(lay, PARLOPS_F64, PARLOPS_MEMORY_HOST, &b));
  CHECK(parlops_vec_duplicate(b, &x));
  CHECK(parlops_vec_duplicate(b, &r));
  CHECK(parlops_vec_fill(b, PARLOPS_REAL(1.0)));
  parlops_scalar dot;
  CHECK(parlops_vec_dot(b, b, &dot));
  EXPECT(dot.re == (double)n && dot.im == 0.0, "dot(b, b) = n");

  parlops_op *pcs[2] = {amg, pc};
  int64_t its[2] = {0, 0};
  for (int t = 0; t < 2; t++) {
    parlops_solver *s = NULL;
    CHECK(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s));
    CHECK(parlops_solver_set_operator(s, A));
    CHECK(parlops_solver_set_preconditioner(s, pcs[t]));
    CHECK(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 2000));
    CHECK(parlops_solver_solve(s, b, x));
    parlops_solve_info info;
    CHECK(parlops_solver_info(s, &info));
    its[t] = info.iterations;
    /* the true residual */
    CHECK(parlops_op_apply(A, x, r));
    CHECK(parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0)));
    double rn = 0, bn = 0;
    CHECK(parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn));
    CHECK(parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn));
    EXPECT(info.reason == PARLOPS_CONVERGED_RTOL, "converged");
    EXPECT(rn <= 1.01e-10 * bn, "true residual within rtol");
    EXPECT(info.rhs_norm == bn && info.final_residual_norm <= 1e-10 * bn, "solve info fields in place");
    CHECK(parlops_solver_destroy(&s));
  }
  EXPECT(its[0] > 0 && its[0] < 30 && its[1] > its[0], "AMG-CG beats Jacobi-CG");
  CHECK(parlops_vec_destroy(&b));
  CHECK(parlops_vec_destroy(&x));
  CHECK(parlops_vec_destroy(&r));
  CHECK(parlops_op_destroy(&pc));
  CHECK(parlops_op_destroy(&amg));
  CHECK(parlops_op_destroy(&A));
  CHECK(parlops_layout_destroy(&lay));
  CHECK(parlops_comm_destroy(&comm));
  free(ptr);
  free(col);
  free(val);
  int all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("old program (0.1.0 header) on %d rank(s): CG %lld its with BoomerAMG, %lld with a Jacobi callback; %s\n",
           size, (long long)its[0], (long long)its[1], all ? "FAILED" : "all checks passed");
  MPI_Finalize();
  return all ? 1 : 0;
}
