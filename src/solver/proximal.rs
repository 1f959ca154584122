//! Proximal solvers on distributed vectors, as PyLops-MPI 0.8 runs them: the primal-dual method
//! of Chambolle and Pock (`PrimalDual`) and the (accelerated) proximal gradient method
//! (`ProximalGradient`), with the same updates in the same order, so that their iterates agree
//! with PyLops-MPI's to rounding.
//!
//! A failure of one rank (a callback, an operator) is carried into one small reduction per
//! iteration, so every rank stops at the same iteration with that rank's message. NaN or Inf in
//! the iterates ends the run with PARLOPS_ERR_NOT_CONVERGED on every rank.

use super::prox::Prox;
use crate::comm::{Comm, ReduceOp};
use crate::error::{Error, ErrorKind, Result};
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::DistVector;

/// Settings of [`primal_dual`] (PyLops-MPI's names).
#[derive(Clone, Copy, Debug)]
pub struct PrimalDualParams {
    /// Step of the primal (f) update.
    pub tau: f64,
    /// Step of the dual (g*) update.
    pub mu: f64,
    /// Extrapolation of x-bar: 1 (Chambolle-Pock), 0 (Arrow-Hurwicz).
    pub theta: f64,
    pub niter: i64,
    /// Update the dual variable first (PyLops-MPI's default) or the primal one.
    pub gfirst: bool,
}

/// Settings of [`proximal_gradient`].
#[derive(Clone, Copy, Debug)]
pub struct ProxGradParams {
    pub tau: f64,
    /// Weight of g in f + epsg g.
    pub epsg: f64,
    /// Relaxation: x + eta (prox(...) - x); 1 takes the prox step itself.
    pub eta: f64,
    pub niter: i64,
    /// 0 none, 1 Vandenberghe's omega = k / (k + 3), 2 FISTA's.
    pub acceleration: i32,
    /// Stop when |1 - J_k / J_{k-1}| < tol, J = f + epsg g (0: run niter iterations).
    pub tol: f64,
}

fn finite_positive(v: f64, what: &str) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        crate::bail!(
            InvalidArgument,
            "{what} is {v}; it must be positive and finite"
        );
    }
    Ok(())
}

/// An iteration count: at least 0.
pub(crate) fn iterations(n: i64, what: &str) -> Result<()> {
    if n < 0 {
        crate::bail!(InvalidArgument, "{what} is {n}; it must be at least 0");
    }
    Ok(())
}

/// Every rank's status after a step (one reduction).
fn agree_step(comm: &Comm, pending: Result<()>) -> Result<()> {
    comm.allreduce_checked(pending.map(|_| vec![]), 0, ReduceOp::Sum)
        .map(|_| ())
}

/// Are all of this rank's entries finite?
fn all_finite<T: Scalar>(v: &DistVector<T>) -> bool {
    match v.host_slice() {
        Some(s) => s.iter().all(|e| {
            let (re, im) = e.to_parts();
            re.is_finite() && im.is_finite()
        }),
        None => true,
    }
}

/// The end of a run: NaN or Inf in x or y on any rank is an error on every rank.
fn finish<T: Scalar>(comm: &Comm, vs: &[&DistVector<T>], it: i64, what: &str) -> Result<()> {
    let bad = if vs.iter().all(|v| all_finite(v)) {
        0.0
    } else {
        1.0
    };
    let r = comm.allreduce_checked(Ok(vec![bad]), 1, ReduceOp::Max)?;
    if r[0] != 0.0 {
        return Err(Error::new(
            ErrorKind::NotConverged,
            format!("{what}: the iterate has NaN or Inf entries after {it} iterations (diverged)"),
        ));
    }
    Ok(())
}

