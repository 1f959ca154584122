// Give the shared library a SONAME so that consumers record `libparlops.so.<major>` (below 1.0
// `libparlops.so.0.<minor>`: every minor release may break the ABI), not a path; and
// read hypre's build configuration (HYPRE_config.h) for the integer widths of the hypre that parlops
// loads at run time for BoomerAMG (src/hypre/): `cfg(parlops_hypre)` when the headers are found,
// `cfg(hypre_bigint64)` when HYPRE_BigInt is 64-bit (HYPRE_BIGINT or HYPRE_MIXEDINT),
// `cfg(hypre_int64)` when HYPRE_Int is too (HYPRE_BIGINT). HYPRE_DIR points at another install.
fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_else(|_| "0".into());
    let soversion = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libparlops.so.{soversion}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HYPRE_DIR");
    println!("cargo:rustc-check-cfg=cfg(parlops_hypre)");
    println!("cargo:rustc-check-cfg=cfg(hypre_bigint64)");
    println!("cargo:rustc-check-cfg=cfg(hypre_int64)");
    let dirs: Vec<std::path::PathBuf> = match std::env::var("HYPRE_DIR") {
        Ok(d) => vec![
            std::path::Path::new(&d).join("include"),
            std::path::Path::new(&d).join("include/hypre"),
        ],
        Err(_) => vec!["/usr/include/hypre".into(), "/usr/local/include".into()],
    };
    let Some(cfg) = dirs
        .iter()
        .map(|d| d.join("HYPRE_config.h"))
        .find(|p| p.exists())
    else {
        return;
    };
    println!("cargo:rerun-if-changed={}", cfg.display());
    let text = std::fs::read_to_string(&cfg).unwrap_or_default();
    let defined = |name: &str| {
        text.lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>()[..] == ["#define", name, "1"][..]
                || l.trim() == format!("#define {name}")
        })
    };
    // complex, single or long-double builds of hypre are not what parlops' f64 CSR can hand over
    if defined("HYPRE_COMPLEX") || defined("HYPRE_SINGLE") || defined("HYPRE_LONG_DOUBLE") {
        return;
    }
    println!("cargo:rustc-cfg=parlops_hypre");
    if defined("HYPRE_BIGINT") {
        println!("cargo:rustc-cfg=hypre_bigint64");
        println!("cargo:rustc-cfg=hypre_int64");
    } else if defined("HYPRE_MIXEDINT") {
        println!("cargo:rustc-cfg=hypre_bigint64");
    }
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("#define HYPRE_RELEASE_VERSION "))
        .map(|v| v.trim().trim_matches('"').to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=PARLOPS_HYPRE_HEADERS_VERSION={version}");
    println!("cargo:rustc-env=PARLOPS_HYPRE_HEADERS={}", cfg.display());
}
