//! Operators given by user callbacks (PETSc's MATSHELL).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::super::args::{dtype_arg, memory_arg, with_dtype};
use super::super::handles::{create_agreed, guard, null, parlops_layout, parlops_op};
use super::super::types::{parlops_dtype, parlops_memory, parlops_status};
use super::{layout_args, op_of, wrap};
use crate::error::Result;
use crate::memory::Location;
use crate::op::callback::Callback;

/// A user callback: compute this rank's part of the output from this rank's part of the input
/// (pointers to the local arrays, of the operator's dtype and memory). Return 0 on success; any other
/// value makes the call fail with PARLOPS_ERR_CALLBACK on every rank, with the value in the message.
pub type parlops_apply_fn = Option<
    unsafe extern "C" fn(ctx: *mut c_void, x_local: *const c_void, y_local: *mut c_void) -> c_int,
>;
/// A user callback giving this rank's part of an operator's diagonal: write the diagonal entries of
/// this rank's rows into `d_local` (of the operator's dtype and memory). Return 0 on success; any
/// other value makes the call that needed the diagonal fail with PARLOPS_ERR_CALLBACK on every rank.
pub type parlops_diagonal_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, d_local: *mut c_void) -> c_int>;
/// Frees a callback context when its operator is destroyed.
pub type parlops_destroy_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

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
        make_shell(
            rows,
            cols,
            dtype,
            memory,
            ctx,
            forward,
            adjoint,
            None,
            destroy_ctx,
            out,
        )
    })
}

/// As `parlops_op_create_shell`, with a callback giving this rank's part of the operator's diagonal
/// (PETSc's MATOP_GET_DIAGONAL, MFEM's AssembleDiagonal), so that `parlops_op_diagonal`, Jacobi
/// (`parlops_solver_set_jacobi`) and Chebyshev (`parlops_op_create_chebyshev`) work on a matrix-free
/// operator. `diagonal(ctx, d)` writes the diagonal entries of this rank's rows into `d` (the
/// operator's dtype, in `memory`); it is called when a diagonal is needed (a preconditioner's
/// set-up), and a non-zero return fails that call on every rank with PARLOPS_ERR_CALLBACK. The
/// operator must be square with equal row and column layouts; `diagonal` must not be NULL.
/// [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_shell_with_diagonal(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    ctx: *mut c_void,
    forward: parlops_apply_fn,
    adjoint: parlops_apply_fn,
    diagonal: parlops_diagonal_fn,
    destroy_ctx: parlops_destroy_fn,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_shell_with_diagonal", || {
        make_shell(
            rows,
            cols,
            dtype,
            memory,
            ctx,
            forward,
            adjoint,
            Some(diagonal),
            destroy_ctx,
            out,
        )
    })
}

