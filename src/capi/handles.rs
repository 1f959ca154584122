//! Handles, the panic boundary and argument checks (the thread-local last error: `last_error.rs`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::last_error::{FALLBACK, FALLBACK_FULL, set_last_error};
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
    /// Which distributed operator this is, the same number on every rank for the same operator:
    /// agreed at creation by the collective constructors (a serial every rank takes alike), derived
    /// from the parts by the local ones (compositions, diagonal, identity, zero). Collective calls
    /// compare it, so that ranks passing different operators fail together instead of entering
    /// different communication.
    pub(crate) ident: u64,
}

/// Run `f` inside the panic boundary; errors become a status and this thread's last message.
pub(crate) fn guard<F: FnOnce() -> Result<()>>(func: &'static str, f: F) -> parlops_status {
    let frame = enter_frame(func);
    let result = catch_unwind(AssertUnwindSafe(f));
    if let Some(id) = frame {
        leave_frame(id);
    }
    let status = match result {
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
    HypreOptions,
    Options,
    Prox,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Comm,
        Kind::Layout,
        Kind::Vec,
        Kind::Op,
        Kind::Solver,
        Kind::HypreOptions,
        Kind::Options,
        Kind::Prox,
    ];
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "parlops_comm",
            Kind::Layout => "parlops_layout",
            Kind::Vec => "parlops_vec",
            Kind::Op => "parlops_op",
            Kind::Solver => "parlops_solver",
            Kind::HypreOptions => "parlops_hypre_options",
            Kind::Options => "parlops_options",
            Kind::Prox => "parlops_prox",
        }
    }
}

/// A type handed to C as an opaque handle.
pub(crate) trait Handle {
    const KIND: Kind;
    /// Record the serial agreed by a collective constructor (operators keep it as their identity).
    fn agreed_serial(&mut self, _serial: u64) {}
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
    fn agreed_serial(&mut self, serial: u64) {
        self.ident = crate::comm::list_hash(&[0x0c01, serial as i64], 0);
    }
}

/// The serial of the next object a collective constructor makes on this process; every rank of the
/// constructor's communicator takes the largest of theirs, so that the object gets the same serial
/// on every rank.
static SERIAL: AtomicU64 = AtomicU64::new(1);

// A handle's value is not an address: it is a 48-bit serial number that is not given out twice
// before 2^48 handles have been made (years of creating ten million a second), with its type and a
// tag in the 16 high bits, where no user-space address on Linux lies; the registry maps it to the
// object. So a destroyed handle stays recognisably destroyed however many objects come after it,
// and a pointer parlops never handed out is never mistaken for one.
const TAG: u64 = 0x7A5;
const TAG_SHIFT: u32 = 52;
const KIND_SHIFT: u32 = 48;
const SERIAL_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// A hold on a live handle by a call that has not returned (its frame): `excl` for the handles it
/// may write (`arg_mut`).
struct Hold {
    frame: u64,
    excl: bool,
    func: &'static str,
}

struct Entry {
    kind: Kind,
    /// The boxed object.
    ptr: usize,
    /// Calls (frames) using it now: while any holds it, it cannot be destroyed, and a call that would
    /// write it (or read it while another call writes it) is refused, not allowed to alias it.
    holds: Vec<Hold>,
    /// Lent to a callback for the length of the call (the iterate monitor's x and r): parlops frees it.
    lent: bool,
}

/// A hasher for the registry's keys (serial numbers with constant high bits): one multiplication.
#[derive(Default)]
struct SerialHasher(u64);

impl std::hash::Hasher for SerialHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

struct Registry {
    live: HashMap<u64, Entry, std::hash::BuildHasherDefault<SerialHasher>>,
    /// The next serial number.
    next: u64,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    // a panic while the lock is held leaves the map consistent (each update is one insert/remove)
    let mut g = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let reg = g.get_or_insert_with(|| Registry {
        live: HashMap::default(),
        next: 1,
    });
    f(reg)
}

fn handle_value(kind: Kind, serial: u64) -> u64 {
    (TAG << TAG_SHIFT) | ((kind as u64) << KIND_SHIFT) | serial
}

