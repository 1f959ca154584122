//! Solver settings for inexact-Newton and inverse-problem codes (hIPPYlib's, PyLops-MPI's): the
//! monitor that sees the iterate (callback type, return values, setter) and the trust region.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::handles::{arg_mut, guard, lend, parlops_vec, reclaim};
use super::solver::parlops_solver;
use super::types::parlops_status;
use crate::solver::Method;
use crate::solver::{IterateMonitor, MonitorAction};

/// What an iterate monitor returns.
pub type parlops_monitor_action = i32;
/// Go on.
pub const PARLOPS_MONITOR_CONTINUE: parlops_monitor_action = 0;
/// Stop now: PARLOPS_DIVERGED_USER (any rank asking stops every rank). Any value other than the
/// three named ones stops too.
pub const PARLOPS_MONITOR_STOP: parlops_monitor_action = 1;
/// The caller's own stopping rule holds: PARLOPS_CONVERGED_USER when every rank returns it (a rank
/// that returns PARLOPS_MONITOR_CONTINUE keeps the solve going), unless the residual norm or the
/// solution is not finite (PARLOPS_DIVERGED_NAN).
pub const PARLOPS_MONITOR_CONVERGED: parlops_monitor_action = 2;

/// Iterate monitor: called on every rank at every convergence test with the iteration, the residual
/// norm the method tests, the current iterate `x` and its residual `r` = b - A x (least squares: of
/// A's row layout), and returns a parlops_monitor_action. `x` and `r` are copies lent for the call
/// (valid until it returns; read them with parlops_vec_copy_to_host, parlops_vec_norm,
/// parlops_vec_dot, ...: collective calls are allowed, every rank is in the callback at once; do not
/// destroy them). GMRES and FGMRES form the iterate of the current cycle for it; with a null space
/// they are those of the projected system.
pub type parlops_monitor_iterate_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        iteration: i64,
        residual_norm: f64,
        x: *const parlops_vec,
        r: *const parlops_vec,
    ) -> c_int,
>;

/// Set the iterate monitor (NULL removes it; it may be set beside parlops_solver_set_monitor's).
/// Each convergence test then also copies x, applies the operator once for r and agrees on the
/// monitors' answers (one small reduction). Every rank must set one or none. Not kept by
/// parlops_op_create_inverse.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_monitor_iterate(
    s: *mut parlops_solver,
    f: parlops_monitor_iterate_fn,
    ctx: *mut c_void,
) -> parlops_status {
    guard("parlops_solver_set_monitor_iterate", || {
        // SAFETY: `arg_mut` checks `s` against the handle registry (live parlops_solver) and holds
        // it exclusively for this call; the reference stays in this closure.
        let s = unsafe { arg_mut(s, "s")? };
        let ctx = ctx as usize;
        s.inner.set_iterate_monitor(f.map(|f| {
            Arc::new(
                move |it: i64, rnorm: f64, [x, r]: [crate::vector::AnyVec; 2]| {
                    let xh = lend(parlops_vec { inner: x });
                    let rh = lend(parlops_vec { inner: r });
                    // SAFETY: `f` is the caller's non-NULL callback with this signature and `ctx`
                    // the context it expects (header contract of
                    // parlops_solver_set_monitor_iterate); `xh` and `rh` are live handles lent for
                    // exactly the length of this call.
                    let code = unsafe { f(ctx as *mut c_void, it, rnorm, xh, rh) };
                    // SAFETY: `xh` and `rh` came from `lend` just above; `reclaim` takes each back
                    // only when the registry still has it with no running call holding it, so a
                    // handle the callback still uses is left alone.
                    let back = match unsafe { (reclaim(xh), reclaim(rh)) } {
                        (Some(x), Some(r)) => Some([x.inner, r.inner]),
                        _ => None,
                    };
                    let action = match code {
                        PARLOPS_MONITOR_CONTINUE => MonitorAction::Continue,
                        PARLOPS_MONITOR_CONVERGED => MonitorAction::Converged,
                        _ => MonitorAction::Stop,
                    };
                    (action, back)
                },
            ) as IterateMonitor
        }));
        Ok(())
    })
}

