//! Proximal operators (PyLops-MPI's `MPIL2`, `MPIL21`, PyProximal's `L1` as it wraps them, and the
//! caller's own) and the proximal solvers (primal-dual, proximal gradient).

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::args::{dtype_arg, with_dtype};
use super::handles::{
    Handle, Kind, arg, arg_mut, create_agreed, destroy, guard, null, opt_arg, out_ok,
    parlops_layout, parlops_op, parlops_vec,
};
use super::op::shell::{CtxGuard, parlops_destroy_fn};
use super::solver::{PARLOPS_METHOD_CG, PARLOPS_METHOD_CGLS, parlops_method};
use super::types::{parlops_dtype, parlops_status};
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::{DType, Scalar};
use crate::solver::prox::{LocalProx, Prox, ProxKind};
use crate::solver::prox_op::{Inner, L2Op};
use crate::vector::{DistVector, Layout};

/// A summary of a vector's layout and dtype that ranks compare when they must pass alike vectors.
pub(crate) fn vec_print(v: &crate::vector::AnyVec) -> i64 {
    v.layout().fingerprint() ^ (v.dtype() as i64) << 56
}

/// A proximal operator (opaque): a convex function f on vectors of one layout and dtype, with
/// f(x), prox_{tau f}, the dual prox_{tau f*} and, where f is smooth, its gradient.
pub struct parlops_prox {
    /// The typed `Prox<T>`.
    pub(crate) inner: Box<dyn Any + Send + Sync>,
    pub(crate) dtype: DType,
    pub(crate) layout: Arc<Layout>,
    /// The same number on every rank for the same proximal operator (agreed at creation).
    pub(crate) ident: u64,
}

impl Handle for parlops_prox {
    const KIND: Kind = Kind::Prox;
    fn agreed_serial(&mut self, serial: u64) {
        self.ident = crate::comm::list_hash(&[0x0c05, serial as i64], 0);
    }
}

impl parlops_prox {
    pub(crate) fn typed<T: Scalar>(&self) -> Result<&Prox<T>> {
        self.inner
            .downcast_ref::<Prox<T>>()
            .ok_or_else(|| Error::new(ErrorKind::Internal, "a proximal operator of another dtype"))
    }
}

/// A proximal operator's callback: y_local = prox_{tau f}(x_local) on this rank's entries (the
/// prox, or the dual prox prox_{tau f*}), local arrays of the dtype given at creation, host memory.
/// Return 0 on success; any other value fails the call on every rank with PARLOPS_ERR_CALLBACK.
pub type parlops_prox_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        tau: f64,
        x_local: *const c_void,
        y_local: *mut c_void,
    ) -> c_int,
>;
/// A proximal operator's callback giving this rank's share of f(x) in `*value` (parlops sums the
/// shares over the ranks). Return 0 on success.
pub type parlops_prox_value_fn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, x_local: *const c_void, value: *mut f64) -> c_int,
>;
/// A proximal operator's callback giving this rank's part of grad f(x) in `g_local`. Return 0 on
/// success.
pub type parlops_prox_grad_fn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, x_local: *const c_void, g_local: *mut c_void) -> c_int,
>;

/// Proximal gradient without acceleration.
pub const PARLOPS_ACCELERATION_NONE: c_int = 0;
/// Proximal gradient with omega_k = k / (k + 3) (Vandenberghe's; PyLops-MPI's "vandenberghe").
pub const PARLOPS_ACCELERATION_VANDENBERGHE: c_int = 1;
/// Proximal gradient with FISTA's omega_k = (t_{k-1} - 1) / t_k (PyLops-MPI's "fista").
pub const PARLOPS_ACCELERATION_FISTA: c_int = 2;

/// The arguments every constructor shares: the layout (its communicator), the dtype.
fn made(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_prox,
    params: &[i64],
    what: &str,
    build: impl FnOnce(DType, &Arc<Layout>) -> Result<(Box<dyn Any + Send + Sync>, DType)>,
    pre: Result<()>,
) -> Result<()> {
    // SAFETY: `arg` checks `layout` (a live parlops_layout) and holds it shared for this call.
    let l = unsafe { arg(layout, "layout")? };
    let d = dtype_arg(dtype);
    // the kind's code first, then the dtype, the layout and the kind's parameters
    let mut same = vec![params[0], dtype as i64, l.inner.fingerprint()];
    same.extend_from_slice(&params[1..]);
    let pre = pre.and(d.as_ref().map(|_| ()).map_err(|e| e.clone()));
    let layout = l.inner.clone();
    create_agreed(l.inner.comm(), out, pre, what, &same, || {
        let (inner, dtype) = build(d?, &layout)?;
        Ok(parlops_prox {
            inner,
            dtype,
            layout,
            ident: 0,
        })
    })
}

