// parlops device kernels, compiled at run time by NVRTC once per element type. The element type comes
// from -DPARLOPS_F32 / -DPARLOPS_F64 / -DPARLOPS_C64 / -DPARLOPS_C128. Built with --fmad=false so that
// element-wise results equal the host's bit for bit. Reductions accumulate in double for every type
// (the host accumulates in the element type): f64 results differ from the host's by summation order
// only, f32 ones are more accurate than the host's.

#if defined(PARLOPS_F32) || defined(PARLOPS_C64)
typedef float R;
#else
typedef double R;
#endif

#if defined(PARLOPS_C64) || defined(PARLOPS_C128)
#define PARLOPS_COMPLEX 1
struct T { R re, im; };
__device__ __forceinline__ T mk(R re, R im) { T t; t.re = re; t.im = im; return t; }
__device__ __forceinline__ T zero() { return mk(0, 0); }
__device__ __forceinline__ T add(T a, T b) { return mk(a.re + b.re, a.im + b.im); }
__device__ __forceinline__ T sub(T a, T b) { return mk(a.re - b.re, a.im - b.im); }
__device__ __forceinline__ T mul(T a, T b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
__device__ __forceinline__ T cnj(T a) { return mk(a.re, -a.im); }
__device__ __forceinline__ double abs2d(T a) { double r = a.re, i = a.im; return r * r + i * i; }
__device__ __forceinline__ double absd(T a) { return hypot((double)a.re, (double)a.im); }
__device__ __forceinline__ bool nonzero(T a) { return a.re != 0 || a.im != 0; }
__device__ __forceinline__ double re_of(T a) { return a.re; }
__device__ __forceinline__ double im_of(T a) { return a.im; }
__device__ __forceinline__ T shfl_down(T a, int off, int width) {
  return mk(__shfl_down_sync(0xffffffffu, a.re, off, width), __shfl_down_sync(0xffffffffu, a.im, off, width));
}
__device__ __forceinline__ void atomic_add(T *p, T v) {
  atomicAdd(&p->re, v.re);
  atomicAdd(&p->im, v.im);
}
#else
typedef R T;
__device__ __forceinline__ T zero() { return 0; }
__device__ __forceinline__ T add(T a, T b) { return a + b; }
__device__ __forceinline__ T sub(T a, T b) { return a - b; }
__device__ __forceinline__ T mul(T a, T b) { return a * b; }
__device__ __forceinline__ T cnj(T a) { return a; }
__device__ __forceinline__ double abs2d(T a) { double r = a; return r * r; }
__device__ __forceinline__ double absd(T a) { return fabs((double)a); }
__device__ __forceinline__ bool nonzero(T a) { return a != 0; }
__device__ __forceinline__ double re_of(T a) { return a; }
__device__ __forceinline__ double im_of(T a) { return 0; }
__device__ __forceinline__ T shfl_down(T a, int off, int width) { return __shfl_down_sync(0xffffffffu, a, off, width); }
__device__ __forceinline__ void atomic_add(T *p, T v) { atomicAdd(p, v); }
#endif

typedef long long i64;
#define GRID_STRIDE(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)

extern "C" __global__ void k_fill(T *y, T a, i64 n) { GRID_STRIDE(i, n) y[i] = a; }
extern "C" __global__ void k_scale(T *y, T a, i64 n) { GRID_STRIDE(i, n) y[i] = mul(a, y[i]); }
extern "C" __global__ void k_conj(T *y, i64 n) { GRID_STRIDE(i, n) y[i] = cnj(y[i]); }
// y = a x + y
extern "C" __global__ void k_axpy(T *y, T a, const T *x, i64 n) { GRID_STRIDE(i, n) y[i] = add(y[i], mul(a, x[i])); }
// y = a x + b y
extern "C" __global__ void k_axpby(T *y, T a, const T *x, T b, i64 n) {
  GRID_STRIDE(i, n) y[i] = add(mul(a, x[i]), mul(b, y[i]));
}
// w = a x + y
extern "C" __global__ void k_waxpy(T *w, T a, const T *x, const T *y, i64 n) {
  GRID_STRIDE(i, n) w[i] = add(mul(a, x[i]), y[i]);
}
// w = x .* y  (cx: conjugate x first)
extern "C" __global__ void k_pmult(T *w, const T *x, const T *y, int cx, i64 n) {
  GRID_STRIDE(i, n) w[i] = mul(cx ? cnj(x[i]) : x[i], y[i]);
}
extern "C" __global__ void k_copy(T *y, const T *x, i64 n) { GRID_STRIDE(i, n) y[i] = x[i]; }

// ---- reductions: one partial per block (in double), then k_finish over the partials
#define BLOCK 256
#define PL_INF __longlong_as_double(0x7ff0000000000000LL)
__device__ __forceinline__ double nanmax(double a, double b) { return (a != a || b != b) ? (a + b) : fmax(a, b); }

// block-wide reduction of `ncomp` (at most 8) doubles in v; the result lands in out[blockIdx.x * ncomp + c]
__device__ void block_reduce(double *v, int ncomp, int is_max, double *out) {
  __shared__ double sh[8][BLOCK];
  for (int c = 0; c < ncomp; c++) sh[c][threadIdx.x] = v[c];
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int c = 0; c < ncomp; c++)
        sh[c][threadIdx.x] = is_max ? nanmax(sh[c][threadIdx.x], sh[c][threadIdx.x + s]) : sh[c][threadIdx.x] + sh[c][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int c = 0; c < ncomp; c++) out[blockIdx.x * ncomp + c] = sh[c][0];
}

