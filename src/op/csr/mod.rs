//! Distributed CSR matrices in hypre's ParCSR layout: each rank owns a block of rows, stored as a
//! `diag` block (columns this rank owns, local indices) and an `offd` block (other columns, compressed
//! to 0..n_ghost with `col_map_offd` giving their global indices). A halo plan built once moves the
//! ghost values; apply overlaps the exchange with the diag product; the adjoint runs the exchange
//! backwards without forming the transpose.

mod block;
mod copy;
mod kernels;
mod multi;
mod narrow;
mod repro;
mod sell;
mod split;
#[cfg(test)]
mod tests;
mod update;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard};

#[cfg(test)]
use self::block::Compact;
use self::block::check_block;
pub use self::block::{Arr, Idx, IndexInt, LocalCsr};
pub(crate) use self::copy::ColMap;
use self::split::split_rows;
pub use self::update::{NewValues, Origin, Prepared};
use super::LinearOperator;
use crate::comm::halo::HaloPlan;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

struct Bufs<T> {
    send: Vec<T>,
    ghost: Vec<T>,
    /// A block of rows of a streamed product and the band below the diagonal.
    stream: Vec<T>,
}

/// The two local blocks of a CSR matrix: read under [`CsrOp::blocks`], replaced (new values, same
/// pattern) by [`CsrOp::commit_values`].
pub struct Blocks<T: Scalar> {
    pub diag: LocalCsr<T>,
    pub offd: LocalCsr<T>,
}

/// A distributed sparse matrix (hypre ParCSR layout).
pub struct CsrOp<T: Scalar> {
    pub(crate) rows: Arc<Layout>,
    cols: Arc<Layout>,
    /// The blocks: read by every product, written only by a values update, which is refused while
    /// a running solve holds the matrix ([`crate::op::tree::Pins`]).
    vals: RwLock<Blocks<T>>,
    /// How many values updates the matrix has had ([`LinearOperator::values_version`]).
    version: AtomicU64,
    /// What the caller's values look like, for an update.
    origin: Origin,
    col_map: Vec<i64>,
    pub(crate) halo: HaloPlan,
    bufs: Mutex<Bufs<T>>,
    /// The backends' copies of the matrix and the halo buffers, made at their first apply.
    resident: crate::exec::Resident<T>,
    /// The diag block's [`LocalCsr::lower_reach`], found at the first streamed product.
    reach: OnceLock<usize>,
    /// The rows the reproducible mode forms again, made at its first product (again after a
    /// values update).
    repro: Mutex<Option<Arc<repro::ReproRows<T>>>>,
    /// The conjugate transpose the reproducible mode's adjoint applies, with the values version it
    /// was made from (made at its first adjoint).
    repro_adj: Mutex<Option<(u64, Arc<CsrOp<T>>)>>,
}

fn check_layouts(rows: &Layout, cols: &Layout) -> Result<()> {
    if !Arc::ptr_eq(rows.comm(), cols.comm()) {
        crate::bail!(
            LayoutMismatch,
            "the row and column layouts live on different communicators"
        );
    }
    if rows.partition().is_replicated() || cols.partition().is_replicated() {
        crate::bail!(
            NotSupported,
            "a CSR matrix needs split (scatter) row and column layouts, not {} / {}",
            rows.partition().name(),
            cols.partition().name()
        );
    }
    Ok(())
}

