//! Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1).

use std::ffi::c_void;

use super::super::args::{value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, op_of};
use crate::op::fredholm::{Fredholm1, g_local_len};

/// Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1): y[s] = G[s] x[s] for slices s,
/// G[s] nx x ny, x[s] ny x nz. This rank passes its `nsl_local` slices of G (row-major, nx*ny each; the
/// slices of all ranks in rank order make the whole G). x and y are replicated (broadcast layouts of
/// nsl*ny*nz and nsl*nx*nz entries). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_fredholm1(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    nsl_local: i64,
    nx: i64,
    ny: i64,
    nz: i64,
    g_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_fredholm1", || {
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let n = g_local_len(nsl_local, nx, ny);
        create_op(c, dtype, out, Ok(()), |d| {
            with_dtype!(d, T => {
                // read and copy the caller's G; a failure here joins the constructor's agreement
                let g = n.and_then(|n| {
                    // SAFETY: the C caller promises `g_local` holds its `nsl_local` slices of nx *
                    // ny entries of `dtype`, the `n` that `g_local_len` computed (header contract
                    // of parlops_op_fredholm1); `value_slice` checks NULL, alignment and device
                    // memory, and the entries are copied at once.
                    let src = unsafe { value_slice::<T>(g_local, n, "g_local")? };
                    crate::op::copied(src, "a copy of 'g_local'")
                });
                let (g, pre) = match g {
                    Ok(g) => (g, Ok(())),
                    Err(e) => (Vec::new(), Err(e)),
                };
                Fredholm1::<T>::new_checked(c, nsl_local, nx, ny, nz, g, pre).map(op_of::<T>)
            })
        })
    })
}
