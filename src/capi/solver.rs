//! Solvers: the C types, creating a solver and its settings (running it: `solver_exec.rs`).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::handles::{
    arg, arg_array, arg_mut, enum_arg, give, guard, opt_arg, out_ok, parlops_comm, parlops_op,
    parlops_vec,
};
use super::types::parlops_status;
use crate::solver::any::SharedMonitor;
use crate::solver::{AnySolver, Method, Orthog, PcSide, Reason, Reference, SumOrder, Threshold};

/// Krylov or sparsity method.
pub type parlops_method = i32;
// One constant per line of the method table (src/solver/methods.rs), same value; src/capi/pins.rs
// checks both ways.
/// Conjugate gradients (Hermitian positive definite A and preconditioner). A convergence seen on
/// the recurrence residual is confirmed on the true one, b - A x (one more operator application
/// and reduction); where the rule does not hold there (a tolerance near the attainable accuracy),
/// CG restarts from the true residual and goes on.
pub const PARLOPS_METHOD_CG: parlops_method = 0;
/// CG with one global reduction per iteration (Chronopoulos-Gear). Without a preconditioner on host
/// vectors it moves a few bytes per iteration fewer than CG (the direction and x move on every
/// second iteration only), in fewer, longer passes that find less of their vectors in the cache:
/// 0.95-1.01x CG's time per iteration at 1 rank and 0.95-1.10x at 2 ranks on one node
/// (memory-bound, on a 2-core VM). Pick it where a global reduction costs more than that (many
/// ranks, a slow network). In floating point it may take a few more iterations than CG on long
/// solves. A convergence is confirmed on the true residual as CG's is, and where the rule does not
/// hold there the solve goes on from it.
pub const PARLOPS_METHOD_CG_SINGLE_REDUCTION: parlops_method = 1;
/// Pipelined CG: one non-blocking reduction per iteration, overlapped with the operator (Ghysels-Vanroose).
/// Its recurrences update six vectors; without a preconditioner on a host CSR matrix the update is
/// fused with the product, row block by row block, and the direction and x move on every second
/// iteration only: as many bytes per row and iteration as CG. Its recurrences drift from the true
/// residual b - A x, so it replaces its residual by the true one (four extra operator applications
/// and one reduction) after 100 iterations, then less often while the drift stays small (200, 400,
/// up to 800 iterations apart) and more often when it grows (down to 10); a convergence is
/// confirmed on the true residual, and where that does not meet the rule the solve goes on from it
/// (CG restarted there). Per iteration: 0.95-1.03x CG's time at 1 rank and 0.92-1.11x at 2 ranks
/// on one node (memory-bound, on a 2-core VM). The top of the range comes at sizes where CG's four
/// vectors and the matrix still fit the last-level cache and pipelined CG's six do not; where both
/// fit, or neither, it measured 0.92-1.01x at 2 ranks. Each solve starts with one operator
/// application more than CG's. It pays where a global reduction costs more than that: many ranks, a
/// slow network.
pub const PARLOPS_METHOD_CG_PIPELINED: parlops_method = 2;
/// CGLS: min ||b - A x||^2 + damp^2 ||x||^2 for any (rectangular) A.
pub const PARLOPS_METHOD_CGLS: parlops_method = 3;
/// LSQR (Paige-Saunders), same problem as CGLS.
pub const PARLOPS_METHOD_LSQR: parlops_method = 4;
/// Restarted GMRES(m), right preconditioning.
pub const PARLOPS_METHOD_GMRES: parlops_method = 5;
/// Flexible GMRES(m): the preconditioner may change between iterations.
pub const PARLOPS_METHOD_FGMRES: parlops_method = 6;
/// BiCGStab, right preconditioning.
pub const PARLOPS_METHOD_BICGSTAB: parlops_method = 7;
/// MINRES: Hermitian, possibly indefinite A; positive definite preconditioner. Tests ||r||_M
/// (||r|| without a preconditioner) by the rotations' running product; a convergence is confirmed on
/// the true residual's norm (one more operator and preconditioner application and reduction), and
/// where the rule does not hold there MINRES starts again from it.
pub const PARLOPS_METHOD_MINRES: parlops_method = 8;
/// ISTA: min ||b - A x||^2 + eps R(x) (PyLops' convention) by thresholded gradient steps.
pub const PARLOPS_METHOD_ISTA: parlops_method = 9;
/// FISTA: ISTA with Nesterov acceleration.
pub const PARLOPS_METHOD_FISTA: parlops_method = 10;
/// Richardson iteration x <- x + omega M (b - A x) (PETSc's KSPRICHARDSON, MFEM's SLISolver); tests
/// ||M r|| (||r|| without a preconditioner); omega: parlops_solver_set_richardson_scale.
pub const PARLOPS_METHOD_RICHARDSON: parlops_method = 11;
/// GCRO-DR(m, k): restarted GMRES that keeps k vectors (harmonic Ritz vectors of the smallest
/// harmonic Ritz values) from cycle to cycle and from one solve to the next, for sequences of
/// systems whose operator changes slowly (Krylov subspace recycling; Parks et al. 2006). Right
/// preconditioning, tests ||b - A x||; m: parlops_solver_set_restart (default 30), k:
/// parlops_solver_set_recycle (default m / 3). Each solve with a kept space first applies the
/// (current) operator and preconditioner to it (k applications, not counted as iterations), so the
/// operator and the preconditioner may change between solves; the space then serves the new
/// system. Work vectors: m + 3 k + 3, and the k vectors kept. No eigenvalue estimates; classical
/// Gram-Schmidt, with a second pass for an Arnoldi vector the first pass shrank below 1/sqrt(2) of
/// its norm (one more reduction then). A cycle adds m - k new vectors: with m - k = 1 it can stagnate
/// where GMRES(m) converges, as GMRES(1) does, on an operator whose field of values holds 0 (the
/// solve then ends with PARLOPS_DIVERGED_MAX_ITER).
pub const PARLOPS_METHOD_GCRODR: parlops_method = 12;
/// Deflated CG (def-CG(k, l), Saad et al. 2000) for sequences of Hermitian positive definite systems:
/// CG in the A-orthogonal complement of k kept vectors W, whose part of the solution is taken
/// directly; each solve keeps its first 2 k directions and their products, and leaves for the next
/// solve the Ritz vectors of the k smallest Ritz values of A on [W, those directions] (no extra
/// operator application). Each solve with a kept space applies its own operator to it (k
/// applications, not counted as iterations), so the operator and the preconditioner (Hermitian
/// positive definite) may change between solves. k: parlops_solver_set_recycle (default 8). Tests
/// ||r||; two reductions per iteration, as CG; work vectors 4 + 6 k, and the k kept. Where the
/// kept vectors' part alone meets the rule (k at or above the operator's size, for instance), the
/// solve ends there, confirmed on the true residual, with no CG iteration.
pub const PARLOPS_METHOD_CG_DEFLATED: parlops_method = 13;

