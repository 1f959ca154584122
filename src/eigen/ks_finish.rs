//! The end of a Krylov-Schur run ([`super::krylov_schur`]): the wanted pairs from the locked ones
//! and the last projected problem, the eigenvectors, and the true-residual check that decides
//! whether the run converged (or asks for more cycles).

use super::krylov_schur::{Ctx, Eigs, Target, floor};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, fused, sum_partials};

pub(super) struct Finish<'a, T: Scalar> {
    pub(super) basis: &'a mut Vec<DistVector<T>>,
    pub(super) s: &'a [f64],
    pub(super) ncv: usize,
    pub(super) nlock: usize,
    pub(super) theta: &'a [f64],
    pub(super) y: &'a [f64],
    pub(super) order: &'a [usize],
    pub(super) est: &'a [f64],
    pub(super) m: usize,
    pub(super) nev: usize,
    pub(super) tol: f64,
    pub(super) tmax: f64,
    pub(super) converged: bool,
    /// A failed true-residual check asks for more cycles (Outcome::Retry) instead of ending.
    pub(super) retry: bool,
    pub(super) products: usize,
    pub(super) restarts: usize,
    pub(super) why: String,
}

/// How [`finish`] ended: the answer, or more cycles wanted (the estimates met the test but a true
/// residual did not: its ratio to what is allowed).
pub(super) enum Outcome {
    Done(Eigs),
    Retry(f64),
}

/// The wanted pairs from the locked ones and the last projected problem; on convergence, the
/// eigenvectors and the true-residual check.
pub(super) fn finish<T: Scalar>(
    cx: &Ctx<'_, T>,
    f: Finish<'_, T>,
    vecs: &mut [&mut DistVector<T>],
    (x, ax, bx): (&mut DistVector<T>, &mut DistVector<T>, &mut DistVector<T>),
) -> Result<Outcome> {
    let act = f.m - f.nlock;
    // candidates: (theta, relative estimate, Some(locked index) or None with the active index)
    let mut cand: Vec<(f64, f64, bool, usize)> = (0..f.nlock)
        .map(|i| (f.s[i * f.ncv + i], 0.0, true, i))
        .collect();
    for &i in f.order {
        cand.push((f.theta[i], f.est[i] / f.theta[i].abs(), false, i));
    }
    let thetas: Vec<f64> = cand.iter().map(|c| c.0).collect();
    let ord = match cx.target {
        // descending first, then the target's order
        Target::Largest => {
            let mut o: Vec<usize> = (0..thetas.len()).collect();
            o.sort_by(|&i, &j| thetas[j].total_cmp(&thetas[i]));
            o
        }
        Target::Smallest => {
            let mut o: Vec<usize> = (0..thetas.len()).collect();
            o.sort_by(|&i, &j| thetas[i].total_cmp(&thetas[j]));
            o
        }
        Target::Nearest(_) => {
            let mut o: Vec<usize> = (0..thetas.len()).collect();
            o.sort_by(|&i, &j| thetas[j].abs().total_cmp(&thetas[i].abs()));
            o
        }
    };
    let chosen: Vec<(f64, f64, bool, usize)> = ord.iter().take(f.nev).map(|&i| cand[i]).collect();
    let values: Vec<f64> = chosen.iter().map(|c| cx.lambda(c.0)).collect();
    let estimates: Vec<f64> = chosen.iter().map(|c| c.1).collect();
    let out = |converged: bool, residuals: Vec<f64>, why: String| Eigs {
        values: values.clone(),
        residuals,
        products: f.products,
        restarts: f.restarts,
        converged,
        why,
    };
    if chosen.len() < f.nev {
        return Ok(Outcome::Done(out(
            false,
            estimates.clone(),
            format!(
                "the basis holds {} pairs, fewer than n_ev = {}",
                chosen.len(),
                f.nev
            ),
        )));
    }
    if let Some(v) = values.iter().find(|v| !v.is_finite()) {
        crate::bail!(
            InvalidArgument,
            "an eigenvalue approximation is {v}: the operator inv maps the basis to zero or the problem is not Hermitian (positive definite B)"
        );
    }
    if !f.converged {
        return Ok(Outcome::Done(out(false, estimates, f.why)));
    }
    // the eigenvectors, each formed in turn, and their true residuals
    let mut residuals = Vec::with_capacity(f.nev);
    let mut bad = Vec::new();
    let mut worst: f64 = 0.0;
    for (q, c) in chosen.iter().enumerate() {
        x.fill(T::zero())?;
        if c.2 {
            x.copy_from(&f.basis[c.3])?;
        } else {
            let coef: Vec<T> = (0..act).map(|a| T::real(f.y[a * act + c.3])).collect();
            let refs: Vec<&DistVector<T>> = f.basis[f.nlock..f.m].iter().collect();
            crate::vector::multi::maxpy(x, &coef, &refs)?;
        }
        let lam = values[q];
        let lmax = match cx.target {
            Target::Nearest(_) => values.iter().fold(cx.ascale, |a, v| a.max(v.abs())),
            _ => f.tmax,
        };
        let (rel, ratio) = cx.check_pair(x, lam, lmax, f.tol, ax, bx)?;
        worst = worst.max(ratio);
        if ratio.is_nan() || ratio > 1.0 {
            bad.push((lam, rel));
        }
        residuals.push(rel);
    }
    if bad.is_empty() {
        // the eigenvectors again, now into the caller's vectors (untouched by a failed check)
        for (q, c) in chosen.iter().enumerate() {
            let Some(v) = vecs.get_mut(q) else {
                break;
            };
            if c.2 {
                v.copy_from(&f.basis[c.3])?;
            } else {
                v.fill(T::zero())?;
                let coef: Vec<T> = (0..act).map(|a| T::real(f.y[a * act + c.3])).collect();
                let refs: Vec<&DistVector<T>> = f.basis[f.nlock..f.m].iter().collect();
                crate::vector::multi::maxpy(v, &coef, &refs)?;
            }
        }
    }
    if !bad.is_empty() {
        if f.retry {
            return Ok(Outcome::Retry(worst));
        }
        return Ok(Outcome::Done(out(
            false,
            residuals,
            format!(
                "the estimates met tol but the true relative residuals of {bad:?} (eigenvalue, residual) do not (further cycles did not lower them, or max_products was reached): an inexact inv (solve it to a tighter tolerance than tol) or an operator that is not Hermitian"
            ),
        )));
    }
    Ok(Outcome::Done(out(true, residuals, String::new())))
}

