/* Set-up costs and memory next to the peers (issue 35, section 3), on the 2D 5-point Poisson matrix
 * (n x n rows, split as evenly as the ranks allow, each rank holding its rows as CSR arrays with
 * 32-bit columns, as PETSc's PetscInt is here).
 *
 * `setup time ROUNDS n [json]`: interleaved rounds (the ways alternate which goes first); per round
 * and way, the slowest rank's wall time of
 *   matrix  from the caller's rows to a matrix that has made one product (its halo plan made):
 *           parlops_op_create_csr + parlops_op_apply, PETSc's MatCreateMPIAIJWithArrays + MatMult,
 *           hypre's IJ interface (sizes given, every row in one HYPRE_IJMatrixSetValues) +
 *           HYPRE_ParCSRMatrixMatvec;
 *   amg     BoomerAMG's set-up with hypre's defaults: parlops_op_create_boomeramg on the parlops
 *           matrix (which copies it to hypre and sets up), hypre's HYPRE_BoomerAMGSetup on its own
 *           IJ matrix of the same round;
 *   both    matrix + amg, parlops against hypre (from the rows to a preconditioner ready).
 * Reported: each way's median and each ratio as the median of the rounds' own ratios.
 *
 * parlops asks for 2 MiB pages for its long arrays unless PARLOPS_HUGE_PAGES=0: where the kernel
 * compacts memory for them at the first touch (defrag=madvise), a creation can wait for that.
 *
 * `setup memory parlops|petsc n [K]`: one process per library (run them one after the other): the rows,
 * the matrix, the caller's arrays freed, then K (100) CG iterations (rtol 0, no preconditioner); prints
 * the largest peak resident set size of the ranks (getrusage's ru_maxrss), which counts the caller's
 * arrays alongside the library's copy while the matrix is made, alike for both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <mpi.h>
#include <parlops.h>
#include <petscksp.h>

#include "bench_util.h"

static int rank_, size_;

typedef struct {
  int64_t n, N, start, len;
  int32_t *rp, *ci;
  double *va;
} Rows;

/* this rank's rows of the n x n 5-point Laplacian (4 on the diagonal, -1 off it) */
static Rows make_rows(int64_t n) {
  Rows R = {n, n * n, 0, 0, NULL, NULL, NULL};
  R.len = R.N / size_ + (rank_ < R.N % size_);
  MPI_Exscan(&R.len, &R.start, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) R.start = 0;
  R.rp = malloc((size_t)(R.len + 1) * sizeof *R.rp);
  R.ci = malloc((size_t)(5 * R.len) * sizeof *R.ci);
  R.va = malloc((size_t)(5 * R.len) * sizeof *R.va);
  if (!R.rp || !R.ci || !R.va) MPI_Abort(MPI_COMM_WORLD, 2);
  int32_t k = 0;
  R.rp[0] = 0;
  for (int64_t r = R.start; r < R.start + R.len; ++r) {
    int64_t i = r / n, j = r % n;
    int64_t cols[5] = {r - n, r - 1, r, r + 1, r + n};
    int ok[5] = {i > 0, j > 0, 1, j < n - 1, i < n - 1};
    for (int q = 0; q < 5; ++q)
      if (ok[q]) {
        R.ci[k] = (int32_t)cols[q];
        R.va[k++] = q == 2 ? 4.0 : -1.0;
      }
    R.rp[r - R.start + 1] = k;
  }
  return R;
}

static double tmax(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

/* ---- the parlops way */
typedef struct {
  parlops_layout *l;
  parlops_op *A, *amg;
  parlops_vec *x, *y;
} Pl;
static double pl_matrix(Pl *p, parlops_comm *comm, const Rows *R) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  CHECKP(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, R->N, R->len, &p->l));
  CHECKP(parlops_op_create_csr(p->l, p->l, PARLOPS_F64, PARLOPS_INDEX_I32, R->rp, R->ci, R->va, &p->A));
  CHECKP(parlops_op_create_vecs(p->A, &p->x, &p->y));
  CHECKP(parlops_vec_fill(p->x, PARLOPS_REAL(1.0)));
  CHECKP(parlops_op_apply(p->A, p->x, p->y));
  return tmax(MPI_Wtime() - t);
}
static double pl_amg(Pl *p) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  CHECKP(parlops_op_create_boomeramg(p->A, NULL, &p->amg));
  return tmax(MPI_Wtime() - t);
}
static void pl_free(Pl *p) {
  CHECKP(parlops_op_destroy(&p->amg));
  CHECKP(parlops_op_destroy(&p->A));
  CHECKP(parlops_vec_destroy(&p->x));
  CHECKP(parlops_vec_destroy(&p->y));
  CHECKP(parlops_layout_destroy(&p->l));
}

