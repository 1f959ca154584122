//! hypre's options by name (an opaque set that can grow without breaking the ABI), BoomerAMG made
//! with them and with near-null-space vectors, and the rigid-body modes of elasticity.

use std::ffi::{CStr, c_char, c_void};

use super::args::array_arg;
use super::handles::{
    Handle, Kind, arg, arg_mut, create_agreed, destroy, give, guard, null, out_ok, parlops_op,
};
use super::op::{PARLOPS_DOF_BLOCKED, PARLOPS_DOF_INTERLEAVED, parlops_amg_options};
use super::types::parlops_status;
use crate::error::Result;
use crate::hypre::amg::BoomerAmg;
use crate::hypre::options::HypreOptions;
use crate::op::csr::CsrOp;
use crate::op::{IntoAnyOp, Op};

/// Which hypre solver a set of options is for.
pub type parlops_hypre_solver = i32;
/// BoomerAMG (parlops_op_create_boomeramg_with).
pub const PARLOPS_HYPRE_BOOMERAMG: parlops_hypre_solver = 0;
/// AMS (parlops_op_create_ams).
pub const PARLOPS_HYPRE_AMS: parlops_hypre_solver = 1;
/// ADS (parlops_op_create_ads).
pub const PARLOPS_HYPRE_ADS: parlops_hypre_solver = 2;

/// A set of options of one hypre solver, by hypre's names (opaque; local to the process, not
/// collective).
pub struct parlops_hypre_options {
    pub(crate) inner: HypreOptions,
}

impl Handle for parlops_hypre_options {
    const KIND: Kind = Kind::HypreOptions;
}

/// The longest option name read (a name is a NUL-terminated string of at most this many bytes).
const MAX_NAME: usize = 255;

/// The caller's option name: not NULL, NUL-terminated within [`MAX_NAME`] bytes, UTF-8.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string (or to at least `MAX_NAME + 1` readable bytes).
unsafe fn name_arg<'a>(p: *const c_char) -> Result<&'a str> {
    if p.is_null() {
        return Err(null("name"));
    }
    // SAFETY: `p` is not NULL and (header contract) a C string: `strnlen` reads at most `MAX_NAME
    // + 1` bytes, stopping at its NUL.
    let len = unsafe { libc::strnlen(p, MAX_NAME + 1) };
    if len > MAX_NAME {
        crate::bail!(
            InvalidArgument,
            "argument 'name' is longer than {MAX_NAME} bytes (or not NUL-terminated)"
        );
    }
    // SAFETY: `strnlen` found a NUL at `len` <= MAX_NAME, so `p[..=len]` is readable and ends in
    // that NUL.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|_| {
        crate::err!(
            InvalidArgument,
            "argument 'name' is not UTF-8 ({:?})",
            c.to_string_lossy()
        )
    })
}

/// An empty set of options for `solver`: PARLOPS_HYPRE_BOOMERAMG (hypre's defaults),
/// PARLOPS_HYPRE_AMS or PARLOPS_HYPRE_ADS (MFEM's HypreAMS and HypreADS defaults). Not collective:
/// set the same options on every rank before the collective create.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_create(
    solver: parlops_hypre_solver,
    out: *mut *mut parlops_hypre_options,
) -> parlops_status {
    guard("parlops_hypre_options_create", || {
        out_ok(out, "out")?;
        let inner = match solver {
            PARLOPS_HYPRE_BOOMERAMG => HypreOptions::boomeramg(),
            PARLOPS_HYPRE_AMS => HypreOptions::ams(),
            PARLOPS_HYPRE_ADS => HypreOptions::ads(),
            s => crate::bail!(
                InvalidArgument,
                "argument 'solver' is {s}; it must be PARLOPS_HYPRE_BOOMERAMG (0), PARLOPS_HYPRE_AMS (1) or PARLOPS_HYPRE_ADS (2)"
            ),
        };
        give(out, parlops_hypre_options { inner });
        Ok(())
    })
}

/// Free a set of options and set `*o` to NULL (NULL `*o`: nothing to do).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_destroy(
    o: *mut *mut parlops_hypre_options,
) -> parlops_status {
    // SAFETY: `destroy` checks `o` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `o` points to its handle variable.
    guard("parlops_hypre_options_destroy", || unsafe {
        destroy(o, "o")
    })
}

