//! The tables of hypre's options parlops takes, by solver: BoomerAMG's (applied through hypre's
//! setter of each name), AMS's and ADS's (applied in hypre's groups by `auxspace.rs`, with MFEM's
//! defaults), and the values hypre accepts for each, checked before hypre sees them.

use super::options::{Kind, Setter, Spec, Value};

/// Coarsening (CoarsenType) codes of a CPU build of hypre 2.26.
pub const COARSEN_TYPES: &[i64] = &[0, 1, 3, 6, 7, 8, 9, 10, 11, 21, 22];
/// Interpolations (1 needs GSMG's smooth vectors, which parlops does not set up: hypre crashes
/// without them; 10 and 11 need hypre's nodal systems mode and 15 a GPU build: left out).
pub const INTERP_TYPES: &[i64] = &[0, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 16, 17, 18];
/// Smoothers for every level (9, Gaussian elimination, is for the coarsest level only; 5 needs
/// OpenMP; 7 is not documented for this call: left out).
pub const RELAX_TYPES: &[i64] = &[0, 1, 2, 3, 4, 6, 8, 13, 14, 15, 16, 17, 18];
/// Smoothers for one part of a cycle (CycleRelaxType k = 1, 2): those of every level but 15 (CG),
/// 16 (Chebyshev) and 17 (FCF-Jacobi), whose set-up hypre runs only when RelaxType selects them
/// (it crashes on them otherwise).
pub const CYCLE_RELAX_TYPES: &[i64] = &[0, 1, 2, 3, 4, 6, 8, 13, 14, 18];
/// Smoothers on the coarsest level: those of one part of a cycle and the direct ones (9 Gaussian
/// elimination, 29 with pivoting through LAPACK-style elimination, 99 GE with pivoting).
pub const COARSE_RELAX_TYPES: &[i64] = &[0, 1, 2, 3, 4, 6, 8, 9, 13, 14, 18, 29, 99];
/// Complex smoothers (SmoothType): 4 FSAI, 5 ILU, 6 Schwarz, 7 Pilut, 8 ParaSails, 9 Euclid.
pub const SMOOTH_TYPES: &[i64] = &[4, 5, 6, 7, 8, 9];
/// Nodal strength norms (Nodal): 0 none (unknown-based), 1 Frobenius, 2 sum of absolute values,
/// 3 largest, 4 row sum, 6 sum.
pub const NODAL: &[i64] = &[0, 1, 2, 3, 4, 6];
/// The largest sweep count per level, level count, and functions per node accepted.
pub const MAX_SWEEPS: i64 = 100;
pub const MAX_LEVELS: i64 = 100;
pub const MAX_FUNCTIONS: i64 = 256;
/// hypre's print levels (0 silent .. 3 set-up and solve).
pub const MAX_PRINT_LEVEL: i64 = 3;

const fn int(lo: i64, hi: i64) -> Kind {
    Kind::Int { lo, hi, list: None }
}
const fn one_of(list: &'static [i64]) -> Kind {
    Kind::Int {
        lo: i64::MIN,
        hi: i64::MAX,
        list: Some(list),
    }
}
const fn real(lo: f64, hi: f64) -> Kind {
    Kind::Real {
        lo,
        hi,
        open_lo: false,
    }
}
const fn real_pos(hi: f64) -> Kind {
    Kind::Real {
        lo: 0.0,
        hi,
        open_lo: true,
    }
}
const fn spec(name: &'static str, kind: Kind, doc: &'static str) -> Spec {
    Spec {
        name,
        kind,
        setter: Setter::Plain,
        doc,
        default: None,
    }
}

