//! Block Jacobi preconditioners on a CSR operator (PETSc's PCBJACOBI with one block per rank): each
//! rank applies a local solve with its diag block (its rows and owned columns; the couplings to
//! other ranks are dropped), no communication at all. The local solves:
//!  - ILU(0): L U on the block's pattern, L unit lower (PETSc's PCILU with 0 levels);
//!  - IC(0): L L^H on the block's lower pattern, for Hermitian positive definite blocks (PCICC);
//!  - SSOR(omega): M^{-1} = omega (2 - omega) (D + omega U)^{-1} D (D + omega L)^{-1} (Saad,
//!    "Iterative Methods for Sparse Linear Systems", 10.2; omega = 1 is symmetric Gauss-Seidel).
//!
//! The factors are computed at construction from the values the block holds then, and again at a
//! refresh after the matrix's values changed ([`LinearOperator::refresh`]; the pattern, hence the
//! factors' pattern, is the same). A zero (or non-finite) pivot, a missing diagonal entry, or (IC(0))
//! a non-positive one fails the construction (or the refresh, which then keeps the old factors) on
//! every rank, naming the global row.

use std::sync::{Arc, RwLock};

use super::csr::CsrOp;
use super::tree::SetupLog;
use super::{LinearOperator, Op};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// The local solve of a block Jacobi preconditioner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalSolve {
    Ilu0,
    Ic0,
    Ssor(f64),
}

impl LocalSolve {
    fn name(self) -> String {
        match self {
            LocalSolve::Ilu0 => "ILU(0)".into(),
            LocalSolve::Ic0 => "IC(0)".into(),
            LocalSolve::Ssor(w) => format!("SSOR({w})"),
        }
    }
}

/// One rank's diag block with sorted rows, and where each row's diagonal entry is.
struct Sorted<T> {
    n: usize,
    ptr: Vec<usize>,
    idx: Vec<usize>,
    val: Vec<T>,
    diag: Vec<usize>,
}

/// Block Jacobi with a local ILU(0), IC(0) or SSOR solve on each rank's diag block.
pub struct BlockJacobi<T: Scalar> {
    rows: Arc<Layout>,
    kind: LocalSolve,
    /// ILU(0): L (unit, strictly lower part) and U (upper with diagonal) in one pattern; IC(0): L
    /// (lower with diagonal) only; SSOR: the block itself.
    f: RwLock<Sorted<T>>,
    /// The CSR operator factored, for a refresh.
    src: Option<Op<T>>,
    log: SetupLog,
}

/// Rows sorted by column, duplicates summed; the position of each row's diagonal (`None` if the row
/// has none).
fn sorted<T: Scalar>(a: &CsrOp<T>, lower_only: bool) -> Result<(Sorted<T>, Option<usize>)> {
    let blk = a.blocks();
    let b = &blk.diag;
    let n = b.nrows;
    let mut rows: Vec<Vec<(usize, T)>> = Vec::new();
    rows.try_reserve_exact(n)
        .map_err(|_| crate::err!(OutOfMemory, "block Jacobi: {n} rows"))?;
    rows.resize_with(n, Vec::new);
    b.for_each(|i, j, v| {
        if !lower_only || j <= i {
            rows[i].push((j, v));
        }
    });
    let mut s = Sorted {
        n,
        ptr: Vec::with_capacity(n + 1),
        idx: Vec::new(),
        val: Vec::new(),
        diag: vec![usize::MAX; n],
    };
    s.ptr.push(0);
    let mut missing = None;
    for (i, r) in rows.iter_mut().enumerate() {
        r.sort_by_key(|e| e.0);
        for &(j, v) in r.iter() {
            if s.idx.len() > s.ptr[i] && *s.idx.last().unwrap() == j {
                let last = s.val.last_mut().unwrap();
                *last += v;
                continue;
            }
            if j == i {
                s.diag[i] = s.idx.len();
            }
            s.idx.push(j);
            s.val.push(v);
        }
        s.ptr.push(s.idx.len());
        if s.diag[i] == usize::MAX && missing.is_none() {
            missing = Some(i);
        }
    }
    Ok((s, missing))
}

fn bad_pivot<T: Scalar>(v: T) -> bool {
    v.is_zero() || !v.abs_f64().is_finite()
}

impl<T: Scalar> BlockJacobi<T> {
    /// Factor `a`'s diag block on this rank (not collective: the caller agrees the outcome).
    pub fn new(a: &CsrOp<T>, kind: LocalSolve) -> Result<BlockJacobi<T>> {
        Ok(BlockJacobi {
            rows: a.rows().clone(),
            kind,
            f: RwLock::new(Self::factor(a, kind)?),
            src: None,
            log: SetupLog::new(0),
        })
    }

