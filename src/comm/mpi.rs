//! Thin checked wrappers over the raw MPI calls (rsmpi's `ffi`); nothing above this file calls MPI.

use std::ffi::{CStr, c_char, c_int, c_void};

use mpi::ffi;

use super::ReduceOp;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::MpiBase;

/// Turn an MPI return code into a [`Result`], with MPI's own words.
fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let mut buf = vec![0 as c_char; 1024];
    let mut len: c_int = 0;
    let text = unsafe {
        if ffi::MPI_Error_string(rc, buf.as_mut_ptr(), &mut len) == 0 {
            CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
        } else {
            "unknown MPI error".to_string()
        }
    };
    Err(Error::new(
        ErrorKind::Mpi,
        format!("{what} failed with MPI error {rc}: {text}"),
    ))
}

/// Every communication first checks that MPI is still running: a call after `MPI_Finalize` is an
/// error for the caller, not undefined behaviour inside MPI.
fn alive() -> Result<()> {
    let (init, fin) = mpi_initialized();
    if !init || fin {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "MPI is {}: parlops objects can only communicate while MPI runs",
                if fin {
                    "already finalised"
                } else {
                    "not initialised"
                }
            ),
        ));
    }
    Ok(())
}

/// (initialised, finalised) state of MPI.
pub fn mpi_initialized() -> (bool, bool) {
    let mut init: c_int = 0;
    let mut fin: c_int = 0;
    unsafe {
        ffi::MPI_Initialized(&mut init);
        ffi::MPI_Finalized(&mut fin);
    }
    (init != 0, fin != 0)
}

/// `MPI_Get_library_version` (callable before `MPI_Init`).
pub fn mpi_library_version() -> String {
    let mut buf = vec![0 as c_char; 8192];
    let mut len: c_int = 0;
    unsafe {
        if ffi::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) != 0 {
            return "unknown".into();
        }
        CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .trim()
            .to_string()
    }
}

/// `MPI_Get_version`: the MPI standard version the library implements.
pub fn mpi_standard_version() -> (i32, i32) {
    let (mut a, mut b) = (0, 0);
    unsafe {
        ffi::MPI_Get_version(&mut a, &mut b);
    }
    (a, b)
}

/// What the MPI library says about CUDA-aware transfers: Open MPI's `MPIX_Query_cuda_support()` when the
/// library has it (looked up at run time, so any MPI links), `None` when it does not say.
pub fn mpi_cuda_aware() -> Option<bool> {
    // SAFETY: dlsym on the global namespace; the symbol, when present, is `int f(void)`.
    unsafe {
        let name = c"MPIX_Query_cuda_support";
        let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        if f.is_null() {
            return None;
        }
        let f: extern "C" fn() -> libc::c_int = std::mem::transmute(f);
        Some(f() != 0)
    }
}

