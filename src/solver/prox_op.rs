//! The squared L2 misfit through an operator, f(x) = sigma/2 ||Op x - b||^2 + alpha Re(q^H x)
//! (PyLops-MPI 0.8's `MPIL2` with `Op`), and the inner least-squares solves that it and ADMM
//! ([`super::proximal::admm_l2`]) run: PyLops-MPI's `cg` and `cgls` with their updates in their
//! order and their stopping rule (||r||^2 <= tol, absolute, or `niter` iterations), so that the
//! iterates agree with PyLops-MPI's to rounding.
//!
//! Unlike the other proximal operators, every entry point here is collective: a product with Op
//! and reductions. A failure on one rank (an operator's callback, an allocation) is carried into
//! the next reduction, so every rank returns it at the same point.

use std::sync::Mutex;

use crate::comm::Comm;
use crate::error::Result;
use crate::op::{LinearOperator, Op};
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Iterations and tolerance of an inner solve (PyLops-MPI's `niter` and `tol`: stop when
/// ||r||^2 <= tol, r the residual of CG or the normal-equations residual of CGLS).
#[derive(Clone, Copy, Debug)]
pub struct Inner {
    pub niter: i64,
    pub tol: f64,
}

impl Inner {
    pub fn check(&self, what: &str) -> Result<()> {
        super::proximal::iterations(self.niter, &format!("{what} niter"))?;
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            crate::bail!(
                InvalidArgument,
                "{what} tol is {}; it must be finite and at least 0",
                self.tol
            );
        }
        Ok(())
    }
}

/// A zeroed vector of `op`'s rows or columns, in `like`'s memory.
fn work_like<T: Scalar>(
    layout: &std::sync::Arc<crate::vector::Layout>,
    like: &DistVector<T>,
) -> Result<DistVector<T>> {
    let mut v = DistVector::new_in(layout.clone(), like.location())?;
    v.fill(T::zero())?;
    Ok(v)
}

fn re<T: Scalar>(v: T) -> f64 {
    v.to_parts().0
}

/// |v| of a reduced scalar (PyLops' np.abs of a dot).
fn abs<T: Scalar>(v: T) -> f64 {
    v.abs_f64()
}

/// A squared residual norm (the same on every rank: reduced) that is NaN or Inf ends the solve on
/// every rank: PyLops' `kold > tol` is false for NaN and would stop with the iterate unchanged.
fn finite(k: f64, what: &str, it: i64) -> Result<f64> {
    if !k.is_finite() {
        crate::bail!(
            NotConverged,
            "{what}: the residual norm is {k} after {it} iterations (NaN or Inf in the data or \
             an operator: diverged)"
        );
    }
    Ok(k)
}

/// The stacked operator [c_top A_top; c_bot A_bot] of PyLops-MPI's MPIStackedVStack, A_bot the
/// identity when `None`.
pub(crate) struct Stack<'a, T: Scalar> {
    pub top: &'a dyn LinearOperator<T>,
    pub c_top: f64,
    pub bot: Option<&'a dyn LinearOperator<T>>,
    pub c_bot: f64,
}

/// Work vectors of [`cgls`]: s and q in the two row blocks, r, c and t in the columns.
pub(crate) struct CglsWork<T: Scalar> {
    s1: DistVector<T>,
    s2: DistVector<T>,
    q1: DistVector<T>,
    q2: DistVector<T>,
    r: DistVector<T>,
    c: DistVector<T>,
    t: DistVector<T>,
}

impl<T: Scalar> CglsWork<T> {
    /// Work for `st` on vectors like `x` (the columns). [local]
    pub fn new(st: &Stack<'_, T>, x: &DistVector<T>) -> Result<Self> {
        let bot_rows = st
            .bot
            .map_or_else(|| x.layout().clone(), |a| a.rows().clone());
        Ok(CglsWork {
            s1: work_like(st.top.rows(), x)?,
            s2: work_like(&bot_rows, x)?,
            q1: work_like(st.top.rows(), x)?,
            q2: work_like(&bot_rows, x)?,
            r: work_like(x.layout(), x)?,
            c: work_like(x.layout(), x)?,
            t: work_like(x.layout(), x)?,
        })
    }
}