/// Set the integer option `name` (hypre's name, matched ignoring case and underscores) to `value`.
/// An unknown name, a real option, or a value outside those accepted fails naming the option and
/// what it accepts, and leaves the set as it was.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_set_int(
    o: *mut parlops_hypre_options,
    name: *const c_char,
    value: i64,
) -> parlops_status {
    guard("parlops_hypre_options_set_int", || {
        // SAFETY: `arg_mut` checks `o` against the registry and holds it exclusively for this call.
        let o = unsafe { arg_mut(o, "o")? };
        // SAFETY: `name` is NULL or the caller's C string (header contract).
        let name = unsafe { name_arg(name)? };
        o.inner.set_int(name, value)
    })
}

/// Set the real option `name` to `value` (finite, within the option's range); as
/// parlops_hypre_options_set_int otherwise.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_set_real(
    o: *mut parlops_hypre_options,
    name: *const c_char,
    value: f64,
) -> parlops_status {
    guard("parlops_hypre_options_set_real", || {
        // SAFETY: as above: `o` is checked and held exclusively by `arg_mut` for this call.
        let o = unsafe { arg_mut(o, "o")? };
        // SAFETY: as above: `name` is NULL or the caller's C string.
        let name = unsafe { name_arg(name)? };
        o.inner.set_real(name, value)
    })
}

/// Set the options a parlops_amg_options struct holds (its non-negative values; num_functions,
/// dof_ordering and print_level always), checked as parlops_op_create_boomeramg checks them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_set_amg(
    o: *mut parlops_hypre_options,
    options: *const parlops_amg_options,
) -> parlops_status {
    guard("parlops_hypre_options_set_amg", || {
        // SAFETY: as above: `o` is checked and held exclusively by `arg_mut` for this call.
        let o = unsafe { arg_mut(o, "o")? };
        if options.is_null() {
            return Err(null("options"));
        }
        // SAFETY: `options` is not NULL (checked just above) and points to the caller's struct
        // (header contract); every field is an `i32` or `f64`, valid for any bits, copied at once.
        let s = unsafe { *options };
        let a = super::op::amg_options(&s)?;
        if o.inner.solver() != "BoomerAMG" {
            crate::bail!(
                InvalidArgument,
                "argument 'o' holds options of another solver than BoomerAMG"
            );
        }
        let mut h = a.to_hypre()?;
        // the struct's own values win; what it leaves at hypre's default keeps what was set
        for (spec, v) in o.inner.set_options() {
            if h.get(spec.name).is_none() {
                match v {
                    crate::hypre::options::Value::Int(i) => h.set_int(spec.name, i)?,
                    crate::hypre::options::Value::Real(r) => h.set_real(spec.name, r)?,
                }
            }
        }
        o.inner = h;
        Ok(())
    })
}

/// Set what MFEM's HypreBoomerAMG::SetElasticityOptions sets for a `dim`-dimensional (2 or 3)
/// problem, over MFEM's defaults: NumFunctions = dim (unknowns node by node), AggNumLevels 0,
/// StrongThreshold 0.5, CoarsenType 10, InterpType 6, PMaxElmts 4, RelaxType 8, Nodal 4, NodalDiag
/// 1, CycleRelaxTypeCoarse 8, InterpVecVariant 2, InterpVecQMax 4, SmoothInterpVectors 1,
/// InterpRefine 1. Pass the rigid-body modes (parlops_rigid_body_modes) to
/// parlops_op_create_boomeramg_with.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_set_elasticity(
    o: *mut parlops_hypre_options,
    dim: i32,
) -> parlops_status {
    guard("parlops_hypre_options_set_elasticity", || {
        // SAFETY: as above: `o` is checked and held exclusively by `arg_mut` for this call.
        let o = unsafe { arg_mut(o, "o")? };
        let mut h = o.inner.clone();
        h.set_elasticity(dim.into())?;
        o.inner = h;
        Ok(())
    })
}