/// The type and serial a value would have if parlops made it (it may be destroyed since).
fn decode(v: u64) -> Option<(Kind, u64)> {
    if v >> TAG_SHIFT != TAG {
        return None;
    }
    let k = ((v >> KIND_SHIFT) & 0xF) as usize;
    Kind::ALL.get(k).map(|&kind| (kind, v & SERIAL_MASK))
}

// ---- frames: each exported call (each `guard`) is a frame; the handles it borrows are held by it
// until it returns

thread_local! {
    /// This thread's running calls, innermost last, and the handles they hold.
    static FRAMES: RefCell<Frames> = const {
        RefCell::new(Frames {
            stack: Vec::new(),
            held: Vec::new(),
        })
    };
}
static FRAME_SEQ: AtomicU64 = AtomicU64::new(1);

/// The frames of one thread: (frame, function, where its holds start in `held`), and the handles
/// held, frame after frame (kept between calls: no allocation per call once warm).
struct Frames {
    stack: Vec<(u64, &'static str, usize)>,
    held: Vec<u64>,
}

/// Enter a frame for `func`; `None` when this thread's storage is already gone (then its borrows
/// hold nothing).
fn enter_frame(func: &'static str) -> Option<u64> {
    let id = FRAME_SEQ.fetch_add(1, Ordering::Relaxed);
    FRAMES
        .try_with(|f| {
            f.try_borrow_mut()
                .map(|mut f| {
                    let start = f.held.len();
                    f.stack.push((id, func, start));
                })
                .is_ok()
        })
        .ok()
        .filter(|ok| *ok)
        .map(|_| id)
}

/// Leave frame `id`: release its holds.
fn leave_frame(id: u64) {
    let _ = FRAMES.try_with(|f| {
        let Ok(mut f) = f.try_borrow_mut() else {
            return;
        };
        let Some(i) = f.stack.iter().rposition(|x| x.0 == id) else {
            return;
        };
        let start = f.stack[i].2;
        f.stack.truncate(i);
        if f.held.len() > start {
            with_registry(|reg| {
                for h in &f.held[start..] {
                    if let Some(e) = reg.live.get_mut(h) {
                        e.holds.retain(|x| x.frame != id);
                    }
                }
            });
            f.held.truncate(start);
        }
    });
}

/// The innermost frame of this thread and its function, if any.
fn current_frame() -> Option<(u64, &'static str)> {
    FRAMES
        .try_with(|f| {
            f.try_borrow()
                .ok()
                .and_then(|f| f.stack.last().map(|x| (x.0, x.1)))
        })
        .ok()
        .flatten()
}

/// Record that the innermost frame (`frame`) holds `v`.
fn record_hold(frame: u64, v: u64) {
    let _ = FRAMES.try_with(|f| {
        if let Ok(mut f) = f.try_borrow_mut()
            && f.stack.last().is_some_and(|x| x.0 == frame)
        {
            f.held.push(v);
        }
    });
}

/// The error for `p`, which is not NULL and not a live handle of type `T`.
fn invalid<T: Handle>(reg: &Registry, p: *const T, name: &str) -> Error {
    let v = p as u64;
    let what = match reg.live.get(&v) {
        Some(e) => format!("a {} handle", e.kind.name()),
        None => match decode(v) {
            Some((k, serial)) if serial < reg.next => {
                format!("a {} handle that was already destroyed", k.name())
            }
            _ => "not a handle parlops created".to_string(),
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

fn busy(name: &str, kind: Kind, by: &str, verb: &str) -> Error {
    Error::new(
        ErrorKind::Busy,
        format!(
            "argument '{name}' (a {}) is in use by {by}, which has not returned: it cannot be {verb} from inside that call (its callbacks) or from another thread while it runs",
            kind.name()
        ),
    )
}

/// Look up a live handle of type `T` and hold it for the current call (`excl`: it will be written).
/// Returns the object's address. Never reads `*p`.
fn borrow<T: Handle>(p: *const T, name: &str, excl: bool) -> Result<usize> {
    if p.is_null() {
        return Err(null(name));
    }
    let v = p as u64;
    let frame = current_frame();
    let r = with_registry(|reg| {
        let Some(e) = reg.live.get_mut(&v).filter(|e| e.kind == T::KIND) else {
            return Err(invalid(reg, p, name));
        };
        if let Some((id, func)) = frame {
            // holds of this same call do not conflict with each other (a call checks its own
            // arguments for aliasing); another call's do
            if let Some(h) = e.holds.iter().find(|h| h.frame != id && (h.excl || excl)) {
                let verb = if excl { "changed" } else { "read" };
                return Err(busy(name, e.kind, h.func, verb));
            }
            e.holds.push(Hold {
                frame: id,
                excl,
                func,
            });
        }
        Ok(e.ptr)
    })?;
    if let Some((id, _)) = frame {
        record_hold(id, v);
    }
    Ok(r)
}

/// Borrow a handle (checked against the registry: live and of type `T`; held until this call returns).
///
/// # Safety
/// The reference must not be used after the exported call (the `guard` frame) that took it returns,
/// and must not coexist with a mutable borrow of the same handle taken in the same call (holds of
/// one call do not conflict with each other: the call checks its own arguments for aliasing).
pub(crate) unsafe fn arg<'a, T: Handle>(p: *const T, name: &str) -> Result<&'a T> {
    let a = borrow(p, name, false)?;
    // SAFETY: `a` is the address of the live `Box<T>` that `register` recorded under this handle,
    // found by `borrow` with kind `T::KIND` (so it really is a `T`); `borrow` also recorded a
    // shared hold for this call, so `destroy` refuses the handle and no other call may write it
    // until this call returns. Keeping the reference within this call (and not aliasing it with an
    // `arg_mut` of the same handle) is our caller's side of the contract.
    Ok(unsafe { &*(a as *const T) })
}

/// A caller's array of `n` handles: `n` >= 0, and the array not NULL unless `n` is 0.
fn array_shape(n: std::ffi::c_int, null: bool, n_name: &str, name: &str) -> Result<()> {
    if n < 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{n_name}' is {n}; it must be >= 0"
        );
    }
    if n > 0 && null {
        crate::bail!(
            NullArgument,
            "argument '{name}' is NULL with {n_name} = {n}"
        );
    }
    Ok(())
}

/// Borrow the `n` handles of a caller's array (each checked as [`arg`], named `name[i]`); `n_name`
/// names the count in messages.
///
/// # Safety
/// `p`, when `n` > 0, points to `n` readable handle pointers; the references are used as [`arg`]'s.
pub(crate) unsafe fn arg_array<'a, T: Handle>(
    n: std::ffi::c_int,
    p: *const *const T,
    n_name: &str,
    name: &str,
) -> Result<Vec<&'a T>> {
    array_shape(n, p.is_null(), n_name, name)?;
    (0..n as usize)
        // SAFETY: `p` is not NULL when `n` > 0 (`array_shape` above) and the C caller promises `n`
        // readable handle pointers there (header contract); `i` < `n`. Each element is then checked
        // by `arg`, whose contract (the references stay within this call) passes to our caller.
        .map(|i| unsafe { arg(*p.add(i), &format!("{name}[{i}]")) })
        .collect()
}

