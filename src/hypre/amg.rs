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

/// How the unknowns of a system (num_functions > 1) are ordered on each rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DofOrdering {
    /// Node by node: u0 v0 w0 u1 v1 w1 ... (the local row i is function i % num_functions).
    Interleaved,
    /// Function by function on each rank: all u, then all v, ... (MFEM's byNODES).
    Blocked,
}

/// BoomerAMG's options; `None` keeps hypre's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AmgOptions {
    pub strong_threshold: Option<f64>,
    pub coarsen_type: Option<i32>,
    pub interp_type: Option<i32>,
    pub relax_type: Option<i32>,
    pub num_sweeps: Option<i32>,
    pub max_levels: Option<i32>,
    pub agg_num_levels: Option<i32>,
    pub num_functions: i32,
    pub dof_ordering: DofOrdering,
    pub print_level: i32,
}

impl Default for AmgOptions {
    fn default() -> Self {
        AmgOptions {
            strong_threshold: None,
            coarsen_type: None,
            interp_type: None,
            relax_type: None,
            num_sweeps: None,
            max_levels: None,
            agg_num_levels: None,
            num_functions: 1,
            dof_ordering: DofOrdering::Interleaved,
            print_level: 0,
        }
    }
}

/// The values parlops hands to hypre for each option, checked before hypre sees them (hypre
/// loops for ever on a huge sweep count, and crashes on a huge level count or on some codes meant
/// for other builds): the codes hypre 2.26 documents for a CPU build, and bounds far beyond any use.
pub const COARSEN_TYPES: &[i32] = &[0, 1, 3, 6, 7, 8, 9, 10, 11, 21, 22];
/// Interpolations (10 and 11 need hypre's nodal systems mode and 15 a GPU build: left out).
pub const INTERP_TYPES: &[i32] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 16, 17, 18];
/// Smoothers for every level (9, Gaussian elimination, is for the coarsest level only; 5 needs
/// OpenMP; 7 is not documented for this call: left out).
pub const RELAX_TYPES: &[i32] = &[0, 1, 2, 3, 4, 6, 8, 13, 14, 15, 16, 17, 18];
/// The largest sweep count per level, level count, and functions per node accepted.
pub const MAX_SWEEPS: i32 = 100;
pub const MAX_LEVELS: i32 = 100;
pub const MAX_FUNCTIONS: i32 = 256;
/// hypre's print levels (0 silent .. 3 set-up and solve).
pub const MAX_PRINT_LEVEL: i32 = 3;

impl AmgOptions {
    /// Every option within what hypre takes (see [`COARSEN_TYPES`] and the bounds beside it);
    /// an error names the option, its value and what is accepted.
    pub fn check_ranges(&self) -> Result<()> {
        if let Some(t) = self.strong_threshold
            && !(0.0..=1.0).contains(&t)
        {
            crate::bail!(
                InvalidArgument,
                "options.strong_threshold is {t}; it must be in [0, 1]"
            );
        }
        for (v, name, list) in [
            (self.coarsen_type, "coarsen_type", COARSEN_TYPES),
            (self.interp_type, "interp_type", INTERP_TYPES),
            (self.relax_type, "relax_type", RELAX_TYPES),
        ] {
            if let Some(v) = v
                && !list.contains(&v)
            {
                crate::bail!(
                    InvalidArgument,
                    "options.{name} is {v}; hypre's values are {list:?} (or -1 for hypre's default)"
                );
            }
        }
        for (v, name, lo, hi) in [
            (self.num_sweeps, "num_sweeps", 1, MAX_SWEEPS),
            (self.max_levels, "max_levels", 1, MAX_LEVELS),
            (self.agg_num_levels, "agg_num_levels", 0, MAX_LEVELS),
        ] {
            if let Some(v) = v
                && !(lo..=hi).contains(&v)
            {
                crate::bail!(
                    InvalidArgument,
                    "options.{name} is {v}; it must be in {lo}..={hi} (or -1 for hypre's default)"
                );
            }
        }
        if !(1..=MAX_FUNCTIONS).contains(&self.num_functions) {
            crate::bail!(
                InvalidArgument,
                "options.num_functions is {}; it must be in 1..={MAX_FUNCTIONS}",
                self.num_functions
            );
        }
        if !(0..=MAX_PRINT_LEVEL).contains(&self.print_level) {
            crate::bail!(
                InvalidArgument,
                "options.print_level is {}; it must be in 0..={MAX_PRINT_LEVEL}",
                self.print_level
            );
        }
        Ok(())
    }
}

