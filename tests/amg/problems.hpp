// Shared by tests/amg/amg_hypre.cpp (the test) and benches/precond.cpp (the benchmark): the
// problems (2D/3D Poisson by hand, a 3D elasticity beam assembled by MFEM), this rank's rows of them
// with an uneven split, and hypre's own PCG + BoomerAMG on the same rows.
#ifndef PARLOPS_AMG_PROBLEMS_HPP
#define PARLOPS_AMG_PROBLEMS_HPP
#include <mfem.hpp>
#include <parlops.hpp>
#include <parlops/mfem.hpp>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

static int rank_ = 0, size_ = 1;

// This rank's rows [lo, hi) of n rows in blocks of `unit` (whole nodes), uneven: the first rank has
// fewer, the last more.
static void split(long n, long unit, long &lo, long &hi) {
  long nodes = n / unit, base = nodes / size_, rem = nodes % size_;
  std::vector<long> len(size_);
  for (int r = 0; r < size_; r++) len[r] = base + (r < rem ? 1 : 0);
  if (size_ > 1 && len[0] > 2) {
    len[0] -= 2;
    len[size_ - 1] += 2;
  }
  lo = 0;
  for (int r = 0; r < rank_; r++) lo += len[r];
  hi = (lo + len[rank_]) * unit;
  lo *= unit;
}

// A system: this rank's rows in CSR with global columns.
struct Rows {
  long n = 0, lo = 0, hi = 0;
  std::vector<long> ptr{0}, col;
  std::vector<double> val;
};

[[maybe_unused]] static Rows poisson(int dim, long m) {
  Rows r;
  r.n = dim == 2 ? m * m : m * m * m;
  split(r.n, 1, r.lo, r.hi);
  for (long g = r.lo; g < r.hi; g++) {
    long x = g % m, y = (g / m) % m, z = g / (m * m);
    std::vector<std::pair<long, double>> e;
    e.push_back({g, 2.0 * dim});
    if (x > 0) e.push_back({g - 1, -1});
    if (x < m - 1) e.push_back({g + 1, -1});
    if (y > 0) e.push_back({g - m, -1});
    if (y < m - 1) e.push_back({g + m, -1});
    if (dim == 3 && z > 0) e.push_back({g - m * m, -1});
    if (dim == 3 && z < m - 1) e.push_back({g + m * m, -1});
    std::sort(e.begin(), e.end());
    for (auto &[c, v] : e) {
      r.col.push_back(c);
      r.val.push_back(v);
    }
    r.ptr.push_back((long)r.col.size());
  }
  return r;
}

// This rank's rows of an assembled MFEM system (an uneven split in blocks of `unit` rows), columns
// sorted in each row, and its part of the right-hand side B.
[[maybe_unused]] static Rows local_rows(const mfem::SparseMatrix &A, const mfem::Vector &B, long unit,
                                        mfem::Vector &rhs) {
  Rows r;
  r.n = A.Height();
  split(r.n, unit, r.lo, r.hi);
  for (long i = r.lo; i < r.hi; i++) {
    std::vector<std::pair<long, double>> e;
    for (int k = A.GetI()[i]; k < A.GetI()[i + 1]; k++) e.push_back({A.GetJ()[k], A.GetData()[k]});
    std::sort(e.begin(), e.end());
    for (auto &[c, v] : e) {
      r.col.push_back(c);
      r.val.push_back(v);
    }
    r.ptr.push_back((long)r.col.size());
  }
  rhs.SetSize((int)(r.hi - r.lo));
  for (long i = r.lo; i < r.hi; i++) rhs((int)(i - r.lo)) = B((int)i);
  return r;
}

