//! Krylov and sparsity solvers with PETSc manners: one handle per solver, tolerances with the rule
//! ||r|| <= max(rtol ||b||, atol), divergence when ||r|| > dtol ||b||, a converged reason, residual
//! history, a monitor that may stop the solve, and work vectors reused across solves.
//!
//! Every method runs on any [`LinearOperator`] of any dtype. A local failure (an operator or
//! preconditioner that fails on one rank) is carried into the next global reduction, so every rank
//! stops together with that rank's message; breakdowns are decided from reduced values, hence the
//! same on every rank.

pub mod any;
mod bicgstab;
mod cg;
mod cg_block;
mod cg_defl;
mod cg_pipe;
mod cg_sr;
mod cgls;
pub mod chebyshev;
mod common;
mod ctx;
mod drive;
pub(crate) mod eig;
mod gcrodr;
mod gmres;
mod harmonic;
pub mod inverse;
mod ista;
pub mod log_view;
mod lsqr;
mod methods;
mod minres;
mod nullspace;
pub mod options;
pub mod options_apply;
pub mod power;
pub mod prox;
pub mod prox_op;
pub mod proximal;
mod richardson;
pub mod settings;
mod trust;

pub use any::AnySolver;
pub(crate) use common::*;
pub(crate) use ctx::{Ctx, Work, Workspace, square, with_vecs2};
pub use methods::{Method, Orthog, PcSide, Reason, Reference, SumOrder, Threshold};

use std::sync::Arc;

use crate::error::Result;
use crate::memory::Location;
use crate::op::basic::Diagonal;
use crate::op::{LinearOperator, Op};
use crate::scalar::Scalar;
use crate::vector::DistVector;

/// Solver settings (PETSc's defaults for the tolerances).
#[derive(Clone, Debug)]
pub struct Params {
    pub rtol: f64,
    pub atol: f64,
    pub dtol: f64,
    pub max_iter: i64,
    pub nonzero_guess: bool,
    pub restart: usize,
    /// GCRO-DR: the number k of vectors recycled (None: restart / 3).
    pub recycle: Option<usize>,
    pub damp: f64,
    pub keep_history: bool,
    pub threshold: Threshold,
    pub eps: f64,
    /// ISTA/FISTA step; None: 1 / largest eigenvalue of A^H A by power iteration
    pub step: Option<f64>,
    /// ISTA/FISTA: stop when the cost J = 1/2 ||b - A x||^2 + eps ||x||_1 falls below this times
    /// the first iterate's cost (PyLops' CostToInitialCallback); 0: off.
    pub cost_rtol: f64,
    /// ISTA/FISTA: stop when J falls below this times ||b|| (PyLops' CostToDataCallback); 0: off.
    pub cost_rtol1: f64,
    /// CG family: test the natural norm sqrt(r^H M r) against sqrt(b^H M b) (MFEM's CGSolver)
    /// instead of ||r|| against ||b||.
    pub natural_norm: bool,
    /// What rtol is relative to.
    pub reference: Reference,
    /// Richardson: the scale omega of x <- x + omega M (b - A x).
    pub scale: f64,
    /// Which side the preconditioner is applied on (left: GMRES only).
    pub pc_side: PcSide,
    /// Record what the eigenvalue estimates need (CG's coefficients, GMRES's Hessenberg matrix).
    pub compute_eigs: bool,
    /// GMRES/FGMRES: how the Arnoldi basis is orthogonalised.
    pub orthog: Orthog,
    /// How the local sums of dot products are taken.
    pub sum_order: SumOrder,
    /// CG: the trust-region radius (Steihaug-Toint; 0: none) in the norm of the inverse of the
    /// preconditioner (the Euclidean norm without one).
    pub trust_radius: f64,
    /// The preconditioner's reuse policy when the values it was computed from change: set it up
    /// again at the first solve after the change, then at most every `pc_reuse_every`-th solve
    /// (1: at every solve after a change; 0: never by count).
    pub pc_reuse_every: i64,
    /// ... or when a solve took more than `pc_reuse_growth` times the iterations of the first solve
    /// after the last set-up (0: off).
    pub pc_reuse_growth: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rtol: 1e-5,
            atol: 1e-50,
            dtol: 1e5,
            max_iter: 10000,
            nonzero_guess: false,
            restart: 30,
            recycle: None,
            damp: 0.0,
            keep_history: false,
            threshold: Threshold::Soft,
            eps: 0.1,
            step: None,
            cost_rtol: 0.0,
            cost_rtol1: 0.0,
            natural_norm: false,
            reference: Reference::Rhs,
            scale: 1.0,
            pc_side: PcSide::Default,
            compute_eigs: false,
            orthog: Orthog::Classical,
            sum_order: if crate::config::sum_reproducible() {
                SumOrder::Reproducible
            } else {
                SumOrder::Blocked
            },
            trust_radius: 0.0,
            pc_reuse_every: 1,
            pc_reuse_growth: 0.0,
        }
    }
}

