//! Block Jacobi preconditioners with ILU(0), IC(0) and SSOR local solves: run with `mpiexec -n P`
//! (P = 1..4; `make test` does), on matrices split unevenly over the ranks.
//!  - at 1 rank the factors equal a dense reference computed here on the same pattern (ILU(0):
//!    Gaussian elimination keeping the pattern; IC(0): Cholesky keeping the lower pattern), and the
//!    SSOR operator equals omega (2 - omega) (D + omega U)^{-1} D (D + omega L)^{-1} formed densely;
//!  - at every rank count, each local solve applied to a vector equals the dense local solve of the
//!    rank's diag block; CG (IC(0), SSOR) and GMRES (ILU(0), on a nonsymmetric matrix) converge to the
//!    dense solution, with fewer iterations than unpreconditioned;
//!  - a zero pivot on one rank fails the construction on every rank, naming the global row.
//!
//! Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop)]

use crate::common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::op::LinearOperator;
use parlops::op::bjacobi::{BlockJacobi, LocalSolve};
use parlops::op::csr::CsrOp;
use parlops::solver::chebyshev::Chebyshev;
use parlops::solver::{Method, Solver};
use parlops::vector::{DistVector, Layout, NormKind, Partition};
use parlops::{Scalar, c64};

/// This rank's rows of an uneven split of `n`.
fn uneven(comm: &Arc<Comm>, n: i64) -> Arc<Layout> {
    let p = comm.size() as i64;
    let r = comm.rank() as i64;
    let mut lens: Vec<i64> = (0..p)
        .map(|i| n / p + if i < n % p { 1 } else { 0 })
        .collect();
    if p > 1 {
        lens[0] -= 2;
        lens[p as usize - 1] += 2;
    }
    Layout::new(comm.clone(), Partition::Scatter, n, lens[r as usize]).unwrap()
}

/// A 2D 5-point grid matrix (m x m): 4 + shift on the diagonal, -1 - c (west/south) and -1 + c
/// (east/north) off it (c = 0: symmetric), rows given with their columns in an order that is not
/// sorted (diagonal first, as hypre stores them).
fn grid<T: Scalar>(l: &Arc<Layout>, m: i64, shift: f64, c: f64, zero_row: Option<i64>) -> CsrOp<T> {
    let (lo, n) = (l.local_start(), l.local_len());
    let (mut p, mut ix, mut v) = (vec![0i64], vec![], vec![]);
    for g in lo..lo + n {
        let (gx, gy) = (g % m, g / m);
        let d = if Some(g) == zero_row {
            0.0
        } else {
            4.0 + shift
        };
        let mut row = vec![(g, d)];
        if gy > 0 {
            row.push((g - m, -1.0 - c));
        }
        if gx > 0 {
            row.push((g - 1, -1.0 - c));
        }
        if gx < m - 1 {
            row.push((g + 1, -1.0 + c));
        }
        if gy < m - 1 {
            row.push((g + m, -1.0 + c));
        }
        // from_local_rows wants increasing columns: sort, the operator re-splits them anyway
        row.sort_by_key(|e| e.0);
        for (j, a) in row {
            ix.push(j);
            v.push(T::real(a));
        }
        p.push(ix.len() as i64);
    }
    CsrOp::from_local_rows(l.clone(), l.clone(), &p, &ix, &v, Ok(())).unwrap()
}

/// The dense local diag block of this rank.
fn local_dense<T: Scalar>(a: &CsrOp<T>) -> Vec<Vec<T>> {
    let n = a.rows().local_len() as usize;
    let mut d = vec![vec![T::zero(); n]; n];
    a.blocks().diag.for_each(|i, j, v| d[i][j] += v);
    d
}

/// Dense ILU(0) on the pattern of `a` (nonzero entries): L (unit) and U in one matrix.
fn dense_ilu0<T: Scalar>(mut a: Vec<Vec<T>>) -> Vec<Vec<T>> {
    let n = a.len();
    let pat: Vec<Vec<bool>> = a
        .iter()
        .map(|r| r.iter().map(|v| !v.is_zero()).collect())
        .collect();
    for i in 1..n {
        for k in 0..i {
            if !pat[i][k] {
                continue;
            }
            a[i][k] = a[i][k] / a[k][k];
            for j in k + 1..n {
                if pat[i][j] {
                    a[i][j] = a[i][j] - a[i][k] * a[k][j];
                }
            }
        }
    }
    a
}

