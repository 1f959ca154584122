//! Several right-hand sides (`Solver::solve_many`): block CG against the dense solutions, every
//! column's true residual against its own rule; rank-deficient blocks (a repeated column, a zero
//! column, columns a million apart in scale); more columns than one block; an initial guess; the
//! iteration count against CG alone; the methods without a block form (one solve per column);
//! and the CSR product of several vectors against one product per vector, bit for bit, with the
//! halo moving.

use super::*;
use crate::common::{last_holder, uneven};

/// ||b_j - A x_j|| <= 1.01 max(rtol ||b_j||, atol) + rounding for every column said converged.
fn check_columns<T: Scalar>(
    t: &mut Tally,
    what: &str,
    s: &Solver<T>,
    bs: &[DistVector<T>],
    xs: &[DistVector<T>],
) {
    let op = s.operator().unwrap().clone();
    let p = &s.params;
    for (j, (b, x)) in bs.iter().zip(xs).enumerate() {
        let info = s.infos()[j];
        if !info.reason.converged() {
            continue;
        }
        let mut r = DistVector::<T>::new(op.rows().clone()).unwrap();
        op.apply(x, &mut r).unwrap();
        r.axpby(T::one(), b, -T::one()).unwrap();
        let (res, bn) = (norm2(&r), norm2(b));
        let target = (p.rtol * bn).max(p.atol);
        let round = 100.0 * eps::<T>() * (8.0 * norm2(x) + bn);
        t.check(
            res <= 1.01 * target + round,
            &format!(
                "{} {what} column {j}: {:?} but the true residual {res:e} > {target:e}",
                T::DTYPE.name(),
                info.reason
            ),
        );
    }
}

fn vecs<T: Scalar>(l: &Arc<Layout>, k: usize, seed: u64) -> Vec<DistVector<T>> {
    (0..k)
        .map(|j| {
            let mut v = DistVector::<T>::new(l.clone()).unwrap();
            random_fill(&mut v, seed + j as u64);
            v
        })
        .collect()
}

fn solve_cols<T: Scalar>(s: &mut Solver<T>, bs: &[DistVector<T>], xs: &mut [DistVector<T>]) {
    let br: Vec<&DistVector<T>> = bs.iter().collect();
    let mut xr: Vec<&mut DistVector<T>> = xs.iter_mut().collect();
    s.solve_many(&br, &mut xr).unwrap();
}

/// CG on `op` to `rtol` in at most `max_iter` iterations (block CG for several columns).
fn cg<T: Scalar>(op: &Op<T>, rtol: f64, max_iter: i64) -> Solver<T> {
    let mut s = Solver::<T>::new(Method::Cg);
    s.params.rtol = rtol;
    s.params.max_iter = max_iter;
    s.set_operator(op.clone()).unwrap();
    s
}

/// Do this rank's entries of u and v have the same bits?
fn same_bits<T: Scalar>(u: &DistVector<T>, v: &DistVector<T>) -> bool {
    u.local()
        .iter()
        .zip(v.local())
        .all(|(a, b)| a.to_parts() == b.to_parts())
}

/// Is `ok` true on every rank? [collective]
fn everywhere(comm: &Arc<Comm>, ok: bool) -> bool {
    let bad = if ok { 0.0 } else { 1.0 };
    comm.allreduce_f64(&[bad], parlops::comm::ReduceOp::Max)
        .unwrap()[0]
        == 0.0
}