/// BoomerAMG's options, by hypre's names. The defaults are hypre's (parlops sets only what the
/// caller set, and always PrintLevel 0 unless set, tolerance 0 and one V-cycle per apply).
pub const BOOMERAMG: &[Spec] = &[
    spec(
        "StrongThreshold",
        real(0.0, 1.0),
        "strength threshold (0.25; 0.5 or more in 3D)",
    ),
    spec(
        "CoarsenType",
        one_of(COARSEN_TYPES),
        "coarsening: 0 CLJP, 3 RS, 6 Falgout, 8 PMIS, 10 HMIS, ...",
    ),
    spec(
        "InterpType",
        one_of(INTERP_TYPES),
        "interpolation: 0 classical, 6 extended+i, 14 extended, ...",
    ),
    spec(
        "RelaxType",
        one_of(RELAX_TYPES),
        "smoother on every level: 3 hybrid GS, 6 symmetric, 8 l1-GS, 18 l1-Jacobi, ...",
    ),
    spec(
        "NumSweeps",
        int(1, MAX_SWEEPS),
        "smoothing sweeps on each level",
    ),
    spec("MaxLevels", int(1, MAX_LEVELS), "most levels (25)"),
    spec(
        "AggNumLevels",
        int(0, MAX_LEVELS),
        "levels of aggressive coarsening (0)",
    ),
    spec(
        "NumFunctions",
        int(1, MAX_FUNCTIONS),
        "unknowns per node of a system; must divide every rank's rows",
    ),
    spec(
        "PrintLevel",
        int(0, MAX_PRINT_LEVEL),
        "hypre's printing (parlops: 0)",
    ),
    spec(
        "PMaxElmts",
        int(0, 1000),
        "most entries per row of interpolation (0: no limit; hypre 4)",
    ),
    spec(
        "TruncFactor",
        Kind::Real {
            lo: 0.0,
            hi: 1.0,
            open_lo: false,
        },
        "interpolation truncation factor in [0, 1] (0: none)",
    ),
    spec("CycleType", int(1, 2), "1 V-cycle, 2 W-cycle"),
    spec(
        "RelaxOrder",
        int(0, 1),
        "0 lexicographic, 1 C/F (C points first)",
    ),
    Spec {
        name: "CycleRelaxTypeDown",
        kind: one_of(CYCLE_RELAX_TYPES),
        setter: Setter::Cycle("CycleRelaxType", 1),
        doc: "smoother going down (hypre's CycleRelaxType, k = 1)",
        default: None,
    },
    Spec {
        name: "CycleRelaxTypeUp",
        kind: one_of(CYCLE_RELAX_TYPES),
        setter: Setter::Cycle("CycleRelaxType", 2),
        doc: "smoother going up (CycleRelaxType, k = 2)",
        default: None,
    },
    Spec {
        name: "CycleRelaxTypeCoarse",
        kind: one_of(COARSE_RELAX_TYPES),
        setter: Setter::Cycle("CycleRelaxType", 3),
        doc: "coarsest-level solver (CycleRelaxType, k = 3): 9 Gaussian elimination, 99 with pivoting, or a smoother",
        default: None,
    },
    Spec {
        name: "CycleNumSweepsDown",
        kind: int(1, MAX_SWEEPS),
        setter: Setter::Cycle("CycleNumSweeps", 1),
        doc: "sweeps going down (CycleNumSweeps, k = 1)",
        default: None,
    },
    Spec {
        name: "CycleNumSweepsUp",
        kind: int(1, MAX_SWEEPS),
        setter: Setter::Cycle("CycleNumSweeps", 2),
        doc: "sweeps going up (CycleNumSweeps, k = 2)",
        default: None,
    },
    Spec {
        name: "CycleNumSweepsCoarse",
        kind: int(1, MAX_SWEEPS),
        setter: Setter::Cycle("CycleNumSweeps", 3),
        doc: "sweeps on the coarsest level (CycleNumSweeps, k = 3)",
        default: None,
    },
    spec(
        "RelaxWt",
        real_pos(2.0),
        "relaxation weight of weighted Jacobi and SOR, in (0, 2] (1)",
    ),
    spec(
        "OuterWt",
        real_pos(2.0),
        "outer weight of hybrid SOR, in (0, 2] (1)",
    ),
    spec(
        "MaxCoarseSize",
        int(1, 1 << 30),
        "largest coarsest level (9)",
    ),
    spec(
        "MinCoarseSize",
        int(0, 1 << 30),
        "smallest coarsest level (1)",
    ),
    spec(
        "MaxRowSum",
        real_pos(1.0),
        "row-sum threshold of the strength of dependence, in (0, 1] (0.9)",
    ),
    spec(
        "MeasureType",
        int(0, 1),
        "0 local, 1 global measures (for RS and Falgout coarsening)",
    ),
    spec(
        "NumPaths",
        int(1, 100),
        "paths of aggressive coarsening (1)",
    ),
    spec(
        "AggInterpType",
        int(1, 8),
        "interpolation on aggressive levels: 1 2-stage extended+i, 2 2-stage std, 4 multipass, ...",
    ),
    spec(
        "AggPMaxElmts",
        int(0, 1000),
        "most entries per row of interpolation on aggressive levels (0)",
    ),
    spec(
        "AggP12MaxElmts",
        int(0, 1000),
        "most entries per row of the two stages' interpolations (0)",
    ),
    spec(
        "AggTruncFactor",
        real(0.0, 1.0),
        "truncation factor on aggressive levels (0)",
    ),
    spec(
        "AggP12TruncFactor",
        real(0.0, 1.0),
        "truncation factor of the two stages (0)",
    ),
    spec(
        "SmoothType",
        one_of(SMOOTH_TYPES),
        "complex smoother on the first levels: 4 FSAI, 5 ILU, 6 Schwarz, 7 Pilut, 8 ParaSails, 9 Euclid",
    ),
    spec(
        "SmoothNumLevels",
        int(0, MAX_LEVELS),
        "levels that use SmoothType (0)",
    ),
    spec(
        "SmoothNumSweeps",
        int(1, MAX_SWEEPS),
        "sweeps of SmoothType (1)",
    ),
    spec(
        "ChebyOrder",
        int(1, 4),
        "order of the Chebyshev smoother (RelaxType 16), 1..=4 (2)",
    ),
    spec(
        "ChebyFraction",
        real_pos(1.0),
        "fraction of the spectrum the Chebyshev smoother damps (0.3)",
    ),
    spec(
        "KeepTranspose",
        int(0, 1),
        "keep the transposes of interpolation (faster cycles, more memory)",
    ),
    spec(
        "Nodal",
        one_of(NODAL),
        "nodal coarsening of a system: 0 off, 1 Frobenius, 2 sum abs, 3 largest, 4 row sum, 6 sum",
    ),
    spec(
        "NodalDiag",
        int(0, 2),
        "diagonal of the nodal strength matrix: 0, 1 (negative sum) or 2 (negative diagonal)",
    ),
    spec(
        "InterpVecVariant",
        int(0, 3),
        "interpolation fitted to the near-null-space vectors: 1 GM-1, 2 GM-2, 3 LN (0: not fitted)",
    ),
    spec(
        "InterpVecQMax",
        int(0, 1000),
        "most entries per row of each Q (0: no limit)",
    ),
    spec(
        "InterpVecAbsQTrunc",
        real(0.0, 1.0),
        "absolute truncation of Q (0)",
    ),
    spec(
        "SmoothInterpVectors",
        int(0, 1),
        "smooth the near-null-space vectors on each level",
    ),
    spec(
        "InterpRefine",
        int(0, 10),
        "steps of iterative weight refinement of interpolation",
    ),
    Spec {
        name: "DofOrdering",
        kind: int(0, 1),
        setter: Setter::Parlops,
        doc: "parlops': order of a system's unknowns on each rank: 0 node by node (interleaved), 1 function by function (blocked)",
        default: None,
    },
];

