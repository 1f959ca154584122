//! Running a solver and reading its results: the solve, the solver's inverse as an operator, the
//! outcome and histories of the last solve, destroy, and power iteration (the solver handle, its
//! settings and the C types are in `solver.rs`).

use super::handles::{
    arg, arg_array, arg_array_mut, arg_mut, destroy, guard, out_ok, parlops_op, parlops_vec,
    put_opt,
};
use super::solver::{parlops_solve_info, parlops_solver};
use super::types::{parlops_scalar, parlops_status};
use crate::scalar::Scalar;
use std::ffi::c_int;

/// Solve A x = b (least squares for CGLS, LSQR, ISTA, FISTA): b of A's row layout, x of its column
/// layout. Returns PARLOPS_OK when the solve ran, converged or not: read the reason with
/// parlops_solver_info. Argument errors on any rank fail on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_solve(
    s: *mut parlops_solver,
    b: *const parlops_vec,
    x: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_solver_solve", || {
        // SAFETY: `arg_mut` checks `s` against the handle registry (live parlops_solver) and holds
        // it exclusively for this call; the reference stays in this closure.
        let s = unsafe { arg_mut(s, "s")? };
        let comm = s.inner.comm().clone();
        let vecs = (|| {
            s.inner.require_operator()?;
            if std::ptr::eq(b, x) && !b.is_null() {
                crate::bail!(
                    InvalidArgument,
                    "arguments 'b' and 'x' are the same vector; they must differ"
                );
            }
            // SAFETY: `arg` checks `b` (live parlops_vec, not the solver) and holds it shared for
            // this call.
            let bv = unsafe { arg(b, "b")? };
            // SAFETY: `arg_mut` checks `x` and holds it exclusively for this call; `x` is not `b`
            // (checked above), so it does not alias `bv`.
            let xv = unsafe { arg_mut(x, "x")? };
            s.inner.check_solve(&bv.inner, &xv.inner)?;
            Ok((bv, xv))
        })();
        let pre = vecs.as_ref().map(|_| ()).map_err(|e| e.clone());
        // Settings that steer the iteration must be the same everywhere, or ranks would stop at
        // different iterations and wait for each other: agreed with the argument checks, with where
        // b and x live (every rank must take the same host or device path).
        let mut settings = s.inner.agreement_values();
        let (bcode, xcode) = match &vecs {
            Ok((bv, xv)) => (
                bv.inner.location().code() as i64,
                xv.inner.location().code() as i64,
            ),
            Err(_) => (-1, -1),
        };
        settings.push(("memory of b", bcode));
        settings.push(("memory of x", xcode));
        let (names, vals): (Vec<&str>, Vec<i64>) = settings.into_iter().unzip();
        comm.agree_same_named(pre, "solver settings", &names, &vals)?;
        let (bv, xv) = vecs?;
        s.inner.solve(&bv.inner, &mut xv.inner)?;
        Ok(())
    })
}

