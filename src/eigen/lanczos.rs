//! Lanczos for the extreme eigenpairs of a Hermitian operator: the Krylov basis of a start vector
//! with full re-orthogonalisation (classical Gram-Schmidt twice against every basis vector: the
//! Ritz values do not repeat, and the basis stays orthonormal to rounding), the Ritz pairs of the
//! tridiagonal matrix, and the residual bound |beta_j s_j| of each wanted pair as the stopping test.
//! The tests take the tridiagonal matrix's eigenvalues and its eigenvectors' last components
//! (implicit QL, O(m^2): `tridiag.rs`); its whole eigenvector matrix is formed once, at the end.

use super::tridiag::tridiag_eig;
use super::{alloc, check_square};
use crate::error::Result;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::DistVector;
use crate::vector::multi::{block_dot, maxpy};
use crate::vector::random::Distribution;

/// Which end of the spectrum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Largest,
    Smallest,
}

/// What [`lanczos`] found.
#[derive(Clone, Debug)]
pub struct Ritz {
    /// The wanted Ritz values: descending (largest) or ascending (smallest).
    pub values: Vec<f64>,
    /// Their residual norms ||A v - theta v|| (= |beta_j s_j|).
    pub residuals: Vec<f64>,
    /// Lanczos steps taken (products with A).
    pub steps: usize,
    /// Did every wanted pair meet residual <= tol max(|theta|)?
    pub converged: bool,
}

/// `nev` extreme eigenvalues of the Hermitian `a` from the start vector `v0` in at most `max_steps`
/// steps (one product with A each), stopping once each wanted residual is at most `tol` times the
/// largest |Ritz value|; the Ritz vectors go into `vecs` (0 or nev vectors of A's layout; left as
/// they were when the pairs did not converge). [collective]
pub fn lanczos<T: Scalar>(
    a: &dyn LinearOperator<T>,
    v0: &DistVector<T>,
    max_steps: usize,
    tol: f64,
    nev: usize,
    which: Which,
    vecs: &mut [&mut DistVector<T>],
) -> Result<Ritz> {
    let comm = v0.layout().comm().clone();
    let n = v0.layout().global_len() as usize;
    let pre = (|| {
        check_square(a, v0.layout(), "A")?;
        if nev == 0 || nev > n {
            crate::bail!(
                InvalidArgument,
                "n_ev = {nev}: 1 <= n_ev <= {n} (the operator's size)"
            );
        }
        if max_steps < nev || max_steps > n {
            crate::bail!(
                InvalidArgument,
                "max_steps = {max_steps}: n_ev = {nev} <= max_steps <= {n} (the operator's size)"
            );
        }
        if !(tol > 0.0 && tol < 1.0) {
            crate::bail!(InvalidArgument, "tol = {tol}: 0 < tol < 1");
        }
        if !vecs.is_empty() && vecs.len() != nev {
            crate::bail!(
                InvalidArgument,
                "{} vectors for n_ev = {nev} Ritz vectors (give 0 or n_ev)",
                vecs.len()
            );
        }
        for v in vecs.iter() {
            v.layout()
                .check_compatible(v0.layout(), "a Ritz vector", "v0")?;
            v0.check_location(v, "a Ritz vector", "v0")?;
        }
        Ok(())
    })();
    comm.agree(pre)?;
    let mut basis = alloc(&comm, 1, v0)?;
    basis[0].copy_from(v0)?;
    let nrm = block_dot(&[&basis[0]], &[&basis[0]], Ok(()))?[0]
        .to_parts()
        .0
        .sqrt();
    if !(nrm > 0.0 && nrm.is_finite()) {
        crate::bail!(
            InvalidArgument,
            "the start vector's norm is {nrm}: it must be finite and nonzero"
        );
    }
    basis[0].scale(T::real(1.0 / nrm))?;
    let (mut alpha, mut beta): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut w = alloc(&comm, 1, v0)?.remove(0);
    let mut anorm: f64 = 0.0;
    let mut last = None;
    // the first step of the current Krylov block (a restart where the space closed), and the
    // restarts' random seed
    let (mut block, mut seed) = (0usize, 0x1A2C_u64);
    for j in 0..max_steps {
        // (a failure of the product on one rank joins the first reduction, failing every rank)
        let mut made = crate::error::catch_panic("the operator", || a.apply(&basis[j], &mut w));
        // full re-orthogonalisation, twice: alpha_j is the projection on v_j
        let mut proj_j = T::zero();
        for _ in 0..2 {
            let refs: Vec<&DistVector<T>> = basis.iter().collect();
            let h = block_dot(&refs, &[&w], std::mem::replace(&mut made, Ok(())))?;
            proj_j += h[j];
            let neg: Vec<T> = h.iter().map(|v| -*v).collect();
            maxpy(&mut w, &neg, &refs)?;
        }
        let aj = proj_j.to_parts().0;
        let bj = block_dot(&[&w], &[&w], Ok(()))?[0].to_parts().0.sqrt();
        if !aj.is_finite() || !bj.is_finite() {
            crate::bail!(
                InvalidArgument,
                "the operator produced a value that is not finite at Lanczos step {j} (or the squared norms of its products overflow: entries beyond about 1e150 in magnitude; scale the operator)"
            );
        }
        alpha.push(aj);
        beta.push(bj);
        anorm = anorm.max(aj.abs() + bj + beta.get(j.wrapping_sub(1)).copied().unwrap_or(0.0));
        let m = j + 1;
        let invariant = bj <= 1e-14 * anorm.max(f64::MIN_POSITIVE);
        // a test costs O(m^2) (next to the re-orthogonalisation's O(m n) per step): every step up
        // to 40, then every m/20-th
        let check =
            invariant || m == max_steps || (m >= nev && (m <= 40 || m % (m / 20).max(2) == 0));
        if check {
            let r = comm.agree(ritz(&alpha, &beta, nev, which, invariant, false))?;
            let scale = r.0.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            let mut done = r.1.iter().all(|res| *res <= tol * scale);
            if block > 0 && !invariant && done {
                // after a restart the block's own extreme Ritz values must have converged too:
                // before they have, its Ritz values still lie inside the spectrum, and the wanted
                // ones of T (the closed blocks' exact pairs) may leave out eigenvalues it will find
                let rb = comm.agree(ritz(
                    &alpha[block..],
                    &beta[block..],
                    nev.min(m - block),
                    which,
                    false,
                    false,
                ))?;
                done = rb.1.iter().all(|res| *res <= tol * scale);
            }
            last = Some((r, m));
            if done && !invariant {
                break;
            }
            if invariant {
                // The Krylov space closed below the operator's size: eigenvectors outside it (the
                // other copies of a multiple eigenvalue, which one start vector sees once) are
                // unseen, and any of them may be wanted (the 2 smallest of a rank-one matrix are
                // 0 and 0, not 0 and its nonzero eigenvalue). Go on from a random vector
                // orthogonal to the basis (beta_j = 0 closes the block in T), as Krylov-Schur does,
                // until the space or max_steps is exhausted.
                if m == n || m == max_steps {
                    break;
                }
                seed = seed.wrapping_add(0x9E37_79B9);
                let made = w.set_random(Distribution::Gaussian, seed);
                let refs: Vec<&DistVector<T>> = basis.iter().collect();
                let n1 = block_dot(&[&w], &[&w], made)?[0].to_parts().0.sqrt();
                for _ in 0..2 {
                    let h = block_dot(&refs, &[&w], Ok(()))?;
                    let neg: Vec<T> = h.iter().map(|v| -*v).collect();
                    maxpy(&mut w, &neg, &refs)?;
                }
                let n2 = block_dot(&[&w], &[&w], Ok(()))?[0].to_parts().0.sqrt();
                if !n2.is_finite() || !n1.is_finite() {
                    // (reduced: the same on every rank) not an answer from the closed space
                    crate::bail!(
                        Internal,
                        "Lanczos' restart vector has norm {n2} (from a random vector of norm {n1})"
                    );
                }
                if n2 <= 1e-8 * n1 {
                    // nothing orthogonal to the basis is left: the closed space is the whole one
                    break;
                }
                beta[j] = 0.0;
                let mut next = alloc(&comm, 1, v0)?.remove(0);
                std::mem::swap(&mut next, &mut w);
                next.scale(T::real(1.0 / n2))?;
                basis.push(next);
                block = m;
                continue;
            }
        }
        if m < max_steps {
            let mut next = alloc(&comm, 1, v0)?.remove(0);
            std::mem::swap(&mut next, &mut w);
            next.scale(T::real(1.0 / bj))?;
            basis.push(next);
        }
    }
    let Some(((values, residuals, _), steps)) = last else {
        crate::bail!(Internal, "Lanczos took no step");
    };
    if values.len() < nev {
        crate::bail!(
            InvalidArgument,
            "the Krylov space closed after {steps} steps, below n_ev = {nev} (v0 in an invariant subspace, and no vector orthogonal to it left): start from another vector, a random one"
        );
    }
    let converged = residuals
        .iter()
        .all(|r| *r <= tol * values.iter().fold(0.0f64, |s, v| s.max(v.abs())));
    let refs: Vec<&DistVector<T>> = basis.iter().take(steps).collect();
    let coords = if converged && !vecs.is_empty() {
        // the eigenvectors of the tridiagonal matrix, all their rows, once (the same QL sweeps:
        // the same values)
        let invariant = residuals.iter().all(|r| *r == 0.0);
        comm.agree(ritz(
            &alpha[..steps],
            &beta[..steps],
            nev,
            which,
            invariant,
            true,
        ))?
        .2
    } else {
        Vec::new()
    };
    for (i, v) in vecs.iter_mut().enumerate().filter(|_| converged) {
        v.fill(T::zero())?;
        let c: Vec<T> = coords[i].iter().map(|x| T::real(*x)).collect();
        maxpy(v, &c, &refs)?;
    }
    Ok(Ritz {
        values,
        residuals,
        steps,
        converged,
    })
}

