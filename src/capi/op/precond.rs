//! Preconditioners that are operators: block Jacobi with local ILU(0)/IC(0)/SSOR solves, and hypre's
//! BoomerAMG.

use super::super::args::with_dtype;
use super::super::handles::{arg, create_agreed, parlops_op};
use super::super::types::parlops_status;
use super::{op_of, wrap};
use crate::error::Result;
use crate::hypre::amg::{AmgOptions, BoomerAmg, DofOrdering};
use crate::op::bjacobi::{BlockJacobi, LocalSolve};
use crate::op::csr::CsrOp;
use crate::op::{AnyOp, IntoAnyOp, Op};
use crate::scalar::Scalar;
use crate::solver::chebyshev::Chebyshev;

use super::super::handles::guard;

/// The local solve of a block Jacobi preconditioner.
pub type parlops_local_solve = i32;
/// ILU(0) of each rank's diag block (PETSc's PCBJACOBI with PCILU).
pub const PARLOPS_LOCAL_ILU0: parlops_local_solve = 0;
/// IC(0) of each rank's diag block, for Hermitian positive definite blocks (PCICC).
pub const PARLOPS_LOCAL_IC0: parlops_local_solve = 1;
/// SSOR(omega): omega (2 - omega) (D + omega U)^{-1} D (D + omega L)^{-1}; omega = 1 is symmetric
/// Gauss-Seidel (PCSOR's symmetric sweep).
pub const PARLOPS_LOCAL_SSOR: parlops_local_solve = 2;

/// How the unknowns of a system are ordered on each rank (BoomerAMG's num_functions > 1).
pub type parlops_dof_ordering = i32;
/// Node by node: u0 v0 w0 u1 v1 w1 ... (this rank's row i is function i % num_functions).
pub const PARLOPS_DOF_INTERLEAVED: parlops_dof_ordering = 0;
/// Function by function on each rank: all u, then all v, ... (MFEM's Ordering::byNODES).
pub const PARLOPS_DOF_BLOCKED: parlops_dof_ordering = 1;

/// BoomerAMG's options (hypre's names). Fill with `parlops_amg_options_init` (hypre's defaults),
/// then change what you tune. A negative value keeps hypre's default for that option. Every value is
/// checked before hypre sees it (a value outside the ranges below fails on every rank with
/// PARLOPS_ERR_INVALID_ARGUMENT naming the option), and every rank must pass the same options.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct parlops_amg_options {
    /// Strength threshold in [0, 1] (hypre's default 0.25; 0.5 or more for 3D problems).
    pub strong_threshold: f64,
    /// Coarsening (hypre's CoarsenType): 0 CLJP, 1, 3 Ruge-Stueben, 6 Falgout, 7 CLJP (fixed random
    /// vector), 8 PMIS, 9 PMIS (fixed random vector), 10 HMIS, 11 one-pass RS, 21 CGC, 22 CGC-E.
    pub coarsen_type: i32,
    /// Interpolation (hypre's InterpType): 0, 2-9, 12, 13, 14, 16, 17, 18 (0 classical, 6
    /// extended+i, 14 extended, ...; 1, GSMG only, 10 and 11, nodal-systems only, and 15, GPU only,
    /// are refused).
    pub interp_type: i32,
    /// Smoother on every level (hypre's RelaxType): 0 Jacobi, 1, 2 Gauss-Seidel (slow), 3/4 hybrid
    /// Gauss-Seidel forward/backward, 6 symmetric hybrid GS, 8 l1-symmetric GS, 13/14 l1-GS
    /// forward/backward, 15 CG, 16 Chebyshev, 17 FCF-Jacobi, 18 l1-Jacobi.
    pub relax_type: i32,
    /// Smoothing sweeps on each level, 1..=100.
    pub num_sweeps: i32,
    /// Maximum number of levels, 1..=100 (hypre's default 25).
    pub max_levels: i32,
    /// Levels of aggressive coarsening, 0..=100 (0: none).
    pub agg_num_levels: i32,
    /// Unknowns per node of a system (3 for 3D elasticity), 1..=256; 1 for a scalar problem. Must
    /// divide every rank's row count.
    pub num_functions: i32,
    /// Order of a system's unknowns on each rank: PARLOPS_DOF_INTERLEAVED or PARLOPS_DOF_BLOCKED.
    pub dof_ordering: parlops_dof_ordering,
    /// hypre's print level, 0..=3 (0: silent; 1: the set-up's statistics, printed by hypre).
    pub print_level: i32,
}

