//! Krylov-Schur (thick-restart Lanczos) with a bounded basis, spectral transformations and a
//! monitor: `parlops_eig_krylov_schur`.

use std::ffi::{c_int, c_void};

use super::args::with_dtype;
use super::eigen::{
    PARLOPS_EIG_LARGEST, PARLOPS_EIG_SMALLEST, agree_parsed, op_typed, parlops_eig_which, typed,
    typed_mut,
};
use super::handles::{arg, arg_array_mut, guard, opt_arg, out_ok, parlops_op, parlops_vec};
use super::types::parlops_status;
use crate::eigen::krylov_schur::{Monitor, Problem, Progress, Target, krylov_schur};
use crate::op::LinearOperator;

/// The eigenvalues nearest the shift `sigma` by shift-and-invert (parlops_eig_krylov_schur; returned
/// by increasing distance from sigma).
pub const PARLOPS_EIG_NEAREST: parlops_eig_which = 2;

/// Eigensolver monitor: called on every rank after each Krylov-Schur cycle with the products with
/// the iteration operator made so far, the number of leading wanted pairs converged, and `n`
/// eigenvalue approximations with their relative residual estimates (most wanted first; the
/// arrays are valid during the call); return non-zero to stop (any rank asking stops every rank:
/// PARLOPS_ERR_NOT_CONVERGED with the values reached).
pub type parlops_eig_monitor_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        products: i64,
        n_converged: c_int,
        n: c_int,
        values: *const f64,
        estimates: *const f64,
    ) -> c_int,
>;