// Linear elasticity on `mesh` (Q1, byVDIM), fixed on the boundary attribute `fixed_attr` (by default
// 5, x = 0, of MakeCartesian3D), pulled along -`pull_dir` on `pulled_attr` (3, x = L; z): this rank's
// rows; when `coords` and `rbms` are given, this
// rank's nodes' coordinates (3 per node) and the rigid-body rotations on this rank's rows as MFEM's
// HypreBoomerAMG::RecomputeRBMs makes them (grid functions of the coefficients (y, -x, 0),
// (0, z, -y), (-z, 0, x), one after the other).
[[maybe_unused]] static Rows elasticity_on(mfem::Mesh &mesh, mfem::Coefficient &lambda, mfem::Coefficient &mu,
                                           mfem::Vector &rhs, std::vector<double> *coords, std::vector<double> *rbms,
                                           int fixed_attr = 5, int pulled_attr = 3, int pull_dir = 2,
                                           std::vector<double> *adapter_rbms = nullptr) {
  mfem::H1_FECollection fec(1, 3);
  mfem::FiniteElementSpace fes(&mesh, &fec, 3, mfem::Ordering::byVDIM);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 0;
  ess_bdr[fixed_attr - 1] = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::VectorArrayCoefficient f(3);
  mfem::Vector pull(mesh.bdr_attributes.Max());
  pull = 0.0;
  pull(pulled_attr - 1) = -1e-2;
  for (int c = 0; c < 3; c++)
    f.Set(c, c == pull_dir ? (mfem::Coefficient *)new mfem::PWConstCoefficient(pull) : new mfem::ConstantCoefficient(0.0));
  mfem::LinearForm b(&fes);
  b.AddBoundaryIntegrator(new mfem::VectorBoundaryLFIntegrator(f));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x = 0.0;
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::ElasticityIntegrator(lambda, mu));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector X, B;
  a.FormLinearSystem(ess, x, b, A, X, B);
  Rows r = local_rows(A, B, 3, rhs);
  if (coords) {
    coords->clear();
    for (long node = r.lo / 3; node < r.hi / 3; node++)
      for (int c = 0; c < 3; c++) coords->push_back(mesh.GetVertex((int)node)[c]);
  }
  if (adapter_rbms) {  // the same through the MFEM adapter, this rank's rows of each mode
    auto all = parlops::mfem::rigid_body_modes(fes);
    adapter_rbms->clear();
    const long n = fes.GetTrueVSize();
    for (size_t k = 0; k * (size_t)n < all.size(); k++)
      adapter_rbms->insert(adapter_rbms->end(), all.begin() + (long)k * n + r.lo, all.begin() + (long)k * n + r.hi);
  }
  if (rbms) {
    rbms->clear();
    using F = void (*)(const mfem::Vector &, mfem::Vector &);
    F fs[3] = {[](const mfem::Vector &p, mfem::Vector &v) { v = 0.0; v(0) = p(1); v(1) = -p(0); },
               [](const mfem::Vector &p, mfem::Vector &v) { v = 0.0; v(1) = p(2); v(2) = -p(1); },
               [](const mfem::Vector &p, mfem::Vector &v) { v = 0.0; v(2) = p(0); v(0) = -p(2); }};
    for (F f : fs) {
      mfem::VectorFunctionCoefficient c(3, f);
      mfem::GridFunction g(&fes);
      g.ProjectCoefficient(c);
      for (long i = r.lo; i < r.hi; i++) rbms->push_back(g((int)i));
    }
  }
  return r;
}

// A 3D cantilever (MFEM's example 2 setting, one material), 4 nx x nx x nx hexahedra.
[[maybe_unused]] static Rows elasticity(int nx, mfem::Vector &rhs, std::vector<double> *coords = nullptr,
                                        std::vector<double> *rbms = nullptr) {
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(4 * nx, nx, nx, mfem::Element::HEXAHEDRON, 4.0, 1.0, 1.0);
  mfem::ConstantCoefficient lambda(1.0), mu(1.0);
  return elasticity_on(mesh, lambda, mu, rhs, coords, rbms);
}

// MFEM's example 2 beam (beam-hex.mesh: 8 x 1 x 1 hexahedra, the half nearer the fixed end of
// material 1, 50 times stiffer (lambda and mu) than material 2, fixed at one end and pulled across
// at the other), refined `refinements` times. Its long axis is z here (the slowest-varying index of
// MakeCartesian3D's numbering), so that the uneven row split cuts the beam along its length, as a
// graph partitioner (MFEM's ParMesh) does, not into slabs along it.
[[maybe_unused]] static Rows ex2_beam(int refinements, mfem::Vector &rhs, std::vector<double> *coords = nullptr,
                                      std::vector<double> *rbms = nullptr, std::vector<double> *adapter_rbms = nullptr) {
  const int n = 1 << refinements;
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(n, n, 8 * n, mfem::Element::HEXAHEDRON, 1.0, 1.0, 8.0);
  for (int e = 0; e < mesh.GetNE(); e++) {
    mfem::Vector c;
    mesh.GetElementCenter(e, c);
    mesh.SetAttribute(e, c(2) < 4.0 ? 1 : 2);
  }
  mesh.SetAttributes();
  mfem::Vector lv(2), mv(2);
  lv(1) = 1.0;
  lv(0) = 50.0 * lv(1);
  mv(1) = 1.0;
  mv(0) = 50.0 * mv(1);
  mfem::PWConstCoefficient lambda(lv), mu(mv);
  // fixed at z = 0 (attribute 1), pulled along -x at z = 8 (attribute 6)
  return elasticity_on(mesh, lambda, mu, rhs, coords, rbms, 1, 6, 0, adapter_rbms);
}