/// hypre's defaults: every option negative (hypre chooses), one function, interleaved, silent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_amg_options_init(
    options: *mut parlops_amg_options,
) -> parlops_status {
    guard("parlops_amg_options_init", || {
        super::super::handles::out_ok(options, "options")?;
        // SAFETY: `options` was checked not NULL by `out_ok` just above and points to a writable
        // parlops_amg_options (header contract); the struct is plain data, nothing to drop.
        unsafe {
            *options = parlops_amg_options {
                strong_threshold: -1.0,
                coarsen_type: -1,
                interp_type: -1,
                relax_type: -1,
                num_sweeps: -1,
                max_levels: -1,
                agg_num_levels: -1,
                num_functions: 1,
                dof_ordering: PARLOPS_DOF_INTERLEAVED,
                print_level: 0,
            }
        };
        Ok(())
    })
}

pub(crate) fn amg_options(o: &parlops_amg_options) -> Result<AmgOptions> {
    let opt = |v: i32| (v >= 0).then_some(v);
    let dof = match o.dof_ordering {
        PARLOPS_DOF_INTERLEAVED => DofOrdering::Interleaved,
        PARLOPS_DOF_BLOCKED => DofOrdering::Blocked,
        d => crate::bail!(
            InvalidArgument,
            "options.dof_ordering is {d}; it must be PARLOPS_DOF_INTERLEAVED (0) or PARLOPS_DOF_BLOCKED (1)"
        ),
    };
    if o.strong_threshold.is_nan() {
        crate::bail!(InvalidArgument, "options.strong_threshold is NaN");
    }
    Ok(AmgOptions {
        strong_threshold: (o.strong_threshold >= 0.0).then_some(o.strong_threshold),
        coarsen_type: opt(o.coarsen_type),
        interp_type: opt(o.interp_type),
        relax_type: opt(o.relax_type),
        num_sweeps: opt(o.num_sweeps),
        max_levels: opt(o.max_levels),
        agg_num_levels: opt(o.agg_num_levels),
        num_functions: o.num_functions,
        dof_ordering: dof,
        print_level: o.print_level,
    })
}

/// The CSR operator inside `a`, or an error naming what it is.
pub(crate) fn csr_of<T: Scalar>(a: &AnyOp) -> Result<Op<T>> {
    let op = a
        .typed::<T>()
        .ok_or_else(|| crate::err!(DTypeMismatch, "argument 'A' is {}", a.dtype().name()))?;
    if op.as_any().downcast_ref::<CsrOp<T>>().is_none() {
        crate::bail!(
            NotSupported,
            "argument 'A' ({}) is not a CSR operator (parlops_op_create_csr or _parcsr): the preconditioner factors its entries",
            a.describe()
        );
    }
    Ok(op)
}

