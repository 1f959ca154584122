//! Dense operators distributed by block rows (PyLops-MPI's MatrixMult, block kind): each rank holds
//! its rows of A for all columns. Forward gathers x (unless it is replicated) and multiplies
//! locally; the adjoint multiplies locally and sums over ranks.

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// A dense m x n operator, this rank holding `rows.local_len()` rows (row-major).
pub struct DenseBlockRow<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    a: Vec<T>,
    /// [full x | full A^H y | reduce buffer]
    work: Mutex<(Vec<T>, Vec<T>, Vec<T>)>,
}

impl<T: Scalar> DenseBlockRow<T> {
    /// Entries of this rank's block (`rows.local_len() * cols.global_len()`), checked for overflow.
    pub fn local_entries(rows: &Layout, cols: &Layout) -> Result<usize> {
        crate::error::checked_product(
            "argument 'local_rows'",
            &[
                ("local rows", rows.local_len()),
                ("global columns", cols.global_len()),
            ],
        )
        .map(|n| n as usize)
    }

    /// [`DenseBlockRow::new`] from a copy of the caller's block (the copy's allocation fallible).
    pub fn from_slice(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        local: &[T],
    ) -> Result<DenseBlockRow<T>> {
        Self::new(rows, cols, super::copied(local, "a copy of 'local_rows'")?)
    }

    /// `local` holds this rank's rows, row-major, `rows.local_len() * cols.global_len()` entries.
    pub fn new(rows: Arc<Layout>, cols: Arc<Layout>, local: Vec<T>) -> Result<DenseBlockRow<T>> {
        if !Arc::ptr_eq(rows.comm(), cols.comm()) {
            crate::bail!(
                LayoutMismatch,
                "the row and column layouts live on different communicators"
            );
        }
        if rows.partition().is_replicated() {
            crate::bail!(
                NotSupported,
                "a block-row dense operator needs a split (scatter) row layout"
            );
        }
        let n = cols.global_len() as usize;
        let m = rows.local_len() as usize;
        let mn = crate::error::checked_product(
            "dense",
            &[
                ("local rows", rows.local_len()),
                ("global columns", cols.global_len()),
            ],
        )? as usize;
        if local.len() != mn {
            crate::bail!(
                SizeMismatch,
                "the local block holds {} entries, but {m} local rows x {n} columns need {}",
                local.len(),
                mn
            );
        }
        let w = "the dense operator's work vectors (one global column vector each)";
        Ok(DenseBlockRow {
            work: Mutex::new((
                crate::error::try_vec(n, T::zero(), w)?,
                crate::error::try_vec(n, T::zero(), w)?,
                crate::error::try_vec(n, T::zero(), w)?,
            )),
            rows,
            cols,
            a: local,
        })
    }
}

impl<T: Scalar> LinearOperator<T> for DenseBlockRow<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let n = self.cols.global_len() as usize;
        let mut w = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let xf: &[T] = if self.cols.partition().is_replicated() {
            x.local()
        } else {
            let counts = self.cols.local_lens().to_vec();
            self.cols.comm().allgatherv(x.local(), &mut w.0, &counts)?;
            &w.0
        };
        for (i, yi) in y.local_mut().iter_mut().enumerate() {
            let row = &self.a[i * n..(i + 1) * n];
            let mut s = T::zero();
            for (a, b) in row.iter().zip(xf) {
                s += *a * *b;
            }
            *yi = s;
        }
        Ok(())
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let n = self.cols.global_len() as usize;
        let mut w = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let (_, z, full) = &mut *w;
        z.iter_mut().for_each(|v| *v = T::zero());
        for (i, yi) in y.local().iter().enumerate() {
            let row = &self.a[i * n..(i + 1) * n];
            for (zj, a) in z.iter_mut().zip(row) {
                *zj += a.conj() * *yi;
            }
        }
        self.cols.comm().allreduce_sum(z, full)?;
        let s = self.cols.local_start() as usize;
        let l = x.local().len();
        x.local_mut().copy_from_slice(&full[s..s + l]);
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!(
            "Dense {}x{}",
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        if !self.rows.compatible(&self.cols) {
            crate::bail!(
                NotSupported,
                "the diagonal needs equal row and column layouts"
            );
        }
        let n = self.cols.global_len() as usize;
        let s = self.rows.local_start() as usize;
        for (i, di) in d.local_mut().iter_mut().enumerate() {
            *di = self.a[i * n + s + i];
        }
        Ok(())
    }
}
