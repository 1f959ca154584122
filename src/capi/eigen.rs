//! Multi-vector operations, the randomized eigensolvers, Lanczos and the low-rank operator.

use std::ffi::c_int;

use super::args::with_dtype;
use super::handles::{
    arg, arg_array, arg_array_mut, guard, opt_arg, out_ok, parlops_comm, parlops_op, parlops_vec,
    same_handle,
};
use super::types::{parlops_scalar, parlops_status};
use crate::comm::Comm;
use crate::eigen::lanczos::{Which, lanczos};
use crate::eigen::orth::{Dependent, orthonormalize};
use crate::eigen::randomized::{Pass, randomized};
use crate::error::{Error, Result};
use crate::op::{IntoAnyOp, Op};
use crate::scalar::Scalar;
use crate::vector::DistVector;
use crate::vector::multi::{block_dot, maxpy};

/// Which randomized eigensolver.
pub type parlops_randomized_pass = i32;
/// hIPPYlib's doublePass (doublePassG for a pencil): T = Q^H A Q, one more product with A per
/// vector; the more accurate.
pub const PARLOPS_RANDOMIZED_DOUBLE_PASS: parlops_randomized_pass = 0;
/// hIPPYlib's singlePass (singlePassG): T from the products already made (A applied `power` times
/// per vector, no more), for operators that are expensive to apply.
pub const PARLOPS_RANDOMIZED_SINGLE_PASS: parlops_randomized_pass = 1;

/// Which end of the spectrum Lanczos looks for.
pub type parlops_eig_which = i32;
/// The largest eigenvalues (returned in descending order).
pub const PARLOPS_EIG_LARGEST: parlops_eig_which = 0;
/// The smallest eigenvalues (returned in ascending order).
pub const PARLOPS_EIG_SMALLEST: parlops_eig_which = 1;

/// The local check's outcome agreed with the values every rank must pass alike; the local error
/// (when there is one) kept as this rank's message. [collective]
pub(super) fn agree_parsed<P>(
    comm: &Comm,
    parsed: Result<P>,
    what: &str,
    same: &[i64],
) -> Result<P> {
    let pre = match &parsed {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::new(e.kind, e.msg.clone())),
    };
    comm.agree_same(pre, what, same)?;
    parsed
}

/// Typed views of vectors that must all have `dtype`, each named in the error.
pub(super) fn typed<'a, T: Scalar>(
    vs: &[&'a parlops_vec],
    name: &str,
) -> Result<Vec<&'a DistVector<T>>> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| {
            v.inner.typed::<T>().ok_or_else(|| {
                crate::err!(
                    DTypeMismatch,
                    "{name}[{i}] is {}; expected {}",
                    v.inner.dtype().name(),
                    T::DTYPE.name()
                )
            })
        })
        .collect()
}

pub(super) fn typed_mut<'a, T: Scalar>(
    vs: Vec<&'a mut parlops_vec>,
    name: &str,
) -> Result<Vec<&'a mut DistVector<T>>> {
    vs.into_iter()
        .enumerate()
        .map(|(i, v)| {
            let d = v.inner.dtype();
            v.inner.typed_mut::<T>().ok_or_else(|| {
                crate::err!(
                    DTypeMismatch,
                    "{name}[{i}] is {}; expected {}",
                    d.name(),
                    T::DTYPE.name()
                )
            })
        })
        .collect()
}

pub(super) fn op_typed<T: Scalar>(o: &parlops_op, name: &str) -> Result<Op<T>> {
    o.inner.typed::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "{name} is {}; expected {}",
            o.inner.dtype().name(),
            T::DTYPE.name()
        )
    })
}

fn put_scalars<T: Scalar>(out: *mut parlops_scalar, v: &[T]) {
    for (i, x) in v.iter().enumerate() {
        let (re, im) = x.to_parts();
        // SAFETY: `put_scalars` is called with `out` not NULL and room for `v.len()` scalars: the
        // `nx * ny` block of parlops_vec_block_dot (`out` checked when both are > 0, `v` empty
        // otherwise) and the `n * n` `r` of parlops_vec_orthonormalize (checked not NULL), by their
        // header contracts; `i` < `v.len()`.
        unsafe { *out.add(i) = parlops_scalar { re, im } };
    }
}

