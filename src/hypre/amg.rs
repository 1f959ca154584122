//! hypre's BoomerAMG on a parlops CSR operator, as a preconditioner: applying it runs one V-cycle
//! from a zero initial guess (BoomerAMG with tolerance 0 and one iteration, as hypre's own PCG uses
//! it). The matrix is handed to hypre once, at set-up, through hypre's IJ interface (one copy:
//! hypre's set-up builds its own hierarchy from it anyway); each apply copies the input into a hypre
//! vector and the result out of one (a V-cycle costs many times that).

use std::sync::{Arc, Mutex};

use super::{HBig, HInt, PARCSR, api};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::LinearOperator;
use crate::op::csr::CsrOp;
use crate::vector::{DistVector, Layout};

pub use super::amg_options::{AmgOptions, DofOrdering};
pub use super::options::{
    COARSEN_TYPES, INTERP_TYPES, MAX_FUNCTIONS, MAX_LEVELS, MAX_PRINT_LEVEL, MAX_SWEEPS,
    RELAX_TYPES,
};
use super::options::{HypreOptions, Setter, Value};

/// hypre's objects of one AMG operator.
struct Objects {
    ij_a: *mut std::ffi::c_void,
    a: *mut std::ffi::c_void,
    ij_b: *mut std::ffi::c_void,
    b: *mut std::ffi::c_void,
    ij_x: *mut std::ffi::c_void,
    x: *mut std::ffi::c_void,
    solver: *mut std::ffi::c_void,
    /// The near-null-space vectors: hypre's IJ vectors, and the array of their ParVectors that
    /// hypre keeps (it reads them at set-up and does not free them; this array must not move).
    ij_modes: Vec<*mut std::ffi::c_void>,
    modes: Vec<*mut std::ffi::c_void>,
    /// This rank's global row indices (for the vectors' values).
    idx: Vec<HBig>,
}

// SAFETY: used behind the operator's mutex only.
unsafe impl Send for Objects {}

impl Drop for Objects {
    fn drop(&mut self) {
        let Ok(h) = api() else { return };
        // SAFETY: each handle is NULL or an object this `Objects` created with the same hypre and
        // owns alone (`BoomerAmg` keeps it behind its mutex and is being dropped), destroyed once
        // here, the solver first (it points to the near-null-space vectors); `a`, `b`, `x` and
        // `modes` belong to the IJ objects and are not destroyed separately. The
        // function pointers were resolved from the loaded hypre with these signatures in `load()`.
        unsafe {
            if !self.solver.is_null() {
                (h.AmgDestroy)(self.solver);
            }
            for &v in [self.ij_b, self.ij_x].iter().chain(&self.ij_modes) {
                if !v.is_null() {
                    (h.IJVectorDestroy)(v);
                }
            }
            if !self.ij_a.is_null() {
                (h.IJMatrixDestroy)(self.ij_a);
            }
        }
    }
}

/// BoomerAMG as an operator (f64, host memory).
pub struct BoomerAmg {
    rows: Arc<Layout>,
    comm: Arc<Comm>,
    obj: Mutex<Objects>,
}

/// A hypre return code as a parlops error: hypre's memory flag as `OutOfMemory`, its other flags
/// (generic, argument, a setup that met a matrix it cannot coarsen) as `InvalidArgument` (what hypre
/// refuses comes from the matrix or the options it was given).
fn hcheck(code: HInt, what: &str) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let h = api()?;
    // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag; its pointer
    // was resolved with this signature in `load()`.
    unsafe { (h.ClearAllErrors)() };
    let flags = [
        (1, "generic"),
        (2, "memory"),
        (4, "argument"),
        (256, "convergence"),
    ]
    .iter()
    .filter(|(b, _)| code as i64 & b != 0)
    .map(|(_, n)| *n)
    .collect::<Vec<_>>()
    .join(", ");
    let msg = format!("hypre's {what} failed with error code {code} ({flags})");
    if code as i64 & 2 != 0 {
        crate::bail!(OutOfMemory, "{msg}");
    }
    crate::bail!(InvalidArgument, "{msg}")
}

fn big(v: i64, what: &str) -> Result<HBig> {
    HBig::try_from(v).map_err(|_| {
        crate::err!(
            NotSupported,
            "{what} {v} does not fit hypre's HYPRE_BigInt ({} bits); use a hypre built with --enable-bigint",
            8 * std::mem::size_of::<HBig>()
        )
    })
}