/// Dense IC(0) on the lower pattern of `a`: L with L L^H = A on the pattern.
fn dense_ic0<T: Scalar>(a: &[Vec<T>]) -> Vec<Vec<T>> {
    let n = a.len();
    let mut l = vec![vec![T::zero(); n]; n];
    for i in 0..n {
        for k in 0..i {
            if a[i][k].is_zero() {
                continue;
            }
            let mut s = a[i][k];
            for m in 0..k {
                s = s - l[i][m] * l[k][m].conj();
            }
            l[i][k] = s / l[k][k];
        }
        let mut d = a[i][i].to_parts().0;
        for m in 0..i {
            d -= l[i][m].abs2_f64();
        }
        l[i][i] = T::real(d.sqrt());
    }
    l
}

fn close<T: Scalar>(a: T, b: T, scale: f64) -> bool {
    let tol = if T::DTYPE.size() <= 8 && T::PARTS == 1 || T::DTYPE == parlops::DType::C64 {
        1e-4
    } else {
        1e-12
    };
    (a - b).abs_f64() <= tol * scale.max(1.0)
}

/// The factors at one rank against the dense reference.
fn factors_at_one_rank<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    if comm.size() != 1 {
        return;
    }
    let l = uneven(comm, 36);
    for (name, c) in [("symmetric", 0.0), ("nonsymmetric", 0.4)] {
        let a = grid::<T>(&l, 6, 0.1, c, None);
        let d = local_dense(&a);
        let n = d.len();
        let bj = BlockJacobi::new(&a, LocalSolve::Ilu0).unwrap();
        let (p, j, v) = bj.factors();
        let reference = dense_ilu0(d.clone());
        let mut ok = true;
        for i in 0..n {
            for k in p[i]..p[i + 1] {
                ok &= close(v[k], reference[i][j[k]], 4.0);
            }
        }
        t.check(
            ok,
            &format!(
                "{}: ILU(0) factors of the {name} grid equal the dense reference",
                T::DTYPE.name()
            ),
        );
        if c == 0.0 {
            let bj = BlockJacobi::new(&a, LocalSolve::Ic0).unwrap();
            let (p, j, v) = bj.factors();
            let reference = dense_ic0(&d);
            let mut ok = true;
            let mut count = 0;
            for i in 0..n {
                for k in p[i]..p[i + 1] {
                    ok &= j[k] <= i && close(v[k], reference[i][j[k]], 4.0);
                    count += 1;
                }
            }
            let lower = (0..n)
                .map(|i| (0..=i).filter(|&k| !d[i][k].is_zero()).count())
                .sum::<usize>();
            t.check(
                ok && count == lower,
                &format!(
                    "{}: IC(0) factor equals the dense reference",
                    T::DTYPE.name()
                ),
            );
        }
        // SSOR: M^{-1} e_k against the dense formula
        for w in [1.0, 1.4] {
            let bj = BlockJacobi::new(&a, LocalSolve::Ssor(w)).unwrap();
            let mut ok = true;
            for k in 0..n {
                let mut e = DistVector::<T>::new(l.clone()).unwrap();
                e.local_mut()[k] = T::one();
                let mut y = DistVector::<T>::new(l.clone()).unwrap();
                bj.apply(&e, &mut y).unwrap();
                // (D + w L) t = e_k; t = D t; (D + w U) y = t; y *= w (2 - w)
                let mut tt = vec![T::zero(); n];
                for i in 0..n {
                    let mut s = if i == k { T::one() } else { T::zero() };
                    for m in 0..i {
                        s = s - T::real(w) * d[i][m] * tt[m];
                    }
                    tt[i] = s / d[i][i];
                }
                for i in 0..n {
                    tt[i] = tt[i] * d[i][i];
                }
                for i in (0..n).rev() {
                    let mut s = tt[i];
                    for m in i + 1..n {
                        s = s - T::real(w) * d[i][m] * tt[m];
                    }
                    tt[i] = s / d[i][i];
                }
                for i in 0..n {
                    ok &= close(y.local()[i], tt[i] * T::real(w * (2.0 - w)), 1.0);
                }
            }
            t.check(
                ok,
                &format!(
                    "{}: SSOR({w}) equals its dense formula ({name})",
                    T::DTYPE.name()
                ),
            );
        }
    }
}