/// out[i*ny + j] = x_i^H y_j for every pair, in one reduction (PETSc's VecMDot for many y): nx*ny
/// entries. All vectors share a layout of `comm`, memory and dtype; every rank passes the same nx
/// and ny (0 allowed: nothing is computed). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_block_dot(
    comm: *const parlops_comm,
    nx: c_int,
    x: *const *const parlops_vec,
    ny: c_int,
    y: *const *const parlops_vec,
    out: *mut parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_block_dot", || {
        // SAFETY: `arg` checks `comm` against the handle registry (live parlops_comm) and holds it
        // for this call; only its `Arc` is kept.
        let comm = unsafe { arg(comm, "comm")? }.inner.clone();
        // SAFETY: `x` holds `nx` vector handles when `nx` > 0 (header contract); `arg_array` checks
        // the count, NULL and each handle, holding them shared for this call.
        let xs = unsafe { arg_array(nx, x, "nx", "x") };
        // SAFETY: as above for `y` and `ny`; the vectors are only read, so `x` and `y` may share
        // handles.
        let ys = unsafe { arg_array(ny, y, "ny", "y") };
        // the dtype from the first vector; a rank without vectors takes part with -1 (it fails
        // there unless every rank has none)
        let dtype = xs
            .as_ref()
            .ok()
            .and_then(|v| v.first())
            .or(ys.as_ref().ok().and_then(|v| v.first()))
            .map(|v| v.inner.dtype());
        let parsed = (|| {
            let (xs, ys) = (xs?, ys?);
            if nx > 0 && ny > 0 && out.is_null() {
                return Err(super::handles::null("out"));
            }
            for (i, v) in xs.iter().chain(ys.iter()).enumerate() {
                on_comm(v, &comm, &format!("vector {i} of x then y"))?;
            }
            Ok((xs, ys))
        })();
        let same = [nx as i64, ny as i64, dtype.map_or(-1, |d| d as i64)];
        let (xs, ys) = agree_parsed(&comm, parsed, "nx, ny and the dtype", &same)?;
        let Some(dtype) = dtype else {
            return Ok(());
        };
        with_dtype!(dtype, T => {
            let parsed = (|| {
                let tx = typed::<T>(&xs, "x")?;
                let ty = typed::<T>(&ys, "y")?;
                let f = tx.first().or(ty.first()).copied().ok_or_else(|| crate::err!(Internal, "no vector"))?;
                for (i, v) in tx.iter().chain(ty.iter()).enumerate() {
                    v.layout().check_compatible(f.layout(), &format!("vector {i} of x then y"), "the first")?;
                    f.check_location(v, &format!("vector {i} of x then y"), "the first")?;
                }
                Ok((tx, ty))
            })();
            let (tx, ty) = agree_parsed(&comm, parsed, "the vectors' dtypes and layouts", &[])?;
            let v = block_dot::<T>(&tx, &ty, Ok(()))?;
            if !v.is_empty() {
                put_scalars(out, &v);
            }
            Ok(())
        })
    })
}

/// Is `v` a vector of a layout of `comm`?
fn on_comm(v: &parlops_vec, comm: &std::sync::Arc<Comm>, name: &str) -> Result<()> {
    if !std::sync::Arc::ptr_eq(v.inner.layout().comm(), comm) {
        crate::bail!(
            LayoutMismatch,
            "{name} lives on another communicator than 'comm'"
        );
    }
    Ok(())
}

