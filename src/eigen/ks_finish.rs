//! The end of a Krylov-Schur run ([`super::krylov_schur`]): the wanted pairs from the locked ones
//! and the last projected problem, the eigenvectors, and the true-residual check that decides
//! whether the run converged (or asks for more cycles).

use super::dense::matrix;
use super::krylov_schur::{Ctx, Eigs, Target, floor};
use super::tridiag::symmetric_eig;
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
    /// The active pairs' relative residual estimates.
    pub(super) rel: &'a [f64],
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
    // candidates: (theta, relative estimate, Some(locked index) or None with the active index)
    let mut cand: Vec<(f64, f64, bool, usize)> = (0..f.nlock)
        .map(|i| (f.s[i * f.ncv + i], 0.0, true, i))
        .collect();
    for &i in f.order {
        cand.push((f.theta[i], f.rel[i], false, i));
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
    let out = |values: &[f64], converged: bool, residuals: Vec<f64>, why: String| Eigs {
        values: values.to_vec(),
        residuals,
        products: f.products,
        restarts: f.restarts,
        converged,
        why,
    };
    if chosen.len() < f.nev {
        return Ok(Outcome::Done(out(
            &values,
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
        return Ok(Outcome::Done(out(&values, false, estimates, f.why)));
    }
    // the Ritz pairs' coefficients over the basis (a locked pair its basis vector, an active one
    // its column of y)
    let ritz_coef = || -> Vec<Vec<f64>> {
        let act = f.m - f.nlock;
        chosen
            .iter()
            .map(|c| {
                let mut v = vec![0.0; f.m];
                if c.2 {
                    v[c.3] = 1.0;
                } else {
                    for a in 0..act {
                        v[f.nlock + a] = f.y[a * act + c.3];
                    }
                }
                v
            })
            .collect()
    };
    // The projected matrix of OP is built up over the restarts and carries their rounding (the 4
    // smallest of MFEM's beam, condition 1e7, were 1.3e-8-1.9e-8 off at 3-4 ranks). The standard
    // problem (OP = A, no inverse) first takes the Ritz vectors as they are, each eigenvalue its
    // Rayleigh quotient x^H A x / x^H x (off by the squared residual over the gap, not by the
    // restarts' rounding): no product beyond the check's own. Elsewhere, and where that fails, a
    // Rayleigh-Ritz step of A itself on the whole basis (m products with A, none with inv): with
    // an inverse (an inner solve) the Krylov relation holds for OP only to the inner tolerance,
    // whose errors, amplified near the shift, left Ritz vectors with true residuals 30x above what
    // the basis gives (a 2-D Laplacian, GMRES + AMG inside to 1e-10). Extreme Ritz values of A are
    // never spurious; interior ones (shift-and-invert) may be, so there OP's own Ritz pairs are
    // checked too where A's fail.
    enum Try {
        Quotients,
        RayleighRitz,
        Ritz,
    }
    let tries = match (cx.target, cx.p.b.is_none() && cx.p.inv.is_none()) {
        (_, true) => vec![Try::Quotients, Try::RayleighRitz],
        (Target::Nearest(_), _) => vec![Try::RayleighRitz, Try::Ritz],
        _ => vec![Try::RayleighRitz],
    };
    // the first whose pairs all meet the rule, each eigenvector formed in turn
    // (worst ratio to the rule, values, residuals, the failing (eigenvalue, residual) pairs)
    type Failed = (f64, Vec<f64>, Vec<f64>, Vec<(f64, f64)>);
    let mut best: Option<Failed> = None;
    for t in tries {
        let (values, coef) = match t {
            Try::Quotients | Try::Ritz => (values.clone(), ritz_coef()),
            Try::RayleighRitz => cx.rayleigh_ritz(&f.basis[..f.m], f.nev, ax)?,
        };
        let quotients = matches!(t, Try::Quotients);
        let mut residuals = Vec::with_capacity(f.nev);
        let mut shown = Vec::with_capacity(f.nev);
        let mut bad = Vec::new();
        let mut worst: f64 = 0.0;
        let lmax = match cx.target {
            Target::Nearest(_) => values.iter().fold(cx.ascale, |a, v| a.max(v.abs())),
            _ => f.tmax,
        };
        for (q, lam) in values.iter().enumerate() {
            cx.form(x, &coef[q], &f.basis[..f.m])?;
            let (lam, rel, ratio) = if quotients {
                cx.quotient_pair(x, lmax, f.tol, ax)?
            } else {
                let (rel, ratio) = cx.check_pair(x, *lam, lmax, f.tol, ax, bx)?;
                (*lam, rel, ratio)
            };
            worst = worst.max(ratio);
            if ratio.is_nan() || ratio > 1.0 {
                bad.push((lam, rel));
            }
            residuals.push(rel);
            shown.push(lam);
        }
        if bad.is_empty() {
            // in the target's order: the pairs were chosen by the projected values, and Rayleigh
            // quotients of equal eigenvalues (a multiple one, 3 I) may come out in the other order
            // by rounding
            let mut perm: Vec<usize> = (0..shown.len()).collect();
            match cx.target {
                Target::Largest => perm.sort_by(|&i, &j| shown[j].total_cmp(&shown[i])),
                Target::Smallest => perm.sort_by(|&i, &j| shown[i].total_cmp(&shown[j])),
                Target::Nearest(s) => {
                    perm.sort_by(|&i, &j| (shown[i] - s).abs().total_cmp(&(shown[j] - s).abs()))
                }
            }
            // the eigenvectors again, now into the caller's vectors (untouched by a failed check)
            for (q, v) in vecs.iter_mut().enumerate().take(f.nev) {
                cx.form(v, &coef[perm[q]], &f.basis[..f.m])?;
            }
            let shown: Vec<f64> = perm.iter().map(|&i| shown[i]).collect();
            let residuals = perm.iter().map(|&i| residuals[i]).collect();
            return Ok(Outcome::Done(out(&shown, true, residuals, String::new())));
        }
        if best.as_ref().is_none_or(|b| worst < b.0) {
            best = Some((worst, shown, residuals, bad));
        }
    }
    let (worst, values, residuals, bad) = best.expect("one try at least");
    if f.retry {
        return Ok(Outcome::Retry(worst));
    }
    Ok(Outcome::Done(out(
        &values,
        false,
        residuals,
        format!(
            "the estimates met tol but the true relative residuals of {bad:?} (eigenvalue, residual) do not (further cycles did not lower them, or max_products was reached): an inexact inv (solve it to a tighter tolerance than tol) or an operator that is not Hermitian"
        ),
    )))
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
        let (axn, bxn, rn) = self.shifted(x, lam, ax, bx)?;
        Ok(rule::<T>(lam, axn, bxn, rn, lmax, tol))
    }

    /// The standard problem's pair (lambda, x) with lambda x's Rayleigh quotient x^H A x / x^H x:
    /// (lambda, the true relative residual, its ratio to what the test allows) as
    /// [`Ctx::check_pair`] gives them; A x - lambda x left in `ax`. Two reductions. [collective]
    fn quotient_pair(
        &self,
        x: &DistVector<T>,
        lmax: f64,
        tol: f64,
        ax: &mut DistVector<T>,
    ) -> Result<(f64, f64, f64)> {
        // (a product that failed on this rank fails every rank in the reduction after it)
        let made = crate::error::catch_panic("the operator a", || self.p.a.apply(x, ax));
        let local = made.and_then(|_| {
            let mut v = fused::mdot(&[x, &*ax], ax)?;
            v.extend(fused::mdot(&[x], x)?);
            Ok(v)
        });
        let r = sum_partials::<T>(&self.comm, local, 3, ax)?;
        let (xax, ax2, x2) = (r[0].to_parts().0, r[1].to_parts().0, r[2].to_parts().0);
        let lam = xax / x2;
        let local = ax
            .axpy(T::real(-lam), x)
            .and_then(|_| fused::mdot(&[&*ax], ax));
        let rn = plain_norm(sum_partials::<T>(&self.comm, local, 1, ax)?[0].to_parts().0);
        let (rel, ratio) = rule::<T>(lam, plain_norm(ax2), plain_norm(x2), rn, lmax, tol);
        Ok((lam, rel, ratio))
    }

    /// The estimates `est` (|beta y_m| of each active Ritz pair) relative to |lambda|, and whether
    /// each meets `tol` (plus the rounding floor, `tmax` the largest |Ritz value|). Shift-and-invert:
    /// a Ritz pair's true residual is (A - sigma B) times OP's residual (beta y_m v, v =
    /// basis[m] the residual vector) over theta, so the estimates are scaled by ||(A - sigma B) v|| /
    /// ||B v|| (one product with A, and B, a cycle) and tested against the true rule; OP's
    /// residual alone ranges over the whole ||A - sigma B|| / |lambda|. [collective]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn test_estimates(
        &self,
        basis: &[DistVector<T>],
        m: usize,
        beta: f64,
        est: &[f64],
        theta: &[f64],
        tol: f64,
        tmax: f64,
        (av, bv): (&mut DistVector<T>, &mut DistVector<T>),
    ) -> Result<(Vec<f64>, Vec<bool>)> {
        let gain = match self.target {
            Target::Nearest(sigma) if beta > 0.0 => {
                Some(self.shift_gain(&basis[m], sigma, av, bv)?)
            }
            _ => None,
        };
        Ok(est
            .iter()
            .zip(theta)
            .map(|(&e, &t)| match gain {
                Some(g) => {
                    let lam = self.lambda(t).abs();
                    let r = e * g / t.abs();
                    (
                        r / lam,
                        r <= tol * lam + floor::<T>() * (self.ascale.max(lam) + lam),
                    )
                }
                None => (e / t.abs(), e <= tol * t.abs() + floor::<T>() * tmax),
            })
            .unzip())
    }

    /// ||(A - sigma B) v|| / ||B v||: how much a shift-and-invert Ritz pair's true residual is OP's
    /// residual (along `v`, the residual vector) times |lambda - sigma|. `av`, `bv` are scratch.
    /// [collective]
    fn shift_gain(
        &self,
        v: &DistVector<T>,
        sigma: f64,
        av: &mut DistVector<T>,
        bv: &mut DistVector<T>,
    ) -> Result<f64> {
        let (_, bvn, rn) = self.shifted(v, sigma, av, bv)?;
        let g = rn / bvn.max(f64::MIN_POSITIVE);
        if !g.is_finite() {
            // the norms are reduced: every rank ends here together
            crate::bail!(
                InvalidArgument,
                "the operator a (or b) produced a value that is not finite on a basis vector"
            );
        }
        Ok(g)
    }

    /// (||A x||, ||B x||, ||A x - s B x||), A x - s B x left in `ax` (B = I when absent). [collective]
    fn shifted(
        &self,
        x: &DistVector<T>,
        s: f64,
        ax: &mut DistVector<T>,
        bx: &mut DistVector<T>,
    ) -> Result<(f64, f64, f64)> {
        // both products made on every rank (each is collective), their outcomes here carried into
        // the one reduction of the three norms, which fails every rank where one failed
        let made = crate::error::catch_panic("the operator a", || self.p.a.apply(x, ax));
        let made = match self.p.b {
            Some(b) => made.and(crate::error::catch_panic("the operator b", || {
                b.apply(x, bx)
            })),
            None => made,
        };
        let local = made.and_then(|_| {
            let mut n2 = fused::mdot(&[&*ax], ax)?;
            let bv: &DistVector<T> = if self.p.b.is_some() { bx } else { x };
            n2.extend(fused::mdot(&[bv], bv)?);
            ax.axpy(T::real(-s), bv)?;
            n2.extend(fused::mdot(&[&*ax], ax)?);
            Ok(n2)
        });
        let n2 = sum_partials::<T>(&self.comm, local, 3, ax)?;
        let f = |v: &T| plain_norm(v.to_parts().0);
        Ok((f(&n2[0]), f(&n2[1]), f(&n2[2])))
    }

    /// x = sum_i c_i basis_i over the nonzero c_i.
    fn form(&self, x: &mut DistVector<T>, c: &[f64], basis: &[DistVector<T>]) -> Result<()> {
        let (refs, cs): (Vec<&DistVector<T>>, Vec<T>) = basis
            .iter()
            .zip(c)
            .filter(|(_, c)| **c != 0.0)
            .map(|(v, c)| (v, T::real(*c)))
            .unzip();
        x.fill(T::zero())?;
        crate::vector::multi::maxpy(x, &cs, &refs)
    }

    /// Rayleigh-Ritz of A on the whole basis V (V^H B V = I): the `nev` most wanted eigenpairs of
    /// V^H A V as values and coefficients over `basis`, in the target's order. One product with A
    /// per basis vector, applied to the basis vectors themselves. [collective]
    fn rayleigh_ritz(
        &self,
        basis: &[DistVector<T>],
        nev: usize,
        av: &mut DistVector<T>,
    ) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
        let m = basis.len();
        let mut g = self
            .comm
            .agree(matrix(m, m, 0.0f64, "the Rayleigh-Ritz matrix"))?;
        for (i, v) in basis.iter().enumerate() {
            // (a product that failed on this rank fails every rank in the reduction after it)
            let made = crate::error::catch_panic("the operator a", || self.p.a.apply(v, av));
            let local = made.and_then(|_| fused::mdot(basis, av));
            let p = sum_partials::<T>(&self.comm, local, m, av)?;
            for (j, pj) in p.iter().enumerate() {
                g[j * m + i] = pj.to_parts().0;
            }
        }
        for i in 0..m {
            for j in 0..i {
                let h = 0.5 * (g[i * m + j] + g[j * m + i]);
                g[i * m + j] = h;
                g[j * m + i] = h;
            }
        }
        if g.iter().any(|v| !v.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "the operator a produced a value that is not finite on the basis"
            );
        }
        let (mu, z) = self.comm.agree(symmetric_eig(&g, m))?;
        let mut idx: Vec<usize> = (0..m).collect();
        match self.target {
            Target::Largest => {}
            Target::Smallest => idx.reverse(),
            Target::Nearest(s) => {
                idx.sort_by(|&a, &b| (mu[a] - s).abs().total_cmp(&(mu[b] - s).abs()))
            }
        }
        idx.truncate(nev);
        let values = idx.iter().map(|&c| mu[c]).collect();
        let coef = idx
            .iter()
            .map(|&c| (0..m).map(|q| z[q * m + c]).collect())
            .collect();
        Ok((values, coef))
    }

    /// The 2-norm of `v`, NaN when v holds NaN or Inf (f64::max would take a NaN square for 0,
    /// and a true-residual check would then pass a NaN residual). [collective]
    pub(super) fn mnorm_plain(&self, v: &DistVector<T>) -> Result<f64> {
        let local = fused::mdot(&[v], v);
        let n2 = sum_partials::<T>(&self.comm, local, 1, v)?[0].to_parts().0;
        Ok(plain_norm(n2))
    }
}

/// The pair's true relative residual rn / (|lambda| ||B x||) (rn / ||B x|| when lambda = 0) and its
/// ratio to what the test allows: tol |lambda| ||B x|| plus the rounding floor 100 eps (lmax ||B
/// x|| + ||A x||) (NaN where a norm is).
fn rule<T: Scalar>(lam: f64, axn: f64, bxn: f64, rn: f64, lmax: f64, tol: f64) -> (f64, f64) {
    let scale = if lam != 0.0 { lam.abs() * bxn } else { bxn };
    let allowed = tol * lam.abs() * bxn + floor::<T>() * (lmax * bxn + axn);
    (
        rn / scale.max(f64::MIN_POSITIVE),
        rn / allowed.max(f64::MIN_POSITIVE),
    )
}

/// sqrt of a reduced square norm, NaN where it is not finite.
fn plain_norm(n2: f64) -> f64 {
    if n2.is_finite() {
        n2.max(0.0).sqrt()
    } else {
        f64::NAN
    }
}