/// ISTA/FISTA regulariser.
pub type parlops_threshold = i32;
/// R = ||x||_1 (soft thresholding).
pub const PARLOPS_THRESHOLD_SOFT: parlops_threshold = 0;
/// R = ||x||_0 (hard thresholding).
pub const PARLOPS_THRESHOLD_HARD: parlops_threshold = 1;
/// R = ||x||_{1/2}^{1/2} (half thresholding).
pub const PARLOPS_THRESHOLD_HALF: parlops_threshold = 2;

/// Which residual norm the CG family tests.
pub type parlops_norm_type = i32;
/// ||r||_2 against ||b||_2 (default; PETSc's KSP_NORM_UNPRECONDITIONED).
pub const PARLOPS_NORM_TYPE_UNPRECONDITIONED: parlops_norm_type = 0;
/// sqrt(r^H M r) against sqrt(b^H M b) (PETSc's KSP_NORM_NATURAL; what MFEM's CGSolver tests).
pub const PARLOPS_NORM_TYPE_NATURAL: parlops_norm_type = 1;

/// What rtol is relative to in the stopping rule ||r|| <= max(rtol * ref, atol).
pub type parlops_reference = i32;
/// ref = ||b||, in the norm the method tests (default; PETSc's default test).
pub const PARLOPS_REFERENCE_RHS: parlops_reference = 0;
/// ref = the residual norm at iteration 0, in the norm the method tests (PETSc's
/// KSPConvergedDefaultSetUIRNorm; MFEM's iterative solvers test this way). With a zero initial
/// guess it is ||b|| (CG family, GMRES, BiCGStab, MINRES) or ||A^H b|| (CGLS, LSQR) again; ISTA and
/// FISTA, which test the size of the update, take their first update.
pub const PARLOPS_REFERENCE_INITIAL_RESIDUAL: parlops_reference = 1;

