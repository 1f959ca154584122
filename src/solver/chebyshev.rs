//! Chebyshev polynomial preconditioner and smoother (PETSc's PCCHEBYSHEV/KSPCHEBYSHEV as a
//! preconditioner, MFEM's OperatorChebyshevSmoother): Jacobi-scaled, of degree k,
//!
//!   M = p(D^{-1} A) D^{-1},   1 - x p(x) = T_k((theta - x) / delta) / T_k(theta / delta),
//!
//! with theta, delta the centre and half-width of the interval [lmin, lmax] of D^{-1} A's spectrum
//! that it damps. Applied by the Chebyshev iteration's three-term recurrence from a zero guess (Saad,
//! "Iterative Methods for Sparse Linear Systems", algorithm 12.1): k - 1 applications of A, k of
//! D^{-1}, and vector updates, all through the operator and vector interfaces, so in device memory
//! where A handles it. The bounds are given, or estimated: lmax = 1.2 and lmin = 0.3 times the
//! largest eigenvalue of D^{-1} A found by 10 power iterations (MFEM's OperatorChebyshevSmoother's
//! choice; PETSc's default interval is [0.1, 1.1] times it).

use crate::op::tree::SetupLog;
use std::sync::{Arc, RwLock};

use super::power::power_iteration;
use crate::error::Result;
use crate::op::basic::Diagonal;
use crate::op::compose::Product;
use crate::op::{LinearOperator, Op, Work};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// The Chebyshev preconditioner of a square operator with a diagonal.
pub struct Chebyshev<T: Scalar> {
    a: Op<T>,
    /// What is computed from A's values: D^-1 and the bounds (set again by a refresh).
    state: RwLock<Arc<State<T>>>,
    /// The bounds given (`None`: estimated at each set-up).
    given: Option<(f64, f64)>,
    log: SetupLog,
    degree: usize,
    r: Work<T>,
    d: Work<T>,
    z: Work<T>,
}

/// D^-1 (and its conjugate, for the adjoint) and the damped interval.
struct State<T: Scalar> {
    dinv: Arc<Diagonal<T>>,
    dinv_h: Diagonal<T>,
    lmin: f64,
    lmax: f64,
}

/// The largest degree accepted (each degree is one more operator apply per application).
pub const MAX_DEGREE: i64 = 1000;

impl<T: Scalar> Chebyshev<T> {
    /// Degree `degree` on `a`, damping `bounds` = (lmin, lmax) of D^{-1} A's spectrum, or estimated
    /// bounds when `None`. [collective]
    pub fn new(a: Op<T>, degree: i64, bounds: Option<(f64, f64)>) -> Result<Chebyshev<T>> {
        if !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "Chebyshev needs a square operator with equal row and column layouts; {} is {}x{}",
                a.describe(),
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        if !(1..=MAX_DEGREE).contains(&degree) {
            crate::bail!(
                InvalidArgument,
                "argument 'degree' is {degree}; it must be 1..={MAX_DEGREE}"
            );
        }
        if let Some((lo, hi)) = bounds
            && !(lo > 0.0 && hi > lo && hi.is_finite())
        {
            crate::bail!(
                InvalidArgument,
                "arguments 'lmin' and 'lmax' are {lo} and {hi}; they must satisfy 0 < lmin < lmax < inf (or lmax <= 0 to estimate both)"
            );
        }
        let state = Self::state(&a, bounds)?;
        let rows = a.rows().clone();
        let log = SetupLog::new(crate::op::tree::version(a.as_ref()));
        Ok(Chebyshev {
            r: Work::new(&rows)?,
            d: Work::new(&rows)?,
            z: Work::new(&rows)?,
            a,
            state: RwLock::new(Arc::new(state)),
            given: bounds,
            log,
            degree: degree as usize,
        })
    }

