//! The device profiles `--device` takes: bundled ones by name (the seeds' disk array and SSD,
//! cloud volumes, each with its source), or a TOML file of the user's own, checked key by key
//! before anything runs. docs/devices.md lists them with their sources.

use fathom_schema::result::device::DeviceProfile;
use std::path::Path;

/// A bundled profile: its name, its figures and where they come from.
struct Bundled {
    name: &'static str,
    read_iops: f64,
    write_iops: f64,
    read_mibps: f64,
    write_mibps: f64,
    service_us: Option<f64>,
    source: &'static str,
}

/// MB (10^6 bytes, as data sheets and clouds give them) in MiB.
const MB: f64 = 1e6 / 1048576.0;

const BUNDLED: &[Bundled] = &[
    Bundled {
        name: "seed-disk-array",
        read_iops: 1200.0,
        write_iops: 1200.0,
        read_mibps: 900.0 * MB,
        write_mibps: 900.0 * MB,
        service_us: Some(5000.0),
        source: "the disk array of the seeds' LinkBench posts: six SAS disks in hardware RAID 0 that \
                 \"can do ~1200 IOPs\" (the author's figure); sequential rates 6 x 150 MB/s, a 10k rpm \
                 SAS disk's, estimated; 5 ms a request, 200 IOPS a disk",
    },
    Bundled {
        name: "seed-ssd",
        read_iops: 75000.0,
        write_iops: 36000.0,
        read_mibps: 500.0 * MB,
        write_mibps: 460.0 * MB,
        service_us: Some(50.0),
        source: "Intel SSD DC S3700 400 GB, the seeds' SSD: Intel's specification, 4 KiB random \
                 reads 75,000 IOPS and writes 36,000, sequential 500 MB/s read and 460 MB/s write, \
                 50 µs read latency",
    },
    Bundled {
        name: "gp3",
        read_iops: 3000.0,
        write_iops: 3000.0,
        read_mibps: 125.0,
        write_mibps: 125.0,
        service_us: None,
        source: "AWS EBS gp3 at its baseline (any size): 3,000 IOPS and 125 MiB/s unless more are \
                 provisioned (AWS EBS documentation, volume types)",
    },
    Bundled {
        name: "io2-16k",
        read_iops: 16000.0,
        write_iops: 16000.0,
        read_mibps: 1000.0,
        write_mibps: 1000.0,
        service_us: None,
        source: "AWS EBS io2 (not Block Express) provisioned with 16,000 IOPS (a 100 GiB volume; \
                 up to 500 IOPS a GiB): throughput up to 1,000 MiB/s (AWS EBS documentation)",
    },
    Bundled {
        name: "pd-balanced-500g",
        read_iops: 6000.0,
        write_iops: 6000.0,
        read_mibps: 280.0 * MB,
        write_mibps: 280.0 * MB,
        service_us: None,
        source: "GCP pd-balanced of 500 GB: a baseline 3,000 IOPS and 140 MB/s plus 6 IOPS and \
                 0.28 MB/s a GB (Google Compute Engine, persistent disk performance); the VM's own \
                 limits may be lower",
    },
    Bundled {
        name: "local-nvme",
        read_iops: 637000.0,
        write_iops: 81500.0,
        read_mibps: 3200.0 * MB,
        write_mibps: 2000.0 * MB,
        service_us: None,
        source: "a data-centre NVMe drive as clouds' local instance storage has it: Intel SSD DC \
                 P4510 2 TB, Intel's specification, 4 KiB random reads 637,000 IOPS and writes \
                 81,500, sequential 3,200 MB/s read and 2,000 MB/s write, 77 µs read latency (not \
                 imposed: fathom's service-time layer costs more than that here)",
    },
];

impl Bundled {
    fn profile(&self) -> DeviceProfile {
        DeviceProfile {
            name: self.name.into(),
            source: self.source.split_whitespace().collect::<Vec<_>>().join(" "),
            read_iops: self.read_iops,
            write_iops: self.write_iops,
            read_mibps: self.read_mibps,
            write_mibps: self.write_mibps,
            service_us: self.service_us,
            queue_depth: None,
            layer: Default::default(),
        }
    }
}

/// The bundled profiles, for `fathom devices` and the docs.
pub fn bundled() -> Vec<DeviceProfile> {
    BUNDLED.iter().map(Bundled::profile).collect()
}

/// A profile file as written: every figure optional here, so a missing one is named.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Option<String>,
    #[serde(default)]
    source: String,
    read_iops: Option<f64>,
    write_iops: Option<f64>,
    read_mibps: Option<f64>,
    write_mibps: Option<f64>,
    service_us: Option<f64>,
    queue_depth: Option<u32>,
}

