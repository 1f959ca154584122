//! Operators.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};

use super::handles::{
    arg, arg_mut, destroy, enum_arg, give, guard, null, out_ok, parlops_comm, parlops_layout,
    parlops_op, parlops_vec, put_opt,
};
use super::types::parlops_stencil;
use super::types::{
    parlops_dtype, parlops_index, parlops_memory, parlops_ownership, parlops_scalar, parlops_status,
};
use crate::any_op;
use crate::error::Result;
use crate::memory::Location;
use crate::op::basic::{Diagonal, Identity, Zero};
use crate::op::block::{BlockDiag, VStack, hstack};
use crate::op::callback::Callback;
use crate::op::compose::{Adjoint, Conjugate, LinComb, Power, Product};
use crate::op::csr::{Arr, CsrOp, Idx, IndexInt, LocalCsr};
use crate::op::dense::DenseBlockRow;
use crate::op::{AnyOp, IntoAnyOp, LinearOperator, Op, check_apply, dottest};
use crate::scalar::{DType, Scalar, c32, c64};
use crate::vector::{AnyVec, DistVector, Layout};

/// A user callback: compute this rank's part of the output from this rank's part of the input
/// (pointers to the local arrays, of the operator's dtype and memory). Return 0 on success; any other
/// value makes the call fail with PARLOPS_ERR_CALLBACK on every rank, with the value in the message.
pub type parlops_apply_fn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, x_local: *const c_void, y_local: *mut c_void) -> c_int,
>;
/// Frees a callback context when its operator is destroyed.
pub type parlops_destroy_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

fn dtype_arg(t: parlops_dtype) -> Result<DType> {
    enum_arg(
        t,
        "dtype",
        "PARLOPS_F32, PARLOPS_F64, PARLOPS_C64 or PARLOPS_C128 = 0..3",
        DType::from_code,
    )
}

fn wrap(op: AnyOp) -> parlops_op {
    parlops_op {
        inner: op,
        work: Mutex::new([None, None]),
    }
}

/// `with_dtype!(dtype, T => expr)`: `expr` evaluated with `T` the Rust type of `dtype`.
macro_rules! with_dtype {
    ($d:expr, $t:ident => $body:expr) => {
        match $d {
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
            DType::C64 => {
                type $t = c32;
                $body
            }
            DType::C128 => {
                type $t = c64;
                $body
            }
        }
    };
}

fn op_of<T: Scalar>(v: impl LinearOperator<T> + 'static) -> AnyOp
where
    Op<T>: IntoAnyOp,
{
    (Arc::new(v) as Op<T>).into_any()
}

/// Typed view of an AnyOp of the given T (used after dtypes were checked).
fn typed<T: Scalar>(a: &AnyOp) -> Option<Op<T>> {
    a.typed::<T>()
}

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

// ------------------------------------------------------------------------------------------ apply

/// The typed vector inside an AnyVec (dtype checked before).
fn typed_vec<T: Scalar>(v: &AnyVec) -> Result<&DistVector<T>> {
    let d = v.dtype();
    v.typed::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "vector dtype {} does not match the operator",
            d.name()
        )
    })
}

fn typed_vec_mut<T: Scalar>(v: &mut AnyVec) -> Result<&mut DistVector<T>> {
    let d = v.dtype();
    v.typed_mut::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "vector dtype {} does not match the operator",
            d.name()
        )
    })
}

fn check_vec_dtype(a: &AnyOp, v: &AnyVec, name: &str) -> Result<()> {
    if v.dtype() != a.dtype() {
        crate::bail!(
            DTypeMismatch,
            "argument '{name}' is {} but the operator ({}) is {}",
            v.dtype().name(),
            a.describe(),
            a.dtype().name()
        );
    }
    Ok(())
}

/// Validate on every rank together, run, and agree on the outcome: y = A x (or x = A^H y).
fn apply_any(a: &AnyOp, x: Result<&AnyVec>, y: Result<&mut AnyVec>, adjoint: bool) -> Result<()> {
    let comm = a.rows().comm().clone();
    let (xn, yn) = if adjoint { ("y", "x") } else { ("x", "y") };
    let pre = match (&x, &y) {
        (Ok(xv), Ok(yv)) => check_vec_dtype(a, xv, xn).and_then(|_| check_vec_dtype(a, yv, yn)).and_then(|_| {
            any_op!(a, op => check_apply(op.as_ref(), typed_vec(xv)?, typed_vec(yv)?, adjoint))
        }),
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
    };
    // where the vectors live must be the same on every rank (staging is collective)
    let loc = match &y {
        Ok(yv) => yv.location().code() as i64,
        Err(_) => -1,
    };
    let all = comm.agree_with(pre, &[loc])?;
    if all.iter().any(|r| r[0] != loc) {
        crate::bail!(
            InconsistentAcrossRanks,
            "argument '{yn}' is in host memory on some ranks and CUDA memory on others (codes by rank: {:?}); use one memory on every rank",
            all.iter().map(|r| r[0]).collect::<Vec<_>>()
        );
    }
    let (x, y) = (x?, y?);
    // A panic inside one rank's apply must still reach the agreement, or the others would wait.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        any_op!(a, op => {
            let (xv, yv) = (typed_vec(x)?, typed_vec_mut(y)?);
            let r = if adjoint { op.apply_adjoint(xv, yv) } else { op.apply(xv, yv) };
            r.and_then(|_| yv.settle())
        })
    }))
    .unwrap_or_else(|_| {
        Err(crate::err!(
            Internal,
            "the operator panicked on rank {} (please report)",
            comm.rank()
        ))
    });
    comm.agree(run)
}

/// Input and output vectors from handles; the same vector for both is an error.
fn in_out<'a>(
    x: *const parlops_vec,
    y: *mut parlops_vec,
    xn: &str,
    yn: &str,
) -> (Result<&'a AnyVec>, Result<&'a mut AnyVec>) {
    if !x.is_null() && std::ptr::eq(x, y) {
        let e = crate::err!(
            InvalidArgument,
            "arguments '{xn}' and '{yn}' are the same vector; they must differ"
        );
        return (Err(e.clone()), Err(e));
    }
    let xr = unsafe { arg(x, xn) }.map(|v| &v.inner);
    let yr = unsafe { arg_mut(y, yn) }.map(|v| &mut v.inner);
    (xr, yr)
}

/// y = A x. `x` must have the operator's column layout and `y` its row layout, and they must be
/// different vectors. A failure on any rank (including a user callback's) fails on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_apply(
    a: *const parlops_op,
    x: *const parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_apply", || {
        let a = unsafe { arg(a, "A")? };
        let (xr, yr) = in_out(x, y, "x", "y");
        apply_any(&a.inner, xr, yr, false)
    })
}

/// x = A^H y (conjugate transpose). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_apply_adjoint(
    a: *const parlops_op,
    y: *const parlops_vec,
    x: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_apply_adjoint", || {
        let a = unsafe { arg(a, "A")? };
        let (yr, xr) = in_out(y, x, "y", "x");
        apply_any(&a.inner, yr, xr, true)
    })
}

