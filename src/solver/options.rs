//! Run-time options, as PETSc's options database but held by the caller (no global state): a set
//! of `-name value` pairs taken from a string, the environment (`PARLOPS_OPTIONS`) or a program's
//! arguments, applied to a solver by an explicit call with an optional prefix
//! ([`super::options_apply`]). Names are PETSc's where PETSc has the concept (the table [`TABLE`],
//! which `docs/options.md` is generated from); an option no solver used is reported when the set is
//! dropped (PETSc's `-options_left`), with the nearest known name.

use std::sync::{Arc, Mutex};

use crate::comm::Comm;
use crate::error::Result;

/// One option of the table: its name (without '-' and prefix), the values it takes, whether the
/// name is PETSc's, and what it does.
pub struct Spec {
    pub name: &'static str,
    pub values: &'static str,
    pub petsc: bool,
    pub doc: &'static str,
}

const fn spec(name: &'static str, values: &'static str, petsc: bool, doc: &'static str) -> Spec {
    Spec {
        name,
        values,
        petsc,
        doc,
    }
}

/// Every option a solver takes (hypre's BoomerAMG options come on top, as
/// `-pc_hypre_boomeramg_<hypre's name>`: see docs/options.md).
pub const TABLE: &[Spec] = &[
    spec(
        "ksp_type",
        "cg, pipecg, dcg (deflated CG), cgls, lsqr, gmres, fgmres, gcrodr, bcgs (bicgstab), minres, richardson, ista, fista",
        true,
        "the Krylov method",
    ),
    spec(
        "ksp_cg_single_reduction",
        "bool",
        true,
        "CG with one reduction per iteration (with -ksp_type cg)",
    ),
    spec("ksp_rtol", "real >= 0", true, "relative tolerance"),
    spec("ksp_atol", "real >= 0", true, "absolute tolerance"),
    spec("ksp_divtol", "real > 0", true, "divergence tolerance"),
    spec("ksp_max_it", "integer >= 0", true, "most iterations"),
    spec(
        "ksp_gmres_restart",
        "1..10000",
        true,
        "GMRES/FGMRES/GCRO-DR restart length",
    ),
    spec(
        "ksp_gcrodr_recycle",
        "0..10000, below the restart length",
        false,
        "GCRO-DR: the number of vectors recycled (default restart / 3)",
    ),
    spec(
        "ksp_dcg_recycle",
        "0..10000",
        false,
        "deflated CG: the number of vectors recycled (default 8)",
    ),
    spec(
        "ksp_gmres_modifiedgramschmidt",
        "bool",
        true,
        "GMRES/FGMRES: modified Gram-Schmidt",
    ),
    spec(
        "ksp_gmres_classicalgramschmidt",
        "bool",
        true,
        "GMRES/FGMRES: classical Gram-Schmidt (the default)",
    ),
    spec(
        "ksp_pc_side",
        "left, right, default",
        true,
        "left (GMRES) or the method's own side (right for GMRES, FGMRES, BiCGStab)",
    ),
    spec(
        "ksp_norm_type",
        "unpreconditioned, natural",
        true,
        "the residual norm tested (natural: CG methods)",
    ),
    spec(
        "ksp_initial_guess_nonzero",
        "bool",
        true,
        "start from x's content",
    ),
    spec(
        "ksp_richardson_scale",
        "real > 0",
        true,
        "Richardson's scale omega",
    ),
    spec(
        "ksp_damping",
        "real >= 0",
        false,
        "CGLS/LSQR damping (PyLops' damp)",
    ),
    spec(
        "ksp_monitor",
        "bool",
        true,
        "print the residual norm at each iteration (rank 0)",
    ),
    spec(
        "ksp_converged_reason",
        "bool",
        true,
        "print why each solve stopped (rank 0)",
    ),
    spec(
        "ksp_view",
        "bool",
        true,
        "print the solver's view after each solve (rank 0)",
    ),
    spec(
        "log_view",
        "bool",
        true,
        "print where each solve's time went, over the ranks (rank 0)",
    ),
    spec(
        "pc_type",
        "none, jacobi, bjacobi, chebyshev, hypre (amg, boomeramg)",
        true,
        "the preconditioner, built from the solver's operator",
    ),
    spec(
        "pc_hypre_type",
        "boomeramg",
        true,
        "with -pc_type hypre (AMS and ADS need a discrete gradient: make them with the C API)",
    ),
    spec(
        "sub_pc_type",
        "ilu, icc, sor",
        true,
        "block Jacobi's solve on each rank's block (default ilu)",
    ),
    spec(
        "sub_pc_sor_omega",
        "real in (0, 2)",
        true,
        "block Jacobi's SSOR weight (default 1)",
    ),
    spec(
        "pc_chebyshev_degree",
        "1..1000",
        false,
        "Chebyshev's degree (default 3)",
    ),
    spec(
        "pc_chebyshev_eigenvalues",
        "lmin,lmax",
        false,
        "Chebyshev's interval (default: estimated)",
    ),
    spec(
        "pc_reuse_every",
        "integer >= 0",
        false,
        "set the preconditioner up again after this many solves on changed values (default 1)",
    ),
    spec(
        "pc_reuse_growth",
        "0 or real >= 1",
        false,
        "... or when the iterations grow past this factor (default 0: off)",
    ),
];

