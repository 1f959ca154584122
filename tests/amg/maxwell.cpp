// AMS and ADS through parlops (parlops_op_create_ams, _ads) against hypre's own PCG with AMS and ADS
// set as MFEM's HypreAMS and HypreADS set them, on the same rows (uneven splits), at any rank count:
//  - MFEM example 3 style definite Maxwell systems (curl curl E + E = f, Nedelec orders 1 and 2 on a
//    tetrahedral beam, two and three refinements; the discrete gradient and the vertex coordinates
//    at order 1, the Nedelec interpolation's components at order 2), and the beta = 0 case: the same
//    iteration count as hypre, solutions within 1e-10, the true residual recomputed;
//  - the alpha and beta Poisson matrices handed to AMS (H1 diffusion on the vertices), on both sides;
//  - MFEM example 4 style div-div systems (div div F + F = f, Raviart-Thomas lowest order and order
//    1 on hexahedra, two refinements): the same against hypre's ADS;
//  - BoomerAMG alone on the same Maxwell systems, for contrast (printed);
//  - bad input: a G whose rows are not A's, coordinates of the wrong length, interpolations of the
//    wrong count, options of another solver, options differing between ranks.
// Run: mpiexec -n P ./maxwell
#include "checks.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>



// Rows lo..hi of an MFEM matrix (any shape), columns sorted, global.
static Rows rows_of(const mfem::SparseMatrix &M, long lo, long hi) {
  Rows r;
  r.n = M.Height();
  r.lo = lo;
  r.hi = hi;
  for (long i = lo; i < hi; i++) {
    std::vector<std::pair<long, double>> e;
    for (int k = M.GetI()[i]; k < M.GetI()[i + 1]; k++) e.push_back({M.GetJ()[k], M.GetData()[k]});
    std::sort(e.begin(), e.end());
    for (auto &[c, v] : e) {
      r.col.push_back(c);
      r.val.push_back(v);
    }
    r.ptr.push_back((long)r.col.size());
  }
  return r;
}

// A rectangular matrix as a hypre IJ ParCSR (rows [lo, hi), columns [clo, chi)).
static HYPRE_IJMatrix hypre_of(const Rows &r, long clo, long chi) {
  const long nl = r.hi - r.lo;
  std::vector<HYPRE_Int> ncols(nl);
  std::vector<HYPRE_BigInt> rowidx(nl), cols(r.col.begin(), r.col.end());
  for (long i = 0; i < nl; i++) {
    ncols[i] = (HYPRE_Int)(r.ptr[i + 1] - r.ptr[i]);
    rowidx[i] = (HYPRE_BigInt)(r.lo + i);
  }
  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, (HYPRE_BigInt)r.lo, (HYPRE_BigInt)r.hi - 1, (HYPRE_BigInt)clo,
                       (HYPRE_BigInt)chi - 1, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  HYPRE_IJMatrixSetValues(ij, (HYPRE_Int)nl, ncols.data(), rowidx.data(), cols.data(), r.val.data());
  HYPRE_IJMatrixAssemble(ij);
  return ij;
}

static HYPRE_IJVector hypre_vec(long lo, long hi, const double *vals) {
  HYPRE_IJVector v;
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, (HYPRE_BigInt)lo, (HYPRE_BigInt)hi - 1, &v);
  HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(v);
  std::vector<HYPRE_BigInt> idx;
  for (long i = lo; i < hi; i++) idx.push_back((HYPRE_BigInt)i);
  if (hi > lo) HYPRE_IJVectorSetValues(v, (HYPRE_Int)idx.size(), idx.data(), vals);
  HYPRE_IJVectorAssemble(v);
  return v;
}

template <class T>
static T par_of(HYPRE_IJMatrix m) {
  void *p;
  HYPRE_IJMatrixGetObject(m, &p);
  return (T)p;
}
static HYPRE_ParVector par_of(HYPRE_IJVector v) {
  void *p;
  HYPRE_IJVectorGetObject(v, &p);
  return (HYPRE_ParVector)p;
}

