//! General block operators of distributed operators (MFEM's BlockOperator; PyLops-MPI's
//! MPIStackedVStack, MPIStackedHStack and MPIStackedBlockDiag in one): an m x n pattern of operators
//! on one communicator, `None` meaning a zero block, acting on stacked vectors (vectors of a stacked
//! layout, [`Layout::stack`]: on every rank its part of x_1, then of x_2, ...). And MFEM's
//! BlockLowerTriangularPreconditioner on such an operator.

use std::sync::Arc;

use super::{LinearOperator, Op, OpState};
use crate::comm::Comm;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// A view of the entries [off, off + part.local_len()) at `p` (this rank's entries of a stacked
/// vector) as a vector of `part`.
///
/// # Safety
/// The view must not outlive the vector `p` points into; a view of a vector borrowed immutably (a
/// pointer from `local().as_ptr()`) must not be written.
unsafe fn part_view<T: Scalar>(p: *mut T, part: &Arc<Layout>, off: usize) -> Result<DistVector<T>> {
    // SAFETY: our caller's contract (`# Safety` above): `p` points into a live host vector (aligned
    // for `T`) holding at least `off + part.local_len()` entries, as `view_host` requires of the
    // view's range.
    unsafe { DistVector::view_host(part.clone(), p.add(off)) }
}

/// Local offsets of the parts of a stacked layout.
fn offsets(parts: &[Arc<Layout>]) -> Vec<usize> {
    let mut o = vec![0usize];
    for p in parts {
        let last = *o.last().unwrap_or(&0);
        o.push(last + p.local_len() as usize);
    }
    o
}

/// `n` work vectors of the given layouts, the allocation agreed. [collective]
fn work<T: Scalar>(comm: &Comm, parts: &[Arc<Layout>]) -> Result<Vec<DistVector<T>>> {
    let v = parts
        .iter()
        .map(|p| DistVector::<T>::new(p.clone()))
        .collect::<Result<Vec<_>>>();
    comm.agree(v)
}

/// Two sets of work vectors (a block operator's row sums and column sums; a preconditioner's
/// residual and product).
type WorkPair<T> = OpState<(Vec<DistVector<T>>, Vec<DistVector<T>>)>;

/// The m x n block operator.
pub struct BlockOp<T: Scalar> {
    blocks: Vec<Option<Op<T>>>,
    m: usize,
    n: usize,
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    row_off: Vec<usize>,
    col_off: Vec<usize>,
    /// Sums of a block row (forward) and of a block column (adjoint).
    work: WorkPair<T>,
}

impl<T: Scalar> BlockOp<T> {
    /// From `m * n` blocks, row-major, `None` for zero. Every block row and every block column needs
    /// an operator (it gives the part's size); the operators of a block row share their rows, those
    /// of a block column their columns; all live on `comm`. Every rank passes the same pattern.
    /// [collective]
    pub fn new(
        comm: &Arc<Comm>,
        m: usize,
        n: usize,
        blocks: Vec<Option<Op<T>>>,
    ) -> Result<BlockOp<T>> {
        let pattern: Vec<i64> = [m as i64, n as i64]
            .into_iter()
            .chain(blocks.iter().map(|b| b.is_some() as i64))
            .collect();
        let local = (|| {
            if m == 0 || n == 0 || blocks.len() != m * n {
                crate::bail!(
                    InvalidArgument,
                    "a block operator of {m} x {n} blocks needs m, n >= 1 and m * n blocks; got {}",
                    blocks.len()
                );
            }
            let mut row_parts = Vec::with_capacity(m);
            for i in 0..m {
                let first = (0..n).find_map(|j| blocks[i * n + j].as_ref());
                let Some(f) = first else {
                    crate::bail!(
                        InvalidArgument,
                        "block row {i} has no operator: its size is unknown"
                    );
                };
                row_parts.push(f.rows().clone());
            }
            let mut col_parts = Vec::with_capacity(n);
            for j in 0..n {
                let first = (0..m).find_map(|i| blocks[i * n + j].as_ref());
                let Some(f) = first else {
                    crate::bail!(
                        InvalidArgument,
                        "block column {j} has no operator: its size is unknown"
                    );
                };
                col_parts.push(f.cols().clone());
            }
            for (k, b) in blocks.iter().enumerate() {
                let Some(a) = b else { continue };
                let (i, j) = (k / n, k % n);
                if !Arc::ptr_eq(a.rows().comm(), comm) || !Arc::ptr_eq(a.cols().comm(), comm) {
                    crate::bail!(
                        LayoutMismatch,
                        "block ({i}, {j}) ({}) lives on another communicator",
                        a.describe()
                    );
                }
                a.rows().check_compatible(
                    &row_parts[i],
                    &format!("the rows of block ({i}, {j})"),
                    &format!("block row {i}"),
                )?;
                a.cols().check_compatible(
                    &col_parts[j],
                    &format!("the columns of block ({i}, {j})"),
                    &format!("block column {j}"),
                )?;
            }
            Ok((row_parts, col_parts))
        })();
        let pre = local
            .as_ref()
            .map(|_| ())
            .map_err(|e| crate::error::Error::new(e.kind, e.msg.clone()));
        comm.agree_same(
            pre,
            "the block pattern (m, n and which blocks are given)",
            &pattern,
        )?;
        let (row_parts, col_parts) = local?;
        let rows = Layout::stack(comm, &row_parts)?;
        let cols = Layout::stack(comm, &col_parts)?;
        let w = (work(comm, &row_parts)?, work(comm, &col_parts)?);
        Ok(BlockOp {
            blocks,
            m,
            n,
            row_off: offsets(&row_parts),
            col_off: offsets(&col_parts),
            rows,
            cols,
            work: OpState::new(w),
        })
    }

