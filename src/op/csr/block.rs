//! The local blocks of a CSR matrix (`diag` and `offd`): arrays owned by parlops or borrowed from
//! the caller, checked once, and the compact layouts a block may take instead ([`super::sell`],
//! [`super::narrow`]).

use super::kernels::{Rows, SPLIT_ROW, nonempty_rows, spmv, spmv_h};
use super::narrow::Narrow;
use super::sell::Sell;
use crate::error::Result;
use crate::scalar::Scalar;

/// An array owned by parlops or borrowed from the caller (zero copy; the caller keeps it alive).
pub enum Arr<X> {
    Owned(Vec<X>),
    /// The caller's `len` entries at `ptr`. Making one is a promise that `as_slice` relies on:
    /// `ptr` points to `len` initialised, aligned entries of `X` (or `len` is 0), alive as long as
    /// the `Arr` and unchanged while a parlops call reads them (values may change between calls,
    /// announced: `NewValues::InPlace`), made by the C layer's CSR constructors (src/capi/op/csr.rs)
    /// under their `# Safety` contract; the variant is public, so nothing else enforces it.
    Borrowed {
        ptr: *const X,
        len: usize,
    },
}

// SAFETY: borrowed arrays are read-only for parlops and their lifetime is the caller's promise.
unsafe impl<X: Send> Send for Arr<X> {}
// SAFETY: as for Send: `&Arr` only reads the entries (owned, or the caller's under the promise
// above), which `X: Sync` lets several threads do at once.
unsafe impl<X: Sync> Sync for Arr<X> {}