/// An option of a solver configured by parlops' own code (AMS, ADS: hypre sets their options in
/// groups), with the default parlops applies (MFEM's).
const fn aux(name: &'static str, kind: Kind, default: Option<Value>, doc: &'static str) -> Spec {
    Spec {
        name,
        kind,
        setter: Setter::Parlops,
        doc,
        default,
    }
}
const fn i(v: i64) -> Option<Value> {
    Some(Value::Int(v))
}
const fn r(v: f64) -> Option<Value> {
    Some(Value::Real(v))
}

/// AMS's and ADS's cycle types.
pub const AUX_CYCLE_TYPES: &[i64] = &[1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14];
/// AMS's and ADS's smoothers: 1 l1-scaled Jacobi, 2 l1-scaled symmetric Gauss-Seidel, 3 Kaczmarz,
/// 4 truncated l1-scaled symmetric GS.
pub const AUX_RELAX_TYPES: &[i64] = &[1, 2, 3, 4];

/// The options of an AMG inside AMS or ADS (prefix `Alpha`, `Beta`, `AMS` or empty), MFEM's
/// defaults.
macro_rules! aux_amg {
    ($p:literal, $what:literal) => {
        [
            aux(
                concat!($p, "CoarsenType"),
                one_of(COARSEN_TYPES),
                i(10),
                concat!("coarsening of ", $what, " (HMIS)"),
            ),
            aux(
                concat!($p, "AggLevels"),
                int(0, MAX_LEVELS),
                i(1),
                concat!("aggressive coarsening levels of ", $what),
            ),
            aux(
                concat!($p, "RelaxType"),
                one_of(CYCLE_RELAX_TYPES),
                i(8),
                concat!(
                    "smoother of ",
                    $what,
                    " (l1-GS; not 15-17, which hypre crashes on there)"
                ),
            ),
            aux(
                concat!($p, "StrongThreshold"),
                real(0.0, 1.0),
                r(0.25),
                concat!("strength threshold of ", $what),
            ),
            aux(
                concat!($p, "InterpType"),
                one_of(INTERP_TYPES),
                i(6),
                concat!("interpolation of ", $what, " (extended+i)"),
            ),
            aux(
                concat!($p, "PMaxElmts"),
                int(0, 1000),
                i(4),
                concat!("most entries per row of interpolation in ", $what),
            ),
        ]
    };
}

