//! Communicators.

use std::ffi::c_int;
use std::sync::Arc;

use super::handles::{arg, destroy, give, guard, out_ok, parlops_comm};
use super::types::parlops_status;
use crate::comm::Comm;

/// Fortran's integer communicator handle (`MPI_Fint` in `mpi.h`).
pub type MPI_Fint = mpi::ffi::RSMPI_Fint;

fn create(comm: mpi::ffi::MPI_Comm, out: *mut *mut parlops_comm) -> crate::Result<()> {
    // Duplicate first (every rank takes part), then agree on the local argument check, so a NULL
    // `out` on one rank fails on every rank instead of leaving the others in MPI_Comm_dup.
    let c = Arc::new(unsafe { Comm::from_mpi(comm)? });
    c.agree(out_ok(out, "out"))?;
    give(out, parlops_comm { inner: c });
    Ok(())
}

/// Create a parlops communicator from the caller's MPI communicator, which is duplicated: parlops
/// traffic never mixes with the caller's. MPI must be initialised. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_create(
    comm: mpi::ffi::MPI_Comm,
    out: *mut *mut parlops_comm,
) -> parlops_status {
    guard("parlops_comm_create", || create(comm, out))
}

/// Fortran entry: as `parlops_comm_create`, from an integer handle (`comm` of `use mpi`, or
/// `comm%MPI_VAL` of `use mpi_f08`). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_create_f(
    comm: MPI_Fint,
    out: *mut *mut parlops_comm,
) -> parlops_status {
    guard("parlops_comm_create_f", || {
        let (init, fin) = crate::comm::mpi_initialized();
        if !init || fin {
            crate::bail!(
                InvalidArgument,
                "MPI is not running: call MPI_Init (or parlops_init) first"
            );
        }
        let c = unsafe { mpi::ffi::RSMPI_Comm_f2c(comm) };
        // An unknown Fortran handle converts to a null handle (Open MPI) or MPI_COMM_NULL.
        let bytes: [u8; std::mem::size_of::<mpi::ffi::MPI_Comm>()] =
            unsafe { std::mem::transmute_copy(&c) };
        if bytes.iter().all(|&b| b == 0) || c == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
            crate::bail!(
                InvalidArgument,
                "argument 'comm' ({comm}) is not a valid Fortran communicator handle"
            );
        }
        create(c, out)
    })
}

/// This process's rank in the communicator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_rank(
    comm: *const parlops_comm,
    rank: *mut c_int,
) -> parlops_status {
    guard("parlops_comm_rank", || {
        let c = unsafe { arg(comm, "comm")? };
        out_ok(rank, "rank")?;
        unsafe { *rank = c.inner.rank() };
        Ok(())
    })
}

/// Number of ranks in the communicator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_size(
    comm: *const parlops_comm,
    size: *mut c_int,
) -> parlops_status {
    guard("parlops_comm_size", || {
        let c = unsafe { arg(comm, "comm")? };
        out_ok(size, "size")?;
        unsafe { *size = c.inner.size() };
        Ok(())
    })
}

/// Release the handle and set `*comm` to NULL (NULL `*comm` is a no-op). Layouts and vectors made
/// from it stay valid: they hold their own reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_destroy(comm: *mut *mut parlops_comm) -> parlops_status {
    guard("parlops_comm_destroy", || unsafe { destroy(comm, "comm") })
}

/// Number of global reductions performed so far on this communicator (for tests and tuning).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_reduction_count(
    comm: *const parlops_comm,
    count: *mut u64,
) -> parlops_status {
    guard("parlops_comm_reduction_count", || {
        let c = unsafe { arg(comm, "comm")? };
        out_ok(count, "count")?;
        unsafe { *count = c.inner.reduction_count() };
        Ok(())
    })
}
