//! hypre's BoomerAMG on a parlops CSR operator, as a preconditioner: applying it runs one V-cycle
//! from a zero initial guess (BoomerAMG with tolerance 0 and one iteration, as hypre's own PCG uses
//! it). The matrix is handed to hypre once, at set-up, through hypre's IJ interface (one copy:
//! hypre's set-up builds its own hierarchy from it anyway); each apply copies the input into a hypre
//! vector and the result out of one (a V-cycle costs many times that).

use std::sync::{Arc, Mutex};

use super::ij::{IjMatrix, IjVector, big, clear_errors, hcheck, one_cycle};
use super::{HInt, api};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::csr::CsrOp;
use crate::op::tree::SetupLog;
use crate::op::{LinearOperator, Op};
use crate::vector::{DistVector, Layout};

pub use super::amg_options::{AmgOptions, DofOrdering};
pub use super::options::{
    COARSEN_TYPES, INTERP_TYPES, MAX_FUNCTIONS, MAX_LEVELS, MAX_PRINT_LEVEL, MAX_SWEEPS,
    RELAX_TYPES,
};
use super::options::{HypreOptions, Setter, Value};

/// hypre's objects of one AMG operator.
struct Objects {
    solver: *mut std::ffi::c_void,
    /// The ParVectors of the near-null-space vectors, the array hypre keeps (it reads them at
    /// set-up and does not free them; this array must not move while the solver lives).
    modes: Vec<*mut std::ffi::c_void>,
    /// The vectors `modes` points into: never read, kept alive as long as the solver.
    _ij_modes: Vec<IjVector>,
    b: IjVector,
    x: IjVector,
    a: IjMatrix,
}

// SAFETY: used behind the operator's mutex only.
unsafe impl Send for Objects {}

impl Drop for Objects {
    fn drop(&mut self) {
        let Ok(h) = api() else { return };
        if !self.solver.is_null() {
            // SAFETY: `solver` is NULL or the solver this `Objects` created and owns alone
            // (`BoomerAmg` keeps it behind its mutex and is being dropped), destroyed once here,
            // before the matrix and vectors it points to (the fields, dropped after this).
            unsafe { (h.AmgDestroy)(self.solver) };
        }
    }
}

/// What BoomerAMG cannot take (hypre aborts or divides by zero on it) and is refused before it
/// sees it: a row without a non-zero diagonal entry, a value that is not finite. `what` names the
/// argument. Local.
pub(crate) fn amg_ready(a: &CsrOp<f64>, what: &str) -> Result<()> {
    let n = a.rows().local_len() as usize;
    let lo = a.rows().local_start();
    let mut diag = vec![false; n];
    let mut bad: Option<String> = None;
    let blk = a.blocks();
    blk.diag.for_each(|i, j, v| {
        if !v.is_finite() && bad.is_none() {
            bad = Some(format!("global row {} holds {v}", lo + i as i64));
        }
        if i == j && v != 0.0 {
            diag[i] = true;
        }
    });
    blk.offd.for_each(|i, _, v| {
        if !v.is_finite() && bad.is_none() {
            bad = Some(format!("global row {} holds {v}", lo + i as i64));
        }
    });
    if let Some(b) = bad {
        crate::bail!(
            InvalidArgument,
            "argument '{what}': {b}; the matrix must be finite"
        );
    }
    if let Some(i) = diag.iter().position(|d| !d) {
        crate::bail!(
            InvalidArgument,
            "argument '{what}': global row {} has no non-zero diagonal entry (hypre's AMG smoothers divide by it)",
            lo + i as i64
        );
    }
    Ok(())
}

/// What a BoomerAMG operator was set up from, kept to set it up again on new values.
struct Source {
    a: Op<f64>,
    o: HypreOptions,
    nmodes: usize,
    modes: Vec<f64>,
}

