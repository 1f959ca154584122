/* One recipe per collective function of include/parlops.h: valid arguments, on every rank, for the
 * one-rank-differs guard (tests/c/gen_collective_guard.py generates the cases from the header and
 * fails when a collective function has no recipe here). RECIPE(function, "tags"): tags are
 * `param:kind` words the generator reads: count (an array length: not made huge, the arrays here have
 * room for one more), long (a number of iterations the call runs in full: not made huge, which would
 * only make the call run that long), skip (not varied), extremes (a struct field: only values that must be refused), f64 / idx (a `const void *` array of doubles / 64-bit
 * indices: its first element is changed), any (the valid call may fail, alike on every rank: no
 * device, a grid the rank count does not make). Arrays are static and refilled at every call,
 * since a case changes them in place. */
#define RECIPE(fn, tags) static void recipe_##fn(struct A_##fn *a)

static parlops_scalar sc_out[64];
static double d_out[64];
static int64_t i_out[8];
static size_t sz_out;
static char rep_buf[16384];
static parlops_comm *o_comm;
static parlops_layout *o_layout;
static parlops_vec *o_vec;
static parlops_op *o_op;
static parlops_prox *o_prox;
static const parlops_vec *cv[16];
static parlops_vec *mv[16];
static const parlops_op *co[16];
static const parlops_layout *cl[16];
static double dbuf[64], dbuf2[64], dbuf_big[256];
static int64_t ibuf[16], ibuf2[16];
static int cibuf[16];
static bool bbuf[16], bbuf2[16];
static parlops_amg_options amg;

static void fill_cv(int first) {
  for (int i = 0; i < 16; i++) cv[i] = W.v[(first + i) % NV];
}
static void fill_mv(int first) {
  for (int i = 0; i < 16; i++) mv[i] = W.v[(first + i) % NV];
}

/* ---- communicators */
RECIPE(parlops_comm_create, "comm:skip") {
  a->comm = MPI_COMM_WORLD;
  a->out = &o_comm;
}
RECIPE(parlops_comm_create_f, "comm:skip") {
  a->comm = MPI_Comm_c2f(MPI_COMM_WORLD);
  a->out = &o_comm;
}
RECIPE(parlops_comm_create_nccl, "expect:any") {
  a->mpi = W.c;
  a->device = 0;
  a->out = &o_comm;
}
RECIPE(parlops_comm_wrap_nccl, "expect:any nccl_comm:skip") {
  a->mpi = W.c;
  a->nccl_comm = NULL;
  a->out = &o_comm;
}
RECIPE(parlops_comm_split, "") {
  a->comm = W.c;
  a->group = rank_ % 2;
  a->out = &o_comm;
}
RECIPE(parlops_config_report, "len:count") {
  a->comm = W.c;
  a->buf = rep_buf;
  a->len = 4096;
  a->needed = &sz_out;
}

/* ---- layouts */
RECIPE(parlops_layout_create, "") {
  a->comm = W.c;
  a->partition = PARLOPS_PARTITION_SCATTER;
  a->global_len = 13;
  a->local_len = PARLOPS_DECIDE;
  a->out = &o_layout;
}
RECIPE(parlops_layout_create_nd, "ndim:count") {
  a->comm = W.c;
  a->partition = PARLOPS_PARTITION_SCATTER;
  a->ndim = 2;
  ibuf[0] = 5, ibuf[1] = 4, ibuf[2] = 3;
  a->global_shape = ibuf;
  a->axis = 0;
  a->local_len_along_axis = PARLOPS_DECIDE;
  a->out = &o_layout;
}
RECIPE(parlops_layout_stack, "n:count") {
  for (int i = 0; i < 16; i++) cl[i] = i % 2 ? W.l2 : W.l;
  a->comm = W.c;
  a->n = 2;
  a->parts = cl;
  a->out = &o_layout;
}