/// Borrow an array of `n` distinct handles mutably (each checked as [`arg_mut`]; the same handle
/// twice is an error naming both positions).
///
/// # Safety
/// `p`, when `n` > 0, points to `n` readable handle pointers; the references are used as
/// [`arg_mut`]'s.
pub(crate) unsafe fn arg_array_mut<'a, T: Handle>(
    n: std::ffi::c_int,
    p: *const *mut T,
    n_name: &str,
    name: &str,
) -> Result<Vec<&'a mut T>> {
    array_shape(n, p.is_null(), n_name, name)?;
    // SAFETY: as above: `p` is not NULL when `n` > 0 (`array_shape`) and holds `n` readable
    // pointers by the header contract; `i` < `n`.
    let ptrs: Vec<*mut T> = (0..n as usize).map(|i| unsafe { *p.add(i) }).collect();
    for (i, a) in ptrs.iter().enumerate() {
        if !a.is_null()
            && let Some(j) = ptrs[..i].iter().position(|b| b == a)
        {
            crate::bail!(
                InvalidArgument,
                "{name}[{j}] and {name}[{i}] are the same handle: each output must be its own"
            );
        }
    }
    ptrs.into_iter()
        .enumerate()
        // SAFETY: each non-NULL pointer appears once in `ptrs` (duplicates refused just above), so
        // the `&mut` references `arg_mut` returns are distinct objects; `arg_mut` checks each
        // against the registry and holds it exclusively for this call, and our caller keeps them
        // within this call.
        .map(|(i, q)| unsafe { arg_mut(q, &format!("{name}[{i}]")) })
        .collect()
}