/// BoomerAMG as an operator (f64, host memory).
pub struct BoomerAmg {
    rows: Arc<Layout>,
    comm: Arc<Comm>,
    obj: Mutex<Objects>,
    /// With a source, the operator can be refreshed ([`LinearOperator::refresh`]).
    src: Option<Source>,
    log: SetupLog,
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
        amg_ready(a, "A")?;
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
        let rows = a.rows().clone();
        let comm = rows.comm().clone();
        let obj = Self::objects(a, o, nmodes, modes)?;
        Ok(BoomerAmg {
            rows,
            comm,
            obj: Mutex::new(obj),
            src: None,
            log: SetupLog::new(0),
        })
    }

    /// Keep what this operator was set up from (`a` is the operator the CSR matrix of
    /// [`BoomerAmg::setup`] was), so that [`LinearOperator::refresh`] can set it up again on `a`'s
    /// new values with the same options and near-null-space vectors.
    pub fn with_source(
        mut self,
        a: Op<f64>,
        o: HypreOptions,
        nmodes: usize,
        modes: Vec<f64>,
    ) -> BoomerAmg {
        self.log.built_from(crate::op::tree::version(a.as_ref()));
        self.src = Some(Source {
            a,
            o,
            nmodes,
            modes,
        });
        self
    }

    /// hypre's objects for `a`, set up. [collective]
    fn objects(a: &CsrOp<f64>, o: &HypreOptions, nmodes: usize, modes: &[f64]) -> Result<Objects> {
        let h = api()?;
        clear_errors()?;
        let rows = a.rows().clone();
        let comm = rows.comm().clone();
        let (lo, n) = (rows.local_start(), rows.local_len() as usize);
        let am = IjMatrix::from_csr(a, "BoomerAMG")?;
        let b = IjVector::new(&comm, lo, n, None)?;
        let x = IjVector::new(&comm, lo, n, None)?;
        // the near-null-space vectors (collective: every rank has the same number, agreed by the
        // caller), kept until the solver goes
        let mut ij_modes = Vec::new();
        for k in 0..nmodes {
            let vals = modes.get(k * n..(k + 1) * n).unwrap_or(&[]);
            ij_modes.push(IjVector::new(&comm, lo, n, Some(vals))?);
        }
        let mut obj = Objects {
            solver: std::ptr::null_mut(),
            modes: ij_modes.iter().map(IjVector::par).collect(),
            _ij_modes: ij_modes,
            b,
            x,
            a: am,
        };
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
        let code = unsafe { (h.AmgSetup)(obj.solver, obj.a.par(), obj.b.par(), obj.x.par()) };
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
        Ok(obj)
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
        // SAFETY: the solver, matrix and vectors are this operator's, set up in `setup`, under its
        // mutex; `AmgSolve` was resolved with this signature in `load()`.
        one_cycle(
            &self.comm,
            &o.b,
            &o.x,
            x.local(),
            y.local_mut(),
            "BoomerAMGSolve",
            || unsafe { (h.AmgSolve)(o.solver, o.a.par(), o.b.par(), o.x.par()) },
        )
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
    fn parts(&self) -> Vec<&Op<f64>> {
        self.src.iter().map(|s| &s.a).collect()
    }
    fn stale(&self) -> bool {
        self.src
            .as_ref()
            .is_some_and(|s| self.log.stale(crate::op::tree::version(s.a.as_ref())))
    }
    /// hypre's BoomerAMG keeps nothing of a set-up that new values could reuse (its coarsening
    /// reads the values): the matrix is copied to hypre again and the set-up runs again with the
    /// same options and near-null-space vectors; the old hierarchy stays until the new one is made.
    fn refresh(&self, force: bool) -> Result<bool> {
        let Some(s) = &self.src else {
            return Ok(false);
        };
        self.log
            .refresh(force, crate::op::tree::version(s.a.as_ref()), || {
                let csr = s.a.as_any().downcast_ref::<CsrOp<f64>>().ok_or_else(|| {
                    crate::err!(Internal, "BoomerAMG's source is not a CSR matrix")
                })?;
                self.comm.agree(amg_ready(csr, "A"))?;
                let obj = Self::objects(csr, &s.o, s.nmodes, &s.modes)?;
                *self.obj.lock().unwrap_or_else(|p| p.into_inner()) = obj;
                Ok(())
            })
    }
    fn setups(&self) -> u64 {
        self.log.count()
    }
    fn view_details(&self) -> Vec<String> {
        match &self.src {
            Some(s) => {
                let mut v = vec![super::options::view_line(&s.o)];
                if s.nmodes > 0 {
                    v.push(format!("near-null-space vectors: {}", s.nmodes));
                }
                v
            }
            None => Vec::new(),
        }
    }
}
