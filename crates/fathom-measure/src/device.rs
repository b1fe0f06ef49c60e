//! What the data directory's device can do, measured once and kept beside the results
//! (`device.json`): random 4 KiB reads at queue depths 1, 4 and 32, sequential read and write
//! bandwidth, and 4 KiB writes each followed by `fdatasync`, by fio at real-time priority (on a
//! busy machine a thread woken after a flush waits for a CPU, and without real-time priority the
//! synced-write figure measures the scheduler, not the device). A step's IO is judged against
//! these limits: a device near its limit at the step's queue depth bounded it.

use crate::sample::Device;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use fathom_schema::result::device::{DeviceLimits, Figure};

/// `device.json`: the limits of every device measured for one results directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceFile {
    pub devices: Vec<DeviceLimits>,
}

/// Where a results directory keeps its devices' limits.
pub fn file_of(results: &Path) -> PathBuf {
    results.join("device.json")
}

impl DeviceFile {
    /// The file's devices; none when it does not exist; an error naming the file when it
    /// cannot be read.
    pub fn load(path: &Path) -> anyhow::Result<DeviceFile> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a device file ({e}); delete it or run `fathom calibrate --again`",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DeviceFile::default()),
            Err(e) => Err(anyhow::anyhow!("reading {}: {e}", path.display())),
        }
    }

    /// The limits kept for `device`.
    pub fn find(&self, device: &Device, disk_model: Option<&str>) -> Option<&DeviceLimits> {
        self.devices.iter().find(|d| is_of(d, device, disk_model))
    }

    /// Keeps `limits`, replacing those of the same device, and writes the file whole.
    pub fn keep(&mut self, limits: DeviceLimits, path: &Path) -> anyhow::Result<()> {
        self.devices.retain(|d| {
            !(d.device == limits.device
                && (d.major, d.minor) == (limits.major, limits.minor)
                && d.disk_model == limits.disk_model)
        });
        self.devices.push(limits);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
    }
}

/// The limits `fathom calibrate` kept for `device` in `results`' `device.json` or its parent's
/// (an experiment's runs are in RESULTS/NAME); a file that cannot be read is warned of.
pub fn kept_for(results: &Path, device: &Device, disk_model: Option<&str>) -> Option<DeviceLimits> {
    results.ancestors().take(2).find_map(|dir| {
        let path = file_of(dir);
        match DeviceFile::load(&path) {
            Ok(f) => f.find(device, disk_model).cloned(),
            Err(e) => {
                eprintln!("warning: {e:#}");
                None
            }
        }
    })
}

/// One fio job of the calibration: its name, unit, and fio's arguments for it.
struct Job {
    name: &'static str,
    unit: &'static str,
    args: &'static [&'static str],
    /// Which side of fio's job result holds the figure.
    side: &'static str,
}

const JOBS: &[Job] = &[
    Job {
        name: "randread_qd1",
        unit: "iops",
        args: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--iodepth=1",
            "--direct=1",
        ],
        side: "read",
    },
    Job {
        name: "randread_qd4",
        unit: "iops",
        args: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
        ],
        side: "read",
    },
    Job {
        name: "randread_qd32",
        unit: "iops",
        args: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=32",
            "--direct=1",
        ],
        side: "read",
    },
    Job {
        name: "seqread",
        unit: "MiB/s",
        args: &[
            "--rw=read",
            "--bs=1m",
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
        ],
        side: "read",
    },
    Job {
        name: "seqwrite",
        unit: "MiB/s",
        args: &[
            "--rw=write",
            "--bs=1m",
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
        ],
        side: "write",
    },
    Job {
        name: "syncwrite",
        unit: "iops",
        args: &["--rw=write", "--bs=4k", "--ioengine=sync", "--fdatasync=1"],
        side: "write",
    },
];

/// How a calibration runs.
pub struct Calibration<'a> {
    pub dir: &'a Path,
    pub seconds_each: f64,
    pub repeats: u32,
    /// The test file's size, MiB.
    pub file_mib: u64,
}