/* ---- vectors */
RECIPE(parlops_vec_create, "") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->memory = PARLOPS_MEMORY_HOST;
  a->out = &o_vec;
}
RECIPE(parlops_vec_create_with_array, "") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->memory = PARLOPS_MEMORY_HOST;
  a->local_data = dbuf;
  a->out = &o_vec;
}
RECIPE(parlops_vec_dot, "") {
  a->x = W.v[0];
  a->y = W.v[1];
  a->out = sc_out;
}
RECIPE(parlops_vec_norm, "") {
  a->v = W.v[0];
  a->kind = PARLOPS_NORM_2;
  a->p = 0.0;
  a->out = d_out;
}
RECIPE(parlops_vec_gather, "") {
  a->v = W.v[0];
  a->root = 0;
  a->global_out = dbuf;
}
RECIPE(parlops_vec_scatter, "global_in:f64") {
  for (int i = 0; i < 64; i++) dbuf2[i] = i;
  a->v = W.v[15];
  a->root = 0;
  a->global_in = dbuf2;
}
RECIPE(parlops_vec_redistribute, "") {
  a->v = W.v[0];
  a->to = W.le;
  a->out = &o_vec;
}
RECIPE(parlops_vec_assemble, "") { a->v = W.vb; }
RECIPE(parlops_vec_block_dot, "nx:count ny:count") {
  fill_cv(0);
  a->comm = W.c;
  a->nx = 2;
  a->x = cv;
  a->ny = 2;
  a->y = cv;
  a->out = sc_out;
}
RECIPE(parlops_vec_orthonormalize, "n:count") {
  fill_mv(3);
  for (int i = 0; i < 3; i++) parlops_vec_set_random(mv[i], PARLOPS_RANDOM_GAUSSIAN, (uint64_t)(40 + i));
  a->comm = W.c;
  a->n = 2;
  a->v = mv;
  a->b = W.A;
  a->r = sc_out;
}
RECIPE(parlops_vec_dot_groups, "") {
  a->comm = W.c;
  a->x = W.vg[0];
  a->y = W.vg[1];
  a->out = sc_out;
}
RECIPE(parlops_vec_norm_groups, "") {
  a->comm = W.c;
  a->v = W.vg[0];
  a->kind = PARLOPS_NORM_2;
  a->p = 0.0;
  a->out = d_out;
}

/* ---- eigensolvers and low-rank operators */
RECIPE(parlops_eig_randomized, "n_omega:count k:count") {
  fill_cv(5);
  for (int i = 0; i < 16; i++) mv[i] = W.v[(10 + i) % 5 + 10];
  a->a = W.A;
  a->b = NULL;
  a->binv = NULL;
  a->n_omega = 4;
  a->omega = cv;
  a->power = 1;
  a->pass = PARLOPS_RANDOMIZED_DOUBLE_PASS;
  a->k = 2;
  a->eigenvalues = d_out;
  a->u = mv;
}
RECIPE(parlops_eig_lanczos, "n_ev:count") {
  parlops_vec_set_random(W.bx[0], PARLOPS_RANDOM_GAUSSIAN, 5);
  for (int i = 0; i < 16; i++) mv[i] = W.bx[1 + i % 3];
  a->a = W.Bk;
  a->v0 = W.bx[0];
  a->max_steps = 26;
  a->tol = 1e-8;
  a->n_ev = 1;
  a->which = PARLOPS_EIG_LARGEST;
  a->eigenvalues = d_out;
  a->residuals = d_out + 32;
  a->vecs = mv;
  a->steps = i_out;
}
RECIPE(parlops_eig_krylov_schur, "n_ev:count") {
  parlops_vec_set_random(W.bx[0], PARLOPS_RANDOM_GAUSSIAN, 5);
  for (int i = 0; i < 16; i++) mv[i] = W.bx[1 + i % 3];
  a->a = W.Bk;
  a->b = NULL;
  a->inv = NULL;
  a->sigma = 0.0;
  a->v0 = W.bx[0];
  a->n_ev = 1;
  a->ncv = 8;
  a->max_products = 400;
  a->tol = 1e-8;
  a->which = PARLOPS_EIG_LARGEST;
  a->monitor = NULL;
  a->monitor_ctx = NULL;
  a->eigenvalues = d_out;
  a->residuals = d_out + 32;
  a->vecs = mv;
  a->products = i_out;
}
RECIPE(parlops_op_low_rank, "k:count") {
  fill_cv(0);
  dbuf[0] = 1.5, dbuf[1] = 0.5, dbuf[2] = 0.25;
  a->comm = W.c;
  a->k = 2;
  a->u = cv;
  a->d = dbuf;
  a->out = &o_op;
}
RECIPE(parlops_op_power_iteration, "") {
  a->a = W.Bk;
  a->max_iter = 100;
  a->tol = 1e-6;
  a->seed = 3;
  a->eigenvalue = sc_out;
  a->iterations = i_out;
}

