//! Operators, one file per family as in `src/op/`. Every collective constructor follows one idiom,
//! [`create_op`] (that is [`create_agreed`]): this rank's argument checks and the dtype agreed across
//! ranks before anything collective, then the build, then the outcome agreed, then the handle.
//!
//! The modules are declared in the order their functions appear in `include/parlops.h` (cbindgen
//! writes them in module order): keep it so, or the generated header changes. For that reason the
//! distributed stack (`stacked`) sits between `halo` and `summa` rather than in `block`.

// In header order; blank lines keep rustfmt from sorting them by name.
mod apply;

mod compose;

pub(crate) mod shell;

mod csr;

mod dense;

mod basic;

mod block;

mod stencil;

mod fft;
mod fredholm;

mod halo;

mod stacked;

mod summa;

mod precond;

pub use apply::*;
pub use basic::*;
pub use block::*;
pub use compose::*;
pub use csr::*;
pub use dense::*;
pub use fft::*;
pub use fredholm::*;
pub use halo::*;
pub use precond::*;
pub use shell::*;
pub use stacked::*;
pub use stencil::*;
pub use summa::*;

use std::ffi::c_int;
use std::sync::Arc;

use super::args::dtype_arg;
use super::handles::{arg, arg_array, create_agreed, parlops_layout, parlops_op};
use super::types::parlops_dtype;
use crate::comm::Comm;
use crate::error::Result;
use crate::op::{AnyOp, IntoAnyOp, LinearOperator, Op};
use crate::scalar::{DType, Scalar};
use crate::vector::Layout;

pub(crate) fn wrap(op: AnyOp) -> parlops_op {
    parlops_op {
        inner: op,
        work: Default::default(),
        ident: 0,
    }
}

/// An operator made locally from others (a composition) or from layouts (identity, zero, a
/// diagonal): its identity from what it is made of, so that the same construction gives the same
/// identity on every rank. `parts` are the kind's code, the inputs' identities and parameters.
pub(crate) fn wrap_derived(op: AnyOp, parts: &[i64]) -> parlops_op {
    let mut w = wrap(op);
    let mut v = vec![0x0c02, w.inner.dtype() as i64];
    v.extend_from_slice(parts);
    w.ident = crate::comm::list_hash(&v, 0);
    w
}

/// Give an operator made by a collective call outside [`create_op`]: its outcome agreed with its
/// serial (its identity). [collective]
pub(crate) fn give_agreed(
    comm: &Comm,
    out: *mut *mut parlops_op,
    made: Result<AnyOp>,
) -> Result<()> {
    let (op, serial) = super::handles::agree_serial(comm, made)?;
    let mut w = wrap(op);
    super::handles::Handle::agreed_serial(&mut w, serial);
    super::handles::give(out, w);
    Ok(())
}

/// The identities of a list of operators (NULL entries as 0), as one value for an agreement.
pub(crate) fn idents_of<'a>(ops: impl IntoIterator<Item = Option<&'a parlops_op>>) -> i64 {
    let v: Vec<i64> = ops
        .into_iter()
        .map(|o| o.map_or(0, |o| o.ident as i64))
        .collect();
    idents_of_values(&v)
}

/// [`idents_of`] for a caller's array of `n` operator handles (NULL, or not a live operator: 0; a
/// NULL array or a negative count: nothing), as it stands before the arguments are checked.
pub(crate) fn idents_of_array(n: c_int, ops: *const *const parlops_op) -> i64 {
    if ops.is_null() || n <= 0 {
        return idents_of(std::iter::empty());
    }
    idents_of(
        // SAFETY: the callers pass the C caller's operator array and its count, which hold `n`
        // readable handle pointers when not NULL and `n` > 0 (header contracts); `i` < `n`.
        // `opt_arg` checks each against the registry and holds it shared for this call, only to
        // read its identity.
        (0..n as usize).map(|i| unsafe { super::handles::opt_arg(*ops.add(i), "").ok().flatten() }),
    )
}

/// [`idents_of`] from the identities themselves.
pub(crate) fn idents_of_values(v: &[i64]) -> i64 {
    crate::comm::list_hash(v, 1) as i64
}

fn op_of<T: Scalar>(v: impl LinearOperator<T> + 'static) -> AnyOp
where
    Op<T>: IntoAnyOp,
{
    (Arc::new(v) as Op<T>).into_any()
}

/// The typed operator inside `a` (its dtype checked before).
fn typed<T: Scalar>(a: &AnyOp) -> Result<Op<T>> {
    a.typed::<T>().ok_or_else(|| crate::err!(Internal, "dtype"))
}

fn layout_pair<'a>(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
) -> Result<(&'a Arc<Layout>, &'a Arc<Layout>)> {
    // SAFETY: `rows` and `cols` are handle arguments of the exported constructor calling this;
    // `arg` checks each (live parlops_layout) and holds it for that call, and the `Arc`s are used
    // only within it.
    let r = unsafe { arg(rows, "rows")? };
    // SAFETY: as above: `cols` is checked and held by `arg` for this call; layouts are only read,
    // so it may be `rows` again.
    let c = unsafe { arg(cols, "cols")? };
    Ok((&r.inner, &c.inner))
}