    /// D^-1 and the bounds, from A's current values. [collective]
    fn state(a: &Op<T>, bounds: Option<(f64, f64)>) -> Result<State<T>> {
        let comm = a.rows().comm().clone();
        // D^{-1} (a zero or non-finite diagonal entry fails on every rank, naming the row) and its
        // conjugate for the adjoint
        let dinv = super::inverse_diagonal(a.as_ref(), "Chebyshev")?;
        let dinv_h = comm.agree((|| {
            let mut h = dinv.duplicate()?;
            h.copy_from(&dinv)?;
            h.local_mut().iter_mut().for_each(|v| *v = v.conj());
            Ok(h)
        })())?;
        let dinv = Arc::new(comm.agree(Diagonal::new(&dinv))?);
        let dinv_h = comm.agree(Diagonal::new(&dinv_h))?;
        let (lmin, lmax) = match bounds {
            Some(b) => b,
            None => {
                let da = Product::new(dinv.clone() as Op<T>, a.clone())?;
                let (lam, _) = power_iteration(&da, 10, 1e-8, 12345, false)?;
                let lam = lam.to_parts().0;
                if !(lam > 0.0 && lam.is_finite()) {
                    crate::bail!(
                        InvalidArgument,
                        "Chebyshev: the largest eigenvalue of D^-1 A is estimated at {lam}; the operator must have a positive spectrum (give lmin and lmax otherwise)"
                    );
                }
                (0.3 * lam, 1.2 * lam)
            }
        };
        Ok(State {
            dinv,
            dinv_h,
            lmin,
            lmax,
        })
    }

    fn current(&self) -> Arc<State<T>> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The interval [lmin, lmax] of D^{-1} A's spectrum that is damped.
    pub fn bounds(&self) -> (f64, f64) {
        let s = self.current();
        (s.lmin, s.lmax)
    }

    /// y = p(D^{-1} A) D^{-1} b (or the adjoint, p(D^{-H} A^H) D^{-H} b). Every step runs on every
    /// rank whatever failed before on this one (A's applies may communicate), and the first error
    /// is returned at the end, for the caller to agree.
    fn run(&self, b: &DistVector<T>, y: &mut DistVector<T>, adjoint: bool) -> Result<()> {
        let st = self.current();
        let dinv: &dyn LinearOperator<T> = if adjoint { &st.dinv_h } else { &*st.dinv };
        let (theta, delta) = (0.5 * (st.lmax + st.lmin), 0.5 * (st.lmax - st.lmin));
        let sigma = theta / delta;
        let mut r = self.r.get_like(b)?;
        let mut d = self.d.get_like(b)?;
        let mut z = self.z.get_like(b)?;
        let mut e = r.copy_from(b);
        e = e.and(dinv.apply(&r, &mut d));
        e = e.and(d.scale(T::real(1.0 / theta)));
        e = e.and(y.copy_from(&d));
        let mut rho = 1.0 / sigma;
        for _ in 1..self.degree {
            e = e.and(if adjoint {
                self.a.apply_adjoint(&d, &mut z)
            } else {
                self.a.apply(&d, &mut z)
            });
            e = e.and(r.axpy(-T::one(), &z));
            let rho_new = 1.0 / (2.0 * sigma - rho);
            e = e.and(dinv.apply(&r, &mut z));
            e = e.and(d.axpby(T::real(2.0 * rho_new / delta), &z, T::real(rho_new * rho)));
            e = e.and(y.axpy(T::one(), &d));
            rho = rho_new;
        }
        e
    }
}

impl<T: Scalar> LinearOperator<T> for Chebyshev<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.a.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.a.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(x, y, false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(y, x, true)
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        let (lmin, lmax) = self.bounds();
        format!(
            "Chebyshev of degree {} on {} (D^-1 A's spectrum damped in [{lmin:.4e}, {lmax:.4e}])",
            self.degree,
            self.a.describe(),
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        vec![&self.a]
    }
    fn stale(&self) -> bool {
        self.log.stale(crate::op::tree::version(self.a.as_ref()))
    }
    /// D^-1 from A's new diagonal, and the bounds estimated again (given bounds are kept).
    fn refresh(&self, force: bool) -> Result<bool> {
        let version = crate::op::tree::version(self.a.as_ref());
        self.log.refresh(force, version, || {
            let st = Self::state(&self.a, self.given)?;
            *self.state.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(st);
            Ok(())
        })
    }
    fn setups(&self) -> u64 {
        self.log.count()
    }
}
