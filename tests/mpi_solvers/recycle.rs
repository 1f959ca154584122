//! GCRO-DR (Krylov subspace recycling): single systems against the dense solution (restarts short
//! enough that the recycled space is used within the solve), a sequence of drifting
//! convection-diffusion systems against GMRES from the previous solution, the true residual of
//! every converged solve, and bad input (a kept space of another layout, k >= m) on every rank.

use super::*;
use crate::common::uneven;

/// A convection-diffusion operator on an n x n grid: -Laplacian + c (upwinded d/dx + d/dy) + shift.
fn convdiff<T: Scalar>(l: &Arc<Layout>, n: i64, c: f64, shift: f64) -> Op<T> {
    Arc::new(grid(
        l,
        n,
        T::real(4.0 + 2.0 * c + shift),
        T::real(-1.0 - c),
        T::real(-1.0),
        T::real(-1.0 - c),
        T::real(-1.0),
    ))
}

fn gcrodr<T: Scalar>(m: usize, k: usize, rtol: f64) -> Solver<T> {
    let mut s = Solver::<T>::new(Method::Gcrodr);
    s.params.restart = m;
    s.params.recycle = Some(k);
    s.params.rtol = rtol;
    s.params.max_iter = 5000;
    s
}

pub fn run_recycle<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let n = 12i64;
    let l = uneven(comm, n * n);
    let im = |v: f64| T::from_parts_lossy(0.0, v);
    // nonsymmetric (complex for complex types) and symmetric indefinite systems
    let ns: Op<T> = Arc::new(grid(
        &l,
        n,
        T::real(4.2),
        T::real(-1.6) + im(0.2),
        T::real(-0.4),
        -T::one(),
        T::real(-0.7),
    ));
    let ind: Op<T> = Arc::new(grid(
        &l,
        n,
        T::real(4.0 - 1.1),
        -T::one(),
        -T::one(),
        -T::one(),
        -T::one(),
    ));
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 3);
    let gb = gathered(&b);
    let tol = if single::<T>() { 5e-3 } else { 1e-7 };
    for (what, op) in [("nonsymmetric", &ns), ("indefinite", &ind)] {
        let want = gauss(dense(op.as_ref()), gb.clone());
        for (m, k, jac) in [(10, 4, false), (15, 5, true), (8, 1, false), (30, 0, false)] {
            let mut s = gcrodr::<T>(m, k, rtol);
            s.set_operator(op.clone()).unwrap();
            if jac {
                s.set_jacobi();
            }
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            let jp = if jac { Some(jacobi_of(op)) } else { None };
            check_true(t, what, &s, jp.as_ref(), &b, &x);
            let err = rel_err(&gathered(&x), &want);
            t.check(
                info.reason.converged() && err < tol,
                &format!(
                    "{name} GCRO-DR({m}, {k}) {what}{}: {:?} after {} iterations, error {err:e}",
                    if jac { ", Jacobi" } else { "" },
                    info.reason,
                    info.iterations
                ),
            );
            t.check(
                (k.saturating_sub(1)..=k).contains(&s.recycled()),
                &format!(
                    "{name} GCRO-DR({m}, {k}) keeps {} vectors (k, or k - 1 where k would split a complex pair)",
                    s.recycled()
                ),
            );
            // the same system again from zero, with the kept space: the same answer, not many
            // more iterations (the space holds a slow part, but a restart's new space differs)
            let mut x2 = DistVector::<T>::new(l.clone()).unwrap();
            let info2 = s.solve(&b, &mut x2).unwrap();
            check_true(t, what, &s, jp.as_ref(), &b, &x2);
            let err2 = rel_err(&gathered(&x2), &want);
            t.check(
                info2.reason.converged()
                    && err2 < tol
                    && info2.iterations as f64 <= 1.1 * info.iterations as f64 + 5.0,
                &format!(
                    "{name} GCRO-DR({m}, {k}) {what} again: {:?} after {} iterations (first: {}), error {err2:e}",
                    info2.reason, info2.iterations, info.iterations
                ),
            );
        }
    }
    run_sequence::<T>(t, comm);
    if !single::<T>() {
        run_scaled_convection::<T>(t, comm);
    }
    // bad input: a kept space of another layout fails on every rank, set_recycle drops it
    let mut s = gcrodr::<T>(10, 3, rtol);
    s.set_operator(ns.clone()).unwrap();
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    s.solve(&b, &mut x).unwrap();
    let l2 = uneven(comm, 10 * 10);
    let other: Op<T> = Arc::new(grid(
        &l2,
        10,
        T::real(4.2),
        -T::one(),
        -T::one(),
        -T::one(),
        -T::one(),
    ));
    s.set_operator(other.clone()).unwrap();
    let mut b2 = DistVector::<T>::new(l2.clone()).unwrap();
    random_fill(&mut b2, 4);
    let mut x2 = DistVector::<T>::new(l2.clone()).unwrap();
    let e = s.solve(&b2, &mut x2);
    t.check(
        matches!(&e, Err(e) if e.kind == parlops::ErrorKind::InvalidArgument && e.msg.contains("recycle space")),
        &format!("{name} GCRO-DR: a kept space of another layout is refused: {e:?}"),
    );
    t.check(s.recycled() == 3, "the refused solve keeps the space");
    s.drop_recycle();
    let info = s.solve(&b2, &mut x2).unwrap();
    check_true(t, "after drop", &s, None, &b2, &x2);
    t.check(
        info.reason.converged(),
        &format!("{name} GCRO-DR after drop_recycle: {:?}", info.reason),
    );
    // k >= m
    let mut s = gcrodr::<T>(5, 5, rtol);
    s.set_operator(ns.clone()).unwrap();
    let e = s.solve(&b, &mut x);
    t.check(
        matches!(&e, Err(e) if e.kind == parlops::ErrorKind::InvalidArgument && e.msg.contains("k < m")),
        &format!("{name} GCRO-DR(5, 5) refused: {e:?}"),
    );
}

