//! One rank's NCCL failure must not leave the other ranks waiting inside NCCL for ever (NCCL itself
//! never tells the other ranks). parlops' rule, for every NCCL communicator:
//!
//! - Its calls are non-blocking: communicators parlops makes are created with `blocking = 0`, so
//!   that initialisation and every call return at once (`ncclInProgress` is waited out by polling
//!   `ncclCommGetAsyncError`), and parlops waits for NCCL work on a stream by polling
//!   (`cuStreamQuery`), never inside the driver.
//! - While it polls, it watches two things: `ncclCommGetAsyncError` (NCCL's own asynchronous
//!   errors), and failure notices from the other ranks, which arrive over a private duplicate of the
//!   MPI communicator.
//! - A rank whose NCCL call fails (a returned error or an asynchronous one) sends a notice to every
//!   other rank and aborts its communicator (`ncclCommAbort`: its queued NCCL work finishes without
//!   moving data). A rank that receives a notice aborts its own. So every rank's NCCL communicator
//!   ends aborted, each NCCL wait in progress returns an error, and a later use fails at once.
//! - Every NCCL operation parlops queues is waited for (so watched) before the call that queued it
//!   returns: no stream outside this module ever holds NCCL work that nothing watches.
//! - The error then takes the path of any local failure: the solvers carry it into their next
//!   reduction, which goes over MPI once the communicator is aborted, and agree on it there; the
//!   collective entries agree on it at their end. Every rank returns `PARLOPS_ERR_NCCL`, naming the
//!   rank whose call failed.

use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::nccl::result::{NcclError, NcclStatus};
use cudarc::nccl::sys;
use mpi::ffi;

use super::Nccl;
use crate::comm::Comm;
use crate::comm::mpi::{MpiComm, alive, check, mpi_initialized};
use crate::error::{Error, ErrorKind, Result};
use crate::gpu::{self, Stream};
use crate::scalar::MpiBase;

/// The NCCL calls a notice can name (its first value is the index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    Init,
    AllReduce,
    Send,
    Recv,
    GroupEnd,
    Async,
}

const CALLS: [&str; 6] = [
    "ncclCommInitRankConfig",
    "ncclAllReduce",
    "ncclSend",
    "ncclRecv",
    "ncclGroupEnd",
    "an NCCL operation (reported by ncclCommGetAsyncError)",
];

impl Call {
    fn name(self) -> &'static str {
        CALLS[self as usize]
    }
}

/// NCCL's words for a result code (ncclResult_t, as NCCL's documentation lists them).
fn code_name(code: i64) -> String {
    let w = match code {
        1 => "ncclUnhandledCudaError: a call to a CUDA function failed",
        2 => "ncclSystemError: a call to the system failed",
        3 => "ncclInternalError: an internal check failed",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError: a remote process exited or there was a network error",
        _ => return format!("NCCL result {code}"),
    };
    w.to_string()
}

/// Tag of the notices (on their own communicator).
const TAG: c_int = 1;

/// How one NCCL communicator fails together: its failure notices and whether it was aborted.
pub(crate) struct Fault {
    /// A private duplicate of the MPI communicator, carrying only notices.
    notices: MpiComm,
    rank: i32,
    size: i32,
    aborted: AtomicBool,
    /// Notices sent (once per communicator).
    notified: AtomicBool,
    /// Between ncclGroupStart and ncclGroupEnd: an abort waits for the group to be closed (NCCL's
    /// group still names the communicator).
    group_open: AtomicBool,
    /// A failure inside the open group, aborting at its end.
    deferred: Mutex<Option<String>>,
    /// What made it abort (for later uses).
    why: Mutex<String>,
    /// Notices sent: their buffers and requests (completed, or released, on drop).
    sent: Mutex<Vec<(Box<[i64; 2]>, ffi::MPI_Request)>>,
}

