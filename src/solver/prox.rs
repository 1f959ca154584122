//! Proximal operators of convex functions on distributed vectors (PyLops-MPI 0.8's `MPIL2`,
//! `MPIL21` and the separable operators it wraps from PyProximal, `L1`), and the caller's own
//! as local callbacks, and `MPIL2` with an operator ([`super::prox_op`], whose entry points are
//! collective). Each is a function f with f(x) (reduced over the ranks), prox_{tau f}(x),
//! the dual prox_{tau f*}(x) and, where f is smooth, its gradient.
//!
//! Entries are processed element by element on this rank's part (host-addressable vectors); the
//! values of f are summed over the ranks in one reduction that also carries a failure of one rank.

use std::sync::Arc;

use crate::comm::ReduceOp;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// A proximal operator's local part given by the caller: each entry point works on this rank's
/// entries only (a separable function, as PyLops-MPI's `MPIProxOperator` wraps PyProximal's).
pub trait LocalProx<T: Scalar>: Send + Sync {
    /// y = prox_{tau f}(x) on this rank's entries.
    fn prox(&self, tau: f64, x: &[T], y: &mut [T]) -> Result<()>;
    /// y = prox_{tau f*}(x); `None`: not given (the Moreau identity is used).
    fn proxdual(&self, tau: f64, x: &[T], y: &mut [T]) -> Option<Result<()>>;
    /// This rank's share of f(x) (summed over the ranks); `None`: not given.
    fn value(&self, x: &[T]) -> Option<Result<f64>>;
    /// g = grad f(x) on this rank's entries; `None`: not given.
    fn grad(&self, x: &[T], g: &mut [T]) -> Option<Result<()>>;
}

/// Which function.
pub enum ProxKind<T: Scalar> {
    /// sigma ||x||_1 (PyProximal's L1 with g = 0).
    L1 { sigma: f64 },
    /// sigma/2 ||x - b||^2 + alpha q^H x (b, q optional: PyLops-MPI's MPIL2 without an operator).
    L2 {
        sigma: f64,
        alpha: f64,
        qgrad: bool,
        b: Option<DistVector<T>>,
        q: Option<DistVector<T>>,
    },
    /// sigma sum_i sqrt(sum_k |x_{k,i}|^2): each rank's entries are `ndim` blocks of equal length
    /// (the layout of `parlops_op_gradient`'s output, PyLops-MPI's stacked arrays).
    L21 { ndim: usize, sigma: f64 },
    /// The caller's callbacks.
    Local(Arc<dyn LocalProx<T>>),
    /// sigma/2 ||Op x - b||^2 + alpha q^H x (PyLops-MPI's MPIL2 with an operator): collective.
    L2Op(Box<super::prox_op::L2Op<T>>),
}

/// A proximal operator on vectors of one layout.
pub struct Prox<T: Scalar> {
    layout: Arc<Layout>,
    kind: ProxKind<T>,
}

fn host<'a, T: Scalar>(v: &'a DistVector<T>, what: &str) -> Result<&'a [T]> {
    v.host_slice().ok_or_else(|| {
        Error::new(
            ErrorKind::NotSupported,
            format!("{what} is in device memory: proximal operators take host vectors"),
        )
    })
}

fn host_mut<'a, T: Scalar>(v: &'a mut DistVector<T>, what: &str) -> Result<&'a mut [T]> {
    v.host_slice_mut().ok_or_else(|| {
        Error::new(
            ErrorKind::NotSupported,
            format!("{what} is in device memory: proximal operators take host vectors"),
        )
    })
}

/// PyProximal's soft threshold: max(|v| - t, 0) times the sign (the phase for complex entries).
fn soft<T: Scalar>(v: T, t: f64) -> T {
    let a = v.abs_f64();
    if a.is_nan() {
        // f64::max would take 0 over NaN and hide it: NaN stays NaN (as NumPy's maximum)
        return v;
    }
    let m = (a - t).max(0.0);
    if m == 0.0 || a == 0.0 {
        return T::zero();
    }
    let (re, im) = v.to_parts();
    if im == 0.0 && T::PARTS == 1 {
        return T::real(m * re.signum());
    }
    T::from_parts_lossy(m * (re / a), m * (im / a))
}

fn positive(v: f64, what: &str) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        crate::bail!(
            InvalidArgument,
            "{what} is {v}; it must be positive and finite"
        );
    }
    Ok(())
}

