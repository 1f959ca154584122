// parlops for MFEM applications (serial or parallel MFEM), header-only:
//  - parlops::mfem::OperatorWrapper: any mfem::Operator as a parlops operator (callbacks on local parts);
//  - parlops::mfem::CGSolver, GMRESSolver, FGMRESSolver, BiCGSTABSolver (also BiCGStabSolver),
//    MINRESSolver, SLISolver: mfem::Solver with MFEM's setter and getter names (SetRelTol,
//    SetAbsTol, SetMaxIter, SetKDim, SetPrintLevel in both forms, SetMonitor/SetController,
//    SetPreconditioner, SetOperator, GetNumIterations, GetConverged, GetInitialNorm, GetFinalNorm,
//    GetFinalRelNorm); Mult(b, x) hands parlops the memory of b and x with no copy. Each iterates
//    as MFEM's class of the same name (same iterations, solutions and norms to rounding, checked by
//    tests/mfem/dropin.cpp). What differs, if anything, is said at each class and at SetMonitor;
//  - nested solves: an adapter solver is an mfem::Solver, hence a preconditioner for another;
//  - parlops::mfem::rigid_body_modes: an elasticity space's rigid-body rotations, for BoomerAMG's
//    elasticity options (parlops::HypreOptions::elasticity), as MFEM's SetElasticityOptions makes them;
//  - parlops::mfem::ams and ::ads: hypre's AMS and ADS built from a Nedelec or Raviart-Thomas space as
//    MFEM's HypreAMS and HypreADS build them (a serial MFEM program);
//  - with MFEM_USE_MPI, a HypreParMatrix operator becomes a native parlops CSR operator reading hypre's
//    diag/offd arrays in place (parlops/hypre.hpp); keep the matrix alive while the solver uses it.
// Replacing mfem::CGSolver: construct parlops::mfem::CGSolver instead (docs/mfem.md); MPI must be
// running (MPI_Init, or parlops_init(NULL, NULL) in a serial MFEM program).
#ifndef PARLOPS_MFEM_HPP
#define PARLOPS_MFEM_HPP

#include <parlops.hpp>

#include <mfem.hpp>
#ifdef MFEM_USE_MPI
#include <parlops/hypre.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace parlops {
namespace mfem {

static_assert(sizeof(::mfem::real_t) == sizeof(double), "parlops::mfem needs MFEM with double real_t");

/// Host or device memory, from the operator's memory class.
inline parlops_memory memory_of(const ::mfem::Operator &op) {
  ::mfem::MemoryClass mc = op.GetMemoryClass();
  return (mc == ::mfem::MemoryClass::DEVICE || mc == ::mfem::MemoryClass::MANAGED) ? PARLOPS_MEMORY_CUDA
                                                                                     : PARLOPS_MEMORY_HOST;
}

/// An mfem::Vector viewing `n` entries at `p` without copying: host memory, or device memory of MFEM's
/// device memory type when `dev` (the view registers the pointer with MFEM's memory manager without
/// taking ownership, and unregisters it when it goes).
class VectorView {
 public:
  VectorView(const void *p, int n, bool dev) {
    auto *d = static_cast<::mfem::real_t *>(const_cast<void *>(p));
    if (dev) {
      v_.NewMemoryAndSize(::mfem::Memory<::mfem::real_t>(d, n, ::mfem::Device::GetDeviceMemoryType(), false), n,
                          true);
      v_.UseDevice(true);
    } else {
      v_.SetDataAndSize(d, n);
    }
  }
  VectorView(const VectorView &) = delete;
  VectorView &operator=(const VectorView &) = delete;
  ~VectorView() { v_.Destroy(); }
  ::mfem::Vector &get() { return v_; }

 private:
  ::mfem::Vector v_;
};

/// An mfem::Operator (serial, or the local part of a parallel one) as a parlops operator. The
/// wrapper must outlive the operator handle it gives (it is the callbacks' context). With
/// `with_diagonal`, the operator's diagonal is A.AssembleDiagonal (MFEM's partial-assembly and
/// constrained operators have one), so that Jacobi and Chebyshev (Op::chebyshev) work on a
/// matrix-free operator; only for operators that implement AssembleDiagonal (MFEM's default
/// aborts). [collective]
class OperatorWrapper {
 public:
  OperatorWrapper(const Comm &comm, const ::mfem::Operator &A, bool with_transpose = false,
                  bool with_diagonal = false)
      : A_(&A),
        height_(A.Height()),
        width_(A.Width()),
        dev_(memory_of(A) == PARLOPS_MEMORY_CUDA),
        rows_(comm, PARLOPS_DECIDE, A.Height()),
        cols_(comm, PARLOPS_DECIDE, A.Width()),
        op_(make(with_transpose, with_diagonal)) {}
  OperatorWrapper(const OperatorWrapper &) = delete;
  OperatorWrapper &operator=(const OperatorWrapper &) = delete;
  const Op &op() const { return op_; }
  const Layout &rows() const { return rows_; }
  const Layout &cols() const { return cols_; }
  /// The local sizes the wrapper was made for (the operator's Height and Width then).
  int rows_len() const { return height_; }
  int cols_len() const { return width_; }