pub fn run_many<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let n = 13i64;
    let l = uneven(comm, n * n);
    // an anisotropic SPD diffusion operator
    let spd: Op<T> = Arc::new(grid(
        &l,
        n,
        T::real(5.0),
        T::real(-1.5),
        T::real(-1.5),
        T::real(-1.0),
        T::real(-1.0),
    ));
    let a = dense(spd.as_ref());
    let tol = if single::<T>() { 5e-3 } else { 1e-7 };

    // the product of several vectors has each vector's bits (the halo moving at 2-4 ranks)
    for k in [2, 5, 9] {
        let xs = vecs::<T>(&l, k, 40);
        let mut ys = vecs::<T>(&l, k, 90);
        {
            let xr: Vec<&DistVector<T>> = xs.iter().collect();
            let mut yr: Vec<&mut DistVector<T>> = ys.iter_mut().collect();
            spd.apply_many(&xr, &mut yr).unwrap();
        }
        let mut same = true;
        for (x, y) in xs.iter().zip(&ys) {
            let mut one = DistVector::<T>::new(l.clone()).unwrap();
            spd.apply(x, &mut one).unwrap();
            same &= same_bits(&one, y);
        }
        t.check(
            everywhere(comm, same),
            &format!("{name} CSR times {k} vectors: each has the bits of one product"),
        );
    }

    // the product with its Gram matrix X^H [X, A X] in the product's pass: the products' bits and
    // the sums' bits of the two steps (apply_many, then the pairs' sums), over pieces of rows
    let big = uneven(comm, 48 * 48);
    let wide: Op<T> = Arc::new(grid(
        &big,
        48,
        T::real(5.0),
        T::real(-1.5),
        T::real(-1.5),
        T::real(-1.0),
        T::real(-1.0),
    ));
    for k in [2, 4, 8, 9] {
        let xs = vecs::<T>(&big, k, 140);
        let xr: Vec<&DistVector<T>> = xs.iter().collect();
        let mut ys = vecs::<T>(&big, k, 190);
        let mut zs = vecs::<T>(&big, k, 290);
        let fused = {
            let mut yr: Vec<&mut DistVector<T>> = ys.iter_mut().collect();
            wide.apply_many_gram(&xr, &mut yr).unwrap()
        };
        let steps = {
            let mut zr: Vec<&mut DistVector<T>> = zs.iter_mut().collect();
            parlops::op::apply_many_gram_by_steps(wide.as_ref(), &xr, &mut zr).unwrap()
        };
        let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
        let mut same = fused.len() == 2 * k * 2 * k && bits(&fused) == bits(&steps);
        for (y, z) in ys.iter().zip(&zs) {
            same &= same_bits(y, z);
        }
        t.check(
            everywhere(comm, same),
            &format!("{name} CSR times {k} vectors with their Gram matrix: the two steps' bits"),
        );
    }

    // block CG, plain and with Jacobi, against the dense solutions
    for (jac, k) in [(false, 6), (true, 6), (false, 1), (false, 20)] {
        let bs = vecs::<T>(&l, k, 7);
        let mut xs = vecs::<T>(&l, k, 70);
        let mut s = cg(&spd, rtol, 2000);
        if jac {
            s.set_jacobi();
        }
        solve_cols(&mut s, &bs, &mut xs);
        let what = format!("block CG, {k} columns{}", if jac { ", Jacobi" } else { "" });
        check_columns(t, &what, &s, &bs, &xs);
        let mut worst = 0.0f64;
        for (b, x) in bs.iter().zip(&xs) {
            worst = worst.max(rel_err(&gathered(x), &gauss(a.clone(), gathered(b))));
        }
        let infos = s.infos().to_vec();
        t.check(
            infos.len() == k && infos.iter().all(|i| i.reason.converged()) && worst < tol,
            &format!(
                "{name} {what}: {:?} after {} iterations, error {worst:e}",
                s.info().reason,
                s.info().iterations
            ),
        );
        if k == 6 && !jac {
            // fewer iterations than CG takes for its slowest column alone
            let mut one = cg(&spd, rtol, 2000);
            let mut most = 0;
            for b in &bs {
                let mut x = DistVector::<T>::new(l.clone()).unwrap();
                most = most.max(one.solve(b, &mut x).unwrap().iterations);
            }
            t.check(
                s.info().iterations < most,
                &format!(
                    "{name} block CG of 6 columns: {} iterations, CG alone up to {most}",
                    s.info().iterations
                ),
            );
        }
    }

    // rank-deficient blocks: a repeated column, a zero column, columns far apart in scale; and
    // an initial guess
    let mut bs = vecs::<T>(&l, 5, 11);
    let first = bs[0]
        .duplicate()
        .and_then(|mut d| d.copy_from(&bs[0]).map(|_| d))
        .unwrap();
    bs[2].copy_from(&first).unwrap();
    bs[3].fill(T::zero()).unwrap();
    bs[4].scale(T::real(1e6)).unwrap();
    for guess in [false, true] {
        if guess {
            // a zero b with a nonzero guess ends by dtol (relative to ||b||), as CG alone
            random_fill(&mut bs[3], 99);
        }
        let mut xs = vecs::<T>(&l, 5, 33);
        let mut s = Solver::<T>::new(Method::Cg);
        s.params.rtol = rtol;
        s.params.atol = 0.0;
        s.params.max_iter = 2000;
        s.params.nonzero_guess = guess;
        s.set_operator(spd.clone()).unwrap();
        solve_cols(&mut s, &bs, &mut xs);
        let what = format!("block CG, dependent columns, guess {guess}");
        check_columns(t, &what, &s, &bs, &xs);
        let mut worst = 0.0f64;
        for (j, (b, x)) in bs.iter().zip(&xs).enumerate() {
            if j != 3 || guess {
                worst = worst.max(rel_err(&gathered(x), &gauss(a.clone(), gathered(b))));
            }
        }
        let zero = guess || gathered(&xs[3]).iter().all(|v| v.abs_f64() == 0.0);
        t.check(
            s.infos().iter().all(|i| i.reason.converged()) && worst < tol && zero,
            &format!(
                "{name} {what}: {:?}, error {worst:e}, zero column solved by zero {zero}",
                s.infos().iter().map(|i| i.reason).collect::<Vec<_>>()
            ),
        );
    }

    // nearly dependent columns b, b + e d and c: their residuals' angle grows as they fall, through
    // the band where the block's orthonormalisation loses most (e = 1e-6..1e-10 in double
    // precision once ran to DTOL at 1e5 ||b||)
    let es: &[f64] = if single::<T>() {
        &[1e-1, 1e-2, 1e-3, 1e-4, 1e-5]
    } else {
        &[1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14]
    };
    for &e in es {
        let mut bs = vecs::<T>(&l, 3, 51);
        let d = vecs::<T>(&l, 1, 52).pop().unwrap();
        let b0 = bs[0]
            .duplicate()
            .and_then(|mut v| v.copy_from(&bs[0]).map(|_| v))
            .unwrap();
        bs[1].copy_from(&b0).unwrap();
        bs[1].axpy(T::real(e), &d).unwrap();
        let mut xs = vecs::<T>(&l, 3, 0);
        let mut s = cg(&spd, rtol, 2000);
        solve_cols(&mut s, &bs, &mut xs);
        let what = format!("block CG, columns b, b + {e:e} d, c");
        check_columns(t, &what, &s, &bs, &xs);
        let mut worst = 0.0f64;
        for (b, x) in bs.iter().zip(&xs) {
            worst = worst.max(rel_err(&gathered(x), &gauss(a.clone(), gathered(b))));
        }
        t.check(
            s.infos().iter().all(|i| i.reason.converged()) && worst < tol,
            &format!(
                "{name} {what}: {:?} after {} iterations, error {worst:e}",
                s.infos().iter().map(|i| i.reason).collect::<Vec<_>>(),
                s.info().iterations
            ),
        );
    }

    // NaN or Inf in one column's b (one entry, on one rank): that column ends DIVERGED_NAN at once,
    // the others are solved (each column on its own rule)
    for (bad, nan, jac) in [(1usize, true, false), (0, false, true), (4, true, true)] {
        let mut bs = vecs::<T>(&l, 5, 61);
        if comm.rank() == last_holder(comm, &l) {
            bs[bad].local_mut()[0] = T::real(if nan { f64::NAN } else { f64::INFINITY });
        }
        let mut xs = vecs::<T>(&l, 5, 0);
        let mut s = cg(&spd, rtol, 2000);
        if jac {
            s.set_jacobi();
        }
        solve_cols(&mut s, &bs, &mut xs);
        let what = format!(
            "block CG{}, {} in column {bad}",
            if jac { " + Jacobi" } else { "" },
            if nan { "NaN" } else { "Inf" }
        );
        check_columns(t, &what, &s, &bs, &xs);
        let mut worst = 0.0f64;
        for (j, (b, x)) in bs.iter().zip(&xs).enumerate() {
            if j != bad {
                worst = worst.max(rel_err(&gathered(x), &gauss(a.clone(), gathered(b))));
            }
        }
        let reasons: Vec<Reason> = s.infos().iter().map(|i| i.reason).collect();
        t.check(
            reasons.iter().enumerate().all(|(j, r)| {
                if j == bad {
                    *r == Reason::DivergedNan
                } else {
                    r.converged()
                }
            }) && worst < tol
                && s.info().reason == Reason::DivergedNan,
            &format!("{name} {what}: {reasons:?}, error of the others {worst:e}"),
        );
    }

    // the iteration limit ends every column; methods without a block form solve column by column
    let bs = vecs::<T>(&l, 3, 5);
    let mut xs = vecs::<T>(&l, 3, 6);
    let mut s = cg(&spd, rtol, 3);
    solve_cols(&mut s, &bs, &mut xs);
    t.check(
        s.infos()
            .iter()
            .all(|i| i.reason == Reason::DivergedMaxIter && i.iterations == 3),
        &format!("{name} block CG, max_iter 3: {:?}", s.infos()),
    );
    for m in [Method::Gmres, Method::Bicgstab, Method::Minres] {
        let mut s = Solver::<T>::new(m);
        s.params.rtol = rtol;
        s.params.max_iter = 2000;
        s.set_operator(spd.clone()).unwrap();
        solve_cols(&mut s, &bs, &mut xs);
        check_columns(t, m.name(), &s, &bs, &xs);
        let mut worst = 0.0f64;
        for (b, x) in bs.iter().zip(&xs) {
            worst = worst.max(rel_err(&gathered(x), &gauss(a.clone(), gathered(b))));
        }
        t.check(
            s.infos().len() == 3 && s.infos().iter().all(|i| i.reason.converged()) && worst < tol,
            &format!(
                "{name} {} of 3 columns, one by one: error {worst:e}",
                m.name()
            ),
        );
    }

    // an indefinite operator: block CG says so (or does not converge), never converged
    let ind: Op<T> = Arc::new(grid(
        &l,
        n,
        T::real(4.0 - 1.3),
        -T::one(),
        -T::one(),
        -T::one(),
        -T::one(),
    ));
    let bs = vecs::<T>(&l, 4, 21);
    let mut xs = vecs::<T>(&l, 4, 22);
    let mut s = cg(&ind, rtol, 500);
    solve_cols(&mut s, &bs, &mut xs);
    check_columns(t, "indefinite", &s, &bs, &xs);
    t.check(
        s.infos()
            .iter()
            .all(|i| !i.reason.converged() || s.info().reason.converged()),
        &format!("{name} block CG, indefinite: {:?}", s.info().reason),
    );
}
