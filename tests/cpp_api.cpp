// The C++ layer (include/parlops.hpp) end to end: every wrapper of a C function that the other C++
// programs do not already use is called at least once and its result checked against a computation
// made here (serially, from the same formulas), or its error path checked for the status.
// Prints "cpp_api (N ranks): P passed, F failed"; exits non-zero on any failure.
// Usage: mpiexec -n N cpp_api
#include <parlops.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using parlops::Comm;
using parlops::Error;
using parlops::HypreOptions;
using parlops::Layout;
using parlops::Op;
using parlops::Options;
using parlops::Prox;
using parlops::admm_l2;
using parlops::primal_dual;
using parlops::proximal_gradient;
using parlops::span;
using parlops::Solver;
using parlops::Vec;
using parlops::rigid_body_modes;
using parlops::scalar;
using cplx = std::complex<double>;

namespace {

int g_pass = 0, g_fail = 0, g_rank = 0, g_size = 1;

/// A check passes when it passes on every rank (all ranks agree on the counts).
void expect(bool ok, const std::string &what) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    ++g_pass;
  } else {
    ++g_fail;
    if (!ok) std::fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what.c_str());
  }
}

/// Run a group of checks; an exception counts as one failure.
template <class F>
void section(const char *name, F f) {
  try {
    f();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rank %d: %s threw: %s\n", g_rank, name, e.what());
    expect(false, std::string(name) + " threw");
  }
}

/// The status a call throws with (PARLOPS_OK when it does not throw).
template <class F>
parlops_status status_of(F f) {
  try {
    f();
  } catch (const Error &e) {
    return e.status();
  }
  return PARLOPS_OK;
}

bool close(double a, double b, double tol = 1e-12) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }
bool close(cplx a, cplx b, double tol = 1e-12) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }

template <class T, class F>
void set_by_global(Vec &v, F f) {
  auto [s, len] = v.layout().local_range();
  auto loc = v.local<T>();
  for (int64_t k = 0; k < len; ++k) loc[static_cast<std::size_t>(k)] = f(s + k);
}

template <class T, class F>
bool local_is(Vec &v, F f, double tol = 1e-12) {
  auto [s, len] = v.layout().local_range();
  auto loc = v.local<T>();
  bool ok = loc.size() == static_cast<std::size_t>(len);
  for (int64_t k = 0; ok && k < len; ++k) ok = close(loc[static_cast<std::size_t>(k)], f(s + k), tol);
  return ok;
}

template <class T>
bool all_close(const std::vector<T> &a, const std::vector<T> &b, double tol = 1e-12) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!close(a[i], b[i], tol)) return false;
  return true;
}

double g_of(int64_t i) { return 1.0 + 0.5 * static_cast<double>(i); }

/// Local CSR of the 1-D Laplacian (2, -1) on rows [s, s + len) of n.
struct Csr {
  std::vector<int64_t> ptr{0}, col;
  std::vector<double> val;
};
Csr laplacian_1d(int64_t n, int64_t s, int64_t len) {
  Csr c;
  for (int64_t i = s; i < s + len; ++i) {
    for (int64_t j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= n) continue;
      c.col.push_back(j);
      c.val.push_back(j == i ? 2.0 : -1.0);
    }
    c.ptr.push_back(static_cast<int64_t>(c.col.size()));
  }
  return c;
}

// A C-style context: the callbacks get no lengths, so the context carries this rank's.
struct RawCtx {
  double c;
  int64_t len;
  int *destroyed;
};
int raw_forward(void *ctx, const void *x, void *y) {
  auto *c = static_cast<RawCtx *>(ctx);
  for (int64_t k = 0; k < c->len; ++k) static_cast<double *>(y)[k] = c->c * static_cast<const double *>(x)[k];
  return 0;
}
void raw_destroy(void *ctx) {
  auto *c = static_cast<RawCtx *>(ctx);
  ++*c->destroyed;
  delete c;
}

}  // namespace

