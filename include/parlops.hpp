// parlops C++17 layer: RAII classes over the C API (include/parlops.h), exceptions that carry the
// status and the message, spans over local data. Header-only; no logic the C API does not have.
// Objects may be destroyed in any order (parlops reference-counts what others hold).
// Coverage: every function of parlops.h is reached from this header (tests/examples.sh checks it);
// none is skipped. The Fortran-handle entry parlops_comm_create_f is Comm::from_fortran (C++ called
// from Fortran with an integer communicator); the _destroy functions are the handles' destructors.
// Collective C++ calls check their std::vector arguments' lengths without leaving other ranks
// waiting: a wrong length makes the C call fail on every rank, and this rank says which length.
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

#include <algorithm>
#include <array>
#include <climits>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
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

/// Fixed English words for a status (any int; values outside the enum give "unknown status").
[[nodiscard]] inline std::string status_string(int s) { return parlops_status_string(s); }

/// The library's version {major, minor, patch}.
[[nodiscard]] inline std::array<int, 3> version() {
  std::array<int, 3> v{};
  check(parlops_version(&v[0], &v[1], &v[2]));
  return v;
}

/// Start MPI (MPI_Init_thread, FUNNELED) unless it is running; argc/argv may be null.
/// Throws (PARLOPS_ERR_VERSION_MISMATCH, naming both versions) unless the library loaded keeps the ABI
/// of the header this program was compiled with; call it once at start.
inline void check_version() {
  check(parlops_check_version(PARLOPS_VERSION_MAJOR, PARLOPS_VERSION_MINOR, PARLOPS_VERSION_PATCH));
}

inline void init(int *argc = nullptr, char ***argv = nullptr) { check(parlops_init(argc, argv)); }
/// Finalise MPI only if init() started it (destroy parlops objects first).
inline void finalize() { check(parlops_finalize()); }

/// init() for its lifetime, then finalize(): declare it first in main, before any parlops object.
class Environment {
 public:
  Environment() { init(); }
  Environment(int &argc, char **&argv) { init(&argc, &argv); }
  Environment(const Environment &) = delete;
  Environment &operator=(const Environment &) = delete;
  ~Environment() { (void)parlops_finalize(); }
};

/// Tile `index` of an extent n split over `grid` SUMMA process rows or columns: (start, length).
[[nodiscard]] inline std::pair<int64_t, int64_t> summa_tile(int64_t n, int grid, int index) {
  int64_t start = 0, len = 0;
  check(parlops_summa_tile(n, grid, index, &start, &len));
  return {start, len};
}

/// A rank's block of an N-D array: first index and extent per axis.
struct Block {
  std::vector<int64_t> start, shape;
};

/// Rank `rank`'s block of `dims` split over a process grid as Op::halo splits it (empty proc_grid:
/// all nranks on the last axis). Not collective.
[[nodiscard]] inline Block halo_block(const std::vector<int64_t> &dims, int nranks, int rank,
                                      const std::vector<int64_t> &proc_grid = {}) {
  if (!proc_grid.empty() && proc_grid.size() != dims.size())
    throw Error(PARLOPS_ERR_SIZE_MISMATCH, "parlops::halo_block: proc_grid has " + std::to_string(proc_grid.size()) +
                                               " entries, dims " + std::to_string(dims.size()));
  Block b{std::vector<int64_t>(dims.size()), std::vector<int64_t>(dims.size())};
  check(parlops_halo_block(static_cast<int>(dims.size()), dims.data(), proc_grid.empty() ? nullptr : proc_grid.data(),
                           nranks, rank, b.start.data(), b.shape.data()));
  return b;
}

namespace detail {
template <class T> struct identity { using type = T; };
template <class T> using identity_t = typename identity<T>::type;

/// v's data when it has n entries, else null: a collective C call then fails on every rank.
template <class T>
const T *sized(const std::vector<T> &v, std::size_t n) {
  return v.size() == n ? v.data() : nullptr;
}

/// check() for a call made with sized(): this rank names the wrong length.
inline void check_sized(parlops_status s, const char *what, std::size_t got, std::size_t want) {
  if (s != PARLOPS_OK && got != want)
    throw Error(PARLOPS_ERR_SIZE_MISMATCH, std::string("parlops C++: ") + what + " has " + std::to_string(got) +
                                               " entries, " + std::to_string(want) + " expected");
  check(s);
}

template <class T>
void check_dtype(parlops_dtype have, const char *what) {
  if (have != dtype_of<T>::value)
    throw Error(PARLOPS_ERR_DTYPE_MISMATCH, std::string("parlops C++: ") + what + ": element type of dtype " +
                                                std::to_string(dtype_of<T>::value) + ", vector of dtype " +
                                                std::to_string(have));
}

/// A text the C API writes by its buffer protocol: `get(buf, len, needed)` (first asked its length).
template <class F>
std::string text(F get) {
  std::size_t need = 0;
  check(get(nullptr, 0, &need));
  std::string s(need, '\0');
  check(get(s.data(), need, nullptr));
  s.resize(need ? need - 1 : 0);
  return s;
}

inline std::string report(const parlops_comm *c) {
  return text([c](char *b, std::size_t n, std::size_t *need) { return parlops_config_report(c, b, n, need); });
}
}  // namespace detail

/// The configuration report without the per-rank lines. Not collective.
[[nodiscard]] inline std::string config_report() { return detail::report(nullptr); }

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
  /// From a Fortran integer handle (`comm` of `use mpi`, `comm%MPI_VAL` of mpi_f08). [collective]
  [[nodiscard]] static Comm from_fortran(MPI_Fint comm) {
    parlops_comm *c = nullptr;
    check(parlops_comm_create_f(comm, &c));
    return Comm(c);
  }
  [[nodiscard]] int rank() const {
    int r;
    check(parlops_comm_rank(h_, &r));
    return r;
  }
  [[nodiscard]] int size() const {
    int s;
    check(parlops_comm_size(h_, &s));
    return s;
  }
  /// Global reductions performed so far on this communicator.
  [[nodiscard]] uint64_t reduction_count() const {
    uint64_t n = 0;
    check(parlops_comm_reduction_count(h_, &n));
    return n;
  }
  /// The configuration report with one line per rank. [collective]
  [[nodiscard]] std::string report() const { return detail::report(h_); }
};

/// How indices split over ranks. [collective construction]
class Layout : public Handle<parlops_layout, parlops_layout_destroy> {
 public:
  explicit Layout(parlops_layout *owned) : Handle(owned) {}
  Layout(const Comm &c, int64_t global_len, int64_t local_len = PARLOPS_DECIDE,
         parlops_partition p = PARLOPS_PARTITION_SCATTER) {
    check(parlops_layout_create(c.get(), p, global_len, local_len, &h_));
  }
  /// An N-D layout (C order) split along axis 0; local_len_along_axis: this rank's extent. [collective]
  [[nodiscard]] static Layout nd(const Comm &c, const std::vector<int64_t> &global_shape,
                                 int64_t local_len_along_axis = PARLOPS_DECIDE,
                                 parlops_partition p = PARLOPS_PARTITION_SCATTER, int axis = 0) {
    parlops_layout *l = nullptr;
    check(parlops_layout_create_nd(c.get(), p, static_cast<int>(global_shape.size()), global_shape.data(), axis,
                                   local_len_along_axis, &l));
    return Layout(l);
  }
  /// Global extents per axis ({global_len()} for 1-D layouts).
  [[nodiscard]] std::vector<int64_t> shape() const {
    int nd = 0;
    check(parlops_layout_shape(h_, &nd, nullptr, 0));
    std::vector<int64_t> s(static_cast<std::size_t>(nd));
    check(parlops_layout_shape(h_, &nd, s.data(), nd));
    return s;
  }
  [[nodiscard]] int64_t global_len() const {
    int64_t n;
    check(parlops_layout_global_len(h_, &n));
    return n;
  }
  /// (first global index, local length) of this rank.
  [[nodiscard]] std::pair<int64_t, int64_t> local_range() const {
    int64_t s, l;
    check(parlops_layout_local_range(h_, &s, &l));
    return {s, l};
  }
  /// (first global index, local length) of any rank.
  [[nodiscard]] std::pair<int64_t, int64_t> rank_range(int rank) const {
    int64_t s, l;
    check(parlops_layout_rank_range(h_, rank, &s, &l));
    return {s, l};
  }
  [[nodiscard]] parlops_partition partition() const {
    parlops_partition p;
    check(parlops_layout_partition(h_, &p));
    return p;
  }
  /// Whether vectors of the two layouts combine entry by entry (same answer on every rank).
  [[nodiscard]] bool equal(const Layout &o) const {
    bool e = false;
    check(parlops_layout_equal(h_, o.h_, &e));
    return e;
  }
  friend bool operator==(const Layout &a, const Layout &b) { return a.equal(b); }
  friend bool operator!=(const Layout &a, const Layout &b) { return !a.equal(b); }
};

