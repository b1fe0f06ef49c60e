//! What fathom-measure reads of this machine's installed programs: tests that need Debian's
//! packages (scripts/setup.sh --test), kept out of the library's unit tests so that
//! `cargo test --workspace --lib` passes on a machine with no server installed.

use fathom_measure::unwind::unwinding;
use fathom_schema::profile::Unwinding;

#[test]
fn debians_postgres_keeps_frame_pointers() {
    let postgres = std::fs::read_dir("/usr/lib/postgresql")
        .expect("Debian's PostgreSQL (scripts/setup.sh --test)")
        .flatten()
        .map(|v| v.path().join("bin/postgres"))
        .find(|p| p.exists())
        .expect("a bin/postgres under /usr/lib/postgresql");
    assert_eq!(unwinding(&postgres), Unwinding::FramePointers);
}
