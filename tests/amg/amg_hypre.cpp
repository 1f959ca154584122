// BoomerAMG through parlops (parlops_op_create_boomeramg) against hypre's own PCG + BoomerAMG with
// the same options and the same stopping rule (||r||_2 <= tol ||b||_2), at any rank count with
// uneven row splits:
//  - 2D Poisson (5-point) and 3D Poisson (7-point) on three meshes, each refined twice: iteration
//    counts equal hypre's within one, solutions within 1e-8 relative, and the count grows by at most
//    30% over the two refinements;
//  - 3D linear elasticity (a cantilever assembled by MFEM from the wheel, order 1, byVDIM): the same
//    against hypre with scalar AMG and with systems AMG (num_functions = 3), and systems AMG takes
//    fewer iterations than scalar AMG;
//  - every converged solve's true residual recomputed;
//  - bad input: a non-CSR operator, a non-f64 one, num_functions that does not divide a rank's
//    rows, options differing between ranks.
// Run: mpiexec -n P ./amg_hypre [scale]
#include <mfem.hpp>
#include <parlops.hpp>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

static int passed = 0, failed = 0, rank_ = 0, size_ = 1;

static void expect(bool ok, const std::string &what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what.c_str());
  }
}

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

static Rows poisson(int dim, long m) {
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

// A 3D cantilever (MFEM's example 2 setting: fixed at x = 0, pulled down at x = L), Q1, byVDIM.
static Rows elasticity(int nx, mfem::Vector &rhs) {
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(4 * nx, nx, nx, mfem::Element::HEXAHEDRON, 4.0, 1.0, 1.0);
  mfem::H1_FECollection fec(1, 3);
  mfem::FiniteElementSpace fes(&mesh, &fec, 3, mfem::Ordering::byVDIM);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 0;
  ess_bdr[4] = 1;  // x = 0 (MakeCartesian3D's boundary attribute 5)
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::VectorArrayCoefficient f(3);
  mfem::Vector pull(mesh.bdr_attributes.Max());
  pull = 0.0;
  pull(2) = -1e-2;  // x = L
  f.Set(2, new mfem::PWConstCoefficient(pull));
  f.Set(0, new mfem::ConstantCoefficient(0.0));
  f.Set(1, new mfem::ConstantCoefficient(0.0));
  mfem::LinearForm b(&fes);
  b.AddBoundaryIntegrator(new mfem::VectorBoundaryLFIntegrator(f));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x = 0.0;
  mfem::ConstantCoefficient lambda(1.0), mu(1.0);
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::ElasticityIntegrator(lambda, mu));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector X, B;
  a.FormLinearSystem(ess, x, b, A, X, B);
  Rows r;
  r.n = A.Height();
  split(r.n, 3, r.lo, r.hi);
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

struct Outcome {
  int iterations = -1;
  std::vector<double> x;
};

// hypre's PCG with BoomerAMG, tol on ||r||_2 / ||b||_2.
static Outcome hypre_pcg(const Rows &r, const std::vector<double> &b, const parlops_amg_options &o, double tol) {
  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, (HYPRE_BigInt)r.lo, (HYPRE_BigInt)r.hi - 1, (HYPRE_BigInt)r.lo,
                       (HYPRE_BigInt)r.hi - 1, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  for (long i = r.lo; i < r.hi; i++) {
    HYPRE_Int nc = (HYPRE_Int)(r.ptr[i - r.lo + 1] - r.ptr[i - r.lo]);
    HYPRE_BigInt row = (HYPRE_BigInt)i;
    std::vector<HYPRE_BigInt> cols(r.col.begin() + r.ptr[i - r.lo], r.col.begin() + r.ptr[i - r.lo + 1]);
    HYPRE_IJMatrixSetValues(ij, 1, &nc, &row, cols.data(), r.val.data() + r.ptr[i - r.lo]);
  }
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
  HYPRE_Solver amg, pcg;
  HYPRE_BoomerAMGCreate(&amg);
  if (o.strong_threshold >= 0) HYPRE_BoomerAMGSetStrongThreshold(amg, o.strong_threshold);
  if (o.coarsen_type >= 0) HYPRE_BoomerAMGSetCoarsenType(amg, o.coarsen_type);
  if (o.interp_type >= 0) HYPRE_BoomerAMGSetInterpType(amg, o.interp_type);
  if (o.relax_type >= 0) HYPRE_BoomerAMGSetRelaxType(amg, o.relax_type);
  if (o.num_sweeps >= 0) HYPRE_BoomerAMGSetNumSweeps(amg, o.num_sweeps);
  if (o.max_levels >= 0) HYPRE_BoomerAMGSetMaxLevels(amg, o.max_levels);
  if (o.agg_num_levels >= 0) HYPRE_BoomerAMGSetAggNumLevels(amg, o.agg_num_levels);
  if (o.num_functions > 1) {
    HYPRE_BoomerAMGSetNumFunctions(amg, o.num_functions);
    HYPRE_Int *dof = (HYPRE_Int *)malloc(sizeof(HYPRE_Int) * idx.size());  // hypre frees it
    for (size_t i = 0; i < idx.size(); i++) dof[i] = (HYPRE_Int)(i % (size_t)o.num_functions);
    HYPRE_BoomerAMGSetDofFunc(amg, dof);
  }
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, tol);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetMaxIter(pcg, 1000);
  HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  HYPRE_ParCSRPCGSetup(pcg, A, pb, px);
  HYPRE_ParCSRPCGSolve(pcg, A, pb, px);
  HYPRE_Int its = 0;
  HYPRE_PCGGetNumIterations(pcg, &its);
  Outcome out;
  out.iterations = (int)its;
  out.x.resize(b.size());
  HYPRE_IJVectorGetValues(ix, (HYPRE_Int)idx.size(), idx.data(), out.x.data());
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJVectorDestroy(ib);
  HYPRE_IJVectorDestroy(ix);
  HYPRE_IJMatrixDestroy(ij);
  return out;
}

