//! Krylov-Schur's end on the standard problem when the Ritz vectors' Rayleigh quotients miss the
//! rule: the Rayleigh-Ritz step of A on the whole basis is the fallback, and its pairs are the
//! answer, written into the caller's vectors.
//!
//! To reach that path on purpose, the operator changes between the run and its end: the first
//! products see A, the end's see A' = A with its two largest eigenvectors turned by an angle
//! within their plane (the same eigenvalues). The basis holds that plane, so a Rayleigh-Ritz step
//! of A' on it finds A''s eigenvectors; the Ritz vectors of A are not A''s, so their quotients miss
//! the rule by far.

use super::ks::{run, start};
use super::*;
use parlops::eigen::krylov_schur::{Problem, Target};
use parlops::op::LinearOperator;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A before its `at`-th application (counted from 0), A' from there on.
struct Switches {
    before: Op<f64>,
    after: Op<f64>,
    at: usize,
    calls: AtomicUsize,
}

impl LinearOperator<f64> for Switches {
    fn rows(&self) -> &Arc<Layout> {
        self.before.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.before.cols()
    }
    fn forward(&self, x: &DistVector<f64>, y: &mut DistVector<f64>) -> parlops::Result<()> {
        if self.calls.fetch_add(1, Ordering::Relaxed) < self.at {
            self.before.forward(x, y)
        } else {
            self.after.forward(x, y)
        }
    }
    fn backward(&self, y: &DistVector<f64>, x: &mut DistVector<f64>) -> parlops::Result<()> {
        self.forward(y, x)
    }
    fn describe(&self) -> String {
        "an operator that changes at one application".into()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The 3 largest of a 90-row diagonal matrix (1, 2, ..., 87, then 300, 310, 320) with the end's
/// products on A' (rows 88 and 89 turned by 0.4 rad): the quotient pairs fail, the Rayleigh-Ritz
/// pairs pass; converged, A''s eigenvalues and eigenvectors (checked on A' itself, and shown not
/// to be A's), the Rayleigh-Ritz step's products made. [collective]
pub(super) fn run_ks_rayleigh_ritz_fallback(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_ks_rayleigh_ritz_fallback");
    let n = 90i64;
    let l = uneven(comm, n);
    let (st, len) = (l.local_start(), l.local_len());
    let d = |i: i64| match i {
        87 => 300.0,
        88 => 310.0,
        89 => 320.0,
        _ => 1.0 + i as f64,
    };
    let (c, s) = (0.4f64.cos(), 0.4f64.sin());
    // R diag(310, 320) R^T on rows 88 and 89, R = [c -s; s c]
    let (d1, d2) = (d(88), d(89));
    let turned = [
        [c * c * d1 + s * s * d2, c * s * (d1 - d2)],
        [c * s * (d1 - d2), s * s * d1 + c * c * d2],
    ];
    let matrix = |turn: bool| -> Op<f64> {
        let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
        for g in st..st + len {
            if turn && g >= 88 {
                let r = (g - 88) as usize;
                ix.extend([88, 89]);
                v.extend(turned[r]);
            } else {
                ix.push(g);
                v.push(d(g));
            }
            ip.push(ix.len() as i64);
        }
        Arc::new(CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap())
    };
    let (a, a2) = (matrix(false), matrix(true));
    let v0 = start::<f64>(&l, 7);
    let (nev, ncv, tol) = (3usize, 8usize, 1e-10);
    let switching = |at: usize| Switches {
        before: a.clone(),
        after: a2.clone(),
        at,
        calls: AtomicUsize::new(0),
    };
    let solve = |op: &Switches, vecs: &mut [DistVector<f64>]| {
        let p = Problem {
            a: op,
            b: None,
            inv: None,
        };
        let (r, _) = run(&p, Target::Largest, &v0, nev, ncv, 100_000, tol, vecs);
        (r, op.calls.load(Ordering::Relaxed))
    };
    // on A alone: the quotients pass (the end's products: one per pair)
    let counting = switching(usize::MAX);
    let (r, total) = solve(&counting, &mut []);
    let ok = r.as_ref().is_ok_and(|r| r.converged);
    t.check(
        ok,
        &format!(
            "the run on A alone: {:?}",
            r.as_ref().map(|r| (&r.values, &r.why))
        ),
    );
    if !ok {
        return;
    }
    // the end on A': the quotient pairs, then the Rayleigh-Ritz step (at most ncv products) and
    // its check (one a pair)
    let at = total - nev;
    let op = switching(at);
    let mut vecs: Vec<DistVector<f64>> = (0..nev)
        .map(|_| DistVector::new(l.clone()).unwrap())
        .collect();
    let (r, calls) = solve(&op, &mut vecs);
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            t.check(false, &format!("the run whose end sees A': {}", e.msg));
            return;
        }
    };
    t.check(
        r.converged,
        &format!(
            "the end on A': converged by the Rayleigh-Ritz step ({})",
            r.why
        ),
    );
    let rr = calls - total;
    t.check(
        (nev + 1..=ncv + nev).contains(&rr),
        &format!("the end on A' made {rr} products more than the quotients' end ({calls} against {total}): the Rayleigh-Ritz step's and its check's"),
    );
    for (q, want) in [320.0, 310.0, 300.0].iter().enumerate() {
        let got = r.values.get(q).copied().unwrap_or(f64::NAN);
        t.check(
            ((got - want) / want).abs() < 1e-10,
            &format!("eigenvalue {q} of A': {got} against {want}"),
        );
    }
    // each vector an eigenvector of A' to tol (the true residual, recomputed here), and the two
    // turned ones not eigenvectors of A
    for (q, x) in vecs.iter().enumerate() {
        let lam = r.values[q];
        let resid = |op: &Op<f64>| {
            let mut y = DistVector::<f64>::new(l.clone()).unwrap();
            op.apply(x, &mut y).unwrap();
            let (gx, gy) = (gathered(x), gathered(&y));
            let rn: f64 = gx
                .iter()
                .zip(&gy)
                .map(|(a, b)| (b - lam * a).powi(2))
                .sum::<f64>()
                .sqrt();
            let xn: f64 = gx.iter().map(|a| a * a).sum::<f64>().sqrt();
            rn / (lam.abs() * xn)
        };
        let (on_new, on_old) = (resid(&a2), resid(&a));
        t.check(
            on_new <= 1.5 * tol && (r.residuals[q] - on_new).abs() <= 1e-12 + 0.1 * on_new,
            &format!(
                "pair {q}: true residual on A' {on_new:.1e} (reported {:.1e}), tol {tol:.0e}",
                r.residuals[q]
            ),
        );
        if q < 2 {
            t.check(
                on_old > 1e-4,
                &format!("pair {q} is A''s, not A's: residual on A {on_old:.1e}"),
            );
        }
    }
}
