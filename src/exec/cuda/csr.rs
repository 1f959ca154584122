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

/// One CSR block on the device, with the index width of `wide`: `nrows + 1` row pointers, from
/// at least 0, non-decreasing, at most `nnz`; `nnz` column indices, each in 0..`cols`, and `nnz`
/// values (checked by [`bounds`] when it is made).
struct DevBlock<T> {
    nrows: i64,
    ptr: DevArray<u8>,
    col: DevArray<u8>,
    val: DevArray<T>,
    wide: bool,
    /// The SpMV's row blocks ([`row_blocks`]): one CUDA block each, `rb.len() - 1` of them.
    rb: DevArray<i64>,
    nnz: usize,
    /// One more than the largest column index (0 without entries): the entries of x (or of the
    /// ghost buffer) that the products read or write lie below it.
    cols: usize,
}

/// Entry `i` of an index array of 8-byte (`wide`) or 4-byte integers (in bounds: the caller checked).
fn read_int(a: &[u8], i: usize, wide: bool) -> i64 {
    let w = if wide { 8 } else { 4 };
    let c = &a[i * w..(i + 1) * w];
    if wide {
        i64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))
    } else {
        i32::from_ne_bytes(c.try_into().unwrap_or([0; 4])) as i64
    }
}

/// Check what the SpMV kernels index by (see [`DevBlock`]) on the host arrays, whichever
/// [`crate::exec::SparseHost`] gave them (parlops' blocks passed `check_block` already: this is a
/// pass over the arrays at the first device apply, not a second opinion); returns `cols`.
fn bounds<T: Clone>(b: &HostCsr<'_, T>) -> Result<usize> {
    let w = if b.wide { 8 } else { 4 };
    let int = |a: &[u8], i: usize| read_int(a, i, b.wide);
    let sizes_ok = b
        .nrows
        .checked_add(1)
        .and_then(|n| n.checked_mul(w))
        .is_some_and(|n| n <= b.indptr.len())
        && b.nnz.checked_mul(w).is_some_and(|n| n <= b.indices.len())
        && b.nnz <= b.values.len();
    if !sizes_ok {
        crate::bail!(
            Internal,
            "a CSR block's arrays are shorter than its shape says"
        );
    }
    let mut prev = 0i64;
    for r in 0..=b.nrows {
        let p = int(&b.indptr, r);
        if p < prev || p > b.nnz as i64 {
            crate::bail!(
                Internal,
                "a CSR block's row pointers are not 0..=nnz, non-decreasing"
            );
        }
        prev = p;
    }
    let mut cols = 0usize;
    for k in 0..b.nnz {
        let j = int(&b.indices, k);
        if j < 0 {
            crate::bail!(Internal, "a CSR block has a negative column index");
        }
        cols = cols.max(j as usize + 1);
    }
    Ok(cols)
}

/// Entries per row block of several rows: the kernels' SPMV_CHUNK (src/gpu/kernels.cu).
const SPMV_CHUNK: i64 = 1024;

/// The SpMV's row blocks, as the first row of each and `nrows` last: consecutive rows, at most
/// [`BLOCK`] of them, holding at most [`SPMV_CHUNK`] entries together, or one row alone however
/// long (the kernel gives such a row all of a block's threads). `ptr` reads a row pointer.
fn row_blocks(nrows: usize, ptr: impl Fn(usize) -> i64) -> Result<Vec<i64>> {
    let mut rb: Vec<i64> = Vec::new();
    let room = |rb: &mut Vec<i64>| {
        rb.try_reserve(1).map_err(|_| {
            crate::err!(
                OutOfMemory,
                "the SpMV's row blocks of {nrows} rows do not fit in host memory"
            )
        })
    };
    room(&mut rb)?;
    rb.push(0);
    let mut start = 0usize;
    for r in 0..nrows {
        let (rows, held, len) = (r - start, ptr(r) - ptr(start), ptr(r + 1) - ptr(r));
        if rows > 0 && (rows == BLOCK as usize || held + len > SPMV_CHUNK) {
            room(&mut rb)?;
            rb.push(r as i64);
            start = r;
        }
    }
    room(&mut rb)?;
    rb.push(nrows as i64);
    Ok(rb)
}