/// Options about the set itself, taken when inserted.
pub const OWN: &[Spec] = &[spec(
    "options_left",
    "bool",
    true,
    "report options no solver used when the set is destroyed (default true)",
)];

/// PETSc's BoomerAMG option names that are not hypre's (hypre's own names work as they are).
pub const AMG_ALIASES: &[(&str, &str)] = &[
    ("agg_nl", "AggNumLevels"),
    ("agg_num_paths", "NumPaths"),
    ("p_max", "PMaxElmts"),
    ("truncfactor", "TruncFactor"),
    ("numfunctions", "NumFunctions"),
    ("relax_type_all", "RelaxType"),
    ("relax_type_down", "CycleRelaxTypeDown"),
    ("relax_type_up", "CycleRelaxTypeUp"),
    ("relax_type_coarse", "CycleRelaxTypeCoarse"),
    ("grid_sweeps_all", "NumSweeps"),
    ("grid_sweeps_down", "CycleNumSweepsDown"),
    ("grid_sweeps_up", "CycleNumSweepsUp"),
    ("grid_sweeps_coarse", "CycleNumSweepsCoarse"),
    ("relax_weight_all", "RelaxWt"),
    ("outer_relax_weight_all", "OuterWt"),
    ("measure_type", "MeasureType"),
];

/// PETSc's names of hypre's codes, by option (index = code; "" where PETSc names none).
pub const AMG_NAMED: &[(&str, &[&str])] = &[
    (
        "CoarsenType",
        &[
            "CLJP",
            "Ruge-Stueben",
            "",
            "modifiedRuge-Stueben",
            "",
            "",
            "Falgout",
            "",
            "PMIS",
            "",
            "HMIS",
        ],
    ),
    (
        "InterpType",
        &[
            "classical",
            "",
            "",
            "direct",
            "multipass",
            "multipass-wts",
            "ext+i",
            "ext+i-cc",
            "standard",
            "standard-wts",
            "block",
            "block-wtd",
            "FF",
            "FF1",
            "ext",
        ],
    ),
    (
        "RelaxType",
        &[
            "Jacobi",
            "sequential-Gauss-Seidel",
            "seqboundary-Gauss-Seidel",
            "SOR/Jacobi",
            "backward-SOR/Jacobi",
            "",
            "symmetric-SOR/Jacobi",
            "",
            "l1scaled-SOR/Jacobi",
            "Gaussian-elimination",
            "",
            "",
            "",
            "l1-Gauss-Seidel",
            "backward-l1-Gauss-Seidel",
            "CG",
            "Chebyshev",
            "FCF-Jacobi",
            "l1scaled-Jacobi",
        ],
    ),
];

/// One option as set.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    /// Without the leading '-'.
    pub(super) name: String,
    pub(super) value: Option<String>,
    pub(super) source: &'static str,
    pub(super) used: bool,
}

/// A set of run-time options (see the module's documentation).
pub struct Options {
    comm: Arc<Comm>,
    pub(super) entries: Mutex<Vec<Entry>>,
    /// The prefixes the set was applied with (for the nearest names of unused options).
    pub(super) prefixes: Mutex<Vec<String>>,
}

/// The longest option text read (a string, an environment variable, all arguments together).
pub const MAX_TEXT: usize = 1 << 20;

/// Whether `t` names an option: '-' then a letter ("-1e-3" is a value).
fn is_name(t: &str) -> bool {
    let mut c = t.chars();
    c.next() == Some('-') && c.next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Split `text` at white space, keeping what single or double quotes enclose together.
fn tokens(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.get_or_insert_with(String::new).push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            None if c.is_whitespace() => out.extend(cur.take()),
            None => cur.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(q) = quote {
        crate::bail!(InvalidArgument, "the options text has an unclosed {q}");
    }
    out.extend(cur);
    Ok(out)
}

/// A true/false value as PETSc reads one (an option given without a value is true).
pub(super) fn parse_bool(name: &str, v: Option<&str>) -> Result<bool> {
    match v.map(str::to_ascii_lowercase).as_deref() {
        None | Some("1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(_) => crate::bail!(
            InvalidArgument,
            "option -{name} is \"{}\"; it takes true or false (1/0, yes/no, on/off)",
            v.unwrap_or_default()
        ),
    }
}

/// The edit distance between `a` and `b` (for the nearest known name).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Every name an option can have after its prefix (the table, and BoomerAMG's by hypre's names).
fn known_names() -> Vec<String> {
    let mut v: Vec<String> = TABLE.iter().chain(OWN).map(|s| s.name.into()).collect();
    for s in crate::hypre::options::BOOMERAMG {
        v.push(format!("pc_hypre_boomeramg_{}", snake(s.name)));
    }
    for (a, _) in AMG_ALIASES {
        v.push(format!("pc_hypre_boomeramg_{a}"));
    }
    v
}

/// hypre's CamelCase name in PETSc's lower case with underscores.
pub fn snake(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_lowercase());
    }
    s
}

