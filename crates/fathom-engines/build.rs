//! Generates Rust declarations for WiredTiger's C API from the installed header (Debian's
//! libwiredtiger-dev), so the struct layouts always match the library fathom links.

fn main() {
    #[cfg(feature = "wiredtiger")]
    wiredtiger();
}

#[cfg(feature = "wiredtiger")]
fn wiredtiger() {
    let header = "/usr/include/wiredtiger.h";
    println!("cargo:rerun-if-changed={header}");
    if !std::path::Path::new(header).exists() {
        panic!("{header} is missing: install Debian's libwiredtiger-dev (scripts/setup.sh does)");
    }
    println!("cargo:rustc-link-lib=wiredtiger");
    let bindings = bindgen::Builder::default()
        .header(header)
        .allowlist_function("wiredtiger_.*")
        .allowlist_type("WT_.*")
        .allowlist_var("WT_.*")
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .expect("bindgen could not read wiredtiger.h");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("wiredtiger.rs");
    bindings
        .write_to_file(out)
        .expect("writing the WiredTiger bindings");
}