/// Shared by multadd and multadd_adjoint: out = alpha op(A) inp + beta out.
fn multadd_common(
    a: *const parlops_op,
    alpha: parlops_scalar,
    x: *const parlops_vec,
    beta: parlops_scalar,
    y: *mut parlops_vec,
    adjoint: bool,
) -> Result<()> {
    let ar = unsafe { arg(a, "A")? };
    let (xn, yn) = if adjoint { ("y", "x") } else { ("x", "y") };
    let range = if adjoint {
        ar.inner.cols()
    } else {
        ar.inner.rows()
    };
    // a callback applying its own operator with multadd: an error, not a deadlock on `work`
    let _busy = crate::op::enter(ar as *const parlops_op as usize, &|| ar.inner.describe())?;
    let mut w = ar.work.lock().unwrap_or_else(|p| p.into_inner());
    let slot = &mut w[adjoint as usize];
    // the work vector lives where the output does
    let loc = unsafe { arg(y.cast_const(), yn) }.map_or(Location::Host, |v| v.inner.location());
    // an allocation failure joins the agreement of apply_any below (through x), so no rank waits
    let mut made = Ok(());
    if slot.as_ref().is_none_or(|t| t.location() != loc) {
        match AnyVec::new(range.clone(), ar.inner.dtype(), loc) {
            Ok(v) => *slot = Some(v),
            Err(e) => {
                *slot = Some(AnyVec::new(
                    range.clone(),
                    ar.inner.dtype(),
                    Location::Host,
                )?);
                made = Err(e);
            }
        }
    }
    let t = slot
        .as_mut()
        .ok_or_else(|| crate::err!(Internal, "work vector missing"))?;
    let (xr, yr) = in_out(x, y, xn, yn);
    let xr = xr.and_then(|v| made.map(|_| v));
    // the output and the scalars are checked before anything runs, as part of the same agreement
    let (xr, yr) = match yr {
        Ok(yv) => {
            let ok = check_scalar(ar.inner.dtype(), alpha, "alpha")
                .and_then(|_| check_scalar(ar.inner.dtype(), beta, "beta"))
                .and_then(|_| check_vec_dtype(&ar.inner, yv, yn))
                .and_then(|_| {
                    if yv.layout().compatible(range) {
                        Ok(())
                    } else {
                        Err(crate::err!(
                            SizeMismatch,
                            "argument '{yn}' has global length {} split as {:?}; the result of this product has {} split as {:?}",
                            yv.layout().global_len(),
                            yv.layout().local_lens(),
                            range.global_len(),
                            range.local_lens()
                        ))
                    }
                });
            (xr.and_then(|x| ok.map(|_| x)), Some(yv))
        }
        Err(e) => (Err(e), None),
    };
    apply_any(&ar.inner, xr, Ok(t), adjoint)?;
    let yv = yr.ok_or_else(|| crate::err!(Internal, "output missing after agreement"))?;
    let t = w[adjoint as usize]
        .as_ref()
        .ok_or_else(|| crate::err!(Internal, "work vector missing"))?;
    crate::any_vec2!(&mut *yv, t, (yt, tt) => {
        let al = scalar_of(yt, alpha, "alpha")?;
        let be = scalar_of(yt, beta, "beta")?;
        yt.axpby(al, tt, be)
    })?;
    yv.settle()
}

/// y = alpha A x + beta y (a work vector is allocated at the first call and kept). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_multadd(
    a: *const parlops_op,
    alpha: parlops_scalar,
    x: *const parlops_vec,
    beta: parlops_scalar,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_multadd", || {
        multadd_common(a, alpha, x, beta, y, false)
    })
}

/// x = alpha A^H y + beta x (a work vector is allocated at the first call and kept). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_multadd_adjoint(
    a: *const parlops_op,
    alpha: parlops_scalar,
    y: *const parlops_vec,
    beta: parlops_scalar,
    x: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_multadd_adjoint", || {
        multadd_common(a, alpha, y, beta, x, true)
    })
}

fn scalar_of<T: Scalar>(_: &DistVector<T>, s: parlops_scalar, what: &str) -> Result<T> {
    T::from_parts(s.re, s.im, what)
}

fn check_scalar(d: DType, s: parlops_scalar, what: &str) -> Result<()> {
    with_dtype!(d, T => T::from_parts(s.re, s.im, what).map(|_| ()))
}

// ------------------------------------------------------------------------------------------ queries

/// Global number of rows and columns. Either output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_size(
    a: *const parlops_op,
    rows: *mut i64,
    cols: *mut i64,
) -> parlops_status {
    guard("parlops_op_size", || {
        let a = unsafe { arg(a, "A")? };
        unsafe {
            put_opt(rows, a.inner.rows().global_len());
            put_opt(cols, a.inner.cols().global_len());
        }
        Ok(())
    })
}

/// The operator's element type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_dtype(
    a: *const parlops_op,
    dtype: *mut parlops_dtype,
) -> parlops_status {
    guard("parlops_op_dtype", || {
        let a = unsafe { arg(a, "A")? };
        out_ok(dtype, "dtype")?;
        unsafe { *dtype = a.inner.dtype().code() };
        Ok(())
    })
}

/// New references to the row (range) and column (domain) layouts; either output may be NULL.
/// Release them with parlops_layout_destroy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_layouts(
    a: *const parlops_op,
    rows: *mut *mut parlops_layout,
    cols: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_op_layouts", || {
        let a = unsafe { arg(a, "A")? };
        if !rows.is_null() {
            give(
                rows,
                parlops_layout {
                    inner: a.inner.rows().clone(),
                },
            );
        }
        if !cols.is_null() {
            give(
                cols,
                parlops_layout {
                    inner: a.inner.cols().clone(),
                },
            );
        }
        Ok(())
    })
}

/// New zeroed host vectors fitting the operator: `x_like` of its column layout, `y_like` of its row
/// layout (either may be NULL). For device vectors use `parlops_op_layouts` and `parlops_vec_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_vecs(
    a: *const parlops_op,
    x_like: *mut *mut parlops_vec,
    y_like: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_create_vecs", || {
        let a = unsafe { arg(a, "A")? };
        let x = if x_like.is_null() {
            None
        } else {
            Some(AnyVec::new(
                a.inner.cols().clone(),
                a.inner.dtype(),
                Location::Host,
            )?)
        };
        let y = if y_like.is_null() {
            None
        } else {
            Some(AnyVec::new(
                a.inner.rows().clone(),
                a.inner.dtype(),
                Location::Host,
            )?)
        };
        if let Some(x) = x {
            give(x_like, parlops_vec { inner: x });
        }
        if let Some(y) = y {
            give(y_like, parlops_vec { inner: y });
        }
        Ok(())
    })
}

