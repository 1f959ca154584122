//! NCCL communicators: bootstrapped over the MPI communicator (rank 0's unique id broadcast over MPI)
//! or wrapping the caller's `ncclComm_t`. Point-to-point halo traffic and sum reductions of device
//! buffers go through here; sizes and control stay on MPI. How a failure on one rank ends on every
//! rank: `fault.rs`.

mod fault;

use std::ffi::c_void;

use cudarc::nccl::result as nc;
use cudarc::nccl::sys;

use self::fault::{Call, Fault};
use super::{Comm, ReduceOp};
use crate::error::{Error, ErrorKind, Result};
use crate::gpu::scratch::with_scratch;
use crate::gpu::{self, Stream};
use crate::scalar::{MpiBase, Scalar};

fn nccl_err(what: &str, e: cudarc::nccl::result::NcclError) -> Error {
    Error::new(
        ErrorKind::Nccl,
        format!("{what} failed (NCCL result {})", e.0 as i32),
    )
}

/// The leading members of `ncclConfig_t`, which NCCL reads as far as `size` says (a config of NCCL
/// 2.14's layout: every later member keeps its default).
#[repr(C)]
struct ConfigHead {
    size: usize,
    magic: u32,
    version: u32,
    blocking: i32,
}

/// An NCCL communicator over the same ranks, in the same order, as an MPI communicator.
///
/// `comm` is a live NCCL communicator on this process's device: one `bootstrap` initialised
/// (`owned`, destroyed on drop), or the caller's (`wrap`, whose contract keeps it alive). No Nccl
/// with a null or failed one leaves `bootstrap` or `wrap`.
pub struct Nccl {
    comm: sys::ncclComm_t,
    owned: bool,
    pub version: i32,
    /// Failure notices and the aborted state (see `fault.rs`).
    fault: Fault,
}
// SAFETY: an ncclComm_t is an opaque handle that Rust never dereferences, handed only to NCCL
// calls; nothing in it is tied to the thread that made it. As with MpiComm (src/comm/mpi.rs), one
// communicator must not be used by several threads at once (NCCL's rule); parlops makes its NCCL
// calls from the thread that calls it, and concurrent calls are the caller's to avoid.
unsafe impl Send for Nccl {}
// SAFETY: as for Send: `&Nccl` only hands the handle to NCCL calls (the one-thread-at-a-time rule
// above is the caller's, as for MPI); no Rust memory is shared through it.
unsafe impl Sync for Nccl {}

