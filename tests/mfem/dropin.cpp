// MFEM drop-in checks, written the way MFEM's examples are: each case runs MFEM's solver and
// parlops::mfem's on the same system, in the same order of calls, and compares iteration counts
// (within one), solutions (1e-10 relative) and GetInitialNorm/GetFinalNorm/GetFinalRelNorm (1e-12
// relative).
//
//  - 3D Poisson, H1 order 2, hexahedra (MFEM's example 1 in 3D);
//  - ex1p's order: a default-constructed smoother (no matrix yet) set as preconditioner *before*
//    SetOperator, which passes the operator on to it (MFEM's IterativeSolver does the same);
//  - CG without and with preconditioner (Jacobi DSmoother, Gauss-Seidel GSSmoother), and the
//    smoother's iterative_mode cleared by SetPreconditioner;
//  - a nonzero initial guess (iterative_mode = true): MFEM's rule, relative to the initial residual
//    in the norm the method tests (PARLOPS_REFERENCE_INITIAL_RESIDUAL), and GetInitialNorm,
//    GetFinalNorm and GetFinalRelNorm within 1e-12 of MFEM's;
//  - MINRES with and without a Jacobi smoother on the Poisson system;
//  - 2D convection-diffusion (nonsymmetric): GMRES(50) and GMRES(20) without and with smoothers
//    (left-preconditioned, as MFEM's), FGMRES with a smoother set before the operator, BiCGSTAB
//    with and without one.
//  - SLI (stationary iteration) with a Jacobi and a Gauss-Seidel smoother;
//  - nested solves: FGMRES preconditioned by an inner CG (MFEM's inside MFEM's, parlops' inside
//    parlops');
//  - SetPrintLevel (legacy levels and PrintLevel options): the same lines as MFEM's solver prints
//    (CG, MINRES, GMRES with its restarts);
//  - SetMonitor: an MFEM controller called at the same iterations with the same norms, residuals
//    and iterates, and a controller that declares convergence.
// Run: ./mfem_dropin [n] [order]
#include <mfem.hpp>
#include <parlops/mfem.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

static int passed = 0, failed = 0;

static void check(bool ok, const std::string &what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAILED: %s\n", what.c_str());
  }
}


static double reldiff(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), 1e-300); }

// Run MFEM's solver and parlops' from the same initial guess (zero unless `x0`; with `x0` both run
// with iterative_mode = true, as MFEM's examples do for a nonzero guess) and compare. `setup(s, k)`
// makes the same calls on both solvers, in the same order: k = 0 for MFEM's, 1 for parlops' (to pick
// each solver's own preconditioner object).
// The system of the block being run (set where each is assembled), for the true residual.
static const mfem::Operator *g_A = nullptr;

// A converged solve's true residual, recomputed: ||B - A X|| against ||B - A X0||. Without a
// preconditioner the methods test that norm itself, so the stopping rule must hold for it (1% slack
// for the rounding of the recomputation); with one they test a preconditioned norm, and the true
// relative residual must stay within 100 times the relative norm the solver reports (and below
// 1e-4): a NaN, an unconverged or a wrong x fails either.
static void check_true_residual(const std::string &name, const mfem::Vector &B, const mfem::Vector &X,
                                const mfem::Vector *x0, double reported_rel, double rtol, bool preconditioned) {
  mfem::Vector r(B.Size()), r0(B.Size());
  g_A->Mult(X, r);
  r.Neg();
  r += B;
  if (x0) {
    g_A->Mult(*x0, r0);
    r0.Neg();
    r0 += B;
  } else {
    r0 = B;
  }
  const double t = r.Norml2() / r0.Norml2();
  const bool ok = std::isfinite(t) && (preconditioned ? (t <= 100.0 * reported_rel + 1e-14 && t <= 1e-4)
                                                      : t <= 1.01 * rtol + 1e-14);
  if (!ok) std::printf("%s: true relative residual %.3e (reported %.3e, rtol %.1e)\n", name.c_str(), t, reported_rel, rtol);
  check(ok, name + ": the true residual recomputed meets the rule");
}