impl Params {
    /// The settings that steer the iteration, as integers (floats by their bits): every rank must
    /// pass the same, or ranks would stop at different iterations and wait for each other. Built by
    /// destructuring every field, so that a new field does not compile until it is listed here (or
    /// named as free to differ).
    pub fn agreement_values(&self) -> Vec<(&'static str, i64)> {
        let Params {
            rtol,
            atol,
            dtol,
            max_iter,
            nonzero_guess,
            restart,
            recycle,
            damp,
            keep_history: _, // only records the norms: ranks may differ
            threshold,
            eps,
            step,
            cost_rtol,
            cost_rtol1,
            natural_norm,
            reference,
            scale,
            pc_side,
            compute_eigs: _, // only records: ranks may differ
            orthog,
            // blocked or sequential is rounding only (the reductions give every rank the same
            // values); the reproducible mode reduces binned sums: every rank alike
            sum_order,
            trust_radius,
            pc_reuse_every,
            pc_reuse_growth,
        } = *self;
        vec![
            ("max_iter", max_iter),
            ("restart", restart as i64),
            ("recycle", recycle.map_or(-1, |k| k as i64)),
            ("initial guess nonzero", nonzero_guess as i64),
            ("norm type", natural_norm as i64),
            ("convergence reference", reference.code() as i64),
            ("threshold", threshold.code() as i64),
            ("rtol", rtol.to_bits() as i64),
            ("atol", atol.to_bits() as i64),
            ("dtol", dtol.to_bits() as i64),
            ("damping", damp.to_bits() as i64),
            ("eps", eps.to_bits() as i64),
            ("step", step.map_or(-1, |s| s.to_bits() as i64)),
            ("cost rtol", cost_rtol.to_bits() as i64),
            ("cost rtol1", cost_rtol1.to_bits() as i64),
            ("Richardson scale", scale.to_bits() as i64),
            ("preconditioner side", pc_side.code() as i64),
            ("orthogonalization", orthog.code() as i64),
            (
                "reproducible sums",
                (sum_order == SumOrder::Reproducible) as i64,
            ),
            ("trust-region radius", trust_radius.to_bits() as i64),
            ("preconditioner reuse (every)", pc_reuse_every),
            (
                "preconditioner reuse (growth)",
                pc_reuse_growth.to_bits() as i64,
            ),
        ]
    }
}

/// What a solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Info {
    pub iterations: i64,
    pub reason: Reason,
    pub initial_residual_norm: f64,
    pub final_residual_norm: f64,
    pub rhs_norm: f64,
    /// Least squares: ||b - A x||, and sqrt(||b - A x||^2 + damp^2 ||x||^2) (CGLS, LSQR, ISTA, FISTA).
    pub r1norm: f64,
    pub r2norm: f64,
}

impl Default for Info {
    fn default() -> Info {
        Info {
            iterations: 0,
            reason: Reason::Iterating,
            initial_residual_norm: 0.0,
            final_residual_norm: 0.0,
            rhs_norm: 0.0,
            r1norm: 0.0,
            r2norm: 0.0,
        }
    }
}

/// Monitor: (iteration, residual norm) -> true to stop the solve.
pub type MonitorFn = Box<dyn FnMut(i64, f64) -> bool + Send>;

/// What a monitor that sees the iterate asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonitorAction {
    /// Go on.
    Continue,
    /// Stop now ([`Reason::DivergedUser`] when any rank asks).
    Stop,
    /// The caller's own rule holds ([`Reason::ConvergedUser`] when every rank says so, unless the
    /// residual norm is not finite).
    Converged,
}

/// A monitor that sees the iterate: (iteration, the method's residual norm, [x, b - A x]) -> (what
/// to do, the two vectors handed back). The vectors are the solver's copies, in x's memory; handed
/// back, they are reused at the next call (a monitor that keeps them gets new ones).
pub type IterateMonitor = Arc<
    dyn Fn(
            i64,
            f64,
            [crate::vector::AnyVec; 2],
        ) -> (MonitorAction, Option<[crate::vector::AnyVec; 2]>)
        + Send
        + Sync,