// Every option of a hypre options table and the values to try (each end of its range, each listed
// value), read from parlops_hypre_options_describe's text, so that a new option enters by itself:
// (name, is real, values).
[[maybe_unused]] static std::vector<std::tuple<std::string, bool, std::vector<double>>> option_extremes(
    const std::string &table) {
  std::vector<std::tuple<std::string, bool, std::vector<double>>> out;
  size_t at = 0;
  while (true) {
    size_t nl = table.find('\n', at);
    if (nl == std::string::npos) break;
    std::string line = table.substr(at, nl - at);
    at = nl + 1;
    size_t paren = line.find(" (");
    if (line.rfind("set:", 0) == 0 || paren == std::string::npos) continue;
    std::string name = line.substr(0, paren), spec = line.substr(paren + 2);
    std::vector<double> vals;
    bool real = spec.rfind("real", 0) == 0;
    if (spec.find("one of [") != std::string::npos) {
      std::string list = spec.substr(spec.find('[') + 1, spec.find(']') - spec.find('[') - 1);
      for (size_t p = 0; p < list.size();) {
        size_t c = list.find(',', p);
        vals.push_back(std::atof(list.substr(p, c == std::string::npos ? std::string::npos : c - p).c_str()));
        if (c == std::string::npos) break;
        p = c + 1;
      }
    } else if (real) {
      size_t a = spec.find_first_of("[(");
      bool open = spec[a] == '(';
      double lo = std::atof(spec.c_str() + a + 1), hi = std::atof(spec.c_str() + spec.find(", ", a) + 2);
      vals = {open ? lo + 1e-3 : lo, hi};
    } else {
      size_t a = spec.find(", ") + 2, d = spec.find("..=");
      vals = {std::atof(spec.substr(a, d - a).c_str()), std::atof(spec.c_str() + d + 3)};
    }
    out.emplace_back(name, real, vals);
  }
  return out;
}

struct Outcome {
  int iterations = -1;
  std::vector<double> x;
  double setup_s = 0, solve_s = 0;
};

