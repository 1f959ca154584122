//! Distributed linear operators: the [`LinearOperator`] trait, the run-time typed [`AnyOp`], and the
//! catalogue: compositions ([`compose`]), identity/zero/diagonal ([`basic`]), user callbacks
//! ([`callback`]), distributed CSR ([`csr`]), block operators ([`block`]) and dense ([`dense`]).
//!
//! An operator maps vectors of its column layout to vectors of its row layout. `apply` and
//! `apply_adjoint` write into caller-given vectors and allocate nothing per call (compositions own
//! their work vectors). Implementations may assume that the layouts were checked ([`check_apply`]).

pub mod apply;
pub mod basic;
pub mod bjacobi;
pub mod block;
pub mod blockop;
pub mod callback;
pub mod compose;
pub mod csr;
pub mod dense;
pub mod fft;
pub mod fredholm;
pub mod halo;
pub mod lowrank;
pub mod mdc;
pub mod nsconv;
pub mod poisson;
pub mod stencil;
pub mod stencil_op;
pub mod summa;
pub mod tree;

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::Result;
use crate::memory::Location;
use crate::scalar::{DType, Scalar, c32, c64};
use crate::vector::{DistVector, Layout};

/// A linear operator A: vectors of layout `cols()` to vectors of layout `rows()`.
pub trait LinearOperator<T: Scalar>: Send + Sync {
    /// Layout of A x (the range).
    fn rows(&self) -> &Arc<Layout>;
    /// Layout of x (the domain).
    fn cols(&self) -> &Arc<Layout>;
    /// y = A x, for vectors in a memory this operator [handles](LinearOperator::handles). [collective]
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()>;
    /// x = A^H y, as [`LinearOperator::forward`]. [collective]
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()>;
    /// Can `forward`/`backward` take vectors in `loc` as they are? Host only unless said otherwise;
    /// vectors elsewhere are staged through a copy ([`LinearOperator::apply`]).
    fn handles(&self, loc: Location) -> bool {
        loc == Location::Host
    }
    /// y = A x, in any memory: directly when the operator handles the vectors' memory, else through
    /// copies in a memory it handles. [collective]
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        if self.handles(y.location()) && x.location() == y.location() {
            return self.forward(x, y);
        }
        staged(x, y, |loc| self.handles(loc), |a, b| self.forward(a, b))
    }
    /// x = A^H y, in any memory (see [`LinearOperator::apply`]). [collective]
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        if self.handles(x.location()) && x.location() == y.location() {
            return self.backward(y, x);
        }
        staged(y, x, |loc| self.handles(loc), |a, b| self.backward(a, b))
    }
    /// y = A x together with this rank's share of conj(x).y, as (re, im), for operators that can
    /// form both in one pass over the data (a host CSR matrix with equal row and column layouts:
    /// CG's q = A p with p.q); `None` when the caller must take the dot itself. [collective]
    fn apply_dot(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<Option<(f64, f64)>> {
        self.apply(x, y).map(|_| None)
    }
    /// n = A x for a pipelined method that overlaps a reduction with the product and, once the
    /// reduction is in, consumes the product row by row (pipelined CG: the product fused with the
    /// vector updates, so n never goes to memory).
    ///
    /// `ready(wait)` is the caller's reduction: polled with `wait = false` (`None`: not in yet),
    /// or waited for with `wait = true` (always `Some`); it is asked until it answers, and never
    /// again. `Some(true)`: `rows(start, values, xs)` is then called for consecutive ranges of
    /// this rank's rows from 0 to the end, each once, in order, with values[i] = (A x)[start + i]
    /// (the bits of [`LinearOperator::apply`]) and xs x's entries there, which the caller may
    /// overwrite (the product reads them no more: pipelined CG's new w goes into w itself); n's
    /// contents are then left unspecified. `Some(false)`: `rows` is not called and n = A x on
    /// return. On an error `ready` may not have been asked. The default forms n = A x first, then
    /// asks. Operators that can do better (a host CSR matrix: the rows that need no ghosts while
    /// the halo and the reduction move, then the rest a block at a time) override it. Host
    /// vectors only when streaming. [collective]
    fn apply_streamed(
        &self,
        x: &mut DistVector<T>,
        n: &mut DistVector<T>,
        ready: &mut dyn FnMut(bool) -> Result<Option<bool>>,
        rows: RowSink<'_, T>,
    ) -> Result<()> {
        streamed_by_apply(self, x, n, ready, rows)
    }
    /// ys[j] = A xs[j] for every j, reading the operator's data once for all of them where it can
    /// (a host CSR matrix: a sparse matrix times a multi-vector, each entry with the bits of
    /// [`LinearOperator::apply`] on its vector); the default applies it to each vector in turn
    /// ([`apply_each`]). [collective]
    fn apply_many(&self, xs: &[&DistVector<T>], ys: &mut [&mut DistVector<T>]) -> Result<()> {
        apply_each(self, xs, ys)
    }
    /// ys[j] = A xs[j] for every j ([`LinearOperator::apply_many`]), then this rank's sums of the
    /// pairs of xs against [xs, ys] (a block method's X^H [X, A X], each sum in whatever order is
    /// fastest: [`crate::vector::fused::gram`]'s), row-major (re, im) pairs; a failed product is
    /// this rank's error (the caller's reduction agrees it). Operators that can sum each block of
    /// rows while it is in the cache override it (a host CSR matrix); the default takes the two
    /// steps ([`apply_many_gram_by_steps`]). [collective]
    fn apply_many_gram(
        &self,
        xs: &[&DistVector<T>],
        ys: &mut [&mut DistVector<T>],
    ) -> Result<Vec<f64>> {
        apply_many_gram_by_steps(self, xs, ys)
    }
    /// Short description for messages ("CSR 100x100", "(A + B)", ...).
    fn describe(&self) -> String;
    /// For downcasting (e.g. to reach a CSR operator's arrays).
    fn as_any(&self) -> &dyn std::any::Any;
    /// d = diag(A), for square operators with equal row and column layouts.
    fn diagonal(&self, _d: &mut DistVector<T>) -> Result<()> {
        crate::bail!(NotSupported, "{} cannot give its diagonal", self.describe())
    }
    /// The operators this one applies or was computed from (a composition's terms, a
    /// preconditioner's source matrix): the walks of [`tree`] (versions, refresh, a running solve's
    /// pins) go through them.
    fn parts(&self) -> Vec<&Op<T>> {
        Vec::new()
    }
    /// Is this operator itself only real-linear (it reads or keeps the real parts of complex
    /// vectors: A(i x) != i A x, an FFT of a real model)? [`dottest`] then compares real parts;
    /// [`real_linear`] asks it of a whole operator tree.
    fn real_linear(&self) -> bool {
        false
    }
    /// This operator's own values version: moves on at every values update (a CSR matrix);
    /// [`tree::version`] sums it over an operator tree.
    fn values_version(&self) -> u64 {
        0
    }
    /// Is what this operator computed from its source out of date (the source's values changed
    /// since its last set-up)? Operators with no set-up: never.
    fn stale(&self) -> bool {
        false
    }
    /// Run this operator's set-up again on its source's current values (`force`: even when they did
    /// not change), keeping what the pattern alone decides; `Ok(true)` when a set-up ran. Failures
    /// are agreed, and the operator is then as before. Called by [`tree::refresh`] after its parts.
    /// [collective]
    fn refresh(&self, _force: bool) -> Result<bool> {
        Ok(false)
    }
    /// How many set-ups this operator has run (1 at construction for a preconditioner with one).
    fn setups(&self) -> u64 {
        0
    }
    /// What [`tree::view`] shows under the operator's description: its settings as the library
    /// that runs it received them (hypre's options by name), a nested solver's settings.
    fn view_details(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A shared operator.
pub type Op<T> = Arc<dyn LinearOperator<T>>;

/// The receiver of a streamed product's rows ([`LinearOperator::apply_streamed`]): (first row,
/// the product's values there, the operand's entries there).
pub type RowSink<'a, T> = &'a mut dyn FnMut(usize, &[T], &mut [T]);

/// [`LinearOperator::apply_many_gram`] in two steps: the products, then the pairs' sums.
/// [collective]
pub fn apply_many_gram_by_steps<T: Scalar, O: LinearOperator<T> + ?Sized>(
    op: &O,
    xs: &[&DistVector<T>],
    ys: &mut [&mut DistVector<T>],
) -> Result<Vec<f64>> {
    op.apply_many(xs, ys)?;
    let both: Vec<&DistVector<T>> = xs.iter().copied().chain(ys.iter().map(|y| &**y)).collect();
    crate::vector::fused::gram(xs, &both)
}

/// ys[j] = A xs[j], one [`LinearOperator::apply`] per vector, every one made on every rank whatever
/// failed before on this one (the first error is returned at the end). [collective]
pub fn apply_each<T: Scalar, O: LinearOperator<T> + ?Sized>(
    op: &O,
    xs: &[&DistVector<T>],
    ys: &mut [&mut DistVector<T>],
) -> Result<()> {
    if xs.len() != ys.len() {
        crate::bail!(
            SizeMismatch,
            "{} vectors applied into {} outputs",
            xs.len(),
            ys.len()
        );
    }
    let mut out = Ok(());
    for (x, y) in xs.iter().zip(ys.iter_mut()) {
        let e = op.apply(x, y);
        if out.is_ok() {
            out = e;
        }
    }
    out
}

/// [`LinearOperator::apply_streamed`] made of a whole product: n = A x, then the answer of
/// `ready(true)`, then (on `Some(true)`) all rows at once.
pub fn streamed_by_apply<T: Scalar, O: LinearOperator<T> + ?Sized>(
    op: &O,
    x: &mut DistVector<T>,
    n: &mut DistVector<T>,
    ready: &mut dyn FnMut(bool) -> Result<Option<bool>>,
    rows: RowSink<'_, T>,
) -> Result<()> {
    op.apply(x, n)?;
    if ready(true)? == Some(true) {
        if !(n.host_addressable() && x.host_addressable()) {
            crate::bail!(
                Internal,
                "rows of a product streamed from memory the host cannot reach"
            );
        }
        rows(0, n.local(), x.local_mut());
    }
    Ok(())
}

/// Apply `f` on copies of `inp`/`out` in a memory the operator handles, then copy the result back.
/// The copies' success is agreed over the communicator first, so a failure on one rank cannot leave
/// the others waiting inside the operator. [collective]
fn staged<T: Scalar>(
    inp: &DistVector<T>,
    out: &mut DistVector<T>,
    handles: impl Fn(Location) -> bool,
    f: impl FnOnce(&DistVector<T>, &mut DistVector<T>) -> Result<()>,
) -> Result<()> {
    let comm = out.layout().comm().clone();
    let prep = (|| {
        if inp.location() != out.location() {
            crate::bail!(
                MemoryLocation,
                "the operator's input vector is in {} memory and its output vector in {} memory; they must share one",
                inp.location().name(),
                out.location().name()
            );
        }
        let loc = Location::ALL
            .iter()
            .copied()
            .find(|&l| handles(l))
            .ok_or_else(|| crate::err!(NotSupported, "the operator handles no memory space"))?;
        let a = inp.to_location(loc)?;
        let b = DistVector::new_in(out.layout().clone(), loc)?;
        Ok((a, b))
    })();
    let (a, mut b) = comm.agree(prep)?;
    f(&a, &mut b).and_then(|_| out.copy_any(&b))
}

/// Apply with the locations checked: `x` and `y` in one memory space (for the C API's checks).
pub fn check_locations<T: Scalar>(
    x: &DistVector<T>,
    y: &DistVector<T>,
    xn: &str,
    yn: &str,
) -> Result<()> {
    y.check_location(x, xn, yn)
}

/// Check that `x` (domain) and `y` (range) fit `op` (`adjoint` swaps the roles).
pub fn check_apply<T: Scalar>(
    op: &dyn LinearOperator<T>,
    x: &DistVector<T>,
    y: &DistVector<T>,
    adjoint: bool,
) -> Result<()> {
    let (dom, ran) = if adjoint {
        (op.rows(), op.cols())
    } else {
        (op.cols(), op.rows())
    };
    let (xn, yn) = if adjoint { ("y", "x") } else { ("x", "y") };
    let what = |l: &Layout, v: &DistVector<T>, name: &str, role: &str| -> Result<()> {
        if l.compatible(v.layout()) {
            return Ok(());
        }
        let kind = if l.global_len() != v.layout().global_len()
            || l.local_lens() != v.layout().local_lens()
        {
            crate::error::ErrorKind::SizeMismatch
        } else {
            crate::error::ErrorKind::LayoutMismatch
        };
        Err(crate::error::Error::new(
            kind,
            format!(
                "argument '{name}' has global length {} split as {:?} ({}), but the operator's {role} layout \
                 ({}) has global length {} split as {:?} ({})",
                v.layout().global_len(),
                v.layout().local_lens(),
                v.layout().partition().name(),
                op.describe(),
                l.global_len(),
                l.local_lens(),
                l.partition().name()
            ),
        ))
    };
    what(dom, x, xn, if adjoint { "row" } else { "column" })?;
    what(ran, y, yn, if adjoint { "column" } else { "row" })?;
    y.check_location(x, xn, yn)
}

/// A work vector owned by an operator, one per memory space: the host one allocated at
/// construction, the others at first use in their memory.
pub(crate) struct Work<T: Scalar> {
    layout: Arc<Layout>,
    /// One slot per [`Location`] (in `Location::ALL` order).
    slots: Vec<Mutex<Option<DistVector<T>>>>,
}

/// A locked work vector (the operator marked busy on this thread meanwhile, see [`enter`]).
pub(crate) struct WorkGuard<'a, T: Scalar> {
    inner: MutexGuard<'a, Option<DistVector<T>>>,
    _busy: Busy,
}

impl<T: Scalar> std::ops::Deref for WorkGuard<'_, T> {
    type Target = DistVector<T>;
    fn deref(&self) -> &DistVector<T> {
        self.inner.as_ref().expect("allocated in Work::get")
    }
}
impl<T: Scalar> std::ops::DerefMut for WorkGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut DistVector<T> {
        self.inner.as_mut().expect("allocated in Work::get")
    }
}