/* ---- applying operators */
RECIPE(parlops_op_apply, "") {
  a->a = W.A;
  a->x = W.v[0];
  a->y = W.v[1];
}
RECIPE(parlops_op_apply_adjoint, "") {
  a->a = W.A;
  a->y = W.v[0];
  a->x = W.v[1];
}
RECIPE(parlops_op_multadd, "") {
  a->a = W.Bk;
  a->alpha = PARLOPS_REAL(1.0);
  a->x = W.bx[0];
  a->beta = PARLOPS_REAL(0.5);
  a->y = W.bx[1];
}
RECIPE(parlops_op_multadd_adjoint, "") {
  a->a = W.Bk;
  a->alpha = PARLOPS_REAL(1.0);
  a->y = W.bx[0];
  a->beta = PARLOPS_REAL(0.5);
  a->x = W.bx[1];
}
RECIPE(parlops_op_dottest, "") {
  a->a = W.S;
  a->seed = 7;
  a->relative_error = d_out;
}

/* a matrix of its own, made again for every case (a case may give it other values, or NaN, on one
 * rank: the world's matrices keep theirs) */
RECIPE(parlops_op_csr_update_values, "values:f64") {
  static parlops_op *upd;
  int64_t lo = 0, len = 0, n = 0;
  parlops_layout_local_range(W.l, &lo, &len);
  parlops_layout_global_len(W.l, &n);
  tridiag(lo, len, n);
  if (upd) parlops_op_destroy(&upd);
  parlops_op_create_csr(W.l, W.l, PARLOPS_F64, PARLOPS_INDEX_I64, csr_ptr, csr_idx, csr_val, &upd);
  for (int64_t k = 0; k < csr_ptr[len]; k++) dbuf_big[k] = csr_val[k] * 1.5;
  a->a = upd;
  a->nnz = csr_ptr[len];
  a->values = dbuf_big;
  a->offd_nnz = 0;
  a->offd_values = NULL;
}
/* the world's BoomerAMG-free operators: a refresh finds nothing to set up (0), alike */
RECIPE(parlops_op_refresh, "") {
  a->m = (parlops_op *)W.Ainv;
  a->force = 0;
  a->setups_run = i_out;
}

