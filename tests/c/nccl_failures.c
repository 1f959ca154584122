/* An NCCL failure on one rank must end on every rank (issue 31, section 3), through the C API only,
 * under the CPU stand-in for CUDA and NCCL (tests/standin/) at 1-4 ranks, run by tests/examples.sh.
 * The stand-in's test controls (standin_nccl_fail_after, standin_nccl_fail_mode; found with
 * dlopen(RTLD_NOLOAD)) make one rank's k-th next NCCL call fail, either at the call (it returns
 * ncclSystemError) or asynchronously (the call succeeds, the operation never finishes, and
 * ncclCommGetAsyncError reports the error, as for a network failure seen by one rank):
 *  - creating the NCCL communicator (parlops_comm_create_nccl);
 *  - inside CG and GMRES solves over NCCL, at different operations;
 *  - inside an operator application (a halo exchange), at 2-4 ranks, where some ranks are not
 *    neighbours of the failing one: the group's first call, and its second (a receive already
 *    queued in the open group: the communicator is aborted once the group is closed);
 * Every rank must get PARLOPS_ERR_NCCL, with a message naming the failing rank, within the
 * stand-in's NCCL timeout (a rank left waiting inside NCCL aborts the job); the objects on the
 * aborted communicator then fail at once on every rank; a new NCCL communicator solves again (a
 * converged solve whose true residual is recomputed).
 * Prints "nccl_failures (N ranks): P passed, F failed" on rank 0. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "expect.h"

static parlops_comm *world = NULL;
static int last = 0;
static void (*fail_after)(long) = NULL;
static void (*fail_mode)(int) = NULL;

/* The message of the last failure names the failing rank (on every rank). */
static void names_rank(const char *name, int r) {
  char needle[64], buf[300];
  snprintf(needle, sizeof needle, "failed on rank %d", r);
  const char *msg = parlops_last_error();
  int ok = msg && strstr(msg, needle) != NULL;
  snprintf(buf, sizeof buf, "%s: the message names rank %d (\"%s\")", name, r, msg ? msg : "");
  expect(buf, ok ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
}

/* Make the `k`-th next NCCL call of rank `r` fail (async: asynchronously). */
static void inject(int r, long k, int async) {
  if (rank_ == r) {
    fail_mode(async);
    fail_after(k);
  }
}
static void no_injection(void) {
  fail_after(0);
  fail_mode(-1);
}

/* A problem on an NCCL communicator: the 1D Laplacian tridiag(-1, 2.1, -1) over 1000 uneven rows
 * (rank 0 gets 100 fewer, and with 3 or more ranks rank 1 has none: its neighbours are ranks 0 and
 * 2, and at 4 ranks rank 3 is no neighbour of rank 0), device vectors b (random) and x. */
typedef struct {
  parlops_comm *nc;
  parlops_layout *l;
  parlops_op *A;
  parlops_vec *b, *x;
} problem;

static int make_problem(problem *p) {
  memset(p, 0, sizeof *p);
  if (parlops_comm_create_nccl(world, -1, &p->nc) != PARLOPS_OK) return 0;
  int64_t N = 1000, base = N / size_, mine = base, others = 0;
  for (int r = 0; r < size_ - 1; r++) {
    int64_t m = r == 0 && size_ > 1 ? base - 100 : r == 1 && size_ > 2 ? 0 : base;
    if (r == rank_) mine = m;
    others += m;
  }
  if (rank_ == last) mine = N - others;
  EXPECT(parlops_layout_create(p->nc, PARLOPS_PARTITION_SCATTER, N, mine, &p->l), PARLOPS_OK, NULL);
  int64_t lo = 0, len = 0;
  parlops_layout_local_range(p->l, &lo, &len);
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
  EXPECT(parlops_op_create_csr(p->l, p->l, PARLOPS_F64, PARLOPS_INDEX_I64, rp, ci, v, &p->A), PARLOPS_OK, NULL);
  free(rp);
  free(ci);
  free(v);
  EXPECT(parlops_vec_create(p->l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &p->b), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_set_random(p->b, PARLOPS_RANDOM_GAUSSIAN, 11), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(p->l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &p->x), PARLOPS_OK, NULL);
  return 1;
}

static void free_problem(problem *p) {
  parlops_vec_destroy(&p->b);
  parlops_vec_destroy(&p->x);
  parlops_op_destroy(&p->A);
  parlops_layout_destroy(&p->l);
  parlops_comm_destroy(&p->nc);
}

static parlops_solver *solver(const problem *p, parlops_method m) {
  parlops_solver *s = NULL;
  EXPECT(parlops_solver_create(p->nc, m, &s), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s, p->A), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 500), PARLOPS_OK, NULL);
  return s;
}

