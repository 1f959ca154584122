//! The solver's enumerations, one table each: the methods (code, C constant, name, how to run it,
//! what it supports), the reasons a solve stops, the thresholds of ISTA/FISTA and the convergence
//! references. The C constants (`src/capi/solver.rs`) are pinned against these tables by
//! `src/capi/pins.rs`.
//!
//! Adding a method: its file `src/solver/<name>.rs` with `pub(crate) fn solve` (and `mod <name>;`
//! in `src/solver/mod.rs`), one line in the table below, one `PARLOPS_METHOD_*` constant.

use super::{Ctx, Info};
use crate::codes::code_table;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::DistVector;

/// What a method supports beyond a square operator with the unpreconditioned residual norm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trait {
    /// Works on rectangular operators (min ||b - A x||); without it the operator must be square.
    LeastSquares,
    /// Can test the natural norm sqrt(r^H M r) (PARLOPS_NORM_TYPE_NATURAL).
    NaturalNorm,
    /// Runs on the host only: a device solve runs on host copies of b and x.
    HostOnly,
    /// Can precondition from the left (PARLOPS_PC_LEFT) as well as from the right.
    LeftPc,
    /// Builds an Arnoldi basis (PARLOPS_ORTHOG_* choose how it is orthogonalised).
    Arnoldi,
    /// Keeps PARLOPS_SUM_REPRODUCIBLE: every sum it reduces through the binned dots, every local
    /// step element by element.
    Reproducible,
}

