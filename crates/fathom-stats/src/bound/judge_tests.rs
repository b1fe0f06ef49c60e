//! The bound judge's unit tests: constructed steps, the share each cause takes, and the
//! qualifier each verdict reads with.

use super::*;
use fathom_schema::result::device::Figure;
use fathom_schema::result::threads::{GroupTime, ThreadTime};

fn step(cpu: f64, blkio: f64, other: f64) -> StepSummary {
    let mut m = StepSummary {
        seconds: 10.0,
        ops: 1000,
        ..StepSummary::default()
    };
    m.time = Some(ThreadTime {
        clients: GroupTime {
            threads: 1,
            busy: 1,
            wall_s: 10.0,
            cpu_s: cpu,
            runq_s: 0.0,
            blkio_s: Some(blkio),
            paced_s: None,
            other_s: other,
            blkio_dropped: 0,
        },
        ..ThreadTime::default()
    });
    m.host.idle_pct = 50.0;
    m
}

fn limits(virtual_disk: bool) -> DeviceLimits {
    let fig = |name: &str, unit: &str, median: f64| Figure {
        name: name.into(),
        unit: unit.into(),
        median,
        low: median * 0.95,
        high: median * 1.05,
    };
    DeviceLimits {
        device: "vda".into(),
        figures: vec![
            fig("randread_qd1", "iops", 10_000.0),
            fig("randread_qd4", "iops", 30_000.0),
            fig("randread_qd32", "iops", 80_000.0),
            fig("seqread", "MiB/s", 1000.0),
            fig("seqwrite", "MiB/s", 1000.0),
            fig("syncwrite", "iops", 9000.0),
        ],
        virtual_disk,
        ..DeviceLimits::default()
    }
}

/// Time off a CPU that nothing named, while the device was at a profile's limit: the
/// bound stays unnamed, and says where the device was.
#[test]
fn unnamed_waits_say_the_device_was_at_a_profiles_limit() {
    let mut m = step(0.2, 0.0, 9.8);
    m.host.rps = Some(1_195.0);
    m.host.aqu_sz = Some(0.1);
    let profile = fathom_schema::result::device::DeviceProfile {
        name: "seed-disk-array".into(),
        read_iops: 1200.0,
        write_iops: 1200.0,
        read_mibps: 858.0,
        write_mibps: 858.0,
        ..Default::default()
    };
    let l = profile.limits("vda", 254, 0, true);
    let v = judge(&[&m], &m, Some(&l)).unwrap();
    let q = v.qualifier.unwrap();
    assert!(
        q.starts_with("latency-bound: waits --waits does not name; meanwhile the device was saturated: 1195 reads/s")
            && q.contains("device profile seed-disk-array allows"),
        "{q}"
    );
    // Far below the limit, nothing is said of the device.
    m.host.rps = Some(100.0);
    let v = judge(&[&m], &m, Some(&l)).unwrap();
    assert_eq!(
        v.qualifier.unwrap(),
        "latency-bound: waits --waits does not name"
    );
}

/// Beside a server over a measured network: clients mostly on the wire are bound by it,
/// with its arithmetic; a capped link near its bandwidth is saturated; clients mostly
/// waiting on the server's answer are judged as before.
#[test]
fn a_step_on_the_wire_is_bound_by_the_network() {
    // 1 client, 1000 operations in 10 s: 10 ms each, 8 ms of it on the wire.
    let mut m = step(1.0, 0.0, 9.0);
    m.per_op.cpu_us_harness = Some(1000.0);
    m.usec_op = 10_000.0;
    m.network = Some(fathom_schema::result::network::NetworkFigures {
        round_trips_per_op: 2.0,
        rtt_us: Some(4000.0),
        wire_us_per_op: Some(8000.0),
        ..Default::default()
    });
    let v = judge(&[&m], &m, None).unwrap();
    assert_eq!(
        (v.whose, v.bound.clone()),
        ("clients", Bound::One("network"))
    );
    let q = v.qualifier.unwrap();
    assert_eq!(
        q,
        "latency-bound: 2.00 round trips an operation x 4000 µs = 8000 µs of 10000 µs"
    );
    let server = v.shares.iter().find(|s| s.name == "server").unwrap();
    assert!((server.fraction - 0.1).abs() < 1e-9, "{:?}", v.shares);
    m.network.as_mut().unwrap().bandwidth_used = Some(0.9);
    let q = judge(&[&m], &m, None).unwrap().qualifier.unwrap();
    assert_eq!(q, "saturated: 90% of the profile's bandwidth");
    // The server's own time counted: the rest of the answer is hand-offs.
    m.network.as_mut().unwrap().bandwidth_used = None;
    m.network.as_mut().unwrap().server_us_per_op = Some(400.0);
    let v = judge(&[&m], &m, None).unwrap();
    let share = |name: &str| v.shares.iter().find(|s| s.name == name).unwrap().fraction;
    assert!((share("server") - 0.04).abs() < 1e-9, "{:?}", v.shares);
    assert!((share("hand-offs") - 0.06).abs() < 1e-9, "{:?}", v.shares);
    let q = v.qualifier.unwrap();
    assert!(
        q.ends_with("of 10000 µs; the server's own time 400 µs"),
        "{q}"
    );
    // A short wire: the server's time is what the clients waited on.
    m.network.as_mut().unwrap().wire_us_per_op = Some(1000.0);
    assert!(on_the_wire(&m, &m.time.as_ref().unwrap().clients).is_none());
}