impl<X> Arr<X> {
    pub fn as_slice(&self) -> &[X] {
        match self {
            Arr::Owned(v) => v,
            Arr::Borrowed { len: 0, .. } => &[],
            // SAFETY: the promise made with a `Borrowed` array (see the variant): `ptr` points to
            // `len` (here > 0) initialised, aligned entries alive and unchanged while `self` is,
            // and the slice borrows `self`.
            Arr::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
    /// The address parlops reads (the caller's own pointer when borrowed).
    pub fn as_ptr(&self) -> *const X {
        self.as_slice().as_ptr()
    }
}

/// Seals [`IndexInt`]: the CSR's unsafe views of caller index arrays rely on exactly i32 and i64.
mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// Integer types usable as CSR indices: i32 or i64 (sealed).
pub trait IndexInt: sealed::Sealed + Copy + Send + Sync + 'static {
    fn to_i64(self) -> i64;
    fn to_usize(self) -> usize {
        self.to_i64() as usize
    }
    fn from_usize(v: usize) -> Self;
    /// An index array of this width.
    fn idx(a: Arr<Self>) -> Idx;
}
impl IndexInt for i32 {
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_usize(v: usize) -> Self {
        v as i32
    }
    fn idx(a: Arr<i32>) -> Idx {
        Idx::I32(a)
    }
}
impl IndexInt for i64 {
    fn to_i64(self) -> i64 {
        self
    }
    fn from_usize(v: usize) -> Self {
        v as i64
    }
    fn idx(a: Arr<i64>) -> Idx {
        Idx::I64(a)
    }
}

/// Index arrays of one of the two integer widths.
pub enum Idx {
    I32(Arr<i32>),
    I64(Arr<i64>),
}

impl From<Arr<i32>> for Idx {
    fn from(a: Arr<i32>) -> Idx {
        Idx::I32(a)
    }
}
impl From<Arr<i64>> for Idx {
    fn from(a: Arr<i64>) -> Idx {
        Idx::I64(a)
    }
}

/// One rank's CSR block: `nrows` x `ncols`, column indices local to the block.
pub struct LocalCsr<T: Scalar> {
    pub nrows: usize,
    pub ncols: usize,
    pub(crate) indptr: Idx,
    pub(crate) indices: Idx,
    pub(crate) values: Arr<T>,
    /// The rows that hold entries, kept when they are under 60% of the rows (PETSc's compressed-row
    /// rule: an offd block touches only the rows next to another rank's columns): a product then
    /// visits only them.
    pub(super) nz_rows: Option<Vec<usize>>,
    /// The same entries in a more compact layout ([`Compact`]), where that product is the faster
    /// one and parlops owns the arrays; the CSR arrays above are then empty.
    pub(super) compact: Option<Compact<T>>,
}

/// The layouts a block parlops owns may take instead of its CSR arrays.
pub(super) enum Compact<T> {
    /// SELL-8 chunks ([`sell`]): double precision on a CPU with AVX-512F; rows sorted by length
    /// within windows where their lengths differ, 16-bit columns where the rows allow them.
    Sell(Sell<T>),
    /// CSR with 16-bit columns from each row's base ([`narrow`]).
    Narrow(Narrow<T>),
}

impl<T: Scalar> Compact<T> {
    pub(super) fn rows(&self) -> &dyn RowsDyn<T> {
        match self {
            Compact::Sell(s) => s,
            Compact::Narrow(n) => n,
        }
    }
}

/// The object-safe part of [`Rows`] that [`LocalCsr`] forwards to whichever layout it holds.
pub(super) trait RowsDyn<T: Scalar> {
    fn nnz(&self) -> usize;
    fn values_ptr(&self) -> *const T;
    fn entry(&self, r: usize, c: usize) -> T;
    fn for_each_dyn(&self, f: &mut dyn FnMut(usize, usize, T));
    fn mult_adjoint_add(&self, y: &[T], x: &mut [T]);
    fn add_row_counts_dyn(&self, counts: &mut [usize]);
    fn scatter_dyn(&self, fill: &mut [usize], map: ColMap<'_>, cols: &mut [i64], vals: &mut [T]);
}

use super::copy::{ColMap, scatter_rows};

macro_rules! rows_dyn {
    ($t:ident) => {
        impl<T: Scalar> RowsDyn<T> for $t<T> {
            fn nnz(&self) -> usize {
                self.nnz
            }
            fn values_ptr(&self) -> *const T {
                $t::values_ptr(self)
            }
            fn entry(&self, r: usize, c: usize) -> T {
                Rows::entry(self, r, c)
            }
            fn for_each_dyn(&self, f: &mut dyn FnMut(usize, usize, T)) {
                Rows::for_each(self, &mut |r, c, v| f(r, c, v))
            }
            fn mult_adjoint_add(&self, y: &[T], x: &mut [T]) {
                Rows::mult_adjoint_add(self, y, x)
            }
            fn add_row_counts_dyn(&self, counts: &mut [usize]) {
                for (r, n) in counts.iter_mut().enumerate().take(self.nrows) {
                    *n += Rows::row(self, r).count();
                }
            }
            fn scatter_dyn(
                &self,
                fill: &mut [usize],
                map: ColMap<'_>,
                cols: &mut [i64],
                vals: &mut [T],
            ) {
                scatter_rows(self.nrows, |r| Rows::row(self, r), fill, map, cols, vals)
            }
        }
    };
}
rows_dyn!(Sell);
rows_dyn!(Narrow);

pub(super) fn check_block<I: IndexInt>(
    indptr: &[I],
    indices: &[I],
    nrows: usize,
    ncols: usize,
    what: &str,
) -> Result<usize> {
    if indptr.len() != nrows + 1 {
        crate::bail!(
            SizeMismatch,
            "{what}: row pointer has {} entries, {nrows} rows need {}",
            indptr.len(),
            nrows + 1
        );
    }
    if indptr[0].to_i64() != 0 {
        crate::bail!(
            InvalidArgument,
            "{what}: row pointer starts at {}, not 0",
            indptr[0].to_i64()
        );
    }
    for r in 0..nrows {
        let (a, b) = (indptr[r].to_i64(), indptr[r + 1].to_i64());
        if b < a {
            crate::bail!(
                InvalidArgument,
                "{what}: row pointer decreases at local row {r} ({a} then {b})"
            );
        }
    }
    let nnz = indptr[nrows].to_i64() as usize;
    if indices.len() < nnz {
        crate::bail!(
            SizeMismatch,
            "{what}: {} column indices for {nnz} entries",
            indices.len()
        );
    }
    for (k, j) in indices[..nnz].iter().enumerate() {
        let j = j.to_i64();
        if j < 0 || j >= ncols as i64 {
            crate::bail!(
                InvalidArgument,
                "{what}: column index {j} of entry {k} is outside 0..{ncols}"
            );
        }
    }
    Ok(nnz)
}

impl<T: Scalar> LocalCsr<T> {
    /// A validated block; the arrays are used as given (owned or borrowed).
    pub fn new(
        nrows: usize,
        ncols: usize,
        indptr: Idx,
        indices: Idx,
        values: Arr<T>,
        what: &str,
    ) -> Result<Self> {
        let nnz = match (&indptr, &indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                check_block(p.as_slice(), i.as_slice(), nrows, ncols, what)?
            }
            (Idx::I64(p), Idx::I64(i)) => {
                check_block(p.as_slice(), i.as_slice(), nrows, ncols, what)?
            }
            _ => crate::bail!(
                InvalidArgument,
                "{what}: row pointers and column indices have different widths"
            ),
        };
        if values.as_slice().len() < nnz {
            crate::bail!(
                SizeMismatch,
                "{what}: {} values for {nnz} entries",
                values.as_slice().len()
            );
        }
        let nz_rows = match &indptr {
            Idx::I32(p) => nonempty_rows(p.as_slice()),
            Idx::I64(p) => nonempty_rows(p.as_slice()),
        };
        Ok(LocalCsr {
            nrows,
            ncols,
            indptr,
            indices,
            values,
            nz_rows,
            compact: None,
        })
    }