/// d = diag(A) for a square operator whose row and column layouts are equal (CSR, dense, diagonal,
/// identity and sums/scalings/adjoints of them). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_diagonal(
    a: *const parlops_op,
    d: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_diagonal", || {
        let a = unsafe { arg(a, "A")? };
        let d = unsafe { arg_mut(d, "d")? };
        check_vec_dtype(&a.inner, &d.inner, "d")?;
        if !d.inner.layout().compatible(a.inner.rows())
            || !a.inner.rows().compatible(a.inner.cols())
        {
            crate::bail!(
                SizeMismatch,
                "the diagonal needs a square operator with equal layouts and 'd' of that layout: operator {}x{}, 'd' of length {}",
                a.inner.rows().global_len(),
                a.inner.cols().global_len(),
                d.inner.layout().global_len()
            );
        }
        any_op!(&a.inner, op => {
            let dv = typed_vec_mut(&mut d.inner)?;
            if dv.is_device() {
                // diagonals are gathered on the host
                dv.staged(|h| op.diagonal(h))
            } else {
                op.diagonal(dv)
            }
        })
    })
}

/// The dot test on random vectors (seeded; the same for any number of ranks):
/// *relative_error = |<A x, y> - <x, A^H y>| / max(|<A x, y>|, |<x, A^H y>|). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_dottest(
    a: *const parlops_op,
    seed: u64,
    relative_error: *mut f64,
) -> parlops_status {
    guard("parlops_op_dottest", || {
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        comm.agree(out_ok(relative_error, "relative_error"))?;
        let r = any_op!(&a.inner, op => dottest(op.as_ref(), seed));
        let e = comm.agree(r)?;
        unsafe { *relative_error = e };
        Ok(())
    })
}

/// Release the operator and set `*A` to NULL (NULL `*A` is a no-op; a destroyed or foreign `*A` is
/// PARLOPS_ERR_INVALID_HANDLE and is left as it is). Compositions that use it keep their own
/// reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_destroy(a: *mut *mut parlops_op) -> parlops_status {
    guard("parlops_op_destroy", || unsafe { destroy(a, "A") })
}

// ------------------------------------------------------------------------------------------ compositions

fn compose2(
    a: *const parlops_op,
    b: *const parlops_op,
    out: *mut *mut parlops_op,
    f: impl FnOnce(&AnyOp, &AnyOp) -> Result<AnyOp>,
) -> Result<()> {
    let a = unsafe { arg(a, "A")? };
    let b = unsafe { arg(b, "B")? };
    out_ok(out, "out")?;
    same_dtype(&a.inner, &b.inner)?;
    let r = f(&a.inner, &b.inner)?;
    give(out, wrap(r));
    Ok(())
}

macro_rules! typed2 {
    ($a:expr, $b:expr, $t:ident, ($x:ident, $y:ident) => $body:expr) => {
        with_dtype!($a.dtype(), $t => {
            let $x = typed::<$t>($a).ok_or_else(|| crate::err!(Internal, "dtype"))?;
            let $y = typed::<$t>($b).ok_or_else(|| crate::err!(Internal, "dtype"))?;
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
            |a, b| typed2!(a, b, T, (x, y) => Product::<T>::new(x, y)),
        )
    })
}

fn compose1(
    a: *const parlops_op,
    out: *mut *mut parlops_op,
    f: impl FnOnce(&AnyOp) -> Result<AnyOp>,
) -> Result<()> {
    let a = unsafe { arg(a, "A")? };
    out_ok(out, "out")?;
    let r = f(&a.inner)?;
    give(out, wrap(r));
    Ok(())
}

macro_rules! typed1 {
    ($a:expr, $t:ident, $x:ident => $body:expr) => {
        with_dtype!($a.dtype(), $t => {
            let $x = typed::<$t>($a).ok_or_else(|| crate::err!(Internal, "dtype"))?;
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
            |a| typed1!(a, T, x => T::from_parts(alpha.re, alpha.im, "alpha").and_then(|al| LinComb::<T>::scale(al, x))),
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
        compose1(a, out, |a| typed1!(a, T, x => Conjugate::<T>::new(x, true)))
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
        compose1(a, out, |a| typed1!(a, T, x => Power::<T>::new(x, k)))
    })
}

// ------------------------------------------------------------------------------------------ constructors

fn layout_pair<'a>(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
) -> Result<(&'a Arc<Layout>, &'a Arc<Layout>)> {
    let r = unsafe { arg(rows, "rows")? };
    let c = unsafe { arg(cols, "cols")? };
    Ok((&r.inner, &c.inner))
}

/// Shared by collective constructors: build locally, agree on success and on the dtype across ranks.
fn create_agreed(
    comm: &Arc<crate::comm::Comm>,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    build: impl FnOnce(DType) -> Result<AnyOp>,
) -> Result<()> {
    // The arguments first: `build` may be collective, so every rank must enter it or none.
    let pre = out_ok(out, "out").and_then(|_| dtype_arg(dtype));
    let rows = comm.agree_with(
        pre.as_ref().map(|_| ()).map_err(|e| e.clone()),
        &[dtype as i64],
    )?;
    if rows.iter().any(|r| r[0] != dtype as i64) {
        crate::bail!(
            InconsistentAcrossRanks,
            "ranks passed different dtypes (codes by rank: {:?})",
            rows.iter().map(|r| r[0]).collect::<Vec<_>>()
        );
    }
    let local = comm.agree(pre.and_then(build))?;
    give(out, wrap(local));
    Ok(())
}