static double norm(const std::vector<double> &v) {
  double s = 0;
  for (double a : v) s += a * a;
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(s);
}

// parlops' CG with BoomerAMG against hypre's PCG on the same rows and options.
static int compare(const std::string &name, const parlops::Comm &comm, const Rows &r, const std::vector<double> &b,
                   const parlops_amg_options &o, double tol) {
  parlops::Layout rows(comm, r.n, r.hi - r.lo);
  auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
  auto M = parlops::Op::boomeramg(A, o);
  parlops::Solver cg(comm, PARLOPS_METHOD_CG);
  cg.set_operator(A);
  cg.set_preconditioner(&M);
  cg.set_tolerances(tol, 0.0, 1e5, 1000);
  std::vector<double> x(b.size(), 0.0), bb(b);
  auto bv = parlops::Vec::wrap(rows, bb.data());
  auto xv = parlops::Vec::wrap(rows, x.data());
  auto info = cg.solve(bv, xv);
  // the true residual
  std::vector<double> ax(b.size());
  auto axv = parlops::Vec::wrap(rows, ax.data());
  A.apply(xv, axv);
  for (size_t i = 0; i < ax.size(); i++) ax[i] = b[i] - ax[i];
  double rn = norm(ax), bn = norm(b);
  Outcome h = hypre_pcg(r, b, o, tol);
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); i++) d[i] = x[i] - h.x[i];
  double rel = norm(d) / norm(h.x);
  if (rank_ == 0)
    std::printf("%-46s %8ld rows: parlops %3d, hypre %3d iterations; |x - x_hypre|/|x| %.1e; ||b-Ax||/||b|| %.1e\n",
                name.c_str(), r.n, (int)info.iterations, h.iterations, rel, rn / bn);
  expect(info.reason > 0 && rn <= 1.0001 * tol * bn, name + ": converged, the true residual meets the rule");
  expect(std::abs((int)info.iterations - h.iterations) <= 1, name + ": iterations equal hypre's within one");
  expect(rel <= 1e-8, name + ": solution within 1e-8 of hypre's");
  return (int)info.iterations;
}