/// The options this set takes (name, type, accepted values, what it does), then the values set,
/// as text. Writes at most `len` bytes including the final NUL into `buf` (which may be NULL when
/// `len` is 0); `*needed` (may be NULL) gets the full length plus one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_hypre_options_describe(
    o: *const parlops_hypre_options,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> parlops_status {
    guard("parlops_hypre_options_describe", || {
        // SAFETY: `arg` checks `o` against the registry and holds it shared for this call.
        let o = unsafe { arg(o, "o")? };
        if buf.is_null() && len > 0 {
            crate::bail!(NullArgument, "argument 'buf' is NULL but 'len' is {len}");
        }
        let mut text = o.inner.describe_table();
        text.push_str("set:");
        let mut any = false;
        for (spec, v) in o.inner.set_options() {
            any = true;
            match v {
                crate::hypre::options::Value::Int(i) => {
                    text.push_str(&format!(" {}={i}", spec.name))
                }
                crate::hypre::options::Value::Real(r) => {
                    text.push_str(&format!(" {}={r}", spec.name))
                }
            }
        }
        if !any {
            text.push_str(" (none: hypre's defaults)");
        }
        text.push('\n');
        // SAFETY: `len` > 0 means `buf` is not NULL (checked above); the rest is the header's
        // contract, passed on.
        unsafe { super::misc::write_text(&text, buf, len, needed) };
        Ok(())
    })
}

/// The rotations of a rigid body at `num_nodes` nodes (this rank's), as MFEM's HypreBoomerAMG
/// computes them for SetElasticityOptions: `coords` holds `dim` coordinates per node, node by node;
/// `modes` receives dim (dim - 1) / 2 vectors (1 in 2D, 3 in 3D: (y, -x, 0), (0, z, -y), (-z, 0,
/// x)), one after the other, each num_nodes * dim values ordered as `ordering` says
/// (PARLOPS_DOF_INTERLEAVED: node by node; PARLOPS_DOF_BLOCKED: function by function). Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_rigid_body_modes(
    dim: i32,
    num_nodes: i64,
    coords: *const f64,
    ordering: super::op::parlops_dof_ordering,
    modes: *mut f64,
) -> parlops_status {
    guard("parlops_rigid_body_modes", || {
        if !(2..=3).contains(&dim) {
            crate::bail!(
                InvalidArgument,
                "argument 'dim' is {dim}; it must be 2 or 3"
            );
        }
        let blocked = match ordering {
            PARLOPS_DOF_INTERLEAVED => false,
            PARLOPS_DOF_BLOCKED => true,
            v => crate::bail!(
                InvalidArgument,
                "argument 'ordering' is {v}; it must be PARLOPS_DOF_INTERLEAVED (0) or PARLOPS_DOF_BLOCKED (1)"
            ),
        };
        let d = dim as usize;
        let nodes = usize::try_from(num_nodes).map_err(|_| {
            crate::err!(
                InvalidArgument,
                "argument 'num_nodes' is {num_nodes}; it must be >= 0"
            )
        })?;
        let nmodes = if d == 2 { 1 } else { 3 };
        let ncoords = nodes.checked_mul(d);
        let nout = ncoords.and_then(|c| c.checked_mul(nmodes));
        let (Some(ncoords), Some(nout)) = (ncoords, nout) else {
            crate::bail!(
                InvalidArgument,
                "argument 'num_nodes' is {num_nodes}: {nmodes} modes of {num_nodes} x {dim} values overflow"
            );
        };
        if nout > 0 && modes.is_null() {
            return Err(null("modes"));
        }
        // SAFETY: `array_arg` checks NULL (when `ncoords` > 0) and alignment; the caller promises
        // `num_nodes * dim` readable doubles at `coords` (header contract).
        let c: &[f64] = unsafe { array_arg(coords.cast::<c_void>(), ncoords, "coords")? };
        if c.iter().any(|v| !v.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "argument 'coords' holds a value that is not finite"
            );
        }
        let mut m = Vec::new();
        m.try_reserve_exact(nout)
            .map_err(|_| crate::err!(OutOfMemory, "{nout} doubles for the modes"))?;
        m.resize(nout, 0.0);
        crate::hypre::options::rigid_body_modes(d, c, blocked, &mut m)?;
        if nout > 0 {
            if !(modes as usize).is_multiple_of(std::mem::align_of::<f64>()) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'modes' ({modes:p}) is not aligned for double"
                );
            }
            // SAFETY: `modes` is not NULL and aligned (checked above) and the caller promises room
            // for `nout` doubles there (header contract); `m` is our own buffer.
            unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), modes, nout) };
        }
        Ok(())
    })
}

