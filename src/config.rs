//! Environment settings (read once) and build facts. The configuration report is
//! [`crate::report`].

use std::sync::OnceLock;

/// The `PARLOPS_*` variables this version understands, with what each does.
pub const KNOWN_ENV: &[(&str, &str)] = &[
    (
        "PARLOPS_DEVICE",
        "CUDA device for this rank (default: node-local rank)",
    ),
    (
        "PARLOPS_CUDA_AWARE_MPI",
        "0 forbids passing device buffers to MPI; 1 passes them even when the MPI does not say it is CUDA-aware",
    ),
    ("PARLOPS_NCCL", "0 forbids NCCL for device data"),
    (
        "PARLOPS_MONITOR",
        "1 prints one line per solver iteration on rank 0",
    ),
    (
        "PARLOPS_LOG",
        "1 prints where each solve's time went (the -log_view table) on rank 0 after each solve; \
         finalize prints every solve's added up at parlops_finalize",
    ),
    (
        "PARLOPS_HYPRE_LIBRARY",
        "the hypre library BoomerAMG loads (default: libHYPRE.so)",
    ),
    (
        "PARLOPS_OPTIONS",
        "run-time options read by parlops_options_insert_env(o, NULL)",
    ),
    (
        "PARLOPS_CSR_LAYOUT",
        "rows keeps CSR matrices made after it as given (no SELL-8 or 16-bit column layout)",
    ),
    ("PARLOPS_LIB", "the library file the Python package loads"),
    (
        "PARLOPS_DIR",
        "the installation prefix where the Python package looks for the library",
    ),
];

/// The process environment as parlops read it (once, at first use).
#[derive(Clone, Debug)]
pub struct Env {
    /// (name, value) of known variables that were set.
    pub set: Vec<(String, String)>,
    /// Names of `PARLOPS_*` variables that this version does not know (ignored).
    pub unknown: Vec<String>,
}

impl Env {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.set
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub fn env() -> &'static Env {
    static E: OnceLock<Env> = OnceLock::new();
    E.get_or_init(|| {
        let mut set = Vec::new();
        let mut unknown = Vec::new();
        let mut vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
            .filter(|(k, _)| k.starts_with("PARLOPS_"))
            .collect();
        vars.sort();
        for (k, v) in vars {
            if KNOWN_ENV.iter().any(|(n, _)| *n == k) {
                set.push((k, v));
            } else {
                unknown.push(k);
            }
        }
        Env { set, unknown }
    })
}

pub fn version() -> (i32, i32, i32) {
    let p = |s: &str| s.parse().unwrap_or(0);
    (
        p(env!("CARGO_PKG_VERSION_MAJOR")),
        p(env!("CARGO_PKG_VERSION_MINOR")),
        p(env!("CARGO_PKG_VERSION_PATCH")),
    )
}

#[cfg(test)]
mod tests {
    /// Every `PARLOPS_*` variable the sources read is known (else the configuration report calls a
    /// setting parlops reads "ignored"): the names are taken from the sources, not listed here.
    #[test]
    fn every_variable_read_is_known() {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let mut srcs = Vec::new();
        walk(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
            &mut srcs,
        );
        let mut read = std::collections::BTreeSet::new();
        for s in &srcs {
            for call in ["var_os(\"", "var(\"", ".get(\"", "            \""] {
                for (i, _) in s.match_indices(call) {
                    let rest = &s[i + call.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    if name.starts_with("PARLOPS_") && rest[name.len()..].starts_with('"') {
                        read.insert(name);
                    }
                }
            }
        }
        for known in ["PARLOPS_OPTIONS", "PARLOPS_CSR_LAYOUT", "PARLOPS_LOG"] {
            assert!(read.contains(known), "the scan misses {known}: {read:?}");
        }
        let unknown: Vec<_> = read
            .iter()
            .filter(|n| *n != "PARLOPS_BLESS" && !super::KNOWN_ENV.iter().any(|(k, _)| k == n))
            .collect();
        assert!(unknown.is_empty(), "read but not in KNOWN_ENV: {unknown:?}");
    }
}
