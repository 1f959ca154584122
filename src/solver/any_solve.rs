//! The solves of a run-time typed solver: the typed solver of the operator's dtype set up from
//! the settings, one right-hand side or several, the outcome agreed and reported.

use super::{AnySolver, Pick, Typed};
use crate::error::Result;
use crate::scalar::{DType, Scalar, c32, c64};
use crate::solver::{Info, MonitorFn, Solver};
use crate::vector::AnyVec;

impl AnySolver {
    /// Solve A x = b with the typed solver of A's dtype, after [`AnySolver::check_solve`] and the
    /// agreement of [`AnySolver::agreement_values`] on every rank. A panic on one rank becomes an
    /// `Internal` error on every rank. [collective]
    pub fn solve(&mut self, b: &AnyVec, x: &mut AnyVec) -> Result<Info> {
        let dtype = self
            .op
            .as_ref()
            .map(|o| o.dtype())
            .ok_or_else(|| crate::err!(Internal, "operator"))?;
        macro_rules! one {
            ($t:ty) => {
                self.run::<$t, _>(|s| {
                    let b = b
                        .typed::<$t>()
                        .ok_or_else(|| crate::err!(Internal, "b dtype"))?;
                    let x = x
                        .typed_mut::<$t>()
                        .ok_or_else(|| crate::err!(Internal, "x dtype"))?;
                    s.solve(b, x)
                })
            };
        }
        let r = crate::error::catch_panic("the solve", || match dtype {
            DType::F32 => one!(f32),
            DType::F64 => one!(f64),
            DType::C64 => one!(c32),
            DType::C128 => one!(c64),
        });
        self.infos.clear();
        self.finish(r)
    }

    /// Solve A x_j = b_j for every j ([`Solver::solve_many`]: block CG for CG, else column by
    /// column), after the checks of [`AnySolver::solve`] for every pair. Each column's outcome is
    /// in [`AnySolver::infos`]; [`AnySolver::info`] holds the column farthest from its rule. [collective]
    pub fn solve_many(&mut self, bs: &[&AnyVec], xs: &mut [&mut AnyVec]) -> Result<Info> {
        let dtype = self
            .op
            .as_ref()
            .map(|o| o.dtype())
            .ok_or_else(|| crate::err!(Internal, "operator"))?;
        let mut infos = Vec::new();
        self.infos.clear();
        macro_rules! many {
            ($t:ty) => {
                self.run::<$t, _>(|s| {
                    let b = bs
                        .iter()
                        .map(|v| v.typed::<$t>())
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| crate::err!(Internal, "b dtype"))?;
                    let mut x = xs
                        .iter_mut()
                        .map(|v| v.typed_mut::<$t>())
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| crate::err!(Internal, "x dtype"))?;
                    infos = s.solve_many(&b, &mut x)?;
                    Ok(s.info())
                })
            };
        }
        let r = crate::error::catch_panic("the solve", || match dtype {
            DType::F32 => many!(f32),
            DType::F64 => many!(f64),
            DType::C64 => many!(c32),
            DType::C128 => many!(c64),
        });
        let info = self.finish(r)?;
        self.infos = infos;
        Ok(info)
    }

    /// The outcome of a solve agreed, recorded and reported as the options ask. [collective]
    fn finish(&mut self, r: Result<Info>) -> Result<Info> {
        let info = self.comm.agree(r)?;
        self.info = info;
        if self.comm.rank() == 0 {
            if self.printing.reason {
                let how = if info.reason.converged() {
                    "converged"
                } else {
                    "did not converge"
                };
                println!(
                    "Linear solve {how} due to {} iterations {}",
                    info.reason.c_name().trim_start_matches("PARLOPS_"),
                    info.iterations
                );
            }
            if self.printing.view {
                print!("{}", self.view());
            }
        }
        if self.printing.log {
            // collective: every rank prints or none (the flag is agreed with the settings)
            let text = crate::solver::log_view::log_view(&self.comm, self.log())?;
            if self.comm.rank() == 0 {
                print!("{text}");
            }
        }
        Ok(info)
    }

    /// `f` on the typed solver of dtype `T`, set up from this one's settings.
    fn run<T: Scalar, R>(&mut self, f: impl FnOnce(&mut Solver<T>) -> Result<R>) -> Result<R>
    where
        Typed: Pick<T>,
    {
        let op = self
            .op
            .as_ref()
            .and_then(|o| o.typed::<T>())
            .ok_or_else(|| crate::err!(Internal, "operator dtype"))?;
        let pc = match &self.pc {
            Some(p) => Some(
                p.typed::<T>()
                    .ok_or_else(|| crate::err!(Internal, "preconditioner dtype"))?,
            ),
            None => None,
        };
        let user = self.monitor.clone();
        let print = self.printing.monitor && self.comm.rank() == 0;
        // -ksp_monitor: PETSc's line on rank 0 (every rank runs the monitor: its presence is agreed)
        let monitor: Option<MonitorFn> = (user.is_some() || self.printing.monitor).then(|| {
            Box::new(move |it: i64, r: f64| {
                if print {
                    println!("{it:3} KSP Residual norm {r:.12e}");
                }
                user.as_ref().is_some_and(|m| m(it, r))
            }) as MonitorFn
        });
        if self
            .typed
            .as_mut()
            .and_then(<Typed as Pick<T>>::pick)
            .is_none()
        {
            self.typed = Some(<Typed as Pick<T>>::wrap(Solver::new(self.method)));
        }
        // the null space, copied to the typed solver when it was set since the last solve
        let current = self
            .typed
            .as_mut()
            .and_then(<Typed as Pick<T>>::pick)
            .map(|s| s.null_space_gen);
        let ns_update = if current != Some(self.null_space_gen) {
            Some(self.typed_null_space::<T>()?)
        } else {
            None
        };
        let solver = self
            .typed
            .as_mut()
            .and_then(<Typed as Pick<T>>::pick)
            .ok_or_else(|| crate::err!(Internal, "typed solver"))?;
        solver.method = self.method;
        solver.params = self.params.clone();
        solver.timing = self.timing || self.printing.log;
        solver.set_operator(op)?;
        let set = std::mem::take(&mut self.pc_set);
        if self.jacobi && set {
            // set again: D^-1 taken again at this solve
            solver.set_jacobi();
        } else if self.jacobi {
            solver.set_jacobi_keep();
        } else {
            solver.set_preconditioner(pc);
        }
        if set {
            solver.reset_reuse();
        }
        solver.set_monitor(monitor);
        solver.set_iterate_monitor(self.watch.clone());
        if let Some(ns) = ns_update {
            solver.set_null_space(ns)?;
            solver.null_space_gen = self.null_space_gen;
        }
        f(solver)
    }
}
