//! A solver as an operator: y = A^{-1} x by a solve (PETSc's PCKSP and MatCreateSchurComplement's
//! inner KSP, MFEM's "solver is an operator"). The operator takes a snapshot of a solver's method,
//! settings, operator and preconditioner (not its monitor) when it is made, and keeps its own typed solver
//! (with its work vectors) for every apply: later changes to the solver it came from do not reach
//! it, and it may be used as that solver's preconditioner (nested and flexible solves).
//!
//! Each apply solves from a zero initial guess. A solve that does not converge is an error
//! (`NotConverged`, naming the reason and the iterations) unless it ran out of iterations and the
//! operator was made to accept that (a fixed number of inner iterations, as in a CG smoother). The
//! solve is collective and agreed, so the error comes back on every rank together.

use std::sync::{Arc, Mutex};

use super::{Info, Reason, Solver};
use crate::error::Result;
use crate::memory::Location;
use crate::op::{LinearOperator, Op, OpState};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// y = A^{-1} x through a solve.
pub struct Inverse<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    op: Op<T>,
    pc: Option<Op<T>>,
    solver: OpState<Solver<T>>,
    accept_max_iter: bool,
    last: Mutex<Info>,
}

impl<T: Scalar> Inverse<T> {
    /// The inverse of `solver`'s operator (set), solving with `solver`'s settings.
    pub(crate) fn new(solver: Solver<T>, accept_max_iter: bool) -> Result<Inverse<T>> {
        let op = solver.operator().cloned().ok_or_else(|| {
            crate::err!(
                InvalidArgument,
                "argument 's' has no operator: call parlops_solver_set_operator first"
            )
        })?;
        if solver.method.least_squares() {
            crate::bail!(
                NotSupported,
                "argument 's' is a {} solver: an inverse needs a method for square systems",
                solver.method.name()
            );
        }
        Ok(Inverse {
            rows: op.cols().clone(),
            cols: op.rows().clone(),
            pc: solver.preconditioner().cloned(),
            op,
            solver: OpState::new(solver),
            accept_max_iter,
            last: Mutex::new(Info::default()),
        })
    }

    /// The outcome of the last apply.
    pub fn info(&self) -> Info {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T: Scalar> LinearOperator<T> for Inverse<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        // held only for this apply: a second apply from another thread waits its turn here (an early
        // return on one rank would leave the other ranks waiting in the solve); the same thread
        // applying it again from inside the solve (a callback of its operator) is refused on every
        // rank alike (every rank is in that callback) instead of deadlocking
        let mut s = self
            .solver
            .lock(&|| format!("inverse of {}", self.op.describe()))?;
        s.params.nonzero_guess = false;
        let info = s.solve(x, y)?;
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = info;
        let ok = info.reason.converged()
            || (self.accept_max_iter && info.reason == Reason::DivergedMaxIter);
        if !ok {
            crate::bail!(
                NotConverged,
                "the inner {} solve of {} stopped with {} after {} iterations (residual norm {:e}, initial {:e})",
                s.method.name(),
                self.op.describe(),
                info.reason.name(),
                info.iterations,
                info.final_residual_norm,
                info.initial_residual_norm
            );
        }
        Ok(())
    }
    fn backward(&self, _y: &DistVector<T>, _x: &mut DistVector<T>) -> Result<()> {
        crate::bail!(
            NotSupported,
            "{}: the adjoint of an inverse is not available; make the inverse of a solver on A's adjoint",
            self.describe()
        )
    }
    fn handles(&self, loc: Location) -> bool {
        self.op.handles(loc) && self.pc.as_ref().is_none_or(|m| m.handles(loc))
    }
    fn describe(&self) -> String {
        let s = self
            .solver
            .try_peek(|s| s.method.name())
            .unwrap_or("solver");
        format!("inverse of {} by {}", self.op.describe(), s)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        std::iter::once(&self.op).chain(&self.pc).collect()
    }
    fn view_details(&self) -> Vec<String> {
        self.solver
            .try_peek(|s| {
                let p = &s.params;
                vec![format!(
                    "solves with {}: rtol {:e}, atol {:e}, max_iter {}{}",
                    s.method.name(),
                    p.rtol,
                    p.atol,
                    p.max_iter,
                    if self.accept_max_iter {
                        ", its result taken after max_iter too"
                    } else {
                        ""
                    }
                )]
            })
            .unwrap_or_else(|| vec!["(its solver is running: settings not shown)".into()])
    }
}
