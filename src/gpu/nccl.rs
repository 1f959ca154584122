//! NCCL communicators: bootstrapped over the MPI communicator (rank 0's unique id broadcast over MPI)
//! or wrapping the caller's `ncclComm_t`. Point-to-point halo traffic and sum reductions of device
//! buffers go through here; sizes and control stay on MPI.

use std::ffi::c_void;

use cudarc::nccl::result as nc;
use cudarc::nccl::sys;

use super::Stream;
use crate::comm::Comm;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::{MpiBase, Scalar};

fn nccl_err(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::new(ErrorKind::Nccl, format!("{what} failed: {e:?}"))
}

/// An NCCL communicator over the same ranks, in the same order, as an MPI communicator.
pub struct Nccl {
    comm: sys::ncclComm_t,
    owned: bool,
    pub version: i32,
}
unsafe impl Send for Nccl {}
unsafe impl Sync for Nccl {}

/// Is NCCL usable in this process (library found, not forbidden by PARLOPS_NCCL=0)?
pub fn require() -> Result<()> {
    if crate::config::env().get("PARLOPS_NCCL").map(str::trim) == Some("0") {
        crate::bail!(
            NotSupported,
            "NCCL was asked for, but PARLOPS_NCCL=0 forbids it in this process"
        );
    }
    if !crate::memory::cuda::probe().nccl_loaded {
        crate::bail!(
            NoDevice,
            "NCCL was asked for, but libnccl.so could not be loaded (put the directory of libnccl.so on LD_LIBRARY_PATH)"
        );
    }
    Ok(())
}

fn version() -> i32 {
    std::panic::catch_unwind(nc::get_nccl_version)
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(0)
}

impl Nccl {
    /// Bootstrap over `mpi`: every rank passes its local verdict `pre` (device set up, ...); rank 0
    /// makes the unique id, MPI broadcasts it, every rank joins. [collective]
    pub fn bootstrap(mpi: &Comm, pre: Result<()>) -> Result<Nccl> {
        let local = pre.and_then(|_| require());
        mpi.agree(local)?;
        let mut id = [0u8; 128];
        let made = if mpi.rank() == 0 {
            std::panic::catch_unwind(nc::get_uniqueid)
                .map_err(|_| crate::err!(Nccl, "libnccl.so is missing ncclGetUniqueId"))
                .and_then(|r| r.map_err(|e| nccl_err("ncclGetUniqueId", e)))
                .map(|u| {
                    for (d, s) in id.iter_mut().zip(u.internal.iter()) {
                        *d = *s as u8;
                    }
                })
        } else {
            Ok(())
        };
        mpi.agree(made)?;
        mpi.bcast_bytes(&mut id, 0)?;
        let mut uid = sys::ncclUniqueId { internal: [0; 128] };
        for (d, s) in uid.internal.iter_mut().zip(id.iter()) {
            *d = *s as _;
        }
        let mut comm: sys::ncclComm_t = std::ptr::null_mut();
        let r = std::panic::catch_unwind(move || unsafe {
            let mut c: sys::ncclComm_t = std::ptr::null_mut();
            nc::comm_init_rank(&mut c, mpi.size(), uid, mpi.rank()).map(|_| c as usize)
        });
        let local = match r {
            Ok(Ok(c)) => {
                comm = c as sys::ncclComm_t;
                Ok(())
            }
            Ok(Err(e)) => Err(nccl_err("ncclCommInitRank", e)),
            Err(_) => Err(crate::err!(Nccl, "libnccl.so is missing ncclCommInitRank")),
        };
        let made = Nccl {
            comm,
            owned: !comm.is_null(),
            version: version(),
        };
        mpi.agree(local)?;
        Ok(made)
    }