/// `methods! { (ctx, b, x) => Variant = code, C_NAME, "name", call, [traits]; ... }`: the [`Method`]
/// table, through [`code_table!`], plus the dispatch `Method::run` and the trait queries.
macro_rules! methods {
    (($ctx:ident, $b:ident, $x:ident) =>
        $( $(#[$vmeta:meta])* $v:ident = $code:literal, $c:ident, $words:literal, $call:expr, [$($t:ident),*]; )+
    ) => {
        code_table! {
            /// Solution method.
            pub enum Method {
                $( $(#[$vmeta])* $v = $code, $c, $words; )+
            }
        }

        impl Method {
            fn traits(self) -> &'static [Trait] {
                match self {
                    $( Method::$v => &[$(Trait::$t),*], )+
                }
            }

            /// Run this method (the driver, [`super::Solver::solve`], has checked the arguments).
            pub(crate) fn run<T: Scalar>(
                self,
                $ctx: &mut Ctx<T>,
                $b: &DistVector<T>,
                $x: &mut DistVector<T>,
            ) -> Result<Info> {
                match self {
                    $( Method::$v => $call, )+
                }
            }
        }
    };
}

methods! { (ctx, b, x) =>
    Cg = 0, PARLOPS_METHOD_CG, "CG", super::square(ctx, b, x, super::cg::WORK, super::cg::run), [NaturalNorm, Reproducible];
    CgSingleReduction = 1, PARLOPS_METHOD_CG_SINGLE_REDUCTION, "CG (single reduction)",
        super::square(ctx, b, x, super::cg_sr::WORK, super::cg_sr::run), [NaturalNorm];
    CgPipelined = 2, PARLOPS_METHOD_CG_PIPELINED, "CG (pipelined)",
        super::square(ctx, b, x, super::cg_pipe::WORK, super::cg_pipe::run), [NaturalNorm, Reproducible];
    Cgls = 3, PARLOPS_METHOD_CGLS, "CGLS", super::cgls::solve(ctx, b, x), [LeastSquares, Reproducible];
    Lsqr = 4, PARLOPS_METHOD_LSQR, "LSQR", super::lsqr::solve(ctx, b, x), [LeastSquares, Reproducible];
    Gmres = 5, PARLOPS_METHOD_GMRES, "GMRES", super::gmres::solve(ctx, b, x, false), [LeftPc, Arnoldi, Reproducible];
    Fgmres = 6, PARLOPS_METHOD_FGMRES, "FGMRES", super::gmres::solve(ctx, b, x, true), [Arnoldi, Reproducible];
    Bicgstab = 7, PARLOPS_METHOD_BICGSTAB, "BiCGStab", super::square(ctx, b, x, super::bicgstab::WORK, super::bicgstab::run), [Reproducible];
    Minres = 8, PARLOPS_METHOD_MINRES, "MINRES", super::square(ctx, b, x, super::minres::WORK, super::minres::run), [Reproducible];
    Ista = 9, PARLOPS_METHOD_ISTA, "ISTA", super::ista::solve(ctx, b, x, false),
        [LeastSquares, HostOnly];
    Fista = 10, PARLOPS_METHOD_FISTA, "FISTA", super::ista::solve(ctx, b, x, true),
        [LeastSquares, HostOnly];
    Richardson = 11, PARLOPS_METHOD_RICHARDSON, "Richardson", super::square(ctx, b, x, super::richardson::WORK, super::richardson::run), [Reproducible];
    Gcrodr = 12, PARLOPS_METHOD_GCRODR, "GCRO-DR", super::gcrodr::solve(ctx, b, x), [];
    CgDeflated = 13, PARLOPS_METHOD_CG_DEFLATED, "deflated CG", super::cg_defl::solve(ctx, b, x), [];
}

impl Method {
    /// Least-squares methods work on rectangular operators; the others need a square one.
    pub fn least_squares(self) -> bool {
        self.traits().contains(&Trait::LeastSquares)
    }
    /// Can this method test the natural norm (PARLOPS_NORM_TYPE_NATURAL)?
    pub fn natural_norm(self) -> bool {
        self.traits().contains(&Trait::NaturalNorm)
    }
    /// Can this method precondition from the left (PARLOPS_PC_LEFT)?
    pub fn left_pc(self) -> bool {
        self.traits().contains(&Trait::LeftPc)
    }
    /// Does this method build an Arnoldi basis (GMRES, FGMRES)?
    pub fn arnoldi(self) -> bool {
        self.traits().contains(&Trait::Arnoldi)
    }
    /// Does this method keep PARLOPS_SUM_REPRODUCIBLE?
    pub fn reproducible(self) -> bool {
        self.traits().contains(&Trait::Reproducible)
    }
    /// Does this method run on the host only (a device solve goes through host copies)?
    pub fn host_only(self) -> bool {
        self.traits().contains(&Trait::HostOnly)
    }
}

code_table! {
    /// Why a solve stopped (PETSc's KSPConvergedReason values where they exist): > 0 converged,
    /// < 0 diverged.
    pub enum Reason {
        Iterating = 0, PARLOPS_ITERATING;
        ConvergedRtol = 2, PARLOPS_CONVERGED_RTOL;
        ConvergedAtol = 3, PARLOPS_CONVERGED_ATOL;
        ConvergedUser = 4, PARLOPS_CONVERGED_USER;
        ConvergedNegCurve = 5, PARLOPS_CONVERGED_NEG_CURVE;
        ConvergedStepLength = 6, PARLOPS_CONVERGED_STEP_LENGTH;
        ConvergedCostInitial = 10, PARLOPS_CONVERGED_COST_INITIAL;
        ConvergedCostData = 11, PARLOPS_CONVERGED_COST_DATA;
        DivergedMaxIter = -3, PARLOPS_DIVERGED_MAX_ITER;
        DivergedDtol = -4, PARLOPS_DIVERGED_DTOL;
        DivergedBreakdown = -5, PARLOPS_DIVERGED_BREAKDOWN;
        DivergedIndefinite = -8, PARLOPS_DIVERGED_INDEFINITE_MATRIX;
        DivergedNan = -9, PARLOPS_DIVERGED_NAN;
        DivergedUser = -10, PARLOPS_DIVERGED_USER;
    }
}

impl Reason {
    pub fn converged(self) -> bool {
        self.code() > 0
    }
}

code_table! {
    /// Thresholding of ISTA and FISTA (PyLops' soft, hard and half).
    pub enum Threshold {
        Soft = 0, PARLOPS_THRESHOLD_SOFT;
        Hard = 1, PARLOPS_THRESHOLD_HARD;
        Half = 2, PARLOPS_THRESHOLD_HALF;
    }
}

code_table! {
    /// What the residual norm is compared with in the stopping rule ||r|| <= max(rtol * ref, atol).
    pub enum Reference {
        /// ref = ||b|| in the norm the method tests (PETSc's default).
        Rhs = 0, PARLOPS_REFERENCE_RHS;
        /// ref = the residual norm at iteration 0, in the norm the method tests (PETSc's
        /// KSPConvergedDefaultSetUIRNorm; what MFEM's iterative solvers do).
        InitialResidual = 1, PARLOPS_REFERENCE_INITIAL_RESIDUAL;
    }
}

code_table! {
    /// Which side a preconditioner M is applied on.
    pub enum PcSide {
        /// The method's own side (default): right for GMRES, FGMRES and BiCGStab (they test the
        /// true ||r||), M's inner product for the CG family and MINRES, ||M r|| for Richardson.
        Default = 0, PARLOPS_PC_SIDE_DEFAULT;
        /// GMRES on M A x = M b, testing ||M (b - A x)|| (PETSc's PC_LEFT; what MFEM's GMRESSolver does).
        Left = 1, PARLOPS_PC_LEFT;
    }
}

code_table! {
    /// How GMRES and FGMRES orthogonalise a new Arnoldi vector against the basis.
    pub enum Orthog {
        /// Classical Gram-Schmidt: all projections in one reduction (default).
        Classical = 0, PARLOPS_ORTHOG_CLASSICAL;
        /// Modified Gram-Schmidt: one projection and one reduction at a time (PETSc's
        /// KSPGMRESModifiedGramSchmidtOrthogonalization; what MFEM's GMRES and FGMRES do).
        Modified = 1, PARLOPS_ORTHOG_MODIFIED;
    }
}

code_table! {
    /// How a solver's local sums (the dot products of its vectors) are taken.
    pub enum SumOrder {
        /// Eight accumulators over consecutive entries, added in a fixed order (default): fast, and
        /// the same bits for the same partition on every run.
        Blocked = 0, PARLOPS_SUM_BLOCKED;
        /// One accumulator in index order: the rounding of sequential dot products (MFEM's; what
        /// parlops::mfem sets to match MFEM's solvers bit for bit).
        Sequential = 1, PARLOPS_SUM_SEQUENTIAL;
        /// Binned sums merged exactly over the ranks, and sparse rows summed in global column
        /// order: iterates whose bits do not depend on the number of ranks or the partition.
        Reproducible = 2, PARLOPS_SUM_REPRODUCIBLE;
    }
}

impl SumOrder {
    /// This thread's sums in this order until the guard drops.
    pub(crate) fn enter(self) -> crate::vector::ops::SumOrder {
        match self {
            SumOrder::Blocked => crate::vector::ops::SumOrder::set(false),
            SumOrder::Sequential => crate::vector::ops::SumOrder::set(true),
            SumOrder::Reproducible => crate::vector::ops::SumOrder::reproducible(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn method_and_reason_codes() {
        // the methods are numbered 0, 1, 2, ... in table order (a new line takes the next code)
        for (i, &m) in Method::ALL.iter().enumerate() {
            assert_eq!((m.code(), Method::from_code(m.code())), (i as i32, Some(m)));
        }
        let past = Method::ALL.len() as i32;
        assert!(Method::from_code(past).is_none() && Method::from_code(-1).is_none());
        assert_eq!(Method::Bicgstab.name(), "BiCGStab");
        assert_eq!(Method::Fista.c_name(), "PARLOPS_METHOD_FISTA");
        assert!(Method::choices().starts_with("PARLOPS_METHOD_CG .. PARLOPS_METHOD_"));
        let ls: Vec<Method> = Method::ALL
            .iter()
            .copied()
            .filter(|m| m.least_squares())
            .collect();
        assert_eq!(
            ls,
            [Method::Cgls, Method::Lsqr, Method::Ista, Method::Fista]
        );
        assert_eq!(Reason::DivergedIndefinite.code(), -8);
        assert_eq!(Reason::DivergedNan.name(), "PARLOPS_DIVERGED_NAN");
        assert!(Reason::ConvergedAtol.converged() && !Reason::DivergedNan.converged());
    }
}
