/* parlops_eig_krylov_schur next to SLEPc's Krylov-Schur (EPSKRYLOVSCHUR, Debian's slepc-dev) on the
 * same rows: the anisotropic 2-D Laplacian (stencil 2 + 1.4, -1 in x, -0.7 in y: simple eigenvalues,
 * known in closed form) split alike, the same start vector, basis size (ncv) and tolerance. The n_ev
 * largest on an nx x nx grid and the n_ev smallest on a smaller one (without a spectral transformation
 * the smallest of a large grid take thousands of products in both). Rounds interleave the two; each
 * line gives the median time per solve (min-max), the ratio to SLEPc as the median of each round's own
 * ratio, the products (parlops) and restarts (SLEPc: its iteration count), and both answers' largest
 * relative error against the closed form, which must be below 1e-8 for the line to count (exit 1
 * otherwise).
 * With three more arguments, the n_ev eigenvalues nearest a shift between the 5th and 6th (inside the
 * spectrum) by shift-and-invert, the inner solve GMRES(30) on A - sigma I preconditioned by BoomerAMG of A
 * to 1e-10 in both (parlops: parlops_op_create_inverse of such a solver; SLEPc: STSINVERT with
 * STSetPreconditionerMat(A), KSPGMRES and PCHYPRE; EIG_INNER_RTOL in the environment changes 1e-10 for both).
 * Usage: eigen_versus rounds nx_largest nev_largest ncv_largest nx_smallest nev_smallest ncv_smallest tol json
 *        [nx_nearest nev_nearest ncv_nearest] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parlops.h>

#include "bench_util.h"
#include <slepceps.h>

#include "eigen_common.h"


static int rank_, size_;

/* the inner solves' relative tolerance, both libraries: EIG_INNER_RTOL, default 1e-10 */
static double inner_rtol(void) {
  const char *e = getenv("EIG_INNER_RTOL");
  return e && atof(e) > 0 ? atof(e) : 1e-10;
}


/* the closed form's eigenvalues, ascending */
static double *exact(int64_t nx) {
  double *e = malloc((size_t)(nx * nx) * sizeof *e), h = M_PI / (double)(nx + 1);
  for (int64_t i = 0; i < nx; i++)
    for (int64_t j = 0; j < nx; j++) e[i * nx + j] = 3.4 - 2.0 * cos((double)(i + 1) * h) - 1.4 * cos((double)(j + 1) * h);
  qsort(e, (size_t)(nx * nx), sizeof *e, bench_cmpd);
  return e;
}

/* SLEPc's shift-and-invert for NEAREST: STSINVERT at sigma, GMRES(30) on A - sigma I preconditioned by
 * BoomerAMG of A to the inner tolerance */
struct sinvert {
  Mat A;
  double sigma;
};
static void sinvert_setup(EPS eps, void *ctx) {
  const struct sinvert *c = ctx;
  ST st;
  KSP ksp;
  PC pc;
  PetscCallAbort(MPI_COMM_WORLD, EPSGetST(eps, &st));
  PetscCallAbort(MPI_COMM_WORLD, STSetType(st, STSINVERT));
  PetscCallAbort(MPI_COMM_WORLD, STSetPreconditionerMat(st, c->A));
  PetscCallAbort(MPI_COMM_WORLD, EPSSetTarget(eps, c->sigma));
  PetscCallAbort(MPI_COMM_WORLD, STGetKSP(st, &ksp));
  PetscCallAbort(MPI_COMM_WORLD, KSPSetType(ksp, KSPGMRES));
  PetscCallAbort(MPI_COMM_WORLD, KSPGMRESSetRestart(ksp, 30));
  PetscCallAbort(MPI_COMM_WORLD, KSPGetPC(ksp, &pc));
  PetscCallAbort(MPI_COMM_WORLD, PCSetType(pc, PCHYPRE));
  PetscCallAbort(MPI_COMM_WORLD, PCHYPRESetType(pc, "boomeramg"));
  PetscCallAbort(MPI_COMM_WORLD, KSPSetTolerances(ksp, inner_rtol(), PETSC_DEFAULT, PETSC_DEFAULT, 10000));
}

enum mode { LARGEST, SMALLEST, NEAREST };
static const char *const mode_names[] = {"largest", "smallest", "nearest"};

