// A hypre ParCSR matrix assembled through hypre's IJ interface, wrapped zero-copy into a parlops CSR
// operator by the code path of the MFEM adapter (parlops/hypre.hpp), then compared with hypre:
// SpMV (HYPRE_ParCSRMatrixMatvec) and CG iterations (HYPRE_ParCSRPCGSolve, two-norm stopping, no
// preconditioner), and the pointers parlops reads are hypre's own. Run at 2 and 3 ranks.
// Prints "hypre: N passed, M failed" on rank 0.
#include <parlops/hypre.hpp>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

static int passed = 0, failed = 0, rank_ = 0;
static void expect(bool ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  HYPRE_Init();
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const HYPRE_BigInt n = argc > 1 ? std::atoi(argv[1]) : 60, N = n * n;
  // uneven rows: rank r gets (N / size) + extra, the last rank the rest
  HYPRE_BigInt base = N / size, lo = rank_ * base, hi = (rank_ == size - 1) ? N - 1 : lo + base - 1;
  if (size > 1) {  // shift one row boundary to make the split uneven
    lo = rank_ == 0 ? 0 : lo + 7;
    hi = rank_ == size - 1 ? N - 1 : hi + 7;
  }
  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi, lo, hi, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  for (HYPRE_BigInt r = lo; r <= hi; ++r) {
    HYPRE_BigInt i = r / n, j = r % n, cols[5];
    double vals[5];
    HYPRE_Int k = 0;
    if (i > 0) { cols[k] = r - n; vals[k++] = -1.0; }
    if (j > 0) { cols[k] = r - 1; vals[k++] = -1.0; }
    cols[k] = r; vals[k++] = 4.0;
    if (j < n - 1) { cols[k] = r + 1; vals[k++] = -1.0; }
    if (i < n - 1) { cols[k] = r + n; vals[k++] = -1.0; }
    HYPRE_IJMatrixSetValues(ij, 1, &k, &r, cols, vals);
  }
  HYPRE_IJMatrixAssemble(ij);
  HYPRE_ParCSRMatrix A;
  HYPRE_IJMatrixGetObject(ij, (void **)&A);

  HYPRE_IJVector ijx, ijy, ijb, ijs;
  for (HYPRE_IJVector *v : {&ijx, &ijy, &ijb, &ijs}) {
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, v);
    HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*v);
  }
  for (HYPRE_BigInt r = lo; r <= hi; ++r) {
    double xv = std::sin(0.01 * (double)r) + 1.0, one = 1.0, zero = 0.0;
    HYPRE_IJVectorSetValues(ijx, 1, &r, &xv);
    HYPRE_IJVectorSetValues(ijb, 1, &r, &one);
    HYPRE_IJVectorSetValues(ijs, 1, &r, &zero);
    HYPRE_IJVectorSetValues(ijy, 1, &r, &zero);
  }
  HYPRE_ParVector x, y, b, sol;
  for (auto [ijv, pv] : {std::pair{ijx, &x}, std::pair{ijy, &y}, std::pair{ijb, &b}, std::pair{ijs, &sol}}) {
    HYPRE_IJVectorAssemble(ijv);
    HYPRE_IJVectorGetObject(ijv, (void **)pv);
  }

  {
    parlops::Comm comm(MPI_COMM_WORLD);
    auto P = parlops::hypre::wrap_parcsr(comm, (hypre_ParCSRMatrix *)A);
    const void *pd = nullptr, *po = nullptr;
    parlops::check(parlops_op_csr_arrays(P.op.get(), &pd, &po));
    hypre_ParCSRMatrix *h = (hypre_ParCSRMatrix *)A;
    expect(pd == hypre_CSRMatrixData(hypre_ParCSRMatrixDiag(h)), "diag values read in place (pointer is hypre's)");
    expect(hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixOffd(h)) == 0 || po == hypre_CSRMatrixData(hypre_ParCSRMatrixOffd(h)),
           "offd values read in place (pointer is hypre's)");
    // SpMV: parlops reads hypre's vector data in place too
    double *xd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)x));
    std::vector<double> yp(static_cast<std::size_t>(hi - lo + 1));
    auto xv = parlops::Vec::wrap(P.cols, xd);
    auto yv = parlops::Vec::wrap(P.rows, yp.data());
    P.op.apply(xv, yv);
    HYPRE_ParCSRMatrixMatvec(1.0, A, x, 0.0, y);
    double *yd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)y));
    double diff = 0.0, mag = 0.0;
    for (std::size_t k = 0; k < yp.size(); ++k) {
      diff = std::fmax(diff, std::fabs(yp[k] - yd[k]));
      mag = std::fmax(mag, std::fabs(yd[k]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &mag, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    expect(diff <= 1e-14 * mag, "SpMV equals hypre's");
    expect(P.op.dottest(3) < 1e-13, "dot test of the wrapped matrix");

    // new values (issue 32): a copy made now, then hypre's arrays changed in place (every value
    // times 1.5, plus 1 on the diagonal); the wrapped matrix is told, the copy takes them
    auto Pc = parlops::hypre::copy_parcsr(comm, (hypre_ParCSRMatrix *)A);
    {
      hypre_CSRMatrix *hd = hypre_ParCSRMatrixDiag(h), *ho = hypre_ParCSRMatrixOffd(h);
      for (HYPRE_Int k = 0; k < hypre_CSRMatrixNumNonzeros(hd); ++k) hypre_CSRMatrixData(hd)[k] *= 1.5;
      for (HYPRE_Int k = 0; k < hypre_CSRMatrixNumNonzeros(ho); ++k) hypre_CSRMatrixData(ho)[k] *= 1.5;
      for (HYPRE_Int i = 0; i < hypre_CSRMatrixNumRows(hd); ++i) hypre_CSRMatrixData(hd)[hypre_CSRMatrixI(hd)[i]] += 1.0;
    }
    parlops::hypre::values_changed(P, h);
    parlops::hypre::update_values(Pc, h);
    HYPRE_ParCSRMatrixMatvec(1.0, A, x, 0.0, y);
    for (auto *Q : {&P, &Pc}) {
      auto yv2 = parlops::Vec::wrap(Q->rows, yp.data());
      Q->op.apply(xv, yv2);
      double d2 = 0.0, m2 = 0.0;
      for (std::size_t k = 0; k < yp.size(); ++k) {
        d2 = std::fmax(d2, std::fabs(yp[k] - yd[k]));
        m2 = std::fmax(m2, std::fabs(yd[k]));
      }
      MPI_Allreduce(MPI_IN_PLACE, &d2, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &m2, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      expect(d2 <= 1e-14 * m2, Q == &P ? "new values in place, wrapped: SpMV equals hypre's"
                                       : "new values copied from hypre's matrix: SpMV equals hypre's");
    }

    // CG both ways, rtol 1e-8 on ||r|| / ||b||
    HYPRE_Solver pcg;
    HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
    HYPRE_PCGSetTol(pcg, 1e-8);
    HYPRE_PCGSetTwoNorm(pcg, 1);
    HYPRE_PCGSetMaxIter(pcg, 10000);
    HYPRE_ParCSRPCGSetup(pcg, A, b, sol);
    HYPRE_ParCSRPCGSolve(pcg, A, b, sol);
    HYPRE_Int hits;
    HYPRE_PCGGetNumIterations(pcg, &hits);
    HYPRE_ParCSRPCGDestroy(pcg);
    double *bd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)b));
    std::vector<double> xs(yp.size(), 0.0);
    auto bv = parlops::Vec::wrap(P.rows, bd);
    auto sv = parlops::Vec::wrap(P.cols, xs.data());
    parlops::Solver cg(comm, PARLOPS_METHOD_CG);
    cg.set_operator(P.op);
    cg.set_tolerances(1e-8, 0.0, 1e5, 10000);
    auto info = cg.solve(bv, sv);
    double *hs = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)sol));
    double sd = 0.0, sn = 0.0;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      sd += (xs[k] - hs[k]) * (xs[k] - hs[k]);
      sn += hs[k] * hs[k];
    }
    MPI_Allreduce(MPI_IN_PLACE, &sd, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &sn, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect(info.reason > 0 && std::llabs((long long)info.iterations - (long long)hits) <= 1, "CG iterations equal hypre PCG's (within one)");
    expect(std::sqrt(sd / sn) < 1e-6, "CG solution close to hypre's");
    // hypre's logical HYPRE_MEMORY_DEVICE, host memory in this CPU build of hypre, is read (the
    // matrix above has it: IJ assembly's default); a device array would be refused (not testable
    // without a GPU build of hypre)
    expect(hypre_GetActualMemLocation(hypre_CSRMatrixMemoryLocation(hypre_ParCSRMatrixDiag(h))) == hypre_MEMORY_HOST,
           "hypre's matrix is host memory in this build, and was wrapped");
    if (rank_ == 0)
      std::printf("hypre %dx%d on %d ranks: SpMV max diff %.1e; CG iterations parlops %lld, hypre %d; |x - x_hypre|/|x| %.1e\n",
                  (int)n, (int)n, size, diff, (long long)info.iterations, (int)hits, std::sqrt(sd / sn));
  }
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) std::printf("hypre (%d ranks): %d passed, %d failed\n", size, sum[0], sum[1]);
  for (HYPRE_IJVector v : {ijx, ijy, ijb, ijs}) HYPRE_IJVectorDestroy(v);
  HYPRE_IJMatrixDestroy(ij);
  HYPRE_Finalize();
  MPI_Finalize();
  return sum[1] == 0 ? 0 : 1;
}
