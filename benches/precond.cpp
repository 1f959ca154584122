// Preconditioners side by side (a benchmark, not a test: `make bench-precond`): time to solution
// (preconditioner set-up + solve) and iterations of parlops' CG without a preconditioner, with
// Jacobi, Chebyshev (degree 3, estimated bounds), block Jacobi ILU(0) and IC(0), and BoomerAMG,
// next to hypre's own PCG + BoomerAMG with the same options, on a 3D Poisson problem and an
// MFEM-assembled 3D elasticity beam (systems AMG, 3 functions). Rounds interleave the methods;
// medians and (min-max) over the rounds; the ratio parlops AMG-PCG / hypre AMG-PCG is taken per
// round. Stopping rule for all: ||r||_2 <= 1e-8 ||b||_2.
// Run: mpiexec -n P ./precond_bench [rounds] [poisson_m] [elasticity_nx]
#include "../tests/amg/problems.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

struct Stat {
  std::vector<double> t;
  int its = 0;
  bool ok = true;
};

static std::string med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char b[96];
  std::snprintf(b, sizeof b, "%8.3f (%.3f-%.3f)", v[v.size() / 2], v.front(), v.back());
  return b;
}

int main(int argc, char **argv) {
  parlops::Environment env(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const long pm = argc > 2 ? std::atol(argv[2]) : 40;
  const int enx = argc > 3 ? std::atoi(argv[3]) : 8;
  const double tol = 1e-8;
  parlops::Comm comm(MPI_COMM_WORLD);
  for (int problem = 0; problem < 2; problem++) {
    Rows r;
    std::vector<double> b;
    auto amg = parlops::Op::amg_options();
    std::string name;
    if (problem == 0) {
      r = poisson(3, pm);
      b.assign((size_t)(r.hi - r.lo), 1.0);
      amg.strong_threshold = 0.5;
      name = "3D Poisson " + std::to_string(pm) + "^3";
    } else {
      mfem::Vector rhs;
      r = elasticity(enx, rhs);
      b.assign(rhs.GetData(), rhs.GetData() + rhs.Size());
      amg.num_functions = 3;
      name = "3D elasticity (" + std::to_string(4 * enx) + "x" + std::to_string(enx) + "x" + std::to_string(enx) + " Q1)";
    }
    parlops::Layout rows(comm, r.n, r.hi - r.lo);
    auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
    std::vector<double> x(b.size());
    auto bv = parlops::Vec::wrap(rows, b.data());
    auto xv = parlops::Vec::wrap(rows, x.data());
    using Make = std::function<std::unique_ptr<parlops::Op>()>;
    std::vector<std::pair<std::string, Make>> methods = {
        {"CG", nullptr},
        {"Jacobi-CG", nullptr},
        {"Chebyshev(3)-CG", [&] { return std::make_unique<parlops::Op>(parlops::Op::chebyshev(A, 3)); }},
        {"BJ-ILU(0)-CG", [&] { return std::make_unique<parlops::Op>(parlops::Op::block_jacobi(A, PARLOPS_LOCAL_ILU0)); }},
        {"BJ-IC(0)-CG", [&] { return std::make_unique<parlops::Op>(parlops::Op::block_jacobi(A, PARLOPS_LOCAL_IC0)); }},
        {"BoomerAMG-CG", [&] { return std::make_unique<parlops::Op>(parlops::Op::boomeramg(A, amg)); }},
    };
    std::map<std::string, Stat> st;
    std::vector<double> ratio;
    for (int round = 0; round < rounds; round++) {
      double amg_t = 0, hypre_t = 0;
      for (auto &[m, make] : methods) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        std::unique_ptr<parlops::Op> M;
        parlops::Solver cg(comm, PARLOPS_METHOD_CG);
        cg.set_operator(A);
        if (make) {
          M = make();
          cg.set_preconditioner(M.get());
        } else if (m == "Jacobi-CG") {
          cg.set_jacobi();
        }
        double ts = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &ts, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        st[m + " set-up"].t.push_back(ts);
        cg.set_tolerances(tol, 0.0, 1e5, 20000);
        std::fill(x.begin(), x.end(), 0.0);
        auto info = cg.solve(bv, xv);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        st[m].t.push_back(t);
        st[m].its = (int)info.iterations;
        st[m].ok = st[m].ok && info.reason > 0;
        if (m == "BoomerAMG-CG") amg_t = t;
      }
      Outcome h = hypre_pcg(r, b, amg, tol);
      double t = h.setup_s + h.solve_s;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      st["hypre PCG+BoomerAMG"].t.push_back(t);
      st["hypre PCG+BoomerAMG"].its = h.iterations;
      double hs = h.setup_s;
      MPI_Allreduce(MPI_IN_PLACE, &hs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      st["hypre PCG+BoomerAMG set-up"].t.push_back(hs);
      hypre_t = t;
      ratio.push_back(amg_t / hypre_t);
    }
    if (rank_ == 0) {
      std::printf("\n%s, %ld rows, %d rank(s), %d rounds; seconds to solution: median (min-max)\n", name.c_str(), r.n,
                  size_, rounds);
      for (auto &m : {"CG", "Jacobi-CG", "Chebyshev(3)-CG", "BJ-ILU(0)-CG", "BJ-IC(0)-CG", "BoomerAMG-CG",
                      "hypre PCG+BoomerAMG"}) {
        auto &s = st[m];
        std::printf("  %-22s %6d iterations%s  %s s\n", m, s.its, s.ok ? "" : " (NOT converged)", med(s.t).c_str());
      }
      std::printf("  set-up alone: parlops BoomerAMG %s s, hypre %s s\n", med(st["BoomerAMG-CG set-up"].t).c_str(),
                  med(st["hypre PCG+BoomerAMG set-up"].t).c_str());
      std::printf("  parlops AMG-PCG / hypre AMG-PCG time, per round: %s\n", med(ratio).c_str());
    }
  }
  return 0;
}
