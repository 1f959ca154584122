// MFEM drop-in checks, written the way MFEM's examples are: each case runs MFEM's solver and
// parlops::mfem's on the same system, in the same order of calls, and compares iteration counts
// (within one), solutions (1e-10 relative) and the final norms.
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
//  - 2D convection-diffusion (nonsymmetric): GMRES(50) and GMRES(20), FGMRES with a smoother set
//    before the operator, BiCGSTAB with and without one.
//  - SLI (stationary iteration) with a Jacobi and a Gauss-Seidel smoother.
// Not compared here: GMRES with a preconditioner (MFEM's is left-, parlops' right-preconditioned).
// Run: ./mfem_dropin [n] [order]
#include <mfem.hpp>
#include <parlops/mfem.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

static int passed = 0, failed = 0;

static void check(bool ok, const std::string &what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::printf("FAILED: %s\n", what.c_str());
  }
}

// GMRES and FGMRES report the residual recomputed from x at the end (parlops confirms a convergence
// seen on the Arnoldi estimate on the true residual), MINRES its recurrence in its own rounding;
// MFEM reports its recurrence estimates. At residuals 1e-10 below the initial one the two differ in
// the last digits that rounding leaves (measured: up to 1.3e-5 relative): iterations and solutions
// must still agree exactly, the final norms to this tolerance.
static const double kEstimateTol = 1e-4;

static double reldiff(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), 1e-300); }

// Run MFEM's solver and parlops' from the same initial guess (zero unless `x0`; with `x0` both run
// with iterative_mode = true, as MFEM's examples do for a nonzero guess) and compare. `setup(s, k)`
// makes the same calls on both solvers, in the same order: k = 0 for MFEM's, 1 for parlops' (to pick
// each solver's own preconditioner object).
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
  check(std::abs(i1 - i2) <= 1, name + ": iterations within one");
  check(rel < 1e-10, name + ": solutions within 1e-10");
  double di = reldiff(ms.GetInitialNorm(), ps.GetInitialNorm()), df = reldiff(ms.GetFinalNorm(), ps.GetFinalNorm()),
         dr = reldiff(ms.GetFinalRelNorm(), ps.GetFinalRelNorm());
  std::printf("%-44s GetInitialNorm %.1e, GetFinalNorm %.1e, GetFinalRelNorm %.1e relative apart\n", "", di, df, dr);
  check(di <= 1e-12, name + ": GetInitialNorm within 1e-12");
  check(df <= final_tol, name + ": GetFinalNorm within " + std::to_string(final_tol));
  check(dr <= final_tol, name + ": GetFinalRelNorm within " + std::to_string(final_tol));
}

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
      compare("PCG, DSmoother() set before, operator 2A", B, cg2, pcg2, [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m2[k]);
        if (k == 1) s.SetOperator(A);
        s.SetOperator(A2);
      });
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
      compare("MINRES", B, mr, pmr, plain, nullptr, kEstimateTol);
      mfem::DSmoother m[2];
      mfem::MINRESSolver mr2;
      parlops::mfem::MINRESSolver pmr2;
      auto jacobi = [&](auto &s, int k) {
        tol(s);
        s.SetPreconditioner(m[k]);
        s.SetOperator(A);
      };
      compare("MINRES, DSmoother() set before", B, mr2, pmr2, jacobi, nullptr, kEstimateTol);
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
  }
  {
    // 2D convection-diffusion, H1 order 2: -Laplace u + q . grad u = 1, u = 0 on the boundary
    mfem::Mesh mesh = mfem::Mesh::MakeCartesian2D(2 * n, 2 * n, mfem::Element::QUADRILATERAL, true);
    mfem::Vector qv(2);
    qv(0) = 20.0;
    qv(1) = 8.0;
    mfem::VectorConstantCoefficient q(qv);
    System sys(mesh, order, &q);
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
      compare("GMRES(" + std::to_string(kdim) + ")", B, g, pg, setup, nullptr, kEstimateTol);
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
      compare("FGMRES(50), DSmoother() set before", B, g, pg, setup, nullptr, kEstimateTol);
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