/// Which side the preconditioner is applied on.
pub type parlops_pc_side = i32;
/// The method's own side (default): right for GMRES, FGMRES and BiCGStab, which test the true
/// ||b - A x||; the CG family and MINRES use M's inner product; Richardson tests ||M r||.
pub const PARLOPS_PC_SIDE_DEFAULT: parlops_pc_side = 0;
/// Left: GMRES iterates on M A x = M b and tests ||M (b - A x)|| against ||M b|| (PETSc's PC_LEFT;
/// MFEM's GMRESSolver). Other methods: PARLOPS_ERR_NOT_SUPPORTED.
pub const PARLOPS_PC_LEFT: parlops_pc_side = 1;

/// How GMRES and FGMRES orthogonalise the Arnoldi basis.
pub type parlops_orthog = i32;
/// Classical Gram-Schmidt: all projections of a new vector in one reduction (default).
pub const PARLOPS_ORTHOG_CLASSICAL: parlops_orthog = 0;
/// Modified Gram-Schmidt: one projection and one reduction at a time, k + 1 reductions at the k-th
/// iteration (PETSc's KSPGMRESModifiedGramSchmidtOrthogonalization; MFEM's GMRES and FGMRES).
pub const PARLOPS_ORTHOG_MODIFIED: parlops_orthog = 1;

/// How a solver takes the local sums of its dot products.
pub type parlops_sum_order = i32;
/// Eight accumulators over consecutive entries, added in a fixed order (default): fast (no single
/// chain of dependent additions), the same bits for the same partition on every run.
pub const PARLOPS_SUM_BLOCKED: parlops_sum_order = 0;
/// One accumulator in index order: the rounding of sequential dot products, such as MFEM's (the
/// MFEM adapter sets it, so that its solvers match MFEM's bit for bit). Slower on long vectors.
pub const PARLOPS_SUM_SEQUENTIAL: parlops_sum_order = 1;
/// Reproducible: iterates whose bits do not depend on the number of ranks, the partition or MPI's
/// reduction tree (no other solver library offers it). Every dot product and norm is a binned sum
/// (Demmel and Nguyen's: the terms rounded to fixed bins of 40 bits, the 3 highest bins the
/// largest term needs summed exactly) merged over the ranks by a user-defined MPI operation, and
/// every row of a parlops CSR matrix is summed in one chain in global column order (its adjoint
/// through a conjugate transpose parlops makes at the first adjoint: a second copy of the matrix).
/// Kept by CG, pipelined CG (without its overlap), GMRES and FGMRES (either orthogonalization),
/// BiCGStab, MINRES, Richardson, CGLS and LSQR, with operators and preconditioners that compute each entry of their
/// result from the same values in the same order whatever the split: parlops' CSR matrices,
/// diagonal and Jacobi preconditioners, Chebyshev with the bounds given, and sums, products and
/// scalings of such operators. Not kept by hypre's BoomerAMG, block Jacobi (its blocks are the
/// ranks' rows), Chebyshev with estimated bounds (estimated when it is created, with blocked
/// sums), shell operators that reduce themselves, the matrix-free stencils, or
/// the other methods (a solve with them fails with PARLOPS_ERR_NOT_SUPPORTED). Device vectors keep
/// it too, with the host's bits: a CSR matrix's rows are summed by one thread a row in global column
/// order (a second copy of the matrix on the device, made at the first such product), the
/// element-wise kernels round as the host does, and the dot products are binned on host copies of
/// the vectors (correct, not fast: two copies to the host a dot product); checked under the CPU
/// stand-in for CUDA, not yet on a GPU (docs/gpu.md). Terms of magnitude 2^1007
/// or more count as overflow. Costs:
/// the dot products' pass computes about 12 more operations an entry, the fused passes are not
/// used. Every rank sets the same: the solve agrees it. PARLOPS_SUM_REPRODUCIBLE=1 in the
/// environment makes it every new solver's default.
pub const PARLOPS_SUM_REPRODUCIBLE: parlops_sum_order = 2;