template <class MS, class PS, class Setup>
static void compare(const std::string &name, const mfem::Vector &B, MS &ms, PS &ps, Setup setup,
                    const mfem::Vector *x0 = nullptr, double final_tol = 1e-12) {
  mfem::Vector X1(B.Size()), X2(B.Size());
  X1 = 0.0;
  X2 = 0.0;
  if (x0) {
    X1 = *x0;
    X2 = *x0;
  }
  setup(ms, 0);
  ps.iterative_mode = ms.iterative_mode = x0 != nullptr;
  ms.Mult(B, X1);
  setup(ps, 1);
  ps.Mult(B, X2);
  mfem::Vector d(X1);
  d -= X2;
  double rel = d.Norml2() / X1.Norml2();
  int i1 = ms.GetNumIterations(), i2 = ps.GetNumIterations();
  std::printf("%-44s iterations mfem %4d parlops %4d; |x1-x2|/|x1| %.1e; final norm mfem %.6e parlops %.6e\n",
              name.c_str(), i1, i2, rel, ms.GetFinalNorm(), ps.GetFinalNorm());
  check(ms.GetConverged() && ps.GetConverged(), name + ": both converged");
  check_true_residual(name, B, X2, x0, ps.GetFinalRelNorm(), ps.GetRelTol(), ps.HasPreconditioner());
  check(std::abs(i1 - i2) <= 1, name + ": iterations within one");
  check(rel < 1e-10, name + ": solutions within 1e-10");
  double di = reldiff(ms.GetInitialNorm(), ps.GetInitialNorm()), df = reldiff(ms.GetFinalNorm(), ps.GetFinalNorm()),
         dr = reldiff(ms.GetFinalRelNorm(), ps.GetFinalRelNorm());
  std::printf("%-44s GetInitialNorm %.1e, GetFinalNorm %.1e, GetFinalRelNorm %.1e relative apart\n", "", di, df, dr);
  check(di <= 1e-12, name + ": GetInitialNorm within 1e-12");
  check(df <= final_tol, name + ": GetFinalNorm within " + std::to_string(final_tol));
  check(dr <= final_tol, name + ": GetFinalRelNorm within " + std::to_string(final_tol));
}

// What a solve prints to mfem::out.
template <class S>
static std::string printed(S &s, const mfem::Vector &B, mfem::Vector &X) {
  std::ostringstream o;
  std::streambuf *old = mfem::out.rdbuf(o.rdbuf());
  s.Mult(B, X);
  mfem::out.rdbuf(old);
  return o.str();
}

// MFEM's solver and parlops' print the same lines (SetPrintLevel after `setup`).
template <class MS, class PS, class Setup, class Level>
static void compare_output(const std::string &name, const mfem::Vector &B, MS &ms, PS &ps, Setup setup, Level level) {
  mfem::Vector X1(B.Size()), X2(B.Size());
  X1 = 0.0;
  X2 = 0.0;
  setup(ms, 0);
  ms.SetPrintLevel(level);
  setup(ps, 1);
  ps.SetPrintLevel(level);
  std::string a = printed(ms, B, X1), b = printed(ps, B, X2);
  std::istringstream ia(a);
  int lines = 0;
  for (std::string l; std::getline(ia, l);) lines++;
  std::printf("%-44s %d lines printed by MFEM, %s by parlops\n", name.c_str(), lines, a == b ? "the same" : "OTHERS");
  if (a != b) std::printf("--- MFEM:\n%s--- parlops:\n%s---\n", a.c_str(), b.c_str());
  check(a == b && lines > 0, name + ": the same lines as MFEM's");
}

// A controller that records what it is handed and may declare convergence at iteration `stop_at`.
struct Recorder : mfem::IterativeSolverController {
  int stop_at = -1, resets = 0, finals = 0;
  std::vector<int> its;
  std::vector<double> norms, rnorms, xnorms;
  void Reset() override {
    mfem::IterativeSolverController::Reset();
    resets++;
  }
  void MonitorResidual(int it, mfem::real_t norm, const mfem::Vector &r, bool final) override {
    if (final) {
      finals++;
      return;
    }
    its.push_back(it);
    norms.push_back(norm);
    rnorms.push_back(r.Norml2());
    if (it == stop_at) converged = true;
  }
  void MonitorSolution(int it, mfem::real_t, const mfem::Vector &x, bool final) override {
    if (!final && it >= 0) xnorms.push_back(x.Norml2());
  }
};

