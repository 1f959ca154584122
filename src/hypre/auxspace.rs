//! hypre's auxiliary-space solvers as preconditioners: AMS for H(curl) (Maxwell's curl-curl
//! systems) and ADS for H(div), each applied as one cycle from a zero initial guess (tolerance 0,
//! one iteration, as hypre's own PCG and MFEM's `HypreAMS`/`HypreADS` use them). Their inputs are
//! parlops CSR operators (the system, the discrete gradient and curl, the Nedelec and
//! Raviart-Thomas interpolations, the Poisson matrices) and the vertex coordinates, copied to hypre
//! once at set-up. Options are set by hypre's names ([`super::options::AMS`], [`ADS`]), with MFEM's
//! defaults where the caller sets none.
//!
//! [`ADS`]: super::options::ADS

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::ij::{IjMatrix, IjVector, clear_errors, hcheck, one_cycle};
use super::options::HypreOptions;
use super::{HInt, api};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::csr::CsrOp;
use crate::op::tree::SetupLog;
use crate::op::{LinearOperator, Op};
use crate::vector::{DistVector, Layout};

type H = *mut c_void;

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuxKind {
    /// H(curl): A on edges, G from vertices to edges.
    Ams,
    /// H(div): A on faces, C from edges to faces, G from vertices to edges.
    Ads,
}

impl AuxKind {
    pub fn name(self) -> &'static str {
        match self {
            AuxKind::Ams => "AMS",
            AuxKind::Ads => "ADS",
        }
    }
}

/// What AMS or ADS is built from (this rank's parts).
pub struct AuxInput<'a> {
    pub kind: AuxKind,
    /// The system (square).
    pub a: &'a CsrOp<f64>,
    /// ADS: the discrete curl (A's rows, columns over the edges).
    pub c: Option<&'a CsrOp<f64>>,
    /// The discrete gradient (AMS: A's rows; ADS: C's columns; columns over the vertices).
    pub g: &'a CsrOp<f64>,
    /// 2 or 3 (ADS: 3).
    pub dim: usize,
    /// This rank's vertices' coordinates, `dim` per vertex, vertex by vertex (G's local columns).
    pub coords: Option<&'a [f64]>,
    /// AMS: none, Pi, or Pix, Piy (, Piz); ADS: none, RT_Pi and ND_Pi, or RT_Pix, RT_Piy, RT_Piz,
    /// ND_Pix, ND_Piy, ND_Piz.
    pub pi: Vec<&'a CsrOp<f64>>,
    /// AMS: the Poisson matrices of the alpha (curl-curl) and beta (mass) coefficients.
    pub alpha: Option<&'a CsrOp<f64>>,
    pub beta: Option<&'a CsrOp<f64>>,
}

fn same_split(a: &Layout, b: &Layout) -> bool {
    a.compatible(b)
}

fn finite(m: &CsrOp<f64>, what: &str) -> Result<()> {
    let lo = m.rows().local_start();
    let mut bad = None;
    let mut check = |i: usize, v: f64| {
        if !v.is_finite() && bad.is_none() {
            bad = Some((lo + i as i64, v));
        }
    };
    let blk = m.blocks();
    blk.diag.for_each(|i, _, v| check(i, v));
    blk.offd.for_each(|i, _, v| check(i, v));
    if let Some((r, v)) = bad {
        crate::bail!(
            InvalidArgument,
            "argument '{what}': global row {r} holds {v}; the matrix must be finite"
        );
    }
    Ok(())
}