/* ---- operators */
RECIPE(parlops_op_create_shell, "ctx:skip") {
  a->rows = W.l;
  a->cols = W.l;
  a->dtype = PARLOPS_F64;
  a->memory = PARLOPS_MEMORY_HOST;
  a->ctx = &W.sctx;
  a->forward = cb_ok;
  a->adjoint = cb_ok;
  a->destroy_ctx = cb_destroy;
  a->out = &o_op;
}
RECIPE(parlops_op_create_shell_with_diagonal, "ctx:skip") {
  a->rows = W.l;
  a->cols = W.l;
  a->dtype = PARLOPS_F64;
  a->memory = PARLOPS_MEMORY_HOST;
  a->ctx = &W.sctx;
  a->forward = cb_ok;
  a->adjoint = cb_ok;
  a->diagonal = cb_diag_ok;
  a->destroy_ctx = cb_destroy;
  a->out = &o_op;
}
RECIPE(parlops_op_create_csr, "row_ptr:idx col_idx:idx values:f64") {
  tridiag(W.lo, W.len, 13);
  a->rows = W.l;
  a->cols = W.l;
  a->dtype = PARLOPS_F64;
  a->index_type = PARLOPS_INDEX_I64;
  a->row_ptr = csr_ptr;
  a->col_idx = csr_idx;
  a->values = csr_val;
  a->out = &o_op;
}
/* hypre's split of tridiag(-1, 2.5, -1) of size 13 on layout l */
static int64_t pdi[64], pdj[256], poi[64], poj[256], pcmap[8];
static double pda[256], poa[256];
static int64_t pnoff;
static void parcsr(void) {
  int64_t lo = W.lo, len = W.len, n = 13, kd = 0, ko = 0;
  pnoff = 0;
  if (lo > 0) pcmap[pnoff++] = lo - 1;
  if (lo + len < n) pcmap[pnoff++] = lo + len;
  pdi[0] = poi[0] = 0;
  for (int64_t i = 0; i < len; i++) {
    int64_t g = lo + i;
    if (g > 0) {
      if (i > 0) { pdj[kd] = i - 1; pda[kd++] = -1.0; }
      else { poj[ko] = 0; poa[ko++] = -1.0; }
    }
    pdj[kd] = i; pda[kd++] = 2.5;
    if (g < n - 1) {
      if (i + 1 < len) { pdj[kd] = i + 1; pda[kd++] = -1.0; }
      else { poj[ko] = pnoff - 1; poa[ko++] = -1.0; }
    }
    pdi[i + 1] = kd;
    poi[i + 1] = ko;
  }
}
RECIPE(parlops_op_create_parcsr,
       "diag_i:idx diag_j:idx diag_a:f64 offd_i:idx offd_j:idx offd_a:f64 num_offd_cols:count") {
  parcsr();
  a->rows = W.l;
  a->cols = W.l;
  a->dtype = PARLOPS_F64;
  a->index_type = PARLOPS_INDEX_I64;
  a->diag_i = pdi;
  a->diag_j = pdj;
  a->diag_a = pda;
  a->offd_i = poi;
  a->offd_j = poj;
  a->offd_a = poa;
  a->num_offd_cols = pnoff;
  a->col_map_offd = pcmap;
  a->ownership = PARLOPS_COPY;
  a->out = &o_op;
}
RECIPE(parlops_op_create_dense, "local_rows:f64") {
  for (int i = 0; i < 64; i++) dbuf[i] = 1.0 / (1 + i);
  a->rows = W.l2;
  a->cols = W.l2;
  a->dtype = PARLOPS_F64;
  a->local_rows = dbuf;
  a->out = &o_op;
}
/* block_diag, vstack, hstack: one local operator per rank (on MPI_COMM_SELF) */
#define LOCAL_OPS_RECIPE(fn)                            \
  RECIPE(fn, "n_local:count") {                         \
    for (int i = 0; i < 16; i++) co[i] = W.Aself;       \
    a->comm = W.c;                                      \
    a->dtype = PARLOPS_F64;                             \
    a->n_local = 1;                                     \
    a->local_ops = co;                                  \
    a->out = &o_op;                                     \
  }