/* ---- PETSc's matrix */
static double petsc_matrix(const Rows *R, Mat *A) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  PetscCallAbort(MPI_COMM_WORLD, MatCreateMPIAIJWithArrays(MPI_COMM_WORLD, (PetscInt)R->len, (PetscInt)R->len, (PetscInt)R->N,
                                      (PetscInt)R->N, (const PetscInt *)R->rp, (const PetscInt *)R->ci, R->va, A));
  Vec x, y;
  PetscCallAbort(MPI_COMM_WORLD, MatCreateVecs(*A, &x, &y));
  PetscCallAbort(MPI_COMM_WORLD, VecSet(x, 1.0));
  PetscCallAbort(MPI_COMM_WORLD, MatMult(*A, x, y));
  t = tmax(MPI_Wtime() - t);
  PetscCallAbort(MPI_COMM_WORLD, VecDestroy(&x));
  PetscCallAbort(MPI_COMM_WORLD, VecDestroy(&y));
  return t;
}

/* ---- hypre's IJ matrix and BoomerAMG */
typedef struct {
  HYPRE_IJMatrix ij;
  HYPRE_IJVector ib, ix;
  HYPRE_ParCSRMatrix A;
  HYPRE_ParVector b, x;
  HYPRE_Solver amg;
} Hy;
static double hy_matrix(Hy *h, const Rows *R) {
  HYPRE_BigInt lo = (HYPRE_BigInt)R->start, hi = (HYPRE_BigInt)(R->start + R->len - 1);
  HYPRE_Int *nc = malloc((size_t)(R->len + 1) * sizeof *nc), *dn = malloc((size_t)(R->len + 1) * sizeof *dn),
            *on = malloc((size_t)(R->len + 1) * sizeof *on);
  HYPRE_BigInt *rows = malloc((size_t)(R->len + 1) * sizeof *rows),
               *cols = malloc((size_t)(R->rp[R->len] + 1) * sizeof *cols);
  if (!nc || !dn || !on || !rows || !cols) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int64_t r = 0; r < R->len; ++r) {
    nc[r] = R->rp[r + 1] - R->rp[r];
    rows[r] = lo + r;
    dn[r] = on[r] = 0;
    for (int32_t q = R->rp[r]; q < R->rp[r + 1]; ++q) {
      cols[q] = R->ci[q];
      if (R->ci[q] >= lo && R->ci[q] <= hi) ++dn[r];
      else ++on[r];
    }
  }
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi, lo, hi, &h->ij);
  HYPRE_IJMatrixSetObjectType(h->ij, HYPRE_PARCSR);
  HYPRE_IJMatrixSetDiagOffdSizes(h->ij, dn, on);
  HYPRE_IJMatrixInitialize(h->ij);
  HYPRE_IJMatrixSetValues(h->ij, (HYPRE_Int)R->len, nc, rows, cols, R->va);
  HYPRE_IJMatrixAssemble(h->ij);
  HYPRE_IJMatrixGetObject(h->ij, (void **)&h->A);
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, &h->ib);
  HYPRE_IJVectorSetObjectType(h->ib, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(h->ib);
  HYPRE_IJVectorAssemble(h->ib);
  HYPRE_IJVectorGetObject(h->ib, (void **)&h->b);
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, &h->ix);
  HYPRE_IJVectorSetObjectType(h->ix, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(h->ix);
  HYPRE_IJVectorAssemble(h->ix);
  HYPRE_IJVectorGetObject(h->ix, (void **)&h->x);
  HYPRE_ParVectorSetConstantValues(h->x, 1.0);
  HYPRE_ParCSRMatrixMatvec(1.0, h->A, h->x, 0.0, h->b);
  t = tmax(MPI_Wtime() - t);
  free(nc), free(dn), free(on), free(rows), free(cols);
  return t;
}
static double hy_amg(Hy *h) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  HYPRE_BoomerAMGCreate(&h->amg);
  HYPRE_BoomerAMGSetPrintLevel(h->amg, 0);
  HYPRE_BoomerAMGSetTol(h->amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(h->amg, 1);
  HYPRE_BoomerAMGSetup(h->amg, h->A, h->b, h->x);
  return tmax(MPI_Wtime() - t);
}
static void hy_free(Hy *h) {
  HYPRE_BoomerAMGDestroy(h->amg);
  HYPRE_IJMatrixDestroy(h->ij);
  HYPRE_IJVectorDestroy(h->ib);
  HYPRE_IJVectorDestroy(h->ix);
}