impl AuxInput<'_> {
    /// This rank's checks (agreed by the caller before [`AuxSpace::setup`]): every matrix's rows
    /// and columns as the solver needs them, the coordinates' length, the interpolations' count.
    pub fn check(&self, o: &HypreOptions) -> Result<()> {
        api()?;
        let k = self.kind.name();
        let (a, g) = (self.a, self.g);
        if !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "{k} needs a square operator with equal row and column layouts; A is {}x{}",
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        finite(a, "A")?;
        finite(g, "G")?;
        let edges = match (self.kind, self.c) {
            (AuxKind::Ams, _) => a.rows(),
            (AuxKind::Ads, Some(c)) => {
                finite(c, "C")?;
                if !same_split(c.rows(), a.rows()) {
                    crate::bail!(
                        SizeMismatch,
                        "argument 'C' (the discrete curl) has {} rows ({} on this rank); they must be A's faces, {} ({} on this rank)",
                        c.rows().global_len(),
                        c.rows().local_len(),
                        a.rows().global_len(),
                        a.rows().local_len()
                    );
                }
                c.cols()
            }
            (AuxKind::Ads, None) => crate::bail!(Internal, "ADS without C"),
        };
        if !same_split(g.rows(), edges) {
            crate::bail!(
                SizeMismatch,
                "argument 'G' (the discrete gradient) has {} rows ({} on this rank); they must be {}, {} ({} on this rank)",
                g.rows().global_len(),
                g.rows().local_len(),
                if self.kind == AuxKind::Ams {
                    "A's edges"
                } else {
                    "C's columns (the edges)"
                },
                edges.global_len(),
                edges.local_len()
            );
        }
        let dims: &[usize] = if self.kind == AuxKind::Ams {
            &[2, 3]
        } else {
            &[3]
        };
        if !dims.contains(&self.dim) {
            crate::bail!(
                InvalidArgument,
                "argument 'dim' is {}; {k} takes {dims:?}",
                self.dim
            );
        }
        let nv = g.cols().local_len() as usize;
        if let Some(x) = self.coords {
            if x.len() != nv * self.dim {
                crate::bail!(
                    SizeMismatch,
                    "argument 'coords' holds {} values on this rank; it must hold dim x G's local columns (the vertices) = {} x {nv} = {}",
                    x.len(),
                    self.dim,
                    nv * self.dim
                );
            }
            if let Some(i) = x.iter().position(|v| !v.is_finite()) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'coords': vertex {} (of this rank) has coordinate {}; coordinates must be finite",
                    i / self.dim,
                    x[i]
                );
            }
        }
        let np = self.pi.len();
        let (ok_counts, targets): (&[usize], Vec<(&Layout, &str)>) = match self.kind {
            AuxKind::Ams => (&[0, 1, self.dim], vec![(a.rows(), "A's edges")]),
            AuxKind::Ads => (
                &[0, 2, 6],
                vec![(a.rows(), "A's faces"), (edges, "the edges")],
            ),
        };
        if !ok_counts.contains(&np) {
            crate::bail!(
                InvalidArgument,
                "argument 'num_interpolations' is {np}; {k} takes {ok_counts:?} (see the header)"
            );
        }
        if np == 0 && self.coords.is_none() {
            crate::bail!(
                InvalidArgument,
                "{k} needs the vertex coordinates (order 1) or the interpolations (higher orders); both 'coords' and 'interpolations' are NULL"
            );
        }
        if self.kind == AuxKind::Ads {
            let (c, ac) = (o.int_value("CycleType", 0), o.int_value("AMSCycleType", 0));
            if (c < 10) != (ac < 10) {
                crate::bail!(
                    InvalidArgument,
                    "ADS's CycleType {c} and AMSCycleType {ac} must both be in 1..=8 or both in 11..=14: the Nedelec interpolation ADS forms (whole or by component) follows its own cycle, and the AMS inside uses what its cycle asks for (hypre crashes otherwise)"
                );
            }
        }
        // hypre uses the whole interpolations in cycles 1-8 and their components in cycles 11-14,
        // and computes neither from the other (it crashes on the wrong kind)
        if np > 0 {
            let whole = np == targets.len();
            let mut cycles = vec![("CycleType", o.int_value("CycleType", 0))];
            if self.kind == AuxKind::Ads {
                cycles.push(("AMSCycleType", o.int_value("AMSCycleType", 0)));
            }
            for (name, cyc) in cycles {
                if whole != (cyc < 10) {
                    crate::bail!(
                        InvalidArgument,
                        "{np} interpolations ({}) need {name} {} but it is {cyc}: hypre uses the whole interpolations in cycles 1-8 and their components in cycles 11-14",
                        if whole { "whole" } else { "by component" },
                        if whole { "in 1..=8" } else { "in 11..=14" }
                    );
                }
            }
        }
        let per = np / targets.len().max(1);
        for (i, p) in self.pi.iter().enumerate() {
            finite(p, "interpolations")?;
            let (rows, what) = targets[i.checked_div(per).unwrap_or(0)];
            if !same_split(p.rows(), rows) {
                crate::bail!(
                    SizeMismatch,
                    "argument 'interpolations[{i}]' has {} rows ({} on this rank); they must be {what}, {} ({} on this rank)",
                    p.rows().global_len(),
                    p.rows().local_len(),
                    rows.global_len(),
                    rows.local_len()
                );
            }
            // one matrix per target: vector-valued (dim x the vertex space); one per component:
            // the vertex space
            let want = if per == 1 {
                self.dim as i64 * g.cols().global_len()
            } else {
                g.cols().global_len()
            };
            if p.cols().global_len() != want {
                crate::bail!(
                    SizeMismatch,
                    "argument 'interpolations[{i}]' has {} columns; it must have {want} ({})",
                    p.cols().global_len(),
                    if per == 1 {
                        "dim x G's columns, the vector nodal space"
                    } else {
                        "G's columns, one component of the nodal space"
                    }
                );
            }
        }
        for (m, name) in [(self.alpha, "alpha_poisson"), (self.beta, "beta_poisson")] {
            if let Some(m) = m {
                super::amg::amg_ready(m, name)?;
                if !same_split(m.rows(), g.cols()) || !same_split(m.cols(), g.cols()) {
                    crate::bail!(
                        SizeMismatch,
                        "argument '{name}' is {}x{}; it must be square over G's columns (the vertices), {}",
                        m.rows().global_len(),
                        m.cols().global_len(),
                        g.cols().global_len()
                    );
                }
            }
        }
        if self.beta.is_some() && o.int_value("BetaPoissonZero", 0) == 1 {
            crate::bail!(
                InvalidArgument,
                "argument 'beta_poisson' is given but the option BetaPoissonZero says beta = 0; give one or the other"
            );
        }
        Ok(())
    }
}