/// A CSR block's arrays copied to the device.
fn upload<T: Scalar>(b: &HostCsr<'_, T>, s: Stream) -> Result<DevBlock<T>> {
    let cols = bounds(b)?;
    let (nnz, w) = (b.nnz, if b.wide { 8 } else { 4 });
    let rb = row_blocks(b.nrows, |r| read_int(&b.indptr, r, b.wide))?;
    if rb.len() - 1 > i32::MAX as usize {
        crate::bail!(
            NotSupported,
            "a CSR block of {} rows needs {} row blocks, more than a CUDA grid holds",
            b.nrows,
            rb.len() - 1
        );
    }
    Ok(DevBlock {
        nrows: b.nrows as i64,
        ptr: DevArray::from_host(&b.indptr, s)?,
        col: DevArray::from_host(&b.indices[..nnz * w], s)?,
        val: DevArray::from_host(&b.values[..nnz], s)?,
        rb: DevArray::from_host(&rb, s)?,
        wide: b.wide,
        nnz,
        cols,
    })
}

impl<T: Scalar> DevBlock<T> {
    /// y (+)= A x on `s`.
    ///
    /// # Safety
    /// `x` and `y` must be device addresses holding at least `cols` and `nrows` entries, alive
    /// until `s` has run the product; `s` a live stream, with the device's context current.
    unsafe fn mult(&self, k: &Kernels, x: u64, y: u64, add: bool, s: Stream) -> Result<()> {
        if self.nrows == 0 || (add && self.nnz == 0) {
            // nothing to add (an empty offd block: one rank, or no halo) moves no bytes
            return Ok(());
        }
        if self.nnz == 0 {
            let bytes = self.nrows as usize * std::mem::size_of::<T>();
            // SAFETY: `y` holds nrows entries, `bytes` bytes, and `s` is a live stream with the
            // context current (our caller's contract).
            return unsafe { cudarc::driver::result::memset_d8_async(y, 0, bytes, s.0) }
                .map_err(|e| gpu::cuda_err("cuMemsetD8Async", e));
        }
        let f = if self.wide {
            k.k_spmv_i64
        } else {
            k.k_spmv_i32
        };
        let (r, p, c, v, a) = (
            self.rb.ptr,
            self.ptr.ptr,
            self.col.ptr,
            self.val.ptr,
            add as i32,
        );
        // one CUDA block per row block (fewer than 2^31: `upload` checked)
        let blocks = (self.rb.len - 1) as u32;
        // SAFETY: the arguments are k_spmv_i32/_i64's (const i64 *rb, const I *ptr, const I *col,
        // const T *val, const T *x, T *y, int add_to), the kernel's I the width of `wide`, the int
        // an i32. Block b reads rb[b] and rb[b + 1] (rb holds `blocks + 1` row indices,
        // non-decreasing from 0 to nrows, by `row_blocks`), ptr at those rows and the rows between
        // (0..=nrows), col and val at ptr[rb[b]]..ptr[rb[b + 1]] (within 0..nnz), x at columns
        // below `cols` (all checked by `bounds`), and writes y at its rows; x and y hold that many
        // (our caller's contract). The kernel assumes BLOCK threads (a multiple of the warp: every
        // thread of a warp reaches its shuffles) and a block of several rows with at most
        // SPMV_CHUNK entries, as `row_blocks` makes them.
        unsafe {
            launch(
                f,
                blocks,
                BLOCK,
                s,
                &mut [
                    karg!(r),
                    karg!(p),
                    karg!(c),
                    karg!(v),
                    karg!(x),
                    karg!(y),
                    karg!(a),
                ],
            )
        }
    }
    /// x += A^H y on `s`.
    ///
    /// # Safety
    /// As for [`DevBlock::mult`]: `y` must hold at least `nrows` entries and `x` `cols`.
    unsafe fn mult_adjoint_add(&self, k: &Kernels, y: u64, x: u64, s: Stream) -> Result<()> {
        if self.nrows == 0 || self.nnz == 0 {
            return Ok(());
        }
        let f = if self.wide {
            k.k_spmv_h_i64
        } else {
            k.k_spmv_h_i32
        };
        let (n, p, c, v) = (self.nrows, self.ptr.ptr, self.col.ptr, self.val.ptr);
        // SAFETY: the arguments are k_spmv_h_i32/_i64's (i64 nrows, const I *ptr, const I *col,
        // const T *val, const T *y, T *x), I the width of `wide`. The kernel reads y[0..nrows]
        // and the rows' entries as in `mult`, and adds into x at columns below `cols` (checked by
        // `bounds`); y and x hold that many (our caller's contract).
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

/// The reproducible mode's rows on the device ([`crate::exec::OrderedRows`]): every row with its
/// entries in the order of their global columns, over the operand [x | ghosts]. Checked when made:
/// `nrows + 1` non-decreasing row pointers from 0 to the entries' count, every operand index below
/// `nloc` plus the halo's ghosts.
struct DevOrdered<T> {
    nrows: i64,
    ptr: DevArray<i64>,
    src: DevArray<i64>,
    val: DevArray<T>,
    nloc: i64,
}

impl<T: Scalar> DevOrdered<T> {
    /// The host's ordered rows (`nrows` of them, `ghosts` ghost entries) copied to the device.
    fn upload(m: &Sparse<'_, T>, nrows: usize, ghosts: usize, s: Stream) -> Result<Self> {
        let (ptr, src, val, nloc) = m.host.ordered_rows()?;
        let nnz = val.len();
        let bad = ptr.len() != nrows + 1
            || ptr.first() != Some(&0)
            || ptr.last() != Some(&(nnz as i64))
            || ptr.windows(2).any(|w| w[1] < w[0])
            || src.len() != nnz
            || src.iter().any(|&j| j < 0 || j as usize >= nloc + ghosts);
        if bad {
            crate::bail!(
                Internal,
                "the reproducible product's ordered rows do not fit the matrix ({nrows} rows, {} + {ghosts} operands)",
                nloc
            );
        }
        Ok(DevOrdered {
            nrows: nrows as i64,
            ptr: DevArray::from_host(&ptr, s)?,
            src: DevArray::from_host(&src, s)?,
            val: DevArray::from_host(&val, s)?,
            nloc: nloc as i64,
        })
    }

    /// y = A x on `s`, each row in one chain in global column order (k_spmv_ordered).
    ///
    /// # Safety
    /// `x` must hold at least `nloc` entries, `g` the halo's ghosts (all that `upload` checked the
    /// operand indices against) and `y` `nrows`, alive until `s` has run the product; `s` a live
    /// stream with the device's context current.
    unsafe fn mult(&self, k: &Kernels, x: u64, g: u64, y: u64, s: Stream) -> Result<()> {
        if self.nrows == 0 {
            return Ok(());
        }
        let (n, p, j, v, nl) = (
            self.nrows,
            self.ptr.ptr,
            self.src.ptr,
            self.val.ptr,
            self.nloc,
        );
        // SAFETY: the arguments are k_spmv_ordered's (i64 nrows, const i64 *ptr, const i64 *src,
        // const T *val, i64 nloc, const T *x, const T *g, T *y). Thread `row` reads ptr[row] and
        // ptr[row + 1] (ptr holds nrows + 1), src and val between them (below the entries' count,
        // `upload` checked), x below nloc and g below the ghosts' count (the operand indices, checked
        // by `upload`), and writes y[row]; x, g and y hold that many (our caller's contract).
        unsafe {
            launch(
                k.k_spmv_ordered,
                grid(self.nrows as usize),
                BLOCK,
                s,
                &mut [
                    karg!(n),
                    karg!(p),
                    karg!(j),
                    karg!(v),
                    karg!(nl),
                    karg!(x),
                    karg!(g),
                    karg!(y),
                ],
            )
        }
    }
}

/// The matrix and halo buffers on the device.
pub(crate) struct DevCsr<T> {
    diag: DevBlock<T>,
    offd: DevBlock<T>,
    /// The reproducible mode's rows, made at its first product.
    ordered: Option<DevOrdered<T>>,
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
            let mut up = None;
            m.host.with_blocks(&mut |[diag, offd]| {
                up = Some((upload(&diag, s)?, upload(&offd, s)?));
                Ok(())
            })?;
            let (diag, offd) =
                up.ok_or_else(|| crate::err!(Internal, "the CSR blocks were not read"))?;
            let d = DevCsr {
                diag,
                offd,
                ordered: None,
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

impl<T: Scalar> DevCsr<T> {
    /// Assert that a product's vectors are long enough for what the kernels index: `owned` (x of
    /// y = A x, or of x = A^H y) and `rows` (the other one). The layouts themselves are checked
    /// before (`crate::op::check_apply`, which operator implementations may assume); this is the
    /// device side's own guard, as `LocalCsr::mult_rows` asserts on the host.
    fn check_lengths(&self, owned: usize, rows: usize) {
        let need_owned = self.diag.cols.max(self.halo.owned_needed());
        let need_rows = self.diag.nrows.max(self.offd.nrows) as usize;
        assert!(
            owned >= need_owned && rows >= need_rows && self.offd.cols <= self.halo.ghost_len(),
            "device CSR product: vectors of {owned} and {rows} entries, the matrix reaches {need_owned} and {need_rows} (offd columns {} of {} ghosts)",
            self.offd.cols,
            self.halo.ghost_len()
        );
    }
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
    d.check_lengths(x.len(), y.len());
    let (xp, yp) = (x.dptr(), y.dptr());
    if crate::exec::ops::reproducible_sums() {
        return forward_ordered(m, d, &k, (x, y), s, mixed);
    }
    // ghosts from their owners; the owned (diag) part runs meanwhile
    // SAFETY: (the exchange, and the diag product it queues) `xp` and `yp` are the device
    // addresses of x and y (CUDA parts: begin_device's `place`/`after` checked them), x.len()
    // >= diag's `cols` and the halo's owned_needed(), y.len() >= nrows (check_lengths above);
    // they outlive the queued work (freeing device memory waits for the device: gpu::free).
    // `s` is y's live stream, with the context bound by begin_device.
    let staged = unsafe {
        d.halo
            .forward(m.halo, &k, xp, s, || d.diag.mult(&k, xp, yp, false, s))?
    };
    // SAFETY: as above for `yp`; the ghost buffer holds ghost_len() >= offd's `cols` entries
    // (check_lengths).
    unsafe { d.offd.mult(&k, d.halo.ghost_ptr(), yp, true, s)? };
    if mixed || staged {
        // the pinned buffers must not be rewritten before the copies above ran
        gpu::sync(s)?;
    }
    Ok(())
}

/// y = A x on the device in the reproducible mode: the ghosts first, then every row in one chain
/// in the order of its global columns (the bits of the host's product, whatever the split). The
/// rows are copied to the device at the first such product, every rank agreeing that all copies
/// were made (a rank that failed must not leave its neighbours waiting in the halo exchange).
fn forward_ordered<T: Scalar>(
    m: &Sparse<'_, T>,
    d: &mut DevCsr<T>,
    k: &Kernels,
    (x, y): (&Part<T>, &mut Part<T>),
    s: Stream,
    mixed: bool,
) -> Result<()> {
    if d.ordered.is_none() {
        let nrows = d.diag.nrows.max(d.offd.nrows) as usize;
        let made = DevOrdered::upload(m, nrows, d.halo.ghost_len(), s);
        d.ordered = Some(m.comm.agree(made)?);
    }
    let rows = d
        .ordered
        .as_ref()
        .ok_or_else(|| crate::err!(Internal, "device ordered rows missing"))?;
    let (xp, yp) = (x.dptr(), y.dptr());
    assert!(
        x.len() >= rows.nloc as usize && y.len() >= rows.nrows as usize,
        "device ordered product: vectors of {} and {} entries, the rows reach {} and {}",
        x.len(),
        y.len(),
        rows.nloc,
        rows.nrows
    );
    // SAFETY: (the exchange) `xp` is x's device address (a CUDA part: begin_device's `place` and
    // `after` checked it), x.len() >= the halo's owned_needed() (check_lengths); it outlives the
    // queued work (freeing device memory waits for the device). `s` is y's live stream, with the
    // context bound by begin_device.
    let staged = unsafe { d.halo.forward(m.halo, k, xp, s, || Ok(()))? };
    // SAFETY: x holds nloc entries and y nrows (asserted above), the ghost buffer the halo's ghosts
    // (the count `upload` checked the operand indices against); all outlive the queued work.
    unsafe { rows.mult(k, xp, d.halo.ghost_ptr(), yp, s)? };
    if mixed || staged {
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
    d.check_lengths(x.len(), y.len());
    let (xp, yp) = (x.dptr(), y.dptr());
    // ghost contributions: offd^H y
    d.halo.clear_ghosts(s)?;
    // SAFETY: `yp` is y's device address (a CUDA part: begin_device's `after` checked it) of
    // y.len() >= nrows entries, and the ghost buffer holds ghost_len() >= offd's `cols`
    // (check_lengths above); both outlive the queued work (freeing device memory waits for the
    // device: gpu::free). `s` is x's live stream, with the context bound by begin_device.
    unsafe { d.offd.mult_adjoint_add(&k, yp, d.halo.ghost_ptr(), s)? };
    // the reverse exchange: ghost contributions go back to their owners and are added to x;
    // x = diag^H y meanwhile
    // SAFETY: (the exchange, and the diag product it queues) as above, and `xp` is x's device
    // address (`place` checked it), x.len() >= diag's `cols` and the halo's owned_needed()
    // (check_lengths).
    let staged = unsafe {
        d.halo.reverse(m.halo, &k, xp, s, || {
            super::vector::fill(x, T::zero())?;
            d.diag.mult_adjoint_add(&k, yp, xp, s)
        })?
    };
    if mixed || staged {
        gpu::sync(s)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn block<'a>(p: &[i64], j: &[i64], v: &'a [f64], wide: bool) -> HostCsr<'a, f64> {
        let bytes = |a: &[i64]| -> Vec<u8> {
            a.iter()
                .flat_map(|&x| {
                    if wide {
                        x.to_ne_bytes().to_vec()
                    } else {
                        (x as i32).to_ne_bytes().to_vec()
                    }
                })
                .collect()
        };
        HostCsr {
            nrows: p.len() - 1,
            indptr: Cow::Owned(bytes(p)),
            indices: Cow::Owned(bytes(j)),
            values: Cow::Borrowed(v),
            wide,
            nnz: *p.last().unwrap_or(&0) as usize,
        }
    }

    /// `bounds` gives one more than the largest column, for both index widths, and refuses row
    /// pointers and columns the SpMV kernels would follow out of the arrays.
    #[test]
    fn bounds_checks_what_the_kernels_index() {
        let v = [1.0; 4];
        for wide in [false, true] {
            assert_eq!(
                bounds(&block(&[0, 2, 2, 4], &[0, 5, 1, 2], &v, wide)).unwrap(),
                6
            );
            assert_eq!(bounds(&block(&[0, 0], &[], &v, wide)).unwrap(), 0);
            // decreasing, past nnz, negative start
            assert!(bounds(&block(&[0, 3, 2, 4], &[0, 1, 1, 2], &v, wide)).is_err());
            let mut b = block(&[0, 2, 2, 4], &[0, 1, 1, 2], &v, wide);
            b.nnz = 3;
            assert!(bounds(&b).is_err());
            assert!(bounds(&block(&[-1, 2, 2, 4], &[0, 1, 1, 2], &v, wide)).is_err());
            // a negative column; fewer indices or values than nnz
            assert!(bounds(&block(&[0, 2, 2, 4], &[0, -1, 1, 2], &v, wide)).is_err());
            assert!(bounds(&block(&[0, 2, 2, 4], &[0, 1, 1], &v, wide)).is_err());
            assert!(bounds(&block(&[0, 2, 2, 4], &[0, 1, 1, 2], &v[..3], wide)).is_err());
        }
    }

    /// The row blocks cover every row once, in order; a block of several rows has at most BLOCK
    /// rows and SPMV_CHUNK entries, a longer row is alone; 5-entry rows fill a block by entries.
    #[test]
    fn row_blocks_keep_the_kernels_bounds() {
        let lens: Vec<i64> = (0..5000)
            .map(|r| [0, 1, 5, 37, 130, 300, 1100, 3000][(r / 7) % 8])
            .collect();
        let mut ptr = vec![0i64];
        for l in &lens {
            ptr.push(ptr.last().unwrap() + l);
        }
        let rb = row_blocks(lens.len(), |r| ptr[r]).unwrap();
        assert_eq!((rb[0], *rb.last().unwrap()), (0, lens.len() as i64));
        for w in rb.windows(2) {
            let (r0, r1) = (w[0] as usize, w[1] as usize);
            assert!(r1 > r0);
            let held = ptr[r1] - ptr[r0];
            assert!(r1 - r0 == 1 || (r1 - r0 <= BLOCK as usize && held <= SPMV_CHUNK));
        }
        assert!(
            rb.windows(2)
                .any(|w| w[1] - w[0] == 1 && lens[w[0] as usize] > SPMV_CHUNK)
        );
        let five = row_blocks(1000, |r| 5 * r as i64).unwrap();
        assert_eq!(five[1], SPMV_CHUNK / 5);
        let empty = row_blocks(600, |_| 0).unwrap();
        assert_eq!(empty, vec![0, 256, 512, 600]);
        assert_eq!(row_blocks(0, |_| 0).unwrap(), vec![0, 0]);
    }
}
