//! Builds `bpf/waits.bpf.c` into the eBPF object `--waits=bpf` loads, with clang and libbpf's
//! headers (`scripts/setup.sh` installs both). Where it cannot, the object is left empty and
//! the reason is kept for the error `--waits=bpf` gives; the rest of fathom builds regardless.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let object = out.join("waits.bpf.o");
    let why = out.join("waits.bpf.why");
    println!("cargo:rerun-if-changed=bpf/waits.bpf.c");
    println!("cargo:rerun-if-env-changed=FATHOM_CLANG");
    let failed = match build(&object) {
        Ok(()) => String::new(),
        Err(e) => {
            println!("cargo:warning=--waits=bpf will not be available: {e}");
            std::fs::write(&object, b"").expect("writing an empty object");
            e
        }
    };
    std::fs::write(&why, failed).expect("writing the reason");
}

fn build(object: &std::path::Path) -> Result<(), String> {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch != "x86_64" {
        return Err(format!(
            "the program reads x86-64 registers; this build is for {arch}"
        ));
    }
    let clang = std::env::var("FATHOM_CLANG").unwrap_or_else(|_| "clang".into());
    let output = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86"])
        .args([
            "-I/usr/include/x86_64-linux-gnu",
            "-c",
            "bpf/waits.bpf.c",
            "-o",
        ])
        .arg(object)
        .output()
        .map_err(|e| format!("{clang} could not be run ({e}); scripts/setup.sh installs clang"))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
    Err(format!(
        "{clang} could not build crates/fathom-bpf/bpf/waits.bpf.c ({}); scripts/setup.sh installs libbpf-dev",
        first.trim()
    ))
}
