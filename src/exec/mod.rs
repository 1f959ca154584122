//! The executor: where a vector's entries live (allocation, copies, streams and their ordering) and
//! how each step runs on them (the vector kernels, the local parts of reductions, the fused passes
//! of the solvers, the CSR products), in the spirit of Ginkgo's executors. Each step is declared
//! once, in [`Backend`], and implemented per backend: [`host`] (loops over this rank's slices) and
//! [`cuda`] (kernels from `src/gpu/kernels.cu`, queued on a CUDA stream). A backend that lacks a
//! step does not compile.
//!
//! Vector, operator, solver and eigensolver code calls the step functions of this module and never
//! asks where memory lives: the choice of backend is made here, by [`on!`], and nowhere else.
//! Host code that needs this rank's entries as a slice (gathers, assembly, host-only operators)
//! asks [`DistVector::host_slice`], which a backend without host-addressable memory answers with
//! nothing; the caller then works on a host copy ([`DistVector::staged`]).
//!
//! Adding a backend is the recipe in `docs/architecture.md` ("Add a backend").

pub(crate) mod cuda;
pub(crate) mod host;

use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::{HostBuf, Location};
use crate::op::csr::CsrOp;
use crate::scalar::Scalar;
use crate::vector::fused::XStep;
use crate::vector::{DistVector, Layout, NormKind};

/// A vector's executor: its backend and what orders the work on its entries.
#[derive(Clone)]
pub enum Exec {
    /// Host memory; work runs on the calling thread, in program order.
    Host,
    /// CUDA device memory; work is queued on a stream.
    Cuda(cuda::Place),
}