/// A distributed vector.
class Vec : public Handle<parlops_vec, parlops_vec_destroy> {
 public:
  /// Seeded random entries (PARLOPS_RANDOM_UNIFORM, _GAUSSIAN, _RADEMACHER): the same global vector on
  /// any number of ranks.
  void set_random(parlops_distribution d, uint64_t seed) { check(parlops_vec_set_random(h_, d, seed)); }
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
  [[nodiscard]] span<T> local() {
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
  [[nodiscard]] Vec to_memory(parlops_memory m) const {
    parlops_vec *v = nullptr;
    check(parlops_vec_to_memory(h_, m, &v));
    return Vec(v);
  }
  void fill(parlops_scalar a) { check(parlops_vec_fill(h_, a)); }
  void scale(parlops_scalar a) { check(parlops_vec_scale(h_, a)); }
  void axpy(parlops_scalar a, const Vec &x) { check(parlops_vec_axpy(h_, a, x.get())); }
  void copy_from(const Vec &x) { check(parlops_vec_copy(x.get(), h_)); }
  /// [collective]
  [[nodiscard]] parlops_scalar dot(const Vec &y) const {
    parlops_scalar s;
    check(parlops_vec_dot(h_, y.get(), &s));
    return s;
  }
  /// [collective]
  [[nodiscard]] double norm(parlops_norm kind = PARLOPS_NORM_2, double p = 0.0) const {
    double n;
    check(parlops_vec_norm(h_, kind, p, &n));
    return n;
  }
  /// A new zeroed vector with the same layout, dtype and memory.
  [[nodiscard]] Vec duplicate() const {
    parlops_vec *v = nullptr;
    check(parlops_vec_duplicate(h_, &v));
    return Vec(v);
  }
  [[nodiscard]] Layout layout() const {
    parlops_layout *l = nullptr;
    check(parlops_vec_layout(h_, &l));
    return Layout(l);
  }
  [[nodiscard]] parlops_dtype dtype() const {
    parlops_dtype t;
    check(parlops_vec_dtype(h_, &t));
    return t;
  }
  [[nodiscard]] parlops_memory memory() const {
    parlops_memory m;
    check(parlops_vec_memory(h_, &m));
    return m;
  }
  /// v = conj(v).
  void conj() { check(parlops_vec_conj(h_)); }
  /// this = a x + b this.
  void axpby(parlops_scalar a, const Vec &x, parlops_scalar b) { check(parlops_vec_axpby(h_, a, x.get(), b)); }
  /// this = a x + y (x or y may be this vector).
  void waxpy(parlops_scalar a, const Vec &x, const Vec &y) { check(parlops_vec_waxpy(h_, a, x.get(), y.get())); }
  /// this = x .* y entry by entry (x or y may be this vector).
  void pointwise_mult(const Vec &x, const Vec &y) { check(parlops_vec_pointwise_mult(h_, x.get(), y.get())); }
  /// The whole vector (global length entries, host memory) into global_out on root, or on every
  /// rank for PARLOPS_ALL_RANKS (global_out may be null elsewhere). [collective]
  void gather(int root, void *global_out) const { check(parlops_vec_gather(h_, root, global_out)); }
  /// The whole vector, on root or on every rank for PARLOPS_ALL_RANKS (zeros elsewhere). [collective]
  template <class T>
  [[nodiscard]] std::vector<T> gather(int root = PARLOPS_ALL_RANKS) const {
    detail::check_dtype<T>(dtype(), "Vec::gather");
    std::vector<T> g(static_cast<std::size_t>(layout().global_len()));
    gather(root, static_cast<void *>(g.data()));
    return g;
  }
  /// Set the vector from the whole array global_in given on root (ignored elsewhere). [collective]
  void scatter(int root, const void *global_in) { check(parlops_vec_scatter(h_, root, global_in)); }
  /// As scatter(root, pointer); global must hold the global length on root (may be empty elsewhere). [collective]
  template <class T>
  void scatter(int root, const std::vector<T> &global) {
    detail::check_dtype<T>(dtype(), "Vec::scatter");
    const auto n = static_cast<std::size_t>(layout().global_len());
    detail::check_sized(parlops_vec_scatter(h_, root, global.empty() ? nullptr : detail::sized(global, n)),
                        "Vec::scatter's global array", global.empty() ? n : global.size(), n);
  }
  /// The same entries in layout `to` (same communicator and global length). [collective]
  [[nodiscard]] Vec redistribute(const Layout &to) const {
    parlops_vec *v = nullptr;
    check(parlops_vec_redistribute(h_, to.get(), &v));
    return Vec(v);
  }
  /// After writing a PARLOPS_PARTITION_BROADCAST vector: every rank's copy = rank 0's. [collective]
  void assemble() { check(parlops_vec_assemble(h_)); }
};

/// Options of a hypre solver by hypre's names (BoomerAMG's "PMaxElmts", "TruncFactor", "Nodal",
/// ...; matched ignoring case and underscores), each checked as it is set; setters chain. Local (not
/// collective): set the same options on every rank.
class HypreOptions : public Handle<parlops_hypre_options, parlops_hypre_options_destroy> {
 public:
  explicit HypreOptions(parlops_hypre_solver solver = PARLOPS_HYPRE_BOOMERAMG) {
    check(parlops_hypre_options_create(solver, &h_));
  }
  /// An integer option.
  HypreOptions &set(const std::string &name, int64_t value) {
    check(parlops_hypre_options_set_int(h_, name.c_str(), value));
    return *this;
  }
  HypreOptions &set(const std::string &name, int value) { return set(name, static_cast<int64_t>(value)); }
  /// A real option.
  HypreOptions &set(const std::string &name, double value) {
    check(parlops_hypre_options_set_real(h_, name.c_str(), value));
    return *this;
  }
  /// The values of a parlops_amg_options struct.
  HypreOptions &set(const parlops_amg_options &options) {
    check(parlops_hypre_options_set_amg(h_, &options));
    return *this;
  }
  /// MFEM's HypreBoomerAMG::SetElasticityOptions for dimension `dim` (pass the rigid-body modes to
  /// Op::boomeramg).
  HypreOptions &elasticity(int dim) {
    check(parlops_hypre_options_set_elasticity(h_, dim));
    return *this;
  }
  /// The options this set takes, and the values set.
  [[nodiscard]] std::string describe() const {
    return detail::text(
        [this](char *b, std::size_t n, std::size_t *need) { return parlops_hypre_options_describe(h_, b, n, need); });
  }
};

/// Run-time options (PETSc's options database, held by the caller): "-ksp_type gmres -pc_type hypre
/// -ksp_view" from a string, the environment (PARLOPS_OPTIONS) or main's arguments, applied to a
/// solver with Solver::set_from_options (docs/options.md lists the names). When destroyed, rank 0 of
/// `comm` prints the options no solver used (unless -options_left no).
class Options : public Handle<parlops_options, parlops_options_destroy> {
 public:
  explicit Options(const Comm &comm) { check(parlops_options_create(comm.get(), &h_)); }
  /// Add the options in `text`.
  Options &insert(const std::string &text) {
    check(parlops_options_insert_string(h_, text.c_str()));
    return *this;
  }
  /// Add the options in the environment variable `name` (PARLOPS_OPTIONS by default).
  Options &insert_env(const char *name = nullptr) {
    check(parlops_options_insert_env(h_, name));
    return *this;
  }
  /// Add the options among main's arguments.
  Options &insert_args(int argc, char *const *argv) {
    check(parlops_options_insert_args(h_, argc, argv));
    return *this;
  }
  /// The options no solver used so far, one line each.
  [[nodiscard]] std::string left() const {
    return detail::text([this](char *b, std::size_t n, std::size_t *need) { return parlops_options_left(h_, b, n, need); });
  }
};

/// The rigid-body rotations at this rank's nodes (`coords`: dim values per node, node by node), as
/// MFEM computes them for SetElasticityOptions: dim (dim - 1) / 2 vectors, one after the other, each
/// ordered as `ordering` says. Local.
[[nodiscard]] inline std::vector<double> rigid_body_modes(int dim, const std::vector<double> &coords,
                                                          parlops_dof_ordering ordering = PARLOPS_DOF_INTERLEAVED) {
  const std::size_t nmodes = dim == 2 ? 1 : 3;
  const std::size_t nodes = dim > 0 ? coords.size() / static_cast<std::size_t>(dim) : 0;
  std::vector<double> m(dim == 2 || dim == 3 ? nmodes * nodes * static_cast<std::size_t>(dim) : 0);
  check(parlops_rigid_body_modes(dim, static_cast<int64_t>(nodes), coords.data(), ordering, m.data()));
  return m;
}

/// A distributed linear operator.
class Op : public Handle<parlops_op, parlops_op_destroy> {
 public:
  explicit Op(parlops_op *owned) : Handle(owned) {}
  /// y = A x. [collective]
  void apply(const Vec &x, Vec &y) const { check(parlops_op_apply(h_, x.get(), y.get())); }
  /// x = A^H y. [collective]
  void apply_adjoint(const Vec &y, Vec &x) const { check(parlops_op_apply_adjoint(h_, y.get(), x.get())); }
  [[nodiscard]] std::pair<int64_t, int64_t> size() const {
    int64_t m, n;
    check(parlops_op_size(h_, &m, &n));
    return {m, n};
  }
  /// Zeroed vectors of the column (x) and row (y) layouts.
  [[nodiscard]] std::pair<Vec, Vec> create_vecs() const {
    parlops_vec *x = nullptr, *y = nullptr;
    check(parlops_op_create_vecs(h_, &x, &y));
    return {Vec(x), Vec(y)};
  }
  [[nodiscard]] Layout rows() const {
    parlops_layout *r = nullptr;
    check(parlops_op_layouts(h_, &r, nullptr));
    return Layout(r);
  }
  [[nodiscard]] Layout cols() const {
    parlops_layout *c = nullptr;
    check(parlops_op_layouts(h_, nullptr, &c));
    return Layout(c);
  }
  /// Relative error of the dot test. [collective]
  [[nodiscard]] double dottest(uint64_t seed = 0) const {
    double e;
    check(parlops_op_dottest(h_, seed, &e));
    return e;
  }
  [[nodiscard]] Op adjoint() const {
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
  /// A - B.
  friend Op operator-(const Op &a, const Op &b) {
    parlops_op *o = nullptr;
    check(parlops_op_difference(a.get(), b.get(), &o));
    return Op(o);
  }
  /// alpha A (the adjoint uses conj(alpha)).
  [[nodiscard]] Op scaled(parlops_scalar alpha) const {
    parlops_op *o = nullptr;
    check(parlops_op_scale(h_, alpha, &o));
    return Op(o);
  }
  friend Op operator*(double alpha, const Op &a) { return a.scaled(scalar(alpha)); }
  /// A^T (no conjugation).
  [[nodiscard]] Op transpose() const {
    parlops_op *o = nullptr;
    check(parlops_op_transpose(h_, &o));
    return Op(o);
  }
  /// conj(A), entry by entry.
  [[nodiscard]] Op conj() const {
    parlops_op *o = nullptr;
    check(parlops_op_conj(h_, &o));
    return Op(o);
  }
  /// A^k (square, equal row and column layouts; A^0 = I).
  [[nodiscard]] Op power(int64_t k) const {
    parlops_op *o = nullptr;
    check(parlops_op_power(h_, k, &o));
    return Op(o);
  }
  [[nodiscard]] parlops_dtype dtype() const {
    parlops_dtype t;
    check(parlops_op_dtype(h_, &t));
    return t;
  }
  /// y = alpha A x + beta y. [collective]
  void multadd(parlops_scalar alpha, const Vec &x, parlops_scalar beta, Vec &y) const {
    check(parlops_op_multadd(h_, alpha, x.get(), beta, y.get()));
  }
  /// x = alpha A^H y + beta x. [collective]
  void multadd_adjoint(parlops_scalar alpha, const Vec &y, parlops_scalar beta, Vec &x) const {
    check(parlops_op_multadd_adjoint(h_, alpha, y.get(), beta, x.get()));
  }
  /// d = diag(A) (square, equal layouts: CSR, dense, diagonal, identity and their sums/scalings).
  void get_diagonal(Vec &d) const { check(parlops_op_diagonal(h_, d.get())); }
  /// diag(A) as a new host vector of the row layout.
  [[nodiscard]] Vec get_diagonal() const {
    Vec d(rows(), dtype());
    get_diagonal(d);
    return d;
  }
  /// Largest eigenvalue by power iteration, and the iterations it took.
  struct Eigen {
    parlops_scalar eigenvalue;
    int64_t iterations;
  };
  /// Power iteration (square operator; seeded start, the same for any number of ranks). [collective]
  [[nodiscard]] Eigen power_iteration(int64_t max_iter = 1000, double tol = 1e-8, uint64_t seed = 0) const {
    Eigen e{};
    check(parlops_op_power_iteration(h_, max_iter, tol, seed, &e.eigenvalue, &e.iterations));
    return e;
  }
  /// Addresses of the value arrays (diag, offd) a CSR operator reads (the caller's with PARLOPS_WRAP).
  [[nodiscard]] std::pair<const void *, const void *> csr_arrays() const {
    const void *d = nullptr, *o = nullptr;
    check(parlops_op_csr_arrays(h_, &d, &o));
    return {d, o};
  }
  /// New values, same pattern (parlops_op_csr_update_values): for a matrix made by csr(), this rank's
  /// values in the order of construction; for parcsr() with PARLOPS_COPY, the diag and offd blocks'.
  /// [collective]
  template <class T> void update_values(const std::vector<T> &values, const std::vector<T> &offd_values = {}) {
    check(parlops_op_csr_update_values(h_, static_cast<int64_t>(values.size()), values.data(),
                                       static_cast<int64_t>(offd_values.size()),
                                       offd_values.empty() ? nullptr : offd_values.data()));
  }
  /// The counts and pointers of parlops_op_csr_update_values as they are (PARLOPS_WRAP: both NULL,
  /// the blocks' counts, after changing the wrapped arrays in place). [collective]
  void update_values(int64_t nnz, const void *values, int64_t offd_nnz, const void *offd_values) {
    check(parlops_op_csr_update_values(h_, nnz, values, offd_nnz, offd_values));
  }
  /// Set the preconditioners in this operator up again on their matrices' current values (all of
  /// them with `force`); the number of set-ups run. [collective]
  int64_t refresh(bool force = false) {
    int64_t n = 0;
    check(parlops_op_refresh(h_, force ? 1 : 0, &n));
    return n;
  }
  /// The set-ups run by the preconditioners in this operator (1 when just made, +1 per refresh).
  [[nodiscard]] int64_t setup_count() const {
    int64_t n = 0;
    check(parlops_op_setup_count(h_, &n));
    return n;
  }

  /// The identity on `l`.
  [[nodiscard]] static Op identity(const Layout &l, parlops_dtype t = PARLOPS_F64) {
    parlops_op *o = nullptr;
    check(parlops_op_identity(l.get(), t, &o));
    return Op(o);
  }
  /// The zero operator from cols to rows.
  [[nodiscard]] static Op zero(const Layout &rows, const Layout &cols, parlops_dtype t = PARLOPS_F64) {
    parlops_op *o = nullptr;
    check(parlops_op_zero(rows.get(), cols.get(), t, &o));
    return Op(o);
  }
  /// diag(d): y = d .* x (d copied).
  [[nodiscard]] static Op diagonal(const Vec &d) {
    parlops_op *o = nullptr;
    check(parlops_op_diagonal_matrix(d.get(), &o));
    return Op(o);
  }
  /// Dense matrix by block rows: this rank's rows of `rows`, all columns, row-major (copied). [collective]
  template <class T>
  [[nodiscard]] static Op dense(const Layout &rows, const Layout &cols, const T *local_rows) {
    parlops_op *o = nullptr;
    check(parlops_op_create_dense(rows.get(), cols.get(), dtype_of<T>::value, local_rows, &o));
    return Op(o);
  }
  /// Y = A X by SUMMA on a square process grid: A n x k, X k x m; a_local is this rank's tile of A. [collective]
  template <class T>
  [[nodiscard]] static Op summa(const Comm &c, int64_t n, int64_t k, int64_t m, const T *a_local) {
    parlops_op *o = nullptr;
    check(parlops_op_create_dense_summa(c.get(), dtype_of<T>::value, n, k, m, a_local, &o));
    return Op(o);
  }
  /// Fredholm1: y[s] = G[s] x[s]; this rank's nsl_local slices of G (nx x ny, row-major). [collective]
  template <class T>
  [[nodiscard]] static Op fredholm1(const Comm &c, int64_t nsl_local, int64_t nx, int64_t ny, int64_t nz,
                                    const T *g_local) {
    parlops_op *o = nullptr;
    check(parlops_op_fredholm1(c.get(), dtype_of<T>::value, nsl_local, nx, ny, nz, g_local, &o));
    return Op(o);
  }
  /// Non-stationary 1-D convolution (PyLops' NonStationaryConvolve1D) along `axis` of l's array: nfilts
  /// filters of hsize taps (hs, row-major) at the positions ih (nfilts of them). [collective]
  template <class T>
  [[nodiscard]] static Op nonstationary_convolve1d(const Layout &l, int axis, int64_t hsize, int64_t nfilts,
                                                   const T *hs, const int64_t *ih) {
    parlops_op *o = nullptr;
    check(parlops_op_nonstationary_convolve1d(l.get(), axis, hsize, nfilts, hs, ih, dtype_of<T>::value, &o));
    return Op(o);
  }
  /// MDC (PyLops-MPI's MPIMDC): this rank's nfreq_local frequency slices of G (ns x nr, row-major, T
  /// float, double or their complex); real broadcast model (nt x nr x nv) and data (nt x ns x nv). [collective]
  template <class T>
  [[nodiscard]] static Op mdc(const Comm &c, int64_t nfreq_local, int64_t ns, int64_t nr, int64_t nt, int64_t nv,
                              const T *g_local, double dt = 1.0, double dr = 1.0, bool twosided = true,
                              bool conj = false, bool prescaled = false) {
    parlops_op *o = nullptr;
    check(parlops_op_mdc(c.get(), dtype_of<T>::value, nfreq_local, ns, nr, nt, nv, dt, dr, twosided, conj, prescaled,
                         g_local, &o));
    return Op(o);
  }
  /// hypre's ParCSR split (diag: local columns; offd: compressed columns with global col_map_offd;
  /// offd_* may be null when num_offd_cols is 0); PARLOPS_WRAP reads the arrays in place. [collective]
  template <class T, class I>
  [[nodiscard]] static Op parcsr(const Layout &rows, const Layout &cols, const I *diag_i, const I *diag_j,
                                 const T *diag_a, detail::identity_t<const I *> offd_i,
                                 detail::identity_t<const I *> offd_j, detail::identity_t<const T *> offd_a,
                                 int64_t num_offd_cols, const int64_t *col_map_offd,
                                 parlops_ownership own = PARLOPS_COPY) {
    static_assert(sizeof(I) == 4 || sizeof(I) == 8, "32- or 64-bit indices");
    parlops_op *o = nullptr;
    check(parlops_op_create_parcsr(rows.get(), cols.get(), dtype_of<T>::value,
                                   sizeof(I) == 4 ? PARLOPS_INDEX_I32 : PARLOPS_INDEX_I64, diag_i, diag_j, diag_a,
                                   offd_i, offd_j, offd_a, num_offd_cols, col_map_offd, own, &o));
    return Op(o);
  }
  /// Shell operator from C callbacks on local parts. With destroy_ctx, parlops frees ctx with the
  /// operator; if this throws, destroy_ctx was not called and ctx is still the caller's. [collective]
  [[nodiscard]] static Op shell(const Layout &rows, const Layout &cols, parlops_dtype t, void *ctx,
                                parlops_apply_fn forward, parlops_apply_fn adjoint = nullptr,
                                parlops_destroy_fn destroy_ctx = nullptr, parlops_memory m = PARLOPS_MEMORY_HOST) {
    parlops_op *o = nullptr;
    check(parlops_op_create_shell(rows.get(), cols.get(), t, m, ctx, forward, adjoint, destroy_ctx, &o));
    return Op(o);
  }
  /// As `shell`, with `diagonal(ctx, d)` giving this rank's part of the diagonal (square operators
  /// with equal layouts), so that Jacobi and Chebyshev work on it. [collective]
  [[nodiscard]] static Op shell_with_diagonal(const Layout &rows, const Layout &cols, parlops_dtype t, void *ctx,
                                              parlops_apply_fn forward, parlops_apply_fn adjoint,
                                              parlops_diagonal_fn diagonal, parlops_destroy_fn destroy_ctx = nullptr,
                                              parlops_memory m = PARLOPS_MEMORY_HOST) {
    parlops_op *o = nullptr;
    check(parlops_op_create_shell_with_diagonal(rows.get(), cols.get(), t, m, ctx, forward, adjoint, diagonal,
                                                destroy_ctx, &o));
    return Op(o);
  }
  /// A callback of a typed shell: output local part from input local part; throw to fail the apply.
  template <class T>
  using ShellFn = std::function<void(span<const T> in, span<T> out)>;
  /// Shell operator from C++ callables: forward(x, y) computes y = A x on local parts, adjoint(y, x)
  /// x = A^H y (empty: none); they live as long as the operator. [collective]
  template <class T>
  [[nodiscard]] static Op shell(const Layout &rows, const Layout &cols, ShellFn<T> forward, ShellFn<T> adjoint = {},
                                parlops_memory m = PARLOPS_MEMORY_HOST) {
    auto ctx = std::make_unique<Callables<T>>();
    ctx->rows_len = static_cast<std::size_t>(rows.local_range().second);
    ctx->cols_len = static_cast<std::size_t>(cols.local_range().second);
    const bool has_adjoint = static_cast<bool>(adjoint);
    ctx->forward = std::move(forward);
    ctx->adjoint = std::move(adjoint);
    parlops_op *o = nullptr;
    // on failure parlops does not call destroy_ctx: the unique_ptr still owns the callables
    check(parlops_op_create_shell(rows.get(), cols.get(), dtype_of<T>::value, m, ctx.get(), Callables<T>::fwd,
                                  has_adjoint ? Callables<T>::adj : nullptr, Callables<T>::destroy, &o));
    ctx.release();  // parlops owns it now and calls destroy with the operator
    return Op(o);
  }
  /// The diagonal callback of a typed shell: write this rank's diagonal entries; throw to fail.
  template <class T>
  using DiagonalFn = std::function<void(span<T> d)>;
  /// As the typed `shell`, with `diagonal(d)` giving this rank's part of the diagonal (square
  /// operators with equal layouts), so that Jacobi and Chebyshev work on it. [collective]
  template <class T>
  [[nodiscard]] static Op shell_with_diagonal(const Layout &rows, const Layout &cols, ShellFn<T> forward,
                                              ShellFn<T> adjoint, DiagonalFn<T> diagonal,
                                              parlops_memory m = PARLOPS_MEMORY_HOST) {
    auto ctx = std::make_unique<Callables<T>>();
    ctx->rows_len = static_cast<std::size_t>(rows.local_range().second);
    ctx->cols_len = static_cast<std::size_t>(cols.local_range().second);
    const bool has_adjoint = static_cast<bool>(adjoint);
    ctx->forward = std::move(forward);
    ctx->adjoint = std::move(adjoint);
    ctx->diagonal = std::move(diagonal);
    parlops_op *o = nullptr;
    check(parlops_op_create_shell_with_diagonal(rows.get(), cols.get(), dtype_of<T>::value, m, ctx.get(),
                                                Callables<T>::fwd, has_adjoint ? Callables<T>::adj : nullptr,
                                                Callables<T>::diag, Callables<T>::destroy, &o));
    ctx.release();
    return Op(o);
  }

  /// diag of per-rank local operators (MPI_COMM_SELF layouts; none allowed on a rank). [collective]
  [[nodiscard]] static Op block_diag(const Comm &c, const std::vector<Op> &local, parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_block_diag, c, handles(local), t);
  }
  [[nodiscard]] static Op block_diag(const Comm &c, std::initializer_list<std::reference_wrapper<const Op>> local,
                                     parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_block_diag, c, handles(local), t);
  }
  /// [A_1; A_2; ...] of per-rank local operators: x replicated, y split. [collective]
  [[nodiscard]] static Op vstack(const Comm &c, const std::vector<Op> &local, parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_vstack, c, handles(local), t);
  }
  [[nodiscard]] static Op vstack(const Comm &c, std::initializer_list<std::reference_wrapper<const Op>> local,
                                 parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_vstack, c, handles(local), t);
  }
  /// [A_1, A_2, ...] of per-rank local operators: x split, y replicated. [collective]
  [[nodiscard]] static Op hstack(const Comm &c, const std::vector<Op> &local, parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_hstack, c, handles(local), t);
  }
  [[nodiscard]] static Op hstack(const Comm &c, std::initializer_list<std::reference_wrapper<const Op>> local,
                                 parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_hstack, c, handles(local), t);
  }
  /// diag(A_1, ..., A_n) of distributed operators, the same n on every rank. [collective]
  [[nodiscard]] static Op stacked_block_diag(const Comm &c, const std::vector<Op> &ops, parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_stacked_block_diag, c, handles(ops), t);
  }
  [[nodiscard]] static Op stacked_block_diag(const Comm &c,
                                             std::initializer_list<std::reference_wrapper<const Op>> ops,
                                             parlops_dtype t = PARLOPS_F64) {
    return combine(parlops_op_stacked_block_diag, c, handles(ops), t);
  }

  /// First derivative along `axis` of an N-D layout (PyLops' stencils; edge: one-sided ends). [collective]
  [[nodiscard]] static Op first_derivative(const Layout &l, int axis = 0, double sampling = 1.0,
                                           parlops_stencil kind = PARLOPS_CENTERED, bool edge = false,
                                           parlops_dtype t = PARLOPS_F64) {
    parlops_op *o = nullptr;
    check(parlops_op_first_derivative(l.get(), axis, sampling, kind, edge, t, &o));
    return Op(o);
  }
  /// Second derivative along `axis` (PyLops' SecondDerivative). [collective]
  [[nodiscard]] static Op second_derivative(const Layout &l, int axis = 0, double sampling = 1.0,
                                            parlops_stencil kind = PARLOPS_CENTERED, bool edge = false,
                                            parlops_dtype t = PARLOPS_F64) {
    parlops_op *o = nullptr;
    check(parlops_op_second_derivative(l.get(), axis, sampling, kind, edge, t, &o));
    return Op(o);
  }
  /// Sum over axes of weights[a] times the centered second derivative with step sampling[a] (one
  /// entry per axis each). [collective]
  [[nodiscard]] static Op laplacian(const Layout &l, const std::vector<double> &weights,
                                    const std::vector<double> &sampling, parlops_dtype t = PARLOPS_F64) {
    const std::size_t nd = l.shape().size();
    const bool ok = weights.size() == nd && sampling.size() == nd;
    parlops_op *o = nullptr;
    const parlops_status s = parlops_op_laplacian(l.get(), ok ? weights.data() : nullptr, sampling.data(), t, &o);
    detail::check_sized(s, weights.size() != nd ? "Op::laplacian's weights" : "Op::laplacian's sampling",
                        weights.size() != nd ? weights.size() : sampling.size(), nd);
    return Op(o);
  }
  /// The matrix-free Laplacian of a 1-, 2- or 3-D grid (3-, 5- or 7-point, Dirichlet, unit spacing;
  /// dims slowest first, their product l's length; any split). [collective]
  [[nodiscard]] static Op poisson(const Layout &l, const std::vector<int64_t> &dims, parlops_dtype t = PARLOPS_F64) {
    parlops_op *o = nullptr;
    check(parlops_op_poisson(l.get(), static_cast<int>(dims.size()), dims.data(), t, &o));
    return Op(o);
  }
  /// N-D FFT along `axes` (PyLops-MPI's MPIFFTND; two axes: MPIFFT2D) of an array split along axis 0:
  /// norm PARLOPS_FFT_NORM_NONE or _1_OVER_N, `real` keeps the non-negative frequencies of the last
  /// axis, the shift flags (empty: none) one per axis. `t` is the model's type; the operator's
  /// vectors are complex (c64 for f32/c64, c128 for f64/c128). [collective]
  [[nodiscard]] static Op fft(const Layout &l, const std::vector<int> &axes, int norm = PARLOPS_FFT_NORM_NONE,
                              bool real = false, const std::vector<bool> &ifftshift_before = {},
                              const std::vector<bool> &fftshift_after = {}, parlops_dtype t = PARLOPS_C128) {
    const std::size_t na = axes.size();
    const bool ok1 = ifftshift_before.empty() || ifftshift_before.size() == na;
    const bool ok2 = fftshift_after.empty() || fftshift_after.size() == na;
    // std::vector<bool> is packed: the flags go to the C call as bool arrays
    std::unique_ptr<bool[]> f1(new bool[na + 1]()), f2(new bool[na + 1]());
    for (std::size_t i = 0; ok1 && i < ifftshift_before.size(); i++) f1[i] = ifftshift_before[i];
    for (std::size_t i = 0; ok2 && i < fftshift_after.size(); i++) f2[i] = fftshift_after[i];
    parlops_op *o = nullptr;
    // a wrong-length flag list is passed as naxes 0: parlops then fails on every rank
    const parlops_status s =
        parlops_op_fft(l.get(), ok1 && ok2 ? static_cast<int>(na) : 0, axes.data(), norm, real,
                       ifftshift_before.empty() ? nullptr : f1.get(), fftshift_after.empty() ? nullptr : f2.get(), t, &o);
    detail::check_sized(s, !ok1 ? "Op::fft's ifftshift_before" : "Op::fft's fftshift_after",
                        !ok1 ? ifftshift_before.size() : fftshift_after.size(), ok1 && ok2 ? fftshift_after.size() : na);
    return Op(o);
  }
  /// First derivatives along every axis (sampling: one entry per axis); rows: per rank, each axis's
  /// derivative of its slab in turn. [collective]
  [[nodiscard]] static Op gradient(const Layout &l, const std::vector<double> &sampling,
                                   parlops_stencil kind = PARLOPS_CENTERED, bool edge = false,
                                   parlops_dtype t = PARLOPS_F64) {
    const std::size_t nd = l.shape().size();
    parlops_op *o = nullptr;
    detail::check_sized(parlops_op_gradient(l.get(), detail::sized(sampling, nd), kind, edge, t, &o),
                        "Op::gradient's sampling", sampling.size(), nd);
    return Op(o);
  }
  /// Halo exchange over a Cartesian process grid (empty proc_grid: all ranks on the last axis): x is
  /// this rank's block (halo_block), y the block padded by `halo` cells (1, ndim or 2*ndim widths). [collective]
  template <class T = double>
  [[nodiscard]] static Op halo(const Comm &c, const std::vector<int64_t> &dims, const std::vector<int64_t> &halo,
                               const std::vector<int64_t> &proc_grid = {}) {
    const std::size_t nd = dims.size();
    const bool grid_ok = proc_grid.empty() || proc_grid.size() == nd;
    // a wrong-length grid is passed as zeros: parlops then fails on every rank
    const std::vector<int64_t> zeros(nd, 0);
    const int64_t *g = proc_grid.empty() ? nullptr : (grid_ok ? proc_grid.data() : zeros.data());
    parlops_op *o = nullptr;
    detail::check_sized(parlops_op_halo(c.get(), dtype_of<T>::value, static_cast<int>(nd), dims.data(), g,
                                        static_cast<int>(halo.size()), halo.data(), &o),
                        "Op::halo's proc_grid", grid_ok ? nd : proc_grid.size(), nd);
    return Op(o);
  }

  /// This rank's rows with global column indices (copied). [collective]
  template <class T, class I>
  [[nodiscard]] static Op csr(const Layout &rows, const Layout &cols, const I *row_ptr, const I *col_idx, const T *values) {
    static_assert(sizeof(I) == 4 || sizeof(I) == 8, "32- or 64-bit indices");
    parlops_op *o = nullptr;
    check(parlops_op_create_csr(rows.get(), cols.get(), dtype_of<T>::value,
                                sizeof(I) == 4 ? PARLOPS_INDEX_I32 : PARLOPS_INDEX_I64, row_ptr, col_idx, values, &o));
    return Op(o);
  }

  /// hypre's defaults for BoomerAMG (every option negative: hypre chooses).
  [[nodiscard]] static parlops_amg_options amg_options() {
    parlops_amg_options o{};
    check(parlops_amg_options_init(&o));
    return o;
  }
  /// BoomerAMG on a PARLOPS_F64 CSR operator: one V-cycle per apply (hypre loaded at run time). [collective]
  [[nodiscard]] static Op boomeramg(const Op &a, const parlops_amg_options &options = amg_options()) {
    parlops_op *o = nullptr;
    check(parlops_op_create_boomeramg(a.get(), &options, &o));
    return Op(o);
  }
  /// BoomerAMG with options by hypre's names and `num_vectors` near-null-space vectors (this rank's
  /// rows of each, one after the other: e.g. rigid_body_modes). [collective]
  [[nodiscard]] static Op boomeramg(const Op &a, const HypreOptions &options, int64_t num_vectors = 0,
                                    const double *vectors = nullptr) {
    parlops_op *o = nullptr;
    check(parlops_op_create_boomeramg_with(a.get(), options.get(), num_vectors, vectors, &o));
    return Op(o);
  }
  /// hypre's AMS on an H(curl) system `a` with the discrete gradient `g` (A's rows, vertex columns):
  /// `coords` this rank's vertices' coordinates (dim each; order 1) or `interpolations` (Pi, or its
  /// dim components; higher orders); optional vertex Poisson matrices; options made with
  /// PARLOPS_HYPRE_AMS (nullptr: MFEM's HypreAMS defaults). [collective]
  [[nodiscard]] static Op ams(const Op &a, const Op &g, int dim, const std::vector<double> &coords,
                              const std::vector<const Op *> &interpolations = {}, const Op *alpha_poisson = nullptr,
                              const Op *beta_poisson = nullptr, const HypreOptions *options = nullptr) {
    std::vector<const parlops_op *> p;
    for (const Op *i : interpolations) p.push_back(i ? i->get() : nullptr);
    parlops_op *o = nullptr;
    check(parlops_op_create_ams(a.get(), g.get(), dim, static_cast<int64_t>(coords.size()),
                                coords.empty() ? nullptr : coords.data(), static_cast<int>(p.size()), p.data(),
                                alpha_poisson ? alpha_poisson->get() : nullptr,
                                beta_poisson ? beta_poisson->get() : nullptr, options ? options->get() : nullptr, &o));
    return Op(o);
  }
  /// hypre's ADS on a 3D H(div) system `a` with the discrete curl `c` and gradient `g`: `coords`
  /// (order 1) or `interpolations` (RT_Pi and ND_Pi, or their 3 components each); options made with
  /// PARLOPS_HYPRE_ADS (nullptr: MFEM's HypreADS defaults). [collective]
  [[nodiscard]] static Op ads(const Op &a, const Op &c, const Op &g, const std::vector<double> &coords,
                              const std::vector<const Op *> &interpolations = {}, const HypreOptions *options = nullptr) {
    std::vector<const parlops_op *> p;
    for (const Op *i : interpolations) p.push_back(i ? i->get() : nullptr);
    parlops_op *o = nullptr;
    check(parlops_op_create_ads(a.get(), c.get(), g.get(), static_cast<int64_t>(coords.size()),
                                coords.empty() ? nullptr : coords.data(), static_cast<int>(p.size()), p.data(),
                                options ? options->get() : nullptr, &o));
    return Op(o);
  }
  /// Chebyshev preconditioner of `degree` on a square operator with a diagonal; lmax <= 0 estimates
  /// the bounds of D^-1 A's spectrum (0.3 and 1.2 times its largest eigenvalue, MFEM's choice). [collective]
  [[nodiscard]] static Op chebyshev(const Op &a, int64_t degree, double lmin = 0.0, double lmax = 0.0) {
    parlops_op *o = nullptr;
    check(parlops_op_create_chebyshev(a.get(), degree, lmin, lmax, &o));
    return Op(o);
  }
  /// Block Jacobi on a CSR operator: PARLOPS_LOCAL_ILU0, _IC0 or _SSOR (with omega) on each rank's
  /// diag block. [collective]
  [[nodiscard]] static Op block_jacobi(const Op &a, parlops_local_solve kind, double omega = 1.0) {
    parlops_op *o = nullptr;
    check(parlops_op_create_block_jacobi(a.get(), kind, omega, &o));
    return Op(o);
  }

 private:
  template <class T>
  struct Callables {
    ShellFn<T> forward, adjoint;
    DiagonalFn<T> diagonal;
    std::size_t rows_len = 0, cols_len = 0;
    static int fwd(void *ctx, const void *x, void *y) noexcept {
      auto *c = static_cast<Callables *>(ctx);
      try {
        c->forward(span<const T>(static_cast<const T *>(x), c->cols_len), span<T>(static_cast<T *>(y), c->rows_len));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static int adj(void *ctx, const void *y, void *x) noexcept {
      auto *c = static_cast<Callables *>(ctx);
      try {
        c->adjoint(span<const T>(static_cast<const T *>(y), c->rows_len), span<T>(static_cast<T *>(x), c->cols_len));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static int diag(void *ctx, void *d) noexcept {
      auto *c = static_cast<Callables *>(ctx);
      try {
        c->diagonal(span<T>(static_cast<T *>(d), c->rows_len));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static void destroy(void *ctx) noexcept { delete static_cast<Callables *>(ctx); }
  };
  static std::vector<const parlops_op *> handles(const std::vector<Op> &ops) {
    std::vector<const parlops_op *> h;
    h.reserve(ops.size());
    for (const Op &op : ops) h.push_back(op.get());
    return h;
  }
  static std::vector<const parlops_op *> handles(std::initializer_list<std::reference_wrapper<const Op>> ops) {
    std::vector<const parlops_op *> h;
    h.reserve(ops.size());
    for (const Op &op : ops) h.push_back(op.get());
    return h;
  }
  using CombineFn = parlops_status (*)(const parlops_comm *, parlops_dtype, int, const parlops_op *const *,
                                       parlops_op **);
  static Op combine(CombineFn f, const Comm &c, const std::vector<const parlops_op *> &h, parlops_dtype t) {
    parlops_op *o = nullptr;
    check(f(c.get(), t, static_cast<int>(h.size()), h.data(), &o));
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
  /// PARLOPS_PC_SIDE_DEFAULT or PARLOPS_PC_LEFT (GMRES: iterate on M A x = M b, test ||M r||).
  void set_pc_side(parlops_pc_side side) { check(parlops_solver_set_pc_side(h_, side)); }
  /// GMRES/FGMRES: PARLOPS_ORTHOG_CLASSICAL (default) or PARLOPS_ORTHOG_MODIFIED.
  void set_orthogonalization(parlops_orthog o) { check(parlops_solver_set_orthogonalization(h_, o)); }
  /// The operator's null space, removed by every solve: the constant (has_constant) and `vecs`
  /// (copied now); the solution is the one orthogonal to it.
  void set_null_space(bool has_constant, const std::vector<const Vec *> &vecs = {}) {
    std::vector<const parlops_vec *> h;
    for (const Vec *v : vecs) h.push_back(v ? v->get() : nullptr);
    check(parlops_solver_set_null_space(h_, has_constant, static_cast<int>(h.size()), h.data()));
  }
  void set_sum_order(parlops_sum_order o) { check(parlops_solver_set_sum_order(h_, o)); }
  void set_initial_guess_nonzero(bool nz) { check(parlops_solver_set_initial_guess_nonzero(h_, nz)); }
  void set_restart(int64_t m) { check(parlops_solver_set_restart(h_, m)); }
  /// GCRO-DR: the number of vectors recycled; drops the space kept (parlops_solver_set_recycle).
  void set_recycle(int64_t k) { check(parlops_solver_set_recycle(h_, k)); }
  void set_damping(double d) { check(parlops_solver_set_damping(h_, d)); }
  /// Richardson: the scale omega of x <- x + omega M (b - A x) (default 1).
  void set_richardson_scale(double omega) { check(parlops_solver_set_richardson_scale(h_, omega)); }
  /// ISTA/FISTA: stop on the cost relative to the first iterate's (rtol) or to ||b|| (rtol1).
  void set_cost_tolerances(double rtol, double rtol1 = 0.0) { check(parlops_solver_set_cost_tolerances(h_, rtol, rtol1)); }
  /// ISTA/FISTA: regulariser and weight eps; step > 0 sets the gradient step, 0 derives it.
  void set_sparsity(parlops_threshold kind, double eps = 0.1, double step = 0.0) {
    check(parlops_solver_set_sparsity(h_, kind, eps, step));
  }
  /// C monitor (null removes it); return non-zero from f to stop the solve.
  void set_monitor(parlops_monitor_fn f, void *ctx) {
    check(parlops_solver_set_monitor(h_, f, ctx));
    monitor_.reset();
  }
  /// Monitor f(iteration, residual_norm) on every rank, kept by the solver; returning true (or
  /// throwing) stops the solve; an empty f removes it.
  void set_monitor(std::function<bool(int64_t, double)> f) {
    if (!f) {
      set_monitor(nullptr, nullptr);
      return;
    }
    auto m = std::make_unique<std::function<bool(int64_t, double)>>(std::move(f));
    check(parlops_solver_set_monitor(h_, monitor_call, m.get()));
    monitor_ = std::move(m);
  }
  /// C iterate monitor (null removes it): f sees the iterate x and its residual b - A x and returns a
  /// parlops_monitor_action.
  void set_monitor_iterate(parlops_monitor_iterate_fn f, void *ctx) {
    check(parlops_solver_set_monitor_iterate(h_, f, ctx));
    iterate_monitor_.reset();
  }
  /// Iterate monitor f(iteration, residual_norm, x, r) on every rank, kept by the solver: x and r are
  /// lent for the call (read them with the C functions); return PARLOPS_MONITOR_CONTINUE, _STOP or
  /// _CONVERGED (throwing stops the solve); an empty f removes it.
  using IterateMonitor = std::function<parlops_monitor_action(int64_t, double, const parlops_vec *, const parlops_vec *)>;
  void set_monitor_iterate(IterateMonitor f) {
    if (!f) {
      set_monitor_iterate(nullptr, nullptr);
      return;
    }
    auto m = std::make_unique<IterateMonitor>(std::move(f));
    check(parlops_solver_set_monitor_iterate(h_, iterate_call, m.get()));
    iterate_monitor_ = std::move(m);
  }
  /// Trust-region CG (Steihaug-Toint): stop on the boundary ||x||_P = radius (PARLOPS_CONVERGED_STEP_LENGTH)
  /// or there along a direction of negative curvature (PARLOPS_CONVERGED_NEG_CURVE); 0 turns it off.
  void set_trust_region(double radius) { check(parlops_solver_set_trust_region(h_, radius)); }
  /// When the preconditioner is set up again after its matrix's values changed: at the first solve
  /// after a change, then at most every `every`-th solve (0: never by count), or when the iterations
  /// grew by more than `growth` times (0: off). Default (1, 0): at every solve after a change.
  void set_pc_reuse(int64_t every, double growth = 0.0) { check(parlops_solver_set_pc_reuse(h_, every, growth)); }
  /// Apply the options of `o` named with `prefix` ("u_" takes -u_ksp_type, ...), as PETSc's
  /// KSPSetFromOptions; -pc_type builds the preconditioner from the operator (set it first). [collective]
  void set_from_options(const Options &o, const std::string &prefix = "") {
    check(parlops_solver_set_from_options(h_, o.get(), prefix.c_str()));
  }
  /// Record where each solve's time goes (default off; -log_view and PARLOPS_LOG turn it on).
  void set_timing(bool on) { check(parlops_solver_set_timing(h_, on)); }
  /// Where the last solve's time went on this rank, for one phase (parlops_solver_log).
  struct LogEntry {
    int64_t count = 0;
    double seconds = 0, outside_seconds = 0;
    int64_t bytes = 0;
  };
  [[nodiscard]] LogEntry log(parlops_log_phase phase) const {
    LogEntry e;
    check(parlops_solver_log(h_, phase, &e.count, &e.seconds, &e.outside_seconds, &e.bytes));
    return e;
  }
  /// The -log_view table of the last solve, over the ranks. [collective]
  [[nodiscard]] std::string log_view() const {
    return detail::text([this](char *b, std::size_t n, std::size_t *need) { return parlops_solver_log_view(h_, b, n, need); });
  }
  /// The tolerances set: {rtol, atol, dtol} and max_iter.
  void tolerances(double &rtol, double &atol, double &dtol, int64_t &max_iter) const {
    check(parlops_solver_get_tolerances(h_, &rtol, &atol, &dtol, &max_iter));
  }
  /// What the next solve will run, as text (parlops_solver_view: PETSc's -ksp_view).
  [[nodiscard]] std::string view() const {
    return detail::text([this](char *b, std::size_t n, std::size_t *need) { return parlops_solver_view(h_, b, n, need); });
  }
  void keep_history(bool k) { check(parlops_solver_keep_history(h_, k)); }
  /// Record what eigenvalue_estimates() needs in the next solves.
  void set_compute_eigenvalues(bool c) { check(parlops_solver_set_compute_eigenvalues(h_, c)); }
  /// (smallest, largest) eigenvalue (CG) or singular value (GMRES, FGMRES) estimate of the last solve.
  [[nodiscard]] std::pair<double, double> eigenvalue_estimates() const {
    double lo = 0, hi = 0;
    check(parlops_solver_eigenvalue_estimates(h_, &lo, &hi));
    return {lo, hi};
  }
  /// The operator's inverse as an operator (each apply solves from zero with a snapshot of this
  /// solver's settings, operator and preconditioner; a solve that does not converge throws
  /// PARLOPS_ERR_NOT_CONVERGED on every rank unless it ran out of iterations and accept_max_iter). [collective]
  [[nodiscard]] Op inverse(bool accept_max_iter = false) const {
    parlops_op *o = nullptr;
    check(parlops_op_create_inverse(h_, accept_max_iter, &o));
    return Op(o);
  }
  /// [collective]; a diverged solve returns normally: look at info().reason.
  parlops_solve_info solve(const Vec &b, Vec &x) {
    check(parlops_solver_solve(h_, b.get(), x.get()));
    return info();
  }
  /// Solve A x[j] = b[j] for every j (block CG for CG; see parlops_solver_solve_many); each
  /// column's outcome. [collective]
  std::vector<parlops_solve_info> solve_many(const std::vector<const Vec *> &b, const std::vector<Vec *> &x) {
    if (b.size() != x.size() || b.size() > static_cast<size_t>(INT_MAX))
      throw Error(PARLOPS_ERR_SIZE_MISMATCH, "solve_many: b and x must have the same number of vectors");
    std::vector<const parlops_vec *> bh;
    std::vector<parlops_vec *> xh;
    for (const Vec *v : b) bh.push_back(v ? v->get() : nullptr);
    for (Vec *v : x) xh.push_back(v ? v->get() : nullptr);
    check(parlops_solver_solve_many(h_, static_cast<int>(b.size()), bh.data(), xh.data()));
    std::vector<parlops_solve_info> out;
    for (size_t j = 0; j < b.size(); j++) out.push_back(info_column(static_cast<int64_t>(j)));
    return out;
  }
  [[nodiscard]] parlops_solve_info info() const {
    parlops_solve_info i;
    check(parlops_solver_info(h_, &i));
    return i;
  }
  /// Column j's outcome of the last solve.
  [[nodiscard]] parlops_solve_info info_column(int64_t j) const {
    parlops_solve_info i;
    check(parlops_solver_info_column(h_, j, &i));
    return i;
  }
  [[nodiscard]] std::vector<double> history() const {
    const double *p = nullptr;
    int64_t n = 0;
    check(parlops_solver_history(h_, &p, &n));
    return std::vector<double>(p, p + n);
  }
  /// Least squares: ||b - A x|| of every iteration (PyLops-MPI's cgls `cost`), with keep_history.
  [[nodiscard]] std::vector<double> residual_history() const {
    const double *p = nullptr;
    int64_t n = 0;
    check(parlops_solver_residual_history(h_, &p, &n));
    return std::vector<double>(p, p + n);
  }

 private:
  static int monitor_call(void *ctx, int64_t it, double r) noexcept {
    try {
      return (*static_cast<std::function<bool(int64_t, double)> *>(ctx))(it, r) ? 1 : 0;
    } catch (...) {
      return 1;
    }
  }
  static int iterate_call(void *ctx, int64_t it, double r, const parlops_vec *x, const parlops_vec *res) noexcept {
    try {
      return (*static_cast<IterateMonitor *>(ctx))(it, r, x, res);
    } catch (...) {
      return PARLOPS_MONITOR_STOP;
    }
  }
  std::unique_ptr<std::function<bool(int64_t, double)>> monitor_;
  std::unique_ptr<IterateMonitor> iterate_monitor_;
};

namespace detail {
template <class V>
inline std::vector<V> raw(const std::vector<const Vec *> &v) {
  std::vector<V> h;
  for (const Vec *x : v) h.push_back(x ? x->get() : nullptr);
  return h;
}
inline std::vector<parlops_vec *> raw_mut(const std::vector<Vec *> &v) {
  std::vector<parlops_vec *> h;
  for (Vec *x : v) h.push_back(x ? x->get() : nullptr);
  return h;
}
}  // namespace detail

/// x_i^H y_j for every pair in one reduction, row-major (x.size() rows of y.size()); the vectors
/// live on c. [collective]
[[nodiscard]] inline std::vector<parlops_scalar> block_dot(const Comm &c, const std::vector<const Vec *> &x,
                                                           const std::vector<const Vec *> &y) {
  std::vector<parlops_scalar> out(x.size() * y.size());
  auto hx = detail::raw<const parlops_vec *>(x), hy = detail::raw<const parlops_vec *>(y);
  check(parlops_vec_block_dot(c.get(), static_cast<int>(hx.size()), hx.data(), static_cast<int>(hy.size()),
                              hy.data(), out.data()));
  return out;
}

/// y += sum_k a[k] x[k] in one pass (y must not be one of x).
inline void maxpy(Vec &y, const std::vector<parlops_scalar> &a, const std::vector<const Vec *> &x) {
  if (a.size() != x.size()) throw Error(PARLOPS_ERR_SIZE_MISMATCH, "maxpy: a and x differ in length");
  auto hx = detail::raw<const parlops_vec *>(x);
  check(parlops_vec_maxpy(y.get(), static_cast<int>(hx.size()), a.data(), hx.data()));
}

/// Orthonormalise v (vectors on c) in place (CGS2; in the B inner product when b is given); returns
/// R (row-major, V_in = V_out R). [collective]
inline std::vector<parlops_scalar> orthonormalize(const Comm &c, const std::vector<Vec *> &v, const Op *b = nullptr) {
  std::vector<parlops_scalar> r(v.size() * v.size());
  auto h = detail::raw_mut(v);
  check(parlops_vec_orthonormalize(c.get(), static_cast<int>(h.size()), h.data(), b ? b->get() : nullptr,
                                   r.data()));
  return r;
}

/// The u.size() leading eigenvalues of A (or of the pencil A u = lambda B u with b and binv given)
/// from the random vectors omega, eigenvectors written to u (hIPPYlib's randomized eigensolvers). [collective]
inline std::vector<double> eig_randomized(const Op &a, const std::vector<const Vec *> &omega,
                                          const std::vector<Vec *> &u, int power = 1,
                                          parlops_randomized_pass pass = PARLOPS_RANDOMIZED_DOUBLE_PASS,
                                          const Op *b = nullptr, const Op *binv = nullptr) {
  std::vector<double> vals(u.size());
  auto ho = detail::raw<const parlops_vec *>(omega);
  auto hu = detail::raw_mut(u);
  check(parlops_eig_randomized(a.get(), b ? b->get() : nullptr, binv ? binv->get() : nullptr,
                               static_cast<int>(ho.size()), ho.data(), power, pass, static_cast<int>(hu.size()),
                               vals.data(), hu.data()));
  return vals;
}

/// Lanczos: n_ev extreme eigenvalues of the Hermitian A from v0; Ritz vectors into `vecs` (empty or
/// n_ev vectors). Throws PARLOPS_ERR_NOT_CONVERGED when max_steps do not suffice. [collective]
inline std::vector<double> eig_lanczos(const Op &a, const Vec &v0, int n_ev, parlops_eig_which which,
                                       int64_t max_steps, double tol, const std::vector<Vec *> &vecs = {},
                                       std::vector<double> *residuals = nullptr, int64_t *steps = nullptr) {
  std::vector<double> vals(static_cast<std::size_t>(n_ev > 0 ? n_ev : 0)), res(vals.size());
  auto hv = detail::raw_mut(vecs);
  check(parlops_eig_lanczos(a.get(), v0.get(), max_steps, tol, n_ev, which, vals.data(), res.data(),
                            vecs.empty() ? nullptr : hv.data(), steps));
  if (residuals) *residuals = res;
  return vals;
}

/// What parlops_eig_krylov_schur takes beyond the operator, the start vector and n_ev (SLEPc's EPS
/// settings): the wanted end or the shift, the basis size, the limits, B and the inverse operator,
/// and a monitor f(products, n_converged, values, estimates) returning true to stop.
struct KrylovSchur {
  parlops_eig_which which = PARLOPS_EIG_LARGEST;
  double sigma = 0.0;  // PARLOPS_EIG_NEAREST only
  int ncv = 0;         // 0: SLEPc's default, max(2 n_ev, n_ev + 15), at most the operator's size
  int64_t max_products = 100000;
  double tol = 1e-8;
  const Op *b = nullptr;    // B of A x = lambda B x (null: the identity)
  const Op *inv = nullptr;  // B^-1 (largest, smallest with b) or (A - sigma B)^-1 (nearest)
  std::function<bool(int64_t, int, const std::vector<double> &, const std::vector<double> &)> monitor;
};

namespace detail {
inline int eig_monitor_call(void *ctx, int64_t products, int nconv, int n, const double *v, const double *e) noexcept {
  try {
    const auto &f = static_cast<const KrylovSchur *>(ctx)->monitor;
    return f(products, nconv, std::vector<double>(v, v + n), std::vector<double>(e, e + n)) ? 1 : 0;
  } catch (...) {
    return 1;
  }
}
}  // namespace detail

/// Krylov-Schur: n_ev eigenvalues of the Hermitian A (or the pencil (A, B)) from v0 with a basis of
/// at most `o.ncv` vectors; eigenvectors into `vecs` (empty or n_ev vectors), the true relative
/// residuals into `residuals`. Throws PARLOPS_ERR_NOT_CONVERGED (the values reached are in its
/// message). [collective]
inline std::vector<double> eig_krylov_schur(const Op &a, const Vec &v0, int n_ev, const KrylovSchur &o = {},
                                            const std::vector<Vec *> &vecs = {},
                                            std::vector<double> *residuals = nullptr, int64_t *products = nullptr) {
  std::vector<double> vals(static_cast<std::size_t>(n_ev > 0 ? n_ev : 0)), res(vals.size());
  auto hv = detail::raw_mut(vecs);
  int ncv = o.ncv;
  if (ncv == 0) {
    int64_t n = 0;
    check(parlops_op_size(a.get(), &n, nullptr));
    ncv = static_cast<int>(std::min<int64_t>(std::max(2 * n_ev, n_ev + 15), n));
  }
  check(parlops_eig_krylov_schur(a.get(), o.b ? o.b->get() : nullptr, o.inv ? o.inv->get() : nullptr, o.sigma, v0.get(),
                                 n_ev, ncv, o.max_products, o.tol, o.which,
                                 o.monitor ? detail::eig_monitor_call : nullptr,
                                 const_cast<void *>(static_cast<const void *>(&o)), vals.data(), res.data(),
                                 vecs.empty() ? nullptr : hv.data(), products));
  if (residuals) *residuals = res;
  return vals;
}

/// Rank groups (PyLops-MPI's mask): the ranks of c passing the same group form the returned
/// communicator; vectors on it reduce within the group. [collective]
[[nodiscard]] inline Comm split(const Comm &c, int group) {
  parlops_comm *out = nullptr;
  check(parlops_comm_split(c.get(), group, &out));
  return Comm(out);
}
/// x^H y and norms of all groups' vectors stacked (every rank of c calls). [collective over c]
[[nodiscard]] inline parlops_scalar dot_groups(const Comm &c, const Vec &x, const Vec &y) {
  parlops_scalar s{};
  check(parlops_vec_dot_groups(c.get(), x.get(), y.get(), &s));
  return s;
}
[[nodiscard]] inline double norm_groups(const Comm &c, const Vec &v, parlops_norm kind = PARLOPS_NORM_2, double p = 0.0) {
  double n = 0.0;
  check(parlops_vec_norm_groups(c.get(), v.get(), kind, p, &n));
  return n;
}

/// The layout of stacked vectors made of `parts`, layouts of c (each rank: its part of parts[0], then
/// of parts[1], ...). [collective]
[[nodiscard]] inline Layout stack(const Comm &c, const std::vector<const Layout *> &parts) {
  std::vector<const parlops_layout *> h;
  for (const Layout *l : parts) h.push_back(l ? l->get() : nullptr);
  parlops_layout *out = nullptr;
  check(parlops_layout_stack(c.get(), static_cast<int>(h.size()), h.data(), &out));
  return Layout(out);
}
/// Copy part i of the stacked vector v into `part` / `part` into part i of v (host memory).
inline void stack_get(const Vec &v, int i, Vec &part) { check(parlops_vec_stack_get(v.get(), i, part.get())); }
inline void stack_set(Vec &v, int i, const Vec &part) { check(parlops_vec_stack_set(v.get(), i, part.get())); }

/// The m x n block operator of distributed operators, row-major, nullptr for a zero block
/// (MFEM's BlockOperator). [collective]
[[nodiscard]] inline Op block(const Comm &c, int m, int n, const std::vector<const Op *> &blocks,
                              parlops_dtype t = PARLOPS_F64) {
  std::vector<const parlops_op *> h;
  for (const Op *o : blocks) h.push_back(o ? o->get() : nullptr);
  if (h.size() != static_cast<std::size_t>(m) * static_cast<std::size_t>(n))
    throw Error(PARLOPS_ERR_SIZE_MISMATCH, "block: blocks must hold m * n entries");
  parlops_op *o = nullptr;
  check(parlops_op_block(c.get(), t, m, n, h.data(), &o));
  return Op(o);
}
/// MFEM's BlockLowerTriangularPreconditioner on the square block operator a. [collective]
[[nodiscard]] inline Op block_lower_triangular(const Op &a, const std::vector<const Op *> &diag) {
  std::vector<const parlops_op *> h;
  for (const Op *o : diag) h.push_back(o ? o->get() : nullptr);
  parlops_op *o = nullptr;
  check(parlops_op_block_lower_triangular(a.get(), static_cast<int>(h.size()), h.data(), &o));
  return Op(o);
}

/// U diag(d) U^H (copies of u, vectors on c; d the same on every rank). [collective]
[[nodiscard]] inline Op low_rank(const Comm &c, const std::vector<const Vec *> &u, const std::vector<double> &d) {
  if (u.size() != d.size()) throw Error(PARLOPS_ERR_SIZE_MISMATCH, "low_rank: u and d differ in length");
  auto hu = detail::raw<const parlops_vec *>(u);
  parlops_op *o = nullptr;
  check(parlops_op_low_rank(c.get(), static_cast<int>(hu.size()), hu.data(), d.data(), &o));
  return Op(o);
}

/// A proximal operator: a convex function f on vectors of one layout, with f(x), prox_{tau f}, the
/// dual prox and (L2, shells with a gradient) grad f (PyLops-MPI's MPIL2, MPIL21, PyProximal's L1).
class Prox : public Handle<parlops_prox, parlops_prox_destroy> {
 public:
  explicit Prox(parlops_prox *owned) : Handle(owned) {}
  /// sigma ||x||_1. [collective]
  [[nodiscard]] static Prox l1(const Layout &l, double sigma, parlops_dtype t = PARLOPS_F64) {
    parlops_prox *p = nullptr;
    check(parlops_prox_create_l1(l.get(), t, sigma, &p));
    return Prox(p);
  }
  /// sigma / 2 ||x - b||^2 + alpha Re(q^H x) (b, q may be null; copied). [collective]
  [[nodiscard]] static Prox l2(const Layout &l, double sigma = 1.0, const Vec *b = nullptr, const Vec *q = nullptr,
                               double alpha = 1.0, bool qgrad = true, parlops_dtype t = PARLOPS_F64) {
    parlops_prox *p = nullptr;
    check(parlops_prox_create_l2(l.get(), t, sigma, b ? b->get() : nullptr, q ? q->get() : nullptr, alpha, qgrad, &p));
    return Prox(p);
  }
  /// sigma / 2 ||Op x - b||^2 + alpha Re(q^H x) (PyLops-MPI's MPIL2 with Op): the prox by `niter`
  /// iterations of CGLS (or PARLOPS_METHOD_CG on the normal equations) from x0 (null: zero) and,
  /// when warm, from the last result; b, q, x0 copied, Op held. [collective]
  [[nodiscard]] static Prox l2_op(const Op &op, const Vec &b, double sigma = 1.0, const Vec *q = nullptr,
                                  double alpha = 1.0, bool qgrad = true, int64_t niter = 10, double tol = 1e-4,
                                  const Vec *x0 = nullptr, bool warm = true,
                                  parlops_method method = PARLOPS_METHOD_CGLS) {
    parlops_prox *p = nullptr;
    check(parlops_prox_create_l2_op(op.get(), sigma, b.get(), q ? q->get() : nullptr, alpha, qgrad, method, niter, tol,
                                    x0 ? x0->get() : nullptr, warm, &p));
    return Prox(p);
  }
  /// sigma sum_i |(x_{0,i}, ..., x_{ndim-1,i})| over ndim blocks of each rank's entries. [collective]
  [[nodiscard]] static Prox l21(const Layout &l, int ndim, double sigma, parlops_dtype t = PARLOPS_F64) {
    parlops_prox *p = nullptr;
    check(parlops_prox_create_l21(l.get(), t, ndim, sigma, &p));
    return Prox(p);
  }
  /// The caller's proximal operator on this rank's entries: prox(tau, x, y) (required), proxdual
  /// (empty: the Moreau identity), value(x) (this rank's share) and grad(x, g) (empty: not given);
  /// an exception fails the call on every rank. [collective]
  template <class T>
  [[nodiscard]] static Prox shell(const Layout &l, std::function<void(double, span<const T>, span<T>)> prox,
                                  std::function<void(double, span<const T>, span<T>)> proxdual = {},
                                  std::function<double(span<const T>)> value = {},
                                  std::function<void(span<const T>, span<T>)> grad = {}) {
    int64_t lo = 0, len = 0;
    check(parlops_layout_local_range(l.get(), &lo, &len));
    auto *c = new ProxCallables<T>{std::move(prox), std::move(proxdual), std::move(value), std::move(grad),
                                   static_cast<std::size_t>(len)};
    parlops_prox *p = nullptr;
    parlops_status st = parlops_prox_create_shell(l.get(), dtype_of<T>::value, c, &ProxCallables<T>::px,
                                                  c->proxdual ? &ProxCallables<T>::pd : nullptr,
                                                  c->value ? &ProxCallables<T>::val : nullptr,
                                                  c->grad ? &ProxCallables<T>::gr : nullptr, &ProxCallables<T>::destroy, &p);
    if (st != PARLOPS_OK) {
      delete c;
      check(st);
    }
    return Prox(p);
  }
  /// f(x). [collective]
  [[nodiscard]] double value(const Vec &x) const {
    double v = 0;
    check(parlops_prox_value(h_, x.get(), &v));
    return v;
  }
  /// y = prox_{tau f}(x). [collective]
  void apply(double tau, const Vec &x, Vec &y) const { check(parlops_prox_apply(h_, tau, x.get(), y.get())); }
  /// y = prox_{tau f*}(x). [collective]
  void apply_dual(double tau, const Vec &x, Vec &y) const { check(parlops_prox_apply_dual(h_, tau, x.get(), y.get())); }
  /// g = grad f(x). [collective]
  void gradient(const Vec &x, Vec &g) const { check(parlops_prox_gradient(h_, x.get(), g.get())); }

 private:
  template <class T>
  struct ProxCallables {
    std::function<void(double, span<const T>, span<T>)> prox, proxdual;
    std::function<double(span<const T>)> value;
    std::function<void(span<const T>, span<T>)> grad;
    std::size_t n = 0;
    static int px(void *ctx, double tau, const void *x, void *y) noexcept {
      auto *c = static_cast<ProxCallables *>(ctx);
      try {
        c->prox(tau, span<const T>(static_cast<const T *>(x), c->n), span<T>(static_cast<T *>(y), c->n));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static int pd(void *ctx, double tau, const void *x, void *y) noexcept {
      auto *c = static_cast<ProxCallables *>(ctx);
      try {
        c->proxdual(tau, span<const T>(static_cast<const T *>(x), c->n), span<T>(static_cast<T *>(y), c->n));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static int val(void *ctx, const void *x, double *v) noexcept {
      auto *c = static_cast<ProxCallables *>(ctx);
      try {
        *v = c->value(span<const T>(static_cast<const T *>(x), c->n));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static int gr(void *ctx, const void *x, void *g) noexcept {
      auto *c = static_cast<ProxCallables *>(ctx);
      try {
        c->grad(span<const T>(static_cast<const T *>(x), c->n), span<T>(static_cast<T *>(g), c->n));
      } catch (...) {
        return 1;
      }
      return 0;
    }
    static void destroy(void *ctx) noexcept { delete static_cast<ProxCallables *>(ctx); }
  };
};

/// PyLops-MPI's PrimalDual: min_x f(x) + g(A x) + z^H x from x and the dual y (updated in place);
/// z may be null. [collective]
inline void primal_dual(const Prox &f, const Prox &g, const Op &a, Vec &x, Vec &y, double tau, double mu,
                        int64_t niter, double theta = 1.0, bool gfirst = true, const Vec *z = nullptr) {
  check(parlops_primal_dual(f.get(), g.get(), a.get(), z ? z->get() : nullptr, tau, mu, theta, niter, gfirst, x.get(),
                            y.get()));
}
/// PyLops-MPI's ADMML2: min_x 1/2 ||op x - b||^2 + g(a x) from x and z (updated in place; z starts
/// as a x unless z_given), the x-update by CGLS (cgls_niter iterations, PyLops' tol rule). [collective]
inline void admm_l2(const Prox &g, const Op &op, const Vec &b, const Op &a, Vec &x, Vec &z, double tau,
                    int64_t niter, bool gfirst = false, bool z_given = false, int64_t cgls_niter = 10,
                    double cgls_tol = 1e-4) {
  check(parlops_admm_l2(g.get(), op.get(), b.get(), a.get(), tau, niter, gfirst, z_given, cgls_niter, cgls_tol, x.get(),
                        z.get()));
}
/// PyLops-MPI's ProximalGradient: min_x f(x) + epsg g(x) from x (updated in place); returns the
/// iterations made. [collective]
inline int64_t proximal_gradient(const Prox &f, const Prox &g, Vec &x, double tau, int64_t niter,
                                 int acceleration = PARLOPS_ACCELERATION_NONE, double epsg = 1.0, double eta = 1.0,
                                 double tol = 0.0) {
  int64_t its = 0;
  check(parlops_proximal_gradient(f.get(), g.get(), tau, epsg, eta, niter, acceleration, tol, x.get(), &its));
  return its;
}

}  // namespace parlops

#endif  // PARLOPS_HPP
