/* parlops_eig_krylov_schur next to SLEPc's Krylov-Schur on an MFEM-assembled matrix read from a file
 * (issue 37: the elasticity beam of tests/eigen/beam_matrices.cpp, MFEM example 2 on beam-tri.mesh;
 * any symmetric matrix in its format: int64 n, int64 nnz, int64 row pointer [n + 1], int32 columns
 * [nnz], double values [nnz]). Rows split in whole pairs (the beam's two displacement components of a
 * node stay together), unevenly: the first rank one pair short of its share, the last one pair
 * long. The `nev` smallest and the `nev` largest eigenvalues without a spectral transformation, the
 * same start vector, basis size and tolerance in both; rounds interleave the libraries, each line
 * gives the median time per solve (min-max), the ratio to SLEPc as the median of each round's own
 * ratio, parlops' products and SLEPc's restarts, the largest relative difference between the two
 * answers and parlops' largest true relative residual. Exit 1 when the answers differ by more than
 * 1e-8 relative or a solve does not converge.
 * Usage: eigen_beam rounds matrix.bin nev_smallest nev_largest ncv tol json */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parlops.h>

#include "bench_util.h"
#include <slepceps.h>

#include "eigen_common.h"

static int rank_, size_;

typedef struct {
  int64_t n, nnz, *ptr;
  int32_t *col;
  double *val;
} csr;

static csr load(const char *path) {
  csr a = {0};
  FILE *f = fopen(path, "rb");
  int ok = f && fread(&a.n, 8, 1, f) == 1 && fread(&a.nnz, 8, 1, f) == 1 && a.n > 0 && a.nnz > 0;
  if (ok) {
    a.ptr = malloc((size_t)(a.n + 1) * 8);
    a.col = malloc((size_t)a.nnz * 4);
    a.val = malloc((size_t)a.nnz * 8);
    ok = a.ptr && a.col && a.val && fread(a.ptr, 8, (size_t)(a.n + 1), f) == (size_t)(a.n + 1) &&
         fread(a.col, 4, (size_t)a.nnz, f) == (size_t)a.nnz && fread(a.val, 8, (size_t)a.nnz, f) == (size_t)a.nnz;
  }
  if (f) fclose(f);
  if (!ok) {
    fprintf(stderr, "eigen_beam: cannot read a matrix from %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

enum mode { SMALLEST, LARGEST };

static void run(int rounds, const csr *K, const char *name, int nev, int ncv, double tol, int mode, const char *json) {
  /* this rank's rows: whole pairs, the first rank one pair short, the last one long */
  int64_t pairs = K->n / 2, lo = 0, len = 0;
  for (int r = 0; r <= rank_; r++) {
    int64_t p = pairs / size_ + (r < pairs % size_);
    if (size_ > 1 && r == 0) p -= 1;
    if (size_ > 1 && r == size_ - 1) p += 1;
    lo += len, len = 2 * p;
  }
  if (rank_ == size_ - 1) len = K->n - lo; /* an odd n: the last row */
  int64_t *rp = malloc((size_t)(len + 1) * 8), *ci = malloc((size_t)(K->ptr[lo + len] - K->ptr[lo] + 1) * 8);
  const double *va = K->val + K->ptr[lo];
  for (int64_t r = 0; r <= len; r++) rp[r] = K->ptr[lo + r] - K->ptr[lo];
  for (int64_t q = 0; q < rp[len]; q++) ci[q] = K->col[K->ptr[lo] + q];
  eig_pair e = eig_pair_create(K->n, lo, len, rp, ci, va);
  double tp[256], ts[256], ratio[256], got_p[64], got_s[64], res[64];
  int64_t products = 0;
  PetscInt its = 0, nconv = 0;
  for (int r = 0; r < rounds; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECKP(parlops_eig_krylov_schur(e.P, NULL, NULL, 0.0, e.v0, nev, ncv, 100000000, tol,
                                    mode == LARGEST ? PARLOPS_EIG_LARGEST : PARLOPS_EIG_SMALLEST, NULL, NULL, got_p,
                                    res, NULL, &products));
    tp[r] = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &tp[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ts[r] = eig_slepc(&e, nev, ncv, tol, mode == LARGEST ? EPS_LARGEST_REAL : EPS_SMALLEST_REAL, NULL, NULL, &its,
                      &nconv, got_s);
    ratio[r] = tp[r] / ts[r];
  }
  double diff = nconv >= nev ? 0 : INFINITY, resmax = 0;
  for (int i = 0; i < nev; i++) {
    if (nconv >= nev) diff = fmax(diff, fabs(got_p[i] - got_s[i]) / fabs(got_s[i]));
    resmax = fmax(resmax, res[i]);
  }
  double mp = median(tp, rounds), ms = median(ts, rounds), vr = median(ratio, rounds);
  char prob[200];
  snprintf(prob, sizeof prob, "eigen: %d %s of %s (%lld rows), ncv %d, tol %.0e (ms per solve)", nev,
           mode == LARGEST ? "largest" : "smallest", name, (long long)K->n, ncv, tol);
  if (rank_ == 0) {
    printf("\n%s, %d rank(s) (uneven), %d interleaved rounds\n", prob, size_, rounds);
    printf("  %-28s %12s %9s %14s\n", "solver", "ms/solve", "vs SLEPc", "products/its");
    printf("  %-28s %12.2f %9.2f %14lld\n", "SLEPc Krylov-Schur", 1e3 * ms, 1.0, (long long)its);
    printf("  %-28s %12.2f %9.2f %14lld  (largest relative difference to SLEPc %.1e, true relative residuals <= %.1e)\n",
           "parlops Krylov-Schur", 1e3 * mp, vr, (long long)products, diff, resmax);
    printf("  eigenvalues:");
    for (int i = 0; i < nev; i++) printf(" %.12e", got_p[i]);
    printf("\n");
    const char *names[2] = {"SLEPc Krylov-Schur", "parlops Krylov-Schur"};
    const double *t[2] = {ts, tp};
    long long counts[2] = {(long long)its, (long long)products};
    bench_json_pair(json, prob, (long long)K->n, size_, names, t, rounds, counts, vr, "");
  }
  if (!(diff <= 1e-8)) {
    if (rank_ == 0) fprintf(stderr, "eigen_beam: the answers differ by %.1e relative (SLEPc converged %d)\n", diff, (int)nconv);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(rp);
  free(ci);
  eig_pair_destroy(&e);
}

int main(int argc, char **argv) {
  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (argc < 8) {
    if (rank_ == 0) fprintf(stderr, "usage: %s rounds matrix.bin nev_smallest nev_largest ncv tol json\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rounds = atoi(argv[1]), ncv = atoi(argv[5]);
  if (rounds < 1 || rounds > 256) rounds = 3;
  csr K = load(argv[2]);
  const char *name = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
  double tol = atof(argv[6]);
  run(rounds, &K, name, atoi(argv[3]), ncv, tol, SMALLEST, argv[7]);
  run(rounds, &K, name, atoi(argv[4]), ncv, tol, LARGEST, argv[7]);
  free(K.ptr);
  free(K.col);
  free(K.val);
  PetscCall(SlepcFinalize());
  return 0;
}
