//! Krylov-Schur and Lanczos when a product fails (an error, or a panic) on one rank, in the middle
//! of a run and at its end: every rank ends with that failure.

use super::ks::{run, start};
use super::*;
use parlops::eigen::krylov_schur::{Problem, Target};
use parlops::op::LinearOperator;

/// An operator that fails on one rank at its `at`-th application (an error, or a panic), as a
/// caller's callback might in the middle of a run; the inner operator otherwise.
struct FailsAt {
    inner: Op<f64>,
    rank: i32,
    at: usize,
    panic: bool,
    calls: std::sync::atomic::AtomicUsize,
}

impl LinearOperator<f64> for FailsAt {
    fn rows(&self) -> &Arc<Layout> {
        self.inner.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.inner.cols()
    }
    fn forward(&self, x: &DistVector<f64>, y: &mut DistVector<f64>) -> parlops::Result<()> {
        let k = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.forward(x, y)?;
        if k + 1 == self.at && self.inner.rows().comm().rank() == self.rank {
            if self.panic {
                panic!("test operator panics at application {}", self.at);
            }
            return Err(parlops::Error::new(
                parlops::ErrorKind::InvalidArgument,
                format!("test operator fails at application {}", self.at),
            ));
        }
        Ok(())
    }
    fn backward(&self, y: &DistVector<f64>, x: &mut DistVector<f64>) -> parlops::Result<()> {
        self.forward(y, x)
    }
    fn describe(&self) -> String {
        format!("failing {}", self.inner.describe())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Did the run fail with the test operator's failure (its error, or its panic)? And the message.
fn failed_so<R>(r: &parlops::Result<R>, panic: bool) -> (bool, String) {
    let e = r.as_ref().err().map(|e| e.msg.clone()).unwrap_or_default();
    let want = if panic {
        "panics at application"
    } else {
        "fails at application"
    };
    (e.contains(want), e)
}

/// A product failing (an error, or a panic) on one rank in the middle of a run ends the run on
/// every rank with that failure (the products' outcomes are agreed in the reductions that follow
/// them): Krylov-Schur's standard, generalized and shift-and-invert runs, where A, inv or B fails,
/// and Lanczos.
pub(super) fn run_ks_failing_products(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_ks_failing_products");
    let n = 90usize;
    let l = uneven(comm, n as i64);
    let st = l.local_start() as usize;
    let diag = |f: &dyn Fn(usize) -> f64| -> Op<f64> {
        let mut d = DistVector::<f64>::new(l.clone()).unwrap();
        for (i, e) in d.local_mut().iter_mut().enumerate() {
            *e = f(st + i);
        }
        Arc::new(parlops::op::basic::Diagonal::new(&d).unwrap())
    };
    let a = diag(&|i| 1.0 + i as f64 + 0.01 * (i * i) as f64);
    let bm = diag(&|i| 2.0 + (i % 3) as f64);
    let binv = diag(&|i| 1.0 / (2.0 + (i % 3) as f64));
    let shift_inv = diag(&|i| 1.0 / (1.0 + i as f64 + 0.01 * (i * i) as f64 - 7.5));
    let v0 = start::<f64>(&l, 11);
    let last = comm.size() - 1;
    for (rank, at, panic) in [(0, 5, false), (last, 23, true), (last, 41, false)] {
        // (each run its own counter; shift-and-invert with an exact inverse ends in under 30)
        let failing = |inner: &Op<f64>, at: usize| -> Op<f64> {
            Arc::new(FailsAt {
                inner: inner.clone(),
                rank,
                at,
                panic,
                calls: Default::default(),
            })
        };
        let (fa, fa2) = (failing(&a, at), failing(&a, at));
        let finv = failing(&shift_inv, at.min(9));
        let fb = failing(&bm, at);
        let runs: [(&str, Problem<'_, f64>, Target); 4] = [
            (
                "A",
                Problem {
                    a: fa.as_ref(),
                    b: None,
                    inv: None,
                },
                Target::Smallest,
            ),
            (
                "inv (shift-and-invert)",
                Problem {
                    a: a.as_ref(),
                    b: None,
                    inv: Some(finv.as_ref()),
                },
                Target::Nearest(7.5),
            ),
            (
                "B (generalized)",
                Problem {
                    a: a.as_ref(),
                    b: Some(fb.as_ref()),
                    inv: Some(binv.as_ref()),
                },
                Target::Largest,
            ),
            (
                "A (generalized)",
                Problem {
                    a: fa2.as_ref(),
                    b: Some(bm.as_ref()),
                    inv: Some(binv.as_ref()),
                },
                Target::Largest,
            ),
        ];
        for (what, p, target) in runs {
            let (r, _) = run(&p, target, &v0, 3, 8, 100000, 1e-12, &mut []);
            let (ok, e) = failed_so(&r, panic);
            t.check(
                ok,
                &format!(
                    "Krylov-Schur with {what} failing on rank {rank} at application {at}: '{e}' ({:?})",
                    r.map(|r| r.products)
                ),
            );
        }
        // the run's last applications are its end's (each eigenvector's Rayleigh quotient and true
        // residual; with B, a Rayleigh-Ritz step on the basis first): failures there too, A alone
        // and A with B
        for generalized in [false, true] {
            let count = |at: usize, of_b: bool| {
                let fx = failing(if of_b { &bm } else { &a }, at);
                let p = Problem {
                    a: if of_b { a.as_ref() } else { fx.as_ref() },
                    b: generalized.then(|| if of_b { fx.as_ref() } else { bm.as_ref() }),
                    inv: generalized.then_some(binv.as_ref()),
                };
                let (r, _) = run(&p, Target::Largest, &v0, 3, 8, 100000, 1e-12, &mut []);
                let calls = fx
                    .as_any()
                    .downcast_ref::<FailsAt>()
                    .unwrap()
                    .calls
                    .load(std::sync::atomic::Ordering::Relaxed);
                (r, calls)
            };
            let (r, total) = count(usize::MAX, false);
            t.check(r.is_ok(), &format!("the counting run: {:?}", r.err()));
            let mut ats = vec![(total, false), (total - 4, false), (total - 9, false)];
            if generalized {
                ats.push((count(usize::MAX, true).1, true));
            }
            for (at, of_b) in ats {
                let (r, _) = count(at, of_b);
                let (ok, e) = failed_so(&r, panic);
                t.check(
                    ok,
                    &format!(
                        "Krylov-Schur's end with {} failing on rank {rank} at application {at} of {total} (generalized: {generalized}): '{e}'",
                        if of_b { "B" } else { "A" }
                    ),
                );
            }
        }
        let fa = failing(&a, at);
        let r = parlops::eigen::lanczos::lanczos(
            fa.as_ref(),
            &v0,
            n,
            1e-12,
            3,
            parlops::eigen::lanczos::Which::Largest,
            &mut [],
        );
        let (ok, e) = failed_so(&r, panic);
        t.check(
            ok,
            &format!("Lanczos with A failing on rank {rank} at application {at}: '{e}'"),
        );
    }
}
