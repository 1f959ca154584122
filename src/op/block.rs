//! Block operators of per-rank local operators (PyLops-MPI's MPIBlockDiag, MPIVStack, MPIHStack).
//! "Local" operators live on a one-rank communicator (`MPI_COMM_SELF`); each rank passes its own.

use std::sync::Arc;

use super::compose::Adjoint;
use super::{LinearOperator, Op, OpState};
use crate::comm::Comm;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, Partition};

fn check_local<T: Scalar>(ops: &[Op<T>], what: &str) -> Result<()> {
    for (i, a) in ops.iter().enumerate() {
        let p = a.rows().comm().size().max(a.cols().comm().size());
        if p != 1 {
            crate::bail!(
                InvalidArgument,
                "{what}: operator {i} ({}) lives on a communicator of {p} ranks; blocks must be local \
                 operators (layouts created on MPI_COMM_SELF)",
                a.describe()
            );
        }
    }
    Ok(())
}

/// A vector over `len` entries at `ptr` with a local layout (no copy).
///
/// # Safety
/// `ptr..ptr+len` must be valid for the view's life; views of read-only data must not be written.
unsafe fn view<T: Scalar>(layout: &Arc<Layout>, ptr: *const T) -> Result<DistVector<T>> {
    // SAFETY: our caller's contract (`# Safety` above): `ptr` holds the layout's local length of
    // `T` in host memory, valid while the view lives; it comes from a host slice, so it is aligned
    // for `T`, as `view_host` requires.
    unsafe { DistVector::view_host(layout.clone(), ptr as *mut T) }
}

/// Offsets of consecutive blocks of the given lengths.
fn offsets(lens: impl Iterator<Item = i64>) -> Vec<usize> {
    let mut o = vec![0usize];
    for l in lens {
        let last = *o.last().unwrap_or(&0);
        o.push(last + l as usize);
    }
    o
}

/// y_i = A_i x_i (or x_i = A_i^H y_i) over consecutive local slices of x and y.
fn apply_blocks<T: Scalar>(
    ops: &[Op<T>],
    in_off: &[usize],
    out_off: &[usize],
    x: &DistVector<T>,
    y: &mut DistVector<T>,
    adjoint: bool,
) -> Result<()> {
    let xp = x.local().as_ptr();
    let yp = y.local_ptr();
    for (i, a) in ops.iter().enumerate() {
        let (il, ol) = if adjoint {
            (a.rows(), a.cols())
        } else {
            (a.cols(), a.rows())
        };
        // SAFETY: the offsets partition this rank's local parts (built from the blocks' lengths).
        unsafe {
            let xv = view(il, xp.add(in_off[i]))?;
            let mut yv = view(ol, yp.add(out_off[i]))?;
            if adjoint {
                a.apply_adjoint(&xv, &mut yv)?
            } else {
                a.apply(&xv, &mut yv)?
            }
        }
    }
    Ok(())
}

/// diag(A_1, A_2, ...): rank r's blocks act on its part of x and produce its part of y. The blocks
/// are local operators ([`BlockDiag::new`]) or distributed ones ([`BlockDiag::stacked`]).
pub struct BlockDiag<T: Scalar> {
    name: &'static str,
    ops: Vec<Op<T>>,
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    row_off: Vec<usize>,
    col_off: Vec<usize>,
}

impl<T: Scalar> BlockDiag<T> {
    /// [collective] over `comm`; `ops` are this rank's local blocks (possibly none).
    pub fn new(comm: &Arc<Comm>, ops: Vec<Op<T>>) -> Result<BlockDiag<T>> {
        let local = check_local(&ops, "block_diag");
        comm.agree(local)?;
        Self::assemble(comm, ops, "BlockDiag")
    }

