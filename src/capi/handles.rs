//! Handles, the panic boundary, the thread-local last error and argument checks.

use std::alloc;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// Work vectors for `parlops_op_multadd` and `_multadd_adjoint`, allocated at first use.
    pub(crate) work: crate::op::apply::MultAddWork,
}

// ---- the last error: thread-local, with a process-wide fallback once this thread's storage is gone

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::new("no error").unwrap());
}

/// Messages set while this thread's storage was already destroyed (an `atexit` handler, a pthread
/// key destructor). Kept for the life of the process so that the pointer `parlops_last_error`
/// returned stays valid; at most `FALLBACK_CAP` are kept, later ones share `FALLBACK_FULL`.
static FALLBACK: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static FALLBACK_COUNT: AtomicUsize = AtomicUsize::new(0);
const FALLBACK_CAP: usize = 256;
const FALLBACK_FULL: &CStr =
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

/// Run `f` inside the panic boundary; errors become a status and this thread's last message.
pub(crate) fn guard<F: FnOnce() -> Result<()>>(func: &'static str, f: F) -> parlops_status {
    let status = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return parlops_status::PARLOPS_OK,
        Ok(Err(e)) => {
            let kind = e.kind;
            let msg = e.context(func).msg;
            (kind.into(), msg)
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            // the payload's destructor could itself panic: leak it rather than unwind out of here
            std::mem::forget(p);
            (
                parlops_status::PARLOPS_ERR_INTERNAL,
                format!("{func}: internal error (please report): {what}"),
            )
        }
    };
    // recording the message must not unwind into C either
    if catch_unwind(|| set_last_error(&status.1)).is_err() {
        FALLBACK.store(FALLBACK_FULL.as_ptr().cast_mut(), Ordering::Release);
    }
    status.0
}

pub(crate) fn null(arg: &str) -> Error {
    Error::new(ErrorKind::NullArgument, format!("argument '{arg}' is NULL"))
}

// ---- handle registry: every handle parlops hands out is recorded with its type while it lives

/// The handle types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Comm,
    Layout,
    Vec,
    Op,
    Solver,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "parlops_comm",
            Kind::Layout => "parlops_layout",
            Kind::Vec => "parlops_vec",
            Kind::Op => "parlops_op",
            Kind::Solver => "parlops_solver",
        }
    }
}

/// A type handed to C as an opaque handle.
pub(crate) trait Handle {
    const KIND: Kind;
}
impl Handle for parlops_comm {
    const KIND: Kind = Kind::Comm;
}
impl Handle for parlops_layout {
    const KIND: Kind = Kind::Layout;
}
impl Handle for parlops_vec {
    const KIND: Kind = Kind::Vec;
}
impl Handle for parlops_op {
    const KIND: Kind = Kind::Op;
}

/// How many destroyed handles keep their memory (contents dropped, allocation not yet returned):
/// while an address sits here no new handle can be given it, so a use after destroy is reported as
/// such instead of reaching whatever object was allocated there next.
const QUARANTINE: usize = 4096;

