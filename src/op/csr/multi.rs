//! The product of a CSR block and several vectors (a sparse matrix times a multi-vector), in
//! pieces of [`PIECE`] rows: each piece's entries are read from memory once and then from the cache
//! for every vector, through the one-vector product of whatever layout the block is stored in
//! ([`LocalCsr::mult_rows`]: CSR, SELL, 16-bit columns), so every entry has the bits of
//! [`LocalCsr::mult`] on its vector.

use super::block::LocalCsr;
use crate::scalar::Scalar;

/// Rows per piece: a multiple of the SELL layout's sorting window (128 rows), and of its chunks;
/// a piece of a 5-point matrix's entries takes about 50 KiB.
pub(super) const PIECE: usize = 1024;

impl<T: Scalar> LocalCsr<T> {
    /// ys[j] = B xs[j] (`add`: ys[j] += B xs[j]) for every j: the block read from memory once;
    /// each entry has the bits of [`LocalCsr::mult`] on that vector.
    pub fn mult_many(&self, xs: &[&[T]], ys: &mut [&mut [T]], add: bool) {
        assert!(
            xs.len() == ys.len()
                && xs.iter().all(|x| x.len() >= self.ncols)
                && ys.iter().all(|y| y.len() == self.nrows),
            "CSR block {}x{} applied to {} vectors ({} outputs) of other lengths",
            self.nrows,
            self.ncols,
            xs.len(),
            ys.len()
        );
        for p0 in (0..self.nrows).step_by(PIECE) {
            let p1 = (p0 + PIECE).min(self.nrows);
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                self.mult_rows::<false>(x, &mut y[p0..p1], p0, add, &[]);
            }
        }
    }
}
