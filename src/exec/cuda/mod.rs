//! The CUDA backend: this rank's entries in device memory of the process's device ([`crate::gpu`]:
//! driver, contexts, streams, NVRTC), every step a kernel of `src/gpu/kernels.cu` queued on the
//! vector's stream (parlops' own, or the caller's from `parlops_vec_set_stream`). Element-wise
//! kernels and the fused passes in [`vector`], the CSR products in [`csr`]; reductions come back to
//! the host as per-rank sums (they end in MPI or NCCL and in the solvers' control flow).

pub(crate) mod csr;
mod vector;

use std::sync::Arc;

use super::ops::NormKind;
use super::{Backend, Exec, Part, PipeSet, Sparse, Storage, XStep};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::gpu::{self, Gpu, Stream};
use crate::scalar::Scalar;

/// A device vector's device and stream.
#[derive(Clone)]
pub struct Place {
    pub(crate) gpu: Arc<Gpu>,
    /// The caller's stream that work on the vector is ordered on (else parlops' stream).
    stream: Option<Stream>,
}

impl Place {
    pub(crate) fn new(node_rank: i32) -> Result<Place> {
        Ok(Place {
            gpu: gpu::get(node_rank, None)?,
            stream: None,
        })
    }
    /// The stream work is ordered on.
    pub(crate) fn stream(&self) -> Stream {
        self.stream.unwrap_or(self.gpu.stream)
    }
    pub(crate) fn caller_stream(&self) -> Option<Stream> {
        self.stream
    }
    /// Order later work on `s` (`None`: parlops' stream), after the work already queued.
    pub(crate) fn set_stream(&mut self, s: Option<Stream>) -> Result<()> {
        gpu::sync(self.stream())?;
        self.stream = s;
        Ok(())
    }
}

/// Device memory allocated by parlops, freed on drop.
pub struct DevBuf<T> {
    ptr: *mut T,
    gpu: Arc<Gpu>,
    owned: bool,
}

// SAFETY: the buffer is device memory reached only through the driver (which is thread-safe) with
// this process's device bound; the pointer is an address, not host data shared between threads.
unsafe impl<T> Send for DevBuf<T> {}
// SAFETY: as above; shared references only read the address.
unsafe impl<T> Sync for DevBuf<T> {}

impl<T> DevBuf<T> {
    pub(crate) fn ptr(&self) -> *mut T {
        self.ptr
    }
}

impl<T> Drop for DevBuf<T> {
    fn drop(&mut self) {
        if self.owned {
            let _ = self.gpu.bind();
            // free's contract: an owned buffer's address came from alloc_zeroed (Cuda::zeroed),
            // and this drop frees it once
            gpu::free(self.ptr as usize as u64);
        }
    }
}

/// The device and stream of a device vector.
pub(crate) fn place<T: Scalar>(v: &Part<T>) -> Result<&Place> {
    match v.exec() {
        Exec::Cuda(p) => Ok(p),
        _ => crate::bail!(
            Internal,
            "a vector not in device memory reached the CUDA backend"
        ),
    }
}

/// The stream work on `v` is ordered on.
pub(crate) fn stream<T: Scalar>(v: &Part<T>) -> Result<Stream> {
    Ok(place(v)?.stream())
}

/// The CUDA backend.
pub struct Cuda;