    /// An empty block (no entries).
    pub fn empty(nrows: usize, ncols: usize) -> Self {
        LocalCsr {
            nrows,
            ncols,
            indptr: Idx::I32(Arr::Owned(vec![0; nrows + 1])),
            indices: Idx::I32(Arr::Owned(Vec::new())),
            values: Arr::Owned(Vec::new()),
            nz_rows: Some(Vec::new()),
            compact: None,
        }
    }

    /// Does parlops own the arrays (copied at construction, not borrowed)?
    fn owned(&self) -> bool {
        matches!(
            (&self.indptr, &self.indices, &self.values),
            (
                Idx::I32(Arr::Owned(_)),
                Idx::I32(Arr::Owned(_)),
                Arr::Owned(_)
            ) | (
                Idx::I64(Arr::Owned(_)),
                Idx::I64(Arr::Owned(_)),
                Arr::Owned(_)
            )
        )
    }

    /// A block of `nrows` x `ncols` held in SELL-8 chunks only (made from the caller's rows without
    /// CSR arrays between; `nz_rows` as [`nonempty_rows`] gives it).
    pub(super) fn compact_sell(
        nrows: usize,
        ncols: usize,
        sell: Sell<T>,
        nz_rows: Option<Vec<usize>>,
    ) -> Self {
        LocalCsr {
            nrows,
            ncols,
            indptr: Idx::I32(Arr::Owned(Vec::new())),
            indices: Idx::I32(Arr::Owned(Vec::new())),
            values: Arr::Owned(Vec::new()),
            nz_rows,
            compact: Some(Compact::Sell(sell)),
        }
    }