impl<T: Scalar> Stack<'_, T> {
    /// (y1, y2) = (c_top A_top x, c_bot A_bot x); a failure is returned after both parts ran.
    fn fwd(&self, x: &DistVector<T>, y1: &mut DistVector<T>, y2: &mut DistVector<T>) -> Result<()> {
        let mut e = self.top.apply(x, y1);
        if self.c_top != 1.0 {
            e = e.and(y1.scale(T::real(self.c_top)));
        }
        e = e.and(match self.bot {
            Some(a) => a.apply(x, y2),
            None => y2.copy_from(x),
        });
        if self.c_bot != 1.0 {
            e = e.and(y2.scale(T::real(self.c_bot)));
        }
        e
    }

    /// r = c_top A_top^H s1 + c_bot A_bot^H s2 (`t`: work of the columns).
    fn adj(
        &self,
        s1: &DistVector<T>,
        s2: &DistVector<T>,
        r: &mut DistVector<T>,
        t: &mut DistVector<T>,
    ) -> Result<()> {
        let mut e = self.top.apply_adjoint(s1, r);
        if self.c_top != 1.0 {
            e = e.and(r.scale(T::real(self.c_top)));
        }
        e = e.and(match self.bot {
            Some(a) => a.apply_adjoint(s2, t),
            None => t.copy_from(s2),
        });
        e.and(r.axpy(T::real(self.c_bot), t))
    }
}

/// Has a conjugate direction c = r + beta c_old lost to rounding? In exact arithmetic r is
/// orthogonal to c_old, so ||c||^2 >= ||r||^2; once r is rounding noise (the solve ran past the
/// attainable accuracy, as with tol 0) the two may cancel, and the next step length,
/// ||r||^2 / ||A c||^2, grows without bound (1e108 from a 1-unknown problem solved in one step).
fn lost(cc: f64, rr: f64) -> bool {
    cc < 0.5 * rr
}

/// PyLops-MPI's `cgls` (damp 0) on [c_top A_top; c_bot A_bot] x = [b1; b2] from x (updated in
/// place): stops after `inner.niter` iterations or once ||r||^2 <= inner.tol, r the
/// normal-equations residual, or where the direction has lost to rounding ([`lost`]: where
/// PyLops-MPI would go on with a step that only magnifies rounding). Returns the iterations made. `pending` (an earlier failure of this
/// rank) enters the first reduction. [collective]
#[allow(clippy::too_many_arguments)]
pub(crate) fn cgls<T: Scalar>(
    comm: &Comm,
    st: &Stack<'_, T>,
    b1: &DistVector<T>,
    b2: &DistVector<T>,
    x: &mut DistVector<T>,
    w: &mut CglsWork<T>,
    inner: Inner,
    pending: Result<()>,
) -> Result<i64> {
    let CglsWork {
        s1,
        s2,
        q1,
        q2,
        r,
        c,
        t,
    } = w;
    // s = b - Op x; r = Op^H s; c = r; q = Op c
    let mut e = pending.and(st.fwd(x, s1, s2));
    e = e.and(s1.axpby(T::one(), b1, -T::one()));
    e = e.and(s2.axpby(T::one(), b2, -T::one()));
    e = e.and(st.adj(s1, s2, r, t));
    e = e.and(c.copy_from(r));
    let mut kold = finite(abs(dots(comm, &[(&*r, &*r)], e)?[0]), "CGLS", 0)?;
    // a failed product is carried into the next reduction (or agreed at the end)
    let mut e = st.fwd(c, q1, q2);
    let mut it = 0;
    while it < inner.niter && kold > inner.tol {
        // (a failure carried in `e` ends the solve in this reduction, on every rank)
        let pending = std::mem::replace(&mut e, Ok(()));
        let d = dots(comm, &[(&*q1, &*q1), (&*q2, &*q2), (&*c, &*c)], pending)?;
        if lost(abs(d[2]), kold) {
            break;
        }
        let a = T::real((kold / (d[0] + d[1]).abs_f64()).abs());
        x.axpy(a, c)?;
        s1.axpy(-a, q1)?;
        s2.axpy(-a, q2)?;
        let ea = st.adj(s1, s2, r, t);
        let k = finite(abs(dots(comm, &[(&*r, &*r)], ea)?[0]), "CGLS", it + 1)?;
        c.axpby(T::one(), r, T::real(k / kold))?;
        e = st.fwd(c, q1, q2);
        kold = k;
        it += 1;
    }
    comm.agree(e)?;
    Ok(it)
}

