//! Krylov-Schur (thick-restart Lanczos, SLEPc's default eigensolver) for Hermitian problems with a
//! basis of at most `ncv` vectors: the memory is bounded by the caller, however many products the
//! wanted pairs take. Each cycle extends the basis to `ncv` vectors by Lanczos steps with full
//! re-orthogonalisation (classical Gram-Schmidt, a second pass only where the first cancelled, as
//! DGKS), solves the projected problem once (O(ncv^3), next to the cycle's O(ncv^2 n)), keeps the
//! most wanted half of its Ritz vectors and the residual vector, and locks the leading converged
//! pairs (deflated: later cycles no longer touch them).
//!
//! Spectral transformations as SLEPc's ST: the operator OP the basis is built for and the inner
//! product M it is orthonormal in are
//!   - standard, A x = lambda x: OP = A, M = I;
//!   - generalized, A x = lambda B x with B Hermitian positive definite: OP = B^-1 A (`inv` applies
//!     B^-1), M = B;
//!   - shift-and-invert about sigma: OP = (A - sigma B)^-1 B (`inv` applies (A - sigma B)^-1; B = I
//!     when absent), M = B, and lambda = sigma + 1/theta: the eigenvalues nearest sigma are the
//!     largest |theta|, the fastest to converge.
//!
//! OP is M-Hermitian in every case, so the projected matrix V^H M OP V is Hermitian (it is formed
//! from every projection the orthogonalisation computes, not assumed tridiagonal). The stopping
//! test is the Ritz estimate |beta_m y_m| <= tol |theta| (plus a rounding floor, 100 eps times the
//! largest |Ritz value|; with shift-and-invert scaled to A's residuals); the answer is a
//! Rayleigh-Ritz step of A on the last basis, checked on the true residuals ||A x - lambda B x||
//! before success is reported (ks_finish.rs).

use super::dense::matrix;
use super::ks_finish::{Finish, Outcome, finish};
use super::tridiag::{pythag, symmetric_eig};
use super::{alloc, check_square};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::DistVector;
use crate::vector::random::Distribution;

/// The wanted part of the spectrum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The largest eigenvalues (returned descending).
    Largest,
    /// The smallest eigenvalues (returned ascending).
    Smallest,
    /// The eigenvalues nearest `sigma` by shift-and-invert (returned by increasing distance).
    Nearest(f64),
}

/// The problem: A, and B (None: the identity) with `inv`, which applies B^-1 (Largest, Smallest
/// with B) or (A - sigma B)^-1 (Nearest).
pub struct Problem<'a, T: Scalar> {
    pub a: &'a dyn LinearOperator<T>,
    pub b: Option<&'a dyn LinearOperator<T>>,
    pub inv: Option<&'a dyn LinearOperator<T>>,
}

/// A caller's monitor: called after each cycle with what it sees; true stops the run.
pub type Monitor<'a> = &'a mut dyn FnMut(&Progress<'_>) -> Result<bool>;

/// What the monitor sees after each cycle's projected problem.
pub struct Progress<'a> {
    /// Cycles finished before this one (restarts).
    pub restarts: usize,
    /// Products with OP so far.
    pub products: usize,
    /// Leading wanted pairs converged (locked ones included).
    pub converged: usize,
    /// The eigenvalue approximations, most wanted first (as many as the basis holds).
    pub values: &'a [f64],
    /// Their relative residual estimates |beta_m y_m| / |theta| (on OP's problem).
    pub estimates: &'a [f64],
}

/// What [`krylov_schur`] found.
#[derive(Clone, Debug)]
pub struct Eigs {
    /// The `nev` wanted eigenvalues (converged or not), in the target's order.
    pub values: Vec<f64>,
    /// Converged: the true relative residuals ||A x - lambda B x|| / (|lambda| ||B x||) (||A x||
    /// / ||B x|| when lambda = 0); otherwise the relative estimates reached.
    pub residuals: Vec<f64>,
    /// Products with OP.
    pub products: usize,
    /// Restarts made.
    pub restarts: usize,
    /// Did every wanted pair pass the test and the true-residual check?
    pub converged: bool,
    /// Why not, in words (empty when converged).
    pub why: String,
}