/// The L1 norm f(x) = sigma ||x||_1 (PyProximal's `L1`, as PyLops-MPI wraps it): prox_{tau f} is
/// soft thresholding at tau sigma, prox_{tau f*} the projection onto |x_i| <= sigma (radial for
/// complex entries). sigma > 0. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_create_l1(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    sigma: f64,
    out: *mut *mut parlops_prox,
) -> parlops_status {
    guard("parlops_prox_create_l1", || {
        let what = "the dtype, sigma or layouts ([kind, dtype, layout fingerprint, sigma bits])";
        made(
            layout,
            dtype,
            out,
            &[1, sigma.to_bits() as i64],
            what,
            |d, l| {
                with_dtype!(d, T => {
                    let p = Prox::<T>::new(l.clone(), ProxKind::L1 { sigma })?;
                    Ok((Box::new(p) as Box<dyn Any + Send + Sync>, d))
                })
            },
            Ok(()),
        )
    })
}

/// The squared L2 norm f(x) = sigma/2 ||x - b||^2 + alpha Re(q^H x) (PyLops-MPI's `MPIL2` without
/// an operator): b and q may be NULL (zero); they are copied (later changes to them are not
/// seen). prox_{tau f}(x) = (x + tau sigma b - tau alpha q) / (1 + tau sigma); the gradient
/// sigma (x - b) + alpha q (alpha q left out when `qgrad` is false); the dual prox by the Moreau
/// identity. sigma > 0, alpha finite. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_create_l2(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    sigma: f64,
    b: *const parlops_vec,
    q: *const parlops_vec,
    alpha: f64,
    qgrad: bool,
    out: *mut *mut parlops_prox,
) -> parlops_status {
    guard("parlops_prox_create_l2", || {
        // SAFETY: `opt_arg` checks `b` and `q` (NULL or live parlops_vecs) and holds them shared
        // for this call.
        let (bv, qv) = unsafe { (opt_arg(b, "b"), opt_arg(q, "q")) };
        let pre = match (&bv, &qv) {
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
            _ => Ok(()),
        };
        let print = |v: &Result<Option<&parlops_vec>>| match v {
            Ok(Some(v)) => vec_print(&v.inner),
            _ => 0,
        };
        let params = [
            2,
            sigma.to_bits() as i64,
            alpha.to_bits() as i64,
            qgrad as i64,
            print(&bv),
            print(&qv),
        ];
        let what = "the dtype, sigma, alpha, qgrad, b, q or layouts ([kind, dtype, layout \
                    fingerprint, sigma bits, alpha bits, qgrad, b's and q's fingerprints])";
        made(
            layout,
            dtype,
            out,
            &params,
            what,
            |d, l| {
                let (bv, qv) = (bv?, qv?);
                with_dtype!(d, T => {
                    let copy = |v: Option<&parlops_vec>, n: &str| -> Result<Option<DistVector<T>>> {
                        v.map(|v| match v.inner.typed::<T>() {
                            Some(t) => {
                                let mut c = t.duplicate()?;
                                c.copy_from(t)?;
                                Ok(c)
                            }
                            None => crate::bail!(
                                DTypeMismatch,
                                "{n} is {} and the proximal operator {}",
                                v.inner.dtype().name(),
                                d.name()
                            ),
                        })
                        .transpose()
                    };
                    let kind = ProxKind::L2 { sigma, alpha, qgrad, b: copy(bv, "b")?, q: copy(qv, "q")? };
                    let p = Prox::<T>::new(l.clone(), kind)?;
                    Ok((Box::new(p) as Box<dyn Any + Send + Sync>, d))
                })
            },
            pre,
        )
    })
}

