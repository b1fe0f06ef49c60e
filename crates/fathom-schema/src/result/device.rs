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
    /// The device profile these limits are (`gp3`), where a run imposed one rather than
    /// measuring the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The profile's service time where a layer imposed it: reads at any queue depth follow
    /// from it exactly, not from the figures at depths 1, 4 and 32.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceCurve>,
}

/// Reads a second at a queue depth under an imposed service time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceCurve {
    /// Each request's time, µs.
    pub service_us: f64,
    /// Requests served at once.
    pub depth: u32,
    /// The IOPS cap above the service time.
    pub read_iops: f64,
}

impl ServiceCurve {
    /// Reads a second `qd` requests in flight can make.
    pub fn iops(&self, qd: f64) -> f64 {
        let served = qd.max(1.0).min(f64::from(self.depth.max(1))) * 1e6 / self.service_us;
        served.min(self.read_iops)
    }
}

/// What a step's use of a device limit is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Used {
    /// Read requests a second.
    Reads,
    /// MiB read a second.
    Read,
    /// MiB written a second.
    Written,
}

/// A step's use of one device limit.
#[derive(Clone, Debug)]
pub struct DeviceUse<'a> {
    pub what: Used,
    pub seen: f64,
    pub limit: f64,
    /// The limit's figure, where one holds it.
    pub figure: Option<&'a Figure>,
}

impl DeviceUse<'_> {
    /// The use as a share of the limit.
    pub fn share(&self) -> f64 {
        if self.limit > 0.0 {
            self.seen / self.limit
        } else {
            0.0
        }
    }
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

    /// How near a step came to each limit: random reads against the IOPS at its queue depth,
    /// read and written bandwidth against the sequential limits.
    pub fn uses(&self, h: &super::HostRates) -> Vec<DeviceUse<'_>> {
        let (rps, qd) = (h.rps.unwrap_or(0.0), h.aqu_sz.unwrap_or(1.0));
        let mut out = Vec::new();
        if let Some(limit) = self.iops_limit(qd) {
            let name = if qd < 2.0 {
                "randread_qd1"
            } else {
                "randread_qd4"
            };
            out.push(DeviceUse {
                what: Used::Reads,
                seen: rps,
                limit,
                figure: self.get(name),
            });
        }
        for (mibps, figure, what) in [
            (h.rmbps, "seqread", Used::Read),
            (h.wmbps, "seqwrite", Used::Written),
        ] {
            if let (Some(x), Some(f)) = (mibps, self.get(figure)) {
                out.push(DeviceUse {
                    what,
                    seen: x,
                    limit: f.median,
                    figure: Some(f),
                });
            }
        }
        out
    }

    /// The step's nearest approach to a limit, as a share of it (the step table's `dev%`).
    pub fn utilisation(&self, h: &super::HostRates) -> Option<f64> {
        (self.uses(h).iter())
            .map(DeviceUse::share)
            .max_by(f64::total_cmp)
    }

    /// The IOPS at queue depth `qd`: from the service time where one is imposed, else
    /// interpolated between the measured depths.
    pub fn iops_limit(&self, qd: f64) -> Option<f64> {
        if let Some(curve) = self.service.filter(|c| c.service_us > 0.0) {
            return Some(curve.iops(qd));
        }
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

/// A device a run is given in place of the one it is on (`--device`): the rates the kernel
/// holds the engine's IO to, and where they come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// `gp3`, or a profile file's `name`.
    pub name: String,
    /// Where the figures come from (a data sheet, a cloud's documentation).
    #[serde(default)]
    pub source: String,
    /// Reads a second (any size).
    pub read_iops: f64,
    /// Writes a second (any size).
    pub write_iops: f64,
    /// Read bandwidth, MiB a second.
    pub read_mibps: f64,
    /// Write bandwidth, MiB a second.
    pub write_mibps: f64,
    /// The device's own time for one request, µs: on a device of the run's own (`layer =
    /// loop`) each request is held this long by a layer of fathom's; recorded only on `group`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_us: Option<f64>,
    /// Requests the device serves at once (the service-time layer's queue depth; 64 if
    /// unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// How the profile was imposed (`--device-layer`); a run recorded before the choice
    /// existed was `group`.
    #[serde(default)]
    pub layer: DeviceLayer,
}

/// How a device profile is imposed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DeviceLayer {
    /// A blkio group of the run's on the data directory's disk: the engine's reads and synced
    /// writes are held; the kernel's writeback of dirty pages is counted, not held.
    #[default]
    Group,
    /// The data directory on a device of the run's own (ext4 in a loop device over an image
    /// beside it), held in the root blkio group: every request to it is held, writeback and
    /// the file system's journal included.
    Loop,
}

impl std::str::FromStr for DeviceLayer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "group" => Ok(DeviceLayer::Group),
            "loop" => Ok(DeviceLayer::Loop),
            other => Err(format!("`{other}`: expected `loop` or `group`")),
        }
    }
}

impl std::fmt::Display for DeviceLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceLayer::Group => "group",
            DeviceLayer::Loop => "loop",
        })
    }
}