/// Is NCCL usable in this process (library found, not forbidden by PARLOPS_NCCL=0)?
pub fn require() -> Result<()> {
    if crate::config::env().get("PARLOPS_NCCL").map(str::trim) == Some("0") {
        crate::bail!(
            NotSupported,
            "NCCL was asked for, but PARLOPS_NCCL=0 forbids it in this process"
        );
    }
    if !crate::gpu::probe().nccl_loaded {
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
        let fault = Fault::new(mpi)?;
        let mut made = Nccl {
            comm: std::ptr::null_mut(),
            owned: true,
            version: version(),
            fault,
        };
        let local = made.init(mpi.size(), uid, mpi.rank());
        match mpi.agree(local) {
            Ok(()) => Ok(made),
            Err(e) => {
                made.fail_quietly();
                Err(e)
            }
        }
    }

    /// This rank's part of a non-blocking ncclCommInitRankConfig, waited out watching for failures.
    fn init(&mut self, n: i32, uid: sys::ncclUniqueId, rank: i32) -> Result<()> {
        let mut cfg = ConfigHead {
            size: std::mem::size_of::<ConfigHead>(),
            magic: 0xcafe_beef,
            version: 21400, // NCCL_VERSION(2, 14, 0): the first with `blocking`
            blocking: 0,
        };
        let mut c: sys::ncclComm_t = std::ptr::null_mut();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: `c` is a live local that receives the new communicator; `cfg` is a live,
            // initialised config head whose `size` says how much NCCL may read; `uid` is rank 0's
            // unique id (broadcast before), and every rank of the communicator makes this call with
            // its own rank and the same size (agreed before). A missing symbol panics into this
            // catch_unwind.
            unsafe {
                sys::ncclCommInitRankConfig(
                    &mut c,
                    n,
                    uid,
                    rank,
                    (&mut cfg as *mut ConfigHead).cast(),
                )
            }
        }));
        self.comm = c;
        match r {
            Ok(r) => self.settled(Call::Init, r.result()),
            // NCCL older than 2.14: the others must not wait for this rank either
            Err(_) => {
                let e = self.fail_here(Call::Init, 3);
                Err(crate::err!(
                    Nccl,
                    "libnccl.so has no ncclCommInitRankConfig (NCCL 2.14 or later is needed): {}",
                    e.msg
                ))
            }
        }
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
            // SAFETY: `c` is the caller's communicator, non-null (checked above) and valid by
            // this function's contract; NCCL is loaded (`require` above).
            let n = unsafe { nc::comm_count(c) }.map_err(|e| nccl_err("ncclCommCount", e))?;
            // SAFETY: as above.
            let r = unsafe { nc::comm_user_rank(c) }.map_err(|e| nccl_err("ncclCommUserRank", e))?;
            // SAFETY: as above.
            let dev = unsafe { nc::comm_cu_device(c) }.map_err(|e| nccl_err("ncclCommCuDevice", e))?;
            if let Some(g) = crate::gpu::current()
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
            fault: Fault::new(mpi)?,
        })
    }

    /// The CUDA device a caller's communicator uses.
    ///
    /// # Safety
    /// `ptr` must be a valid `ncclComm_t`.
    pub unsafe fn device_of(ptr: *mut c_void) -> Result<i32> {
        require()?;
        // SAFETY: `ptr` is a valid ncclComm_t (this function's contract); NCCL is loaded
        // (`require` above), and a missing symbol panics into the catch_unwind.
        std::panic::catch_unwind(|| unsafe { nc::comm_cu_device(ptr as sys::ncclComm_t) })
            .map_err(|_| crate::err!(Nccl, "libnccl.so is missing ncclCommCuDevice"))?
            .map_err(|e| nccl_err("ncclCommCuDevice", e))
    }

    /// Ranks grouped: start a group of sends and receives.
    /// The `ncclComm_t` (for the caller to use alongside parlops, or to wrap again).
    pub fn raw(&self) -> *mut c_void {
        self.comm as *mut c_void
    }

    pub fn group_start(&self) -> Result<()> {
        self.check_alive()?;
        nc::group_start()
            .map(|_| self.group_opened())
            .map_err(|e| nccl_err("ncclGroupStart", e))
    }
    /// Close the group (its operations are queued; a failure is every rank's, see `fault.rs`). A
    /// group opened must be closed, also after a failed send or receive in it.
    pub fn group_end(&self) -> Result<()> {
        self.group_closed(nc::group_end())
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
        self.check_alive()?;
        let (t, parts) = Self::dtype::<T>();
        // SAFETY: `buf` holds n entries of T, n * parts reals of NCCL type `t` (our caller's
        // contract); `self.comm` is live (see Nccl; not aborted: checked above); `s` is a live
        // stream of the device (the handle NCCL's cudaStream_t names).
        let r = unsafe {
            nc::send(
                buf as *const c_void,
                n * parts,
                t,
                peer,
                self.comm,
                s.0 as _,
            )
        };
        self.settled(Call::Send, r)
    }

    /// Queue receiving `n` entries of `T` into device address `buf` from `peer` on `s`.
    ///
    /// # Safety
    /// As for [`Nccl::send`].
    pub unsafe fn recv<T: Scalar>(&self, buf: u64, n: usize, peer: i32, s: Stream) -> Result<()> {
        self.check_alive()?;
        let (t, parts) = Self::dtype::<T>();
        // SAFETY: as in `send`: `buf` holds n entries, n * parts reals of `t` (our caller's
        // contract), `self.comm` (not aborted: checked above) and `s` are live.
        let r = unsafe { nc::recv(buf as *mut c_void, n * parts, t, peer, self.comm, s.0 as _) };
        self.settled(Call::Recv, r)
    }

    /// In-place sum of `n` doubles at device address `buf` over all ranks, queued on `s`.
    ///
    /// # Safety
    /// `buf` must hold `n` doubles on the device.
    pub unsafe fn allreduce_sum_f64(&self, buf: u64, n: usize, s: Stream) -> Result<()> {
        self.check_alive()?;
        // SAFETY: `buf` holds n doubles on the device (our caller's contract); NCCL allows the
        // same buffer as input and output (in place); `self.comm` (not aborted: checked above)
        // and `s` are live.
        let r = unsafe {
            nc::all_reduce(
                buf as *const c_void,
                buf as *mut c_void,
                n,
                sys::ncclDataType_t::ncclFloat64,
                sys::ncclRedOp_t::ncclSum,
                self.comm,
                s.0 as _,
            )
        };
        self.settled(Call::AllReduce, r)
    }

    /// Sum `vals` over the ranks on the device, queued on `s` (through this thread's reduction
    /// scratch), returning the sums. The wait watches for failures (`fault.rs`).
    pub fn sum_f64(&self, vals: &[f64], s: Stream) -> Result<Vec<f64>> {
        self.check_alive()?;
        with_scratch(vals.len(), s, |sc| {
            let h = sc.host.as_mut_slice::<f64>();
            h[..vals.len()].copy_from_slice(vals);
            // SAFETY: the scratch's device `out` and pinned `host` hold at least vals.len()
            // doubles (with_scratch(vals.len())); the three steps run in order on `s`, and the
            // pinned buffer is neither written nor read by the host until `s` is waited for below
            // (also when the reduction fails: the copy queued before it is then waited for).
            unsafe {
                gpu::htod(sc.out.ptr, sc.host.ptr(), vals.len() * 8, s)?;
                if let Err(e) = self.allreduce_sum_f64(sc.out.ptr, vals.len(), s) {
                    let _ = gpu::sync(s);
                    return Err(e);
                }
                gpu::dtoh(sc.host.ptr(), sc.out.ptr, vals.len() * 8, s)?;
            }
            self.wait(s)?;
            Ok(sc.host.as_slice::<f64>()[..vals.len()].to_vec())
        })
    }

    /// After a failed creation (agreed on every rank): abort this rank's part without notices.
    fn fail_quietly(&self) {
        self.abort("a failed creation".to_string());
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        if self.owned && !self.comm.is_null() && !self.fault.aborted() {
            // SAFETY: an owned communicator was made by ncclCommInitRankConfig in `bootstrap` and
            // is destroyed once, here, unless it was aborted (which freed it).
            let _ = unsafe { nc::comm_destroy(self.comm) };
        }
    }
}

