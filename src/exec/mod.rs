//! The executor: where a vector's entries live (allocation, copies, streams and their ordering) and
//! how each step runs on them (the vector kernels, the local parts of reductions, the fused passes
//! of the solvers, the CSR products), in the spirit of Ginkgo's executors. Each step is declared
//! once, in [`Backend`], and implemented per backend: [`host`] (loops over this rank's slices) and
//! [`cuda`] (kernels from `src/gpu/kernels.cu`, queued on a CUDA stream). A backend that lacks a
//! step does not compile.
//!
//! Vector, operator, solver and eigensolver code calls the step functions of this module and never
//! asks where memory lives: the choice of backend is made here, by [`on!`], and nowhere else. Host
//! code that needs this rank's entries as a slice (gathers, assembly, host-only operators) asks
//! `DistVector::host_slice`, which a backend without host-addressable memory answers with nothing;
//! the caller then works on a host copy (`DistVector::staged`). Steps over two sets: [`multi`].
//! This module names no vector, operator or solver type: its steps work on [`Part`]s (this rank's
//! entries and their executor), and a CSR operator reaches the backends as a [`Sparse`] view.
//! Adding a backend is the recipe in `docs/architecture.md` ("Add a backend").

pub(crate) mod cuda;
pub(crate) mod host;
pub mod multi;
pub mod ops;

pub use host::PipeRows;

use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::{HostBuf, Location};
use crate::scalar::Scalar;
use ops::NormKind;

/// A vector's executor: its backend and what orders the work on its entries.
#[derive(Clone)]
pub enum Exec {
    /// Host memory; work runs on the calling thread, in program order.
    Host,
    /// CUDA device memory; work is queued on a stream.
    Cuda(cuda::Place),
}

impl Exec {
    /// The executor for memory `loc` on a rank of node-local rank `node_rank` (the device is set
    /// up at first use, chosen from it).
    pub fn new(loc: Location, node_rank: i32) -> Result<Exec> {
        Ok(match loc {
            Location::Host => Exec::Host,
            Location::Cuda => Exec::Cuda(cuda::Place::new(node_rank)?),
        })
    }
    /// The memory space, as the C API names it.
    pub fn location(&self) -> Location {
        match self {
            Exec::Host => Location::Host,
            Exec::Cuda(_) => Location::Cuda,
        }
    }
    /// Can host code read and write the entries in place?
    pub fn host_addressable(&self) -> bool {
        matches!(self, Exec::Host)
    }
    /// The caller's stream work is ordered on, where the caller gave one.
    pub fn caller_stream(&self) -> Option<crate::gpu::Stream> {
        match self {
            Exec::Host => None,
            Exec::Cuda(p) => p.caller_stream(),
        }
    }
    /// Order the work on the caller's stream `s` (`None`: the backend's own ordering), after the
    /// work already queued.
    pub fn set_stream(&mut self, s: Option<crate::gpu::Stream>) -> Result<()> {
        match self {
            Exec::Host => crate::bail!(
                MemoryLocation,
                "argument 'v' is in host memory; a stream applies to PARLOPS_MEMORY_CUDA vectors only"
            ),
            Exec::Cuda(p) => p.set_stream(s),
        }
    }
}

/// A vector's entries on this rank: owned by parlops in its executor's memory, or the caller's.
pub enum Storage<T> {
    /// parlops' host buffer (see [`HostBuf`] for its alignment).
    Host(HostBuf<T>),
    /// The caller's array (host or device); the caller keeps it alive and frees it.
    Caller(NonNull<T>),
    /// Device memory allocated by parlops (freed on drop).
    Cuda(cuda::DevBuf<T>),
}

impl<T> Storage<T> {
    pub fn ptr(&self) -> *mut T {
        match self {
            Storage::Host(v) => v.as_ptr(),
            Storage::Caller(p) => p.as_ptr(),
            Storage::Cuda(d) => d.ptr(),
        }
    }
}

/// This rank's entries of a vector: their executor, their storage (parlops', or the caller's), and a
/// caller's array placed over it for a while (`parlops_vec_place_array`).
pub struct Part<T> {
    exec: Exec,
    base: Storage<T>,
    placed: Option<NonNull<T>>,
    len: usize,
}