// conj(x) . y: partials (re, im) per block, each product formed and accumulated in double (exact
// products for single-precision data)
extern "C" __global__ void k_dot(const T *x, const T *y, i64 n, double *part) {
  double v[2] = {0, 0};
  GRID_STRIDE(i, n) {
    const double ar = re_of(x[i]), ai = im_of(x[i]), br = re_of(y[i]), bi = im_of(y[i]);
    v[0] += ar * br + ai * bi;
    v[1] += ar * bi - ai * br;
  }
  block_reduce(v, 2, 0, part);
}

// conj(v_j) . w for the k <= 4 vectors v_0..v_{k-1} in one pass over w (GMRES' projections, PETSc's
// VecMDot): partials (re, im) of each per block, 2k components; each dot's terms formed and summed
// as k_dot forms and sums them, so each result has k_dot's bits. Unused v_j may repeat v_0.
extern "C" __global__ void k_mdot4(const T *w, const T *v0, const T *v1, const T *v2, const T *v3, int k, i64 n,
                                   double *part) {
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const T *vs[4] = {v0, v1, v2, v3};
  GRID_STRIDE(i, n) {
    const double br = re_of(w[i]), bi = im_of(w[i]);
    for (int j = 0; j < k; j++) {
      const double ar = re_of(vs[j][i]), ai = im_of(vs[j][i]);
      v[2 * j] += ar * br + ai * bi;
      v[2 * j + 1] += ar * bi - ai * br;
    }
  }
  block_reduce(v, 2 * k, 0, part);
}

// w = w + a_0 v_0 + ... + a_{k-1} v_{k-1} (k <= 4), the terms added in that order: the bits of k
// successive k_axpy. Unused v_j may repeat v_0.
extern "C" __global__ void k_maxpy4(T *w, T a0, const T *v0, T a1, const T *v1, T a2, const T *v2, T a3,
                                    const T *v3, int k, i64 n) {
  GRID_STRIDE(i, n) {
    T t = w[i];
    t = add(t, mul(a0, v0[i]));
    if (k > 1) t = add(t, mul(a1, v1[i]));
    if (k > 2) t = add(t, mul(a2, v2[i]));
    if (k > 3) t = add(t, mul(a3, v3[i]));
    w[i] = t;
  }
}