thread_local! {
    /// What this thread is inside of (operators holding their work, callbacks running): keys of [`enter`].
    static BUSY: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Marks a key (an operator's address) busy on this thread until dropped.
pub(crate) struct Busy(usize);

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.with(|b| {
            let mut b = b.borrow_mut();
            if let Some(i) = b.iter().rposition(|&k| k == self.0) {
                b.remove(i);
            }
        });
    }
}

/// Enter `key` (an operator's address) on this thread: an error when this thread is already inside
/// it, that is when a user callback applies the operator it belongs to (or a composition holding
/// it). Reentrant use is not supported; failing here replaces a deadlock on the operator's work
/// vectors (or an endless recursion). Other threads still wait for the operator as before.
pub(crate) fn enter(key: usize, what: &dyn Fn() -> String) -> Result<Busy> {
    BUSY.with(|b| {
        let mut b = b.borrow_mut();
        if b.contains(&key) {
            crate::bail!(
                NotSupported,
                "operator {} applied from inside its own callback (reentrant use is not supported)",
                what()
            );
        }
        b.push(key);
        Ok(Busy(key))
    })
}

/// An operator's mutable state that it holds while it applies other operators (whose callbacks may
/// apply it again): a lock that refuses to be taken a second time by the thread that holds it
/// (an error naming the operator, as [`enter`] gives) instead of deadlocking on itself. Every
/// composite operator keeps such state behind one.
pub(crate) struct OpState<S> {
    inner: Mutex<S>,
}