/// An operator given by user callbacks on local parts (PETSc's MATSHELL): `forward(ctx, x, y)` computes
/// this rank's part of y = A x; `adjoint` (may be NULL) this rank's part of x = A^H y. `destroy_ctx`
/// (may be NULL) is called with `ctx` when the operator (and the last composition holding it) is
/// destroyed; when this call fails, `destroy_ctx` is NOT called and the caller keeps ownership of
/// `ctx` (as with PETSc's MatCreateShell). A callback must not apply its own operator (or a
/// composition holding it) with parlops_op_apply, _multadd or their adjoints: such reentrant use is
/// not supported and fails with PARLOPS_ERR_NOT_SUPPORTED inside the callback (it does not
/// deadlock). Callbacks that need other
/// ranks' data communicate themselves. `memory` says what the callbacks take: PARLOPS_MEMORY_HOST,
/// host pointers; PARLOPS_MEMORY_CUDA, device pointers (the data is finished before the call, and
/// parlops waits for all device work, on any stream, after it returns). Vectors in the other memory
/// are copied for the call. Every rank must pass the same `memory`. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_shell(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    ctx: *mut c_void,
    forward: parlops_apply_fn,
    adjoint: parlops_apply_fn,
    destroy_ctx: parlops_destroy_fn,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_shell", || {
        let (r, c) = layout_pair(rows, cols)?;
        // host or device callbacks: the same on every rank (device vectors are staged otherwise,
        // which is collective)
        let all = r.comm().agree_with(Ok(()), &[memory as i64])?;
        if all.iter().any(|m| m[0] != memory as i64) {
            crate::bail!(
                InconsistentAcrossRanks,
                "ranks passed different 'memory' values (by rank: {:?})",
                all.iter().map(|m| m[0]).collect::<Vec<_>>()
            );
        }
        let guard_ctx = Arc::new(CtxGuard {
            ctx: ctx as usize,
            destroy: destroy_ctx,
            armed: std::sync::atomic::AtomicBool::new(false),
        });
        let armed = guard_ctx.clone();
        let made = create_agreed(r.comm(), dtype, out, |d| {
            let m = enum_arg(
                memory,
                "memory",
                "PARLOPS_MEMORY_HOST = 0 or PARLOPS_MEMORY_CUDA = 1",
                Location::from_code,
            )?;
            m.require_available()?;
            let Some(fwd) = forward else {
                return Err(null("forward"));
            };
            let rank = r.comm().rank();
            if m == Location::Cuda {
                // device callbacks get device addresses
                return with_dtype!(d, T => {
                    let g1 = guard_ctx.clone();
                    let f: crate::op::callback::DeviceFn = Box::new(move |x: u64, y: u64| {
                        call(fwd, g1.ctx, x as usize as *const c_void, y as usize as *mut c_void, "forward", rank)
                    });
                    let a = adjoint.map(|adj| {
                        let g2 = guard_ctx.clone();
                        Box::new(move |y: u64, x: u64| call(adj, g2.ctx, y as usize as *const c_void, x as usize as *mut c_void, "adjoint", rank))
                            as crate::op::callback::DeviceFn
                    });
                    Ok(op_of::<T>(Callback::<T>::new_device(r.clone(), c.clone(), f, a, "shell (device)")?))
                });
            }
            with_dtype!(d, T => {
                let g1 = guard_ctx.clone();
                let f: crate::op::callback::LocalFn<T> = Box::new(move |x: &[T], y: &mut [T]| {
                    call(fwd, g1.ctx, x.as_ptr().cast(), y.as_mut_ptr().cast(), "forward", rank)
                });
                let a = adjoint.map(|adj| {
                    let g2 = guard_ctx.clone();
                    Box::new(move |y: &[T], x: &mut [T]| call(adj, g2.ctx, y.as_ptr().cast(), x.as_mut_ptr().cast(), "adjoint", rank))
                        as crate::op::callback::LocalFn<T>
                });
                Ok(op_of::<T>(Callback::new(r.clone(), c.clone(), f, a, "shell")?))
            })
        });
        // on failure the caller keeps `ctx`: destroy_ctx only runs for an operator that was made
        if made.is_ok() {
            armed
                .armed
                .store(true, std::sync::atomic::Ordering::Release);
        }
        made
    })
}

/// Calls `destroy_ctx(ctx)` once, when the last closure holding it is dropped.
struct CtxGuard {
    ctx: usize,
    destroy: parlops_destroy_fn,
    /// Set once the operator exists: a failed create does not call `destroy`.
    armed: std::sync::atomic::AtomicBool,
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        if !self.armed.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        if let Some(d) = self.destroy {
            unsafe { d(self.ctx as *mut c_void) };
        }
    }
}

type RawFn = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;

fn call(
    f: RawFn,
    ctx: usize,
    x: *const c_void,
    y: *mut c_void,
    which: &str,
    rank: i32,
) -> Result<()> {
    let rc = unsafe { f(ctx as *mut c_void, x, y) };
    if rc != 0 {
        crate::bail!(
            Callback,
            "the {which} callback returned {rc} on rank {rank}"
        );
    }
    Ok(())
}

/// Read a caller's index array of `n` entries of the given width.
unsafe fn index_slice<'a, I: IndexInt>(p: *const c_void, n: usize, name: &str) -> Result<&'a [I]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(name));
    }
    if (p as usize) % std::mem::align_of::<I>() != 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ({p:p}) is not aligned for its index type"
        );
    }
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<I>(), n) })
}

unsafe fn value_slice<'a, T: Scalar>(p: *const c_void, n: usize, name: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(name));
    }
    if (p as usize) % std::mem::align_of::<T>() != 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ({p:p}) is not aligned for {}",
            T::DTYPE.name()
        );
    }
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<T>(), n) })
}

/// Number of entries of a CSR block from its row pointer (read after a null check).
unsafe fn nnz_of<I: IndexInt>(indptr: *const c_void, nrows: usize, name: &str) -> Result<usize> {
    let p = unsafe { index_slice::<I>(indptr, nrows + 1, name)? };
    let n = p[nrows].to_i64();
    if n < 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ends at {n}, a negative entry count"
        );
    }
    Ok(n as usize)
}

fn index_arg(it: parlops_index) -> Result<i32> {
    match it {
        0 | 1 => Ok(it),
        _ => crate::bail!(
            InvalidArgument,
            "argument 'index_type' is {it}; use PARLOPS_INDEX_I32 (0) or PARLOPS_INDEX_I64 (1)"
        ),
    }
}

/// A distributed sparse matrix from this rank's rows in CSR form with GLOBAL column indices
/// (`row_ptr` has local rows + 1 entries starting at 0; column indices strictly increasing within each
/// row). The arrays are copied (split into hypre's diag and offd blocks). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_csr(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    index_type: parlops_index,
    row_ptr: *const c_void,
    col_idx: *const c_void,
    values: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_csr", || {
        let (r, c) = layout_pair(rows, cols)?;
        let nrows = r.local_len() as usize;
        let pre = out_ok(out, "out")
            .and_then(|_| dtype_arg(dtype))
            .and_then(|_| index_arg(index_type));
        let d = dtype_arg(dtype).unwrap_or(DType::F64);
        let it = index_arg(index_type).unwrap_or(0);
        let built = with_dtype!(d, T => {
            fn go<T: Scalar, I: IndexInt>(
                r: &Arc<Layout>, c: &Arc<Layout>, nrows: usize, pre: Result<()>,
                p: *const c_void, j: *const c_void, v: *const c_void,
            ) -> Result<AnyOp> where Op<T>: IntoAnyOp {
                let arrays = pre.and_then(|_| unsafe {
                    let nnz = nnz_of::<I>(p, nrows, "row_ptr")?;
                    Ok((index_slice::<I>(p, nrows + 1, "row_ptr")?, index_slice::<I>(j, nnz, "col_idx")?, value_slice::<T>(v, nnz, "values")?))
                });
                let (pp, jj, vv, pre) = match arrays {
                    Ok((a, b, c)) => (a, b, c, Ok(())),
                    Err(e) => (&[][..], &[][..], &[][..], Err(e)),
                };
                Ok(op_of::<T>(CsrOp::<T>::from_local_rows(r.clone(), c.clone(), pp, jj, vv, pre)?))
            }
            if it == 0 { go::<T, i32>(r, c, nrows, pre.map(|_| ()), row_ptr, col_idx, values) } else { go::<T, i64>(r, c, nrows, pre.map(|_| ()), row_ptr, col_idx, values) }
        })?;
        let dts = r.comm().agree_with(Ok(()), &[dtype as i64])?;
        if dts.iter().any(|x| x[0] != dtype as i64) {
            crate::bail!(
                InconsistentAcrossRanks,
                "ranks passed different dtypes (codes by rank: {:?})",
                dts.iter().map(|x| x[0]).collect::<Vec<_>>()
            );
        }
        give(out, wrap(built));
        Ok(())
    })
}