struct Registry {
    /// Address -> type of every live handle.
    live: BTreeMap<usize, Kind>,
    /// Destroyed handles, oldest first: address, type, and the layout to free it with.
    dead: VecDeque<(usize, Kind, alloc::Layout)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: BTreeMap::new(),
    dead: VecDeque::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    // a panic while the lock is held leaves the maps consistent (each update is one insert/remove)
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The error for `p`, which is not NULL and not a live handle of type `T`.
fn invalid<T: Handle>(reg: &Registry, p: *const T, name: &str) -> Error {
    let a = p as usize;
    let what = match reg.live.get(&a) {
        Some(k) => format!("a {} handle", k.name()),
        None => match reg.dead.iter().find(|d| d.0 == a) {
            Some(d) => format!("a {} handle that was already destroyed", d.1.name()),
            None => "not a handle parlops created (or one destroyed long ago)".to_string(),
        },
    };
    Error::new(
        ErrorKind::InvalidHandle,
        format!(
            "argument '{name}' ({p:p}) is {what}; expected a live {}",
            T::KIND.name()
        ),
    )
}

/// Is `p` a live handle of type `T`? Never reads `*p`.
fn check<T: Handle>(p: *const T, name: &str) -> Result<()> {
    if p.is_null() {
        return Err(null(name));
    }
    let reg = registry();
    if reg.live.get(&(p as usize)) == Some(&T::KIND) {
        Ok(())
    } else {
        Err(invalid(&reg, p, name))
    }
}

/// Borrow a handle (checked against the registry: live and of type `T`).
pub(crate) unsafe fn arg<'a, T: Handle>(p: *const T, name: &str) -> Result<&'a T> {
    check(p, name)?;
    Ok(unsafe { &*p })
}

/// Borrow the `n` handles of a caller's array (each checked as [`arg`], named `name[i]`); `n_name`
/// names the count in messages.
pub(crate) unsafe fn arg_array<'a, T: Handle>(
    n: std::ffi::c_int,
    p: *const *const T,
    n_name: &str,
    name: &str,
) -> Result<Vec<&'a T>> {
    if n < 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{n_name}' is {n}; it must be >= 0"
        );
    }
    if n > 0 && p.is_null() {
        crate::bail!(
            NullArgument,
            "argument '{name}' is NULL with {n_name} = {n}"
        );
    }
    (0..n as usize)
        .map(|i| unsafe { arg(*p.add(i), &format!("{name}[{i}]")) })
        .collect()
}

/// [`arg_array`] for collective calls: the live handles of the array and its first error, so that
/// a rank with a bad entry can still find the communicator (from a good one) and agree the error
/// with the other ranks instead of returning alone.
pub(crate) unsafe fn arg_array_lenient<'a, T: Handle>(
    n: std::ffi::c_int,
    p: *const *const T,
    n_name: &str,
    name: &str,
) -> (Vec<&'a T>, Result<()>) {
    if n < 0 || (n > 0 && p.is_null()) {
        return (
            Vec::new(),
            unsafe { arg_array::<T>(n, p, n_name, name) }.map(|_| ()),
        );
    }
    let mut live = Vec::new();
    let mut first = Ok(());
    for i in 0..n as usize {
        match unsafe { arg(*p.add(i), &format!("{name}[{i}]")) } {
            Ok(h) => live.push(h),
            Err(e) => first = first.and(Err(e)),
        }
    }
    (live, first)
}

/// Borrow an array of `n` distinct handles mutably (each checked as [`arg_mut`]; the same handle
/// twice is an error naming both positions).
pub(crate) unsafe fn arg_array_mut<'a, T: Handle>(
    n: std::ffi::c_int,
    p: *const *mut T,
    n_name: &str,
    name: &str,
) -> Result<Vec<&'a mut T>> {
    let ptrs: Vec<*mut T> = {
        let shared = unsafe { arg_array(n, p.cast::<*const T>(), n_name, name)? };
        shared.iter().map(|r| (*r as *const T).cast_mut()).collect()
    };
    for (i, a) in ptrs.iter().enumerate() {
        if let Some(j) = ptrs[..i].iter().position(|b| b == a) {
            crate::bail!(
                InvalidArgument,
                "{name}[{j}] and {name}[{i}] are the same handle: each output must be its own"
            );
        }
    }
    Ok(ptrs.into_iter().map(|q| unsafe { &mut *q }).collect())
}

/// Does the handle at `p` appear in `list`? (For outputs that must not alias inputs.)
pub(crate) fn same_handle<T>(p: *const T, list: &[*const T]) -> Option<usize> {
    list.iter().position(|q| *q == p)
}

/// Borrow a handle mutably (checked as [`arg`]).
pub(crate) unsafe fn arg_mut<'a, T: Handle>(p: *mut T, name: &str) -> Result<&'a mut T> {
    check(p.cast_const(), name)?;
    Ok(unsafe { &mut *p })
}

