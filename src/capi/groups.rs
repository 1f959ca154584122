//! Rank groups (PyLops-MPI's `mask`): a communicator split into groups, vectors whose groups each
//! hold a full copy split within the group, and dot products and norms within a group (the
//! ordinary functions on the group's vectors) or across groups.

use std::ffi::c_int;
use std::sync::Arc;

use super::handles::{arg, give, guard, out_ok, parlops_comm, parlops_vec};
use super::types::{parlops_norm, parlops_scalar, parlops_status};
use crate::error::Result;
use crate::vector::{AnyVec, NormKind};

/// Rank groups, PyLops-MPI's `mask`: the ranks of `comm` that pass the same `group` (>= 0; this
/// rank's mask value) form one communicator, returned on each of them, ranks ordered as in `comm`.
/// A layout and vectors on it are what PyLops-MPI's DistributedArray with a mask is: each group holds
/// a full copy of the global vector, split over the group's ranks, and every vector operation,
/// operator and solver works within the group (a dot product or norm reduces over the group only,
/// and gives each group its own value). parlops_vec_dot_groups and parlops_vec_norm_groups take them
/// across all groups instead (over `comm`). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_comm_split(
    comm: *const parlops_comm,
    group: c_int,
    out: *mut *mut parlops_comm,
) -> parlops_status {
    guard("parlops_comm_split", || {
        // SAFETY: `arg` checks `comm` against the handle registry (live parlops_comm) and holds it
        // for this call; the reference stays in this closure.
        let c = unsafe { arg(comm, "comm")? };
        let pre = out_ok(out, "out").and_then(|_| {
            if group < 0 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'group' is {group}; it must be >= 0"
                );
            }
            Ok(())
        });
        c.inner.agree(pre)?;
        let sub = c.inner.split(group, c.inner.rank())?;
        give(
            out,
            parlops_comm {
                inner: Arc::new(sub),
            },
        );
        Ok(())
    })
}

/// The vectors' own communicator must be a group of `parent`: at least check that it is not larger.
fn check_group(parent: &crate::comm::Comm, v: &AnyVec, name: &str) -> Result<()> {
    let size = v.layout().comm().size();
    if size > parent.size() {
        crate::bail!(
            InvalidArgument,
            "{name} lives on {size} ranks, more than 'comm' ({}): it must be a group of it (parlops_comm_split)",
            parent.size()
        );
    }
    Ok(())
}

/// *out = the sum over all rank groups of each group's x^H y (x and y of one layout on the group's
/// communicator from parlops_comm_split of `comm`; split vectors): the dot product of all groups'
/// vectors stacked. Every rank of `comm` calls it. [collective over comm]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_dot_groups(
    comm: *const parlops_comm,
    x: *const parlops_vec,
    y: *const parlops_vec,
    out: *mut parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_dot_groups", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        // with one valid vector this rank still joins the reduction and reports the other
        // SAFETY: as above for `x` and `y`; both are only read, so the same vector twice is fine.
        let (xr, yr) = unsafe { (arg(x, "x"), arg(y, "y")) };
        let (a, b, pre) = match (xr, yr) {
            (Ok(a), Ok(b)) => (
                a,
                b,
                out_ok(out, "out").and_then(|_| check_group(c, &a.inner, "x")),
            ),
            (Ok(a), Err(e)) => (a, a, Err(e)),
            (Err(e), Ok(b)) => (b, b, Err(e)),
            (Err(e), Err(_)) => return Err(e),
        };
        let (re, im) = AnyVec::dot_across(c, &a.inner, &b.inner, pre)?;
        // SAFETY: `out` was checked not NULL by `out_ok` in `pre`, and `dot_across` fails on every
        // rank when `pre` does, so this line runs only with `out` checked; the header contract
        // makes it writable.
        unsafe { *out = parlops_scalar { re, im } };
        Ok(())
    })
}

/// *out = the norm of all rank groups' vectors stacked (`kind` and `p` as parlops_vec_norm; v a split
/// vector on a group's communicator from parlops_comm_split of `comm`). Every rank of `comm` calls
/// it. [collective over comm]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_norm_groups(
    comm: *const parlops_comm,
    v: *const parlops_vec,
    kind: parlops_norm,
    p: f64,
    out: *mut f64,
) -> parlops_status {
    guard("parlops_vec_norm_groups", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = match unsafe { arg(v, "v") } {
            Ok(v) => v,
            // this rank's bad vector, in the collective every rank of comm makes
            Err(e) => return c.allgather_checked(Err(e), 3).map(|_| ()),
        };
        let k = out_ok(out, "out")
            .and_then(|_| check_group(c, &v.inner, "v"))
            .and_then(|_| NormKind::from_code(kind, p));
        let n = v.inner.norm_across(c, k)?;
        // SAFETY: `out_ok(out)` is the first step of `k`, and `norm_across` fails when `k` does, so
        // `out` is not NULL here; the header contract makes it writable.
        unsafe { *out = n };
        Ok(())
    })
}