/// Solve A x[j] = b[j] for j = 0..n-1 with one operator (x[j] the initial guesses with
/// parlops_solver_set_initial_guess_nonzero). With PARLOPS_METHOD_CG: block conjugate gradients for
/// Hermitian positive definite A and M, blocks of up to 16 columns (the operator and preconditioner
/// applied to the whole block at once, a host CSR matrix reading its entries from memory once for
/// all columns; the iterates move in the space the whole block finds, so columns converge in fewer
/// iterations than alone; equal, dependent or zero columns are allowed); every column tested on its
/// own rule ||b_j - A x_j|| <= max(rtol ||b_j||, atol), the solve ending when all hold, confirmed on
/// the true residuals; every column of a block reports the block's iterations, but a column whose
/// b (or initial residual) holds NaN or Inf, which ends with PARLOPS_DIVERGED_NAN at iteration 0
/// while the others are solved without it; directions within 1.5e-4 rad of the others' span (0.1 rad
/// in single precision) are left out of a step; the monitors see the column farthest from its rule; no eigenvalue estimates are recorded. Unless a setting block CG
/// does not offer is set (the natural norm, a trust region, PARLOPS_REFERENCE_INITIAL_RESIDUAL, a
/// null space, an iterate monitor, PARLOPS_SUM_REPRODUCIBLE): those, and every other method (GMRES and BiCGStab have no block
/// form yet), solve one column after another. The b[j] share one memory, the x[j] too (and one
/// caller's stream), and no x[j] is a b[i]. Each column's outcome:
/// parlops_solver_info_column; parlops_solver_info gives the column farthest from its rule (the
/// first that did not converge, else the largest ||r_j|| / ||b_j||). n = 0 does nothing. Returns
/// PARLOPS_OK when the solve ran, converged or not. Argument errors on any rank (n differing
/// between ranks among them) fail on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_solve_many(
    s: *mut parlops_solver,
    n: c_int,
    b: *const *const parlops_vec,
    x: *const *mut parlops_vec,
) -> parlops_status {
    guard("parlops_solver_solve_many", || {
        // SAFETY: `arg_mut` checks `s` against the handle registry (live parlops_solver) and holds
        // it exclusively for this call; the reference stays in this closure.
        let s = unsafe { arg_mut(s, "s")? };
        let comm = s.inner.comm().clone();
        let vecs = (|| {
            s.inner.require_operator()?;
            if n > 0 && !b.is_null() && !x.is_null() {
                let k = n as usize;
                // SAFETY: `b` is not NULL and holds `n` pointers (header contract); only the
                // pointer values are read here.
                let bp: Vec<usize> = unsafe { (0..k).map(|i| *b.add(i) as usize).collect() };
                // SAFETY: as above for `x`.
                let xp: Vec<usize> = unsafe { (0..k).map(|i| *x.add(i) as usize).collect() };
                for (i, p) in bp.iter().enumerate() {
                    if let Some(j) = xp.iter().position(|q| q == p && *p != 0) {
                        crate::bail!(
                            InvalidArgument,
                            "b[{i}] and x[{j}] are the same vector; the solutions must differ from the right-hand sides"
                        );
                    }
                }
            }
            // SAFETY: `x` holds `n` vector handles when `n` > 0 (header contract); `arg_array_mut`
            // checks the count, NULL, each handle and that they differ, holding them exclusively.
            let xv = unsafe { arg_array_mut(n, x, "n", "x")? };
            // SAFETY: as above for `b`, held shared; no b[i] is an x[j] (checked above).
            let bv = unsafe { arg_array(n, b, "n", "b")? };
            for (j, (bj, xj)) in bv.iter().zip(xv.iter()).enumerate() {
                s.inner.check_solve(&bj.inner, &xj.inner).map_err(|e| {
                    crate::error::Error::new(e.kind, format!("column {j}: {}", e.msg))
                })?;
                let (b0, x0) = (&bv[0].inner, &xv[0].inner);
                if bj.inner.location() != b0.location() || xj.inner.location() != x0.location() {
                    crate::bail!(
                        InvalidArgument,
                        "column {j}: b[{j}] lives in {} and x[{j}] in {}, but b[0] in {} and x[0] in {}: the columns share one memory",
                        bj.inner.location().name(),
                        xj.inner.location().name(),
                        b0.location().name(),
                        x0.location().name()
                    );
                }
                if xj.inner.caller_stream() != x0.caller_stream() {
                    crate::bail!(
                        InvalidArgument,
                        "column {j}: x[{j}] has another caller's stream than x[0] (parlops_vec_set_stream): the columns share one stream"
                    );
                }
            }
            Ok((bv, xv))
        })();
        let pre = vecs.as_ref().map(|_| ()).map_err(|e| e.clone());
        let mut settings = s.inner.agreement_values();
        let codes = match &vecs {
            Ok((bv, xv)) if !bv.is_empty() => (
                bv[0].inner.location().code() as i64,
                xv[0].inner.location().code() as i64,
            ),
            _ => (-1, -1),
        };
        settings.push(("number of right-hand sides", n as i64));
        settings.push(("memory of b", codes.0));
        settings.push(("memory of x", codes.1));
        let (names, vals): (Vec<&str>, Vec<i64>) = settings.into_iter().unzip();
        comm.agree_same_named(pre, "solver settings", &names, &vals)?;
        let (bv, mut xv) = vecs?;
        if bv.is_empty() {
            return Ok(());
        }
        let br: Vec<&crate::vector::AnyVec> = bv.iter().map(|v| &v.inner).collect();
        let mut xr: Vec<&mut crate::vector::AnyVec> = xv.iter_mut().map(|v| &mut v.inner).collect();
        s.inner.solve_many(&br, &mut xr)?;
        Ok(())
    })
}