/// The profile `given` names: a bundled profile's name, or a TOML file (relative to `base`).
/// `key` is how errors name where it was given (`--device`, `setup[0].device`).
pub fn find(given: &str, base: &Path, key: &str) -> anyhow::Result<DeviceProfile> {
    let names: Vec<&str> = BUNDLED.iter().map(|b| b.name).collect();
    crate::named::bundled_or_file(
        (given, base, key),
        (
            "device profile",
            &names,
            "name, read_iops, write_iops, read_mibps, write_mibps and optionally source, \
             service_us and queue_depth; see docs/devices.md",
        ),
        |name| {
            BUNDLED
                .iter()
                .find(|b| b.name == name)
                .map(Bundled::profile)
        },
        |text, file| parse(text, file, key),
    )
}

/// A profile file's text; `file` names it in errors.
fn parse(text: &str, file: &str, key: &str) -> anyhow::Result<DeviceProfile> {
    let f: ProfileFile =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{key}: {file}: {}", e.message()))?;
    let rate = |name: &str, x: Option<f64>| match x {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        Some(x) => anyhow::bail!("{key}: {file}: `{name}` is {x}: expected a rate above 0"),
        None => anyhow::bail!("{key}: {file}: `{name}` is missing: expected a rate above 0"),
    };
    if let Some(s) = f.service_us.filter(|s| !(s.is_finite() && *s >= 0.0)) {
        anyhow::bail!("{key}: {file}: `service_us` is {s}: expected microseconds, 0 or more");
    }
    if f.queue_depth == Some(0) {
        anyhow::bail!("{key}: {file}: `queue_depth` is 0: expected requests at once, 1 or more");
    }
    Ok(DeviceProfile {
        name: f.name.filter(|n| !n.trim().is_empty()).ok_or_else(|| {
            anyhow::anyhow!("{key}: {file}: `name` is missing: expected the profile's name")
        })?,
        source: f.source,
        read_iops: rate("read_iops", f.read_iops)?,
        write_iops: rate("write_iops", f.write_iops)?,
        read_mibps: rate("read_mibps", f.read_mibps)?,
        write_mibps: rate("write_mibps", f.write_mibps)?,
        service_us: f.service_us,
        queue_depth: f.queue_depth,
        layer: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str =
        "name = \"slow\"\nread_iops = 500\nwrite_iops = 400\nread_mibps = 20\nwrite_mibps = 10.5\n";

    #[test]
    fn finds_a_bundled_profile_by_name() {
        let p = find("gp3", Path::new("."), "--device").unwrap();
        assert_eq!((p.read_iops, p.read_mibps), (3000.0, 125.0));
        assert!(p.source.contains("AWS"), "{}", p.source);
        for b in bundled() {
            assert!(b.read_iops > 0.0 && b.write_mibps > 0.0 && !b.source.is_empty());
        }
    }

    #[test]
    fn reads_a_profile_file() {
        let p = parse(GOOD, "slow.toml", "--device").unwrap();
        assert_eq!(p.name, "slow");
        assert_eq!(
            (p.write_iops, p.write_mibps, p.service_us),
            (400.0, 10.5, None)
        );
        let p = parse(
            &format!("{GOOD}service_us = 800\nqueue_depth = 8\n"),
            "f",
            "k",
        )
        .unwrap();
        assert_eq!(
            (p.service_us, p.queue_depth, p.depth()),
            (Some(800.0), Some(8), 8)
        );
    }

    /// Each bad input names the file, the key and what was expected.
    #[test]
    fn refuses_a_bad_profile_naming_the_key() {
        let err = |text: &str| parse(text, "p.toml", "--device").unwrap_err().to_string();
        let e = err(&GOOD.replace("read_iops = 500", "read_iops = -5"));
        assert!(
            e.contains("p.toml") && e.contains("`read_iops` is -5") && e.contains("above 0"),
            "{e}"
        );
        let e = err(&GOOD.replace("write_mibps = 10.5\n", ""));
        assert!(e.contains("`write_mibps` is missing"), "{e}");
        let e = err(&GOOD.replace("name = \"slow\"\n", ""));
        assert!(e.contains("`name` is missing"), "{e}");
        let e = err(&format!("{GOOD}queue_depth = 0\n"));
        assert!(e.contains("`queue_depth` is 0"), "{e}");
        let e = err(&format!("{GOOD}iops = 3\n"));
        assert!(e.contains("p.toml") && e.contains("iops"), "{e}");
        let e = find("gp9", Path::new("."), "setup[0].device")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("setup[0].device") && e.contains("gp3") && e.contains("seed-disk-array"),
            "{e}"
        );
    }
}
