// parlops C++17 layer: RAII classes over the C API (include/parlops.h), exceptions that carry the
// status and the message, spans over local data. Header-only; no logic the C API does not have.
// Objects may be destroyed in any order (parlops reference-counts what others hold).
#ifndef PARLOPS_HPP
#define PARLOPS_HPP

// The C++ bindings of MPI-2 are deprecated and noisy; parlops does not use them.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <parlops.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace parlops {

/// A failed call: the status and parlops_last_error()'s message.
class Error : public std::runtime_error {
 public:
  Error(parlops_status s, const std::string &msg) : std::runtime_error(msg), status_(s) {}
  parlops_status status() const noexcept { return status_; }

 private:
  parlops_status status_;
};

/// Throw parlops::Error unless s is PARLOPS_OK.
inline void check(parlops_status s) {
  if (s != PARLOPS_OK) throw Error(s, parlops_last_error());
}

/// A view of contiguous local data.
template <class T>
class span {
 public:
  span(T *p, std::size_t n) : p_(p), n_(n) {}
  T *data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  T &operator[](std::size_t i) const { return p_[i]; }
  T *begin() const noexcept { return p_; }
  T *end() const noexcept { return p_ + n_; }

 private:
  T *p_;
  std::size_t n_;
};

/// The parlops dtype of a C++ element type.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr parlops_dtype value = PARLOPS_F32; };
template <> struct dtype_of<double> { static constexpr parlops_dtype value = PARLOPS_F64; };
template <> struct dtype_of<std::complex<float>> { static constexpr parlops_dtype value = PARLOPS_C64; };
template <> struct dtype_of<std::complex<double>> { static constexpr parlops_dtype value = PARLOPS_C128; };

inline parlops_scalar scalar(double re, double im = 0.0) { return parlops_scalar{re, im}; }