/// Borrow (WRAP) or copy (COPY) a caller's array.
fn arr<X: Copy>(s: &[X], wrap_it: bool) -> Arr<X> {
    if wrap_it {
        Arr::Borrowed {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    } else {
        Arr::Owned(s.to_vec())
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn block<T: Scalar, I: IndexInt>(
    nrows: usize,
    ncols: usize,
    p: *const c_void,
    j: *const c_void,
    v: *const c_void,
    wrap_it: bool,
    names: [&str; 3],
    what: &str,
) -> Result<LocalCsr<T>>
where
    Idx: From<Arr<I>>,
{
    unsafe {
        let nnz = nnz_of::<I>(p, nrows, names[0])?;
        let pp = index_slice::<I>(p, nrows + 1, names[0])?;
        let jj = index_slice::<I>(j, nnz, names[1])?;
        let vv = value_slice::<T>(v, nnz, names[2])?;
        LocalCsr::new(
            nrows,
            ncols,
            Idx::from(arr(pp, wrap_it)),
            Idx::from(arr(jj, wrap_it)),
            arr(vv, wrap_it),
            what,
        )
    }
}

/// A distributed sparse matrix from hypre's ParCSR split (as in hypre_ParCSRMatrix and MFEM's
/// HypreParMatrix): `diag_*` is the CSR block of this rank's rows and owned columns (LOCAL column
/// indices, any order within a row), `offd_*` the block of other columns with compressed indices
/// 0..num_offd_cols-1, and `col_map_offd` their strictly increasing GLOBAL indices. `offd_*` may be NULL
/// when num_offd_cols is 0. With PARLOPS_WRAP the arrays are used in place (no copy: keep them alive and
/// unchanged while the operator lives); with PARLOPS_COPY they are copied. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_parcsr(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    index_type: parlops_index,
    diag_i: *const c_void,
    diag_j: *const c_void,
    diag_a: *const c_void,
    offd_i: *const c_void,
    offd_j: *const c_void,
    offd_a: *const c_void,
    num_offd_cols: i64,
    col_map_offd: *const i64,
    ownership: parlops_ownership,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_parcsr", || {
        let (r, c) = layout_pair(rows, cols)?;
        let nrows = r.local_len() as usize;
        let ncols = c.local_len() as usize;
        let pre = out_ok(out, "out")
            .and_then(|_| dtype_arg(dtype))
            .and_then(|_| index_arg(index_type))
            .and_then(|_| match ownership {
                0 => Ok(false),
                1 => Ok(true),
                o => crate::bail!(
                    InvalidArgument,
                    "argument 'ownership' is {o}; use PARLOPS_COPY (0) or PARLOPS_WRAP (1)"
                ),
            })
            .and_then(|w| {
                if num_offd_cols < 0 {
                    crate::bail!(
                        InvalidArgument,
                        "argument 'num_offd_cols' is {num_offd_cols}; it must be >= 0"
                    );
                }
                let cm = unsafe {
                    index_slice::<i64>(col_map_offd.cast(), num_offd_cols as usize, "col_map_offd")?
                };
                Ok((w, cm.to_vec()))
            });
        let d = dtype_arg(dtype).unwrap_or(DType::F64);
        let it = index_arg(index_type).unwrap_or(0);
        let (wrap_it, col_map, pre) = match pre {
            Ok((w, cm)) => (w, cm, Ok(())),
            Err(e) => (false, Vec::new(), Err(e)),
        };
        let nofd = col_map.len();
        let built = with_dtype!(d, T => {
            let blocks = pre.and_then(|_| unsafe {
                let (dg, od) = if it == 0 {
                    (
                        block::<T, i32>(nrows, ncols, diag_i, diag_j, diag_a, wrap_it, ["diag_i", "diag_j", "diag_a"], "diag"),
                        if offd_i.is_null() && nofd == 0 { Ok(None) } else {
                            block::<T, i32>(nrows, nofd, offd_i, offd_j, offd_a, wrap_it, ["offd_i", "offd_j", "offd_a"], "offd").map(Some)
                        },
                    )
                } else {
                    (
                        block::<T, i64>(nrows, ncols, diag_i, diag_j, diag_a, wrap_it, ["diag_i", "diag_j", "diag_a"], "diag"),
                        if offd_i.is_null() && nofd == 0 { Ok(None) } else {
                            block::<T, i64>(nrows, nofd, offd_i, offd_j, offd_a, wrap_it, ["offd_i", "offd_j", "offd_a"], "offd").map(Some)
                        },
                    )
                };
                Ok((dg?, od?))
            });
            let (dg, od) = match blocks {
                Ok((a, b)) => (Ok(a), Ok(b)),
                Err(e) => (Err(e.clone()), Err(e)),
            };
            CsrOp::<T>::from_parcsr(r.clone(), c.clone(), dg, od, col_map).map(op_of::<T>)
        })?;
        let dts = r.comm().agree_with(Ok(()), &[dtype as i64])?;
        if dts.iter().any(|x| x[0] != dtype as i64) {
            crate::bail!(
                InconsistentAcrossRanks,
                "ranks passed different dtypes (codes by rank: {:?})",
                dts.iter().map(|x| x[0]).collect::<Vec<_>>()
            );
        }
        give(out, wrap(built));
        Ok(())
    })
}

/// Addresses of the value arrays a CSR operator reads (diag and offd): with PARLOPS_WRAP they are the
/// caller's own pointers. For checking zero-copy use; either output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_csr_arrays(
    a: *const parlops_op,
    diag_values: *mut *const c_void,
    offd_values: *mut *const c_void,
) -> parlops_status {
    guard("parlops_op_csr_arrays", || {
        let a = unsafe { arg(a, "A")? };
        let ptrs: Option<(*const c_void, *const c_void)> = any_op!(&a.inner, op => {
            let any: &dyn std::any::Any = op_as_any(op.as_ref());
            csr_ptrs(any)
        });
        let Some((d, o)) = ptrs else {
            crate::bail!(
                InvalidArgument,
                "argument 'A' ({}) is not a CSR operator",
                a.inner.describe()
            );
        };
        unsafe {
            put_opt(diag_values, d);
            put_opt(offd_values, o);
        }
        Ok(())
    })
}

fn op_as_any<T: Scalar>(op: &dyn LinearOperator<T>) -> &dyn std::any::Any {
    op.as_any()
}

fn csr_ptrs(any: &dyn std::any::Any) -> Option<(*const c_void, *const c_void)> {
    macro_rules! try_t {
        ($t:ty) => {
            if let Some(c) = any.downcast_ref::<CsrOp<$t>>() {
                return Some((
                    c.diag_block().values_ptr().cast(),
                    c.offd_block().values_ptr().cast(),
                ));
            }
        };
    }
    try_t!(f32);
    try_t!(f64);
    try_t!(c32);
    try_t!(c64);
    None
}