/// The hypre functions AMS and ADS need, looked up by name (an old hypre may lack some).
struct Fns {
    create: unsafe extern "C" fn(*mut H) -> HInt,
    destroy: unsafe extern "C" fn(H) -> HInt,
    setup: unsafe extern "C" fn(H, H, H, H) -> HInt,
    solve: unsafe extern "C" fn(H, H, H, H) -> HInt,
}

fn sym<T: Copy>(name: &str) -> Result<T> {
    let h = api()?;
    match h.sym(name) {
        // SAFETY: the callers name hypre's functions with the prototypes `T` gives (hypre's C
        // prototypes, with the integer widths of the HYPRE_config.h parlops was built with); `T` is
        // a function pointer type, the size of the symbol's address.
        Some(p) => Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) }),
        None => crate::bail!(
            NotSupported,
            "the hypre loaded ({} at {}) has no {name}",
            h.version,
            h.path
        ),
    }
}

fn fns(kind: AuxKind) -> Result<Fns> {
    let p = kind.name();
    Ok(Fns {
        create: sym(&format!("HYPRE_{p}Create"))?,
        destroy: sym(&format!("HYPRE_{p}Destroy"))?,
        setup: sym(&format!("HYPRE_{p}Setup"))?,
        solve: sym(&format!("HYPRE_{p}Solve"))?,
    })
}

/// hypre's objects of one AMS or ADS operator.
struct Objects {
    solver: H,
    destroy: unsafe extern "C" fn(H) -> HInt,
    /// Every matrix and vector the solver points to: kept alive as long as it.
    _mats: Vec<IjMatrix>,
    _coords: Vec<IjVector>,
    a: IjMatrix,
    b: IjVector,
    x: IjVector,
}

// SAFETY: used behind the operator's mutex only.
unsafe impl Send for Objects {}

impl Drop for Objects {
    fn drop(&mut self) {
        if !self.solver.is_null() {
            // SAFETY: `solver` is the solver this `Objects` created and owns alone, destroyed once
            // here, before the matrices and vectors it points to (the fields, dropped after this).
            unsafe { (self.destroy)(self.solver) };
        }
    }
}

/// How an AMS or ADS operator is set up again on new values: what it was made from and the
/// set-up from them.
pub type Rebuild = Box<dyn Fn() -> Result<AuxSpace> + Send + Sync>;

struct Source {
    ops: Vec<Op<f64>>,
    /// The options as a view shows them.
    view: String,
    rebuild: Rebuild,
}

/// AMS or ADS as an operator (f64, host memory).
pub struct AuxSpace {
    kind: AuxKind,
    rows: Arc<Layout>,
    comm: Arc<Comm>,
    solve: unsafe extern "C" fn(H, H, H, H) -> HInt,
    obj: Mutex<Objects>,
    src: Option<Source>,
    log: SetupLog,
}