static void run(int rounds, int64_t nx, int nev, int ncv, double tol, int mode, FILE *json) {
  int64_t N = nx * nx;
  /* an even split, as PETSC_DECIDE makes it */
  int64_t lo = N / size_ * rank_ + (rank_ < N % size_ ? rank_ : N % size_);
  int64_t len = N / size_ + (rank_ < N % size_);
  int64_t *rp = malloc((size_t)(len + 1) * sizeof *rp), *ci = malloc((size_t)(5 * len + 1) * sizeof *ci);
  double *va = malloc((size_t)(5 * len + 1) * sizeof *va);
  rp[0] = 0;
  for (int64_t r = 0; r < len; r++) {
    int64_t g = lo + r, ix = g % nx, iy = g / nx, k = rp[r];
    if (iy > 0) ci[k] = g - nx, va[k++] = -0.7;
    if (ix > 0) ci[k] = g - 1, va[k++] = -1.0;
    ci[k] = g, va[k++] = 3.4;
    if (ix < nx - 1) ci[k] = g + 1, va[k++] = -1.0;
    if (iy < nx - 1) ci[k] = g + nx, va[k++] = -0.7;
    rp[r + 1] = k;
  }
  eig_pair e = eig_pair_create(N, lo, len, rp, ci, va);
  parlops_comm *comm = e.comm;
  parlops_layout *lay = e.lay;
  parlops_op *P = e.P;
  parlops_vec *v0 = e.v0;
  Mat A = e.A;
  double *ex = exact(nx), want[64], got_p[64], got_s[64], res[64];
  /* NEAREST: a shift between the 5th and 6th eigenvalues (inside the spectrum: A - sigma I is
   * indefinite), the inner solve GMRES(30) on A - sigma I preconditioned by BoomerAMG of A (AMG of the
   * indefinite matrix stalls GMRES) to 1e-10, in both */
  double sigma = 0.6 * ex[4] + 0.4 * ex[5];
  if (mode == NEAREST) {
    int used[64] = {0};
    for (int i = 0; i < nev; i++) {
      int best = -1;
      for (int c = 0; c < 40 && c < N; c++) {
        int taken = 0;
        for (int j = 0; j < i; j++) taken |= used[j] == c;
        if (!taken && (best < 0 || fabs(ex[c] - sigma) < fabs(ex[best] - sigma))) best = c;
      }
      used[i] = best;
      want[i] = ex[best];
    }
  } else {
    for (int i = 0; i < nev; i++) want[i] = mode == LARGEST ? ex[N - 1 - i] : ex[i];
  }
  parlops_op *inv = NULL, *Ash = NULL, *amg = NULL;
  parlops_solver *inner = NULL;
  if (mode == NEAREST) {
    double *vs = malloc((size_t)(5 * len + 1) * sizeof *vs);
    for (int64_t r = 0; r < len; r++)
      for (int64_t q = rp[r]; q < rp[r + 1]; q++) vs[q] = va[q] - (ci[q] == lo + r ? sigma : 0.0);
    CHECKP(parlops_op_create_csr(lay, lay, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, vs, &Ash));
    free(vs);
    CHECKP(parlops_op_create_boomeramg(P, NULL, &amg));
    CHECKP(parlops_solver_create(comm, PARLOPS_METHOD_GMRES, &inner));
    CHECKP(parlops_solver_set_operator(inner, Ash));
    CHECKP(parlops_solver_set_preconditioner(inner, amg));
    CHECKP(parlops_solver_set_restart(inner, 30));
    CHECKP(parlops_solver_set_tolerances(inner, inner_rtol(), 0.0, 1e5, 10000));
    CHECKP(parlops_op_create_inverse(inner, false, &inv));
  }
  double tp[256], ts[256], ratio[256];
  int64_t products = 0;
  PetscInt its = 0, nconv = 0;
  for (int r = 0; r < rounds; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECKP(parlops_eig_krylov_schur(P, NULL, inv, sigma, v0, nev, ncv, 1000000, tol,
                                    mode == LARGEST    ? PARLOPS_EIG_LARGEST
                                    : mode == SMALLEST ? PARLOPS_EIG_SMALLEST
                                                       : PARLOPS_EIG_NEAREST,
                                    NULL, NULL, got_p, res, NULL, &products));
    tp[r] = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &tp[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    struct sinvert si = {A, sigma};
    ts[r] = eig_slepc(&e, nev, ncv, tol,
                      mode == LARGEST    ? EPS_LARGEST_REAL
                      : mode == SMALLEST ? EPS_SMALLEST_REAL
                                         : EPS_TARGET_MAGNITUDE,
                      mode == NEAREST ? sinvert_setup : NULL, &si, &its, &nconv, got_s);
    ratio[r] = tp[r] / ts[r];
  }
  double ep = 0, es = nconv >= nev ? 0 : INFINITY, resmax = 0;
  for (int i = 0; i < nev; i++) {
    ep = fmax(ep, fabs(got_p[i] - want[i]) / fabs(want[i]));
    if (nconv >= nev) es = fmax(es, fabs(got_s[i] - want[i]) / fabs(want[i]));
    resmax = fmax(resmax, res[i]);
  }
  double mp = median(tp, rounds), ms = median(ts, rounds), vr = median(ratio, rounds);
  double lo_p = tp[0], hi_p = tp[0], lo_s = ts[0], hi_s = ts[0];
  for (int r = 1; r < rounds; r++) {
    lo_p = fmin(lo_p, tp[r]), hi_p = fmax(hi_p, tp[r]);
    lo_s = fmin(lo_s, ts[r]), hi_s = fmax(hi_s, ts[r]);
  }
  char prob[200];
  if (mode == NEAREST)
    snprintf(prob, sizeof prob,
             "eigen: %d nearest %.4f (shift-and-invert, GMRES(30) + BoomerAMG of A to 1e-10) of a %lldx%lld anisotropic "
             "Laplacian, ncv %d, tol %.0e (ms per solve)",
             nev, sigma, (long long)nx, (long long)nx, ncv, tol);
  else
    snprintf(prob, sizeof prob, "eigen: %d %s of a %lldx%lld anisotropic Laplacian, ncv %d, tol %.0e (ms per solve)", nev,
             mode_names[mode], (long long)nx, (long long)nx, ncv, tol);
  if (rank_ == 0) {
    printf("\n%s, %d rank(s), %d interleaved rounds\n", prob, size_, rounds);
    printf("  %-28s %12s %22s %9s %14s %12s\n", "solver", "ms/solve", "(min-max)", "vs SLEPc", "products/its",
           "max rel err");
    printf("  %-28s %12.1f   (%8.1f-%8.1f) %9.2f %14lld %12.1e\n", "SLEPc Krylov-Schur", 1e3 * ms, 1e3 * lo_s, 1e3 * hi_s,
           1.0, (long long)its, es);
    printf("  %-28s %12.1f   (%8.1f-%8.1f) %9.2f %14lld %12.1e  (true relative residuals <= %.1e)\n",
           "parlops Krylov-Schur", 1e3 * mp, 1e3 * lo_p, 1e3 * hi_p, vr, (long long)products, ep, resmax);
    const char *names[2] = {"SLEPc Krylov-Schur", "parlops Krylov-Schur"};
    double meds[2] = {ms, mp}, los[2] = {lo_s, lo_p}, his[2] = {hi_s, hi_p}, vs[2] = {1.0, vr};
    long long counts[2] = {(long long)its, (long long)products};
    for (int i = 0; i < 2; i++)
      fprintf(json,
              "{\"problem\":\"%s\",\"rows\":%lld,\"ranks\":%d,\"solver\":\"%s\",\"iterations\":%lld,\"ms_per_it\":%.6f,"
              "\"ms_min\":%.6f,\"ms_max\":%.6f,\"vs_first\":%.4f,\"floor_bytes_per_row\":0,\"x_floor\":0,"
              "\"rounds\":%d,\"timed_iterations\":1,\"counted\":1}\n",
              prob, (long long)N, size_, names[i], counts[i], 1e3 * meds[i], 1e3 * los[i], 1e3 * his[i], vs[i], rounds);
    fflush(json);
  }
  if (!(ep <= 1e-8 && es <= 1e-8)) {
    if (rank_ == 0) fprintf(stderr, "eigen_versus: an answer is off the closed form (parlops %.1e, SLEPc %.1e)\n", ep, es);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(ex);
  parlops_op_destroy(&inv);
  parlops_solver_destroy(&inner);
  parlops_op_destroy(&amg);
  parlops_op_destroy(&Ash);
  free(rp);
  free(ci);
  free(va);
  eig_pair_destroy(&e);
}

int main(int argc, char **argv) {
  if (argc < 10) {
    fprintf(stderr,
            "usage: %s rounds nx_largest nev_largest ncv_largest nx_smallest nev_smallest ncv_smallest tol json "
            "[nx_nearest nev_nearest ncv_nearest]\n",
            argv[0]);
    return 2;
  }
  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int rounds = atoi(argv[1]);
  if (rounds < 1 || rounds > 256) rounds = 5;
  double tol = atof(argv[8]);
  FILE *json = rank_ == 0 ? fopen(argv[9], "a") : NULL;
  if (rank_ == 0 && !json) {
    fprintf(stderr, "cannot open %s\n", argv[9]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  run(rounds, atoll(argv[2]), atoi(argv[3]), atoi(argv[4]), tol, LARGEST, json);
  run(rounds, atoll(argv[5]), atoi(argv[6]), atoi(argv[7]), tol, SMALLEST, json);
  if (argc > 12) run(rounds, atoll(argv[10]), atoi(argv[11]), atoi(argv[12]), tol, NEAREST, json);
  if (json) fclose(json);
  PetscCall(SlepcFinalize());
  return 0;
}