LOCAL_OPS_RECIPE(parlops_op_block_diag)
LOCAL_OPS_RECIPE(parlops_op_vstack)
LOCAL_OPS_RECIPE(parlops_op_hstack)
RECIPE(parlops_op_first_derivative, "") {
  a->layout = W.lnd;
  a->axis = 0;
  a->sampling = 1.0;
  a->kind = PARLOPS_CENTERED;
  a->edge = false;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_second_derivative, "") {
  a->layout = W.lnd;
  a->axis = 1;
  a->sampling = 0.5;
  a->kind = PARLOPS_FORWARD;
  a->edge = true;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_laplacian, "") {
  dbuf[0] = 1.0, dbuf[1] = 2.0, dbuf[2] = 3.0;
  dbuf2[0] = 1.0, dbuf2[1] = 0.5, dbuf2[2] = 0.25;
  a->layout = W.lnd;
  a->weights = dbuf;
  a->sampling = dbuf2;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_gradient, "") {
  dbuf2[0] = 1.0, dbuf2[1] = 0.5, dbuf2[2] = 0.25;
  a->layout = W.lnd;
  a->sampling = dbuf2;
  a->kind = PARLOPS_CENTERED;
  a->edge = false;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_poisson, "ndim:count") {
  ibuf[0] = 5, ibuf[1] = 4, ibuf[2] = 3;
  a->layout = W.lnd;
  a->ndim = 2;
  a->dims = ibuf;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_fft, "naxes:count") {
  cibuf[0] = 1, cibuf[1] = 0;
  bbuf[0] = true, bbuf[1] = false;
  bbuf2[0] = false, bbuf2[1] = true;
  a->layout = W.lnd;
  a->naxes = 2;
  a->axes = cibuf;
  a->norm = PARLOPS_FFT_NORM_1_OVER_N;
  a->real = false;
  a->ifftshift_before = bbuf;
  a->fftshift_after = bbuf2;
  a->dtype = PARLOPS_C128;
  a->out = &o_op;
}
RECIPE(parlops_op_fredholm1, "g_local:f64") {
  for (int i = 0; i < 64; i++) dbuf[i] = 1.0 + i;
  a->comm = W.c;
  a->dtype = PARLOPS_F64;
  a->nsl_local = 1;
  a->nx = 2;
  a->ny = 3;
  a->nz = 1;
  a->g_local = dbuf;
  a->out = &o_op;
}
RECIPE(parlops_op_nonstationary_convolve1d, "hs:f64 nfilts:count") {
  for (int i = 0; i < 64; i++) dbuf[i] = 0.25 * i - 1.0;
  ibuf[0] = 0, ibuf[1] = 2, ibuf[2] = 4;
  a->layout = W.lnd;
  a->axis = 0;
  a->hsize = 3;
  a->nfilts = 3;
  a->hs = dbuf;
  a->ih = ibuf;
  a->dtype = PARLOPS_F64;
  a->out = &o_op;
}
RECIPE(parlops_op_mdc, "g_local:f64") {
  for (int i = 0; i < 64; i++) dbuf[i] = 0.5 + i;
  a->comm = W.c;
  a->dtype = PARLOPS_C128;
  a->nfreq_local = 1;
  a->ns = 2;
  a->nr = 3;
  a->nt = 9;
  a->nv = 2;
  a->dt = 0.004;
  a->dr = 10.0;
  a->twosided = true;
  a->conj = false;
  a->prescaled = false;
  a->g_local = dbuf;
  a->out = &o_op;
}
RECIPE(parlops_op_halo, "ndim:count n_halo:count") {
  ibuf[0] = 13, ibuf[1] = 3, ibuf[2] = 3;
  ibuf2[0] = 1, ibuf2[1] = 1, ibuf2[2] = 1, ibuf2[3] = 1;
  a->comm = W.c;
  a->dtype = PARLOPS_F64;
  a->ndim = 1;
  a->dims = ibuf;
  a->proc_grid = NULL;
  a->n_halo = 1;
  a->halo = ibuf2;
  a->out = &o_op;
}
RECIPE(parlops_op_stacked_block_diag, "n:count") {
  for (int i = 0; i < 16; i++) co[i] = i % 2 ? W.A2 : W.A;
  a->comm = W.c;
  a->dtype = PARLOPS_F64;
  a->n = 2;
  a->ops = co;
  a->out = &o_op;
}
RECIPE(parlops_op_block, "m:count n:count") {
  for (int i = 0; i < 16; i++) co[i] = NULL;
  co[0] = W.A, co[1] = W.S, co[2] = W.S, co[3] = W.A;
  a->comm = W.c;
  a->dtype = PARLOPS_F64;
  a->m = 2;
  a->n = 2;
  a->blocks = co;
  a->out = &o_op;
}
RECIPE(parlops_op_block_lower_triangular, "n:count") {
  for (int i = 0; i < 16; i++) co[i] = W.S;
  a->a = W.Bk;
  a->n = 2;
  a->diag = co;
  a->out = &o_op;
}
/* needs a square number of ranks: at 2 and 3 every rank refuses the grid */
RECIPE(parlops_op_create_dense_summa, "expect:any a_local:f64") {
  for (int i = 0; i < 64; i++) dbuf[i] = 1.0 / (2 + i);
  a->comm = W.c;
  a->dtype = PARLOPS_F64;
  a->n = 5;
  a->k = 4;
  a->m = 3;
  a->a_local = dbuf;
  a->out = &o_op;
}