    /// Rank r's part of x and y: its blocks' local parts one after the other (a local block's local
    /// part is the whole block). [collective]
    fn assemble(comm: &Arc<Comm>, ops: Vec<Op<T>>, name: &'static str) -> Result<BlockDiag<T>> {
        let m: i64 = ops.iter().map(|a| a.rows().local_len()).sum();
        let n: i64 = ops.iter().map(|a| a.cols().local_len()).sum();
        let rows = Layout::new(comm.clone(), Partition::Scatter, -1, m)?;
        let cols = Layout::new(comm.clone(), Partition::Scatter, -1, n)?;
        Ok(BlockDiag {
            name,
            row_off: offsets(ops.iter().map(|a| a.rows().local_len())),
            col_off: offsets(ops.iter().map(|a| a.cols().local_len())),
            ops,
            rows,
            cols,
        })
    }

    /// diag(A_1, A_2, ...) of distributed operators on one communicator (PyLops-MPI's
    /// MPIStackedBlockDiag): the stacked vector holds, on each rank, that rank's part of x_1, then of
    /// x_2, ... (so its global order is rank by rank).
    /// [collective]; every rank passes the same operators (in the same order), all on `comm`.
    pub fn stacked(comm: &Arc<Comm>, ops: Vec<Op<T>>) -> Result<BlockDiag<T>> {
        let local = (|| {
            for (i, a) in ops.iter().enumerate() {
                if !Arc::ptr_eq(a.rows().comm(), comm) || !Arc::ptr_eq(a.cols().comm(), comm) {
                    crate::bail!(
                        LayoutMismatch,
                        "stacked_block_diag: operator {i} ({}) lives on another communicator",
                        a.describe()
                    );
                }
            }
            Ok(())
        })();
        let n = ops.len() as i64;
        comm.agree_same(local, "numbers of operators (stacked_block_diag)", &[n])?;
        Self::assemble(comm, ops, "StackedBlockDiag")
    }
}

impl<T: Scalar> LinearOperator<T> for BlockDiag<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        apply_blocks(&self.ops, &self.col_off, &self.row_off, x, y, false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        apply_blocks(&self.ops, &self.row_off, &self.col_off, y, x, true)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        self.ops.iter().collect()
    }
    fn describe(&self) -> String {
        format!(
            "{} {}x{}",
            self.name,
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        if !self.rows.compatible(&self.cols) || self.row_off != self.col_off {
            crate::bail!(
                NotSupported,
                "the diagonal of a block-diagonal operator needs square blocks"
            );
        }
        let dp = d.local_ptr();
        for (i, a) in self.ops.iter().enumerate() {
            // SAFETY: `d` has this operator's row layout (the callers of `diagonal` check it), so
            // its local part holds `row_off`'s last offset entries and `row_off[i]` starts block
            // `i`'s `a.rows().local_len()` entries (the offsets were built from those lengths);
            // `dv` is the only access to them and lives for this iteration while `d` is exclusively
            // borrowed.
            unsafe {
                let mut dv = view(a.rows(), dp.add(self.row_off[i]))?;
                a.diagonal(&mut dv)?;
            }
        }
        Ok(())
    }
}

/// [A_1; A_2; ...] with x replicated on every rank (broadcast layout) and y split: rank r's blocks
/// produce its part of y. The adjoint sums A_i^H y_i over all ranks.
pub struct VStack<T: Scalar> {
    ops: Vec<Op<T>>,
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    row_off: Vec<usize>,
    /// (one block's A^H y_i, local sum, global sum)
    work: OpState<(Vec<T>, Vec<T>, Vec<T>)>,
}