/// Block Jacobi on a CSR operator: each rank applies `kind` (PARLOPS_LOCAL_ILU0, _IC0 or _SSOR, with
/// `omega` in (0, 2) for SSOR; ignored otherwise) to its diag block (its rows and owned columns);
/// the couplings between ranks are left out, and applying it communicates nothing. The factors are
/// computed now from A's values (one copy of the diag block per rank). A zero or non-finite pivot,
/// a missing diagonal entry, or (IC(0)) a pivot that is not positive, fails on every rank with
/// PARLOPS_ERR_INVALID_ARGUMENT naming the global row. Any dtype; host memory (device vectors are
/// staged). The adjoint exists for IC(0) (the operator is Hermitian). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_block_jacobi(
    a: *const parlops_op,
    kind: parlops_local_solve,
    omega: f64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_block_jacobi", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        let k = match kind {
            PARLOPS_LOCAL_ILU0 => Ok(LocalSolve::Ilu0),
            PARLOPS_LOCAL_IC0 => Ok(LocalSolve::Ic0),
            PARLOPS_LOCAL_SSOR => Ok(LocalSolve::Ssor(omega)),
            k => Err(crate::err!(
                InvalidArgument,
                "argument 'kind' is {k}; it must be PARLOPS_LOCAL_ILU0 (0), PARLOPS_LOCAL_IC0 (1) or PARLOPS_LOCAL_SSOR (2)"
            )),
        };
        let d = a.inner.dtype();
        let pre = k
            .clone()
            .map(|_| ())
            .and_then(|_| with_dtype!(d, T => csr_of::<T>(&a.inner).map(|_| ())));
        let same = [
            kind as i64,
            if kind == PARLOPS_LOCAL_SSOR {
                omega.to_bits() as i64
            } else {
                0
            },
            a.ident as i64,
        ];
        create_agreed(
            &comm,
            out,
            pre,
            "kind, omega and the operator",
            &same,
            || {
                let k = k?;
                with_dtype!(d, T => {
                    let op = csr_of::<T>(&a.inner)?;
                    let csr = op.as_any().downcast_ref::<CsrOp<T>>().ok_or_else(|| crate::err!(Internal, "CSR"))?;
                    BlockJacobi::new(csr, k).map(|b| b.with_source(op.clone())).map(op_of::<T>).map(wrap)
                })
            },
        )
    })
}

/// hypre's BoomerAMG on a CSR operator of dtype PARLOPS_F64 (square, host memory), as a
/// preconditioner: each apply is one V-cycle from a zero initial guess (as hypre's own PCG applies
/// it). The matrix is copied to hypre once, here (hypre's IJ interface; its set-up builds its own
/// hierarchy from that copy anyway); each apply copies its input to and its output from hypre's
/// vectors. `options` may be NULL (hypre's defaults; see parlops_amg_options_init); every rank must
/// pass the same. hypre is loaded at run time: without it (or with a hypre built for another MPI)
/// this returns PARLOPS_ERR_NOT_SUPPORTED saying how to get one (Debian's libhypre-dev, or
/// PARLOPS_HYPRE_LIBRARY); parlops_config_report names the hypre found. A hypre error comes back on
/// every rank. No adjoint. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_boomeramg(
    a: *const parlops_op,
    options: *const parlops_amg_options,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_boomeramg", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        let o = if options.is_null() {
            let mut d = std::mem::MaybeUninit::<parlops_amg_options>::uninit();
            // SAFETY: `d.as_mut_ptr()` is a valid, aligned, writable (uninitialised)
            // parlops_amg_options; assigning a whole plain-data struct through it reads and drops
            // nothing.
            unsafe { parlops_amg_options_init(d.as_mut_ptr()) };
            // SAFETY: `d.as_mut_ptr()` is not NULL, so `parlops_amg_options_init` passed its only
            // check (`out_ok`) and assigned every field above: `d` is initialised.
            unsafe { d.assume_init() }
        } else {
            // SAFETY: `options` is not NULL (checked just above) and points to the caller's
            // parlops_amg_options (header contract); every field is an `i32` or `f64`, for which
            // any bits are valid, and it is copied out at once.
            unsafe { *options }
        };
        let opts = amg_options(&o).and_then(|a| a.to_hypre());
        let pre = opts.clone().and_then(|opts| {
            if a.inner.dtype() != crate::scalar::DType::F64 {
                crate::bail!(
                    DTypeMismatch,
                    "argument 'A' is {}; BoomerAMG takes PARLOPS_F64 (hypre's real double values)",
                    a.inner.dtype().name()
                );
            }
            let op = csr_of::<f64>(&a.inner)?;
            let csr = op
                .as_any()
                .downcast_ref::<CsrOp<f64>>()
                .ok_or_else(|| crate::err!(Internal, "CSR"))?;
            BoomerAmg::check(csr, &opts, 0)
        });
        let same = [
            o.strong_threshold.to_bits() as i64,
            o.coarsen_type as i64,
            o.interp_type as i64,
            o.relax_type as i64,
            o.num_sweeps as i64,
            o.max_levels as i64,
            o.agg_num_levels as i64,
            o.num_functions as i64,
            o.dof_ordering as i64,
            o.print_level as i64,
            a.ident as i64,
        ];
        create_agreed(
            &comm,
            out,
            pre,
            "BoomerAMG options or operators",
            &same,
            || {
                let op = csr_of::<f64>(&a.inner)?;
                let csr = op
                    .as_any()
                    .downcast_ref::<CsrOp<f64>>()
                    .ok_or_else(|| crate::err!(Internal, "CSR"))?;
                let opts = opts?;
                let amg = BoomerAmg::setup(csr, &opts, 0, &[])?.with_source(
                    op.clone(),
                    opts,
                    0,
                    Vec::new(),
                );
                Ok(wrap((std::sync::Arc::new(amg) as Op<f64>).into_any()))
            },
        )
    })
}

