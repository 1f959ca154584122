// C++-only consumer: 1D Laplacian (tridiagonal 2, -1) through parlops.hpp, CG, true residual.
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include <parlops.hpp>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 200;
    parlops::Comm comm(MPI_COMM_WORLD);
    parlops::Layout rows(comm, n);
    auto [start, len] = rows.local_range();
    std::vector<int64_t> ptr{0}, col;
    std::vector<double> val;
    for (int64_t i = start; i < start + len; ++i) {
      for (int64_t j = i - 1; j <= i + 1; ++j) {
        if (j < 0 || j >= n) continue;
        col.push_back(j);
        val.push_back(j == i ? 2.0 : -1.0);
      }
      ptr.push_back(static_cast<int64_t>(col.size()));
    }
    parlops::Op a = parlops::Op::csr(rows, rows, ptr.data(), col.data(), val.data());
    auto [x, b] = a.create_vecs();
    b.fill(parlops_scalar{1.0, 0.0});
    parlops::Solver cg(comm, PARLOPS_METHOD_CG);
    cg.set_operator(a);
    cg.set_tolerances(1e-10);
    parlops_solve_info info = cg.solve(b, x);
    auto [r, unused] = a.create_vecs();
    (void)unused;
    a.apply(x, r);
    r.axpy(parlops_scalar{-1.0, 0.0}, b);
    double rel = r.norm() / b.norm();
    if (comm.rank() == 0)
      std::printf("ranks = %d, C++-only consumer: CG %lld iterations, reason %d, true relative residual %.2e\n",
                  comm.size(), static_cast<long long>(info.iterations), static_cast<int>(info.reason), rel);
    rc = info.reason > 0 && rel <= 1e-9 ? 0 : 1;
  }
  MPI_Finalize();
  return rc;
}