/// Does the handle at `p` appear in `list`? (For outputs that must not alias inputs.)
pub(crate) fn same_handle<T>(p: *const T, list: &[*const T]) -> Option<usize> {
    list.iter().position(|q| *q == p)
}

/// Borrow a handle mutably (checked as [`arg`]; no other running call may hold it).
///
/// # Safety
/// As [`arg`]: used only within the current exported call, and no other borrow of the same handle
/// taken in this call is used while this one lives.
pub(crate) unsafe fn arg_mut<'a, T: Handle>(p: *mut T, name: &str) -> Result<&'a mut T> {
    let a = borrow(p.cast_const(), name, true)?;
    // SAFETY: as in `arg`: `a` is the live boxed `T` registered under this handle (kind checked by
    // `borrow`), and `borrow` took an exclusive hold for this call, so no other running call can
    // read, write or destroy it until this call returns. Not aliasing it with another borrow of the
    // same handle in this call, and not keeping it past the call, is our caller's side of the
    // contract.
    Ok(unsafe { &mut *(a as *mut T) })
}

/// Borrow an optional handle: NULL gives `None`, anything else must be a live handle of type `T`.
///
/// # Safety
/// As [`arg`].
pub(crate) unsafe fn opt_arg<'a, T: Handle>(p: *const T, name: &str) -> Result<Option<&'a T>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: `p` is not NULL; `arg` checks it against the registry, and its contract passes to
        // our caller.
        unsafe { arg(p, name) }.map(Some)
    }
}

/// Check an output pointer (written only on success, after the work is done).
pub(crate) fn out_ok<T>(p: *mut T, name: &str) -> Result<()> {
    if p.is_null() { Err(null(name)) } else { Ok(()) }
}

/// Write an optional output (NULL means the caller does not want it).
///
/// # Safety
/// `p` is NULL or points to a writable `T` (the C caller's output), holding nothing to drop.
pub(crate) unsafe fn put_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: `p` is not NULL, and the C caller promises that a non-NULL output points to a
        // writable `T` (header contract, passed on by this fn's callers); every `T` written here is
        // a plain integer, float or pointer, so the assignment drops no old value.
        unsafe { *p = v };
    }
}

/// Register `v` and return its handle value.
fn register<T: Handle>(v: T, lent: bool) -> *mut T {
    let p = Box::into_raw(Box::new(v)) as usize;
    let h = with_registry(|reg| {
        // after 2^48 handles the serials start again, skipping live ones
        let mut serial = reg.next & SERIAL_MASK;
        while serial == 0 || reg.live.contains_key(&handle_value(T::KIND, serial)) {
            serial = (serial + 1) & SERIAL_MASK;
        }
        reg.next = serial + 1;
        let h = handle_value(T::KIND, serial);
        reg.live.insert(
            h,
            Entry {
                kind: T::KIND,
                ptr: p,
                holds: Vec::new(),
                lent,
            },
        );
        h
    });
    h as usize as *mut T
}

/// Hand a new object to C (and record it as a live handle).
pub(crate) fn give<T: Handle>(out: *mut *mut T, v: T) {
    let h = register(v, false);
    // SAFETY: every caller checks `out` with `out_ok` (not NULL) before the work is done, and the C
    // caller promises it points to a writable handle variable (header contract); a `*mut T` has no
    // drop.
    unsafe { *out = h };
}