 private:
  static int forward(void *ctx, const void *x, void *y) {
    auto *self = static_cast<OperatorWrapper *>(ctx);
    try {
      VectorView xv(x, self->A_->Width(), self->dev_), yv(y, self->A_->Height(), self->dev_);
      self->A_->Mult(xv.get(), yv.get());
    } catch (...) {
      return 1;
    }
    return 0;
  }
  static int transpose(void *ctx, const void *y, void *x) {
    auto *self = static_cast<OperatorWrapper *>(ctx);
    try {
      VectorView yv(y, self->A_->Height(), self->dev_), xv(x, self->A_->Width(), self->dev_);
      self->A_->MultTranspose(yv.get(), xv.get());
    } catch (...) {
      return 1;
    }
    return 0;
  }
  static int diagonal(void *ctx, void *d) {
    auto *self = static_cast<OperatorWrapper *>(ctx);
    try {
      VectorView dv(d, self->A_->Height(), self->dev_);
      self->A_->AssembleDiagonal(dv.get());
    } catch (...) {
      return 1;
    }
    return 0;
  }
  Op make(bool with_transpose, bool with_diagonal) {
    parlops_op *o = nullptr;
    if (with_diagonal)
      check(parlops_op_create_shell_with_diagonal(rows_.get(), cols_.get(), PARLOPS_F64, memory_of(*A_), this,
                                                  forward, with_transpose ? transpose : nullptr, diagonal, nullptr,
                                                  &o));
    else
      check(parlops_op_create_shell(rows_.get(), cols_.get(), PARLOPS_F64, memory_of(*A_), this, forward,
                                    with_transpose ? transpose : nullptr, nullptr, &o));
    return Op(o);
  }
  const ::mfem::Operator *A_;
  int height_, width_;
  bool dev_;  // the callbacks get device pointers
  Layout rows_, cols_;
  Op op_;
};

/// A CSR operator and the layouts it was built on.
struct Csr {
  Layout rows, cols;
  Op op;
};

/// An mfem::SparseMatrix as a parlops CSR operator reading MFEM's arrays in place (PARLOPS_WRAP: keep
/// the matrix alive and unchanged while the operator lives), for the preconditioners that need
/// matrix entries (Op::chebyshev, Op::block_jacobi, Op::boomeramg). A SparseMatrix is one rank's
/// whole matrix: `comm` must have one rank (a serial MFEM program); with parallel MFEM, use the
/// HypreParMatrix (parlops::hypre::wrap_parcsr). [collective]
inline Csr wrap_sparse(const Comm &comm, const ::mfem::SparseMatrix &A) {
  if (comm.size() != 1)
    throw Error(PARLOPS_ERR_INVALID_ARGUMENT,
                "parlops::mfem::wrap_sparse: an mfem::SparseMatrix is one rank's matrix; the communicator has " +
                    std::to_string(comm.size()) + " ranks (use the HypreParMatrix with parlops::hypre::wrap_parcsr)");
  Layout rows(comm, A.Height(), A.Height()), cols(comm, A.Width(), A.Width());
  static_assert(sizeof(int) == 4, "MFEM's SparseMatrix indices are int");
  parlops_op *o = nullptr;
  check(parlops_op_create_parcsr(rows.get(), cols.get(), PARLOPS_F64, PARLOPS_INDEX_I32, A.GetI(), A.GetJ(),
                                 A.GetData(), nullptr, nullptr, nullptr, 0, nullptr, PARLOPS_WRAP, &o));
  return Csr{std::move(rows), std::move(cols), Op(o)};
}

/// The rigid-body rotations on a vector H1 space `fes` (2 or 3 components, any order), as MFEM's
/// HypreBoomerAMG::SetElasticityOptions computes them: the coefficients (y, -x) in 2D, (y, -x, 0),
/// (0, z, -y), (-z, 0, x) in 3D projected on `fes`, this rank's true dofs of each (averaged over the
/// ranks sharing a dof, for a ParFiniteElementSpace), one mode after the other, in the space's own
/// ordering. Hand them with parlops::HypreOptions().elasticity(dim) to Op::boomeramg (ordering
/// byVDIM: hypre's nodal mode needs the unknowns node by node).
inline std::vector<double> rigid_body_modes(::mfem::FiniteElementSpace &fes) {
  const int dim = fes.GetMesh()->SpaceDimension();
  if ((dim != 2 && dim != 3) || fes.GetVDim() != dim)
    throw Error(PARLOPS_ERR_INVALID_ARGUMENT,
                "parlops::mfem::rigid_body_modes: the space has " + std::to_string(fes.GetVDim()) +
                    " components in a space of dimension " + std::to_string(dim) + "; it needs 2 or 3, one per dimension");
  using F = void (*)(const ::mfem::Vector &, ::mfem::Vector &);
  const F rxy = [](const ::mfem::Vector &x, ::mfem::Vector &y) {
    y = 0.0;
    y(0) = x(1);
    y(1) = -x(0);
  };
  const F ryz = [](const ::mfem::Vector &x, ::mfem::Vector &y) {
    y = 0.0;
    y(1) = x(2);
    y(2) = -x(1);
  };
  const F rzx = [](const ::mfem::Vector &x, ::mfem::Vector &y) {
    y = 0.0;
    y(2) = x(0);
    y(0) = -x(2);
  };
  std::vector<F> fs = dim == 2 ? std::vector<F>{rxy} : std::vector<F>{rxy, ryz, rzx};
  std::vector<double> out;
  for (F f : fs) {
    ::mfem::VectorFunctionCoefficient c(dim, f);
#ifdef MFEM_USE_MPI
    if (auto *pf = dynamic_cast<::mfem::ParFiniteElementSpace *>(&fes)) {
      ::mfem::ParGridFunction g(pf);
      g.ProjectCoefficient(c);
      std::unique_ptr<::mfem::HypreParVector> t(g.ParallelAverage());
      out.insert(out.end(), t->GetData(), t->GetData() + t->Size());
      continue;
    }
#endif
    ::mfem::GridFunction g(&fes);
    g.ProjectCoefficient(c);
    ::mfem::Vector t;
    g.GetTrueDofs(t);
    out.insert(out.end(), t.GetData(), t.GetData() + t.Size());
  }
  return out;
}

namespace detail {
/// The components of a byVDIM vector interpolation (columns node * dim + c), one matrix each.
inline std::vector<std::unique_ptr<::mfem::SparseMatrix>> components(const ::mfem::SparseMatrix &P, int nodes,
                                                                     int dim) {
  std::vector<std::unique_ptr<::mfem::SparseMatrix>> out;
  for (int c = 0; c < dim; c++) {
    auto m = std::make_unique<::mfem::SparseMatrix>(P.Height(), nodes);
    for (int i = 0; i < P.Height(); i++)
      for (int k = P.GetI()[i]; k < P.GetI()[i + 1]; k++)
        if (P.GetJ()[k] % dim == c) m->Add(i, P.GetJ()[k] / dim, P.GetData()[k]);
    m->Finalize();
    out.push_back(std::move(m));
  }
  return out;
}

/// What MFEM's HypreAMS and HypreADS build from a space: the discrete gradient from the order-p H1
/// space to the Nedelec space, the vertex coordinates (p = 1) or the Nedelec interpolation's
/// components (p > 1), on one rank (a serial MFEM program).
struct AuxParts {
  std::vector<std::unique_ptr<::mfem::SparseMatrix>> mats;  // kept alive while wrapped
  std::vector<Csr> ops;
  std::vector<double> coords;
};

inline void nodal_parts(const Comm &comm, ::mfem::FiniteElementSpace &vert, ::mfem::FiniteElementSpace &target, int p,
                        int dim, AuxParts &out) {
  ::mfem::Mesh *mesh = vert.GetMesh();
  if (p == 1) return;
  ::mfem::FiniteElementSpace vert_d(mesh, vert.FEColl(), dim, ::mfem::Ordering::byVDIM);
  ::mfem::DiscreteLinearOperator id(&vert_d, &target);
  id.AddDomainInterpolator(new ::mfem::IdentityInterpolator);
  id.Assemble();
  id.Finalize();
  for (auto &m : components(id.SpMat(), vert.GetVSize(), dim)) {
    out.ops.push_back(wrap_sparse(comm, *m));
    out.mats.push_back(std::move(m));
  }
}

inline int order_of(::mfem::FiniteElementSpace &fes) { return fes.GetNE() > 0 ? fes.GetOrder(0) : 1; }
}  // namespace detail

/// hypre's AMS for `A` (a parlops CSR operator of the system on `edge_fes`, e.g. wrap_sparse of the
/// assembled matrix), built from the Nedelec space `edge_fes` as MFEM's HypreAMS(A, edge_fespace)
/// builds it: the discrete gradient from the H1 space of the same order, the vertex coordinates at
/// order 1, the Nedelec interpolation's components at higher orders; MFEM's options unless
/// `options` (made with PARLOPS_HYPRE_AMS) says otherwise. A serial MFEM program, one rank: with
/// parallel MFEM, assemble G (and Pi) with ParDiscreteLinearOperator and pass them, wrapped with
/// parlops::hypre::wrap_parcsr, to Op::ams. [collective]
inline Op ams(const Comm &comm, const Op &A, ::mfem::FiniteElementSpace &edge_fes,
              const HypreOptions *options = nullptr) {
  ::mfem::Mesh *mesh = edge_fes.GetMesh();
  const int dim = mesh->SpaceDimension(), p = detail::order_of(edge_fes);
  ::mfem::H1_FECollection vert_fec(p, dim);
  ::mfem::FiniteElementSpace vert(mesh, &vert_fec);
  ::mfem::DiscreteLinearOperator grad(&vert, &edge_fes);
  grad.AddDomainInterpolator(new ::mfem::GradientInterpolator);
  grad.Assemble();
  grad.Finalize();
  Csr G = wrap_sparse(comm, grad.SpMat());
  detail::AuxParts parts;
  if (p == 1)
    for (int v = 0; v < mesh->GetNV(); v++)
      for (int c = 0; c < dim; c++) parts.coords.push_back(mesh->GetVertex(v)[c]);
  detail::nodal_parts(comm, vert, edge_fes, p, dim, parts);
  std::vector<const Op *> pis;
  for (auto &c : parts.ops) pis.push_back(&c.op);
  return Op::ams(A, G.op, dim, parts.coords, pis, nullptr, nullptr, options);
}

/// hypre's ADS for `A` (the system on the Raviart-Thomas space `face_fes`), built as MFEM's
/// HypreADS(A, face_fespace) builds it: the discrete curl from the Nedelec space and the discrete
/// gradient from the H1 space of the same order, the vertex coordinates at order 1, the
/// Raviart-Thomas and Nedelec interpolations' components at higher orders; MFEM's options unless
/// `options` (made with PARLOPS_HYPRE_ADS) says otherwise. 3D, a serial MFEM program, one rank.
/// [collective]
inline Op ads(const Comm &comm, const Op &A, ::mfem::FiniteElementSpace &face_fes,
              const HypreOptions *options = nullptr) {
  ::mfem::Mesh *mesh = face_fes.GetMesh();
  const int dim = mesh->SpaceDimension(), p = detail::order_of(face_fes);
  ::mfem::ND_FECollection edge_fec(p, dim);
  ::mfem::FiniteElementSpace edge(mesh, &edge_fec);
  ::mfem::H1_FECollection vert_fec(p, dim);
  ::mfem::FiniteElementSpace vert(mesh, &vert_fec);
  ::mfem::DiscreteLinearOperator curl(&edge, &face_fes), grad(&vert, &edge);
  curl.AddDomainInterpolator(new ::mfem::CurlInterpolator);
  grad.AddDomainInterpolator(new ::mfem::GradientInterpolator);
  for (auto *op : {&curl, &grad}) {
    op->Assemble();
    op->Finalize();
  }
  Csr C = wrap_sparse(comm, curl.SpMat()), G = wrap_sparse(comm, grad.SpMat());
  detail::AuxParts parts;
  if (p == 1)
    for (int v = 0; v < mesh->GetNV(); v++)
      for (int c = 0; c < dim; c++) parts.coords.push_back(mesh->GetVertex(v)[c]);
  detail::nodal_parts(comm, vert, face_fes, p, dim, parts);
  detail::nodal_parts(comm, vert, edge, p, dim, parts);
  std::vector<const Op *> pis;
  for (auto &c : parts.ops) pis.push_back(&c.op);
  return Op::ads(A, C.op, G.op, parts.coords, pis, options);
}

/// A parlops Krylov method as an mfem::Solver.
class KrylovSolver : public ::mfem::Solver {
 public:
  explicit KrylovSolver(parlops_method method, MPI_Comm comm = MPI_COMM_SELF)
      : ::mfem::Solver(0, false), method_(method), comm_(comm), solver_(comm_, method) {
    // MFEM's stopping rule: relative to the initial residual (in the norm the method tests)
    solver_.set_convergence_reference(PARLOPS_REFERENCE_INITIAL_RESIDUAL);
    // MFEM's dot products sum in index order: the same order gives the same bits
    solver_.set_sum_order(PARLOPS_SUM_SEQUENTIAL);
  }