// norm partials: kind 0 nonzeros, 1 sum|x|, 2 sum|x|^2, 3 max|x|, 4 max(-|x|), 5 sum|x|^p
extern "C" __global__ void k_norm(const T *x, i64 n, int kind, double p, double *part) {
  int is_max = (kind == 3 || kind == 4);
  double v[1] = {is_max ? -PL_INF : 0.0};
  GRID_STRIDE(i, n) {
    T a = x[i];
    switch (kind) {
    case 0: v[0] += nonzero(a) ? 1.0 : 0.0; break;
    case 1: v[0] += absd(a); break;
    case 2: v[0] += abs2d(a); break;
    case 3: v[0] = nanmax(v[0], absd(a)); break;
    case 4: v[0] = nanmax(v[0], -absd(a)); break;
    default: v[0] += pow(absd(a), p); break;
    }
  }
  block_reduce(v, 1, is_max, part);
}

// one block: out[c] = reduce over nb blocks of part[b * ncomp + c]
extern "C" __global__ void k_finish(const double *part, int nb, int ncomp, int is_max, double *out) {
  double v[8];
  for (int c = 0; c < ncomp; c++) {
    double a = is_max ? -PL_INF : 0.0;
    for (int b = threadIdx.x; b < nb; b += BLOCK) a = is_max ? nanmax(a, part[b * ncomp + c]) : a + part[b * ncomp + c];
    v[c] = a;
  }
  block_reduce(v, ncomp, is_max, out);
}

// entries per block of the SpMV (SPMV_CHUNK / BLOCK a thread); src/exec/cuda/csr.rs has the same
#define SPMV_CHUNK 1024

// ---- halo: pack owned entries for sending, add received contributions (indices may repeat)
#define HALO_KERNELS(I, SUF)                                                                          \
  extern "C" __global__ void k_pack_##SUF(const T *x, const I *idx, i64 n, T *out) {                  \
    GRID_STRIDE(k, n) out[k] = x[idx[k]];                                                             \
  }                                                                                                   \
  extern "C" __global__ void k_unpack_add_##SUF(T *x, const I *idx, i64 n, const T *in) {             \
    GRID_STRIDE(k, n) atomic_add(&x[idx[k]], in[k]);                                                  \
  }                                                                                                   \
  /* y (+)= A x over row blocks (rb: first row of each CUDA block, from row_blocks in             \
     src/exec/cuda/csr.rs): a block of several rows holds at most SPMV_CHUNK entries; its threads    \
     form the products of all of them with coalesced, independent loads (SPMV_CHUNK / BLOCK each)    \
     into shared memory, then g threads per row (g = 1 for more than BLOCK / 2 rows: the row's      \
     products summed in order) reduce them. A block of one longer row reduces it with all threads. */ \
  extern "C" __global__ void k_spmv_##SUF(const i64 *rb, const I *ptr, const I *col, const T *val,     \
                                         const T *x, T *y, int add_to) {                              \
    __shared__ T sh[SPMV_CHUNK];                                                                      \
    const i64 r0 = rb[blockIdx.x], r1 = rb[blockIdx.x + 1];                                           \
    const i64 k0 = (i64)ptr[r0], k1 = (i64)ptr[r1];                                                   \
    const int nr = (int)(r1 - r0), tid = (int)threadIdx.x;                                            \
    if (k1 - k0 <= SPMV_CHUNK) {                                                                      \
      for (int j = 0; j < SPMV_CHUNK / BLOCK; j++) {                                                 \
        const i64 k = k0 + j * BLOCK + tid;                                                           \
        if (k < k1) sh[j * BLOCK + tid] = mul(val[k], x[col[k]]);                                     \
      }                                                                                               \
      __syncthreads();                                                                                \
      int lg = 0;                                                                                     \
      while (lg < 5 && (nr << (lg + 1)) <= BLOCK) lg++;                                               \
      const int g = 1 << lg, i = tid >> lg, lane = tid & (g - 1);                                     \
      T s = zero();                                                                                   \
      if (i < nr) {                                                                                   \
        const i64 e = (i64)ptr[r0 + i + 1] - k0;                                                      \
        for (i64 k = (i64)ptr[r0 + i] - k0 + lane; k < e; k += g) s = add(s, sh[k]);                  \
      }                                                                                               \
      for (int off = g / 2; off > 0; off >>= 1) s = add(s, shfl_down(s, off, g));                     \
      if (i < nr && lane == 0) y[r0 + i] = add_to ? add(y[r0 + i], s) : s;                            \
    } else {                                                                                          \
      T s = zero();                                                                                   \
      for (i64 k = k0 + tid; k < k1; k += BLOCK) s = add(s, mul(val[k], x[col[k]]));                  \
      for (int off = 16; off > 0; off >>= 1) s = add(s, shfl_down(s, off, 32));                       \
      if ((tid & 31) == 0) sh[tid >> 5] = s;                                                          \
      __syncthreads();                                                                                \
      if (tid == 0) {                                                                                 \
        s = sh[0];                                                                                    \
        for (int w = 1; w < BLOCK / 32; w++) s = add(s, sh[w]);                                       \
        y[r0] = add_to ? add(y[r0], s) : s;                                                           \
      }                                                                                               \
    }                                                                                                 \
  }                                                                                                   \
  /* x += A^H y, one thread per row, atomics into x */                                                \
  extern "C" __global__ void k_spmv_h_##SUF(i64 nrows, const I *ptr, const I *col, const T *val,      \
                                           const T *y, T *x) {                                        \
    GRID_STRIDE(row, nrows) {                                                                         \
      T yr = y[row];                                                                                  \
      for (i64 k = ptr[row]; k < (i64)ptr[row + 1]; k++) atomic_add(&x[col[k]], mul(cnj(val[k]), yr)); \
    }                                                                                                 \
  }