/// The machine epsilon of the scalar type's precision.
fn eps<T: Scalar>() -> f64 {
    if matches!(T::DTYPE, crate::DType::F32 | crate::DType::C64) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

/// The rounding floor of the tests: 100 eps of the scalar type (times the largest |Ritz value|).
pub(super) fn floor<T: Scalar>() -> f64 {
    100.0 * eps::<T>()
}

pub(super) struct Ctx<'a, T: Scalar> {
    pub(super) p: &'a Problem<'a, T>,
    pub(super) target: Target,
    /// Shift-and-invert: ||A r|| / ||B r|| for a random r, the scale of A for the rounding floor
    /// (the eigenvalues found are near sigma and say nothing of ||A||); 0 otherwise.
    pub(super) ascale: f64,
    pub(super) comm: std::sync::Arc<crate::comm::Comm>,
}

impl<T: Scalar> Ctx<'_, T> {
    pub(super) fn apply(
        &self,
        op: &dyn LinearOperator<T>,
        x: &DistVector<T>,
        y: &mut DistVector<T>,
        what: &str,
    ) -> Result<()> {
        let e = crate::error::catch_panic(what, || op.apply(x, y));
        self.comm.agree(e)
    }

    /// w = OP v (`t` is scratch). The last application's outcome on this rank is returned unagreed
    /// (the inner `Result`), for the caller to carry into its next reduction ([`Ctx::orth`]): one
    /// collective fewer per product; the earlier applications of a composed OP are agreed (the
    /// outer `Result`: every rank's alike).
    fn op(
        &self,
        v: &DistVector<T>,
        w: &mut DistVector<T>,
        t: &mut DistVector<T>,
    ) -> Result<Result<()>> {
        let last = |op: &dyn LinearOperator<T>, x: &DistVector<T>, y: &mut DistVector<T>, what| {
            crate::error::catch_panic(what, || op.apply(x, y))
        };
        match (self.target, self.p.b, self.p.inv) {
            (Target::Nearest(_), Some(b), Some(inv)) => {
                self.apply(b, v, t, "the operator b")?;
                Ok(last(inv, t, w, "the operator inv"))
            }
            (Target::Nearest(_), None, Some(inv)) => Ok(last(inv, v, w, "the operator inv")),
            (_, Some(_), Some(inv)) => {
                self.apply(self.p.a, v, t, "the operator a")?;
                Ok(last(inv, t, w, "the operator inv"))
            }
            _ => Ok(last(self.p.a, v, w, "the operator a")),
        }
    }

    /// lambda from a Ritz value of OP.
    pub(super) fn lambda(&self, theta: f64) -> f64 {
        match self.target {
            Target::Nearest(s) => s + 1.0 / theta,
            _ => theta,
        }
    }

    /// The wanted order of Ritz values `theta` (descending on entry).
    fn order(&self, theta: &[f64]) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..theta.len()).collect();
        match self.target {
            Target::Largest => {}
            Target::Smallest => idx.reverse(),
            Target::Nearest(_) => idx.sort_by(|&i, &j| theta[j].abs().total_cmp(&theta[i].abs())),
        }
        idx
    }

    /// Refuses an OP that is not M-Hermitian: `h` holds column j's projections <v_i, OP v_j>
    /// (i <= j), `known[i]` what OP's Hermitian transpose gives for them from the earlier columns
    /// (i < j; the locked ones, below `nlock`, left out), `anorm` the largest column norm so far.
    fn hermitian(
        &self,
        h: &[T],
        known: &[f64],
        nlock: usize,
        anorm: f64,
        products: usize,
    ) -> Result<()> {
        let j = known.len();
        let (dre, dim) = h[j].to_parts();
        let col = h.iter().fold(0.0f64, |a, v| {
            let (re, im) = v.to_parts();
            pythag(a, pythag(re, im))
        });
        let scale = anorm.max(col);
        let tol = 1e-3f64.max(1e4 * eps::<T>());
        let mut worst = (dim.abs(), j, dre, dim, dre);
        for (i, (v, &e)) in h.iter().zip(known).enumerate().skip(nlock) {
            let (re, im) = v.to_parts();
            let d = pythag(re - e, im);
            if d > worst.0 {
                worst = (d, i, re, im, e);
            }
        }
        let (d, i, re, im, e) = worst;
        if d > tol * scale {
            let (inner, name) = match (self.p.b.is_some(), self.target) {
                (_, Target::Nearest(_)) => (
                    " in the B inner product (B = I where b is NULL)",
                    "(A - sigma B)^-1 B through inv: a and b must be Hermitian and inv exact enough",
                ),
                (true, _) => (
                    " in the B inner product",
                    "B^-1 A through inv: a must be Hermitian and inv exact enough",
                ),
                (false, _) => ("", "a: it must be Hermitian"),
            };
            let v = if T::DTYPE.is_complex() {
                format!("{re:e} {im:+e}i")
            } else {
                format!("{re:e}")
            };
            crate::bail!(
                InvalidArgument,
                "OP is not Hermitian{inner} (OP = {name}): at product {products}, <v_{i}, OP v_{j}> = {v} where OP's Hermitian transpose gives {e:e}, a difference of {:.1e} of ||OP|| ~ {scale:e} (at most {tol:.0e})",
                d / scale
            );
        }
        Ok(())
    }
}