impl<T: Scalar> CsrOp<T> {
    /// From this rank's rows with global column indices (copied and split into diag and offd).
    /// Column indices must be strictly increasing within each row. [collective]
    pub fn from_local_rows<I: IndexInt>(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        indptr: &[I],
        indices: &[I],
        values: &[T],
        pre: Result<()>,
    ) -> Result<CsrOp<T>> {
        let split = pre.and_then(|_| {
            check_layouts(&rows, &cols)?;
            let nrows = rows.local_len() as usize;
            let n = cols.global_len() as usize;
            let nnz = check_block(indptr, indices, nrows, n, "local rows")?;
            if values.len() < nnz {
                crate::bail!(SizeMismatch, "local rows: {} values for {nnz} entries", values.len());
            }
            for r in 0..nrows {
                let row = &indices[indptr[r].to_usize()..indptr[r + 1].to_usize()];
                if let Some(w) = row.windows(2).find(|w| w[1].to_i64() <= w[0].to_i64()) {
                    crate::bail!(
                        InvalidArgument,
                        "local row {r} (global row {}): column indices must be strictly increasing, found {} after {}",
                        rows.local_start() + r as i64,
                        w[1].to_i64(),
                        w[0].to_i64()
                    );
                }
            }
            split_rows(&rows, &cols, indptr, indices, values)
        });
        let (parts, pre) = match split {
            Ok(s) => (Some(s), Ok(())),
            Err(e) => (None, Err(e)),
        };
        let ghosts: &[i64] = parts.as_ref().map_or(&[], |s| &s.2);
        let halo = HaloPlan::new(
            cols.comm(),
            cols.offsets(),
            cols.local_lens(),
            cols.global_len(),
            ghosts,
            pre,
        )?;
        let (diag, offd, col_map) =
            parts.ok_or_else(|| crate::err!(Internal, "CSR split missing after agreement"))?;
        Self::assemble(rows, cols, diag, offd, col_map, halo, Origin::Rows)
    }

    /// From hypre's split layout: `diag` (local columns), `offd` (compressed columns) and
    /// `col_map_offd` (strictly increasing global indices of the offd columns). The blocks are used as
    /// given: borrowed arrays are read in place, never copied. [collective]
    pub fn from_parcsr(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        diag: Result<LocalCsr<T>>,
        offd: Result<Option<LocalCsr<T>>>,
        col_map_offd: Vec<i64>,
    ) -> Result<CsrOp<T>> {
        let checked = (|| {
            check_layouts(&rows, &cols)?;
            let diag = diag?;
            let nrows = rows.local_len() as usize;
            let offd = offd?.unwrap_or_else(|| LocalCsr::empty(nrows, col_map_offd.len()));
            if diag.nrows != nrows || diag.ncols != cols.local_len() as usize {
                crate::bail!(
                    SizeMismatch,
                    "diag block is {}x{}, but this rank owns {nrows} rows and {} columns",
                    diag.nrows,
                    diag.ncols,
                    cols.local_len()
                );
            }
            if offd.nrows != nrows || offd.ncols != col_map_offd.len() {
                crate::bail!(
                    SizeMismatch,
                    "offd block is {}x{}, but this rank owns {nrows} rows and col_map_offd has {} entries",
                    offd.nrows,
                    offd.ncols,
                    col_map_offd.len()
                );
            }
            Ok((diag, offd))
        })();
        let (parts, pre) = match checked {
            Ok(s) => (Some(s), Ok(())),
            Err(e) => (None, Err(e)),
        };
        let ghosts: &[i64] = if parts.is_some() { &col_map_offd } else { &[] };
        let halo = HaloPlan::new(
            cols.comm(),
            cols.offsets(),
            cols.local_lens(),
            cols.global_len(),
            ghosts,
            pre,
        )?;
        let (diag, offd) =
            parts.ok_or_else(|| crate::err!(Internal, "ParCSR blocks missing after agreement"))?;
        let origin = Origin::of_parcsr(&diag, &offd);
        Self::assemble(rows, cols, diag, offd, col_map_offd, halo, origin)
    }

    fn assemble(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        diag: LocalCsr<T>,
        offd: LocalCsr<T>,
        col_map: Vec<i64>,
        halo: HaloPlan,
        origin: Origin,
    ) -> Result<CsrOp<T>> {
        let bufs = Bufs {
            send: vec![T::zero(); halo.n_send()],
            ghost: vec![T::zero(); halo.n_ghost()],
            stream: Vec::new(),
        };
        Ok(CsrOp {
            rows,
            cols,
            vals: RwLock::new(Blocks {
                diag: diag.compacted(),
                offd,
            }),
            version: AtomicU64::new(0),
            origin,
            col_map,
            halo,
            bufs: Mutex::new(bufs),
            resident: Default::default(),
            reach: OnceLock::new(),
            repro: Mutex::new(None),
            repro_adj: Mutex::new(None),
        })
    }

