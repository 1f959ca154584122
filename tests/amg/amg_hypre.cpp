// BoomerAMG through parlops (parlops_op_create_boomeramg) against hypre's own PCG + BoomerAMG with
// the same options and the same stopping rule (||r||_2 <= tol ||b||_2), at any rank count with
// uneven row splits:
//  - 2D Poisson (5-point) and 3D Poisson (7-point) on three meshes, each refined twice: iteration
//    counts equal hypre's within one, solutions within 1e-8 relative, and the count grows by at most
//    30% over the two refinements;
//  - 3D linear elasticity (a cantilever assembled by MFEM from the wheel, order 1, byVDIM): the same
//    against hypre with scalar AMG and with systems AMG (num_functions = 3), and systems AMG takes
//    fewer iterations than scalar AMG;
//  - options by hypre's names (parlops_hypre_options): three sets of interpolation, truncation,
//    cycle, relaxation-order, coarsest-solver, aggressive-coarsening and complex-smoother options,
//    and the struct's options by name, take exactly hypre's iterations with hypre's own setters;
//  - MFEM's elasticity options with rigid-body modes on MFEM's example 2 beam at two and three
//    refinements: exactly hypre's iterations with MFEM's calls and MFEM's modes (the preset, and the
//    same options one by one), at least 30% fewer than systems AMG; parlops_rigid_body_modes and
//    parlops::mfem::rigid_body_modes equal MFEM's projection;
//  - every option of the table at the ends of its range and each listed value, over two problems:
//    the same outcome on every rank, no crash or hang;
//  - every converged solve's true residual recomputed;
//  - bad input: a non-CSR operator, a non-f64 one, num_functions that does not divide a rank's
//    rows, options differing between ranks; an unknown option name, a value of the wrong type or
//    outside hypre's values, near-null-space vectors without fitted interpolation (and the
//    reverse), vector counts differing between ranks, a NaN in one rank's vectors.
// Run: mpiexec -n P ./amg_hypre [scale]
#include "checks.hpp"

#include <cmath>
#include <functional>
#include <cstdio>
#include <string>


// parlops' CG with the preconditioner `make` builds on A against hypre's outcome `h` on the same rows:
// the iteration counts equal (exactly, or within one), the solutions within `sol_tol`.
static int compare_with(const std::string &name, const parlops::Comm &comm, const Rows &r, const std::vector<double> &b,
                        const std::function<parlops::Op(const parlops::Op &)> &make, const Outcome &h, double tol,
                        bool exact, double sol_tol = 1e-8) {
  parlops::Layout rows(comm, r.n, r.hi - r.lo);
  auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
  auto M = make(A);
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
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); i++) d[i] = x[i] - h.x[i];
  double rel = norm(d) / norm(h.x);
  if (rank_ == 0)
    std::printf("%-46s %8ld rows: parlops %3d, hypre %3d iterations; |x - x_hypre|/|x| %.1e; ||b-Ax||/||b|| %.1e\n",
                name.c_str(), r.n, (int)info.iterations, h.iterations, rel, rn / bn);
  expect(info.reason > 0 && rn <= 1.0001 * tol * bn, name + ": converged, the true residual meets the rule");
  if (exact)
    expect((int)info.iterations == h.iterations, name + ": iterations equal hypre's");
  else
    expect(std::abs((int)info.iterations - h.iterations) <= 1, name + ": iterations equal hypre's within one");
  expect(rel <= sol_tol, name + ": solution within " + std::to_string(sol_tol) + " of hypre's");
  return (int)info.iterations;
}

// parlops' CG with BoomerAMG against hypre's PCG on the same rows and options (the struct).
static int compare(const std::string &name, const parlops::Comm &comm, const Rows &r, const std::vector<double> &b,
                   const parlops_amg_options &o, double tol) {
  return compare_with(
      name, comm, r, b, [&](const parlops::Op &A) { return parlops::Op::boomeramg(A, o); }, hypre_pcg(r, b, o, tol), tol,
      false);
}