/// CG/GMRES with each preconditioner at this rank count: converged, true residual, dense solution.
fn solves<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let m = 12;
    let l = uneven(comm, m * m);
    for (method, kind, c) in [
        (Method::Cg, LocalSolve::Ic0, 0.0),
        (Method::Cg, LocalSolve::Ssor(1.0), 0.0),
        (Method::Cg, LocalSolve::Ssor(1.5), 0.0),
        (Method::Gmres, LocalSolve::Ilu0, 0.45),
        (Method::Bicgstab, LocalSolve::Ilu0, 0.45),
    ] {
        let a = Arc::new(grid::<T>(&l, m, 0.01, c, None));
        // the known solution x*, b = A x*
        let mut xs = DistVector::<T>::new(l.clone()).unwrap();
        for (i, v) in xs.local_mut().iter_mut().enumerate() {
            *v = T::real(1.0 + (0.37 * (l.local_start() + i as i64) as f64).sin());
        }
        let mut b = DistVector::<T>::new(l.clone()).unwrap();
        a.apply(&xs, &mut b).unwrap();
        let single = T::DTYPE == parlops::DType::F32 || T::DTYPE == parlops::DType::C64;
        let rtol = if single { 1e-5 } else { 1e-10 };
        let mut iters = [0i64; 2];
        for (k, with) in [false, true].into_iter().enumerate() {
            let mut s = Solver::<T>::new(method);
            s.params.rtol = rtol;
            s.params.max_iter = 2000;
            s.params.restart = 40;
            s.set_operator(a.clone()).unwrap();
            if with {
                let pc = comm.agree(BlockJacobi::new(&a, kind)).unwrap();
                s.set_preconditioner(Some(Arc::new(pc)));
            }
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            iters[k] = info.iterations;
            // the true residual and the error against x*
            let mut r = DistVector::<T>::new(l.clone()).unwrap();
            a.apply(&x, &mut r).unwrap();
            r.axpby(T::one(), &b, -T::one()).unwrap();
            let (rn, bn) = (
                r.norm(NormKind::Two).unwrap(),
                b.norm(NormKind::Two).unwrap(),
            );
            let mut e = x.duplicate().unwrap();
            e.copy_from(&x).unwrap();
            e.axpy(-T::one(), &xs).unwrap();
            let err = e.norm(NormKind::Two).unwrap() / xs.norm(NormKind::Two).unwrap();
            let what = format!(
                "{} {} with{} block Jacobi {:?} at {} ranks",
                T::DTYPE.name(),
                method.name(),
                if with { "" } else { "out" },
                kind,
                comm.size()
            );
            if comm.rank() == 0 && T::DTYPE == parlops::DType::F64 {
                println!(
                    "{what}: {} iterations, ||b - A x||/||b|| {:.1e}, error {err:.1e}",
                    info.iterations,
                    rn / bn
                );
            }
            t.check(
                info.reason.converged()
                    && rn <= 1.01 * rtol * bn + 1e-13 * bn
                    && err <= if single { 1e-2 } else { 1e-7 },
                &format!("{what}: converged to the dense solution"),
            );
        }
        t.check(
            iters[1] < iters[0],
            &format!(
                "{} {} {:?}: fewer iterations with the preconditioner",
                T::DTYPE.name(),
                method.name(),
                kind
            ),
        );
    }
}

/// A zero pivot (a zero diagonal entry) on the last rank only fails everywhere, naming the row.
fn zero_pivot(t: &mut Tally, comm: &Arc<Comm>) {
    let m = 8;
    let l = uneven(comm, m * m);
    // the last rank's first row: a zero there is a zero pivot of every local solve (no earlier
    // local row updates it)
    let (n, p) = (m * m, comm.size() as i64);
    let last_len = n / p + if p - 1 < n % p { 1 } else { 0 } + if p > 1 { 2 } else { 0 };
    let last = n - last_len;
    let a = grid::<f64>(&l, m, 0.0, 0.0, Some(last));
    for kind in [LocalSolve::Ilu0, LocalSolve::Ic0, LocalSolve::Ssor(1.0)] {
        let r = comm.agree(BlockJacobi::new(&a, kind));
        let msg = r.as_ref().err().map(|e| e.msg.clone()).unwrap_or_default();
        t.check(
            r.is_err() && msg.contains(&format!("row {last}")),
            &format!("{kind:?}: a zero pivot on the last rank fails on every rank ({msg})"),
        );
    }
    // IC(0) on an indefinite matrix: not positive definite
    let a = grid::<f64>(&l, m, -8.0, 0.0, None);
    let r = comm.agree(BlockJacobi::new(&a, LocalSolve::Ic0));
    t.check(
        r.as_ref().is_err_and(|e| e.msg.contains("not positive")),
        "IC(0) of an indefinite matrix fails on every rank",
    );
    let r = comm.agree(BlockJacobi::new(&a, LocalSolve::Ssor(2.0)));
    t.check(r.is_err(), "SSOR with omega = 2 is refused");
}

