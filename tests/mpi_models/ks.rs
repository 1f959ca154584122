//! Krylov-Schur (thick-restart Lanczos) against closed forms and dense references at 1-4 ranks with
//! uneven splits: the standard problem at both ends with a basis much smaller than the run needs
//! (restarts and locking), the generalized problem (B diagonal, B^-1 exact), shift-and-invert with
//! and without B, a start vector in a small invariant subspace, and the failures: a basis not
//! larger than n_ev, b without inv, no inv for a shift, an operator of another layout, the product
//! limit (values still reported), the monitor stopping the run.

use super::eigen::{dense_op, known_spectrum};
use super::*;
use parlops::eigen::krylov_schur::{Eigs, Problem, Progress, Target, krylov_schur};
use parlops::op::LinearOperator;
use parlops::vector::random::Distribution;

/// ||A x - lambda B x|| / (|lambda| ||B x||) from dense matrices and gathered vectors.
fn true_rel<T: Scalar>(a: &[Vec<T>], b: Option<&[Vec<T>]>, x: &[T], lam: f64) -> f64 {
    let ax = matvec(a, x);
    let bx = b.map_or_else(|| x.to_vec(), |b| matvec(b, x));
    let r: Vec<T> = ax
        .iter()
        .zip(&bx)
        .map(|(p, q)| *p - *q * T::from_parts_lossy(lam, 0.0))
        .collect();
    norm(&r) / (lam.abs().max(1e-300) * norm(&bx))
}

/// The largest relative eigenvalue error of `r` against `want`, and the largest true relative
/// residual of its pairs with the eigenvectors `vecs`, from the dense matrices.
fn errors<T: Scalar>(
    r: &Eigs,
    want: &[f64],
    vecs: &[DistVector<T>],
    a: &[Vec<T>],
    b: Option<&[Vec<T>]>,
) -> (f64, f64) {
    let err = r
        .values
        .iter()
        .zip(want)
        .map(|(v, w)| (v - w).abs() / w.abs())
        .fold(0.0f64, f64::max);
    let res = vecs
        .iter()
        .zip(&r.values)
        .map(|(v, lam)| true_rel(a, b, &gathered(v), *lam))
        .fold(0.0f64, f64::max);
    (err, res)
}

pub(super) fn start<T: Scalar>(l: &Arc<Layout>, seed: u64) -> DistVector<T> {
    let mut v = DistVector::<T>::new(l.clone()).unwrap();
    v.set_random(Distribution::Gaussian, seed).unwrap();
    v
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run<T: Scalar>(
    p: &Problem<'_, T>,
    target: Target,
    v0: &DistVector<T>,
    nev: usize,
    ncv: usize,
    maxp: usize,
    tol: f64,
    vecs: &mut [DistVector<T>],
) -> (parlops::Result<Eigs>, usize) {
    let mut calls = 0usize;
    let mut mon = |_: &Progress<'_>| {
        calls += 1;
        Ok(false)
    };
    let mut vr: Vec<&mut DistVector<T>> = vecs.iter_mut().collect();
    let r = krylov_schur(p, target, v0, nev, ncv, maxp, tol, &mut vr, Some(&mut mon));
    (r, calls)
}

