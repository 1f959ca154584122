//! Library-wide calls: status words, last error, version, MPI start/stop, the configuration report.

use std::ffi::{CString, c_char, c_int};
use std::sync::OnceLock;

use super::handles::{guard, opt_arg, parlops_comm, put_opt};
use super::last_error::last_error_ptr;
use super::types::parlops_status;
use crate::config;
use crate::error::ErrorKind;

/// Fixed English words for a `parlops_status` value (never NULL; values outside the enum give
/// "unknown status"). Takes an int so that any value is safe to pass.
#[unsafe(no_mangle)]
pub extern "C" fn parlops_status_string(status: c_int) -> *const c_char {
    // "NAME: words" for every error kind, from the kinds' table (src/error.rs), made once
    static TEXTS: OnceLock<Vec<CString>> = OnceLock::new();
    if status == parlops_status::PARLOPS_OK as c_int {
        return c"PARLOPS_OK: success".as_ptr();
    }
    let texts = TEXTS.get_or_init(|| {
        ErrorKind::ALL
            .iter()
            .map(|k| CString::new(format!("{}: {}", k.c_name(), k.name())).unwrap_or_default())
            .collect()
    });
    match ErrorKind::ALL.iter().position(|k| k.code() == status) {
        Some(i) => texts[i].as_ptr(),
        None => c"unknown status (not a parlops_status value)".as_ptr(),
    }
}

/// The message of this thread's most recent failed call (never NULL; valid until the next failing
/// call on this thread). It names the function, the argument and the values. Safe to call at any
/// time, also from an `atexit` handler or a thread-exit destructor: once this thread's storage is
/// gone it returns the newest message set in that state (by any thread; kept until the process ends).
#[unsafe(no_mangle)]
pub extern "C" fn parlops_last_error() -> *const c_char {
    std::panic::catch_unwind(last_error_ptr).unwrap_or(c"parlops: no message available".as_ptr())
}

/// Library version; any pointer may be NULL to skip that part.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_version(
    major: *mut c_int,
    minor: *mut c_int,
    patch: *mut c_int,
) -> parlops_status {
    guard("parlops_version", || {
        let (a, b, c) = config::version();
        // SAFETY: each of `major`, `minor`, `patch` is NULL or a writable int (header contract), as
        // `put_opt` requires.
        unsafe {
            for (p, v) in [(major, a), (minor, b), (patch, c)] {
                put_opt(p, v);
            }
        }
        Ok(())
    })
}

/// Whether this library keeps the ABI of the header of parlops `major`.`minor`.`patch` (pass the
/// header's PARLOPS_VERSION_* numbers, as the macro PARLOPS_CHECK_VERSION() does): the same major
/// version, and below 1.0 the same minor (every 0.x minor release may change the ABI; the soname
/// says so), from 1.0 a minor at least the header's. Patch releases add no function. Otherwise
/// PARLOPS_ERR_VERSION_MISMATCH, the message naming both versions and the library file loaded.
/// Not collective.
#[unsafe(no_mangle)]
pub extern "C" fn parlops_check_version(
    major: c_int,
    minor: c_int,
    patch: c_int,
) -> parlops_status {
    guard("parlops_check_version", || {
        crate::config::check_version((major, minor, patch), library_path())
    })
}

/// The file this library was loaded from (for messages).
fn library_path() -> String {
    let mut info: libc::Dl_info = empty_dl_info();
    let addr = parlops_check_version as *const libc::c_void;
    // SAFETY: `dladdr` reads the address of a function of this library and writes `info`, a valid
    // Dl_info; its strings point into the loader's tables, which live as long as the library.
    let found = unsafe { libc::dladdr(addr, &mut info) } != 0;
    if found && !info.dli_fname.is_null() {
        // SAFETY: `dli_fname` is a NUL-terminated path owned by the loader (checked non-NULL).
        unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    } else {
        "libparlops (path unknown)".into()
    }
}

fn empty_dl_info() -> libc::Dl_info {
    libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    }
}

/// Start MPI (`MPI_Init_thread`, FUNNELED) if it is not running yet. Optional: programs that call
/// `MPI_Init` themselves never need it. `argc`/`argv` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_init(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
) -> parlops_status {
    // SAFETY: `argc`/`argv` are NULL or the program's `main` arguments (header contract of
    // parlops_init), which is `comm::init`'s requirement.
    guard("parlops_init", || unsafe {
        crate::comm::init(argc, argv).map(|_| ())
    })
}

/// Finalise MPI only if `parlops_init` started it; otherwise do nothing. Destroy parlops objects first.
/// With the environment variable PARLOPS_LOG=finalize, first prints on rank 0 where the time of
/// every solve of the run went (the -log_view table added up over the solves): then collective over
/// MPI_COMM_WORLD while MPI runs (every rank must then call it, with the same PARLOPS_LOG).
#[unsafe(no_mangle)]
pub extern "C" fn parlops_finalize() -> parlops_status {
    guard("parlops_finalize", || {
        let log = crate::solver::log_view::at_finalize();
        crate::comm::finalize()?;
        log
    })
}

/// Human-readable configuration report: version, MPI library, CUDA/NCCL compiled in and found at run
/// time, environment settings read, and (when `comm` is not NULL) one line per rank. [collective over
/// `comm` when given]. Writes at most `len` bytes including the final NUL into `buf` (which may be
/// NULL when `len` is 0); `*needed` (may be NULL) gets the full length plus one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_config_report(
    comm: *const parlops_comm,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> parlops_status {
    guard("parlops_config_report", || {
        let pre = if buf.is_null() && len > 0 {
            Err(crate::err!(
                NullArgument,
                "argument 'buf' is NULL but 'len' is {len}"
            ))
        } else {
            Ok(())
        };
        // SAFETY: `opt_arg` takes NULL as `None` and checks anything else against the registry
        // (live parlops_comm), holding it for this call.
        let text = match unsafe { opt_arg(comm, "comm")? } {
            Some(c) => {
                // this rank's argument checks agreed before the report's collective
                c.inner.agree(pre)?;
                crate::report::report(&c.inner)?
            }
            None => {
                pre?;
                crate::report::process_report()
            }
        };
        // SAFETY: `len` > 0 means `buf` is not NULL (`pre` above, returned or agreed before this
        // point); the rest is the header's contract, passed on.
        unsafe { write_text(&text, buf, len, needed) };
        Ok(())
    })
}

/// Copy `text` into the caller's `buf` of `len` bytes (at most `len - 1` of it and a NUL; nothing
/// when `len` is 0) and its full length plus one into `*needed` (when not NULL).
///
/// # Safety
/// When `len` > 0, `buf` is not NULL and has `len` writable bytes; `needed` is NULL or points to a
/// writable `size_t`.
pub(crate) unsafe fn write_text(text: &str, buf: *mut c_char, len: usize, needed: *mut usize) {
    let bytes = text.as_bytes();
    if len > 0 {
        let n = bytes.len().min(len - 1);
        // SAFETY: `buf` has `len` writable bytes (this fn's contract); `n` <= `len - 1`, so the
        // copy and the NUL at `n` fit, and `text` is our own string, which cannot overlap the
        // caller's buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    if !needed.is_null() {
        // SAFETY: `needed` is not NULL (checked just above) and points to a writable `size_t`
        // (this fn's contract).
        unsafe { *needed = bytes.len() + 1 };
    }
}