    /// Keep `a` (the operator the CSR matrix of [`BlockJacobi::new`] was) to factor it again at a
    /// refresh.
    pub fn with_source(mut self, a: Op<T>) -> BlockJacobi<T> {
        self.log.built_from(super::tree::version(a.as_ref()));
        self.src = Some(a);
        self
    }

    /// The factors of `a`'s diag block on this rank.
    fn factor(a: &CsrOp<T>, kind: LocalSolve) -> Result<Sorted<T>> {
        if !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "block Jacobi needs a square operator with equal row and column layouts; A is {}x{}",
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        if let LocalSolve::Ssor(w) = kind
            && !(w > 0.0 && w < 2.0)
        {
            crate::bail!(
                InvalidArgument,
                "argument 'omega' is {w}; SSOR needs 0 < omega < 2"
            );
        }
        let start = a.rows().local_start();
        let (mut f, missing) = sorted(a, kind == LocalSolve::Ic0)?;
        if let Some(i) = missing {
            crate::bail!(
                InvalidArgument,
                "block Jacobi {}: global row {} has no diagonal entry (a zero pivot)",
                kind.name(),
                start + i as i64
            );
        }
        match kind {
            LocalSolve::Ilu0 => ilu0(&mut f, start)?,
            LocalSolve::Ic0 => ic0(&mut f, start)?,
            LocalSolve::Ssor(_) => {
                for i in 0..f.n {
                    if bad_pivot(f.val[f.diag[i]]) {
                        crate::bail!(
                            InvalidArgument,
                            "block Jacobi SSOR: the diagonal entry of global row {} is {:?}; it must be non-zero and finite",
                            start + i as i64,
                            f.val[f.diag[i]]
                        );
                    }
                }
            }
        }
        Ok(f)
    }

    /// The local factors as (row pointer, column indices, values), rows sorted: ILU(0) L and U in one
    /// pattern (L's unit diagonal not stored, U's diagonal is), IC(0) L with its diagonal, SSOR the
    /// block. For tests that check them against a reference.
    #[doc(hidden)]
    pub fn factors(&self) -> (Vec<usize>, Vec<usize>, Vec<T>) {
        let f = self.f.read().unwrap_or_else(|p| p.into_inner());
        (f.ptr.clone(), f.idx.clone(), f.val.clone())
    }

    /// y = M^{-1} r on this rank's part.
    fn solve_local(&self, r: &[T], y: &mut [T]) {
        let f = &*self.f.read().unwrap_or_else(|p| p.into_inner());
        let (p, j, v) = (&f.ptr, &f.idx, &f.val);
        match self.kind {
            LocalSolve::Ilu0 => {
                // L z = r (unit lower), then U y = z
                for i in 0..f.n {
                    let mut s = r[i];
                    for k in p[i]..f.diag[i] {
                        s = s - v[k] * y[j[k]];
                    }
                    y[i] = s;
                }
                for i in (0..f.n).rev() {
                    let mut s = y[i];
                    for k in f.diag[i] + 1..p[i + 1] {
                        s = s - v[k] * y[j[k]];
                    }
                    y[i] = s / v[f.diag[i]];
                }
            }
            LocalSolve::Ic0 => {
                // L z = r, then L^H y = z (column sweep over L's rows)
                for i in 0..f.n {
                    let mut s = r[i];
                    for k in p[i]..f.diag[i] {
                        s = s - v[k] * y[j[k]];
                    }
                    y[i] = s / v[f.diag[i]];
                }
                for i in (0..f.n).rev() {
                    let yi = y[i] / v[f.diag[i]].conj();
                    y[i] = yi;
                    for k in p[i]..f.diag[i] {
                        y[j[k]] = y[j[k]] - v[k].conj() * yi;
                    }
                }
            }
            LocalSolve::Ssor(w) => {
                let wt = T::real(w);
                // (D + w L) t = r
                for i in 0..f.n {
                    let mut s = r[i];
                    for k in p[i]..f.diag[i] {
                        s = s - wt * v[k] * y[j[k]];
                    }
                    y[i] = s / v[f.diag[i]];
                }
                // t = D t, then (D + w U) y = t
                for i in 0..f.n {
                    y[i] = y[i] * v[f.diag[i]];
                }
                for i in (0..f.n).rev() {
                    let mut s = y[i];
                    for k in f.diag[i] + 1..p[i + 1] {
                        s = s - wt * v[k] * y[j[k]];
                    }
                    y[i] = s / v[f.diag[i]];
                }
                let c = T::real(w * (2.0 - w));
                y.iter_mut().for_each(|x| *x = *x * c);
            }
        }
    }
}