/// basis[lo + q] = sum_a basis[lo + a] y[a][cols[q]] for q < cols.len() (y: act x act, row-major,
/// act = m - lo): in place, chunk by chunk, for vectors in host memory; through `pool` (spare
/// vectors, kept for the next restart) otherwise.
fn combine<T: Scalar>(
    comm: &crate::comm::Comm,
    basis: &mut [DistVector<T>],
    lo: usize,
    m: usize,
    y: &[f64],
    cols: &[usize],
    pool: &mut Vec<DistVector<T>>,
) -> Result<()> {
    let act = m - lo;
    let p = cols.len();
    let host = basis[lo..m].iter().all(|v| v.host_addressable());
    if host {
        for v in &basis[lo..m] {
            v.sync()?;
        }
        // the kept coordinates, one row per output vector
        let mut yq = matrix(p, act, 0.0, "the restart's coordinates")?;
        for (q, &col) in cols.iter().enumerate() {
            for a in 0..act {
                yq[q * act + a] = y[a * act + col];
            }
        }
        let mut vs: Vec<&mut [T]> = basis[lo..m].iter_mut().map(|v| v.local_mut()).collect();
        super::rotate::rotate_in_place(&mut vs, &yq, p)?;
        return Ok(());
    }
    if pool.len() < p {
        let more = alloc(comm, p - pool.len(), &basis[lo])?;
        pool.extend(more);
    }
    for (q, &col) in cols.iter().enumerate() {
        let c: Vec<T> = (0..act).map(|a| T::real(y[a * act + col])).collect();
        let refs: Vec<&DistVector<T>> = basis[lo..m].iter().collect();
        pool[q].fill(T::zero())?;
        crate::vector::multi::maxpy(&mut pool[q], &c, &refs)?;
    }
    for q in 0..p {
        std::mem::swap(&mut basis[lo + q], &mut pool[q]);
    }
    Ok(())
}