/// Chebyshev against its definition: I - M A = T_k((theta I - D^-1 A)/delta) / T_k(theta/delta),
/// formed densely at one rank (T_k by its own three-term recurrence on matrices), for degrees 1-5,
/// on the symmetric and the nonsymmetric grid; the adjoint by the dot test at every rank count.
fn chebyshev_definition<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let l = uneven(comm, 36);
    for (name, c) in [("symmetric", 0.0), ("nonsymmetric", 0.3)] {
        let a: Arc<CsrOp<T>> = Arc::new(grid::<T>(&l, 6, 0.2, c, None));
        for k in 1..=5usize {
            let (lo, hi) = (0.4, 7.5);
            let m = Chebyshev::new(a.clone(), k as i64, Some((lo, hi))).unwrap();
            // the dot test: <M x, y> = <x, M^H y>
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let mut y = DistVector::<T>::new(l.clone()).unwrap();
            parlops::op::random_fill(&mut x, 1);
            parlops::op::random_fill(&mut y, 2);
            let mut mx = DistVector::<T>::new(l.clone()).unwrap();
            let mut my = DistVector::<T>::new(l.clone()).unwrap();
            m.apply(&x, &mut mx).unwrap();
            m.apply_adjoint(&y, &mut my).unwrap();
            let (u, v) = (mx.dot(&y).unwrap(), x.dot(&my).unwrap());
            let tol = if T::DTYPE == parlops::DType::F64 || T::DTYPE == parlops::DType::C128 {
                1e-12
            } else {
                1e-4
            };
            t.check(
                (u - v).abs_f64() <= tol * u.abs_f64().max(1.0),
                &format!("{} Chebyshev({k}) {name}: dot test", T::DTYPE.name()),
            );
            if comm.size() != 1 {
                continue;
            }
            let n = 36;
            let d = local_dense(&a);
            // X = (theta I - D^-1 A) / delta
            let (theta, delta) = ((hi + lo) / 2.0, (hi - lo) / 2.0);
            let mut xm = vec![vec![T::zero(); n]; n];
            for i in 0..n {
                for j in 0..n {
                    let dia = d[i][j] / d[i][i];
                    xm[i][j] = (if i == j { T::real(theta) } else { T::zero() } - dia)
                        * T::real(1.0 / delta);
                }
            }
            let mul = |p: &Vec<Vec<T>>, q: &Vec<Vec<T>>| {
                let mut r = vec![vec![T::zero(); n]; n];
                for i in 0..n {
                    for kk in 0..n {
                        if p[i][kk].is_zero() {
                            continue;
                        }
                        for j in 0..n {
                            r[i][j] += p[i][kk] * q[kk][j];
                        }
                    }
                }
                r
            };
            let eye: Vec<Vec<T>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i == j { T::one() } else { T::zero() })
                        .collect()
                })
                .collect();
            let (mut t0, mut t1) = (eye.clone(), xm.clone());
            let (mut s0, mut s1) = (1.0f64, theta / delta);
            for _ in 1..k {
                let mut t2 = mul(&xm, &t1);
                for i in 0..n {
                    for j in 0..n {
                        t2[i][j] = T::real(2.0) * t2[i][j] - t0[i][j];
                    }
                }
                let s2 = 2.0 * (theta / delta) * s1 - s0;
                t0 = t1;
                t1 = t2;
                s0 = s1;
                s1 = s2;
            }
            // I - M A, column by column: e_j - M (A e_j)
            let mut ok = true;
            for j in 0..n {
                let mut e = DistVector::<T>::new(l.clone()).unwrap();
                e.local_mut()[j] = T::one();
                let mut ae = DistVector::<T>::new(l.clone()).unwrap();
                a.apply(&e, &mut ae).unwrap();
                let mut mae = DistVector::<T>::new(l.clone()).unwrap();
                m.apply(&ae, &mut mae).unwrap();
                for i in 0..n {
                    let lhs = (if i == j { T::one() } else { T::zero() }) - mae.local()[i];
                    let rhs = t1[i][j] * T::real(1.0 / s1);
                    ok &= (lhs - rhs).abs_f64() <= tol.max(1e-10);
                }
            }
            t.check(
                ok,
                &format!(
                    "{} Chebyshev({k}) {name}: I - M A equals T_k's definition",
                    T::DTYPE.name()
                ),
            );
        }
    }
}

