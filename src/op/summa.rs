//! Dense matrix product by SUMMA on a square process grid (PyLops-MPI's MatrixMult, kind "summa"):
//! Y = A X with A (N x K), X (K x M), Y (N x M) all split in tiles over a p x p grid of P = p^2 ranks
//! (rank = row * p + col; tile r of an extent n covers [r*b, min((r+1)*b, n)) with b = ceil(n/p)).
//! The vectors hold each rank's tile of X or Y, row-major, in rank order. Each step broadcasts a tile
//! of A along process rows and a tile of X along process columns. The adjoint runs the same algorithm
//! with the conjugate-transposed tiles of A, exchanged once at construction (PyLops-MPI's saveAt).

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::comm::Comm;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, Partition};

/// Extent of tile `r` of `n` entries split over `p`.
pub fn tile(n: i64, p: i64, r: i64) -> (i64, i64) {
    let b = crate::op::halo::ceil_div(n, p);
    let s = r.saturating_mul(b).min(n);
    let e = r.saturating_add(1).saturating_mul(b).min(n);
    (s, e - s)
}

/// [`tile`] with its arguments checked (n >= 0, 0 <= index < grid). Not collective.
pub fn tile_checked(n: i64, grid: i64, index: i64) -> Result<(i64, i64)> {
    if n < 0 || grid < 1 || index < 0 || index >= grid {
        crate::bail!(
            InvalidArgument,
            "need n >= 0 and 0 <= index < grid, got n = {n}, grid = {grid}, index = {index}"
        );
    }
    Ok(tile(n, grid, index))
}

/// Entries of this rank's tile of A (N x K) on the square grid of `comm`; 0 when the communicator
/// is not square, a size is negative or the count overflows (the constructor reports those, by name).
pub fn local_a_len(comm: &Comm, n: i64, k: i64) -> usize {
    let size = comm.size() as i64;
    let g = (size as f64).sqrt().round() as i64;
    let rank = comm.rank() as i64;
    if g * g != size || n < 0 || k < 0 {
        return 0;
    }
    tile(n, g, rank / g)
        .1
        .checked_mul(tile(k, g, rank % g).1)
        .unwrap_or(0) as usize
}

struct Work<T> {
    a: Vec<T>,
    x: Vec<T>,
    acc: Vec<T>,
}

pub struct Summa<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    row_comm: Comm,
    col_comm: Comm,
    p: usize,
    /// padded tile sizes
    bn: usize,
    bk: usize,
    bm: usize,
    /// this rank's tile of A, padded (bn x bk), and of A^H taken from the transposed rank (bk x bn)
    a: Vec<T>,
    ah: Vec<T>,
    /// this rank's (local rows, local cols) of X and Y tiles
    xk: usize,
    ym: usize,
    yn: usize,
    work: Mutex<Work<T>>,
}