/* A converged solve on p whose true residual is small. */
static void converges(const char *name, const problem *p, parlops_method m) {
  char buf[300];
  parlops_solver *s = solver(p, m);
  parlops_vec_fill(p->x, PARLOPS_REAL(0.0));
  snprintf(buf, sizeof buf, "%s: solve", name);
  expect(buf, parlops_solver_solve(s, p->b, p->x), PARLOPS_OK, NULL);
  parlops_solve_info info;
  parlops_solver_info(s, &info);
  parlops_vec *r = NULL;
  double rn = INFINITY, bn = 0.0;
  parlops_vec_duplicate(p->b, &r);
  parlops_op_apply(p->A, p->x, r);
  parlops_vec_axpby(r, PARLOPS_REAL(1.0), p->b, PARLOPS_REAL(-1.0));
  parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn);
  parlops_vec_norm(p->b, PARLOPS_NORM_2, 0, &bn);
  parlops_vec_destroy(&r);
  snprintf(buf, sizeof buf, "%s: converged (reason %d, true residual %.2e of ||b|| %.2e)", name, (int)info.reason, rn,
           bn);
  expect(buf, info.reason > 0 && rn <= 1e-8 * bn ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_solver_destroy(&s);
}

static void case_create(int r, int async) {
  char buf[200];
  snprintf(buf, sizeof buf, "ncclCommInitRankConfig failing%s on rank %d: parlops_comm_create_nccl",
           async ? " asynchronously" : "", r);
  inject(r, 1, async);
  parlops_comm *nc = NULL;
  parlops_status st = parlops_comm_create_nccl(world, -1, &nc);
  no_injection();
  same_everywhere(buf, st, PARLOPS_ERR_NCCL);
  names_rank(buf, r);
  expect("no communicator is made on any rank", nc == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  problem p;
  same_everywhere("the next parlops_comm_create_nccl", make_problem(&p) ? PARLOPS_OK : PARLOPS_ERR_NCCL, PARLOPS_OK);
  if (p.nc) converges("a solve on the new communicator", &p, PARLOPS_METHOD_CG);
  free_problem(&p);
}

static void case_solve(parlops_method m, const char *mname, int r, long k, int async) {
  char buf[300];
  problem p;
  if (!make_problem(&p)) {
    expect("parlops_comm_create_nccl", PARLOPS_ERR_NCCL, PARLOPS_OK, NULL);
    return;
  }
  snprintf(buf, sizeof buf, "%s over NCCL before any failure", mname);
  converges(buf, &p, m);
  parlops_solver *s = solver(&p, m);
  parlops_vec_fill(p.x, PARLOPS_REAL(0.0));
  snprintf(buf, sizeof buf, "NCCL call %ld from now failing%s on rank %d inside %s", k, async ? " asynchronously" : "",
           r, mname);
  inject(r, k, async);
  parlops_status st = parlops_solver_solve(s, p.b, p.x);
  no_injection();
  same_everywhere(buf, st, PARLOPS_ERR_NCCL);
  names_rank(buf, r);
  snprintf(buf, sizeof buf, "%s again on the aborted communicator", mname);
  same_everywhere(buf, parlops_solver_solve(s, p.b, p.x), PARLOPS_ERR_NCCL);
  if (size_ > 1) {
    parlops_vec *y = NULL;
    parlops_vec_duplicate(p.x, &y);
    same_everywhere("parlops_op_apply on the aborted communicator", parlops_op_apply(p.A, p.x, y), PARLOPS_ERR_NCCL);
    parlops_vec_destroy(&y);
  }
  parlops_solver_destroy(&s);
  free_problem(&p);
  problem q;
  same_everywhere("a new NCCL communicator", make_problem(&q) ? PARLOPS_OK : PARLOPS_ERR_NCCL, PARLOPS_OK);
  snprintf(buf, sizeof buf, "%s on the new communicator", mname);
  if (q.nc) converges(buf, &q, m);
  free_problem(&q);
}

static void case_apply(long k, int async) {
  if (size_ < 2) return; /* one rank has no halo */
  char buf[300];
  problem p;
  if (!make_problem(&p)) {
    expect("parlops_comm_create_nccl", PARLOPS_ERR_NCCL, PARLOPS_OK, NULL);
    return;
  }
  parlops_vec *y = NULL;
  parlops_vec_duplicate(p.x, &y);
  EXPECT(parlops_vec_set_random(p.x, PARLOPS_RANDOM_GAUSSIAN, 5), PARLOPS_OK, NULL);
  snprintf(buf, sizeof buf, "the halo's NCCL call %ld failing%s on rank 0: parlops_op_apply", k,
           async ? " asynchronously" : "");
  inject(0, k, async);
  parlops_status st = parlops_op_apply(p.A, p.x, y);
  no_injection();
  same_everywhere(buf, st, PARLOPS_ERR_NCCL);
  /* ranks that are no neighbour of rank 0 finished their halo: they learn at their next NCCL call */
  parlops_solver *s = solver(&p, PARLOPS_METHOD_CG);
  same_everywhere("a CG solve after the failed apply", parlops_solver_solve(s, p.b, p.x), PARLOPS_ERR_NCCL);
  names_rank("a CG solve after the failed apply", 0);
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&y);
  free_problem(&p);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(120);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  last = size_ - 1;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &world), PARLOPS_OK, NULL);
  void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  problem probe;
  parlops_status ps = make_problem(&probe) ? PARLOPS_OK : PARLOPS_ERR_NO_DEVICE;
  free_problem(&probe);
  if (!nccl) nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  if (nccl) {
    fail_after = (void (*)(long))dlsym(nccl, "standin_nccl_fail_after");
    fail_mode = (void (*)(int))dlsym(nccl, "standin_nccl_fail_mode");
  }
  if (ps != PARLOPS_OK || !fail_after || !fail_mode) {
    if (rank_ == 0)
      printf("nccl_failures skipped: %s\n",
             ps != PARLOPS_OK ? "no NCCL communicator could be made"
                              : "the failures need the NCCL stand-in's controls (tests/standin/)");
    parlops_comm_destroy(&world);
    MPI_Finalize();
    return 0;
  }
  current = "create";
  case_create(last, 0);
  alarm(120);
  case_create(0, 1);
  alarm(120);
  current = "solve";
  case_solve(PARLOPS_METHOD_CG, "CG", last, 7, 0);
  alarm(120);
  case_solve(PARLOPS_METHOD_GMRES, "GMRES", 0, 12, 1);
  alarm(120);
  case_solve(PARLOPS_METHOD_CG_PIPELINED, "pipelined CG", last, 1, 1);
  alarm(120);
  current = "apply";
  case_apply(1, 0);
  alarm(120);
  case_apply(1, 1);
  alarm(120);
  case_apply(2, 0); /* the send after a receive already queued in the group: the group is closed first */
  alarm(0);
  int all = 0;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("nccl_failures (%d ranks): %d passed, %d failed\n", size_, passed, all);
  parlops_comm_destroy(&world);
  MPI_Finalize();
  return all != 0;
}