int main(int argc, char **argv) {
  parlops::Environment env(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int scale = argc > 1 ? std::atoi(argv[1]) : 1;
  {
    parlops::Comm comm(MPI_COMM_WORLD);
    {
      size_t need = 0;
      parlops_config_report(nullptr, nullptr, 0, &need);
      std::string rep(need + 1, '\0');
      parlops::check(parlops_config_report(nullptr, rep.data(), rep.size(), &need));
      size_t at = rep.find("  hypre");
      std::string line = at == std::string::npos ? "" : rep.substr(at, rep.find('\n', at) - at);
      if (rank_ == 0) std::printf("%s\n", line.c_str());
      expect(line.find("hypre 2.") != std::string::npos, "the configuration report names the hypre found");
    }
    const double tol = 1e-10;
    auto defaults = parlops::Op::amg_options();
    for (int dim : {2, 3}) {
      std::vector<int> its;
      for (int k = 0; k < 3; k++) {
        long m = (dim == 2 ? 24 : 8) * scale << k;
        Rows r = poisson(dim, m);
        std::vector<double> b(r.hi - r.lo);
        for (long i = r.lo; i < r.hi; i++) b[i - r.lo] = 1.0 + std::sin(0.1 * (double)i);
        auto o = defaults;
        if (dim == 3) o.strong_threshold = 0.5;
        its.push_back(compare(std::to_string(dim) + "D Poisson " + std::to_string(m) + "^" + std::to_string(dim), comm, r, b,
                              o, tol));
      }
      if (rank_ == 0) std::printf("%dD Poisson: iterations %d -> %d -> %d over two refinements\n", dim, its[0], its[1], its[2]);
      expect(its[2] <= 1.3 * its[0], std::to_string(dim) + "D Poisson: two refinements grow the count by at most 30%");
    }
    {
      mfem::Vector rhs;
      Rows r = elasticity(4 * scale, rhs);
      std::vector<double> b(rhs.GetData(), rhs.GetData() + rhs.Size());
      auto scalar = defaults;
      int s = compare("3D elasticity, scalar AMG", comm, r, b, scalar, tol);
      auto sys = defaults;
      sys.num_functions = 3;
      sys.dof_ordering = PARLOPS_DOF_INTERLEAVED;
      int v = compare("3D elasticity, systems AMG (3 functions)", comm, r, b, sys, tol);
      expect(v < s, "elasticity: systems AMG takes fewer iterations than scalar AMG");
    }
    // bad input, on every rank together
    {
      Rows r = poisson(2, 10);
      parlops::Layout rows(comm, r.n, r.hi - r.lo);
      auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
      auto status = [&](auto f) {
        try {
          f();
        } catch (const parlops::Error &e) {
          return e.status();
        }
        return PARLOPS_OK;
      };
      auto o = defaults;
      o.num_functions = (int)(r.hi - r.lo) + 1;
      expect(status([&] { (void)parlops::Op::boomeramg(A, o); }) == PARLOPS_ERR_INVALID_ARGUMENT,
             "num_functions that does not divide the rows: PARLOPS_ERR_INVALID_ARGUMENT");
      auto o2 = defaults;
      o2.max_levels = rank_ == size_ - 1 ? 5 : 6;
      if (size_ > 1)
        expect(status([&] { (void)parlops::Op::boomeramg(A, o2); }) == PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
               "options differing between ranks: PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS");
      auto I = parlops::Op::identity(rows, PARLOPS_F64);
      expect(status([&] { (void)parlops::Op::boomeramg(I, defaults); }) == PARLOPS_ERR_NOT_SUPPORTED,
             "a non-CSR operator: PARLOPS_ERR_NOT_SUPPORTED");
      std::vector<float> vf(r.val.begin(), r.val.end());
      auto Af = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), vf.data());
      expect(status([&] { (void)parlops::Op::boomeramg(Af, defaults); }) == PARLOPS_ERR_DTYPE_MISMATCH,
             "a PARLOPS_F32 operator: PARLOPS_ERR_DTYPE_MISMATCH");
      auto M = parlops::Op::boomeramg(A, defaults);
      double rel = 0;
      expect(parlops_op_dottest(M.get(), 3, &rel) == PARLOPS_ERR_NOT_SUPPORTED, "no adjoint: the dot test says so");
    }
  }
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) std::printf("amg_hypre (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  return sum[1] ? 1 : 0;
}