// One system and what AMS or ADS needs, this rank's parts.
struct Aux {
  bool ads = false;
  Rows a, g, c;                 // A, G (edges x vertices), C (faces x edges, ADS)
  long vlo = 0, vhi = 0, nv = 0;  // this rank's vertex-space columns
  long elo = 0, ehi = 0, ne = 0;  // ADS: this rank's edges (C's columns, G's rows)
  std::vector<double> coords;   // order 1: this rank's vertices, 3 each
  std::vector<Rows> pi;         // higher orders: the components (ADS: RT x, y, z then ND x, y, z)
  std::vector<double> b;
  Rows poisson;          // when asked: the vertex Poisson matrix (H1 order 1, coefficient 1) for alpha and beta
  bool adapter = false;  // one rank: PCG with parlops::mfem::ams / ::ads built from MFEM's space, ...
  int adapter_its = -1;  // ... and its iterations (-1: not converged)
};

// One rank: PCG with the MFEM adapter's AMS or ADS, built from the space as MFEM's classes build
// them (parlops::mfem::ams, ::ads), on the assembled system read in place.
static int adapter_pcg(mfem::SparseMatrix &A, mfem::FiniteElementSpace &fes, mfem::Vector &B, bool ads, double tol) {
  parlops::Comm self(MPI_COMM_SELF);
  auto W = parlops::mfem::wrap_sparse(self, A);
  auto M = ads ? parlops::mfem::ads(self, W.op, fes) : parlops::mfem::ams(self, W.op, fes);
  parlops::Solver cg(self, PARLOPS_METHOD_CG);
  cg.set_operator(W.op);
  cg.set_preconditioner(&M);
  cg.set_tolerances(tol, 0.0, 1e5, 500);
  std::vector<double> x(B.Size(), 0.0), b(B.GetData(), B.GetData() + B.Size());
  auto bv = parlops::Vec::wrap(W.rows, b.data());
  auto xv = parlops::Vec::wrap(W.rows, x.data());
  auto info = cg.solve(bv, xv);
  return info.reason > 0 ? (int)info.iterations : -1;
}

// The components of a byVDIM vector interpolation (columns node * 3 + c) as three matrices.
static std::vector<mfem::SparseMatrix *> components(const mfem::SparseMatrix &P, int nodes) {
  std::vector<mfem::SparseMatrix *> out;
  for (int c = 0; c < 3; c++) {
    auto *m = new mfem::SparseMatrix(P.Height(), nodes);
    for (int i = 0; i < P.Height(); i++)
      for (int k = P.GetI()[i]; k < P.GetI()[i + 1]; k++)
        if (P.GetJ()[k] % 3 == c) m->Add(i, P.GetJ()[k] / 3, P.GetData()[k]);
    m->Finalize();
    out.push_back(m);
  }
  return out;
}

static const double kappa = M_PI;
static void E_exact(const mfem::Vector &x, mfem::Vector &E) {
  E(0) = std::sin(kappa * x(1));
  E(1) = std::sin(kappa * x(2));
  E(2) = std::sin(kappa * x(0));
}
static void f_exact(const mfem::Vector &x, mfem::Vector &f) {
  f(0) = (1. + kappa * kappa) * std::sin(kappa * x(1));
  f(1) = (1. + kappa * kappa) * std::sin(kappa * x(2));
  f(2) = (1. + kappa * kappa) * std::sin(kappa * x(0));
}

