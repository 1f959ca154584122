//! Thin checked wrappers over the raw MPI calls (rsmpi's `ffi`): MPI's state, the owned communicator
//! and starting/stopping MPI here, its communication calls in `mpi_calls.rs`; nothing above these two
//! files calls MPI.

use std::ffi::{CStr, c_char, c_int};

use mpi::ffi;

use crate::error::{Error, ErrorKind, Result};

/// Turn an MPI return code into a [`Result`], with MPI's own words.
pub(super) fn check(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let mut buf = vec![0 as c_char; 1024];
    let mut len: c_int = 0;
    // SAFETY: `buf` is a live buffer of 1024 chars, at least MPI_MAX_ERROR_STRING (512 in MPICH,
    // 256 in Open MPI), as `MPI_Error_string` requires (callable at any time, also before
    // `MPI_Init`); on success MPI wrote a NUL-terminated string into it, which `CStr::from_ptr`
    // reads within the buffer.
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
pub(super) fn alive() -> Result<()> {
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
    // SAFETY: `MPI_Initialized` and `MPI_Finalized` may be called at any time, also before
    // `MPI_Init` and after `MPI_Finalize`; they write one int each through pointers to the live
    // locals.
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
    // SAFETY: `buf` holds 8192 chars, at least MPI_MAX_LIBRARY_VERSION_STRING (8192 in MPICH, 256
    // in Open MPI); `MPI_Get_library_version` may be called before `MPI_Init` and, on success,
    // leaves a NUL-terminated string in it for `CStr::from_ptr`.
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
    // SAFETY: `MPI_Get_version` may be called at any time and writes two ints through pointers to
    // the live locals.
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
    // SAFETY: `buf` holds 1024 chars, at least MPI_MAX_PROCESSOR_NAME (128 in MPICH, 256 in Open
    // MPI); on success `MPI_Get_processor_name` leaves a NUL-terminated name in it for
    // `CStr::from_ptr`.
    unsafe {
        if ffi::MPI_Get_processor_name(buf.as_mut_ptr(), &mut len) != 0 {
            return "unknown".into();
        }
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

/// Run `f` with `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` and `MPI_COMM_SELF`, restoring the caller's
/// handlers afterwards.
///
/// # Safety
/// MPI is initialised and not finalised.
unsafe fn with_errors_returned(f: impl FnOnce() -> c_int) -> c_int {
    // SAFETY: MPI is running (our caller's contract; `dup` checks it). `MPI_Errhandler` is a plain
    // handle (pointer or int) for which all-zero bits are a valid placeholder, overwritten by
    // `MPI_Comm_get_errhandler`; each handler obtained is a new reference, set back on its
    // communicator and freed once after `f`, and the world/self handles are the rsmpi shim's
    // constants.
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
    pub(super) comm: ffi::MPI_Comm,
}

// SAFETY: an MPI communicator handle is an identifier, not memory that Rust could race on. Using
// one communicator from several threads at once requires MPI_THREAD_MULTIPLE, as with any MPI code;
// parlops itself makes MPI calls only from the thread that calls it.
unsafe impl Send for MpiComm {}
// SAFETY: as for `Send`: `&MpiComm` only hands the handle to MPI calls, which MPI itself makes
// thread-safe or not according to the thread level the program initialised it with (parlops_init
// asks for FUNNELED; concurrent calls from several threads are the caller's to avoid, as with
// any MPI code); no Rust memory is shared through it.
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
        // SAFETY: our caller promises `comm` is a valid communicator of this MPI (the contract of
        // `dup`), and MPI is running (checked above). `RSMPI_COMM_NULL` and `RSMPI_ERRORS_RETURN`
        // are the rsmpi shim's constants; `with_errors_returned` makes an invalid `comm` a return
        // code instead of an abort; `out` is a live local that `MPI_Comm_dup` writes, owned (and
        // freed on drop) by the `MpiComm` made from it before the next fallible call.
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
            // SAFETY: `self.comm` is a live communicator owned by `self` (freed only on drop); `r`
            // is a live local that `MPI_Comm_rank` writes.
            unsafe { ffi::MPI_Comm_rank(self.comm, &mut r) },
            "MPI_Comm_rank",
        )?;
        Ok(r)
    }

    pub fn size(&self) -> Result<i32> {
        let mut s = 0;
        check(
            // SAFETY: as above: `self.comm` is live, and `s` a live local that `MPI_Comm_size`
            // writes.
            unsafe { ffi::MPI_Comm_size(self.comm, &mut s) },
            "MPI_Comm_size",
        )?;
        Ok(s)
    }

    /// Rank and size among the processes sharing this node (`MPI_COMM_TYPE_SHARED`). [collective]
    pub fn node_rank_size(&self) -> Result<(i32, i32)> {
        // SAFETY: `self.comm` is live; `node` is a live local that `MPI_Comm_split_type` writes
        // with a new communicator, owned (and freed) by the `MpiComm` `n` at once; the type and
        // info arguments are the rsmpi shim's constants.
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
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        let (init, fin) = mpi_initialized();
        if init && !fin {
            // SAFETY: MPI is running (checked just above) and `self.comm` is the communicator this
            // `MpiComm` owns (from `MPI_Comm_dup`, `_split` or `_split_type`), freed once here.
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
    // SAFETY: MPI is neither running nor finalised (checked above), and our caller passes the
    // program's `argc`/`argv` or NULL (the `# Safety` contract), as `MPI_Init_thread` requires;
    // `provided` is a live local.
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
        // SAFETY: MPI was started by `init` and is running (checked just above); `MPI_Finalize` is
        // called at most once (`STARTED_BY_US` is swapped to false).
        check(unsafe { ffi::MPI_Finalize() }, "MPI_Finalize")?;
        return Ok(true);
    }
    Ok(false)
}