const AMS_HEAD: [Spec; 5] = [
    aux(
        "CycleType",
        one_of(AUX_CYCLE_TYPES),
        i(13),
        "AMS's cycle: 1-8 multiplicative/additive, 11-14 with the vector Poisson blocks split (13)",
    ),
    aux(
        "RelaxType",
        one_of(AUX_RELAX_TYPES),
        i(2),
        "smoother: 1 l1-Jacobi, 2 l1-symmetric GS, 3 Kaczmarz, 4 truncated l1-GS (2)",
    ),
    aux(
        "RelaxTimes",
        int(1, MAX_SWEEPS),
        i(1),
        "smoothing sweeps (1)",
    ),
    aux("RelaxWeight", real_pos(2.0), r(1.0), "smoothing weight (1)"),
    aux("Omega", real_pos(2.0), r(1.0), "SSOR's omega (1)"),
];
const AMS_ALPHA: [Spec; 6] = aux_amg!("Alpha", "the AMG on the vector nodal space");
const AMS_BETA: [Spec; 6] = aux_amg!("Beta", "the AMG on the gradient space");
const AMS_TAIL: [Spec; 4] = [
    aux(
        "AlphaCoarseRelaxType",
        one_of(COARSE_RELAX_TYPES),
        None,
        "coarsest-level solver of the alpha AMG (hypre's)",
    ),
    aux(
        "BetaCoarseRelaxType",
        one_of(COARSE_RELAX_TYPES),
        None,
        "coarsest-level solver of the beta AMG (hypre's)",
    ),
    aux(
        "PrintLevel",
        int(0, MAX_PRINT_LEVEL),
        i(0),
        "hypre's printing (0)",
    ),
    aux(
        "BetaPoissonZero",
        int(0, 1),
        i(0),
        "parlops': 1 when the problem has no mass term (beta = 0, magnetostatics): AMS then skips the gradient space",
    ),
];

const fn cat<const A: usize, const B: usize, const C: usize, const D: usize, const N: usize>(
    a: [Spec; A],
    b: [Spec; B],
    c: [Spec; C],
    d: [Spec; D],
) -> [Spec; N] {
    let mut out = [a[0]; N];
    let mut k = 0;
    let mut j = 0;
    while j < A {
        out[k] = a[j];
        k += 1;
        j += 1;
    }
    j = 0;
    while j < B {
        out[k] = b[j];
        k += 1;
        j += 1;
    }
    j = 0;
    while j < C {
        out[k] = c[j];
        k += 1;
        j += 1;
    }
    j = 0;
    while j < D {
        out[k] = d[j];
        k += 1;
        j += 1;
    }
    out
}

/// AMS's options (hypre's names, grouped as hypre's setters take them), MFEM's `HypreAMS` defaults.
pub const AMS: [Spec; 21] = cat(AMS_HEAD, AMS_ALPHA, AMS_BETA, AMS_TAIL);

const ADS_HEAD: [Spec; 6] = [
    aux(
        "CycleType",
        one_of(AUX_CYCLE_TYPES),
        i(11),
        "ADS's cycle (11)",
    ),
    aux(
        "RelaxType",
        one_of(AUX_RELAX_TYPES),
        i(2),
        "smoother: 1 l1-Jacobi, 2 l1-symmetric GS, 3 Kaczmarz, 4 truncated l1-GS (2)",
    ),
    aux(
        "RelaxTimes",
        int(1, MAX_SWEEPS),
        i(1),
        "smoothing sweeps (1)",
    ),
    aux("RelaxWeight", real_pos(2.0), r(1.0), "smoothing weight (1)"),
    aux("Omega", real_pos(2.0), r(1.0), "SSOR's omega (1)"),
    aux(
        "AMSCycleType",
        one_of(AUX_CYCLE_TYPES),
        i(14),
        "cycle of the AMS inside ADS (14)",
    ),
];
const ADS_AMS: [Spec; 6] = aux_amg!("AMS", "the AMS inside ADS");
const ADS_AMG: [Spec; 6] = aux_amg!("AMG", "the AMG on the vector nodal space");
const ADS_TAIL: [Spec; 1] = [aux(
    "PrintLevel",
    int(0, MAX_PRINT_LEVEL),
    i(0),
    "hypre's printing (0)",
)];

/// ADS's options, MFEM's `HypreADS` defaults.
pub const ADS: [Spec; 19] = cat(ADS_HEAD, ADS_AMS, ADS_AMG, ADS_TAIL);