/// The state of an [`OpState`], held (and the operator marked busy on this thread) until dropped.
pub(crate) struct OpStateLock<'a, S> {
    guard: std::sync::MutexGuard<'a, S>,
    _busy: Busy,
}

impl<S> OpState<S> {
    pub(crate) fn new(s: S) -> OpState<S> {
        OpState {
            inner: Mutex::new(s),
        }
    }
    /// The state, for this apply; `what` names the operator in the reentrance error.
    pub(crate) fn lock(&self, what: &dyn Fn() -> String) -> Result<OpStateLock<'_, S>> {
        let busy = enter(self as *const Self as *const u8 as usize, what)?;
        Ok(OpStateLock {
            guard: self.inner.lock().unwrap_or_else(|p| p.into_inner()),
            _busy: busy,
        })
    }
    /// The state without waiting, when no apply holds it (for descriptions).
    pub(crate) fn try_peek<R>(&self, f: impl FnOnce(&S) -> R) -> Option<R> {
        self.inner.try_lock().ok().map(|g| f(&g))
    }
}

impl<S> std::ops::Deref for OpStateLock<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.guard
    }
}
impl<S> std::ops::DerefMut for OpStateLock<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.guard
    }
}

impl<T: Scalar> Work<T> {
    pub(crate) fn new(layout: &Arc<Layout>) -> Result<Work<T>> {
        let slots = Location::ALL
            .iter()
            .map(|&l| {
                let v = if l == Location::Host {
                    Some(DistVector::new(layout.clone())?)
                } else {
                    None
                };
                Ok(Mutex::new(v))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Work {
            layout: layout.clone(),
            slots,
        })
    }
    /// The work vector in `loc`.
    pub(crate) fn get(&self, loc: Location) -> Result<WorkGuard<'_, T>> {
        let busy = enter(self as *const Self as *const u8 as usize, &|| {
            format!("with rows of global length {}", self.layout.global_len())
        })?;
        let slot = Location::ALL
            .iter()
            .position(|&l| l == loc)
            .and_then(|i| self.slots.get(i))
            .ok_or_else(|| crate::err!(Internal, "memory {} has no work vector", loc.name()))?;
        let mut g = slot.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            // first use in this memory, on every rank together: agreed, so that a failed
            // allocation on one rank cannot leave the others inside the next apply
            let v = DistVector::new_in(self.layout.clone(), loc);
            *g = Some(self.layout.comm().agree(v)?);
        }
        Ok(WorkGuard {
            inner: g,
            _busy: busy,
        })
    }
    /// The work vector in `like`'s memory, on `like`'s stream (so that work on both stays ordered on
    /// one stream).
    pub(crate) fn get_like(&self, like: &DistVector<T>) -> Result<WorkGuard<'_, T>> {
        let mut g = self.get(like.location())?;
        if g.caller_stream() != like.caller_stream() {
            g.set_stream(like.caller_stream())?;
        }
        Ok(g)
    }
}

