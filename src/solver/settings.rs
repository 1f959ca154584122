//! The checked settings of a run-time typed solver: each setter checks its values (and that the
//! method takes the setting) and changes nothing when it refuses. The C API's setters and the
//! run-time options ([`super::options`]) both go through these.

use super::any::AnySolver;
use super::{Method, Orthog, PcSide};
use crate::error::Result;

/// What a solve prints on rank 0 (asked by the run-time options): the residual norm at every
/// iteration (`-ksp_monitor`), why it stopped (`-ksp_converged_reason`), the view (`-ksp_view`),
/// where its time went (`-log_view`, or PARLOPS_LOG=1 for every solver).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Printing {
    pub monitor: bool,
    pub reason: bool,
    pub view: bool,
    pub log: bool,
}

impl AnySolver {
    /// Run `method` from the next solve on. A square method with a rectangular operator set is
    /// refused, and so are settings only the old method takes (left preconditioning, the natural
    /// norm, a trust region): the caller resets those first.
    pub fn set_method(&mut self, method: Method) -> Result<()> {
        if let Some(a) = self.operator()
            && !method.least_squares()
            && !a.rows().compatible(a.cols())
        {
            crate::bail!(
                SizeMismatch,
                "{} needs a square operator with equal row and column layouts; A is {}x{}",
                method.name(),
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        if self.params.pc_side == PcSide::Left && !method.left_pc() {
            crate::bail!(
                NotSupported,
                "{} takes no left preconditioning (set for {})",
                method.name(),
                self.method().name()
            );
        }
        if self.params.natural_norm && !method.natural_norm() {
            crate::bail!(
                NotSupported,
                "{} does not test the natural norm (set for {})",
                method.name(),
                self.method().name()
            );
        }
        if self.params.trust_radius > 0.0 && method != Method::Cg {
            crate::bail!(
                NotSupported,
                "a trust region is for CG; {} was asked",
                method.name()
            );
        }
        self.replace_method(method);
        Ok(())
    }

    /// Stop when ||r|| <= max(rtol ||b||, atol); diverged past dtol ||b|| or after max_iter.
    pub fn set_tolerances(&mut self, rtol: f64, atol: f64, dtol: f64, max_iter: i64) -> Result<()> {
        if !(rtol >= 0.0 && atol >= 0.0 && dtol > 0.0 && rtol.is_finite() && atol.is_finite())
            || max_iter < 0
        {
            crate::bail!(
                InvalidArgument,
                "tolerances must be rtol >= 0, atol >= 0 (finite), dtol > 0 and max_iter >= 0; got rtol {rtol}, atol {atol}, dtol {dtol}, max_iter {max_iter}"
            );
        }
        let p = &mut self.params;
        (p.rtol, p.atol, p.dtol, p.max_iter) = (rtol, atol, dtol, max_iter);
        Ok(())
    }

    /// Test sqrt(r^H M r) (`natural`) or ||r||.
    pub fn set_natural_norm(&mut self, natural: bool) -> Result<()> {
        if natural && !self.method().natural_norm() {
            crate::bail!(
                NotSupported,
                "the natural norm is for the CG methods; {} tests its own residual norm",
                self.method().name()
            );
        }
        self.params.natural_norm = natural;
        Ok(())
    }

    /// The side the preconditioner is applied on.
    pub fn set_pc_side(&mut self, side: PcSide) -> Result<()> {
        if side == PcSide::Left && !self.method().left_pc() {
            crate::bail!(
                NotSupported,
                "left preconditioning is for GMRES; {} applies the preconditioner its own way",
                self.method().name()
            );
        }
        self.params.pc_side = side;
        Ok(())
    }

    /// How GMRES and FGMRES orthogonalise their basis.
    pub fn set_orthog(&mut self, o: Orthog) -> Result<()> {
        if !self.method().arnoldi() {
            crate::bail!(
                NotSupported,
                "the orthogonalization ({}) is for GMRES and FGMRES; {} builds no Arnoldi basis",
                o.c_name(),
                self.method().name()
            );
        }
        self.params.orthog = o;
        Ok(())
    }

    /// GMRES/FGMRES restart length, 1..=10000.
    pub fn set_restart(&mut self, m: i64) -> Result<()> {
        if !(1..=10_000).contains(&m) {
            crate::bail!(
                InvalidArgument,
                "the restart length is {m}; it must be in 1..=10000"
            );
        }
        self.params.restart = m as usize;
        Ok(())
    }

    /// GCRO-DR and deflated CG: the number k of vectors recycled, 0..=10000 (GCRO-DR: k < the
    /// restart length, checked at the solve); drops the space kept. Other methods: NotSupported.
    pub fn set_recycle(&mut self, k: i64) -> Result<()> {
        if !matches!(self.method(), Method::Gcrodr | Method::CgDeflated) {
            crate::bail!(
                NotSupported,
                "recycling is GCRO-DR's and deflated CG's (PARLOPS_METHOD_GCRODR, PARLOPS_METHOD_CG_DEFLATED); {} keeps no space between solves",
                self.method().name()
            );
        }
        if !(0..=10_000).contains(&k) {
            crate::bail!(
                InvalidArgument,
                "the number of recycled vectors is {k}; it must be in 0..=10000 (and below the restart length)"
            );
        }
        self.params.recycle = Some(k as usize);
        self.drop_recycle();
        Ok(())
    }

    /// CGLS/LSQR damping, finite and >= 0.
    pub fn set_damping(&mut self, damp: f64) -> Result<()> {
        if !(damp >= 0.0 && damp.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "the damping is {damp}; it must be finite and >= 0"
            );
        }
        self.params.damp = damp;
        Ok(())
    }

    /// Richardson's scale omega, finite and > 0.
    pub fn set_richardson_scale(&mut self, scale: f64) -> Result<()> {
        if !(scale > 0.0 && scale.is_finite()) {
            crate::bail!(
                InvalidArgument,
                "the scale is {scale}; it must be finite and > 0"
            );
        }
        self.params.scale = scale;
        Ok(())
    }

    /// The preconditioner reuse policy: set up again after `every` solves (0: never by count) or
    /// when the iterations grow past `growth` times the first solve's (0: off; else >= 1).
    pub fn set_pc_reuse(&mut self, every: i64, growth: f64) -> Result<()> {
        if every < 0 {
            crate::bail!(
                InvalidArgument,
                "'every' is {every}; it must be >= 0 (0: never by count)"
            );
        }
        if !(growth == 0.0 || (growth >= 1.0 && growth.is_finite())) {
            crate::bail!(
                InvalidArgument,
                "'growth' is {growth}; it must be 0 (off) or a finite factor >= 1"
            );
        }
        self.params.pc_reuse_every = every;
        self.params.pc_reuse_growth = growth;
        Ok(())
    }
}