/// ILU(0) in place (IKJ order on the sorted pattern).
fn ilu0<T: Scalar>(f: &mut Sorted<T>, start: i64) -> Result<()> {
    let mut pos = vec![usize::MAX; f.n];
    for i in 0..f.n {
        for k in f.ptr[i]..f.ptr[i + 1] {
            pos[f.idx[k]] = k;
        }
        for kk in f.ptr[i]..f.diag[i] {
            let k = f.idx[kk];
            let lik = f.val[kk] / f.val[f.diag[k]];
            f.val[kk] = lik;
            for m in f.diag[k] + 1..f.ptr[k + 1] {
                let jcol = f.idx[m];
                if pos[jcol] != usize::MAX {
                    let t = f.val[pos[jcol]] - lik * f.val[m];
                    f.val[pos[jcol]] = t;
                }
            }
        }
        let d = f.val[f.diag[i]];
        for k in f.ptr[i]..f.ptr[i + 1] {
            pos[f.idx[k]] = usize::MAX;
        }
        if bad_pivot(d) {
            crate::bail!(
                InvalidArgument,
                "block Jacobi ILU(0): zero or non-finite pivot {:?} at global row {}",
                d,
                start + i as i64
            );
        }
    }
    Ok(())
}

/// IC(0) in place on the lower pattern: L L^H.
fn ic0<T: Scalar>(f: &mut Sorted<T>, start: i64) -> Result<()> {
    let mut pos = vec![usize::MAX; f.n];
    for i in 0..f.n {
        for k in f.ptr[i]..f.ptr[i + 1] {
            pos[f.idx[k]] = k;
        }
        // L_ik = (a_ik - sum_{m<k} L_im conj(L_km)) / L_kk, for k < i in the pattern
        for kk in f.ptr[i]..f.diag[i] {
            let k = f.idx[kk];
            let mut s = f.val[kk];
            for m in f.ptr[k]..f.diag[k] {
                let c = f.idx[m];
                if pos[c] != usize::MAX && pos[c] < kk {
                    s = s - f.val[pos[c]] * f.val[m].conj();
                }
            }
            f.val[kk] = s / f.val[f.diag[k]];
        }
        let mut d = f.val[f.diag[i]].to_parts().0;
        for kk in f.ptr[i]..f.diag[i] {
            d -= f.val[kk].abs2_f64();
        }
        for k in f.ptr[i]..f.ptr[i + 1] {
            pos[f.idx[k]] = usize::MAX;
        }
        if !(d > 0.0 && d.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "block Jacobi IC(0): pivot {d:e} at global row {} is not positive (the block is not positive definite, or IC(0) broke down)",
                start + i as i64
            );
        }
        f.val[f.diag[i]] = T::real(d.sqrt());
    }
    Ok(())
}

impl<T: Scalar> LinearOperator<T> for BlockJacobi<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.solve_local(x.local(), y.local_mut());
        Ok(())
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        match self.kind {
            // IC(0) and SSOR of a Hermitian block are Hermitian
            LocalSolve::Ic0 => {
                self.solve_local(y.local(), x.local_mut());
                Ok(())
            }
            _ => crate::bail!(
                NotSupported,
                "{}: the adjoint is not available (IC(0) has one)",
                self.describe()
            ),
        }
    }
    fn describe(&self) -> String {
        format!(
            "block Jacobi {} ({} rows)",
            self.kind.name(),
            self.rows.global_len()
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        self.src.iter().collect()
    }
    fn stale(&self) -> bool {
        self.src
            .as_ref()
            .is_some_and(|a| self.log.stale(super::tree::version(a.as_ref())))
    }
    fn refresh(&self, force: bool) -> Result<bool> {
        let Some(a) = &self.src else {
            return Ok(false);
        };
        self.log
            .refresh(force, super::tree::version(a.as_ref()), || {
                let f = a
                    .as_any()
                    .downcast_ref::<CsrOp<T>>()
                    .ok_or_else(|| {
                        crate::err!(Internal, "block Jacobi's source is not a CSR matrix")
                    })
                    .and_then(|c| Self::factor(c, self.kind));
                let f = self.rows.comm().agree(f)?;
                *self.f.write().unwrap_or_else(|p| p.into_inner()) = f;
                Ok(())
            })
    }
    fn setups(&self) -> u64 {
        self.log.count()
    }
}