HALO_KERNELS(int, i32)
HALO_KERNELS(long long, i64)

// ---- the reproducible mode's product (src/op/csr/repro.rs; src/exec/cuda/csr.rs): y = A x with each
// row summed in one chain in the order of its global columns, from zero, each value times its operand
// added in turn, as the host's loop sums it (the same bits: --fmad=false). Entry k's operand is
// x[src[k]] for src[k] < nloc, else the ghost src[k] - nloc. One thread a row.
extern "C" __global__ void k_spmv_ordered(i64 nrows, const i64 *ptr, const i64 *src, const T *val, i64 nloc,
                                          const T *x, const T *g, T *y) {
  GRID_STRIDE(row, nrows) {
    T s = zero();
    for (i64 k = ptr[row]; k < ptr[row + 1]; k++) {
      const i64 j = src[k];
      s = add(s, mul(val[k], j < nloc ? x[j] : g[j - nloc]));
    }
    y[row] = s;
  }
}

// ---- the fused passes of the CG family (src/exec/host/cg.rs has the host loops): one pass over the
// vectors with the partial sums the next reduction needs, instead of one kernel per axpy and per dot
// CG: x += a p, r -= a q; partials of |r|^2 (the new r). 48 bytes per double entry.
extern "C" __global__ void k_cg_update(T *x, T a, const T *p, T *r, const T *q, i64 n, double *part) {
  double v[1] = {0};
  GRID_STRIDE(i, n) {
    x[i] = add(x[i], mul(a, p[i]));
    const T rv = sub(r[i], mul(a, q[i]));
    r[i] = rv;
    v[0] += abs2d(rv);
  }
  block_reduce(v, 1, 0, part);
}

// CG's residual alone: r -= a q; partials of |r|^2 (the new r). 24 bytes per double entry.
extern "C" __global__ void k_cg_residual(T a, T *r, const T *q, i64 n, double *part) {
  double v[1] = {0};
  GRID_STRIDE(i, n) {
    const T rv = sub(r[i], mul(a, q[i]));
    r[i] = rv;
    v[0] += abs2d(rv);
  }
  block_reduce(v, 1, 0, part);
}