/// `MPI_Get_processor_name`, or "unknown".
pub fn processor_name() -> String {
    let mut buf = vec![0 as c_char; 1024];
    let mut len: c_int = 0;
    unsafe {
        if ffi::MPI_Get_processor_name(buf.as_mut_ptr(), &mut len) != 0 {
            return "unknown".into();
        }
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

/// Run `f` with `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` and `MPI_COMM_SELF`, restoring the caller's
/// handlers afterwards.
unsafe fn with_errors_returned(f: impl FnOnce() -> c_int) -> c_int {
    unsafe {
        let comms = [ffi::RSMPI_COMM_WORLD, ffi::RSMPI_COMM_SELF];
        let mut saved = Vec::with_capacity(2);
        for &c in &comms {
            let mut h: ffi::MPI_Errhandler = std::mem::zeroed();
            if ffi::MPI_Comm_get_errhandler(c, &mut h) == 0 {
                ffi::MPI_Comm_set_errhandler(c, ffi::RSMPI_ERRORS_RETURN);
                saved.push((c, h));
            }
        }
        let rc = f();
        for (c, mut h) in saved {
            ffi::MPI_Comm_set_errhandler(c, h);
            ffi::MPI_Errhandler_free(&mut h);
        }
        rc
    }
}

/// An owned MPI communicator (freed on drop while MPI is still running).
pub struct MpiComm {
    comm: ffi::MPI_Comm,
}

// SAFETY: an MPI communicator handle is an identifier, not memory that Rust could race on. Using
// one communicator from several threads at once requires MPI_THREAD_MULTIPLE, as with any MPI code;
// parlops itself makes MPI calls only from the thread that calls it.
unsafe impl Send for MpiComm {}
unsafe impl Sync for MpiComm {}

impl MpiComm {
    /// `MPI_Comm_dup` of `comm`, with `MPI_ERRORS_RETURN` on the duplicate.
    ///
    /// # Safety
    /// `comm` must be a valid communicator (or `MPI_COMM_NULL`, which is rejected).
    pub unsafe fn dup(comm: ffi::MPI_Comm) -> Result<MpiComm> {
        let (init, fin) = mpi_initialized();
        if !init || fin {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "MPI is {}: call MPI_Init (or parlops_init) before creating a communicator",
                    if fin {
                        "already finalised"
                    } else {
                        "not initialised"
                    }
                ),
            ));
        }
        unsafe {
            if comm == ffi::RSMPI_COMM_NULL {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "argument 'comm' is MPI_COMM_NULL",
                ));
            }
            // An invalid handle is reported through the error handler of MPI_COMM_WORLD (MPI 3) or
            // MPI_COMM_SELF (MPI 4), fatal by default: return codes there for the duration of the dup.
            let mut out: ffi::MPI_Comm = ffi::RSMPI_COMM_NULL;
            let rc = with_errors_returned(|| ffi::MPI_Comm_dup(comm, &mut out));
            check(rc, "MPI_Comm_dup").map_err(|e| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("argument 'comm' is not a valid communicator: {}", e.msg),
                )
            })?;
            let c = MpiComm { comm: out };
            check(
                ffi::MPI_Comm_set_errhandler(out, ffi::RSMPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler",
            )?;
            Ok(c)
        }
    }

    pub fn handle(&self) -> ffi::MPI_Comm {
        self.comm
    }

    pub fn rank(&self) -> Result<i32> {
        let mut r = 0;
        check(
            unsafe { ffi::MPI_Comm_rank(self.comm, &mut r) },
            "MPI_Comm_rank",
        )?;
        Ok(r)
    }

    pub fn size(&self) -> Result<i32> {
        let mut s = 0;
        check(
            unsafe { ffi::MPI_Comm_size(self.comm, &mut s) },
            "MPI_Comm_size",
        )?;
        Ok(s)
    }

    /// Rank and size among the processes sharing this node (`MPI_COMM_TYPE_SHARED`). [collective]
    pub fn node_rank_size(&self) -> Result<(i32, i32)> {
        unsafe {
            let mut node: ffi::MPI_Comm = ffi::RSMPI_COMM_NULL;
            check(
                ffi::MPI_Comm_split_type(
                    self.comm,
                    ffi::RSMPI_COMM_TYPE_SHARED,
                    0,
                    ffi::RSMPI_INFO_NULL,
                    &mut node,
                ),
                "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)",
            )?;
            let n = MpiComm { comm: node };
            Ok((n.rank()?, n.size()?))
        }
    }

    pub fn allreduce_f64(&self, vals: &[f64], op: ReduceOp) -> Result<Vec<f64>> {
        alive()?;
        let mut out = vec![0.0; vals.len()];
        let count = i32::try_from(vals.len())
            .map_err(|_| Error::new(ErrorKind::Internal, "allreduce too long"))?;
        unsafe {
            let mop = match op {
                ReduceOp::Sum => ffi::RSMPI_SUM,
                ReduceOp::Max => ffi::RSMPI_MAX,
            };
            check(
                ffi::MPI_Allreduce(
                    vals.as_ptr().cast(),
                    out.as_mut_ptr().cast(),
                    count,
                    ffi::RSMPI_DOUBLE,
                    mop,
                    self.comm,
                ),
                "MPI_Allreduce",
            )?;
        }
        Ok(out)
    }

    pub fn allgather_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        alive()?;
        let size = self.size()? as usize;
        let mut out = vec![0i64; vals.len() * size];
        let count = i32::try_from(vals.len())
            .map_err(|_| Error::new(ErrorKind::Internal, "allgather too long"))?;
        unsafe {
            check(
                ffi::MPI_Allgather(
                    vals.as_ptr().cast(),
                    count,
                    ffi::RSMPI_INT64_T,
                    out.as_mut_ptr().cast(),
                    count,
                    ffi::RSMPI_INT64_T,
                    self.comm,
                ),
                "MPI_Allgather",
            )?;
        }
        Ok(out)
    }

    pub fn bcast_i64(&self, buf: &mut [i64], root: i32) -> Result<()> {
        alive()?;
        unsafe {
            check(
                ffi::MPI_Bcast(
                    buf.as_mut_ptr().cast(),
                    buf.len() as c_int,
                    ffi::RSMPI_INT64_T,
                    root,
                    self.comm,
                ),
                "MPI_Bcast",
            )
        }
    }

    pub fn bcast_bytes(&self, buf: &mut [u8], root: i32) -> Result<()> {
        alive()?;
        unsafe {
            check(
                ffi::MPI_Bcast(
                    buf.as_mut_ptr().cast(),
                    buf.len() as c_int,
                    ffi::RSMPI_UINT8_T,
                    root,
                    self.comm,
                ),
                "MPI_Bcast",
            )
        }
    }

    pub(super) fn bcast_raw(
        &self,
        buf: *mut c_void,
        count: i32,
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        unsafe {
            check(
                ffi::MPI_Bcast(buf, count, base.datatype(), root, self.comm),
                "MPI_Bcast",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn allgatherv_raw(
        &self,
        send: *const c_void,
        scount: i32,
        recv: *mut c_void,
        counts: &[i32],
        displs: &[i32],
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        unsafe {
            check(
                ffi::MPI_Allgatherv(
                    send,
                    scount,
                    t,
                    recv,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    t,
                    self.comm,
                ),
                "MPI_Allgatherv",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn gatherv_raw(
        &self,
        send: *const c_void,
        scount: i32,
        recv: *mut c_void,
        counts: &[i32],
        displs: &[i32],
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        unsafe {
            check(
                ffi::MPI_Gatherv(
                    send,
                    scount,
                    t,
                    recv,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    t,
                    root,
                    self.comm,
                ),
                "MPI_Gatherv",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn scatterv_raw(
        &self,
        send: *const c_void,
        counts: &[i32],
        displs: &[i32],
        recv: *mut c_void,
        rcount: i32,
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        unsafe {
            check(
                ffi::MPI_Scatterv(
                    send,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    t,
                    recv,
                    rcount,
                    t,
                    root,
                    self.comm,
                ),
                "MPI_Scatterv",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn alltoallv_raw(
        &self,
        send: *const c_void,
        sc: &[i32],
        sd: &[i32],
        recv: *mut c_void,
        rc: &[i32],
        rd: &[i32],
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        unsafe {
            check(
                ffi::MPI_Alltoallv(
                    send,
                    sc.as_ptr(),
                    sd.as_ptr(),
                    t,
                    recv,
                    rc.as_ptr(),
                    rd.as_ptr(),
                    t,
                    self.comm,
                ),
                "MPI_Alltoallv",
            )
        }
    }
}

impl MpiComm {
    pub(super) fn isend_raw(
        &self,
        buf: *const c_void,
        count: i32,
        base: MpiBase,
        dest: i32,
        tag: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Isend(buf, count, base.datatype(), dest, tag, self.comm, &mut r),
                "MPI_Isend",
            )?;
            Ok(r)
        }
    }

    pub(super) fn irecv_raw(
        &self,
        buf: *mut c_void,
        count: i32,
        base: MpiBase,
        src: i32,
        tag: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Irecv(buf, count, base.datatype(), src, tag, self.comm, &mut r),
                "MPI_Irecv",
            )?;
            Ok(r)
        }
    }

    pub(super) fn allreduce_sum_raw(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: i32,
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        unsafe {
            check(
                ffi::MPI_Allreduce(
                    send,
                    recv,
                    count,
                    base.datatype(),
                    ffi::RSMPI_SUM,
                    self.comm,
                ),
                "MPI_Allreduce",
            )
        }
    }

    /// `MPI_Comm_split` (errors returned, not fatal, on the new communicator). [collective]
    pub fn split(&self, color: i32, key: i32) -> Result<MpiComm> {
        alive()?;
        unsafe {
            let mut out: ffi::MPI_Comm = ffi::RSMPI_COMM_NULL;
            check(
                ffi::MPI_Comm_split(self.comm, color, key, &mut out),
                "MPI_Comm_split",
            )?;
            let c = MpiComm { comm: out };
            check(
                ffi::MPI_Comm_set_errhandler(out, ffi::RSMPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler",
            )?;
            Ok(c)
        }
    }

    pub fn barrier(&self) -> Result<()> {
        alive()?;
        unsafe { check(ffi::MPI_Barrier(self.comm), "MPI_Barrier") }
    }

    /// Start `MPI_Iallreduce(SUM)` of doubles.
    ///
    /// # Safety
    /// Both buffers must stay alive and untouched until the request completes.
    pub(super) unsafe fn iallreduce_sum_f64(
        &self,
        send: *const f64,
        recv: *mut f64,
        n: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Iallreduce(
                    send.cast(),
                    recv.cast(),
                    n,
                    ffi::RSMPI_DOUBLE,
                    ffi::RSMPI_SUM,
                    self.comm,
                    &mut r,
                ),
                "MPI_Iallreduce",
            )?;
            Ok(r)
        }
    }

    pub fn alltoall_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        alive()?;
        let size = self.size()? as usize;
        if !vals.len().is_multiple_of(size.max(1)) {
            return Err(Error::new(
                ErrorKind::Internal,
                "alltoall: length not a multiple of the size",
            ));
        }
        let per = (vals.len() / size.max(1)) as c_int;
        let mut out = vec![0i64; vals.len()];
        unsafe {
            check(
                ffi::MPI_Alltoall(
                    vals.as_ptr().cast(),
                    per,
                    ffi::RSMPI_INT64_T,
                    out.as_mut_ptr().cast(),
                    per,
                    ffi::RSMPI_INT64_T,
                    self.comm,
                ),
                "MPI_Alltoall",
            )?;
        }
        Ok(out)
    }
}

/// `MPI_Waitall` on the requests (statuses ignored).
pub(super) fn waitall(reqs: &mut [ffi::MPI_Request]) -> Result<()> {
    if reqs.is_empty() {
        return Ok(());
    }
    unsafe {
        check(
            ffi::MPI_Waitall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            ),
            "MPI_Waitall",
        )
    }
}

/// `MPI_Testall` on the requests: whether all have completed (then they are freed and set to
/// `MPI_REQUEST_NULL`); drives MPI's progress either way.
pub(super) fn testall(reqs: &mut [ffi::MPI_Request]) -> Result<bool> {
    if reqs.is_empty() {
        return Ok(true);
    }
    let mut flag: c_int = 0;
    unsafe {
        check(
            ffi::MPI_Testall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            ),
            "MPI_Testall",
        )?;
    }
    Ok(flag != 0)
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        let (init, fin) = mpi_initialized();
        if init && !fin {
            unsafe {
                if self.comm != ffi::RSMPI_COMM_NULL {
                    ffi::MPI_Comm_free(&mut self.comm);
                }
            }
        }
    }
}

static STARTED_BY_US: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `MPI_Init_thread(FUNNELED)` unless MPI is already running; remembers whether we started it.
///
/// # Safety
/// `argc`/`argv` are either null or the program's `main` arguments, as `MPI_Init` requires.
pub unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> Result<bool> {
    let (init, fin) = mpi_initialized();
    if fin {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "MPI was already finalised; it cannot be started again",
        ));
    }
    if init {
        return Ok(false);
    }
    let mut provided: c_int = 0;
    unsafe {
        check(
            ffi::MPI_Init_thread(argc, argv, ffi::RSMPI_THREAD_FUNNELED, &mut provided),
            "MPI_Init_thread",
        )?;
    }
    STARTED_BY_US.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(true)
}

/// `MPI_Finalize`, only if [`init`] started MPI and it is still running. Returns whether it did.
pub fn finalize() -> Result<bool> {
    let (init, fin) = mpi_initialized();
    if STARTED_BY_US.swap(false, std::sync::atomic::Ordering::SeqCst) && init && !fin {
        check(unsafe { ffi::MPI_Finalize() }, "MPI_Finalize")?;
        return Ok(true);
    }
    Ok(false)
}