// MFEM example 3's definite Maxwell problem on a tetrahedral beam (8 x 1 x 1 hexahedra, each split
// into tetrahedra, refined `ref` times), Nedelec order `order`, essential boundary everywhere.
static Aux maxwell(int ref, int order, bool adapter = false, bool poisson = false) {
  const int n = 1 << ref;
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(8 * n, n, n, mfem::Element::TETRAHEDRON, 8.0, 1.0, 1.0);
  mfem::ND_FECollection nd(order, 3);
  mfem::FiniteElementSpace fes(&mesh, &nd);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::VectorFunctionCoefficient f(3, f_exact), E(3, E_exact);
  mfem::LinearForm b(&fes);
  b.AddDomainIntegrator(new mfem::VectorFEDomainLFIntegrator(f));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x.ProjectCoefficient(E);
  mfem::ConstantCoefficient one(1.0);
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::CurlCurlIntegrator(one));
  a.AddDomainIntegrator(new mfem::VectorFEMassIntegrator(one));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector X, B;
  a.FormLinearSystem(ess, x, b, A, X, B);
  mfem::H1_FECollection h1(order, 3);
  mfem::FiniteElementSpace vfes(&mesh, &h1);
  mfem::DiscreteLinearOperator grad(&vfes, &fes);
  grad.AddDomainInterpolator(new mfem::GradientInterpolator);
  grad.Assemble();
  grad.Finalize();
  Aux s;
  long lo, hi;
  split(A.Height(), 1, lo, hi);
  s.a = rows_of(A, lo, hi);
  s.g = rows_of(grad.SpMat(), lo, hi);
  s.nv = vfes.GetVSize();
  split(s.nv, 1, s.vlo, s.vhi);
  if (poisson) {
    // the Poisson matrices of the curl-curl and mass coefficients (both 1): H1 diffusion on the
    // vertices, no boundary eliminated (singular, as G^T A G is; hypre's AMGs take that)
    mfem::BilinearForm k(&vfes);
    k.AddDomainIntegrator(new mfem::DiffusionIntegrator(one));
    k.Assemble();
    k.Finalize();
    s.poisson = rows_of(k.SpMat(), s.vlo, s.vhi);
  }
  if (order == 1) {
    for (long v = s.vlo; v < s.vhi; v++)
      for (int c = 0; c < 3; c++) s.coords.push_back(mesh.GetVertex((int)v)[c]);
  } else {
    mfem::FiniteElementSpace vfes3(&mesh, &h1, 3, mfem::Ordering::byVDIM);
    mfem::DiscreteLinearOperator id(&vfes3, &fes);
    id.AddDomainInterpolator(new mfem::IdentityInterpolator);
    id.Assemble();
    id.Finalize();
    for (auto *m : components(id.SpMat(), (int)s.nv)) {
      s.pi.push_back(rows_of(*m, lo, hi));
      delete m;
    }
  }
  for (long i = lo; i < hi; i++) s.b.push_back(B((int)i));
  s.adapter = adapter && size_ == 1;
  if (s.adapter) s.adapter_its = adapter_pcg(A, fes, B, s.ads, 1e-10);
  return s;
}

// MFEM example 4's div-div problem (div div F + F = f) on hexahedra of [0, 1]^3 refined `ref` times,
// Raviart-Thomas of MFEM's order `order` - 1 (ADS's order `order`), essential boundary everywhere.
static void F_exact(const mfem::Vector &p, mfem::Vector &F) {
  F(0) = std::cos(kappa * p(0)) * std::sin(kappa * p(1));
  F(1) = std::cos(kappa * p(1)) * std::sin(kappa * p(0));
  F(2) = 0.0;
}
static void fdiv_exact(const mfem::Vector &p, mfem::Vector &f) {
  double t = 1. + 2. * kappa * kappa;
  f(0) = t * std::cos(kappa * p(0)) * std::sin(kappa * p(1));
  f(1) = t * std::cos(kappa * p(1)) * std::sin(kappa * p(0));
  f(2) = 0.0;
}
static Aux divdiv(int ref, int order, bool adapter = false) {
  const int n = 2 << ref;
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(n, n, n, mfem::Element::HEXAHEDRON, 1.0, 1.0, 1.0);
  mfem::RT_FECollection rt(order - 1, 3);
  mfem::FiniteElementSpace fes(&mesh, &rt);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::VectorFunctionCoefficient f(3, fdiv_exact), F(3, F_exact);
  mfem::LinearForm b(&fes);
  b.AddDomainIntegrator(new mfem::VectorFEDomainLFIntegrator(f));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x.ProjectCoefficient(F);
  mfem::ConstantCoefficient one(1.0);
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::DivDivIntegrator(one));
  a.AddDomainIntegrator(new mfem::VectorFEMassIntegrator(one));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector X, B;
  a.FormLinearSystem(ess, x, b, A, X, B);
  mfem::ND_FECollection nd(order, 3);
  mfem::FiniteElementSpace efes(&mesh, &nd);
  mfem::H1_FECollection h1(order, 3);
  mfem::FiniteElementSpace vfes(&mesh, &h1);
  mfem::DiscreteLinearOperator curl(&efes, &fes);
  curl.AddDomainInterpolator(new mfem::CurlInterpolator);
  curl.Assemble();
  curl.Finalize();
  mfem::DiscreteLinearOperator grad(&vfes, &efes);
  grad.AddDomainInterpolator(new mfem::GradientInterpolator);
  grad.Assemble();
  grad.Finalize();
  Aux s;
  s.ads = true;
  long lo, hi;
  split(A.Height(), 1, lo, hi);
  s.a = rows_of(A, lo, hi);
  s.c = rows_of(curl.SpMat(), lo, hi);
  s.ne = efes.GetVSize();
  split(s.ne, 1, s.elo, s.ehi);
  s.g = rows_of(grad.SpMat(), s.elo, s.ehi);
  s.nv = vfes.GetVSize();
  split(s.nv, 1, s.vlo, s.vhi);
  if (order == 1) {
    for (long v = s.vlo; v < s.vhi; v++)
      for (int c = 0; c < 3; c++) s.coords.push_back(mesh.GetVertex((int)v)[c]);
  } else {
    mfem::FiniteElementSpace vfes3(&mesh, &h1, 3, mfem::Ordering::byVDIM);
    mfem::DiscreteLinearOperator rt_id(&vfes3, &fes), nd_id(&vfes3, &efes);
    rt_id.AddDomainInterpolator(new mfem::IdentityInterpolator);
    nd_id.AddDomainInterpolator(new mfem::IdentityInterpolator);
    for (auto *op : {&rt_id, &nd_id}) {
      op->Assemble();
      op->Finalize();
      long plo = op == &rt_id ? lo : s.elo, phi = op == &rt_id ? hi : s.ehi;
      for (auto *m : components(op->SpMat(), (int)s.nv)) {
        s.pi.push_back(rows_of(*m, plo, phi));
        delete m;
      }
    }
  }
  for (long i = lo; i < hi; i++) s.b.push_back(B((int)i));
  s.adapter = adapter && size_ == 1;
  if (s.adapter) s.adapter_its = adapter_pcg(A, fes, B, s.ads, 1e-10);
  return s;
}