/// The tridiagonal operator D T D, T = tridiag(`t`[0], `t`[1], `t`[2]) and D = diag(`d`(i)), n x n,
/// its entries in local CSR rows.
fn tridiagonal<T: Scalar>(l: &Arc<Layout>, n: i64, t: [f64; 3], d: impl Fn(i64) -> f64) -> Op<T> {
    let (st, len) = (l.local_start(), l.local_len());
    let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in st..st + len {
        for (ok, c, a) in [
            (r > 0, r - 1, t[0]),
            (true, r, t[1]),
            (r < n - 1, r + 1, t[2]),
        ] {
            if ok {
                ix.push(c);
                v.push(T::real(d(r) * a * d(c)));
            }
        }
        p.push(ix.len() as i64);
    }
    Arc::new(CsrOp::from_local_rows(l.clone(), l.clone(), &p, &ix, &v, Ok(())).unwrap())
}

/// GCRO-DR(30, 10) with Jacobi on a badly scaled convection operator (120 rows, Jacobi-preconditioned
/// condition about 1e5), against GMRES(30): converged to its rule on the true residual in at most
/// GMRES's iterations. With one classical Gram-Schmidt pass the Arnoldi vectors lost their
/// orthogonality to C, C' = W Q inherited it, and the residual grew from cycle to cycle: 3,000
/// iterations without convergence where GMRES(30) took 614.
fn run_scaled_convection<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let n = 120i64;
    let l = uneven(comm, n);
    // 1D upwinded convection, scaled by a diagonal between e^-2 and e^2
    let a = tridiagonal::<T>(&l, n, [-2.0, 3.0, -1.0], |i| {
        (2.0 * (1.7 * i as f64).sin()).exp()
    });
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 534);
    let mut its = Vec::new();
    for method in [Method::Gmres, Method::Gcrodr] {
        let mut s = gcrodr::<T>(30, 10, 1e-8);
        s.method = method;
        s.set_operator(a.clone()).unwrap();
        s.set_jacobi();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        check_true(t, "scaled convection", &s, Some(&jacobi_of(&a)), &b, &x);
        t.check(
            info.reason.converged(),
            &format!(
                "{name} {} with Jacobi, scaled convection: {:?} after {} iterations",
                method.name(),
                info.reason,
                info.iterations
            ),
        );
        its.push(info.iterations);
    }
    t.check(
        its[1] <= its[0],
        &format!(
            "{name} scaled convection: GCRO-DR(30, 10) {} iterations, GMRES(30) {}",
            its[1], its[0]
        ),
    );
}