/// Chebyshev polynomial preconditioner (and smoother) of degree `degree` (1..=1000) on any square
/// operator with a diagonal (PETSc's PCCHEBYSHEV, MFEM's OperatorChebyshevSmoother):
/// M = p(D^{-1} A) D^{-1} with 1 - x p(x) = T_k((theta - x)/delta) / T_k(theta/delta), damping
/// D^{-1} A's spectrum in [lmin, lmax] (theta, delta: centre and half-width). `lmax` <= 0 estimates
/// both: lmax = 1.2 and lmin = 0.3 times the largest eigenvalue of D^{-1} A from 10 power
/// iterations (MFEM's choice; PETSc's interval is [0.1, 1.1] times it: pass those to match PETSc).
/// Each apply runs degree - 1 operator applies and vector updates (in device memory where A
/// handles it). A zero or non-finite diagonal entry fails on every rank naming the row; so does an
/// estimate that is not positive. The adjoint uses A's adjoint. Every rank must pass the same
/// degree and bounds. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_chebyshev(
    a: *const parlops_op,
    degree: i64,
    lmin: f64,
    lmax: f64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_chebyshev", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        let bounds = (lmax > 0.0).then_some((lmin, lmax));
        let pre = if (1..=crate::solver::chebyshev::MAX_DEGREE).contains(&degree) {
            Ok(())
        } else {
            Err(crate::err!(
                InvalidArgument,
                "argument 'degree' is {degree}; it must be 1..={}",
                crate::solver::chebyshev::MAX_DEGREE
            ))
        };
        let pre = pre.and_then(|_| {
            if lmin.is_nan() || lmax.is_nan() {
                crate::bail!(
                    InvalidArgument,
                    "arguments 'lmin' and 'lmax' are {lmin} and {lmax}: NaN is neither a bound nor a request to estimate (lmax <= 0)"
                );
            }
            Ok(())
        });
        let pre = pre.and_then(|_| match bounds {
            Some((lo, hi)) if !(lo > 0.0 && hi > lo && hi.is_finite()) => Err(crate::err!(
                InvalidArgument,
                "arguments 'lmin' and 'lmax' are {lo} and {hi}; they must satisfy 0 < lmin < lmax < inf (or lmax <= 0 to estimate both)"
            )),
            _ => Ok(()),
        });
        let same = [
            degree,
            lmin.to_bits() as i64,
            lmax.to_bits() as i64,
            a.ident as i64,
        ];
        let d = a.inner.dtype();
        create_agreed(
            &comm,
            out,
            pre,
            "degree, bounds and the operator",
            &same,
            || {
                with_dtype!(d, T => {
                    let op = a.inner.typed::<T>().ok_or_else(|| crate::err!(Internal, "dtype"))?;
                    Chebyshev::new(op, degree, bounds).map(op_of::<T>).map(wrap)
                })
            },
        )
    })
}