/// The outcome of column `j` of the last solve (parlops_solver_solve_many; column 0 is the one
/// system of parlops_solver_solve). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_info_column(
    s: *const parlops_solver,
    j: i64,
    info: *mut parlops_solve_info,
) -> parlops_status {
    guard("parlops_solver_info_column", || {
        // SAFETY: as above: `s` is checked and held (shared) by `arg` for this call.
        let s = unsafe { arg(s, "s")? };
        out_ok(info, "info")?;
        let i = usize::try_from(j)
            .ok()
            .and_then(|j| s.inner.column_info(j))
            .ok_or_else(|| {
                crate::err!(
                    InvalidArgument,
                    "argument 'j' is {j}; the last solve had {} column(s)",
                    s.inner.columns()
                )
            })?;
        // SAFETY: `info` was checked not NULL by `out_ok` above and points to a writable
        // parlops_solve_info (header contract); the struct is plain data, nothing to drop.
        unsafe { *info = c_info(&i) };
        Ok(())
    })
}

fn c_info(i: &crate::solver::Info) -> parlops_solve_info {
    parlops_solve_info {
        iterations: i.iterations,
        reason: i.reason.into(),
        initial_residual_norm: i.initial_residual_norm,
        final_residual_norm: i.final_residual_norm,
        rhs_norm: i.rhs_norm,
        r1norm: i.r1norm,
        r2norm: i.r2norm,
    }
}

/// The inverse of the solver's operator as an operator: applying it to x solves A y = x from a zero
/// initial guess, with a snapshot taken now of the solver's method, settings, operator and
/// preconditioner, without its monitor (later changes to `s` do not reach it; `s` may be destroyed,
/// and the operator may be set as `s`'s own preconditioner). Its rows are A's columns and its columns A's
/// rows; it has no adjoint (PARLOPS_ERR_NOT_SUPPORTED). An apply whose solve does not converge fails
/// with PARLOPS_ERR_NOT_CONVERGED on every rank, unless it ran out of iterations and
/// `accept_max_iter` is true (a fixed number of inner iterations). Nested in an outer solve, such a
/// failure fails the outer solve on every rank. Least-squares methods: PARLOPS_ERR_NOT_SUPPORTED.
/// [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_inverse(
    s: *const parlops_solver,
    accept_max_iter: bool,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_inverse", || {
        // SAFETY: `arg` checks `s` (live parlops_solver) and holds it shared for this call.
        let s = unsafe { arg(s, "s")? };
        let comm = s.inner.comm().clone();
        let pre = s.inner.require_operator().map(|_| ());
        let mut settings = s.inner.agreement_values();
        settings.push(("accept_max_iter", accept_max_iter as i64));
        let (names, vals): (Vec<&str>, Vec<i64>) = settings.into_iter().unzip();
        comm.agree_same_named(
            super::handles::out_ok(out, "out").and(pre),
            "solver settings",
            &names,
            &vals,
        )?;
        super::op::give_agreed(&comm, out, s.inner.inverse(accept_max_iter))
    })
}

/// Record, in the next solves, what parlops_solver_eigenvalue_estimates needs (CG's coefficients,
/// GMRES's and FGMRES's Hessenberg matrix of the last restart cycle; PETSc's
/// KSPSetComputeSingularValues). Costs no communication. Ranks may differ.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_compute_eigenvalues(
    s: *mut parlops_solver,
    compute: bool,
) -> parlops_status {
    guard("parlops_solver_set_compute_eigenvalues", || {
        // SAFETY: as above: `s` is checked and held exclusively by `arg_mut` for this call.
        unsafe { arg_mut(s, "s")? }.inner.params.compute_eigs = compute;
        Ok(())
    })
}

/// Extreme eigenvalue estimates from the last solve (PETSc's KSPComputeExtremeSingularValues), made
/// after parlops_solver_set_compute_eigenvalues: CG gives the extreme eigenvalues of its Lanczos
/// tridiagonal matrix, estimates of those of the preconditioned operator M A (inside its spectrum,
/// the largest converging first); GMRES and FGMRES the extreme singular values of the last restart
/// cycle's Hessenberg matrix (real dtypes). Other methods: PARLOPS_ERR_NOT_SUPPORTED; no recorded
/// iteration: PARLOPS_ERR_INVALID_ARGUMENT. The same on every rank (computed from reduced values).
/// Either output may be NULL. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_eigenvalue_estimates(
    s: *const parlops_solver,
    emin: *mut f64,
    emax: *mut f64,
) -> parlops_status {
    guard("parlops_solver_eigenvalue_estimates", || {
        // SAFETY: as above: `s` is checked and held (shared) by `arg` for this call.
        let s = unsafe { arg(s, "s")? };
        let (lo, hi) = s.inner.eigenvalue_estimates()?;
        // SAFETY: `emin` and `emax` are each NULL or a writable double (header contract), as
        // `put_opt` requires.
        unsafe {
            put_opt(emin, lo);
            put_opt(emax, hi);
        }
        Ok(())
    })
}