/// A copy of a caller's array, its allocation fallible (`what` names it in the message).
pub fn copied<T: Copy>(src: &[T], what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    crate::error::try_reserve(&mut v, src.len(), what)?;
    v.extend_from_slice(src);
    Ok(v)
}

/// Deterministic pseudo-random values in [-1, 1) keyed by (seed, global index), so that a vector is
/// the same whatever the number of ranks and replicated copies agree.
pub fn random_fill<T: Scalar>(v: &mut DistVector<T>, seed: u64) {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    let unit = |z: u64| (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    let start = v.layout().local_start() as u64;
    let s = mix(seed);
    for (k, e) in v.local_mut().iter_mut().enumerate() {
        let g = start + k as u64;
        let a = mix(s ^ mix(2 * g));
        let b = mix(s ^ mix(2 * g + 1));
        *e = T::from_parts_lossy(unit(a), unit(b));
    }
}

/// Is `op`, or an operator it applies ([`LinearOperator::parts`]), only real-linear?
pub fn real_linear<T: Scalar>(op: &dyn LinearOperator<T>) -> bool {
    op.real_linear() || op.parts().iter().any(|p| real_linear(p.as_ref()))
}

/// The dot test: random x, y; returns |<A x, y> - <x, A^H y>| / max(|<A x, y>|, |<x, A^H y>|), of
/// the real parts where the operator is only real-linear ([`real_linear`]: its adjoint is that of
/// the real-linear map, for which only the real parts agree). [collective]
pub fn dottest<T: Scalar>(op: &dyn LinearOperator<T>, seed: u64) -> Result<f64> {
    let comm = op.rows().comm().clone();
    // allocations agreed before the applies (collective), so that one rank's failure stops all
    let vecs = comm.agree((|| {
        Ok((
            DistVector::<T>::new(op.cols().clone())?,
            DistVector::<T>::new(op.rows().clone())?,
            DistVector::<T>::new(op.rows().clone())?,
            DistVector::<T>::new(op.cols().clone())?,
        ))
    })())?;
    let (mut x, mut y, mut ax, mut ahy) = vecs;
    random_fill(&mut x, seed);
    random_fill(&mut y, seed.wrapping_add(1));
    // both applies run on every rank whatever the other gave; a local failure (or panic) is
    // carried into the agreement
    let f = crate::error::catch_panic("the operator", || op.apply(&x, &mut ax));
    let b = crate::error::catch_panic("the operator's adjoint", || op.apply_adjoint(&y, &mut ahy));
    comm.agree(f.and(b))?;
    let (ar, mut ai) = ax.dot(&y)?.to_parts();
    let (br, mut bi) = x.dot(&ahy)?.to_parts();
    if real_linear(op) {
        (ai, bi) = (0.0, 0.0);
    }
    let diff = (ar - br).hypot(ai - bi);
    let scale = ar.hypot(ai).max(br.hypot(bi));
    Ok(if scale == 0.0 { diff } else { diff / scale })
}

/// An operator of run-time element type (what a C handle holds).
#[derive(Clone)]
pub enum AnyOp {
    F32(Op<f32>),
    F64(Op<f64>),
    C64(Op<c32>),
    C128(Op<c64>),
}

/// `any_op!(op, a => expr)`: run `expr` with `a` bound to the typed `Op<T>`.
#[macro_export]
macro_rules! any_op {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            $crate::op::AnyOp::F32($x) => $body,
            $crate::op::AnyOp::F64($x) => $body,
            $crate::op::AnyOp::C64($x) => $body,
            $crate::op::AnyOp::C128($x) => $body,
        }
    };
}