/// CG with Chebyshev (estimated bounds) at this rank count: converged to the dense solution, fewer
/// iterations than without; and the errors of the constructor on every rank.
fn chebyshev_solves(t: &mut Tally, comm: &Arc<Comm>) {
    let m = 12;
    let l = uneven(comm, m * m);
    let a = Arc::new(grid::<f64>(&l, m, 0.01, 0.0, None));
    let mut xs = DistVector::<f64>::new(l.clone()).unwrap();
    for (i, v) in xs.local_mut().iter_mut().enumerate() {
        *v = 1.0 + (0.37 * (l.local_start() + i as i64) as f64).sin();
    }
    let mut b = DistVector::<f64>::new(l.clone()).unwrap();
    a.apply(&xs, &mut b).unwrap();
    let mut its = vec![];
    for degree in [0i64, 2, 4] {
        let mut s = Solver::<f64>::new(Method::Cg);
        s.params.rtol = 1e-10;
        s.set_operator(a.clone()).unwrap();
        if degree > 0 {
            let c = Chebyshev::new(a.clone(), degree, None).unwrap();
            let (lo, hi) = c.bounds();
            t.check(lo > 0.0 && hi > lo && (hi / 1.2 - 2.0).abs() < 0.2, &format!("Chebyshev({degree}): estimated bounds [{lo:.3}, {hi:.3}] around lambda_max(D^-1 A) ~ 2"));
            s.set_preconditioner(Some(Arc::new(c)));
        }
        let mut x = DistVector::<f64>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let mut r = DistVector::<f64>::new(l.clone()).unwrap();
        a.apply(&x, &mut r).unwrap();
        r.axpby(1.0, &b, -1.0).unwrap();
        let (rn, bn) = (
            r.norm(NormKind::Two).unwrap(),
            b.norm(NormKind::Two).unwrap(),
        );
        x.axpy(-1.0, &xs).unwrap();
        let err = x.norm(NormKind::Two).unwrap() / xs.norm(NormKind::Two).unwrap();
        if comm.rank() == 0 {
            println!(
                "CG with Chebyshev({degree}) at {} ranks: {} iterations, error {err:.1e}",
                comm.size(),
                info.iterations
            );
        }
        t.check(
            info.reason.converged() && rn <= 1.01e-10 * bn && err < 1e-7,
            &format!("CG with Chebyshev({degree}): converged to the dense solution"),
        );
        its.push(info.iterations);
    }
    t.check(
        its[1] < its[0] && its[2] < its[1],
        "Chebyshev: higher degree, fewer CG iterations",
    );
    // errors on every rank
    let n = m * m;
    let last_len = n / comm.size() as i64
        + if (comm.size() as i64 - 1) < n % comm.size() as i64 {
            1
        } else {
            0
        }
        + if comm.size() > 1 { 2 } else { 0 };
    let z = Arc::new(grid::<f64>(&l, m, 0.0, 0.0, Some(n - last_len)));
    let r = comm.agree(Chebyshev::new(z, 3, None).map(|_| ()));
    t.check(
        r.as_ref()
            .is_err_and(|e| e.msg.contains(&format!("row {}", n - last_len))),
        "Chebyshev: a zero diagonal entry on the last rank fails on every rank, naming the row",
    );
    for (deg, bounds) in [(0, None), (3, Some((2.0, 1.0)))] {
        let r = comm.agree(Chebyshev::new(a.clone(), deg, bounds).map(|_| ()));
        t.check(
            r.is_err(),
            &format!("Chebyshev: degree {deg}, bounds {bounds:?} refused"),
        );
    }
}