>;

/// The driver's last check (on by default): a method that claims convergence must leave a finite x.
static FINAL_CHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Switch the driver's final check off (tests use this to see what the methods decide by themselves).
#[doc(hidden)]
pub fn set_final_check(on: bool) {
    FINAL_CHECK.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A solver for operators of element type `T`.
pub struct Solver<T: Scalar> {
    pub method: Method,
    pub params: Params,
    op: Option<Op<T>>,
    pc: Option<Op<T>>,
    jacobi: bool,
    /// The Jacobi preconditioner made for an operator (its address) at a values version.
    jacobi_op: Option<(usize, u64, Op<T>)>,
    /// Where the preconditioner stands in its reuse policy ([`Params::pc_reuse_every`]).
    reuse: Reuse,
    monitor: Option<MonitorFn>,
    /// A monitor that sees x and r, and the copies of x and r it is handed.
    watch: Option<IterateMonitor>,
    views: Option<[crate::vector::AnyVec; 2]>,
    history: Vec<f64>,
    /// Least squares: ||b - A x|| per iteration (PyLops-MPI's `cost`), with `keep_history`.
    residual_history: Vec<f64>,
    eig: eig::EigRecord,
    info: Info,
    /// Each column's outcome of the last solve ([`Solver::solve_many`]; one for [`Solver::solve`]).
    infos: Vec<Info>,
    ws: Workspace<T>,
    /// A null space to remove: (the constant vector, other vectors) ([`Solver::set_null_space`]).
    null_space: Option<(bool, Vec<DistVector<T>>)>,
    /// Which setting of the run-time typed solver `null_space` was copied from.
    pub(crate) null_space_gen: u64,
    /// Record where each solve's time goes ([`crate::timing`]; off by default: an event costs about
    /// 0.1 us, a tenth of a CG iteration's time at 1,000 rows).
    pub timing: bool,
    log: Option<crate::timing::Totals>,
}

impl<T: Scalar> Solver<T> {
    pub fn new(method: Method) -> Solver<T> {
        Solver {
            method,
            params: Params::default(),
            op: None,
            pc: None,
            jacobi: false,
            jacobi_op: None,
            reuse: Reuse::default(),
            monitor: None,
            watch: None,
            views: None,
            history: Vec::new(),
            residual_history: Vec::new(),
            eig: eig::EigRecord::default(),
            info: Info::default(),
            infos: Vec::new(),
            ws: Workspace::new(),
            null_space: None,
            null_space_gen: 0,
            timing: false,
            log: None,
        }
    }

    /// Forget GCRO-DR's recycled space (the next solve starts without one).
    pub fn drop_recycle(&mut self) {
        let v = std::mem::take(&mut self.ws.recycle);
        self.ws.put(v);
    }

    /// The number of vectors GCRO-DR keeps for the next solve.
    pub fn recycled(&self) -> usize {
        self.ws.recycle.len()
    }

    /// Where the last solve's time went on this rank (with [`Solver::timing`]).
    pub fn log(&self) -> Option<&crate::timing::Totals> {
        self.log.as_ref()
    }

    /// A null space of the operator to remove (PETSc's MatSetNullSpace): the constant vector (with
    /// `constant`) and `vecs` (any basis; orthonormalised at each solve, a dependent vector is an
    /// error then). The solve removes it from b, the initial guess, every preconditioner output and
    /// the solution, which is then the one orthogonal to it. `None` removes the null space.
    /// Least-squares methods: NotSupported.
    pub fn set_null_space(&mut self, ns: Option<(bool, Vec<DistVector<T>>)>) -> Result<()> {
        if ns.is_some() && self.method.least_squares() {
            crate::bail!(
                NotSupported,
                "a null space is for square solves; {} solves least squares",
                self.method.name()
            );
        }
        self.null_space = ns.filter(|(c, v)| *c || !v.is_empty());
        Ok(())
    }

    pub fn set_operator(&mut self, op: Op<T>) -> Result<()> {
        if !self.method.least_squares() && !op.rows().compatible(op.cols()) {
            crate::bail!(
                SizeMismatch,
                "{} needs a square operator with equal row and column layouts; {} is {}x{} (rows split as {:?}, columns as {:?}); \
                 use CGLS or LSQR for least squares",
                self.method.name(),
                op.describe(),
                op.rows().global_len(),
                op.cols().global_len(),
                op.rows().local_lens(),
                op.cols().local_lens()
            );
        }
        let same = self.op.as_ref().is_some_and(|o| Arc::ptr_eq(o, &op));
        if !same {
            self.jacobi_op = None;
        }
        self.op = Some(op);
        Ok(())
    }

    /// M^{-1} applied as z = M r; `None` removes it.
    pub fn set_preconditioner(&mut self, pc: Option<Op<T>>) {
        let same = match (&self.pc, &pc) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.reuse = Reuse::default();
        }
        self.pc = pc;
        self.jacobi = false;
    }

    /// Start the preconditioner's reuse policy afresh (a caller set it again).
    pub fn reset_reuse(&mut self) {
        self.reuse = Reuse::default();
    }

    /// Jacobi from the operator's diagonal (computed at the next solve, and again when the operator changes).
    pub fn set_jacobi(&mut self) {
        self.jacobi = true;
        self.pc = None;
        self.jacobi_op = None;
    }

    /// Jacobi, keeping a diagonal already computed for the same operator.
    pub fn set_jacobi_keep(&mut self) {
        self.jacobi = true;
        self.pc = None;
    }

    pub fn set_monitor(&mut self, m: Option<MonitorFn>) {
        self.monitor = m;
    }

    /// A monitor that sees the iterate and its residual b - A x at every convergence test (one more
    /// operator application and two vector copies per iteration; GMRES and FGMRES also form the
    /// iterate of the cycle); `None` removes it.
    pub fn set_iterate_monitor(&mut self, m: Option<IterateMonitor>) {
        self.watch = m;
    }

    pub fn info(&self) -> Info {
        self.info
    }
    /// Each column's outcome of the last solve.
    pub fn infos(&self) -> &[Info] {
        &self.infos
    }
    pub fn history(&self) -> &[f64] {
        &self.history
    }
    /// Least squares (CGLS, LSQR): ||b - A x|| of every iteration from 0 (LSQR: its estimate
    /// sqrt(||b - A x||^2 + damp^2 ||x||^2)), with `params.keep_history`; empty for other methods.
    pub fn residual_history(&self) -> &[f64] {
        &self.residual_history
    }
    /// The extreme eigenvalue (CG) or singular value (GMRES, FGMRES) estimates of the last solve
    /// made with `params.compute_eigs`.
    pub fn eigenvalue_estimates(&self) -> Result<(f64, f64)> {
        eig::supported(self.method)?;
        self.eig
            .extremes()
            .map_err(|e| crate::err!(InvalidArgument, "no eigenvalue estimates: {e}"))
    }
    pub fn operator(&self) -> Option<&Op<T>> {
        self.op.as_ref()
    }
    pub fn preconditioner(&self) -> Option<&Op<T>> {
        self.pc.as_ref()
    }

    /// The inverse diagonal as an operator; zero or non-finite diagonal entries are an error (on
    /// every rank). Made again when the operator's values changed and the reuse policy says so.
    fn jacobi_pc(&mut self, op: &Op<T>) -> Result<Op<T>> {
        let key = Arc::as_ptr(op) as *const u8 as usize;
        let version = crate::op::tree::version(op.as_ref());
        if let Some((k, v, j)) = &self.jacobi_op
            && *k == key
            && (*v == version || !self.reuse.due(&self.params))
        {
            return Ok(j.clone());
        }
        let d = inverse_diagonal(op.as_ref(), "Jacobi")?;
        crate::timing::note(crate::timing::Phase::Setup, 1);
        let j = op.rows().comm().agree(Diagonal::new(&d))?;
        let j: Op<T> = Arc::new(j);
        self.jacobi_op = Some((key, version, j.clone()));
        self.reuse = Reuse::default();
        Ok(j)
    }

    /// The preconditioner's set-up again where its values changed and the reuse policy says so,
    /// unless a running solve (an outer one, when this solve runs inside it) holds it. The decision
    /// is agreed (any rank that wants it: every rank refreshes), since the policy's counts are kept
    /// per rank. [collective]
    fn follow(&mut self, pc: &Op<T>) -> Result<()> {
        let tree = pc.as_ref();
        // a set-up run since the policy last counted (a caller's refresh, another solver's) starts
        // the count afresh
        let setups = crate::op::tree::setups(tree);
        if setups != self.reuse.setups {
            self.reuse = Reuse::after(setups);
        }
        let want = self.reuse.due(&self.params)
            && crate::op::tree::stale(tree)
            && !crate::op::tree::setup_pinned(tree);
        let all = pc.rows().comm().agree_with(Ok(()), &[i64::from(want)])?;
        if all.iter().any(|w| w[0] != 0) {
            let ran = crate::op::tree::refresh(tree, false)?;
            crate::timing::note(crate::timing::Phase::Setup, ran);
            self.reuse = Reuse::after(crate::op::tree::setups(tree));
        }
        Ok(())
    }

    /// Solve A x = b (least squares for CGLS, LSQR, ISTA, FISTA); x holds the initial guess when
    /// `params.nonzero_guess`. The outcome is in [`Solver::info`]; a diverged solve is not an error. [collective]
    pub fn solve(&mut self, b: &DistVector<T>, x: &mut DistVector<T>) -> Result<Info> {
        // the outermost solve on this thread records (a solve inside a preconditioner is a part
        // of the outer one's)
        self.timed(|s| s.solve_untimed(b, x))
    }

    /// `f`, recorded as one solve where it is the outermost on this thread.
    fn timed<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let started = self.timing && crate::timing::start();
        let t0 = std::time::Instant::now();
        let r = f(self);
        if started {
            let mut t = crate::timing::stop();
            t.wall = t0.elapsed().as_secs_f64();
            crate::timing::accumulate(&t);
            self.log = Some(t);
        }
        r
    }
}