/// Wrap a typed operator.
pub trait IntoAnyOp {
    fn into_any(self) -> AnyOp;
}
impl IntoAnyOp for Op<f32> {
    fn into_any(self) -> AnyOp {
        AnyOp::F32(self)
    }
}
impl IntoAnyOp for Op<f64> {
    fn into_any(self) -> AnyOp {
        AnyOp::F64(self)
    }
}
impl IntoAnyOp for Op<c32> {
    fn into_any(self) -> AnyOp {
        AnyOp::C64(self)
    }
}
impl IntoAnyOp for Op<c64> {
    fn into_any(self) -> AnyOp {
        AnyOp::C128(self)
    }
}

impl AnyOp {
    pub fn dtype(&self) -> DType {
        match self {
            AnyOp::F32(_) => DType::F32,
            AnyOp::F64(_) => DType::F64,
            AnyOp::C64(_) => DType::C64,
            AnyOp::C128(_) => DType::C128,
        }
    }
    pub fn rows(&self) -> &Arc<Layout> {
        any_op!(self, a => a.rows())
    }
    pub fn cols(&self) -> &Arc<Layout> {
        any_op!(self, a => a.cols())
    }
    pub fn describe(&self) -> String {
        any_op!(self, a => a.describe())
    }
    /// The typed operator, when `T` is this operator's element type.
    pub fn typed<T: Scalar>(&self) -> Option<Op<T>> {
        let any: Box<dyn std::any::Any> = any_op!(self, a => Box::new(a.clone()));
        any.downcast::<Op<T>>().ok().map(|b| *b)
    }
}