struct HypreOut {
  int iterations = -1;
  std::vector<double> x;
};

// hypre's PCG with AMS or ADS, set as MFEM's HypreAMS / HypreADS set them (print level 0).
static HypreOut hypre_solve(const Aux &s, double tol, bool beta_zero) {
  HYPRE_IJMatrix A = hypre_of(s.a, s.a.lo, s.a.hi);
  HYPRE_IJMatrix G = s.ads ? hypre_of(s.g, s.vlo, s.vhi) : hypre_of(s.g, s.vlo, s.vhi);
  HYPRE_IJMatrix C = s.ads ? hypre_of(s.c, s.elo, s.ehi) : nullptr;
  std::vector<HYPRE_IJMatrix> P;
  for (auto &p : s.pi) P.push_back(hypre_of(p, s.vlo, s.vhi));
  HYPRE_IJMatrix K = s.poisson.n ? hypre_of(s.poisson, s.vlo, s.vhi) : nullptr;
  std::vector<HYPRE_IJVector> X;
  long nvl = s.vhi - s.vlo;
  for (int c = 0; c < 3 && !s.coords.empty(); c++) {
    std::vector<double> comp(nvl);
    for (long v = 0; v < nvl; v++) comp[v] = s.coords[3 * v + c];
    X.push_back(hypre_vec(s.vlo, s.vhi, comp.data()));
  }
  std::vector<double> zero(s.b.size(), 0.0);
  HYPRE_IJVector b = hypre_vec(s.a.lo, s.a.hi, s.b.data()), x = hypre_vec(s.a.lo, s.a.hi, zero.data());
  HYPRE_Solver pc, pcg;
  auto pm = [&](HYPRE_IJMatrix m) { return m ? par_of<HYPRE_ParCSRMatrix>(m) : (HYPRE_ParCSRMatrix) nullptr; };
  if (!s.ads) {
    HYPRE_AMSCreate(&pc);
    HYPRE_AMSSetDimension(pc, 3);
    HYPRE_AMSSetTol(pc, 0.0);
    HYPRE_AMSSetMaxIter(pc, 1);
    HYPRE_AMSSetCycleType(pc, 13);
    HYPRE_AMSSetPrintLevel(pc, 0);
    if (!X.empty()) HYPRE_AMSSetCoordinateVectors(pc, par_of(X[0]), par_of(X[1]), par_of(X[2]));
    HYPRE_AMSSetDiscreteGradient(pc, pm(G));
    if (!P.empty()) HYPRE_AMSSetInterpolations(pc, nullptr, pm(P[0]), pm(P[1]), pm(P[2]));
    HYPRE_AMSSetSmoothingOptions(pc, 2, 1, 1.0, 1.0);
    HYPRE_AMSSetAlphaAMGOptions(pc, 10, 1, 8, 0.25, 6, 4);
    HYPRE_AMSSetBetaAMGOptions(pc, 10, 1, 8, 0.25, 6, 4);
    if (beta_zero) HYPRE_AMSSetBetaPoissonMatrix(pc, nullptr);
    if (K) {
      HYPRE_AMSSetAlphaPoissonMatrix(pc, pm(K));
      HYPRE_AMSSetBetaPoissonMatrix(pc, pm(K));
    }
  } else {
    HYPRE_ADSCreate(&pc);
    HYPRE_ADSSetTol(pc, 0.0);
    HYPRE_ADSSetMaxIter(pc, 1);
    HYPRE_ADSSetCycleType(pc, 11);
    HYPRE_ADSSetPrintLevel(pc, 0);
    if (!X.empty()) HYPRE_ADSSetCoordinateVectors(pc, par_of(X[0]), par_of(X[1]), par_of(X[2]));
    HYPRE_ADSSetDiscreteCurl(pc, pm(C));
    HYPRE_ADSSetDiscreteGradient(pc, pm(G));
    if (!P.empty())
      HYPRE_ADSSetInterpolations(pc, nullptr, pm(P[0]), pm(P[1]), pm(P[2]), nullptr, pm(P[3]), pm(P[4]), pm(P[5]));
    HYPRE_ADSSetSmoothingOptions(pc, 2, 1, 1.0, 1.0);
    HYPRE_ADSSetAMSOptions(pc, 14, 10, 1, 8, 0.25, 6, 4);
    HYPRE_ADSSetAMGOptions(pc, 10, 1, 8, 0.25, 6, 4);
  }
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
  HYPRE_PCGSetTol(pcg, tol);
  HYPRE_PCGSetTwoNorm(pcg, 1);
  HYPRE_PCGSetMaxIter(pcg, 500);
  if (!s.ads)
    HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_AMSSolve, (HYPRE_PtrToSolverFcn)HYPRE_AMSSetup, pc);
  else
    HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_ADSSolve, (HYPRE_PtrToSolverFcn)HYPRE_ADSSetup, pc);
  HYPRE_ParCSRPCGSetup(pcg, pm(A), par_of(b), par_of(x));
  HYPRE_ParCSRPCGSolve(pcg, pm(A), par_of(b), par_of(x));
  HypreOut out;
  HYPRE_Int its = 0;
  HYPRE_PCGGetNumIterations(pcg, &its);
  out.iterations = (int)its;
  out.x.resize(s.b.size());
  std::vector<HYPRE_BigInt> idx;
  for (long i = s.a.lo; i < s.a.hi; i++) idx.push_back((HYPRE_BigInt)i);
  if (!idx.empty()) HYPRE_IJVectorGetValues(x, (HYPRE_Int)idx.size(), idx.data(), out.x.data());
  HYPRE_ParCSRPCGDestroy(pcg);
  if (!s.ads)
    HYPRE_AMSDestroy(pc);
  else
    HYPRE_ADSDestroy(pc);
  HYPRE_IJVectorDestroy(b);
  HYPRE_IJVectorDestroy(x);
  for (auto v : X) HYPRE_IJVectorDestroy(v);
  for (auto m : P) HYPRE_IJMatrixDestroy(m);
  if (C) HYPRE_IJMatrixDestroy(C);
  if (K) HYPRE_IJMatrixDestroy(K);
  HYPRE_IJMatrixDestroy(G);
  HYPRE_IJMatrixDestroy(A);
  HYPRE_ClearAllErrors();
  return out;
}

