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

mod shell;

mod csr;

mod dense;

mod basic;

mod block;

mod stencil;

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
    }
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
    let r = unsafe { arg(rows, "rows")? };
    let c = unsafe { arg(cols, "cols")? };
    Ok((&r.inner, &c.inner))
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
    let d = dtype_arg(dtype);
    let pre = d.clone().map(|_| ()).and(pre);
    create_agreed(comm, out, pre, "dtypes", &[dtype as i64], || {
        build(d?).map(wrap)
    })
}

/// This rank's `n` operators for a block constructor, each of `dtype`.
fn local_ops(n: c_int, ops: *const *const parlops_op, dtype: parlops_dtype) -> Result<Vec<AnyOp>> {
    let d = dtype_arg(dtype)?;
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