/// Why a solve stopped: > 0 converged, < 0 diverged (PETSc's KSPConvergedReason where it has one).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum parlops_reason {
    /// ||r|| <= rtol ||b|| (the larger of the two bounds)
    PARLOPS_CONVERGED_RTOL = 2,
    /// ||r|| <= atol
    PARLOPS_CONVERGED_ATOL = 3,
    /// The caller's rule: every rank's iterate monitor returned PARLOPS_MONITOR_CONVERGED
    /// (parlops_solver_set_monitor_iterate), with a finite residual norm and solution.
    PARLOPS_CONVERGED_USER = 4,
    /// Trust-region CG (parlops_solver_set_trust_region) met negative curvature, p^H A p <= 0, and
    /// stopped on the boundary along p: the step a trust-region Newton method takes, not a solution.
    PARLOPS_CONVERGED_NEG_CURVE = 5,
    /// Trust-region CG stopped on the boundary of the region (the next step would have left it).
    PARLOPS_CONVERGED_STEP_LENGTH = 6,
    /// ISTA/FISTA: the cost 1/2 ||b - A x||^2 + eps ||x||_1 fell below cost_rtol times the first
    /// iterate's (parlops_solver_set_cost_tolerances; PyLops' CostToInitialCallback).
    PARLOPS_CONVERGED_COST_INITIAL = 10,
    /// ISTA/FISTA: the cost fell below cost_rtol1 ||b|| (PyLops' CostToDataCallback).
    PARLOPS_CONVERGED_COST_DATA = 11,
    /// No solve yet.
    PARLOPS_ITERATING = 0,
    /// max_iter reached.
    PARLOPS_DIVERGED_MAX_ITER = -3,
    /// ||r|| > dtol ||b||.
    PARLOPS_DIVERGED_DTOL = -4,
    /// The method broke down (a zero pivot: p^H A p = 0, rho = 0, ...).
    PARLOPS_DIVERGED_BREAKDOWN = -5,
    /// CG or MINRES met an indefinite matrix or preconditioner.
    PARLOPS_DIVERGED_INDEFINITE_MATRIX = -8,
    /// NaN or Inf anywhere (right-hand side, initial guess, operator, preconditioner, the iteration,
    /// or a solution that is not finite): never reported as a convergence.
    PARLOPS_DIVERGED_NAN = -9,
    /// The monitor asked to stop.
    PARLOPS_DIVERGED_USER = -10,
}

impl From<Reason> for parlops_reason {
    fn from(r: Reason) -> parlops_reason {
        use parlops_reason::*;
        match r {
            Reason::Iterating => PARLOPS_ITERATING,
            Reason::ConvergedRtol => PARLOPS_CONVERGED_RTOL,
            Reason::ConvergedAtol => PARLOPS_CONVERGED_ATOL,
            Reason::ConvergedUser => PARLOPS_CONVERGED_USER,
            Reason::ConvergedNegCurve => PARLOPS_CONVERGED_NEG_CURVE,
            Reason::ConvergedStepLength => PARLOPS_CONVERGED_STEP_LENGTH,
            Reason::ConvergedCostInitial => PARLOPS_CONVERGED_COST_INITIAL,
            Reason::ConvergedCostData => PARLOPS_CONVERGED_COST_DATA,
            Reason::DivergedMaxIter => PARLOPS_DIVERGED_MAX_ITER,
            Reason::DivergedDtol => PARLOPS_DIVERGED_DTOL,
            Reason::DivergedBreakdown => PARLOPS_DIVERGED_BREAKDOWN,
            Reason::DivergedIndefinite => PARLOPS_DIVERGED_INDEFINITE_MATRIX,
            Reason::DivergedNan => PARLOPS_DIVERGED_NAN,
            Reason::DivergedUser => PARLOPS_DIVERGED_USER,
        }
    }
}

