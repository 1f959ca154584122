//! Krylov-Schur and Lanczos on spectra that stress them, at 1-4 ranks with uneven splits: a full
//! basis on an operator with a large kernel (a projected matrix with a block of rounding noise),
//! eigenvalues equal to rounding (returned in the target's order), and Krylov spaces that close
//! below the operator's size (few distinct eigenvalues).

use super::eigen::dense_op;
use super::ks::{run, start};
use super::*;
use parlops::eigen::krylov_schur::{Problem, Target};

/// Q diag(lam) Q^H with Q from Gram-Schmidt on random columns (`known_spectrum`'s few reflections
/// leave a kernel's rounding noise too structured to show the QL failure below).
fn random_spectrum<T: Scalar>(n: usize, lam: &[f64], seed: u64) -> Vec<Vec<T>> {
    let mut st = seed;
    let mut rnd = || {
        st = st
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (st >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut q: Vec<Vec<T>> = (0..n)
        .map(|_| {
            (0..n)
                .map(|_| T::from_parts_lossy(rnd(), if T::PARTS == 2 { rnd() } else { 0.0 }))
                .collect()
        })
        .collect();
    for c in 0..n {
        let (done, rest) = q.split_at_mut(c);
        for qp in done.iter() {
            let d = qp
                .iter()
                .zip(&rest[0])
                .fold(T::zero(), |s, (x, y)| s + x.conj() * *y);
            for (y, x) in rest[0].iter_mut().zip(qp) {
                *y = *y - d * *x;
            }
        }
        let nn = (0..n)
            .map(|k| {
                let (re, im) = q[c][k].to_parts();
                re * re + im * im
            })
            .sum::<f64>()
            .sqrt();
        q[c].iter_mut()
            .for_each(|x| *x = *x * T::from_parts_lossy(1.0 / nn, 0.0));
    }
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    (0..n).fold(T::zero(), |s, c| {
                        s + q[c][i] * T::from_parts_lossy(lam[c], 0.0) * q[c][j].conj()
                    })
                })
                .collect()
        })
        .collect()
}

/// The dense matrix Q diag(lam) Q^H ([`random_spectrum`]), its operator on `l`, and `lam` sorted.
pub(crate) fn operator<T: Scalar>(
    l: &Arc<Layout>,
    lam: &[f64],
    seed: u64,
) -> (Vec<Vec<T>>, Op<T>, Vec<f64>) {
    let ad = random_spectrum::<T>(lam.len(), lam, seed);
    let a = dense_op(l, &ad);
    let mut sorted = lam.to_vec();
    sorted.sort_by(f64::total_cmp);
    (ad, a, sorted)
}

/// n eigenvalues, all 3 (3 I) or, `rank_one`, 5 once and 0 elsewhere.
fn few_distinct(n: usize, rank_one: bool) -> Vec<f64> {
    (0..n)
        .map(|i| match (rank_one, i) {
            (false, _) => 3.0,
            (true, 0) => 5.0,
            _ => 0.0,
        })
        .collect()
}

/// The largest absolute error of `values` against `want` and the largest ||A x - lambda x|| / ||x||
/// of the pairs with `vecs`, from the dense matrix (absolute: wanted zeros have no relative error).
fn errors<T: Scalar>(
    ad: &[Vec<T>],
    vecs: &[DistVector<T>],
    values: &[f64],
    want: &[f64],
) -> (f64, f64) {
    let err = values
        .iter()
        .zip(want)
        .fold(0.0f64, |m, (v, w)| m.max((v - w).abs()));
    let res = vecs
        .iter()
        .zip(values)
        .map(|(v, &lam)| {
            let x = gathered(v);
            let d: Vec<T> = matvec(ad, &x)
                .iter()
                .zip(&x)
                .map(|(p, q)| *p - *q * T::from_parts_lossy(lam, 0.0))
                .collect();
            norm(&d) / norm(&x)
        })
        .fold(0.0f64, f64::max);
    (err, res)
}

/// A full basis (ncv = n) on an operator with a large null space: 100 zero eigenvalues and 100 in
/// [1, 2] (a curl-curl or pure-Neumann matrix has such a kernel). The Krylov space from v0 closes
/// after about 101 products; the basis then fills with fresh random vectors inside the kernel, so
/// the projected matrix holds a 100 x 100 block of rounding noise next to eigenvalues of size 1.
/// Its QL deflation test, relative to the neighbouring diagonal entries only, never accepted an
/// entry there (rounding is eps ||T||): PARLOPS_ERR_NOT_CONVERGED from the projected problem
/// ("the tridiagonal eigensolver did not converge"). The 4 largest and the 4 smallest (the
/// full basis holds the kernel, so 4 zeros), with true residuals from the dense matrix.
pub(super) fn run_ks_null_space<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_ks_null_space ({})", T::DTYPE.name()));
    let n = 200usize;
    let l = uneven(comm, n as i64);
    let lam: Vec<f64> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                0.0
            } else {
                1.0 + i as f64 / n as f64
            }
        })
        .collect();
    let (ad, a, sorted) = operator::<T>(&l, &lam, 0x2545_F491_4F6C_DD1D);
    let p = Problem {
        a: a.as_ref(),
        b: None,
        inv: None,
    };
    let v0 = start::<T>(&l, 11);
    for target in [Target::Largest, Target::Smallest] {
        let want: Vec<f64> = match target {
            Target::Smallest => sorted[..4].to_vec(),
            _ => sorted.iter().rev().take(4).copied().collect(),
        };
        let mut vecs: Vec<DistVector<T>> = (0..4)
            .map(|_| DistVector::<T>::new(l.clone()).unwrap())
            .collect();
        let (r, _) = run(&p, target, &v0, 4, n, 4 * n, 1e-10, &mut vecs);
        let ok = match &r {
            Ok(r) => {
                let (err, res) = errors(&ad, &vecs, &r.values, &want);
                let tol = 1e-9;
                r.converged && err <= tol && res <= tol
            }
            Err(_) => false,
        };
        t.check(
            ok,
            &format!(
                "Krylov-Schur {target:?} with ncv = n = {n} on an operator with a 100-dimensional kernel: {:?} against {want:?}",
                r.as_ref().map(|r| (&r.values, r.products, &r.residuals))
            ),
        );
    }
}

