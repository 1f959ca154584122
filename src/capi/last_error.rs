//! The thread-local last error of the C API, with a process-wide fallback once a thread's storage
//! is gone (`parlops_last_error`; set by the panic boundary, `handles::guard`).

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::new("no error").unwrap());
}

/// Messages set while this thread's storage was already destroyed (an `atexit` handler, a pthread
/// key destructor). Kept for the life of the process so that the pointer `parlops_last_error`
/// returned stays valid; at most `FALLBACK_CAP` are kept, later ones share `FALLBACK_FULL`.
pub(super) static FALLBACK: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static FALLBACK_COUNT: AtomicUsize = AtomicUsize::new(0);
const FALLBACK_CAP: usize = 256;
pub(super) const FALLBACK_FULL: &CStr =
    c"parlops: a call failed after this thread's storage was destroyed (too many such failures to keep each message)";
const FALLBACK_NONE: &CStr = c"no error";

pub(crate) fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    // `try_with` fails (instead of panicking) once the thread-local is destroyed; `try_borrow_mut`
    // cannot fail here (no borrow is held across calls) but is no reason to abort either.
    let mut slot = Some(c);
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut b) = e.try_borrow_mut() {
            *b = slot.take().unwrap_or_default();
        }
    });
    let Some(c) = slot else { return };
    if FALLBACK_COUNT.fetch_add(1, Ordering::Relaxed) < FALLBACK_CAP {
        FALLBACK.store(c.into_raw(), Ordering::Release);
    } else {
        FALLBACK.store(FALLBACK_FULL.as_ptr().cast_mut(), Ordering::Release);
    }
}

pub(crate) fn last_error_ptr() -> *const c_char {
    match LAST_ERROR.try_with(|e| e.try_borrow().map(|b| b.as_ptr()).ok()) {
        Ok(Some(p)) => p,
        // this thread's storage is gone: the newest message set in that state, by any thread
        _ => {
            let p = FALLBACK.load(Ordering::Acquire);
            if p.is_null() {
                FALLBACK_NONE.as_ptr()
            } else {
                p.cast_const()
            }
        }
    }
}