/// min_x f(x) + g(A x) + z^H x by the primal-dual method (Chambolle and Pock), from x and the dual
/// variable y (both updated in place: x of A's columns, y of A's rows). [collective]
pub fn primal_dual<T: Scalar>(
    f: &Prox<T>,
    g: &Prox<T>,
    a: &dyn LinearOperator<T>,
    z: Option<&DistVector<T>>,
    x: &mut DistVector<T>,
    y: &mut DistVector<T>,
    p: PrimalDualParams,
) -> Result<()> {
    let comm = a.cols().comm().clone();
    let local = (|| {
        finite_positive(p.tau, "tau")?;
        finite_positive(p.mu, "mu")?;
        if !p.theta.is_finite() {
            crate::bail!(InvalidArgument, "theta is {}; it must be finite", p.theta);
        }
        iterations(p.niter, "niter")?;
        a.cols()
            .check_compatible(f.layout(), "A's columns", "f's layout")?;
        a.rows()
            .check_compatible(g.layout(), "A's rows", "g's layout")?;
        a.cols().check_compatible(x.layout(), "A's columns", "x")?;
        a.rows().check_compatible(y.layout(), "A's rows", "y")?;
        if let Some(z) = z {
            a.cols().check_compatible(z.layout(), "A's columns", "z")?;
        }
        Ok((
            x.duplicate()?,
            x.duplicate()?,
            x.duplicate()?,
            y.duplicate()?,
        ))
    })();
    let (ok, e) = match local {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree_step(&comm, e)?;
    let Some((mut xold, mut xhat, mut s, mut w)) = ok else {
        crate::bail!(Internal, "primal-dual: agreed work vectors missing");
    };
    let (tau, mu, theta) = (T::real(p.tau), T::real(p.mu), T::real(p.theta));
    // y = prox_{mu g*}(y + mu A xhat)
    let dual = |y: &mut DistVector<T>, xhat: &DistVector<T>, w: &mut DistVector<T>| {
        let e = a.apply(xhat, w);
        w.axpby(T::one(), y, mu)?;
        e.and(g.proxdual(p.mu, w, y))
    };
    // x = prox_{tau f}(x - tau (A^H y + z)); xhat = x + theta (x - xold)
    let primal = |x: &mut DistVector<T>,
                  y: &DistVector<T>,
                  xold: &DistVector<T>,
                  xhat: &mut DistVector<T>,
                  s: &mut DistVector<T>| {
        let mut e = a.apply_adjoint(y, s);
        if let Some(z) = z {
            e = e.and(s.axpy(T::one(), z));
        }
        s.axpby(T::one(), x, -tau)?;
        e = e.and(f.prox(p.tau, s, x));
        xhat.copy_from(x)?;
        xhat.axpy(-T::one(), xold)?;
        xhat.axpby(T::one(), x, theta)?;
        e
    };
    xhat.copy_from(x)?;
    for _ in 0..p.niter {
        xold.copy_from(x)?;
        let e = if p.gfirst {
            dual(y, &xhat, &mut w).and(primal(x, y, &xold, &mut xhat, &mut s))
        } else {
            primal(x, y, &xold, &mut xhat, &mut s).and(dual(y, &xhat, &mut w))
        };
        agree_step(&comm, e)?;
    }
    finish(&comm, &[x, y], p.niter, "primal-dual")
}

/// min_x f(x) + epsg g(x), f smooth (its gradient), g with a prox, by the proximal gradient method
/// (optionally accelerated), from x (updated in place). Returns the iterations made. [collective]
pub fn proximal_gradient<T: Scalar>(
    f: &Prox<T>,
    g: &Prox<T>,
    x: &mut DistVector<T>,
    p: ProxGradParams,
) -> Result<i64> {
    let comm = f.layout().comm().clone();
    let local = (|| {
        finite_positive(p.tau, "tau")?;
        if !(p.epsg.is_finite() && p.epsg >= 0.0) {
            crate::bail!(
                InvalidArgument,
                "epsg is {}; it must be finite and at least 0",
                p.epsg
            );
        }
        finite_positive(p.eta, "eta")?;
        iterations(p.niter, "niter")?;
        if !(0..=2).contains(&p.acceleration) {
            crate::bail!(
                InvalidArgument,
                "acceleration is {}; it must be 0 (none), 1 (Vandenberghe) or 2 (FISTA)",
                p.acceleration
            );
        }
        if !(p.tol.is_finite() && p.tol >= 0.0) {
            crate::bail!(
                InvalidArgument,
                "tol is {}; it must be finite and at least 0",
                p.tol
            );
        }
        if !f.has_grad() {
            crate::bail!(
                NotSupported,
                "f has no gradient (L1 and L21 are not smooth)"
            );
        }
        f.layout()
            .check_compatible(g.layout(), "f's layout", "g's layout")?;
        f.layout().check_compatible(x.layout(), "f's layout", "x")?;
        Ok((x.duplicate()?, x.duplicate()?, x.duplicate()?))
    })();
    let (ok, e) = match local {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree_step(&comm, e)?;
    let Some((mut xold, mut y, mut s)) = ok else {
        crate::bail!(Internal, "proximal gradient: agreed work vectors missing");
    };
    let tau = T::real(p.tau);
    let mut t = 1.0f64;
    let mut pfg = f64::INFINITY;
    y.copy_from(x)?;
    let mut made = 0;
    for it in 0..p.niter {
        xold.copy_from(x)?;
        let mut e;
        if p.eta == 1.0 {
            // x = prox_{epsg tau g}(y - tau grad f(y))
            e = f.grad(&y, &mut s);
            s.axpby(T::one(), &y, -tau)?;
            e = e.and(prox_weighted(g, p.epsg * p.tau, &s, x));
        } else {
            // x = x + eta (prox_{epsg tau g}(x - tau grad f(x)) - x)
            e = f.grad(x, &mut s);
            s.axpby(T::one(), x, -tau)?;
            e = e.and(prox_weighted(g, p.epsg * p.tau, &s, &mut y));
            y.axpy(-T::one(), x)?;
            x.axpy(T::real(p.eta), &y)?;
        }
        let omega = match p.acceleration {
            1 => it as f64 / (it as f64 + 3.0),
            2 => {
                let told = t;
                t = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
                (told - 1.0) / t
            }
            _ => 0.0,
        };
        // y = x + omega (x - xold)
        y.copy_from(x)?;
        y.axpy(-T::one(), &xold)?;
        y.axpby(T::one(), x, T::real(omega))?;
        made = it + 1;
        if p.tol > 0.0 {
            let pfgold = pfg;
            let pf = f.value(x, e)?;
            let pg = g.value(x, Ok(()))?;
            pfg = pf + p.epsg * pg;
            if (1.0 - pfg / pfgold).abs() < p.tol {
                break;
            }
        } else {
            agree_step(&comm, e)?;
        }
    }
    finish(&comm, &[x], made, "proximal gradient")?;
    Ok(made)
}

/// prox_{w g}(s) into x; a zero weight (epsg = 0) leaves s as it is.
fn prox_weighted<T: Scalar>(
    g: &Prox<T>,
    w: f64,
    s: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<()> {
    if w == 0.0 {
        return x.copy_from(s);
    }
    g.prox(w, s, x)
}

/// Settings of [`admm_l2`] (PyLops-MPI's names).
#[derive(Clone, Copy, Debug)]
pub struct AdmmParams {
    /// The penalty's step: the x-update solves with (1/sqrt(tau)) A below Op.
    pub tau: f64,
    pub niter: i64,
    /// Apply g's prox before the x-update (true) or after it (false, PyLops-MPI's default).
    pub gfirst: bool,
    /// z holds the start of the auxiliary variable; else it starts as A x.
    pub z_given: bool,
    /// The x-update's CGLS (PyLops-MPI's cgls defaults: 10 iterations, tol 1e-4).
    pub inner: super::prox_op::Inner,
}

/// min_x 1/2 ||Op x - b||^2 + g(A x) by ADMM, as PyLops-MPI's `ADMML2` runs it: u = 0 and, each
/// iteration, x = cgls([Op; A / sqrt(tau)], [b; (z - u) / sqrt(tau)]) from x, then
/// z = prox_{tau g}(A x + u) and u = u + A x - z (z first when `gfirst`, with A x of the previous
/// x). x (Op's and A's columns) and z (A's rows) are updated in place. [collective]
#[allow(clippy::too_many_arguments)]
pub fn admm_l2<T: Scalar>(
    g: &Prox<T>,
    op: &dyn LinearOperator<T>,
    b: &DistVector<T>,
    a: &dyn LinearOperator<T>,
    x: &mut DistVector<T>,
    z: &mut DistVector<T>,
    p: AdmmParams,
) -> Result<()> {
    use super::prox_op::{CglsWork, Stack, cgls};
    let comm = x.layout().comm().clone();
    let c = 1.0 / p.tau.sqrt();
    let st = Stack {
        top: op,
        c_top: 1.0,
        bot: Some(a),
        c_bot: c,
    };
    let local = (|| {
        finite_positive(p.tau, "tau")?;
        iterations(p.niter, "niter")?;
        p.inner.check("the x-update's (CGLS)")?;
        op.cols()
            .check_compatible(a.cols(), "Op's columns", "A's columns")?;
        op.cols()
            .check_compatible(x.layout(), "Op's columns", "x")?;
        op.rows().check_compatible(b.layout(), "Op's rows", "b")?;
        a.rows().check_compatible(z.layout(), "A's rows", "z")?;
        a.rows()
            .check_compatible(g.layout(), "A's rows", "g's layout")?;
        let zeros = |v: &DistVector<T>| -> Result<DistVector<T>> {
            let mut w = v.duplicate()?;
            w.fill(T::zero())?;
            Ok(w)
        };
        Ok((CglsWork::new(&st, x)?, zeros(z)?, zeros(z)?, zeros(z)?))
    })();
    let (mut w, mut u, mut ax, mut t) = comm.agree(local)?;
    if !p.z_given {
        let e = a.apply(x, z);
        comm.agree(e)?;
    }
    for _ in 0..p.niter {
        let mut e = Ok(());
        if p.gfirst {
            // z = prox_{tau g}(A x + u)
            e = e.and(a.apply(x, &mut ax));
            t.waxpy(T::one(), &ax, &u)?;
            e = e.and(g.prox(p.tau, &t, z));
        }
        // x = cgls([Op; A / sqrt(tau)], [b; (z - u) / sqrt(tau)]) from x
        t.copy_from(z)?;
        t.axpy(-T::one(), &u)?;
        t.scale(T::real(c))?;
        cgls(&comm, &st, b, &t, x, &mut w, p.inner, e)?;
        let mut e = Ok(());
        if !p.gfirst {
            e = e.and(a.apply(x, &mut ax));
            t.waxpy(T::one(), &ax, &u)?;
            e = e.and(g.prox(p.tau, &t, z));
        }
        // u = u + A x - z
        u.axpy(T::one(), &ax)?;
        u.axpy(-T::one(), z)?;
        agree_step(&comm, e)?;
    }
    finish(&comm, &[x, z], p.niter, "ADMM")
}
