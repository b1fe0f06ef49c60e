//! A device's measured limits as results keep them (`device.json`, a run's `device_limits`):
//! what `device` measures and judges steps against, kept here so the schema needs no fio.

use serde::{Deserialize, Serialize};

/// One measured figure: the median of its repeats and their range.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figure {
    /// `randread_qd1`, `randread_qd4`, `randread_qd32`, `seqread`, `seqwrite`, `syncwrite`.
    pub name: String,
    /// `iops` or `MiB/s`.
    pub unit: String,
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Figure {
    /// The repeats' range as a share of the median.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.high - self.low) / self.median
        } else {
            0.0
        }
    }
}

/// A device's measured limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceLimits {
    /// The block device (`vda`), its numbers and its model or driver: what makes two
    /// measurements the same device's.
    pub device: String,
    pub major: u32,
    pub minor: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_model: Option<String>,
    /// The directory measured in.
    pub dir: String,
    pub measured_at: String,
    /// fio ran at real-time priority (SCHED_FIFO); without it the synced-write figure is the
    /// scheduler's.
    pub realtime: bool,
    /// `fio --version`.
    pub fio: String,
    pub seconds_each: f64,
    pub repeats: u32,
    pub figures: Vec<Figure>,
    /// What a reader should know: a virtual disk the host caches, no real-time priority.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A virtual disk the host may cache: a step can pass these limits.
    #[serde(default)]
    pub virtual_disk: bool,
}

/// A figure whose repeats spread wider than this share of its median is soft.
const SOFT_SPREAD: f64 = 0.25;

impl DeviceLimits {
    /// The figure named `name`, if measured.
    pub fn get(&self, name: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.name == name)
    }

    /// True when `figure` is a soft limit: a virtual disk the host caches, or repeats that
    /// spread wide.
    pub fn soft(&self, figure: &Figure) -> bool {
        self.virtual_disk || figure.spread() > SOFT_SPREAD
    }

    /// The IOPS at queue depth `qd`, interpolated between the measured depths.
    pub fn iops_limit(&self, qd: f64) -> Option<f64> {
        let points: Vec<(f64, f64)> = [
            (1.0, "randread_qd1"),
            (4.0, "randread_qd4"),
            (32.0, "randread_qd32"),
        ]
        .iter()
        .filter_map(|&(d, name)| Some((f64::log2(d), self.get(name)?.median)))
        .collect();
        let x = qd.max(1.0).log2();
        let (first, last) = (points.first()?, points.last()?);
        if x <= first.0 {
            return Some(first.1);
        }
        if x >= last.0 {
            return Some(last.1);
        }
        points.windows(2).find_map(|w| {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            (x >= x0 && x <= x1).then(|| y0 + (y1 - y0) * (x - x0) / (x1 - x0))
        })
    }
}