/// The standard problem on an anisotropic 2-D Laplacian of 1600 rows (simple eigenvalues, known in
/// closed form): the 4 smallest (hundreds of products) and the 6 largest with a basis of 16 and 20
/// vectors, to 1e-10; true residuals from the dense matrix.
pub(super) fn run_ks_standard<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_ks_standard ({})", T::DTYPE.name()));
    let n = 40i64;
    let l = uneven(comm, n * n);
    let a = grid::<T>(&l, &l, n, 4.0, [-1.0, -1.0, -0.7, -0.7]);
    let h = std::f64::consts::PI / (n as f64 + 1.0);
    let mut exact: Vec<f64> = (1..=n)
        .flat_map(|i| {
            (1..=n).map(move |j| 4.0 - 2.0 * (i as f64 * h).cos() - 1.4 * (j as f64 * h).cos())
        })
        .collect();
    exact.sort_by(f64::total_cmp);
    let ad = dense(a.as_ref());
    let v0 = start::<T>(&l, 5);
    let p = Problem {
        a: a.as_ref(),
        b: None,
        inv: None,
    };
    for (target, nev, ncv) in [(Target::Smallest, 4, 16), (Target::Largest, 6, 20)] {
        let mut vecs: Vec<DistVector<T>> = (0..nev)
            .map(|_| DistVector::<T>::new(l.clone()).unwrap())
            .collect();
        let (r, calls) = run(&p, target, &v0, nev, ncv, 20000, 1e-10, &mut vecs);
        let r = r.unwrap();
        let want: Vec<f64> = match target {
            Target::Smallest => exact.iter().take(nev).copied().collect(),
            _ => exact.iter().rev().take(nev).copied().collect(),
        };
        let (err, res) = errors(&r, &want, &vecs, &ad, None);
        let reported = r.residuals.iter().fold(0.0f64, |a, b| a.max(*b));
        t.check(
            r.converged
                && err <= 1e-9
                && res <= 1e-9
                && (reported - res).abs() <= 1e-12
                && r.restarts > 0
                && calls == r.restarts + 1,
            &format!(
                "Krylov-Schur {target:?}, ncv {ncv}: {:?} against {want:?} ({err:.1e}) in {} products, {} restarts; true residual {res:.1e}, reported {reported:.1e}",
                r.values, r.products, r.restarts
            ),
        );
    }
}

/// The generalized problem A x = lambda B x (B diagonal, B^-1 exact) and shift-and-invert with and
/// without B on a dense pencil with known eigenvalues 1, 2, ..., 80 (A = B^1/2 Q diag Q^H B^1/2; the
/// inverse (A - sigma B)^-1 from the same construction).
pub(super) fn run_ks_pencil<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_ks_pencil ({})", T::DTYPE.name()));
    let n = 80usize;
    let l = uneven(comm, n as i64);
    let lam: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let bdiag: Vec<f64> = (0..n).map(|i| 1.0 + 0.5 * (i as f64 * 0.9).sin()).collect();
    let ones = vec![1.0; n];
    let v0 = start::<T>(&l, 9);
    let sigma = 30.3;
    for pencil in [false, true] {
        let bd: &[f64] = if pencil { &bdiag } else { &ones };
        let ad = known_spectrum::<T>(n, &lam, Some(bd));
        let a = dense_op(&l, &ad);
        let bdense: Vec<Vec<T>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| T::from_parts_lossy(if i == j { bd[i] } else { 0.0 }, 0.0))
                    .collect()
            })
            .collect();
        let binvd: Vec<f64> = bd.iter().map(|x| 1.0 / x).collect();
        let b = dense_op(&l, &bdense);
        let binv = dense_op(&l, &known_spectrum::<T>(n, &ones, Some(&binvd)));
        let shifted: Vec<f64> = lam.iter().map(|x| 1.0 / (x - sigma)).collect();
        let si = dense_op(&l, &known_spectrum::<T>(n, &shifted, Some(&binvd)));
        let bref: Option<&dyn LinearOperator<T>> = if pencil { Some(b.as_ref()) } else { None };
        let cases: Vec<(Target, Option<&dyn LinearOperator<T>>, Vec<f64>)> = vec![
            (
                Target::Largest,
                if pencil { Some(binv.as_ref()) } else { None },
                lam.iter().rev().take(5).copied().collect(),
            ),
            (
                Target::Smallest,
                if pencil { Some(binv.as_ref()) } else { None },
                lam.iter().take(5).copied().collect(),
            ),
            (
                Target::Nearest(sigma),
                Some(si.as_ref()),
                vec![30.0, 31.0, 29.0, 32.0, 28.0],
            ),
        ];
        for (target, inv, want) in cases {
            let p = Problem {
                a: a.as_ref(),
                b: bref,
                inv,
            };
            let mut vecs: Vec<DistVector<T>> = (0..5)
                .map(|_| DistVector::<T>::new(l.clone()).unwrap())
                .collect();
            let (r, _) = run(&p, target, &v0, 5, 12, 5000, 1e-10, &mut vecs);
            let r = r.unwrap();
            let bo: Option<&[Vec<T>]> = if pencil { Some(&bdense) } else { None };
            let (err, res) = errors(&r, &want, &vecs, &ad, bo);
            // B-orthonormal eigenvectors
            let mut orth: f64 = 0.0;
            for (i, vi) in vecs.iter().enumerate() {
                let gi = gathered(vi);
                let bgi = bo.map_or_else(|| gi.clone(), |bm| matvec(bm, &gi));
                for (j, vj) in vecs.iter().enumerate() {
                    let d = dotc_g(&gathered(vj), &bgi);
                    let e = if i == j { 1.0 } else { 0.0 };
                    orth = orth.max((d - T::from_parts_lossy(e, 0.0)).abs_f64());
                }
            }
            t.check(
                r.converged && err <= 1e-10 && res <= 1e-9 && orth <= 1e-10,
                &format!(
                    "Krylov-Schur, B {}, {target:?}: {:?} against {want:?} ({err:.1e}), true residual {res:.1e}, V^H B V - I {orth:.1e}, {} products",
                    if pencil { "diagonal" } else { "I" },
                    r.values,
                    r.products
                ),
            );
        }
    }
}