impl AuxSpace {
    /// Hand the inputs to hypre and run the set-up. Collective: every rank must have passed
    /// [`AuxInput::check`] (agreed). hypre failures are agreed here, so every rank gets one.
    pub fn setup(inp: &AuxInput, o: &HypreOptions) -> Result<AuxSpace> {
        clear_errors()?;
        let f = comm_agree_fns(inp)?;
        let rows = inp.a.rows().clone();
        let comm = rows.comm().clone();
        let (lo, n) = (rows.local_start(), rows.local_len() as usize);
        let a = IjMatrix::from_csr(inp.a, "A")?;
        let g = IjMatrix::from_csr(inp.g, "G")?;
        let c = match inp.c {
            Some(c) => Some(IjMatrix::from_csr(c, "C")?),
            None => None,
        };
        let mut pis = Vec::new();
        for p in &inp.pi {
            pis.push(IjMatrix::from_csr(p, "interpolations")?);
        }
        let alpha = match inp.alpha {
            Some(m) => Some(IjMatrix::from_csr(m, "alpha_poisson")?),
            None => None,
        };
        let beta = match inp.beta {
            Some(m) => Some(IjMatrix::from_csr(m, "beta_poisson")?),
            None => None,
        };
        let mut coords = Vec::new();
        if let Some(x) = inp.coords {
            let (vlo, nv) = (
                inp.g.cols().local_start(),
                inp.g.cols().local_len() as usize,
            );
            for d in 0..inp.dim {
                let comp: Vec<f64> = (0..nv).map(|v| x[v * inp.dim + d]).collect();
                coords.push(IjVector::new(&comm, vlo, nv, Some(&comp))?);
            }
        }
        let b = IjVector::new(&comm, lo, n, None)?;
        let x = IjVector::new(&comm, lo, n, None)?;
        let par = |m: &Option<IjMatrix>| m.as_ref().map_or(std::ptr::null_mut(), IjMatrix::par);
        let (gp, cp, ap, bp) = (g.par(), par(&c), par(&alpha), par(&beta));
        let pip: Vec<H> = pis.iter().map(IjMatrix::par).collect();
        let cv: Vec<H> = coords.iter().map(IjVector::par).collect();
        let mut obj = Objects {
            solver: std::ptr::null_mut(),
            destroy: f.destroy,
            _mats: [Some(g), c, alpha, beta]
                .into_iter()
                .flatten()
                .chain(pis)
                .collect(),
            _coords: coords,
            a,
            b,
            x,
        };
        // SAFETY: `create` is hypre's `HYPRE_{AMS,ADS}Create(HYPRE_Solver *)`, writing `obj.solver`.
        let made = hcheck(unsafe { (f.create)(&mut obj.solver) }, "Create");
        comm.agree(made)?;
        let opts = configure(inp, o, obj.solver, gp, cp, ap, bp, &pip, &cv);
        comm.agree(opts)?;
        // SAFETY: `setup` is hypre's `HYPRE_{AMS,ADS}Setup(solver, A, b, x)`; the solver, matrix
        // and vectors are the ones created above on every rank (each step agreed).
        let code = unsafe { (f.setup)(obj.solver, obj.a.par(), obj.b.par(), obj.x.par()) };
        comm.agree(hcheck(code, &format!("{}Setup", inp.kind.name())))?;
        Ok(AuxSpace {
            kind: inp.kind,
            rows,
            comm,
            solve: f.solve,
            obj: Mutex::new(obj),
            src: None,
            log: SetupLog::new(0),
        })
    }

    /// Keep what this operator was made from (`ops`: every operator it read) and how to set it up
    /// again, for [`LinearOperator::refresh`].
    pub fn with_rebuild(
        mut self,
        ops: Vec<Op<f64>>,
        o: &HypreOptions,
        rebuild: Rebuild,
    ) -> AuxSpace {
        self.log.built_from(crate::op::tree::versions(&ops));
        let view = super::options::view_line(o);
        self.src = Some(Source { ops, view, rebuild });
        self
    }
}

/// The functions, agreed (a hypre without them fails on every rank).
fn comm_agree_fns(inp: &AuxInput) -> Result<Fns> {
    inp.a.rows().comm().agree(fns(inp.kind))
}

