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
    (
        "PARLOPS_HUGE_PAGES",
        "0 allocates long arrays without asking for 2 MiB pages (first touches then never wait for \
         the kernel to compact memory; products run somewhat slower)",
    ),
    (
        "PARLOPS_SUM_REPRODUCIBLE",
        "1 makes every solver made after it start in PARLOPS_SUM_REPRODUCIBLE (dot products, norms \
         and sparse products whose bits do not depend on the number of ranks or the partition)",
    ),
    ("PARLOPS_LIB", "the library file the Python package loads"),
    (
        "PARLOPS_DIR",
        "the installation prefix where the Python package looks for the library",
    ),
];

/// PARLOPS_SUM_REPRODUCIBLE=1: new solvers start in the reproducible sum order.
pub fn sum_reproducible() -> bool {
    env().get("PARLOPS_SUM_REPRODUCIBLE") == Some("1")
}

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

/// Whether this library keeps the ABI of the header of `want` (major, minor, patch): see
/// parlops_check_version. `path` names the library in the message.
pub fn check_version(want: (i32, i32, i32), path: String) -> crate::error::Result<()> {
    let have = version();
    let ok = want.0 == have.0
        && if have.0 == 0 {
            want.1 == have.1
        } else {
            want.1 <= have.1
        };
    if ok {
        return Ok(());
    }
    Err(crate::err!(
        VersionMismatch,
        "the program was compiled with the header of parlops {}.{}.{}, but the library loaded ({path}) \
         is parlops {}.{}.{}, which does not keep that header's ABI ({}): rebuild the program against \
         this library's header, or load the library it was built with",
        want.0,
        want.1,
        want.2,
        have.0,
        have.1,
        have.2,
        if have.0 == 0 {
            "below 1.0 only the same minor version does"
        } else {
            "only the same major version with a minor at least the header's does"
        }
    ))
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
    #[test]
    fn version_rule() {
        let (a, b, c) = super::version();
        let p = || "lib".to_string();
        assert!(super::check_version((a, b, c), p()).is_ok());
        assert!(super::check_version((a, b, c + 7), p()).is_ok());
        assert!(super::check_version((a + 1, b, c), p()).is_err());
        let e = super::check_version((a, b + 1, c), p()).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::VersionMismatch);
        assert!(e.msg.contains(&format!("{a}.{}.{c}", b + 1)), "{}", e.msg);
        if a == 0 {
            assert!(super::check_version((a, b.wrapping_sub(1), c), p()).is_err());
        }
    }

    /// The header's PARLOPS_VERSION_* macros are Cargo.toml's version (cbindgen.toml holds them).
    #[test]
    fn header_version_is_the_crate_version() {
        let h = include_str!("../include/parlops.h");
        let (a, b, c) = super::version();
        for (name, v) in [("MAJOR", a), ("MINOR", b), ("PATCH", c)] {
            assert!(
                h.contains(&format!("#define PARLOPS_VERSION_{name} {v}\n")),
                "PARLOPS_VERSION_{name} in include/parlops.h (cbindgen.toml) is not {v}"
            );
        }
    }

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
