//! hypre's options by name: every option parlops hands to BoomerAMG, with its type and the values
//! accepted, in one table ([`BOOMERAMG`]). A set of options ([`HypreOptions`]) is built by name,
//! each value checked when it is set (an unknown name, a value of the wrong type or outside the
//! accepted values is refused there, naming the option), and applied at set-up through hypre's
//! own setter of that name (`HYPRE_BoomerAMGSet<Name>`, looked up in the loaded hypre).
//!
//! Names are hypre's (the part after `HYPRE_BoomerAMGSet`); they are matched ignoring case and
//! underscores, so `PMaxElmts`, `p_max_elmts` and `pmaxelmts` are one option. Why a table and not
//! a struct: a field added to a C struct breaks every caller compiled against the old header; a
//! name added to this table breaks nothing.

use crate::error::Result;

pub use super::tables::*;

/// An option's type and accepted values.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// An integer in `lo..=hi`, and (when given) one of `list`.
    Int {
        lo: i64,
        hi: i64,
        list: Option<&'static [i64]>,
    },
    /// A finite real in `[lo, hi]` (or `(lo, hi]` when `open_lo`).
    Real { lo: f64, hi: f64, open_lo: bool },
}

/// How an option reaches hypre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setter {
    /// `HYPRE_BoomerAMGSet<name>(solver, value)`.
    Plain,
    /// `HYPRE_BoomerAMGSet<name>(solver, value, k)`: one part of a V-cycle (1 down, 2 up,
    /// 3 coarsest level).
    Cycle(&'static str, i32),
    /// parlops' own (not a hypre setter).
    Parlops,
}

/// One option.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub name: &'static str,
    pub kind: Kind,
    pub setter: Setter,
    pub doc: &'static str,
    /// The value parlops sets when the caller does not (None: hypre's own default, not set).
    pub default: Option<Value>,
}

/// A value set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
}

/// A name as matched: lower case, without '_' and '-'.
fn key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Options of one hypre solver, set by name and checked as they are set.
#[derive(Clone, Debug)]
pub struct HypreOptions {
    table: &'static [Spec],
    solver: &'static str,
    vals: Vec<Option<Value>>,
}

impl PartialEq for HypreOptions {
    fn eq(&self, o: &Self) -> bool {
        self.solver == o.solver && self.vals == o.vals
    }
}