/// Krylov-Schur (thick-restart Lanczos, SLEPc's default eigensolver) for `n_ev` eigenpairs of the
/// Hermitian problem A x = lambda x, or A x = lambda B x with `b` Hermitian positive definite (a
/// negative x^H B x met on the way is PARLOPS_ERR_INVALID_ARGUMENT naming b, on every rank), with
/// a basis of at most `ncv` vectors: memory is ncv + 4 vectors of a's layout (vectors in device
/// memory: up to 2 ncv + 3, the restart going through spare vectors), however many products the
/// run takes (n_ev < ncv <= the global size, or ncv equal to it; SLEPc's default ncv is max(2
/// n_ev, n_ev + 15)). `which`: PARLOPS_EIG_LARGEST (descending) or PARLOPS_EIG_SMALLEST
/// (ascending), where `inv` applies B^-1 (NULL, with b NULL, for the standard problem; a
/// parlops_op_create_inverse of a CG solver for a mass matrix, for instance), or
/// PARLOPS_EIG_NEAREST: the eigenvalues nearest `sigma` (by increasing distance) by
/// shift-and-invert, where `inv` applies (A - sigma B)^-1 (b NULL: B = I; a
/// parlops_op_create_inverse of an AMG-preconditioned solver for A - sigma B, solved to a
/// tolerance well below `tol`). `sigma` is read only with PARLOPS_EIG_NEAREST. The basis is built
/// for OP = A, B^-1 A or (A - sigma B)^-1 B, orthonormal in the B inner product, from the start
/// vector `v0` (any vector with a component in the wanted eigenspaces: a random one), in at most
/// `max_products` products with OP. Converged pairs are locked (no longer worked on). The stopping
/// rule is each wanted pair's true relative residual ||A x - lambda B x|| / (|lambda| ||B x||) <=
/// tol, or ||A x - lambda B x|| at rounding level (100 eps (l ||B x|| + ||A x||), eps of the
/// dtype, l the largest |eigenvalue estimate| seen, with shift-and-invert at least ||A r|| / ||B
/// r|| for a random r: one more product with A and B at the start); the run tests the cheap Ritz
/// estimates after each cycle (with shift-and-invert scaled to A's residuals by ||(A - sigma B)
/// v|| / ||B v|| for the residual vector v: one more product with A, and B, a cycle) and checks
/// the true residuals (one product with A, and B, per pair) before it locks a pair or returns. The
/// standard problem (b and inv NULL) returns its Ritz vectors, each eigenvalue the vector's
/// Rayleigh quotient x^H A x / x^H x; the generalized and shift-and-invert problems, and the
/// standard one where a quotient's pair misses the rule, the pairs of a Rayleigh-Ritz step of A on
/// the last basis (at most ncv products with A, none with inv; with shift-and-invert, OP's own
/// Ritz pairs where A's miss the rule): the eigenvalues are Rayleigh quotients of A. Writes
/// `eigenvalues` (n_ev), `residuals` (n_ev, or NULL: the true relative residuals), `vecs` (NULL,
/// or n_ev vectors of a's layout: the eigenvectors, x^H B x = 1) and `products` (or NULL).
/// `monitor` (or NULL) is called after each cycle with `monitor_ctx`. Not converged (max_products
/// reached, the monitor stopping, or true residuals that stay above the rule: an inexact inv):
/// PARLOPS_ERR_NOT_CONVERGED, the message giving the eigenvalues reached and their relative
/// residuals (the estimates; the true ones where their check failed), the products and restarts
/// made; nothing is written. Each new basis vector's projections are checked against what OP's
/// Hermitian transpose gives from the earlier ones: a difference of more than 1e-3 of ||OP|| (a
/// not Hermitian, inv far from exact) is PARLOPS_ERR_INVALID_ARGUMENT on every rank, found within
/// the first products (on such an OP the run could never converge). The pairs returned meet the
/// rule, but nothing proves that no wanted eigenvalue was passed over: a Krylov basis reaches the
/// wanted end of OP's spectrum first only as it grows, and a basis of fewer than 2 n_ev vectors
/// may converge to other eigenpairs, above all with shift-and-invert, where both ends of OP's
/// spectrum compete (in a sweep of small dense problems, 7 of 96 runs with ncv = n_ev + 1 returned
/// a farther eigenvalue; none with SLEPc's default ncv). One start vector sees each eigenspace
/// once per cycle: a multiple eigenvalue is found again only through rounding and restarts (the
/// randomized eigensolver, a block method, is for clusters). The squared norms of OP's products
/// must stay in the range of double precision (operator entries between about 1e-150 and 1e150 in
/// magnitude; scale the operator otherwise): beyond it the run fails with
/// PARLOPS_ERR_INVALID_ARGUMENT. Non-Hermitian problems are not offered (no Arnoldi variant); that
/// check refuses an a whose asymmetry exceeds its bound. [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_eig_krylov_schur(
    a: *const parlops_op,
    b: *const parlops_op,
    inv: *const parlops_op,
    sigma: f64,
    v0: *const parlops_vec,
    n_ev: c_int,
    ncv: c_int,
    max_products: i64,
    tol: f64,
    which: parlops_eig_which,
    monitor: parlops_eig_monitor_fn,
    monitor_ctx: *mut c_void,
    eigenvalues: *mut f64,
    residuals: *mut f64,
    vecs: *const *mut parlops_vec,
    products: *mut i64,
) -> parlops_status {
    guard("parlops_eig_krylov_schur", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "a")? };
        let comm = a.inner.rows().comm().clone();
        let dtype = a.inner.dtype();
        let parsed = (|| {
            // SAFETY: `b` is NULL or a live parlops_op, checked and held shared by `opt_arg`.
            let bo = unsafe { opt_arg(b, "b")? };
            // SAFETY: `inv` is NULL or a live parlops_op, checked and held shared by `opt_arg`.
            let io = unsafe { opt_arg(inv, "inv")? };
            // SAFETY: `arg` checks `v0` (live parlops_vec) and holds it shared for this call.
            let v = unsafe { arg(v0, "v0")? };
            let vs = if vecs.is_null() {
                Vec::new()
            } else {
                // SAFETY: `vecs` is not NULL here and holds `n_ev` vector handles (header
                // contract); `arg_array_mut` checks each and refuses duplicates, and the check
                // below refuses any that is `v0`.
                unsafe { arg_array_mut(n_ev, vecs, "n_ev", "vecs")? }
            };
            if let Some(j) = vs.iter().position(|x| std::ptr::eq(&**x, v)) {
                crate::bail!(
                    InvalidArgument,
                    "vecs[{j}] is also v0: the outputs must not be inputs"
                );
            }
            out_ok(eigenvalues, "eigenvalues")?;
            let target = match which {
                PARLOPS_EIG_LARGEST => Target::Largest,
                PARLOPS_EIG_SMALLEST => Target::Smallest,
                PARLOPS_EIG_NEAREST => Target::Nearest(sigma),
                _ => crate::bail!(
                    InvalidArgument,
                    "which is {which}; expected PARLOPS_EIG_LARGEST = 0, PARLOPS_EIG_SMALLEST = 1 or PARLOPS_EIG_NEAREST = 2"
                ),
            };
            if n_ev < 1 {
                crate::bail!(InvalidArgument, "n_ev is {n_ev}; it must be >= 1");
            }
            if ncv < 1 {
                crate::bail!(
                    InvalidArgument,
                    "ncv is {ncv}; it must exceed n_ev = {n_ev}"
                );
            }
            if max_products < 1 {
                crate::bail!(
                    InvalidArgument,
                    "max_products is {max_products}; it must be >= 1"
                );
            }
            Ok((bo, io, v, vs, target))
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
            n_ev as i64,
            ncv as i64,
            max_products,
            tol.to_bits() as i64,
            which as i64,
            if which == PARLOPS_EIG_NEAREST {
                sigma.to_bits() as i64
            } else {
                0
            },
            vecs.is_null() as i64,
            monitor.is_some() as i64,
            dtype as i64,
            super::op::idents_of_values(&[a.ident as i64, ident(b), ident(inv)]),
        ];
        let (bo, io, v, vs, target) = agree_parsed(
            &comm,
            parsed,
            "n_ev, ncv, max_products, tol, which, sigma, whether vecs and monitor are given, the dtype and the operators a, b, inv",
            &same,
        )?;
        with_dtype!(dtype, T => {
            let parsed = (|| {
                let at = op_typed::<T>(a, "a")?;
                let bt = match bo {
                    Some(o) => Some(op_typed::<T>(o, "b")?),
                    None => None,
                };
                let it = match io {
                    Some(o) => Some(op_typed::<T>(o, "inv")?),
                    None => None,
                };
                let vt = typed::<T>(&[v], "v0")?[0];
                Ok((at, bt, it, vt, typed_mut::<T>(vs, "vecs")?))
            })();
            let (at, bt, it, vt, mut vs) = agree_parsed(&comm, parsed, "the dtypes", &[])?;
            let p = Problem {
                a: at.as_ref(),
                b: bt.as_ref().map(|o| o.as_ref() as &dyn LinearOperator<T>),
                inv: it.as_ref().map(|o| o.as_ref() as &dyn LinearOperator<T>),
            };
            let ctx = monitor_ctx as usize;
            let mut mon = |pr: &Progress<'_>| -> crate::error::Result<bool> {
                let Some(f) = monitor else {
                    return Ok(false);
                };
                let n = pr.values.len().min(c_int::MAX as usize);
                // SAFETY: `f` is the caller's non-NULL monitor with this signature and `ctx` the
                // context it expects (header contract); `values` and `estimates` hold `n` doubles
                // each and outlive the call.
                let r = unsafe {
                    f(
                        ctx as *mut c_void,
                        pr.products as i64,
                        pr.converged as c_int,
                        n as c_int,
                        pr.values.as_ptr(),
                        pr.estimates.as_ptr(),
                    )
                };
                Ok(r != 0)
            };
            let r = krylov_schur::<T>(
                &p,
                target,
                vt,
                n_ev as usize,
                ncv as usize,
                max_products as usize,
                tol,
                &mut vs,
                monitor.is_some().then_some(&mut mon as Monitor<'_>),
            )?;
            if !r.converged {
                crate::bail!(
                    NotConverged,
                    "Krylov-Schur did not converge ({}) after {} products and {} restarts: eigenvalues {:?} with relative residual estimates {:?} (tol {tol})",
                    r.why,
                    r.products,
                    r.restarts,
                    r.values,
                    r.residuals
                );
            }
            for (i, (val, res)) in r.values.iter().zip(&r.residuals).enumerate().take(n_ev as usize) {
                // SAFETY: `eigenvalues` was checked not NULL (`out_ok`, agreed) and holds `n_ev`
                // doubles (header contract); `i` < `n_ev`.
                unsafe { *eigenvalues.add(i) = *val };
                if !residuals.is_null() {
                    // SAFETY: as above: `residuals` is not NULL (checked) and holds `n_ev` doubles
                    // by the header contract.
                    unsafe { *residuals.add(i) = *res };
                }
            }
            if !products.is_null() {
                // SAFETY: `products` is not NULL (checked just above) and points to a writable
                // int64 (header contract).
                unsafe { *products = r.products as i64 };
            }
            Ok(())
        })
    })
}