/// The squared L2 misfit through an operator, f(x) = sigma/2 ||Op x - b||^2 + alpha Re(q^H x)
/// (PyLops-MPI's `MPIL2` with `Op`), on Op's columns in Op's dtype. b (Op's rows, not NULL), q
/// (Op's columns, may be NULL) and x0 (Op's columns, may be NULL: zero) are copied; Op is held by
/// reference (it may be destroyed; the proximal operator keeps its own). prox_{tau f}(x) solves,
/// as PyLops-MPI does, min_y sigma/2 ||Op y - b||^2 + alpha Re(q^H y) + 1/(2 tau) ||y - x||^2:
/// `method` PARLOPS_METHOD_CGLS (PyLops-MPI's default) runs its cgls on
/// [sqrt(tau sigma) Op; I] y = [sqrt(tau sigma) b; x - tau alpha q], PARLOPS_METHOD_CG its cg on
/// (I + tau sigma Op^H Op) y = x + tau sigma Op^H b - tau alpha q, each for at most `niter`
/// iterations (PyLops-MPI's default 10), stopping once ||r||^2 <= `tol` (PyLops' rule, absolute;
/// its default 1e-4) or where its direction has lost to rounding (||c||^2 < ||r||^2 / 2, which
/// exact arithmetic never gives: the solve ran past the attainable accuracy, and PyLops-MPI's
/// further steps would only magnify rounding), from x0 and, when `warm`, from the previous prox's
/// result. An inexact prox
/// by design: the result is what that many iterations give. The gradient is
/// sigma Op^H (Op x - b) + alpha q (alpha q left out when `qgrad` is false); the dual prox by the
/// Moreau identity. Value, prox, dual prox and gradient are collective here (products with Op);
/// a prox of this object from its own operator's callback is PARLOPS_ERR_BUSY on every rank.
/// sigma > 0, alpha finite, niter >= 0, tol >= 0. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_create_l2_op(
    op: *const parlops_op,
    sigma: f64,
    b: *const parlops_vec,
    q: *const parlops_vec,
    alpha: f64,
    qgrad: bool,
    method: parlops_method,
    niter: i64,
    tol: f64,
    x0: *const parlops_vec,
    warm: bool,
    out: *mut *mut parlops_prox,
) -> parlops_status {
    guard("parlops_prox_create_l2_op", || {
        // SAFETY: `arg` checks `op` (a live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(op, "op")? };
        // SAFETY: `arg`/`opt_arg` check `b`, `q` and `x0` (live parlops_vecs; q and x0 may be
        // NULL) and hold them shared for this call.
        let (bv, qv, x0v) = unsafe { (arg(b, "b"), opt_arg(q, "q"), opt_arg(x0, "x0")) };
        let e = |r: Result<()>| r;
        let pre = e(bv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(qv.as_ref().map(|_| ()).map_err(|e| e.clone()))
            .and(x0v.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let pre = pre.and(match method {
            m if m == PARLOPS_METHOD_CG || m == PARLOPS_METHOD_CGLS => Ok(()),
            m => Err(crate::err!(
                InvalidArgument,
                "method is {m}; it must be PARLOPS_METHOD_CGLS ({PARLOPS_METHOD_CGLS}) or \
                 PARLOPS_METHOD_CG ({PARLOPS_METHOD_CG})"
            )),
        });
        let print = |v: Option<&parlops_vec>| v.map_or(0, |v| vec_print(&v.inner));
        let same = [
            5,
            a.ident as i64,
            sigma.to_bits() as i64,
            alpha.to_bits() as i64,
            qgrad as i64,
            method as i64,
            niter,
            tol.to_bits() as i64,
            warm as i64,
            bv.as_ref().map_or(0, |v| print(Some(v))),
            qv.as_ref().map_or(0, |v| print(*v)),
            x0v.as_ref().map_or(0, |v| print(*v)),
        ];
        let what = "the operator, sigma, alpha, qgrad, method, niter, tol, warm, b, q or x0 ([kind, \
                    the operator's identity, sigma bits, alpha bits, qgrad, method, niter, tol \
                    bits, warm, b's, q's and x0's fingerprints])";
        let d = a.inner.dtype();
        let layout = a.inner.cols().clone();
        create_agreed(layout.comm(), out, pre, what, &same, || {
            let (bv, qv, x0v) = (bv?, qv?, x0v?);
            let inner = with_dtype!(d, T => {
                let copy = |v: &parlops_vec, n: &str| -> Result<DistVector<T>> {
                    let Some(t) = v.inner.typed::<T>() else {
                        crate::bail!(DTypeMismatch, "{n} is {} and the operator {}", v.inner.dtype().name(), d.name());
                    };
                    let mut c = t.duplicate()?;
                    c.copy_from(t)?;
                    Ok(c)
                };
                let Some(opt) = a.inner.typed::<T>() else {
                    crate::bail!(Internal, "the operator's dtype");
                };
                // the copies' outcome agreed before L2Op::new's collective steps
                let copies = (|| Ok((
                    copy(bv, "b")?,
                    qv.map(|v| copy(v, "q")).transpose()?,
                    x0v.map(|v| copy(v, "x0")).transpose()?,
                )))();
                let (bc, qc, x0c) = layout.comm().agree(copies)?;
                let inner = Inner { niter, tol };
                let l = L2Op::new(opt.clone(), sigma, alpha, qgrad, bc, qc, method == PARLOPS_METHOD_CG, inner, x0c, warm)?;
                let p = Prox::<T>::new(layout.clone(), ProxKind::L2Op(Box::new(l)))?;
                Box::new(p) as Box<dyn Any + Send + Sync>
            });
            Ok(parlops_prox {
                inner,
                dtype: d,
                layout: layout.clone(),
                ident: 0,
            })
        })
    })
}

/// The mixed L2,1 norm f(x) = sigma sum_i sqrt(sum_k |x_{k,i}|^2) (PyLops-MPI's `MPIL21`): each
/// rank's entries are `ndim` blocks of equal length, x_{k,.} the k-th (the layout of
/// parlops_op_gradient's output, which holds the ndim derivatives of each rank's slab; total
/// variation is f(grad u)). prox_{tau f} scales each group by 1 - tau sigma / max(|x_i|, tau
/// sigma), prox_{tau f*} by sigma / max(|x_i|, sigma). ndim >= 1 dividing every rank's length,
/// sigma > 0. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_create_l21(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    ndim: c_int,
    sigma: f64,
    out: *mut *mut parlops_prox,
) -> parlops_status {
    guard("parlops_prox_create_l21", || {
        let what = "the dtype, ndim, sigma or layouts ([kind, dtype, layout fingerprint, ndim, \
                    sigma bits])";
        let params = [3, ndim as i64, sigma.to_bits() as i64];
        made(
            layout,
            dtype,
            out,
            &params,
            what,
            |d, l| {
                if ndim < 1 {
                    crate::bail!(InvalidArgument, "ndim is {ndim}; it must be at least 1");
                }
                with_dtype!(d, T => {
                    let kind = ProxKind::L21 { ndim: ndim as usize, sigma };
                    let p = Prox::<T>::new(l.clone(), kind)?;
                    Ok((Box::new(p) as Box<dyn Any + Send + Sync>, d))
                })
            },
            Ok(()),
        )
    })
}

/// The caller's proximal operator, by callbacks on this rank's entries (a separable function, as
/// PyLops-MPI's `MPIProxOperator` wraps PyProximal's): `prox` (not NULL) computes prox_{tau f};
/// `proxdual` (may be NULL: the Moreau identity x - tau prox_{f/tau}(x/tau) is used), `value` (may
/// be NULL: parlops_prox_value and the proximal gradient's `tol` are then refused) and `grad` (may
/// be NULL: not smooth) as their types say. Host arrays of `dtype`. `destroy_ctx` (may be NULL) is
/// called with `ctx` when the object is destroyed; when this call fails the caller keeps `ctx`.
/// Every rank must pass the same set of non-NULL callbacks. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_create_shell(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    ctx: *mut c_void,
    prox: parlops_prox_fn,
    proxdual: parlops_prox_fn,
    value: parlops_prox_value_fn,
    grad: parlops_prox_grad_fn,
    destroy_ctx: parlops_destroy_fn,
    out: *mut *mut parlops_prox,
) -> parlops_status {
    guard("parlops_prox_create_shell", || {
        let guard_ctx = Arc::new(CtxGuard::new(ctx, destroy_ctx));
        let flags = [
            4,
            prox.is_some() as i64,
            proxdual.is_some() as i64,
            value.is_some() as i64,
            grad.is_some() as i64,
        ];
        let what = "the dtype, callbacks given or layouts ([kind, dtype, layout fingerprint, which \
                    of prox, proxdual, value and grad are not NULL])";
        let g = guard_ctx.clone();
        let r = made(
            layout,
            dtype,
            out,
            &flags,
            what,
            move |d, l| {
                let Some(prox) = prox else {
                    return Err(null("prox"));
                };
                let rank = l.comm().rank();
                let cb = Arc::new(Shell {
                    ctx: g,
                    prox,
                    proxdual,
                    value,
                    grad,
                    rank,
                });
                with_dtype!(d, T => {
                    let p = Prox::<T>::new(l.clone(), ProxKind::Local(cb as Arc<dyn LocalProx<T>>))?;
                    Ok((Box::new(p) as Box<dyn Any + Send + Sync>, d))
                })
            },
            Ok(()),
        );
        if r.is_ok() {
            guard_ctx.arm();
        }
        r
    })
}