// The tolerances every case uses (the same calls on MFEM's solver and parlops').
static auto tolerances(double rtol, int max_iter) {
  return [=](auto &s) {
    s.SetRelTol(rtol);
    s.SetAbsTol(0.0);
    s.SetMaxIter(max_iter);
    s.SetPrintLevel(0);
  };
}

// Assemble -div(grad u) + q . grad u = 1 with u = 0 on the boundary (q = nullptr: Poisson) on `mesh`.
struct System {
  mfem::H1_FECollection fec;
  mfem::FiniteElementSpace fes;
  mfem::ConstantCoefficient one{1.0};
  mfem::LinearForm b;
  mfem::GridFunction x;
  mfem::BilinearForm a;  // A, B and X may view a's matrix and b's and x's data: all kept here
  mfem::SparseMatrix A;
  mfem::Vector B, X;
  System(mfem::Mesh &mesh, int order, mfem::VectorCoefficient *q)
      : fec(order, mesh.Dimension()), fes(&mesh, &fec), b(&fes), x(&fes), a(&fes) {
    mfem::Array<int> ess_tdof, ess_bdr(mesh.bdr_attributes.Max());
    ess_bdr = 1;
    fes.GetEssentialTrueDofs(ess_bdr, ess_tdof);
    b.AddDomainIntegrator(new mfem::DomainLFIntegrator(one));
    b.Assemble();
    x = 0.0;
    a.AddDomainIntegrator(new mfem::DiffusionIntegrator(one));
    if (q) a.AddDomainIntegrator(new mfem::ConvectionIntegrator(*q));
    a.Assemble();
    a.FormLinearSystem(ess_tdof, x, b, A, X, B);
  }
};