/* ---- preconditioners */
RECIPE(parlops_op_create_block_jacobi, "") {
  a->a = W.A;
  a->kind = PARLOPS_LOCAL_ILU0;
  a->omega = 1.0;
  a->out = &o_op;
}
/* hypre may be missing (an MPICH build: Debian's hypre is built on Open MPI): any status, alike */
RECIPE(parlops_op_create_boomeramg, "print_level:extremes expect:any") {
  parlops_amg_options_init(&amg);
  a->a = W.A;
  a->options = &amg;
  a->out = &o_op;
}
/* options by name; no near-null-space vectors (they need a system, which this world has not: the
 * count made 1 on one or every rank must fail alike) */
RECIPE(parlops_op_create_boomeramg_with, "num_vectors:count expect:any") {
  a->a = W.A;
  a->opts = W.ho;
  a->num_vectors = 0;
  a->vectors = W.amg_vec;
  a->out = &o_op;
}
/* AMS and ADS on the world's tridiagonal matrix as every matrix (shapes that fit; the numbers are
 * not a Maxwell problem): coordinates of this rank's "vertices" */
RECIPE(parlops_op_create_ams, "num_coords:count num_interpolations:count expect:any") {
  a->a = W.A;
  a->g = W.A;
  a->dim = 3;
  a->num_coords = 3 * W.len;
  a->coords = W.amg_vec;
  a->num_interpolations = 0;
  a->interpolations = NULL;
  a->alpha_poisson = NULL;
  a->beta_poisson = NULL;
  a->opts = NULL;
  a->out = &o_op;
}
RECIPE(parlops_op_create_ads, "num_coords:count num_interpolations:count expect:any") {
  a->a = W.A;
  a->c = W.A;
  a->g = W.A;
  a->num_coords = 3 * W.len;
  a->coords = W.amg_vec;
  a->num_interpolations = 0;
  a->interpolations = NULL;
  a->opts = NULL;
  a->out = &o_op;
}
RECIPE(parlops_op_create_chebyshev, "") {
  a->a = W.Bk;
  a->degree = 3;
  a->lmin = -1.0;
  a->lmax = -1.0;
  a->out = &o_op;
}

/* ---- solvers */
RECIPE(parlops_solver_set_from_options, "") {
  a->s = W.s;
  a->o = W.opts;
  a->prefix = "g_";
}
RECIPE(parlops_solver_log_view, "len:count") {
  a->s = W.s;
  a->buf = rep_buf;
  a->len = 4096;
  a->needed = &sz_out;
}
RECIPE(parlops_solver_solve, "") {
  parlops_vec_fill(W.v[14], PARLOPS_REAL(0.0));
  a->s = W.s;
  a->b = W.v[13];
  a->x = W.v[14];
}
RECIPE(parlops_solver_solve_many, "n:count") {
  for (int i = 0; i < 3; i++) {
    parlops_vec_fill(W.v[8 + i], PARLOPS_REAL(0.0));
    cv[i] = W.v[11 + i];
    mv[i] = W.v[8 + i];
  }
  a->s = W.s;
  a->n = 3;
  a->b = cv;
  a->x = mv;
}
RECIPE(parlops_op_create_inverse, "") {
  a->s = W.s;
  a->accept_max_iter = false;
  a->out = &o_op;
}

