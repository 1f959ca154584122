//! Richardson iteration (PETSc's KSPRICHARDSON, MFEM's SLISolver): x <- x + omega M (b - A x), with
//! the scale omega (parlops_solver_set_richardson_scale, 1 by default) and M the preconditioner (the
//! identity without one). It tests the preconditioned residual ||M r|| (||r|| without a
//! preconditioner) against the same norm of b, or of the initial residual. Per iteration: one
//! operator apply, one preconditioner apply, one reduction. It converges when the spectral radius of
//! I - omega M A is below 1 (e.g. Jacobi on a diagonally dominant matrix); otherwise it stops on
//! dtol or max_iter. A preconditioner that maps a nonzero b or residual to zero ends the solve with
//! a breakdown: ||M r|| = 0 is then no convergence.

use super::{Ctx, Info, Reason, info, initial_residual, pc_loses, re, root};
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
    // with a preconditioner, ||b|| and ||r|| too: M must not lose them (see `pc_loses`)
    let d = dots(&ctx.comm, &[(bb, bb), (rr, rr), (b, b), (r, r)], e)?;
    let bnorm = root(re(d[0]));
    let r0 = root(re(d[1]));
    if !plain && (pc_loses(re(d[0]), re(d[2])) || pc_loses(re(d[1]), re(d[3]))) {
        return Ok(info(0, Reason::DivergedBreakdown, r0, r0, bnorm));
    }
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
        let d = if plain {
            dots(&ctx.comm, &[(t, t)], e)?
        } else {
            dots(&ctx.comm, &[(t, t), (&*r, &*r)], e)?
        };
        let rnorm = root(re(d[0]));
        if !plain && pc_loses(re(d[0]), re(d[1])) {
            // M r = 0 for a nonzero r: x no longer moves, and ||M r|| = 0 is no convergence
            return Ok(info(it, Reason::DivergedBreakdown, r0, rnorm, bnorm));
        }
        if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
    }
}