fn hint(v: usize, what: &str) -> Result<HInt> {
    HInt::try_from(v)
        .map_err(|_| crate::err!(NotSupported, "{what} {v} does not fit hypre's HYPRE_Int"))
}

impl BoomerAmg {
    /// This rank's checks (agreed by the caller before [`BoomerAmg::setup`]).
    pub fn check(a: &CsrOp<f64>, o: &HypreOptions, nmodes: usize) -> Result<()> {
        api()?;
        let nf = o.int_or("NumFunctions", 1);
        let variant = o.int_or("InterpVecVariant", 0);
        if nmodes > 0 && variant == 0 {
            crate::bail!(
                InvalidArgument,
                "{nmodes} near-null-space vectors were given but InterpVecVariant is not set: hypre would ignore them (set it to 1, 2 or 3, or use parlops_hypre_options_set_elasticity)"
            );
        }
        // hypre's fitted interpolation and nodal coarsening index its per-node function map,
        // which exists for systems only (hypre dereferences a NULL map otherwise), and the fitted
        // interpolation assumes nodal coarsening
        let nodal = o.int_or("Nodal", 0);
        let refine = o.int_or("InterpRefine", 0);
        let systems_only = [
            ("InterpVecVariant", variant),
            ("Nodal", nodal),
            ("InterpRefine", refine),
        ];
        if let Some((name, v)) = systems_only.iter().find(|(_, v)| *v != 0)
            && nf < 2
        {
            crate::bail!(
                InvalidArgument,
                "{name} is {v} but NumFunctions is {nf}: nodal coarsening, fitted interpolation and its refinement are for systems (NumFunctions >= 2, unknowns node by node)"
            );
        }
        if variant > 0 && nodal == 0 {
            crate::bail!(
                InvalidArgument,
                "InterpVecVariant {variant} needs nodal coarsening (set Nodal, e.g. 4, as parlops_hypre_options_set_elasticity does)"
            );
        }
        if (variant > 0 || nodal != 0 || refine > 0) && o.int_or("DofOrdering", 0) != 0 {
            crate::bail!(
                InvalidArgument,
                "nodal coarsening and fitted interpolation need the unknowns node by node (DofOrdering 0, interleaved); DofOrdering is 1"
            );
        }
        if nmodes == 0 && variant > 0 {
            crate::bail!(
                InvalidArgument,
                "InterpVecVariant is {variant} but no near-null-space vectors were given (argument 'num_vectors' is 0)"
            );
        }
        if !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "BoomerAMG needs a square operator with equal row and column layouts; A is {}x{}",
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        big(a.rows().global_len(), "the global size")?;
        let n = a.rows().local_len();
        if nf < 1 || n % nf != 0 {
            crate::bail!(
                InvalidArgument,
                "options.num_functions (NumFunctions) is {nf}; it must be >= 1 and divide this rank's {n} rows (whole nodes on each rank)"
            );
        }
        // what BoomerAMG cannot take (hypre aborts or divides by zero on it): a row without a
        // non-zero diagonal entry, a value that is not finite
        let lo = a.rows().local_start();
        let mut diag = vec![false; n as usize];
        let mut bad: Option<String> = None;
        a.diag_block().for_each(|i, j, v| {
            if !v.is_finite() && bad.is_none() {
                bad = Some(format!("global row {} holds {v}", lo + i as i64));
            }
            if i == j && v != 0.0 {
                diag[i] = true;
            }
        });
        a.offd_block().for_each(|i, _, v| {
            if !v.is_finite() && bad.is_none() {
                bad = Some(format!("global row {} holds {v}", lo + i as i64));
            }
        });
        if let Some(b) = bad {
            crate::bail!(InvalidArgument, "BoomerAMG: {b}; the matrix must be finite");
        }
        if let Some(i) = diag.iter().position(|d| !d) {
            crate::bail!(
                InvalidArgument,
                "BoomerAMG: global row {} has no non-zero diagonal entry (its smoothers divide by it)",
                lo + i as i64
            );
        }
        Ok(())
    }