// hypre's PCG with BoomerAMG, tol on ||r||_2 / ||b||_2, the AMG's options set by `configure` (hypre's
// own calls) and fitted to `nvec` near-null-space vectors (this rank's rows of each, one after the
// other) when given.
[[maybe_unused]] static Outcome hypre_pcg_with(const Rows &r, const std::vector<double> &b,
                                               const std::function<void(HYPRE_Solver)> &configure, double tol,
                                               int nvec = 0, const double *vecs = nullptr) {
  // the rows in hypre's index types (the user's data, not timed)
  const long nl = r.hi - r.lo;
  std::vector<HYPRE_Int> ncols(nl);
  std::vector<HYPRE_BigInt> rowidx(nl), cols(r.col.begin(), r.col.end());
  for (long i = 0; i < nl; i++) {
    ncols[i] = (HYPRE_Int)(r.ptr[i + 1] - r.ptr[i]);
    rowidx[i] = (HYPRE_BigInt)(r.lo + i);
  }
  // timed from the IJ matrix's creation: a hypre user assembles it from the rows, as parlops hands
  // them to hypre in its set-up (one SetValues call for all rows, hypre's fastest way)
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, (HYPRE_BigInt)r.lo, (HYPRE_BigInt)r.hi - 1, (HYPRE_BigInt)r.lo,
                       (HYPRE_BigInt)r.hi - 1, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  HYPRE_IJMatrixSetValues(ij, (HYPRE_Int)nl, ncols.data(), rowidx.data(), cols.data(), r.val.data());
  HYPRE_IJMatrixAssemble(ij);
  HYPRE_ParCSRMatrix A;
  HYPRE_IJMatrixGetObject(ij, (void **)&A);
  HYPRE_IJVector ib, ix;
  HYPRE_ParVector pb, px;
  std::vector<HYPRE_BigInt> idx;
  for (long i = r.lo; i < r.hi; i++) idx.push_back((HYPRE_BigInt)i);
  std::vector<double> zero(b.size(), 0.0);
  for (auto [v, p, vals] : {std::tuple{&ib, &pb, b.data()}, std::tuple{&ix, &px, (const double *)zero.data()}}) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, (HYPRE_BigInt)r.lo, (HYPRE_BigInt)r.hi - 1, v);
    HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*v);
    HYPRE_IJVectorSetValues(*v, (HYPRE_Int)idx.size(), idx.data(), vals);
    HYPRE_IJVectorAssemble(*v);
    HYPRE_IJVectorGetObject(*v, (void **)p);
  }
  std::vector<HYPRE_IJVector> iv(nvec);
  std::vector<HYPRE_ParVector> pv(nvec);
  for (int k = 0; k < nvec; k++) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, (HYPRE_BigInt)r.lo, (HYPRE_BigInt)r.hi - 1, &iv[k]);
    HYPRE_IJVectorSetObjectType(iv[k], HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(iv[k]);
    HYPRE_IJVectorSetValues(iv[k], (HYPRE_Int)idx.size(), idx.data(), vecs + (size_t)k * idx.size());
    HYPRE_IJVectorAssemble(iv[k]);
    HYPRE_IJVectorGetObject(iv[k], (void **)&pv[k]);
  }
  HYPRE_Solver amg, pcg;
  HYPRE_BoomerAMGCreate(&amg);
  configure(amg);
  if (nvec) HYPRE_BoomerAMGSetInterpVectors(amg, nvec, pv.data());
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, tol);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetMaxIter(pcg, 1000);
  HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  HYPRE_ParCSRPCGSetup(pcg, A, pb, px);
  double t1 = MPI_Wtime();
  HYPRE_ParCSRPCGSolve(pcg, A, pb, px);
  double t2 = MPI_Wtime();
  HYPRE_Int its = 0;
  HYPRE_PCGGetNumIterations(pcg, &its);
  Outcome out;
  out.iterations = (int)its;
  out.setup_s = t1 - t0;
  out.solve_s = t2 - t1;
  out.x.resize(b.size());
  HYPRE_IJVectorGetValues(ix, (HYPRE_Int)idx.size(), idx.data(), out.x.data());
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJVectorDestroy(ib);
  HYPRE_IJVectorDestroy(ix);
  for (auto v : iv) HYPRE_IJVectorDestroy(v);
  HYPRE_IJMatrixDestroy(ij);
  return out;
}

// hypre's PCG with BoomerAMG set as a parlops_amg_options struct says (hypre's calls).
[[maybe_unused]] static Outcome hypre_pcg(const Rows &r, const std::vector<double> &b, const parlops_amg_options &o,
                                          double tol) {
  const long nl = r.hi - r.lo;
  return hypre_pcg_with(
      r, b,
      [&](HYPRE_Solver amg) {
        if (o.strong_threshold >= 0) HYPRE_BoomerAMGSetStrongThreshold(amg, o.strong_threshold);
        if (o.coarsen_type >= 0) HYPRE_BoomerAMGSetCoarsenType(amg, o.coarsen_type);
        if (o.interp_type >= 0) HYPRE_BoomerAMGSetInterpType(amg, o.interp_type);
        if (o.relax_type >= 0) HYPRE_BoomerAMGSetRelaxType(amg, o.relax_type);
        if (o.num_sweeps >= 0) HYPRE_BoomerAMGSetNumSweeps(amg, o.num_sweeps);
        if (o.max_levels >= 0) HYPRE_BoomerAMGSetMaxLevels(amg, o.max_levels);
        if (o.agg_num_levels >= 0) HYPRE_BoomerAMGSetAggNumLevels(amg, o.agg_num_levels);
        if (o.num_functions > 1) {
          HYPRE_BoomerAMGSetNumFunctions(amg, o.num_functions);
          HYPRE_Int *dof = (HYPRE_Int *)malloc(sizeof(HYPRE_Int) * (size_t)nl);  // hypre frees it
          for (long i = 0; i < nl; i++) dof[i] = (HYPRE_Int)(i % o.num_functions);
          HYPRE_BoomerAMGSetDofFunc(amg, dof);
        }
      },
      tol);
}

#endif  // PARLOPS_AMG_PROBLEMS_HPP
