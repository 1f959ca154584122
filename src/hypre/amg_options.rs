//! BoomerAMG's options as the C struct `parlops_amg_options` holds them (the first interface,
//! kept for those who use it): checked with messages naming the struct's fields, and turned into
//! options by hypre's names ([`super::options::HypreOptions`]), which the set-up applies.

use super::options::{
    COARSEN_TYPES, HypreOptions, INTERP_TYPES, MAX_FUNCTIONS, MAX_LEVELS, MAX_PRINT_LEVEL,
    MAX_SWEEPS, RELAX_TYPES,
};
use crate::error::Result;

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

impl AmgOptions {
    /// Every option within what hypre takes (see [`COARSEN_TYPES`] and the bounds beside it);
    /// an error names the option, its value and what is accepted.
    pub fn check_ranges(&self) -> Result<()> {
        let i64_of = |v: Option<i32>| v.map(i64::from);
        if let Some(t) = self.strong_threshold
            && !(0.0..=1.0).contains(&t)
        {
            crate::bail!(
                InvalidArgument,
                "options.strong_threshold is {t}; it must be in [0, 1]"
            );
        }
        for (v, name, list) in [
            (i64_of(self.coarsen_type), "coarsen_type", COARSEN_TYPES),
            (i64_of(self.interp_type), "interp_type", INTERP_TYPES),
            (i64_of(self.relax_type), "relax_type", RELAX_TYPES),
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
            (i64_of(self.num_sweeps), "num_sweeps", 1, MAX_SWEEPS),
            (i64_of(self.max_levels), "max_levels", 1, MAX_LEVELS),
            (i64_of(self.agg_num_levels), "agg_num_levels", 0, MAX_LEVELS),
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
        if !(1..=MAX_FUNCTIONS).contains(&i64::from(self.num_functions)) {
            crate::bail!(
                InvalidArgument,
                "options.num_functions is {}; it must be in 1..={MAX_FUNCTIONS}",
                self.num_functions
            );
        }
        if !(0..=MAX_PRINT_LEVEL).contains(&i64::from(self.print_level)) {
            crate::bail!(
                InvalidArgument,
                "options.print_level is {}; it must be in 0..={MAX_PRINT_LEVEL}",
                self.print_level
            );
        }
        Ok(())
    }

    /// The same options by hypre's names (checked first by [`AmgOptions::check_ranges`], so that
    /// an error names the struct's field).
    pub fn to_hypre(&self) -> Result<HypreOptions> {
        self.check_ranges()?;
        let mut h = HypreOptions::boomeramg();
        if let Some(t) = self.strong_threshold {
            h.set_real("StrongThreshold", t)?;
        }
        for (v, name) in [
            (self.coarsen_type, "CoarsenType"),
            (self.interp_type, "InterpType"),
            (self.relax_type, "RelaxType"),
            (self.num_sweeps, "NumSweeps"),
            (self.max_levels, "MaxLevels"),
            (self.agg_num_levels, "AggNumLevels"),
        ] {
            if let Some(v) = v {
                h.set_int(name, v.into())?;
            }
        }
        if self.num_functions != 1 {
            h.set_int("NumFunctions", self.num_functions.into())?;
        }
        if self.dof_ordering == DofOrdering::Blocked {
            h.set_int("DofOrdering", 1)?;
        }
        if self.print_level != 0 {
            h.set_int("PrintLevel", self.print_level.into())?;
        }
        Ok(h)
    }
}