/// True when this process may run a child at real-time priority.
fn realtime_allowed() -> bool {
    Command::new("chrt")
        .args(["-f", "10", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The figure of one fio run's JSON output: IOPS or MiB/s of `side` (group reporting: one job).
pub fn parse_fio(json: &str, side: &str, unit: &str) -> anyhow::Result<f64> {
    let v: serde_json::Value = serde_json::from_str(json.trim_start_matches(|c| c != '{'))
        .map_err(|e| anyhow::anyhow!("fio's output is not JSON: {e}"))?;
    let s = &v["jobs"][0][side];
    let x = match unit {
        "iops" => s["iops"].as_f64(),
        _ => s["bw"].as_f64().map(|kib| kib / 1024.0),
    };
    x.ok_or_else(|| anyhow::anyhow!("fio's output has no jobs[0].{side} figure"))
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

impl Calibration<'_> {
    /// Measures the device of `dir`; `progress` is told each figure as it is measured.
    pub fn run(&self, mut progress: impl FnMut(&Figure)) -> anyhow::Result<DeviceLimits> {
        let device = Device::of(self.dir).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: on no block device listed in /proc/diskstats (tmpfs or overlay?): nothing to calibrate",
                self.dir.display()
            )
        })?;
        let version = Command::new("fio").arg("--version").output().map_err(|e| {
            anyhow::anyhow!("fio: {e}; scripts/setup.sh installs it (Debian's fio package)")
        })?;
        let realtime = realtime_allowed();
        let file = self.dir.join("fathom-calibrate.fio");
        let _remove = RemoveOnDrop(file.clone());
        let mut figures = Vec::new();
        for job in JOBS {
            let mut xs = Vec::new();
            for _ in 0..self.repeats {
                xs.push(self.one(job, &file, realtime)?);
            }
            let (low, high) = (
                xs.iter().copied().fold(f64::INFINITY, f64::min),
                xs.iter().copied().fold(0.0, f64::max),
            );
            let f = Figure {
                name: job.name.into(),
                unit: job.unit.into(),
                median: median(&mut xs),
                low,
                high,
            };
            progress(&f);
            figures.push(f);
        }
        let disk_model = crate::sample::identity::disk_model(&device.name);
        let mut notes = Vec::new();
        if !realtime {
            notes.push(
                "fio ran without real-time priority (not root?): the synced-write figure may be the scheduler's, not the device's".into(),
            );
        }
        let driver = crate::sample::host::virtual_driver(&device.name);
        let virtual_disk = driver.is_some();
        if let Some(d) = driver {
            notes.push(format!(
                "{} is a virtual disk ({d}) the host may cache: its limits are soft",
                device.name
            ));
        }
        Ok(DeviceLimits {
            device: device.name.clone(),
            major: device.major,
            minor: device.minor,
            disk_model,
            dir: self.dir.display().to_string(),
            measured_at: fathom_schema::result::now_utc(),
            realtime,
            fio: String::from_utf8_lossy(&version.stdout).trim().to_string(),
            seconds_each: self.seconds_each,
            repeats: self.repeats,
            figures,
            notes,
            virtual_disk,
            profile: None,
            service: None,
        })
    }

    /// One fio run of `job` on `file`: its figure.
    fn one(&self, job: &Job, file: &Path, realtime: bool) -> anyhow::Result<f64> {
        let mut cmd = if realtime {
            let mut c = Command::new("chrt");
            c.args(["-f", "10", "fio"]);
            c
        } else {
            Command::new("fio")
        };
        cmd.arg(format!("--name={}", job.name))
            .arg(format!("--filename={}", file.display()))
            .arg(format!("--size={}m", self.file_mib))
            .arg(format!(
                "--runtime={}ms",
                (self.seconds_each * 1000.0) as u64
            ))
            .args(["--time_based", "--group_reporting", "--output-format=json"])
            .args(job.args);
        let out = cmd
            .output()
            .map_err(|e| anyhow::anyhow!("starting fio: {e}"))?;
        if !out.status.success() {
            anyhow::bail!(
                "fio {} failed: {}",
                job.name,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        parse_fio(&String::from_utf8_lossy(&out.stdout), job.side, job.unit)
            .map_err(|e| anyhow::anyhow!("fio {}: {e}", job.name))
    }
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// True when `limits` are `device`'s limits (the same numbers, name and model).
fn is_of(limits: &DeviceLimits, device: &Device, disk_model: Option<&str>) -> bool {
    limits.device == device.name
        && (limits.major, limits.minor) == (device.major, device.minor)
        && limits.disk_model.as_deref() == disk_model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fios_json() {
        // fio 3.33's output, trimmed to what is read; a warning line before the JSON.
        let out = r#"fio: note
{"fio version": "fio-3.33", "jobs": [{"jobname": "x",
 "read": {"iops": 21345.5, "bw": 85382},
 "write": {"iops": 0.0, "bw": 1048576}}]}"#;
        assert_eq!(parse_fio(out, "read", "iops").unwrap(), 21345.5);
        assert_eq!(parse_fio(out, "write", "MiB/s").unwrap(), 1024.0);
        assert!(parse_fio("{}", "read", "iops").is_err());
        assert!(parse_fio("nothing", "read", "iops").is_err());
    }

    #[test]
    fn keeps_one_entry_per_device() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_of(dir.path());
        let mut f = DeviceFile::load(&path).unwrap();
        assert!(f.devices.is_empty(), "no file: no devices");
        let limits = |iops: f64| DeviceLimits {
            device: "vda".into(),
            major: 254,
            minor: 0,
            figures: vec![Figure {
                name: "randread_qd1".into(),
                unit: "iops".into(),
                median: iops,
                low: iops,
                high: iops,
            }],
            ..Default::default()
        };
        f.keep(limits(100.0), &path).unwrap();
        f.keep(limits(200.0), &path).unwrap();
        let again = DeviceFile::load(&path).unwrap();
        assert_eq!(again.devices.len(), 1);
        let d = Device {
            major: 254,
            minor: 0,
            name: "vda".into(),
        };
        let found = again.find(&d, None).expect("the device's limits");
        assert_eq!(found.get("randread_qd1").map(|f| f.median), Some(200.0));
        std::fs::write(&path, "{").unwrap();
        let err = DeviceFile::load(&path).unwrap_err().to_string();
        assert!(err.contains("device.json"), "{err}");
    }
}