static double peak_mb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  double mb = (double)u.ru_maxrss / 1024.0, all = 0;
  MPI_Allreduce(&mb, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

static int memory(const char *lib, int64_t n, int K) {
  Rows R = make_rows(n);
  double t = 0;
  if (strcmp(lib, "parlops") == 0) {
    parlops_comm *comm;
    CHECKP(parlops_comm_create(MPI_COMM_WORLD, &comm));
    Pl p = {0};
    pl_matrix(&p, comm, &R);
    free(R.rp), free(R.ci), free(R.va);
    parlops_solver *s;
    CHECKP(parlops_solver_create(comm, PARLOPS_METHOD_CG, &s));
    CHECKP(parlops_solver_set_operator(s, p.A));
    CHECKP(parlops_solver_set_tolerances(s, 0.0, 0.0, 1e10, K));
    CHECKP(parlops_vec_fill(p.x, PARLOPS_REAL(0.0)));
    t = MPI_Wtime();
    CHECKP(parlops_solver_solve(s, p.y, p.x));
    t = tmax(MPI_Wtime() - t);
    parlops_solve_info info;
    CHECKP(parlops_solver_info(s, &info));
    if (rank_ == 0)
      printf("memory: parlops CG, %lld rows, %d ranks: %lld iterations in %.3f s; peak resident %.1f MB (largest rank)\n",
             (long long)R.N, size_, (long long)info.iterations, t, peak_mb());
    else
      peak_mb();
    CHECKP(parlops_solver_destroy(&s));
    CHECKP(parlops_op_destroy(&p.A));
    CHECKP(parlops_vec_destroy(&p.x));
    CHECKP(parlops_vec_destroy(&p.y));
    CHECKP(parlops_layout_destroy(&p.l));
    CHECKP(parlops_comm_destroy(&comm));
  } else {
    Mat A;
    PetscCall(MatCreateMPIAIJWithArrays(MPI_COMM_WORLD, (PetscInt)R.len, (PetscInt)R.len, (PetscInt)R.N, (PetscInt)R.N,
                                        (const PetscInt *)R.rp, (const PetscInt *)R.ci, R.va, &A));
    free(R.rp), free(R.ci), free(R.va);
    Vec x, b;
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    KSP ksp;
    PC pc;
    PetscCall(KSPCreate(MPI_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, 1e10, K));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    t = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    t = tmax(MPI_Wtime() - t);
    PetscInt its;
    PetscCall(KSPGetIterationNumber(ksp, &its));
    double mb = peak_mb();
    if (rank_ == 0)
      printf("memory: PETSc KSPCG, %lld rows, %d ranks: %lld iterations in %.3f s; peak resident %.1f MB (largest rank)\n",
             (long long)R.N, size_, (long long)its, t, mb);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
  }
  return 0;
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (sizeof(PetscInt) != sizeof(int32_t)) {
    if (rank_ == 0) fprintf(stderr, "setup: this PETSc has %zu-byte PetscInt; the bench hands it 32-bit rows\n", sizeof(PetscInt));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (argc >= 4 && strcmp(argv[1], "memory") == 0) {
    int rc = memory(argv[2], atoll(argv[3]), argc > 4 ? atoi(argv[4]) : 100);
    PetscCall(PetscFinalize());
    return rc;
  }
  if (argc < 4 || strcmp(argv[1], "time") != 0) {
    if (rank_ == 0) fprintf(stderr, "usage: setup time ROUNDS n [json] | setup memory parlops|petsc n [iterations]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[2]);
  if (rounds < 1 || rounds > 64) rounds = 5;
  int64_t n = atoll(argv[3]);
  const char *json = argc > 4 ? argv[4] : NULL;
  HYPRE_Init();
  parlops_comm *comm;
  CHECKP(parlops_comm_create(MPI_COMM_WORLD, &comm));
  Rows R = make_rows(n);
  /* t[way][round]: 0 PETSc matrix, 1 hypre matrix, 2 parlops matrix, 3 hypre AMG, 4 parlops AMG */
  double t[5][64], rm[64], rmh[64], ra[64], rb[64];
  for (int r = 0; r < rounds; ++r) {
    Pl p = {0};
    Hy h = {0};
    Mat A;
    if (r % 2 == 0) {
      t[0][r] = petsc_matrix(&R, &A);
      t[1][r] = hy_matrix(&h, &R);
      t[2][r] = pl_matrix(&p, comm, &R);
      t[3][r] = hy_amg(&h);
      t[4][r] = pl_amg(&p);
    } else {
      t[2][r] = pl_matrix(&p, comm, &R);
      t[1][r] = hy_matrix(&h, &R);
      t[0][r] = petsc_matrix(&R, &A);
      t[4][r] = pl_amg(&p);
      t[3][r] = hy_amg(&h);
    }
    PetscCall(MatDestroy(&A));
    hy_free(&h);
    pl_free(&p);
    rm[r] = t[2][r] / t[0][r];
    rmh[r] = t[2][r] / t[1][r];
    ra[r] = t[4][r] / t[3][r];
    rb[r] = (t[2][r] + t[4][r]) / (t[1][r] + t[3][r]);
  }
  if (rank_ == 0) {
    const char *hp = getenv("PARLOPS_HUGE_PAGES");
    printf("set-up, 2D Poisson %lld rows at %d ranks, %d interleaved rounds (medians; ratios: the rounds' own); "
           "parlops %s 2 MiB pages\n",
           (long long)R.N, size_, rounds, hp && strcmp(hp, "0") == 0 ? "without" : "asking for");
    printf("  matrix from rows + one product: PETSc %.1f ms, hypre IJ %.1f ms, parlops %.1f ms: %.2fx PETSc, %.2fx hypre\n",
           1e3 * median(t[0], rounds), 1e3 * median(t[1], rounds), 1e3 * median(t[2], rounds), median(rm, rounds),
           median(rmh, rounds));
    printf("  BoomerAMG set-up (hypre's defaults): hypre %.1f ms, parlops (copy + set-up) %.1f ms: %.2fx\n",
           1e3 * median(t[3], rounds), 1e3 * median(t[4], rounds), median(ra, rounds));
    printf("  rows to AMG ready: hypre %.1f ms, parlops %.1f ms: %.2fx\n", 1e3 * (median(t[1], rounds) + median(t[3], rounds)),
           1e3 * (median(t[2], rounds) + median(t[4], rounds)), median(rb, rounds));
    if (json) {
      const char *mn[2] = {"PETSc MatCreateMPIAIJWithArrays", "parlops_op_create_csr"};
      const double *mt[2] = {t[0], t[2]};
      const long long one[2] = {1, 1};
      bench_json_pair(json, "setup-matrix", (long long)R.N, size_, mn, mt, rounds, one, median(rm, rounds), "");
      const char *an[2] = {"hypre BoomerAMGSetup", "parlops_op_create_boomeramg"};
      const double *at[2] = {t[3], t[4]};
      bench_json_pair(json, "setup-amg", (long long)R.N, size_, an, at, rounds, one, median(ra, rounds), "");
    }
  }
  free(R.rp), free(R.ci), free(R.va);
  CHECKP(parlops_comm_destroy(&comm));
  HYPRE_Finalize();
  PetscCall(PetscFinalize());
  return 0;
}