impl<T: Scalar> Summa<T> {
    /// `a_local`: this rank's tile of A (row-major, its tile's rows x cols). [collective]
    pub fn new(comm: &Arc<Comm>, n: i64, k: i64, m: i64, a_local: &[T]) -> Result<Summa<T>> {
        let size = comm.size() as i64;
        let p = (size as f64).sqrt().round() as i64;
        let (r, c) = (comm.rank() as i64 / p.max(1), comm.rank() as i64 % p.max(1));
        let check = (|| {
            if p * p != size {
                crate::bail!(
                    NotSupported,
                    "SUMMA needs a square number of ranks (p x p grid); this communicator has {size}"
                );
            }
            if n < 0 || k < 0 || m < 0 {
                crate::bail!(
                    InvalidArgument,
                    "sizes must be >= 0, got N = {n}, K = {k}, M = {m}"
                );
            }
            // the global sizes of Y and X, and this rank's tile, must be representable
            crate::error::checked_product("SUMMA: Y", &[("N", n), ("M", m)])?;
            crate::error::checked_product("SUMMA: X", &[("K", k), ("M", m)])?;
            let want = crate::error::checked_product(
                "SUMMA: this rank's tile of A",
                &[
                    ("tile rows", tile(n, p, r).1),
                    ("tile columns", tile(k, p, c).1),
                ],
            )? as usize;
            if a_local.len() != want {
                crate::bail!(
                    SizeMismatch,
                    "this rank's tile of A holds {} entries, its {} x {} tile needs {want}",
                    a_local.len(),
                    tile(n, p, r).1,
                    tile(k, p, c).1
                );
            }
            Ok(())
        })();
        comm.agree_same(check, "(N, K, M)", &[n, k, m])?;
        let p = p as usize;
        let (bn, bk, bm) = (
            tile(n, p as i64, 0).1 as usize,
            tile(k, p as i64, 0).1 as usize,
            tile(m, p as i64, 0).1 as usize,
        );
        let (ln, lk) = (
            tile(n, p as i64, r).1 as usize,
            tile(k, p as i64, c).1 as usize,
        );
        // every buffer is sized by the caller's N, K, M: allocated fallibly and agreed before the
        // exchange below
        let bufs = comm.agree((|| {
            let what = "SUMMA tile buffers";
            let nk = crate::error::checked_product(
                what,
                &[
                    ("tile rows of A", bn as i64),
                    ("tile columns of A", bk as i64),
                ],
            )? as usize;
            let big = bn.max(bk);
            let xm = crate::error::checked_product(
                what,
                &[("tile rows", big as i64), ("tile columns of X", bm as i64)],
            )? as usize;
            Ok((
                crate::error::try_vec(nk, T::zero(), what)?,
                crate::error::try_vec(nk, T::zero(), what)?,
                crate::error::try_vec(nk, T::zero(), what)?,
                Work {
                    a: crate::error::try_vec(nk, T::zero(), what)?,
                    x: crate::error::try_vec(xm, T::zero(), what)?,
                    acc: crate::error::try_vec(xm, T::zero(), what)?,
                },
            ))
        })())?;
        let (mut a, mut other, mut ah, work) = bufs;
        // (loops over one extent are skipped when the other is empty: an extent may be huge)
        if lk > 0 {
            for i in 0..ln {
                a[i * bk..i * bk + lk].copy_from_slice(&a_local[i * lk..(i + 1) * lk]);
            }
        }
        // A^H tile for the adjoint: rank (r, c) needs (A_{c,r})^H, held by rank (c, r)
        let partner = (c as usize * p + r as usize) as i32;
        comm.exchange(&a, &mut other, partner)?;
        if bk > 0 {
            for i in 0..bn {
                for j in 0..bk {
                    ah[j * bn + i] = other[i * bk + j].conj();
                }
            }
        }
        let row_comm = comm.split(r as i32, c as i32)?;
        let col_comm = comm.split(c as i32, r as i32)?;
        let (xk, ym, yn) = (
            tile(k, p as i64, r).1 as usize,
            tile(m, p as i64, c).1 as usize,
            ln,
        );
        let rows = Layout::new(comm.clone(), Partition::Scatter, n * m, (yn * ym) as i64)?;
        let cols = Layout::new(comm.clone(), Partition::Scatter, k * m, (xk * ym) as i64)?;
        Ok(Summa {
            rows,
            cols,
            row_comm,
            col_comm,
            p,
            bn,
            bk,
            bm,
            a,
            ah,
            xk,
            ym,
            yn,
            work: Mutex::new(work),
        })
    }

    /// out (lo x bm) = sum_k L_{row, k} R_{k, col}: L tiles (lo x li) broadcast along rows from column k,
    /// R tiles (li x bm) along columns from row k.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        left: &[T],
        lo: usize,
        li: usize,
        right_local: &[T],
        rk: usize,
        out: &mut [T],
        on: usize,
    ) -> Result<()> {
        let mut w = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let Work { a, x, acc } = &mut *w;
        let (a, x, acc) = (
            &mut a[..lo * li],
            &mut x[..li * self.bm],
            &mut acc[..lo * self.bm],
        );
        acc.iter_mut().for_each(|v| *v = T::zero());
        let (me_r, me_c) = (self.col_comm.rank() as usize, self.row_comm.rank() as usize);
        for k in 0..self.p {
            if me_c == k {
                a.copy_from_slice(left);
            }
            self.row_comm.bcast(a, k as i32)?;
            if me_r == k {
                x.iter_mut().for_each(|v| *v = T::zero());
                for i in (0..rk).take_while(|_| self.ym > 0) {
                    x[i * self.bm..i * self.bm + self.ym]
                        .copy_from_slice(&right_local[i * self.ym..(i + 1) * self.ym]);
                }
            }
            self.col_comm.bcast(x, k as i32)?;
            // nothing to add when an inner extent is empty (and lo may be huge then)
            for i in (0..lo).take_while(|_| li > 0 && self.bm > 0) {
                for j in 0..li {
                    let av = a[i * li + j];
                    if av.is_zero() {
                        continue;
                    }
                    for (o, xv) in acc[i * self.bm..(i + 1) * self.bm]
                        .iter_mut()
                        .zip(&x[j * self.bm..(j + 1) * self.bm])
                    {
                        *o += av * *xv;
                    }
                }
            }
        }
        for i in (0..on).take_while(|_| self.ym > 0) {
            out[i * self.ym..(i + 1) * self.ym]
                .copy_from_slice(&acc[i * self.bm..i * self.bm + self.ym]);
        }
        Ok(())
    }
}

impl<T: Scalar> LinearOperator<T> for Summa<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(
            &self.a,
            self.bn,
            self.bk,
            x.local(),
            self.xk,
            y.local_mut(),
            self.yn,
        )
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(
            &self.ah,
            self.bk,
            self.bn,
            y.local(),
            self.yn,
            x.local_mut(),
            self.xk,
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!(
            "SUMMA {}x{}",
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
}