    /// This block in a compact layout where that product is the faster one and parlops owns the
    /// arrays (borrowed arrays are read in place, as promised): SELL-8 chunks where they pay on
    /// this CPU (sorted within windows where that pads less), else CSR with 16-bit columns where
    /// that moves fewer bytes. Unchanged when neither applies, memory is short, or the environment
    /// sets PARLOPS_CSR_LAYOUT=rows (the CSR arrays as given, for comparison).
    pub(super) fn compacted(mut self) -> Self {
        if rows_only() || self.compact.is_some() || !self.owned() {
            return self;
        }
        fn pick<T: Scalar, I: IndexInt>(p: &[I], i: &[I], v: &[T], n: usize) -> Option<Compact<T>> {
            let sell = Sell::<T>::pays()
                .then(|| Sell::from_csr(p, i, v, n))
                .flatten();
            // 16-bit columns for long rows only: a short row (a stencil's 5 or 7 entries) saves
            // too few bytes to pay for its base and offsets (1.2-1.4x CSR's time for the 5-point
            // Laplacian from 1k to 1M rows on an AMD EPYC, benches/NOTES.md item 40)
            let nrows = p.len().saturating_sub(1);
            let long = p.last().is_some_and(|e| e.to_usize() >= SPLIT_ROW * nrows);
            sell.map(Compact::Sell).or_else(|| {
                long.then(|| Narrow::from_csr(p, i, v, n).map(Compact::Narrow))
                    .flatten()
            })
        }
        let v = self.values.as_slice();
        let c = match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => pick(p.as_slice(), i.as_slice(), v, self.ncols),
            (Idx::I64(p), Idx::I64(i)) => pick(p.as_slice(), i.as_slice(), v, self.ncols),
            _ => None,
        };
        if let Some(c) = c {
            self.compact = Some(c);
            self.indptr = Idx::I32(Arr::Owned(Vec::new()));
            self.indices = Idx::I32(Arr::Owned(Vec::new()));
            self.values = Arr::Owned(Vec::new());
        }
        self
    }