/// Eigenvalue estimates from CG (Lanczos) and GMRES (Hessenberg) against the grid's known spectrum,
/// 4 + shift - 2 cos(pi i / (m+1)) - 2 cos(pi j / (m+1)); the errors of the query.
fn eigen_estimates(t: &mut Tally, comm: &Arc<Comm>) {
    let m = 12;
    let shift = 0.05;
    let l = uneven(comm, m * m);
    let a = Arc::new(grid::<f64>(&l, m, shift, 0.0, None));
    let c = |k: i64| (std::f64::consts::PI * k as f64 / (m as f64 + 1.0)).cos();
    let (lmin, lmax) = (4.0 + shift - 4.0 * c(1), 4.0 + shift - 4.0 * c(m));
    let mut b = DistVector::<f64>::new(l.clone()).unwrap();
    parlops::op::random_fill(&mut b, 5);
    for (method, tol) in [
        (Method::Cg, 1e-6),
        (Method::Gmres, 1e-4),
        (Method::Fgmres, 1e-4),
    ] {
        let mut s = Solver::<f64>::new(method);
        s.params.rtol = 1e-10;
        s.params.restart = 200;
        s.params.compute_eigs = true;
        s.set_operator(a.clone()).unwrap();
        let mut x = DistVector::<f64>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let (lo, hi) = s.eigenvalue_estimates().unwrap();
        // a converged reason: the true residual meets the rule
        let mut r = DistVector::<f64>::new(l.clone()).unwrap();
        a.apply(&x, &mut r).unwrap();
        r.axpby(1.0, &b, -1.0).unwrap();
        let (rn, bn) = (
            r.norm(NormKind::Two).unwrap(),
            b.norm(NormKind::Two).unwrap(),
        );
        t.check(
            rn <= 1.01e-10 * bn,
            &format!("{}: the true residual meets the rule", method.name()),
        );
        if comm.rank() == 0 {
            println!(
                "{} ({} iterations): estimates [{lo:.6}, {hi:.6}], spectrum [{lmin:.6}, {lmax:.6}]",
                method.name(),
                info.iterations
            );
        }
        t.check(
            info.reason.converged()
                && (lo - lmin).abs() <= tol * lmin
                && (hi - lmax).abs() <= tol * lmax,
            &format!(
                "{}: extreme eigenvalue estimates within {tol} of the spectrum's",
                method.name()
            ),
        );
    }
    // Jacobi-preconditioned CG estimates the spectrum of D^-1 A (the grid's over 4 + shift)
    let mut s = Solver::<f64>::new(Method::Cg);
    s.params.rtol = 1e-10;
    s.params.compute_eigs = true;
    s.set_operator(a.clone()).unwrap();
    s.set_jacobi();
    let mut x = DistVector::<f64>::new(l.clone()).unwrap();
    let info = s.solve(&b, &mut x).unwrap();
    let mut r = DistVector::<f64>::new(l.clone()).unwrap();
    a.apply(&x, &mut r).unwrap();
    r.axpby(1.0, &b, -1.0).unwrap();
    t.check(
        info.reason.converged()
            && r.norm(NormKind::Two).unwrap() <= 1.01e-10 * b.norm(NormKind::Two).unwrap(),
        "Jacobi-CG: converged, the true residual meets the rule",
    );
    let (lo, hi) = s.eigenvalue_estimates().unwrap();
    let dd = 4.0 + shift;
    t.check(
        (lo - lmin / dd).abs() <= 1e-6 * lmin / dd && (hi - lmax / dd).abs() <= 1e-6 * lmax / dd,
        "Jacobi-CG: estimates of D^-1 A's extreme eigenvalues",
    );
    // not recorded, and not supported
    let mut s = Solver::<f64>::new(Method::Cg);
    s.set_operator(a.clone()).unwrap();
    s.solve(&b, &mut x).unwrap();
    t.check(
        s.eigenvalue_estimates()
            .is_err_and(|e| e.msg.contains("no iteration")),
        "CG without recording: no estimates",
    );
    let s = Solver::<f64>::new(Method::Bicgstab);
    t.check(
        s.eigenvalue_estimates()
            .is_err_and(|e| e.kind == parlops::error::ErrorKind::NotSupported),
        "BiCGStab: not supported",
    );
}

pub fn main() {
    let (comm, mut t) = common::start();
    factors_at_one_rank::<f64>(&mut t, &comm);
    factors_at_one_rank::<c64>(&mut t, &comm);
    solves::<f64>(&mut t, &comm);
    solves::<c64>(&mut t, &comm);
    solves::<f32>(&mut t, &comm);
    zero_pivot(&mut t, &comm);
    chebyshev_definition::<f64>(&mut t, &comm);
    chebyshev_definition::<c64>(&mut t, &comm);
    chebyshev_solves(&mut t, &comm);
    eigen_estimates(&mut t, &comm);
    common::finish("mpi_precond", comm, t)
}