/// 12 convection-diffusion systems whose convection drifts by 2% a step, each from the previous
/// solution: GCRO-DR(20, 6) against GMRES(20), every system to its rule; GCRO-DR's operator
/// applications (its iterations plus k per solve for A U) at most 0.8 of GMRES's (0.95 in single
/// precision, whose looser tolerance leaves less to gain).
fn run_sequence<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let rtol = if single::<T>() { 1e-5 } else { 1e-9 };
    let n = 24i64;
    let l = uneven(comm, n * n);
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 9);
    let mut rec = gcrodr::<T>(20, 6, rtol);
    let mut gm = Solver::<T>::new(Method::Gmres);
    gm.params.restart = 20;
    gm.params.rtol = rtol;
    gm.params.max_iter = 5000;
    for s in [&mut rec, &mut gm] {
        s.params.nonzero_guess = true;
    }
    let mut xr = DistVector::<T>::new(l.clone()).unwrap();
    let mut xg = DistVector::<T>::new(l.clone()).unwrap();
    let (mut apps_r, mut apps_g) = (0i64, 0i64);
    for step in 0..12 {
        let c = 3.0 * 1.02f64.powi(step);
        let a = convdiff::<T>(&l, n, c, 0.0);
        for (s, x, apps) in [
            (&mut rec, &mut xr, &mut apps_r),
            (&mut gm, &mut xg, &mut apps_g),
        ] {
            let kept = s.recycled() as i64;
            s.set_operator(a.clone()).unwrap();
            let info = s.solve(&b, x).unwrap();
            check_true(t, &format!("sequence step {step}"), s, None, &b, x);
            t.check(
                info.reason.converged(),
                &format!("{name} {} step {step}: {:?}", s.method.name(), info.reason),
            );
            *apps += info.iterations + kept;
        }
    }
    t.check(
        (apps_r as f64) <= if single::<T>() { 0.95 } else { 0.8 } * apps_g as f64,
        &format!(
            "{name} 12 drifting systems: GCRO-DR(20, 6) {apps_r} operator applications, GMRES(20) {apps_g}"
        ),
    );
    if comm.rank() == 0 && std::env::var("PARLOPS_TEST_SHOW").is_ok() {
        println!("{name} sequence: GCRO-DR {apps_r} applications, GMRES {apps_g}");
    }
}