/// Owns one handle; moves, does not copy.
template <class H, parlops_status (*Destroy)(H **)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H *h) : h_(h) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  Handle(Handle &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle &operator=(Handle &&o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() noexcept {
    if (h_) Destroy(&h_);
  }
  H *get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 protected:
  H *h_ = nullptr;
};

/// A private duplicate of an MPI communicator.
class Comm : public Handle<parlops_comm, parlops_comm_destroy> {
 public:
  explicit Comm(MPI_Comm c) { check(parlops_comm_create(c, &h_)); }
  explicit Comm(parlops_comm *owned) : Handle(owned) {}
  /// A communicator over the same ranks that moves device data with NCCL (device -1: chosen by
  /// parlops). [collective]
  Comm nccl(int device = -1) const {
    parlops_comm *c = nullptr;
    check(parlops_comm_create_nccl(h_, device, &c));
    return Comm(c);
  }
  /// As nccl(), wrapping the caller's ncclComm_t (not destroyed by parlops). [collective]
  Comm wrap_nccl(void *nccl_comm) const {
    parlops_comm *c = nullptr;
    check(parlops_comm_wrap_nccl(h_, nccl_comm, &c));
    return Comm(c);
  }
  int rank() const {
    int r;
    check(parlops_comm_rank(h_, &r));
    return r;
  }
  int size() const {
    int s;
    check(parlops_comm_size(h_, &s));
    return s;
  }
  /// The configuration report. [collective]
  std::string report() const {
    std::size_t need = 0;
    check(parlops_config_report(h_, nullptr, 0, &need));
    std::string s(need, '\0');
    check(parlops_config_report(h_, s.data(), need, nullptr));
    s.resize(need ? need - 1 : 0);
    return s;
  }
};

/// How indices split over ranks. [collective construction]
class Layout : public Handle<parlops_layout, parlops_layout_destroy> {
 public:
  explicit Layout(parlops_layout *owned) : Handle(owned) {}
  Layout(const Comm &c, int64_t global_len, int64_t local_len = PARLOPS_DECIDE,
         parlops_partition p = PARLOPS_PARTITION_SCATTER) {
    check(parlops_layout_create(c.get(), p, global_len, local_len, &h_));
  }
  int64_t global_len() const {
    int64_t n;
    check(parlops_layout_global_len(h_, &n));
    return n;
  }
  /// (first global index, local length) of this rank.
  std::pair<int64_t, int64_t> local_range() const {
    int64_t s, l;
    check(parlops_layout_local_range(h_, &s, &l));
    return {s, l};
  }
};

/// A distributed vector.
class Vec : public Handle<parlops_vec, parlops_vec_destroy> {
 public:
  explicit Vec(parlops_vec *owned) : Handle(owned) {}
  /// Owned, zeroed. [collective]
  Vec(const Layout &l, parlops_dtype t = PARLOPS_F64, parlops_memory m = PARLOPS_MEMORY_HOST) {
    check(parlops_vec_create(l.get(), t, m, &h_));
  }
  /// Wrapping the caller's local array (no copy). [collective]
  template <class T>
  static Vec wrap(const Layout &l, T *local, parlops_memory m = PARLOPS_MEMORY_HOST) {
    parlops_vec *v = nullptr;
    check(parlops_vec_create_with_array(l.get(), dtype_of<T>::value, m, static_cast<void *>(local), &v));
    return Vec(v);
  }
  void place_array(void *local) { check(parlops_vec_place_array(h_, local)); }
  void reset_array() { check(parlops_vec_reset_array(h_)); }
  template <class T>
  span<T> local() {
    void *p = nullptr;
    int64_t n = 0;
    check(parlops_vec_local_array(h_, &p, &n));
    return span<T>(static_cast<T *>(p), static_cast<std::size_t>(n));
  }
  /// Order parlops' work on this device vector on `stream` (a cudaStream_t; nullptr: parlops' own).
  void set_stream(void *stream) { check(parlops_vec_set_stream(h_, stream)); }
  /// This rank's entries into / from a host array of the local length (host or device vectors).
  void copy_to_host(void *host) const { check(parlops_vec_copy_to_host(h_, host)); }
  void copy_from_host(const void *host) { check(parlops_vec_copy_from_host(h_, host)); }
  /// A copy in memory `m` (host <-> device).
  Vec to_memory(parlops_memory m) const {
    parlops_vec *v = nullptr;
    check(parlops_vec_to_memory(h_, m, &v));
    return Vec(v);
  }
  void fill(parlops_scalar a) { check(parlops_vec_fill(h_, a)); }
  void scale(parlops_scalar a) { check(parlops_vec_scale(h_, a)); }
  void axpy(parlops_scalar a, const Vec &x) { check(parlops_vec_axpy(h_, a, x.get())); }
  void copy_from(const Vec &x) { check(parlops_vec_copy(x.get(), h_)); }
  /// [collective]
  parlops_scalar dot(const Vec &y) const {
    parlops_scalar s;
    check(parlops_vec_dot(h_, y.get(), &s));
    return s;
  }
  /// [collective]
  double norm(parlops_norm kind = PARLOPS_NORM_2, double p = 0.0) const {
    double n;
    check(parlops_vec_norm(h_, kind, p, &n));
    return n;
  }
};

/// A distributed linear operator.
class Op : public Handle<parlops_op, parlops_op_destroy> {
 public:
  explicit Op(parlops_op *owned) : Handle(owned) {}
  /// y = A x. [collective]
  void apply(const Vec &x, Vec &y) const { check(parlops_op_apply(h_, x.get(), y.get())); }
  /// x = A^H y. [collective]
  void apply_adjoint(const Vec &y, Vec &x) const { check(parlops_op_apply_adjoint(h_, y.get(), x.get())); }
  std::pair<int64_t, int64_t> size() const {
    int64_t m, n;
    check(parlops_op_size(h_, &m, &n));
    return {m, n};
  }
  /// Zeroed vectors of the column (x) and row (y) layouts.
  std::pair<Vec, Vec> create_vecs() const {
    parlops_vec *x = nullptr, *y = nullptr;
    check(parlops_op_create_vecs(h_, &x, &y));
    return {Vec(x), Vec(y)};
  }
  Layout rows() const {
    parlops_layout *r = nullptr;
    check(parlops_op_layouts(h_, &r, nullptr));
    return Layout(r);
  }
  Layout cols() const {
    parlops_layout *c = nullptr;
    check(parlops_op_layouts(h_, nullptr, &c));
    return Layout(c);
  }
  /// Relative error of the dot test. [collective]
  double dottest(uint64_t seed = 0) const {
    double e;
    check(parlops_op_dottest(h_, seed, &e));
    return e;
  }
  Op adjoint() const {
    parlops_op *o = nullptr;
    check(parlops_op_adjoint(h_, &o));
    return Op(o);
  }
  friend Op operator+(const Op &a, const Op &b) {
    parlops_op *o = nullptr;
    check(parlops_op_sum(a.get(), b.get(), &o));
    return Op(o);
  }
  friend Op operator*(const Op &a, const Op &b) {
    parlops_op *o = nullptr;
    check(parlops_op_product(a.get(), b.get(), &o));
    return Op(o);
  }
  /// This rank's rows with global column indices (copied). [collective]
  template <class T, class I>
  static Op csr(const Layout &rows, const Layout &cols, const I *row_ptr, const I *col_idx, const T *values) {
    static_assert(sizeof(I) == 4 || sizeof(I) == 8, "32- or 64-bit indices");
    parlops_op *o = nullptr;
    check(parlops_op_create_csr(rows.get(), cols.get(), dtype_of<T>::value,
                                sizeof(I) == 4 ? PARLOPS_INDEX_I32 : PARLOPS_INDEX_I64, row_ptr, col_idx, values, &o));
    return Op(o);
  }
};

/// A Krylov or sparsity solver.
class Solver : public Handle<parlops_solver, parlops_solver_destroy> {
 public:
  Solver(const Comm &c, parlops_method m) { check(parlops_solver_create(c.get(), m, &h_)); }
  void set_operator(const Op &a) { check(parlops_solver_set_operator(h_, a.get())); }
  /// nullptr removes it.
  void set_preconditioner(const Op *m) { check(parlops_solver_set_preconditioner(h_, m ? m->get() : nullptr)); }
  void set_jacobi() { check(parlops_solver_set_jacobi(h_)); }
  void set_tolerances(double rtol, double atol = 1e-50, double dtol = 1e5, int64_t max_iter = 10000) {
    check(parlops_solver_set_tolerances(h_, rtol, atol, dtol, max_iter));
  }
  void set_norm_type(parlops_norm_type t) { check(parlops_solver_set_norm_type(h_, t)); }
  /// What rtol is relative to: PARLOPS_REFERENCE_RHS (default) or PARLOPS_REFERENCE_INITIAL_RESIDUAL.
  void set_convergence_reference(parlops_reference r) { check(parlops_solver_set_convergence_reference(h_, r)); }
  void set_initial_guess_nonzero(bool nz) { check(parlops_solver_set_initial_guess_nonzero(h_, nz)); }
  void set_restart(int64_t m) { check(parlops_solver_set_restart(h_, m)); }
  void set_damping(double d) { check(parlops_solver_set_damping(h_, d)); }
  void set_monitor(parlops_monitor_fn f, void *ctx) { check(parlops_solver_set_monitor(h_, f, ctx)); }
  void keep_history(bool k) { check(parlops_solver_keep_history(h_, k)); }
  /// [collective]; a diverged solve returns normally: look at info().reason.
  parlops_solve_info solve(const Vec &b, Vec &x) {
    check(parlops_solver_solve(h_, b.get(), x.get()));
    return info();
  }
  parlops_solve_info info() const {
    parlops_solve_info i;
    check(parlops_solver_info(h_, &i));
    return i;
  }
  std::vector<double> history() const {
    const double *p = nullptr;
    int64_t n = 0;
    check(parlops_solver_history(h_, &p, &n));
    return std::vector<double>(p, p + n);
  }
};

}  // namespace parlops

#endif  // PARLOPS_HPP