    /// Hand `a` to hypre and run BoomerAMG's set-up. Collective: every rank must have passed
    /// [`BoomerAmg::check`] (agreed). hypre failures are agreed here, so every rank gets one.
    /// `modes` holds `nmodes` near-null-space vectors (the same count on every rank), this rank's
    /// rows of each, one after the other.
    pub fn setup(
        a: &CsrOp<f64>,
        o: &HypreOptions,
        nmodes: usize,
        modes: &[f64],
    ) -> Result<BoomerAmg> {
        let h = api()?;
        // hypre's error flag is global and sticky: a flag left by the caller's own hypre calls (or an
        // earlier solver's) is not this call's failure
        // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag.
        unsafe { (h.ClearAllErrors)() };
        let rows = a.rows().clone();
        let comm = rows.comm().clone();
        let raw = comm.raw();
        let (lo, n) = (rows.local_start(), rows.local_len() as usize);
        let (ilo, ihi) = (big(lo, "row")?, big(lo + n as i64 - 1, "row")?);
        let mut obj = Objects {
            ij_a: std::ptr::null_mut(),
            a: std::ptr::null_mut(),
            ij_b: std::ptr::null_mut(),
            b: std::ptr::null_mut(),
            ij_x: std::ptr::null_mut(),
            x: std::ptr::null_mut(),
            solver: std::ptr::null_mut(),
            ij_modes: Vec::new(),
            modes: Vec::new(),
            idx: Vec::new(),
        };
        // this rank's rows with global columns (local work; failures agreed before hypre's collectives)
        let local = (|| -> Result<_> {
            let mut ncols: Vec<HInt> = Vec::new();
            ncols
                .try_reserve_exact(n)
                .map_err(|_| crate::err!(OutOfMemory, "BoomerAMG: {n} rows"))?;
            ncols.resize(n, 0);
            let (mut dsz, mut osz) = (vec![0 as HInt; n], vec![0 as HInt; n]);
            let mut cols: Vec<HBig> = Vec::new();
            let mut vals: Vec<f64> = Vec::new();
            let nnz = a.diag_block().nnz() + a.offd_block().nnz();
            cols.try_reserve_exact(nnz)
                .map_err(|_| crate::err!(OutOfMemory, "BoomerAMG: {nnz} entries"))?;
            vals.try_reserve_exact(nnz)
                .map_err(|_| crate::err!(OutOfMemory, "BoomerAMG: {nnz} entries"))?;
            // this rank's rows, flat: the diag block's entries then the offd block's, per row
            let mut start = vec![0usize; n + 1];
            a.diag_block().for_each(|i, _, _| start[i + 1] += 1);
            a.offd_block().for_each(|i, _, _| start[i + 1] += 1);
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            let mut ent: Vec<(i64, f64)> = Vec::new();
            ent.try_reserve_exact(nnz)
                .map_err(|_| crate::err!(OutOfMemory, "BoomerAMG: {nnz} entries"))?;
            ent.resize(nnz, (0, 0.0));
            a.diag_block().for_each(|i, j, v| {
                ent[fill[i]] = (lo + j as i64, v);
                fill[i] += 1;
            });
            let cmap = a.col_map_offd();
            a.offd_block().for_each(|i, j, v| {
                ent[fill[i]] = (cmap[j], v);
                fill[i] += 1;
            });
            for i in 0..n {
                // the diagonal entry first, then the columns in increasing order: how hypre keeps
                // its diag block, whatever order parlops holds them in
                let g = lo + i as i64;
                let r = &mut ent[start[i]..start[i + 1]];
                r.sort_unstable_by_key(|&(c, _)| (c != g, c));
                ncols[i] = hint(r.len(), "a row's entry count")?;
                for &(c, v) in r.iter() {
                    if c >= lo && c < lo + n as i64 {
                        dsz[i] += 1;
                    } else {
                        osz[i] += 1;
                    }
                    cols.push(big(c, "column")?);
                    vals.push(v);
                }
            }
            let idx: Vec<HBig> = (0..n)
                .map(|i| big(lo + i as i64, "row"))
                .collect::<Result<_>>()?;
            Ok((ncols, dsz, osz, cols, vals, idx))
        })();
        let (mut ncols, dsz, osz, cols, vals, idx) = comm.agree(local)?;
        obj.idx = idx;
        let nh = hint(n, "the local row count")?;
        let rowsv = obj.idx.clone();
        // the matrix and two vectors (Assemble is collective: every rank gets here)
        // SAFETY: the function pointers were resolved with these signatures (HInt/HBig from the
        // headers parlops was built with) in `load()`; `raw` is the live communicator of `comm`,
        // which the operator keeps; `obj.ij_a` is written by `IJMatrixCreate` before the next calls
        // use it; `dsz`/`osz` hold `n` counts, and `ncols`, `rowsv` (`n` entries) and `cols`/`vals`
        // (the sum of `ncols`) are live `Vec`s that hypre copies from during the call.
        let made = unsafe {
            hcheck(
                (h.IJMatrixCreate)(raw, ilo, ihi, ilo, ihi, &mut obj.ij_a),
                "IJMatrixCreate",
            )
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetObjectType)(obj.ij_a, PARCSR),
                    "IJMatrixSetObjectType",
                )
            })
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetDiagOffdSizes)(obj.ij_a, dsz.as_ptr(), osz.as_ptr()),
                    "IJMatrixSetDiagOffdSizes",
                )
            })
            .and_then(|_| hcheck((h.IJMatrixInitialize)(obj.ij_a), "IJMatrixInitialize"))
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetValues)(
                        obj.ij_a,
                        nh,
                        ncols.as_mut_ptr(),
                        rowsv.as_ptr(),
                        cols.as_ptr(),
                        vals.as_ptr(),
                    ),
                    "IJMatrixSetValues",
                )
            })
        };
        comm.agree(made)?;
        drop((cols, vals));
        // SAFETY: as above: `obj.ij_a` is the matrix created above (initialised and filled), and
        // `obj.a` a field `IJMatrixGetObject` writes.
        let assembled = unsafe {
            hcheck((h.IJMatrixAssemble)(obj.ij_a), "IJMatrixAssemble").and_then(|_| {
                hcheck(
                    (h.IJMatrixGetObject)(obj.ij_a, &mut obj.a),
                    "IJMatrixGetObject",
                )
            })
        };
        comm.agree(assembled)?;
        for (ij, par) in [
            (&mut obj.ij_b as *mut _, &mut obj.b as *mut _),
            (&mut obj.ij_x as *mut _, &mut obj.x as *mut _),
        ] {
            // SAFETY: as above: `ij` and `par` point to fields of the live local `obj` (nothing
            // else touches it in this loop); `IJVectorCreate` writes `*ij` before the next calls
            // read it.
            let v = unsafe {
                hcheck((h.IJVectorCreate)(raw, ilo, ihi, ij), "IJVectorCreate")
                    .and_then(|_| {
                        hcheck(
                            (h.IJVectorSetObjectType)(*ij, PARCSR),
                            "IJVectorSetObjectType",
                        )
                    })
                    .and_then(|_| hcheck((h.IJVectorInitialize)(*ij), "IJVectorInitialize"))
            };
            comm.agree(v)?;
            // SAFETY: as above: `*ij` is the vector created and initialised just before, `par` the
            // field `IJVectorGetObject` writes.
            let v = unsafe {
                hcheck((h.IJVectorAssemble)(*ij), "IJVectorAssemble")
                    .and_then(|_| hcheck((h.IJVectorGetObject)(*ij, par), "IJVectorGetObject"))
            };
            comm.agree(v)?;
        }
        // the near-null-space vectors (collective: every rank has the same number, agreed by the
        // caller), kept until the solver goes
        for k in 0..nmodes {
            let mut ij = std::ptr::null_mut();
            // SAFETY: as above for the pointers; `ij` is a live local written by `IJVectorCreate`
            // before the next calls use it; `obj.idx` holds `n` global rows and `modes[k*n..]`
            // `n` values (the caller passes `nmodes * n`).
            let v = unsafe {
                hcheck((h.IJVectorCreate)(raw, ilo, ihi, &mut ij), "IJVectorCreate")
                    .and_then(|_| {
                        hcheck(
                            (h.IJVectorSetObjectType)(ij, PARCSR),
                            "IJVectorSetObjectType",
                        )
                    })
                    .and_then(|_| hcheck((h.IJVectorInitialize)(ij), "IJVectorInitialize"))
                    .and_then(|_| {
                        let vals = modes.get(k * n..(k + 1) * n).ok_or_else(|| {
                            crate::err!(
                                Internal,
                                "near-null-space vector {k}: {} values",
                                modes.len()
                            )
                        })?;
                        hcheck(
                            (h.IJVectorSetValues)(ij, nh, obj.idx.as_ptr(), vals.as_ptr()),
                            "IJVectorSetValues",
                        )
                    })
            };
            if !ij.is_null() {
                obj.ij_modes.push(ij);
            }
            comm.agree(v)?;
            let mut par = std::ptr::null_mut();
            // SAFETY: as above: `ij` is the vector created, initialised and filled just before.
            let v = unsafe {
                hcheck((h.IJVectorAssemble)(ij), "IJVectorAssemble")
                    .and_then(|_| hcheck((h.IJVectorGetObject)(ij, &mut par), "IJVectorGetObject"))
            };
            comm.agree(v)?;
            obj.modes.push(par);
        }
        // the solver and its options (local calls), then the set-up (collective)
        // SAFETY: as above for the pointers; `obj.solver` is written by `AmgCreate` (a NULL one,
        // after a failed create, is refused by hypre's setters with an error code). Each setter
        // looked up by name is hypre's `HYPRE_BoomerAMGSet<Name>`, whose prototype is
        // `(HYPRE_Solver, HYPRE_Int)`, `(HYPRE_Solver, HYPRE_Real)` or, for the parts of a cycle,
        // `(HYPRE_Solver, HYPRE_Int, HYPRE_Int)`, as the table says (`options.rs`). `p` is
        // `malloc`'d for `n.max(1)` HInts and written at `i < n`; hypre takes it over with
        // `AmgSetDofFunc` and frees it with the solver, as its interface says. `obj.modes` holds
        // `nmodes` ParVectors that live (with the array) as long as the solver.
        let opts = unsafe {
            let mut r = hcheck((h.AmgCreate)(&mut obj.solver), "BoomerAMGCreate");
            let mut set = |code: HInt, what: &str| {
                if r.is_ok() {
                    r = hcheck(code, what);
                }
            };
            let s = obj.solver;
            let missing = |f: &str, name: &str| {
                crate::err!(
                    NotSupported,
                    "BoomerAMG option {name}: the hypre loaded ({} at {}) has no {f}; use a newer hypre (PARLOPS_HYPRE_LIBRARY) or leave the option out",
                    h.version,
                    h.path
                )
            };
            let mut found: Result<()> = Ok(());
            for (spec, v) in o.set_options() {
                let f = match spec.setter {
                    Setter::Parlops => continue,
                    Setter::Plain => format!("HYPRE_BoomerAMGSet{}", spec.name),
                    Setter::Cycle(base, _) => format!("HYPRE_BoomerAMGSet{base}"),
                };
                let Some(p) = h.sym(&f) else {
                    found = Err(missing(&f, spec.name));
                    break;
                };
                match (spec.setter, v) {
                    (Setter::Plain, Value::Int(i)) => {
                        let g: unsafe extern "C" fn(*mut std::ffi::c_void, HInt) -> HInt =
                            std::mem::transmute(p);
                        set(g(s, i as HInt), &f);
                    }
                    (Setter::Plain, Value::Real(x)) => {
                        let g: unsafe extern "C" fn(*mut std::ffi::c_void, f64) -> HInt =
                            std::mem::transmute(p);
                        set(g(s, x), &f);
                    }
                    (Setter::Cycle(_, k), Value::Int(i)) => {
                        let g: unsafe extern "C" fn(*mut std::ffi::c_void, HInt, HInt) -> HInt =
                            std::mem::transmute(p);
                        set(g(s, i as HInt, k as HInt), &f);
                    }
                    _ => {
                        found = Err(crate::err!(
                            Internal,
                            "option {} of an unexpected type",
                            spec.name
                        ));
                        break;
                    }
                }
            }
            let nf = o.int_or("NumFunctions", 1);
            if nf > 1 {
                // hypre takes the array and frees it (free()) when the solver goes: malloc'd here
                let nf = nf as usize;
                let blocked = o.int_or("DofOrdering", 0) == 1;
                let p = libc::malloc(n.max(1) * std::mem::size_of::<HInt>()) as *mut HInt;
                if p.is_null() {
                    set(-2, "malloc of dof_func (out of memory)");
                } else {
                    let per = n / nf;
                    for i in 0..n {
                        let f = if blocked { i / per.max(1) } else { i % nf };
                        *p.add(i) = f as HInt;
                    }
                    set((h.AmgSetDofFunc)(s, p), "BoomerAMGSetDofFunc");
                }
            }
            if o.get("PrintLevel").is_none() {
                match h.sym("HYPRE_BoomerAMGSetPrintLevel") {
                    Some(p) => {
                        let g: unsafe extern "C" fn(*mut std::ffi::c_void, HInt) -> HInt =
                            std::mem::transmute(p);
                        set(g(s, 0), "BoomerAMGSetPrintLevel");
                    }
                    None => {
                        found =
                            found.and(Err(missing("HYPRE_BoomerAMGSetPrintLevel", "PrintLevel")))
                    }
                }
            }
            if nmodes > 0 {
                match h.sym("HYPRE_BoomerAMGSetInterpVectors") {
                    Some(p) => {
                        let g: unsafe extern "C" fn(
                            *mut std::ffi::c_void,
                            HInt,
                            *mut *mut std::ffi::c_void,
                        ) -> HInt = std::mem::transmute(p);
                        set(
                            g(s, nmodes as HInt, obj.modes.as_mut_ptr()),
                            "BoomerAMGSetInterpVectors",
                        );
                    }
                    None => {
                        found = found.and(Err(missing(
                            "HYPRE_BoomerAMGSetInterpVectors",
                            "near-null-space vectors",
                        )))
                    }
                }
            }
            set((h.AmgSetTol)(s, 0.0), "BoomerAMGSetTol");
            set((h.AmgSetMaxIter)(s, 1), "BoomerAMGSetMaxIter");
            found.and(r)
        };
        comm.agree(opts)?;
        // SAFETY: as above: the solver, matrix and vectors are the ones created and assembled above
        // on every rank (each step agreed), as `BoomerAMGSetup` needs.
        let code = unsafe { (h.AmgSetup)(obj.solver, obj.a, obj.b, obj.x) };
        // In nodal mode (elasticity), hypre's set-up raises its argument flag on coarse matrices
        // that are singular, which its cycle handles (MFEM ignores hypre's errors there for that
        // reason, in HypreBoomerAMG::SetElasticityOptions): parlops ignores that flag in that mode
        // only. What could follow from a broken hierarchy, a NaN or Inf, is a divergence for every
        // parlops solver.
        let nodal = o.int_or("Nodal", 0) != 0 || nmodes > 0;
        let setup = if nodal && code as i64 & 4 != 0 && code as i64 & 3 == 0 {
            // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag.
            unsafe { (h.ClearAllErrors)() };
            Ok(())
        } else {
            hcheck(code, "BoomerAMGSetup")
        };
        comm.agree(setup)?;
        Ok(BoomerAmg {
            rows,
            comm,
            obj: Mutex::new(obj),
        })
    }
}