/// Eigenvalues equal to rounding: 3 I and a rank-one matrix (5 once, 0 elsewhere) as Q diag Q^H,
/// all pairs but one asked for (ncv = n), largest and smallest. The returned eigenvalues are the
/// pairs' Rayleigh quotients, which differ by rounding: they came back out of the documented order
/// (3 + 4e-16 after 3 for the largest). The order, the values and the true residuals.
pub(super) fn run_ks_order<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_ks_order ({})", T::DTYPE.name()));
    for (n, rank_one) in [
        (3usize, false),
        (7, false),
        (12, false),
        (7, true),
        (12, true),
    ] {
        let lam = few_distinct(n, rank_one);
        let l = uneven(comm, n as i64);
        let (ad, a, sorted) = operator::<T>(&l, &lam, 7 + n as u64);
        let p = Problem {
            a: a.as_ref(),
            b: None,
            inv: None,
        };
        let v0 = start::<T>(&l, 3 + n as u64);
        let k = n - 1;
        for target in [Target::Largest, Target::Smallest] {
            let want: Vec<f64> = match target {
                Target::Smallest => sorted[..k].to_vec(),
                _ => sorted.iter().rev().take(k).copied().collect(),
            };
            let mut vecs: Vec<DistVector<T>> = (0..k)
                .map(|_| DistVector::<T>::new(l.clone()).unwrap())
                .collect();
            let (r, _) = run(&p, target, &v0, k, n, 50 * n, 1e-10, &mut vecs);
            let ok = match &r {
                Ok(r) => {
                    let ordered = r.values.windows(2).all(|w| match target {
                        Target::Smallest => w[0] <= w[1],
                        _ => w[0] >= w[1],
                    });
                    let (err, res) = errors(&ad, &vecs, &r.values, &want);
                    r.converged && ordered && err <= 1e-9 && res <= 1e-9
                }
                Err(_) => false,
            };
            t.check(
                ok,
                &format!(
                    "Krylov-Schur {target:?}, {k} of {n} equal eigenvalues ({}): {:?} against {want:?}",
                    if rank_one { "rank one" } else { "3 I" },
                    r.as_ref().map(|r| &r.values)
                ),
            );
        }
    }
}

/// Lanczos where the Krylov space closes below the operator's size: a rank-one matrix (5 once, 0
/// eleven times) and 3 I, as Q diag Q^H. From a random v0 the space closes after 2 steps (1 for
/// 3 I); the run returned its Ritz pairs there, the 2 smallest of the rank-one matrix as 0 and 5
/// with OK, and refused the 3 smallest and 3 I ("v0 lies in an invariant subspace"). It goes on
/// from random vectors orthogonal to the basis: the values, the order and the true residuals.
pub(super) fn run_lanczos_closed<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use parlops::eigen::lanczos::{Which, lanczos};
    common::case(&format!("run_lanczos_closed ({})", T::DTYPE.name()));
    let n = 12usize;
    let l = uneven(comm, n as i64);
    for rank_one in [true, false] {
        let lam = few_distinct(n, rank_one);
        let (ad, a, sorted) = operator::<T>(&l, &lam, 31);
        let v0 = start::<T>(&l, 9);
        for (which, k) in [
            (Which::Smallest, 2),
            (Which::Smallest, 3),
            (Which::Largest, 2),
        ] {
            let want: Vec<f64> = match which {
                Which::Smallest => sorted[..k].to_vec(),
                Which::Largest => sorted.iter().rev().take(k).copied().collect(),
            };
            let mut vecs: Vec<DistVector<T>> = (0..k)
                .map(|_| DistVector::<T>::new(l.clone()).unwrap())
                .collect();
            let mut vr: Vec<&mut DistVector<T>> = vecs.iter_mut().collect();
            let r = lanczos(a.as_ref(), &v0, n, 1e-10, k, which, &mut vr);
            let ok = match &r {
                Ok(r) => {
                    let (err, res) = errors(&ad, &vecs, &r.values, &want);
                    r.converged && r.values.len() == k && err <= 1e-9 && res <= 1e-9
                }
                Err(_) => false,
            };
            t.check(
                ok,
                &format!(
                    "Lanczos {which:?} {k} of {} with a closing Krylov space: {:?} against {want:?}",
                    if rank_one { "a rank-one matrix" } else { "3 I" },
                    r.as_ref().map(|r| (&r.values, r.steps))
                ),
            );
        }
    }
}