// CG's step and next direction: x += a p (the old p), then p = r + b p. 40 bytes per double entry.
extern "C" __global__ void k_cg_step(T *x, T a, T *p, const T *r, T b, i64 n) {
  GRID_STRIDE(i, n) {
    const T pi = p[i];
    x[i] = add(x[i], mul(a, pi));
    p[i] = add(r[i], mul(b, pi));
  }
}

// The direction and x of one entry, as the host's XStep says (src/vector/fused.rs): mode 0 (Now):
// p = (rv + a sv) + b p, x += a p; mode 1 (Later): p and x left alone; mode 2 (Both, after a Later
// pass with (a0, b0)): pm = (ro + a0 so) + b0 p, p = (rv + a sv) + b pm, x = (x + a0 pm) + a p.
__device__ inline void direction(T *x, T *p, i64 i, T ro, T so, T rv, T sv, int mode, T a0, T b0, T a, T b) {
  if (mode == 0) {
    const T pv = add(add(rv, mul(a, sv)), mul(b, p[i]));
    p[i] = pv;
    x[i] = add(x[i], mul(a, pv));
  } else if (mode == 2) {
    const T pm = add(add(ro, mul(a0, so)), mul(b0, p[i]));
    const T pv = add(add(rv, mul(a, sv)), mul(b, pm));
    p[i] = pv;
    x[i] = add(add(x[i], mul(a0, pm)), mul(a, pv));
  }
}

// The step a deferred pass left x lacking: p = (r + a s) + b p, x += a p.
extern "C" __global__ void k_catch_up(T *x, T *p, const T *r, const T *s, T a, T b, i64 n) {
  GRID_STRIDE(i, n) {
    const T pv = add(add(r[i], mul(a, s[i])), mul(b, p[i]));
    p[i] = pv;
    x[i] = add(x[i], mul(a, pv));
  }
}

// single-reduction CG (u = r): s = w + b s, r -= a s, p and x as `mode` says (direction above);
// partials of |r|^2.
extern "C" __global__ void k_cg_sr_update(T *x, T *r, T *p, T *s, const T *w, T a, T b, int mode, T a0, T b0,
                                          i64 n, double *part) {
  double v[1] = {0};
  GRID_STRIDE(i, n) {
    const T ri = r[i], si = s[i];
    const T sv = add(w[i], mul(b, si));
    const T rv = sub(ri, mul(a, sv));
    direction(x, p, i, ri, si, rv, sv, mode, a0, b0, a, b);
    s[i] = sv;
    r[i] = rv;
    v[0] += abs2d(rv);
  }
  block_reduce(v, 1, 0, part);
}

// pipelined CG (u = r, m = w): z = m + b z, s = w + b s, r -= a s, w -= a z, p and x as `mode` says
// (direction above); partials of [|r|^2, 0, re(w^H r), im(w^H r)] (the new r and w: the next
// iteration's reduction).
extern "C" __global__ void k_cg_pipe_update(T *x, T *r, T *w, T *p, T *s, T *z, const T *m, T a, T b, int mode,
                                            T a0, T b0, i64 n, double *part) {
  double v[4] = {0, 0, 0, 0};
  GRID_STRIDE(i, n) {
    const T ri = r[i], wi = w[i], si = s[i];
    const T zv = add(m[i], mul(b, z[i]));
    const T sv = add(wi, mul(b, si));
    const T rv = sub(ri, mul(a, sv));
    const T wv = sub(wi, mul(a, zv));
    direction(x, p, i, ri, si, rv, sv, mode, a0, b0, a, b);
    z[i] = zv;
    s[i] = sv;
    r[i] = rv;
    w[i] = wv;
    v[0] += abs2d(rv);
    const double ar = re_of(wv), ai = im_of(wv), br = re_of(rv), bi = im_of(rv);
    v[2] += ar * br + ai * bi;
    v[3] += ar * bi - ai * br;
  }
  block_reduce(v, 4, 0, part);
}