/// y += sum_k a[k] x[k] in one pass over y (entries updated in the order of x; PETSc's VecMAXPY).
/// y must not be one of the x. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_maxpy(
    y: *mut parlops_vec,
    n: c_int,
    a: *const parlops_scalar,
    x: *const *const parlops_vec,
) -> parlops_status {
    guard("parlops_vec_maxpy", || {
        // SAFETY: as above: `x` holds `n` vector handles (header contract), checked and held shared
        // by `arg_array`.
        let xs = unsafe { arg_array(n, x, "n", "x")? };
        // SAFETY: `arg_array` succeeded, so `x` is not NULL when `xs` is not empty and holds
        // `xs.len()` = `n` readable pointers (header contract).
        let x_handles: Vec<*const parlops_vec> =
            (0..xs.len()).map(|i| unsafe { *x.add(i) }).collect();
        if let Some(i) = same_handle(y.cast_const(), &x_handles) {
            crate::bail!(
                InvalidArgument,
                "y is also x[{i}]: the output must not be an input"
            );
        }
        // SAFETY: `arg_mut` checks `y` and holds it exclusively for this call; `y` is none of the
        // `x` handles (checked just above), so it aliases none of the shared `xs`.
        let yv = unsafe { super::handles::arg_mut(y, "y")? };
        // SAFETY: the C caller promises `n` coefficients at `a` (header contract of
        // parlops_vec_maxpy); `array_arg` checks NULL (when `n` > 0), alignment and device memory.
        let coef: &[parlops_scalar] =
            unsafe { super::args::array_arg(a.cast(), n.max(0) as usize, "a")? };
        let dtype = yv.inner.dtype();
        with_dtype!(dtype, T => {
            let tx = typed::<T>(&xs, "x")?;
            let c: Vec<T> = coef
                .iter()
                .enumerate()
                .map(|(i, s)| T::from_parts(s.re, s.im, &format!("a[{i}]")))
                .collect::<Result<_>>()?;
            let ty = yv.inner.typed_mut::<T>().ok_or_else(|| crate::err!(Internal, "y dtype"))?;
            maxpy(ty, &c, &tx)
        })
    })
}

/// Orthonormalise v[0..n) in place, in order, by classical Gram-Schmidt twice (CGS2), in the inner
/// product u^H B v when `b` is not NULL (B Hermitian positive definite, square on the vectors'
/// layout; hIPPYlib's Borthogonalize): V_in = V_out R with R upper triangular, written row-major to
/// `r` (n*n entries) unless NULL. The vectors are of a layout of `comm`; every rank passes the same
/// n (0 allowed: nothing to do) and gives b or not alike. A vector that loses all but 1e-10 of its
/// norm (1e-4 in single precision) to the projections, or u^H B u <= 0, fails on every rank naming
/// it (the vectors are then partly changed). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_orthonormalize(
    comm: *const parlops_comm,
    n: c_int,
    v: *const *mut parlops_vec,
    b: *const parlops_op,
    r: *mut parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_orthonormalize", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let comm = unsafe { arg(comm, "comm")? }.inner.clone();
        // SAFETY: `v` holds `n` vector handles when `n` > 0 (header contract); `arg_array_mut`
        // checks each and refuses the same handle twice, so the `&mut`s are distinct.
        let vs = unsafe { arg_array_mut(n, v, "n", "v") };
        // SAFETY: `opt_arg` takes NULL as `None` and checks anything else (live parlops_op, never
        // one of the vectors), holding it shared for this call.
        let bop = unsafe { opt_arg(b, "b") };
        let has_b = !b.is_null();
        let b_ident = bop.as_ref().ok().and_then(|o| o.map(|o| o.ident as i64));
        let dtype = vs
            .as_ref()
            .ok()
            .and_then(|v| v.first())
            .map(|v| v.inner.dtype());
        let parsed = (|| {
            let vs = vs?;
            let bop = bop?;
            for (i, x) in vs.iter().enumerate() {
                on_comm(x, &comm, &format!("v[{i}]"))?;
            }
            if let Some(o) = bop
                && !std::sync::Arc::ptr_eq(o.inner.rows().comm(), &comm)
            {
                crate::bail!(
                    LayoutMismatch,
                    "b lives on another communicator than 'comm'"
                );
            }
            Ok((vs, bop))
        })();
        let same = [
            n as i64,
            dtype.map_or(-1, |d| d as i64),
            has_b as i64,
            b_ident.unwrap_or(0),
        ];
        let (vs, bop) = agree_parsed(
            &comm,
            parsed,
            "n, the dtype and b ([n, dtype, b given, b's identity])",
            &same,
        )?;
        let Some(dtype) = dtype else {
            return Ok(());
        };
        with_dtype!(dtype, T => {
            let parsed = (|| {
                let bt = match bop {
                    Some(o) => Some(op_typed::<T>(o, "b")?),
                    None => None,
                };
                let tv = typed_mut::<T>(vs, "v")?;
                let l = tv[0].layout().clone();
                for (i, x) in tv.iter().enumerate() {
                    x.layout().check_compatible(&l, &format!("v[{i}]"), "v[0]")?;
                    tv[0].check_location(x, &format!("v[{i}]"), "v[0]")?;
                }
                if let Some(o) = &bt {
                    crate::eigen::check_square(o.as_ref(), &l, "b")?;
                }
                Ok((tv, bt))
            })();
            let (mut tv, bt) = agree_parsed(&comm, parsed, "the vectors' dtypes and layouts", &[])?;
            let rr = orthonormalize::<T>(&mut tv, bt.as_deref(), Dependent::Fail)?;
            if !r.is_null() {
                put_scalars(r, &rr);
            }
            Ok(())
        })
    })
}