/// The wanted Ritz values of the tridiagonal matrix (alpha, beta), their residual bounds and (with
/// `coords`) coordinates; an invariant subspace has exact Ritz pairs (residual 0).
type RitzParts = (Vec<f64>, Vec<f64>, Vec<Vec<f64>>);

fn ritz(
    alpha: &[f64],
    beta: &[f64],
    nev: usize,
    which: Which,
    invariant: bool,
    coords: bool,
) -> Result<RitzParts> {
    let m = alpha.len();
    // the last row of the eigenvector matrix for the bounds; every row for the coordinates
    let rows: Vec<usize> = if coords {
        (0..m).collect()
    } else {
        vec![m - 1]
    };
    let (vals, z) = tridiag_eig(alpha, &beta[..m - 1], &rows)?;
    let last = &z[rows.len() - 1];
    let take = nev.min(m);
    let idx: Vec<usize> = match which {
        Which::Largest => (0..take).collect(),
        Which::Smallest => (0..take).map(|i| m - 1 - i).collect(),
    };
    let bm = if invariant { 0.0 } else { beta[m - 1] };
    Ok((
        idx.iter().map(|&i| vals[i]).collect(),
        idx.iter().map(|&i| (bm * last[i]).abs()).collect(),
        if coords {
            idx.iter()
                .map(|&i| (0..m).map(|r| z[r][i]).collect())
                .collect()
        } else {
            Vec::new()
        },
    ))
}
