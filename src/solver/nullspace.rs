//! Null spaces (PETSc's MatSetNullSpace, MFEM's OrthoSolver): for a singular operator whose null
//! space is known (the constant of a pure-Neumann Laplacian, the rigid-body modes of a floating
//! elastic body), the solve works on the right-hand side with that space removed, removes it from
//! every preconditioner output and from the initial guess, and from the solution at the end. The
//! solution is then the one orthogonal to the null space (zero mean for the constant).

use super::ctx::Ctx;
use crate::error::Result;
use crate::memory::Location;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, NormKind, dots};
use std::sync::Arc;

/// An orthonormal basis of span{1 (with `constant`), vecs}, by classical Gram-Schmidt applied twice
/// (one reduction per pass). A vector that is zero or (to 1e-10 of its norm) in the span of those
/// before it fails on every rank, naming it. [collective]
pub(crate) fn basis<T: Scalar>(
    layout: &Arc<Layout>,
    loc: Location,
    constant: bool,
    vecs: &[DistVector<T>],
) -> Result<Vec<DistVector<T>>> {
    let comm = layout.comm().clone();
    let mut out: Vec<DistVector<T>> = Vec::new();
    let count = constant as usize + vecs.len();
    for k in 0..count {
        let w = comm.agree((|| {
            let mut w = DistVector::new_in(layout.clone(), loc)?;
            if constant && k == 0 {
                w.fill(T::one())?;
            } else {
                w.copy_any(&vecs[k - constant as usize])?;
            }
            Ok(w)
        })())?;
        let mut w = w;
        let before = w.norm(NormKind::Two)?;
        for _ in 0..2 {
            remove(&out, &mut w, Ok(()))?;
        }
        let after = w.norm(NormKind::Two)?;
        let independent = after > 1e-10 * before && after.is_finite();
        if !independent {
            let which = if constant && k == 0 {
                "the constant vector".to_string()
            } else {
                format!("null-space vector {}", k - constant as usize)
            };
            crate::bail!(
                InvalidArgument,
                "{which} is zero, not finite, or in the span of the vectors before it (norm {before:e}, {after:e} after removing them)"
            );
        }
        w.scale(T::real(1.0 / after))?;
        out.push(w);
    }
    Ok(out)
}

/// v -= V (V^H v) for an orthonormal V, all projections in one reduction; `pending` carries a
/// local failure into it. [collective]
pub(crate) fn remove<T: Scalar>(
    basis: &[DistVector<T>],
    v: &mut DistVector<T>,
    pending: Result<()>,
) -> Result<()> {
    if basis.is_empty() {
        return v.layout().comm().agree(pending);
    }
    let pairs: Vec<(&DistVector<T>, &DistVector<T>)> = basis.iter().map(|b| (b, &*v)).collect();
    let proj = dots(v.layout().comm(), &pairs, pending)?;
    for (b, c) in basis.iter().zip(proj) {
        v.axpy(-c, b)?;
    }
    Ok(())
}

/// A preconditioner followed by the removal of the null space (z = P M r).
pub(crate) struct Projected<'a, T: Scalar> {
    pub inner: &'a dyn LinearOperator<T>,
    pub basis: &'a [DistVector<T>],
}

impl<T: Scalar> LinearOperator<T> for Projected<'_, T> {
    fn rows(&self) -> &Arc<Layout> {
        self.inner.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.inner.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let e = self.inner.apply(x, y);
        remove(self.basis, y, e)
    }
    fn backward(&self, _y: &DistVector<T>, _x: &mut DistVector<T>) -> Result<()> {
        crate::bail!(
            NotSupported,
            "a preconditioner with a null space removed has no adjoint"
        )
    }
    fn handles(&self, loc: Location) -> bool {
        self.inner.handles(loc)
    }
    fn describe(&self) -> String {
        format!("P {}", self.inner.describe())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self.inner.as_any()
    }
}

/// Solve with the null space removed: from b (a copy), the initial guess, every preconditioner
/// output, and the solution. [collective]
pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    basis: &[DistVector<T>],
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    run: impl FnOnce(&mut Ctx<T>, &DistVector<T>, &mut DistVector<T>) -> Result<super::Info>,
) -> Result<super::Info> {
    let comm = ctx.comm.clone();
    let mut bp = comm.agree(b.duplicate().and_then(|mut d| {
        d.copy_from(b)?;
        Ok(d)
    }))?;
    remove(basis, &mut bp, Ok(()))?;
    if ctx.p.nonzero_guess {
        remove(basis, x, Ok(()))?;
    }
    let info = run(ctx, &bp, x)?;
    remove(basis, x, Ok(()))?;
    Ok(info)
}