int main(int argc, char **argv) {
  parlops::check(parlops_init(&argc, &argv));
  int n = argc > 1 ? std::atoi(argv[1]) : 6, order = argc > 2 ? std::atoi(argv[2]) : 2;
  {
    mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(n, n, n, mfem::Element::HEXAHEDRON);
    System sys(mesh, order, nullptr);
    g_A = &sys.A;
    const mfem::SparseMatrix &A = sys.A;
    const mfem::Vector &B = sys.B;
    std::printf("3D Poisson, %d^3 hexahedra, order %d, %d unknowns\n", n, order, A.Height());
    auto tol = tolerances(1e-10, 2000);
    {
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      compare("CG", B, cg, pcg, [&](auto &s, int) {
        tol(s);
        s.SetOperator(A);
      });
    }
    {  // ex1p's order: a default-constructed Jacobi smoother set before the operator
      mfem::DSmoother m[2];
      m[0].iterative_mode = m[1].iterative_mode = true;
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      compare("PCG, DSmoother() set before SetOperator", B, cg, pcg, [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      });
      check(!m[1].iterative_mode, "SetPreconditioner clears the preconditioner's iterative_mode");
      check(m[1].Height() == A.Height(), "SetOperator passes the operator on to the preconditioner");
      // a second operator on the same solver: the preconditioner's wrapper follows it
      mfem::SparseMatrix A2(A);
      A2 *= 2.0;
      mfem::DSmoother m2[2];
      mfem::CGSolver cg2;
      parlops::mfem::CGSolver pcg2;
      g_A = &A2;  // the system this case solves
      compare("PCG, DSmoother() set before, operator 2A", B, cg2, pcg2, [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m2[k]);
        if (k == 1) s.SetOperator(A);
        s.SetOperator(A2);
      });
      g_A = &A;
    }
    {  // a nonzero initial guess (iterative_mode): MFEM tests against the initial residual
      mfem::Vector x0(B.Size());
      for (int i = 0; i < x0.Size(); i++) x0(i) = 0.01 * std::sin(0.1 * i);
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      compare(
          "CG, nonzero initial guess", B, cg, pcg,
          [&](auto &s, int) {
            tol(s);
            s.SetOperator(A);
          },
          &x0);
      mfem::DSmoother m[2];
      mfem::CGSolver cg2;
      parlops::mfem::CGSolver pcg2;
      compare(
          "PCG (DSmoother), nonzero initial guess", B, cg2, pcg2,
          [&](auto &s, int k) {
            tol(s);
            s.SetPreconditioner(m[k]);
            s.SetOperator(A);
          },
          &x0);
    }
    {  // MINRES without and with a (SPD) Jacobi preconditioner
      mfem::MINRESSolver mr;
      parlops::mfem::MINRESSolver pmr;
      auto plain = [&](auto &s, int) {
        tol(s);
        s.SetOperator(A);
      };
      compare("MINRES", B, mr, pmr, plain);
      mfem::DSmoother m[2];
      mfem::MINRESSolver mr2;
      parlops::mfem::MINRESSolver pmr2;
      auto jacobi = [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      };
      compare("MINRES, DSmoother() set before", B, mr2, pmr2, jacobi);
    }
    {  // SLI (stationary iteration) with a Jacobi and a Gauss-Seidel smoother
      auto sli_tol = tolerances(1e-6, 2000);
      mfem::DSmoother m[2];
      mfem::SLISolver sli;
      parlops::mfem::SLISolver psli;
      compare("SLI, DSmoother() set before", B, sli, psli, [&](auto &s, int k) {
        sli_tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      });
      mfem::GSSmoother g0(A), g1(A);
      mfem::Solver *g[2] = {&g0, &g1};
      mfem::SLISolver sli2;
      parlops::mfem::SLISolver psli2;
      compare("SLI, GSSmoother(A)", B, sli2, psli2, [&](auto &s, int k) {
        sli_tol(s);
        s.SetPreconditioner(*g[k]);
        s.SetOperator(A);
      });
    }
    {  // Gauss-Seidel smoother built on the matrix, set after the operator
      mfem::GSSmoother g0(A), g1(A);
      mfem::Solver *g[2] = {&g0, &g1};
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      compare("PCG, GSSmoother(A) set after SetOperator", B, cg, pcg, [&](auto &s, int k) {
        tol(s);
        s.SetOperator(A);
        s.SetPreconditioner(*g[k]);
      });
    }
    {  // run-time options on the adapter (parlops::Options, PETSc's KSPSetFromOptions): the CGSolver
       // runs GMRES(60), and the options' tolerances become its own (A, an mfem::SparseMatrix, is
       // wrapped as a shell: a -pc_type that reads its entries is refused, naming why)
      parlops::mfem::CGSolver pcg;
      tol(pcg);
      pcg.SetOperator(A);
      parlops::Options opts(pcg.ParlopsComm());
      opts.insert("-ksp_type gmres -ksp_rtol 1e-11 -ksp_max_it 400 -ksp_gmres_restart 60");
      pcg.SetFromOptions(opts);
      mfem::Vector X(B.Size());
      X = 0.0;
      pcg.Mult(B, X);
      const std::string vw = pcg.solver().view();
      const std::string name = "SetFromOptions: GMRES(60)";
      std::printf("%-44s iterations %4d\n", name.c_str(), pcg.GetNumIterations());
      check(pcg.GetRelTol() == 1e-11, name + ": -ksp_rtol becomes GetRelTol");
      check(vw.find("GMRES (PARLOPS_METHOD_GMRES)") != std::string::npos && vw.find("restart 60") != std::string::npos,
            name + ": the view names GMRES and its restart");
      check(pcg.GetConverged(), name + ": converged");
      check_true_residual(name, B, X, nullptr, pcg.GetFinalRelNorm(), pcg.GetRelTol(), false);
      check(opts.left().empty(), name + ": every option used");
      parlops::Options cheb(pcg.ParlopsComm());
      cheb.insert("-pc_type chebyshev -options_left no");
      bool refused = false;
      try {
        pcg.SetFromOptions(cheb);
      } catch (const parlops::Error &e) {
        refused = std::string(e.what()).find("diagonal") != std::string::npos;
      }
      check(refused, name + ": -pc_type chebyshev on a shell without a diagonal is refused, saying why");
    }
    // Chebyshev: MFEM's CGSolver + OperatorChebyshevSmoother against the adapter's CG with parlops'
    // Chebyshev of the same degree (bounds estimated by each: 10 power iterations, [0.3, 1.2] times the
    // largest eigenvalue of D^-1 A), on the MFEM-assembled matrix read in place
    for (int order : {2, 3, 4}) {
      mfem::Vector diag;
      A.GetDiag(diag);
      mfem::Array<int> none;
      mfem::OperatorChebyshevSmoother mcheb(A, diag, none, order);
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      auto Acsr = parlops::mfem::wrap_sparse(pcg.ParlopsComm(), A);
      auto pcheb = parlops::Op::chebyshev(Acsr.op, order);
      mfem::Vector X1(B.Size()), X2(B.Size());
      X1 = 0.0;
      X2 = 0.0;
      tol(cg);
      cg.SetPreconditioner(mcheb);
      cg.SetOperator(A);
      cg.Mult(B, X1);
      tol(pcg);
      pcg.SetPreconditioner(pcheb);
      pcg.SetOperator(A);
      pcg.Mult(B, X2);
      mfem::Vector d(X1);
      d -= X2;
      const double rel = d.Norml2() / X1.Norml2();
      std::string name = "PCG, Chebyshev of order " + std::to_string(order);
      std::printf("%-44s iterations mfem %4d parlops %4d (CG alone: 34); |x1-x2|/|x1| %.1e\n", name.c_str(),
                  cg.GetNumIterations(), pcg.GetNumIterations(), rel);
      check(cg.GetConverged() && pcg.GetConverged(), name + ": both converged");
      check_true_residual(name, B, X2, nullptr, pcg.GetFinalRelNorm(), pcg.GetRelTol(), true);
      check(std::abs(cg.GetNumIterations() - pcg.GetNumIterations()) <= 2, name + ": iterations within two of MFEM's");
      check(rel < 1e-8, name + ": solutions within 1e-8");
    }
    {  // a partial-assembly (matrix-free) operator: Chebyshev from its AssembleDiagonal, as from the matrix
      mfem::Array<int> ess_tdof, ess_bdr(mesh.bdr_attributes.Max());
      ess_bdr = 1;
      sys.fes.GetEssentialTrueDofs(ess_bdr, ess_tdof);
      mfem::BilinearForm apa(&sys.fes);
      apa.SetAssemblyLevel(mfem::AssemblyLevel::PARTIAL);
      apa.AddDomainIntegrator(new mfem::DiffusionIntegrator(sys.one));
      apa.Assemble();
      mfem::GridFunction xpa(&sys.fes);
      xpa = 0.0;
      mfem::OperatorPtr Apa;
      mfem::Vector Xpa, Bpa;
      apa.FormLinearSystem(ess_tdof, xpa, sys.b, Apa, Xpa, Bpa);
      int its[2] = {0, 0};
      mfem::Vector Xs[2];
      parlops::mfem::CGSolver pcg[2];
      auto Acsr = parlops::mfem::wrap_sparse(pcg[0].ParlopsComm(), A);
      parlops::mfem::OperatorWrapper Wpa(pcg[1].ParlopsComm(), *Apa, false, true);
      parlops::Op cheb[2] = {parlops::Op::chebyshev(Acsr.op, order), parlops::Op::chebyshev(Wpa.op(), order)};
      for (int k = 0; k < 2; k++) {
        Xs[k].SetSize(B.Size());
        Xs[k] = 0.0;
        tol(pcg[k]);
        pcg[k].SetPreconditioner(cheb[k]);
        pcg[k].SetOperator(k == 0 ? static_cast<const mfem::Operator &>(A) : *Apa);
        pcg[k].Mult(k == 0 ? B : Bpa, Xs[k]);
        its[k] = pcg[k].GetNumIterations();
      }
      mfem::Vector d(Xs[0]);
      d -= Xs[1];
      const double rel = d.Norml2() / Xs[0].Norml2();
      std::string name = "PCG, Chebyshev from a PA operator's diagonal";
      std::printf("%-44s iterations matrix %4d partial assembly %4d; |x1-x2|/|x1| %.1e\n", name.c_str(), its[0],
                  its[1], rel);
      check(pcg[0].GetConverged() && pcg[1].GetConverged(), name + ": both converged");
      check_true_residual(name, B, Xs[1], nullptr, pcg[1].GetFinalRelNorm(), pcg[1].GetRelTol(), true);
      check(its[0] == its[1], name + ": the same iterations as from the assembled matrix");
      check(rel < 1e-10, name + ": solutions within 1e-10");
    }
    {  // nested: FGMRES preconditioned by an inner Jacobi-CG of at most 5 iterations
      mfem::DSmoother m[2];
      mfem::CGSolver inner0;
      parlops::mfem::CGSolver inner1;
      mfem::Solver *inner[2] = {&inner0, &inner1};
      auto inner_setup = [&](auto &s, int k) {
        s.SetRelTol(1e-2);
        s.SetMaxIter(5);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      };
      inner_setup(inner0, 0);
      inner_setup(inner1, 1);
      mfem::FGMRESSolver g;
      parlops::mfem::FGMRESSolver pg;
      compare("FGMRES, inner PCG (5 iterations at most)", B, g, pg, [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(*inner[k]);
        s.SetOperator(A);
      });
    }
    {  // SetPrintLevel: MFEM's lines, for legacy levels 1-3 and a PrintLevel
      using PL = mfem::IterativeSolver::PrintLevel;
      for (int level : {1, 2, 3}) {
        mfem::DSmoother m[2];
        mfem::CGSolver cg;
        parlops::mfem::CGSolver pcg;
        compare_output("PCG, SetPrintLevel(" + std::to_string(level) + ")", B, cg, pcg, [&](auto &s, int k) {
          tol(s);
          s.SetPreconditioner(m[k]);
          s.SetOperator(A);
        }, level);
      }
      mfem::CGSolver cg;
      parlops::mfem::CGSolver pcg;
      compare_output("CG, PrintLevel().Summary().Warnings()", B, cg, pcg, [&](auto &s, int) {
        tol(s);
        s.SetOperator(A);
      }, PL().Summary().Warnings());
      mfem::CGSolver cg2;
      parlops::mfem::CGSolver pcg2;
      compare_output("CG, 5 iterations at most, SetPrintLevel(0)", B, cg2, pcg2, [&](auto &s, int) {
        tol(s);
        s.SetMaxIter(5);
        s.SetOperator(A);
      }, 0);
      for (int level : {1, 3}) {
        mfem::MINRESSolver mr;
        parlops::mfem::MINRESSolver pmr;
        compare_output("MINRES, SetPrintLevel(" + std::to_string(level) + ")", B, mr, pmr, [&](auto &s, int) {
          tol(s);
          s.SetOperator(A);
        }, level);
      }
    }
    {  // SetMonitor (MFEM's controller): the same calls, norms, residuals and iterates; a stop
      for (int stop_at : {-1, 7}) {
        Recorder rec[2];
        mfem::DSmoother m[2];
        mfem::CGSolver cg;
        parlops::mfem::CGSolver pcg;
        mfem::Vector X1(B.Size()), X2(B.Size());
        X1 = 0.0;
        X2 = 0.0;
        auto setup = [&](auto &s, int k) {
          tol(s);
          rec[k].stop_at = stop_at;
          s.SetPreconditioner(m[k]);
          s.SetOperator(A);
          s.SetMonitor(rec[k]);
        };
        setup(cg, 0);
        cg.Mult(B, X1);
        setup(pcg, 1);
        pcg.Mult(B, X2);
        double dn = 0, dr = 0, dx = 0;
        const bool same_its = rec[0].its == rec[1].its;
        for (std::size_t i = 0; same_its && i < rec[0].its.size(); i++) {
          dn = std::max(dn, reldiff(rec[0].norms[i], rec[1].norms[i]));
          // MFEM hands over its recurrence residual, parlops the true b - A x: apart by rounding
          dr = std::max(dr, std::abs(rec[0].rnorms[i] - rec[1].rnorms[i]) / rec[0].rnorms[0]);
          dx = std::max(dx, reldiff(rec[0].xnorms[i] + 1e-300, rec[1].xnorms[i] + 1e-300));
        }
        std::string name = stop_at < 0 ? "PCG, SetMonitor" : "PCG, SetMonitor converging at 7";
        std::printf("%-44s %zu calls each; norms %.1e, ||x|| %.1e relative, ||r|| %.1e ||r_0|| apart\n", name.c_str(),
                    rec[1].its.size(), dn, dx, dr);
        check(same_its && !rec[0].its.empty(), name + ": called at the same iterations");
        check(rec[0].resets == rec[1].resets && rec[0].finals == rec[1].finals, name + ": Reset and final calls alike");
        check(dn <= 1e-12 && dr <= 1e-12 && dx <= 1e-12, name + ": the same norms, residuals and iterates");
        check(cg.GetConverged() && pcg.GetConverged() && cg.GetNumIterations() == pcg.GetNumIterations(),
              name + ": converged at the same iteration");
        if (stop_at < 0) check_true_residual(name, B, X2, nullptr, pcg.GetFinalRelNorm(), pcg.GetRelTol(), true);
      }
    }
  }
  {
    // 2D convection-diffusion, H1 order 2: -Laplace u + q . grad u = 1, u = 0 on the boundary
    mfem::Mesh mesh = mfem::Mesh::MakeCartesian2D(2 * n, 2 * n, mfem::Element::QUADRILATERAL, true);
    mfem::Vector qv(2);
    qv(0) = 20.0;
    qv(1) = 8.0;
    mfem::VectorConstantCoefficient q(qv);
    System sys(mesh, order, &q);
    g_A = &sys.A;
    const mfem::SparseMatrix &A = sys.A;
    const mfem::Vector &B = sys.B;
    std::printf("2D convection-diffusion, %d^2 quads, order %d, %d unknowns (nonsymmetric)\n", 2 * n, order,
                A.Height());
    auto tol = tolerances(1e-10, 3000);
    for (int kdim : {50, 20}) {
      mfem::GMRESSolver g;
      parlops::mfem::GMRESSolver pg;
      auto setup = [&](auto &s, int) {
        tol(s);
        if (kdim != 50) s.SetKDim(kdim);  // 50: both solvers' default
        s.SetOperator(A);
      };
      compare("GMRES(" + std::to_string(kdim) + ")", B, g, pg, setup);
    }
    {  // left-preconditioned GMRES, as MFEM's: a Jacobi smoother set before the operator
      mfem::DSmoother m[2];
      mfem::GMRESSolver g;
      parlops::mfem::GMRESSolver pg;
      compare("GMRES(50), DSmoother() set before", B, g, pg, [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      });
    }
    {  // and a Gauss-Seidel smoother built on the matrix, restarted every 20, nonzero guess
      mfem::GSSmoother g0(A), g1(A);
      mfem::Solver *gs[2] = {&g0, &g1};
      mfem::Vector x0(B.Size());
      for (int i = 0; i < x0.Size(); i++) x0(i) = 0.05 * std::cos(0.3 * i);
      mfem::GMRESSolver g;
      parlops::mfem::GMRESSolver pg;
      compare(
          "GMRES(20), GSSmoother(A), nonzero guess", B, g, pg,
          [&](auto &s, int k) {
            tol(s);
            s.SetKDim(20);
            s.SetOperator(A);
            s.SetPreconditioner(*gs[k]);
          },
          &x0);
    }
    {
      mfem::DSmoother m[2];
      mfem::FGMRESSolver g;
      parlops::mfem::FGMRESSolver pg;
      auto setup = [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      };
      compare("FGMRES(50), DSmoother() set before", B, g, pg, setup);
    }
    for (int level : {1, 3}) {  // GMRES(20)'s lines with its restarts
      mfem::DSmoother m[2];
      mfem::GMRESSolver g;
      parlops::mfem::GMRESSolver pg;
      compare_output("GMRES(20), SetPrintLevel(" + std::to_string(level) + ")", B, g, pg, [&](auto &s, int k) {
        tol(s);
        s.SetKDim(20);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      }, level);
    }
    for (bool smoother : {false, true}) {
      mfem::DSmoother m[2];
      mfem::BiCGSTABSolver g;
      parlops::mfem::BiCGSTABSolver pg;
      compare(smoother ? "BiCGSTAB, DSmoother() set before" : "BiCGSTAB", B, g, pg, [&](auto &s, int k) {
        tol(s);
        if (smoother) s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      });
    }
  }
  std::printf("mfem_dropin: %d passed, %d failed\n", passed, failed);
  parlops::check(parlops_finalize());
  return failed ? 1 : 0;
}