/// Lend an object to C for the length of a callback (recorded as a live handle that the callback
/// cannot destroy); take it back with [`reclaim`].
pub(crate) fn lend<T: Handle>(v: T) -> *mut T {
    register(v, true)
}

/// Take back what [`lend`] gave; `None` when the callback still holds it in a call of its own that
/// has not returned (another thread) and it must be left alone.
pub(crate) unsafe fn reclaim<T: Handle>(p: *mut T) -> Option<T> {
    let ptr = with_registry(|reg| {
        let v = p as u64;
        match reg.live.get(&v) {
            Some(e) if e.kind == T::KIND && e.holds.is_empty() => {
                reg.live.remove(&v).map(|e| e.ptr)
            }
            _ => None,
        }
    })?;
    // SAFETY: `ptr` was just removed from the registry under its lock, found there with kind
    // `T::KIND` and no holds, so it is the `Box<T>` that `register` made, no running call has a
    // reference into it, and no later lookup can find it: it is taken back exactly once.
    Some(*unsafe { Box::from_raw(ptr as *mut T) })
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
    let mut made = agree_serial(comm, build())?;
    made.0.agreed_serial(made.1);
    give(out, made.0);
    Ok(())
}

/// [`Comm::agree`] on an object made by a collective constructor, with its serial: the largest of
/// the ranks' next serials (in the same allgather), taken by every rank. [collective]
pub(crate) fn agree_serial<T>(comm: &Comm, made: Result<T>) -> Result<(T, u64)> {
    let mine = SERIAL.load(Ordering::Relaxed);
    let (made, all) = comm.agree_carrying(made, mine as i64)?;
    let serial = all.iter().copied().max().unwrap_or(0) as u64;
    SERIAL.fetch_max(serial + 1, Ordering::Relaxed);
    Ok((made, serial))
}

/// `_destroy(&h)`: free and NULL; NULL handle is a no-op; a destroyed or foreign handle is
/// `PARLOPS_ERR_INVALID_HANDLE` (and `*h` is left as it was); a handle that a running call holds
/// (or lends to its callback) is `PARLOPS_ERR_BUSY` (and left alive).
///
/// # Safety
/// `h` is NULL or points to the C caller's readable and writable handle variable.
pub(crate) unsafe fn destroy<T: Handle>(h: *mut *mut T, name: &str) -> Result<()> {
    if h.is_null() {
        return Err(null(name));
    }
    // SAFETY: `h` is not NULL (checked above) and the C caller promises it points to a readable
    // handle variable (header contract).
    let p = unsafe { *h };
    if p.is_null() {
        return Ok(());
    }
    let ptr = with_registry(|reg| {
        let v = p as u64;
        let Some(e) = reg.live.get(&v).filter(|e| e.kind == T::KIND) else {
            return Err(invalid(reg, p.cast_const(), name));
        };
        if let Some(hd) = e.holds.first() {
            return Err(busy(name, e.kind, hd.func, "destroyed"));
        }
        if e.lent {
            return Err(Error::new(
                ErrorKind::Busy,
                format!(
                    "argument '{name}' (a {}) is lent to this callback by parlops, which frees it when the callback returns: do not destroy it",
                    e.kind.name()
                ),
            ));
        }
        // unregistered first: from here on no other call can borrow it
        Ok(reg.live.remove(&v).map(|e| e.ptr))
    })?;
    // SAFETY: as above: `h` is not NULL and points to the caller's handle variable, which this call
    // may write.
    unsafe { *h = std::ptr::null_mut() };
    // dropped without the lock held: this may run user callbacks that call parlops
    if let Some(a) = ptr {
        // SAFETY: `a` came out of the registry under its lock with kind `T::KIND`, no holds and not
        // lent: it is the `Box<T>` that `register` made, no running call holds a reference into it,
        // and removing the entry makes this the only owner, so it is freed once.
        drop(unsafe { Box::from_raw(a as *mut T) });
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