/// Outcome of the last solve.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct parlops_solve_info {
    /// Iterations performed.
    pub iterations: i64,
    /// Why it stopped.
    pub reason: parlops_reason,
    /// Residual norm at iteration 0 (the quantity the method tests: see parlops_solver_set_tolerances).
    pub initial_residual_norm: f64,
    /// Residual norm at the last iteration.
    pub final_residual_norm: f64,
    /// ||b||.
    pub rhs_norm: f64,
    /// Least squares (CGLS, LSQR, ISTA, FISTA): ||b - A x|| (recomputed from x); other methods: the
    /// final residual norm. Not PyLops-MPI's cgls `r1norm`, which is its stopping quantity, the
    /// squared normal-equation residual ||A^H (b - A x) - damp^2 x||^2: that is final_residual_norm^2
    /// here (CGLS tests ||A^H (b - A x) - damp^2 x|| against rtol ||A^H b||); PyLops-MPI's `cost`
    /// history is parlops_solver_residual_history.
    pub r1norm: f64,
    /// Least squares: sqrt(||b - A x||^2 + damp^2 ||x||^2); other methods: the final residual norm.
    pub r2norm: f64,
}

/// Monitor callback: called on every rank at every iteration with the residual norm; return
/// non-zero to stop the solve (reason PARLOPS_DIVERGED_USER; any rank asking stops every rank).
pub type parlops_monitor_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, iteration: i64, residual_norm: f64) -> c_int>;

/// A solver (opaque).
pub struct parlops_solver {
    pub(super) inner: AnySolver,
}

impl super::handles::Handle for parlops_solver {
    const KIND: super::handles::Kind = super::handles::Kind::Solver;
}

/// Create a solver for `method` on `comm` (the communicator of the operators it will solve with).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_create(
    comm: *const parlops_comm,
    method: parlops_method,
    out: *mut *mut parlops_solver,
) -> parlops_status {
    guard("parlops_solver_create", || {
        // SAFETY: `arg` checks `comm` against the handle registry (live parlops_comm) and holds it
        // for this call; the reference stays in this closure.
        let c = unsafe { arg(comm, "comm")? };
        out_ok(out, "out")?;
        let m = enum_arg(method, "method", &Method::choices(), Method::from_code)?;
        give(
            out,
            parlops_solver {
                inner: AnySolver::new(c.inner.clone(), m),
            },
        );
        Ok(())
    })
}

/// The operator A (kept by reference). Methods other than CGLS, LSQR, ISTA and FISTA need a square A
/// with equal row and column layouts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_operator(
    s: *mut parlops_solver,
    a: *const parlops_op,
) -> parlops_status {
    guard("parlops_solver_set_operator", || {
        // SAFETY: `arg_mut` checks `s` against the handle registry (live parlops_solver) and holds
        // it exclusively for this call; the reference stays in this closure.
        let s = unsafe { arg_mut(s, "s")? };
        // SAFETY: `arg` checks `a` (live parlops_op, so not the solver `s`) and holds it shared for
        // this call.
        let a = unsafe { arg(a, "A")? };
        s.inner.set_operator(&a.inner, a.ident)
    })
}

/// Preconditioner M^{-1}, any operator applied as z = M r (NULL removes it). Same dtype and layouts
/// as A's columns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_preconditioner(
    s: *mut parlops_solver,
    m: *const parlops_op,
) -> parlops_status {
    guard("parlops_solver_set_preconditioner", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        // SAFETY: `opt_arg` takes NULL as `None` and checks anything else (live parlops_op, not the
        // solver `s`), holding it shared for this call.
        let m = unsafe { opt_arg(m, "M")? };
        s.inner.set_preconditioner(m.map(|m| (&m.inner, m.ident)))
    })
}

/// Jacobi preconditioning from A's diagonal (taken at the next solve, and when A changes). A zero on
/// the diagonal makes that solve fail with PARLOPS_ERR_INVALID_ARGUMENT naming the row.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_jacobi(s: *mut parlops_solver) -> parlops_status {
    guard("parlops_solver_set_jacobi", || {
        // SAFETY: `arg_mut` checks `s` (live parlops_solver) and holds it exclusively for this
        // call.
        unsafe { arg_mut(s, "s")? }.inner.set_jacobi();
        Ok(())
    })
}