    /// This block in CSR arrays parlops owns (32-bit indices when they fit), whatever its storage.
    /// The block as CSR arrays for a backend that copies it (a CSR copy of a compact block).
    pub(crate) fn host_csr(&self) -> Result<crate::exec::HostCsr<'_, T>> {
        use std::borrow::Cow;
        fn bytes<I: Copy>(a: &Arr<I>) -> &[u8] {
            let v = a.as_slice();
            // SAFETY: the bytes of a live slice of plain integers, borrowed with it.
            unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
        }
        let nnz = self.nnz();
        if self.compact.is_some() {
            let c = self.to_csr()?;
            let h = c.host_csr()?;
            return Ok(crate::exec::HostCsr {
                nrows: h.nrows,
                indptr: Cow::Owned(h.indptr.into_owned()),
                indices: Cow::Owned(h.indices.into_owned()),
                values: Cow::Owned(h.values.into_owned()),
                wide: h.wide,
                nnz,
            });
        }
        let (p, i, wide) = match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => (bytes(p), bytes(i), false),
            (Idx::I64(p), Idx::I64(i)) => (bytes(p), bytes(i), true),
            _ => crate::bail!(Internal, "mixed index widths"),
        };
        Ok(crate::exec::HostCsr {
            nrows: self.nrows,
            indptr: Cow::Borrowed(p),
            indices: Cow::Borrowed(i),
            values: Cow::Borrowed(self.values.as_slice()),
            wide,
            nnz,
        })
    }
    pub(crate) fn to_csr(&self) -> Result<LocalCsr<T>> {
        let nnz = self.nnz();
        fn build<T: Scalar, I: IndexInt>(b: &LocalCsr<T>, nnz: usize) -> Result<LocalCsr<T>> {
            let mut p = crate::error::try_vec(b.nrows + 1, I::from_usize(0), "CSR row pointers")?;
            let mut i = crate::error::try_vec(nnz, I::from_usize(0), "CSR column indices")?;
            let mut v = crate::error::try_vec(nnz, T::zero(), "CSR values")?;
            let mut k = 0;
            b.for_each(|r, c, a| {
                i[k] = I::from_usize(c);
                v[k] = a;
                k += 1;
                p[r + 1] = I::from_usize(k);
            });
            for r in 0..b.nrows {
                if p[r + 1].to_usize() < p[r].to_usize() {
                    p[r + 1] = p[r];
                }
            }
            LocalCsr::new(
                b.nrows,
                b.ncols,
                I::idx(Arr::Owned(p)),
                I::idx(Arr::Owned(i)),
                Arr::Owned(v),
                "CSR block",
            )
        }
        if nnz < i32::MAX as usize && self.ncols < i32::MAX as usize {
            build::<T, i32>(self, nnz)
        } else {
            build::<T, i64>(self, nnz)
        }
    }

    pub fn nnz(&self) -> usize {
        if let Some(c) = &self.compact {
            return c.rows().nnz();
        }
        match &self.indptr {
            Idx::I32(p) => p.as_slice()[self.nrows] as usize,
            Idx::I64(p) => p.as_slice()[self.nrows] as usize,
        }
    }
    pub fn values_ptr(&self) -> *const T {
        match &self.compact {
            Some(c) => c.rows().values_ptr(),
            None => self.values.as_ptr(),
        }
    }
    /// Call `f(row, column, value)` for every stored entry, row by row, in storage order.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, T)) {
        fn go<T: Scalar, I: IndexInt>(
            p: &[I],
            idx: &[I],
            v: &[T],
            f: &mut impl FnMut(usize, usize, T),
        ) {
            for r in 0..p.len().saturating_sub(1) {
                for k in p[r].to_usize()..p[r + 1].to_usize() {
                    f(r, idx[k].to_usize(), v[k]);
                }
            }
        }
        if let Some(c) = &self.compact {
            return c.rows().for_each_dyn(&mut f);
        }
        match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                go(p.as_slice(), i.as_slice(), self.values.as_slice(), &mut f)
            }
            (Idx::I64(p), Idx::I64(i)) => {
                go(p.as_slice(), i.as_slice(), self.values.as_slice(), &mut f)
            }
            _ => unreachable!("validated at construction"),
        }
    }

    /// y = B x (`add`: y += B x).
    pub fn mult(&self, x: &[T], y: &mut [T], add: bool) {
        self.mult_dot::<false>(x, y, add, &[]);
    }

    /// y = B x (`add`: y += B x), and, with `DOT`, sum_r conj(w_r) (B x)_r over the block's rows in
    /// row order (each product formed and summed in f64 parts: in the vector's own rounding for
    /// double-precision data, exact products for single precision), in the same pass.
    pub fn mult_dot<const DOT: bool>(
        &self,
        x: &[T],
        y: &mut [T],
        add: bool,
        w: &[T],
    ) -> (f64, f64) {
        assert!(
            y.len() == self.nrows,
            "CSR block {}x{} applied to vectors of {} -> {} entries",
            self.nrows,
            self.ncols,
            x.len(),
            y.len()
        );
        self.mult_rows::<DOT>(x, y, 0, add, w)
    }

    /// [`LocalCsr::mult_dot`] over the rows r0..r0 + y.len() only (y[i] and w[i] belong to row
    /// r0 + i): each row's value has the bits of the whole product's.
    pub fn mult_rows<const DOT: bool>(
        &self,
        x: &[T],
        y: &mut [T],
        r0: usize,
        add: bool,
        w: &[T],
    ) -> (f64, f64) {
        // the one check per call that makes the unchecked loop below sound (with LocalCsr::new's)
        assert!(
            x.len() >= self.ncols
                && r0.checked_add(y.len()).is_some_and(|e| e <= self.nrows)
                && (!DOT || w.len() == y.len()),
            "CSR block {}x{}: rows {r0}.. of {} entries applied to a vector of {}",
            self.nrows,
            self.ncols,
            y.len(),
            x.len()
        );
        let rows = if add {
            self.nz_rows.as_deref().map(|nz| {
                let a = nz.partition_point(|&r| r < r0);
                let b = nz.partition_point(|&r| r < r0 + y.len());
                &nz[a..b]
            })
        } else {
            None
        };
        let split = !crate::vector::ops::sequential_sums();
        match &self.compact {
            Some(Compact::Sell(s)) => return s.mult::<DOT>(x, y, r0, add, rows, w, split),
            Some(Compact::Narrow(s)) => return s.mult::<DOT>(x, y, r0, add, rows, w, split),
            None => {}
        }
        let v = self.values.as_slice();
        // arrays parlops owns cannot change after validation: unchecked inner loop; arrays it
        // borrows (PARLOPS_WRAP) could, against their contract: checked, so that a corrupted one
        // panics (caught, and agreed as PARLOPS_ERR_INTERNAL) instead of reading out of bounds
        let owned = self.owned();
        macro_rules! go {
            ($p:expr, $i:expr, $I:ty) => {
                if owned {
                    spmv::<T, $I, DOT, false>(
                        $p.as_slice(),
                        $i.as_slice(),
                        v,
                        x,
                        y,
                        r0,
                        add,
                        rows,
                        w,
                    )
                } else {
                    spmv::<T, $I, DOT, true>(
                        $p.as_slice(),
                        $i.as_slice(),
                        v,
                        x,
                        y,
                        r0,
                        add,
                        rows,
                        w,
                    )
                }
            };
        }
        match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => go!(p, i, i32),
            (Idx::I64(p), Idx::I64(i)) => go!(p, i, i64),
            _ => unreachable!("validated at construction"),
        }
    }

    /// The largest r - c over the stored entries (r, c) of the block, 0 when none lies left of its
    /// row: row r of the product reads x from entry r - this on.
    pub fn lower_reach(&self) -> usize {
        let mut m = 0usize;
        self.for_each(|r, c, _| m = m.max(r.saturating_sub(c)));
        m
    }

    /// x += B^H y.
    pub fn mult_adjoint_add(&self, y: &[T], x: &mut [T]) {
        if let Some(c) = &self.compact {
            return c.rows().mult_adjoint_add(y, x);
        }
        match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                spmv_h(p.as_slice(), i.as_slice(), self.values.as_slice(), y, x)
            }
            (Idx::I64(p), Idx::I64(i)) => {
                spmv_h(p.as_slice(), i.as_slice(), self.values.as_slice(), y, x)
            }
            _ => unreachable!("validated at construction"),
        }
    }

    /// Sum of the entries (row r, column c) of the block, or zero.
    pub(super) fn entry(&self, r: usize, c: usize) -> T {
        fn find<T: Scalar, I: IndexInt>(p: &[I], i: &[I], v: &[T], r: usize, c: usize) -> T {
            let mut s = T::zero();
            for k in p[r].to_usize()..p[r + 1].to_usize() {
                if i[k].to_usize() == c {
                    s += v[k];
                }
            }
            s
        }
        if let Some(s) = &self.compact {
            return s.rows().entry(r, c);
        }
        match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                find(p.as_slice(), i.as_slice(), self.values.as_slice(), r, c)
            }
            (Idx::I64(p), Idx::I64(i)) => {
                find(p.as_slice(), i.as_slice(), self.values.as_slice(), r, c)
            }
            _ => unreachable!("validated at construction"),
        }
    }
}

