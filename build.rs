// Give the shared library a SONAME so that consumers record `libparlops.so.<major>`, not a path.
fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libparlops.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
