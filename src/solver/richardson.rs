//! Richardson iteration (PETSc's KSPRICHARDSON, MFEM's SLISolver): x <- x + omega M (b - A x), with
//! the scale omega (parlops_solver_set_richardson_scale, 1 by default) and M the preconditioner (the
//! identity without one). It tests the preconditioned residual ||M r|| (||r|| without a
//! preconditioner) against the same norm of b, or of the initial residual. Per iteration: one
//! operator apply, one preconditioner apply, one reduction. It converges when the spectral radius of
//! I - omega M A is below 1 (e.g. Jacobi on a diagonally dominant matrix); otherwise it stops on
//! dtol or max_iter.

use super::{Ctx, Info, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: super::Work = super::Work::zeroed(3);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, z, mb] = v else { unreachable!() };
    let plain = ctx.pc.is_none();
    let e = initial_residual(ctx, b, x, r);
    // the tested norm: ||M r|| and ||M b|| with a preconditioner, ||r|| and ||b|| without
    let e = if plain {
        e
    } else {
        e.and(ctx.precond(r, z)).and(ctx.precond(b, mb))
    };
    let (bb, rr) = if plain { (b, &*r) } else { (&*mb, &*z) };
    let d = dots(&ctx.comm, &[(bb, bb), (rr, rr)], e)?;
    let bnorm = root(re(d[0]));
    let r0 = root(re(d[1]));
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    let omega = T::real(ctx.p.scale);
    let mut it = 0;
    loop {
        it += 1;
        // x += omega M r, then r = b - A x and z = M r
        x.axpy(omega, if plain { &*r } else { &*z })?;
        let e = ctx.op.apply(x, r);
        r.axpby(T::one(), b, -T::one())?;
        let e = if plain { e } else { e.and(ctx.precond(r, z)) };
        let t = if plain { &*r } else { &*z };
        let rnorm = root(re(dots(&ctx.comm, &[(t, t)], e)?[0]));
        if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
    }
}