/// Stop when ||r|| <= max(rtol ||b||, atol); diverged when ||r|| > dtol ||b|| or after max_iter
/// iterations. ||r|| is the true residual 2-norm for CG, its variants, GMRES, FGMRES and BiCGStab;
/// the M^{-1}-norm for preconditioned MINRES; ||A^H r - damp^2 x|| against ||A^H b|| for CGLS and
/// LSQR; the update ||x_k - x_{k-1}|| against max(rtol, atol) for ISTA and FISTA. Defaults: 1e-5,
/// 1e-50, 1e5, 10000 (PETSc's).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_tolerances(
    s: *mut parlops_solver,
    rtol: f64,
    atol: f64,
    dtol: f64,
    max_iter: i64,
) -> parlops_status {
    guard("parlops_solver_set_tolerances", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        s.inner.set_tolerances(rtol, atol, dtol, max_iter)
    })
}

/// The tolerances set (parlops_solver_set_tolerances, or run-time options): each output may be
/// NULL (not written). Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_get_tolerances(
    s: *const parlops_solver,
    rtol: *mut f64,
    atol: *mut f64,
    dtol: *mut f64,
    max_iter: *mut i64,
) -> parlops_status {
    guard("parlops_solver_get_tolerances", || {
        // SAFETY: `arg` checks `s` (a live parlops_solver) and holds it for this call.
        let s = unsafe { super::handles::arg(s, "s")? };
        let p = &s.inner.params;
        // SAFETY: each output is NULL (skipped) or points to the caller's writable variable of
        // its type (header contract).
        unsafe {
            for (o, v) in [(rtol, p.rtol), (atol, p.atol), (dtol, p.dtol)] {
                if !o.is_null() {
                    *o = v;
                }
            }
            if !max_iter.is_null() {
                *max_iter = p.max_iter;
            }
        }
        Ok(())
    })
}

/// The residual norm tested by CG, single-reduction CG and pipelined CG (other methods:
/// PARLOPS_ERR_NOT_SUPPORTED for PARLOPS_NORM_TYPE_NATURAL). Without a preconditioner both are ||r||.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_norm_type(
    s: *mut parlops_solver,
    norm_type: parlops_norm_type,
) -> parlops_status {
    guard("parlops_solver_set_norm_type", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let natural = enum_arg(
            norm_type,
            "norm_type",
            "PARLOPS_NORM_TYPE_UNPRECONDITIONED = 0 or PARLOPS_NORM_TYPE_NATURAL = 1",
            |c| match c {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
        )?;
        named("norm_type", s.inner.set_natural_norm(natural))
    })
}

/// What rtol is relative to: PARLOPS_REFERENCE_RHS (default: ||r|| <= max(rtol ||b||, atol)) or
/// PARLOPS_REFERENCE_INITIAL_RESIDUAL (||r|| <= max(rtol ||r_0||, atol), in the norm the method
/// tests; MFEM's rule). Honoured by every method; `parlops_solve_info.initial_residual_norm` reports
/// ||r_0||. Every rank must set the same (checked at the solve).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_convergence_reference(
    s: *mut parlops_solver,
    reference: parlops_reference,
) -> parlops_status {
    guard("parlops_solver_set_convergence_reference", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        s.inner.params.reference = enum_arg(
            reference,
            "reference",
            &Reference::choices(),
            Reference::from_code,
        )?;
        Ok(())
    })
}

/// Which side the preconditioner is applied on: PARLOPS_PC_SIDE_DEFAULT or PARLOPS_PC_LEFT (GMRES
/// only; other methods give PARLOPS_ERR_NOT_SUPPORTED). Every rank must set the same (checked at
/// the solve).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_pc_side(
    s: *mut parlops_solver,
    side: parlops_pc_side,
) -> parlops_status {
    guard("parlops_solver_set_pc_side", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let side = enum_arg(side, "side", &PcSide::choices(), PcSide::from_code)?;
        named("side", s.inner.set_pc_side(side))
    })
}

/// GMRES/FGMRES: how the Arnoldi basis is orthogonalised, PARLOPS_ORTHOG_CLASSICAL (default) or
/// PARLOPS_ORTHOG_MODIFIED (other methods: PARLOPS_ERR_NOT_SUPPORTED). Every rank must set the same
/// (checked at the solve).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_orthogonalization(
    s: *mut parlops_solver,
    orthog: parlops_orthog,
) -> parlops_status {
    guard("parlops_solver_set_orthogonalization", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let o = enum_arg(orthog, "orthog", &Orthog::choices(), Orthog::from_code)?;
        named("orthog", s.inner.set_orthog(o))
    })
}