int main(int argc, char **argv) {
  auto env = std::make_unique<parlops::Environment>(argc, argv);  // parlops_init: starts MPI
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int P = g_size, r = g_rank;
  {
    Comm comm(MPI_COMM_WORLD);
    Comm self(MPI_COMM_SELF);
    const int64_t n = 10;
    Layout l(comm, n);
    const auto [s0, len0] = l.local_range();

    section("library", [&] {
      int init = 0;
      MPI_Initialized(&init);
      expect(init == 1, "Environment started MPI");
      parlops::init();  // MPI running: nothing to do
      expect(true, "init() again is a no-op");
      auto v = parlops::version();
      expect(v[0] == PARLOPS_VERSION_MAJOR && v[1] == PARLOPS_VERSION_MINOR && v[2] == PARLOPS_VERSION_PATCH,
             "version() equals the header's macros");
      parlops::check_version();
      expect(true, "check_version() accepts this header");
      bool mismatch = false;
      try {
        parlops::check(parlops_check_version(PARLOPS_VERSION_MAJOR, PARLOPS_VERSION_MINOR + 1, 0));
      } catch (const parlops::Error &e) {
        mismatch = e.status() == PARLOPS_ERR_VERSION_MISMATCH &&
                   std::string(e.what()).find("libparlops") != std::string::npos;
      }
      expect(mismatch, "a header of the next minor version is refused, naming the library file");
      expect(parlops::status_string(PARLOPS_ERR_SIZE_MISMATCH) == parlops_status_string(3) &&
                 parlops::status_string(PARLOPS_OK) != parlops::status_string(PARLOPS_ERR_SIZE_MISMATCH) &&
                 parlops::status_string(9999).rfind("unknown status", 0) == 0,
             "status_string");
      const std::string rep = parlops::config_report();
      expect(!rep.empty() && rep.find('\0') == std::string::npos, "config_report() without a communicator");
      expect(comm.report().size() > rep.size(), "Comm::report() adds the per-rank lines");
    });

    section("comm", [&] {
      Comm f = Comm::from_fortran(MPI_Comm_c2f(MPI_COMM_WORLD));
      expect(f.rank() == r && f.size() == P, "Comm::from_fortran: same rank and size as MPI_COMM_WORLD");
      Vec x(Layout(f, 7));
      x.fill(scalar(1.0));
      const uint64_t before = f.reduction_count();
      (void)x.dot(x);
      (void)x.norm();
      expect(f.reduction_count() == before + 2, "reduction_count counts a dot and a norm");
    });

    section("layouts", [&] {
      Layout nd = Layout::nd(comm, {6, 4, 3});
      expect(nd.shape() == std::vector<int64_t>{6, 4, 3} && nd.global_len() == 72, "Layout::nd shape and length");
      // PyLops-MPI's split of 6 rows: the first 6 % P ranks get one more
      int64_t rows_here = 6 / P + (r < 6 % P ? 1 : 0), sum = 0;
      bool contiguous = true;
      for (int q = 0; q < P; ++q) {
        auto [s, len] = nd.rank_range(q);
        contiguous = contiguous && s == sum && len == 12 * (6 / P + (q < 6 % P ? 1 : 0));
        sum += len;
      }
      expect(contiguous && sum == 72, "rank_range: contiguous slabs of whole rows covering the array");
      expect(nd.local_range() == nd.rank_range(r) && nd.local_range().second == 12 * rows_here,
             "local_range is this rank's rank_range");
      expect(l.shape() == std::vector<int64_t>{n}, "a 1-D layout has one axis");
      Layout b(comm, 4, PARLOPS_DECIDE, PARLOPS_PARTITION_BROADCAST);
      expect(l.partition() == PARLOPS_PARTITION_SCATTER && b.partition() == PARLOPS_PARTITION_BROADCAST,
             "partition()");
      Layout l2(comm, n), other(comm, n, r == 0 ? n : 0), shorter(comm, n - 1);
      expect(l == l2 && l.equal(l2) && !(l != l2), "equal layouts compare equal");
      expect((P == 1) == (l == other) && l != shorter, "different splits or lengths compare unequal");
    });

    std::vector<double> g(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) g[static_cast<std::size_t>(i)] = g_of(i);

    section("vectors", [&] {
      Vec v(l);
      v.scatter(0, r == 0 ? g : std::vector<double>{});
      expect(local_is<double>(v, g_of), "scatter from rank 0 sets each rank's part");
      expect(v.gather<double>() == g, "gather to every rank returns the scattered array");
      const int root = P - 1;
      std::vector<double> at_root = v.gather<double>(root);
      expect(r != root || at_root == g, "gather to the last rank");
      std::vector<double> raw(static_cast<std::size_t>(n), -1.0);
      v.gather(PARLOPS_ALL_RANKS, raw.data());
      expect(raw == g, "gather into a caller array");
      Vec w(l);
      w.scatter(0, r == 0 ? static_cast<const void *>(g.data()) : nullptr);
      expect(local_is<double>(w, g_of), "scatter from a pointer");
      // a wrong length on the root fails on every rank (no rank is left waiting), the root names it
      std::vector<double> bad(static_cast<std::size_t>(n - 1), 0.0);
      parlops_status st = status_of([&] { v.scatter(0, r == 0 ? bad : std::vector<double>{}); });
      expect(st != PARLOPS_OK && (r != 0 || st == PARLOPS_ERR_SIZE_MISMATCH),
             "scatter of a short array fails on every rank, SIZE_MISMATCH on the root");
      expect(status_of([&] { (void)v.gather<float>(); }) == PARLOPS_ERR_DTYPE_MISMATCH,
             "gather<float> of a double vector: DTYPE_MISMATCH");

      Layout all_on_0(comm, n, r == 0 ? n : 0);
      Vec red = v.redistribute(all_on_0);
      expect(red.layout() == all_on_0 && red.gather<double>() == g, "redistribute keeps the entries");
      expect(r != 0 || local_is<double>(red, g_of), "redistribute: rank 0 holds all");
      Vec back = red.redistribute(l);
      expect(back.layout() == l && local_is<double>(back, g_of), "redistribute back");

      Vec d = v.duplicate();
      expect(d.layout() == l && d.dtype() == PARLOPS_F64 && d.memory() == PARLOPS_MEMORY_HOST && d.norm() == 0.0,
             "duplicate: same layout, dtype, memory; zeroed");
      Vec f32(l, PARLOPS_F32);
      expect(f32.dtype() == PARLOPS_F32 && f32.memory() == PARLOPS_MEMORY_HOST && f32.layout() == l,
             "dtype(), memory(), layout()");

      Vec c(l, PARLOPS_C128);
      set_by_global<cplx>(c, [](int64_t i) { return cplx(double(i), double(i) + 1.0); });
      c.conj();
      expect(local_is<cplx>(c, [](int64_t i) { return cplx(double(i), -(double(i) + 1.0)); }), "conj");

      Vec y(l);
      y.fill(scalar(2.0));
      y.axpby(scalar(3.0), v, scalar(-1.0));
      expect(local_is<double>(y, [](int64_t i) { return 3.0 * g_of(i) - 2.0; }), "axpby: y = 3 x - y");
      Vec z(l);
      z.waxpy(scalar(2.0), v, y);
      expect(local_is<double>(z, [](int64_t i) { return 2.0 * g_of(i) + 3.0 * g_of(i) - 2.0; }), "waxpy");
      z.pointwise_mult(v, y);
      expect(local_is<double>(z, [](int64_t i) { return g_of(i) * (3.0 * g_of(i) - 2.0); }), "pointwise_mult");
      z.waxpy(scalar(-1.0), z, v);  // w may be x
      expect(local_is<double>(z, [](int64_t i) { return g_of(i) - g_of(i) * (3.0 * g_of(i) - 2.0); }),
             "waxpy in place");

      Layout bl(comm, 4, PARLOPS_DECIDE, PARLOPS_PARTITION_BROADCAST);
      Vec b(bl);
      for (auto &e : b.local<double>()) e = r + 1.0;
      b.assemble();
      bool ones = true;
      for (double e : b.local<double>()) ones = ones && e == 1.0;
      expect(ones, "assemble: every rank holds rank 0's copy");
    });

    // the 1-D Laplacian as CSR, the operator the other sections compare with
    Csr lc = laplacian_1d(n, s0, len0);
    Op A = Op::csr(l, l, lc.ptr.data(), lc.col.data(), lc.val.data());
    auto lap = [&](const std::vector<double> &x, int64_t i) {
      double y = 2.0 * x[static_cast<std::size_t>(i)];
      if (i > 0) y -= x[static_cast<std::size_t>(i - 1)];
      if (i < n - 1) y -= x[static_cast<std::size_t>(i + 1)];
      return y;
    };

    section("operator algebra", [&] {
      Vec x(l), y(l);
      set_by_global<double>(x, g_of);
      Op I = Op::identity(l);
      I.apply(x, y);
      expect(local_is<double>(y, g_of), "identity");
      Layout three(comm, 3);
      Op Z = Op::zero(l, three);
      Vec x3(three);
      x3.fill(scalar(1.0));
      y.fill(scalar(7.0));
      Z.apply(x3, y);
      expect(y.norm(PARLOPS_NORM_INF) == 0.0 && Z.size() == std::make_pair(n, int64_t{3}), "zero operator");

      Vec d(l);
      set_by_global<double>(d, [](int64_t i) { return 1.0 + double(i); });
      Op D = Op::diagonal(d);
      Vec dx(l);
      D.apply(x, y);
      dx.pointwise_mult(d, x);
      y.axpy(scalar(-1.0), dx);
      expect(y.norm(PARLOPS_NORM_INF) == 0.0, "diag(d) x equals d .* x");
      expect(local_is<double>(*std::make_unique<Vec>(D.get_diagonal()), [](int64_t i) { return 1.0 + double(i); }),
             "get_diagonal of diag(d) is d");
      Vec ad(l);
      A.get_diagonal(ad);
      expect(local_is<double>(ad, [](int64_t) { return 2.0; }), "get_diagonal of the CSR Laplacian");

      Op Zd = A - A;
      Zd.apply(x, y);
      expect(y.norm(PARLOPS_NORM_INF) == 0.0, "A - A is zero");
      Op S = A.scaled(scalar(2.5)), S2 = 2.5 * A;
      S.apply(x, y);
      expect(local_is<double>(y, [&](int64_t i) { return 2.5 * lap(g, i); }), "scaled(2.5) A x");
      S2.apply(x, y);
      expect(local_is<double>(y, [&](int64_t i) { return 2.5 * lap(g, i); }), "2.5 * A");

      Op A2 = A.power(2), A0 = A.power(0);
      A2.apply(x, y);
      std::vector<double> ag(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) ag[static_cast<std::size_t>(i)] = lap(g, i);
      expect(local_is<double>(y, [&](int64_t i) { return lap(ag, i); }), "power(2): A (A x)");
      A0.apply(x, y);
      expect(local_is<double>(y, g_of), "power(0) is the identity");
      expect(status_of([&] { (void)A.power(-1); }) == PARLOPS_ERR_INVALID_ARGUMENT,
             "power(-1) throws INVALID_ARGUMENT");

      // y = 2 A x + 3 y0 and x = -1 A^H y0 + 0.5 x0
      Vec y0(l);
      set_by_global<double>(y0, [](int64_t i) { return 1.0 - 0.25 * double(i); });
      std::vector<double> y0g = y0.gather<double>();
      y.copy_from(y0);
      A.multadd(scalar(2.0), x, scalar(3.0), y);
      expect(local_is<double>(y, [&](int64_t i) { return 2.0 * lap(g, i) + 3.0 * y0g[static_cast<std::size_t>(i)]; }),
             "multadd");
      Vec xx(l);
      xx.copy_from(x);
      A.multadd_adjoint(scalar(-1.0), y0, scalar(0.5), xx);
      expect(local_is<double>(xx, [&](int64_t i) { return -lap(y0g, i) + 0.5 * g_of(i); }), "multadd_adjoint");
      expect(A.dtype() == PARLOPS_F64, "Op::dtype");

      // power iteration of diag(1..n) gives n
      Op::Eigen e = D.power_iteration(5000, 1e-12);
      expect(close(e.eigenvalue.re, double(n), 1e-6) && e.eigenvalue.im == 0.0 && e.iterations > 0,
             "power_iteration of diag(1..n) gives n");
    });

    section("dense, complex, transpose, conj", [&] {
      // complex dense C (rows split, columns split) against a serial product
      auto cij = [](int64_t i, int64_t j) { return cplx(1.0 + double(i) - 0.3 * double(j), 0.1 * double(i * j) - 1.0); };
      std::vector<cplx> rows_here;
      for (int64_t i = s0; i < s0 + len0; ++i)
        for (int64_t j = 0; j < n; ++j) rows_here.push_back(cij(i, j));
      Op C = Op::dense(l, l, rows_here.data());
      auto xf = [](int64_t i) { return cplx(0.5 * double(i), 2.0 - double(i)); };
      std::vector<cplx> xg(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) xg[static_cast<std::size_t>(i)] = xf(i);
      Vec x(l, PARLOPS_C128), y(l, PARLOPS_C128);
      set_by_global<cplx>(x, xf);
      auto serial = [&](int64_t i, int which) {  // 0: C x, 1: C^T x, 2: conj(C) x, 3: C^H x
        cplx s = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          cplx a = which == 0 ? cij(i, j) : which == 1 ? cij(j, i) : which == 2 ? std::conj(cij(i, j)) : std::conj(cij(j, i));
          s += a * xg[static_cast<std::size_t>(j)];
        }
        return s;
      };
      C.apply(x, y);
      expect(C.dtype() == PARLOPS_C128 && local_is<cplx>(y, [&](int64_t i) { return serial(i, 0); }, 1e-12),
             "dense complex C x");
      C.transpose().apply(x, y);
      expect(local_is<cplx>(y, [&](int64_t i) { return serial(i, 1); }, 1e-12), "transpose: C^T x");
      C.conj().apply(x, y);
      expect(local_is<cplx>(y, [&](int64_t i) { return serial(i, 2); }, 1e-12), "conj: conj(C) x");
      C.adjoint().apply(x, y);
      expect(local_is<cplx>(y, [&](int64_t i) { return serial(i, 3); }, 1e-12), "adjoint: C^H x");
      expect(C.dottest(3) < 1e-12 && A.dottest(1) < 1e-12, "dot tests");
    });

    section("summa", [&] {
      // tiles: b = ceil(10 / 3) = 4
      expect(parlops::summa_tile(10, 3, 0) == std::make_pair(int64_t{0}, int64_t{4}) &&
                 parlops::summa_tile(10, 3, 1) == std::make_pair(int64_t{4}, int64_t{4}) &&
                 parlops::summa_tile(10, 3, 2) == std::make_pair(int64_t{8}, int64_t{2}),
             "summa_tile");
      const int64_t N = 4, K = 3, M = 2;
      auto aij = [](int64_t i, int64_t j) { return 1.0 + double(i) * 0.5 - double(j); };
      auto xij = [](int64_t i, int64_t j) { return double(i) - 2.0 * double(j) + 0.25; };
      int p = 0;
      while ((p + 1) * (p + 1) <= P) ++p;
      if (p * p != P) {
        std::vector<double> a(static_cast<std::size_t>(N * K), 1.0);
        expect(status_of([&] { (void)Op::summa(comm, N, K, M, a.data()); }) == PARLOPS_ERR_NOT_SUPPORTED,
               "summa on a non-square number of ranks: NOT_SUPPORTED on every rank");
        return;
      }
      const int prow = r / p, pcol = r % p;
      auto [ai, an] = parlops::summa_tile(N, p, prow);
      auto [ak, akn] = parlops::summa_tile(K, p, pcol);
      std::vector<double> a;
      for (int64_t i = ai; i < ai + an; ++i)
        for (int64_t j = ak; j < ak + akn; ++j) a.push_back(aij(i, j));
      Op S = Op::summa(comm, N, K, M, a.data());
      auto [x, y] = S.create_vecs();
      // x holds this rank's tile of X (row-major): rows of K by the grid row, columns of M by the grid column
      auto [xr, xrn] = parlops::summa_tile(K, p, prow);
      auto [xc, xcn] = parlops::summa_tile(M, p, pcol);
      auto xl = x.local<double>();
      std::size_t q = 0;
      for (int64_t i = xr; i < xr + xrn; ++i)
        for (int64_t j = xc; j < xc + xcn && q < xl.size(); ++j) xl[q++] = xij(i, j);
      S.apply(x, y);
      auto [yr, yrn] = parlops::summa_tile(N, p, prow);
      auto yl = y.local<double>();
      bool ok = q == xl.size() && yl.size() == static_cast<std::size_t>(yrn * xcn);
      q = 0;
      for (int64_t i = yr; ok && i < yr + yrn; ++i)
        for (int64_t j = xc; j < xc + xcn; ++j) {
          double sv = 0.0;
          for (int64_t k = 0; k < K; ++k) sv += aij(i, k) * xij(k, j);
          ok = ok && close(yl[q++], sv);
        }
      expect(ok, "summa: Y = A X");
      expect(S.dottest(2) < 1e-12, "summa dot test");
    });

    section("fredholm1", [&] {
      const int64_t nsl_local = 2, nsl = 2 * P, nx = 3, ny = 2, nz = 2;
      auto G = [](int64_t sl, int64_t i, int64_t j) { return double(sl) + 0.5 * double(i) - double(j); };
      auto X = [](int64_t sl, int64_t j, int64_t k) { return double((sl + 1) * (j + 1)) - double(k); };
      std::vector<double> gl;
      for (int64_t sl = r * nsl_local; sl < (r + 1) * nsl_local; ++sl)
        for (int64_t i = 0; i < nx; ++i)
          for (int64_t j = 0; j < ny; ++j) gl.push_back(G(sl, i, j));
      Op F = Op::fredholm1(comm, nsl_local, nx, ny, nz, gl.data());
      expect(F.size() == std::make_pair(nsl * nx * nz, nsl * ny * nz), "fredholm1 size");
      auto [x, y] = F.create_vecs();
      auto xl = x.local<double>();
      for (int64_t sl = 0; sl < nsl; ++sl)
        for (int64_t j = 0; j < ny; ++j)
          for (int64_t k = 0; k < nz; ++k) xl[static_cast<std::size_t>((sl * ny + j) * nz + k)] = X(sl, j, k);
      F.apply(x, y);
      auto yl = y.local<double>();
      bool ok = yl.size() == static_cast<std::size_t>(nsl * nx * nz);
      for (int64_t sl = 0; ok && sl < nsl; ++sl)
        for (int64_t i = 0; i < nx; ++i)
          for (int64_t k = 0; k < nz; ++k) {
            double sv = 0.0;
            for (int64_t j = 0; j < ny; ++j) sv += G(sl, i, j) * X(sl, j, k);
            ok = ok && close(yl[static_cast<std::size_t>((sl * nx + i) * nz + k)], sv);
          }
      expect(ok, "fredholm1: y[s] = G[s] x[s]");
    });

    section("nonstationary_convolve1d", [&] {
      // two unit impulses (at 0 and 11): every interpolated filter is the impulse, so y = x; rank 0
      // holds one sample when there are others (the halo of 2 reaches past its neighbour)
      const int64_t n = 12;
      Layout l(comm, n, P == 1 ? n : r == 0 ? 1 : (n - 1) / (P - 1) + (r - 1 < (n - 1) % (P - 1) ? 1 : 0));
      const double delta[2 * 5] = {0, 0, 1, 0, 0, 0, 0, 1, 0, 0};
      const int64_t ih[2] = {0, 11};
      Op C = Op::nonstationary_convolve1d(l, 0, 5, 2, delta, ih);
      auto [x, y] = C.create_vecs();
      auto xl = x.local<double>();
      for (std::size_t i = 0; i < xl.size(); ++i) xl[i] = 1.5 + double(i) + double(r);
      C.apply(x, y);
      auto yl = y.local<double>();
      bool ok = yl.size() == xl.size();
      for (std::size_t i = 0; ok && i < yl.size(); ++i) ok = yl[i] == xl[i];
      expect(ok, "nonstationary_convolve1d: impulse filters give y = x");
      const double bank[3 * 5] = {0.1, -0.4, 1.0, 0.3, 0.2, 0.5, 0.5, -1.0, 0.25, 0.0, 1.0, 2.0, 3.0, 2.0, 1.0};
      const int64_t ih3[3] = {1, 6, 11};
      Op C3 = Op::nonstationary_convolve1d(l, -1, 5, 3, bank, ih3);
      expect(C3.dottest(2) < 1e-12, "nonstationary_convolve1d dot test");
    });

    section("mdc", [&] {
      // only the zero frequency, on the last rank (the others pass none), prescaled: y(t) = Re(g) mean(x)
      const int64_t nt = 7;
      const std::complex<double> g{2.5, -1.0};
      Op M = Op::mdc(comm, r == P - 1 ? 1 : 0, 1, 1, nt, 1, &g, 1.0, 1.0, true, false, true);
      expect(M.size() == std::make_pair(nt, nt), "mdc size");
      auto [x, y] = M.create_vecs();
      auto xl = x.local<double>();
      double sum = 0.0;
      for (int64_t t = 0; t < nt; ++t) sum += (xl[static_cast<std::size_t>(t)] = 1.0 + double(t * t));
      M.apply(x, y);
      auto yl = y.local<double>();
      bool ok = yl.size() == static_cast<std::size_t>(nt);
      for (int64_t t = 0; ok && t < nt; ++t) ok = close(yl[static_cast<std::size_t>(t)], 2.5 * sum / double(nt));
      expect(ok, "mdc: the zero frequency alone gives Re(g) mean(x)");
      // three frequencies of 2 x 3 slices, split 2 / 1 / 0 ...: the dot test
      std::vector<std::complex<double>> gl;
      const int64_t mine = r == 0 ? 2 : (r == 1 ? 1 : 0);
      for (int64_t k = 0; k < mine * 6; ++k) gl.emplace_back(0.1 * double(k + r), 0.3 - 0.05 * double(k));
      Op M2 = Op::mdc(comm, mine, 2, 3, 9, 2, gl.data(), 0.004, 10.0);
      expect(M2.size() == std::make_pair(int64_t{9 * 2 * 2}, int64_t{9 * 3 * 2}), "mdc size (2 x 3 slices)");
      expect(M2.dottest(3) < 1e-12, "mdc dot test");
    });

    section("halo", [&] {
      // default grid: all ranks on the last axis, block = ceil(5 / P)
      const int64_t b5 = (5 + P - 1) / P;
      bool ok = true;
      int64_t cells = 0;
      for (int q = 0; q < P; ++q) {
        parlops::Block blk = parlops::halo_block({7, 5}, P, q);
        const int64_t st = std::min<int64_t>(5, q * b5), sh = std::min<int64_t>(5, st + b5) - st;
        ok = ok && blk.start == std::vector<int64_t>{0, st} && blk.shape == std::vector<int64_t>{7, sh};
        cells += blk.shape[0] * blk.shape[1];
      }
      expect(ok && cells == 35, "halo_block: blocks along the last axis tile the array");
      parlops::Block g0 = parlops::halo_block({7, 5}, P, r, {P, 1});
      const int64_t b7 = (7 + P - 1) / P, st7 = std::min<int64_t>(7, r * b7);
      expect(g0.start == std::vector<int64_t>{st7, 0} &&
                 g0.shape == std::vector<int64_t>{std::min<int64_t>(7, st7 + b7) - st7, 5},
             "halo_block with a P x 1 grid");
      expect(status_of([&] { (void)parlops::halo_block({7, 5}, P, r, {P}); }) == PARLOPS_ERR_SIZE_MISMATCH,
             "halo_block with a short grid: SIZE_MISMATCH");

      // 1-D halo of width 1 (trimmed at the ends): each rank sees its block and one neighbour value per side
      const int64_t N = 11;
      Op H = Op::halo(comm, {N}, {1});
      auto [x, y] = H.create_vecs();
      parlops::Block blk = parlops::halo_block({N}, P, r);
      const int64_t st = blk.start[0], len = blk.shape[0];
      auto xl = x.local<double>();
      ok = xl.size() == static_cast<std::size_t>(len);
      for (int64_t k = 0; ok && k < len; ++k) xl[static_cast<std::size_t>(k)] = g_of(st + k);
      H.apply(x, y);
      const int64_t lo = std::max<int64_t>(0, st - 1), hi = std::min<int64_t>(N, st + len + 1);
      auto yl = y.local<double>();
      ok = ok && yl.size() == static_cast<std::size_t>(len == 0 ? 0 : hi - lo);
      for (int64_t k = 0; ok && k < static_cast<int64_t>(yl.size()); ++k) ok = yl[static_cast<std::size_t>(k)] == g_of(lo + k);
      expect(ok, "halo: padded block holds the neighbours' values");
      expect(H.dottest(5) < 1e-12, "halo dot test (the adjoint adds ghosts back)");
      expect(status_of([&] { (void)Op::halo(comm, {N}, {1}, {1, 1}); }) == PARLOPS_ERR_SIZE_MISMATCH,
             "halo with a grid of the wrong length: SIZE_MISMATCH on every rank");
    });

    section("stencils", [&] {
      const int64_t n0 = 6, n1 = 5;
      const double h0 = 1.0, h1 = 0.5;
      Layout g2 = Layout::nd(comm, {n0, n1});
      auto [gs, glen] = g2.local_range();
      Vec f(g2), y(g2);
      // f = 3 x0 + 2 x1: first derivatives 3 and 2 (exact, also one-sided at the ends)
      set_by_global<double>(f, [&](int64_t i) { return 3.0 * double(i / n1) * h0 + 2.0 * double(i % n1) * h1; });
      Op D1 = Op::first_derivative(g2, 1, h1, PARLOPS_CENTERED, true);
      D1.apply(f, y);
      expect(local_is<double>(y, [](int64_t) { return 2.0; }, 1e-12), "first_derivative (centered, edge) along axis 1");
      Op D0 = Op::first_derivative(g2, 0, h0, PARLOPS_FORWARD);
      D0.apply(f, y);
      expect(local_is<double>(y, [&](int64_t i) { return i / n1 < n0 - 1 ? 3.0 : 0.0; }, 1e-12),
             "first_derivative (forward) along axis 0: last row 0");
      // f = x0^2 + x1^2: second derivatives 2 inside, 0 at the ends (edge = false)
      set_by_global<double>(f, [&](int64_t i) {
        const double a = double(i / n1) * h0, b = double(i % n1) * h1;
        return a * a + b * b;
      });
      auto inside = [](int64_t i, int64_t m) { return i > 0 && i < m - 1; };
      Op S0 = Op::second_derivative(g2, 0, h0);
      S0.apply(f, y);
      expect(local_is<double>(y, [&](int64_t i) { return inside(i / n1, n0) ? 2.0 : 0.0; }, 1e-12),
             "second_derivative along axis 0");
      Op L = Op::laplacian(g2, {1.0, 2.0}, {h0, h1});
      L.apply(f, y);
      expect(local_is<double>(y, [&](int64_t i) {
               return (inside(i / n1, n0) ? 2.0 : 0.0) + 2.0 * (inside(i % n1, n1) ? 2.0 : 0.0);
             }, 1e-12),
             "laplacian: weighted sum of second derivatives");
      expect(L.dottest(7) < 1e-12, "laplacian dot test");
      expect(status_of([&] { (void)Op::laplacian(g2, {1.0}, {h0, h1}); }) == PARLOPS_ERR_SIZE_MISMATCH,
             "laplacian with one weight for two axes: SIZE_MISMATCH on every rank");
      // the matrix-free 5-point Poisson operator on the same grid: applied to ones, 4 minus the
      // number of neighbours (0 inside, 1 on an edge, 2 in a corner)
      Op Pm = Op::poisson(g2, {n0, n1});
      set_by_global<double>(f, [&](int64_t) { return 1.0; });
      Pm.apply(f, y);
      expect(local_is<double>(y, [&](int64_t i) {
               return double((i / n1 == 0) + (i / n1 == n0 - 1) + (i % n1 == 0) + (i % n1 == n1 - 1));
             }, 1e-14),
             "poisson: 4 minus the neighbours");
      expect(Pm.dottest(7) < 1e-12, "poisson dot test");
      expect(status_of([&] { (void)Op::poisson(g2, {n0, n1 + 1}); }) == PARLOPS_ERR_SIZE_MISMATCH,
             "poisson with dims that do not make the layout: SIZE_MISMATCH on every rank");
      // gradient of 3 x0 + 2 x1 (edge): per rank [d/dx0 of its slab, d/dx1 of its slab]
      set_by_global<double>(f, [&](int64_t i) { return 3.0 * double(i / n1) * h0 + 2.0 * double(i % n1) * h1; });
      Op Gr = Op::gradient(g2, {h0, h1}, PARLOPS_CENTERED, true);
      auto [gx, gy] = Gr.create_vecs();
      gx.copy_from(f);
      Gr.apply(gx, gy);
      auto gl = gy.local<double>();
      bool ok = gl.size() == static_cast<std::size_t>(2 * glen);
      for (std::size_t k = 0; ok && k < gl.size(); ++k) ok = close(gl[k], k < static_cast<std::size_t>(glen) ? 3.0 : 2.0);
      expect(ok && gs == g2.local_range().first, "gradient");
      // the FFT over both axes: the transform of a constant is N at frequency 0; F^H F = N I
      Op F = Op::fft(g2, {0, 1});
      auto [fx, fy] = F.create_vecs();
      for (auto &e : fx.local<std::complex<double>>()) e = 1.0;
      F.apply(fx, fy);
      const double nn = double(n0 * n1);
      const int64_t ys = fy.layout().local_range().first;
      auto fl = fy.local<std::complex<double>>();
      bool fok = true;
      for (std::size_t k = 0; k < fl.size(); ++k) fok = fok && std::abs(fl[k] - (ys + int64_t(k) == 0 ? nn : 0.0)) < 1e-9;
      expect(fok, "fft of a constant");
      Vec fz = fx.duplicate();
      F.apply_adjoint(fy, fz);
      bool aok = true;
      for (auto &e : fz.local<std::complex<double>>()) aok = aok && std::abs(e - nn) < 1e-9;
      expect(aok, "fft: F^H F x = N x");
      expect(status_of([&] { (void)Op::fft(g2, {0, 1}, PARLOPS_FFT_NORM_NONE, false, {true}); }) ==
                 PARLOPS_ERR_SIZE_MISMATCH,
             "fft with one shift flag for two axes: SIZE_MISMATCH on every rank");
    });

    section("block operators", [&] {
      // block_diag: rank r has two 2 x 2 diagonal blocks (rank 1: none)
      const int nb = r == 1 ? 0 : 2;
      Layout two(self, 2);
      std::vector<Op> blocks;
      for (int b = 0; b < nb; ++b) {
        Vec d(two);
        for (auto &e : d.local<double>()) e = 10.0 * r + b + 1.0;
        blocks.push_back(Op::diagonal(d));
      }
      Op BD = Op::block_diag(comm, blocks);
      auto [x, y] = BD.create_vecs();
      auto xl = x.local<double>();
      for (std::size_t k = 0; k < xl.size(); ++k) xl[k] = 1.0 + double(k);
      BD.apply(x, y);
      auto yl = y.local<double>();
      bool ok = yl.size() == static_cast<std::size_t>(2 * nb);
      for (std::size_t k = 0; ok && k < yl.size(); ++k) ok = yl[k] == (10.0 * r + double(k / 2) + 1.0) * (1.0 + double(k));
      expect(ok && BD.size().first == 2 * (2 * P - (P > 1 ? 2 : 0)), "block_diag of per-rank blocks");

      // vstack: rank r holds an (r+1) x 3 dense block; x replicated
      auto vij = [](int q, int64_t i, int64_t j) { return double(q) + double(i) - 0.1 * double(j); };
      Layout mr(self, r + 1), c3(self, 3);
      std::vector<double> va;
      for (int64_t i = 0; i <= r; ++i)
        for (int64_t j = 0; j < 3; ++j) va.push_back(vij(r, i, j));
      Op Vb = Op::dense(mr, c3, va.data());
      Op V = Op::vstack(comm, {Vb});
      auto [vx, vy] = V.create_vecs();
      auto vxl = vx.local<double>();
      for (std::size_t j = 0; j < vxl.size(); ++j) vxl[j] = 2.0 - double(j);
      V.apply(vx, vy);
      auto vyl = vy.local<double>();
      ok = vxl.size() == 3 && vyl.size() == static_cast<std::size_t>(r + 1);
      for (int64_t i = 0; ok && i <= r; ++i) {
        double sv = 0.0;
        for (int64_t j = 0; j < 3; ++j) sv += vij(r, i, j) * (2.0 - double(j));
        ok = close(vyl[static_cast<std::size_t>(i)], sv);
      }
      expect(ok && V.size() == std::make_pair(int64_t{P * (P + 1) / 2}, int64_t{3}), "vstack");

      // hstack: rank r holds a 2 x (r+1) block; x split, y replicated = sum over ranks
      Layout r2(self, 2), cr(self, r + 1);
      std::vector<double> ha;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j <= r; ++j) ha.push_back(vij(r, i, j));
      std::vector<Op> hs;
      hs.push_back(Op::dense(r2, cr, ha.data()));
      Op Hs = Op::hstack(comm, hs);
      auto [hx, hy] = Hs.create_vecs();
      auto hxl = hx.local<double>();
      for (std::size_t j = 0; j < hxl.size(); ++j) hxl[j] = 1.0 + double(r) + 0.5 * double(j);
      Hs.apply(hx, hy);
      auto hyl = hy.local<double>();
      ok = hyl.size() == 2;
      for (int64_t i = 0; ok && i < 2; ++i) {
        double sv = 0.0;
        for (int q = 0; q < P; ++q)
          for (int64_t j = 0; j <= q; ++j) sv += vij(q, i, j) * (1.0 + double(q) + 0.5 * double(j));
        ok = close(hyl[static_cast<std::size_t>(i)], sv);
      }
      expect(ok, "hstack: y = sum of the ranks' blocks times their parts of x");

      // stacked_block_diag(diag(d), 2 I) of distributed operators
      Layout l5(comm, 5);
      Vec d(l);
      set_by_global<double>(d, g_of);
      Op A1 = Op::diagonal(d), A2 = 2.0 * Op::identity(l5);
      Op SB = Op::stacked_block_diag(comm, {A1, A2});
      auto [sx, sy] = SB.create_vecs();
      const int64_t l5len = l5.local_range().second;
      auto sxl = sx.local<double>();
      ok = sxl.size() == static_cast<std::size_t>(len0 + l5len);
      for (std::size_t k = 0; ok && k < sxl.size(); ++k) sxl[k] = 1.0 + double(k);
      SB.apply(sx, sy);
      auto syl = sy.local<double>();
      for (int64_t k = 0; ok && k < len0 + l5len; ++k)
        ok = syl[static_cast<std::size_t>(k)] == (k < len0 ? g_of(s0 + k) : 2.0) * (1.0 + double(k));
      expect(ok && SB.size() == std::make_pair(n + 5, n + 5), "stacked_block_diag");
    });

    section("parcsr", [&] {
      // the 1-D Laplacian in hypre's split: diag with local columns, offd with global col_map
      std::vector<int64_t> di{0}, dj, oi{0}, oj, cmap;
      std::vector<double> da, oa;
      if (s0 > 0) cmap.push_back(s0 - 1);
      if (s0 + len0 < n && len0 > 0) cmap.push_back(s0 + len0);
      for (int64_t i = s0; i < s0 + len0; ++i) {
        for (int64_t j = i - 1; j <= i + 1; ++j) {
          if (j < 0 || j >= n) continue;
          const double v = j == i ? 2.0 : -1.0;
          if (j >= s0 && j < s0 + len0) {
            dj.push_back(j - s0);
            da.push_back(v);
          } else {
            oj.push_back(j < s0 ? 0 : static_cast<int64_t>(cmap.size()) - 1);
            oa.push_back(v);
          }
        }
        di.push_back(static_cast<int64_t>(dj.size()));
        oi.push_back(static_cast<int64_t>(oj.size()));
      }
      const int64_t noffd = static_cast<int64_t>(cmap.size());
      Op W = Op::parcsr(l, l, di.data(), dj.data(), da.data(), noffd ? oi.data() : nullptr, noffd ? oj.data() : nullptr,
                        noffd ? oa.data() : nullptr, noffd, cmap.data(), PARLOPS_WRAP);
      std::vector<int> di32(di.begin(), di.end()), dj32(dj.begin(), dj.end()), oi32(oi.begin(), oi.end()),
          oj32(oj.begin(), oj.end());
      Op Cp = Op::parcsr(l, l, di32.data(), dj32.data(), da.data(), oi32.data(), oj32.data(), oa.data(), noffd,
                         cmap.data());
      Vec x(l), y(l), z(l);
      set_by_global<double>(x, g_of);
      W.apply(x, y);
      expect(local_is<double>(y, [&](int64_t i) { return lap(g, i); }), "parcsr (64-bit, wrapped) is the Laplacian");
      Cp.apply(x, z);
      expect(local_is<double>(z, [&](int64_t i) { return lap(g, i); }), "parcsr (32-bit, copied) is the Laplacian");
      auto [dv, ov] = W.csr_arrays();
      expect(dv == static_cast<const void *>(da.data()) && (noffd == 0 || ov == static_cast<const void *>(oa.data())),
             "csr_arrays of a wrapped parcsr are the caller's arrays");
      auto [cdv, cov] = Cp.csr_arrays();
      (void)cov;
      expect(cdv != static_cast<const void *>(da.data()), "csr_arrays of a copied parcsr are parlops' own");
    });

    section("shell operators", [&] {
      // C callbacks: y = 2.5 x; parlops frees the context with the operator
      int destroyed = 0;
      {
        Op R = Op::shell(l, l, PARLOPS_F64, new RawCtx{2.5, len0, &destroyed}, raw_forward, raw_forward, raw_destroy);
        Vec x(l), y(l);
        set_by_global<double>(x, g_of);
        R.apply(x, y);
        expect(local_is<double>(y, [](int64_t i) { return 2.5 * g_of(i); }), "C-callback shell: y = 2.5 x");
        R.apply_adjoint(x, y);
        expect(local_is<double>(y, [](int64_t i) { return 2.5 * g_of(i); }) && R.dottest(1) < 1e-12,
               "C-callback shell adjoint and dot test");
        expect(destroyed == 0, "context alive with the operator");
      }
      expect(destroyed == 1, "destroy_ctx called once when the operator goes");
      auto *kept = new RawCtx{1.0, len0, &destroyed};
      expect(status_of([&] { (void)Op::shell(l, l, PARLOPS_F64, kept, raw_forward, nullptr, raw_destroy, 99); }) ==
                     PARLOPS_ERR_INVALID_ARGUMENT &&
                 destroyed == 1,
             "failed C-callback shell: INVALID_ARGUMENT, destroy_ctx not called");
      delete kept;  // still ours

      // C++ callables, typed spans; the context is freed with the operator or on failure
      auto token = std::make_shared<int>(0);
      {
        Op F = Op::shell<double>(
            l, l,
            [token, s = s0](parlops::span<const double> in, parlops::span<double> out) {
              for (std::size_t k = 0; k < in.size(); ++k) out[k] = (1.0 + double(s) + double(k)) * in[k];
            },
            [token, s = s0](parlops::span<const double> in, parlops::span<double> out) {
              for (std::size_t k = 0; k < in.size(); ++k) out[k] = (1.0 + double(s) + double(k)) * in[k];
            });
        expect(token.use_count() == 3, "the operator holds the callables");
        Vec x(l), y(l);
        set_by_global<double>(x, g_of);
        F.apply(x, y);
        expect(local_is<double>(y, [](int64_t i) { return (1.0 + double(i)) * g_of(i); }),
               "std::function shell: diag(1..n) x");
        expect(F.dottest(4) < 1e-12, "std::function shell dot test");
        expect(F.power_iteration(5000, 1e-12).eigenvalue.re > double(n) * (1 - 1e-6),
               "power iteration through a shell");
      }
      expect(token.use_count() == 1, "callables freed with the operator (destroy_ctx)");
      {
        // with its diagonal: Jacobi and the diagonal through the C++ callables
        Op F = Op::shell_with_diagonal<double>(
            l, l,
            [token, s = s0](parlops::span<const double> in, parlops::span<double> out) {
              for (std::size_t k = 0; k < in.size(); ++k) out[k] = (1.0 + double(s) + double(k)) * in[k];
            },
            {},
            [token, s = s0](parlops::span<double> d) {
              for (std::size_t k = 0; k < d.size(); ++k) d[k] = 1.0 + double(s) + double(k);
            });
        expect(token.use_count() == 3, "the operator with a diagonal holds the callables");
        Vec d(l);
        F.get_diagonal(d);
        expect(local_is<double>(d, [](int64_t i) { return 1.0 + double(i); }), "shell_with_diagonal: its diagonal");
        Op C = Op::chebyshev(F, 2);
        Vec b(l), x(l);
        set_by_global<double>(b, g_of);
        C.apply(b, x);  // D^-1 A = I: the polynomial is a constant times D^-1
        expect(x.norm(PARLOPS_NORM_2) > 0.0, "Chebyshev on a shell with its diagonal");
        Layout lother(comm, n + 1);
        expect(status_of([&] {
                 (void)Op::shell_with_diagonal<double>(
                     l, lother, [](parlops::span<const double>, parlops::span<double>) {}, {},
                     [](parlops::span<double>) {});
               }) == PARLOPS_ERR_INVALID_ARGUMENT,
               "a diagonal for a non-square shell: INVALID_ARGUMENT");
      }
      expect(token.use_count() == 1, "callables freed with the operator (destroy_ctx)");
      expect(status_of([&] {
               (void)Op::shell<double>(
                   l, l, [token](parlops::span<const double>, parlops::span<double>) {}, {}, 99);
             }) == PARLOPS_ERR_INVALID_ARGUMENT &&
                 token.use_count() == 1,
             "failed std::function shell: INVALID_ARGUMENT, callables freed by the C++ layer");
      Op T = Op::shell<double>(l, l, [](parlops::span<const double>, parlops::span<double>) {
        throw std::runtime_error("callback failure");
      });
      Vec x(l), y(l);
      expect(status_of([&] { T.apply(x, y); }) == PARLOPS_ERR_CALLBACK, "a throwing callable: CALLBACK");
      expect(status_of([&] { T.apply_adjoint(y, x); }) != PARLOPS_OK, "no adjoint given: the adjoint fails");
    });

    section("multi-vectors and eigensolvers", [&] {
      // the 1-D Laplacian's eigenvalues: 2 - 2 cos(k pi / (n + 1))
      const double pi = std::acos(-1.0);
      auto exact = [&](int64_t k) { return 2.0 - 2.0 * std::cos(static_cast<double>(k) * pi / static_cast<double>(n + 1)); };
      Vec v0(l), u0(l), u1(l);
      v0.set_random(PARLOPS_RANDOM_UNIFORM, 3);
      std::vector<double> res;
      int64_t steps = 0;
      std::vector<double> top = parlops::eig_lanczos(A, v0, 2, PARLOPS_EIG_LARGEST, n, 1e-10, {&u0, &u1}, &res, &steps);
      expect(close(top[0], exact(n), 1e-8) && close(top[1], exact(n - 1), 1e-8) && steps <= n,
             "Lanczos: the two largest eigenvalues of the 1-D Laplacian");
      auto g = parlops::block_dot(comm, {&u0, &u1}, {&u0, &u1});
      expect(close(g[0].re, 1.0, 1e-10) && std::abs(g[1].re) < 1e-10 && close(g[3].re, 1.0, 1e-10),
             "block_dot: the Ritz vectors are orthonormal");
      // U diag(theta) U^H u0 = theta_0 u0
      Op L = parlops::low_rank(comm, {&u0, &u1}, top);
      Vec y(l), d(l);
      L.apply(u0, y);
      d.copy_from(u0);
      d.scale(scalar(-top[0]));
      parlops::maxpy(d, {scalar(1.0)}, {&y});
      expect(d.norm() <= 1e-10 * top[0], "low_rank and maxpy: L u0 = theta_0 u0");
      // randomized, from as many random vectors as unknowns: the exact leading pair
      std::vector<Vec> om;
      for (int64_t j = 0; j < n; ++j) {
        om.emplace_back(l);
        om.back().set_random(PARLOPS_RANDOM_GAUSSIAN, static_cast<uint64_t>(100 + j));
      }
      std::vector<const Vec *> omp;
      for (const Vec &v : om) omp.push_back(&v);
      Vec w0(l), w1(l);
      std::vector<double> rv = parlops::eig_randomized(A, omp, {&w0, &w1});
      expect(close(rv[0], exact(n), 1e-10) && close(rv[1], exact(n - 1), 1e-10), "randomized eigensolver (full range): exact");
      Vec a0(l), a1(l);
      a0.set_random(PARLOPS_RANDOM_GAUSSIAN, 5);
      a1.set_random(PARLOPS_RANDOM_GAUSSIAN, 6);
      auto r = parlops::orthonormalize(comm, {&a0, &a1});
      auto q = parlops::block_dot(comm, {&a0, &a1}, {&a0, &a1});
      expect(close(q[0].re, 1.0, 1e-12) && std::abs(q[1].re) < 1e-12 && r[2].re == 0.0, "orthonormalize: Q^H Q = I, R upper");
      expect(status_of([&] { (void)parlops::orthonormalize(comm, {&a0, &a0}); }) == PARLOPS_ERR_INVALID_ARGUMENT,
             "orthonormalize: the same vector twice is refused");
    });

    section("rank groups", [&] {
      // groups by rank parity; each holds a vector of 6 ones split over its ranks
      Comm g = parlops::split(comm, comm.rank() % 2);
      Layout gl(g, 6);
      Vec one(gl);
      one.fill(scalar(1.0));
      const int groups = comm.size() > 1 ? 2 : 1;
      expect(close(one.norm(), std::sqrt(6.0)) && close(parlops::norm_groups(comm, one), std::sqrt(6.0 * groups)) &&
                 close(parlops::dot_groups(comm, one, one).re, 6.0 * groups),
             "rank groups: norms within a group and across groups");
    });

    section("stacked vectors and block operators", [&] {
      // [A; I] stacked: y = [A x; x]; the parts come back with stack_get
      Op I = Op::identity(l);
      Op K = parlops::block(comm, 2, 1, {&A, &I});
      Layout s = parlops::stack(comm, {&l, &l});
      Vec x(l), y(s), p0(l), p1(l);
      set_by_global<double>(x, g_of);
      K.apply(x, y);
      parlops::stack_get(y, 0, p0);
      parlops::stack_get(y, 1, p1);
      Vec ax(l);
      A.apply(x, ax);
      p0.axpy(scalar(-1.0), ax);
      p1.axpy(scalar(-1.0), x);
      expect(p0.norm() == 0.0 && p1.norm() == 0.0, "block [A; I]: the parts are A x and x");
      parlops::stack_set(y, 1, ax);
      parlops::stack_get(y, 1, p1);
      p1.axpy(scalar(-1.0), ax);
      expect(p1.norm() == 0.0 && y.norm() > 0.0, "stack_set then stack_get");
      // block lower-triangular on [A 0; I A] with identity diagonal preconditioners: x = [b0; b1 - b0]
      Op L2 = parlops::block(comm, 2, 2, {&A, nullptr, &I, &A});
      Op T = parlops::block_lower_triangular(L2, {&I, &I});
      Vec b(s), z(s), z1(l), b0(l);
      b.fill(scalar(1.0));
      T.apply(b, z);
      parlops::stack_get(z, 1, z1);
      expect(z1.norm() == 0.0, "block lower-triangular: x_1 = b_1 - I x_0 = 0");
      expect(status_of([&] { (void)parlops::block(comm, 1, 2, {nullptr, nullptr}); }) == PARLOPS_ERR_INVALID_ARGUMENT,
             "a block row without an operator is refused");
      // regularised least squares [A; I] x = [1; 0] by CGLS: the normal equations hold for the answer
      Solver ls(comm, PARLOPS_METHOD_CGLS);
      ls.set_operator(K);
      ls.set_tolerances(1e-12);
      Vec rhs(s), xl(l), kx(s), g(l), khb(l);
      Vec ones(l);
      ones.fill(scalar(1.0));
      parlops::stack_set(rhs, 0, ones);
      parlops_solve_info li = ls.solve(rhs, xl);
      K.apply(xl, kx);
      kx.axpy(scalar(-1.0), rhs);
      K.apply_adjoint(kx, g);
      K.apply_adjoint(rhs, khb);
      expect(li.reason > 0 && g.norm() <= 1e-10 * khb.norm(), "CGLS on the block operator [A; I]: the normal equations hold");
      // a saddle point [A I; I 0] by MINRES with a block-diagonal preconditioner: the true residual
      Op Sd = parlops::block(comm, 2, 2, {&A, &I, &I, nullptr});
      Op P2 = parlops::block(comm, 2, 2, {&I, nullptr, nullptr, &I});
      Solver mr(comm, PARLOPS_METHOD_MINRES);
      mr.set_operator(Sd);
      mr.set_preconditioner(&P2);
      mr.set_tolerances(1e-10);
      Vec sb(s), sx(s), sr(s);
      sb.fill(scalar(1.0));
      parlops_solve_info mi = mr.solve(sb, sx);
      Sd.apply(sx, sr);
      sr.axpy(scalar(-1.0), sb);
      expect(mi.reason > 0 && sr.norm() <= 1.01e-10 * sb.norm() + 1e-13, "MINRES on the saddle point [A I; I 0]: true residual");
      (void)b0;
    });

    section("solvers", [&] {
      // CG on the Laplacian with a C++ monitor and history; true residual checked
      Solver cg(comm, PARLOPS_METHOD_CG);
      cg.set_operator(A);
      cg.set_tolerances(1e-10);
      cg.keep_history(true);
      int64_t calls = 0;
      double last = -1.0;
      cg.set_monitor([&](int64_t, double rn) {
        ++calls;
        last = rn;
        return false;
      });
      Vec b(l), x(l), res(l);
      b.fill(scalar(1.0));
      parlops_solve_info info = cg.solve(b, x);
      A.apply(x, res);
      res.axpy(scalar(-1.0), b);
      expect(info.reason > 0 && res.norm() <= 1e-9 * b.norm(), "CG converges, true residual checked");
      expect(calls >= info.iterations && calls > 0 && close(last, info.final_residual_norm) &&
                 cg.history().size() == static_cast<std::size_t>(info.iterations + 1),
             "std::function monitor sees every iteration");
      cg.set_monitor([](int64_t it, double) { return it >= 2; });
      info = cg.solve(b, x);
      expect(info.reason == PARLOPS_DIVERGED_USER && info.iterations <= 3, "monitor returning true stops the solve");
      cg.set_monitor(std::function<bool(int64_t, double)>{});
      // the iterate monitor: r is b - A x of the x it sees; a convergence declared from iteration 4
      double worst = 0.0;
      cg.set_monitor_iterate([&](int64_t it, double rn, const parlops_vec *xv, const parlops_vec *rv) {
        double nr = 0.0;
        if (parlops_vec_norm(rv, PARLOPS_NORM_2, 0.0, &nr) != PARLOPS_OK) return PARLOPS_MONITOR_STOP;
        (void)xv;
        worst = std::max(worst, std::abs(nr - rn));
        return it >= 4 ? PARLOPS_MONITOR_CONVERGED : PARLOPS_MONITOR_CONTINUE;
      });
      info = cg.solve(b, x);
      expect(info.reason == PARLOPS_CONVERGED_USER && info.iterations == 4 && worst <= 1e-8 * b.norm(),
             "std::function iterate monitor: sees r, declares convergence");
      cg.set_monitor_iterate([](int64_t, double, const parlops_vec *, const parlops_vec *) -> parlops_monitor_action {
        throw std::runtime_error("monitor failure");
      });
      info = cg.solve(b, x);
      expect(info.reason == PARLOPS_DIVERGED_USER && info.iterations == 0, "a throwing iterate monitor stops the solve");
      cg.set_monitor_iterate(Solver::IterateMonitor{});
      cg.set_trust_region(0.25);
      info = cg.solve(b, x);
      expect(info.reason == PARLOPS_CONVERGED_STEP_LENGTH && std::abs(x.norm() - 0.25) <= 1e-12,
             "trust-region CG stops on the boundary");
      cg.set_trust_region(0.0);
      info = cg.solve(b, x);
      A.apply(x, res);
      res.axpy(scalar(-1.0), b);
      expect(info.reason > 0 && res.norm() <= 1e-9 * b.norm(), "empty monitor removed (true residual checked)");
      // sequential sums (MFEM's order): the same iterations within one, the rule holds on the true residual
      cg.set_sum_order(PARLOPS_SUM_SEQUENTIAL);
      parlops_solve_info seq = cg.solve(b, x);
      A.apply(x, res);
      res.axpy(scalar(-1.0), b);
      expect(seq.reason > 0 && res.norm() <= 1e-9 * b.norm() && (seq.iterations > info.iterations ? seq.iterations - info.iterations : info.iterations - seq.iterations) <= 1,
             "sequential sum order (true residual checked)");
      // the reproducible order: converges on the true residual (the bits at other rank counts are
      // tests/mpi_reproducible.rs' and tests/c/repro_beam.c's to check)
      cg.set_sum_order(PARLOPS_SUM_REPRODUCIBLE);
      parlops_solve_info rep = cg.solve(b, x);
      A.apply(x, res);
      res.axpy(scalar(-1.0), b);
      expect(rep.reason > 0 && res.norm() <= 1e-9 * b.norm(), "reproducible sum order (true residual checked)");
      cg.set_sum_order(PARLOPS_SUM_BLOCKED);

      // ISTA/FISTA with A = I: x = soft(b, eps / 2)
      Op I = Op::identity(l);
      Vec bb(l);
      set_by_global<double>(bb, [](int64_t i) { return g_of(i) - 2.6; });
      const double eps = 1.0;
      auto soft = [&](int64_t i) {
        const double v = g_of(i) - 2.6;
        return std::abs(v) <= eps / 2 ? 0.0 : v - std::copysign(eps / 2, v);
      };
      for (parlops_method m : {PARLOPS_METHOD_ISTA, PARLOPS_METHOD_FISTA}) {
        Solver s(comm, m);
        s.set_operator(I);
        s.set_sparsity(PARLOPS_THRESHOLD_SOFT, eps, m == PARLOPS_METHOD_ISTA ? 0.0 : 0.5);
        s.set_tolerances(1e-13, 1e-50, 1e5, 5000);
        Vec xs(l);
        info = s.solve(bb, xs);
        expect(info.reason > 0 && local_is<double>(xs, soft, 1e-9),
               std::string(m == PARLOPS_METHOD_ISTA ? "ISTA" : "FISTA") + " with soft threshold: x = soft(b, eps/2)");
      }
      // proximal gradient (f = 1/2 ||x - b||^2, g = eps/2 ||x||_1, tau 1): one step is soft(b, eps/2);
      // the caller's L1 as a lambda gives the same bits; primal-dual with A = I converges to it
      {
        Prox f = Prox::l2(l, 1.0, &bb), g = Prox::l1(l, eps / 2);
        Vec xp(l), xq(l), yd(l);
        int64_t its = proximal_gradient(f, g, xp, 1.0, 1);
        expect(its == 1 && local_is<double>(xp, soft, 0.0), "proximal gradient: one step is soft(b, eps/2)");
        Prox gs = Prox::shell<double>(l, [&](double tau, span<const double> x, span<double> y) {
          for (std::size_t i = 0; i < x.size(); i++)
            y[i] = std::max(std::abs(x[i]) - tau * eps / 2, 0.0) * (x[i] > 0 ? 1.0 : x[i] < 0 ? -1.0 : 0.0);
        });
        proximal_gradient(f, gs, xq, 1.0, 1);
        xq.axpy(scalar(-1.0), xp);
        expect(xq.norm() == 0.0, "proximal gradient with the caller's L1 (a lambda): the same bits");
        xp.fill(scalar(0.0));
        primal_dual(f, g, I, xp, yd, 1.0, 0.5, 300);
        expect(local_is<double>(xp, soft, 1e-8), "primal-dual with A = I: soft(b, eps/2)");
        expect(std::abs(g.value(xp) - eps / 2 * xp.norm(PARLOPS_NORM_1)) <= 1e-12 * (1 + g.value(xp)), "L1 value");
        expect(status_of([&] { (void)Prox::l1(l, -1.0); }) == PARLOPS_ERR_INVALID_ARGUMENT, "L1 with sigma < 0: INVALID_ARGUMENT");
        // the L2 misfit through A = I: its prox (CGLS, exact in one step here) is L2(b)'s closed form;
        // ADMM with Op = A = I and g = eps/2 ||.||_1 reaches soft(b, eps/2)
        // (tol 1e-24 on ||r||^2: CGLS stops once converged; iterating on rounding noise drifts)
        Prox fo = Prox::l2_op(I, bb, 1.0, nullptr, 1.0, true, 10, 1e-24);
        Vec pa(l), pb(l);
        xp.set_random(PARLOPS_RANDOM_GAUSSIAN, 3);
        fo.apply(0.7, xp, pa);
        f.apply(0.7, xp, pb);
        pa.axpy(scalar(-1.0), pb);
        expect(pa.norm() <= 1e-13 * pb.norm(), "L2 through A = I: the prox of L2(b)");
        fo.gradient(xp, pa);
        f.gradient(xp, pb);
        pa.axpy(scalar(-1.0), pb);
        expect(pa.norm() <= 1e-13 * pb.norm(), "L2 through A = I: the gradient of L2(b)");
        xp.fill(scalar(0.0));
        // (cgls_tol 0: PyLops' default 1e-4 is absolute, and an x-update whose start already meets
        // it makes no iteration)
        admm_l2(g, I, bb, I, xp, yd, 1.0, 200, false, false, 10, 0.0);
        expect(local_is<double>(xp, soft, 1e-8), "ADMM with Op = A = I: soft(b, eps/2)");
        expect(status_of([&] { admm_l2(g, I, bb, I, xp, yd, -1.0, 2); }) == PARLOPS_ERR_INVALID_ARGUMENT,
               "ADMM with tau < 0: INVALID_ARGUMENT");
        Prox bad_shell = Prox::shell<double>(l, [&](double, span<const double>, span<double>) { throw std::runtime_error("no"); });
        expect(status_of([&] { proximal_gradient(f, bad_shell, xq, 1.0, 2); }) == PARLOPS_ERR_CALLBACK,
               "a throwing proximal callback: PARLOPS_ERR_CALLBACK");
      }
      Solver bad(comm, PARLOPS_METHOD_ISTA);
      expect(status_of([&] { bad.set_sparsity(99, 0.1); }) == PARLOPS_ERR_INVALID_ARGUMENT,
             "set_sparsity with an unknown threshold: INVALID_ARGUMENT");
    });

    section("GCRO-DR: a sequence of systems with the kept space", [&] {
      Solver g(comm, PARLOPS_METHOD_GCRODR);
      g.set_operator(A);
      g.set_restart(10);
      g.set_recycle(3);
      g.set_tolerances(1e-10);
      Vec b1(l), b2(l), x1(l), x2(l), res(l);
      b1.set_random(PARLOPS_RANDOM_GAUSSIAN, 5);
      b2.set_random(PARLOPS_RANDOM_GAUSSIAN, 6);
      parlops_solve_info i1 = g.solve(b1, x1), i2 = g.solve(b2, x2);
      A.apply(x2, res);
      res.axpy(scalar(-1.0), b2);
      expect(i1.reason > 0 && i2.reason > 0 && res.norm() <= 1.01e-10 * b2.norm() && i2.iterations < i1.iterations,
             "GCRO-DR(10, 3): the second system in fewer iterations (" + std::to_string(i2.iterations) + " after " +
                 std::to_string(i1.iterations) + "); true residual checked");
      expect(g.view().find("recycling 3 vectors (3 kept now)") != std::string::npos, "Solver::view gives the kept space");
      expect(status_of([&] { g.set_recycle(-1); }) == PARLOPS_ERR_INVALID_ARGUMENT, "set_recycle(-1): INVALID_ARGUMENT");
      Solver cg(comm, PARLOPS_METHOD_CG);
      expect(status_of([&] { cg.set_recycle(3); }) == PARLOPS_ERR_NOT_SUPPORTED, "CG's set_recycle: NOT_SUPPORTED");
      // several right-hand sides: block CG, each column's true residual
      cg.set_operator(A);
      cg.set_tolerances(1e-10);
      Vec c0(l), c1(l), c2(l), y0(l), y1(l), y2(l), rr(l);
      c0.set_random(PARLOPS_RANDOM_GAUSSIAN, 15);
      c1.set_random(PARLOPS_RANDOM_GAUSSIAN, 16);
      c2.set_random(PARLOPS_RANDOM_GAUSSIAN, 17);
      auto infos = cg.solve_many({&c0, &c1, &c2}, {&y0, &y1, &y2});
      const Vec *cs[3] = {&c0, &c1, &c2};
      Vec *ys[3] = {&y0, &y1, &y2};
      for (int j = 0; j < 3; j++) {
        A.apply(*ys[j], rr);
        rr.axpy(scalar(-1.0), *cs[j]);
        expect(infos[j].reason > 0 && rr.norm() <= 1.01e-10 * cs[j]->norm() + 1e-12,
               "solve_many: column " + std::to_string(j) + " converged, its true residual within its rule");
      }
      expect(status_of([&] { (void)cg.info_column(3); }) == PARLOPS_ERR_INVALID_ARGUMENT, "info_column(3) of 3: INVALID_ARGUMENT");
    });

    section("new values and refreshed preconditioners", [&] {
      // a copy of the Laplacian, given 3 x its values; block Jacobi on it follows by refresh, and a
      // solver's policy refreshes a Chebyshev at the first solve after a change
      Op B = Op::csr(l, l, lc.ptr.data(), lc.col.data(), lc.val.data());
      Op M = Op::block_jacobi(B, PARLOPS_LOCAL_IC0);
      Op C = Op::chebyshev(B, 2);
      std::vector<double> v(lc.val);
      for (auto &e : v) e *= 3.0;
      B.update_values(v);
      Vec x(l), y(l), z(l);
      x.set_random(PARLOPS_RANDOM_GAUSSIAN, 3);
      A.apply(x, y);
      B.apply(x, z);
      z.axpy(scalar(-3.0), y);
      expect(z.norm() <= 1e-14 * y.norm() && y.norm() > 0, "update_values: B = 3 A");
      expect(M.refresh() == 1 && M.refresh() == 0 && M.setup_count() == 2, "refresh: one set-up, then none");
      expect(status_of([&] { B.update_values(std::vector<double>(v.size() + 1)); }) == PARLOPS_ERR_SIZE_MISMATCH,
             "update_values: a changed entry count is refused");
      Solver cg(comm, PARLOPS_METHOD_CG);
      cg.set_operator(B);
      cg.set_preconditioner(&C);
      cg.set_pc_reuse(1, 0.0);
      cg.set_tolerances(1e-10);
      Vec b(l), u(l), res(l);
      b.fill(scalar(1.0));
      parlops_solve_info info = cg.solve(b, u);
      B.apply(u, res);
      res.axpy(scalar(-1.0), b);
      expect(info.reason > 0 && res.norm() <= 1e-9 * b.norm() && C.setup_count() == 2,
             "the solver's policy refreshed Chebyshev; true residual checked");
      std::string vw = cg.view();
      expect(vw.find("CG (PARLOPS_METHOD_CG)") != std::string::npos && vw.find("Chebyshev of degree 2") != std::string::npos &&
                 vw.find("set-ups run 2") != std::string::npos,
             "Solver::view names the method, the preconditioner and its set-ups");
    });

    section("run-time options", [&] {
      // GMRES with Chebyshev from a string; a misspelt option is left, with the name meant
      Options opts(comm);
      opts.insert("-ksp_type gmres -ksp_rtol 1e-9 -pc_type chebyshev -pc_chebyshev_degree 3 -ksp_tyep cg");
      Solver s(comm, PARLOPS_METHOD_CG);
      s.set_operator(A);
      s.set_timing(true);
      s.set_from_options(opts);
      double rtol = 0, atol = 0, dtol = 0;
      int64_t mi = 0;
      s.tolerances(rtol, atol, dtol, mi);
      std::string vw = s.view();
      expect(vw.find("GMRES (PARLOPS_METHOD_GMRES)") != std::string::npos && vw.find("Chebyshev of degree 3") != std::string::npos &&
                 rtol == 1e-9,
             "set_from_options: method, preconditioner and tolerance from the string");
      Vec b(l), u(l), res(l);
      b.fill(scalar(1.0));
      parlops_solve_info info = s.solve(b, u);
      A.apply(u, res);
      res.axpy(scalar(-1.0), b);
      expect(info.reason > 0 && res.norm() <= 1e-8 * b.norm(), "the options' solve converges; true residual checked");
      expect(opts.left().find("did you mean -ksp_type?") != std::string::npos, "left() names the misspelt option");
      auto op = s.log(PARLOPS_LOG_OPERATOR), pc = s.log(PARLOPS_LOG_PRECONDITIONER), all = s.log(PARLOPS_LOG_SOLVE);
      expect(op.count >= info.iterations && pc.count >= info.iterations && all.count == 1 &&
                 op.seconds <= all.seconds && s.log_view().find("operator applications") != std::string::npos,
             "Solver::log counts the applications; log_view names them");
      s.set_timing(false);
      opts.insert("-options_left no");
      expect(status_of([&] { opts.insert("-ksp_rtol 'x"); }) == PARLOPS_ERR_INVALID_ARGUMENT, "an unclosed quote throws");
      Options bad(comm);
      bad.insert("-ksp_max_it -5 -options_left 0");
      expect(status_of([&] { s.set_from_options(bad); }) == PARLOPS_ERR_INVALID_ARGUMENT, "a bad value throws");
    });

    section("hypre options by name", [&] {
      HypreOptions o;
      o.set("PMaxElmts", 4).set("strong_threshold", 0.5).set("CycleRelaxTypeCoarse", 9);
      auto text = o.describe();
      expect(text.find("PMaxElmts=4") != std::string::npos && text.find("StrongThreshold=0.5") != std::string::npos,
             "describe lists the values set by hypre's names");
      expect(text.find("TruncFactor (real") != std::string::npos, "describe lists the table");
      expect(status_of([&] { o.set("NoSuchOption", 1); }) == PARLOPS_ERR_INVALID_ARGUMENT, "an unknown name throws");
      expect(status_of([&] { o.set("PMaxElmts", 0.5); }) == PARLOPS_ERR_INVALID_ARGUMENT, "a real for an integer throws");
      auto amg = Op::amg_options();
      amg.num_functions = 2;
      o.set(amg);
      expect(o.describe().find("NumFunctions=2") != std::string::npos, "the struct's values by name");
      HypreOptions e;
      e.elasticity(2);
      expect(e.describe().find("InterpVecVariant=2") != std::string::npos, "the elasticity preset");
      auto m = rigid_body_modes(2, {1.0, 2.0, 3.0, 4.0});
      expect(m.size() == 4 && m[0] == 2.0 && m[1] == -1.0 && m[2] == 4.0 && m[3] == -3.0, "2D rigid-body rotation");
      auto m3 = rigid_body_modes(3, {1.0, 2.0, 3.0}, PARLOPS_DOF_BLOCKED);
      expect(m3.size() == 9 && m3[3] == 0.0 && m3[4] == 3.0 && m3[5] == -2.0, "3D rotations, blocked");
    });
    section("errors", [&] {
      Layout l3(comm, 3);
      Vec x3(l3), y(l);
      parlops_status st = status_of([&] { A.apply(x3, y); });
      expect(st == PARLOPS_ERR_SIZE_MISMATCH || st == PARLOPS_ERR_LAYOUT_MISMATCH,
             "apply to a vector of another length throws SIZE/LAYOUT_MISMATCH");
      try {
        (void)Op::identity(l, 99);
        expect(false, "identity with dtype 99 throws");
      } catch (const Error &e) {
        expect(e.status() == PARLOPS_ERR_INVALID_ARGUMENT && std::string(e.what()).find("parlops_op_identity") != std::string::npos,
               "Error carries the status and the message naming the function");
      }
    });
  }
  env.reset();  // parlops_finalize: MPI was started by parlops, so it ends here
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin) ++g_pass; else ++g_fail;
  if (g_rank == 0) std::printf("cpp_api (%d ranks): %d passed, %d failed\n", P, g_pass, g_fail);
  if (!fin) std::fprintf(stderr, "rank %d: FAILED: finalize did not end MPI\n", g_rank);
  return g_fail == 0 ? 0 : 1;
}
