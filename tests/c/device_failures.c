/* Device failures that must end on every rank (issue 31, section 3), through the C API only, run
 * under the CPU stand-in for CUDA and NCCL (tests/standin/) at 1-4 ranks by tests/examples.sh:
 *  - device out-of-memory on one rank: creating a device vector, inside a device solve, and in the
 *    eigensolvers at every allocation they make (a sweep of the limit);
 *  - a device shell callback (device pointers) failing on one rank inside a solve;
 *  - a device shell's diagonal callback (issue 32): its diagonal into device and host vectors, Jacobi
 *    on it, the callback failing on one rank in Jacobi's set-up;
 *  - device input that is not finite on one rank: a divergence on every rank, never a convergence;
 * (An NCCL failure on one rank is not here yet: the other ranks wait inside NCCL for ever; see
 * docs/gpu.md, known limits.)
 * Every rank must get the same status (and reason) within the alarm; after each failure the same
 * objects must work again (a converged solve whose true residual is recomputed). The out-of-memory
 * cases use the stand-in's test control standin_set_memory_limit, found with dlopen(RTLD_NOLOAD); with
 * a real driver they are left out, and said so.
 * Prints "device_failures (N ranks): P passed, F failed" on rank 0. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "expect.h"

static parlops_comm *c = NULL;
static parlops_layout *l = NULL;
static int64_t lo = 0, len = 0, N = 0;
static int last = 0;
static long long (*set_limit)(long long) = NULL;
static int (*dtod)(unsigned long long, unsigned long long, size_t) = NULL; /* cuMemcpyDtoD_v2 */

/* The CSR matrix of l's rows rp, ci, v (64-bit indices; the arrays freed). */
static parlops_op *csr_of(int64_t *rp, int64_t *ci, double *v) {
  parlops_op *A = NULL;
  EXPECT(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &A), PARLOPS_OK, NULL);
  free(rp);
  free(ci);
  free(v);
  return A;
}

/* the 1D Laplacian tridiag(-1, 2.1, -1) of l (64-bit indices), a host-built CSR matrix */
static parlops_op *laplacian(void) {
  int64_t *rp = malloc((size_t)(len + 1) * sizeof *rp), *ci = malloc((size_t)(3 * len + 1) * sizeof *ci);
  double *v = malloc((size_t)(3 * len + 1) * sizeof *v);
  int64_t k = 0;
  rp[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) ci[k] = g - 1, v[k++] = -1.0;
    ci[k] = g, v[k++] = 2.1;
    if (g < N - 1) ci[k] = g + 1, v[k++] = -1.0;
    rp[i + 1] = k;
  }
  return csr_of(rp, ci, v);
}

static parlops_vec *dvec(uint64_t seed) {
  parlops_vec *v = NULL;
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &v), PARLOPS_OK, NULL);
  if (seed) EXPECT(parlops_vec_set_random(v, PARLOPS_RANDOM_GAUSSIAN, seed), PARLOPS_OK, NULL);
  return v;
}

static double true_residual(const parlops_op *A, const parlops_vec *b, const parlops_vec *x) {
  parlops_vec *r = NULL;
  double rn = INFINITY;
  parlops_vec_duplicate(b, &r);
  parlops_op_apply(A, x, r);
  parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0));
  parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn);
  parlops_vec_destroy(&r);
  return rn;
}

/* A converged solve with a small true residual (the objects work after a failure). */
static void solves_again(const char *name, parlops_solver *s, const parlops_op *A, const parlops_vec *b,
                         parlops_vec *x) {
  char buf[300];
  parlops_vec_fill(x, PARLOPS_REAL(0.0));
  snprintf(buf, sizeof buf, "%s: the next solve", name);
  expect(buf, parlops_solver_solve(s, b, x), PARLOPS_OK, NULL);
  parlops_solve_info info;
  parlops_solver_info(s, &info);
  double bn = 0.0, rn = true_residual(A, b, x);
  parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn);
  snprintf(buf, sizeof buf, "%s: the next solve converges (reason %d, true residual %.2e of ||b|| %.2e)", name,
           (int)info.reason, rn, bn);
  expect(buf, info.reason > 0 && rn <= 1e-8 * bn ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
}