    /// Wrap the caller's communicator (not destroyed by parlops). Its size and this rank's position
    /// must match the MPI communicator's; checked on every rank. [collective]
    ///
    /// # Safety
    /// `ptr` must be a valid `ncclComm_t` or null.
    pub unsafe fn wrap(mpi: &Comm, ptr: *mut c_void) -> Result<Nccl> {
        let local = require().and_then(|_| {
            if ptr.is_null() {
                crate::bail!(NullArgument, "argument 'nccl_comm' is NULL");
            }
            let c = ptr as sys::ncclComm_t;
            let n = unsafe { nc::comm_count(c) }.map_err(|e| nccl_err("ncclCommCount", e))?;
            let r = unsafe { nc::comm_user_rank(c) }.map_err(|e| nccl_err("ncclCommUserRank", e))?;
            let dev = unsafe { nc::comm_cu_device(c) }.map_err(|e| nccl_err("ncclCommCuDevice", e))?;
            if let Some(g) = super::current()
                && g.ordinal != dev
            {
                crate::bail!(
                    InvalidArgument,
                    "argument 'nccl_comm' uses CUDA device {dev}, but this process uses device {}",
                    g.ordinal
                );
            }
            if n != mpi.size() || r != mpi.rank() {
                crate::bail!(
                    InvalidArgument,
                    "argument 'nccl_comm' has {n} ranks and this process is its rank {r}, but the MPI communicator has {} ranks and this process is its rank {}",
                    mpi.size(),
                    mpi.rank()
                );
            }
            Ok(())
        });
        mpi.agree(local)?;
        Ok(Nccl {
            comm: ptr as sys::ncclComm_t,
            owned: false,
            version: version(),
        })
    }

    /// The CUDA device a caller's communicator uses.
    ///
    /// # Safety
    /// `ptr` must be a valid `ncclComm_t`.
    pub unsafe fn device_of(ptr: *mut c_void) -> Result<i32> {
        require()?;
        std::panic::catch_unwind(|| unsafe { nc::comm_cu_device(ptr as sys::ncclComm_t) })
            .map_err(|_| crate::err!(Nccl, "libnccl.so is missing ncclCommCuDevice"))?
            .map_err(|e| nccl_err("ncclCommCuDevice", e))
    }

    /// Ranks grouped: start a group of sends and receives.
    pub fn group_start(&self) -> Result<()> {
        nc::group_start()
            .map(|_| ())
            .map_err(|e| nccl_err("ncclGroupStart", e))
    }
    pub fn group_end(&self) -> Result<()> {
        nc::group_end()
            .map(|_| ())
            .map_err(|e| nccl_err("ncclGroupEnd", e))
    }

    fn dtype<T: Scalar>() -> (sys::ncclDataType_t, usize) {
        let t = match T::BASE {
            MpiBase::F32 => sys::ncclDataType_t::ncclFloat32,
            MpiBase::F64 => sys::ncclDataType_t::ncclFloat64,
            MpiBase::U8 => sys::ncclDataType_t::ncclUint8,
            MpiBase::I64 => sys::ncclDataType_t::ncclInt64,
        };
        (t, T::PARTS)
    }

    /// Queue sending `n` entries of `T` at device address `buf` to `peer` on `s`.
    ///
    /// # Safety
    /// `buf` must hold `n` entries on the device until `s` has run the send.
    pub unsafe fn send<T: Scalar>(&self, buf: u64, n: usize, peer: i32, s: Stream) -> Result<()> {
        let (t, parts) = Self::dtype::<T>();
        unsafe {
            nc::send(
                buf as *const c_void,
                n * parts,
                t,
                peer,
                self.comm,
                s.0 as _,
            )
        }
        .map(|_| ())
        .map_err(|e| nccl_err("ncclSend", e))
    }

    /// Queue receiving `n` entries of `T` into device address `buf` from `peer` on `s`.
    ///
    /// # Safety
    /// As for [`Nccl::send`].
    pub unsafe fn recv<T: Scalar>(&self, buf: u64, n: usize, peer: i32, s: Stream) -> Result<()> {
        let (t, parts) = Self::dtype::<T>();
        unsafe { nc::recv(buf as *mut c_void, n * parts, t, peer, self.comm, s.0 as _) }
            .map(|_| ())
            .map_err(|e| nccl_err("ncclRecv", e))
    }

    /// In-place sum of `n` doubles at device address `buf` over all ranks, queued on `s`.
    ///
    /// # Safety
    /// `buf` must hold `n` doubles on the device.
    pub unsafe fn allreduce_sum_f64(&self, buf: u64, n: usize, s: Stream) -> Result<()> {
        unsafe {
            nc::all_reduce(
                buf as *const c_void,
                buf as *mut c_void,
                n,
                sys::ncclDataType_t::ncclFloat64,
                sys::ncclRedOp_t::ncclSum,
                self.comm,
                s.0 as _,
            )
        }
        .map(|_| ())
        .map_err(|e| nccl_err("ncclAllReduce", e))
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        if self.owned && !self.comm.is_null() {
            let _ = unsafe { nc::comm_destroy(self.comm) };
        }
    }
}