/// Set up the preconditioners in M again on the current values of the matrices they were built
/// from (after parlops_op_csr_update_values), keeping what the pattern alone decides: BoomerAMG (the
/// matrix copied to hypre again and its set-up run again with the same options and near-null-space
/// vectors: hypre keeps no part of a set-up that new values could reuse), AMS and ADS (set up again
/// from the same G, C, coordinates or interpolations and options), block Jacobi (factored again on
/// the same pattern), Chebyshev (D^-1 again, and its bounds estimated again unless they were given),
/// in M itself and in everything M is made of (compositions, block preconditioners, inverses), each
/// once. Only those whose matrices' values changed since their last set-up, unless `force` is
/// non-zero (then all of them: for shell operators whose values parlops cannot see change). Operators
/// without a set-up are left as they are. `setups_run` (may be NULL) receives the number of set-ups
/// run. Values changed in a wrapped matrix's arrays count once announced with
/// parlops_op_csr_update_values; a wrapped matrix whose row pointers or columns changed is refused
/// (PARLOPS_ERR_INVALID_ARGUMENT, on every rank). A failure (a zero pivot, a zero diagonal, a hypre error) fails every rank and leaves that
/// preconditioner as it was. Refused (PARLOPS_ERR_BUSY) while a running solve holds M. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_refresh(
    m: *mut parlops_op,
    force: i32,
    setups_run: *mut i64,
) -> parlops_status {
    guard("parlops_op_refresh", || {
        // SAFETY: `arg_mut` checks `m` (live parlops_op) and holds it exclusively for this call.
        let m = unsafe { super::super::handles::arg_mut(m, "M")? };
        let comm = m.inner.rows().comm().clone();
        let busy = crate::any_op!(&m.inner, op => crate::op::tree::setup_pinned(op.as_ref()));
        let local = if busy {
            Err(crate::err!(
                Busy,
                "argument 'M' ({}) is held by a running solve: it cannot be set up again until the solve returns",
                m.inner.describe()
            ))
        } else {
            Ok(())
        };
        comm.agree_same(
            local,
            "operators or force ([the operator's identity, force])",
            &[m.ident as i64, i64::from(force != 0)],
        )?;
        let n = crate::any_op!(&m.inner, op => crate::op::tree::refresh(op.as_ref(), force != 0))?;
        // SAFETY: `setups_run` is NULL or writable (header contract), as `put_opt` requires.
        unsafe { super::super::handles::put_opt(setups_run, n as i64) };
        Ok(())
    })
}

/// The number of set-ups the preconditioners in M (and everything M is made of) have run: 1 for a
/// preconditioner just made, one more per refresh (parlops_op_refresh, or a solver's reuse policy);
/// 0 for operators without a set-up. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_setup_count(
    m: *const parlops_op,
    count: *mut i64,
) -> parlops_status {
    guard("parlops_op_setup_count", || {
        // SAFETY: `arg` checks `m` (live parlops_op) and holds it shared for this call.
        let m = unsafe { arg(m, "M")? };
        super::super::handles::out_ok(count, "count")?;
        let n = crate::any_op!(&m.inner, op => crate::op::tree::setups(op.as_ref()));
        // SAFETY: `count` is not NULL (`out_ok` above) and writable by the header contract.
        unsafe { *count = n as i64 };
        Ok(())
    })
}