// SAFETY: a part owns its entries (or holds the caller's array under the zero-copy promise of
// `caller`), like a Vec<T>; nothing in it is tied to a thread.
unsafe impl<T: Send> Send for Part<T> {}
// SAFETY: shared references only read the entries, as for a Vec<T>.
unsafe impl<T: Sync> Sync for Part<T> {}

impl<T: Scalar> Part<T> {
    /// `len` zeroed entries owned by parlops in `exec`'s memory.
    pub fn zeroed(exec: Exec, len: usize) -> Result<Part<T>> {
        let base = zeroed(&exec, len)?;
        Ok(Part {
            exec,
            base,
            placed: None,
            len,
        })
    }
    /// The caller's array of `len` entries in `exec`'s memory; nothing is copied.
    ///
    /// # Safety
    /// `ptr` must point to `len` entries of `T` in `exec`'s memory that outlive the part (or be
    /// dangling when `len` is 0).
    pub unsafe fn caller(exec: Exec, ptr: NonNull<T>, len: usize) -> Part<T> {
        Part {
            exec,
            base: Storage::Caller(ptr),
            placed: None,
            len,
        }
    }
    /// New zeroed entries like these: the same executor (and stream), owned by parlops.
    pub fn duplicate(&self) -> Result<Part<T>> {
        Part::zeroed(self.exec.clone(), self.len)
    }
    pub fn exec(&self) -> &Exec {
        &self.exec
    }
    pub fn exec_mut(&mut self) -> &mut Exec {
        &mut self.exec
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn location(&self) -> Location {
        self.exec.location()
    }
    pub fn host_addressable(&self) -> bool {
        self.exec.host_addressable()
    }
    /// Use the caller's array `p` (`None`: the part's own storage again).
    ///
    /// # Safety
    /// As for [`Part::caller`], for as long as it is placed.
    pub unsafe fn place(&mut self, p: Option<NonNull<T>>) {
        self.placed = p;
    }
    /// Does the part currently use memory owned by the caller?
    pub fn uses_caller_memory(&self) -> bool {
        self.placed.is_some() || matches!(self.base, Storage::Caller(_))
    }
    /// The address of the entries (the caller's, when wrapped or placed).
    pub fn ptr(&self) -> *mut T {
        match self.placed {
            Some(p) => p.as_ptr(),
            None => self.base.ptr(),
        }
    }
    /// The entries' address as a device address.
    pub fn dptr(&self) -> u64 {
        self.ptr() as usize as u64
    }
    /// The entries (host-addressable parts; any other gives an empty slice: its entries are reached
    /// through the backend's steps).
    pub fn local(&self) -> &[T] {
        debug_assert!(self.host_addressable(), "local() of a device vector");
        if !self.host_addressable() {
            return &[];
        }
        // SAFETY: host memory holding `len` entries (owned, or the caller's under the promise of
        // `caller`/`place`), borrowed with the part.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }
    /// The entries, writable (host-addressable parts; see [`Part::local`]).
    pub fn local_mut(&mut self) -> &mut [T] {
        debug_assert!(self.host_addressable(), "local_mut() of a device vector");
        if !self.host_addressable() {
            return &mut [];
        }
        // SAFETY: as in `local`, borrowed mutably with the part.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.len) }
    }
}

/// What a pass of single-reduction or pipelined CG ([`Backend::cg_sr_update`], [`Backend::pipe_update`]) does to the
/// direction p and to x, which only x's step reads. Every pass makes the direction from the new
/// residual and s: p_i = (r_(i+1) + a_i s_i) + b_i p_(i-1) (r_i = r_(i+1) + a_i s_i in exact
/// arithmetic), so that a pass one iteration later, which still holds r_(i+1) and s_i, forms it
/// with the same bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XStep<T> {
    /// p = p_i, x += a_i p_i.
    Now,
    /// p and x are left alone: x still lacks a_i p_i, which [`XStep::owed`] describes.
    Later,
    /// After a [`XStep::Later`] pass with (a0, b0): p_(i-1) formed from the r and s this pass
    /// replaces, then p_i, and x = (x + a0 p_(i-1)) + a_i p_i: the bits of two [`XStep::Now`]
    /// passes.
    Both(T, T),
}

impl<T: Scalar> XStep<T> {
    /// With `defer`, every other pass leaves p and x alone (both are read and written on every
    /// second iteration only), given the step x lacks before this pass; otherwise [`XStep::Now`].
    pub fn pass(defer: bool, owed: Option<(T, T)>) -> Self {
        match (defer, owed) {
            (false, _) => XStep::Now,
            (true, None) => XStep::Later,
            (true, Some((a0, b0))) => XStep::Both(a0, b0),
        }
    }