/// How the solver takes the local sums of its dot products: PARLOPS_SUM_BLOCKED (default),
/// PARLOPS_SUM_SEQUENTIAL or PARLOPS_SUM_REPRODUCIBLE. Between the first two only rounding depends
/// on it: ranks may set different orders (every reduced value is the same on every rank); the
/// reproducible order must be set on every rank alike (the solve fails on every rank otherwise).
/// The fused passes of CG and GMRES (a dot taken in the pass that also updates or multiplies) sum
/// in index order in the first two settings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_sum_order(
    s: *mut parlops_solver,
    order: parlops_sum_order,
) -> parlops_status {
    guard("parlops_solver_set_sum_order", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let o = enum_arg(order, "order", &SumOrder::choices(), SumOrder::from_code)?;
        s.inner.params.sum_order = o;
        Ok(())
    })
}

/// The operator's null space, removed by every solve (PETSc's MatSetNullSpace, MFEM's OrthoSolver):
/// the constant vector when `has_constant`, and the `n` vectors of `vecs` (any basis of the rest;
/// copied now, so they may be destroyed). A solve then works on b with the null space removed,
/// removes it from the initial guess and from every preconditioner output, and returns the solution
/// orthogonal to it (zero mean for the constant): the stopping rule applies to the projected b. At
/// the solve, the vectors are orthonormalised (a zero or dependent vector is
/// PARLOPS_ERR_INVALID_ARGUMENT naming it, on every rank) and must fit the operator's columns and
/// dtype. `has_constant` false and `n` 0 remove the null space. Every rank must set the same
/// (checked at the solve). Least-squares methods: PARLOPS_ERR_NOT_SUPPORTED.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_null_space(
    s: *mut parlops_solver,
    has_constant: bool,
    n: c_int,
    vecs: *const *const parlops_vec,
) -> parlops_status {
    guard("parlops_solver_set_null_space", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        // SAFETY: `vecs` holds `n` vector handles when `n` > 0 (header contract); `arg_array`
        // checks the count, NULL and each handle (parlops_vecs, not the solver), and
        // `set_null_space` copies them within this call.
        let vs: Vec<_> = unsafe { arg_array(n, vecs, "n", "vecs")? }
            .into_iter()
            .map(|v| &v.inner)
            .collect();
        s.inner.set_null_space(has_constant, &vs)
    })
}

/// Use x's content as the initial guess (default: zero, and x is overwritten).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_initial_guess_nonzero(
    s: *mut parlops_solver,
    nonzero: bool,
) -> parlops_status {
    guard("parlops_solver_set_initial_guess_nonzero", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        unsafe { arg_mut(s, "s")? }.inner.params.nonzero_guess = nonzero;
        Ok(())
    })
}

/// GMRES/FGMRES restart length m (default 30).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_restart(
    s: *mut parlops_solver,
    m: i64,
) -> parlops_status {
    guard("parlops_solver_set_restart", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        named("m", s.inner.set_restart(m))
    })
}

/// GCRO-DR and deflated CG (PARLOPS_METHOD_GCRODR, _CG_DEFLATED): the number k of vectors they
/// recycle, 0 <= k <= 10000 (GCRO-DR: below the restart length, checked at the solve; default m / 3;
/// deflated CG: default 8). Drops the space kept, so the next solve starts without one: call it when
/// the next system is unrelated (a solve whose x has another layout or memory than the space kept
/// fails on every rank with PARLOPS_ERR_INVALID_ARGUMENT until then). Other methods:
/// PARLOPS_ERR_NOT_SUPPORTED.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_recycle(
    s: *mut parlops_solver,
    k: i64,
) -> parlops_status {
    guard("parlops_solver_set_recycle", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        named("k", s.inner.set_recycle(k))
    })
}

/// CGLS/LSQR damping: minimise ||b - A x||^2 + damp^2 ||x||^2 (PyLops-MPI's `damp`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_damping(
    s: *mut parlops_solver,
    damp: f64,
) -> parlops_status {
    guard("parlops_solver_set_damping", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        named("damp", s.inner.set_damping(damp))
    })
}