// parlops' operators for a system.
struct Ops {
  parlops::Layout rows, vert, edges;
  parlops::Op A, G, C, K;
  std::vector<parlops::Op> P;
};

static Ops ops_of(const parlops::Comm &comm, const Aux &s) {
  parlops::Layout rows(comm, s.a.n, s.a.hi - s.a.lo), vert(comm, s.nv, s.vhi - s.vlo);
  parlops::Layout edges = s.ads ? parlops::Layout(comm, s.ne, s.ehi - s.elo) : parlops::Layout(comm, s.a.n, s.a.hi - s.a.lo);
  auto A = parlops::Op::csr(rows, rows, s.a.ptr.data(), s.a.col.data(), s.a.val.data());
  const parlops::Layout &grow = s.ads ? edges : rows;
  auto G = parlops::Op::csr(grow, vert, s.g.ptr.data(), s.g.col.data(), s.g.val.data());
  parlops::Op C(nullptr);
  if (s.ads) C = parlops::Op::csr(rows, edges, s.c.ptr.data(), s.c.col.data(), s.c.val.data());
  std::vector<parlops::Op> P;
  for (size_t i = 0; i < s.pi.size(); i++) {
    const parlops::Layout &prow = (s.ads && i >= 3) ? edges : rows;
    P.push_back(parlops::Op::csr(prow, vert, s.pi[i].ptr.data(), s.pi[i].col.data(), s.pi[i].val.data()));
  }
  parlops::Op K(nullptr);
  if (s.poisson.n) K = parlops::Op::csr(vert, vert, s.poisson.ptr.data(), s.poisson.col.data(), s.poisson.val.data());
  return Ops{std::move(rows), std::move(vert),  std::move(edges), std::move(A),
             std::move(G),    std::move(C),     std::move(K),     std::move(P)};
}