/// A dense matrix distributed by block rows (PyLops-MPI's MatrixMult): `local_rows` holds this rank's
/// rows of the layout `rows`, all global columns, row-major (copied). The forward gathers x; the
/// adjoint sums over ranks. `cols` may be split or replicated. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_dense(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    local_rows: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_dense", || {
        let (r, c) = layout_pair(rows, cols)?;
        create_agreed(r.comm(), dtype, out, |d| {
            let n = crate::error::checked_product(
                "argument 'local_rows'",
                &[
                    ("local rows", r.local_len()),
                    ("global columns", c.global_len()),
                ],
            )? as usize;
            with_dtype!(d, T => {
                let vals = unsafe { value_slice::<T>(local_rows, n, "local_rows")? };
                let mut copy = crate::error::try_vec(0, T::zero(), "a copy of 'local_rows'")?;
                crate::error::try_reserve(&mut copy, n, "a copy of 'local_rows'")?;
                copy.extend_from_slice(vals);
                Ok(op_of::<T>(DenseBlockRow::<T>::new(r.clone(), c.clone(), copy)?))
            })
        })
    })
}

/// The identity on `layout`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_identity(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_identity", || {
        let l = unsafe { arg(layout, "layout")? };
        out_ok(out, "out")?;
        let d = dtype_arg(dtype)?;
        let op = with_dtype!(d, T => op_of::<T>(Identity::new(l.inner.clone())));
        give(out, wrap(op));
        Ok(())
    })
}

/// The zero operator from `cols` to `rows`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_zero(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_zero", || {
        let (r, c) = layout_pair(rows, cols)?;
        out_ok(out, "out")?;
        let d = dtype_arg(dtype)?;
        let op = with_dtype!(d, T => op_of::<T>(Zero::new(r.clone(), c.clone())));
        give(out, wrap(op));
        Ok(())
    })
}

/// diag(d): y = d .* x (d is copied; its layout is the operator's rows and columns).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_diagonal_matrix(
    d: *const parlops_vec,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_diagonal_matrix", || {
        let d = unsafe { arg(d, "d")? };
        out_ok(out, "out")?;
        let op = match &d.inner {
            AnyVec::F32(v) => op_of::<f32>(Diagonal::new(v)?),
            AnyVec::F64(v) => op_of::<f64>(Diagonal::new(v)?),
            AnyVec::C64(v) => op_of::<c32>(Diagonal::new(v)?),
            AnyVec::C128(v) => op_of::<c64>(Diagonal::new(v)?),
        };
        give(out, wrap(op));
        Ok(())
    })
}

/// This rank's local operators for a block constructor.
fn local_ops<T: Scalar>(n: c_int, ops: *const *const parlops_op) -> Result<Vec<Op<T>>> {
    if n < 0 {
        crate::bail!(
            InvalidArgument,
            "argument 'n_local' is {n}; it must be >= 0"
        );
    }
    if n > 0 && ops.is_null() {
        return Err(null("local_ops"));
    }
    (0..n as usize)
        .map(|i| {
            let p = unsafe { *ops.add(i) };
            let h = unsafe { arg(p, &format!("local_ops[{i}]"))? };
            if h.inner.dtype() != T::DTYPE {
                crate::bail!(
                    DTypeMismatch,
                    "local_ops[{i}] is {} but 'dtype' is {}",
                    h.inner.dtype().name(),
                    T::DTYPE.name()
                );
            }
            typed::<T>(&h.inner).ok_or_else(|| crate::err!(Internal, "dtype"))
        })
        .collect()
}

fn block_common(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
    kind: u8,
) -> Result<()> {
    let c = unsafe { arg(comm, "comm")? };
    let comm = c.inner.clone();
    // every rank takes part in the collective construction, a failing one with no blocks
    let d = dtype_arg(dtype);
    let dd = d.clone().unwrap_or(DType::F64);
    let built = with_dtype!(dd, T => {
        let mine = out_ok(out, "out").and(d.clone().map(|_| ())).and_then(|_| local_ops::<T>(n_local, ops));
        let (list, pre) = match mine {
            Ok(l) => (l, Ok(())),
            Err(e) => (Vec::new(), Err(e)),
        };
        comm.agree(pre)?;
        match kind {
            0 => BlockDiag::<T>::new(&comm, list).map(op_of::<T>),
            1 => VStack::<T>::new(&comm, list).map(op_of::<T>),
            _ => hstack::<T>(&comm, list).map(op_of::<T>),
        }
    });
    // a failure after the constructor's last collective (an allocation) is agreed here
    let dts = comm.agree_with(
        built.as_ref().map(|_| ()).map_err(|e| e.clone()),
        &[dtype as i64],
    )?;
    let built = built?;
    if dts.iter().any(|x| x[0] != dtype as i64) {
        crate::bail!(
            InconsistentAcrossRanks,
            "ranks passed different dtypes (codes by rank: {:?})",
            dts.iter().map(|x| x[0]).collect::<Vec<_>>()
        );
    }
    give(out, wrap(built));
    Ok(())
}

/// Block diagonal of per-rank local operators (created on MPI_COMM_SELF layouts): rank r's
/// `n_local` blocks (0 allowed) act on its part of x. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_block_diag(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_block_diag", || {
        block_common(comm, dtype, n_local, local_ops, out, 0)
    })
}

/// Vertical stack [A_1; A_2; ...] of per-rank local operators, all with the same number of columns:
/// x is replicated (broadcast layout), y split (rank r holds its blocks' rows). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_vstack(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_vstack", || {
        block_common(comm, dtype, n_local, local_ops, out, 1)
    })
}

/// Horizontal stack [A_1, A_2, ...] of per-rank local operators, all with the same number of rows:
/// x split (rank r holds its blocks' columns), y replicated (broadcast layout). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_hstack(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_hstack", || {
        block_common(comm, dtype, n_local, local_ops, out, 2)
    })
}

// ------------------------------------------------------------------------------------------ stencils

fn stencil_arg(k: parlops_stencil) -> Result<crate::op::stencil::Kind> {
    enum_arg(
        k,
        "kind",
        "PARLOPS_CENTERED, PARLOPS_FORWARD or PARLOPS_BACKWARD = 0..2",
        crate::op::stencil::Kind::from_code,
    )
}