static void case_oom_create(void) {
  if (!set_limit) return;
  parlops_layout *big = NULL;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 1 << 20, -1, &big), PARLOPS_OK, NULL);
  long long used = set_limit(-1);
  if (rank_ == last) set_limit(used + 4096); /* room for nothing of 1 MiB entries */
  parlops_vec *v = NULL;
  same_everywhere("device out-of-memory on the last rank: parlops_vec_create",
                  parlops_vec_create(big, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &v), PARLOPS_ERR_OUT_OF_MEMORY);
  expect("no vector is made on any rank", v == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  set_limit(-1);
  same_everywhere("after the limit is lifted: parlops_vec_create",
                  parlops_vec_create(big, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &v), PARLOPS_OK);
  parlops_vec_destroy(&v);
  parlops_layout_destroy(&big);
}

static void case_oom_solve(void) {
  if (!set_limit) return;
  parlops_op *A = laplacian();
  parlops_vec *b = dvec(3), *x = dvec(0);
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_GMRES, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 500), PARLOPS_OK, NULL);
  long long used = set_limit(-1);
  if (rank_ == last) set_limit(used); /* the solve's work vectors cannot be made there */
  same_everywhere("device out-of-memory on the last rank inside a GMRES solve", parlops_solver_solve(s, b, x),
                  PARLOPS_ERR_OUT_OF_MEMORY);
  set_limit(-1);
  solves_again("after out-of-memory", s, A, b, x);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_op_destroy(&A);
}

/* diag(d): d = 10, 9, 8, 7 at global rows 0-3, 1 + g / N elsewhere (three well separated largest) */
static parlops_op *diagonal(void) {
  int64_t *rp = malloc((size_t)(len + 1) * sizeof *rp), *ci = malloc((size_t)(len + 1) * sizeof *ci);
  double *v = malloc((size_t)(len + 1) * sizeof *v);
  rp[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    ci[i] = g, v[i] = g < 4 ? 10.0 - (double)g : 1.0 + (double)g / (double)N;
    rp[i + 1] = i + 1;
  }
  return csr_of(rp, ci, v);
}

/* The eigensolvers with device vectors, the last rank's device memory limited to what is in use
 * plus k of its vectors, k = 0, 1, ...: wherever the run's allocations stop (its basis, a restart's
 * rotation into spare vectors, the eigenvectors' forming), every rank must give the same status,
 * out-of-memory or success, and a run that succeeds must give the eigenvalues 10, 9, 8. (Krylov-Schur
 * with a basis of 6 for 3 restarts several times.) */