/// Row r's smallest column and how far its largest lies from it ((0, 0) for an empty row) in the
/// validated CSR arrays `p`, `i`: whether a 16-bit offset from a base reaches every column.
#[inline]
pub(super) fn row_span<I: IndexInt>(p: &[I], i: &[I], r: usize) -> (usize, usize) {
    let cols = &i[p[r].to_usize()..p[r + 1].to_usize()];
    let Some(first) = cols.first() else {
        return (0, 0);
    };
    // one pass for both ends
    let f = first.to_usize();
    let (lo, hi) = cols[1..].iter().fold((f, f), |(lo, hi), c| {
        let c = c.to_usize();
        (lo.min(c), hi.max(c))
    });
    (lo, hi - lo)
}

/// Does the environment keep CSR blocks as given (PARLOPS_CSR_LAYOUT=rows, for comparison)?
pub(super) fn rows_only() -> bool {
    std::env::var_os("PARLOPS_CSR_LAYOUT").is_some_and(|v| v == "rows")
}

/// A fallible, huge-page advised vector of `n` copies of `v`, or None.
pub(super) fn filled<X: Clone>(n: usize, v: X) -> Option<Vec<X>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).ok()?;
    crate::memory::advise_huge(&out);
    out.resize(n, v);
    Some(out)
}

/// An empty Vec with room for `n` items (a fallible allocation, advised for huge pages).
pub(super) fn room<U>(n: usize, what: &str) -> Result<Vec<U>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        crate::err!(
            OutOfMemory,
            "cannot allocate the {what} ({n} entries of {} bytes) on this rank",
            std::mem::size_of::<U>()
        )
    })?;
    crate::memory::advise_huge(&v);
    Ok(v)
}