impl HypreOptions {
    /// Which solver these options are for ("BoomerAMG").
    pub fn solver(&self) -> &'static str {
        self.solver
    }

    /// No option set (hypre's defaults) for BoomerAMG.
    pub fn boomeramg() -> Self {
        HypreOptions {
            table: BOOMERAMG,
            solver: "BoomerAMG",
            vals: vec![None; BOOMERAMG.len()],
        }
    }

    /// No option set (MFEM's defaults) for AMS.
    pub fn ams() -> Self {
        HypreOptions {
            table: &AMS,
            solver: "AMS",
            vals: vec![None; AMS.len()],
        }
    }

    /// No option set (MFEM's defaults) for ADS.
    pub fn ads() -> Self {
        HypreOptions {
            table: &ADS,
            solver: "ADS",
            vals: vec![None; ADS.len()],
        }
    }

    /// The value of `name` (a name of the table): the one set, or the table's default.
    pub fn value(&self, name: &str) -> Option<Value> {
        let i = self.table.iter().position(|s| s.name == name)?;
        self.vals[i].or(self.table[i].default)
    }

    /// An integer option's value (set or default), or `fallback`.
    pub fn int_value(&self, name: &str, fallback: i64) -> i64 {
        match self.value(name) {
            Some(Value::Int(v)) => v,
            _ => fallback,
        }
    }

    /// A real option's value (set or default), or `fallback`.
    pub fn real_value(&self, name: &str, fallback: f64) -> f64 {
        match self.value(name) {
            Some(Value::Real(v)) => v,
            _ => fallback,
        }
    }

    /// The table of options this set takes.
    pub fn table(&self) -> &'static [Spec] {
        self.table
    }

    /// The option of the table called `name` (matched as [`HypreOptions::set_int`] matches).
    pub fn spec(&self, name: &str) -> Option<&'static Spec> {
        let k = key(name);
        self.table.iter().find(|s| key(s.name) == k)
    }

    fn find(&self, name: &str) -> Result<usize> {
        let k = key(name);
        if let Some(i) = self.table.iter().position(|s| key(s.name) == k) {
            return Ok(i);
        }
        // near names: sharing a prefix of 4 letters, or containing one another
        let near: Vec<&str> = self
            .table
            .iter()
            .filter(|s| {
                let sk = key(s.name);
                (k.len() >= 4 && sk.starts_with(&k[..4.min(k.len())]))
                    || (!k.is_empty() && (sk.contains(&k) || k.contains(&sk)))
            })
            .map(|s| s.name)
            .collect();
        crate::bail!(
            InvalidArgument,
            "argument 'name' is \"{name}\": {} has no such option{}; its options are listed in docs/preconditioners.md (parlops_hypre_options_describe lists them too)",
            self.solver,
            if near.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", near.join(", "))
            }
        )
    }

    /// Set an integer option.
    pub fn set_int(&mut self, name: &str, v: i64) -> Result<()> {
        let i = self.find(name)?;
        let s = &self.table[i];
        match s.kind {
            Kind::Int { lo, hi, list } => {
                if let Some(list) = list {
                    if !list.contains(&v) {
                        crate::bail!(
                            InvalidArgument,
                            "{} option {} is {v}; hypre's values are {list:?}",
                            self.solver,
                            s.name
                        );
                    }
                } else if !(lo..=hi).contains(&v) {
                    crate::bail!(
                        InvalidArgument,
                        "{} option {} is {v}; it must be in {lo}..={hi}",
                        self.solver,
                        s.name
                    );
                }
                self.vals[i] = Some(Value::Int(v));
                Ok(())
            }
            Kind::Real { .. } => crate::bail!(
                InvalidArgument,
                "{} option {} is a real number; set it with parlops_hypre_options_set_real (was given the integer {v})",
                self.solver,
                s.name
            ),
        }
    }

    /// Set a real option.
    pub fn set_real(&mut self, name: &str, v: f64) -> Result<()> {
        let i = self.find(name)?;
        let s = &self.table[i];
        match s.kind {
            Kind::Real { lo, hi, open_lo } => {
                let ok = v.is_finite() && v <= hi && if open_lo { v > lo } else { v >= lo };
                if !ok {
                    crate::bail!(
                        InvalidArgument,
                        "{} option {} is {v}; it must be in {}{lo}, {hi}]",
                        self.solver,
                        s.name,
                        if open_lo { "(" } else { "[" }
                    );
                }
                self.vals[i] = Some(Value::Real(v));
                Ok(())
            }
            Kind::Int { .. } => crate::bail!(
                InvalidArgument,
                "{} option {} is an integer; set it with parlops_hypre_options_set_int (was given the real {v})",
                self.solver,
                s.name
            ),
        }
    }

    /// The value set for `name` (a name of the table; `None` when not set).
    pub fn get(&self, name: &str) -> Option<Value> {
        let i = self.table.iter().position(|s| s.name == name)?;
        self.vals[i]
    }

    /// An integer option's value, or `default` when not set.
    pub fn int_or(&self, name: &str, default: i64) -> i64 {
        match self.get(name) {
            Some(Value::Int(v)) => v,
            _ => default,
        }
    }

    /// The options set, in the table's order.
    pub fn set_options(&self) -> impl Iterator<Item = (&'static Spec, Value)> + '_ {
        self.table
            .iter()
            .zip(&self.vals)
            .filter_map(|(s, v)| v.map(|v| (s, v)))
    }

    /// The options set, as `Name = value` (for a view).
    pub fn set_text(&self) -> String {
        let set: Vec<String> = self
            .set_options()
            .map(|(s, v)| match v {
                Value::Int(i) => format!("{} = {i}", s.name),
                Value::Real(r) => format!("{} = {r:e}", s.name),
            })
            .collect();
        if set.is_empty() {
            "none".into()
        } else {
            set.join(", ")
        }
    }

    /// For the agreement across ranks: every option's name and value (a value's bits; unset
    /// options a value no option can take).
    pub fn agreement(&self) -> (Vec<&'static str>, Vec<i64>) {
        let names = self.table.iter().map(|s| s.name).collect();
        let vals = self
            .vals
            .iter()
            .map(|v| match v {
                None => i64::MIN,
                Some(Value::Int(i)) => *i,
                Some(Value::Real(r)) => r.to_bits() as i64,
            })
            .collect();
        (names, vals)
    }

    /// MFEM's `HypreBoomerAMG::SetElasticityOptions` for a `dim`-dimensional problem whose unknowns
    /// are ordered node by node: systems AMG (NumFunctions = dim, no aggressive coarsening,
    /// threshold 0.5), nodal coarsening (Nodal 4, NodalDiag 1), l1-GS on the coarsest level,
    /// interpolation fitted to the rigid-body modes (GM-2, QMax 4, smoothed, refined once). MFEM's
    /// own defaults beneath them (HMIS, extended+i, PMaxElmts 4, l1-GS, one sweep). The rigid-body
    /// modes are passed at creation (parlops_rigid_body_modes computes them).
    pub fn set_elasticity(&mut self, dim: i64) -> Result<()> {
        if !(2..=3).contains(&dim) {
            crate::bail!(
                InvalidArgument,
                "argument 'dim' is {dim}; elasticity options are for dimension 2 or 3"
            );
        }
        // MFEM's defaults (HypreBoomerAMG::SetDefaultOptions, CPU)
        self.set_int("CoarsenType", 10)?;
        self.set_int("InterpType", 6)?;
        self.set_int("PMaxElmts", 4)?;
        self.set_int("RelaxType", 8)?;
        self.set_int("NumSweeps", 1)?;
        self.set_int("MaxLevels", 25)?;
        // SetSystemsOptions(dim)
        self.set_int("NumFunctions", dim)?;
        self.set_int("DofOrdering", 0)?;
        self.set_int("AggNumLevels", 0)?;
        self.set_real("StrongThreshold", 0.5)?;
        // SetElasticityOptions
        self.set_int("Nodal", 4)?;
        self.set_int("NodalDiag", 1)?;
        self.set_int("CycleRelaxTypeCoarse", 8)?;
        self.set_int("InterpVecVariant", 2)?;
        self.set_int("InterpVecQMax", 4)?;
        self.set_int("SmoothInterpVectors", 1)?;
        self.set_int("InterpRefine", 1)?;
        Ok(())
    }

    /// The table as text (name, type and values, what it does), one option a line.
    pub fn describe_table(&self) -> String {
        let mut s = String::new();
        for o in self.table {
            let ty = match o.kind {
                Kind::Int {
                    list: Some(list), ..
                } => format!("int, one of {list:?}"),
                Kind::Int { lo, hi, .. } => format!("int, {lo}..={hi}"),
                Kind::Real { lo, hi, open_lo } => {
                    format!("real, {}{lo}, {hi}]", if open_lo { "(" } else { "[" })
                }
            };
            let default = match o.default {
                Some(Value::Int(v)) => format!(", default {v}"),
                Some(Value::Real(v)) => format!(", default {v}"),
                None => String::new(),
            };
            s.push_str(&format!("{} ({ty}{default}): {}\n", o.name, o.doc));
        }
        s
    }
}