/// Trust-region CG (Steihaug-Toint; PETSc's KSPSTCG, hIPPYlib's CGSolverSteihaug) for the inner solve
/// of a Newton-CG method: with `radius` > 0, CG from a zero guess stops on the boundary of the region
/// ||x||_P <= radius when a step would leave it (PARLOPS_CONVERGED_STEP_LENGTH) or when it meets
/// negative curvature, p^H A p <= 0 (PARLOPS_CONVERGED_NEG_CURVE: the boundary point along p), instead
/// of failing; otherwise it stops as CG does. P is the inverse of the preconditioner (the norm
/// hIPPYlib's trust region takes when its preconditioner is the inverse of its norm matrix), the
/// Euclidean norm without one; tracked by recurrences, at no extra cost. 0 turns it off. For
/// PARLOPS_METHOD_CG only (PARLOPS_ERR_NOT_SUPPORTED otherwise); a solve with a nonzero initial guess
/// fails (PARLOPS_ERR_INVALID_ARGUMENT); parlops_op_create_inverse refuses it. hIPPYlib tests
/// sqrt(r^H M r) against its initial value: parlops_solver_set_norm_type(PARLOPS_NORM_TYPE_NATURAL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_trust_region(
    s: *mut parlops_solver,
    radius: f64,
) -> parlops_status {
    guard("parlops_solver_set_trust_region", || {
        // SAFETY: `arg_mut` checks `s` (live parlops_solver) and holds it exclusively for this
        // call.
        let s = unsafe { arg_mut(s, "s")? };
        if !(radius >= 0.0 && radius.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "radius must be finite and >= 0 (0: no trust region); got {radius}"
            );
        }
        if radius > 0.0 && s.inner.method() != Method::Cg {
            crate::bail!(
                NotSupported,
                "a trust region is for PARLOPS_METHOD_CG; this solver runs {}",
                s.inner.method().name()
            );
        }
        s.inner.params.trust_radius = radius;
        Ok(())
    })
}

/// When the solver sets its preconditioner up again after the values it was computed from changed
/// (parlops_op_csr_update_values on its matrix): PETSc's KSPSetReusePreconditioner and SNES's lag,
/// AmgX's resetup. At a solve whose preconditioner (or, for parlops_solver_set_jacobi, operator) has
/// changed values, parlops_op_refresh runs first when: it is the first solve since the last set-up,
/// or `every` > 0 and `every` solves have run since then, or `growth` > 0 and the last solve took
/// more than `growth` times the iterations of the first solve since then. every = 1, growth = 0 (the
/// default): at every solve after a change. every = 0, growth = 0: never (refresh by hand). every =
/// 10: at most every 10th solve. every = 0, growth = 1.5: when the iterations grew by half. The first
/// rule needs `every` > 0. Settings ranks must agree on (checked at the solve).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_pc_reuse(
    s: *mut parlops_solver,
    every: i64,
    growth: f64,
) -> parlops_status {
    guard("parlops_solver_set_pc_reuse", || {
        // SAFETY: `arg_mut` checks `s` (live parlops_solver) and holds it exclusively for this
        // call.
        let s = unsafe { arg_mut(s, "s")? };
        s.inner.set_pc_reuse(every, growth)
    })
}

/// What the next solve will run, as text (PETSc's -ksp_view): the method, its tolerances and
/// stopping rule, its other settings (restart, orthogonalization, preconditioner side, sums, reuse
/// policy, null space), how device data moves on the communicator, and the trees of the operator and
/// the preconditioner: each operator's kind, element type, sizes and split over the ranks, the
/// set-ups it ran, hypre's options as hypre receives them, a nested solver's settings. Local (this
/// rank's settings: print it on one rank). Writes at most `len` bytes including the final NUL into
/// `buf` (which may be NULL when `len` is 0); `*needed` (may be NULL) gets the full length plus one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_view(
    s: *const parlops_solver,
    buf: *mut std::ffi::c_char,
    len: usize,
    needed: *mut usize,
) -> parlops_status {
    guard("parlops_solver_view", || {
        // SAFETY: `arg` checks `s` (live parlops_solver) and holds it shared for this call.
        let s = unsafe { super::handles::arg(s, "s")? };
        if buf.is_null() && len > 0 {
            crate::bail!(NullArgument, "argument 'buf' is NULL but 'len' is {len}");
        }
        let text = s.inner.view();
        // SAFETY: `len` > 0 means `buf` is not NULL (checked above); the rest is the header's
        // contract, passed on.
        unsafe { super::misc::write_text(&text, buf, len, needed) };
        Ok(())
    })
}

/// A phase of a solve, for parlops_solver_log.
pub type parlops_log_phase = i32;
/// Preconditioner set-ups (a refresh by the reuse policy, Jacobi's D^-1).
pub const PARLOPS_LOG_SETUP: parlops_log_phase = 0;
/// Applications of the operator A.
pub const PARLOPS_LOG_OPERATOR: parlops_log_phase = 1;
/// Applications of the preconditioner M.
pub const PARLOPS_LOG_PRECONDITIONER: parlops_log_phase = 2;
/// Reductions over the ranks (the time waiting in them included; bytes reduced).
pub const PARLOPS_LOG_REDUCTION: parlops_log_phase = 3;
/// Halo exchanges of sparse products (bytes sent and received).
pub const PARLOPS_LOG_HALO: parlops_log_phase = 4;
/// Vector passes: vector kernels, the local parts of dot products, the solvers' fused passes.
pub const PARLOPS_LOG_VECTOR: parlops_log_phase = 5;
/// Copies between host and device memory (bytes).
pub const PARLOPS_LOG_COPY: parlops_log_phase = 6;
/// The whole solve (count 1, its wall time).
pub const PARLOPS_LOG_SOLVE: parlops_log_phase = 7;
/// The solve's time outside every phase above (the method's own scalar work and calls).
pub const PARLOPS_LOG_REST: parlops_log_phase = 8;