impl<T: Scalar> Prox<T> {
    /// A proximal operator on vectors of `layout`; checks the parameters and that b and q (L2)
    /// have that layout, and that every rank's length is a multiple of ndim (L21). [local]
    pub fn new(layout: Arc<Layout>, kind: ProxKind<T>) -> Result<Self> {
        match &kind {
            ProxKind::L1 { sigma } => positive(*sigma, "sigma")?,
            ProxKind::L2 {
                sigma, alpha, b, q, ..
            } => {
                positive(*sigma, "sigma")?;
                if !alpha.is_finite() {
                    crate::bail!(InvalidArgument, "alpha is {alpha}; it must be finite");
                }
                for (v, n) in [(b, "b"), (q, "q")] {
                    if let Some(v) = v {
                        layout.check_compatible(v.layout(), "the layout", n)?;
                        host(v, n)?;
                    }
                }
            }
            ProxKind::L21 { ndim, sigma } => {
                positive(*sigma, "sigma")?;
                if *ndim == 0 {
                    crate::bail!(InvalidArgument, "ndim is 0; it must be at least 1");
                }
                let n = layout.local_len() as usize;
                if !n.is_multiple_of(*ndim) {
                    crate::bail!(
                        InvalidArgument,
                        "ndim is {ndim} and this rank holds {n} entries: each rank's entries must \
                         be ndim blocks of equal length"
                    );
                }
            }
            ProxKind::Local(_) => {}
            ProxKind::L2Op(l) => {
                layout.check_compatible(l.op.cols(), "the layout", "the operator's columns")?
            }
        }
        Ok(Prox { layout, kind })
    }

    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }

    pub fn kind(&self) -> &ProxKind<T> {
        &self.kind
    }

    /// Has the function a gradient here?
    pub fn has_grad(&self) -> bool {
        matches!(
            &self.kind,
            ProxKind::L2 { .. } | ProxKind::Local(_) | ProxKind::L2Op(_)
        )
    }

    fn check(&self, v: &DistVector<T>, what: &str) -> Result<()> {
        self.layout
            .check_compatible(v.layout(), "the proximal operator's layout", what)
    }

    /// f(x), the same on every rank (one reduction); `pending` carries an earlier failure of this
    /// rank into it. [collective]
    pub fn value(&self, x: &DistVector<T>, pending: Result<()>) -> Result<f64> {
        if let ProxKind::L2Op(l) = &self.kind {
            return l.value(x, pending);
        }
        let local = pending
            .and_then(|_| self.check(x, "x"))
            .and_then(|_| self.local_value(x));
        let comm = self.layout.comm();
        Ok(comm.allreduce_checked(local.map(|v| vec![v]), 1, ReduceOp::Sum)?[0])
    }

    /// This rank's share of f(x) (a replicated vector counts once, on rank 0).
    fn local_value(&self, x: &DistVector<T>) -> Result<f64> {
        let xs = host(x, "x")?;
        if self.layout.partition().is_replicated() && self.layout.comm().rank() != 0 {
            // the callbacks still run, as on rank 0, and their failure counts
            if let ProxKind::Local(l) = &self.kind {
                l.value(xs).transpose()?;
            }
            return Ok(0.0);
        }
        Ok(match &self.kind {
            ProxKind::L1 { sigma } => sigma * xs.iter().map(|v| v.abs_f64()).sum::<f64>(),
            ProxKind::L21 { ndim, sigma } => {
                let m = xs.len() / ndim;
                let mut s = 0.0;
                for i in 0..m {
                    let mut a = 0.0;
                    for k in 0..*ndim {
                        a += xs[k * m + i].abs2_f64();
                    }
                    s += a.sqrt();
                }
                sigma * s
            }
            ProxKind::L2 {
                sigma, alpha, b, q, ..
            } => {
                // (sigma / 2) ||x - b||^2 + alpha Re(q^H x)
                let bs = b.as_ref().map(|b| host(b, "b")).transpose()?;
                let qs = q.as_ref().map(|q| host(q, "q")).transpose()?;
                let (mut ss, mut qx) = (0.0, 0.0);
                for (i, x) in xs.iter().enumerate() {
                    let d = match bs {
                        Some(bs) => *x - bs[i],
                        None => *x,
                    };
                    ss += d.abs2_f64();
                    if let Some(qs) = qs {
                        qx += (qs[i].conj() * *x).to_parts().0;
                    }
                }
                sigma / 2.0 * ss + alpha * qx
            }
            ProxKind::Local(l) => match l.value(xs) {
                Some(r) => r?,
                None => crate::bail!(
                    NotSupported,
                    "the proximal operator's callbacks give no value of the function"
                ),
            },
            ProxKind::L2Op(_) => crate::bail!(Internal, "the operator's L2 has no local value"),
        })
    }

    /// y = prox_{tau f}(x) (y may not be x). [local; collective for `L2Op`, which solves with Op]
    pub fn prox(&self, tau: f64, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        positive(tau, "tau")?;
        self.check(x, "x")?;
        self.check(y, "y")?;
        if let ProxKind::L2Op(l) = &self.kind {
            return l.prox(tau, x, y);
        }
        let xs = host(x, "x")?;
        let ys = host_mut(y, "y")?;
        match &self.kind {
            ProxKind::L1 { sigma } => {
                let t = tau * sigma;
                for (y, x) in ys.iter_mut().zip(xs) {
                    *y = soft(*x, t);
                }
            }
            ProxKind::L2 {
                sigma, alpha, b, q, ..
            } => {
                // PyLops-MPI's order: (x + (tau sigma) b - (tau alpha) q) (1 / (1 + tau sigma))
                let ts = tau * sigma;
                let ta = T::real(tau * alpha);
                let c = T::real(1.0 / (1.0 + ts));
                let bs = b.as_ref().map(|b| host(b, "b")).transpose()?;
                let qs = q.as_ref().map(|q| host(q, "q")).transpose()?;
                for (i, (y, x)) in ys.iter_mut().zip(xs).enumerate() {
                    let mut v = *x;
                    if let Some(bs) = bs {
                        v += T::real(ts) * bs[i];
                    }
                    if let Some(qs) = qs {
                        v = v - ta * qs[i];
                    }
                    *y = c * v;
                }
            }
            ProxKind::L21 { ndim, sigma } => {
                let ts = tau * sigma;
                l21_scale(xs, ys, *ndim, |n| 1.0 - ts / nan_max(n, ts));
            }
            ProxKind::Local(l) => l.prox(tau, xs, ys)?,
            ProxKind::L2Op(_) => crate::bail!(Internal, "the operator's L2 is handled above"),
        }
        Ok(())
    }

    /// y = prox_{tau f*}(x), f* the convex conjugate: closed forms for L1 (the projection on
    /// [-sigma, sigma], radial for complex entries) and L21 (sigma x / max(|x_i|, sigma)), the
    /// caller's callback where given, else the Moreau identity x - tau prox_{f/tau}(x / tau).
    /// [local; collective for `L2Op`]
    pub fn proxdual(&self, tau: f64, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        positive(tau, "tau")?;
        self.check(x, "x")?;
        self.check(y, "y")?;
        match &self.kind {
            ProxKind::L1 { sigma } => {
                let xs = host(x, "x")?;
                let ys = host_mut(y, "y")?;
                for (y, x) in ys.iter_mut().zip(xs) {
                    let a = x.abs_f64();
                    *y = if a > *sigma {
                        *x * T::real(sigma / a)
                    } else {
                        *x
                    };
                }
                return Ok(());
            }
            ProxKind::L21 { ndim, sigma } => {
                let xs = host(x, "x")?;
                let ys = host_mut(y, "y")?;
                let s = *sigma;
                l21_scale(xs, ys, *ndim, |n| s / nan_max(n, s));
                return Ok(());
            }
            ProxKind::Local(l) => {
                let xs = host(x, "x")?;
                let ys = host_mut(y, "y")?;
                if let Some(r) = l.proxdual(tau, xs, ys) {
                    return r;
                }
            }
            ProxKind::L2 { .. } | ProxKind::L2Op(_) => {}
        }
        // Moreau: prox_{tau f*}(x) = x - tau prox_{f / tau}(x / tau)
        let s = x.duplicate();
        let mut s = match &self.kind {
            // the prox below is collective: an allocation failing on one rank fails every rank
            ProxKind::L2Op(_) => self.layout.comm().agree(s)?,
            _ => s?,
        };
        s.copy_from(x)?;
        s.scale(T::real(1.0 / tau))?;
        self.prox(1.0 / tau, &s, y)?;
        y.axpby(T::one(), x, -T::real(tau))
    }

    /// g = grad f(x) (L2: sigma (x - b) + alpha q; L2Op: sigma Op^H (Op x - b) + alpha q; the
    /// caller's callback). [local; collective for `L2Op`]
    pub fn grad(&self, x: &DistVector<T>, g: &mut DistVector<T>) -> Result<()> {
        self.check(x, "x")?;
        self.check(g, "g")?;
        match &self.kind {
            ProxKind::L2 {
                sigma,
                alpha,
                qgrad,
                b,
                q,
            } => {
                g.copy_from(x)?;
                if let Some(b) = b {
                    g.axpy(-T::one(), b)?;
                }
                g.scale(T::real(*sigma))?;
                if let (Some(q), true) = (q, *qgrad) {
                    g.axpy(T::real(*alpha), q)?;
                }
                Ok(())
            }
            ProxKind::L2Op(l) => l.grad(x, g),
            ProxKind::Local(l) => {
                let xs = host(x, "x")?;
                let gs = host_mut(g, "g")?;
                match l.grad(xs, gs) {
                    Some(r) => r,
                    None => crate::bail!(
                        NotSupported,
                        "the proximal operator's callbacks give no gradient"
                    ),
                }
            }
            _ => crate::bail!(
                NotSupported,
                "the function has no gradient (L1 and L21 are not smooth)"
            ),
        }
    }
}

/// max(a, b) keeping a NaN (f64::max drops it; NumPy's maximum, which PyLops-MPI uses, keeps it).
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() { a } else { a.max(b) }
}

/// y_{k,i} = s(|x_{.,i}|) x_{k,i} over `ndim` blocks of this rank's entries.
fn l21_scale<T: Scalar>(xs: &[T], ys: &mut [T], ndim: usize, s: impl Fn(f64) -> f64) {
    let m = xs.len() / ndim;
    for i in 0..m {
        let mut a = 0.0;
        for k in 0..ndim {
            a += xs[k * m + i].abs2_f64();
        }
        let c = T::real(s(a.sqrt()));
        for k in 0..ndim {
            ys[k * m + i] = c * xs[k * m + i];
        }
    }
}