#[test]
fn a_device_at_its_limit_is_saturated_and_below_it_latency_bound() {
    let mut m = step(2.0, 7.5, 0.5);
    m.host.rps = Some(9_000.0);
    m.host.aqu_sz = Some(1.0);
    let l = limits(false);
    let v = judge(&[&m], &m, Some(&l)).unwrap();
    assert_eq!(v.bound, Bound::One("device"));
    let q = v.qualifier.unwrap();
    assert!(q.starts_with("saturated: 9000 reads/s"), "{q}");
    assert_eq!(v.confidence, Confidence::High, "{:?}", v.why);
    // The same reads at queue depth 4 are a third of what the device does there.
    m.host.aqu_sz = Some(4.0);
    let v = judge(&[&m], &m, Some(&l)).unwrap();
    assert!(v.qualifier.unwrap().starts_with("latency-bound"));
    // Far from a soft limit: as sure.
    let v = judge(&[&m], &m, Some(&limits(true))).unwrap();
    assert_eq!(v.confidence, Confidence::High, "{:?}", v.why);
    // Near a host-cached disk's soft limit: less sure.
    m.host.aqu_sz = Some(1.0);
    let v = judge(&[&m], &m, Some(&limits(true))).unwrap();
    assert_eq!(v.confidence, Confidence::Medium, "{:?}", v.why);
    // Uncalibrated: said.
    let v = judge(&[&m], &m, None).unwrap();
    assert!(v.qualifier.unwrap().contains("fathom calibrate"));
}

#[test]
fn cpu_bound_with_idle_cpu_is_latency_bound_and_repeats_that_differ_lower_it() {
    let m = step(9.0, 0.0, 1.0);
    let v = judge(&[&m, &m, &m], &m, None).unwrap();
    assert_eq!(v.bound, Bound::One("engine cpu"));
    assert_eq!(v.confidence, Confidence::High);
    assert!(v
        .qualifier
        .unwrap()
        .starts_with("latency-bound: host CPU 50% idle"));
    let io = step(2.0, 7.5, 0.5);
    let v = judge(&[&m, &m, &io], &m, None).unwrap();
    assert_eq!(v.bound, Bound::One("engine cpu"));
    assert!(v.why.contains(&"repeats differ".to_string()), "{:?}", v.why);
    assert!(v.confidence < Confidence::High);
}

#[test]
fn a_full_host_is_blamed_on_others_when_they_filled_it() {
    let mut m = step(9.0, 0.0, 1.0);
    m.host.idle_pct = 0.0;
    let v = judge(&[&m], &m, None).unwrap();
    assert!(v
        .qualifier
        .unwrap()
        .starts_with("saturated: host CPU 0% idle"));
    // One client on two cores cannot fill the host: other processes did.
    m.host.others_cores = Some(1.1);
    m.host.others_pct = Some(55.0);
    let v = judge(&[&m], &m, None).unwrap();
    let q = v.qualifier.unwrap();
    assert!(
        q.starts_with("interference: other processes used 1.10 cores"),
        "{q}"
    );
    assert!(q.ends_with("host CPU 0% idle"), "{q}");
}

#[test]
fn both_parts_of_a_two_part_verdict_are_explained() {
    let mut m = step(4.5, 4.5, 1.0);
    m.host.rps = Some(9_000.0);
    m.host.aqu_sz = Some(1.0);
    let v = judge(&[&m], &m, Some(&limits(false))).unwrap();
    assert!(matches!(v.bound, Bound::Two(..)), "{:?}", v.bound);
    let q = v.qualifier.unwrap();
    assert!(
        q.contains("engine cpu: latency-bound: host CPU 50% idle"),
        "{q}"
    );
    assert!(q.contains("device: saturated: 9000 reads/s"), "{q}");
}

#[test]
fn iops_limit_follows_the_queue_depth() {
    let l = limits(false);
    assert_eq!(l.iops_limit(0.3), Some(10_000.0));
    assert_eq!(l.iops_limit(2.0), Some(20_000.0));
    assert_eq!(l.iops_limit(4.0), Some(30_000.0));
    assert_eq!(l.iops_limit(64.0), Some(80_000.0));
}