/// hypre's objects of one AMG operator.
struct Objects {
    ij_a: *mut std::ffi::c_void,
    a: *mut std::ffi::c_void,
    ij_b: *mut std::ffi::c_void,
    b: *mut std::ffi::c_void,
    ij_x: *mut std::ffi::c_void,
    x: *mut std::ffi::c_void,
    solver: *mut std::ffi::c_void,
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
        // here; `a`, `b` and `x` belong to the IJ objects and are not destroyed separately. The
        // function pointers were resolved from the loaded hypre with these signatures in `load()`.
        unsafe {
            if !self.solver.is_null() {
                (h.AmgDestroy)(self.solver);
            }
            for v in [self.ij_b, self.ij_x] {
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
    pub fn check(a: &CsrOp<f64>, o: &AmgOptions) -> Result<()> {
        o.check_ranges()?;
        api()?;
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
        if o.num_functions < 1 || n % o.num_functions as i64 != 0 {
            crate::bail!(
                InvalidArgument,
                "options.num_functions is {}; it must be >= 1 and divide this rank's {n} rows (whole nodes on each rank)",
                o.num_functions
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
    pub fn setup(a: &CsrOp<f64>, o: &AmgOptions) -> Result<BoomerAmg> {
        let h = api()?;
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
        // the solver and its options (local calls), then the set-up (collective)
        // SAFETY: as above for the pointers; `obj.solver` is written by `AmgCreate` (a NULL one,
        // after a failed create, is refused by hypre's setters with an error code). `p` is
        // `malloc`'d for `n.max(1)` HInts and written at `i < n`; hypre takes it over with
        // `AmgSetDofFunc` and frees it with the solver, as its interface says.
        let opts = unsafe {
            let mut r = hcheck((h.AmgCreate)(&mut obj.solver), "BoomerAMGCreate");
            let mut set = |code: HInt, what: &str| {
                if r.is_ok() {
                    r = hcheck(code, what);
                }
            };
            let s = obj.solver;
            if let Some(t) = o.strong_threshold {
                set(
                    (h.AmgSetStrongThreshold)(s, t),
                    "BoomerAMGSetStrongThreshold",
                );
            }
            if let Some(v) = o.coarsen_type {
                set(
                    (h.AmgSetCoarsenType)(s, v as HInt),
                    "BoomerAMGSetCoarsenType",
                );
            }
            if let Some(v) = o.interp_type {
                set((h.AmgSetInterpType)(s, v as HInt), "BoomerAMGSetInterpType");
            }
            if let Some(v) = o.relax_type {
                set((h.AmgSetRelaxType)(s, v as HInt), "BoomerAMGSetRelaxType");
            }
            if let Some(v) = o.num_sweeps {
                set((h.AmgSetNumSweeps)(s, v as HInt), "BoomerAMGSetNumSweeps");
            }
            if let Some(v) = o.max_levels {
                set((h.AmgSetMaxLevels)(s, v as HInt), "BoomerAMGSetMaxLevels");
            }
            if let Some(v) = o.agg_num_levels {
                set(
                    (h.AmgSetAggNumLevels)(s, v as HInt),
                    "BoomerAMGSetAggNumLevels",
                );
            }
            if o.num_functions > 1 {
                set(
                    (h.AmgSetNumFunctions)(s, o.num_functions as HInt),
                    "BoomerAMGSetNumFunctions",
                );
                // hypre takes the array and frees it (free()) when the solver goes: malloc'd here
                let nf = o.num_functions as usize;
                let p = libc::malloc(n.max(1) * std::mem::size_of::<HInt>()) as *mut HInt;
                if p.is_null() {
                    set(-2, "malloc of dof_func (out of memory)");
                } else {
                    let per = n / nf;
                    for i in 0..n {
                        let f = match o.dof_ordering {
                            DofOrdering::Interleaved => i % nf,
                            DofOrdering::Blocked => i / per.max(1),
                        };
                        *p.add(i) = f as HInt;
                    }
                    set((h.AmgSetDofFunc)(s, p), "BoomerAMGSetDofFunc");
                }
            }
            set(
                (h.AmgSetPrintLevel)(s, o.print_level as HInt),
                "BoomerAMGSetPrintLevel",
            );
            set((h.AmgSetTol)(s, 0.0), "BoomerAMGSetTol");
            set((h.AmgSetMaxIter)(s, 1), "BoomerAMGSetMaxIter");
            r
        };
        comm.agree(opts)?;
        // SAFETY: as above: the solver, matrix and vectors are the ones created and assembled above
        // on every rank (each step agreed), as `BoomerAMGSetup` needs.
        let setup = unsafe {
            hcheck(
                (h.AmgSetup)(obj.solver, obj.a, obj.b, obj.x),
                "BoomerAMGSetup",
            )
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