/// Where the last solve's time went on this rank (recorded with parlops_solver_set_timing, -log_view
/// or PARLOPS_LOG=1): the `phase`'s event count, its seconds (what runs
/// inside it included: a halo exchange inside an operator application counts in both), its seconds
/// outside every other phase (these add up, with PARLOPS_LOG_REST, to PARLOPS_LOG_SOLVE's), and
/// its bytes. Each output may be NULL. Before any solve recorded, all are 0. A solve inside another
/// (an inverse used as a preconditioner) is counted in the outer solve's phases, not here. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_log(
    s: *const parlops_solver,
    phase: parlops_log_phase,
    count: *mut i64,
    seconds: *mut f64,
    outside_seconds: *mut f64,
    bytes: *mut i64,
) -> parlops_status {
    guard("parlops_solver_log", || {
        // SAFETY: `arg` checks `s` (a live parlops_solver) and holds it for this call.
        let s = unsafe { super::handles::arg(s, "s")? };
        let z = crate::timing::Totals::default();
        let t = s.inner.log().unwrap_or(&z);
        let (c, sec, out, b) = match phase {
            PARLOPS_LOG_SOLVE => (u64::from(t.wall > 0.0), t.wall, t.wall, 0),
            PARLOPS_LOG_REST => (0, t.rest(), t.rest(), 0),
            p => match crate::timing::Phase::from_code(p) {
                Some(ph) => {
                    let i = ph as usize;
                    (t.count[i], t.secs[i], t.top[i], t.bytes[i])
                }
                None => crate::bail!(
                    InvalidArgument,
                    "argument 'phase' is {p}; it must be PARLOPS_LOG_SETUP (0) .. PARLOPS_LOG_REST (8)"
                ),
            },
        };
        // SAFETY: each output is NULL (skipped) or the caller's writable variable of its type.
        unsafe {
            if !count.is_null() {
                *count = i64::try_from(c).unwrap_or(i64::MAX);
            }
            if !seconds.is_null() {
                *seconds = sec;
            }
            if !outside_seconds.is_null() {
                *outside_seconds = out;
            }
            if !bytes.is_null() {
                *bytes = i64::try_from(b).unwrap_or(i64::MAX);
            }
        }
        Ok(())
    })
}

/// Where the last solve's time went, over the ranks, as text (PETSc's -log_view table; printed
/// after each solve with the option -log_view or PARLOPS_LOG=1): each phase's count, its time on
/// the slowest and the fastest rank and their ratio, its share of the solve's wall time (inclusive,
/// and outside the other phases), the bytes it moved on all ranks. The buffer protocol is
/// parlops_solver_view's; every rank gets the same text. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_log_view(
    s: *const parlops_solver,
    buf: *mut std::ffi::c_char,
    len: usize,
    needed: *mut usize,
) -> parlops_status {
    guard("parlops_solver_log_view", || {
        // SAFETY: `arg` checks `s` and holds it for this call.
        let s = unsafe { super::handles::arg(s, "s")? };
        let local = if buf.is_null() && len > 0 {
            Err(crate::err!(
                NullArgument,
                "argument 'buf' is NULL but 'len' is {len}"
            ))
        } else {
            Ok(())
        };
        s.inner.comm().agree(local)?;
        let text = crate::solver::log_view::log_view(s.inner.comm(), s.inner.log())?;
        // SAFETY: `buf` holds `len` writable bytes (or is NULL with len 0) and `needed` is NULL
        // or writable (header contract); write_text writes no more.
        unsafe { super::misc::write_text(&text, buf, len, needed) };
        Ok(())
    })
}

/// Record where each solve's time goes (`on`) or not (the default, unless -log_view or
/// PARLOPS_LOG=1 asked for the table). Recording costs two clock reads and two thread-local updates
/// per event (operator and preconditioner applications, reductions, vector passes; about 6 per CG
/// iteration): under 1% of an iteration from about 100,000 rows per rank, about 10% at 1,000
/// (`make bench` measures it). Off, parlops_solver_log reports the last solve recorded. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_timing(
    s: *mut parlops_solver,
    on: bool,
) -> parlops_status {
    guard("parlops_solver_set_timing", || {
        // SAFETY: `arg_mut` checks `s` and holds it exclusively for this call.
        unsafe { arg_mut(s, "s")? }.inner.timing = on;
        Ok(())
    })
}