  using PrintLevel = ::mfem::IterativeSolver::PrintLevel;

  void SetRelTol(double rtol) { rel_tol_ = rtol; }
  void SetAbsTol(double atol) { abs_tol_ = atol; }
  void SetMaxIter(int max_iter) { max_iter_ = max_iter; }
  /// MFEM's legacy levels: -1 nothing (the default), 0 errors and warnings (no convergence), 1 and
  /// every iteration, 2 and a summary, 3 and the first and last iterations. Lines as MFEM's solver
  /// of the same name prints them, on rank 0 (mfem::out). Every rank must set the same level.
  void SetPrintLevel(int level) {
    PrintLevel p;
    switch (level) {
      case -1: break;
      case 1: p.Errors().Warnings().Iterations(); break;
      case 2: p.Errors().Warnings().Summary(); break;
      case 3: p.Errors().Warnings().FirstAndLast(); break;
      default: p.Errors().Warnings(); break;
    }
    print_ = p;
  }
  /// MFEM's PrintLevel options (errors, warnings, iterations, summary, first_and_last).
  void SetPrintLevel(PrintLevel options) { print_ = options; }
  /// MFEM's controller (SetMonitor is its older name), called as MFEM's solvers call it: Reset at
  /// iteration 0, MonitorResidual and MonitorSolution at every iteration and once more with
  /// final = true; HasConverged() stops the solve as converged. The residual handed over is the true
  /// b - A x of the iterate handed over (one more operator apply per iteration); the iterate is x
  /// as the method holds it (GMRES and FGMRES update x at the end of a restart cycle, so within a
  /// cycle it is the cycle's starting point). Every rank must set one, or none.
  void SetController(::mfem::IterativeSolverController &c) { controller_ = &c; }
  void SetMonitor(::mfem::IterativeSolverMonitor &m) { controller_ = &m; }
  /// GMRES restart length (MFEM's SetKDim).
  void SetKDim(int m) {
    solver_.set_restart(m);
    kdim_ = m;
  }