/// hIPPYlib's randomized eigensolvers: the `k` leading eigenvalues of the Hermitian operator `a`
/// (descending, signed) and eigenvectors U (written to u[0..k), vectors of a's layout; U^H U = I),
/// or, with `b` and `binv` (B Hermitian positive definite and an operator applying B^-1, e.g. a
/// parlops_op_create_inverse or an AMG solve), of the pencil A u = lambda B u (U^H B U = I), from the
/// n_omega >= k random vectors `omega` (k plus an oversampling of about 10; parlops_vec_set_random
/// makes them, the same for any number of ranks; not modified; where n_omega exceeds A's size n,
/// the first n are used: they span the whole space and the eigenpairs are exact; k > n is
/// PARLOPS_ERR_INVALID_ARGUMENT), with `power` >= 1 products with A (or
/// B^-1 A) per vector before the projection (1: the plain range finder; at most 100). `pass`:
/// PARLOPS_RANDOMIZED_DOUBLE_PASS (T = Q^H A Q: the leading eigenvalues to about the square of
/// the first one left out) or _SINGLE_PASS (no product after the basis: to about the first one left
/// out, for operators too expensive to apply again). The dense work, n_omega^2 values and about
/// 10 n_omega^3 flops by Jacobi rotations, is repeated on every rank. [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_eig_randomized(
    a: *const parlops_op,
    b: *const parlops_op,
    binv: *const parlops_op,
    n_omega: c_int,
    omega: *const *const parlops_vec,
    power: c_int,
    pass: parlops_randomized_pass,
    k: c_int,
    eigenvalues: *mut f64,
    u: *const *mut parlops_vec,
) -> parlops_status {
    guard("parlops_eig_randomized", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "a")? };
        let comm = a.inner.rows().comm().clone();
        let dtype = a.inner.dtype();
        let parsed = (|| {
            // SAFETY: as above: `b` is NULL or a live parlops_op, checked and held shared by
            // `opt_arg`.
            let bo = unsafe { opt_arg(b, "b")? };
            // SAFETY: as above: `binv` is NULL or a live parlops_op, checked and held shared by
            // `opt_arg`.
            let bi = unsafe { opt_arg(binv, "binv")? };
            if bo.is_some() != bi.is_some() {
                crate::bail!(
                    InvalidArgument,
                    "give both b and binv (a pencil) or neither"
                );
            }
            // SAFETY: `omega` holds `n_omega` vector handles (header contract), checked and held
            // shared by `arg_array`.
            let om = unsafe { arg_array(n_omega, omega, "n_omega", "omega")? };
            // SAFETY: `u` holds `k` vector handles (header contract); `arg_array_mut` checks each
            // and refuses duplicates, and the loop below refuses any `u[j]` that is also an
            // `omega[i]`, before the references are used together.
            let us = unsafe { arg_array_mut(k, u, "k", "u")? };
            let om_ptrs: Vec<*const parlops_vec> =
                om.iter().map(|v| *v as *const parlops_vec).collect();
            for (j, uj) in us.iter().enumerate() {
                if let Some(i) = same_handle(&**uj as *const parlops_vec, &om_ptrs) {
                    crate::bail!(
                        InvalidArgument,
                        "u[{j}] is also omega[{i}]: the outputs must not be inputs"
                    );
                }
            }
            out_ok(eigenvalues, "eigenvalues")?;
            let pass = match pass {
                PARLOPS_RANDOMIZED_DOUBLE_PASS => Pass::Double,
                PARLOPS_RANDOMIZED_SINGLE_PASS => Pass::Single,
                _ => crate::bail!(
                    InvalidArgument,
                    "pass is {pass}; expected PARLOPS_RANDOMIZED_DOUBLE_PASS = 0 or PARLOPS_RANDOMIZED_SINGLE_PASS = 1"
                ),
            };
            if !(1..=crate::eigen::randomized::MAX_POWER).contains(&power) {
                crate::bail!(
                    InvalidArgument,
                    "power is {power}; it must be in 1..={}",
                    crate::eigen::randomized::MAX_POWER
                );
            }
            Ok((bo.zip(bi), om, us, pass))
        })();
        let ident = |p: *const parlops_op| {
            // SAFETY: `opt_arg` only checks `p` (NULL or a live parlops_op, held shared for this
            // call) to read its identity.
            unsafe { opt_arg(p, "") }
                .ok()
                .flatten()
                .map_or(0, |o| o.ident as i64)
        };
        let same = [
            n_omega as i64,
            k as i64,
            power as i64,
            pass as i64,
            dtype as i64,
            super::op::idents_of_values(&[a.ident as i64, ident(b), ident(binv)]),
        ];
        let (pencil, om, us, pass) = agree_parsed(
            &comm,
            parsed,
            "n_omega, k, power, pass, the dtype and the operators a, b, binv",
            &same,
        )?;
        with_dtype!(dtype, T => {
            let parsed = (|| {
                let at = op_typed::<T>(a, "a")?;
                let pt = match pencil {
                    Some((bo, bi)) => Some((op_typed::<T>(bo, "b")?, op_typed::<T>(bi, "binv")?)),
                    None => None,
                };
                Ok((at, pt, typed::<T>(&om, "omega")?, typed_mut::<T>(us, "u")?))
            })();
            let has = [pencil_flag(&parsed)];
            let (at, pt, om, mut us) = agree_parsed(&comm, parsed, "whether b and binv are given", &has)?;
            let pr = pt.as_ref().map(|(x, y)| (x.as_ref() as &dyn crate::op::LinearOperator<T>, y.as_ref() as &dyn crate::op::LinearOperator<T>));
            let vals = randomized::<T>(at.as_ref(), pr, &om, power as usize, pass, &mut us)?;
            for (i, v) in vals.iter().enumerate() {
                // SAFETY: `eigenvalues` was checked not NULL (`out_ok`, agreed on every rank) and
                // holds `k` doubles (header contract); `randomized` returns `k` values, so `i` <
                // `k`.
                unsafe { *eigenvalues.add(i) = *v };
            }
            Ok(())
        })
    })
}

