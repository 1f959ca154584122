//! The proximal solvers (PyLops-MPI's PrimalDual and ProximalGradient) on proximal operators
//! (`capi/prox.rs`).

use std::ffi::c_int;

use super::args::with_dtype;
use super::handles::{arg, arg_mut, guard, opt_arg, parlops_op, parlops_vec};
use super::prox::{parlops_prox, vec_print};
use super::types::parlops_status;
use crate::error::Result;
use crate::scalar::DType;
use crate::solver::prox_op::Inner;
use crate::solver::proximal::{AdmmParams, PrimalDualParams, ProxGradParams};

/// The handles of a proximal solver, checked: vectors distinct, dtypes equal.
fn distinct(vs: &[(*const parlops_vec, &str)]) -> Result<()> {
    for (i, (a, an)) in vs.iter().enumerate() {
        for (b, bn) in &vs[..i] {
            if !a.is_null() && std::ptr::eq(*a, *b) {
                crate::bail!(InvalidArgument, "{an} and {bn} are the same vector");
            }
        }
    }
    Ok(())
}

fn same_dtype(d: DType, what: &str, e: DType) -> Result<()> {
    if d != e {
        crate::bail!(
            DTypeMismatch,
            "{what} is {} and the proximal operator {}",
            d.name(),
            e.name()
        );
    }
    Ok(())
}