/// Richardson (PARLOPS_METHOD_RICHARDSON): the scale omega of x <- x + omega M (b - A x), finite and
/// > 0 (default 1; PETSc's KSPRichardsonSetScale). Other methods ignore it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_richardson_scale(
    s: *mut parlops_solver,
    scale: f64,
) -> parlops_status {
    guard("parlops_solver_set_richardson_scale", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        named("scale", s.inner.set_richardson_scale(scale))
    })
}

/// ISTA/FISTA: the regulariser and its weight eps (default soft, 0.1); `step` > 0 sets the gradient
/// step, 0 derives it as 1 / lambda_max(A^H A) by power iteration (the default).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_sparsity(
    s: *mut parlops_solver,
    kind: parlops_threshold,
    eps: f64,
    step: f64,
) -> parlops_status {
    guard("parlops_solver_set_sparsity", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let k = enum_arg(kind, "kind", &Threshold::choices(), Threshold::from_code)?;
        if !(eps >= 0.0 && eps.is_finite() && step >= 0.0 && step.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "arguments 'eps' ({eps}) and 'step' ({step}) must be finite and >= 0"
            );
        }
        s.inner.params.threshold = k;
        s.inner.params.eps = eps;
        s.inner.params.step = if step > 0.0 { Some(step) } else { None };
        Ok(())
    })
}

/// ISTA/FISTA: stop on the cost J_k = 1/2 ||b - A x_k||^2 + eps ||x_k||_1 (PyLops' cost, its
/// callbacks' rules): when J_k < rtol J_1 (PARLOPS_CONVERGED_COST_INITIAL; CostToInitialCallback)
/// or J_k < rtol1 ||b|| (PARLOPS_CONVERGED_COST_DATA; CostToDataCallback), besides the update rule
/// of parlops_solver_set_tolerances. A NaN or Inf cost ends the solve with PARLOPS_DIVERGED_NAN
/// (CostNanInfCallback). 0 turns a rule off (the default for both). With either on, each
/// iteration makes one more product with A (the cost of the new iterate) and one more reduction.
/// rtol, rtol1 >= 0 and finite. (PyLops-MPI 0.8's ista and fista take rtol and rtol1 but do not
/// stop on them.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_cost_tolerances(
    s: *mut parlops_solver,
    rtol: f64,
    rtol1: f64,
) -> parlops_status {
    guard("parlops_solver_set_cost_tolerances", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        if !(rtol >= 0.0 && rtol.is_finite() && rtol1 >= 0.0 && rtol1.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "arguments 'rtol' ({rtol}) and 'rtol1' ({rtol1}) must be finite and >= 0"
            );
        }
        s.inner.params.cost_rtol = rtol;
        s.inner.params.cost_rtol1 = rtol1;
        Ok(())
    })
}

/// Monitor called at each iteration on every rank (NULL removes it). With a monitor, each iteration
/// also agrees on the stop request (one small reduction).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_monitor(
    s: *mut parlops_solver,
    f: parlops_monitor_fn,
    ctx: *mut c_void,
) -> parlops_status {
    guard("parlops_solver_set_monitor", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        let s = unsafe { arg_mut(s, "s")? };
        let ctx = ctx as usize;
        s.inner.set_monitor(f.map(|f| {
            // SAFETY: `f` is the caller's non-NULL monitor with this signature and `ctx` the
            // context it expects, valid while the monitor is set (header contract of
            // parlops_solver_set_monitor).
            Arc::new(move |it: i64, r: f64| unsafe { f(ctx as *mut c_void, it, r) != 0 })
                as SharedMonitor
        }));
        Ok(())
    })
}

/// Keep the residual norm of every iteration (parlops_solver_history).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_keep_history(
    s: *mut parlops_solver,
    keep: bool,
) -> parlops_status {
    guard("parlops_solver_keep_history", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        unsafe { arg_mut(s, "s")? }.inner.params.keep_history = keep;
        Ok(())
    })
}

/// A setter's refusal, naming the C argument it came from.
pub(crate) fn named(arg: &str, r: crate::error::Result<()>) -> crate::error::Result<()> {
    r.map_err(|e| crate::error::Error::new(e.kind, format!("argument '{arg}': {}", e.msg)))
}