impl Options {
    /// An empty set on `comm` (whose rank 0 reports unused options).
    pub fn new(comm: Arc<Comm>) -> Options {
        Options {
            comm,
            entries: Mutex::new(Vec::new()),
            prefixes: Mutex::new(Vec::new()),
        }
    }

    /// Add the options of `text` ("-ksp_type gmres -ksp_rtol 1e-8 -ksp_monitor"), later ones
    /// replacing earlier ones of the same name. With `skip_words`, words before the first option
    /// and words after an option's value are a program's own arguments and are left alone;
    /// otherwise they are refused. Nothing is added when the text is refused. Local.
    pub fn insert(&self, text: &str, source: &'static str, skip_words: bool) -> Result<()> {
        if text.len() > MAX_TEXT {
            crate::bail!(
                InvalidArgument,
                "the options text ({source}) is {} bytes; at most {MAX_TEXT} are read",
                text.len()
            );
        }
        let toks = tokens(text)?;
        let mut add: Vec<Entry> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if !is_name(t) {
                if !skip_words {
                    crate::bail!(
                        InvalidArgument,
                        "the options text ({source}) has \"{t}\" where an option name (-name) belongs"
                    );
                }
                i += 1;
                continue;
            }
            let name = t.trim_start_matches('-').to_string();
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                crate::bail!(
                    InvalidArgument,
                    "the options text ({source}) has the option name \"{t}\": names are letters, digits and '_'"
                );
            }
            let value = toks.get(i + 1).filter(|v| !is_name(v)).cloned();
            i += 1 + usize::from(value.is_some());
            let used = name == "options_left";
            if used {
                parse_bool(&name, value.as_deref())?;
            }
            add.push(Entry {
                name,
                value,
                source,
                used,
            });
        }
        let mut e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.try_reserve(add.len())
            .map_err(|_| crate::err!(OutOfMemory, "{} options do not fit in memory", add.len()))?;
        for a in add {
            e.retain(|x| x.name != a.name);
            e.push(a);
        }
        Ok(())
    }

    /// Add the options in the environment variable `var` (nothing when it is not set).
    pub fn insert_env(&self, var: &str) -> Result<()> {
        match std::env::var(var) {
            Ok(text) => self.insert(&text, "environment", false),
            Err(std::env::VarError::NotPresent) => Ok(()),
            Err(_) => crate::bail!(
                InvalidArgument,
                "the environment variable {var} is not UTF-8"
            ),
        }
    }

    /// Add the options among a program's arguments (`args[0]`, the program, is skipped).
    pub fn insert_args(&self, args: &[String]) -> Result<()> {
        let text: Vec<String> = args
            .iter()
            .skip(1)
            .map(|a| {
                if a.chars().any(char::is_whitespace) || a.is_empty() {
                    format!("\"{a}\"")
                } else {
                    a.clone()
                }
            })
            .collect();
        self.insert(&text.join(" "), "command line", true)
    }

    /// The communicator whose rank 0 reports.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }

    /// The options no solver used, one line each with the nearest known name ("" when all were).
    pub fn left(&self) -> String {
        let e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let prefixes = self.prefixes.lock().unwrap_or_else(|p| p.into_inner());
        let known = known_names();
        let mut out = String::new();
        for x in e.iter().filter(|x| !x.used) {
            let mut best: Option<(usize, String)> = None;
            for p in prefixes.iter().chain(std::iter::once(&String::new())) {
                let Some(rest) = x.name.strip_prefix(p.as_str()) else {
                    continue;
                };
                for k in &known {
                    let d = distance(rest, k);
                    if d <= (k.len() / 4).max(2) && best.as_ref().is_none_or(|b| d < b.0) {
                        best = Some((d, format!("-{p}{k}")));
                    }
                }
            }
            let hint = match best {
                Some((0, _)) => {
                    " (a known option: no solver applied it, or it does not apply to the \
                                  solver's method)"
                        .to_string()
                }
                Some((_, name)) => format!(" (did you mean {name}?)"),
                None => String::new(),
            };
            out.push_str(&format!(
                "Option left: name:-{} value: {} source: {}{hint}\n",
                x.name,
                x.value.as_deref().unwrap_or("(no value)"),
                x.source,
            ));
        }
        out
    }

    /// Whether the set reports unused options when dropped (`-options_left`, default true).
    fn reports(&self) -> bool {
        let e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.iter()
            .rev()
            .find(|x| x.name == "options_left")
            .is_none_or(|x| parse_bool("options_left", x.value.as_deref()).unwrap_or(true))
    }
}