/// hypre's BoomerAMG on a CSR operator (PARLOPS_F64, square, host memory) with the options `opts`
/// (NULL: hypre's defaults) and `num_vectors` near-null-space vectors (e.g. rigid-body modes):
/// `vectors` holds this rank's rows of each, one after the other (num_vectors times A's local
/// rows; NULL when num_vectors is 0). hypre fits interpolation to them when InterpVecVariant is
/// set (and only then: vectors without it, or it without vectors, are refused). Otherwise as
/// parlops_op_create_boomeramg. The options and vectors are copied: `opts` may be destroyed
/// afterwards. Every rank must pass the same options and count. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_boomeramg_with(
    a: *const parlops_op,
    opts: *const parlops_hypre_options,
    num_vectors: i64,
    vectors: *const f64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_boomeramg_with", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        // SAFETY: `opt_arg` takes NULL as `None` and checks anything else against the registry,
        // holding it shared for this call.
        let o = match unsafe { super::handles::opt_arg(opts, "opts") } {
            Ok(Some(o)) => Ok(o.inner.clone()),
            Ok(None) => Ok(HypreOptions::boomeramg()),
            Err(e) => Err(e),
        };
        let n = a.inner.rows().local_len() as usize;
        let nv = usize::try_from(num_vectors)
            .ok()
            .filter(|&v| v <= 64)
            .ok_or_else(|| {
                crate::err!(
                    InvalidArgument,
                    "argument 'num_vectors' is {num_vectors}; it must be in 0..=64"
                )
            });
        let vals: Result<&[f64]> = nv.clone().and_then(|nv| {
            let total = nv
                .checked_mul(n)
                .ok_or_else(|| crate::err!(InvalidArgument, "{nv} vectors of {n} rows overflow"))?;
            // SAFETY: `array_arg` checks NULL (when `total` > 0) and alignment; the caller promises
            // `num_vectors` times A's local rows readable doubles at `vectors` (header contract).
            unsafe { array_arg(vectors.cast::<c_void>(), total, "vectors") }
        });
        let pre = o.clone().and_then(|o| {
            let nv = nv.clone()?;
            let v = vals.clone()?;
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'vectors' holds {} at vector {}, local row {}: they must be finite",
                    v[i],
                    i / n.max(1),
                    i % n.max(1)
                );
            }
            if a.inner.dtype() != crate::scalar::DType::F64 {
                crate::bail!(
                    DTypeMismatch,
                    "argument 'A' is {}; BoomerAMG takes PARLOPS_F64 (hypre's real double values)",
                    a.inner.dtype().name()
                );
            }
            let op = super::op::csr_of::<f64>(&a.inner)?;
            let csr = op
                .as_any()
                .downcast_ref::<CsrOp<f64>>()
                .ok_or_else(|| crate::err!(Internal, "CSR"))?;
            BoomerAmg::check(csr, &o, nv)
        });
        let (mut names, mut same) = o
            .as_ref()
            .map(|o| o.agreement())
            .unwrap_or_else(|_| HypreOptions::boomeramg().agreement());
        names.push("num_vectors");
        same.push(num_vectors);
        names.push("A");
        same.push(a.ident as i64);
        comm.agree_same_named(
            out_ok(out, "out").and(pre),
            "BoomerAMG options",
            &names,
            &same,
        )?;
        create_agreed(&comm, out, Ok(()), "BoomerAMG options", &[], || {
            let op = super::op::csr_of::<f64>(&a.inner)?;
            let csr = op
                .as_any()
                .downcast_ref::<CsrOp<f64>>()
                .ok_or_else(|| crate::err!(Internal, "CSR"))?;
            let (o, nv, vals) = (o?, nv?, vals?);
            let amg = BoomerAmg::setup(csr, &o, nv, vals)?.with_source(
                op.clone(),
                o,
                nv,
                crate::op::copied(vals, "near-null-space vectors")?,
            );
            Ok(super::op::wrap(
                (std::sync::Arc::new(amg) as Op<f64>).into_any(),
            ))
        })
    })
}