type RawProx = unsafe extern "C" fn(*mut c_void, f64, *const c_void, *mut c_void) -> c_int;

struct Shell {
    ctx: Arc<CtxGuard>,
    prox: RawProx,
    proxdual: parlops_prox_fn,
    value: parlops_prox_value_fn,
    grad: parlops_prox_grad_fn,
    rank: i32,
}

impl Shell {
    fn rc(&self, rc: c_int, which: &str) -> Result<()> {
        if rc != 0 {
            crate::bail!(
                Callback,
                "the {which} callback returned {rc} on rank {}",
                self.rank
            );
        }
        Ok(())
    }
}

impl<T: Scalar> LocalProx<T> for Shell {
    fn prox(&self, tau: f64, x: &[T], y: &mut [T]) -> Result<()> {
        // SAFETY: `prox` is the caller's callback with this signature and `ctx` its context, alive
        // until `destroy_ctx` (header contract of parlops_prox_create_shell); `x` and `y` are this
        // rank's entries of the object's dtype in host memory, borrowed for the call.
        let rc = unsafe {
            (self.prox)(
                self.ctx.ctx(),
                tau,
                x.as_ptr().cast(),
                y.as_mut_ptr().cast(),
            )
        };
        self.rc(rc, "prox")
    }
    fn proxdual(&self, tau: f64, x: &[T], y: &mut [T]) -> Option<Result<()>> {
        let f = self.proxdual?;
        // SAFETY: as in `prox`, for the caller's `proxdual`.
        let rc = unsafe {
            f(
                self.ctx.ctx(),
                tau,
                x.as_ptr().cast(),
                y.as_mut_ptr().cast(),
            )
        };
        Some(self.rc(rc, "proxdual"))
    }
    fn value(&self, x: &[T]) -> Option<Result<f64>> {
        let f = self.value?;
        let mut v = 0.0f64;
        // SAFETY: as in `prox`, for the caller's `value`; `v` is a writable double.
        let rc = unsafe { f(self.ctx.ctx(), x.as_ptr().cast(), &mut v) };
        Some(self.rc(rc, "value").map(|_| v))
    }
    fn grad(&self, x: &[T], g: &mut [T]) -> Option<Result<()>> {
        let f = self.grad?;
        // SAFETY: as in `prox`, for the caller's `grad`.
        let rc = unsafe { f(self.ctx.ctx(), x.as_ptr().cast(), g.as_mut_ptr().cast()) };
        Some(self.rc(rc, "grad"))
    }
}