impl Drop for Options {
    /// PETSc's report at PetscFinalize: the options no solver used, on rank 0.
    fn drop(&mut self) {
        if self.comm.rank() != 0 || !self.reports() {
            return;
        }
        let left = self.left();
        if !left.is_empty() {
            let n = left.lines().count();
            print!(
                "WARNING! There {} option{} you set that {} not used (a misspelt name, or no solver with its prefix)!\n{left}",
                if n == 1 { "is one" } else { "are" },
                if n == 1 { "" } else { "s" },
                if n == 1 { "was" } else { "were" },
            );
        }
    }
}

/// The table of docs/options.md (between its markers), made from [`TABLE`], [`OWN`], hypre's
/// BoomerAMG table and the aliases: the unit test `docs_table_is_current` keeps the file in step.
pub fn table_markdown() -> String {
    let mut t = String::from("| option | values | name | what it does |\n|---|---|---|---|\n");
    for s in TABLE.iter().chain(OWN) {
        t += &format!(
            "| `-{}` | {} | {} | {} |\n",
            s.name,
            s.values,
            if s.petsc { "PETSc's" } else { "parlops'" },
            s.doc
        );
    }
    t += "\nBoomerAMG (with `-pc_type hypre`, `amg` or `boomeramg`): `-pc_hypre_boomeramg_<name>` for \
          each of hypre's options, by hypre's name in lower case with underscores (or as hypre spells \
          it), values as hypre takes them (docs/preconditioners.md lists what each does):\n\n";
    t += "| option | hypre's setter | values |\n|---|---|---|\n";
    for s in crate::hypre::options::BOOMERAMG {
        let named = AMG_NAMED.iter().find(|(n, _)| *n == s.name).map(|(_, l)| {
            let v: Vec<String> = l
                .iter()
                .enumerate()
                .filter(|(_, x)| !x.is_empty())
                .map(|(i, x)| format!("{x} ({i})"))
                .collect();
            format!("; by PETSc's names: {}", v.join(", "))
        });
        let alias: Vec<String> = AMG_ALIASES
            .iter()
            .filter(|(_, h)| *h == s.name)
            .map(|(a, _)| format!("`-pc_hypre_boomeramg_{a}`"))
            .collect();
        t += &format!(
            "| `-pc_hypre_boomeramg_{}`{} | {} | {}{} |\n",
            snake(s.name),
            if alias.is_empty() {
                String::new()
            } else {
                format!(" (PETSc: {})", alias.join(", "))
            },
            s.name,
            match s.kind {
                crate::hypre::options::Kind::Int { .. } => "integer",
                crate::hypre::options::Kind::Real { .. } => "real",
            },
            named.unwrap_or_default()
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_names_and_values() {
        let t = tokens("-ksp_type  gmres -ksp_atol -1e-3 -x 'a b' -y\"c d\"").unwrap();
        assert_eq!(
            t,
            [
                "-ksp_type",
                "gmres",
                "-ksp_atol",
                "-1e-3",
                "-x",
                "a b",
                "-yc d"
            ]
        );
        assert!(tokens("-a 'b").is_err());
        assert!(is_name("-ksp_type") && !is_name("-1e-3") && !is_name("-.5") && !is_name("x"));
        assert_eq!(distance("ksp_tyep", "ksp_type"), 2);
        assert_eq!(snake("PMaxElmts"), "p_max_elmts");
        assert_eq!(snake("StrongThreshold"), "strong_threshold");
    }

    /// docs/options.md holds the table this build makes (PARLOPS_BLESS=1 writes it).
    #[test]
    fn docs_table_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (a, b) = (
            "<!-- table: generated -->\n",
            "<!-- end of the generated table -->",
        );
        let (i, j) = (doc.find(a).unwrap() + a.len(), doc.find(b).unwrap());
        let want = table_markdown();
        if doc[i..j] != want {
            if std::env::var("PARLOPS_BLESS").is_ok() {
                std::fs::write(path, format!("{}{want}{}", &doc[..i], &doc[j..])).unwrap();
            } else {
                panic!(
                    "docs/options.md's table is stale: run PARLOPS_BLESS=1 cargo test --lib docs_table_is_current"
                );
            }
        }
    }
}