  /// The parlops communicator of this solver: parlops operators handed to SetPreconditioner must be
  /// made on it (wrap_sparse(solver.ParlopsComm(), A), Op::chebyshev(...)).
  const Comm &ParlopsComm() const { return comm_; }
  /// The parlops solver underneath (for settings MFEM has no name for).
  ::parlops::Solver &solver() { return solver_; }

 protected:
  void richardson_scale(double omega) { solver_.set_richardson_scale(omega); }

 public:

  /// As MFEM's IterativeSolver: the operator is passed on to the preconditioner set before
  /// (prec->SetOperator), so ex1p's order (SetPreconditioner, then SetOperator) works.
  void SetOperator(const ::mfem::Operator &op) override {
    height = op.Height();
    width = op.Width();
    oper_ = &op;
    if (prec_) {
      prec_->SetOperator(op);
      solver_.set_preconditioner(nullptr);
      M_.reset();  // sized again at the next Mult: the preconditioner may have changed shape
    }
    A_.reset();
    b_.reset();
    x_.reset();
#ifdef MFEM_USE_MPI
    if (auto *h = dynamic_cast<const ::mfem::HypreParMatrix *>(&op)) {
      native_ = std::make_unique<hypre::ParCSR>(
          hypre::wrap_parcsr(comm_, static_cast<hypre_ParCSRMatrix *>(const_cast<::mfem::HypreParMatrix &>(*h))));
      solver_.set_operator(native_->op);
      return;
    }
    native_.reset();
#endif
    A_ = std::make_unique<OperatorWrapper>(comm_, op);
    solver_.set_operator(A_->op());
  }

