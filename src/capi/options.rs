//! Run-time options (PETSc's options database, held by the caller): a set of `-name value` pairs
//! from a string, the environment or a program's arguments, applied to a solver with a prefix.

use std::ffi::{CStr, c_char, c_int};

use super::handles::{
    Handle, Kind, arg, arg_mut, destroy, give, guard, null, out_ok, parlops_comm,
};
use super::solver::parlops_solver;
use super::types::parlops_status;
use crate::error::Result;
use crate::solver::options::{MAX_TEXT, Options};

/// A set of run-time options (opaque; local to the process: each rank holds its own, and a
/// solver's options are checked to be the same on every rank when they are applied).
pub struct parlops_options {
    pub(crate) inner: Options,
}

impl Handle for parlops_options {
    const KIND: Kind = Kind::Options;
}

/// The caller's text argument `name`: not NULL, NUL-terminated within `max` bytes, UTF-8.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string (or to at least `max + 1` readable bytes).
unsafe fn text_arg<'a>(p: *const c_char, name: &str, max: usize) -> Result<&'a str> {
    if p.is_null() {
        return Err(null(name));
    }
    // SAFETY: `p` is not NULL and (caller's contract) readable up to its NUL or `max + 1` bytes;
    // strnlen reads no further.
    let len = unsafe { libc::strnlen(p, max + 1) };
    if len > max {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' is longer than {max} bytes (or not NUL-terminated)"
        );
    }
    // SAFETY: a NUL lies within the `len + 1` readable bytes just measured.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|_| {
        crate::err!(
            InvalidArgument,
            "argument '{name}' is not UTF-8 ({:?})",
            c.to_string_lossy()
        )
    })
}

/// An empty set of options on `comm` (its rank 0 prints the options no solver used when the set
/// is destroyed). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_create(
    comm: *const parlops_comm,
    out: *mut *mut parlops_options,
) -> parlops_status {
    guard("parlops_options_create", || {
        // SAFETY: `arg` checks `comm` (a live parlops_comm) and holds it for this call.
        let comm = unsafe { arg(comm, "comm")? };
        out_ok(out, "out")?;
        give(
            out,
            parlops_options {
                inner: Options::new(comm.inner.clone()),
            },
        );
        Ok(())
    })
}

/// Free a set of options and set `*o` to NULL (NULL `*o`: nothing to do). Unless the set holds
/// `-options_left false`, rank 0 prints the options no solver used, each with the nearest known
/// name (PETSc's report at PetscFinalize).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_destroy(o: *mut *mut parlops_options) -> parlops_status {
    // SAFETY: `destroy` checks `o` and the handle; the caller promises a non-NULL `o` points to
    // its handle variable.
    guard("parlops_options_destroy", || unsafe { destroy(o, "o") })
}

/// Add the options in `text` ("-ksp_type gmres -ksp_rtol 1e-8 -ksp_monitor"; quotes keep a value
/// with spaces together), later ones replacing earlier ones of the same name. A word where an
/// option name belongs, an unclosed quote or a name with other characters than letters, digits
/// and '_' fails naming it, and adds nothing. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_insert_string(
    o: *mut parlops_options,
    text: *const c_char,
) -> parlops_status {
    guard("parlops_options_insert_string", || {
        // SAFETY: `arg_mut` checks `o` and holds it exclusively for this call.
        let o = unsafe { arg_mut(o, "o")? };
        // SAFETY: the caller passes a NUL-terminated string (header contract).
        let t = unsafe { text_arg(text, "text", MAX_TEXT)? };
        o.inner.insert(t, "string", false)
    })
}

/// Add the options in the environment variable `name` (NULL: PARLOPS_OPTIONS), as
/// parlops_options_insert_string reads them; a variable that is not set adds nothing. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_insert_env(
    o: *mut parlops_options,
    name: *const c_char,
) -> parlops_status {
    guard("parlops_options_insert_env", || {
        // SAFETY: as above.
        let o = unsafe { arg_mut(o, "o")? };
        let var = if name.is_null() {
            "PARLOPS_OPTIONS"
        } else {
            // SAFETY: a non-NULL `name` is a NUL-terminated string (header contract).
            unsafe { text_arg(name, "name", 255)? }
        };
        o.inner.insert_env(var)
    })
}

