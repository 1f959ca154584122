/* The reproducible sum order on an MFEM-assembled elasticity matrix (issue 35, section 4): example
 * 2's beam (tests/eigen/beam_matrices.cpp writes it: int64 n, int64 nnz, int64 row pointer[n + 1],
 * int32 columns[nnz], double values[nnz]), its rows split unevenly over the ranks, b with entries of
 * many magnitudes, CG (with Jacobi when asked) to rtol 1e-8. Rank 0 prints the iteration count, the
 * reason and a hash of x's bits; tests/python.sh runs it at 1 to 8 ranks with two splits and
 * requires the same line everywhere in PARLOPS_SUM_REPRODUCIBLE (and shows the default order's
 * counts beside). Every converged solve's true residual is recomputed here.
 * Usage: repro_beam K.bin SPLIT(0|1) ORDER(blocked|reproducible) PC(none|jacobi) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <parlops.h>

#define OK(call)                                                                                  \
  do {                                                                                            \
    parlops_status st_ = (call);                                                                  \
    if (st_ != PARLOPS_OK) {                                                                      \
      fprintf(stderr, "repro_beam: %s failed: %s\n", #call, parlops_last_error());                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                               \
    }                                                                                             \
  } while (0)

static double hash01(uint64_t a) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return (double)(h >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s K.bin SPLIT ORDER PC\n", argv[0]);
    return 2;
  }
  OK(parlops_init(&argc, &argv));
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t n, nnz;
  if (fread(&n, 8, 1, f) != 1 || fread(&nnz, 8, 1, f) != 1) MPI_Abort(MPI_COMM_WORLD, 1);
  int64_t *ptr = malloc(8 * (n + 1));
  int32_t *col = malloc(4 * nnz);
  double *val = malloc(8 * nnz);
  if (fread(ptr, 8, n + 1, f) != (size_t)(n + 1) || fread(col, 4, nnz, f) != (size_t)nnz ||
      fread(val, 8, nnz, f) != (size_t)nnz)
    MPI_Abort(MPI_COMM_WORLD, 1);
  fclose(f);
  /* split 0: rank r's share grows with r; split 1: it shrinks, and rank 1 holds nothing from 3 ranks */
  int split = atoi(argv[2]);
  int64_t *lens = calloc(size, 8), w = 0, given = 0;
  for (int r = 0; r < size; r++) w += split == 0 ? r + 1 : (size >= 3 && r == 1 ? 0 : size - r);
  for (int r = 0; r < size; r++) {
    int64_t wr = split == 0 ? r + 1 : (size >= 3 && r == 1 ? 0 : size - r);
    lens[r] = n * wr / w;
    given += lens[r];
  }
  lens[split == 0 ? size - 1 : 0] += n - given;
  int64_t first = 0;
  for (int r = 0; r < rank; r++) first += lens[r];
  int64_t m = lens[rank];
  int64_t *lp = malloc(8 * (m + 1)), *lc = malloc(8 * (ptr[first + m] - ptr[first] + 1));
  for (int64_t i = 0; i <= m; i++) lp[i] = ptr[first + i] - ptr[first];
  for (int64_t k = 0; k < lp[m]; k++) lc[k] = col[ptr[first] + k];
  parlops_comm *c;
  OK(parlops_comm_create(MPI_COMM_WORLD, &c));
  parlops_layout *l;
  OK(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, n, m, &l));
  parlops_op *A;
  OK(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, lp, lc, val + ptr[first], &A));
  parlops_vec *b, *x, *r;
  OK(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &b));
  OK(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x));
  OK(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &r));
  double *bl;
  int64_t len;
  OK(parlops_vec_local_array(b, (void **)&bl, &len));
  for (int64_t i = 0; i < len; i++) {
    uint64_t g = (uint64_t)(first + i);
    bl[i] = (hash01(g) - 0.4) * pow(10.0, (int)(hash01(g + 99991) * 8.0) - 4);
  }
  parlops_solver *s;
  OK(parlops_solver_create(c, PARLOPS_METHOD_CG, &s));
  OK(parlops_solver_set_operator(s, A));
  if (!strcmp(argv[4], "jacobi")) OK(parlops_solver_set_jacobi(s));
  int repro = !strcmp(argv[3], "reproducible");
  OK(parlops_solver_set_sum_order(s, repro ? PARLOPS_SUM_REPRODUCIBLE : PARLOPS_SUM_BLOCKED));
  OK(parlops_solver_set_tolerances(s, 1e-8, 0.0, 1e5, 20000));
  OK(parlops_solver_solve(s, b, x));
  parlops_solve_info info;
  OK(parlops_solver_info(s, &info));
  /* the true residual */
  OK(parlops_op_apply(A, x, r));
  double *rl, *xl;
  OK(parlops_vec_local_array(r, (void **)&rl, &len));
  OK(parlops_vec_local_array(x, (void **)&xl, &len));
  double loc[2] = {0, 0}, tot[2];
  for (int64_t i = 0; i < len; i++) {
    loc[0] += (bl[i] - rl[i]) * (bl[i] - rl[i]);
    loc[1] += bl[i] * bl[i];
  }
  MPI_Allreduce(loc, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double *xg = rank == 0 ? malloc(8 * n) : NULL;
  OK(parlops_vec_gather(x, 0, xg));
  int bad = info.reason > 0 && !(sqrt(tot[0]) <= 1.01e-8 * sqrt(tot[1]));
  if (rank == 0) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)xg;
    for (int64_t k = 0; k < 8 * n; k++) h = (h ^ p[k]) * 1099511628211ull;
    printf("repro_beam %s %s: %lld iterations, reason %d, x hash %016llx", argv[3], argv[4],
           (long long)info.iterations, (int)info.reason, (unsigned long long)h);
    printf(" (%d rank(s), split %d, %lld rows; true residual %.3e of ||b||%s)\n", size, split, (long long)n,
           sqrt(tot[0] / tot[1]), bad ? ": OVER the rule" : "");
  }
  free(xg);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&r);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&c);
  free(ptr), free(col), free(val), free(lens), free(lp), free(lc);
  OK(parlops_finalize());
  return bad ? 1 : 0;
}