    /// Block (i, j), `None` for a zero block.
    pub fn block(&self, i: usize, j: usize) -> Option<&Op<T>> {
        self.blocks.get(i * self.n + j).and_then(|b| b.as_ref())
    }

    /// (block rows, block columns).
    pub fn shape(&self) -> (usize, usize) {
        (self.m, self.n)
    }

    fn run(&self, x: &DistVector<T>, y: &mut DistVector<T>, adjoint: bool) -> Result<()> {
        let (outer, inner) = if adjoint {
            (self.n, self.m)
        } else {
            (self.m, self.n)
        };
        let (in_parts, out_parts) = if adjoint {
            (self.rows.parts(), self.cols.parts())
        } else {
            (self.cols.parts(), self.rows.parts())
        };
        let (in_off, out_off) = if adjoint {
            (&self.row_off, &self.col_off)
        } else {
            (&self.col_off, &self.row_off)
        };
        let mut guard = self.work.lock(&|| self.describe())?;
        let work = if adjoint { &mut guard.1 } else { &mut guard.0 };
        let (xp, yp) = (x.local().as_ptr() as *mut T, y.local_ptr());
        // every block is applied on every rank, whatever failed before (applies are collective)
        let mut e = Ok(());
        for o in 0..outer {
            // SAFETY: `y` has this operator's output layout (checked by `forward`'s callers),
            // stacked of `out_parts`: its part `o` is the `out_parts[o].local_len()` entries from
            // `out_off[o]` (offsets built from those lengths), disjoint from the other parts; `yo`
            // is the only access to them while `y` is exclusively borrowed, and it is dropped
            // within this iteration.
            let mut yo = unsafe { part_view(yp, &out_parts[o], out_off[o])? };
            let mut first = true;
            for q in 0..inner {
                let (i, j) = if adjoint { (q, o) } else { (o, q) };
                let Some(a) = &self.blocks[i * self.n + j] else {
                    continue;
                };
                // SAFETY: as above for the input: part `q` of `x` (this operator's input layout,
                // checked by the callers) is the `in_parts[q].local_len()` entries from
                // `in_off[q]`; `xq` is only read, as `x` is borrowed immutably, and `x` and `y` are
                // distinct vectors (`&` and `&mut`).
                let xq = unsafe { part_view(xp, &in_parts[q], in_off[q])? };
                if first {
                    e = e.and(if adjoint {
                        a.apply_adjoint(&xq, &mut yo)
                    } else {
                        a.apply(&xq, &mut yo)
                    });
                    first = false;
                } else {
                    let t = &mut work[o];
                    e = e.and(if adjoint {
                        a.apply_adjoint(&xq, t)
                    } else {
                        a.apply(&xq, t)
                    });
                    e = e.and(yo.axpy(T::one(), t));
                }
            }
        }
        e
    }
}

impl<T: Scalar> LinearOperator<T> for BlockOp<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(x, y, false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(y, x, true)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        self.blocks.iter().flatten().collect()
    }
    fn describe(&self) -> String {
        format!(
            "Block {}x{} ({}x{})",
            self.m,
            self.n,
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        let square = self.m == self.n
            && (0..self.m).all(|i| self.rows.parts()[i].compatible(&self.cols.parts()[i]));
        if !square {
            crate::bail!(
                NotSupported,
                "the diagonal of a block operator needs square diagonal blocks"
            );
        }
        let mut e = Ok(());
        let dp = d.local_ptr();
        for i in 0..self.m {
            // SAFETY: as above: `d` has the row layout (checked by `diagonal`'s callers); part `i`
            // is its entries from `row_off[i]`, viewed only through `di` during this iteration.
            let mut di = unsafe { part_view(dp, &self.rows.parts()[i], self.row_off[i])? };
            e = e.and(match self.block(i, i) {
                Some(a) => a.diagonal(&mut di),
                None => di.fill(T::zero()),
            });
        }
        e
    }
}