fn dotc_g<T: Scalar>(a: &[T], b: &[T]) -> T {
    a.iter()
        .zip(b)
        .fold(T::zero(), |s, (x, y)| s + x.conj() * *y)
}

/// A start vector in a 2-dimensional invariant subspace (a diagonal operator, v0 = e_0 + e_5):
/// the run goes on from random directions and finds the 3 largest; the failures, on every rank.
pub(super) fn run_ks_edges(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_ks_edges");
    let n = 60usize;
    let l = uneven(comm, n as i64);
    let mut d = DistVector::<f64>::new(l.clone()).unwrap();
    let st = l.local_start() as usize;
    for (i, e) in d.local_mut().iter_mut().enumerate() {
        *e = 1.0 + (st + i) as f64;
    }
    let a: Op<f64> = Arc::new(parlops::op::basic::Diagonal::new(&d).unwrap());
    let mut v0 = DistVector::<f64>::new(l.clone()).unwrap();
    for (i, e) in v0.local_mut().iter_mut().enumerate() {
        *e = if st + i == 0 || st + i == 5 { 1.0 } else { 0.0 };
    }
    let p = Problem {
        a: a.as_ref(),
        b: None,
        inv: None,
    };
    let (r, _) = run(&p, Target::Largest, &v0, 3, 8, 2000, 1e-10, &mut []);
    let r = r.unwrap();
    t.check(
        r.converged
            && r.values
                .iter()
                .zip([60.0, 59.0, 58.0])
                .all(|(a, b)| (a - b).abs() <= 1e-9 * b),
        &format!(
            "Krylov-Schur from an invariant subspace: {:?} in {} products",
            r.values, r.products
        ),
    );
    let v1 = start::<f64>(&l, 3);
    let other = uneven(comm, n as i64 + 1);
    let mut d2 = DistVector::<f64>::new(other).unwrap();
    d2.fill(1.0).unwrap();
    let wrong: Op<f64> = Arc::new(parlops::op::basic::Diagonal::new(&d2).unwrap());
    let msg = |r: (parlops::Result<Eigs>, usize)| r.0.err().map(|e| e.msg).unwrap_or_default();
    let e = msg(run(&p, Target::Largest, &v1, 3, 3, 100, 1e-8, &mut []));
    t.check(
        e.contains("ncv = 3"),
        &format!("a basis of n_ev vectors: '{e}'"),
    );
    let pb = Problem {
        a: a.as_ref(),
        b: Some(a.as_ref()),
        inv: None,
    };
    let e = msg(run(&pb, Target::Largest, &v1, 3, 8, 100, 1e-8, &mut []));
    t.check(e.contains("without inv"), &format!("b without inv: '{e}'"));
    let e = msg(run(&p, Target::Nearest(2.5), &v1, 3, 8, 100, 1e-8, &mut []));
    t.check(
        e.contains("inv is NULL"),
        &format!("a shift without inv: '{e}'"),
    );
    let pw = Problem {
        a: a.as_ref(),
        b: None,
        inv: Some(wrong.as_ref()),
    };
    let e = msg(run(
        &pw,
        Target::Nearest(2.5),
        &v1,
        3,
        8,
        100,
        1e-8,
        &mut [],
    ));
    t.check(e.contains("inv"), &format!("inv of another layout: '{e}'"));
    // shift-and-invert with an A that gives NaN on the last rank only (inv exact elsewhere): refused
    // on every rank naming a, at the start (||A r|| for the rounding scale); before, the NaN norm
    // was taken for 0 and the true-residual check passed
    let mut dd = DistVector::<f64>::new(l.clone()).unwrap();
    let st = l.local_start() as usize;
    for (i, x) in dd.local_mut().iter_mut().enumerate() {
        *x = 1.0 + (st + i) as f64;
    }
    let mut di = DistVector::<f64>::new(l.clone()).unwrap();
    for (i, x) in di.local_mut().iter_mut().enumerate() {
        *x = 1.0 / (1.0 + (st + i) as f64 - 2.5);
    }
    if comm.rank() + 1 == comm.size()
        && let Some(x) = dd.local_mut().last_mut()
    {
        *x = f64::NAN;
    }
    let (nan_a, inv_d): (Op<f64>, Op<f64>) = (
        Arc::new(parlops::op::basic::Diagonal::new(&dd).unwrap()),
        Arc::new(parlops::op::basic::Diagonal::new(&di).unwrap()),
    );
    let pnan = Problem {
        a: nan_a.as_ref(),
        b: None,
        inv: Some(inv_d.as_ref()),
    };
    let (r, _) = run(
        &pnan,
        Target::Nearest(2.5),
        &v1,
        3,
        8,
        100000,
        1e-8,
        &mut [],
    );
    let e = r.as_ref().err().map(|e| e.msg.clone()).unwrap_or_default();
    t.check(
        e.contains("operator a produced a value that is not finite (||A r||"),
        &format!(
            "shift-and-invert with NaN in A on one rank: '{e}' ({:?})",
            r.map(|r| r.products)
        ),
    );
    // B not positive definite (B = -I, inv = -I): refused on every rank, naming b
    let mut dn = DistVector::<f64>::new(l.clone()).unwrap();
    dn.fill(-1.0).unwrap();
    let neg: Op<f64> = Arc::new(parlops::op::basic::Diagonal::new(&dn).unwrap());
    let pn = Problem {
        a: a.as_ref(),
        b: Some(neg.as_ref()),
        inv: Some(neg.as_ref()),
    };
    let e = msg(run(&pn, Target::Largest, &v1, 3, 8, 100, 1e-8, &mut []));
    t.check(
        e.contains("b is not positive definite"),
        &format!("B not positive definite: '{e}'"),
    );
    // an operator that is not Hermitian: refused on every rank, naming a, however many products
    // were allowed (the fuzzer's hang: symmetric Lanczos on it never converges, so the run went on
    // to max_products = 2^62); a skew part of 1e-7 of ||A|| is no reason to refuse
    for (skew, what) in [(0.5, "a bidiagonal"), (1e-7 * 60.0, "a nearly symmetric")] {
        let mut dm: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| if i == j { 1.0 + i as f64 } else { 0.0 })
                    .collect()
            })
            .collect();
        for i in 0..n - 1 {
            dm[i][i + 1] += skew;
            if skew < 1.0e-3 {
                dm[i + 1][i] -= skew;
            }
        }
        let ns = dense_op(&l, &dm);
        let pns = Problem {
            a: ns.as_ref(),
            b: None,
            inv: None,
        };
        let r = run(
            &pns,
            Target::Smallest,
            &v1,
            2,
            4,
            usize::MAX / 2,
            1e-8,
            &mut [],
        )
        .0;
        let e = r.as_ref().err().map(|e| e.msg.clone()).unwrap_or_default();
        if skew > 1.0e-3 {
            t.check(
                e.contains("not Hermitian") && e.contains("a: it must be Hermitian"),
                &format!("{what} operator refused: '{e}'"),
            );
        } else {
            t.check(
                !e.contains("not Hermitian"),
                &format!(
                    "{what} operator runs: {:?}",
                    r.as_ref().map(|r| (r.converged, r.products))
                ),
            );
        }
    }
    let mut dc: Vec<Vec<parlops::c64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    parlops::c64::from_parts_lossy(if i == j { 1.0 + i as f64 } else { 0.0 }, 0.0)
                })
                .collect()
        })
        .collect();
    dc[7][7] = parlops::c64::from_parts_lossy(8.0, 3.0);
    let cop = dense_op(&l, &dc);
    let pc = Problem {
        a: cop.as_ref(),
        b: None,
        inv: None,
    };
    let vc = start::<parlops::c64>(&l, 5);
    let mut calls = 0usize;
    let mut mon = |_: &Progress<'_>| {
        calls += 1;
        Ok(false)
    };
    let e = krylov_schur(
        &pc,
        Target::Largest,
        &vc,
        2,
        6,
        usize::MAX / 2,
        1e-8,
        &mut [],
        Some(&mut mon),
    )
    .err()
    .map(|e| e.msg)
    .unwrap_or_default();
    t.check(
        e.contains("not Hermitian"),
        &format!("a complex diagonal with 8+3i on it refused: '{e}'"),
    );
    // the product limit: not converged, the values reached reported
    let (r, _) = run(&p, Target::Smallest, &v1, 3, 6, 10, 1e-12, &mut []);
    let r = r.unwrap();
    t.check(
        !r.converged && r.products == 10 && r.values.len() == 3 && r.why.contains("max_products"),
        &format!(
            "the product limit: converged {} after {} products, values {:?}: {}",
            r.converged, r.products, r.values, r.why
        ),
    );
    // without a monitor (no reduction a cycle) the run is the same, bit for bit, and its pairs
    // (1, 2, 3) meet the rule on their true residuals
    let (with, _) = run(&p, Target::Smallest, &v1, 3, 6, 10000, 1e-10, &mut []);
    let mut xs: Vec<DistVector<f64>> = (0..3)
        .map(|_| DistVector::<f64>::new(l.clone()).unwrap())
        .collect();
    let mut xr: Vec<&mut DistVector<f64>> = xs.iter_mut().collect();
    let without = krylov_schur(&p, Target::Smallest, &v1, 3, 6, 10000, 1e-10, &mut xr, None);
    let ad = dense(a.as_ref());
    let res = without.as_ref().map_or(f64::NAN, |b| {
        xs.iter()
            .zip(&b.values)
            .map(|(x, lam)| true_rel(&ad, None, &gathered(x), *lam))
            .fold(0.0f64, f64::max)
    });
    let same = match (&with, &without) {
        (Ok(a), Ok(b)) => {
            a.converged
                && b.converged
                && res <= 1e-10
                && a.products == b.products
                && a.values
                    .iter()
                    .map(|v| v.to_bits())
                    .eq(b.values.iter().map(|v| v.to_bits()))
                && b.values
                    .iter()
                    .zip([1.0, 2.0, 3.0])
                    .all(|(v, w)| (v - w).abs() <= 1e-10 * w)
        }
        _ => false,
    };
    t.check(
        same,
        &format!(
            "the same run without a monitor: {with:?} against {without:?}, true residuals <= {res:.1e}"
        ),
    );
    // the monitor stops the run on one rank: every rank stops
    let rank = comm.rank();
    let mut mon = |pr: &Progress<'_>| Ok(rank == 0 && pr.restarts == 1);
    let r = krylov_schur(
        &p,
        Target::Smallest,
        &v1,
        3,
        6,
        10000,
        1e-12,
        &mut [],
        Some(&mut mon),
    )
    .unwrap();
    t.check(
        !r.converged && r.restarts == 1 && r.why.contains("monitor"),
        &format!(
            "the monitor stops the run: {} restarts, {}",
            r.restarts, r.why
        ),
    );
}