/// Release the proximal operator and set `*p` to NULL (NULL `*p` is a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_destroy(p: *mut *mut parlops_prox) -> parlops_status {
    // SAFETY: `destroy` checks `p` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `p` points to its handle variable.
    guard("parlops_prox_destroy", || unsafe { destroy(p, "p") })
}

/// A vector argument of the proximal operator's dtype.
fn typed_vec<'a, T: Scalar>(v: &'a parlops_vec, name: &str, d: DType) -> Result<&'a DistVector<T>> {
    v.inner.typed::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "{name} is {} and the proximal operator {}",
            v.inner.dtype().name(),
            d.name()
        )
    })
}

/// The layout fingerprint and dtype of a vector argument, for the agreement (0 when not valid).
fn vprint(v: &Result<&parlops_vec>) -> i64 {
    match v {
        Ok(v) => vec_print(&v.inner),
        Err(_) => 0,
    }
}

/// *value = f(x), the same on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_value(
    p: *const parlops_prox,
    x: *const parlops_vec,
    value: *mut f64,
) -> parlops_status {
    guard("parlops_prox_value", || {
        // SAFETY: `arg` checks `p` and `x` (live handles of their types) and holds them shared.
        let p = unsafe { arg(p, "p")? };
        // SAFETY: as above.
        let xv = unsafe { arg(x, "x") };
        let pre = out_ok(value, "value").and(xv.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let comm = p.layout.comm();
        comm.agree_same(
            pre,
            "the proximal operators or x (identities, x's fingerprints)",
            &[p.ident as i64, vprint(&xv)],
        )?;
        let x = xv?;
        let v = with_dtype!(p.dtype, T => {
            let pt = p.typed::<T>();
            let xt = typed_vec::<T>(x, "x", p.dtype);
            match (pt, xt) {
                (Ok(pt), Ok(xt)) => pt.value(xt, Ok(())),
                (Err(e), _) | (_, Err(e)) => comm.agree(Err::<f64, _>(e)),
            }
        })?;
        // SAFETY: `value` was checked not NULL (agreed above); writable by the header contract.
        unsafe { *value = v };
        Ok(())
    })
}

/// Which of the three local maps a call runs.
#[derive(Clone, Copy)]
enum Map {
    Prox,
    Dual,
    Grad,
}

fn map_call(
    p: *const parlops_prox,
    tau: f64,
    x: *const parlops_vec,
    y: *mut parlops_vec,
    map: Map,
) -> Result<()> {
    // SAFETY: `arg` checks `p` (a live parlops_prox) and holds it shared for this call.
    let p = unsafe { arg(p, "p")? };
    let yname = if let Map::Grad = map { "g" } else { "y" };
    let alias = std::ptr::eq(x, y.cast_const()) && !x.is_null();
    // SAFETY: `arg` checks `x` (a live parlops_vec, shared); `y` is taken exclusively below only
    // when it is not `x`.
    let xv = unsafe { arg(x, "x") };
    let yv = if alias {
        Err(crate::err!(
            InvalidArgument,
            "x and {yname} are the same vector"
        ))
    } else {
        // SAFETY: `arg_mut` checks `y` and holds it exclusively; it is not `x` (checked above).
        unsafe { arg_mut(y, yname) }
    };
    let pre = xv.as_ref().map(|_| ()).map_err(|e| e.clone());
    let pre = pre.and(yv.as_ref().map(|_| ()).map_err(|e| e.clone()));
    let comm = p.layout.comm().clone();
    let yprint = match &yv {
        Ok(v) => vec_print(&v.inner),
        Err(_) => 0,
    };
    let tb = if let Map::Grad = map {
        0
    } else {
        tau.to_bits() as i64
    };
    comm.agree_same(
        pre,
        "the proximal operators, tau, x or y (identities, tau bits, the vectors' fingerprints)",
        &[p.ident as i64, tb, vprint(&xv), yprint],
    )?;
    let (x, y) = (xv?, yv?);
    let r = with_dtype!(p.dtype, T => (|| {
        let pt = p.typed::<T>()?;
        let xt = typed_vec::<T>(x, "x", p.dtype)?;
        let Some(yt) = y.inner.typed_mut::<T>() else {
            crate::bail!(DTypeMismatch, "{yname} is {} and the proximal operator {}", y.inner.dtype().name(), p.dtype.name());
        };
        match map {
            Map::Prox => pt.prox(tau, xt, yt),
            Map::Dual => pt.proxdual(tau, xt, yt),
            Map::Grad => pt.grad(xt, yt),
        }
    })());
    comm.agree(r)
}

/// y = prox_{tau f}(x) (tau > 0; x and y of the object's layout and dtype, distinct). Local work,
/// its outcome agreed: a failing callback on one rank fails every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_apply(
    p: *const parlops_prox,
    tau: f64,
    x: *const parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_prox_apply", || map_call(p, tau, x, y, Map::Prox))
}

/// y = prox_{tau f*}(x), f* the convex conjugate of f (PyProximal's `proxdual`). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_apply_dual(
    p: *const parlops_prox,
    tau: f64,
    x: *const parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_prox_apply_dual", || {
        map_call(p, tau, x, y, Map::Dual)
    })
}

/// g = grad f(x) (L2, or a shell with `grad`; others: PARLOPS_ERR_NOT_SUPPORTED). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_prox_gradient(
    p: *const parlops_prox,
    x: *const parlops_vec,
    g: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_prox_gradient", || {
        map_call(p, 1.0, x, g, Map::Grad)
    })
}