static void case_oom_eigen(void) {
  if (!set_limit) return;
  parlops_op *A = diagonal();
  parlops_vec *v0 = dvec(5), *ev[3];
  for (int q = 0; q < 3; q++) ev[q] = dvec(0);
  long long vbytes = (long long)len * 8;
  for (int solver = 0; solver < 2; solver++) {
    const char *name = solver == 0 ? "Krylov-Schur" : "Lanczos";
    int oom = 0, ok = 0;
    long long used = 0;
    /* k = -1: without a limit first (what the run keeps, as the matrix's device copy, is then in
       use before the sweep) */
    for (int k = -1; k <= 80 && ok < 3; k++) {
      if (k == 0) used = set_limit(-1);
      if (rank_ == last && k >= 0) set_limit(used + (long long)k * vbytes + (k > 0 ? 4096 : 0));
      double lam[3] = {0, 0, 0};
      parlops_status st =
          solver == 0 ? parlops_eig_krylov_schur(A, NULL, NULL, 0.0, v0, 3, 6, 2000, 1e-10, PARLOPS_EIG_LARGEST, NULL,
                                                 NULL, lam, NULL, ev, NULL)
                      : parlops_eig_lanczos(A, v0, 200, 1e-10, 3, PARLOPS_EIG_LARGEST, lam, NULL, ev, NULL);
      set_limit(-1);
      int mine = (int)st, lo_ = 0, hi_ = 0;
      MPI_Allreduce(&mine, &lo_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&mine, &hi_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      char buf[300];
      snprintf(buf, sizeof buf,
               "%s, the last rank's device memory %d vectors over what is in use: status %d on every rank "
               "(ranks gave %d..%d), out-of-memory or success",
               name, k, (int)st, lo_, hi_);
      expect(buf, lo_ == hi_ && (st == PARLOPS_OK || st == PARLOPS_ERR_OUT_OF_MEMORY) ? PARLOPS_OK
                                                                                    : PARLOPS_ERR_INTERNAL,
             PARLOPS_OK, NULL);
      if (st == PARLOPS_ERR_OUT_OF_MEMORY) oom++;
      if (st == PARLOPS_OK) {
        ok++;
        double err = fabs(lam[0] - 10.0) + fabs(lam[1] - 9.0) + fabs(lam[2] - 8.0);
        snprintf(buf, sizeof buf, "%s with %d vectors of room: eigenvalues %.15g, %.15g, %.15g", name, k, lam[0],
                 lam[1], lam[2]);
        expect(buf, err <= 1e-8 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
      }
    }
    char buf[200];
    snprintf(buf, sizeof buf, "%s: %d limits ran out of memory, then the runs succeeded", name, oom);
    expect(buf, oom > 0 && ok > 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  }
  for (int q = 0; q < 3; q++) parlops_vec_destroy(&ev[q]);
  parlops_vec_destroy(&v0);
  parlops_op_destroy(&A);
}

/* a device shell: y = x (a device-to-device copy), failing on `fail_rank` from its `fail_at`-th call */
static int fail_rank = -1, calls = 0, fail_at = 3;
static int shell_copy(void *ctx, const void *x, void *y) {
  (void)ctx;
  calls++;
  if (rank_ == fail_rank && calls >= fail_at) return 7;
  if (len == 0) return 0;
  return dtod((unsigned long long)(uintptr_t)y, (unsigned long long)(uintptr_t)x, (size_t)len * 8) == 0 ? 0 : 1;
}

static void case_shell_fails(void) {
  if (!dtod) return;
  parlops_op *S = NULL;
  EXPECT(parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, NULL, shell_copy, shell_copy, NULL, &S),
         PARLOPS_OK, NULL);
  parlops_op *A = laplacian(), *M = NULL;
  /* M = 0.5 * S: a device callback as the preconditioner of a device CG solve */
  EXPECT(parlops_op_scale(S, PARLOPS_REAL(0.5), &M), PARLOPS_OK, NULL);
  parlops_vec *b = dvec(5), *x = dvec(0);
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_preconditioner(s, M), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 500), PARLOPS_OK, NULL);
  fail_rank = last;
  calls = 0;
  same_everywhere("a device shell preconditioner failing on the last rank (3rd call) inside CG",
                  parlops_solver_solve(s, b, x), PARLOPS_ERR_CALLBACK);
  fail_rank = -1;
  solves_again("after the callback failure", s, A, b, x);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_op_destroy(&M);
  parlops_op_destroy(&S);
  parlops_op_destroy(&A);
}

/* a device shell with its diagonal: y = x (a device copy), diagonal 1 written from a device vector of
 * ones, failing on `fail_rank` */
static void *ones_dev = NULL;
static int shell_diag(void *ctx, void *d) {
  (void)ctx;
  if (rank_ == fail_rank) return 9;
  if (len == 0) return 0;
  return dtod((unsigned long long)(uintptr_t)d, (unsigned long long)(uintptr_t)ones_dev, (size_t)len * 8) == 0 ? 0 : 1;
}

static void case_shell_diagonal(void) {
  if (!dtod) return;
  parlops_vec *ones = dvec(0), *dd = dvec(0), *dh = NULL, *b = dvec(9), *x = dvec(0);
  EXPECT(parlops_vec_fill(ones, PARLOPS_REAL(1.0)), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_local_array(ones, &ones_dev, NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &dh), PARLOPS_OK, NULL);
  parlops_op *S = NULL;
  EXPECT(parlops_op_create_shell_with_diagonal(l, l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, NULL, shell_copy, shell_copy,
                                               shell_diag, NULL, &S),
         PARLOPS_OK, NULL);
  /* the diagonal into a device vector and into a host vector: all ones */
  EXPECT(parlops_op_diagonal(S, dd), PARLOPS_OK, NULL);
  EXPECT(parlops_op_diagonal(S, dh), PARLOPS_OK, NULL);
  double s1 = 0, s2 = 0;
  parlops_vec_norm(dd, PARLOPS_NORM_1, 0, &s1);
  parlops_vec_norm(dh, PARLOPS_NORM_1, 0, &s2);
  expect("a device shell's diagonal, into device and host vectors, is the callback's",
         s1 == (double)N && s2 == (double)N ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, S), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_jacobi(s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 50), PARLOPS_OK, NULL);
  fail_rank = last;
  same_everywhere("a device diagonal callback failing on the last rank in Jacobi's set-up",
                  parlops_solver_solve(s, b, x), PARLOPS_ERR_CALLBACK);
  fail_rank = -1;
  same_everywhere("Jacobi-CG on the device shell once the callback works", parlops_solver_solve(s, b, x), PARLOPS_OK);
  parlops_solve_info info;
  parlops_solver_info(s, &info);
  parlops_vec_axpby(x, PARLOPS_REAL(-1.0), b, PARLOPS_REAL(1.0));
  double e = 1.0;
  parlops_vec_norm(x, PARLOPS_NORM_INF, 0, &e);
  expect("Jacobi-CG on the identity converges at once to x = b",
         info.reason > 0 && info.iterations <= 1 && e <= 1e-14 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_solver_destroy(&s);
  parlops_op_destroy(&S);
  parlops_vec_destroy(&ones);
  parlops_vec_destroy(&dd);
  parlops_vec_destroy(&dh);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
}