    /// The local blocks, read-locked (a values update waits for no reader: it is refused while
    /// one holds them).
    pub fn blocks(&self) -> RwLockReadGuard<'_, Blocks<T>> {
        self.vals.read().unwrap_or_else(|p| p.into_inner())
    }
    pub fn col_map_offd(&self) -> &[i64] {
        &self.col_map
    }
    pub fn halo(&self) -> &HaloPlan {
        &self.halo
    }
}

impl<T: Scalar> CsrOp<T> {
    /// y = A x on the host: the diag product while the ghosts move, then the offd rows; with `DOT`
    /// (equal row and column layouts) also this rank's conj(x).y, summed in the same passes.
    fn forward_host<const DOT: bool>(&self, x: &[T], y: &mut [T]) -> Result<(f64, f64)> {
        let blk = self.blocks();
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs { send, ghost, .. } = &mut *b;
        let mut d = (0.0, 0.0);
        self.halo.forward(x, send, ghost, || {
            d = blk.diag.mult_dot::<DOT>(x, y, false, x);
            Ok(())
        })?;
        let o = blk.offd.mult_dot::<DOT>(ghost, y, true, x);
        if crate::vector::ops::reproducible_sums() {
            // the rows with ghosts (or unsorted entries) in global column order
            self.repro_rows(&blk)?.apply(x, ghost, y);
        }
        Ok((d.0 + o.0, d.1 + o.1))
    }

    /// The reproducible mode's conjugate transpose for the current values (made again after a
    /// values update; every rank alike, since updates are collective). [collective]
    fn repro_adjoint(&self) -> Result<Arc<CsrOp<T>>> {
        let mut a = self.repro_adj.lock().unwrap_or_else(|p| p.into_inner());
        let version = self.version();
        if let Some((v, at)) = a.as_ref()
            && *v == version
        {
            return Ok(at.clone());
        }
        let at = Arc::new(repro::transpose(
            &self.blocks(),
            &self.rows,
            &self.cols,
            &self.col_map,
        )?);
        *a = Some((version, at.clone()));
        Ok(at)
    }

    /// The reproducible mode's rows for the blocks' current values.
    fn repro_rows(&self, blk: &Blocks<T>) -> Result<Arc<repro::ReproRows<T>>> {
        let mut r = self.repro.lock().unwrap_or_else(|p| p.into_inner());
        let version = self.version();
        if let Some(rr) = r.as_ref().filter(|rr| rr.version == version) {
            return Ok(rr.clone());
        }
        let first = self.cols.offsets()[self.cols.comm().rank() as usize];
        let rr = Arc::new(repro::ReproRows::new(
            blk,
            first,
            &self.col_map,
            version,
            false,
        )?);
        *r = Some(rr.clone());
        Ok(rr)
    }

    /// The operator as the executor's backends see it.
    fn sparse(&self) -> crate::exec::Sparse<'_, T> {
        crate::exec::Sparse {
            host: self,
            halo: &self.halo,
            comm: self.rows.comm(),
            resident: &self.resident,
        }
    }
}

/// Rows per block of a CSR matrix's [`LinearOperator::apply_streamed`] between two polls of the
/// caller's reduction (about 10 us of product).
const POLL_ROWS: usize = 2048;
/// Rows per hand-over of formed rows to the caller (their values, 256 KiB in double, stay in the
/// second-level cache). Pipelined CG against CG, 2D 5-point, 1M rows, 2 ranks (benches/NOTES.md
/// item 20): 1.22x with 8192 rows, 1.10 with 16384, 1.04 with 32768, 1.07 with 65536: the product
/// and the update alternate less often, so their streams restart less often.
const STREAM_ROWS: usize = 32768;

