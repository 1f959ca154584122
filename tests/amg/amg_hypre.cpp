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
#include "problems.hpp"

#include <cmath>
#include <cstdio>
#include <string>

static int passed = 0, failed = 0;

static void expect(bool ok, const std::string &what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what.c_str());
  }
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