impl Backend for Cuda {
    fn zeroed<T: Scalar>(e: &Exec, n: usize) -> Result<Storage<T>> {
        let Exec::Cuda(p) = e else {
            crate::bail!(Internal, "a host executor reached the CUDA backend")
        };
        let bytes = n.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            crate::err!(
                OutOfMemory,
                "{n} entries of {} overflow a size",
                T::DTYPE.name()
            )
        })?;
        let s = p.stream();
        let a = gpu::alloc_zeroed(bytes, s)?;
        let buf = DevBuf {
            ptr: if a == 0 {
                std::ptr::NonNull::dangling().as_ptr()
            } else {
                a as usize as *mut T
            },
            gpu: p.gpu.clone(),
            owned: a != 0,
        };
        gpu::sync(s)?;
        Ok(Storage::Cuda(buf))
    }
    fn sync<T: Scalar>(v: &Part<T>) -> Result<()> {
        gpu::sync(stream(v)?)
    }
    fn settle<T: Scalar>(v: &Part<T>) -> Result<()> {
        let p = place(v)?;
        if p.caller_stream().is_none() {
            gpu::sync(p.stream())?;
        }
        Ok(())
    }
    fn download<T: Scalar>(dst: &mut [T], src: &Part<T>) -> Result<()> {
        // SAFETY: `dst` holds this rank's entries of `src` (transfer's callers share the layout),
        // and `src`'s device address holds as many.
        unsafe { vector::download(dst, src.dptr(), stream(src)?) }
    }
    fn upload<T: Scalar>(dst: &mut Part<T>, src: &[T]) -> Result<()> {
        let s = stream(dst)?;
        // SAFETY: as for download: both sides hold this rank's entries.
        unsafe { vector::upload(dst.dptr(), src, s) }
    }
    fn copy<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()> {
        vector::copy(y, x)
    }
    fn fill<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
        vector::fill(y, a)
    }
    fn scale<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
        vector::scale(y, a)
    }
    fn conj<T: Scalar>(y: &mut Part<T>) -> Result<()> {
        vector::conj(y)
    }
    fn axpy<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>) -> Result<()> {
        vector::axpy(y, a, x)
    }
    fn axpby<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>, b: T) -> Result<()> {
        vector::axpby(y, a, x, b)
    }
    fn waxpy<T: Scalar>(w: &mut Part<T>, a: T, x: &Part<T>, y: &Part<T>) -> Result<()> {
        vector::waxpy(w, a, x, y)
    }
    fn pmult<T: Scalar>(w: &mut Part<T>, x: &Part<T>, y: &Part<T>, cx: bool) -> Result<()> {
        vector::pmult(w, x, y, cx)
    }
    fn dots<T: Scalar>(pairs: &[(&Part<T>, &Part<T>)]) -> Result<Vec<f64>> {
        vector::dots(pairs)
    }
    /// On host copies of the entries (no device kernel for binned sums yet: correct, not fast).
    fn dots_binned<T: Scalar>(
        pairs: &[(&Part<T>, &Part<T>)],
    ) -> Result<Vec<crate::binned::Binned>> {
        let mut v = Vec::new();
        crate::error::try_reserve(&mut v, 2 * pairs.len(), "the dot products' sums")?;
        for (x, y) in pairs {
            let what = "a host copy of a vector's entries";
            let mut hx = crate::error::try_vec(x.len(), T::zero(), what)?;
            let mut hy = crate::error::try_vec(y.len(), T::zero(), what)?;
            Self::download(&mut hx, x)?;
            Self::download(&mut hy, y)?;
            let (re, im) = crate::exec::ops::dot_binned(&hx, &hy);
            v.push(re);
            v.push(im);
        }
        Ok(v)
    }
    fn norm_partial<T: Scalar>(x: &Part<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
        vector::norm_partial(x, kind)
    }
    fn two_partial<T: Scalar>(x: &Part<T>) -> Result<(f64, f64)> {
        vector::two_partial(x)
    }
    fn nonfinite<T: Scalar>(x: &Part<T>) -> Result<bool> {
        // the largest |entry| is NaN or Inf exactly when an entry is (the kernel's max keeps NaN);
        // an empty part gives the max's identity, -inf, which is not a non-finite entry
        let (v, _) = vector::norm_partial(x, NormKind::Inf)?;
        Ok(v.is_nan() || v == f64::INFINITY)
    }
    fn allreduce_sum<T: Scalar>(
        comm: &Comm,
        local: Result<Vec<f64>>,
        n: usize,
        like: &Part<T>,
    ) -> Result<Vec<f64>> {
        comm.allreduce_sum_checked_device(local, n, || stream(like))
    }
    fn cg_update<T: Scalar>(
        x: &mut Part<T>,
        a: T,
        p: &Part<T>,
        r: &mut Part<T>,
        q: &Part<T>,
    ) -> Result<f64> {
        vector::cg_update(x, a, p, r, q)
    }
    fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64> {
        vector::cg_residual(a, r, q)
    }
    fn cg_step<T: Scalar>(x: &mut Part<T>, a: T, p: &mut Part<T>, r: &Part<T>, b: T) -> Result<()> {
        vector::cg_step(x, a, p, r, b)
    }
    fn cg_sr_update<T: Scalar>(
        x: &mut Part<T>,
        r: &mut Part<T>,
        p: &mut Part<T>,
        s: &mut Part<T>,
        w: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<f64> {
        vector::cg_sr_update(x, r, p, s, w, a, b, step)
    }
    fn catch_up<T: Scalar>(
        x: &mut Part<T>,
        p: &mut Part<T>,
        r: &Part<T>,
        s: &Part<T>,
        owed: (T, T),
    ) -> Result<()> {
        vector::catch_up(x, p, r, s, owed)
    }
    fn pipe_update<T: Scalar>(
        v: PipeSet<'_, T>,
        n: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<Vec<f64>> {
        vector::cg_pipe_update(v, n, a, b, step)
    }
    fn rr_wr<T: Scalar>(r: &Part<T>, w: &Part<T>) -> Result<Vec<f64>> {
        let d = vector::dots(&[(r, r), (w, r)])?;
        Ok(vec![d[0], 0.0, d[2], d[3]])
    }
    fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>> {
        vector::mdot(basis, w)
    }
    fn maxpy_norm<T: Scalar>(w: &mut Part<T>, h: &[T], basis: &[&Part<T>]) -> Result<f64> {
        // w - sum h_j v_j, the terms in order (the bits of the host's pass), then |w|^2
        let neg: Vec<T> = h.iter().map(|&v| -v).collect();
        vector::maxpy(w, &neg, basis)?;
        Ok(vector::dots(&[(w, w)])?[0])
    }
    fn maxpy<T: Scalar>(x: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()> {
        vector::maxpy(x, c, basis)
    }
    fn csr_forward<T: Scalar>(m: &Sparse<'_, T>, x: &Part<T>, y: &mut Part<T>) -> Result<()> {
        csr::forward(m, x, y)
    }
    fn csr_backward<T: Scalar>(m: &Sparse<'_, T>, y: &Part<T>, x: &mut Part<T>) -> Result<()> {
        csr::backward(m, y, x)
    }
}