  /// Run-time options (parlops::Options; PETSc's KSPSetFromOptions): the method, tolerances,
  /// printing and -pc_type's preconditioner, built from the operator (call after SetOperator). The
  /// tolerances the options set become this solver's (SetRelTol and the others after it still win).
  /// [collective]
  void SetFromOptions(const ::parlops::Options &o, const std::string &prefix = "") {
    solver_.set_from_options(o, prefix);
    double dtol = 0;
    int64_t max_it = 0;
    solver_.tolerances(rel_tol_, abs_tol_, dtol, max_it);
    max_iter_ = static_cast<int>(max_it);
  }

  /// A parlops operator as the preconditioner, applied as z = M r with no wrapping (Chebyshev, block
  /// Jacobi, BoomerAMG, an inverse, made on ParlopsComm(): Op::chebyshev(wrap_sparse(ParlopsComm(), A).op, 3)). Kept
  /// by reference, as MFEM keeps its preconditioners: it must outlive the solves.
  void SetPreconditioner(const ::parlops::Op &m) {
    prec_ = nullptr;
    native_prec_ = true;
    M_.reset();
    solver_.set_preconditioner(&m);
    if (method_ == PARLOPS_METHOD_CG || method_ == PARLOPS_METHOD_CG_SINGLE_REDUCTION ||
        method_ == PARLOPS_METHOD_CG_PIPELINED)
      solver_.set_norm_type(PARLOPS_NORM_TYPE_NATURAL);
  }

  /// Applied as z = B r, like MFEM's iterative solvers. As MFEM's IterativeSolver, it sets
  /// pr.iterative_mode = false and does not call pr.SetOperator (SetOperator does); the wrapper of
  /// the preconditioner is sized when Mult uses it, so a preconditioner without an operator yet
  /// (MFEM's ex1p order) is fine. CG then tests the natural norm sqrt(r^T B r), as mfem::CGSolver does.
  void SetPreconditioner(::mfem::Solver &pr) {
    prec_ = &pr;
    native_prec_ = false;
    pr.iterative_mode = false;
    solver_.set_preconditioner(nullptr);
    M_.reset();
    if (method_ == PARLOPS_METHOD_CG || method_ == PARLOPS_METHOD_CG_SINGLE_REDUCTION ||
        method_ == PARLOPS_METHOD_CG_PIPELINED)
      solver_.set_norm_type(PARLOPS_NORM_TYPE_NATURAL);
  }