/// hypre's setters, in MFEM's order, with the options' values (set, or MFEM's defaults). Local
/// calls (their failure is agreed by the caller).
#[allow(clippy::too_many_arguments)]
fn configure(
    inp: &AuxInput,
    o: &HypreOptions,
    s: H,
    g: H,
    c: H,
    alpha: H,
    beta: H,
    pi: &[H],
    coords: &[H],
) -> Result<()> {
    let p = inp.kind.name();
    let int = |n: &str| o.int_value(n, 0) as HInt;
    let real = |n: &str| o.real_value(n, 0.0);
    type F1 = unsafe extern "C" fn(H, HInt) -> HInt;
    type FR = unsafe extern "C" fn(H, f64) -> HInt;
    type FM = unsafe extern "C" fn(H, H) -> HInt;
    type F3V = unsafe extern "C" fn(H, H, H, H) -> HInt;
    type FSmooth = unsafe extern "C" fn(H, HInt, HInt, f64, f64) -> HInt;
    type FAmg = unsafe extern "C" fn(H, HInt, HInt, HInt, f64, HInt, HInt) -> HInt;
    type FAmsInAds = unsafe extern "C" fn(H, HInt, HInt, HInt, HInt, f64, HInt, HInt) -> HInt;
    let amg = |pre: &str| {
        (
            int(&format!("{pre}CoarsenType")),
            int(&format!("{pre}AggLevels")),
            int(&format!("{pre}RelaxType")),
            real(&format!("{pre}StrongThreshold")),
            int(&format!("{pre}InterpType")),
            int(&format!("{pre}PMaxElmts")),
        )
    };
    // SAFETY: each function is looked up by hypre's name with the prototype hypre's header gives it
    // (`sym`); the solver is the one just created, and every matrix and vector handed over lives as
    // long as it (kept in its `Objects`).
    unsafe {
        let set = |code: HInt, what: &str| hcheck(code, &format!("{p}{what}"));
        if inp.kind == AuxKind::Ams {
            set(
                sym::<F1>("HYPRE_AMSSetDimension")?(s, inp.dim as HInt),
                "SetDimension",
            )?;
        }
        set(sym::<FR>(&format!("HYPRE_{p}SetTol"))?(s, 0.0), "SetTol")?;
        set(
            sym::<F1>(&format!("HYPRE_{p}SetMaxIter"))?(s, 1),
            "SetMaxIter",
        )?;
        set(
            sym::<F1>(&format!("HYPRE_{p}SetCycleType"))?(s, int("CycleType")),
            "SetCycleType",
        )?;
        set(
            sym::<F1>(&format!("HYPRE_{p}SetPrintLevel"))?(s, int("PrintLevel")),
            "SetPrintLevel",
        )?;
        if !coords.is_empty() {
            let z = coords.get(2).copied().unwrap_or(std::ptr::null_mut());
            set(
                sym::<F3V>(&format!("HYPRE_{p}SetCoordinateVectors"))?(s, coords[0], coords[1], z),
                "SetCoordinateVectors",
            )?;
        }
        if inp.kind == AuxKind::Ads {
            set(
                sym::<FM>("HYPRE_ADSSetDiscreteCurl")?(s, c),
                "SetDiscreteCurl",
            )?;
        }
        set(
            sym::<FM>(&format!("HYPRE_{p}SetDiscreteGradient"))?(s, g),
            "SetDiscreteGradient",
        )?;
        let null = std::ptr::null_mut();
        match (inp.kind, pi.len()) {
            (_, 0) => {}
            (AuxKind::Ams, n) => {
                let f: unsafe extern "C" fn(H, H, H, H, H) -> HInt =
                    sym("HYPRE_AMSSetInterpolations")?;
                let code = if n == 1 {
                    f(s, pi[0], null, null, null)
                } else {
                    f(s, null, pi[0], pi[1], pi.get(2).copied().unwrap_or(null))
                };
                set(code, "SetInterpolations")?;
            }
            (AuxKind::Ads, n) => {
                let f: unsafe extern "C" fn(H, H, H, H, H, H, H, H, H) -> HInt =
                    sym("HYPRE_ADSSetInterpolations")?;
                let code = if n == 2 {
                    f(s, pi[0], null, null, null, pi[1], null, null, null)
                } else {
                    f(s, null, pi[0], pi[1], pi[2], null, pi[3], pi[4], pi[5])
                };
                set(code, "SetInterpolations")?;
            }
        }
        set(
            sym::<FSmooth>(&format!("HYPRE_{p}SetSmoothingOptions"))?(
                s,
                int("RelaxType"),
                int("RelaxTimes"),
                real("RelaxWeight"),
                real("Omega"),
            ),
            "SetSmoothingOptions",
        )?;
        match inp.kind {
            AuxKind::Ams => {
                if !alpha.is_null() {
                    set(
                        sym::<FM>("HYPRE_AMSSetAlphaPoissonMatrix")?(s, alpha),
                        "SetAlphaPoissonMatrix",
                    )?;
                }
                if !beta.is_null() || o.int_value("BetaPoissonZero", 0) == 1 {
                    set(
                        sym::<FM>("HYPRE_AMSSetBetaPoissonMatrix")?(s, beta),
                        "SetBetaPoissonMatrix",
                    )?;
                }
                for pre in ["Alpha", "Beta"] {
                    let (ct, al, rt, th, it, pm) = amg(pre);
                    set(
                        sym::<FAmg>(&format!("HYPRE_AMSSet{pre}AMGOptions"))?(
                            s, ct, al, rt, th, it, pm,
                        ),
                        &format!("Set{pre}AMGOptions"),
                    )?;
                    if o.get(&format!("{pre}CoarseRelaxType")).is_some() {
                        set(
                            sym::<F1>(&format!("HYPRE_AMSSet{pre}AMGCoarseRelaxType"))?(
                                s,
                                int(&format!("{pre}CoarseRelaxType")),
                            ),
                            &format!("Set{pre}AMGCoarseRelaxType"),
                        )?;
                    }
                }
            }
            AuxKind::Ads => {
                let (ct, al, rt, th, it, pm) = amg("AMS");
                set(
                    sym::<FAmsInAds>("HYPRE_ADSSetAMSOptions")?(
                        s,
                        int("AMSCycleType"),
                        ct,
                        al,
                        rt,
                        th,
                        it,
                        pm,
                    ),
                    "SetAMSOptions",
                )?;
                let (ct, al, rt, th, it, pm) = amg("AMG");
                set(
                    sym::<FAmg>("HYPRE_ADSSetAMGOptions")?(s, ct, al, rt, th, it, pm),
                    "SetAMGOptions",
                )?;
            }
        }
    }
    Ok(())
}