/// The layouts of a collective constructor: `rows` names the communicator (a rank without it cannot
/// take part: it returns at once), `cols` is checked with the constructor's other arguments (its
/// error goes into the agreement), and both layouts' fingerprints make the value to agree
/// ([`create_op_of`]'s `inputs`), so that ranks passing different layouts fail together.
#[allow(clippy::type_complexity)]
fn layout_args<'a>(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
) -> Result<(&'a Arc<Layout>, Result<&'a Arc<Layout>>, i64)> {
    // SAFETY: as above: `rows` is checked and held by `arg` for this call.
    let r = unsafe { arg(rows, "rows")? };
    // SAFETY: as above: `cols` is checked and held by `arg` for this call (its error joins the
    // agreement).
    let c = unsafe { arg(cols, "cols") }.map(|c| &c.inner);
    let prints = [
        r.inner.fingerprint(),
        c.as_ref().map_or(0, |c| c.fingerprint()),
    ];
    Ok((&r.inner, c, idents_of_values(&prints)))
}

/// [`create_op_of`] for a constructor on a row and a column layout ([`layout_args`]): a bad `cols`
/// joins this rank's other checks `pre`, the layouts are agreed with the dtype, and `build` gets the
/// dtype and both layouts. [collective]
fn create_op_on(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    pre: Result<()>,
    build: impl FnOnce(DType, &Arc<Layout>, &Arc<Layout>) -> Result<AnyOp>,
) -> Result<()> {
    let (r, c, prints) = layout_args(rows, cols)?;
    let pre = c.clone().map(|_| ()).and(pre);
    let inputs = Some(("layouts (rows and cols)", prints));
    create_op_of(r.comm(), dtype, out, pre, inputs, |d| build(d, r, c?))
}

/// The construction idiom of the collective operator constructors: [`create_agreed`] with the
/// dtype parsed (after `out`, before this rank's other checks `pre`) and agreed across ranks;
/// `build` gets the dtype.
fn create_op(
    comm: &Comm,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    pre: Result<()>,
    build: impl FnOnce(DType) -> Result<AnyOp>,
) -> Result<()> {
    create_op_of(comm, dtype, out, pre, None, build)
}

/// [`create_op`] for a constructor that takes operators or layouts: `inputs` (what they are, for the
/// message, and the identity of the operators it takes, [`idents_of`], or its layouts'
/// fingerprints, [`layout_args`]) is agreed with the dtype, so that ranks passing different
/// operators or layouts fail together.
fn create_op_of(
    comm: &Comm,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    pre: Result<()>,
    inputs: Option<(&str, i64)>,
    build: impl FnOnce(DType) -> Result<AnyOp>,
) -> Result<()> {
    let d = dtype_arg(dtype);
    let pre = d.clone().map(|_| ()).and(pre);
    let mut same = vec![dtype as i64];
    let what = match inputs {
        Some((what, h)) => {
            same.push(h);
            format!("dtypes or {what} ([dtype, a summary of the {what}])")
        }
        None => "dtypes".to_string(),
    };
    create_agreed(comm, out, pre, &what, &same, || build(d?).map(wrap))
}

/// This rank's `n` operators for a block constructor, each of `dtype`.
fn local_ops(n: c_int, ops: *const *const parlops_op, dtype: parlops_dtype) -> Result<Vec<AnyOp>> {
    let d = dtype_arg(dtype)?;
    // SAFETY: `ops` and `n` are the C caller's operator array and count, `n` handles when `n` > 0
    // (header contract); `arg_array` checks the count, NULL and each handle, and only the `AnyOp`s
    // (cloned `Arc`s) are kept.
    unsafe { arg_array(n, ops, "n_local", "local_ops")? }
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            if h.inner.dtype() != d {
                crate::bail!(
                    DTypeMismatch,
                    "local_ops[{i}] is {} but 'dtype' is {}",
                    h.inner.dtype().name(),
                    d.name()
                );
            }
            Ok(h.inner.clone())
        })
        .collect()
}

/// The typed operators of a list checked by [`local_ops`].
fn typed_list<T: Scalar>(list: &[AnyOp]) -> Result<Vec<Op<T>>> {
    list.iter().map(typed::<T>).collect()
}
