//! Compositions of operators (no data copied): sums, products, scalings, adjoints, powers.

use super::super::args::{scalar_arg, with_dtype};
use super::super::handles::{arg, give, guard, out_ok, parlops_op};
use super::super::types::{parlops_scalar, parlops_status};
use super::{op_of, typed, wrap_derived};
use crate::error::Result;
use crate::op::AnyOp;
use crate::op::compose::{Adjoint, Conjugate, LinComb, Power, Product};

fn same_dtype(a: &AnyOp, b: &AnyOp) -> Result<()> {
    if a.dtype() != b.dtype() {
        crate::bail!(
            DTypeMismatch,
            "operators have different dtypes: {} ({}) and {} ({})",
            a.describe(),
            a.dtype().name(),
            b.describe(),
            b.dtype().name()
        );
    }
    Ok(())
}

/// A composition of two operators; `kind` names it in its identity ([`wrap_derived`]).
fn compose2(
    a: *const parlops_op,
    b: *const parlops_op,
    out: *mut *mut parlops_op,
    kind: i64,
    f: impl FnOnce(&AnyOp, &AnyOp) -> Result<AnyOp>,
) -> Result<()> {
    // SAFETY: `a` and `b` are handle arguments of the exported composition calling this; `arg`
    // checks `a` (live parlops_op) and holds it shared for that call; only its `Arc`s are kept.
    let a = unsafe { arg(a, "A")? };
    // SAFETY: as above for `b`; both are only read, so `b` may be `a` (A + A).
    let b = unsafe { arg(b, "B")? };
    out_ok(out, "out")?;
    same_dtype(&a.inner, &b.inner)?;
    let r = f(&a.inner, &b.inner)?;
    give(
        out,
        wrap_derived(r, &[kind, a.ident as i64, b.ident as i64]),
    );
    Ok(())
}

macro_rules! typed2 {
    ($a:expr, $b:expr, $t:ident, ($x:ident, $y:ident) => $body:expr) => {
        with_dtype!($a.dtype(), $t => {
            let $x = typed::<$t>($a)?;
            let $y = typed::<$t>($b)?;
            Ok(op_of::<$t>($body?))
        })
    };
}

/// *out = A + B (same shape and layouts; no data copied). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_sum(
    a: *const parlops_op,
    b: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_sum", || {
        compose2(
            a,
            b,
            out,
            1,
            |a, b| typed2!(a, b, T, (x, y) => LinComb::<T>::sum(x, y)),
        )
    })
}

/// *out = A - B.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_difference(
    a: *const parlops_op,
    b: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_difference", || {
        compose2(
            a,
            b,
            out,
            2,
            |a, b| typed2!(a, b, T, (x, y) => LinComb::<T>::difference(x, y)),
        )
    })
}

/// *out = A B (A's columns must match B's rows).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_product(
    a: *const parlops_op,
    b: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_product", || {
        compose2(
            a,
            b,
            out,
            3,
            |a, b| typed2!(a, b, T, (x, y) => Product::<T>::new(x, y)),
        )
    })
}

/// A composition of one operator; `kind` and `param` (a scale's or power's bits) name it in its
/// identity ([`wrap_derived`]).
fn compose1(
    a: *const parlops_op,
    out: *mut *mut parlops_op,
    kind: &[i64],
    f: impl FnOnce(&AnyOp) -> Result<AnyOp>,
) -> Result<()> {
    // SAFETY: as above: `a` is a handle argument of the exported call, checked and held (shared) by
    // `arg`.
    let a = unsafe { arg(a, "A")? };
    out_ok(out, "out")?;
    let r = f(&a.inner)?;
    let mut parts = kind.to_vec();
    parts.push(a.ident as i64);
    give(out, wrap_derived(r, &parts));
    Ok(())
}

macro_rules! typed1 {
    ($a:expr, $t:ident, $x:ident => $body:expr) => {
        with_dtype!($a.dtype(), $t => {
            let $x = typed::<$t>($a)?;
            Ok(op_of::<$t>($body?))
        })
    };
}

/// *out = alpha A (the adjoint uses conj(alpha)).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_scale(
    a: *const parlops_op,
    alpha: parlops_scalar,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_scale", || {
        compose1(
            a,
            out,
            &[4, alpha.re.to_bits() as i64, alpha.im.to_bits() as i64],
            |a| typed1!(a, T, x => scalar_arg::<T>(alpha, "alpha").and_then(|al| LinComb::<T>::scale(al, x))),
        )
    })
}

/// *out = A^H (conjugate transpose).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_adjoint(
    a: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_adjoint", || {
        compose1(
            a,
            out,
            &[5],
            |a| typed1!(a, T, x => Ok::<_, crate::Error>(Adjoint::<T>::new(x))),
        )
    })
}

/// *out = A^T (transpose without conjugation).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_transpose(
    a: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_transpose", || {
        compose1(
            a,
            out,
            &[6],
            |a| typed1!(a, T, x => Conjugate::<T>::new(x, true)),
        )
    })
}

/// *out = conj(A) (entry-wise conjugate).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_conj(
    a: *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_conj", || {
        compose1(
            a,
            out,
            &[7],
            |a| typed1!(a, T, x => Conjugate::<T>::new(x, false)),
        )
    })
}

/// *out = A^k for a square operator with equal row and column layouts (k >= 0; A^0 = I).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_power(
    a: *const parlops_op,
    k: i64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_power", || {
        compose1(
            a,
            out,
            &[8, k],
            |a| typed1!(a, T, x => Power::<T>::new(x, k)),
        )
    })
}
