// hypre's ParCSR matrix as a parlops CSR operator without copying: the diag and offd blocks (row
// pointers, column indices, values) are read in place; col_map_offd (HYPRE_BigInt) is converted to
// int64 (a copy: it has one entry per ghost column). Keep the hypre matrix alive and unchanged while
// the operator lives. Needs hypre's internal header (_hypre_parcsr_mv.h) and real double HYPRE_Complex.
// This is the code path of parlops::mfem for HypreParMatrix.
#ifndef PARLOPS_HYPRE_HPP
#define PARLOPS_HYPRE_HPP

#include <parlops.hpp>

#include <_hypre_parcsr_mv.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace parlops {
namespace hypre {

static_assert(sizeof(HYPRE_Complex) == sizeof(double), "parlops::hypre needs hypre built with real double values");

/// The wrapped operator and the layouts it was built on. [collective construction over comm]
struct ParCSR {
  Layout rows, cols;
  Op op;
};

/// Wrap `A` (host memory) on `comm`, which must hold the same ranks as A's communicator, in order.
inline ParCSR wrap_parcsr(const Comm &comm, hypre_ParCSRMatrix *A) {
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A);
  hypre_CSRMatrix *offd = hypre_ParCSRMatrixOffd(A);
  const int64_t nrows = static_cast<int64_t>(hypre_CSRMatrixNumRows(diag));
  const int64_t ncols = static_cast<int64_t>(hypre_CSRMatrixNumCols(diag));
  Layout rows(comm, static_cast<int64_t>(hypre_ParCSRMatrixGlobalNumRows(A)), nrows);
  Layout cols(comm, static_cast<int64_t>(hypre_ParCSRMatrixGlobalNumCols(A)), ncols);
  const HYPRE_Int n_offd = hypre_CSRMatrixNumCols(offd);
  std::vector<int64_t> col_map(static_cast<std::size_t>(n_offd));
  const HYPRE_BigInt *cm = hypre_ParCSRMatrixColMapOffd(A);
  for (HYPRE_Int k = 0; k < n_offd; ++k) col_map[static_cast<std::size_t>(k)] = static_cast<int64_t>(cm[k]);
  const parlops_index it = sizeof(HYPRE_Int) == 4 ? PARLOPS_INDEX_I32 : PARLOPS_INDEX_I64;
  parlops_op *o = nullptr;
  check(parlops_op_create_parcsr(rows.get(), cols.get(), PARLOPS_F64, it, hypre_CSRMatrixI(diag), hypre_CSRMatrixJ(diag),
                                 hypre_CSRMatrixData(diag), hypre_CSRMatrixI(offd), hypre_CSRMatrixJ(offd),
                                 hypre_CSRMatrixData(offd), static_cast<int64_t>(n_offd), col_map.data(), PARLOPS_WRAP,
                                 &o));
  return ParCSR{std::move(rows), std::move(cols), Op(o)};
}

}  // namespace hypre
}  // namespace parlops

#endif  // PARLOPS_HYPRE_HPP