    /// The step x lacks after a pass with `alpha` and `beta`: (alpha, beta) after a
    /// [`XStep::Later`] pass, made by the next pass or by [`Backend::catch_up`].
    pub fn owed(self, alpha: T, beta: T) -> Option<(T, T)> {
        match self {
            XStep::Later => Some((alpha, beta)),
            XStep::Now | XStep::Both(..) => None,
        }
    }
}

/// One step of the executor, per backend. Sums come back as this rank's raw local values (the
/// caller takes the layout's share, [`crate::vector::share`]); device results come back to the
/// host (they end in MPI or NCCL and in the solvers' control flow). Vectors passed together have
/// been checked to share a layout and a memory space.
pub trait Backend {
    /// `n` zeroed entries in this backend's memory.
    fn zeroed<T: Scalar>(e: &Exec, n: usize) -> Result<Storage<T>>;
    /// Wait until the queued work on `v` is done.
    fn sync<T: Scalar>(v: &Part<T>) -> Result<()>;
    /// Wait for the queued work on `v` when it is ordered by parlops, not by a caller's stream (the
    /// C API calls this before returning, so callers see finished data).
    fn settle<T: Scalar>(v: &Part<T>) -> Result<()>;
    /// `dst` (host) = this rank's entries of `src`.
    fn download<T: Scalar>(dst: &mut [T], src: &Part<T>) -> Result<()>;
    /// This rank's entries of `dst` = `src` (host).
    fn upload<T: Scalar>(dst: &mut Part<T>, src: &[T]) -> Result<()>;
    /// y = x
    fn copy<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()>;
    fn fill<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()>;
    fn scale<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()>;
    fn conj<T: Scalar>(y: &mut Part<T>) -> Result<()>;
    /// y += a x
    fn axpy<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>) -> Result<()>;
    /// y = a x + b y
    fn axpby<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>, b: T) -> Result<()>;
    /// w = a x + y
    fn waxpy<T: Scalar>(w: &mut Part<T>, a: T, x: &Part<T>, y: &Part<T>) -> Result<()>;
    /// w = (conj x if `cx`) .* y
    fn pmult<T: Scalar>(w: &mut Part<T>, x: &Part<T>, y: &Part<T>, cx: bool) -> Result<()>;
    /// conj(x).y of each pair, as (re, im) pairs.
    fn dots<T: Scalar>(pairs: &[(&Part<T>, &Part<T>)]) -> Result<Vec<f64>>;
    /// conj(x).y of each pair as binned sums (re, im): the reproducible mode's (multi::dots_binned).
    fn dots_binned<T: Scalar>(p: &[(&Part<T>, &Part<T>)]) -> Result<Vec<crate::binned::Binned>>;
    /// This rank's partial of a norm (see [`NormKind::partial`]).
    fn norm_partial<T: Scalar>(x: &Part<T>, kind: NormKind) -> Result<(f64, ReduceOp)>;
    /// This rank's part of the scaled 2-norm (see [`crate::exec::ops::two_partial`]).
    fn two_partial<T: Scalar>(x: &Part<T>) -> Result<(f64, f64)>;
    /// Is an entry NaN or infinite?
    fn nonfinite<T: Scalar>(x: &Part<T>) -> Result<bool>;
    /// Sum per-rank partials over `comm` with the transport that suits `like`'s memory. [collective]
    fn allreduce_sum<T: Scalar>(
        comm: &Comm,
        local: Result<Vec<f64>>,
        n: usize,
        like: &Part<T>,
    ) -> Result<Vec<f64>>;

    // The fused passes of the solvers (`crate::vector::fused` says what each does).

    /// x += a p, r -= a q; |r|^2.
    fn cg_update<T: Scalar>(
        x: &mut Part<T>,
        a: T,
        p: &Part<T>,
        r: &mut Part<T>,
        q: &Part<T>,
    ) -> Result<f64>;
    /// r -= a q; |r|^2.
    fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64>;
    /// x += a p, then p = r + b p.
    fn cg_step<T: Scalar>(x: &mut Part<T>, a: T, p: &mut Part<T>, r: &Part<T>, b: T) -> Result<()>;
    /// Single-reduction CG's pass; |r|^2.
    #[allow(clippy::too_many_arguments)]
    fn cg_sr_update<T: Scalar>(
        x: &mut Part<T>,
        r: &mut Part<T>,
        p: &mut Part<T>,
        s: &mut Part<T>,
        w: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<f64>;
    /// The step a deferred pass left x lacking: p = (r + a s) + b p, x += a p.
    fn catch_up<T: Scalar>(
        x: &mut Part<T>,
        p: &mut Part<T>,
        r: &Part<T>,
        s: &Part<T>,
        owed: (T, T),
    ) -> Result<()>;
    /// Pipelined CG's pass after a whole product `n` = A w; [|r|^2, 0, re(w^H r), im(w^H r)].
    #[allow(clippy::too_many_arguments)]
    fn pipe_update<T: Scalar>(
        v: PipeSet<'_, T>,
        n: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<Vec<f64>>;
    /// [|r|^2, 0, re(w^H r), im(w^H r)].
    fn rr_wr<T: Scalar>(r: &Part<T>, w: &Part<T>) -> Result<Vec<f64>>;
    /// conj(v_i).w for every v_i, as (re, im) pairs.
    fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>>;
    /// w -= sum_i h_i v_i; the new |w|^2.
    fn maxpy_norm<T: Scalar>(w: &mut Part<T>, h: &[T], basis: &[&Part<T>]) -> Result<f64>;
    /// x += sum_i c_i v_i
    fn maxpy<T: Scalar>(x: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()>;

    /// y = A x, a CSR product
    fn csr_forward<T: Scalar>(m: &Sparse<'_, T>, x: &Part<T>, y: &mut Part<T>) -> Result<()>;
    /// x = A^H y
    fn csr_backward<T: Scalar>(m: &Sparse<'_, T>, y: &Part<T>, x: &mut Part<T>) -> Result<()>;
}

/// A distributed CSR operator as the backends see it: its host loops and arrays
/// ([`SparseHost`]), its halo plan, and the copies the backends keep of it ([`Resident`]).
pub struct Sparse<'a, T: Scalar> {
    pub host: &'a dyn SparseHost<T>,
    pub halo: &'a crate::comm::halo::HaloPlan,
    pub comm: &'a Comm,
    pub resident: &'a Resident<T>,
}

/// What a CSR operator gives the backends: its host products on this rank's entries (halo
/// included) and its two local blocks (diag, offd) as CSR arrays, for a backend that copies them.
pub trait SparseHost<T: Scalar> {
    /// y = A x on this rank's host entries. [collective]
    fn forward(&self, x: &[T], y: &mut [T]) -> Result<()>;
    /// x = A^H y on this rank's host entries. [collective]
    fn backward(&self, y: &[T], x: &mut [T]) -> Result<()>;
    /// `f` on the diag and offd blocks as CSR arrays (read while `f` runs: a values update waits).
    fn with_blocks(&self, f: &mut dyn FnMut([HostCsr<'_, T>; 2]) -> Result<()>) -> Result<()>;
    /// Every row of this rank, its entries in global column order (the reproducible mode's product
    /// on a backend that copies the matrix): (ptr, src, val, nloc), row i's entries ptr[i]..ptr[i +
    /// 1], entry k's operand x[src[k]] for src[k] < nloc, else the ghost src[k] - nloc. [local]
    #[allow(clippy::type_complexity)]
    fn ordered_rows(&self) -> Result<(Vec<i64>, Vec<i64>, Vec<T>, usize)>;
}

/// A local CSR block's arrays in host memory: row pointers, columns (32- or 64-bit bytes), values.
pub struct HostCsr<'a, T: Clone> {
    pub nrows: usize,
    pub indptr: std::borrow::Cow<'a, [u8]>,
    pub indices: std::borrow::Cow<'a, [u8]>,
    pub values: std::borrow::Cow<'a, [T]>,
    pub wide: bool,
    pub nnz: usize,
}

/// The copies of an operator the backends keep (made at a backend's first apply).
pub struct Resident<T> {
    pub(crate) cuda: std::sync::Mutex<Option<cuda::csr::DevCsr<T>>>,
}

impl<T> Resident<T> {
    /// Hold the copies while the operator's values change (`None` when a backend's apply holds them
    /// now: the change is refused, not waited for, so that two collective calls on one rank cannot
    /// wait for each other). Taken before the operator's own lock, as a backend's apply takes them.
    pub fn try_hold(&self) -> Option<Held<'_, T>> {
        match self.cuda.try_lock() {
            Ok(g) => Some(Held { cuda: g }),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(Held {
                cuda: p.into_inner(),
            }),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

/// The backends' copies of an operator, held ([`Resident::try_hold`]).
pub struct Held<'a, T> {
    cuda: std::sync::MutexGuard<'a, Option<cuda::csr::DevCsr<T>>>,
}

impl<T> Held<'_, T> {
    /// Forget the copies (the values changed): each backend makes its copy again at its next use.
    pub fn forget(&mut self) {
        *self.cuda = None;
    }
}

impl<T> Default for Resident<T> {
    fn default() -> Self {
        Resident {
            cuda: std::sync::Mutex::new(None),
        }
    }
}

/// The vectors of pipelined CG's update ([`Backend::pipe_update`]).
pub struct PipeSet<'a, T: Scalar> {
    pub x: &'a mut Part<T>,
    pub r: &'a mut Part<T>,
    pub w: &'a mut Part<T>,
    pub p: &'a mut Part<T>,
    pub s: &'a mut Part<T>,
    pub z: &'a mut Part<T>,
}

/// The one place that chooses a backend: `on!(v, step(args))` runs `step` of `v`'s backend, timed
/// as a vector pass while a solve records ([`crate::timing`]); `on!(@untimed v, ...)` leaves the
/// timing to its caller.
macro_rules! on {
    (@untimed $v:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        match $v.exec() {
            Exec::Host => <host::Host as Backend>::$f($($a),*),
            Exec::Cuda(_) => <cuda::Cuda as Backend>::$f($($a),*),
        }
    };
    ($v:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        crate::timing::timed(crate::timing::Phase::Vector, 0, || on!(@untimed $v, $f($($a),*)))
    };
}

/// The step functions: each runs the step on the backend of its first vector.
pub fn zeroed<T: Scalar>(e: &Exec, n: usize) -> Result<Storage<T>> {
    match e {
        Exec::Host => host::Host::zeroed(e, n),
        Exec::Cuda(_) => cuda::Cuda::zeroed(e, n),
    }
}
pub fn sync<T: Scalar>(v: &Part<T>) -> Result<()> {
    on!(v, sync(v))
}
pub fn settle<T: Scalar>(v: &Part<T>) -> Result<()> {
    on!(v, settle(v))
}
/// y = x, whatever the memory of each: within a backend its copy, across backends through the host.
pub fn transfer<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()> {
    if std::mem::discriminant(y.exec()) == std::mem::discriminant(x.exec()) {
        return on!(y, copy(y, x));
    }
    // between memories: a device copy
    let bytes = (x.len() * std::mem::size_of::<T>()) as u64;
    crate::timing::timed(crate::timing::Phase::Copy, bytes, || {
        if x.host_addressable() {
            return on!(@untimed y, upload(y, x.local()));
        }
        if y.host_addressable() {
            return on!(@untimed x, download(y.local_mut(), x));
        }
        let mut h = crate::error::try_vec(x.len(), T::zero(), "a host copy of a vector's entries")?;
        on!(@untimed x, download(&mut h, x))?;
        on!(@untimed y, upload(y, &h))
    })
}
pub fn fill<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
    on!(y, fill(y, a))
}
pub fn scale<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
    on!(y, scale(y, a))
}
pub fn conj<T: Scalar>(y: &mut Part<T>) -> Result<()> {
    on!(y, conj(y))
}
pub fn copy<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()> {
    on!(y, copy(y, x))
}
pub fn axpy<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>) -> Result<()> {
    on!(y, axpy(y, a, x))
}
pub fn axpby<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>, b: T) -> Result<()> {
    on!(y, axpby(y, a, x, b))
}
pub fn waxpy<T: Scalar>(w: &mut Part<T>, a: T, x: &Part<T>, y: &Part<T>) -> Result<()> {
    on!(w, waxpy(w, a, x, y))
}
pub fn pmult<T: Scalar>(w: &mut Part<T>, x: &Part<T>, y: &Part<T>, cx: bool) -> Result<()> {
    on!(w, pmult(w, x, y, cx))
}
pub fn dots<T: Scalar>(pairs: &[(&Part<T>, &Part<T>)]) -> Result<Vec<f64>> {
    match pairs.first() {
        None => Ok(Vec::new()),
        Some((x, _)) => on!(x, dots(pairs)),
    }
}
pub fn norm_partial<T: Scalar>(x: &Part<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
    on!(x, norm_partial(x, kind))
}
pub fn two_partial<T: Scalar>(x: &Part<T>) -> Result<(f64, f64)> {
    on!(x, two_partial(x))
}
pub fn nonfinite<T: Scalar>(x: &Part<T>) -> Result<bool> {
    on!(x, nonfinite(x))
}
pub fn allreduce_sum<T: Scalar>(
    comm: &Comm,
    local: Result<Vec<f64>>,
    n: usize,
    like: &Part<T>,
) -> Result<Vec<f64>> {
    // the reduction times itself (comm)
    on!(@untimed like, allreduce_sum(comm, local, n, like))
}
pub fn cg_update<T: Scalar>(
    x: &mut Part<T>,
    a: T,
    p: &Part<T>,
    r: &mut Part<T>,
    q: &Part<T>,
) -> Result<f64> {
    on!(x, cg_update(x, a, p, r, q))
}
pub fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64> {
    on!(r, cg_residual(a, r, q))
}
pub fn cg_step<T: Scalar>(x: &mut Part<T>, a: T, p: &mut Part<T>, r: &Part<T>, b: T) -> Result<()> {
    on!(x, cg_step(x, a, p, r, b))
}
#[allow(clippy::too_many_arguments)]
pub fn cg_sr_update<T: Scalar>(
    x: &mut Part<T>,
    r: &mut Part<T>,
    p: &mut Part<T>,
    s: &mut Part<T>,
    w: &Part<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<f64> {
    on!(x, cg_sr_update(x, r, p, s, w, a, b, step))
}
pub fn catch_up<T: Scalar>(
    x: &mut Part<T>,
    p: &mut Part<T>,
    r: &Part<T>,
    s: &Part<T>,
    owed: (T, T),
) -> Result<()> {
    on!(x, catch_up(x, p, r, s, owed))
}
pub fn pipe_update<T: Scalar>(
    v: PipeSet<'_, T>,
    n: &Part<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<Vec<f64>> {
    on!(n, pipe_update(v, n, a, b, step))
}
pub fn rr_wr<T: Scalar>(r: &Part<T>, w: &Part<T>) -> Result<Vec<f64>> {
    on!(r, rr_wr(r, w))
}
pub fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>> {
    on!(w, mdot(basis, w))
}
pub fn maxpy_norm<T: Scalar>(w: &mut Part<T>, h: &[T], basis: &[&Part<T>]) -> Result<f64> {
    on!(w, maxpy_norm(w, h, basis))
}
pub fn maxpy<T: Scalar>(x: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()> {
    on!(x, maxpy(x, c, basis))
}
/// [`maxpy_norm`] then [`mdot`] (their bits), in one pass over the basis on the host.
pub fn maxpy_norm_mdot<T: Scalar>(
    w: &mut Part<T>,
    h: &[T],
    b: &[&Part<T>],
) -> Result<(f64, Vec<f64>)> {
    if matches!(w.exec(), Exec::Host) {
        let f = || host::multi::maxpy_norm_mdot(w, h, b);
        return crate::timing::timed(crate::timing::Phase::Vector, 0, f);
    }
    let n = maxpy_norm(w, h, b)?;
    Ok((n, mdot(b, w)?))
}
pub fn csr_forward<T: Scalar>(m: &Sparse<'_, T>, x: &Part<T>, y: &mut Part<T>) -> Result<()> {
    on!(y, csr_forward(m, x, y))
}
pub fn csr_backward<T: Scalar>(m: &Sparse<'_, T>, y: &Part<T>, x: &mut Part<T>) -> Result<()> {
    on!(x, csr_backward(m, y, x))
}

/// An object's copies in memories other than its own, made at first use in each (an operator's
/// diagonal, its work vector): one slot per [`Location`].
pub struct PerLocation<V> {
    slots: Vec<OnceLock<Arc<V>>>,
}

impl<V> Default for PerLocation<V> {
    fn default() -> Self {
        PerLocation {
            slots: Location::ALL.iter().map(|_| OnceLock::new()).collect(),
        }
    }
}

impl<V> PerLocation<V> {
    /// The copy in `loc`, made by `make` at first use (a failed `make` leaves the slot empty).
    pub fn get_or_try_init(
        &self,
        loc: Location,
        make: impl FnOnce() -> Result<V>,
    ) -> Result<&Arc<V>> {
        let i = Location::ALL
            .iter()
            .position(|&l| l == loc)
            .ok_or_else(|| crate::err!(Internal, "memory {} has no slot", loc.name()))?;
        let slot = &self.slots[i];
        if let Some(v) = slot.get() {
            return Ok(v);
        }
        let v = Arc::new(make()?);
        Ok(slot.get_or_init(|| v))
    }
}

/// A CUDA stream handle: what orders the work on a device vector a caller gives a stream.
pub use crate::gpu::Stream;

/// A caller's pointer `ptr` must be in memory `loc` (`MemoryLocation` otherwise, naming `what`);
/// without a device in use, every pointer counts as host memory.
pub fn check_pointer(ptr: *const std::ffi::c_void, loc: Location, what: &str) -> Result<()> {
    use crate::gpu::PointerKind;
    match (loc, crate::gpu::pointer_kind(ptr)) {
        (_, PointerKind::Managed) | (Location::Host, PointerKind::Host) => Ok(()),
        (_, PointerKind::OtherDevice(d)) => crate::bail!(
            MemoryLocation,
            "argument '{what}' ({ptr:p}) is memory of CUDA device {d}, not of this process's device"
        ),
        (Location::Host, PointerKind::Device) => crate::bail!(
            MemoryLocation,
            "argument '{what}' ({ptr:p}) is CUDA device memory, but the vector is PARLOPS_MEMORY_HOST"
        ),
        (Location::Cuda, PointerKind::Device) => Ok(()),
        (Location::Cuda, PointerKind::Host) => crate::bail!(
            MemoryLocation,
            "argument '{what}' ({ptr:p}) is not CUDA device memory, but the vector is PARLOPS_MEMORY_CUDA"
        ),
    }
}

/// Wait for all the work of the process's device (after a caller's device callback: any stream).
pub fn device_sync() -> Result<()> {
    crate::gpu::device_sync()
}

/// Is `p` memory of a device backend (device or managed memory) that this process can use? Host
/// pointers, pinned host memory included, are not. For the C layer's checks of arrays.
pub fn is_device_pointer(p: *const std::ffi::c_void) -> bool {
    crate::gpu::is_device_pointer(p)
}

/// Is `p` device memory host code cannot read (not managed memory), whether or not parlops set the
/// device up (hypre or MFEM may have)? For the C layer's checks of arrays that must be host memory.
pub fn is_device_only_pointer(p: *const std::ffi::c_void) -> bool {
    crate::gpu::is_device_only_pointer(p)
}

/// Is a device backend set up in this process?
pub fn device_in_use() -> bool {
    crate::gpu::current().is_some()
}

/// The device this rank uses or would use (the configuration report's per-rank line).
pub fn device_line(node_rank: i32) -> String {
    match crate::gpu::current() {
        Some(g) => format!("{} (in use)", g.describe()),
        None => crate::gpu::device_choice(node_rank).1,
    }
}

/// The backends' lines of the configuration report (drivers and libraries found at run time).
pub fn driver_report(nccl_compiled: bool) -> String {
    crate::gpu::report_lines(nccl_compiled, crate::comm::mpi_cuda_aware())
}