impl DeviceProfile {
    /// The profile as the limits a step is judged against on `device` (a profile imposes the
    /// same rate at every queue depth). `flushes`: the device has a volatile write cache, so
    /// the kernel follows each synced write with a flush request, which the throttle counts
    /// as a write: synced writes then run at half the write IOPS.
    pub fn limits(&self, device: &str, major: u32, minor: u32, flushes: bool) -> DeviceLimits {
        // A synced write is the write and, with a write cache, its flush: each its own request
        // to the IOPS cap and, where a service time is imposed, to the service time.
        let requests = if flushes { 2.0 } else { 1.0 };
        let served = |depth: f64, requests: f64| match self.imposed_service_us() {
            Some(us) if us > 0.0 => depth.min(f64::from(self.depth())) * 1e6 / (us * requests),
            _ => f64::INFINITY,
        };
        let synced = (self.write_iops / requests).min(served(1.0, requests));
        let read_at = |depth: f64| self.read_iops.min(served(depth, 1.0));
        let figure = |name: &str, unit: &str, x: f64| Figure {
            name: name.into(),
            unit: unit.into(),
            median: x,
            low: x,
            high: x,
        };
        DeviceLimits {
            device: device.into(),
            major,
            minor,
            figures: vec![
                figure("randread_qd1", "iops", read_at(1.0)),
                figure("randread_qd4", "iops", read_at(4.0)),
                figure("randread_qd32", "iops", read_at(32.0)),
                figure("seqread", "MiB/s", self.read_mibps),
                figure("seqwrite", "MiB/s", self.write_mibps),
                figure("syncwrite", "iops", synced),
            ],
            notes: vec![format!(
                "the limits of device profile {}, imposed on {device} by the kernel{}",
                self.name,
                if self.imposed_service_us().is_some() {
                    " and by fathom's service-time layer (queue depth 1 and 4 at the service time)"
                } else {
                    ""
                }
            )],
            profile: Some(self.name.clone()),
            service: self.imposed_service_us().map(|service_us| ServiceCurve {
                service_us,
                depth: self.depth(),
                read_iops: self.read_iops,
            }),
            ..DeviceLimits::default()
        }
    }

    /// Requests served at once under the service time (64 unless the profile says).
    pub fn depth(&self) -> u32 {
        self.queue_depth.unwrap_or(64).max(1)
    }

    /// The service time each request is held, where the layer imposes it (`loop`).
    pub fn imposed_service_us(&self) -> Option<f64> {
        self.service_us.filter(|_| self.layer == DeviceLayer::Loop)
    }

    /// One line for a run's header: `gp3 (3000 read/3000 write IOPS, 125/125 MiB/s)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:.0} read/{:.0} write IOPS, {:.0}/{:.0} MiB/s{})",
            self.name,
            self.read_iops,
            self.write_iops,
            self.read_mibps,
            self.write_mibps,
            match (self.service_us, self.layer) {
                (None, _) => String::new(),
                (Some(u), DeviceLayer::Loop) => format!(
                    "; service time {u:.0} µs, {} requests at once",
                    self.depth()
                ),
                (Some(u), DeviceLayer::Group) => {
                    format!("; service time {u:.0} µs not imposed on the group layer")
                }
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(layer: DeviceLayer) -> DeviceProfile {
        DeviceProfile {
            name: "array".into(),
            read_iops: 1200.0,
            write_iops: 1200.0,
            read_mibps: 858.0,
            write_mibps: 858.0,
            service_us: Some(5000.0),
            layer,
            ..Default::default()
        }
    }

    fn at(l: &DeviceLimits, name: &str) -> f64 {
        l.figures.iter().find(|f| f.name == name).unwrap().median
    }

    /// An imposed service time limits what few requests in flight can do; the IOPS cap what
    /// many can; a synced write with a flush waits it out twice.
    #[test]
    fn a_service_time_limits_low_queue_depths() {
        let l = array(DeviceLayer::Loop).limits("loop0", 7, 0, true);
        let got: Vec<f64> = ["randread_qd1", "randread_qd4", "randread_qd32", "syncwrite"]
            .iter()
            .map(|n| at(&l, n))
            .collect();
        assert_eq!(got, [200.0, 800.0, 1200.0, 100.0]);
        // Between the figures' depths, the service time decides: 6.4 in flight are served
        // 1,280 a second, above the cap.
        assert_eq!(l.iops_limit(6.4), Some(1200.0));
        assert_eq!(l.iops_limit(2.0), Some(400.0));
        let mut shallow = array(DeviceLayer::Loop);
        shallow.queue_depth = Some(2);
        assert_eq!(
            at(&shallow.limits("loop0", 7, 0, false), "randread_qd32"),
            400.0
        );
    }

    /// On the group layer the service time is recorded, not imposed: the caps alone.
    #[test]
    fn the_group_layer_imposes_no_service_time() {
        let l = array(DeviceLayer::Group).limits("vda", 254, 0, true);
        assert_eq!(at(&l, "randread_qd1"), 1200.0);
        assert_eq!(at(&l, "syncwrite"), 600.0);
        assert!(array(DeviceLayer::Group).describe().contains("not imposed"));
    }
}
