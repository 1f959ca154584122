//! Helpers the solvers share: reduced norms and scalars, the report's number format, the tests of
//! a finite iterate and of a preconditioner that loses a vector, the initial residual, the guarded
//! view of the operators a solve holds, and the inverse diagonal of Jacobi.

use std::sync::Arc;

use super::{Ctx, Info, Reason};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::Location;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// C's %.12e: 1.234567890123e+00.
pub(crate) fn sci(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v:.12e}").replace("e0", "e+00");
    }
    let e = v.abs().log10().floor() as i32;
    let mut m = v / 10f64.powi(e);
    let mut e = e;
    if m.abs() >= 9.9999999999995 {
        m /= 10.0;
        e += 1;
    }
    format!("{m:.12}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// A norm from a reduced squared value (||r||^2 = r^H r, or r^H M r): its square root, with NaN kept
/// (never clamped to 0, which would read as convergence) and a negative value, which no norm has,
/// turned into NaN too. Callers for which a negative value means an indefinite preconditioner test
/// the sign first.
pub(crate) fn root(sq: f64) -> f64 {
    if sq >= 0.0 { sq.sqrt() } else { f64::NAN }
}

/// Does the preconditioner lose a nonzero vector: its preconditioned square norm `pm` (r^H M r or
/// ||M r||^2) is zero or less while its Euclidean one `r2` is not? A preconditioned stopping rule
/// would then hold for a residual that is not small at all (M = 0 gives 0 <= rtol * 0), so the
/// methods that test such a norm end with a breakdown (or an indefinite preconditioner) instead.
pub(crate) fn pc_loses(pm: f64, r2: f64) -> bool {
    pm <= 0.0 && r2 > 0.0
}

/// Is any entry of x NaN or Inf, on any rank? One reduction; every rank gets the same answer. [collective]
pub(crate) fn nonfinite_anywhere<T: Scalar>(comm: &Comm, x: &DistVector<T>) -> Result<bool> {
    let local = crate::exec::nonfinite(x.part()).map(|bad| if bad { f64::INFINITY } else { 0.0 });
    // a device failure on one rank travels with the flag (as 1 in a second slot); the largest |entry|
    // of an empty part is the max's identity, -inf, which is not a non-finite entry
    let (flag, failed) = match &local {
        Ok(v) => (
            if v.is_nan() || *v == f64::INFINITY {
                1.0
            } else {
                0.0
            },
            0.0,
        ),
        Err(_) => (0.0, 1.0),
    };
    let r = comm.allreduce_f64(&[flag, failed], ReduceOp::Max)?;
    if r[1] > 0.0 {
        comm.agree(local)?;
    }
    Ok(r[0] > 0.0)
}

/// Real part of a reduced scalar.
pub(crate) fn re<T: Scalar>(v: T) -> f64 {
    v.to_parts().0
}

/// The operators as a solve sees them: every apply runs inside a per-rank panic catcher, so that a
/// panic on one rank becomes a local error carried into the next reduction (as a failing callback's
/// is) instead of leaving the other ranks waiting there, and counts as one event of its phase
/// (the operator's or the preconditioner's: [`crate::timing`]).
pub(crate) struct Guarded<'a, T: Scalar>(
    pub(crate) &'a dyn LinearOperator<T>,
    pub(crate) crate::timing::Phase,
);

impl<T: Scalar> Guarded<'_, T> {
    /// `f` under the panic catcher, timed as one event of this operator's phase.
    fn run<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        crate::timing::timed(self.1, 0, || {
            crate::error::catch_panic_named(|| self.0.describe(), f)
        })
    }
}

impl<T: Scalar> LinearOperator<T> for Guarded<'_, T> {
    fn rows(&self) -> &Arc<Layout> {
        self.0.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.0.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(|| self.0.forward(x, y))
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(|| self.0.backward(y, x))
    }
    fn handles(&self, loc: Location) -> bool {
        self.0.handles(loc)
    }
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(|| self.0.apply(x, y))
    }
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(|| self.0.apply_adjoint(y, x))
    }
    fn apply_dot(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<Option<(f64, f64)>> {
        self.run(|| self.0.apply_dot(x, y))
    }
    fn apply_streamed(
        &self,
        x: &mut DistVector<T>,
        n: &mut DistVector<T>,
        ready: &mut dyn FnMut(bool) -> Result<Option<bool>>,
        rows: crate::op::RowSink<'_, T>,
    ) -> Result<()> {
        self.run(|| self.0.apply_streamed(x, n, ready, rows))
    }
    fn apply_many(&self, xs: &[&DistVector<T>], ys: &mut [&mut DistVector<T>]) -> Result<()> {
        self.run(|| self.0.apply_many(xs, ys))
    }
    fn apply_many_gram(
        &self,
        xs: &[&DistVector<T>],
        ys: &mut [&mut DistVector<T>],
    ) -> Result<Vec<f64>> {
        self.run(|| self.0.apply_many_gram(xs, ys))
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self.0.as_any()
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        self.run(|| self.0.diagonal(d))
    }
}

/// D^{-1} of a square operator's diagonal D (Jacobi, Chebyshev). A zero or non-finite diagonal entry
/// (or an operator without a diagonal, or a failed allocation) fails on every rank, the message
/// naming `what` and the global row. [collective]
pub(crate) fn inverse_diagonal<T: Scalar>(
    op: &dyn LinearOperator<T>,
    what: &str,
) -> Result<DistVector<T>> {
    let local = (|| {
        let mut d = DistVector::<T>::new(op.rows().clone())?;
        crate::error::catch_panic("the operator's diagonal", || op.diagonal(&mut d))?;
        let start = d.layout().local_start();
        for (i, v) in d.local_mut().iter_mut().enumerate() {
            if v.is_zero() || !v.abs_f64().is_finite() {
                crate::bail!(
                    InvalidArgument,
                    "{what}: the diagonal entry of global row {} is {:?}; it must be non-zero and finite",
                    start + i as i64,
                    v
                );
            }
            let (a, b) = v.to_parts();
            let n = a * a + b * b;
            *v = T::from_parts_lossy(a / n, -b / n);
        }
        Ok(d)
    })();
    op.rows().comm().agree(local)
}

/// Initial residual r = b - A x (or b with a zero guess, x zeroed). Returns the pending local outcome.
pub(crate) fn initial_residual<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
) -> Result<()> {
    if ctx.p.nonzero_guess {
        let e = ctx.op.apply(x, r);
        r.axpby(T::one(), b, -T::one())?;
        e
    } else {
        x.fill(T::zero())?;
        r.copy_from(b)
    }
}

/// Info for a solve that stopped at iteration `it`.
pub(crate) fn info(it: i64, reason: Reason, r0: f64, r: f64, bnorm: f64) -> Info {
    Info {
        iterations: it,
        reason,
        initial_residual_norm: r0,
        final_residual_norm: r,
        rhs_norm: bnorm,
        r1norm: r,
        r2norm: r,
    }
}