impl LinearOperator<f64> for AuxSpace {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn forward(&self, x: &DistVector<f64>, y: &mut DistVector<f64>) -> Result<()> {
        let o = self.obj.lock().unwrap_or_else(|p| p.into_inner());
        let what = format!("{}Solve", self.kind.name());
        // SAFETY: `solve` is hypre's `HYPRE_{AMS,ADS}Solve(solver, A, b, x)`; the solver, matrix
        // and vectors are this operator's, set up in `setup`, under its mutex.
        one_cycle(
            &self.comm,
            &o.b,
            &o.x,
            x.local(),
            y.local_mut(),
            &what,
            || unsafe { (self.solve)(o.solver, o.a.par(), o.b.par(), o.x.par()) },
        )
    }
    fn backward(&self, _y: &DistVector<f64>, _x: &mut DistVector<f64>) -> Result<()> {
        crate::bail!(
            NotSupported,
            "{}: the adjoint of an {} cycle is not available",
            self.describe(),
            self.kind.name()
        )
    }
    fn parts(&self) -> Vec<&Op<f64>> {
        self.src.iter().flat_map(|s| &s.ops).collect()
    }
    fn stale(&self) -> bool {
        self.src
            .as_ref()
            .is_some_and(|s| self.log.stale(crate::op::tree::versions(&s.ops)))
    }
    /// hypre's AMS and ADS keep nothing of a set-up that new values could reuse: the set-up runs
    /// again from the same inputs and options (the old one stays until the new one is made).
    fn refresh(&self, force: bool) -> Result<bool> {
        let Some(s) = &self.src else {
            return Ok(false);
        };
        self.log
            .refresh(force, crate::op::tree::versions(&s.ops), || {
                let new = (s.rebuild)()?;
                let obj = new.obj.into_inner().unwrap_or_else(|p| p.into_inner());
                *self.obj.lock().unwrap_or_else(|p| p.into_inner()) = obj;
                Ok(())
            })
    }
    fn setups(&self) -> u64 {
        self.log.count()
    }
    fn view_details(&self) -> Vec<String> {
        self.src.iter().map(|s| s.view.clone()).collect()
    }
    fn describe(&self) -> String {
        format!("{} ({} rows)", self.kind.name(), self.rows.global_len())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
