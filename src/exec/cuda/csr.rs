//! The CUDA backend's CSR products ([`Sparse`]): the matrix blocks on the device and their SpMV
//! kernels. The halo moves through the plan's device side
//! ([`crate::comm::halo::device::DeviceHalo`]), which picks the transport.

use std::sync::Arc;

use super::{place, stream};
use crate::comm::halo::device::DeviceHalo;
use crate::error::Result;
use crate::exec::{HostCsr, Part, Sparse};
use crate::gpu::{self, BLOCK, DevArray, Kernels, Stream, grid, launch};
use crate::karg;
use crate::scalar::Scalar;

/// One CSR block on the device.
struct DevBlock<T> {
    nrows: i64,
    ptr: DevArray<u8>,
    col: DevArray<u8>,
    val: DevArray<T>,
    wide: bool,
    /// Threads per row of the SpMV kernel.
    sw: i32,
    nnz: usize,
}

/// A CSR block's arrays copied to the device.
fn upload<T: Scalar>(b: &HostCsr<'_, T>, s: Stream) -> Result<DevBlock<T>> {
    let (nnz, w) = (b.nnz, if b.wide { 8 } else { 4 });
    let avg = if b.nrows == 0 {
        1
    } else {
        nnz.div_ceil(b.nrows).max(1)
    };
    // the largest power of two <= average entries per row, at most a warp
    let sw = (1usize << (usize::BITS - 1 - avg.leading_zeros())).min(32) as i32;
    Ok(DevBlock {
        nrows: b.nrows as i64,
        ptr: DevArray::from_host(&b.indptr, s)?,
        col: DevArray::from_host(&b.indices[..nnz * w], s)?,
        val: DevArray::from_host(&b.values[..nnz], s)?,
        wide: b.wide,
        sw,
        nnz,
    })
}

impl<T: Scalar> DevBlock<T> {
    /// y (+)= A x on `s`.
    fn mult(&self, k: &Kernels, x: u64, y: u64, add: bool, s: Stream) -> Result<()> {
        if self.nrows == 0 || (add && self.nnz == 0) {
            // nothing to add (an empty offd block: one rank, or no halo) moves no bytes
            return Ok(());
        }
        if self.nnz == 0 {
            let bytes = self.nrows as usize * std::mem::size_of::<T>();
            return unsafe { cudarc::driver::result::memset_d8_async(y, 0, bytes, s.0) }
                .map_err(|e| gpu::cuda_err("cuMemsetD8Async", e));
        }
        let f = if self.wide {
            k.k_spmv_i64
        } else {
            k.k_spmv_i32
        };
        let (n, p, c, v, a, sw) = (
            self.nrows,
            self.ptr.ptr,
            self.col.ptr,
            self.val.ptr,
            add as i32,
            self.sw,
        );
        let blocks = (self.nrows as usize * sw as usize).div_ceil(BLOCK as usize) as u32;
        unsafe {
            launch(
                f,
                blocks,
                BLOCK,
                s,
                &mut [
                    karg!(n),
                    karg!(p),
                    karg!(c),
                    karg!(v),
                    karg!(x),
                    karg!(y),
                    karg!(a),
                    karg!(sw),
                ],
            )
        }
    }
    /// x += A^H y on `s`.
    fn mult_adjoint_add(&self, k: &Kernels, y: u64, x: u64, s: Stream) -> Result<()> {
        if self.nrows == 0 || self.nnz == 0 {
            return Ok(());
        }
        let f = if self.wide {
            k.k_spmv_h_i64
        } else {
            k.k_spmv_h_i32
        };
        let (n, p, c, v) = (self.nrows, self.ptr.ptr, self.col.ptr, self.val.ptr);
        unsafe {
            launch(
                f,
                grid(self.nrows as usize),
                BLOCK,
                s,
                &mut [karg!(n), karg!(p), karg!(c), karg!(v), karg!(y), karg!(x)],
            )
        }
    }
}

/// The matrix and halo buffers on the device.
pub(crate) struct DevCsr<T> {
    diag: DevBlock<T>,
    offd: DevBlock<T>,
    halo: DeviceHalo<T>,
    /// The stream the last apply ran on: the halo buffers are shared, so an apply on another stream
    /// waits for it first.
    last: Option<Stream>,
}