  /// Solve A x = b. With iterative_mode, x is the initial guess. No data is copied: parlops reads b's
  /// and writes x's memory (Read/ReadWrite pointers) for the duration of the call.
  void Mult(const ::mfem::Vector &b, ::mfem::Vector &x) const override {
    // vectors that live on a CUDA device are used there (PARLOPS_MEMORY_CUDA), others on the host
    const bool dev = b.UseDevice() && x.UseDevice() && ::mfem::Device::Allows(::mfem::Backend::CUDA_MASK);
    const parlops_memory mem = dev ? PARLOPS_MEMORY_CUDA : PARLOPS_MEMORY_HOST;
    const ::mfem::real_t *bp = b.Read(dev);
    ::mfem::real_t *xp = iterative_mode ? x.ReadWrite(dev) : x.Write(dev);
    auto &s = const_cast<::parlops::Solver &>(solver_);
    if (prec_ && (!M_ || M_->rows_len() != prec_->Height() || M_->cols_len() != prec_->Width())) {
      M_ = std::make_unique<OperatorWrapper>(comm_, *prec_);
      s.set_preconditioner(&M_->op());
    }
    if (!b_ || mem_ != mem) {
      auto rows = native_or_wrapped_rows();
      auto cols = native_or_wrapped_cols();
      b_ = std::make_unique<Vec>(*rows, PARLOPS_F64, mem);
      x_ = std::make_unique<Vec>(*cols, PARLOPS_F64, mem);
      mem_ = mem;
    }
    b_->place_array(const_cast<::mfem::real_t *>(bp));
    x_->place_array(xp);
    last_b_ = b_->local<double>().data();
    last_x_ = x_->local<double>().data();
    s.set_tolerances(rel_tol_, abs_tol_, 1e300, max_iter_);
    s.set_initial_guess_nonzero(iterative_mode);
    // the monitor: MFEM's per-iteration lines and the controller (set alike on every rank)
    const bool lines = print_.iterations || print_.first_and_last;
    cur_b_ = &b;
    cur_x_ = &x;
    stopped_by_controller_ = false;
    if (lines || controller_)
      s.set_monitor([this, lines](int64_t it, double norm) { return monitor(it, norm, lines); });
    else
      s.set_monitor(std::function<bool(int64_t, double)>());
    try {
      info_ = s.solve(*b_, *x_);
    } catch (...) {
      b_->reset_array();
      x_->reset_array();
      cur_b_ = cur_x_ = nullptr;
      throw;
    }
    b_->reset_array();
    x_->reset_array();
    finish();
    cur_b_ = cur_x_ = nullptr;
  }

  int GetNumIterations() const { return (int)info_.iterations; }
  bool GetConverged() const { return info_.reason > 0 || stopped_by_controller_; }
  double GetFinalNorm() const { return info_.final_residual_norm; }
  /// The residual norm at iteration 0, in the norm the method tests (MFEM's GetInitialNorm).
  double GetInitialNorm() const { return info_.initial_residual_norm; }
  /// GetFinalNorm() / GetInitialNorm() (MFEM's GetFinalRelNorm).
  double GetFinalRelNorm() const { return info_.final_residual_norm / info_.initial_residual_norm; }
  /// The reason and norms of the last solve.
  parlops_solve_info GetInfo() const { return info_; }
  /// The relative tolerance set (parlops only: MFEM keeps it protected).
  double GetRelTol() const { return rel_tol_; }
  /// Is a preconditioner set (an mfem::Solver or a parlops operator)? (parlops only)
  bool HasPreconditioner() const { return prec_ != nullptr || native_prec_; }
  /// The local data pointers parlops used for b and x in the last Mult (they are MFEM's own).
  const void *LastInputPointer() const { return last_b_; }
  const void *LastOutputPointer() const { return last_x_; }

 private:
  const Layout *native_or_wrapped_rows() const {
#ifdef MFEM_USE_MPI
    if (native_) return &native_->rows;
#endif
    if (!A_) throw Error(PARLOPS_ERR_INVALID_ARGUMENT, "parlops::mfem: SetOperator was not called");
    return &A_->rows();
  }
  const Layout *native_or_wrapped_cols() const {
#ifdef MFEM_USE_MPI
    if (native_) return &native_->cols;
#endif
    if (!A_) throw Error(PARLOPS_ERR_INVALID_ARGUMENT, "parlops::mfem: SetOperator was not called");
    return &A_->cols();
  }