impl<T: Scalar> Ctx<'_, T> {
    /// The true relative residual of the pair (lambda, x), ||A x - lambda B x|| / (|lambda| ||B x||)
    /// (||A x - lambda B x|| / ||B x|| when lambda = 0), and its ratio to what the test allows:
    /// tol |lambda| ||B x|| plus the rounding floor 100 eps (lmax ||B x|| + ||A x||), eps of the dtype, `lmax` the
    /// scale of A (the largest |Ritz value|; shift-and-invert: ||A r|| / ||B r|| for a random r or
    /// the largest |eigenvalue| found). [collective]
    pub(super) fn check_pair(
        &self,
        x: &DistVector<T>,
        lam: f64,
        lmax: f64,
        tol: f64,
        ax: &mut DistVector<T>,
        bx: &mut DistVector<T>,
    ) -> Result<(f64, f64)> {
        self.apply(self.p.a, x, ax, "the operator a")?;
        let axn = self.mnorm_plain(ax)?;
        let bxn = match self.p.b {
            Some(b) => {
                self.apply(b, x, bx, "the operator b")?;
                ax.axpy(T::real(-lam), bx)?;
                self.mnorm_plain(bx)?
            }
            None => {
                ax.axpy(T::real(-lam), x)?;
                self.mnorm_plain(x)?
            }
        };
        let rn = self.mnorm_plain(ax)?;
        let scale = if lam != 0.0 { lam.abs() * bxn } else { bxn };
        let allowed = tol * lam.abs() * bxn + floor::<T>() * (lmax * bxn + axn);
        Ok((
            rn / scale.max(f64::MIN_POSITIVE),
            rn / allowed.max(f64::MIN_POSITIVE),
        ))
    }

    /// The 2-norm of `v`. [collective]
    pub(super) fn mnorm_plain(&self, v: &DistVector<T>) -> Result<f64> {
        let local = fused::mdot(&[v], v);
        Ok(sum_partials::<T>(&self.comm, local, 1, v)?[0]
            .to_parts()
            .0
            .max(0.0)
            .sqrt())
    }
}