type Parsed<'a, T> = (
    Op<T>,
    Option<(Op<T>, Op<T>)>,
    Vec<&'a DistVector<T>>,
    Vec<&'a mut DistVector<T>>,
);

fn pencil_flag<T: Scalar>(p: &Result<Parsed<'_, T>>) -> i64 {
    p.as_ref().map_or(-1, |x| x.1.is_some() as i64)
}

/// Lanczos with full re-orthogonalisation for the `n_ev` extreme eigenvalues of the Hermitian
/// operator `a` (`which`: PARLOPS_EIG_LARGEST, descending, or PARLOPS_EIG_SMALLEST, ascending) from
/// the start vector `v0` (any nonzero vector; a random one), in at most `max_steps` products with A
/// (n_ev <= max_steps <= the global size; every basis vector is kept). Stops once every wanted
/// residual ||A v - theta v|| is at most `tol` times the largest |theta| (the eigenvalue errors are
/// then about tol^2 relative for separated eigenvalues). Writes `eigenvalues` (n_ev), `residuals`
/// (n_ev, or NULL), `vecs` (NULL, or n_ev vectors of a's layout: the Ritz vectors) and `steps` (or
/// NULL). Not converged in max_steps: PARLOPS_ERR_NOT_CONVERGED, nothing written, the message
/// giving the Ritz values and residuals reached. One start vector sees each eigenspace once: an
/// eigenvalue of multiplicity m > 1 is found once (use the randomized eigensolver, a block method,
/// for clusters), except where the Krylov space closes below the operator's size (an invariant
/// subspace: an operator with few distinct eigenvalues): the run then goes on from a random vector
/// orthogonal to the basis, and after such a restart it stops only once the new block's own wanted
/// Ritz pairs meet the rule too (each restart costs reductions like a step). [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_eig_lanczos(
    a: *const parlops_op,
    v0: *const parlops_vec,
    max_steps: i64,
    tol: f64,
    n_ev: c_int,
    which: parlops_eig_which,
    eigenvalues: *mut f64,
    residuals: *mut f64,
    vecs: *const *mut parlops_vec,
    steps: *mut i64,
) -> parlops_status {
    guard("parlops_eig_lanczos", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "a")? };
        let comm = a.inner.rows().comm().clone();
        let dtype = a.inner.dtype();
        let parsed = (|| {
            // SAFETY: `arg` checks `v0` (live parlops_vec) and holds it shared for this call.
            let v = unsafe { arg(v0, "v0")? };
            let vs = if vecs.is_null() {
                Vec::new()
            } else {
                // SAFETY: `vecs` is not NULL here and holds `n_ev` vector handles (header
                // contract); `arg_array_mut` refuses duplicates, and the check below refuses any
                // that is `v0`.
                unsafe { arg_array_mut(n_ev, vecs, "n_ev", "vecs")? }
            };
            if let Some(j) = vs.iter().position(|x| std::ptr::eq(&**x, v)) {
                crate::bail!(
                    InvalidArgument,
                    "vecs[{j}] is also v0: the outputs must not be inputs"
                );
            }
            out_ok(eigenvalues, "eigenvalues")?;
            let which = match which {
                PARLOPS_EIG_LARGEST => Which::Largest,
                PARLOPS_EIG_SMALLEST => Which::Smallest,
                _ => crate::bail!(
                    InvalidArgument,
                    "which is {which}; expected PARLOPS_EIG_LARGEST = 0 or PARLOPS_EIG_SMALLEST = 1"
                ),
            };
            if n_ev < 1 {
                crate::bail!(InvalidArgument, "n_ev is {n_ev}; it must be >= 1");
            }
            if max_steps < 1 {
                crate::bail!(InvalidArgument, "max_steps is {max_steps}; it must be >= 1");
            }
            Ok((v, vs, which))
        })();
        let same = [
            max_steps,
            tol.to_bits() as i64,
            n_ev as i64,
            which as i64,
            vecs.is_null() as i64,
            dtype as i64,
            a.ident as i64,
        ];
        let (v, vs, which) = agree_parsed(
            &comm,
            parsed,
            "max_steps, tol, n_ev, which, whether vecs is given, the dtype and the operator a",
            &same,
        )?;
        with_dtype!(dtype, T => {
            let parsed = (|| {
                let at = op_typed::<T>(a, "a")?;
                let vt = typed::<T>(&[v], "v0")?[0];
                Ok((at, vt, typed_mut::<T>(vs, "vecs")?))
            })();
            let (at, vt, mut vs) = agree_parsed(&comm, parsed, "the dtypes", &[])?;
            let r = lanczos::<T>(at.as_ref(), vt, max_steps as usize, tol, n_ev as usize, which, &mut vs)?;
            if !r.converged {
                crate::bail!(
                    NotConverged,
                    "Lanczos did not converge in {} steps: Ritz values {:?} with residuals {:?} (tol {tol} times the largest |value|)",
                    r.steps,
                    r.values,
                    r.residuals
                );
            }
            for (i, (val, res)) in r.values.iter().zip(&r.residuals).enumerate() {
                // SAFETY: `eigenvalues` was checked not NULL (`out_ok`, agreed) and holds `n_ev`
                // doubles (header contract); `lanczos` returns exactly `n_ev` values (fewer fail),
                // so `i` < `n_ev`.
                unsafe { *eigenvalues.add(i) = *val };
                if !residuals.is_null() {
                    // SAFETY: as above: `residuals` is not NULL (checked) and holds `n_ev` doubles
                    // by the header contract.
                    unsafe { *residuals.add(i) = *res };
                }
            }
            if !steps.is_null() {
                // SAFETY: `steps` is not NULL (checked just above) and points to a writable int64
                // (header contract).
                unsafe { *steps = r.steps as i64 };
            }
            Ok(())
        })
    })
}