/// Shared by the stencil constructors: validate locally, build collectively, agree on dtype.
fn stencil_common(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    build: impl Fn(DType, &Arc<Layout>, Result<()>) -> Result<AnyOp>,
    pre: Result<()>,
) -> Result<()> {
    let l = unsafe { arg(layout, "layout")? };
    let pre = pre
        .and_then(|_| out_ok(out, "out"))
        .and_then(|_| dtype_arg(dtype).map(|_| ()));
    let d = dtype_arg(dtype).unwrap_or(DType::F64);
    let built = build(d, &l.inner, pre);
    // a failure after the builder's last collective is agreed here
    let dts = l.inner.comm().agree_with(
        built.as_ref().map(|_| ()).map_err(|e| e.clone()),
        &[dtype as i64],
    )?;
    let built = built?;
    if dts.iter().any(|x| x[0] != dtype as i64) {
        crate::bail!(
            InconsistentAcrossRanks,
            "ranks passed different dtypes (codes by rank: {:?})",
            dts.iter().map(|x| x[0]).collect::<Vec<_>>()
        );
    }
    give(out, wrap(built));
    Ok(())
}

/// Agree on a local argument error first (the stencil builders are collective).
fn agreed(l: &Arc<Layout>, pre: Result<()>) -> Result<()> {
    l.comm().agree(pre)
}

/// Shared by the first and second derivative constructors.
#[allow(clippy::too_many_arguments)]
fn derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    second: bool,
) -> Result<()> {
    let k = stencil_arg(kind);
    let kk = *k.as_ref().unwrap_or(&crate::op::stencil::Kind::Centered);
    stencil_common(
        layout,
        dtype,
        out,
        |d, l, pre| {
            agreed(l, pre)?;
            with_dtype!(d, T => if second {
                crate::op::stencil::second_derivative::<T>(l, axis, sampling, kk, edge).map(op_of::<T>)
            } else {
                crate::op::stencil::first_derivative::<T>(l, axis, sampling, kk, edge).map(op_of::<T>)
            })
        },
        k.map(|_| ()),
    )
}

/// First derivative along `axis` of an N-D array (layout from parlops_layout_create_nd, split along
/// axis 0), PyLops' stencils: centered (3-point; `edge` uses one-sided differences at the ends),
/// forward or backward; `sampling` is the grid step. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_first_derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_first_derivative", || {
        derivative(layout, axis, sampling, kind, edge, dtype, out, false)
    })
}

/// Second derivative along `axis` (PyLops' SecondDerivative; `edge` for centered stencils). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_second_derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_second_derivative", || {
        derivative(layout, axis, sampling, kind, edge, dtype, out, true)
    })
}

/// Laplacian: sum over all axes of weights[a] times the centered second derivative with step
/// sampling[a] (arrays of ndim entries; a zero weight leaves the axis out). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_laplacian(
    layout: *const parlops_layout,
    weights: *const f64,
    sampling: *const f64,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_laplacian", || {
        let l = unsafe { arg(layout, "layout")? };
        let nd = l.inner.shape().len();
        let arrays = (|| unsafe {
            Ok((
                value_slice::<f64>(weights.cast(), nd, "weights")?.to_vec(),
                value_slice::<f64>(sampling.cast(), nd, "sampling")?.to_vec(),
            ))
        })();
        let (w, s, pre) = match arrays {
            Ok((w, s)) => (w, s, Ok(())),
            Err(e) => (vec![1.0; nd], vec![1.0; nd], Err(e)),
        };
        stencil_common(
            layout,
            dtype,
            out,
            |d, l, pre| {
                agreed(l, pre)?;
                with_dtype!(d, T => crate::op::stencil::laplacian::<T>(l, &w, &s).map(op_of::<T>))
            },
            pre,
        )
    })
}

/// Gradient: first derivatives along every axis (sampling has ndim entries). The output layout is
/// split like the input with rank r holding [d/dx_0 of its slab, d/dx_1 of its slab, ...]; get it with
/// parlops_op_layouts or parlops_op_create_vecs. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_gradient(
    layout: *const parlops_layout,
    sampling: *const f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_gradient", || {
        let l = unsafe { arg(layout, "layout")? };
        let nd = l.inner.shape().len();
        let k = stencil_arg(kind);
        let kk = *k.as_ref().unwrap_or(&crate::op::stencil::Kind::Centered);
        let s = unsafe { value_slice::<f64>(sampling.cast(), nd, "sampling") }.map(|s| s.to_vec());
        let pre = k
            .map(|_| ())
            .and(s.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let s = s.unwrap_or_else(|_| vec![1.0; nd]);
        stencil_common(
            layout,
            dtype,
            out,
            |d, l, pre| {
                agreed(l, pre)?;
                with_dtype!(d, T => crate::op::stencil::gradient::<T>(l, &s, kk, edge).map(op_of::<T>))
            },
            pre,
        )
    })
}

// ------------------------------------------------------------------------------------------ more catalogue

/// Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1): y[s] = G[s] x[s] for slices s,
/// G[s] nx x ny, x[s] ny x nz. This rank passes its `nsl_local` slices of G (row-major, nx*ny each; the
/// slices of all ranks in rank order make the whole G). x and y are replicated (broadcast layouts of
/// nsl*ny*nz and nsl*nx*nz entries). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_fredholm1(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    nsl_local: i64,
    nx: i64,
    ny: i64,
    nz: i64,
    g_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_fredholm1", || {
        let c = unsafe { arg(comm, "comm")? };
        let n = crate::error::checked_product(
            "argument 'g_local'",
            &[
                ("nsl_local", nsl_local.max(0)),
                ("nx", nx.max(0)),
                ("ny", ny.max(0)),
            ],
        );
        create_agreed(&c.inner.clone(), dtype, out, |d| {
            with_dtype!(d, T => {
                // read and copy the caller's G; a failure here joins the constructor's agreement
                let g = n.and_then(|n| {
                    let src = unsafe { value_slice::<T>(g_local, n as usize, "g_local")? };
                    let mut g = Vec::new();
                    crate::error::try_reserve(&mut g, src.len(), "a copy of 'g_local'")?;
                    g.extend_from_slice(src);
                    Ok(g)
                });
                let (g, pre) = match g {
                    Ok(g) => (g, Ok(())),
                    Err(e) => (Vec::new(), Err(e)),
                };
                crate::op::fredholm::Fredholm1::<T>::new_checked(&c.inner, nsl_local, nx, ny, nz, g, pre).map(op_of::<T>)
            })
        })
    })
}