impl<T: Scalar> VStack<T> {
    /// [collective] over `comm`; every block on every rank must have the same number of columns.
    pub fn new(comm: &Arc<Comm>, ops: Vec<Op<T>>) -> Result<VStack<T>> {
        let mut local = check_local(&ops, "vstack");
        let n = ops.first().map_or(-1, |a| a.cols().global_len());
        if local.is_ok()
            && let Some(b) = ops.iter().find(|a| a.cols().global_len() != n)
        {
            local = Err(crate::err!(
                SizeMismatch,
                "vstack: blocks on this rank have different numbers of columns ({n} and {})",
                b.cols().global_len()
            ));
        }
        let rows_n: i64 = ops.iter().map(|a| a.rows().global_len()).sum();
        let all = comm.agree_with(local, &[n])?;
        let Some(first) = all.iter().map(|r| r[0]).find(|&v| v >= 0) else {
            crate::bail!(InvalidArgument, "vstack: no rank passed any operator");
        };
        // a rank without blocks (n = -1) takes the first count, so that only real counts can differ
        let mine = if n >= 0 { n } else { first };
        comm.agree_same(Ok(()), "numbers of columns (vstack blocks)", &[mine])?;
        let n = first;
        let rows = Layout::new(comm.clone(), Partition::Scatter, -1, rows_n)?;
        let cols = Layout::new(comm.clone(), Partition::Broadcast, n, -1)?;
        let nn = n as usize;
        // sized by the caller's blocks: fallible; the last collective is behind, so the caller
        // agrees on the outcome
        let w = "the vstack work vectors (one column vector each)";
        let work = (
            crate::error::try_vec(nn, T::zero(), w)?,
            crate::error::try_vec(nn, T::zero(), w)?,
            crate::error::try_vec(nn, T::zero(), w)?,
        );
        Ok(VStack {
            row_off: offsets(ops.iter().map(|a| a.rows().global_len())),
            ops,
            rows,
            cols,
            work: OpState::new(work),
        })
    }
}

impl<T: Scalar> LinearOperator<T> for VStack<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let xp = x.local().as_ptr();
        let yp = y.local_ptr();
        let mut r = Ok(());
        for (i, a) in self.ops.iter().enumerate() {
            // SAFETY: `x` and `y` have this operator's layouts (checked by the callers of
            // `forward`): `x` is replicated with every block's `n` columns, so `xv` (only read)
            // covers `x.local()`, and block `i`'s rows are `y`'s entries from `row_off[i]` (offsets
            // of the blocks' row counts), written only through `yv` while `y` is exclusively
            // borrowed.
            unsafe {
                let xv = view(a.cols(), xp)?;
                let mut yv = view(a.rows(), yp.add(self.row_off[i]))?;
                r = r.and(a.apply(&xv, &mut yv));
            }
        }
        r
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let mut w = self.work.lock(&|| self.describe())?;
        let (one, sum, total) = &mut *w;
        sum.iter_mut().for_each(|v| *v = T::zero());
        let yp = y.local().as_ptr();
        let mut r = Ok(());
        for (i, a) in self.ops.iter().enumerate() {
            // SAFETY: as above, with the roles swapped: block `i`'s rows are `y`'s entries from
            // `row_off[i]` (only read), and `one`, locked work of `n` entries (one block's column
            // count), is written only through `ov`.
            unsafe {
                let yv = view(a.rows(), yp.add(self.row_off[i]))?;
                let mut ov = view(a.cols(), one.as_mut_ptr())?;
                r = r.and(a.apply_adjoint(&yv, &mut ov));
            }
            sum.iter_mut().zip(one.iter()).for_each(|(s, o)| *s += *o);
        }
        // the sum runs on every rank even after a local failure, which is reported afterwards
        self.rows.comm().allreduce_sum(sum, total)?;
        r?;
        x.local_mut().copy_from_slice(total);
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        self.ops.iter().collect()
    }
    fn describe(&self) -> String {
        format!(
            "VStack {}x{}",
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
}

/// [A_1, A_2, ...] with x split and y replicated (broadcast layout): the adjoint of the vertical
/// stack of the blocks' adjoints, as in PyLops-MPI.
pub fn hstack<T: Scalar>(comm: &Arc<Comm>, ops: Vec<Op<T>>) -> Result<Adjoint<T>> {
    let adj: Vec<Op<T>> = ops
        .into_iter()
        .map(|a| Arc::new(Adjoint::new(a)) as Op<T>)
        .collect();
    let v: Op<T> = Arc::new(VStack::new(comm, adj)?);
    Ok(Adjoint::new(v))
}