/// min_x f(x) + g(A x) + z^H x by the primal-dual method of Chambolle and Pock, as PyLops-MPI's
/// `PrimalDual` runs it (the same updates in the same order), from x (of A's columns) and the dual
/// variable y (of A's rows), both updated in place, for `niter` iterations:
/// y = prox_{mu g*}(y + mu A xbar), x = prox_{tau f}(x - tau (A^H y + z)),
/// xbar = x + theta (x - x_old) (`gfirst` true, PyLops-MPI's default; false updates x first).
/// f and g are proximal operators on A's columns and rows; z may be NULL. The method converges
/// for tau mu ||A||^2 < 1 (theta = 1). tau, mu > 0; theta finite; niter >= 0; x, y and z distinct.
/// A failure on one rank (a callback, an operator) fails every rank at the same iteration; NaN
/// or Inf in x or y at the end is PARLOPS_ERR_NOT_CONVERGED. Host vectors. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_primal_dual(
    f: *const parlops_prox,
    g: *const parlops_prox,
    a: *const parlops_op,
    z: *const parlops_vec,
    tau: f64,
    mu: f64,
    theta: f64,
    niter: i64,
    gfirst: bool,
    x: *mut parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_primal_dual", || {
        // SAFETY: `arg` checks `f` (a live parlops_prox) and holds it shared for this call.
        let f = unsafe { arg(f, "f")? };
        let alias = distinct(&[(x.cast_const(), "x"), (y.cast_const(), "y"), (z, "z")]);
        // SAFETY: `arg`/`opt_arg` check `g`, `a` and `z` and hold them shared; `arg_mut` holds `x`
        // and `y` exclusively, and is only reached when x, y and z are distinct handles.
        let (gv, av, zv) = unsafe { (arg(g, "g"), arg(a, "A"), opt_arg(z, "z")) };
        let (xv, yv) = match &alias {
            // SAFETY: as above.
            Ok(()) => unsafe { (arg_mut(x, "x"), arg_mut(y, "y")) },
            Err(e) => (Err(e.clone()), Err(e.clone())),
        };
        let comm = f.layout.comm().clone();
        let ok = |r: &Result<()>| r.clone();
        let pre = ok(&alias)
            .and(gv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(av.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(zv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(xv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(yv.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let id = |r: u64| r as i64;
        let same = [
            id(f.ident),
            gv.as_ref().map_or(0, |g| id(g.ident)),
            av.as_ref().map_or(0, |a| id(a.ident)),
            match &zv {
                Ok(Some(z)) => vec_print(&z.inner),
                _ => 0,
            },
            xv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            yv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            tau.to_bits() as i64,
            mu.to_bits() as i64,
            theta.to_bits() as i64,
            niter,
            gfirst as i64,
        ];
        comm.agree_same(
            pre,
            "f, g, A, z, x, y, tau, mu, theta, niter or gfirst (identities, fingerprints, bits)",
            &same,
        )?;
        let (g, a, z, x, y) = (gv?, av?, zv?, xv?, yv?);
        let d = f.dtype;
        let p = PrimalDualParams {
            tau,
            mu,
            theta,
            niter,
            gfirst,
        };
        with_dtype!(d, T => {
            let prep = (|| {
                same_dtype(g.dtype, "g", d)?;
                same_dtype(a.inner.dtype(), "A", d)?;
                same_dtype(x.inner.dtype(), "x", d)?;
                same_dtype(y.inner.dtype(), "y", d)?;
                if let Some(z) = z {
                    same_dtype(z.inner.dtype(), "z", d)?;
                }
                Ok(())
            })();
            comm.agree(prep)?;
            let (ft, gt) = (f.typed::<T>()?, g.typed::<T>()?);
            let Some(at) = a.inner.typed::<T>() else {
                crate::bail!(Internal, "A's dtype was checked");
            };
            let zt = z.and_then(|z| z.inner.typed::<T>());
            let (Some(xt), Some(yt)) = (x.inner.typed_mut::<T>(), y.inner.typed_mut::<T>()) else {
                crate::bail!(Internal, "the vectors' dtypes were checked");
            };
            crate::solver::proximal::primal_dual(ft, gt, at.as_ref(), zt, xt, yt, p)
        })
    })
}

/// min_x f(x) + epsg g(x), f smooth (its gradient: L2 or a shell with `grad`), g with a prox, by
/// the proximal gradient method as PyLops-MPI's `ProximalGradient` runs it, from x (updated in
/// place): x_k = prox_{epsg tau g}(y - tau grad f(y)) (with `eta` != 1:
/// x_k = x + eta (prox_{epsg tau g}(x - tau grad f(x)) - x)), y = x_k + omega (x_k - x_{k-1}) with
/// omega from `acceleration` (PARLOPS_ACCELERATION_NONE, _VANDENBERGHE or _FISTA). `tol` > 0 stops
/// when |1 - J_k / J_{k-1}| < tol, J = f(x) + epsg g(x) (two reductions an iteration; both
/// functions need a value); 0 runs `niter` iterations. tau > 0, eta > 0, epsg >= 0. `*iterations`
/// (may be NULL) gets the iterations made. NaN or Inf in x at the end is
/// PARLOPS_ERR_NOT_CONVERGED. Host vectors. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_proximal_gradient(
    f: *const parlops_prox,
    g: *const parlops_prox,
    tau: f64,
    epsg: f64,
    eta: f64,
    niter: i64,
    acceleration: c_int,
    tol: f64,
    x: *mut parlops_vec,
    iterations: *mut i64,
) -> parlops_status {
    guard("parlops_proximal_gradient", || {
        // SAFETY: `arg` checks `f` and `g` (live parlops_proxes) and holds them shared; `arg_mut`
        // holds `x` exclusively (a vector, not a proximal operator: no alias).
        let f = unsafe { arg(f, "f")? };
        // SAFETY: as above.
        let (gv, xv) = unsafe { (arg(g, "g"), arg_mut(x, "x")) };
        let comm = f.layout.comm().clone();
        let pre = gv
            .as_ref()
            .map(|_| ())
            .map_err(|e| e.clone())
            .and(xv.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let same = [
            f.ident as i64,
            gv.as_ref().map_or(0, |g| g.ident as i64),
            xv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            tau.to_bits() as i64,
            epsg.to_bits() as i64,
            eta.to_bits() as i64,
            niter,
            acceleration as i64,
            tol.to_bits() as i64,
        ];
        comm.agree_same(
            pre,
            "f, g, x, tau, epsg, eta, niter, acceleration or tol (identities, fingerprints, bits)",
            &same,
        )?;
        let (g, x) = (gv?, xv?);
        let d = f.dtype;
        let p = ProxGradParams {
            tau,
            epsg,
            eta,
            niter,
            acceleration,
            tol,
        };
        let made = with_dtype!(d, T => {
            let prep = same_dtype(g.dtype, "g", d).and(same_dtype(x.inner.dtype(), "x", d));
            comm.agree(prep)?;
            let (ft, gt) = (f.typed::<T>()?, g.typed::<T>()?);
            let Some(xt) = x.inner.typed_mut::<T>() else {
                crate::bail!(Internal, "x's dtype was checked");
            };
            crate::solver::proximal::proximal_gradient(ft, gt, xt, p)?
        });
        // SAFETY: `iterations` is NULL or a writable int64 (as `put_opt` requires).
        unsafe { super::handles::put_opt(iterations, made) };
        Ok(())
    })
}

/// min_x 1/2 ||Op x - b||^2 + g(A x) by the alternating direction method of multipliers, as
/// PyLops-MPI's `ADMML2` runs it (the same updates in the same order): with u = 0 and z = A x
/// (or the z passed, when `z_given`), each of `niter` iterations makes
/// x = cgls([Op; A / sqrt(tau)], [b; (z - u) / sqrt(tau)]) from x, then
/// z = prox_{tau g}(A x + u) and u = u + A x - z (`gfirst`: z first, from the previous x). The
/// x-update is PyLops-MPI's cgls: at most `cgls_niter` iterations, stopping once
/// ||A^H r||^2 <= `cgls_tol` (PyLops' rule, absolute: its defaults 10 and 1e-4; an x-update
/// whose start already meets the rule makes no iteration, so ask 0 to always make `cgls_niter`).
/// It also stops where its direction has lost to rounding (||c||^2 < ||r||^2 / 2, which exact
/// arithmetic never gives): with `cgls_tol` 0 an x-update solved in fewer steps than `cgls_niter`
/// went on from rounding noise, and PyLops-MPI's steps there can grow without bound (x = -1.7e108
/// from a one-unknown update).
/// x (Op's and A's columns) and z (A's rows, g's layout) are updated in place; b has Op's rows;
/// g may be any proximal operator, collective ones (parlops_prox_create_l2_op) included. tau > 0
/// (convergence asks tau <= 1 / lambda_max(A^H A)); niter and cgls_niter at least 0; cgls_tol at
/// least 0. A failure on one rank (a callback, an operator) fails every rank at the same
/// iteration; NaN or Inf in a residual, in x or in z is PARLOPS_ERR_NOT_CONVERGED. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_admm_l2(
    g: *const parlops_prox,
    op: *const parlops_op,
    b: *const parlops_vec,
    a: *const parlops_op,
    tau: f64,
    niter: i64,
    gfirst: bool,
    z_given: bool,
    cgls_niter: i64,
    cgls_tol: f64,
    x: *mut parlops_vec,
    z: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_admm_l2", || {
        // SAFETY: `arg` checks `g` (a live parlops_prox) and holds it shared for this call.
        let g = unsafe { arg(g, "g")? };
        let alias = distinct(&[(x.cast_const(), "x"), (z.cast_const(), "z"), (b, "b")]);
        // SAFETY: `arg` checks `op`, `a` and `b` and holds them shared; `arg_mut` holds `x` and
        // `z` exclusively, and is only reached when x, z and b are distinct handles.
        let (opv, bv, av) = unsafe { (arg(op, "Op"), arg(b, "b"), arg(a, "A")) };
        let (xv, zv) = match &alias {
            // SAFETY: as above.
            Ok(()) => unsafe { (arg_mut(x, "x"), arg_mut(z, "z")) },
            Err(e) => (Err(e.clone()), Err(e.clone())),
        };
        let comm = g.layout.comm().clone();
        let unit = |r: Result<()>| r;
        let pre = unit(alias.clone())
            .and(opv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(bv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(av.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(xv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(zv.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let same = [
            g.ident as i64,
            opv.as_ref().map_or(0, |o| o.ident as i64),
            bv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            av.as_ref().map_or(0, |o| o.ident as i64),
            xv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            zv.as_ref().map_or(0, |v| vec_print(&v.inner)),
            tau.to_bits() as i64,
            niter,
            gfirst as i64,
            z_given as i64,
            cgls_niter,
            cgls_tol.to_bits() as i64,
        ];
        comm.agree_same(
            pre,
            "g, Op, b, A, x, z, tau, niter, gfirst, z_given, cgls_niter or cgls_tol (identities, \
             fingerprints, bits)",
            &same,
        )?;
        let (opv, bv, av, x, z) = (opv?, bv?, av?, xv?, zv?);
        let d = g.dtype;
        let p = AdmmParams {
            tau,
            niter,
            gfirst,
            z_given,
            inner: Inner {
                niter: cgls_niter,
                tol: cgls_tol,
            },
        };
        with_dtype!(d, T => {
            let prep = same_dtype(opv.inner.dtype(), "Op", d)
                .and(same_dtype(bv.inner.dtype(), "b", d))
                .and(same_dtype(av.inner.dtype(), "A", d))
                .and(same_dtype(x.inner.dtype(), "x", d))
                .and(same_dtype(z.inner.dtype(), "z", d));
            comm.agree(prep)?;
            let gt = g.typed::<T>()?;
            let (Some(opt), Some(at), Some(bt)) = (opv.inner.typed::<T>(), av.inner.typed::<T>(), bv.inner.typed::<T>()) else {
                crate::bail!(Internal, "the operators' and b's dtypes were checked");
            };
            let (Some(xt), Some(zt)) = (x.inner.typed_mut::<T>(), z.inner.typed_mut::<T>()) else {
                crate::bail!(Internal, "the vectors' dtypes were checked");
            };
            crate::solver::proximal::admm_l2(gt, opt.as_ref(), bt, at.as_ref(), xt, zt, p)
        })
    })
}