/// PyLops-MPI's `cg` on (I + c A^H A) x = y from x (updated in place), `t` rows work, `r`,
/// `cv`, `opc` columns work; it also stops where the direction has lost to rounding ([`lost`]).
/// Returns the iterations made. [collective]
#[allow(clippy::too_many_arguments)]
fn cg_normal<T: Scalar>(
    comm: &Comm,
    a: &dyn LinearOperator<T>,
    coef: f64,
    y: &DistVector<T>,
    x: &mut DistVector<T>,
    t: &mut DistVector<T>,
    r: &mut DistVector<T>,
    cv: &mut DistVector<T>,
    opc: &mut DistVector<T>,
    inner: Inner,
) -> Result<i64> {
    // v -> v + coef A^H A v
    let apply = |v: &DistVector<T>, out: &mut DistVector<T>, t: &mut DistVector<T>| {
        let e = a.apply(v, t);
        e.and(a.apply_adjoint(t, out))
            .and(out.axpby(T::one(), v, T::real(coef)))
    };
    let mut e = apply(x, r, t);
    e = e.and(r.axpby(T::one(), y, -T::one()));
    e = e.and(cv.copy_from(r));
    let mut kold = finite(abs(dots(comm, &[(&*r, &*r)], e)?[0]), "CG", 0)?;
    let mut it = 0;
    while it < inner.niter && kold > inner.tol {
        let e = apply(cv, opc, t);
        let d = dots(comm, &[(&*cv, &*opc), (&*cv, &*cv)], e)?;
        if lost(abs(d[1]), kold) {
            break;
        }
        let copc = abs(d[0]);
        let al = T::real(kold / copc);
        x.axpy(al, cv)?;
        r.axpy(-al, opc)?;
        let k = finite(abs(dots(comm, &[(&*r, &*r)], Ok(()))?[0]), "CG", it + 1)?;
        cv.axpby(T::one(), r, T::real(k / kold))?;
        kold = k;
        it += 1;
    }
    Ok(it)
}

/// f(x) = sigma/2 ||Op x - b||^2 + alpha Re(q^H x), PyLops-MPI's MPIL2 with an operator.
pub struct L2Op<T: Scalar> {
    pub op: Op<T>,
    pub sigma: f64,
    pub alpha: f64,
    pub qgrad: bool,
    /// The data (Op's rows), copied.
    pub b: DistVector<T>,
    /// The linear term (Op's columns), copied.
    pub q: Option<DistVector<T>>,
    /// Solve the prox by CG on the normal equations (PyLops-MPI's solver="cg") instead of CGLS.
    pub normal: bool,
    pub inner: Inner,
    /// Start each prox's solve from the previous result (PyLops-MPI's `warm`).
    pub warm: bool,
    /// The start of the next prox's solve (PyLops-MPI's x0).
    x0: Mutex<DistVector<T>>,
    /// sigma Op^H b, for the normal equations.
    optb: Option<DistVector<T>>,
}

