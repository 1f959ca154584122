//! Library-wide calls: status words, last error, version, MPI start/stop, the configuration report.

use std::ffi::{c_char, c_int};

use super::handles::{guard, last_error_ptr, opt_arg, parlops_comm, put_opt};
use super::types::parlops_status;
use crate::config;

/// Fixed English words for a `parlops_status` value (never NULL; values outside the enum give
/// "unknown status"). Takes an int so that any value is safe to pass.
#[unsafe(no_mangle)]
pub extern "C" fn parlops_status_string(status: c_int) -> *const c_char {
    use parlops_status::*;
    const ALL: [parlops_status; 17] = [
        PARLOPS_OK,
        PARLOPS_ERR_NULL_ARGUMENT,
        PARLOPS_ERR_INVALID_ARGUMENT,
        PARLOPS_ERR_SIZE_MISMATCH,
        PARLOPS_ERR_DTYPE_MISMATCH,
        PARLOPS_ERR_LAYOUT_MISMATCH,
        PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
        PARLOPS_ERR_MEMORY_LOCATION,
        PARLOPS_ERR_NO_DEVICE,
        PARLOPS_ERR_MPI,
        PARLOPS_ERR_CUDA,
        PARLOPS_ERR_NCCL,
        PARLOPS_ERR_CALLBACK,
        PARLOPS_ERR_NOT_SUPPORTED,
        PARLOPS_ERR_OUT_OF_MEMORY,
        PARLOPS_ERR_INTERNAL,
        PARLOPS_ERR_INVALID_HANDLE,
    ];
    let Some(s) = ALL.iter().copied().find(|s| *s as c_int == status) else {
        return c"unknown status (not a parlops_status value)".as_ptr();
    };
    let text: &'static [u8] = match s {
        PARLOPS_OK => b"PARLOPS_OK: success\0",
        PARLOPS_ERR_NULL_ARGUMENT => b"PARLOPS_ERR_NULL_ARGUMENT: a required pointer argument was NULL\0",
        PARLOPS_ERR_INVALID_ARGUMENT => b"PARLOPS_ERR_INVALID_ARGUMENT: an argument has an invalid value\0",
        PARLOPS_ERR_SIZE_MISMATCH => b"PARLOPS_ERR_SIZE_MISMATCH: sizes that must match do not\0",
        PARLOPS_ERR_DTYPE_MISMATCH => b"PARLOPS_ERR_DTYPE_MISMATCH: objects have different element types\0",
        PARLOPS_ERR_LAYOUT_MISMATCH => b"PARLOPS_ERR_LAYOUT_MISMATCH: objects have incompatible layouts\0",
        PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS => {
            b"PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS: ranks passed different values to a collective call\0"
        }
        PARLOPS_ERR_MEMORY_LOCATION => b"PARLOPS_ERR_MEMORY_LOCATION: memory is not where it was declared to be\0",
        PARLOPS_ERR_NO_DEVICE => b"PARLOPS_ERR_NO_DEVICE: a GPU or NCCL was asked for and is not present\0",
        PARLOPS_ERR_MPI => b"PARLOPS_ERR_MPI: an MPI call failed\0",
        PARLOPS_ERR_CUDA => b"PARLOPS_ERR_CUDA: a CUDA call failed\0",
        PARLOPS_ERR_NCCL => b"PARLOPS_ERR_NCCL: an NCCL call failed\0",
        PARLOPS_ERR_CALLBACK => b"PARLOPS_ERR_CALLBACK: a user callback returned an error\0",
        PARLOPS_ERR_NOT_SUPPORTED => b"PARLOPS_ERR_NOT_SUPPORTED: not supported by this version\0",
        PARLOPS_ERR_OUT_OF_MEMORY => b"PARLOPS_ERR_OUT_OF_MEMORY: memory could not be allocated\0",
        PARLOPS_ERR_INTERNAL => b"PARLOPS_ERR_INTERNAL: internal error in parlops (please report)\0",
        PARLOPS_ERR_INVALID_HANDLE => {
            b"PARLOPS_ERR_INVALID_HANDLE: a handle is destroyed, of another type, or not from parlops\0"
        }
    };
    text.as_ptr().cast()
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
        unsafe {
            for (p, v) in [(major, a), (minor, b), (patch, c)] {
                put_opt(p, v);
            }
        }
        Ok(())
    })
}

/// Start MPI (`MPI_Init_thread`, FUNNELED) if it is not running yet. Optional: programs that call
/// `MPI_Init` themselves never need it. `argc`/`argv` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_init(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
) -> parlops_status {
    guard("parlops_init", || unsafe {
        crate::comm::init(argc, argv).map(|_| ())
    })
}

/// Finalise MPI only if `parlops_init` started it; otherwise do nothing. Destroy parlops objects first.
#[unsafe(no_mangle)]
pub extern "C" fn parlops_finalize() -> parlops_status {
    guard("parlops_finalize", || crate::comm::finalize().map(|_| ()))
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
        let text = match unsafe { opt_arg(comm, "comm")? } {
            Some(c) => crate::report::report(&c.inner)?,
            None => crate::report::process_report(),
        };
        if buf.is_null() && len > 0 {
            crate::bail!(NullArgument, "argument 'buf' is NULL but 'len' is {len}");
        }
        let bytes = text.as_bytes();
        if len > 0 {
            let n = bytes.len().min(len - 1);
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
            }
        }
        if !needed.is_null() {
            unsafe { *needed = bytes.len() + 1 };
        }
        Ok(())
    })
}
