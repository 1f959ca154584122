// Shared by tests/amg/amg_hypre.cpp and tests/amg/maxwell.cpp: per-rank check counts, a check, the
// global 2-norm of this rank's part, and the status a parlops C++ call throws with.
#ifndef PARLOPS_AMG_CHECKS_HPP
#define PARLOPS_AMG_CHECKS_HPP
#include "problems.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
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

// The status `f` throws with (PARLOPS_OK when it does not throw), and its message.
static parlops_status status_of(const std::function<void()> &f, std::string *msg = nullptr) {
  try {
    f();
  } catch (const parlops::Error &e) {
    if (msg) *msg = e.what();
    return e.status();
  }
  return PARLOPS_OK;
}
#endif  // PARLOPS_AMG_CHECKS_HPP
