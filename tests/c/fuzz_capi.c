/* Random-argument fuzzer of the C API (one rank). Random mixes of valid handles of every type, NULL,
 * destroyed handles, handles of the wrong type and pointers parlops never handed out; sizes from
 * {0, 1, small, 2^40, negative, INT64_MAX}; enums in and out of range; NaN/Inf scalars. Every call
 * must return a valid parlops_status; on failure parlops_last_error() must name the function and every
 * output must still hold its sentinel; a call given a stale, wrong-type or foreign handle must fail;
 * no call may write to stdout/stderr (checked by redirecting both during the run); and the process
 * must not abort (a crash is the failure). Caller-provided arrays are always as long as the contract
 * says (the fuzzer knows the sizes of its own objects), since no library can check those.
 *
 * Usage: fuzz_capi [-s SEED] [-n CALLS] [-t SECONDS]   (defaults: time-based seed, 100000 calls)
 * Prints the seed first, then "fuzz: N calls, K distinct functions; N passed, F failed". */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <parlops.h>

/* ---- PRNG (xorshift64*) */
static uint64_t rs = 1;
static uint64_t rnd(void) {
  rs ^= rs >> 12;
  rs ^= rs << 25;
  rs ^= rs >> 27;
  return rs * 0x2545F4914F6CDD1Dull;
}
static int chance(int pct) { return (int)(rnd() % 100) < pct; }
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

/* ---- results */
static long calls = 0, passed = 0, failed_n = 0, internal_n = 0;
static FILE *report; /* the real stderr while stdout/stderr are redirected */
static const char *fname = "";
#define MAXF 256
static const char *fnames[MAXF];
static long fcount[MAXF], fok[MAXF];
static int verbose = 0;
static const char *skip = NULL; /* comma-separated functions not to call (-x) */

static void fail(const char *what, int st) {
  failed_n++;
  if (failed_n <= 50) {
    const char *m = parlops_last_error();
    fprintf(report, "FAILED %s (call %ld): %s; status %d; message: %s\n", fname, calls, what, st, m ? m : "(null)");
    fflush(report);
  }
}

/* ---- outputs pre-filled with a sentinel, checked after a failure */
#define MAXOUT 8
static void *out_p[MAXOUT];
static size_t out_n[MAXOUT];
static int nout;
static void *out_reg(void *p, size_t n) {
  memset(p, 0xA5, n);
  out_p[nout] = p;
  out_n[nout] = n;
  nout++;
  return p;
}
/* an output pointer: usually the sentinel-filled variable, sometimes NULL */
#define OUT(var) (chance(8) ? NULL : out_reg(&(var), sizeof(var)))
static int outs_untouched(void) {
  for (int i = 0; i < nout; i++) {
    unsigned char *b = out_p[i];
    for (size_t j = 0; j < out_n[i]; j++)
      if (b[j] != 0xA5) return 0;
  }
  return 1;
}
static int is_sentinel_ptr(const void *p) {
  uintptr_t v;
  memcpy(&v, &p, sizeof v);
  return v == (uintptr_t)0xA5A5A5A5A5A5A5A5ull;
}

/* ---- handle pools */
enum { COMM, LAYOUT, VEC, OP, SOLVER, HOPT, OPTS, PROX, NT };
#define POOL 10
static void *pool[NT][POOL];
static int opcost[POOL];
#define NDEAD 32
static void *dead[NT][NDEAD];
static long dead_seq[NT][NDEAD];
static long destroys;              /* handles destroyed so far (parlops quarantines the last 4096) */
static uint64_t junk[64];          /* memory parlops never handed out */
static int bad_handle;             /* this call was given a stale, wrong-type or foreign handle */

/* a call that takes longer than the watchdog is a hang: say which */
static int report_fd = 2;
static void on_alarm(int sig) {
  (void)sig;
  char msg[200];
  int n = snprintf(msg, sizeof msg, "FAILED: call %ld (%s) still running after the watchdog (hang)\n", calls, fname);
  if (write(report_fd, msg, (size_t)n) < 0) _exit(4);
  _exit(3);
}

static char out_path[64] = "";
static void on_crash(int sig) {
  char msg[300];
  int n = snprintf(msg, sizeof msg, "FAILED: call %ld (%s) crashed with signal %d (parlops' own output is in %s)\n", calls,
                   fname, sig, out_path);
  if (write(report_fd, msg, (size_t)n) < 0) _exit(4);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void note_dead(int t, void *h) {
  int i = (int)below(NDEAD);
  dead[t][i] = h;
  dead_seq[t][i] = destroys++;
}

/* A handle argument of type t. */
static void *pick(int t) {
  int r = (int)below(100);
  if (r < 72) return pool[t][t == COMM && chance(70) ? 0 : below(POOL)];
  if (r < 78) return NULL;
  if (r < 86) {
    int i = (int)below(NDEAD);
    if (dead[t][i] && destroys - dead_seq[t][i] < 3000) {
      bad_handle = 1;
      return dead[t][i];
    }
    return pool[t][below(POOL)];
  }
  if (r < 95) {
    int u = (int)((t + 1 + below(NT - 1)) % NT);
    void *h = pool[u][below(POOL)];
    if (h) bad_handle = 1;
    return h;
  }
  bad_handle = 1;
  return &junk[below(56)];
}
#define PC() ((parlops_comm *)pick(COMM))
#define PL() ((parlops_layout *)pick(LAYOUT))
#define PV() ((parlops_vec *)pick(VEC))
#define PO() ((parlops_op *)pick(OP))
#define PS() ((parlops_solver *)pick(SOLVER))
#define PH() ((parlops_hypre_options *)pick(HOPT))
#define PX() ((parlops_options *)pick(OPTS))
#define PP() ((parlops_prox *)pick(PROX))

static void destroy_any(int t, void *h) {
  parlops_status st = PARLOPS_OK;
  switch (t) {
  case COMM: st = parlops_comm_destroy((parlops_comm **)&h); break;
  case LAYOUT: st = parlops_layout_destroy((parlops_layout **)&h); break;
  case VEC: st = parlops_vec_destroy((parlops_vec **)&h); break;
  case OP: st = parlops_op_destroy((parlops_op **)&h); break;
  case SOLVER: st = parlops_solver_destroy((parlops_solver **)&h); break;
  case HOPT: st = parlops_hypre_options_destroy((parlops_hypre_options **)&h); break;
  case OPTS: st = parlops_options_destroy((parlops_options **)&h); break;
  case PROX: st = parlops_prox_destroy((parlops_prox **)&h); break;
  }
  if (st != PARLOPS_OK) fail("destroying a pool handle", st);
}

/* Size of a layout/vector/operator (-1 when it cannot be asked). */
static int64_t lay_len(const parlops_layout *l) {
  int64_t n = -1;
  if (parlops_layout_global_len(l, &n) != PARLOPS_OK) return -1;
  return n;
}
static int64_t lay_local(const parlops_layout *l) {
  int64_t n = 0;
  if (parlops_layout_local_range(l, NULL, &n) != PARLOPS_OK) return 0;
  return n;
}

/* Keep a new handle (in a random slot, destroying its occupant) if it is small enough to work with. */
#define MAXN 256
static void adopt(int t, void *h, int cost) {
  if (h == NULL || is_sentinel_ptr(h)) {
    fail("success without a handle", 0);
    return;
  }
  int keep = 1;
  if (t == LAYOUT) {
    int64_t n = lay_len(h);
    keep = n >= 0 && n <= MAXN;
  } else if (t == VEC) {
    int64_t n = -1;
    keep = parlops_vec_local_array(h, NULL, &n) == PARLOPS_OK && n >= 0 && n <= MAXN;
  } else if (t == OP) {
    int64_t r = -1, c = -1;
    keep = parlops_op_size(h, &r, &c) == PARLOPS_OK && r >= 0 && c >= 0 && r <= MAXN && c <= MAXN && cost <= 32;
  }
  if (!keep) {
    destroy_any(t, h);
    note_dead(t, h);
    return;
  }
  int i = t == COMM && pool[COMM][0] == NULL ? 0 : t == COMM ? 1 + (int)below(POOL - 1) : (int)below(POOL);
  if (pool[t][i]) {
    destroy_any(t, pool[t][i]);
    note_dead(t, pool[t][i]);
  }
  pool[t][i] = h;
  if (t == OP) opcost[i] = cost;
}
static int cost_of(const void *op) {
  for (int i = 0; i < POOL; i++)
    if (pool[OP][i] == op) return opcost[i];
  return 1;
}

static double *inbuf;
/* A live pool operator and vectors that fit it (x in its domain, y in its range), or 0. The vectors
 * are made outside the count and must be released with unmatch(). */
static parlops_vec *mx, *my;
static parlops_op *ma;
static int match(void) {
  ma = pool[OP][below(POOL)];
  mx = my = NULL;
  if (!ma || parlops_op_create_vecs(ma, &mx, &my) != PARLOPS_OK) return 0;
  parlops_vec_copy_from_host(mx, inbuf);
  parlops_vec_copy_from_host(my, inbuf + 7);
  return 1;
}
static long destroys;
static void unmatch(void) {
  parlops_vec_destroy(&mx);
  parlops_vec_destroy(&my);
  destroys += 2;
}

/* ---- argument values */
static int64_t size_v(void) {
  static const int64_t big[] = {(int64_t)1 << 40, -1, -7, INT64_MAX, INT64_MIN, (int64_t)1 << 62};
  if (chance(75)) return (int64_t)below(17);
  return big[below(sizeof big / sizeof *big)];
}
static int int_v(void) {
  static const int v[] = {0, 1, 2, 3, -1, -2, INT_MAX, INT_MIN, 7};
  return v[below(sizeof v / sizeof *v)];
}
static int enum_v(int n) {
  if (chance(85)) return (int)below((uint64_t)n);
  static const int v[] = {-1, 99, INT_MAX, INT_MIN};
  return chance(50) ? n : v[below(4)];
}
static double dbl_v(void) {
  static const double v[] = {0.0, 1.0, -1.0, 0.5, 2.5, 1e-12, 1e300, -1e300, 1e-310};
  int r = (int)below(100);
  if (r < 8) return NAN;
  if (r < 14) return INFINITY;
  if (r < 18) return -INFINITY;
  return v[below(sizeof v / sizeof *v)];
}
static parlops_scalar scal_v(void) {
  parlops_scalar s = {dbl_v(), chance(70) ? 0.0 : dbl_v()};
  return s;
}
static int dtype_v(void) { return enum_v(4); }
static int mem_v(void) { return chance(90) ? PARLOPS_MEMORY_HOST : enum_v(2); }
static int esize(int dt) { return dt == PARLOPS_F32 ? 4 : dt == PARLOPS_C128 ? 16 : 8; }

/* ---- buffers: inputs are random doubles (some NaN), large enough for every pool object */
#define INBYTES (MAXN * MAXN * 16 + 4096)
static unsigned char outbuf[MAXN * 16 + 64];
#define ARENA 4096
static void *arena[ARENA];
static int narena;
/* Memory that must outlive an object (wrapped arrays, shell contexts): kept until the end. */
static void *keep_alloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (narena < ARENA) arena[narena++] = p;
  /* beyond the arena: leaked on purpose (still reachable for valgrind through nothing; small) */
  return p;
}