impl<T: Scalar> L2Op<T> {
    /// Checks the arguments (the same outcome on every rank), then with the normal equations
    /// forms sigma Op^H b. `x0`: the first prox's start (None: zero). [collective]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        op: Op<T>,
        sigma: f64,
        alpha: f64,
        qgrad: bool,
        b: DistVector<T>,
        q: Option<DistVector<T>>,
        normal: bool,
        inner: Inner,
        x0: Option<DistVector<T>>,
        warm: bool,
    ) -> Result<Self> {
        let comm = op.cols().comm().clone();
        let local = (|| {
            if !(sigma.is_finite() && sigma > 0.0) {
                crate::bail!(
                    InvalidArgument,
                    "sigma is {sigma}; it must be positive and finite"
                );
            }
            if !alpha.is_finite() {
                crate::bail!(InvalidArgument, "alpha is {alpha}; it must be finite");
            }
            inner.check("the inner solve's")?;
            op.rows()
                .check_compatible(b.layout(), "the operator's rows", "b")?;
            if let Some(q) = &q {
                op.cols()
                    .check_compatible(q.layout(), "the operator's columns", "q")?;
            }
            let x0 = match x0 {
                Some(v) => {
                    op.cols()
                        .check_compatible(v.layout(), "the operator's columns", "x0")?;
                    v
                }
                None => work_like(op.cols(), &b)?,
            };
            let optb = if normal {
                Some(work_like(op.cols(), &b)?)
            } else {
                None
            };
            Ok((x0, optb))
        })();
        let (x0, mut optb) = comm.agree(local)?;
        if let Some(o) = &mut optb {
            let e = op.apply_adjoint(&b, o).and(o.scale(T::real(sigma)));
            comm.agree(e)?;
        }
        Ok(L2Op {
            op,
            sigma,
            alpha,
            qgrad,
            b,
            q,
            normal,
            inner,
            warm,
            x0: Mutex::new(x0),
            optb,
        })
    }

    fn comm(&self) -> &std::sync::Arc<Comm> {
        self.op.cols().comm()
    }

    /// w = Op x - b (w of Op's rows); the failure carried.
    fn misfit(&self, x: &DistVector<T>, w: &mut DistVector<T>) -> Result<()> {
        self.op.apply(x, w).and(w.axpy(-T::one(), &self.b))
    }

    /// f(x); `pending` carries an earlier failure of this rank. [collective]
    pub fn value(&self, x: &DistVector<T>, pending: Result<()>) -> Result<f64> {
        let comm = self.comm();
        let w = pending.and_then(|_| {
            self.op
                .cols()
                .check_compatible(x.layout(), "the operator's columns", "x")?;
            work_like(self.op.rows(), x)
        });
        let mut w = comm.agree(w)?;
        let e = self.misfit(x, &mut w);
        let d = match &self.q {
            Some(q) => dots(comm, &[(&w, &w), (q, x)], e)?,
            None => dots(comm, &[(&w, &w)], e)?,
        };
        let qx = d.get(1).map_or(0.0, |v| re(*v));
        Ok(self.sigma / 2.0 * re(d[0]) + self.alpha * qx)
    }

    /// g = sigma Op^H (Op x - b) + alpha q (without alpha q when not qgrad). [collective]
    pub fn grad(&self, x: &DistVector<T>, g: &mut DistVector<T>) -> Result<()> {
        let comm = self.comm();
        let w = (|| {
            self.op
                .cols()
                .check_compatible(x.layout(), "the operator's columns", "x")?;
            self.op
                .cols()
                .check_compatible(g.layout(), "the operator's columns", "g")?;
            work_like(self.op.rows(), x)
        })();
        let mut w = comm.agree(w)?;
        let mut e = self.misfit(x, &mut w);
        e = e.and(self.op.apply_adjoint(&w, g));
        e = e.and(g.scale(T::real(self.sigma)));
        if let (Some(q), true) = (&self.q, self.qgrad) {
            e = e.and(g.axpy(T::real(self.alpha), q));
        }
        comm.agree(e)
    }

    /// y = prox_{tau f}(x): PyLops-MPI's solve, from the stored start (then the result, when
    /// warm). [collective]
    pub fn prox(&self, tau: f64, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let comm = self.comm().clone();
        // a prox of this object called from its own operator's callback would wait for itself:
        // refused (agreed with the checks below, before any communication)
        let held = match self.x0.try_lock() {
            Ok(g) => Ok(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Err(crate::err!(
                Busy,
                "the L2 proximal operator is in use by a prox of its own that has not returned \
                 (a call from its operator's callback?)"
            )),
        };
        let busy = held.as_ref().map(|_| ()).map_err(|e| e.clone());
        let cols = self.op.cols();
        let ts = tau * self.sigma;
        if self.normal {
            let local = (|| {
                busy.clone()?;
                cols.check_compatible(x.layout(), "the operator's columns", "x")?;
                cols.check_compatible(y.layout(), "the operator's columns", "y")?;
                Ok((
                    work_like(self.op.rows(), x)?,
                    work_like(cols, x)?,
                    work_like(cols, x)?,
                    work_like(cols, x)?,
                    work_like(cols, x)?,
                ))
            })();
            let (mut t, mut rhs, mut r, mut cv, mut opc) = comm.agree(local)?;
            let mut x0 = held?;
            // rhs = x + tau sigma Op^H b - tau alpha q
            let Some(optb) = &self.optb else {
                crate::bail!(Internal, "sigma Op^H b was not formed");
            };
            rhs.copy_from(x)?;
            rhs.axpy(T::real(tau), optb)?;
            if let Some(q) = &self.q {
                rhs.axpy(-T::real(tau * self.alpha), q)?;
            }
            y.copy_from(&x0)?;
            cg_normal(
                &comm, &*self.op, ts, &rhs, y, &mut t, &mut r, &mut cv, &mut opc, self.inner,
            )?;
            if self.warm {
                x0.copy_from(y)?;
            }
        } else {
            let st = Stack {
                top: &*self.op,
                c_top: ts.sqrt(),
                bot: None,
                c_bot: 1.0,
            };
            let local = (|| {
                busy.clone()?;
                cols.check_compatible(x.layout(), "the operator's columns", "x")?;
                cols.check_compatible(y.layout(), "the operator's columns", "y")?;
                Ok((
                    CglsWork::new(&st, x)?,
                    work_like(self.op.rows(), x)?,
                    work_like(cols, x)?,
                ))
            })();
            let (mut w, mut b1, mut b2) = comm.agree(local)?;
            let mut x0 = held?;
            // [sqrt(tau sigma) Op; I] y = [sqrt(tau sigma) b; x - tau alpha q]
            b1.copy_from(&self.b)?;
            b1.scale(T::real(ts.sqrt()))?;
            b2.copy_from(x)?;
            if let Some(q) = &self.q {
                b2.axpy(-T::real(tau * self.alpha), q)?;
            }
            y.copy_from(&x0)?;
            cgls(&comm, &st, &b1, &b2, y, &mut w, self.inner, Ok(()))?;
            if self.warm {
                x0.copy_from(y)?;
            }
        }
        Ok(())
    }
}
