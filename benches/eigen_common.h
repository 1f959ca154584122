/* What the eigensolver benches (eigen_versus.c, eigen_beam.c) share: the same local CSR rows as a
 * parlops matrix and a PETSc one with a random start vector copied into both, and one SLEPc
 * Krylov-Schur solve timed on every rank. Include after <parlops.h>, "bench_util.h" and
 * <slepceps.h>. */
#ifndef PARLOPS_EIGEN_COMMON_H
#define PARLOPS_EIGEN_COMMON_H

/* This rank's rows (len rows from global row lo, N in all; rp from 0, global columns ci, values va)
 * as parlops' matrix P (with its comm and layout) and PETSc's A, and the same Gaussian start vector
 * in both (v0, pv0). */
typedef struct {
  parlops_comm *comm;
  parlops_layout *lay;
  parlops_op *P;
  parlops_vec *v0;
  Mat A;
  Vec pv0;
} eig_pair;

static inline eig_pair eig_pair_create(int64_t N, int64_t lo, int64_t len, const int64_t *rp, const int64_t *ci,
                                       const double *va) {
  eig_pair e;
  PetscCallAbort(MPI_COMM_WORLD, MatCreate(MPI_COMM_WORLD, &e.A));
  PetscCallAbort(MPI_COMM_WORLD, MatSetSizes(e.A, (PetscInt)len, (PetscInt)len, (PetscInt)N, (PetscInt)N));
  PetscCallAbort(MPI_COMM_WORLD, MatSetType(e.A, MATAIJ));
  /* preallocated row by row (diag and offd block entries), as an assembly code would */
  PetscInt *dn = malloc((size_t)(len + 1) * sizeof *dn), *on = malloc((size_t)(len + 1) * sizeof *on);
  int64_t widest = 1;
  for (int64_t r = 0; r < len; r++) {
    dn[r] = on[r] = 0;
    for (int64_t q = rp[r]; q < rp[r + 1]; q++) (ci[q] >= lo && ci[q] < lo + len ? dn : on)[r]++;
    widest = rp[r + 1] - rp[r] > widest ? rp[r + 1] - rp[r] : widest;
  }
  PetscCallAbort(MPI_COMM_WORLD, MatSeqAIJSetPreallocation(e.A, 0, dn));
  PetscCallAbort(MPI_COMM_WORLD, MatMPIAIJSetPreallocation(e.A, 0, dn, 0, on));
  free(dn);
  free(on);
  PetscInt *cols = malloc((size_t)widest * sizeof *cols);
  for (int64_t r = 0; r < len; r++) {
    PetscInt row = (PetscInt)(lo + r), m = (PetscInt)(rp[r + 1] - rp[r]);
    for (PetscInt q = 0; q < m; q++) cols[q] = (PetscInt)ci[rp[r] + q];
    PetscCallAbort(MPI_COMM_WORLD, MatSetValues(e.A, 1, &row, m, cols, va + rp[r], INSERT_VALUES));
  }
  free(cols);
  PetscCallAbort(MPI_COMM_WORLD, MatAssemblyBegin(e.A, MAT_FINAL_ASSEMBLY));
  PetscCallAbort(MPI_COMM_WORLD, MatAssemblyEnd(e.A, MAT_FINAL_ASSEMBLY));
  CHECKP(parlops_comm_create(MPI_COMM_WORLD, &e.comm));
  CHECKP(parlops_layout_create(e.comm, PARLOPS_PARTITION_SCATTER, PARLOPS_DECIDE, len, &e.lay));
  CHECKP(parlops_op_create_csr(e.lay, e.lay, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, va, &e.P));
  CHECKP(parlops_op_create_vecs(e.P, &e.v0, NULL));
  CHECKP(parlops_vec_set_random(e.v0, PARLOPS_RANDOM_GAUSSIAN, 7));
  double *v0h = malloc((size_t)(len + 1) * sizeof *v0h);
  CHECKP(parlops_vec_copy_to_host(e.v0, v0h));
  PetscCallAbort(MPI_COMM_WORLD, MatCreateVecs(e.A, &e.pv0, NULL));
  PetscScalar *pa;
  PetscCallAbort(MPI_COMM_WORLD, VecGetArray(e.pv0, &pa));
  for (int64_t r = 0; r < len; r++) pa[r] = v0h[r];
  PetscCallAbort(MPI_COMM_WORLD, VecRestoreArray(e.pv0, &pa));
  free(v0h);
  return e;
}

static inline void eig_pair_destroy(eig_pair *e) {
  VecDestroy(&e->pv0);
  MatDestroy(&e->A);
  parlops_vec_destroy(&e->v0);
  parlops_op_destroy(&e->P);
  parlops_layout_destroy(&e->lay);
  parlops_comm_destroy(&e->comm);
}

/* SLEPc's Krylov-Schur on e->A (Hermitian, standard) for nev pairs `which` with basis ncv, tolerance
 * tol, from e->pv0; `setup` (or NULL) adjusts the EPS before the solve (a spectral transformation).
 * Writes the restarts, the converged count and up to nev eigenvalues; returns the slowest rank's
 * seconds. */
static inline double eig_slepc(const eig_pair *e, int nev, int ncv, double tol, EPSWhich which,
                               void (*setup)(EPS, void *), void *ctx, PetscInt *its, PetscInt *nconv, double *vals) {
  EPS eps;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  PetscCallAbort(MPI_COMM_WORLD, EPSCreate(MPI_COMM_WORLD, &eps));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetOperators(eps, e->A, NULL));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetProblemType(eps, EPS_HEP));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetType(eps, EPSKRYLOVSCHUR));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetWhichEigenpairs(eps, which));
  if (setup) setup(eps, ctx);
  PetscCallAbort(MPI_COMM_WORLD, EPSSetDimensions(eps, nev, ncv, PETSC_DEFAULT));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetTolerances(eps, tol, 100000000));
  Vec v0 = e->pv0;
  PetscCallAbort(MPI_COMM_WORLD, EPSSetInitialSpace(eps, 1, &v0));
  PetscCallAbort(MPI_COMM_WORLD, EPSSolve(eps));
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  PetscCallAbort(MPI_COMM_WORLD, EPSGetConverged(eps, nconv));
  PetscCallAbort(MPI_COMM_WORLD, EPSGetIterationNumber(eps, its));
  for (int i = 0; i < nev && i < *nconv; i++) {
    PetscScalar kr;
    PetscCallAbort(MPI_COMM_WORLD, EPSGetEigenpair(eps, i, &kr, NULL, NULL, NULL));
    vals[i] = PetscRealPart(kr);
  }
  PetscCallAbort(MPI_COMM_WORLD, EPSDestroy(&eps));
  return t;
}

#endif
