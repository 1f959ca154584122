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

/// Wrap `A` (host memory) on `comm`, which must hold the same ranks as A's communicator, in order
/// (with `own` = PARLOPS_COPY, copy it instead: see copy_parcsr). A
/// matrix whose arrays hypre keeps in device memory (a GPU build of hypre with device memory, as MFEM
/// uses on GPUs; unified memory is read from the host) is refused on every rank with
/// PARLOPS_ERR_MEMORY_LOCATION (parlops also asks the CUDA driver where
/// each array it is handed lives, and refuses device arrays, whatever hypre says).
inline ParCSR wrap_parcsr(const Comm &comm, hypre_ParCSRMatrix *A, parlops_ownership own = PARLOPS_WRAP) {
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A);
  hypre_CSRMatrix *offd = hypre_ParCSRMatrixOffd(A);
  // hypre's own word for where the arrays are (HYPRE_MEMORY_DEVICE is host memory in a CPU build of
  // hypre, device or unified memory in a GPU build: hypre_GetActualMemLocation says which)
  auto on_device = [](hypre_CSRMatrix *m) {
    return hypre_GetActualMemLocation(hypre_CSRMatrixMemoryLocation(m)) == hypre_MEMORY_DEVICE;
  };
  int dev = (on_device(diag) || on_device(offd)) ? 1 : 0;
  int any = dev;
  MPI_Allreduce(&dev, &any, 1, MPI_INT, MPI_MAX, hypre_ParCSRMatrixComm(A));
  if (any)
    throw Error(PARLOPS_ERR_MEMORY_LOCATION,
                dev ? "parlops::hypre::wrap_parcsr: the hypre matrix's arrays are in device memory "
                      "(HYPRE_MEMORY_DEVICE); parlops reads ParCSR matrices from host memory"
                    : "parlops::hypre::wrap_parcsr: another rank's hypre matrix is in device memory "
                      "(HYPRE_MEMORY_DEVICE)");
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
                                 hypre_CSRMatrixData(offd), static_cast<int64_t>(n_offd), col_map.data(), own,
                                 &o));
  return ParCSR{std::move(rows), std::move(cols), Op(o)};
}

/// A copy of `A` (as wrap_parcsr, but parlops keeps its own arrays): for a matrix made again at
/// every step on the same pattern (MFEM's time-dependent examples form a new HypreParMatrix per
/// step), whose values update_values then takes. [collective]
inline ParCSR copy_parcsr(const Comm &comm, hypre_ParCSRMatrix *A) { return wrap_parcsr(comm, A, PARLOPS_COPY); }

/// The values of `B` (same pattern as the matrix `p` was copied from: the same row pointers and
/// columns in diag and offd) into `p` (made by copy_parcsr). Preconditioners built on p.op follow
/// through Op::refresh or a solver's reuse policy. A changed pattern is refused. [collective]
inline void update_values(ParCSR &p, hypre_ParCSRMatrix *B) {
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(B), *offd = hypre_ParCSRMatrixOffd(B);
  p.op.update_values(static_cast<int64_t>(hypre_CSRMatrixNumNonzeros(diag)), hypre_CSRMatrixData(diag),
                     static_cast<int64_t>(hypre_CSRMatrixNumNonzeros(offd)), hypre_CSRMatrixData(offd));
}

/// Say that the values of `A`, which `p` wraps (wrap_parcsr), changed in place (its pattern did not):
/// the next products read them, device copies are made again. [collective]
inline void values_changed(ParCSR &p, hypre_ParCSRMatrix *A) {
  p.op.update_values(static_cast<int64_t>(hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixDiag(A))), nullptr,
                     static_cast<int64_t>(hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixOffd(A))), nullptr);
}

}  // namespace hypre
}  // namespace parlops

#endif  // PARLOPS_HYPRE_HPP