impl<T: Scalar> LinearOperator<T> for CsrOp<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.check_location(x, "x", "y")?;
        crate::exec::csr_forward(&self.sparse(), x.part(), y.part_mut())
    }
    /// The product and y^H x in one pass, on host-addressable vectors.
    fn apply_dot(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<Option<(f64, f64)>> {
        if !(y.host_addressable() && x.host_addressable() && self.rows.compatible(&self.cols))
            || crate::vector::ops::reproducible_sums()
        {
            // (the reproducible mode's dots are binned: the caller takes it)
            return self.apply(x, y).map(|_| None);
        }
        self.forward_host::<true>(x.local(), y.local_mut())
            .map(Some)
    }
    /// On host-addressable vectors: each vector's ghosts moved in turn (the diag product of all of
    /// them while the last ones move), then the offd rows, each block read from memory once
    /// ([`LocalCsr::mult_many`]). Elsewhere, or where the ghosts' buffer cannot be had, one product
    /// per vector (the same messages in the same order).
    fn apply_many(&self, xs: &[&DistVector<T>], ys: &mut [&mut DistVector<T>]) -> Result<()> {
        let host =
            xs.iter().all(|x| x.host_addressable()) && ys.iter().all(|y| y.host_addressable());
        let ng = self.halo.n_ghost();
        let mut ghosts = Vec::new();
        if !host
            || crate::vector::ops::reproducible_sums()
            || xs.len() != ys.len()
            || xs.len() < 2
            || ng
                .checked_mul(xs.len())
                .is_none_or(|n| ghosts.try_reserve_exact(n).is_err())
        {
            return super::apply_each(self, xs, ys);
        }
        for (x, y) in xs.iter().zip(ys.iter()) {
            super::check_apply(self, x, y, false)?;
        }
        ghosts.resize(ng * xs.len(), T::zero());
        let blk = self.blocks();
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let send = &mut b.send;
        let xl: Vec<&[T]> = xs.iter().map(|x| x.local()).collect();
        let mut yl: Vec<&mut [T]> = ys.iter_mut().map(|y| y.local_mut()).collect();
        let last = xs.len() - 1;
        for (j, x) in xl.iter().enumerate() {
            let g = &mut ghosts[j * ng..(j + 1) * ng];
            self.halo.forward(x, send, g, || {
                if j == last {
                    blk.diag.mult_many(&xl, &mut yl, false);
                }
                Ok(())
            })?;
        }
        let gl: Vec<&[T]> = if ng == 0 {
            vec![&[][..]; xs.len()]
        } else {
            ghosts.chunks(ng).collect()
        };
        blk.offd.mult_many(&gl, &mut yl, true);
        Ok(())
    }
    /// On host-addressable double-precision vectors of a square operator: each vector's ghosts
    /// moved, then piece by piece of rows the diag and offd products of every vector
    /// ([`LocalCsr::mult_many_rows`]: the bits of `apply_many`'s) and the piece's sums while it is
    /// in the cache ([`GramRows`]: the bits of the two steps'). Elsewhere the two steps.
    ///
    /// [`GramRows`]: crate::exec::multi::GramRows
    fn apply_many_gram(
        &self,
        xs: &[&DistVector<T>],
        ys: &mut [&mut DistVector<T>],
    ) -> Result<Vec<f64>> {
        let k = xs.len();
        let host =
            xs.iter().all(|x| x.host_addressable()) && ys.iter().all(|y| y.host_addressable());
        let ng = self.halo.n_ghost();
        let mut ghosts = Vec::new();
        let rows = self.rows.local_len() as usize;
        let tiles = (host && k >= 2 && k == ys.len())
            .then(|| crate::exec::multi::GramRows::new::<T>(k, 2 * k))
            .flatten();
        let Some(mut tiles) = tiles.filter(|_| {
            !crate::vector::ops::reproducible_sums()
                && self.cols.local_len() as usize == rows
                && ng
                    .checked_mul(k)
                    .is_some_and(|n| ghosts.try_reserve_exact(n).is_ok())
        }) else {
            return super::apply_many_gram_by_steps(self, xs, ys);
        };
        for (x, y) in xs.iter().zip(ys.iter()) {
            super::check_apply(self, x, y, false)?;
        }
        ghosts.resize(ng * k, T::zero());
        let blk = self.blocks();
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let send = &mut b.send;
        let xl: Vec<&[T]> = xs.iter().map(|x| x.local()).collect();
        let mut yl: Vec<&mut [T]> = ys.iter_mut().map(|y| y.local_mut()).collect();
        for (j, x) in xl.iter().enumerate() {
            self.halo
                .forward(x, send, &mut ghosts[j * ng..(j + 1) * ng], || Ok(()))?;
        }
        let gl: Vec<&[T]> = if ng == 0 {
            vec![&[][..]; k]
        } else {
            ghosts.chunks(ng).collect()
        };
        for p0 in (0..rows).step_by(multi::PIECE) {
            let p1 = (p0 + multi::PIECE).min(rows);
            blk.diag.mult_many_rows(&xl, &mut yl, p0, p1, false);
            blk.offd.mult_many_rows(&gl, &mut yl, p0, p1, true);
            let both: Vec<&[T]> = xl.iter().copied().chain(yl.iter().map(|y| &**y)).collect();
            tiles.add(&xl, &both, p0, p1);
        }
        let both: Vec<&[T]> = xl.iter().copied().chain(yl.iter().map(|y| &**y)).collect();
        let sums = tiles.finish(&xl, &both);
        let sums =
            sums.ok_or_else(|| crate::err!(OutOfMemory, "the sums of {k} x {} pairs", 2 * k))?;
        // (a replicated layout counts one rank's entries, as every Gram matrix does)
        Ok(sums
            .into_iter()
            .map(|v| crate::vector::share(xs[0].layout(), v))
            .collect())
    }
    /// On host-addressable vectors (others: [`super::streamed_by_apply`]): while the halo and the
    /// caller's reduction move, the diag product of the first rows goes into n, a block at a time, polling the
    /// reduction between blocks; then the offd part of those rows; then, when the caller streams,
    /// those rows and every further block formed in a small buffer (diag then offd, the bits of
    /// `CsrOp::forward_host`), each row handed over (with x's entry, which the caller may
    /// overwrite) once the rows that read x there are formed: the buffer holds a block and the
    /// band below the diagonal. With a band wider than a quarter of the rows, or no buffer, the
    /// whole product is formed in n and handed over at once; without streaming, the rest of
    /// n = A x.
    fn apply_streamed(
        &self,
        x: &mut DistVector<T>,
        n: &mut DistVector<T>,
        ready: &mut dyn FnMut(bool) -> Result<Option<bool>>,
        rows: super::RowSink<'_, T>,
    ) -> Result<()> {
        if !(n.host_addressable() && x.host_addressable()) {
            return super::streamed_by_apply(self, x, n, ready, rows);
        }
        let blk = self.blocks();
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs {
            send,
            ghost,
            stream,
        } = &mut *b;
        let (xl, nl) = (x.local_mut(), n.local_mut());
        let len = nl.len();
        let mut done = 0;
        let mut go = None;
        self.halo.forward(xl, send, ghost, || {
            while done < len {
                go = ready(false)?;
                if go.is_some() {
                    break;
                }
                let e = (done + POLL_ROWS).min(len);
                blk.diag
                    .mult_rows::<false>(xl, &mut nl[done..e], done, false, &[]);
                done = e;
            }
            Ok(())
        })?;
        blk.offd
            .mult_rows::<false>(ghost, &mut nl[..done], 0, true, &[]);
        let go = match go {
            Some(g) => g,
            None => ready(true)?
                .ok_or_else(|| crate::err!(Internal, "a reduction waited for did not answer"))?,
        };
        // a row of x is handed over (and may be overwritten) once every row that reads it is
        // formed: row i reads x from i - reach on
        let reach = *self.reach.get_or_init(|| blk.diag.lower_reach());
        // (the buffer holds a block, the band, and up to 7 rows kept back to start the next
        // hand-over on a multiple of 8 rows)
        let want = if go && reach <= len / 4 {
            STREAM_ROWS.saturating_add(reach).saturating_add(8).min(len)
        } else {
            0
        };
        // the block buffer, made at the first streamed product
        if want > 0 && stream.len() < want && stream.try_reserve_exact(want - stream.len()).is_ok()
        {
            stream.resize(want, T::zero());
        }
        if want == 0 || stream.len() < want {
            // the rest of n = A x (and, streaming with a wide band or without a buffer, all rows
            // at once)
            blk.diag
                .mult_rows::<false>(xl, &mut nl[done..], done, false, &[]);
            blk.offd
                .mult_rows::<false>(ghost, &mut nl[done..], done, true, &[]);
            if go {
                rows(0, nl, xl);
            }
            return Ok(());
        }
        // (hand-overs start on multiples of 8 rows: the caller's pass then runs in whole groups)
        let safe = |done: usize| {
            if done == len {
                len
            } else {
                done.saturating_sub(reach) / 8 * 8
            }
        };
        // rows hand..done are formed and not handed over: hand..hand + k in the buffer
        let mut hand = safe(done);
        if hand > 0 {
            rows(0, &nl[..hand], &mut xl[..hand]);
        }
        let mut k = done - hand;
        stream[..k].copy_from_slice(&nl[hand..done]);
        while done < len {
            let e = (done + STREAM_ROWS).min(len);
            let y = &mut stream[k..k + (e - done)];
            blk.diag.mult_rows::<false>(xl, y, done, false, &[]);
            blk.offd.mult_rows::<false>(ghost, y, done, true, &[]);
            k += e - done;
            done = e;
            let s = safe(done);
            if s > hand {
                let c = s - hand;
                rows(hand, &stream[..c], &mut xl[hand..s]);
                stream.copy_within(c..k, 0);
                k -= c;
                hand = s;
            }
        }
        Ok(())
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.check_location(y, "y", "x")?;
        if crate::vector::ops::reproducible_sums() {
            // x = A^H y as the rows of the conjugate transpose, in global order
            let at = self.repro_adjoint()?;
            return at.forward(y, x);
        }
        crate::exec::csr_backward(&self.sparse(), y.part(), x.part_mut())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn values_version(&self) -> u64 {
        self.version()
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("CSR {}x{}", self.rows.global_len(), self.cols.global_len())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        if !self.rows.compatible(&self.cols) {
            crate::bail!(
                NotSupported,
                "the diagonal needs equal row and column layouts (rows split as {:?}, columns as {:?})",
                self.rows.local_lens(),
                self.cols.local_lens()
            );
        }
        let blk = self.blocks();
        for (i, di) in d.local_mut().iter_mut().enumerate() {
            *di = blk.diag.entry(i, i);
        }
        Ok(())
    }
}

impl<T: Scalar> CsrOp<T> {
    /// x = A^H y on host vectors: offd^H y to the ghosts' owners, diag^H y meanwhile.
    fn backward_host(&self, y: &[T], x: &mut [T]) -> Result<()> {
        let blk = self.blocks();
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs { send, ghost, .. } = &mut *b;
        ghost.iter_mut().for_each(|g| *g = T::zero());
        blk.offd.mult_adjoint_add(y, ghost);
        self.halo.reverse(ghost, send, || {
            x.iter_mut().for_each(|v| *v = T::zero());
            blk.diag.mult_adjoint_add(y, x);
            Ok(())
        })?;
        self.halo.add_reverse(send, x);
        Ok(())
    }
}

impl<T: Scalar> crate::exec::SparseHost<T> for CsrOp<T> {
    fn forward(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.forward_host::<false>(x, y).map(|_| ())
    }
    fn backward(&self, y: &[T], x: &mut [T]) -> Result<()> {
        self.backward_host(y, x)
    }
    fn with_blocks(
        &self,
        f: &mut dyn FnMut([crate::exec::HostCsr<'_, T>; 2]) -> Result<()>,
    ) -> Result<()> {
        let b = self.blocks();
        f([b.diag.host_csr()?, b.offd.host_csr()?])
    }
    fn ordered_rows(&self) -> Result<(Vec<i64>, Vec<i64>, Vec<T>, usize)> {
        let blk = self.blocks();
        let first = self.cols.offsets()[self.cols.comm().rank() as usize];
        let rr = repro::ReproRows::new(&blk, first, &self.col_map, self.version(), true)?;
        let (ptr, src, val, nloc) = rr.into_arrays();
        let what = "the reproducible product's rows for a backend";
        let wide = |v: Vec<usize>| -> Result<Vec<i64>> {
            let mut w = Vec::new();
            crate::error::try_reserve(&mut w, v.len(), what)?;
            w.extend(v.into_iter().map(|e| e as i64));
            Ok(w)
        };
        Ok((wide(ptr)?, wide(src)?, val, nloc))
    }
}
