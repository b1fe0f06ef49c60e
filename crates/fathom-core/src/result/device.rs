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