/// Deflated CG: Hermitian positive definite systems against the dense solution (with and without
/// Jacobi, k = 0, 4, 8), the same system again with the kept space, and a sequence of 12 anisotropic
/// diffusion systems whose anisotropy drifts by 2% a step, each from the previous solution, against
/// CG: at most 0.9 of CG's operator applications (iterations plus k per solve for A W; 0.80 measured
/// in double precision).
pub fn run_deflated<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let tol = if single::<T>() { 5e-3 } else { 1e-7 };
    let n = 14i64;
    let l = uneven(comm, n * n);
    let im = |v: f64| T::from_parts_lossy(0.0, v);
    let sk = if T::DTYPE.is_complex() {
        im(0.3)
    } else {
        T::zero()
    };
    let m1 = -T::one();
    let spd: Op<T> = Arc::new(grid(&l, n, T::real(4.02), m1 - sk, m1 + sk, m1, m1));
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 21);
    let want = gauss(dense(spd.as_ref()), gathered(&b));
    for (k, jac) in [(0, false), (4, false), (8, true)] {
        let mut s = Solver::<T>::new(Method::CgDeflated);
        s.params.recycle = Some(k);
        s.params.rtol = rtol;
        s.params.max_iter = 2000;
        s.set_operator(spd.clone()).unwrap();
        if jac {
            s.set_jacobi();
        }
        let jp = if jac { Some(jacobi_of(&spd)) } else { None };
        let mut its = Vec::new();
        for round in 0..2 {
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            check_true(t, "deflated", &s, jp.as_ref(), &b, &x);
            let err = rel_err(&gathered(&x), &want);
            t.check(
                info.reason.converged() && err < tol,
                &format!(
                    "{name} deflated CG (k {k}{}) solve {round}: {:?} after {} iterations, error {err:e}",
                    if jac { ", Jacobi" } else { "" },
                    info.reason,
                    info.iterations
                ),
            );
            its.push(info.iterations);
        }
        t.check(
            s.recycled() == k && its[1] as f64 <= 1.1 * its[0] as f64 + 3.0,
            &format!(
                "{name} deflated CG (k {k}): {} kept, iterations {its:?} (the second with the kept space)",
                s.recycled()
            ),
        );
    }
    run_deflated_whole_space::<T>(t, comm);
    // the sequence
    let n = 24i64;
    let l = uneven(comm, n * n);
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 23);
    let mut dcg = Solver::<T>::new(Method::CgDeflated);
    dcg.params.recycle = Some(8);
    let mut cg = Solver::<T>::new(Method::Cg);
    for s in [&mut dcg, &mut cg] {
        s.params.rtol = if single::<T>() { 1e-5 } else { 1e-9 };
        s.params.max_iter = 5000;
        s.params.nonzero_guess = true;
    }
    let mut xd = DistVector::<T>::new(l.clone()).unwrap();
    let mut xc = DistVector::<T>::new(l.clone()).unwrap();
    let (mut ad, mut ac) = (0i64, 0i64);
    for step in 0..12 {
        let a = 0.5 * 1.02f64.powi(step);
        let op: Op<T> = Arc::new(grid(
            &l,
            n,
            T::real(2.0 * (1.0 + a) + 2.0 + 1e-3),
            T::real(-1.0 - a),
            T::real(-1.0 - a),
            m1,
            m1,
        ));
        for (s, x, apps) in [(&mut dcg, &mut xd, &mut ad), (&mut cg, &mut xc, &mut ac)] {
            let kept = s.recycled() as i64;
            s.set_operator(op.clone()).unwrap();
            let info = s.solve(&b, x).unwrap();
            check_true(t, &format!("anisotropic step {step}"), s, None, &b, x);
            t.check(
                info.reason.converged(),
                &format!(
                    "{name} {} anisotropic step {step}: {:?}",
                    s.method.name(),
                    info.reason
                ),
            );
            *apps += info.iterations + kept;
        }
    }
    t.check(
        (ad as f64) <= 0.9 * ac as f64,
        &format!("{name} 12 drifting SPD systems: deflated CG {ad} operator applications, CG {ac}"),
    );
    if comm.rank() == 0 && std::env::var("PARLOPS_TEST_SHOW").is_ok() {
        println!("{name} SPD sequence: deflated CG {ad} applications, CG {ac}");
    }
}

/// Deflated CG keeping k = 8 vectors on systems of 6 rows: after the first solve the kept space
/// spans the whole space, and the projection alone solves each next system. Before, the solve went
/// on in a complement of rounding errors: DIVERGED_BREAKDOWN at iteration 0 with an exact x, or a
/// residual that grew until the iterations ran out.
fn run_deflated_whole_space<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let n = 6i64;
    let l = uneven(comm, n);
    let mut s = Solver::<T>::new(Method::CgDeflated);
    s.params.recycle = Some(8);
    s.params.rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    s.params.max_iter = 200;
    for step in 0..4 {
        let shift = 0.1 * step as f64;
        let op = tridiagonal::<T>(&l, n, [-1.0, 2.5 + shift, -1.0], |_| 1.0);
        s.set_operator(op.clone()).unwrap();
        let mut b = DistVector::<T>::new(l.clone()).unwrap();
        random_fill(&mut b, 40 + step);
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        check_true(t, "whole space kept", &s, None, &b, &x);
        t.check(
            info.reason.converged() && (step == 0 || info.iterations <= 1),
            &format!(
                "{name} deflated CG (k 8, 6 rows) step {step}: {:?} after {} iterations, {} kept",
                info.reason,
                info.iterations,
                s.recycled()
            ),
        );
    }
}