/// Add the options among a program's arguments (main's argc and argv; argv[0] is skipped). Words
/// that are not options (a file name before the options, say) are left alone. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_insert_args(
    o: *mut parlops_options,
    argc: c_int,
    argv: *const *mut c_char,
) -> parlops_status {
    guard("parlops_options_insert_args", || {
        // SAFETY: as above.
        let o = unsafe { arg_mut(o, "o")? };
        if argc < 0 {
            crate::bail!(
                InvalidArgument,
                "argument 'argc' is {argc}; it must be >= 0"
            );
        }
        if argc > 0 && argv.is_null() {
            return Err(null("argv"));
        }
        let mut args: Vec<String> = Vec::new();
        args.try_reserve_exact(argc as usize)
            .map_err(|_| crate::err!(OutOfMemory, "{argc} arguments do not fit in memory"))?;
        for i in 0..argc as usize {
            // SAFETY: `argv` holds `argc` readable pointers (main's contract, or the caller's).
            let p = unsafe { *argv.add(i) }.cast_const();
            // SAFETY: each is a NUL-terminated string (text_arg checks NULL).
            let a = unsafe { text_arg(p, &format!("argv[{i}]"), MAX_TEXT)? };
            args.push(a.to_string());
        }
        o.inner.insert_args(&args)
    })
}

/// The options no solver used so far, one line each ("Option left: name:-ksp_tyep value: gmres
/// source: environment (did you mean -ksp_type?)"), into `buf` (see parlops_config_report for
/// the buffer protocol: `*needed` is the length without the NUL); empty when all were used. Local.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_options_left(
    o: *const parlops_options,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> parlops_status {
    guard("parlops_options_left", || {
        // SAFETY: `arg` checks `o` and holds it for this call.
        let o = unsafe { arg(o, "o")? };
        if buf.is_null() && len > 0 {
            crate::bail!(NullArgument, "argument 'buf' is NULL but 'len' is {len}");
        }
        // SAFETY: `buf` holds `len` writable bytes (or is NULL with len 0) and `needed` is NULL
        // or writable (header contract); write_text writes no more.
        unsafe { super::misc::write_text(&o.inner.left(), buf, len, needed) };
        Ok(())
    })
}

/// Apply the options of `o` whose names start with '-' then `prefix` (NULL or "": none; "u_"
/// takes -u_ksp_type, ...) to `s`, as PETSc's KSPSetFromOptions: the method, tolerances and
/// settings, what a solve prints (-ksp_monitor, -ksp_converged_reason, -ksp_view), and the
/// preconditioner -pc_type names, built now from the solver's operator (set it first). The names
/// and values are listed in docs/options.md. A bad value, or a setting the method does not take,
/// fails naming the option; options with this prefix that differ between ranks fail naming them;
/// on every rank, and then the solver is left as it was. Options used are marked (see
/// parlops_options_left). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_solver_set_from_options(
    s: *mut parlops_solver,
    o: *const parlops_options,
    prefix: *const c_char,
) -> parlops_status {
    guard("parlops_solver_set_from_options", || {
        // SAFETY: `arg_mut` and `arg` check both handles (of different types) and hold them.
        let s = unsafe { arg_mut(s, "s")? };
        // SAFETY: as above (a parlops_options, which no other argument can alias). Its failure,
        // and the prefix's, are agreed over the solver's ranks before anything waits on them.
        let o = unsafe { arg(o, "o") };
        let prefix = if prefix.is_null() {
            Ok("")
        } else {
            // SAFETY: a non-NULL `prefix` is a NUL-terminated string (header contract).
            unsafe { text_arg(prefix, "prefix", 255) }
        };
        let prefix = prefix.and_then(|p| {
            if p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                Ok(p)
            } else {
                Err(crate::err!(
                    InvalidArgument,
                    "argument 'prefix' is \"{p}\"; a prefix is letters, digits and '_' (without the '-')"
                ))
            }
        });
        let local = o.as_ref().map(|_| ()).map_err(Clone::clone);
        let local = local.and(prefix.as_ref().map(|_| ()).map_err(Clone::clone));
        s.inner.comm().agree(local)?;
        let (Ok(o), Ok(prefix)) = (o, prefix) else {
            crate::bail!(Internal, "agreed arguments");
        };
        crate::solver::options_apply::apply(&o.inner, prefix, &mut s.inner)
    })
}