impl Comm {
    /// A duplicate of this communicator with a new NCCL communicator attached, for device data: this
    /// rank's CUDA device is set up first (`device` pins it; `None` takes PARLOPS_DEVICE, else the
    /// node-local rank modulo the device count), then NCCL is bootstrapped over the duplicate. `pre`
    /// is the caller's own argument check; a failure on any rank fails on every rank. [collective]
    pub fn dup_with_nccl(&self, device: Option<i32>, pre: Result<()>) -> Result<Comm> {
        // SAFETY: `self.raw()` is this communicator's own live MPI handle.
        let c = unsafe { Comm::from_mpi(self.raw())? };
        let pre = pre.and_then(|_| {
            require()?;
            crate::gpu::get(c.node_rank(), device).map(|_| ())
        });
        let n = Nccl::bootstrap(&c, pre)?;
        Ok(c.with_nccl(n))
    }

    /// As [`Comm::dup_with_nccl`], wrapping the caller's NCCL communicator (see [`Nccl::wrap`]); the
    /// device is the one that communicator uses. [collective]
    ///
    /// # Safety
    /// `nccl_comm` must be a valid `ncclComm_t` or null.
    pub unsafe fn dup_wrapping_nccl(
        &self,
        nccl_comm: *mut c_void,
        pre: Result<()>,
    ) -> Result<Comm> {
        // SAFETY: `self.raw()` is this communicator's own live MPI handle.
        let c = unsafe { Comm::from_mpi(self.raw())? };
        let pre = pre.and_then(|_| {
            let pin = if nccl_comm.is_null() {
                None
            } else {
                // SAFETY: non-null here, so a valid ncclComm_t (this function's contract).
                Some(unsafe { Nccl::device_of(nccl_comm)? })
            };
            crate::gpu::get(c.node_rank(), pin).map(|_| ())
        });
        c.agree(pre)?;
        // SAFETY: `nccl_comm` is a valid ncclComm_t or null (this function's contract), which is
        // what `wrap` asks.
        let n = unsafe { Nccl::wrap(&c, nccl_comm)? };
        Ok(c.with_nccl(n))
    }

    /// [`Comm::allreduce_checked`] (a sum) of values computed from device data: by NCCL on the device,
    /// on the stream `stream` gives, when an NCCL communicator is attached (the error flag is summed
    /// with the values; only when some rank failed is MPI asked which and why); over MPI otherwise.
    /// [collective]
    pub fn allreduce_sum_checked_device(
        &self,
        local: Result<Vec<f64>>,
        n: usize,
        stream: impl FnOnce() -> Result<Stream>,
    ) -> Result<Vec<f64>> {
        let Some(nccl) = self.nccl() else {
            return self.allreduce_checked(local, n, ReduceOp::Sum);
        };
        if let Err(e) = nccl.check_alive() {
            return self.allreduce_checked(local.and(Err(e)), n, ReduceOp::Sum);
        }
        let s = stream()?;
        // the partials and the error flag are summed by NCCL on the device
        let mut buf = vec![0.0; n + 1];
        match &local {
            Ok(v) => buf[..n].copy_from_slice(v),
            Err(_) => buf[n] = 1.0,
        }
        let out = match nccl.sum_f64(&buf, s) {
            Ok(out) => out,
            // NCCL failed on some rank, and the communicator is aborted on every rank (fault.rs):
            // every rank is here or on its way, and the outcome is agreed over MPI
            Err(e) => return self.allreduce_checked(local.and(Err(e)), n, ReduceOp::Sum),
        };
        self.count_reduction();
        if out[n] != 0.0 {
            // some rank failed: learn which and why over MPI (rare path)
            self.allreduce_checked(local, n, ReduceOp::Sum)
        } else {
            Ok(out[..n].to_vec())
        }
    }
}