/// The rotations of a rigid body at `coords` (this rank's nodes, `dim` coordinates each, node by
/// node), as MFEM's `HypreBoomerAMG::RecomputeRBMs` projects them: in 2D one mode, (y, -x); in 3D
/// three, in MFEM's order: (y, -x, 0), (0, z, -y), (-z, 0, x). Each mode has `dim` values per node,
/// node by node (interleaved) or function by function (blocked); `out` holds the modes one after
/// the other. The translations are not included (systems AMG keeps them by construction).
pub fn rigid_body_modes(dim: usize, coords: &[f64], blocked: bool, out: &mut [f64]) -> Result<()> {
    if !(2..=3).contains(&dim) {
        crate::bail!(
            InvalidArgument,
            "argument 'dim' is {dim}; rigid-body modes are for dimension 2 or 3"
        );
    }
    let nodes = coords.len() / dim;
    let nmodes = if dim == 2 { 1 } else { 3 };
    let n = nodes * dim;
    if out.len() != nmodes * n {
        crate::bail!(
            Internal,
            "rigid_body_modes: out holds {} values, not {}",
            out.len(),
            nmodes * n
        );
    }
    let at = |node: usize, c: usize| {
        if blocked {
            c * nodes + node
        } else {
            node * dim + c
        }
    };
    for node in 0..nodes {
        let x = &coords[node * dim..node * dim + dim];
        let z = if dim == 3 { x[2] } else { 0.0 };
        // (y, -x, 0)
        let m = &mut out[0..n];
        m[at(node, 0)] = x[1];
        m[at(node, 1)] = -x[0];
        if dim == 3 {
            m[at(node, 2)] = 0.0;
            // (0, z, -y)
            let m = &mut out[n..2 * n];
            m[at(node, 0)] = 0.0;
            m[at(node, 1)] = z;
            m[at(node, 2)] = -x[1];
            // (-z, 0, x)
            let m = &mut out[2 * n..3 * n];
            m[at(node, 0)] = -z;
            m[at(node, 1)] = 0.0;
            m[at(node, 2)] = x[0];
        }
    }
    Ok(())
}