/// This rank's block of an N-D array split over a Cartesian process grid as parlops_op_halo splits it
/// (PyLops-MPI's halo_block_split; `proc_grid` NULL puts all ranks on the last axis; ranks map to grid
/// coordinates row-major): `start` and `shape` get `ndim` entries each. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_halo_block(
    ndim: c_int,
    dims: *const i64,
    proc_grid: *const i64,
    nranks: c_int,
    rank: c_int,
    start: *mut i64,
    shape: *mut i64,
) -> parlops_status {
    guard("parlops_halo_block", || {
        if !(1..=32).contains(&ndim) {
            crate::bail!(
                InvalidArgument,
                "argument 'ndim' is {ndim}; it must be in 1..=32"
            );
        }
        if nranks < 1 || rank < 0 || rank >= nranks {
            crate::bail!(
                InvalidArgument,
                "arguments 'rank' ({rank}) and 'nranks' ({nranks}) need 0 <= rank < nranks"
            );
        }
        let nd = ndim as usize;
        if dims.is_null() {
            return Err(null("dims"));
        }
        out_ok(start, "start")?;
        out_ok(shape, "shape")?;
        let dims = unsafe { std::slice::from_raw_parts(dims, nd) };
        let grid: Vec<i64> = if proc_grid.is_null() {
            let mut g = vec![1; nd];
            g[nd - 1] = nranks as i64;
            g
        } else {
            unsafe { std::slice::from_raw_parts(proc_grid, nd) }.to_vec()
        };
        if grid.iter().any(|&g| g < 1) || grid.iter().product::<i64>() != nranks as i64 {
            crate::bail!(
                InvalidArgument,
                "process grid {grid:?} does not multiply to {nranks} ranks"
            );
        }
        let (s, sh) = crate::op::halo::local_block(dims, &grid, rank as i64);
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), start, nd);
            std::ptr::copy_nonoverlapping(sh.as_ptr(), shape, nd);
        }
        Ok(())
    })
}

/// Halo (ghost cells) over a Cartesian process grid (PyLops-MPI's MPIHalo): the input is split by
/// blocks (parlops_halo_block; the vector holds this rank's block row-major), the output holds this
/// rank's block padded by `halo` cells per side with its neighbours' values (zeros outside the array).
/// `halo` has 1 value (trimmed at the global boundary, as PyLops-MPI does), ndim values (both sides)
/// or 2*ndim values (minus, plus per axis). The adjoint adds ghost values back to their owners (the
/// true transpose). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_halo(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    ndim: c_int,
    dims: *const i64,
    proc_grid: *const i64,
    n_halo: c_int,
    halo: *const i64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_halo", || {
        let c = unsafe { arg(comm, "comm")? };
        let args = (|| {
            if !(1..=32).contains(&ndim) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'ndim' is {ndim}; it must be in 1..=32"
                );
            }
            if !(1..=64).contains(&n_halo) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'n_halo' is {n_halo}; give 1, ndim or 2*ndim widths"
                );
            }
            if dims.is_null() {
                return Err(null("dims"));
            }
            if halo.is_null() {
                return Err(null("halo"));
            }
            let nd = ndim as usize;
            let d = unsafe { std::slice::from_raw_parts(dims, nd) }.to_vec();
            let g = (!proc_grid.is_null())
                .then(|| unsafe { std::slice::from_raw_parts(proc_grid, nd) }.to_vec());
            let h = unsafe { std::slice::from_raw_parts(halo, n_halo as usize) }.to_vec();
            Ok((d, g, h))
        })();
        let (d, g, h, pre) = match args {
            Ok((d, g, h)) => (d, g, h, Ok(())),
            Err(e) => (vec![0], None, vec![0], Err(e)),
        };
        c.inner.agree(pre)?;
        create_agreed(
            &c.inner.clone(),
            dtype,
            out,
            |dt| with_dtype!(dt, T => crate::op::halo::halo::<T>(&c.inner, &d, g.as_deref(), &h).map(op_of::<T>)),
        )
    })
}

/// diag(A_1, ..., A_n) of distributed operators on `comm` (PyLops-MPI's MPIStackedBlockDiag): every
/// rank passes the same n operators; the stacked vectors hold, on each rank, its part of x_1, then
/// of x_2, and so on. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_stacked_block_diag(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n: c_int,
    ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_stacked_block_diag", || {
        let c = unsafe { arg(comm, "comm")? };
        let comm = c.inner.clone();
        let d = dtype_arg(dtype);
        let dd = d.clone().unwrap_or(DType::F64);
        let built = with_dtype!(dd, T => {
            let mine = out_ok(out, "out").and(d.clone().map(|_| ())).and_then(|_| local_ops::<T>(n, ops));
            let (list, pre) = match mine {
                Ok(l) => (l, Ok(())),
                Err(e) => (Vec::new(), Err(e)),
            };
            comm.agree(pre)?;
            crate::op::block::BlockDiag::<T>::stacked(&comm, list).map(op_of::<T>)
        })?;
        give(out, wrap(built));
        Ok(())
    })
}

/// Tile `index` of an extent `n` split over `grid` process rows or columns as the SUMMA operator
/// splits it: [index*b, min((index+1)*b, n)) with b = ceil(n / grid). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_summa_tile(
    n: i64,
    grid: c_int,
    index: c_int,
    start: *mut i64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_summa_tile", || {
        if n < 0 || grid < 1 || index < 0 || index >= grid {
            crate::bail!(
                InvalidArgument,
                "need n >= 0 and 0 <= index < grid, got n = {n}, grid = {grid}, index = {index}"
            );
        }
        let (s, l) = crate::op::summa::tile(n, grid as i64, index as i64);
        unsafe {
            put_opt(start, s);
            put_opt(len, l);
        }
        Ok(())
    })
}

/// Dense product Y = A X by SUMMA on a square p x p process grid (PyLops-MPI's MatrixMult, kind
/// "summa"; rank = row * p + col): A is N x K, X is K x M, Y is N x M, each split in tiles
/// (parlops_summa_tile); `a_local` is this rank's tile of A, row-major. Vectors hold this rank's tile
/// of X (columns) or Y (rows), row-major. Needs a square number of ranks. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_dense_summa(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n: i64,
    k: i64,
    m: i64,
    a_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_dense_summa", || {
        let c = unsafe { arg(comm, "comm")? };
        let size = c.inner.size() as i64;
        let g = (size as f64).sqrt().round() as i64;
        let rank = c.inner.rank() as i64;
        // an overflowing tile size is reported (with the names) by the constructor's checks
        let want = if g * g == size && n >= 0 && k >= 0 {
            crate::op::summa::tile(n, g, rank / g)
                .1
                .checked_mul(crate::op::summa::tile(k, g, rank % g).1)
                .unwrap_or(0) as usize
        } else {
            0
        };
        let d = dtype_arg(dtype);
        let dd = d.clone().unwrap_or(DType::F64);
        let built = with_dtype!(dd, T => {
            let a = out_ok(out, "out").and(d.clone().map(|_| ())).and_then(|_| unsafe { value_slice::<T>(a_local, want, "a_local") });
            let (tile, pre) = match a {
                Ok(s) => (s, Ok(())),
                Err(e) => (&[][..], Err(e)),
            };
            c.inner.agree(pre)?;
            crate::op::summa::Summa::<T>::new(&c.inner, n, k, m, tile).map(op_of::<T>)
        });
        let dts = c.inner.agree_with(
            built.as_ref().map(|_| ()).map_err(|e| e.clone()),
            &[dtype as i64],
        )?;
        let built = built?;
        if dts.iter().any(|x| x[0] != dtype as i64) {
            crate::bail!(
                InconsistentAcrossRanks,
                "ranks passed different dtypes (codes by rank: {:?})",
                dts.iter().map(|x| x[0]).collect::<Vec<_>>()
            );
        }
        give(out, wrap(built));
        Ok(())
    })
}