/// A preconditioner's place in its reuse policy: the solves since its last set-up, the iterations
/// of the first and the last of them, and the set-ups its tree had run then.
#[derive(Clone, Copy, Debug, Default)]
struct Reuse {
    since: i64,
    first: Option<i64>,
    last: Option<i64>,
    setups: u64,
}

impl Reuse {
    /// The count from a set-up, the tree having run `setups`.
    fn after(setups: u64) -> Reuse {
        Reuse {
            setups,
            ..Reuse::default()
        }
    }
    /// Is a set-up due, should the values have changed?
    fn due(&self, p: &Params) -> bool {
        let by_count = p.pc_reuse_every > 0 && (self.since == 0 || self.since >= p.pc_reuse_every);
        let by_growth = p.pc_reuse_growth > 0.0
            && matches!((self.first, self.last),
                (Some(f), Some(l)) if l as f64 > p.pc_reuse_growth * f.max(1) as f64);
        by_count || by_growth
    }
    fn solved(&mut self, iterations: i64) {
        self.since += 1;
        self.first.get_or_insert(iterations);
        self.last = Some(iterations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn petsc_style_numbers() {
        assert_eq!(sci(8.0), "8.000000000000e+00");
        assert_eq!(sci(0.0123), "1.230000000000e-02");
        assert_eq!(sci(-2.5e10), "-2.500000000000e+10");
        assert_eq!(sci(9.9999999999999), "1.000000000000e+01");
    }
    #[test]
    fn every_steering_setting_is_agreed() {
        // each change of a setting that steers the iteration changes the agreed values
        let base = Params::default().agreement_values();
        let changes: [fn(&mut Params); 21] = [
            |p| p.cost_rtol = 0.1,
            |p| p.cost_rtol1 = 0.1,
            |p| p.recycle = Some(4),
            |p| p.pc_reuse_every = 10,
            |p| p.pc_reuse_growth = 1.5,
            |p| p.rtol = 1e-3,
            |p| p.atol = 1e-9,
            |p| p.dtol = 7.0,
            |p| p.max_iter = 3,
            |p| p.nonzero_guess = true,
            |p| p.restart = 5,
            |p| p.damp = 0.5,
            |p| p.threshold = Threshold::Half,
            |p| p.eps = 0.25,
            |p| p.step = Some(0.5),
            |p| p.natural_norm = true,
            |p| p.reference = Reference::InitialResidual,
            |p| p.scale = 0.5,
            |p| p.pc_side = PcSide::Left,
            |p| p.orthog = Orthog::Modified,
            |p| p.sum_order = SumOrder::Reproducible,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut p = Params::default();
            change(&mut p);
            assert_ne!(p.agreement_values(), base, "change {i} is not agreed");
        }
        let p = Params {
            keep_history: true,
            sum_order: SumOrder::Sequential,
            ..Params::default()
        };
        assert_eq!(p.agreement_values(), base);
    }
}
