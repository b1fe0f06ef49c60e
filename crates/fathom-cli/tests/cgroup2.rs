//! Device profiles through cgroup v2's `io.max`, in a guest whose controllers are all on v2
//! (`scripts/cgroup2-guest.sh`: Debian's kernel under qemu), since this project's machines keep
//! the blkio controller on v1 and cannot move it. A file of its own, so that the emulated guest's
//! CPU disturbs no other test.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// The guest runs `fathom calibrate` held to a profile through `io.max` (the run's own group)
/// and reads each rate back within 10%; the group is gone after.
#[test]
fn calibrate_reads_a_profiles_rates_back_through_io_max() {
    if !needs_root("calibrate_reads_a_profiles_rates_back_through_io_max") {
        return;
    }
    let dir = scratch();
    let work = dir.path();
    // The guest's /root is a tmpfs: the binary goes where it can see it.
    std::fs::copy(env!("CARGO_BIN_EXE_fathom"), work.join("fathom")).unwrap();
    std::fs::write(
        work.join("slow.toml"),
        "name = \"slow\"\nread_iops = 300\nwrite_iops = 200\nread_mibps = 20\nwrite_mibps = 10\n",
    )
    .unwrap();
    let w = work.display();
    let command = format!(
        "{w}/fathom calibrate --device {w}/slow.toml --device-layer group --dir {w}/disk/d \
         --results {w}/disk/r --seconds 2 --repeats 1 --size-mib 128; \
         ls /sys/fs/cgroup | grep -c fathom-io || true"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/cgroup2-guest.sh");
    let out = Command::new(script)
        .args([work.as_os_str(), command.as_ref()])
        .output()
        .expect("scripts/cgroup2-guest.sh runs");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the guest's command failed");
    assert!(
        text.contains("calibrate: cgroup v2 group /sys/fs/cgroup/fathom-io-"),
        "not held through cgroup v2"
    );
    for (figure, expected) in [
        ("randread_qd1", 300.0),
        ("randread_qd4", 300.0),
        ("randread_qd32", 300.0),
        ("seqread", 20.0),
        ("seqwrite", 10.0),
    ] {
        let line = (text.lines())
            .find(|l| l.split_whitespace().next() == Some(figure))
            .unwrap_or_else(|| panic!("no {figure} in the guest's output"));
        let read: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(
            (read / expected - 1.0).abs() <= 0.10,
            "{figure}: {read} against the profile's {expected}"
        );
    }
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with("guest-"));
    assert_eq!(
        last.map(str::trim),
        Some("0"),
        "a fathom-io group was left behind"
    );
}