/// Shift-and-invert through an inexact inverse, as an inner solve gives one: inv = (A - sigma I)^-1
/// (I + R) with R a fixed pseudo-random matrix of norm about 3e-11 (an inner residual), on a
/// spectrum shaped like a Laplacian's (k^2 / n^2: the wanted eigenvalues, between the 3rd and the
/// 12th, are 1e-3 of ||A||) with the shift inside it. OP's Krylov relation then holds to the inner
/// tolerance only; the 8 nearest must still come out to tol 1e-8 on their true residuals, and the
/// eigenvalues to 1e-8 (at 4 times that R neither this nor the previous version converges: the
/// true residuals stall at 2e-8-5e-8). An inner solve's errors are not linear in its right-hand
/// side as R is; python/tests/test_eigen_shift.py has GMRES + AMG inside.
pub(super) fn run_ks_inexact(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_ks_inexact");
    let n = 150usize;
    let l = uneven(comm, n as i64);
    let lam: Vec<f64> = (1..=n).map(|k| (k * k) as f64 / (n * n) as f64).collect();
    let sigma = 0.6 * lam[4] + 0.4 * lam[5];
    let ad = known_spectrum::<f64>(n, &lam, None);
    let shifted: Vec<f64> = lam.iter().map(|x| 1.0 / (x - sigma)).collect();
    let si = known_spectrum::<f64>(n, &shifted, None);
    let noise = |i: usize, j: usize| {
        let h = ((i * 7919 + j * 104_729 + 17) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 5e-11 / (n as f64).sqrt()
    };
    let inv: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| si[i][j] + (0..n).map(|k| si[i][k] * noise(k, j)).sum::<f64>())
                .collect()
        })
        .collect();
    let (a, inv) = (dense_op(&l, &ad), dense_op(&l, &inv));
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| (lam[i] - sigma).abs().total_cmp(&(lam[j] - sigma).abs()));
    let want: Vec<f64> = order[..8].iter().map(|&i| lam[i]).collect();
    let p = Problem {
        a: a.as_ref(),
        b: None,
        inv: Some(inv.as_ref()),
    };
    let v0 = start::<f64>(&l, 5);
    let mut vecs: Vec<DistVector<f64>> = (0..8)
        .map(|_| DistVector::<f64>::new(l.clone()).unwrap())
        .collect();
    let (r, _) = run(&p, Target::Nearest(sigma), &v0, 8, 20, 400, 1e-8, &mut vecs);
    match r {
        Ok(r) => {
            let (err, res) = errors(&r, &want, &vecs, &ad, None);
            t.check(
                r.converged && err <= 1e-8 && res <= 1e-8,
                &format!(
                    "Krylov-Schur through an inexact inverse, 8 nearest {sigma:.3e}: converged {} ({}), {:?} against {want:?} ({err:.1e}), true residual {res:.1e}, {} products",
                    r.converged, r.why, r.values, r.products
                ),
            );
        }
        Err(e) => t.check(
            false,
            &format!("Krylov-Schur through an inexact inverse: {e}"),
        ),
    }
}
