/* parlops CG against PETSc KSPCG (PCNONE) on the same 2D Poisson matrix (5-point, n x n, b = 1,
 * x0 = 0, ||r|| <= 1e-8 ||b||), interleaved in one run, next to a STREAM triad measured in the same
 * run. Prints iterations, time per iteration (median of the timed solves), the ratio parlops / PETSc,
 * and the ratio to the memory floor of a CG iteration.
 * The floor: bytes a CG iteration must move per row = SpMV 5 x (8 value + 4 index) + 4 row pointer
 * + 8 x read + 8 y write = 80, plus the vector work CG cannot avoid: p.q 16, x += a p 24,
 * r -= a q 24, r.r 8, p = r + b p 24 = 96; 176 bytes per row, at the triad bandwidth.
 * Run: make bench-petsc   (or mpiexec -n P ./petsc_cg [n] [repeats]) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <parlops.h>
#include <petscksp.h>

#define CHECKP(call)                                                                               \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, parlops_last_error());                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof(double), cmp);
  return v[n / 2];
}

static double triad(void) {
  size_t m = (size_t)1 << 24;
  double *a = malloc(m * sizeof(double)), *b = malloc(m * sizeof(double)), *c = malloc(m * sizeof(double));
  for (size_t i = 0; i < m; ++i) { a[i] = 0; b[i] = 1; c[i] = 2; }
  double ts[10];
  for (int k = 0; k < 10; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (size_t i = 0; i < m; ++i) a[i] = b[i] + 3.0 * c[i];
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ts[k] = t;
  }
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double bw = 24.0 * (double)m * p / median(ts, 10) + 0 * a[m / 2];
  free(a); free(b); free(c);
  return bw;
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000, N = n * n;
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  int rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  double bw = triad();

  /* the same rows on both sides: parlops' default split is PETSc's PetscSplitOwnership */
  parlops_comm *comm;
  CHECKP(parlops_comm_create(PETSC_COMM_WORLD, &comm));
  parlops_layout *lay;
  CHECKP(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &lay));
  int64_t start, len;
  CHECKP(parlops_layout_local_range(lay, &start, &len));
  Mat A;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, (PetscInt)len, (PetscInt)len, (PetscInt)N, (PetscInt)N, 5, NULL, 2, NULL, &A));
  int64_t *rp = malloc((len + 1) * sizeof(int64_t)), *ci = malloc((5 * len + 1) * sizeof(int64_t));
  double *va = malloc((5 * len + 1) * sizeof(double));
  int64_t nnz = 0;
  rp[0] = 0;
  for (int64_t r = start; r < start + len; ++r) {
    int64_t i = r / n, j = r % n;
    PetscInt row = (PetscInt)r, cols[5];
    PetscScalar vals[5];
    int k = 0;
    if (i > 0) { cols[k] = (PetscInt)(r - n); vals[k++] = -1.0; }
    if (j > 0) { cols[k] = (PetscInt)(r - 1); vals[k++] = -1.0; }
    cols[k] = (PetscInt)r; vals[k++] = 4.0;
    if (j < n - 1) { cols[k] = (PetscInt)(r + 1); vals[k++] = -1.0; }
    if (i < n - 1) { cols[k] = (PetscInt)(r + n); vals[k++] = -1.0; }
    PetscCall(MatSetValues(A, 1, &row, k, cols, vals, INSERT_VALUES));
    for (int q = 0; q < k; ++q) { ci[nnz] = cols[q]; va[nnz++] = vals[q]; }
    rp[r - start + 1] = nnz;
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  parlops_op *PA;
  CHECKP(parlops_op_create_csr(lay, lay, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &PA));
  free(rp); free(ci); free(va);

  Vec x, b;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  KSP ksp;
  PC pc;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, 1e-50, PETSC_DEFAULT, 100000));
  PetscCall(KSPSetUp(ksp));

  parlops_vec *px, *pb;
  CHECKP(parlops_op_create_vecs(PA, &px, &pb));
  CHECKP(parlops_vec_fill(pb, PARLOPS_REAL(1.0)));
  parlops_solver *s;
  CHECKP(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s));
  CHECKP(parlops_solver_set_operator(s, PA));
  CHECKP(parlops_solver_set_tolerances(s, 1e-8, 1e-50, 1e5, 100000));

  double tp[16], tq[16];
  PetscInt pits = 0;
  parlops_solve_info info;
  if (reps > 16) reps = 16;
  for (int k = 0; k < reps; ++k) { /* interleaved */
    PetscCall(VecSet(x, 0.0));
    MPI_Barrier(PETSC_COMM_WORLD);
    double t = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    tp[k] = MPI_Wtime() - t;
    PetscCall(KSPGetIterationNumber(ksp, &pits));
    MPI_Barrier(PETSC_COMM_WORLD);
    t = MPI_Wtime();
    CHECKP(parlops_solver_solve(s, pb, px));
    tq[k] = MPI_Wtime() - t;
    CHECKP(parlops_solver_info(s, &info));
    MPI_Allreduce(MPI_IN_PLACE, &tp[k], 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &tq[k], 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  }
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  double itp = median(tp, reps) / (double)pits, itq = median(tq, reps) / (double)info.iterations;
  double floor = 176.0 * (double)N / bw;
  if (rank == 0) {
    printf("ranks %d, Poisson %lld x %lld (%lld unknowns), rtol 1e-8, %d interleaved solves each\n", size,
           (long long)n, (long long)n, (long long)N, reps);
    printf("  STREAM triad            %8.2f GB/s  -> CG floor %.3f ms per iteration (176 B/row)\n", bw / 1e9, 1e3 * floor);
    printf("  PETSc KSPCG (PCNONE)    %6d its (reason %d)  %.3f ms/it  %.2f x floor\n", (int)pits, (int)reason, 1e3 * itp, itp / floor);
    printf("  parlops CG              %6lld its (reason %d)  %.3f ms/it  %.2f x floor\n", (long long)info.iterations,
           (int)info.reason, 1e3 * itq, itq / floor);
    printf("  time per iteration parlops / PETSc = %.2f; iteration counts differ by %lld\n", itq / itp,
           (long long)(info.iterations - pits));
  }
  CHECKP(parlops_solver_destroy(&s));
  CHECKP(parlops_vec_destroy(&px)); CHECKP(parlops_vec_destroy(&pb));
  CHECKP(parlops_op_destroy(&PA)); CHECKP(parlops_layout_destroy(&lay)); CHECKP(parlops_comm_destroy(&comm));
  PetscCall(KSPDestroy(&ksp)); PetscCall(VecDestroy(&x)); PetscCall(VecDestroy(&b)); PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