impl Fault {
    /// The notices' communicator for `mpi`: a duplicate, agreed on every rank. [collective]
    pub(crate) fn new(mpi: &Comm) -> Result<Fault> {
        // SAFETY: `mpi.raw()` is this communicator's own live MPI handle.
        let notices = mpi.agree(unsafe { MpiComm::dup(mpi.raw()) })?;
        Ok(Fault {
            notices,
            rank: mpi.rank(),
            size: mpi.size(),
            aborted: AtomicBool::new(false),
            notified: AtomicBool::new(false),
            group_open: AtomicBool::new(false),
            deferred: Mutex::new(None),
            why: Mutex::new(String::new()),
            sent: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Tell every other rank that this rank's `call` failed with `code`.
    fn notify_all(&self, call: Call, code: i64) {
        let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        for dest in (0..self.size).filter(|&d| d != self.rank) {
            let buf = Box::new([call as i64, code]);
            // the buffer lives in `sent` (boxed: it does not move) until the request completes
            if let Ok(r) = self
                .notices
                .isend_raw(buf.as_ptr().cast(), 2, MpiBase::I64, dest, TAG)
            {
                sent.push((buf, r));
            }
        }
    }

    /// A notice from another rank, if one has arrived: (its rank, the call, the code).
    fn poll(&self) -> Result<Option<(i32, Call, i64)>> {
        alive()?;
        let mut flag: c_int = 0;
        // SAFETY: MPI runs (checked above); `self.notices` is a live communicator; `flag` and `st`
        // are live locals that MPI_Iprobe writes (a zeroed MPI_Status is a valid plain struct).
        let mut st: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let rc = unsafe {
            ffi::MPI_Iprobe(
                ffi::RSMPI_ANY_SOURCE,
                TAG,
                self.notices.handle(),
                &mut flag,
                &mut st,
            )
        };
        check(rc, "MPI_Iprobe")?;
        if flag == 0 {
            return Ok(None);
        }
        let from = st.MPI_SOURCE;
        let mut msg = [0i64; 2];
        // SAFETY: `msg` holds the 2 values a notice carries; the message from `from` with TAG is
        // waiting (probed above), so MPI_Recv completes at once; the status is ignored.
        let rc = unsafe {
            ffi::MPI_Recv(
                msg.as_mut_ptr().cast(),
                2,
                MpiBase::I64.datatype(),
                from,
                TAG,
                self.notices.handle(),
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
        check(rc, "MPI_Recv")?;
        let call = [
            Call::Init,
            Call::AllReduce,
            Call::Send,
            Call::Recv,
            Call::GroupEnd,
            Call::Async,
        ]
        .get(msg[0] as usize)
        .copied()
        .unwrap_or(Call::Async);
        Ok(Some((from, call, msg[1])))
    }

    fn aborted_error(&self) -> Error {
        let why = self.why.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Error::new(
            ErrorKind::Nccl,
            format!(
                "the NCCL communicator was aborted on every rank after {why}; make a new one (parlops_comm_create_nccl) to go on"
            ),
        )
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        let sent = std::mem::take(self.sent.get_mut().unwrap_or_else(|p| p.into_inner()));
        let (init, fin) = mpi_initialized();
        for (buf, mut r) in sent {
            let mut flag: c_int = 0;
            // SAFETY: `r` is a live request of MPI_Isend (made by notify_all), tested once and,
            // unless complete, released (MPI completes the send on its own); its buffer is then
            // leaked, since MPI may still read it. With MPI finalised, nothing is called.
            unsafe {
                if init && !fin {
                    ffi::MPI_Test(&mut r, &mut flag, ffi::RSMPI_STATUS_IGNORE);
                    if flag == 0 {
                        ffi::MPI_Request_free(&mut r);
                    }
                }
            }
            if flag == 0 {
                Box::leak(buf);
            }
        }
    }
}

impl Nccl {
    /// Fail fast on an aborted communicator.
    pub(crate) fn check_alive(&self) -> Result<()> {
        if self.fault.aborted() {
            return Err(self.fault.aborted_error());
        }
        Ok(())
    }

    /// Abort this rank's communicator (once): its queued work finishes without moving data. Inside
    /// an open group, at the group's end.
    pub(super) fn abort(&self, why: String) {
        if self.fault.group_open.load(Ordering::Acquire) {
            // the group is closed first (ncclGroupEnd still names the communicator), then aborted
            let mut d = self
                .fault
                .deferred
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            d.get_or_insert(why);
            return;
        }
        if self.fault.aborted.swap(true, Ordering::AcqRel) {
            return;
        }
        *self.fault.why.lock().unwrap_or_else(|p| p.into_inner()) = why;
        if !self.comm.is_null() {
            // SAFETY: `self.comm` is this rank's live communicator (made by ncclCommInitRankConfig,
            // or the caller's), aborted once here (the flag above); nothing uses it afterwards:
            // every call checks `check_alive` first, and Drop destroys only one not aborted.
            let _ = std::panic::catch_unwind(|| unsafe { sys::ncclCommAbort(self.comm) });
        }
    }

    /// This rank's `call` failed with `code`: every other rank is told, the communicator aborted.
    pub(crate) fn fail_here(&self, call: Call, code: i64) -> Error {
        let what = format!(
            "{} failed on rank {} ({})",
            call.name(),
            self.fault.rank,
            code_name(code)
        );
        if !self.fault.aborted() && !self.fault.notified.swap(true, Ordering::AcqRel) {
            self.fault.notify_all(call, code);
        }
        self.abort(what.clone());
        Error::new(
            ErrorKind::Nccl,
            format!(
                "{what}; the NCCL communicator is aborted on every rank: make a new one (parlops_comm_create_nccl) to go on"
            ),
        )
    }

    /// A group opened (ncclGroupStart succeeded): aborts wait for its end.
    pub(crate) fn group_opened(&self) {
        self.fault.group_open.store(true, Ordering::Release);
    }

    /// The group closed (ncclGroupEnd returned `r`): a failure inside it aborts now, and is the
    /// outcome; otherwise `r` is settled.
    pub(crate) fn group_closed(&self, r: std::result::Result<NcclStatus, NcclError>) -> Result<()> {
        self.fault.group_open.store(false, Ordering::Release);
        let deferred = self
            .fault
            .deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(why) = deferred {
            self.abort(why);
            return Err(self.fault.aborted_error());
        }
        self.settled(Call::GroupEnd, r)
    }

    /// Another rank's call failed (its notice arrived): abort here too.
    fn fail_there(&self, from: i32, call: Call, code: i64) -> Error {
        let what = format!(
            "{} failed on rank {from} ({})",
            call.name(),
            code_name(code)
        );
        self.abort(what.clone());
        Error::new(
            ErrorKind::Nccl,
            format!(
                "{what}; the NCCL communicator is aborted on every rank: make a new one (parlops_comm_create_nccl) to go on"
            ),
        )
    }

    /// NCCL's asynchronous state: Ok(true) while a non-blocking call is in progress, Ok(false) when
    /// complete, Err(code) when it failed.
    fn async_state(&self) -> std::result::Result<bool, i64> {
        if self.comm.is_null() || self.fault.aborted() {
            return Ok(false);
        }
        let mut raw: u32 = 0;
        let out = (&mut raw as *mut u32).cast::<sys::ncclResult_t>();
        let comm = self.comm;
        let rc = std::panic::catch_unwind(move || {
            // SAFETY: `comm` is live (not aborted: checked above); `out` points at `raw`, a live
            // local of the size of ncclResult_t (a C enum, 32 bits), read as an integer, so a code
            // this build does not know is no invalid enum value. A missing symbol panics into the
            // catch_unwind.
            unsafe { sys::ncclCommGetAsyncError(comm, out) }
        });
        match rc {
            Ok(sys::ncclResult_t::ncclSuccess) => match raw {
                0 => Ok(false),
                7 => Ok(true),
                c => Err(c as i64),
            },
            Ok(r) => Err(r as i64),
            Err(_) => Err(3),
        }
    }

    /// One look for failures while waiting: NCCL's asynchronous error, another rank's notice.
    fn watch(&self, call: Call) -> Result<bool> {
        let pending = self
            .async_state()
            .map_err(|code| self.fail_here(call, code))?;
        if let Some((from, c, code)) = self.fault.poll()? {
            return Err(self.fail_there(from, c, code));
        }
        Ok(pending)
    }

    /// The outcome of an NCCL call: complete (a non-blocking call's ncclInProgress waited out,
    /// watching for failures), or failed (every rank told, the communicator aborted).
    pub(crate) fn settled(
        &self,
        call: Call,
        r: std::result::Result<NcclStatus, NcclError>,
    ) -> Result<()> {
        match r {
            Ok(NcclStatus::InProgress) => {
                let mut spins = 0u32;
                while self.watch(call)? {
                    spins = spins.saturating_add(1);
                    if spins > 64 {
                        std::thread::yield_now();
                    }
                }
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => Err(self.fail_here(call, e.0 as i64)),
        }
    }

    /// Wait for `s`, which holds NCCL work of this communicator, by polling: it ends when the work
    /// is done, when NCCL reports an asynchronous error, or when another rank's notice arrives (the
    /// communicator is then aborted, its work on `s` finishes, and this returns the error).
    pub(crate) fn wait(&self, s: Stream) -> Result<()> {
        let mut spins = 0u32;
        loop {
            if gpu::query(s)? {
                return Ok(());
            }
            spins = spins.saturating_add(1);
            if spins.is_multiple_of(16)
                && let Err(e) = self.watch(Call::Async)
            {
                // aborted: the NCCL work left on `s` ends, and the stream with it
                let _ = gpu::sync(s);
                return Err(e);
            }
            if spins > 256 {
                std::thread::yield_now();
            }
        }
    }
}