/* an option name: valid ones (in any spelling), unknown ones, NULL, too long, not UTF-8 */
/* run-time options texts (no -ksp_monitor/-ksp_view: they would print at every solve) */
static const char *options_text(void) {
  static char longtext[600];
  static const char *texts[] = {"-ksp_type gmres", "-ksp_rtol 1e-3 -ksp_max_it 5", "-pc_type jacobi", "-ksp_type nosuch",
                                "-ksp_rtol abc", "junk -ksp_type cg", "-a 'unclosed", "", "-pc_type none",
                                "-pc_type hypre -pc_hypre_boomeramg_coarsen_type HMIS", "-u_ksp_type cg -u_ksp_atol 0",
                                "-pc_type bjacobi -sub_pc_type icc", "-ksp_gmres_restart 0", "-ksp_pc_side left",
                                "-pc_type chebyshev -pc_chebyshev_degree 2", "\xff\xfe", "-ksp_norm_type natural",
                                "-ksp_tyep cg", "-options_left no"};
  if (chance(5)) return NULL;
  if (chance(3)) {
    memset(longtext, '-', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = 0;
    return longtext;
  }
  return texts[below(sizeof texts / sizeof *texts)];
}

static const char *option_name(void) {
  static char longname[400];
  static const char *names[] = {"PMaxElmts", "strong_threshold", "Nodal", "InterpVecVariant", "NumFunctions",
                                "CycleRelaxTypeCoarse", "TruncFactor", "RELAXWT", "DofOrdering", "no_such", "",
                                "\xff\xfe", "MaxLevels", "InterpRefine"};
  if (chance(5)) return NULL;
  if (chance(3)) {
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    return longname;
  }
  return names[below(sizeof names / sizeof *names)];
}

/* ---- shell operator callbacks (sometimes failing) */
typedef struct {
  uint64_t magic;
  int64_t rows, cols;
  int es;
  int destroyed;
} shell_ctx;
#define MAGIC 0x5348454c4cull
static long ctx_errors = 0, ctx_made = 0, ctx_destroyed = 0;
static int shell_apply(shell_ctx *c, const void *x, void *y, int64_t ny, int64_t nx) {
  if (c->magic != MAGIC || c->destroyed) ctx_errors++;
  if (chance(5)) return 3;
  if (chance(3)) { /* a failing parlops call inside a callback: the outer call's message must win */
    double nrm;
    (void)parlops_vec_norm(NULL, PARLOPS_NORM_2, 2.0, &nrm);
  }
  memset(y, 0, (size_t)(ny * c->es));
  int64_t n = nx < ny ? nx : ny;
  memcpy(y, x, (size_t)(n * c->es));
  return 0;
}
static int shell_fwd(void *ctx, const void *x, void *y) {
  shell_ctx *c = ctx;
  return shell_apply(c, x, y, c->rows, c->cols);
}
static int shell_adj(void *ctx, const void *y, void *x) {
  shell_ctx *c = ctx;
  return shell_apply(c, y, x, c->cols, c->rows);
}
static int shell_diag(void *ctx, void *d) {
  shell_ctx *c = ctx;
  if (c->magic != MAGIC || c->destroyed) ctx_errors++;
  if (chance(5)) return 4;
  memset(d, 0, (size_t)(c->rows * c->es));
  if (c->es == 4 || c->es == 8) /* f32 and f64 get ones (c64's entries then some non-zero value) */
    for (int64_t i = 0; i < c->rows; i++) {
      if (c->es == 8) ((double *)d)[i] = 1.0;
      else ((float *)d)[i] = 1.0f;
    }
  return 0;
}
/* a proximal operator's callbacks: y = x (the prox of 0), the value 1, the gradient x; sometimes failing */
static int prox_cb(void *ctx, double tau, const void *x, void *y) {
  (void)tau;
  shell_ctx *c = ctx;
  return shell_apply(c, x, y, c->rows, c->rows);
}
static int prox_value_cb(void *ctx, const void *x, double *v) {
  shell_ctx *c = ctx;
  (void)x;
  if (c->magic != MAGIC || c->destroyed) ctx_errors++;
  *v = 1.0;
  return chance(5) ? 2 : 0;
}
static int prox_grad_cb(void *ctx, const void *x, void *g) {
  shell_ctx *c = ctx;
  return shell_apply(c, x, g, c->rows, c->rows);
}
static void shell_free(void *ctx) {
  shell_ctx *c = ctx;
  if (c->magic != MAGIC || c->destroyed) ctx_errors++;
  c->destroyed = 1;
  ctx_destroyed++;
}
static int monitor(void *ctx, int64_t it, double r) {
  (void)ctx;
  (void)r;
  return it >= 60 || chance(2);
}

/* iterate monitor: reads the lent vectors (a collective norm: every rank is in the callback), and
 * answers continue, stop, converged or an unnamed value (a stop); stops by iteration 60 */
static int monitor_iterate(void *ctx, int64_t it, double r, const parlops_vec *x, const parlops_vec *res) {
  (void)ctx;
  (void)r;
  double nx = 0, nr = 0;
  if (parlops_vec_norm(x, PARLOPS_NORM_2, 0.0, &nx) != PARLOPS_OK || parlops_vec_norm(res, PARLOPS_NORM_2, 0.0, &nr) != PARLOPS_OK)
    ctx_errors++;
  if (it >= 60 || chance(2)) return PARLOPS_MONITOR_STOP;
  return chance(5) ? PARLOPS_MONITOR_CONVERGED : (chance(2) ? 7 : PARLOPS_MONITOR_CONTINUE);
}

/* ---- CSR arrays for `rows` (this rank's rows) x `cols` (global columns), sometimes corrupted */
typedef struct {
  void *ptr, *idx, *val;
} csr;
static csr make_csr(int64_t r, int64_t c, int it, int es, int wrap) {
  int64_t cap = 4 * r + 8;
  size_t isz = it == PARLOPS_INDEX_I32 ? 4 : 8;
  csr m;
  m.ptr = wrap ? keep_alloc((size_t)(r + 1) * isz) : calloc((size_t)(r + 1), isz);
  m.idx = wrap ? keep_alloc((size_t)cap * isz) : calloc((size_t)cap, isz);
  m.val = wrap ? keep_alloc((size_t)cap * (size_t)es) : calloc((size_t)cap, (size_t)es);
  memcpy(m.val, inbuf, (size_t)cap * (size_t)es);
  int64_t nnz = 0;
  int64_t *p64 = m.ptr, *i64 = m.idx;
  int32_t *p32 = m.ptr, *i32 = m.idx;
#define SETP(k, v) (isz == 4 ? (void)(p32[k] = (int32_t)(v)) : (void)(p64[k] = (v)))
#define SETI(k, v) (isz == 4 ? (void)(i32[k] = (int32_t)(v)) : (void)(i64[k] = (v)))
  SETP(0, 0);
  for (int64_t i = 0; i < r; i++) {
    int64_t col = (int64_t)below(3);
    for (int k = 0; k < 3 && col < c && nnz < cap; k++) {
      SETI(nnz, col);
      nnz++;
      col += 1 + (int64_t)below(3);
    }
    SETP(i + 1, nnz);
  }
  if (chance(30)) { /* corrupt: never claims more entries than the arrays hold */
    int64_t bad[] = {-1, c, c + 5, INT32_MAX, -2};
    if (nnz > 0 && chance(50)) SETI(below((uint64_t)nnz), bad[below(5)]);
    else if (r > 0) SETP(below((uint64_t)r), bad[below(5)] < 0 ? -1 : cap);
    else SETP(0, 1);
  }
  return m;
}
static void free_csr(csr m) {
  free(m.ptr);
  free(m.idx);
  free(m.val);
}

/* ---- one random call */
static int new_handle_ok(parlops_status st, void *h) { return st == PARLOPS_OK && h != NULL; }
static int dry_run; /* do_call only names case k */
#define CASE(fn) \
  case __COUNTER__: \
    fname = #fn; \
    if (dry_run) return 0;
static int do_call(int k) {
  parlops_status st = PARLOPS_OK;
  int has_status = 1;
  void *h1, *h2;
  int64_t i64a, i64b;
  int ia, ib;
  double d1;
  bool bo;
  uint64_t u64;
  parlops_scalar sc;
  parlops_solve_info info;
  const void *cp1, *cp2;
  const double *cdp;
  void *vp;
  switch (k) {
    /* ---- library-wide */
    CASE(parlops_status_string) {
      has_status = 0;
      const char *s = parlops_status_string(chance(50) ? (int)below(20) : int_v());
      if (s == NULL) fail("NULL status string", 0);
      break;
    }
    CASE(parlops_last_error) {
      has_status = 0;
      if (parlops_last_error() == NULL) fail("NULL last error", 0);
      break;
    }
    CASE(parlops_version) st = parlops_version(OUT(ia), OUT(ib), chance(50) ? NULL : &ia); break;
    CASE(parlops_check_version) st = parlops_check_version(int_v(), int_v(), int_v()); break;
    CASE(parlops_init) st = parlops_init(NULL, NULL); break;
    CASE(parlops_finalize) st = parlops_finalize(); break; /* MPI was started by us: a no-op */
    CASE(parlops_config_report) {
      size_t len = chance(30) ? 0 : below(200);
      size_t need;
      char *buf = chance(10) ? NULL : (char *)out_reg(outbuf, 256);
      st = parlops_config_report(chance(70) ? NULL : PC(), buf, len, OUT(need));
      break;
    }
    /* ---- communicators */
    CASE(parlops_comm_create) {
      MPI_Comm cs[] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL};
      st = parlops_comm_create(cs[below(3)], OUT(h1));
      if (new_handle_ok(st, h1)) adopt(COMM, h1, 1);
      break;
    }
    CASE(parlops_comm_create_f) {
      MPI_Fint fs[] = {MPI_Comm_c2f(MPI_COMM_WORLD), MPI_Comm_c2f(MPI_COMM_SELF), MPI_Comm_c2f(MPI_COMM_NULL), -1, 12345, INT_MAX};
      st = parlops_comm_create_f(fs[below(6)], OUT(h1));
      if (new_handle_ok(st, h1)) adopt(COMM, h1, 1);
      break;
    }
    CASE(parlops_comm_create_nccl) {
      st = parlops_comm_create_nccl(PC(), int_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(COMM, h1, 1);
      break;
    }
    CASE(parlops_comm_wrap_nccl) {
      st = parlops_comm_wrap_nccl(PC(), NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(COMM, h1, 1);
      break;
    }
    CASE(parlops_comm_rank) st = parlops_comm_rank(PC(), OUT(ia)); break;
    CASE(parlops_comm_size) st = parlops_comm_size(PC(), OUT(ia)); break;
    CASE(parlops_comm_reduction_count) st = parlops_comm_reduction_count(PC(), OUT(u64)); break;
    /* ---- layouts */
    CASE(parlops_layout_create) {
      st = parlops_layout_create(PC(), enum_v(3), chance(20) ? -1 : size_v(), chance(60) ? -1 : size_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(LAYOUT, h1, 1);
      break;
    }
    CASE(parlops_layout_create_nd) {
      int nd = chance(85) ? (int)below(5) : int_v();
      int64_t shape[8];
      for (int i = 0; i < 8; i++) shape[i] = chance(85) ? (int64_t)below(7) : size_v();
      const int64_t *sp = nd > 8 ? NULL : chance(5) ? NULL : shape;
      st = parlops_layout_create_nd(PC(), enum_v(3), nd, sp, chance(80) ? 0 : int_v(), chance(70) ? -1 : size_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(LAYOUT, h1, 1);
      break;
    }
    CASE(parlops_layout_shape) {
      int64_t shape[8];
      int max = chance(80) ? (int)below(9) : -1;
      st = parlops_layout_shape(PL(), OUT(ia), chance(20) ? NULL : (int64_t *)out_reg(shape, sizeof shape), max);
      break;
    }
    CASE(parlops_layout_global_len) st = parlops_layout_global_len(PL(), OUT(i64a)); break;
    CASE(parlops_layout_local_range) st = parlops_layout_local_range(PL(), OUT(i64a), OUT(i64b)); break;
    CASE(parlops_layout_rank_range) st = parlops_layout_rank_range(PL(), int_v(), OUT(i64a), OUT(i64b)); break;
    CASE(parlops_layout_partition) st = parlops_layout_partition(PL(), OUT(ia)); break;
    CASE(parlops_layout_equal) st = parlops_layout_equal(PL(), PL(), OUT(bo)); break;
    /* ---- destroy: a pool handle, or whatever pick() gives */
    CASE(parlops_comm_destroy) goto destroy;
    CASE(parlops_layout_destroy) goto destroy;
    CASE(parlops_vec_destroy) goto destroy;
    CASE(parlops_op_destroy) goto destroy;
    CASE(parlops_solver_destroy) goto destroy;
    /* ---- vectors */
    CASE(parlops_vec_create) {
      st = parlops_vec_create(PL(), dtype_v(), mem_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(VEC, h1, 1);
      break;
    }
    CASE(parlops_vec_create_with_array) {
      void *data = chance(5) ? NULL : keep_alloc(MAXN * 16);
      st = parlops_vec_create_with_array(PL(), dtype_v(), mem_v(), data, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(VEC, h1, 1);
      break;
    }
    CASE(parlops_vec_place_array) st = parlops_vec_place_array(PV(), chance(5) ? NULL : keep_alloc(MAXN * 16)); break;
    CASE(parlops_vec_reset_array) st = parlops_vec_reset_array(PV()); break;
    CASE(parlops_vec_duplicate) {
      st = parlops_vec_duplicate(PV(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(VEC, h1, 1);
      break;
    }
    CASE(parlops_vec_local_array) st = parlops_vec_local_array(PV(), OUT(vp), OUT(i64a)); break;
    CASE(parlops_vec_set_stream) st = parlops_vec_set_stream(PV(), NULL); break;
    CASE(parlops_vec_copy_to_host) st = parlops_vec_copy_to_host(PV(), chance(5) ? NULL : out_reg(outbuf, MAXN * 16)); break;
    CASE(parlops_vec_copy_from_host) st = parlops_vec_copy_from_host(PV(), chance(5) ? NULL : inbuf); break;
    CASE(parlops_vec_to_memory) {
      st = parlops_vec_to_memory(PV(), mem_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(VEC, h1, 1);
      break;
    }
    CASE(parlops_vec_layout) {
      st = parlops_vec_layout(PV(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(LAYOUT, h1, 1);
      break;
    }
    CASE(parlops_vec_dtype) st = parlops_vec_dtype(PV(), OUT(ia)); break;
    CASE(parlops_vec_memory) st = parlops_vec_memory(PV(), OUT(ia)); break;
    CASE(parlops_vec_copy) st = parlops_vec_copy(PV(), PV()); break;
    CASE(parlops_vec_fill) st = parlops_vec_fill(PV(), scal_v()); break;
    CASE(parlops_vec_scale) st = parlops_vec_scale(PV(), scal_v()); break;
    CASE(parlops_vec_conj) st = parlops_vec_conj(PV()); break;
    CASE(parlops_vec_axpy) st = parlops_vec_axpy(PV(), scal_v(), PV()); break;
    CASE(parlops_vec_axpby) st = parlops_vec_axpby(PV(), scal_v(), PV(), scal_v()); break;
    CASE(parlops_vec_waxpy) st = parlops_vec_waxpy(PV(), scal_v(), PV(), PV()); break;
    CASE(parlops_vec_pointwise_mult) st = parlops_vec_pointwise_mult(PV(), PV(), PV()); break;
    CASE(parlops_vec_dot) st = parlops_vec_dot(PV(), PV(), OUT(sc)); break;
    CASE(parlops_vec_norm) st = parlops_vec_norm(PV(), enum_v(6), dbl_v(), OUT(d1)); break;
    CASE(parlops_vec_gather) {
      int roots[] = {0, 0, -1, 1, -2, INT_MAX};
      st = parlops_vec_gather(PV(), roots[below(6)], chance(5) ? NULL : out_reg(outbuf, MAXN * 16));
      break;
    }
    CASE(parlops_vec_scatter) {
      int roots[] = {0, 0, -1, 1, INT_MIN};
      st = parlops_vec_scatter(PV(), roots[below(5)], chance(5) ? NULL : inbuf);
      break;
    }
    CASE(parlops_vec_redistribute) {
      st = parlops_vec_redistribute(PV(), PL(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(VEC, h1, 1);
      break;
    }
    CASE(parlops_vec_assemble) st = parlops_vec_assemble(PV()); break;
    /* ---- operators: application and queries */
    CASE(parlops_op_apply) {
      if (chance(50) && match()) {
        st = parlops_op_apply(ma, mx, my);
        unmatch();
      } else {
        st = parlops_op_apply(PO(), PV(), PV());
      }
      break;
    }
    CASE(parlops_op_apply_adjoint) {
      if (chance(50) && match()) {
        st = parlops_op_apply_adjoint(ma, my, mx);
        unmatch();
      } else {
        st = parlops_op_apply_adjoint(PO(), PV(), PV());
      }
      break;
    }
    CASE(parlops_op_multadd) {
      if (chance(50) && match()) {
        st = parlops_op_multadd(ma, scal_v(), mx, scal_v(), my);
        unmatch();
      } else {
        st = parlops_op_multadd(PO(), scal_v(), PV(), scal_v(), PV());
      }
      break;
    }
    CASE(parlops_op_multadd_adjoint) {
      if (chance(50) && match()) {
        st = parlops_op_multadd_adjoint(ma, scal_v(), my, scal_v(), mx);
        unmatch();
      } else {
        st = parlops_op_multadd_adjoint(PO(), scal_v(), PV(), scal_v(), PV());
      }
      break;
    }
    CASE(parlops_op_size) st = parlops_op_size(PO(), OUT(i64a), OUT(i64b)); break;
    CASE(parlops_op_dtype) st = parlops_op_dtype(PO(), OUT(ia)); break;
    CASE(parlops_op_layouts) {
      void *o1 = OUT(h1), *o2 = OUT(h2);
      st = parlops_op_layouts(PO(), o1, o2);
      if (st == PARLOPS_OK && o1) adopt(LAYOUT, h1, 1);
      if (st == PARLOPS_OK && o2) adopt(LAYOUT, h2, 1);
      break;
    }
    CASE(parlops_op_create_vecs) {
      void *o1 = OUT(h1), *o2 = OUT(h2);
      st = parlops_op_create_vecs(PO(), o1, o2);
      if (st == PARLOPS_OK && o1) adopt(VEC, h1, 1);
      if (st == PARLOPS_OK && o2) adopt(VEC, h2, 1);
      break;
    }
    CASE(parlops_op_diagonal) {
      if (chance(50) && match()) {
        st = parlops_op_diagonal(ma, my);
        unmatch();
      } else {
        st = parlops_op_diagonal(PO(), PV());
      }
      break;
    }
    CASE(parlops_op_dottest) st = parlops_op_dottest(PO(), rnd(), OUT(d1)); break;
    CASE(parlops_op_csr_arrays) st = parlops_op_csr_arrays(PO(), OUT(cp1), OUT(cp2)); break;
    CASE(parlops_op_csr_update_values) {
      /* counts of 0..16 mostly (a match with the matrix's reads at most 16 entries of inbuf) */
      int64_t n = size_v(), m = chance(50) ? 0 : size_v();
      st = parlops_op_csr_update_values(PO(), n, chance(10) ? NULL : inbuf, m, chance(50) ? NULL : inbuf + 3);
      break;
    }
    CASE(parlops_op_refresh) st = parlops_op_refresh(PO(), int_v(), chance(50) ? NULL : OUT(i64a)); break;
    CASE(parlops_op_setup_count) st = parlops_op_setup_count(PO(), OUT(i64a)); break;
    CASE(parlops_op_power_iteration) {
      parlops_op *a = PO();
      int64_t its[] = {-1, 0, 1, 10, 50};
      int64_t mi = (a == NULL || bad_handle) && chance(50) ? INT64_MAX : its[below(5)];
      st = parlops_op_power_iteration(a, mi, dbl_v(), rnd(), OUT(sc), OUT(i64a));
      break;
    }
    /* ---- operators: compositions */
    CASE(parlops_op_sum) {
      parlops_op *a = PO(), *b = PO();
      st = parlops_op_sum(a, b, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a) + cost_of(b));
      break;
    }
    CASE(parlops_op_difference) {
      parlops_op *a = PO(), *b = PO();
      st = parlops_op_difference(a, b, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a) + cost_of(b));
      break;
    }
    CASE(parlops_op_product) {
      parlops_op *a = PO(), *b = PO();
      st = parlops_op_product(a, b, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a) + cost_of(b));
      break;
    }
    CASE(parlops_op_scale) {
      parlops_op *a = PO();
      st = parlops_op_scale(a, scal_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a));
      break;
    }
    CASE(parlops_op_adjoint) {
      parlops_op *a = PO();
      st = parlops_op_adjoint(a, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a));
      break;
    }
    CASE(parlops_op_transpose) {
      parlops_op *a = PO();
      st = parlops_op_transpose(a, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a));
      break;
    }
    CASE(parlops_op_conj) {
      parlops_op *a = PO();
      st = parlops_op_conj(a, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a));
      break;
    }
    CASE(parlops_op_power) {
      parlops_op *a = PO();
      int64_t ks[] = {-1, 0, 1, 2, 3};
      int64_t kk = (a == NULL || bad_handle) && chance(50) ? size_v() : ks[below(5)];
      st = parlops_op_power(a, kk, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, cost_of(a) * (int)(kk > 1 ? kk : 1));
      break;
    }
    CASE(parlops_op_block_diag) goto block;
    CASE(parlops_op_vstack) goto block;
    CASE(parlops_op_hstack) goto block;
    CASE(parlops_op_stacked_block_diag) goto block;
    /* ---- operators: constructors */
    CASE(parlops_op_create_shell) {
      parlops_layout *r = PL(), *c = PL();
      int dt = dtype_v();
      shell_ctx *ctx = keep_alloc(sizeof *ctx);
      ctx->magic = MAGIC;
      ctx->rows = bad_handle ? 0 : lay_local(r);
      ctx->cols = bad_handle ? 0 : lay_local(c);
      ctx->es = esize(dt);
      st = parlops_op_create_shell(r, c, dt, mem_v(), ctx, chance(5) ? NULL : shell_fwd, chance(20) ? NULL : shell_adj,
                                   chance(20) ? NULL : shell_free, OUT(h1));
      if (new_handle_ok(st, h1)) {
        ctx_made++;
        adopt(OP, h1, 1);
      }
      break;
    }
    CASE(parlops_op_create_shell_with_diagonal) {
      parlops_layout *r = PL(), *c = chance(2) ? r : PL();
      int dt = dtype_v();
      shell_ctx *ctx = keep_alloc(sizeof *ctx);
      ctx->magic = MAGIC;
      ctx->rows = bad_handle ? 0 : lay_local(r);
      ctx->cols = bad_handle ? 0 : lay_local(c);
      ctx->es = esize(dt);
      st = parlops_op_create_shell_with_diagonal(r, c, dt, mem_v(), ctx, chance(5) ? NULL : shell_fwd,
                                                 chance(20) ? NULL : shell_adj, chance(5) ? NULL : shell_diag,
                                                 chance(20) ? NULL : shell_free, OUT(h1));
      if (new_handle_ok(st, h1)) {
        ctx_made++;
        adopt(OP, h1, 1);
      }
      break;
    }
    CASE(parlops_op_create_csr) {
      parlops_layout *r = PL(), *c = PL();
      int dt = dtype_v(), it = enum_v(2);
      int64_t nr = bad_handle ? 0 : lay_local(r), nc = bad_handle ? 0 : lay_len(c);
      csr m = make_csr(nr, nc < 0 ? 0 : nc, it == PARLOPS_INDEX_I32 ? it : PARLOPS_INDEX_I64, 16, 0);
      st = parlops_op_create_csr(r, c, dt, it, chance(3) ? NULL : m.ptr, chance(3) ? NULL : m.idx, chance(3) ? NULL : m.val, OUT(h1));
      free_csr(m);
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_create_parcsr) {
      parlops_layout *r = PL(), *c = PL();
      int dt = dtype_v(), it = enum_v(2), own = enum_v(2);
      int64_t nr = bad_handle ? 0 : lay_local(r), nc = bad_handle ? 0 : lay_local(c);
      int wrap = own == PARLOPS_WRAP;
      int itv = it == PARLOPS_INDEX_I32 ? it : PARLOPS_INDEX_I64;
      csr d = make_csr(nr, nc, itv, 16, wrap), o = make_csr(nr, 2, itv, 16, wrap);
      int64_t noffd = chance(70) ? 0 : chance(50) ? 2 : size_v();
      int64_t cmap[2] = {(int64_t)below(4), 5 + (int64_t)below(3)};
      int64_t ncmap = noffd >= 0 && noffd <= 2 ? noffd : 0;
      st = parlops_op_create_parcsr(r, c, dt, it, d.ptr, d.idx, d.val, ncmap ? o.ptr : NULL, ncmap ? o.idx : NULL,
                                    ncmap ? o.val : NULL, noffd, ncmap || (noffd <= 0 && chance(50)) ? cmap : NULL, own, OUT(h1));
      if (!wrap) {
        free_csr(d);
        free_csr(o);
      }
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_create_dense) {
      st = parlops_op_create_dense(PL(), PL(), dtype_v(), chance(5) ? NULL : inbuf, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_identity) {
      st = parlops_op_identity(PL(), dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_zero) {
      st = parlops_op_zero(PL(), PL(), dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_diagonal_matrix) {
      st = parlops_op_diagonal_matrix(PV(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_first_derivative) {
      st = parlops_op_first_derivative(PL(), chance(80) ? (int)below(3) : int_v(), dbl_v(), enum_v(3), chance(50), dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_second_derivative) {
      st = parlops_op_second_derivative(PL(), chance(80) ? (int)below(3) : int_v(), dbl_v(), enum_v(3), chance(50), dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_poisson) {
      int64_t d[4];
      for (int i = 0; i < 4; i++) d[i] = chance(80) ? (int64_t)below(9) : size_v();
      st = parlops_op_poisson(PL(), chance(80) ? 1 + (int)below(3) : int_v(), chance(10) ? NULL : d, dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_laplacian) {
      double w[8], s[8];
      for (int i = 0; i < 8; i++) w[i] = chance(90) ? 1.0 : dbl_v(), s[i] = chance(90) ? 1.0 : dbl_v();
      st = parlops_op_laplacian(PL(), chance(10) ? NULL : w, chance(10) ? NULL : s, dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_gradient) {
      double s[8];
      for (int i = 0; i < 8; i++) s[i] = chance(90) ? 1.0 : dbl_v();
      st = parlops_op_gradient(PL(), chance(10) ? NULL : s, enum_v(3), chance(50), dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_fft) {
      int ax[8];
      bool f1[8], f2[8];
      for (int i = 0; i < 8; i++) ax[i] = chance(85) ? (int)below(3) - 1 : int_v(), f1[i] = chance(30), f2[i] = chance(30);
      int na = chance(85) ? 1 + (int)below(3) : int_v();
      st = parlops_op_fft(PL(), na, chance(5) ? NULL : ax, chance(85) ? (int)below(2) : int_v(), chance(30),
                          chance(10) ? NULL : f1, chance(10) ? NULL : f2, dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_fredholm1) {
      int64_t nsl = size_v(), nx = size_v(), ny = size_v(), nz = size_v();
      int small = nsl >= 0 && nx >= 0 && ny >= 0 && nsl <= 16 && nx <= 16 && ny <= 16;
      st = parlops_op_fredholm1(PC(), dtype_v(), nsl, nx, ny, nz, small && chance(95) ? inbuf : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_nonstationary_convolve1d) {
      int64_t ihs[8], hsz = chance(80) ? 1 + 2 * (int64_t)below(4) : size_v(), nf = chance(80) ? 2 + (int64_t)below(6) : size_v();
      int64_t step = chance(85) ? 1 + (int64_t)below(3) : size_v();
      for (int i = 0; i < 8; i++) ihs[i] = (chance(95) ? i * step : size_v());
      int ok = nf >= 0 && nf <= 8 && hsz >= 0 && hsz <= 16;
      st = parlops_op_nonstationary_convolve1d(PL(), chance(85) ? (int)below(3) - 1 : int_v(), hsz, nf,
                                               ok && chance(95) ? inbuf : NULL, ok && chance(95) ? ihs : NULL, dtype_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_op_mdc) {
      int64_t nf = size_v(), ns = size_v(), nr = size_v(), nt = size_v(), nv = size_v();
      int small = nf >= 0 && ns >= 0 && nr >= 0 && nf <= 16 && ns <= 16 && nr <= 16;
      st = parlops_op_mdc(PC(), dtype_v(), nf, ns, nr, nt, nv, chance(90) ? 0.004 : dbl_v(), chance(90) ? 1.0 : dbl_v(),
                          chance(50), chance(30), chance(30), small && chance(95) ? inbuf : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_halo_block) {
      int nd = chance(85) ? (int)below(5) : int_v();
      int64_t dims[8], grid[8], start[8], shape[8];
      for (int i = 0; i < 8; i++) dims[i] = chance(85) ? (int64_t)below(9) : size_v(), grid[i] = chance(85) ? 1 : size_v();
      int ok = nd >= 0 && nd <= 8;
      st = parlops_halo_block(nd, ok ? dims : NULL, ok && chance(70) ? grid : NULL, chance(80) ? 1 : int_v(),
                              chance(80) ? 0 : int_v(), ok && chance(95) ? (int64_t *)out_reg(start, sizeof start) : NULL,
                              ok && chance(95) ? (int64_t *)out_reg(shape, sizeof shape) : NULL);
      break;
    }
    CASE(parlops_op_halo) {
      int nd = chance(85) ? (int)below(4) : int_v();
      int nh = chance(85) ? (int)below(7) : int_v();
      int64_t dims[8], grid[8], halo[8];
      for (int i = 0; i < 8; i++)
        dims[i] = chance(85) ? (int64_t)below(6) : size_v(), grid[i] = chance(85) ? 1 : size_v(),
        halo[i] = chance(85) ? (int64_t)below(3) : size_v();
      int ok = nd >= 0 && nd <= 8, okh = nh >= 0 && nh <= 8;
      st = parlops_op_halo(PC(), dtype_v(), nd, ok ? dims : NULL, ok && chance(70) ? grid : NULL, nh, okh ? halo : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    CASE(parlops_summa_tile) st = parlops_summa_tile(size_v(), int_v(), int_v(), OUT(i64a), OUT(i64b)); break;
    CASE(parlops_op_create_dense_summa) {
      int64_t n = size_v(), kk = size_v(), m = size_v();
      int small = n >= 0 && kk >= 0 && n <= 16 && kk <= 16;
      st = parlops_op_create_dense_summa(PC(), dtype_v(), n, kk, m, small && chance(95) ? inbuf : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 1);
      break;
    }
    /* ---- solvers */
    CASE(parlops_solver_create) {
      st = parlops_solver_create(PC(), enum_v(PARLOPS_METHOD_CG_DEFLATED + 1), OUT(h1));
      if (new_handle_ok(st, h1)) {
        parlops_solver_set_monitor(h1, monitor, NULL);
        adopt(SOLVER, h1, 1);
      }
      break;
    }
    CASE(parlops_solver_set_operator) st = parlops_solver_set_operator(PS(), PO()); break;
    CASE(parlops_solver_set_preconditioner) st = parlops_solver_set_preconditioner(PS(), PO()); break;
    CASE(parlops_solver_set_jacobi) st = parlops_solver_set_jacobi(PS()); break;
    CASE(parlops_solver_set_tolerances) st = parlops_solver_set_tolerances(PS(), dbl_v(), dbl_v(), dbl_v(), size_v()); break;
    CASE(parlops_solver_set_norm_type) st = parlops_solver_set_norm_type(PS(), enum_v(2)); break;
    CASE(parlops_solver_set_convergence_reference) st = parlops_solver_set_convergence_reference(PS(), enum_v(2)); break;
    CASE(parlops_solver_set_pc_side) st = parlops_solver_set_pc_side(PS(), enum_v(2)); break;
    CASE(parlops_solver_set_orthogonalization) st = parlops_solver_set_orthogonalization(PS(), enum_v(2)); break;
    CASE(parlops_solver_set_sum_order) st = parlops_solver_set_sum_order(PS(), enum_v(3)); break;
    CASE(parlops_solver_set_null_space) {
      /* as many handles as n says (a negative n reads none) */
      int k = chance(90) ? (int)below(4) : -1 - (int)below(5);
      const parlops_vec *nv[3] = {NULL, NULL, NULL};
      for (int i = 0; i < k; i++) nv[i] = PV();
      st = parlops_solver_set_null_space(PS(), chance(50), k, chance(5) ? NULL : nv);
      break;
    }
    CASE(parlops_vec_block_dot) {
      int nx = chance(90) ? (int)below(3) : -1, ny = chance(90) ? (int)below(3) : -1;
      const parlops_vec *xs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL};
      for (int i = 0; i < nx; i++) xs[i] = PV();
      for (int i = 0; i < ny; i++) ys[i] = PV();
      st = parlops_vec_block_dot(PC(), nx, chance(5) ? NULL : xs, ny, chance(5) ? NULL : ys,
                                 chance(5) ? NULL : out_reg(outbuf, 4 * 16));
      break;
    }
    CASE(parlops_vec_maxpy) {
      int k = chance(90) ? (int)below(3) : -1;
      const parlops_vec *xs[2] = {NULL, NULL};
      parlops_scalar a[2] = {scal_v(), scal_v()};
      for (int i = 0; i < k; i++) xs[i] = PV();
      st = parlops_vec_maxpy(PV(), k, chance(5) ? NULL : a, chance(5) ? NULL : xs);
      break;
    }
    CASE(parlops_vec_orthonormalize) {
      int k = chance(90) ? (int)below(3) : -1;
      parlops_vec *vs[2] = {NULL, NULL};
      for (int i = 0; i < k; i++) vs[i] = PV();
      st = parlops_vec_orthonormalize(PC(), k, chance(5) ? NULL : vs, chance(50) ? NULL : PO(),
                                      chance(30) ? NULL : (parlops_scalar *)out_reg(outbuf, 4 * 16));
      break;
    }
    CASE(parlops_eig_randomized) {
      int no = chance(90) ? 1 + (int)below(3) : -1, k = chance(90) ? (int)below(3) : -1;
      const parlops_vec *om[3] = {NULL, NULL, NULL};
      parlops_vec *us[2] = {NULL, NULL};
      for (int i = 0; i < no; i++) om[i] = PV();
      for (int i = 0; i < k; i++) us[i] = PV();
      int pencil = chance(30);
      st = parlops_eig_randomized(PO(), pencil ? PO() : NULL, pencil || chance(5) ? PO() : NULL, no, chance(5) ? NULL : om,
                                  (int)below(3), enum_v(2), k, chance(5) ? NULL : (double *)out_reg(outbuf, 2 * 8),
                                  chance(5) ? NULL : us);
      break;
    }
    CASE(parlops_eig_lanczos) {
      /* Ritz vectors half of the time: handles are picked only when passed */
      int k = chance(90) ? (int)below(3) : -1, with_vecs = chance(50);
      parlops_vec *vs[2] = {NULL, NULL};
      for (int i = 0; i < k && with_vecs; i++) vs[i] = PV();
      double res[2];
      int64_t steps = 0;
      st = parlops_eig_lanczos(PO(), PV(), chance(90) ? (int64_t)below(12) : size_v(), chance(80) ? 1e-8 : dbl_v(), k,
                               enum_v(2), chance(5) ? NULL : (double *)out_reg(outbuf, 2 * 8), chance(50) ? res : NULL,
                               with_vecs ? vs : NULL, chance(50) ? &steps : NULL);
      break;
    }
    CASE(parlops_eig_krylov_schur) {
      int k = chance(90) ? (int)below(3) : -1, with_vecs = chance(50);
      parlops_vec *vs[2] = {NULL, NULL};
      for (int i = 0; i < k && with_vecs; i++) vs[i] = PV();
      double res[2];
      int64_t prods = 0;
      st = parlops_eig_krylov_schur(PO(), chance(20) ? PO() : NULL, chance(30) ? PO() : NULL, chance(80) ? 0.5 : dbl_v(),
                                    PV(), k, chance(90) ? (int)below(12) : (int)size_v(),
                                    chance(90) ? (int64_t)below(40) : size_v(), chance(80) ? 1e-8 : dbl_v(), enum_v(3),
                                    NULL, NULL, chance(5) ? NULL : (double *)out_reg(outbuf, 2 * 8),
                                    chance(50) ? res : NULL, with_vecs ? vs : NULL, chance(50) ? &prods : NULL);
      break;
    }
    /* ---- proximal operators and solvers (iteration counts kept small: each runs in full) */
    CASE(parlops_prox_create_l1) {
      st = parlops_prox_create_l1(PL(), dtype_v(), chance(80) ? 0.5 : dbl_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(PROX, h1, 1);
      break;
    }
    CASE(parlops_prox_create_l2) {
      st = parlops_prox_create_l2(PL(), dtype_v(), chance(80) ? 1.0 : dbl_v(), chance(50) ? NULL : PV(),
                                  chance(50) ? NULL : PV(), chance(80) ? 0.3 : dbl_v(), chance(50), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(PROX, h1, 1);
      break;
    }
    CASE(parlops_prox_create_l21) {
      st = parlops_prox_create_l21(PL(), dtype_v(), chance(80) ? (int)below(4) : int_v(), chance(80) ? 0.5 : dbl_v(),
                                   OUT(h1));
      if (new_handle_ok(st, h1)) adopt(PROX, h1, 1);
      break;
    }
    CASE(parlops_prox_create_l2_op) {
      int64_t its[] = {-1, 0, 1, 3};
      int method = chance(80) ? (chance(50) ? PARLOPS_METHOD_CG : PARLOPS_METHOD_CGLS) : int_v();
      st = parlops_prox_create_l2_op(PO(), chance(80) ? 1.0 : dbl_v(), chance(5) ? NULL : PV(), chance(50) ? NULL : PV(),
                                     chance(80) ? 0.3 : dbl_v(), chance(50), method, its[below(4)],
                                     chance(80) ? 1e-4 : dbl_v(), chance(50) ? NULL : PV(), chance(50), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(PROX, h1, 1);
      break;
    }
    CASE(parlops_prox_create_shell) {
      parlops_layout *l = PL();
      int dt = dtype_v();
      shell_ctx *ctx = keep_alloc(sizeof *ctx);
      ctx->magic = MAGIC;
      ctx->rows = ctx->cols = bad_handle ? 0 : lay_local(l);
      ctx->es = esize(dt);
      st = parlops_prox_create_shell(l, dt, ctx, chance(5) ? NULL : prox_cb, chance(50) ? NULL : prox_cb,
                                     chance(30) ? NULL : prox_value_cb, chance(30) ? NULL : prox_grad_cb,
                                     chance(20) ? NULL : shell_free, OUT(h1));
      if (new_handle_ok(st, h1)) {
        ctx_made++;
        adopt(PROX, h1, 1);
      }
      break;
    }
    CASE(parlops_prox_destroy) goto destroy;
    CASE(parlops_prox_value) st = parlops_prox_value(PP(), PV(), OUT(d1)); break;
    CASE(parlops_prox_apply) st = parlops_prox_apply(PP(), chance(80) ? 0.5 : dbl_v(), PV(), PV()); break;
    CASE(parlops_prox_apply_dual) st = parlops_prox_apply_dual(PP(), chance(80) ? 0.5 : dbl_v(), PV(), PV()); break;
    CASE(parlops_prox_gradient) st = parlops_prox_gradient(PP(), PV(), PV()); break;
    CASE(parlops_primal_dual) {
      int64_t its[] = {-1, 0, 1, 3, 10};
      st = parlops_primal_dual(PP(), PP(), PO(), chance(50) ? NULL : PV(), chance(80) ? 0.5 : dbl_v(),
                               chance(80) ? 0.25 : dbl_v(), chance(80) ? 1.0 : dbl_v(), its[below(5)], chance(50), PV(),
                               PV());
      break;
    }
    CASE(parlops_admm_l2) {
      int64_t its[] = {-1, 0, 1, 3};
      st = parlops_admm_l2(PP(), PO(), PV(), PO(), chance(80) ? 0.25 : dbl_v(), its[below(4)], chance(50), chance(50),
                           its[below(4)], chance(80) ? 1e-4 : dbl_v(), PV(), PV());
      break;
    }
    CASE(parlops_proximal_gradient) {
      int64_t its[] = {-1, 0, 1, 3, 10};
      st = parlops_proximal_gradient(PP(), PP(), chance(80) ? 0.5 : dbl_v(), chance(80) ? 1.0 : dbl_v(),
                                     chance(80) ? 1.0 : dbl_v(), its[below(5)], chance(80) ? (int)below(3) : int_v(),
                                     chance(50) ? 0.0 : dbl_v(), PV(), chance(50) ? NULL : OUT(i64a));
      break;
    }
    CASE(parlops_op_low_rank) {
      int k = chance(90) ? (int)below(3) : -1;
      const parlops_vec *us[2] = {NULL, NULL};
      double d[2] = {dbl_v(), dbl_v()};
      for (int i = 0; i < k; i++) us[i] = PV();
      st = parlops_op_low_rank(PC(), k, chance(5) ? NULL : us, chance(5) ? NULL : d, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 2);
      break;
    }
    CASE(parlops_comm_split) {
      st = parlops_comm_split(PC(), chance(90) ? (int)below(3) : int_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(COMM, h1, 1);
      break;
    }
    CASE(parlops_vec_dot_groups) st = parlops_vec_dot_groups(PC(), PV(), PV(), OUT(sc)); break;
    CASE(parlops_vec_norm_groups) st = parlops_vec_norm_groups(PC(), PV(), enum_v(6), dbl_v(), OUT(d1)); break;
    CASE(parlops_layout_stack) {
      int k = chance(90) ? (int)below(3) : -1;
      const parlops_layout *ls[2] = {NULL, NULL};
      for (int i = 0; i < k; i++) ls[i] = PL();
      st = parlops_layout_stack(PC(), k, chance(5) ? NULL : ls, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(LAYOUT, h1, 1);
      break;
    }
    CASE(parlops_vec_stack_get) st = parlops_vec_stack_get(PV(), int_v(), PV()); break;
    CASE(parlops_vec_stack_set) st = parlops_vec_stack_set(PV(), int_v(), PV()); break;
    CASE(parlops_op_block) {
      int m = chance(90) ? 1 + (int)below(2) : int_v(), n = chance(90) ? 1 + (int)below(2) : int_v();
      const parlops_op *bs[4] = {NULL, NULL, NULL, NULL};
      int fits = m >= 1 && n >= 1 && (long long)m * n <= 4; /* else a NULL array (m * n may overflow int) */
      for (int i = 0; fits && i < m * n; i++) bs[i] = chance(30) ? NULL : PO();
      st = parlops_op_block(PC(), dtype_v(), m, n, fits ? bs : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    CASE(parlops_op_block_lower_triangular) {
      int k = chance(90) ? (int)below(3) : -1;
      const parlops_op *ds[2] = {NULL, NULL};
      for (int i = 0; i < k; i++) ds[i] = PO();
      st = parlops_op_block_lower_triangular(PO(), k, chance(5) ? NULL : ds, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    CASE(parlops_vec_set_random) st = parlops_vec_set_random(PV(), enum_v(3), rnd()); break;
    CASE(parlops_solver_set_compute_eigenvalues) st = parlops_solver_set_compute_eigenvalues(PS(), chance(50)); break;
    CASE(parlops_solver_eigenvalue_estimates) {
      double lo = 0, hi = 0;
      st = parlops_solver_eigenvalue_estimates(PS(), chance(90) ? &lo : NULL, chance(90) ? &hi : NULL);
      break;
    }
    CASE(parlops_solver_set_initial_guess_nonzero) st = parlops_solver_set_initial_guess_nonzero(PS(), chance(50)); break;
    CASE(parlops_solver_set_recycle) st = parlops_solver_set_recycle(PS(), chance(50) ? (int64_t)below(40) - 2 : size_v()); break;
    CASE(parlops_solver_set_restart) st = parlops_solver_set_restart(PS(), chance(50) ? (int64_t)below(40) : size_v()); break;
    CASE(parlops_solver_set_damping) st = parlops_solver_set_damping(PS(), dbl_v()); break;
    CASE(parlops_solver_set_richardson_scale) st = parlops_solver_set_richardson_scale(PS(), dbl_v()); break;
    CASE(parlops_solver_set_sparsity) st = parlops_solver_set_sparsity(PS(), enum_v(3), dbl_v(), dbl_v()); break;
    CASE(parlops_solver_set_cost_tolerances) {
      st = parlops_solver_set_cost_tolerances(PS(), chance(50) ? 0.0 : dbl_v(), chance(50) ? 0.0 : dbl_v());
      break;
    }
    CASE(parlops_solver_set_monitor) {
      /* a valid solver always keeps the (iteration-capping) monitor: solves stay short */
      parlops_solver *s = PS();
      int valid = s != NULL && !bad_handle;
      st = parlops_solver_set_monitor(s, valid || chance(50) ? monitor : NULL, NULL);
      break;
    }
    CASE(parlops_solver_set_monitor_iterate) {
      st = parlops_solver_set_monitor_iterate(PS(), chance(50) ? monitor_iterate : NULL, NULL);
      break;
    }
    CASE(parlops_solver_set_trust_region) st = parlops_solver_set_trust_region(PS(), chance(30) ? 0.0 : dbl_v()); break;
    CASE(parlops_solver_view) {
      size_t len = chance(20) ? 0 : below(256), need;
      char *buf = chance(10) ? NULL : (char *)out_reg(outbuf, 256);
      st = parlops_solver_view(PS(), buf, len, OUT(need));
      break;
    }
    CASE(parlops_solver_get_tolerances) {
      double r, a, d;
      int64_t m;
      st = parlops_solver_get_tolerances(PS(), chance(20) ? NULL : &r, chance(20) ? NULL : &a, chance(20) ? NULL : &d,
                                         chance(20) ? NULL : &m);
      break;
    }
    CASE(parlops_solver_set_timing) st = parlops_solver_set_timing(PS(), chance(50)); break;
    CASE(parlops_solver_log) {
      int64_t c, b;
      double sec, out;
      st = parlops_solver_log(PS(), chance(80) ? (int)below(9) : int_v(), chance(20) ? NULL : &c, chance(20) ? NULL : &sec,
                              chance(20) ? NULL : &out, chance(20) ? NULL : &b);
      break;
    }
    CASE(parlops_solver_log_view) {
      size_t len = chance(20) ? 0 : below(256), need;
      char *buf = chance(10) ? NULL : (char *)out_reg(outbuf, 256);
      st = parlops_solver_log_view(PS(), buf, len, OUT(need));
      break;
    }
    CASE(parlops_solver_set_pc_reuse) st = parlops_solver_set_pc_reuse(PS(), size_v(), chance(50) ? 0.0 : dbl_v()); break;
    CASE(parlops_solver_keep_history) st = parlops_solver_keep_history(PS(), chance(50)); break;
    CASE(parlops_solver_solve) {
      parlops_solver *sv = pool[SOLVER][below(POOL)];
      if (sv && chance(60) && match()) {
        parlops_solver_set_operator(sv, ma);
        st = parlops_solver_solve(sv, my, mx);
        unmatch();
      } else {
        st = parlops_solver_solve(PS(), PV(), PV());
      }
      break;
    }
    CASE(parlops_solver_solve_many) {
      parlops_solver *sv = pool[SOLVER][below(POOL)];
      int n = chance(90) ? (int)below(3) : -1;
      const parlops_vec *bs[2] = {NULL, NULL};
      parlops_vec *xs[2] = {NULL, NULL};
      if (sv && chance(60) && match()) {
        parlops_solver_set_operator(sv, ma);
        /* the first column matched, the second any vectors */
        /* (handles are drawn only for the entries the call reads: a bad handle must fail it) */
        bs[0] = my;
        xs[0] = mx;
        if (n == 2) {
          bs[1] = PV();
          xs[1] = PV();
        }
        st = parlops_solver_solve_many(sv, n, bs, xs);
        unmatch();
      } else {
        for (int i = 0; i < n; i++) {
          bs[i] = PV();
          xs[i] = PV();
        }
        st = parlops_solver_solve_many(PS(), n, chance(5) ? NULL : bs, chance(5) ? NULL : xs);
      }
      break;
    }
    CASE(parlops_solver_info_column) {
      parlops_solve_info inf;
      st = parlops_solver_info_column(PS(), chance(80) ? (int64_t)below(3) : int_v(), chance(10) ? NULL : &inf);
      break;
    }
    CASE(parlops_op_create_inverse) {
      /* each apply runs a solve: a few iterations at most (nested inverses multiply them), and the
         highest cost that is kept, so that no composition holds one */
      parlops_solver *s = PS();
      if (s != NULL && !bad_handle && chance(90)) parlops_solver_set_tolerances(s, 1e-3, 0.0, 1e5, (int64_t)below(6));
      st = parlops_op_create_inverse(s, chance(50), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 32);
      break;
    }
    CASE(parlops_amg_options_init) {
      parlops_amg_options o;
      st = parlops_amg_options_init(chance(90) ? &o : NULL);
      break;
    }
    CASE(parlops_op_create_block_jacobi) {
      st = parlops_op_create_block_jacobi(PO(), enum_v(3), chance(50) ? 1.0 : dbl_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 2);
      break;
    }
    CASE(parlops_op_create_chebyshev) {
      int64_t degs[] = {-1, 0, 1, 2, 5};
      int64_t dg = chance(90) ? degs[below(5)] : size_v();
      st = parlops_op_create_chebyshev(PO(), dg, chance(50) ? 0.0 : dbl_v(), chance(50) ? 0.0 : dbl_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 8);
      break;
    }
    CASE(parlops_op_create_boomeramg) {
      parlops_amg_options o;
      parlops_amg_options_init(&o);
      if (chance(50)) {
        o.num_functions = (int32_t)below(4) - 1;
        o.dof_ordering = enum_v(2);
        o.strong_threshold = dbl_v();
        o.max_levels = (int32_t)below(30) - 2;
      }
      st = parlops_op_create_boomeramg(PO(), chance(80) ? &o : NULL, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    /* ---- hypre's options by name */
    CASE(parlops_hypre_options_create) {
      st = parlops_hypre_options_create(chance(90) ? PARLOPS_HYPRE_BOOMERAMG : int_v(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(HOPT, h1, 1);
      break;
    }
    CASE(parlops_hypre_options_destroy) goto destroy;
    CASE(parlops_hypre_options_set_int) {
      st = parlops_hypre_options_set_int(PH(), option_name(), chance(70) ? (int64_t)below(12) : size_v());
      break;
    }
    CASE(parlops_hypre_options_set_real) {
      st = parlops_hypre_options_set_real(PH(), option_name(), chance(50) ? 0.25 * (double)below(6) : dbl_v());
      break;
    }
    CASE(parlops_hypre_options_set_amg) {
      parlops_amg_options o;
      parlops_amg_options_init(&o);
      if (chance(50)) {
        o.num_functions = (int32_t)below(4) - 1;
        o.coarsen_type = int_v();
        o.strong_threshold = dbl_v();
      }
      st = parlops_hypre_options_set_amg(PH(), chance(90) ? &o : NULL);
      break;
    }
    CASE(parlops_hypre_options_set_elasticity) st = parlops_hypre_options_set_elasticity(PH(), int_v()); break;
    CASE(parlops_hypre_options_describe) {
      size_t len = chance(30) ? 0 : below(200);
      size_t need;
      char *buf = chance(10) ? NULL : (char *)out_reg(outbuf, 256);
      st = parlops_hypre_options_describe(PH(), buf, len, OUT(need));
      break;
    }
    /* ---- run-time options */
    CASE(parlops_options_create) {
      st = parlops_options_create(PC(), OUT(h1));
      if (new_handle_ok(st, h1)) {
        adopt(OPTS, h1, 1);
        /* quiet when destroyed (unused options would be reported on rank 0: the fuzzer allows no output) */
        if (parlops_options_insert_string((parlops_options *)h1, "-options_left no") != PARLOPS_OK)
          fail("-options_left no refused", PARLOPS_ERR_INTERNAL);
      }
      break;
    }
    CASE(parlops_options_destroy) goto destroy;
    CASE(parlops_options_insert_string) st = parlops_options_insert_string(PX(), options_text()); break;
    CASE(parlops_options_insert_env) {
      static const char *vars[] = {"PARLOPS_OPTIONS", "PARLOPS_FUZZ_NO_SUCH_VARIABLE", "", "PATH"};
      st = parlops_options_insert_env(PX(), chance(40) ? NULL : vars[below(4)]);
      break;
    }
    CASE(parlops_options_insert_args) {
      char a0[] = "prog", a2[] = "-ksp_rtol", a3[] = "1e-3";
      char a1[700];
      const char *t = options_text();
      snprintf(a1, sizeof a1, "%s", t ? t : "");
      char *argv[5] = {a0, a1, a2, a3, NULL};
      int argc = chance(5) ? -1 : (int)below(5);
      st = parlops_options_insert_args(PX(), argc, chance(5) ? NULL : (char *const *)argv);
      break;
    }
    CASE(parlops_options_left) {
      size_t len = chance(20) ? 0 : below(256), need;
      char *buf = chance(10) ? NULL : (char *)out_reg(outbuf, 256);
      st = parlops_options_left(PX(), buf, len, OUT(need));
      break;
    }
    CASE(parlops_solver_set_from_options) {
      static const char *prefixes[] = {"", "u_", "bad-prefix", "\xff"};
      st = parlops_solver_set_from_options(PS(), PX(), chance(40) ? NULL : prefixes[below(4)]);
      break;
    }
    CASE(parlops_rigid_body_modes) {
      int dim = chance(80) ? 2 + (int)below(2) : int_v();
      int64_t nodes = chance(80) ? (int64_t)below(20) : size_v();
      double *modes = chance(10) ? NULL : (double *)out_reg(outbuf, 3 * 3 * 20 * sizeof(double));
      st = parlops_rigid_body_modes(dim, nodes > 20 ? 20 : nodes, chance(10) ? NULL : inbuf, enum_v(2), modes);
      break;
    }
    CASE(parlops_op_create_boomeramg_with) {
      int64_t nv = chance(70) ? 0 : chance(80) ? (int64_t)below(4) : size_v();
      st = parlops_op_create_boomeramg_with(PO(), chance(80) ? PH() : NULL, nv, chance(10) ? NULL : inbuf, OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    CASE(parlops_op_create_ams) {
      const parlops_op *pis[3] = {NULL, NULL, NULL};
      int npi = chance(70) ? 0 : chance(80) ? (int)below(4) : int_v();
      for (int i = 0; i < npi && i < 3; i++) pis[i] = PO();
      parlops_op *a = PO(), *g = chance(50) ? a : PO();
      int64_t gr = 0, gc = 0;
      if (parlops_op_size(g, &gr, &gc) != PARLOPS_OK) gc = 0;
      int64_t nc = chance(60) ? 3 * gc : chance(50) ? 3 * (int64_t)below(20) : size_v();
      st = parlops_op_create_ams(a, g, chance(80) ? 3 : int_v(), nc > 768 ? 768 : nc,
                                 chance(10) ? NULL : inbuf, npi > 3 ? 3 : npi, chance(10) ? NULL : pis,
                                 chance(80) ? NULL : PO(), chance(80) ? NULL : PO(), chance(70) ? NULL : PH(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    CASE(parlops_op_create_ads) {
      const parlops_op *pis[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
      int npi = chance(70) ? 0 : chance(80) ? (int)below(7) : int_v();
      for (int i = 0; i < npi && i < 6; i++) pis[i] = PO();
      parlops_op *a = PO(), *g = chance(50) ? a : PO();
      int64_t gr = 0, gc = 0;
      if (parlops_op_size(g, &gr, &gc) != PARLOPS_OK) gc = 0;
      int64_t nc = chance(60) ? 3 * gc : chance(50) ? 3 * (int64_t)below(20) : size_v();
      st = parlops_op_create_ads(a, chance(50) ? a : PO(), g, nc > 768 ? 768 : nc,
                                 chance(10) ? NULL : inbuf, npi > 6 ? 6 : npi, chance(10) ? NULL : pis,
                                 chance(70) ? NULL : PH(), OUT(h1));
      if (new_handle_ok(st, h1)) adopt(OP, h1, 4);
      break;
    }
    CASE(parlops_solver_info) st = parlops_solver_info(PS(), OUT(info)); break;
    CASE(parlops_solver_history) st = parlops_solver_history(PS(), OUT(cdp), OUT(i64a)); break;
    CASE(parlops_solver_residual_history) st = parlops_solver_residual_history(PS(), OUT(cdp), OUT(i64a)); break;
  default:
    return -1;
  }
  goto check;

destroy : {
  /* fname is "parlops_<type>_destroy" */
  int t = strstr(fname, "_comm_") ? COMM : strstr(fname, "_layout_") ? LAYOUT : strstr(fname, "_vec_") ? VEC
        : strstr(fname, "_hypre_options_") ? HOPT : strstr(fname, "parlops_options_") ? OPTS
        : strstr(fname, "_prox_") ? PROX : strstr(fname, "_op_") ? OP : SOLVER;
  int slot = -1;
  void *h;
  void **hp = &h;
  if (chance(60)) {
    slot = (int)below(POOL);
    h = pool[t][slot];
  } else {
    h = pick(t);
  }
  if (chance(3)) hp = NULL;
  void *before = h;
  switch (t) {
  case COMM: st = parlops_comm_destroy((parlops_comm **)hp); break;
  case LAYOUT: st = parlops_layout_destroy((parlops_layout **)hp); break;
  case VEC: st = parlops_vec_destroy((parlops_vec **)hp); break;
  case OP: st = parlops_op_destroy((parlops_op **)hp); break;
  case HOPT: st = parlops_hypre_options_destroy((parlops_hypre_options **)hp); break;
  case OPTS: st = parlops_options_destroy((parlops_options **)hp); break;
  case PROX: st = parlops_prox_destroy((parlops_prox **)hp); break;
  default: st = parlops_solver_destroy((parlops_solver **)hp); break;
  }
  if (st == PARLOPS_OK && hp != NULL && before != NULL) {
    if (h != NULL) fail("destroy did not set the handle to NULL", st);
    if (slot >= 0) pool[t][slot] = NULL;
    else
      for (int i = 0; i < POOL; i++)
        if (pool[t][i] == before) pool[t][i] = NULL;
    note_dead(t, before);
  } else if (st != PARLOPS_OK && h != before) {
    fail("a failed destroy changed the handle", st);
  }
  goto check;
}

block : {
  int n = chance(85) ? (int)below(4) : int_v();
  const parlops_op *list[4] = {NULL, NULL, NULL, NULL};
  int cost = 0;
  for (int i = 0; i < 4 && i < n; i++) {
    list[i] = PO();
    cost += cost_of(list[i]);
  }
  const parlops_op *const *lp = n >= 0 && n <= 4 && chance(95) ? list : NULL;
  parlops_comm *c = PC();
  int dt = dtype_v();
  if (!strcmp(fname, "parlops_op_block_diag")) st = parlops_op_block_diag(c, dt, n, lp, OUT(h1));
  else if (!strcmp(fname, "parlops_op_vstack")) st = parlops_op_vstack(c, dt, n, lp, OUT(h1));
  else if (!strcmp(fname, "parlops_op_hstack")) st = parlops_op_hstack(c, dt, n, lp, OUT(h1));
  else st = parlops_op_stacked_block_diag(c, dt, n, lp, OUT(h1));
  if (new_handle_ok(st, h1)) adopt(OP, h1, cost + 1);
  goto check;
}

check:
  if (!has_status) return 1;
  if ((int)st < 0 || (int)st > PARLOPS_ERR_VERSION_MISMATCH) {
    fail("status is not a parlops_status value", (int)st);
    return 0;
  }
  if (st == PARLOPS_OK) {
    if (bad_handle && strcmp(fname, "parlops_finalize") && strcmp(fname, "parlops_init"))
      fail("succeeded with a stale, wrong-type or foreign handle", st);
    return 1;
  }
  if (st == PARLOPS_ERR_INTERNAL) {
    internal_n++;
    fail("internal error (a caught panic)", st);
  }
  const char *m = parlops_last_error();
  if (m == NULL || strstr(m, fname) == NULL) fail("message does not name the function", st);
  if (!outs_untouched()) fail("an output was written although the call failed", st);
  return 0;
}
static const int ncases = __COUNTER__;
static const char *case_name(int k) {
  dry_run = 1;
  do_call(k);
  dry_run = 0;
  return fname;
}

/* ---- the initial pool: every handle type, layouts of every partition, vectors of every dtype
 * (allocated and wrapped), csr, diagonal, identity, shell and composed operators, a solver of
 * every method */
static void seed_pool(void) {
  parlops_comm *c;
  parlops_comm_create(MPI_COMM_WORLD, &c);
  pool[COMM][0] = c;
  parlops_comm_create(MPI_COMM_SELF, (parlops_comm **)&pool[COMM][1]);
  int64_t shape[2] = {4, 3};
  parlops_layout **L = (parlops_layout **)pool[LAYOUT];
  parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 12, -1, &L[0]);
  parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, 12, -1, &L[1]);
  parlops_layout_create(c, PARLOPS_PARTITION_UNSAFE_BROADCAST, 12, -1, &L[2]);
  parlops_layout_create_nd(c, PARLOPS_PARTITION_SCATTER, 2, shape, 0, -1, &L[3]);
  parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 0, -1, &L[4]);
  parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 7, -1, &L[5]);
  parlops_vec **V = (parlops_vec **)pool[VEC];
  for (int d = 0; d < 4; d++) {
    parlops_vec_create(L[0], d, PARLOPS_MEMORY_HOST, &V[d]);
    parlops_vec_create_with_array(L[d == 3 ? 3 : 0], d, PARLOPS_MEMORY_HOST, keep_alloc(MAXN * 16), &V[4 + d]);
  }
  parlops_vec_create(L[1], PARLOPS_F64, PARLOPS_MEMORY_HOST, &V[8]);
  parlops_vec_fill(V[1], PARLOPS_REAL(2.0));
  parlops_op **O = (parlops_op **)pool[OP];
  parlops_op_identity(L[0], PARLOPS_F64, &O[0]);
  parlops_op_diagonal_matrix(V[1], &O[1]);
  csr m = make_csr(12, 12, PARLOPS_INDEX_I64, 8, 0);
  int64_t *p = m.ptr, *ix = m.idx;
  for (int i = 0; i <= 12; i++) p[i] = i;
  for (int i = 0; i < 12; i++) ix[i] = i;
  parlops_op_create_csr(L[0], L[0], PARLOPS_F64, PARLOPS_INDEX_I64, m.ptr, m.idx, m.val, &O[2]);
  free_csr(m);
  shell_ctx *ctx = keep_alloc(sizeof *ctx);
  *ctx = (shell_ctx){MAGIC, 12, 12, 8, 0};
  if (parlops_op_create_shell(L[0], L[0], PARLOPS_F64, PARLOPS_MEMORY_HOST, ctx, shell_fwd, shell_adj, shell_free, &O[3]) == PARLOPS_OK)
    ctx_made++;
  parlops_op_sum(O[0], O[1], &O[4]);
  parlops_op_product(O[2], O[3], &O[5]);
  parlops_op_identity(L[1], PARLOPS_C128, &O[6]);
  parlops_op_first_derivative(L[3], 0, 1.0, PARLOPS_CENTERED, true, PARLOPS_F32, &O[7]);
  for (int i = 0; i < POOL; i++) opcost[i] = 2;
  parlops_solver **S = (parlops_solver **)pool[SOLVER];
  for (int i = 0; i < POOL; i++) { /* methods 0..8 and 10 (ISTA comes from the fuzzing) */
    parlops_solver_create(c, i == 9 ? PARLOPS_METHOD_FISTA : i, &S[i]);
    parlops_solver_set_monitor(S[i], monitor, NULL);
    parlops_solver_set_operator(S[i], O[i % 3]);
  }
  parlops_prox **X = (parlops_prox **)pool[PROX];
  parlops_prox_create_l1(L[0], PARLOPS_F64, 0.5, &X[0]);
  parlops_prox_create_l2(L[0], PARLOPS_F64, 1.0, V[1], NULL, 0.0, true, &X[1]);
  parlops_prox_create_l21(L[0], PARLOPS_C128, 2, 0.5, &X[2]);
  shell_ctx *pctx = keep_alloc(sizeof *pctx);
  *pctx = (shell_ctx){MAGIC, 12, 12, 8, 0};
  if (parlops_prox_create_shell(L[0], PARLOPS_F64, pctx, prox_cb, NULL, prox_value_cb, prox_grad_cb, shell_free, &X[3]) ==
      PARLOPS_OK)
    ctx_made++;
  /* the L2 misfit through the CSR identity (collective entry points: products with it) */
  parlops_prox_create_l2_op(O[2], 1.0, V[1], NULL, 0.0, true, PARLOPS_METHOD_CGLS, 3, 1e-4, NULL, true, &X[4]);
  for (int t = 0; t < NT; t++)
    for (int i = 0; i < POOL; i++)
      if (pool[t][i] && is_sentinel_ptr(pool[t][i])) pool[t][i] = NULL;
}

int main(int argc, char **argv) {
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
  long ncalls = 100000;
  double seconds = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-s")) seed = strtoull(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "-n")) ncalls = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-t")) seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-v")) verbose = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-x")) skip = argv[i + 1];
  }
  if (seconds > 0 && ncalls == 100000) ncalls = LONG_MAX;
  int prov;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 1) {
    fprintf(stderr, "fuzz_capi runs on one rank\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  printf("fuzz: seed %llu (rerun with -s %llu)\n", (unsigned long long)seed, (unsigned long long)seed);
  fflush(stdout);
  rs = seed ? seed : 1;
  for (int i = 0; i < 64; i++) junk[i] = rnd();
  inbuf = malloc(INBYTES);
  for (size_t i = 0; i < INBYTES / sizeof(double); i++) inbuf[i] = chance(2) ? NAN : (double)(rnd() % 2001) / 1000.0 - 1.0;

  /* stdout and stderr go to a file during the run: parlops must write nothing */
  fflush(stdout);
  int saved_out = dup(1), saved_err = dup(2);
  report_fd = dup(2);
  report = fdopen(report_fd, "w");
  signal(SIGALRM, on_alarm);
  signal(SIGABRT, on_crash);
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  signal(SIGILL, on_crash);
  char path[] = "/tmp/parlops_fuzz_XXXXXX";
  int fd = mkstemp(path);
  snprintf(out_path, sizeof out_path, "%s", path);
  dup2(fd, 1);
  dup2(fd, 2);

  seed_pool();
  /* which case numbers to skip: learn each case's name from a dry table */
  static int skipped[MAXF];
  if (skip) {
    for (int k = 0; k < ncases && k < MAXF; k++) {
      const char *nm = case_name(k);
      size_t l = strlen(nm);
      for (const char *q = strstr(skip, nm); q; q = strstr(q + 1, nm))
        if ((q == skip || q[-1] == ',') && (q[l] == ',' || q[l] == 0)) skipped[k] = 1;
    }
  }
  time_t t0 = time(NULL);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (calls = 0; calls < ncalls; calls++) {
    if (seconds > 0 && (calls & 255) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &b);
      if ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec) > seconds) break;
    }
    int k = (int)below((uint64_t)ncases);
    if (skip && k < MAXF && skipped[k]) {
      calls--;
      continue;
    }
    nout = 0;
    bad_handle = 0;
    long before = failed_n;
    alarm(20);
    int okc = do_call(k);
    if (k < MAXF) fnames[k] = fname, fcount[k]++, fok[k] += okc;
    if (failed_n == before) passed++;
  }
  /* tear down the pool: every shell context must be freed exactly once, none used after */
  for (int t = NT - 1; t >= 0; t--)
    for (int i = 0; i < POOL; i++)
      if (pool[t][i]) {
        fname = "teardown";
        destroy_any(t, pool[t][i]);
        pool[t][i] = NULL;
      }
  (void)t0;
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);

  fflush(stdout);
  fflush(stderr);
  off_t written = lseek(fd, 0, SEEK_END);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  if (written > 0) {
    failed_n++;
    fprintf(stderr, "FAILED: parlops wrote %lld bytes to stdout/stderr during the run:\n", (long long)written);
    char buf[2048];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
      buf[n] = 0;
      fprintf(stderr, "%s\n", buf);
    }
  }
  close(fd);
  unlink(path);
  if (ctx_errors) {
    failed_n++;
    fprintf(stderr, "FAILED: %ld shell-context uses after destroy_ctx or double frees\n", ctx_errors);
  }
  if (verbose)
    for (int i = 0; i < ncases; i++) printf("  %-42s %8ld calls %8ld ok\n", fnames[i], fcount[i], fok[i]);
  int distinct = 0;
  for (int i = 0; i < MAXF; i++) distinct += fcount[i] > 0;
  printf("fuzz: %ld calls in %.1f s, %d distinct functions (of %d), %ld shell operators made, %ld contexts freed, %ld internal errors\n",
         calls, secs, distinct, ncases, ctx_made, ctx_destroyed, internal_n);
  printf("fuzz: %ld passed, %ld failed\n", passed, failed_n);
  for (int i = 0; i < narena; i++) free(arena[i]);
  free(inbuf);
  fclose(report);
  MPI_Finalize();
  return failed_n ? 1 : 0;
}