// In hypre's library but only in its internal header (_hypre_parcsr_ls.h), which MFEM includes.
extern "C" HYPRE_Int HYPRE_BoomerAMGSetSmoothInterpVectors(HYPRE_Solver solver, HYPRE_Int smooth_interp_vectors);
extern "C" HYPRE_Int HYPRE_BoomerAMGSetInterpRefine(HYPRE_Solver solver, HYPRE_Int num_refine);

// MFEM's HypreBoomerAMG defaults and SetElasticityOptions(dim = 3), as MFEM calls hypre.
static void mfem_elasticity(HYPRE_Solver s) {
  HYPRE_BoomerAMGSetCoarsenType(s, 10);
  HYPRE_BoomerAMGSetAggNumLevels(s, 1);
  HYPRE_BoomerAMGSetRelaxType(s, 8);
  HYPRE_BoomerAMGSetNumSweeps(s, 1);
  HYPRE_BoomerAMGSetStrongThreshold(s, 0.25);
  HYPRE_BoomerAMGSetInterpType(s, 6);
  HYPRE_BoomerAMGSetPMaxElmts(s, 4);
  HYPRE_BoomerAMGSetPrintLevel(s, 0);
  HYPRE_BoomerAMGSetMaxLevels(s, 25);
  HYPRE_BoomerAMGSetNumFunctions(s, 3);
  HYPRE_BoomerAMGSetAggNumLevels(s, 0);
  HYPRE_BoomerAMGSetStrongThreshold(s, 0.5);
  HYPRE_BoomerAMGSetNodal(s, 4);
  HYPRE_BoomerAMGSetNodalDiag(s, 1);
  HYPRE_BoomerAMGSetCycleRelaxType(s, 8, 3);
  HYPRE_BoomerAMGSetInterpVecVariant(s, 2);
  HYPRE_BoomerAMGSetInterpVecQMax(s, 4);
  HYPRE_BoomerAMGSetSmoothInterpVectors(s, 1);
  HYPRE_BoomerAMGSetInterpRefine(s, 1);
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
    // BoomerAMG's options by hypre's names (interpolation, truncation, cycle, relaxation order,
    // coarsest solver, aggressive coarsening, complex smoothers), against hypre's own setters
    {
      Rows r = poisson(3, 10 * scale);
      std::vector<double> b(r.hi - r.lo);
      for (long i = r.lo; i < r.hi; i++) b[i - r.lo] = 1.0 + std::cos(0.3 * (double)i);
      struct Case {
        const char *name;
        std::function<void(parlops::HypreOptions &)> named;
        std::function<void(HYPRE_Solver)> direct;
      };
      std::vector<Case> cases = {
          {"3D Poisson, options by name: P max 2, truncation 0.1, W-cycle, C/F order, GE on the coarsest",
           [](parlops::HypreOptions &o) {
             o.set("PMaxElmts", 2).set("trunc_factor", 0.1).set("CycleType", 2).set("RelaxOrder", 1);
             o.set("CycleRelaxTypeCoarse", 9).set("strongthreshold", 0.5).set("InterpType", 14);
           },
           [](HYPRE_Solver s) {
             HYPRE_BoomerAMGSetPMaxElmts(s, 2);
             HYPRE_BoomerAMGSetTruncFactor(s, 0.1);
             HYPRE_BoomerAMGSetCycleType(s, 2);
             HYPRE_BoomerAMGSetRelaxOrder(s, 1);
             HYPRE_BoomerAMGSetCycleRelaxType(s, 9, 3);
             HYPRE_BoomerAMGSetStrongThreshold(s, 0.5);
             HYPRE_BoomerAMGSetInterpType(s, 14);
           }},
          {"3D Poisson, options by name: PMIS, aggressive multipass, 2 sweeps of symmetric GS",
           [](parlops::HypreOptions &o) {
             o.set("CoarsenType", 8).set("AggNumLevels", 1).set("AggInterpType", 4).set("NumSweeps", 2);
             o.set("RelaxType", 6).set("MaxCoarseSize", 20).set("StrongThreshold", 0.25);
           },
           [](HYPRE_Solver s) {
             HYPRE_BoomerAMGSetCoarsenType(s, 8);
             HYPRE_BoomerAMGSetAggNumLevels(s, 1);
             HYPRE_BoomerAMGSetAggInterpType(s, 4);
             HYPRE_BoomerAMGSetNumSweeps(s, 2);
             HYPRE_BoomerAMGSetRelaxType(s, 6);
             HYPRE_BoomerAMGSetMaxCoarseSize(s, 20);
             HYPRE_BoomerAMGSetStrongThreshold(s, 0.25);
           }},
          {"3D Poisson, options by name: Schwarz smoothing on the first level, Chebyshev elsewhere",
           [](parlops::HypreOptions &o) {
             o.set("SmoothType", 6).set("SmoothNumLevels", 1).set("RelaxType", 16).set("ChebyOrder", 3);
           },
           [](HYPRE_Solver s) {
             HYPRE_BoomerAMGSetSmoothType(s, 6);
             HYPRE_BoomerAMGSetSmoothNumLevels(s, 1);
             HYPRE_BoomerAMGSetRelaxType(s, 16);
             HYPRE_BoomerAMGSetChebyOrder(s, 3);
           }},
      };
      for (auto &c : cases) {
        parlops::HypreOptions o;
        c.named(o);
        compare_with(
            c.name, comm, r, b, [&](const parlops::Op &A) { return parlops::Op::boomeramg(A, o); },
            hypre_pcg_with(r, b, c.direct, tol), tol, true, 1e-10);
      }
      // the struct through the options: the same preconditioner as the struct itself
      auto st = defaults;
      st.strong_threshold = 0.5;
      st.coarsen_type = 10;
      st.relax_type = 8;
      parlops::HypreOptions os;
      os.set(st);
      compare_with(
          "3D Poisson, the struct's options by name", comm, r, b,
          [&](const parlops::Op &A) { return parlops::Op::boomeramg(A, os); }, hypre_pcg(r, b, st, tol), tol, true,
          1e-10);
    }
    // 3D elasticity with MFEM's SetElasticityOptions (nodal coarsening, interpolation fitted to the
    // rigid-body modes), two and three refinements of the beam, against hypre with MFEM's calls and
    // MFEM's rigid-body modes, and against today's systems AMG
    for (int ref : {2, 3}) {
      mfem::Vector rhs;
      std::vector<double> coords, rbms, adapter;
      Rows r = ex2_beam(ref + scale - 1, rhs, &coords, &rbms, &adapter);
      std::vector<double> b(rhs.GetData(), rhs.GetData() + rhs.Size());
      std::string mesh = "(example 2 beam, " + std::to_string(ref + scale - 1) + " refinements)";
      auto modes = parlops::rigid_body_modes(3, coords);
      double dm = 0;
      for (size_t i = 0; i < modes.size(); i++) dm = std::max(dm, std::abs(modes[i] - rbms[i]));
      expect(modes.size() == rbms.size() && dm == 0.0, "rigid-body modes equal MFEM's (" + mesh + ")");
      expect(adapter == rbms, "parlops::mfem::rigid_body_modes equals MFEM's projection (" + mesh + ")");
      auto sys = defaults;
      sys.num_functions = 3;
      int s = compare("3D elasticity " + mesh + ", systems AMG (3 functions)", comm, r, b, sys, tol);
      Outcome h = hypre_pcg_with(r, b, mfem_elasticity, tol, 3, rbms.data());
      parlops::HypreOptions preset;
      preset.elasticity(3);
      int e = compare_with(
          "3D elasticity " + mesh + ", MFEM's elasticity options", comm, r, b,
          [&](const parlops::Op &A) { return parlops::Op::boomeramg(A, preset, 3, modes.data()); }, h, tol, true, 1e-10);
      parlops::HypreOptions named;
      named.set("NumFunctions", 3).set("AggNumLevels", 0).set("StrongThreshold", 0.5).set("CoarsenType", 10);
      named.set("InterpType", 6).set("PMaxElmts", 4).set("RelaxType", 8).set("NumSweeps", 1).set("MaxLevels", 25);
      named.set("Nodal", 4).set("NodalDiag", 1).set("CycleRelaxTypeCoarse", 8).set("InterpVecVariant", 2);
      named.set("InterpVecQMax", 4).set("SmoothInterpVectors", 1).set("InterpRefine", 1);
      compare_with(
          "3D elasticity " + mesh + ", the same options one by one", comm, r, b,
          [&](const parlops::Op &A) { return parlops::Op::boomeramg(A, named, 3, modes.data()); }, h, tol, true,
          1e-10);
      if (rank_ == 0)
        std::printf("3D elasticity %s: systems AMG %d, elasticity options %d iterations (%.0f%% fewer)\n", mesh.c_str(),
                    s, e, 100.0 * (s - e) / s);
      expect(e <= 0.7 * s, "elasticity options take at least 30% fewer iterations than systems AMG (" + mesh + ")");
    }
    // bad options and vectors, on every rank together
    {
      mfem::Vector rhs;
      std::vector<double> coords, rbms;
      Rows r = elasticity(2, rhs, &coords, &rbms);
      parlops::Layout rows(comm, r.n, r.hi - r.lo);
      auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
      parlops::HypreOptions o;
      std::string msg;
      expect(status_of([&] { o.set("PMaxElements", 4); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT &&
                 msg.find("PMaxElements") != std::string::npos && msg.find("PMaxElmts") != std::string::npos,
             "an unknown option is refused by name, with the near names: " + msg);
      expect(status_of([&] { o.set("StrongThreshold", 2); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT,
             "an integer for a real option is refused: " + msg);
      expect(status_of([&] { o.set("CoarsenType", 2); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT &&
                 msg.find("CoarsenType") != std::string::npos,
             "a value hypre does not take is refused naming the option: " + msg);
      expect(o.describe().find("set: (none") != std::string::npos, "refused values leave the options unset");
      parlops::HypreOptions differ;
      differ.elasticity(3).set("MaxLevels", rank_ == size_ - 1 ? 5 : 6);
      if (size_ > 1) {
        expect(status_of([&] { (void)parlops::Op::boomeramg(A, differ, 3, rbms.data()); }, &msg) ==
                       PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS &&
                   msg.find("MaxLevels") != std::string::npos,
               "options differing between ranks fail on every rank naming the option: " + msg);
        parlops::HypreOptions same;
        same.elasticity(3);
        expect(status_of([&] { (void)parlops::Op::boomeramg(A, same, rank_ == 0 ? 2 : 3, rbms.data()); }, &msg) ==
                   PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
               "vector counts differing between ranks fail on every rank: " + msg);
      }
      parlops::HypreOptions plain;
      plain.set("NumFunctions", 3);
      expect(status_of([&] { (void)parlops::Op::boomeramg(A, plain, 3, rbms.data()); }, &msg) ==
                 PARLOPS_ERR_INVALID_ARGUMENT,
             "vectors without InterpVecVariant are refused: " + msg);
      parlops::HypreOptions el;
      el.elasticity(3);
      expect(status_of([&] { (void)parlops::Op::boomeramg(A, el); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT,
             "InterpVecVariant without vectors is refused: " + msg);
      std::vector<double> bad(rbms);
      if (rank_ == size_ - 1 && !bad.empty()) bad[bad.size() / 2] = NAN;
      expect(status_of([&] { (void)parlops::Op::boomeramg(A, el, 3, bad.data()); }, &msg) ==
                 PARLOPS_ERR_INVALID_ARGUMENT,
             "a NaN in one rank's vectors fails on every rank: " + msg);
      expect(status_of([&] { (void)parlops::rigid_body_modes(4, coords); }, &msg) == PARLOPS_ERR_INVALID_ARGUMENT,
             "rigid-body modes in 4 dimensions are refused: " + msg);
      auto M = parlops::Op::boomeramg(A, el, 3, rbms.data());
      expect(M.get() != nullptr, "a valid elasticity AMG after the failures");
    }
    // every option of the table (read from the options' own description, so a new option enters
    // by itself) at each end of its range and each of its listed values, alone over two bases
    // (hypre's defaults on a 3D Poisson, MFEM's elasticity options on the beam): the set-up and a
    // few CG iterations return the same status on every rank, never crash or hang, and whatever
    // converges meets the rule for its true residual
    {
      mfem::Vector rhs;
      std::vector<double> coords, rbms;
      Rows beam = ex2_beam(1, rhs, &coords, &rbms);
      std::vector<double> bb(rhs.GetData(), rhs.GetData() + rhs.Size());
      Rows pois = poisson(3, 6);
      std::vector<double> bp(pois.hi - pois.lo, 1.0);
      int tried = 0, ok = 0, refused = 0;
      for (auto &[name, real, vals] : option_extremes(parlops::HypreOptions().describe())) {
        for (double v : vals) {
          if (name == "PrintLevel" && v > 0) continue;  // valid, and prints hypre's statistics
          for (int base = 0; base < 2; base++) {
            const Rows &r = base ? beam : pois;
            const std::vector<double> &b = base ? bb : bp;
            parlops::Layout rows(comm, r.n, r.hi - r.lo);
            auto A = parlops::Op::csr(rows, rows, r.ptr.data(), r.col.data(), r.val.data());
            parlops::HypreOptions o;
            if (base) o.elasticity(3);
            std::string what = name + " = " + std::to_string(v) + (base ? " over the elasticity options" : "");
            parlops_status st = status_of([&] {
              if (real)
                o.set(name, v);
              else
                o.set(name, (int64_t)v);
            });
            if (st != PARLOPS_OK) {
              expect(false, what + ": a value the table lists is refused by the setter");
              continue;
            }
            tried++;
            if (std::getenv("AMG_TRACE") && rank_ == 0) std::fprintf(stderr, "trying %s\n", what.c_str());
            std::string msg;
            double rn = 0, bn = 1;
            parlops_solve_info info{};
            st = status_of(
                [&] {
                  auto M = base ? parlops::Op::boomeramg(A, o, 3, rbms.data()) : parlops::Op::boomeramg(A, o);
                  parlops::Solver cg(comm, PARLOPS_METHOD_CG);
                  cg.set_operator(A);
                  cg.set_preconditioner(&M);
                  cg.set_tolerances(1e-8, 0.0, 1e5, 60);
                  std::vector<double> x(b.size(), 0.0), bc(b), ax(b.size());
                  auto bv = parlops::Vec::wrap(rows, bc.data());
                  auto xv = parlops::Vec::wrap(rows, x.data());
                  auto axv = parlops::Vec::wrap(rows, ax.data());
                  info = cg.solve(bv, xv);
                  A.apply(xv, axv);
                  for (size_t i = 0; i < ax.size(); i++) ax[i] = b[i] - ax[i];
                  rn = norm(ax);
                  bn = norm(b);
                },
                &msg);
            int mine[2] = {(int)st, info.reason > 0 ? 1 : 0}, lo[2], hi[2];
            MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            expect(lo[0] == hi[0] && lo[1] == hi[1], what + ": the same outcome on every rank (" + msg + ")");
            if (st == PARLOPS_OK) {
              ok++;
              if (info.reason > 0) expect(rn <= 1.0001e-8 * bn, what + ": converged, and the true residual meets the rule");
            } else {
              refused++;
            }
          }
        }
      }
      if (rank_ == 0)
        std::printf("every BoomerAMG option at its extremes: %d set-ups, %d ran, %d refused alike on every rank\n", tried,
                    ok, refused);
      expect(tried > 100, "the table's options were read from its description");
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
