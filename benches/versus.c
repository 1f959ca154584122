/* parlops next to PETSc (KSPCG, KSPGMRES, KSPFGMRES, MatMult, VecDot) and hypre (ParCSR PCG) on the
 * same matrices, interleaved in one run, with a STREAM triad measured in the same run. `make bench`
 * runs it at 1 and 2 ranks and turns its JSON into a table and a chart (tools/bench_report.py).
 *
 * Problems (each rank assembles its rows once; every library gets the same rows):
 *   poisson2d   2D 5-point Laplacian, n x n (b = 1);
 *   poisson3d   3D 7-point Laplacian, n^3 (b = 1);
 *   convdiff    2D 5-point Laplacian plus first-order upwind convection (c = 0.5), n x n: nonsymmetric;
 *   mfem        a matrix assembled by MFEM (benches/mfem_matrix.cpp: example 1, order-2 hexahedra,
 *               about 62 entries per row), read from the file given;
 *   poisson2d-large  the 2D problem on a larger grid (n2l x n2l; 4M rows in `make bench`), where the
 *               vectors no longer fit in the last-level cache. Its solves to 1e-8 would take thousands
 *               of iterations per solver, so its iterations are not counted: only the timed rounds
 *               run (the 1M-row problem checks the counts of the same methods).
 * Method: for each (problem, solver), one solve to rtol 1e-8 (||r|| <= 1e-8 ||b||, zero initial
 * guess) gives the iteration count, which is printed next to PETSc's; then ROUNDS interleaved rounds
 * time every solver for the same fixed number of iterations (rtol 0, max_it K), so time per
 * iteration is measured on equal work. Reported: median (min-max) over the rounds of the slowest
 * rank's time per iteration. The ratios ("vs first", "x floor") are medians over the rounds of each
 * round's own ratio: a solver's time over the first solver's time in the same round, and over the
 * floor at the triad measured at the start of that round. Pairing within a round cancels the
 * machine's drift between rounds (on the 2-vCPU VM two runs of the same code differ by up to 15%
 * from round to round); the JSON keeps the ratios of the medians too ("..._of_medians"). The other
 * parlops CG solvers are also given against parlops CG (32-bit input), paired the same way ("vs CG").
 *
 * Byte floors (bytes a method must move per row and iteration, doubles, 32-bit column indices; a
 * floor times the rows over the triad bandwidth measured in the same rounds is the fastest the method can run):
 *   SpMV          nnz/row x (8 value + 4 index) + 4 row pointer + 8 x + 8 y
 *   CG (PETSc)    SpMV + p.q 16 + x += a p 24 + r -= a q 24 + r.r 8 + p = r + b p 24  = SpMV + 96
 *   CG (fused)    SpMV (with p.q) + r -= a q with r.r 24 + x += a p, p = r + b p 40   = SpMV + 64
 *   CG matrix-free  the same without the matrix: x 8 + y 8 + 64                        = 80
 *   pipelined CG  the product streamed into the update (n never stored): SpMV - 8 + r, s, z
 *                 read and r, s, z, w written 56, with two sums, and p and x read and
 *                 written on every second iteration 16                                = SpMV + 64
 *                 (single-reduction CG: SpMV + r, s, w read and r, s written 40, and p and
 *                 x read and written on every second iteration 16: 56)
 *   GMRES(m)      SpMV + projections (k + 2) 8 + update with norm (k + 3) 8 + scale 16, averaged
 *                 over k = 0..m-1: SpMV + 8 (m + 4) + 16
 *   dot           16 per entry
 * The floors count 32-bit CSR for every solver. parlops stores a copied double-precision matrix more
 * compactly where it can (16-bit column offsets: 10 bytes an entry instead of 12, plus a few bytes a
 * row), so for its CSR solvers "x floor" is against the 32-bit floor the method would need, and
 * "GB/s" (floor bytes over time) is more than the bytes it moved: about 0.87x of it on the MFEM
 * matrix, 0.96x on the 5-point matrix (benches/NOTES.md, items 25 and 28).
 * Run: mpiexec -n P ./versus [rounds] [K] [n2d] [n3d] [nconv] [json-file] [mfem-matrix-file] [n2l] [dram]
 * (a size of 0, or a matrix file that does not open, leaves that problem out; dram 0 the dot products
 * beyond the caches). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
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

static int rank_, size_;
static FILE *json;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the slowest rank's time */
static double tmax(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

/* The STREAM triad a[i] = b[i] + 3 c[i] over 2^24 doubles per rank (24 bytes per entry; arrays kept
 * for the whole run): once at the start (10 repetitions, the median), and once in every round of every
 * problem (3 repetitions, the median), so that each problem's floor uses the bandwidth of the same
 * minutes as its solvers (the machine's bandwidth drifts during a run). */
static double *ta, *tb, *tc;
static const size_t tm = (size_t)1 << 24;

static double triad_once(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (size_t i = 0; i < tm; ++i) ta[i] = tb[i] + 3.0 * tc[i];
  t = tmax(MPI_Wtime() - t);
  return 24.0 * (double)tm * size_ / t + 0 * ta[tm / 2];
}

static double triad_median(int reps) {
  double bw[16];
  for (int k = 0; k < reps; ++k) bw[k] = triad_once();
  qsort(bw, reps, sizeof(double), cmp);
  return bw[reps / 2];
}

static double triad(void) {
  ta = malloc(tm * sizeof(double)), tb = malloc(tm * sizeof(double)), tc = malloc(tm * sizeof(double));
  if (!ta || !tb || !tc) { fprintf(stderr, "versus: no room for the triad's arrays\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
  for (size_t i = 0; i < tm; ++i) { ta[i] = 0; tb[i] = 1; tc[i] = 2; }
  return triad_median(10);
}

/* ---------------------------------------------------------------- problems: one rank's rows */
typedef struct {
  const char *name;
  int64_t N, start, len, nnz;
  int64_t *rp, *ci; /* local rows, global columns */
  double *va;
  int64_t gnnz; /* non-zeros on all ranks */
} Rows;

static void push(Rows *R, int64_t *nz, int64_t c, double v) { R->ci[*nz] = c; R->va[(*nz)++] = v; }

/* rows [start, start + len) of the matrix file of benches/mfem_matrix.cpp */
static Rows read_rows(const char *path, int64_t start, int64_t len) {
  Rows R = {"mfem", 0, start, len, 0, NULL, NULL, NULL, 0};
  FILE *f = fopen(path, "rb");
  int64_t hdr[2];
  int ok = f && fread(hdr, 8, 2, f) == 2;
  R.N = ok ? hdr[0] : 0;
  int64_t nnz = ok ? hdr[1] : 0;
  R.rp = malloc((size_t)(len + 1) * sizeof(int64_t));
  ok = ok && R.rp && fseek(f, 16 + 8 * start, SEEK_SET) == 0 && fread(R.rp, 8, (size_t)len + 1, f) == (size_t)len + 1;
  int64_t first = ok ? R.rp[0] : 0;
  R.nnz = ok ? R.rp[len] - first : 0;
  int32_t *c32 = malloc((size_t)R.nnz * 4 + 4);
  R.ci = malloc((size_t)R.nnz * 8 + 8);
  R.va = malloc((size_t)R.nnz * 8 + 8);
  ok = ok && c32 && R.ci && R.va;
  ok = ok && fseek(f, 16 + 8 * (hdr[0] + 1) + 4 * first, SEEK_SET) == 0 && fread(c32, 4, (size_t)R.nnz, f) == (size_t)R.nnz;
  ok = ok && fseek(f, 16 + 8 * (hdr[0] + 1) + 4 * nnz + 8 * first, SEEK_SET) == 0 &&
       fread(R.va, 8, (size_t)R.nnz, f) == (size_t)R.nnz;
  if (!ok) {
    fprintf(stderr, "versus: cannot read rows %lld.. of %s\n", (long long)start, path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int64_t r = 0; r <= len; ++r) R.rp[r] -= first;
  for (int64_t q = 0; q < R.nnz; ++q) R.ci[q] = c32[q];
  free(c32);
  fclose(f);
  return R;
}

/* the number of rows of a matrix file (0 when there is none) */
static int64_t file_rows(const char *path) {
  int64_t hdr[2] = {0, 0};
  FILE *f = path ? fopen(path, "rb") : NULL;
  if (f && fread(hdr, 8, 2, f) != 2) hdr[0] = 0;
  if (f) fclose(f);
  return hdr[0];
}

static Rows make_rows(const char *name, int64_t n, int64_t start, int64_t len) {
  Rows R = {name, 0, start, len, 0, NULL, NULL, NULL, 0};
  int three = strcmp(name, "poisson3d") == 0, conv = strcmp(name, "convdiff") == 0;
  R.N = three ? n * n * n : n * n;
  int w = three ? 7 : 5;
  R.rp = malloc((size_t)(len + 1) * sizeof(int64_t));
  R.ci = malloc((size_t)(w * len + 1) * sizeof(int64_t));
  R.va = malloc((size_t)(w * len + 1) * sizeof(double));
  int64_t nz = 0;
  R.rp[0] = 0;
  const double c = 0.5; /* upwind convection in +x and +y */
  for (int64_t r = start; r < start + len; ++r) {
    if (three) {
      int64_t i = r / (n * n), j = (r / n) % n, k = r % n;
      if (i > 0) push(&R, &nz, r - n * n, -1.0);
      if (j > 0) push(&R, &nz, r - n, -1.0);
      if (k > 0) push(&R, &nz, r - 1, -1.0);
      push(&R, &nz, r, 6.0);
      if (k < n - 1) push(&R, &nz, r + 1, -1.0);
      if (j < n - 1) push(&R, &nz, r + n, -1.0);
      if (i < n - 1) push(&R, &nz, r + n * n, -1.0);
    } else {
      int64_t i = r / n, j = r % n;
      if (i > 0) push(&R, &nz, r - n, conv ? -1.0 - c : -1.0);
      if (j > 0) push(&R, &nz, r - 1, conv ? -1.0 - c : -1.0);
      push(&R, &nz, r, conv ? 4.0 + 2 * c : 4.0);
      if (j < n - 1) push(&R, &nz, r + 1, -1.0);
      if (i < n - 1) push(&R, &nz, r + n, -1.0);
    }
    R.rp[r - start + 1] = nz;
  }
  R.nnz = nz;
  return R;
}

/* ---------------------------------------------------------------- solvers behind one shape */
typedef struct Solver Solver;
struct Solver {
  const char *name;
  double floor; /* bytes per row an iteration must move (the byte floor) */
  /* run with (rtol, maxit); return iterations */
  int64_t (*run)(Solver *, double, int64_t);
  void *a, *b, *c, *d, *e;
  int kind;
  double t[64]; /* each round's seconds per iteration (the slowest rank's time over the iterations made) */
};

/* PETSc */
static int64_t run_ksp(Solver *s, double rtol, int64_t maxit) {
  KSP ksp = (KSP)s->a;
  Vec x = (Vec)s->b, b = (Vec)s->c;
  PetscInt its;
  VecSet(x, 0.0);
  KSPSetTolerances(ksp, rtol > 0 ? rtol : 1e-300, 1e-300, 1e300, (PetscInt)maxit);
  KSPSolve(ksp, b, x);
  KSPGetIterationNumber(ksp, &its);
  return its;
}

/* parlops */
static int64_t run_parlops(Solver *s, double rtol, int64_t maxit) {
  parlops_solver *sv = s->a;
  parlops_vec *x = s->b, *b = s->c;
  parlops_solve_info info;
  CHECKP(parlops_vec_fill(x, PARLOPS_REAL(0.0)));
  CHECKP(parlops_solver_set_tolerances(sv, rtol, 0.0, 1e300, maxit));
  parlops_status st = parlops_solver_solve(sv, b, x);
  if (st != PARLOPS_OK && st != PARLOPS_ERR_NOT_CONVERGED) CHECKP(st);
  CHECKP(parlops_solver_info(sv, &info));
  return info.iterations;
}

/* hypre PCG without preconditioner, two-norm rule */
static int64_t run_hypre(Solver *s, double rtol, int64_t maxit) {
  HYPRE_Solver pcg = s->a;
  HYPRE_ParCSRMatrix A = s->b;
  HYPRE_ParVector b = s->c, x = s->d;
  HYPRE_Int its;
  HYPRE_ParVectorSetConstantValues(x, 0.0);
  HYPRE_PCGSetTol(pcg, rtol);
  HYPRE_PCGSetMaxIter(pcg, (HYPRE_Int)maxit);
  HYPRE_ParCSRPCGSolve(pcg, A, b, x);
  HYPRE_PCGGetNumIterations(pcg, &its);
  return its;
}

/* kernels: SpMV and dot repeated `maxit` times (the "iterations") */
static int64_t run_matmult(Solver *s, double rtol, int64_t maxit) {
  (void)rtol;
  for (int64_t k = 0; k < maxit; ++k) MatMult((Mat)s->a, (Vec)s->b, (Vec)s->c);
  return maxit;
}
static int64_t run_apply(Solver *s, double rtol, int64_t maxit) {
  (void)rtol;
  for (int64_t k = 0; k < maxit; ++k) CHECKP(parlops_op_apply(s->a, s->b, s->c));
  return maxit;
}
static int64_t run_vecdot(Solver *s, double rtol, int64_t maxit) {
  (void)rtol;
  PetscScalar d, acc = 0;
  for (int64_t k = 0; k < maxit; ++k) { VecDot((Vec)s->b, (Vec)s->c, &d); acc += d; }
  return maxit + 0 * (int64_t)acc;
}
static int64_t run_pdot(Solver *s, double rtol, int64_t maxit) {
  (void)rtol;
  parlops_scalar d;
  for (int64_t k = 0; k < maxit; ++k) CHECKP(parlops_vec_dot(s->b, s->c, &d));
  return maxit;
}

/* the triad of each round of the last bench() (bytes per second) */
static double round_bw[64];

static double median(double *v, int n) {
  qsort(v, n, sizeof(double), cmp);
  return v[n / 2];
}

static void report(const char *problem, Rows *R, Solver *S, int ns, int rounds, int64_t K, int64_t *its,
                   int counted, double bw) {
  if (rank_ != 0) return;
  double ref = 0;
  int cg = -1; /* parlops CG (32-bit input): the other parlops CG solvers' "vs CG" */
  for (int i = 0; i < ns; ++i)
    if (strcmp(S[i].name, "parlops CG (32-bit input)") == 0) cg = i;
  printf("\n%s: %lld rows, %lld non-zeros, %d ranks; times per iteration over %d interleaved rounds of %lld iterations; "
         "triad %.2f GB/s (median of its rounds)\n",
         problem, (long long)R->N, (long long)R->gnnz, size_, rounds, (long long)K, bw / 1e9);
  printf("  %-28s %8s %10s %18s %9s %9s %9s %9s\n", "solver", "its", "ms/it", "(min-max)", "vs first", "x floor", "GB/s",
         "vs CG");
  for (int i = 0; i < ns; ++i) {
    double v[64];
    memcpy(v, S[i].t, sizeof(double) * rounds);
    qsort(v, rounds, sizeof(double), cmp);
    double med = v[rounds / 2], lo = v[0], hi = v[rounds - 1];
    if (i == 0) ref = med;
    double bytes = S[i].floor * (double)R->N;
    double floor = bytes / bw;
    /* the rounds' own ratios: against the first solver of the round, against the round's floor */
    double pv[64], pf[64];
    for (int r = 0; r < rounds; ++r) {
      pv[r] = S[i].t[r] / S[0].t[r];
      pf[r] = S[i].t[r] / (bytes / round_bw[r]);
    }
    double vs = median(pv, rounds), xf = median(pf, rounds);
    char itsc[24] = "-", vcg[24] = "-", vcgj[24] = "null";
    if (counted) snprintf(itsc, sizeof itsc, "%lld", (long long)its[i]);
    if (cg >= 0 && i != cg && strncmp(S[i].name, "parlops CG ", 11) == 0) {
      double pc[64];
      for (int r = 0; r < rounds; ++r) pc[r] = S[i].t[r] / S[cg].t[r];
      double vc = median(pc, rounds);
      snprintf(vcg, sizeof vcg, "%.2f", vc);
      snprintf(vcgj, sizeof vcgj, "%.4f", vc);
    }
    printf("  %-28s %8s %10.3f   (%6.3f-%6.3f) %9.2f %9.2f %9.1f %9s\n", S[i].name, itsc, 1e3 * med, 1e3 * lo,
           1e3 * hi, vs, xf, bytes / med / 1e9, vcg);
    fprintf(json,
            "{\"problem\":\"%s\",\"rows\":%lld,\"nnz\":%lld,\"ranks\":%d,\"solver\":\"%s\",\"iterations\":%lld,"
            "\"ms_per_it\":%.6f,\"ms_min\":%.6f,\"ms_max\":%.6f,\"vs_first\":%.4f,\"floor_bytes_per_row\":%.1f,"
            "\"x_floor\":%.4f,\"vs_first_of_medians\":%.4f,\"x_floor_of_medians\":%.4f,\"triad_gbs\":%.3f,"
            "\"rounds\":%d,\"timed_iterations\":%lld,\"counted\":%d,\"vs_parlops_cg\":%s}\n",
            problem, (long long)R->N, (long long)R->gnnz, size_, S[i].name, (long long)its[i], 1e3 * med, 1e3 * lo,
            1e3 * hi, vs, S[i].floor, xf, med / ref, med / floor, bw / 1e9, rounds, (long long)K, counted, vcgj);
  }
  fflush(json);
}

/* time every solver: convergence run for the counts (if check), then rounds x fixed K iterations, each
 * round with a triad; returns the median of the rounds' triads (bytes per second) */
static double bench(Solver *S, int ns, int rounds, int64_t K, int check, int64_t *its) {
  for (int i = 0; i < ns; ++i) its[i] = check ? S[i].run(&S[i], 1e-8, 100000) : K;
  double bw[64];
  for (int r = 0; r < rounds; ++r) {
    bw[r] = triad_median(3);
    for (int i0 = 0; i0 < ns; ++i0) {
      int i = (i0 + r) % ns; /* rotate the order each round */
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      int64_t k = S[i].run(&S[i], 0.0, K);
      /* per iteration made: a solver that stops early (a residual at rounding level with rtol 0, on
       * a small problem) is not credited with iterations it did not make */
      S[i].t[r] = tmax(MPI_Wtime() - t) / (double)(k > 0 ? k : 1);
      if (k != K && rank_ == 0)
        fprintf(stderr, "%s ran %lld iterations, not %lld (its time is per iteration made)\n", S[i].name, (long long)k,
                (long long)K);
    }
  }
  memcpy(round_bw, bw, sizeof(double) * rounds);
  return median(bw, rounds);
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  int64_t K = argc > 2 ? atoll(argv[2]) : 200;
  int64_t n2 = argc > 3 ? atoll(argv[3]) : 1000, n3 = argc > 4 ? atoll(argv[4]) : 100,
          nc = argc > 5 ? atoll(argv[5]) : 710;
  const char *jf = argc > 6 ? argv[6] : "bench.json";
  const char *mfem_file = argc > 7 ? argv[7] : NULL;
  int64_t n2l = argc > 8 ? atoll(argv[8]) : 0;
  int dram = argc > 9 ? atoi(argv[9]) : 1; /* 0: no dot products beyond the caches (make bench-small) */
  if (rounds < 1) rounds = 1;
  if (rounds > 64) rounds = 64;
  json = rank_ == 0 ? fopen(jf, "a") : fopen("/dev/null", "w");
  double bw = triad();
  if (rank_ == 0) printf("STREAM triad %.2f GB/s on %d ranks (24 bytes per entry)\n", bw / 1e9, size_);
  if (rank_ == 0)
    fprintf(json, "{\"problem\":\"triad\",\"ranks\":%d,\"triad_gbs\":%.3f}\n", size_, bw / 1e9);
  HYPRE_Init();

  parlops_comm *comm;
  CHECKP(parlops_comm_create(MPI_COMM_WORLD, &comm));
  const char *problems[5] = {"poisson2d", "poisson3d", "convdiff", "mfem", "poisson2d-large"};
  int64_t sizes[5] = {n2, n3, nc, file_rows(mfem_file), n2l};
  for (int pi = 0; pi < 5; ++pi) {
    if (sizes[pi] <= 0) continue;
    int64_t n = sizes[pi], N = pi == 1 ? n * n * n : pi == 3 ? n : n * n;
    int counted = pi != 4; /* the large problem: timed rounds only */
    parlops_layout *lay;
    CHECKP(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &lay));
    int64_t start, len;
    CHECKP(parlops_layout_local_range(lay, &start, &len));
    Rows R = pi == 3 ? read_rows(mfem_file, start, len) : make_rows(pi == 4 ? "poisson2d" : problems[pi], n, start, len);
    /* the longest row, and each row's entries in this rank's columns and in others' (PETSc's
     * preallocation) */
    int64_t maxrow = 1;
    PetscInt *dnz = malloc((size_t)(len + 1) * sizeof(PetscInt)), *onz = malloc((size_t)(len + 1) * sizeof(PetscInt));
    for (int64_t r = 0; r < len; ++r) {
      int64_t k = R.rp[r + 1] - R.rp[r];
      if (k > maxrow) maxrow = k;
      dnz[r] = onz[r] = 0;
      for (int64_t q = R.rp[r]; q < R.rp[r + 1]; ++q) {
        if (R.ci[q] >= start && R.ci[q] < start + len) ++dnz[r];
        else ++onz[r];
      }
    }
    int64_t gnnz = R.nnz;
    MPI_Allreduce(MPI_IN_PLACE, &gnnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    R.gnnz = gnnz;
    double spmv_bytes = (double)gnnz / (double)N * 12.0 + 4.0 + 16.0;

    /* PETSc */
    Mat A;
    PetscCall(MatCreateAIJ(MPI_COMM_WORLD, (PetscInt)len, (PetscInt)len, (PetscInt)N, (PetscInt)N, 0, dnz, 0, onz, &A));
    free(dnz);
    free(onz);
    PetscInt *cols = malloc((size_t)maxrow * sizeof(PetscInt));
    for (int64_t r = 0; r < len; ++r) {
      PetscInt row = (PetscInt)(start + r);
      int k = 0;
      for (int64_t q = R.rp[r]; q < R.rp[r + 1]; ++q) cols[k++] = (PetscInt)R.ci[q];
      PetscCall(MatSetValues(A, 1, &row, k, cols, R.va + R.rp[r], INSERT_VALUES));
    }
    free(cols);
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    Vec px, pb;
    PetscCall(MatCreateVecs(A, &px, &pb));
    PetscCall(VecSet(pb, 1.0));

    /* parlops, from 64-bit and from 32-bit indices */
    parlops_op *A64, *A32;
    CHECKP(parlops_op_create_csr(lay, lay, PARLOPS_F64, PARLOPS_INDEX_I64, R.rp, R.ci, R.va, &A64));
    int32_t *rp32 = malloc((size_t)(len + 1) * sizeof(int32_t)), *ci32 = malloc((size_t)(R.nnz + 1) * sizeof(int32_t));
    for (int64_t r = 0; r <= len; ++r) rp32[r] = (int32_t)R.rp[r];
    for (int64_t q = 0; q < R.nnz; ++q) ci32[q] = (int32_t)R.ci[q];
    CHECKP(parlops_op_create_csr(lay, lay, PARLOPS_F64, PARLOPS_INDEX_I32, rp32, ci32, R.va, &A32));
    parlops_vec *x, *b;
    CHECKP(parlops_op_create_vecs(A64, &x, &b));
    CHECKP(parlops_vec_fill(b, PARLOPS_REAL(1.0)));

    Solver S[12];
    int ns = 0;
    KSP ksps[2];
    parlops_solver *pss[6];
    int nk = 0, np = 0;
    HYPRE_IJMatrix ij = NULL;
    HYPRE_IJVector ib = NULL, ix = NULL;
    HYPRE_Solver pcg = NULL;
    int sym = pi != 2, stencil = pi < 2 || pi == 4;
    const char *kt[2] = {sym ? KSPCG : KSPGMRES, KSPFGMRES};
    int nkt = sym ? 1 : 2;
    for (int q = 0; q < nkt; ++q) {
      KSP ksp;
      PC pc;
      PetscCall(KSPCreate(MPI_COMM_WORLD, &ksp));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPSetType(ksp, kt[q]));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCNONE));
      if (sym) PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
      else PetscCall(KSPGMRESSetRestart(ksp, 30));
      PetscCall(KSPSetUp(ksp));
      ksps[nk++] = ksp;
      S[ns++] = (Solver){q == 0 ? (sym ? "PETSc KSPCG" : "PETSc KSPGMRES(30)") : "PETSc KSPFGMRES(30)",
                         spmv_bytes + (sym ? 96.0 : 8.0 * 34 + 16), run_ksp, ksp, px, pb, NULL, NULL, 0, {0}};
    }
    if (sym) {
      HYPRE_BigInt lo = (HYPRE_BigInt)start, hi = (HYPRE_BigInt)(start + len - 1);
      HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi, lo, hi, &ij);
      HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
      HYPRE_IJMatrixInitialize(ij);
      HYPRE_BigInt *hcols = malloc((size_t)maxrow * sizeof(HYPRE_BigInt));
      for (int64_t r = 0; r < len; ++r) {
        HYPRE_Int nc = (HYPRE_Int)(R.rp[r + 1] - R.rp[r]);
        HYPRE_BigInt row = (HYPRE_BigInt)(start + r);
        for (HYPRE_Int k = 0; k < nc; ++k) hcols[k] = (HYPRE_BigInt)R.ci[R.rp[r] + k];
        HYPRE_IJMatrixSetValues(ij, 1, &nc, &row, hcols, R.va + R.rp[r]);
      }
      free(hcols);
      HYPRE_IJMatrixAssemble(ij);
      HYPRE_ParCSRMatrix hA;
      HYPRE_IJMatrixGetObject(ij, (void **)&hA);
      HYPRE_ParVector hb, hx;
      HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, &ib);
      HYPRE_IJVectorSetObjectType(ib, HYPRE_PARCSR);
      HYPRE_IJVectorInitialize(ib);
      HYPRE_IJVectorAssemble(ib);
      HYPRE_IJVectorGetObject(ib, (void **)&hb);
      HYPRE_ParVectorSetConstantValues(hb, 1.0);
      HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, &ix);
      HYPRE_IJVectorSetObjectType(ix, HYPRE_PARCSR);
      HYPRE_IJVectorInitialize(ix);
      HYPRE_IJVectorAssemble(ix);
      HYPRE_IJVectorGetObject(ix, (void **)&hx);
      HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
      HYPRE_PCGSetTwoNorm(pcg, 1);
      HYPRE_ParCSRPCGSetup(pcg, hA, hb, hx);
      S[ns++] = (Solver){"hypre PCG", spmv_bytes + 96.0, run_hypre, pcg, hA, hb, hx, NULL, 0, {0}};
    }
    parlops_op *MF = NULL;
    if (stencil) {
      int64_t dims[3] = {n, n, n};
      CHECKP(parlops_op_poisson(lay, pi == 1 ? 3 : 2, dims, PARLOPS_F64, &MF));
    }
    struct { const char *name; int method; parlops_op *op; double floor; } pl[5];
    int npl = 0;
    if (sym) {
      pl[npl++] = (typeof(pl[0])){"parlops CG (64-bit input)", PARLOPS_METHOD_CG, A64, spmv_bytes + 64.0};
      pl[npl++] = (typeof(pl[0])){"parlops CG (32-bit input)", PARLOPS_METHOD_CG, A32, spmv_bytes + 64.0};
      pl[npl++] = (typeof(pl[0])){"parlops CG single-reduction", PARLOPS_METHOD_CG_SINGLE_REDUCTION, A32, spmv_bytes + 56.0};
      pl[npl++] = (typeof(pl[0])){"parlops CG pipelined", PARLOPS_METHOD_CG_PIPELINED, A32, spmv_bytes + 64.0};
      if (MF) pl[npl++] = (typeof(pl[0])){"parlops CG matrix-free", PARLOPS_METHOD_CG, MF, 16.0 + 64.0};
    } else {
      pl[npl++] = (typeof(pl[0])){"parlops GMRES(30)", PARLOPS_METHOD_GMRES, A32, spmv_bytes + 8.0 * 34 + 16};
      pl[npl++] = (typeof(pl[0])){"parlops FGMRES(30)", PARLOPS_METHOD_FGMRES, A32, spmv_bytes + 8.0 * 34 + 16};
    }
    for (int q = 0; q < npl; ++q) {
      parlops_solver *sv;
      CHECKP(parlops_solver_create(comm, pl[q].method, &sv));
      CHECKP(parlops_solver_set_operator(sv, pl[q].op));
      if (!sym) CHECKP(parlops_solver_set_restart(sv, 30));
      pss[np++] = sv;
      S[ns++] = (Solver){pl[q].name, pl[q].floor, run_parlops, sv, x, b, NULL, NULL, 0, {0}};
    }
    int64_t its[12];
    double bwp = bench(S, ns, rounds, K, counted, its);
    report(problems[pi], &R, S, ns, rounds, K, its, counted, bwp);

    if (pi == 0) {
      /* kernels on the same matrix and vectors: SpMV and dot */
      Vec py;
      PetscCall(VecDuplicate(px, &py));
      PetscCall(VecSet(px, 1.0));
      parlops_vec *y;
      CHECKP(parlops_vec_duplicate(x, &y));
      CHECKP(parlops_vec_fill(x, PARLOPS_REAL(1.0)));
      /* PyLops' Laplacian on the same grid (an N-D layout, split in grid lines) */
      int64_t shape[2] = {n, n};
      const double ones[2] = {1.0, 1.0};
      parlops_layout *lnd;
      parlops_op *L;
      parlops_vec *xs, *ys;
      CHECKP(parlops_layout_create_nd(comm, PARLOPS_PARTITION_SCATTER, 2, shape, 0, PARLOPS_DECIDE, &lnd));
      CHECKP(parlops_op_laplacian(lnd, ones, ones, PARLOPS_F64, &L));
      CHECKP(parlops_op_create_vecs(L, &xs, &ys));
      CHECKP(parlops_vec_fill(xs, PARLOPS_REAL(1.0)));
      Solver Kn[4] = {{"PETSc MatMult", spmv_bytes, run_matmult, A, px, py, NULL, NULL, 0, {0}},
                      {"parlops apply (32-bit input)", spmv_bytes, run_apply, A32, x, y, NULL, NULL, 0, {0}},
                      {"parlops apply matrix-free", 16.0, run_apply, MF, x, y, NULL, NULL, 0, {0}},
                      {"parlops apply PyLops Laplacian stencil", 16.0, run_apply, L, xs, ys, NULL, NULL, 0, {0}}};
      double bwp = bench(Kn, 4, rounds, K, 0, its);
      report("spmv", &R, Kn, 4, rounds, K, its, 1, bwp);
      CHECKP(parlops_vec_destroy(&xs));
      CHECKP(parlops_vec_destroy(&ys));
      CHECKP(parlops_op_destroy(&L));
      CHECKP(parlops_layout_destroy(&lnd));
      Solver Kd[2] = {{"PETSc VecDot", 16.0, run_vecdot, NULL, px, py, NULL, NULL, 0, {0}},
                      {"parlops vec_dot", 16.0, run_pdot, NULL, x, y, NULL, NULL, 0, {0}}};
      bwp = bench(Kd, 2, rounds, K, 0, its);
      report("dot", &R, Kd, 2, rounds, K, its, 1, bwp);
      PetscCall(VecDestroy(&py));
      CHECKP(parlops_vec_destroy(&y));
    }

    for (int q = 0; q < np; ++q) CHECKP(parlops_solver_destroy(&pss[q]));
    for (int q = 0; q < nk; ++q) PetscCall(KSPDestroy(&ksps[q]));
    if (pcg) { HYPRE_ParCSRPCGDestroy(pcg); HYPRE_IJMatrixDestroy(ij); HYPRE_IJVectorDestroy(ib); HYPRE_IJVectorDestroy(ix); }
    CHECKP(parlops_vec_destroy(&x)); CHECKP(parlops_vec_destroy(&b));
    CHECKP(parlops_op_destroy(&A64)); CHECKP(parlops_op_destroy(&A32));
    if (MF) CHECKP(parlops_op_destroy(&MF));
    free(rp32); free(ci32); free(R.rp); free(R.ci); free(R.va);
    PetscCall(VecDestroy(&px)); PetscCall(VecDestroy(&pb)); PetscCall(MatDestroy(&A));
    CHECKP(parlops_layout_destroy(&lay));
  }
  if (dram) {
    /* dot products of vectors far beyond the caches (2^24 entries, 128 MiB each) */
    int64_t N = (int64_t)1 << 24;
    parlops_layout *lay;
    CHECKP(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, PARLOPS_DECIDE, &lay));
    int64_t start, len;
    CHECKP(parlops_layout_local_range(lay, &start, &len));
    Vec a, b;
    PetscCall(VecCreateMPI(MPI_COMM_WORLD, (PetscInt)len, (PetscInt)N, &a));
    PetscCall(VecDuplicate(a, &b));
    PetscCall(VecSet(a, 1.0));
    PetscCall(VecSet(b, 2.0));
    parlops_vec *x, *y;
    CHECKP(parlops_vec_create(lay, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x));
    CHECKP(parlops_vec_duplicate(x, &y));
    CHECKP(parlops_vec_fill(x, PARLOPS_REAL(1.0)));
    CHECKP(parlops_vec_fill(y, PARLOPS_REAL(2.0)));
    Rows R = {"dot", N, start, len, 0, NULL, NULL, NULL, 0};
    Solver Kd[2] = {{"PETSc VecDot", 16.0, run_vecdot, NULL, a, b, NULL, NULL, 0, {0}},
                    {"parlops vec_dot", 16.0, run_pdot, NULL, x, y, NULL, NULL, 0, {0}}};
    int64_t its[2];
    int64_t Kdot = K > 20 ? 20 : K;
    double bwp = bench(Kd, 2, rounds, Kdot, 0, its);
    report("dot-dram", &R, Kd, 2, rounds, Kdot, its, 1, bwp);
    PetscCall(VecDestroy(&a));
    PetscCall(VecDestroy(&b));
    CHECKP(parlops_vec_destroy(&x));
    CHECKP(parlops_vec_destroy(&y));
    CHECKP(parlops_layout_destroy(&lay));
  }
  CHECKP(parlops_comm_destroy(&comm));
  fclose(json);
  HYPRE_Finalize();
  PetscCall(PetscFinalize());
  return 0;
}
