// MFEM's example-1 Poisson problem (H1, order 2, Cartesian 2D mesh, -Laplace u = 1, u = 0 on the
// boundary) solved by mfem::CGSolver and by parlops::mfem::CGSolver with the same MFEM smoother as
// preconditioner: same iteration count (within one), same solution (1e-10 relative), and parlops
// reads MFEM's own memory. The parlops lines are marked "parlops:". Run: ./mfem_poisson [n] [order]
#include <mfem.hpp>
#include <parlops/mfem.hpp>  // parlops:

#include <cmath>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  parlops::check(parlops_init(&argc, &argv));  // parlops: MPI for a serial MFEM program
  int n = argc > 1 ? std::atoi(argv[1]) : 16, order = argc > 2 ? std::atoi(argv[2]) : 2;
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian2D(n, n, mfem::Element::QUADRILATERAL, true);
  mfem::H1_FECollection fec(order, mesh.Dimension());
  mfem::FiniteElementSpace fes(&mesh, &fec);
  mfem::Array<int> ess_tdof, ess_bdr(mesh.bdr_attributes.Max());
  ess_bdr = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess_tdof);
  mfem::ConstantCoefficient one(1.0);
  mfem::LinearForm b(&fes);
  b.AddDomainIntegrator(new mfem::DomainLFIntegrator(one));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x = 0.0;
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::DiffusionIntegrator(one));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector B, X;
  a.FormLinearSystem(ess_tdof, x, b, A, X, B);
  mfem::GSSmoother M(A);

  // MFEM's CG
  mfem::Vector X1(X.Size());
  X1 = 0.0;
  mfem::CGSolver cg;
  cg.SetRelTol(1e-12);
  cg.SetMaxIter(2000);
  cg.SetPrintLevel(0);
  cg.SetPreconditioner(M);
  cg.SetOperator(A);
  cg.Mult(B, X1);

  // the same solve through parlops: one changed line
  mfem::Vector X2(X.Size());
  X2 = 0.0;
  parlops::mfem::CGSolver pcg;  // parlops: was mfem::CGSolver
  pcg.SetRelTol(1e-12);
  pcg.SetMaxIter(2000);
  pcg.SetPrintLevel(0);
  pcg.SetPreconditioner(M);
  pcg.SetOperator(A);
  pcg.Mult(B, X2);

  mfem::Vector d(X1);
  d -= X2;
  double rel = d.Norml2() / X1.Norml2();
  bool same_its = std::abs(cg.GetNumIterations() - pcg.GetNumIterations()) <= 1;
  bool zero_copy = pcg.LastInputPointer() == B.GetData() && pcg.LastOutputPointer() == X2.GetData();
  std::printf("MFEM Poisson, %d x %d quads, order %d, %d unknowns\n", n, n, order, A.Height());
  std::printf("iterations: mfem::CGSolver %d, parlops::mfem::CGSolver %d (%s)\n", cg.GetNumIterations(),
              pcg.GetNumIterations(), same_its ? "within one" : "DIFFERENT");
  std::printf("relative difference of the solutions = %.2e (%s)\n", rel, rel < 1e-10 ? "ok" : "TOO LARGE");
  std::printf("parlops read MFEM's memory in place: %s\n", zero_copy ? "yes" : "NO");
  int ok = same_its && rel < 1e-10 && zero_copy && cg.GetConverged() && pcg.GetConverged();
  std::printf("mfem_poisson: %d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
  parlops::check(parlops_finalize());  // parlops:
  return ok ? 0 : 1;
}