/// The matrix on the device, made at the first device apply (every rank makes its part then, and
/// whether all succeeded is agreed, so that a failure on one rank cannot leave its neighbours
/// waiting for a halo); the kernels are compiled then too.
fn device_parts<'a, T: Scalar>(
    m: &Sparse<'a, T>,
    g: &crate::gpu::Gpu,
    s: Stream,
) -> Result<std::sync::MutexGuard<'a, Option<DevCsr<T>>>> {
    let mut guard = m.resident.cuda.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        let made = (|| {
            g.kernels::<T>()?;
            let [diag, offd] = m.host.blocks()?;
            let d = DevCsr {
                diag: upload(&diag, s)?,
                offd: upload(&offd, s)?,
                halo: m.halo.device::<T>(s)?,
                last: None,
            };
            gpu::sync(s)?;
            Ok(d)
        })();
        *guard = Some(m.comm.agree(made)?);
    }
    Ok(guard)
}

/// What a device apply starts with: the output's stream (after the input's), the device matrix
/// (made at first use), the kernels, and whether the input was on another stream.
#[allow(clippy::type_complexity)]
fn begin_device<'a, T: Scalar>(
    m: &Sparse<'a, T>,
    inp: &Part<T>,
    out: &Part<T>,
) -> Result<(
    Stream,
    std::sync::MutexGuard<'a, Option<DevCsr<T>>>,
    Arc<Kernels>,
    bool,
)> {
    let g = place(out)?.gpu.clone();
    g.bind()?;
    let s = stream(out)?;
    // the input's queued work done before `s` uses it; with the input on another stream, the apply
    // also finishes before returning (so that stream cannot overwrite it too early)
    let mixed = super::vector::after(inp, s)?;
    let mut guard = device_parts(m, &g, s)?;
    let k = g.kernels::<T>()?;
    let d = guard
        .as_mut()
        .ok_or_else(|| crate::err!(Internal, "device CSR missing"))?;
    // the halo buffers are shared: an apply on another stream waits for the last one
    if let Some(prev) = d.last.replace(s)
        && prev != s
    {
        gpu::sync(prev)?;
    }
    Ok((s, guard, k, mixed))
}

/// y = A x on the device.
pub(crate) fn forward<T: Scalar>(m: &Sparse<'_, T>, x: &Part<T>, y: &mut Part<T>) -> Result<()> {
    let (s, mut guard, k, mixed) = begin_device(m, x, y)?;
    let d = guard
        .as_mut()
        .ok_or_else(|| crate::err!(Internal, "device CSR missing"))?;
    let (xp, yp) = (x.dptr(), y.dptr());
    // ghosts from their owners; the owned (diag) part runs meanwhile
    let staged = d
        .halo
        .forward(m.halo, &k, xp, s, || d.diag.mult(&k, xp, yp, false, s))?;
    d.offd.mult(&k, d.halo.ghost_ptr(), yp, true, s)?;
    if mixed || staged {
        // the pinned buffers must not be rewritten before the copies above ran
        gpu::sync(s)?;
    }
    Ok(())
}

/// x = A^H y on the device.
pub(crate) fn backward<T: Scalar>(m: &Sparse<'_, T>, y: &Part<T>, x: &mut Part<T>) -> Result<()> {
    let (s, mut guard, k, mixed) = begin_device(m, y, x)?;
    let d = guard
        .as_mut()
        .ok_or_else(|| crate::err!(Internal, "device CSR missing"))?;
    let (xp, yp) = (x.dptr(), y.dptr());
    // ghost contributions: offd^H y
    d.halo.clear_ghosts(s)?;
    d.offd.mult_adjoint_add(&k, yp, d.halo.ghost_ptr(), s)?;
    // the reverse exchange: ghost contributions go back to their owners and are added to x;
    // x = diag^H y meanwhile
    let staged = d.halo.reverse(m.halo, &k, xp, s, || {
        super::vector::fill(x, T::zero())?;
        d.diag.mult_adjoint_add(&k, yp, xp, s)
    })?;
    if mixed || staged {
        gpu::sync(s)?;
    }
    Ok(())
}
