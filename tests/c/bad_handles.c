/* Handles of the wrong type, destroyed handles and pointers parlops never handed out: every call gives
 * PARLOPS_ERR_INVALID_HANDLE and a message naming the argument, on every rank (each rank passes the
 * same kind of bad handle, so no collective is left waiting). Also: a failing call and
 * parlops_last_error from an atexit handler and from a pthread key destructor (after this thread's
 * thread-local storage is destroyed) must not abort. Run at 1 and 3 ranks; prints
 * "bad_handles: N passed, M failed" on rank 0 and exits 0 only when nothing failed. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <parlops.h>

#include "expect.h"

#define BAD PARLOPS_ERR_INVALID_HANDLE

/* A failing call after thread-local storage is gone: the status and a non-NULL message, no abort. */
static int late_call(const char *where) {
  double nrm = 0;
  parlops_status st = parlops_vec_norm(NULL, PARLOPS_NORM_2, 2.0, &nrm);
  const char *msg = parlops_last_error();
  if (st != PARLOPS_ERR_NULL_ARGUMENT || msg == NULL) {
    fprintf(stderr, "FAILED %s: status %d, message %s\n", where, (int)st, msg ? msg : "(null)");
    return 1;
  }
  if (strstr(msg, "parlops_vec_norm") == NULL) {
    fprintf(stderr, "FAILED %s: message does not name the function: %s\n", where, msg);
    return 1;
  }
  /* a handle check too (the registry is process-wide, not thread-local) */
  int64_t n = 0;
  char junk[32] = {0};
  st = parlops_layout_global_len((const parlops_layout *)junk, &n);
  msg = parlops_last_error();
  if (st != BAD || msg == NULL) {
    fprintf(stderr, "FAILED %s (handle): status %d, message %s\n", where, (int)st, msg ? msg : "(null)");
    return 1;
  }
  return 0;
}

static void at_exit(void) {
  if (late_call("atexit handler")) _exit(1);
}

static volatile int key_destructor_result = -1;
static void key_destructor(void *v) {
  (void)v;
  key_destructor_result = late_call("pthread key destructor");
}