/* ---- proximal operators and solvers */
RECIPE(parlops_prox_create_l1, "") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->sigma = 0.5;
  a->out = &o_prox;
}
RECIPE(parlops_prox_create_l2, "") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->sigma = 1.5;
  a->b = W.v[3];
  a->q = W.v[4];
  a->alpha = 0.2;
  a->qgrad = true;
  a->out = &o_prox;
}
RECIPE(parlops_prox_create_l21, "") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->ndim = 1;
  a->sigma = 0.5;
  a->out = &o_prox;
}
RECIPE(parlops_prox_create_l2_op, "niter:long") {
  a->op = W.A;
  a->sigma = 1.5;
  a->b = W.v[3];
  a->q = W.v[4];
  a->alpha = 0.2;
  a->qgrad = true;
  a->method = PARLOPS_METHOD_CGLS;
  a->niter = 3;
  a->tol = 1e-4;
  a->x0 = W.v[5];
  a->warm = true;
  a->out = &o_prox;
}
RECIPE(parlops_prox_create_shell, "ctx:skip") {
  a->layout = W.l;
  a->dtype = PARLOPS_F64;
  a->ctx = &W.sctx;
  a->prox = cb_prox_ok;
  a->proxdual = cb_prox_ok;
  a->value = cb_prox_value;
  a->grad = cb_prox_grad;
  a->destroy_ctx = cb_destroy;
  a->out = &o_prox;
}
RECIPE(parlops_prox_value, "") {
  a->p = W.psh;
  a->x = W.v[0];
  a->value = d_out;
}
RECIPE(parlops_prox_apply, "") {
  a->p = W.psh;
  a->tau = 0.5;
  a->x = W.v[0];
  a->y = W.v[1];
}
RECIPE(parlops_prox_apply_dual, "") {
  a->p = W.psh;
  a->tau = 0.5;
  a->x = W.v[0];
  a->y = W.v[1];
}
RECIPE(parlops_prox_gradient, "") {
  a->p = W.psh;
  a->x = W.v[0];
  a->g = W.v[1];
}
RECIPE(parlops_primal_dual, "niter:long") {
  parlops_vec_fill(W.v[6], PARLOPS_REAL(0.0));
  parlops_vec_fill(W.v[7], PARLOPS_REAL(0.0));
  a->f = W.pl2;
  a->g = W.psh;
  a->a = W.A;
  a->z = W.v[2];
  a->tau = 0.5;
  a->mu = 0.25;
  a->theta = 1.0;
  a->niter = 4;
  a->gfirst = true;
  a->x = W.v[6];
  a->y = W.v[7];
}
RECIPE(parlops_admm_l2, "niter:long cgls_niter:long") {
  parlops_vec_fill(W.v[6], PARLOPS_REAL(0.0));
  parlops_vec_fill(W.v[7], PARLOPS_REAL(0.0));
  a->g = W.psh;
  a->op = W.A;
  a->b = W.v[3];
  a->a = W.A;
  a->tau = 0.25;
  a->niter = 3;
  a->gfirst = false;
  a->z_given = false;
  a->cgls_niter = 4;
  a->cgls_tol = 1e-4;
  a->x = W.v[6];
  a->z = W.v[7];
}
RECIPE(parlops_proximal_gradient, "niter:long") {
  parlops_vec_fill(W.v[6], PARLOPS_REAL(0.0));
  a->f = W.pl2;
  a->g = W.psh;
  a->tau = 0.5;
  a->epsg = 1.0;
  a->eta = 1.0;
  a->niter = 4;
  a->acceleration = PARLOPS_ACCELERATION_FISTA;
  a->tol = 1e-12;
  a->x = W.v[6];
  a->iterations = i_out;
}