impl LinearOperator<f64> for BoomerAmg {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn forward(&self, x: &DistVector<f64>, y: &mut DistVector<f64>) -> Result<()> {
        let h = api()?;
        // hypre's error flag is global and sticky: a flag left by the caller's own hypre calls (or an
        // earlier solver's) is not this call's failure
        // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag.
        unsafe { (h.ClearAllErrors)() };
        let o = self.obj.lock().unwrap_or_else(|p| p.into_inner());
        let n = o.idx.len() as HInt;
        // local copies in; the solve is collective: a failure of a local call is agreed first
        // SAFETY: the objects are this operator's, used under its mutex (`o`); `o.idx` holds `n`
        // global row indices, and `x.local()` holds `n` values because `x` has the operator's
        // layout, which this trait's callers check (`apply_checked`, the solvers), not this method.
        let local = unsafe {
            hcheck(
                (h.IJVectorSetValues)(o.ij_b, n, o.idx.as_ptr(), x.local().as_ptr()),
                "IJVectorSetValues",
            )
            .and_then(|_| {
                hcheck(
                    (h.ParVectorSetConstantValues)(o.x, 0.0),
                    "ParVectorSetConstantValues",
                )
            })
        };
        self.comm.agree(local)?;
        // SAFETY: as above: the solver, matrix and vectors are this operator's, set up in `setup`,
        // under its mutex.
        let solved = unsafe { hcheck((h.AmgSolve)(o.solver, o.a, o.b, o.x), "BoomerAMGSolve") };
        // hypre flags a V-cycle that did not reach tolerance 0 (it never does) as a convergence error
        let solved = match solved {
            Err(e) if e.msg.contains("code 256 ") => Ok(()),
            r => r,
        };
        // SAFETY: as above: `o.idx` holds `n` indices and `y.local_mut()` room for `n` values
        // because `y` has the operator's layout (checked by the callers, not here).
        solved.and_then(|_| unsafe {
            hcheck(
                (h.IJVectorGetValues)(o.ij_x, n, o.idx.as_ptr(), y.local_mut().as_mut_ptr()),
                "IJVectorGetValues",
            )
        })
    }
    fn backward(&self, _y: &DistVector<f64>, _x: &mut DistVector<f64>) -> Result<()> {
        crate::bail!(
            NotSupported,
            "{}: the adjoint of a V-cycle is not available",
            self.describe()
        )
    }
    fn describe(&self) -> String {
        format!("BoomerAMG ({} rows)", self.rows.global_len())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