/// The body of both shell constructors (`diag`: the diagonal argument of
/// `parlops_op_create_shell_with_diagonal`, None for `parlops_op_create_shell`).
#[allow(clippy::too_many_arguments)]
fn make_shell(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    ctx: *mut c_void,
    forward: parlops_apply_fn,
    adjoint: parlops_apply_fn,
    diag: Option<parlops_diagonal_fn>,
    destroy_ctx: parlops_destroy_fn,
    out: *mut *mut parlops_op,
) -> Result<()> {
    let (r, c, prints) = layout_args(rows, cols)?;
    // host or device callbacks: the same on every rank (device vectors are staged otherwise,
    // which is collective)
    let args = c
        .clone()
        .and_then(|_| dtype_arg(dtype))
        .and_then(|d| Ok((d, memory_arg(memory)?)));
    let guard_ctx = Arc::new(CtxGuard {
        ctx: ctx as usize,
        destroy: destroy_ctx,
        armed: std::sync::atomic::AtomicBool::new(false),
    });
    let armed = guard_ctx.clone();
    let pre = args.as_ref().map(|_| ()).map_err(|e| e.clone());
    let same = [dtype as i64, memory as i64, prints];
    let what =
        "dtypes, 'memory' values or layouts ([dtype, memory] codes, the layouts' fingerprints)";
    let made = create_agreed(r.comm(), out, pre, what, &same, || {
        let (d, m) = args?;
        let c = c?;
        m.require_available()?;
        let Some(fwd) = forward else {
            return Err(null("forward"));
        };
        let diag = match diag {
            Some(None) => return Err(null("diagonal")),
            Some(Some(f)) => Some(f),
            None => None,
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
                let mut op = Callback::<T>::new_device(r.clone(), c.clone(), f, a, "shell (device)")?;
                if let Some(df) = diag {
                    let g3 = guard_ctx.clone();
                    op = op.with_device_diagonal(Box::new(move |dp: u64| call_diagonal(df, g3.ctx, dp as usize as *mut c_void, rank)))?;
                }
                Ok(op_of::<T>(op))
            })
            .map(wrap);
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
            let mut op = Callback::new(r.clone(), c.clone(), f, a, "shell")?;
            if let Some(df) = diag {
                let g3 = guard_ctx.clone();
                op = op.with_diagonal(Box::new(move |d: &mut [T]| call_diagonal(df, g3.ctx, d.as_mut_ptr().cast(), rank)))?;
            }
            Ok(op_of::<T>(op))
        })
        .map(wrap)
    });
    // on failure the caller keeps `ctx`: destroy_ctx only runs for an operator that was made
    if made.is_ok() {
        armed
            .armed
            .store(true, std::sync::atomic::Ordering::Release);
    }
    made
}

/// Calls `destroy_ctx(ctx)` once, when the last closure holding it is dropped.
pub(crate) struct CtxGuard {
    ctx: usize,
    destroy: parlops_destroy_fn,
    /// Set once the operator exists: a failed create does not call `destroy`.
    armed: std::sync::atomic::AtomicBool,
}

impl CtxGuard {
    /// A guard not yet armed: `destroy` runs only after [`CtxGuard::arm`] (the object was made).
    pub(crate) fn new(ctx: *mut c_void, destroy: parlops_destroy_fn) -> Self {
        CtxGuard {
            ctx: ctx as usize,
            destroy,
            armed: std::sync::atomic::AtomicBool::new(false),
        }
    }
    pub(crate) fn arm(&self) {
        self.armed.store(true, std::sync::atomic::Ordering::Release);
    }
    pub(crate) fn ctx(&self) -> *mut c_void {
        self.ctx as *mut c_void
    }
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        if !self.armed.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        if let Some(d) = self.destroy {
            // SAFETY: `d` is the caller's `destroy_ctx` for `ctx` (header contract of
            // parlops_op_create_shell); this guard is the last holder of `ctx` (dropped with the
            // last closure of the operator) and `armed` only once the operator was made, so it runs
            // once, after the callbacks' last use, and never for a failed create (where the caller
            // keeps `ctx`).
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
    // SAFETY: `f` is the caller's `forward` or `adjoint` with this signature and `ctx` its context,
    // alive until `destroy_ctx` (header contract of parlops_op_create_shell); `x` and `y` are this
    // rank's local arrays of the operator's dtype in the memory the callbacks were declared for,
    // borrowed by the closures that call this for the length of the call.
    let rc = unsafe { f(ctx as *mut c_void, x, y) };
    if rc != 0 {
        crate::bail!(
            Callback,
            "the {which} callback returned {rc} on rank {rank}"
        );
    }
    Ok(())
}

type DiagFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

fn call_diagonal(f: DiagFn, ctx: usize, d: *mut c_void, rank: i32) -> Result<()> {
    // SAFETY: `f` is the caller's `diagonal` with this signature and `ctx` its context, alive until
    // `destroy_ctx` (header contract of parlops_op_create_shell_with_diagonal); `d` is this rank's
    // local array of the operator's row length, of its dtype, in the memory the callbacks were
    // declared for, borrowed by the closure that calls this for the length of the call.
    let rc = unsafe { f(ctx as *mut c_void, d) };
    if rc != 0 {
        crate::bail!(
            Callback,
            "the diagonal callback returned {rc} on rank {rank}"
        );
    }
    Ok(())
}