/// Borrow an optional handle: NULL gives `None`, anything else must be a live handle of type `T`.
pub(crate) unsafe fn opt_arg<'a, T: Handle>(p: *const T, name: &str) -> Result<Option<&'a T>> {
    if p.is_null() {
        Ok(None)
    } else {
        unsafe { arg(p, name) }.map(Some)
    }
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

/// Hand a new object to C (and record it as a live handle).
pub(crate) fn give<T: Handle>(out: *mut *mut T, v: T) {
    let p = Box::into_raw(Box::new(v));
    // a quarantined address is still allocated, so `p` is never one of them
    registry().live.insert(p as usize, T::KIND);
    unsafe { *out = p };
}

/// Lend an object to C for the length of a callback (recorded as a live handle); take it back with
/// [`reclaim`].
pub(crate) fn lend<T: Handle>(v: T) -> *mut T {
    let p = Box::into_raw(Box::new(v));
    registry().live.insert(p as usize, T::KIND);
    p
}

/// Take back what [`lend`] gave; `None` when the callback destroyed it (then `p` is not touched).
pub(crate) unsafe fn reclaim<T: Handle>(p: *mut T) -> Option<T> {
    {
        let mut reg = registry();
        if reg.live.get(&(p as usize)) != Some(&T::KIND) {
            return None;
        }
        reg.live.remove(&(p as usize));
    }
    Some(*unsafe { Box::from_raw(p) })
}

/// The one construction idiom of the collective constructors (operators, vectors):
/// 1. this rank's argument checks (`pre`, and the output pointer) and the values every rank must pass
///    alike (`same`, e.g. the dtype code; a difference fails with `InconsistentAcrossRanks` naming
///    `what`) are agreed before anything collective runs, so that a bad argument on one rank fails
///    on every rank and no rank is left waiting;
/// 2. `build` runs on every rank (whatever it reads from the caller's arrays it hands to the
///    constructor's own agreement, which comes before the constructor's first collective);
/// 3. the outcome is agreed (a failure after the constructor's last collective, such as an
///    allocation, fails on every rank);
/// 4. the object is handed to C. [collective]
pub(crate) fn create_agreed<T: Handle>(
    comm: &Comm,
    out: *mut *mut T,
    pre: Result<()>,
    what: &str,
    same: &[i64],
    build: impl FnOnce() -> Result<T>,
) -> Result<()> {
    comm.agree_same(out_ok(out, "out").and(pre), what, same)?;
    let made = comm.agree(build())?;
    give(out, made);
    Ok(())
}

/// `_destroy(&h)`: free and NULL; NULL handle is a no-op; a destroyed or foreign handle is
/// `PARLOPS_ERR_INVALID_HANDLE` (and `*h` is left as it was).
pub(crate) unsafe fn destroy<T: Handle>(h: *mut *mut T, name: &str) -> Result<()> {
    if h.is_null() {
        return Err(null(name));
    }
    let p = unsafe { *h };
    if p.is_null() {
        return Ok(());
    }
    {
        // unregister first: from here on no other call can borrow it
        let mut reg = registry();
        if reg.live.get(&(p as usize)) != Some(&T::KIND) {
            return Err(invalid(&reg, p.cast_const(), name));
        }
        reg.live.remove(&(p as usize));
    }
    unsafe { *h = std::ptr::null_mut() };
    // drop the contents (this may run user callbacks that call parlops: no lock held), keep the memory
    unsafe { std::ptr::drop_in_place(p) };
    let evicted = {
        let mut reg = registry();
        reg.dead
            .push_back((p as usize, T::KIND, alloc::Layout::new::<T>()));
        if reg.dead.len() > QUARANTINE {
            reg.dead.pop_front()
        } else {
            None
        }
    };
    if let Some((a, _, layout)) = evicted {
        // SAFETY: allocated by Box::new with this layout, contents already dropped
        if layout.size() != 0 {
            unsafe { alloc::dealloc(a as *mut u8, layout) };
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