  /// MFEM's name of the method in its messages.
  const char *mfem_name() const {
    switch (method_) {
      case PARLOPS_METHOD_GMRES: return "GMRES";
      case PARLOPS_METHOD_FGMRES: return "FGMRES";
      case PARLOPS_METHOD_BICGSTAB: return "BiCGStab";
      case PARLOPS_METHOD_MINRES: return "MINRES";
      case PARLOPS_METHOD_RICHARDSON: return "SLI";
      default: return "PCG";
    }
  }
  /// One iteration line as MFEM's solver of this method prints it.
  std::string line(int64_t it, double norm) const {
    std::ostringstream o;
    const int i = static_cast<int>(it);
    switch (method_) {
      case PARLOPS_METHOD_GMRES:
      case PARLOPS_METHOD_FGMRES: {
        const int m = kdim_ > 0 ? kdim_ : 1;
        o << "   Pass : " << std::setw(2) << (i > 0 ? (i - 1) / m + 1 : 1) << "   Iteration : " << std::setw(3) << i
          << (method_ == PARLOPS_METHOD_GMRES ? "  ||B r|| = " : "  || r || = ") << norm;
        break;
      }
      case PARLOPS_METHOD_BICGSTAB: o << "   Iteration : " << std::setw(3) << i << "   ||r|| = " << norm; break;
      case PARLOPS_METHOD_MINRES: o << "MINRES: iteration " << std::setw(3) << i << ": ||r||_B = " << norm; break;
      case PARLOPS_METHOD_RICHARDSON: o << "   Iteration : " << std::setw(3) << i << "  ||Br|| = " << norm; break;
      default: o << "   Iteration : " << std::setw(3) << i << "  (B r, r) = " << norm * norm; break;  // MFEM prints (B r, r)
    }
    return o.str();
  }
  bool rank0() const { return comm_.rank() == 0; }
  /// b - A x for the controller, through the MFEM operator.
  const ::mfem::Vector &residual() const {
    r_.SetSize(cur_b_->Size());
    r_.UseDevice(cur_x_->UseDevice());
    oper_->Mult(*cur_x_, r_);
    r_.Neg();
    r_ += *cur_b_;
    return r_;
  }
  bool is(parlops_method m) const { return method_ == m; }
  /// Does `norm` meet MFEM's stopping rule (relative to the initial norm)?
  bool meets(double norm) const { return norm <= std::max(rel_tol_ * norm0_, abs_tol_); }
  /// MFEM's lines at iteration `it` (printed where MFEM's solver of this method prints them: CG at
  /// every iteration; GMRES, FGMRES, MINRES, BiCGSTAB and SLI at those that do not stop, the last
  /// one at the end).
  void print_iteration(int64_t it, double norm) const {
    if (it == 0) {
      norm0_ = norm;
      ::mfem::out << line(it, norm) << (print_.first_and_last ? " ...\n" : "\n");
      return;
    }
    if (!print_.iterations) return;
    const bool cg = !is(PARLOPS_METHOD_GMRES) && !is(PARLOPS_METHOD_FGMRES) && !is(PARLOPS_METHOD_MINRES) &&
                    !is(PARLOPS_METHOD_BICGSTAB) && !is(PARLOPS_METHOD_RICHARDSON);
    if (!cg && meets(norm)) return;
    ::mfem::out << line(it, norm) << '\n';
    if ((is(PARLOPS_METHOD_GMRES) || is(PARLOPS_METHOD_FGMRES)) && kdim_ > 0 && it % kdim_ == 0 && it < max_iter_)
      ::mfem::out << "Restarting..." << '\n';
  }
  bool monitor(int64_t it, double norm, bool lines) const {
    if (lines && rank0()) print_iteration(it, norm);
    if (!controller_) return false;
    // MFEM's CG hands its controller (B r, r), the others the norm
    const bool cg = is(PARLOPS_METHOD_CG) || is(PARLOPS_METHOD_CG_SINGLE_REDUCTION) || is(PARLOPS_METHOD_CG_PIPELINED);
    const double v = cg ? norm * norm : norm;
    if (it == 0) controller_->Reset();
    controller_->MonitorResidual(static_cast<int>(it), v, residual(), false);
    controller_->MonitorSolution(static_cast<int>(it), v, *cur_x_, false);
    stopped_by_controller_ = controller_->HasConverged();
    return stopped_by_controller_;
  }
  /// MFEM's closing lines, and the controller's final call.
  void finish() const {
    const bool conv = GetConverged();
    const bool cg = is(PARLOPS_METHOD_CG) || is(PARLOPS_METHOD_CG_SINGLE_REDUCTION) || is(PARLOPS_METHOD_CG_PIPELINED);
    const double fin = info_.final_residual_norm, ini = info_.initial_residual_norm;
    if (rank0() && (print_.iterations || print_.first_and_last || print_.summary || print_.warnings)) {
      const bool last = cg ? (print_.first_and_last && !print_.iterations)
                           : (is(PARLOPS_METHOD_MINRES) ? (print_.iterations || print_.first_and_last)
                                                        : ((print_.iterations && conv) || print_.first_and_last));
      if (last && info_.iterations > 0) ::mfem::out << line(info_.iterations, fin) << '\n';
      if (print_.summary || (print_.warnings && !conv)) {
        ::mfem::out << mfem_name() << ": Number of iterations: ";
        if (is(PARLOPS_METHOD_MINRES)) ::mfem::out << std::setw(3);
        ::mfem::out << info_.iterations << '\n';
      }
      if (cg && (print_.summary || print_.iterations || print_.first_and_last) && info_.iterations > 0)
        ::mfem::out << "Average reduction factor = " << std::pow(fin * fin / (ini * ini), 0.5 / info_.iterations) << '\n';
      if (print_.warnings && !conv) ::mfem::out << mfem_name() << ": No convergence!\n";
    }
    if (controller_) {
      const int it = static_cast<int>(info_.iterations);
      const double v = cg ? fin * fin : fin;
      controller_->MonitorResidual(it, v, residual(), true);
      controller_->MonitorSolution(it, v, *cur_x_, true);
      if (controller_->HasConverged()) stopped_by_controller_ = true;
    }
  }