/// A hypre solver's options as a view shows them: those set by name, and what stands for the rest.
pub(crate) fn view_line(o: &HypreOptions) -> String {
    let rest = if o.solver() == "BoomerAMG" {
        "hypre's defaults"
    } else {
        "MFEM's defaults"
    };
    format!(
        "hypre {} options set: {} (others: {rest}; tolerance 0 and one cycle per apply)",
        o.solver(),
        o.set_text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_ignoring_case_and_underscores() {
        let mut o = HypreOptions::boomeramg();
        o.set_int("p_max_elmts", 4).unwrap();
        assert_eq!(o.get("PMaxElmts"), Some(Value::Int(4)));
        o.set_real("STRONG_THRESHOLD", 0.5).unwrap();
        assert_eq!(o.get("StrongThreshold"), Some(Value::Real(0.5)));
    }

    #[test]
    fn bad_names_types_and_values_are_refused_by_name() {
        let mut o = HypreOptions::boomeramg();
        let e = o.set_int("PMaxElements", 4).unwrap_err();
        assert!(
            e.msg.contains("PMaxElements") && e.msg.contains("PMaxElmts"),
            "{}",
            e.msg
        );
        let e = o.set_real("PMaxElmts", 4.0).unwrap_err();
        assert!(e.msg.contains("is an integer"), "{}", e.msg);
        let e = o.set_int("StrongThreshold", 1).unwrap_err();
        assert!(e.msg.contains("real"), "{}", e.msg);
        assert!(o.set_real("StrongThreshold", f64::NAN).is_err());
        assert!(o.set_real("StrongThreshold", 1.5).is_err());
        assert!(o.set_int("CoarsenType", 2).is_err());
        assert!(o.set_int("NumSweeps", 0).is_err());
        assert!(o.set_real("RelaxWt", 0.0).is_err());
        assert_eq!(
            o,
            HypreOptions::boomeramg(),
            "a refused value changes nothing"
        );
    }

    #[test]
    fn every_name_is_unique_and_every_kind_consistent() {
        for table in [BOOMERAMG, &AMS[..], &ADS[..]] {
            check_table(table);
        }
    }

    fn check_table(table: &'static [Spec]) {
        for (i, a) in table.iter().enumerate() {
            for b in &table[i + 1..] {
                assert_ne!(key(a.name), key(b.name));
            }
            if let Kind::Int { lo, hi, list: None } = a.kind {
                assert!(lo <= hi);
            }
            // a default is a value the option accepts
            let mut o = HypreOptions {
                table,
                solver: "test",
                vals: vec![None; table.len()],
            };
            match a.default {
                Some(Value::Int(v)) => o.set_int(a.name, v).unwrap(),
                Some(Value::Real(v)) => o.set_real(a.name, v).unwrap(),
                None => {}
            }
        }
    }

    #[test]
    fn rigid_body_modes_are_rotations() {
        let coords = [1.0, 2.0, 3.0, -1.0, 0.5, 4.0];
        let mut out = vec![0.0; 18];
        rigid_body_modes(3, &coords, false, &mut out).unwrap();
        assert_eq!(&out[0..6], &[2.0, -1.0, 0.0, 0.5, 1.0, 0.0]);
        assert_eq!(&out[6..12], &[0.0, 3.0, -2.0, 0.0, 4.0, -0.5]);
        assert_eq!(&out[12..18], &[-3.0, 0.0, 1.0, -4.0, 0.0, -1.0]);
        let mut b = vec![0.0; 18];
        rigid_body_modes(3, &coords, true, &mut b).unwrap();
        assert_eq!(&b[0..6], &[2.0, 0.5, -1.0, 1.0, 0.0, 0.0]);
    }
}
