//! Compiles fathom's flat interface to WiredTiger (`src/wiredtiger/shim.c`) against the
//! installed header (Debian's libwiredtiger-dev) and links Debian's library with it; a fetched
//! release gets the same interface compiled against its own header by scripts/fetch-engine.sh.

fn main() {
    #[cfg(feature = "wiredtiger")]
    wiredtiger();
}

#[cfg(feature = "wiredtiger")]
fn wiredtiger() {
    let header = "/usr/include/wiredtiger.h";
    let shim = "src/wiredtiger/shim.c";
    println!("cargo:rerun-if-changed={header}");
    println!("cargo:rerun-if-changed={shim}");
    if !std::path::Path::new(header).exists() {
        panic!("{header} is missing: install Debian's libwiredtiger-dev (scripts/setup.sh does)");
    }
    cc::Build::new()
        .file(shim)
        .warnings(true)
        .compile("fathom_wt");
    println!("cargo:rustc-link-lib=wiredtiger");
}
