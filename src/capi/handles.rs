//! Handles, the panic boundary, the thread-local last error and argument checks.

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::types::parlops_status;
use crate::comm::Comm;
use crate::error::{Error, ErrorKind, Result};
use crate::vector::{AnyVec, Layout};

/// A communicator (opaque): a private duplicate of the caller's MPI communicator.
pub struct parlops_comm {
    pub(crate) inner: Arc<Comm>,
}

/// A layout (opaque): how a global index range is split over the ranks of a communicator.
pub struct parlops_layout {
    pub(crate) inner: Arc<Layout>,
}

/// A distributed vector (opaque).
pub struct parlops_vec {
    pub(crate) inner: AnyVec,
}

/// A distributed linear operator (opaque).
pub struct parlops_op {
    pub(crate) inner: crate::op::AnyOp,
    /// Work vectors for `parlops_op_multadd` (range) and `_multadd_adjoint` (domain), allocated at first use.
    pub(crate) work: std::sync::Mutex<[Option<AnyVec>; 2]>,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::new("no error").unwrap());
}

pub(crate) fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Run `f` inside the panic boundary; errors become a status and this thread's last message.
pub(crate) fn guard<F: FnOnce() -> Result<()>>(func: &'static str, f: F) -> parlops_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => parlops_status::PARLOPS_OK,
        Ok(Err(e)) => {
            let e = e.context(func);
            set_last_error(&e.msg);
            e.kind.into()
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("{func}: internal error (please report): {what}"));
            parlops_status::PARLOPS_ERR_INTERNAL
        }
    }
}

pub(crate) fn null(arg: &str) -> Error {
    Error::new(ErrorKind::NullArgument, format!("argument '{arg}' is NULL"))
}

/// Borrow a handle or input pointer.
pub(crate) unsafe fn arg<'a, T>(p: *const T, name: &str) -> Result<&'a T> {
    unsafe { p.as_ref() }.ok_or_else(|| null(name))
}

/// Borrow a handle mutably.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T> {
    unsafe { p.as_mut() }.ok_or_else(|| null(name))
}

/// Check an output pointer (written only on success, after the work is done).
pub(crate) fn out_ok<T>(p: *mut T, name: &str) -> Result<()> {
    if p.is_null() { Err(null(name)) } else { Ok(()) }
}

/// Write an optional output (NULL means the caller does not want it).
pub(crate) unsafe fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        unsafe { *p = v };
    }
}

/// Hand a new object to C.
pub(crate) fn give<T>(out: *mut *mut T, v: T) {
    unsafe { *out = Box::into_raw(Box::new(v)) };
}

/// `_destroy(&h)`: free and NULL; NULL handle is a no-op.
pub(crate) unsafe fn destroy<T>(h: *mut *mut T, name: &str) -> Result<()> {
    if h.is_null() {
        return Err(null(name));
    }
    unsafe {
        if !(*h).is_null() {
            drop(Box::from_raw(*h));
            *h = std::ptr::null_mut();
        }
    }
    Ok(())
}

/// Validate an incoming enum value.
pub(crate) fn enum_arg<E>(v: i32, name: &str, range: &str, f: fn(i32) -> Option<E>) -> Result<E> {
    f(v).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("argument '{name}' is {v}, which is not a valid value ({range})"),
        )
    })
}
