//! Communicators.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::handles::{arg, destroy, give, guard, out_ok, parlops_comm};
use super::types::parlops_status;
use crate::comm::Comm;

/// Fortran's integer communicator handle (`MPI_Fint` in `mpi.h`).
pub type MPI_Fint = mpi::ffi::RSMPI_Fint;

fn create(comm: mpi::ffi::MPI_Comm, out: *mut *mut parlops_comm) -> crate::Result<()> {
    // Duplicate first (every rank takes part), then agree on the local argument check, so a NULL
    // `out` on one rank fails on every rank instead of leaving the others in MPI_Comm_dup.
    // SAFETY: the two callers are exported functions whose C caller promises that `comm` is a
    // communicator of the MPI that parlops was built against (header contract of
    // parlops_comm_create, and parlops_comm_create_f converts it from a checked Fortran handle);
    // `MPI_COMM_NULL` and MPI not running are refused by `MpiComm::dup`.
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

/// A communicator over the same ranks as `mpi` that moves device data with NCCL: parlops duplicates
/// `mpi`'s MPI communicator (for sizes and control), picks this rank's CUDA device (`device` >= 0 pins
/// it; -1 takes PARLOPS_DEVICE, else the node-local rank modulo the device count), and bootstraps an
/// NCCL communicator (rank 0's unique id broadcast over MPI). Halo exchanges of device vectors and
/// the solvers' dot products then go over NCCL (`parlops_vec_dot` and norms reduce over MPI). No device, no libnccl.so, or PARLOPS_NCCL=0 is an error on
/// every rank (PARLOPS_ERR_NO_DEVICE / PARLOPS_ERR_NOT_SUPPORTED), never a silent fallback.
/// An NCCL call failing on one rank (here or in any later operation) fails on every rank with
/// PARLOPS_ERR_NCCL, naming that rank, instead of leaving the others waiting inside NCCL: the NCCL
/// communicator is then aborted on every rank, every later use of this communicator fails at once,
/// and a new one must be made. Needs NCCL 2.14 or later (non-blocking communicators). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_create_nccl(
    mpi: *const parlops_comm,
    device: c_int,
    out: *mut *mut parlops_comm,
) -> parlops_status {
    guard("parlops_comm_create_nccl", || {
        // SAFETY: `arg` checks `mpi` against the handle registry (live, a parlops_comm) and holds
        // it for this call; the reference does not leave this closure.
        let m = unsafe { arg(mpi, "mpi")? };
        let pre = out_ok(out, "out").and_then(|_| {
            if device < -1 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'device' is {device}; it must be -1 (chosen by parlops) or a device index"
                );
            }
            Ok(())
        });
        let c = m
            .inner
            .dup_with_nccl((device >= 0).then_some(device), pre)?;
        give(out, parlops_comm { inner: Arc::new(c) });
        Ok(())
    })
}

/// As `parlops_comm_create_nccl`, wrapping the caller's NCCL communicator (`ncclComm_t` passed as a
/// pointer) instead of making one: it must span the same ranks in the same order as `mpi` (checked)
/// and use this process's device; parlops does not destroy it. After an NCCL failure on any rank
/// (see `parlops_comm_create_nccl`) parlops aborts it (`ncclCommAbort`, which frees it): the caller
/// must then neither use nor destroy it. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_wrap_nccl(
    mpi: *const parlops_comm,
    nccl_comm: *mut c_void,
    out: *mut *mut parlops_comm,
) -> parlops_status {
    guard("parlops_comm_wrap_nccl", || {
        // SAFETY: as above: `mpi` is checked by `arg` and used only inside this call.
        let m = unsafe { arg(mpi, "mpi")? };
        // SAFETY: `nccl_comm` is the caller's `ncclComm_t` or NULL, as `dup_wrapping_nccl` requires
        // (header contract of parlops_comm_wrap_nccl).
        let c = unsafe { m.inner.dup_wrapping_nccl(nccl_comm, out_ok(out, "out"))? };
        give(out, parlops_comm { inner: Arc::new(c) });
        Ok(())
    })
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
        // SAFETY: MPI is initialised and not finalised (checked just above), and `MPI_Comm_f2c`
        // takes any integer: an unknown one converts to a null handle, rejected below.
        let c = unsafe { mpi::ffi::RSMPI_Comm_f2c(comm) };
        // An unknown Fortran handle converts to a null handle (Open MPI) or MPI_COMM_NULL.
        // SAFETY: `MPI_Comm` is a plain pointer (Open MPI) or integer (MPICH) handle without
        // padding, the same size as the byte array, and every byte pattern is a valid `u8`.
        let bytes: [u8; std::mem::size_of::<mpi::ffi::MPI_Comm>()] =
            unsafe { std::mem::transmute_copy(&c) };
        // SAFETY: reads `RSMPI_COMM_NULL`, a `const` object of the rsmpi C shim (never written, set
        // at load time).
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
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = unsafe { arg(comm, "comm")? };
        out_ok(rank, "rank")?;
        // SAFETY: `rank` was checked not NULL by `out_ok` just above, and the C caller promises it
        // points to a writable int (header contract).
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
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = unsafe { arg(comm, "comm")? };
        out_ok(size, "size")?;
        // SAFETY: as above: `size` is not NULL (`out_ok`) and writable by the header contract.
        unsafe { *size = c.inner.size() };
        Ok(())
    })
}

/// Release the handle and set `*comm` to NULL (NULL `*comm` is a no-op; a destroyed or foreign
/// `*comm` is PARLOPS_ERR_INVALID_HANDLE and is left as it is). Layouts and vectors made from it
/// stay valid: they hold their own reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_destroy(comm: *mut *mut parlops_comm) -> parlops_status {
    // SAFETY: `destroy` checks `comm` for NULL and the handle it points to against the registry;
    // the C caller promises a non-NULL `comm` points to its handle variable.
    guard("parlops_comm_destroy", || unsafe { destroy(comm, "comm") })
}

/// Number of global reductions performed so far on this communicator (for tests and tuning).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_reduction_count(
    comm: *const parlops_comm,
    count: *mut u64,
) -> parlops_status {
    guard("parlops_comm_reduction_count", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = unsafe { arg(comm, "comm")? };
        out_ok(count, "count")?;
        // SAFETY: as above: `count` is not NULL (`out_ok`) and writable by the header contract.
        unsafe { *count = c.inner.reduction_count() };
        Ok(())
    })
}