static pthread_key_t key;
static void *thread_main(void *arg) {
  (void)arg;
  pthread_setspecific(key, (void *)1);
  double nrm;
  /* touch this thread's last-error storage so that it is destroyed at thread exit */
  parlops_vec_norm(NULL, PARLOPS_NORM_2, 2.0, &nrm);
  return NULL;
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(30);
  EXPECT(parlops_init(&argc, &argv), PARLOPS_OK, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  expect("status_string(INVALID_HANDLE)", strstr(parlops_status_string(BAD), "PARLOPS_ERR_INVALID_HANDLE") ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  parlops_comm *c = NULL;
  parlops_layout *l = NULL;
  parlops_vec *v = NULL, *w = NULL;
  parlops_op *a = NULL;
  parlops_solver *s = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 12, PARLOPS_DECIDE, &l), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &v), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &w), PARLOPS_OK, NULL);
  EXPECT(parlops_op_identity(l, PARLOPS_F64, &a), PARLOPS_OK, NULL);
  EXPECT(parlops_solver_create(c, PARLOPS_METHOD_CG, &s), PARLOPS_OK, NULL);

  /* ---- wrong types */
  int64_t n = -1, m = -1;
  EXPECT(parlops_op_apply((const parlops_op *)v, v, w), BAD, "'A'");
  EXPECT(parlops_op_size((const parlops_op *)v, &n, &m), BAD, "parlops_vec handle");
  expect("outputs untouched", n == -1 && m == -1 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create((const parlops_comm *)l, PARLOPS_PARTITION_SCATTER, 5, -1, &l), BAD, "'comm'");
  EXPECT(parlops_layout_global_len((const parlops_layout *)c, &n), BAD, "'layout'");
  EXPECT(parlops_layout_global_len((const parlops_layout *)c, &n), BAD, "parlops_comm handle");
  EXPECT(parlops_vec_fill((parlops_vec *)l, (parlops_scalar){1, 0}), BAD, "'v'");
  EXPECT(parlops_vec_norm((const parlops_vec *)a, PARLOPS_NORM_2, 2, NULL), BAD, "parlops_op handle");
  EXPECT(parlops_solver_set_operator(s, (const parlops_op *)s), BAD, "'A'");
  EXPECT(parlops_solver_set_operator((parlops_solver *)a, a), BAD, "'s'");
  EXPECT(parlops_solver_set_preconditioner(s, (const parlops_op *)w), BAD, "'M'");
  EXPECT(parlops_op_apply(a, (const parlops_vec *)l, w), BAD, "'x'");
  EXPECT(parlops_op_apply(a, v, (parlops_vec *)l), BAD, "'y'");
  parlops_scalar d = {-1, -1};
  EXPECT(parlops_vec_dot(v, (const parlops_vec *)a, &d), BAD, "'y'");
  expect("dot output untouched", d.re == -1 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_vec *r = NULL;
  EXPECT(parlops_vec_redistribute(v, (const parlops_layout *)v, &r), BAD, "'to'");
  expect("no vector on failure", r == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_config_report((const parlops_comm *)v, NULL, 0, NULL), BAD, "'comm'");
  parlops_op *sum = NULL;
  EXPECT(parlops_op_sum(a, (const parlops_op *)v, &sum), BAD, NULL);
  const parlops_op *list[2] = {a, (const parlops_op *)l};
  EXPECT(parlops_op_block_diag(c, PARLOPS_F64, 2, list, &sum), BAD, "local_ops[1]");
  expect("no operator on failure", sum == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  parlops_comm *cw = (parlops_comm *)v;
  EXPECT(parlops_comm_destroy(&cw), BAD, "'comm'");
  expect("wrong-type destroy leaves the pointer", cw == (parlops_comm *)v ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- pointers parlops never handed out */
  uint64_t junk[16];
  for (int i = 0; i < 16; i++) junk[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
  EXPECT(parlops_vec_fill((parlops_vec *)junk, (parlops_scalar){1, 0}), BAD, "not a handle");
  EXPECT(parlops_op_size((const parlops_op *)junk, &n, &m), BAD, "'A'");
  EXPECT(parlops_solver_solve((parlops_solver *)junk, v, w), BAD, "'s'");
  EXPECT(parlops_comm_rank((const parlops_comm *)(junk + 3), &rank_), BAD, "'comm'");
  EXPECT(parlops_layout_equal(l, (const parlops_layout *)junk, NULL), BAD, NULL);
  parlops_vec *jv = (parlops_vec *)junk;
  EXPECT(parlops_vec_destroy(&jv), BAD, "'v'");

  /* ---- after destroy */
  parlops_solver *s_old = s;
  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);
  expect("destroy sets NULL", s == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_solver_set_operator(s_old, a), BAD, "already destroyed");
  EXPECT(parlops_solver_set_tolerances(s_old, 1e-8, 0, 1e5, 100), BAD, "'s'");
  EXPECT(parlops_solver_solve(s_old, v, w), BAD, "'s'");
  parlops_solve_info info;
  memset(&info, 0x5a, sizeof info);
  EXPECT(parlops_solver_info(s_old, &info), BAD, "parlops_solver handle that was already destroyed");
  EXPECT(parlops_solver_destroy(&s_old), BAD, "already destroyed"); /* double destroy */
  EXPECT(parlops_solver_destroy(&s), PARLOPS_OK, NULL);             /* NULL handle: no-op */

  parlops_op *a_old = a;
  EXPECT(parlops_op_destroy(&a), PARLOPS_OK, NULL);
  EXPECT(parlops_op_apply(a_old, v, w), BAD, "'A'");
  EXPECT(parlops_op_size(a_old, &n, &m), BAD, "already destroyed");
  EXPECT(parlops_op_destroy(&a_old), BAD, "'A'");
  expect("failed destroy leaves the pointer", a_old != NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  parlops_vec *w_old = w;
  EXPECT(parlops_vec_destroy(&w), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_copy(v, w_old), BAD, "'y'");
  EXPECT(parlops_vec_copy(w_old, w_old), BAD, "'x'");
  EXPECT(parlops_vec_axpy(w_old, (parlops_scalar){1, 0}, v), BAD, NULL);
  EXPECT(parlops_vec_destroy(&w_old), BAD, "'v'");

  parlops_layout *l_old = l;
  EXPECT(parlops_layout_destroy(&l), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l_old, PARLOPS_F64, PARLOPS_MEMORY_HOST, &w), BAD, "'layout'");
  EXPECT(parlops_layout_destroy(&l_old), BAD, "'layout'");

  /* destroy order does not matter: the vector keeps its layout and communicator alive */
  parlops_comm *c_old = c;
  EXPECT(parlops_comm_destroy(&c), PARLOPS_OK, NULL);
  EXPECT(parlops_comm_size(c_old, &size_), BAD, "'comm'");
  EXPECT(parlops_comm_destroy(&c_old), BAD, "'comm'");
  double nrm = -1;
  EXPECT(parlops_vec_norm(v, PARLOPS_NORM_2, 2, &nrm), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_destroy(&v), PARLOPS_OK, NULL);

  /* ---- a failing call from a pthread key destructor (after the thread's TLS is destroyed) */
  pthread_key_create(&key, key_destructor);
  pthread_t t;
  pthread_create(&t, NULL, thread_main, NULL);
  pthread_join(t, NULL);
  expect("failing call in a pthread key destructor", key_destructor_result == 0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- and from an atexit handler (checked after main returns: exit status 1 on failure) */
  atexit(at_exit);

  if (rank_ == 0) printf("bad_handles (%d ranks): %d passed, %d failed\n", size_, passed, failed);
  int any = failed, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  parlops_finalize();
  return all ? 1 : 0;
}