/// The outcome of the last solve.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_info(
    s: *const parlops_solver,
    info: *mut parlops_solve_info,
) -> parlops_status {
    guard("parlops_solver_info", || {
        // SAFETY: as above: `s` is checked and held (shared) by `arg` for this call.
        let s = unsafe { arg(s, "s")? };
        out_ok(info, "info")?;
        let i = s.inner.info();
        // SAFETY: `info` was checked not NULL by `out_ok` above and points to a writable
        // parlops_solve_info (header contract); the struct is plain data, nothing to drop.
        unsafe { *info = c_info(&i) };
        Ok(())
    })
}

/// Residual norms of the last solve, one per iteration from 0 (with parlops_solver_keep_history):
/// `*norms` points into the solver (valid until its next solve or destroy), `*len` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_history(
    s: *const parlops_solver,
    norms: *mut *const f64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_solver_history", || {
        // SAFETY: as above: `s` is checked and held (shared) by `arg` for this call.
        let s = unsafe { arg(s, "s")? };
        out_ok(norms, "norms")?;
        out_ok(len, "len")?;
        let h = s.inner.history();
        // SAFETY: `norms` and `len` were checked not NULL by `out_ok` above and are writable by the
        // header contract; the pointer handed out is valid until the solver's next solve or
        // destroy, as documented.
        unsafe {
            *norms = h.as_ptr();
            *len = h.len() as i64;
        }
        Ok(())
    })
}

/// Least squares (CGLS, LSQR): ||b - A x|| of every iteration from 0, PyLops-MPI's cgls `cost`
/// (LSQR: its estimate sqrt(||b - A x||^2 + damp^2 ||x||^2)); kept with parlops_solver_keep_history
/// (CGLS adds ||b - A x|| to a reduction it makes anyway); empty for other methods, whose
/// parlops_solver_history is already their residual norm. `*norms` points into the solver (valid
/// until its next solve or destroy), `*len` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_residual_history(
    s: *const parlops_solver,
    norms: *mut *const f64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_solver_residual_history", || {
        // SAFETY: as above: `s` is checked and held (shared) by `arg` for this call.
        let s = unsafe { arg(s, "s")? };
        out_ok(norms, "norms")?;
        out_ok(len, "len")?;
        let h = s.inner.residual_history();
        // SAFETY: as above: `norms` and `len` are not NULL (`out_ok`) and writable by the header
        // contract.
        unsafe {
            *norms = h.as_ptr();
            *len = h.len() as i64;
        }
        Ok(())
    })
}

/// Release the solver and set `*s` to NULL (NULL `*s` is a no-op; a destroyed or foreign `*s` is
/// PARLOPS_ERR_INVALID_HANDLE and is left as it is).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_destroy(s: *mut *mut parlops_solver) -> parlops_status {
    // SAFETY: `destroy` checks `s` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `s` points to its handle variable.
    guard("parlops_solver_destroy", || unsafe { destroy(s, "s") })
}

/// Largest eigenvalue of a square operator by power iteration (PyLops-MPI's power_iteration; the
/// random start is seeded and the same for any number of ranks): stops when the estimate changes by
/// less than tol relative, or after max_iter. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_power_iteration(
    a: *const parlops_op,
    max_iter: i64,
    tol: f64,
    seed: u64,
    eigenvalue: *mut parlops_scalar,
    iterations: *mut i64,
) -> parlops_status {
    guard("parlops_op_power_iteration", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        let args = [max_iter, tol.to_bits() as i64, seed as i64, a.ident as i64];
        comm.agree_same(
            out_ok(eigenvalue, "eigenvalue"),
            "max_iter, tol, seed or operators (the operator's identity)",
            &args,
        )?;
        let r = crate::any_op!(&a.inner, op => {
            crate::solver::power::power_iteration(op.as_ref(), max_iter, tol, seed, false).map(|(l, it)| (l.to_parts(), it))
        });
        let ((re, im), it) = comm.agree(r)?;
        // SAFETY: `out_ok(eigenvalue)` was agreed above (a NULL on any rank fails every rank before
        // this), so `eigenvalue` is not NULL and writable by the header contract; `iterations` is
        // NULL or a writable int64 (as `put_opt` requires).
        unsafe {
            *eigenvalue = parlops_scalar { re, im };
            put_opt(iterations, it);
        }
        Ok(())
    })
}