static parlops::Op make_aux(const Ops &o, const Aux &s, const parlops::HypreOptions *opts) {
  std::vector<const parlops_op *> pis;
  for (auto &p : o.P) pis.push_back(p.get());
  parlops_op *out = nullptr;
  const double *x = s.coords.empty() ? nullptr : s.coords.data();
  if (!s.ads)
    parlops::check(parlops_op_create_ams(o.A.get(), o.G.get(), 3, (int64_t)s.coords.size(), x, (int)pis.size(),
                                         pis.data(), o.K.get(), o.K.get(), opts ? opts->get() : nullptr, &out));
  else
    parlops::check(parlops_op_create_ads(o.A.get(), o.C.get(), o.G.get(), (int64_t)s.coords.size(), x, (int)pis.size(),
                                         pis.data(), opts ? opts->get() : nullptr, &out));
  return parlops::Op(out);
}

// PCG with `M`: iterations, and the checks on the true residual and against hypre's solution.
static int pcg(const std::string &name, const parlops::Comm &comm, const Ops &o, const Aux &s, parlops::Op *M, double tol,
               int max_it, std::vector<double> *xout) {
  parlops::Solver cg(comm, PARLOPS_METHOD_CG);
  cg.set_operator(o.A);
  if (M) cg.set_preconditioner(M);
  cg.set_tolerances(tol, 0.0, 1e5, max_it);
  std::vector<double> x(s.b.size(), 0.0), bb(s.b), ax(s.b.size());
  auto bv = parlops::Vec::wrap(o.rows, bb.data());
  auto xv = parlops::Vec::wrap(o.rows, x.data());
  auto axv = parlops::Vec::wrap(o.rows, ax.data());
  auto info = cg.solve(bv, xv);
  o.A.apply(xv, axv);
  for (size_t i = 0; i < ax.size(); i++) ax[i] = s.b[i] - ax[i];
  double rn = norm(ax), bn = norm(s.b);
  if (info.reason > 0) expect(rn <= 1.0001 * tol * bn, name + ": converged, and the true residual meets the rule");
  if (xout) *xout = x;
  return info.reason > 0 ? (int)info.iterations : -(int)info.iterations;
}