static void case_nonfinite(void) {
  parlops_op *A = laplacian();
  parlops_vec *b = dvec(7), *x = dvec(0);
  double *h = malloc((size_t)(len + 1) * sizeof *h);
  parlops_vec_copy_to_host(b, h);
  if (rank_ == last && len > 0) h[len / 2] = NAN;
  parlops_vec_copy_from_host(b, h);
  int methods[] = {PARLOPS_METHOD_CG, PARLOPS_METHOD_CG_PIPELINED, PARLOPS_METHOD_GMRES, PARLOPS_METHOD_BICGSTAB};
  const char *names[] = {"CG", "pipelined CG", "GMRES", "BiCGStab"};
  for (int m = 0; m < 4; m++) {
    parlops_solver *s = NULL;
    EXPECT(parlops_solver_create(c, methods[m], &s), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_operator(s, A), PARLOPS_OK, NULL);
    EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 200), PARLOPS_OK, NULL);
    parlops_vec_fill(x, PARLOPS_REAL(0.0));
    char buf[200];
    snprintf(buf, sizeof buf, "device b with a NaN on the last rank, %s: solve returns", names[m]);
    same_everywhere(buf, parlops_solver_solve(s, b, x), PARLOPS_OK);
    parlops_solve_info info;
    parlops_solver_info(s, &info);
    int r = (int)info.reason, rlo = 0, rhi = 0;
    MPI_Allreduce(&r, &rlo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&r, &rhi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    snprintf(buf, sizeof buf, "%s: DIVERGED_NAN on every rank (reasons %d..%d)", names[m], rlo, rhi);
    expect(buf, rlo == rhi && r == PARLOPS_DIVERGED_NAN ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    parlops_solver_destroy(&s);
  }
  free(h);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_op_destroy(&A);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(120);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  last = size_ - 1;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  /* 1000 entries, uneven: rank 0 gets 100 fewer, and with 3 or more ranks rank 1 has none */
  N = 1000;
  int64_t base = N / size_, mine = base, others = 0;
  for (int r = 0; r < size_ - 1; r++) {
    int64_t m = r == 0 && size_ > 1 ? base - 100 : r == 1 && size_ > 2 ? 0 : base;
    if (r == rank_) mine = m;
    others += m;
  }
  if (rank_ == last) mine = N - others;
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, N, mine, &l), PARLOPS_OK, NULL);
  parlops_layout_local_range(l, &lo, &len);
  /* this process's device is set up by the first device vector */
  parlops_vec *probe = NULL;
  parlops_status ps = parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &probe);
  if (ps != PARLOPS_OK) {
    if (rank_ == 0) printf("device_failures skipped: %s\n", parlops_last_error());
    MPI_Finalize();
    return ps == PARLOPS_ERR_NO_DEVICE ? 0 : 1;
  }
  parlops_vec_destroy(&probe);
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cu) {
    set_limit = (long long (*)(long long))dlsym(cu, "standin_set_memory_limit");
    dtod = (int (*)(unsigned long long, unsigned long long, size_t))dlsym(cu, "cuMemcpyDtoD_v2");
  }
  if (rank_ == 0 && !set_limit)
    printf("device_failures: the out-of-memory cases need the CUDA stand-in's controls: left out\n");
  struct {
    const char *name;
    void (*fn)(void);
  } cases[] = {{"oom_create", case_oom_create},
               {"oom_solve", case_oom_solve},
               {"oom_eigen", case_oom_eigen},
               {"shell_fails", case_shell_fails},
               {"shell_diagonal", case_shell_diagonal},
               {"nonfinite", case_nonfinite}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    current = cases[i].name;
    alarm(120);
    cases[i].fn();
  }
  alarm(0);
  int all = 0;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("device_failures (%d ranks): %d passed, %d failed\n", size_, passed, all);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&c);
  MPI_Finalize();
  return all != 0;
}