/// MFEM's BlockLowerTriangularPreconditioner: x_i = M_i (b_i - sum_{j<i} A_ij x_j), with the
/// blocks A_ij of a square block operator and one preconditioner M_i per diagonal block.
pub struct BlockLower<T: Scalar> {
    a: Op<T>,
    diag: Vec<Op<T>>,
    work: WorkPair<T>,
}

impl<T: Scalar> BlockLower<T> {
    /// `a` must be a [`BlockOp`] of n x n blocks with square diagonal parts; `diag` has n operators,
    /// M_i square on part i. [collective]
    pub fn new(a: Op<T>, diag: Vec<Op<T>>) -> Result<BlockLower<T>> {
        let comm = a.rows().comm().clone();
        let local = (|| {
            let Some(b) = a.as_any().downcast_ref::<BlockOp<T>>() else {
                crate::bail!(
                    InvalidArgument,
                    "the operator ({}) is not a block operator (parlops_op_block)",
                    a.describe()
                );
            };
            let (m, n) = b.shape();
            if m != n || diag.len() != n {
                crate::bail!(
                    InvalidArgument,
                    "{} diagonal preconditioners for a {m} x {n} block operator: it must be square, with one per block row",
                    diag.len()
                );
            }
            for (i, p) in diag.iter().enumerate() {
                let part = &a.rows().parts()[i];
                if !p.rows().compatible(part)
                    || !p.cols().compatible(part)
                    || !a.cols().parts()[i].compatible(part)
                {
                    crate::bail!(
                        SizeMismatch,
                        "preconditioner {i} ({}, {} x {}) must be square on part {i} ({} entries)",
                        p.describe(),
                        p.rows().global_len(),
                        p.cols().global_len(),
                        part.global_len()
                    );
                }
            }
            Ok(())
        })();
        comm.agree_same(
            local,
            "the number of diagonal preconditioners",
            &[diag.len() as i64],
        )?;
        let parts = a.rows().parts().to_vec();
        let w = (work(&comm, &parts)?, work(&comm, &parts)?);
        Ok(BlockLower {
            a,
            diag,
            work: OpState::new(w),
        })
    }
}

impl<T: Scalar> LinearOperator<T> for BlockLower<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.a.cols()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.a.rows()
    }
    fn forward(&self, b: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let Some(bo) = self.a.as_any().downcast_ref::<BlockOp<T>>() else {
            crate::bail!(Internal, "block operator");
        };
        let parts = self.a.rows().parts();
        let mut guard = self.work.lock(&|| self.describe())?;
        let (r, t) = &mut *guard;
        let (bp, xp) = (b.local().as_ptr() as *mut T, x.local_ptr());
        let mut e = Ok(());
        for i in 0..self.diag.len() {
            // SAFETY: `b` has this operator's column layout, the block operator's rows (checked by
            // `forward`'s callers): part `i` is the `parts[i].local_len()` entries from
            // `row_off[i]`, only read (copied into `r[i]`).
            let bi = unsafe { part_view(bp, &parts[i], bo.row_off[i])? };
            e = e.and(r[i].copy_from(&bi));
            #[allow(clippy::needless_range_loop)]
            for j in 0..i {
                if let Some(aij) = bo.block(i, j) {
                    // SAFETY: `x` has the block operator's column layout (checked by the callers):
                    // part `j` (`j` < `i`) is its entries from `col_off[j]`, only read here and
                    // disjoint from part `i`, which is written below after `xj` is dropped.
                    let xj = unsafe { part_view(xp, &parts[j], bo.col_off[j])? };
                    e = e.and(aij.apply(&xj, &mut t[i]));
                    e = e.and(r[i].axpy(-T::one(), &t[i]));
                }
            }
            // SAFETY: as above: part `i` of `x`, from `col_off[i]`, written only through `xi` while
            // `x` is exclusively borrowed (no other view of it is alive).
            let mut xi = unsafe { part_view(xp, &parts[i], bo.col_off[i])? };
            e = e.and(self.diag[i].apply(&r[i], &mut xi));
        }
        e
    }
    fn backward(&self, _y: &DistVector<T>, _x: &mut DistVector<T>) -> Result<()> {
        crate::bail!(
            NotSupported,
            "the block lower-triangular preconditioner has no adjoint"
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        std::iter::once(&self.a).chain(&self.diag).collect()
    }
    fn describe(&self) -> String {
        format!("BlockLowerTriangular {}", self.a.rows().global_len())
    }
}