impl Exec {
    /// The executor for memory `loc` on this rank (the device is set up at first use).
    pub fn new(loc: Location, layout: &Layout) -> Result<Exec> {
        Ok(match loc {
            Location::Host => Exec::Host,
            Location::Cuda => Exec::Cuda(cuda::Place::new(layout)?),
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

/// One step of the executor, per backend. Sums come back as this rank's raw local values (the
/// caller takes the layout's share, [`crate::vector::share`]); device results come back to the
/// host (they end in MPI or NCCL and in the solvers' control flow). Vectors passed together have
/// been checked to share a layout and a memory space.
pub trait Backend {
    /// `n` zeroed entries in this backend's memory.
    fn zeroed<T: Scalar>(e: &Exec, n: usize) -> Result<Storage<T>>;
    /// Wait until the queued work on `v` is done.
    fn sync<T: Scalar>(v: &DistVector<T>) -> Result<()>;
    /// Wait for the queued work on `v` when it is ordered by parlops, not by a caller's stream (the
    /// C API calls this before returning, so callers see finished data).
    fn settle<T: Scalar>(v: &DistVector<T>) -> Result<()>;
    /// `dst` (host) = this rank's entries of `src`.
    fn download<T: Scalar>(dst: &mut [T], src: &DistVector<T>) -> Result<()>;
    /// This rank's entries of `dst` = `src` (host).
    fn upload<T: Scalar>(dst: &mut DistVector<T>, src: &[T]) -> Result<()>;
    /// y = x
    fn copy<T: Scalar>(y: &mut DistVector<T>, x: &DistVector<T>) -> Result<()>;
    fn fill<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()>;
    fn scale<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()>;
    fn conj<T: Scalar>(y: &mut DistVector<T>) -> Result<()>;
    /// y += a x
    fn axpy<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>) -> Result<()>;
    /// y = a x + b y
    fn axpby<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>, b: T) -> Result<()>;
    /// w = a x + y
    fn waxpy<T: Scalar>(
        w: &mut DistVector<T>,
        a: T,
        x: &DistVector<T>,
        y: &DistVector<T>,
    ) -> Result<()>;
    /// w = (conj x if `cx`) .* y
    fn pmult<T: Scalar>(
        w: &mut DistVector<T>,
        x: &DistVector<T>,
        y: &DistVector<T>,
        cx: bool,
    ) -> Result<()>;
    /// conj(x).y of each pair, as (re, im) pairs.
    fn dots<T: Scalar>(pairs: &[(&DistVector<T>, &DistVector<T>)]) -> Result<Vec<f64>>;
    /// This rank's partial of a norm (see [`NormKind::partial`]).
    fn norm_partial<T: Scalar>(x: &DistVector<T>, kind: NormKind) -> Result<(f64, ReduceOp)>;
    /// This rank's part of the scaled 2-norm (see [`crate::vector::ops::two_partial`]).
    fn two_partial<T: Scalar>(x: &DistVector<T>) -> Result<(f64, f64)>;
    /// Is an entry NaN or infinite?
    fn nonfinite<T: Scalar>(x: &DistVector<T>) -> Result<bool>;
    /// Sum per-rank partials over `comm` with the transport that suits `like`'s memory. [collective]
    fn allreduce_sum<T: Scalar>(
        comm: &Comm,
        local: Result<Vec<f64>>,
        n: usize,
        like: &DistVector<T>,
    ) -> Result<Vec<f64>>;

    // The fused passes of the solvers (`crate::vector::fused` says what each does).

    /// x += a p, r -= a q; |r|^2.
    fn cg_update<T: Scalar>(
        x: &mut DistVector<T>,
        a: T,
        p: &DistVector<T>,
        r: &mut DistVector<T>,
        q: &DistVector<T>,
    ) -> Result<f64>;
    /// r -= a q; |r|^2.
    fn cg_residual<T: Scalar>(a: T, r: &mut DistVector<T>, q: &DistVector<T>) -> Result<f64>;
    /// x += a p, then p = r + b p.
    fn cg_step<T: Scalar>(
        x: &mut DistVector<T>,
        a: T,
        p: &mut DistVector<T>,
        r: &DistVector<T>,
        b: T,
    ) -> Result<()>;
    /// Single-reduction CG's pass; |r|^2.
    #[allow(clippy::too_many_arguments)]
    fn cg_sr_update<T: Scalar>(
        x: &mut DistVector<T>,
        r: &mut DistVector<T>,
        p: &mut DistVector<T>,
        s: &mut DistVector<T>,
        w: &DistVector<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<f64>;
    /// The step a deferred pass left x lacking: p = (r + a s) + b p, x += a p.
    fn catch_up<T: Scalar>(
        x: &mut DistVector<T>,
        p: &mut DistVector<T>,
        r: &DistVector<T>,
        s: &DistVector<T>,
        owed: (T, T),
    ) -> Result<()>;
    /// Pipelined CG's pass after a whole product `n` = A w; [|r|^2, 0, re(w^H r), im(w^H r)].
    #[allow(clippy::too_many_arguments)]
    fn pipe_update<T: Scalar>(
        v: PipeSet<'_, T>,
        n: &DistVector<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<Vec<f64>>;
    /// [|r|^2, 0, re(w^H r), im(w^H r)].
    fn rr_wr<T: Scalar>(r: &DistVector<T>, w: &DistVector<T>) -> Result<Vec<f64>>;
    /// conj(v_i).w for every v_i, as (re, im) pairs.
    fn mdot<T: Scalar>(basis: &[&DistVector<T>], w: &DistVector<T>) -> Result<Vec<f64>>;
    /// w -= sum_i h_i v_i; the new |w|^2.
    fn maxpy_norm<T: Scalar>(
        w: &mut DistVector<T>,
        h: &[T],
        basis: &[&DistVector<T>],
    ) -> Result<f64>;
    /// x += sum_i c_i v_i
    fn maxpy<T: Scalar>(x: &mut DistVector<T>, c: &[T], basis: &[&DistVector<T>]) -> Result<()>;

    // The CSR products.

    /// y = A x
    fn csr_forward<T: Scalar>(
        op: &CsrOp<T>,
        x: &DistVector<T>,
        y: &mut DistVector<T>,
    ) -> Result<()>;
    /// x = A^H y
    fn csr_backward<T: Scalar>(
        op: &CsrOp<T>,
        y: &DistVector<T>,
        x: &mut DistVector<T>,
    ) -> Result<()>;
}

/// The vectors of pipelined CG's update ([`Backend::pipe_update`]).
pub struct PipeSet<'a, T: Scalar> {
    pub x: &'a mut DistVector<T>,
    pub r: &'a mut DistVector<T>,
    pub w: &'a mut DistVector<T>,
    pub p: &'a mut DistVector<T>,
    pub s: &'a mut DistVector<T>,
    pub z: &'a mut DistVector<T>,
}

/// The one place that chooses a backend: `on!(v, step(args))` runs `step` of `v`'s backend.
macro_rules! on {
    ($v:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        match $v.exec() {
            Exec::Host => <host::Host as Backend>::$f($($a),*),
            Exec::Cuda(_) => <cuda::Cuda as Backend>::$f($($a),*),
        }
    };
}

/// The step functions: each runs the step on the backend of its first vector.
pub fn zeroed<T: Scalar>(e: &Exec, n: usize) -> Result<Storage<T>> {
    match e {
        Exec::Host => host::Host::zeroed(e, n),
        Exec::Cuda(_) => cuda::Cuda::zeroed(e, n),
    }
}
pub fn sync<T: Scalar>(v: &DistVector<T>) -> Result<()> {
    on!(v, sync(v))
}
pub fn settle<T: Scalar>(v: &DistVector<T>) -> Result<()> {
    on!(v, settle(v))
}
/// y = x, whatever the memory of each: within a backend its copy, across backends through the host.
pub fn transfer<T: Scalar>(y: &mut DistVector<T>, x: &DistVector<T>) -> Result<()> {
    if std::mem::discriminant(y.exec()) == std::mem::discriminant(x.exec()) {
        return on!(y, copy(y, x));
    }
    if let Some(src) = x.host_slice() {
        return on!(y, upload(y, src));
    }
    if let Some(dst) = y.host_slice_mut() {
        return on!(x, download(dst, x));
    }
    let mut h = DistVector::new_in(x.layout().clone(), Location::Host)?;
    on!(x, download(h.local_mut(), x))?;
    on!(y, upload(y, h.local()))
}
pub fn fill<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()> {
    on!(y, fill(y, a))
}
pub fn scale<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()> {
    on!(y, scale(y, a))
}
pub fn conj<T: Scalar>(y: &mut DistVector<T>) -> Result<()> {
    on!(y, conj(y))
}
pub fn copy<T: Scalar>(y: &mut DistVector<T>, x: &DistVector<T>) -> Result<()> {
    on!(y, copy(y, x))
}
pub fn axpy<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>) -> Result<()> {
    on!(y, axpy(y, a, x))
}
pub fn axpby<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>, b: T) -> Result<()> {
    on!(y, axpby(y, a, x, b))
}
pub fn waxpy<T: Scalar>(
    w: &mut DistVector<T>,
    a: T,
    x: &DistVector<T>,
    y: &DistVector<T>,
) -> Result<()> {
    on!(w, waxpy(w, a, x, y))
}
pub fn pmult<T: Scalar>(
    w: &mut DistVector<T>,
    x: &DistVector<T>,
    y: &DistVector<T>,
    cx: bool,
) -> Result<()> {
    on!(w, pmult(w, x, y, cx))
}
pub fn dots<T: Scalar>(pairs: &[(&DistVector<T>, &DistVector<T>)]) -> Result<Vec<f64>> {
    match pairs.first() {
        None => Ok(Vec::new()),
        Some((x, _)) => on!(x, dots(pairs)),
    }
}
pub fn norm_partial<T: Scalar>(x: &DistVector<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
    on!(x, norm_partial(x, kind))
}
pub fn two_partial<T: Scalar>(x: &DistVector<T>) -> Result<(f64, f64)> {
    on!(x, two_partial(x))
}
pub fn nonfinite<T: Scalar>(x: &DistVector<T>) -> Result<bool> {
    on!(x, nonfinite(x))
}
pub fn allreduce_sum<T: Scalar>(
    comm: &Comm,
    local: Result<Vec<f64>>,
    n: usize,
    like: &DistVector<T>,
) -> Result<Vec<f64>> {
    on!(like, allreduce_sum(comm, local, n, like))
}
pub fn cg_update<T: Scalar>(
    x: &mut DistVector<T>,
    a: T,
    p: &DistVector<T>,
    r: &mut DistVector<T>,
    q: &DistVector<T>,
) -> Result<f64> {
    on!(x, cg_update(x, a, p, r, q))
}
pub fn cg_residual<T: Scalar>(a: T, r: &mut DistVector<T>, q: &DistVector<T>) -> Result<f64> {
    on!(r, cg_residual(a, r, q))
}
pub fn cg_step<T: Scalar>(
    x: &mut DistVector<T>,
    a: T,
    p: &mut DistVector<T>,
    r: &DistVector<T>,
    b: T,
) -> Result<()> {
    on!(x, cg_step(x, a, p, r, b))
}
#[allow(clippy::too_many_arguments)]
pub fn cg_sr_update<T: Scalar>(
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
    p: &mut DistVector<T>,
    s: &mut DistVector<T>,
    w: &DistVector<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<f64> {
    on!(x, cg_sr_update(x, r, p, s, w, a, b, step))
}
pub fn catch_up<T: Scalar>(
    x: &mut DistVector<T>,
    p: &mut DistVector<T>,
    r: &DistVector<T>,
    s: &DistVector<T>,
    owed: (T, T),
) -> Result<()> {
    on!(x, catch_up(x, p, r, s, owed))
}
pub fn pipe_update<T: Scalar>(
    v: PipeSet<'_, T>,
    n: &DistVector<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<Vec<f64>> {
    on!(n, pipe_update(v, n, a, b, step))
}
pub fn rr_wr<T: Scalar>(r: &DistVector<T>, w: &DistVector<T>) -> Result<Vec<f64>> {
    on!(r, rr_wr(r, w))
}
pub fn mdot<T: Scalar>(basis: &[&DistVector<T>], w: &DistVector<T>) -> Result<Vec<f64>> {
    on!(w, mdot(basis, w))
}
pub fn maxpy_norm<T: Scalar>(
    w: &mut DistVector<T>,
    h: &[T],
    basis: &[&DistVector<T>],
) -> Result<f64> {
    on!(w, maxpy_norm(w, h, basis))
}
pub fn maxpy<T: Scalar>(x: &mut DistVector<T>, c: &[T], basis: &[&DistVector<T>]) -> Result<()> {
    on!(x, maxpy(x, c, basis))
}
pub fn csr_forward<T: Scalar>(
    op: &CsrOp<T>,
    x: &DistVector<T>,
    y: &mut DistVector<T>,
) -> Result<()> {
    on!(y, csr_forward(op, x, y))
}
pub fn csr_backward<T: Scalar>(
    op: &CsrOp<T>,
    y: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<()> {
    on!(x, csr_backward(op, y, x))
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