/// The low-rank Hermitian operator U diag(d) U^H (hIPPYlib's LowRankOperator; with the output of
/// parlops_eig_randomized, the low-rank part of a Laplace-approximation Hessian): `k` >= 1 vectors
/// of one layout of `comm` (copied) and `k` finite weights, the same on every rank (agreed: a
/// difference fails on every rank). An apply costs one reduction (all k dots) and one pass.
/// [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_low_rank(
    comm: *const parlops_comm,
    k: c_int,
    u: *const *const parlops_vec,
    d: *const f64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_low_rank", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let comm = unsafe { arg(comm, "comm")? }.inner.clone();
        // SAFETY: `u` holds `k` vector handles when `k` > 0 (header contract); `arg_array` checks
        // the count, NULL and each handle, holding them shared for this call.
        let us = unsafe { arg_array(k, u, "k", "u") };
        let dtype = us
            .as_ref()
            .ok()
            .and_then(|v| v.first())
            .map(|v| v.inner.dtype());
        let parsed = (|| {
            let us = us?;
            if us.is_empty() {
                crate::bail!(
                    InvalidArgument,
                    "k is 0: a low-rank operator needs at least one vector"
                );
            }
            for (i, v) in us.iter().enumerate() {
                on_comm(v, &comm, &format!("u[{i}]"))?;
            }
            out_ok(out, "out")?;
            if d.is_null() {
                return Err(super::handles::null("d"));
            }
            // SAFETY: `us` is not empty, so `k` >= 1, and `d` is not NULL (both checked above); the
            // C caller promises `k` weights at `d` (header contract), copied out at once.
            let w = unsafe { super::args::array_arg::<f64>(d.cast(), k as usize, "d")? }.to_vec();
            Ok((us, w))
        })();
        // the weights are part of what every rank must pass alike
        let mut same = vec![k as i64, dtype.map_or(-1, |d| d as i64)];
        if let Ok((_, w)) = &parsed {
            same.extend(w.iter().map(|x| x.to_bits() as i64));
        }
        let (us, w) = agree_parsed(&comm, parsed, "k, the dtype and the weights d", &same)?;
        let dtype = dtype.ok_or_else(|| crate::err!(Internal, "dtype"))?;
        let made = with_dtype!(dtype, T => {
            typed::<T>(&us, "u").and_then(|tu| crate::op::lowrank::LowRank::<T>::new(&tu, &w)).map(|m| {
                let o: Op<T> = std::sync::Arc::new(m);
                o.into_any()
            })
        });
        super::op::give_agreed(&comm, out, made)
    })
}