/// `nev` eigenpairs of the Hermitian problem `p` at `target` from the start vector `v0`, with a
/// basis of at most `ncv` vectors (nev < ncv <= n, or ncv = n), in at most `max_products` products
/// with OP, to the relative tolerance `tol`; the eigenvectors (M-normalised) go into `vecs` (0 or
/// nev vectors) when every pair converged. `monitor` (or None) is called after each cycle's
/// projected problem on every rank and returns true to stop (its outcomes reduced: one collective a
/// cycle, none without a monitor). [collective]
#[allow(clippy::too_many_arguments)]
pub fn krylov_schur<T: Scalar>(
    p: &Problem<'_, T>,
    target: Target,
    v0: &DistVector<T>,
    nev: usize,
    ncv: usize,
    max_products: usize,
    tol: f64,
    vecs: &mut [&mut DistVector<T>],
    mut monitor: Option<Monitor<'_>>,
) -> Result<Eigs> {
    let comm = v0.layout().comm().clone();
    let n = v0.layout().global_len() as usize;
    let pre = (|| {
        check_square(p.a, v0.layout(), "a")?;
        if let Some(b) = p.b {
            check_square(b, v0.layout(), "b")?;
        }
        if let Some(inv) = p.inv {
            check_square(inv, v0.layout(), "inv")?;
        }
        match target {
            Target::Nearest(s) => {
                if !s.is_finite() {
                    crate::bail!(InvalidArgument, "sigma = {s}: the shift must be finite");
                }
                if p.inv.is_none() {
                    crate::bail!(
                        InvalidArgument,
                        "inv is NULL: the eigenvalues nearest sigma need inv applying (A - sigma B)^-1 (parlops_op_create_inverse of a solver for it)"
                    );
                }
            }
            _ => match (p.b.is_some(), p.inv.is_some()) {
                (true, false) => crate::bail!(
                    InvalidArgument,
                    "b is given without inv: the generalized problem needs inv applying B^-1"
                ),
                (false, true) => crate::bail!(
                    InvalidArgument,
                    "inv is given without b: for the largest or smallest eigenvalues inv applies B^-1 (give b, or NULL for both)"
                ),
                _ => {}
            },
        }
        if nev == 0 || nev > n {
            crate::bail!(
                InvalidArgument,
                "n_ev = {nev}: 1 <= n_ev <= {n} (the operator's size)"
            );
        }
        if ncv > n || (ncv <= nev && ncv != n) {
            crate::bail!(
                InvalidArgument,
                "ncv = {ncv}: the basis size must exceed n_ev = {nev} and be at most {n} (the operator's size), or equal it (SLEPc's default is max(2 n_ev, n_ev + 15))"
            );
        }
        if max_products == 0 {
            crate::bail!(InvalidArgument, "max_products = 0: it must be >= 1");
        }
        if !(tol > 0.0 && tol < 1.0) {
            crate::bail!(InvalidArgument, "tol = {tol}: 0 < tol < 1");
        }
        if !vecs.is_empty() && vecs.len() != nev {
            crate::bail!(
                InvalidArgument,
                "{} vectors for n_ev = {nev} eigenvectors (give 0 or n_ev)",
                vecs.len()
            );
        }
        for v in vecs.iter() {
            v.layout()
                .check_compatible(v0.layout(), "an eigenvector", "v0")?;
            v0.check_location(v, "an eigenvector", "v0")?;
        }
        Ok(())
    })();
    comm.agree(pre)?;
    let mut cx = Ctx {
        p,
        target,
        ascale: 0.0,
        comm: comm.clone(),
    };
    // the basis (ncv + 1 vectors at most, allocated as it grows), w = OP v, and two scratch vectors
    let mut basis = alloc(&comm, 1, v0)?;
    let mut work = alloc(&comm, 3, v0)?;
    let (mut w, mut z, mut t) = {
        let t = work.pop().expect("3 vectors");
        let z = work.pop().expect("3 vectors");
        (work.pop().expect("3 vectors"), z, t)
    };
    basis[0].copy_from(v0)?;
    let n0 = cx.mnorm(&basis[0], &mut z)?.sqrt();
    if !(n0 > 0.0 && n0.is_finite()) {
        crate::bail!(
            InvalidArgument,
            "the start vector's {} is {n0}: it must be finite and nonzero",
            if p.b.is_some() { "B-norm" } else { "norm" }
        );
    }
    basis[0].scale(T::real(1.0 / n0))?;
    if let Target::Nearest(_) = target {
        w.set_random(Distribution::Gaussian, 0xA5CA1E)?;
        cx.apply(p.a, &w, &mut t, "the operator a")?;
        let an = cx.mnorm_plain(&t)?;
        let bn = match p.b {
            Some(b) => {
                cx.apply(b, &w, &mut z, "the operator b")?;
                cx.mnorm_plain(&z)?
            }
            None => cx.mnorm_plain(&w)?,
        };
        cx.ascale = an / bn.max(f64::MIN_POSITIVE);
        if !cx.ascale.is_finite() {
            crate::bail!(
                InvalidArgument,
                "the operator a produced a value that is not finite (||A r|| = {an} for a random r)"
            );
        }
    }
    let cx = cx;
    let mut s = matrix(ncv, ncv, 0.0f64, "the projected matrix")?;
    let mut pool: Vec<DistVector<T>> = Vec::new();
    let (mut k, mut nlock, mut products, mut restarts) = (0usize, 0usize, 0usize, 0usize);
    let mut anorm: f64 = 0.0;
    let mut seed = 0x5EED_u64;
    // the estimates' test is tightened where a true residual failed it (the estimates measure OP's
    // residual in the M-norm); two checks in a row that do not halve the worst failure end the run
    let (mut factor, mut last_worst, mut stalls) = (1.0f64, f64::INFINITY, 0usize);
    // OP is M-Hermitian, so each new column's projections <v_i, OP v_j> (i < j) are known from the
    // earlier ones: the b of the relation that made v_j after v_{j-1}, the restart's arrow for the
    // first column after it, zero elsewhere; the locked vectors are left out (their residuals may
    // be up to tol). A difference of more than 1e-3 of ||OP|| is an operator that is not Hermitian:
    // refused (on every rank: the projections are reduced), as the run could never converge.
    let mut known = vec![0.0f64; ncv + 1];
    // a local failure not yet agreed (the last restart's rotation)
    let mut carried: Result<()> = Ok(());
    loop {
        let mut m = k;
        let mut beta = 0.0;
        while m < ncv && products < max_products {
            let j = m;
            let made = cx.op(&basis[j], &mut w, &mut t)?;
            products += 1;
            let made = made.and(std::mem::replace(&mut carried, Ok(())));
            let (h, bj) = cx.orth(&basis[..=j], &mut w, &mut z, made)?;
            cx.hermitian(&h, &known[..j], nlock, anorm, products)?;
            known.iter_mut().for_each(|x| *x = 0.0);
            let mut col2 = 0.0;
            for (i, hv) in h.iter().enumerate() {
                let re = hv.to_parts().0;
                s[i * ncv + j] = re;
                s[j * ncv + i] = re;
                col2 += re * re;
            }
            if !bj.is_finite() || !col2.is_finite() {
                crate::bail!(
                    InvalidArgument,
                    "the operator produced a value that is not finite at product {products} (or the squared norms of its products overflow: entries beyond about 1e150 in magnitude; scale the operator)"
                );
            }
            anorm = anorm.max((col2 + bj * bj).sqrt());
            m = j + 1;
            if basis.len() <= m {
                basis.extend(alloc(&comm, 1, v0)?);
            }
            if bj > 1e-12 * anorm {
                beta = bj;
                known[j] = bj;
                std::mem::swap(&mut basis[m], &mut w);
                basis[m].scale(T::real(1.0 / bj))?;
                continue;
            }
            // an invariant subspace: the relation closes (beta = 0); go on from a random vector
            // orthogonal to the basis, unless the basis is full or spans the space
            beta = 0.0;
            if m == ncv || m == n {
                break;
            }
            let mut fresh = 0.0;
            for _ in 0..3 {
                seed = seed.wrapping_add(0x9E37_79B9);
                w.set_random(Distribution::Gaussian, seed)?;
                let n1 = cx.mnorm(&w, &mut z)?.sqrt();
                let (_, n2) = cx.orth(&basis[..m], &mut w, &mut z, Ok(()))?;
                if n2 > 1e-8 * n1 {
                    fresh = n2;
                    break;
                }
            }
            if fresh == 0.0 {
                break;
            }
            std::mem::swap(&mut basis[m], &mut w);
            basis[m].scale(T::real(1.0 / fresh))?;
        }
        // the projected problem of the active (unlocked) block
        let act = m - nlock;
        // (its allocation agreed with the eigenproblem's outcome: a failure on one rank ends all)
        let (theta, y) = comm.agree(std::mem::replace(&mut carried, Ok(())).and_then(|_| {
            let mut sub = matrix(act, act, 0.0f64, "the projected matrix")?;
            for i in 0..act {
                for j in 0..act {
                    sub[i * act + j] = s[(nlock + i) * ncv + nlock + j];
                }
            }
            symmetric_eig(&sub, act)
        }))?;
        let order = cx.order(&theta);
        let tmax = theta
            .iter()
            .chain((0..nlock).map(|i| &s[i * ncv + i]))
            .fold(0.0f64, |a, v| a.max(v.abs()));
        let est: Vec<f64> = (0..act)
            .map(|i| (beta * y[(act - 1) * act + i]).abs())
            .collect();
        // each estimate relative to |lambda| and its test (with shift-and-invert scaled to A's
        // residuals: Ctx::test_estimates)
        let (rel, ok) = cx.test_estimates(
            &basis,
            m,
            beta,
            &est,
            &theta,
            factor * tol,
            tmax,
            (&mut w, &mut z),
        )?;
        let c = order.iter().take_while(|&&i| ok[i]).count();
        let conv = (nlock + c).min(nev);
        let done = nlock + c >= nev;
        // the monitor: locked pairs, then the active block, in wanted order
        let mut vals: Vec<f64> = (0..nlock).map(|i| cx.lambda(s[i * ncv + i])).collect();
        let mut ests: Vec<f64> = vec![0.0; nlock];
        for &i in &order {
            vals.push(cx.lambda(theta[i]));
            ests.push(rel[i]);
        }
        let stop = match monitor.as_mut() {
            Some(mon) => {
                let stop = crate::error::catch_panic("the monitor", || {
                    mon(&Progress {
                        restarts,
                        products,
                        converged: conv,
                        values: &vals,
                        estimates: &ests,
                    })
                });
                let stop = stop.map(|b| vec![b as u8 as f64]);
                comm.allreduce_checked(stop, 1, ReduceOp::Max)?[0] > 0.0
            }
            // (no caller's code ran: nothing to agree on)
            None => false,
        };
        let exhausted = products >= max_products || (act > 0 && m < ncv && beta == 0.0);
        if done || stop || exhausted {
            let outcome = finish(
                &cx,
                Finish {
                    basis: &mut basis,
                    s: &s,
                    ncv,
                    nlock,
                    theta: &theta,
                    y: &y,
                    order: &order,
                    rel: &rel,
                    m,
                    nev,
                    tol,
                    tmax,
                    converged: done,
                    retry: done && m == ncv && beta > 0.0 && products < max_products && stalls < 2,
                    products,
                    restarts,
                    why: if done {
                        String::new()
                    } else if stop {
                        "stopped by the monitor".into()
                    } else {
                        format!("{products} products (max_products) made")
                    },
                },
                vecs,
                (&mut w, &mut z, &mut t),
            )?;
            match outcome {
                Outcome::Done(e) => return Ok(e),
                Outcome::Retry(worst) => {
                    if worst > 0.5 * last_worst {
                        stalls += 1;
                    }
                    last_worst = worst;
                    factor *= (0.5 / worst).min(0.5);
                }
            }
        }
        // restart: lock the leading converged pairs, keep the most wanted half of the rest
        let keep = (act / 2).max(nev - nlock).max(c + 1).min(act - 1);
        let cols: Vec<usize> = order[..keep].to_vec();
        // the rotation's outcome here (its scratch, or a device vector's pass, may fail on one
        // rank) is carried into the next reduction that can take it: the next product's
        // projections, or the next projected problem's agreement. Until then every rank makes the
        // same collectives (the locking checks below decide on reduced values)
        carried = combine(&comm, &mut basis, nlock, m, &y, &cols, &mut pool);
        // the residual vector (basis[m]: beta > 0 here, as beta = 0 converges every active pair)
        // follows the kept ones
        basis.swap(nlock + keep, m);
        for i in nlock..ncv {
            for j in 0..ncv {
                s[i * ncv + j] = 0.0;
                s[j * ncv + i] = 0.0;
            }
        }
        for (q, &col) in cols.iter().enumerate() {
            s[(nlock + q) * ncv + nlock + q] = theta[col];
            // OP u_q = theta_q u_q + beta y_q[last] v (the arrow)
            known[nlock + q] = beta * y[(act - 1) * act + col];
        }
        // lock the leading pairs whose estimates met the test once their true residuals do too
        // (the kept vectors are the Ritz vectors now)
        let lmax = match target {
            Target::Nearest(_) => vals.iter().fold(cx.ascale, |a, v| a.max(v.abs())),
            _ => tmax,
        };
        let mut locked = 0;
        for (q, &col) in cols.iter().enumerate().take(c) {
            let (_, ratio) = cx.check_pair(
                &basis[nlock + q],
                cx.lambda(theta[col]),
                lmax,
                tol,
                &mut z,
                &mut t,
            )?;
            if ratio.is_nan() || ratio > 1.0 {
                factor *= (0.5 / ratio).min(0.5);
                break;
            }
            locked += 1;
        }
        k = nlock + keep;
        nlock += locked;
        restarts += 1;
    }
}