int main(int argc, char **argv) {
  parlops::Environment env(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const double tol = 1e-10;
  {
    parlops::Comm comm(MPI_COMM_WORLD);
    struct Case {
      std::string name;
      std::function<Aux()> make;
      bool beta_zero, contrast;
    };
    std::vector<Case> cases = {
        {"Maxwell (example 3), Nedelec order 1, 2 refinements", [] { return maxwell(2, 1, true); }, false, true},
        {"Maxwell (example 3), Nedelec order 1, 3 refinements", [] { return maxwell(3, 1); }, false, true},
        {"Maxwell (example 3), Nedelec order 2, 2 refinements", [] { return maxwell(2, 2, true); }, false, true},
        {"Maxwell (example 3), Nedelec order 2, 3 refinements", [] { return maxwell(3, 2); }, false, false},
        {"Maxwell, order 1, 2 refinements, AMS told beta = 0", [] { return maxwell(2, 1); }, true, false},
        {"Maxwell, order 1, 2 refinements, alpha and beta Poisson matrices given", [] { return maxwell(2, 1, false, true); },
         false, false},
        {"div-div (example 4), Raviart-Thomas lowest order, 2 refinements", [] { return divdiv(2, 1, true); }, false, true},
        {"div-div (example 4), Raviart-Thomas order 1, 1 refinement", [] { return divdiv(1, 2, true); }, false, false},
    };
    for (auto &c : cases) {
      Aux s = c.make();
      Ops o = ops_of(comm, s);
      parlops::HypreOptions opts(s.ads ? PARLOPS_HYPRE_ADS : PARLOPS_HYPRE_AMS);
      if (c.beta_zero) opts.set("BetaPoissonZero", 1);
      auto M = make_aux(o, s, &opts);
      std::vector<double> x;
      int its = pcg(c.name, comm, o, s, &M, tol, 500, &x);
      HypreOut h = hypre_solve(s, tol, c.beta_zero);
      std::vector<double> d(x.size());
      for (size_t i = 0; i < x.size(); i++) d[i] = x[i] - h.x[i];
      double rel = norm(d) / norm(h.x);
      int amg = 0;
      if (c.contrast) {
        auto B = parlops::Op::boomeramg(o.A, parlops::HypreOptions().set("CoarsenType", 10).set("AggNumLevels", 1).set("RelaxType", 8).set("InterpType", 6).set("PMaxElmts", 4));
        amg = pcg(c.name + " (BoomerAMG)", comm, o, s, &B, tol, 1000, nullptr);
      }
      if (rank_ == 0) {
        std::printf("%-66s %7ld rows: parlops %3d, hypre %3d iterations; |x - x_hypre|/|x| %.1e", c.name.c_str(), s.a.n, its,
                    h.iterations, rel);
        if (c.contrast)
          std::printf("; BoomerAMG alone: %s%d", amg < 0 ? "not converged after " : "", amg < 0 ? -amg : amg);
        std::printf("\n");
      }
      expect(its == h.iterations, c.name + ": iterations equal hypre's");
      if (s.adapter) {
        if (rank_ == 0) std::printf("  the MFEM adapter (parlops::mfem::%s from the space, one rank): %d iterations\n", s.ads ? "ads" : "ams", s.adapter_its);
        expect(s.adapter_its == h.iterations, c.name + ": the MFEM adapter's AMS/ADS takes hypre's iterations");
      }
      expect(rel <= 1e-10, c.name + ": solution within 1e-10 of hypre's");
      if (c.contrast) {
        // new values in A (a coefficient 2.5 times larger where the row is even, the system kept
        // symmetric: scaled by d_i d_j), then the refreshed AMS/ADS against one made on them
        std::vector<double> v(s.a.val);
        auto d = [](long g) { return g % 2 ? 1.0 : std::sqrt(2.5); };
        for (long i = 0; i < s.a.hi - s.a.lo; i++)
          for (long k = s.a.ptr[i]; k < s.a.ptr[i + 1]; k++) v[k] *= d(s.a.lo + i) * d(s.a.col[k]);
        o.A.update_values(v);
        int64_t run = M.refresh();
        int its_r = pcg(c.name + " (refreshed)", comm, o, s, &M, tol, 500, nullptr);
        auto M2 = make_aux(o, s, &opts);
        int its_n = pcg(c.name + " (made on the new values)", comm, o, s, &M2, tol, 500, nullptr);
        if (rank_ == 0)
          std::printf("  new values in A: refreshed %s %d iterations, a new one %d (set-ups %ld)\n", s.ads ? "ADS" : "AMS",
                      its_r, its_n, (long)M.setup_count());
        expect(run == 1 && M.setup_count() == 2 && its_r > 0 && its_r == its_n,
               c.name + ": the refreshed " + (s.ads ? "ADS" : "AMS") + " takes the iterations of one made on the new values");
      }
    }
    // every AMS and ADS option (read from the options' own description) at each end of its range
    // and each listed value, alone over MFEM's defaults, on small Maxwell and div-div systems: the
    // same outcome on every rank, no crash or hang, the true residual of what converges
    {
      int tried = 0, ran = 0;
      for (bool ads : {false, true}) {
        Aux s = ads ? divdiv(0, 1) : maxwell(1, 1);
        Ops o = ops_of(comm, s);
        parlops_hypre_solver kind = ads ? PARLOPS_HYPRE_ADS : PARLOPS_HYPRE_AMS;
        for (auto &[name, real, vals] : option_extremes(parlops::HypreOptions(kind).describe())) {
          for (double v : vals) {
            if (name == "PrintLevel" && v > 0) continue;  // valid, and prints hypre's statistics
            parlops::HypreOptions opts(kind);
            std::string what = std::string(ads ? "ADS " : "AMS ") + name + " = " + std::to_string(v), msg;
            if (real)
              opts.set(name, v);
            else
              opts.set(name, (int64_t)v);
            tried++;
            if (std::getenv("AMG_TRACE") && rank_ == 0) std::fprintf(stderr, "trying %s\n", what.c_str());
            int its = 0;
            parlops_status st = status_of([&] {
              auto M = make_aux(o, s, &opts);
              its = pcg(what, comm, o, s, &M, 1e-8, 40, nullptr);
            }, &msg);
            int mine[2] = {(int)st, its}, lo[2], hi[2];
            MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            expect(lo[0] == hi[0] && lo[1] == hi[1], what + ": the same outcome on every rank (" + msg + ")");
            if (st == PARLOPS_OK) ran++;
          }
        }
      }
      if (rank_ == 0) std::printf("every AMS and ADS option at its extremes: %d set-ups, %d ran\n", tried, ran);
      expect(tried > 60, "the tables' options were read from their descriptions");
    }
    // bad input, on every rank together
    {
      Aux s = maxwell(1, 1);
      Ops o = ops_of(comm, s);
      std::string msg;
      auto try_ams = [&](const parlops::Op &A, const parlops::Op &G, const std::vector<double> &x, int npi,
                         const parlops::HypreOptions *opts) {
        return status_of(
            [&] {
              std::vector<const parlops_op *> pis(npi, o.G.get());
              parlops_op *out = nullptr;
              parlops::check(parlops_op_create_ams(A.get(), G.get(), 3, (int64_t)x.size(), x.empty() ? nullptr : x.data(),
                                                   npi, pis.data(), nullptr, nullptr, opts ? opts->get() : nullptr, &out));
              parlops_op_destroy(&out);
            },
            &msg);
      };
      // a G over the vertices x vertices (rows not A's edges)
      long nvl = s.vhi - s.vlo;
      std::vector<long> ptr(nvl + 1), col(nvl);
      std::vector<double> val(nvl, 1.0);
      for (long i = 0; i < nvl; i++) ptr[i + 1] = i + 1, col[i] = s.vlo + i;
      auto Gv = parlops::Op::csr(o.vert, o.vert, ptr.data(), col.data(), val.data());
      expect(try_ams(o.A, Gv, s.coords, 0, nullptr) == PARLOPS_ERR_SIZE_MISMATCH && msg.find("'G'") != std::string::npos,
             "a G whose rows are not A's is refused naming G: " + msg);
      std::vector<double> shortx(s.coords);
      if (rank_ == size_ - 1) shortx.resize(shortx.size() - 3);
      expect(try_ams(o.A, o.G, shortx, 0, nullptr) == PARLOPS_ERR_SIZE_MISMATCH && msg.find("coords") != std::string::npos,
             "coordinates of the wrong length on one rank: refused on every rank: " + msg);
      expect(try_ams(o.A, o.G, {}, 0, nullptr) == PARLOPS_ERR_INVALID_ARGUMENT,
             "neither coordinates nor interpolations: refused: " + msg);
      expect(try_ams(o.A, o.G, s.coords, 2, nullptr) == PARLOPS_ERR_INVALID_ARGUMENT &&
                 msg.find("num_interpolations") != std::string::npos,
             "two interpolations for AMS in 3D: refused naming the count: " + msg);
      parlops::HypreOptions amg;
      expect(try_ams(o.A, o.G, s.coords, 0, &amg) == PARLOPS_ERR_INVALID_ARGUMENT && msg.find("BoomerAMG") != std::string::npos,
             "BoomerAMG's options for AMS: refused: " + msg);
      parlops::HypreOptions differ(PARLOPS_HYPRE_AMS);
      differ.set("CycleType", rank_ == size_ - 1 ? 1 : 13);
      if (size_ > 1)
        expect(try_ams(o.A, o.G, s.coords, 0, &differ) == PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS &&
                   msg.find("CycleType") != std::string::npos,
               "options differing between ranks fail on every rank naming the option: " + msg);
      parlops::HypreOptions ok(PARLOPS_HYPRE_AMS);
      expect(status_of([&] { ok.set("AlphaCoarsenType", 2); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT,
             "an AMS option outside hypre's values: refused: " + msg);
      expect(try_ams(o.A, o.G, s.coords, 0, &ok) == PARLOPS_OK, "a valid AMS after the failures: " + msg);
    }
  }
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) std::printf("maxwell (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  return sum[1] ? 1 : 0;
}