  parlops_method method_;
  Comm comm_;
  ::parlops::Solver solver_;
  std::unique_ptr<OperatorWrapper> A_;
  mutable std::unique_ptr<OperatorWrapper> M_;
  const ::mfem::Operator *oper_ = nullptr;
  ::mfem::Solver *prec_ = nullptr;
#ifdef MFEM_USE_MPI
  std::unique_ptr<hypre::ParCSR> native_;
#endif
  mutable std::unique_ptr<Vec> b_, x_;
  mutable parlops_memory mem_ = PARLOPS_MEMORY_HOST;
  mutable parlops_solve_info info_{};
  mutable const void *last_b_ = nullptr, *last_x_ = nullptr;
  double rel_tol_ = 0.0, abs_tol_ = 0.0;
  int max_iter_ = 10, kdim_ = 30;
  PrintLevel print_;
  ::mfem::IterativeSolverController *controller_ = nullptr;
  mutable bool stopped_by_controller_ = false;
  mutable const ::mfem::Vector *cur_b_ = nullptr;
  mutable ::mfem::Vector *cur_x_ = nullptr;
  mutable ::mfem::Vector r_;
  mutable double norm0_ = 0.0;
  bool native_prec_ = false;  // a parlops operator is the preconditioner
};

/// mfem::CGSolver's replacement (as MFEM's, the controller gets (B r, r), and print level 1 prints it).
class CGSolver : public KrylovSolver {
 public:
  explicit CGSolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_CG, comm) {}
};
/// mfem::GMRESSolver's replacement (restart length: SetKDim, 50 by default as in MFEM): left-
/// preconditioned with modified Gram-Schmidt like MFEM's (PARLOPS_PC_LEFT, PARLOPS_ORTHOG_MODIFIED),
/// testing ||B (b - A x)||. Nothing differs but the monitor's iterate within a cycle (SetMonitor).
class GMRESSolver : public KrylovSolver {
 public:
  explicit GMRESSolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_GMRES, comm) {
    SetKDim(50);
    solver().set_pc_side(PARLOPS_PC_LEFT);
    solver().set_orthogonalization(PARLOPS_ORTHOG_MODIFIED);
  }
};
/// mfem::FGMRESSolver's replacement (flexible GMRES, right-preconditioned, modified Gram-Schmidt, as
/// MFEM's; SetKDim, 50 by default). Nothing differs but the monitor's iterate within a cycle (SetMonitor).
class FGMRESSolver : public KrylovSolver {
 public:
  explicit FGMRESSolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_FGMRES, comm) {
    SetKDim(50);
    solver().set_orthogonalization(PARLOPS_ORTHOG_MODIFIED);
  }
};
/// mfem::BiCGSTABSolver's replacement. Differs in print level 1: MFEM's extra "||s||" lines (when
/// it stops half-way through an iteration) are not printed.
class BiCGStabSolver : public KrylovSolver {
 public:
  explicit BiCGStabSolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_BICGSTAB, comm) {}
};
/// MFEM's spelling.
using BiCGSTABSolver = BiCGStabSolver;
/// mfem::SLISolver's replacement: stationary (Richardson) iteration x <- x + B (b - A x), testing
/// ||B r|| (||r|| without a preconditioner) as MFEM does. Differences: parlops stops at
/// ||B r|| <= rtol ||B r_0|| where MFEM stops at <; with rel_tol = 0 and a preconditioner MFEM runs
/// max_iter iterations and calls that converged, parlops runs them and reports GetConverged() false
/// unless the absolute tolerance was met. SetScale (parlops only) damps the step.
class SLISolver : public KrylovSolver {
 public:
  explicit SLISolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_RICHARDSON, comm) {}
  /// x <- x + omega B (b - A x) (default 1, MFEM's iteration).
  void SetScale(double omega) { richardson_scale(omega); }
};
/// mfem::MINRESSolver's replacement.
class MINRESSolver : public KrylovSolver {
 public:
  explicit MINRESSolver(MPI_Comm comm = MPI_COMM_SELF) : KrylovSolver(PARLOPS_METHOD_MINRES, comm) {}
};

}  // namespace mfem
}  // namespace parlops

#endif  // PARLOPS_MFEM_HPP
