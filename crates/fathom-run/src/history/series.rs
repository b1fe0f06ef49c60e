//! What makes two runs points of one series: the same setup (name and settings, a setting
//! naming a process aside), client count, workload parameters (duration among them; the seed
//! aside) and machine: what the host is (CPU model, cores, memory, kernel, disk), not what it
//! is called, so a CI runner with a fresh name each night stays one series. Engine versions are
//! marks on the series' time axis (a regression that comes with a version bump is a change
//! within the series) unless asked to split them. A history by version has the setups and
//! versions as its axis (a release each, as seed 004's `8.5.3.buffered`), so there they split
//! nothing. A selection that mixes series is split, so a change in one series is judged among
//! its own runs rather than hidden in a mixture.

use super::{matches, Filter, Point};
use fathom_schema::group::{defining_params, NOT_DEFINING_SETTINGS};
use fathom_schema::result::{HostFacts, RunManifest};
use fathom_stats::changepoint::Change;
use std::collections::BTreeMap;

/// Everything that defines a run's series, as text to compare and print; two keys are equal
/// when their dimensions are (the host's name and the parameters' map aside).
#[derive(Clone, Debug)]
pub struct SeriesKey {
    pub setup: String,
    pub settings: String,
    pub clients: usize,
    pub params: String,
    pub host: String,
    pub version: String,
    /// The parameters themselves, for `--param`.
    params_map: BTreeMap<String, String>,
    hostname: String,
}

fn pairs(map: &BTreeMap<String, String>) -> String {
    let text: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    text.join(",")
}

/// What a host is, for a series: its CPU model, cores, memory (to the GiB), kernel and the
/// data directory's disk. Two machines alike in these are one series' points.
pub fn machine(h: &HostFacts) -> String {
    format!(
        "{}, {} cores, {} GiB, kernel {}, {}",
        h.cpu_model.as_deref().unwrap_or("-"),
        h.cores,
        (h.memory_bytes as f64 / (1u64 << 30) as f64).round(),
        h.kernel,
        h.disk_model
            .as_deref()
            .or(h.device.as_deref())
            .unwrap_or("-")
    )
}

impl SeriesKey {
    /// The key of `run`; `by_version` leaves setup, settings and version out, and the version
    /// is in it only with `split_version`.
    pub fn of(run: &RunManifest, by_version: bool, split_version: bool) -> SeriesKey {
        let params = defining_params(run);
        let mut settings = run.setup.settings.clone();
        settings.retain(|k, _| !NOT_DEFINING_SETTINGS.contains(&k.as_str()));
        let h = &run.host;
        SeriesKey {
            setup: if by_version {
                String::new()
            } else {
                run.setup.name.clone()
            },
            settings: if by_version {
                String::new()
            } else {
                pairs(&settings)
            },
            clients: run.clients,
            params: pairs(&params),
            host: machine(h),
            version: if by_version || !split_version {
                String::new()
            } else {
                run.setup.engine_version.clone()
            },
            params_map: params,
            hostname: h.hostname.clone(),
        }
    }

    /// The dimensions that define the series, for comparing keys.
    fn defining(&self) -> (&str, &str, usize, &str, &str, &str) {
        (
            &self.setup,
            &self.settings,
            self.clients,
            &self.params,
            &self.host,
            &self.version,
        )
    }

    /// Whether `filter`'s --clients, --param and --host keep this run.
    pub fn selected(&self, filter: &Filter) -> bool {
        filter.clients.is_none_or(|c| c == self.clients)
            && filter
                .params
                .iter()
                .all(|(k, v)| self.params_map.get(k) == Some(v))
            && filter
                .host
                .as_ref()
                .is_none_or(|p| matches(p, &self.hostname))
    }

    /// Each dimension by name, with this key's value.
    fn dimensions(&self) -> [(&'static str, String); 6] {
        [
            ("setup", self.setup.clone()),
            ("settings", self.settings.clone()),
            ("clients", self.clients.to_string()),
            ("params", self.params.clone()),
            ("host", self.host.clone()),
            ("version", self.version.clone()),
        ]
    }

    /// The dimensions in which `keys` differ, in the order `dimensions` lists them; where
    /// their parameters differ, each parameter that does, by its name (`num_keys`), rather
    /// than the whole parameter string.
    pub fn varying<'a>(keys: impl Iterator<Item = &'a SeriesKey> + Clone) -> Vec<String> {
        let first = keys.clone().next().map(SeriesKey::dimensions);
        let Some(first) = first else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for d in
            (0..first.len()).filter(|&d| keys.clone().any(|k| k.dimensions()[d].1 != first[d].1))
        {
            if first[d].0 != "params" {
                out.push(first[d].0.to_string());
                continue;
            }
            let names: std::collections::BTreeSet<&String> =
                keys.clone().flat_map(|k| k.params_map.keys()).collect();
            let base = keys.clone().next().map(|k| &k.params_map);
            out.extend(
                names
                    .into_iter()
                    .filter(|n| {
                        keys.clone()
                            .any(|k| k.params_map.get(*n) != base.and_then(|b| b.get(*n)))
                    })
                    .map(|n| format!("{PARAM}{n}")),
            );
        }
        out
    }

    /// This key's value of one dimension (as `varying` names it): a parameter's value, `-`
    /// where the key has none.
    pub fn value(&self, dimension: &str) -> String {
        if let Some(name) = dimension.strip_prefix(PARAM) {
            return self
                .params_map
                .get(name)
                .cloned()
                .unwrap_or_else(|| "-".into());
        }
        self.dimensions()
            .into_iter()
            .find(|(name, _)| *name == dimension)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    /// A dimension as a column's name: a parameter by its own name.
    pub fn heading(dimension: &str) -> &str {
        dimension.strip_prefix(PARAM).unwrap_or(dimension)
    }

    /// This key's values of the dimensions `varies` names: `clients 8, num_keys=1000`.
    pub fn describe(&self, varies: &[String]) -> String {
        let parts: Vec<String> = varies
            .iter()
            .map(|d| match d.strip_prefix(PARAM) {
                Some(name) => format!("{name}={}", self.value(d)),
                None => format!("{d} {}", self.value(d)),
            })
            .collect();
        parts.join(", ")
    }
}

/// How `varying` names one parameter.
const PARAM: &str = "param:";

impl PartialEq for SeriesKey {
    fn eq(&self, other: &SeriesKey) -> bool {
        self.defining() == other.defining()
    }
}

impl Eq for SeriesKey {}

/// One series: runs alike in everything that defines them, in the history's order.
pub struct Series {
    pub key: SeriesKey,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

impl Series {
    /// The points split by their keys, each series in the points' order; series in the order
    /// of their first point.
    pub fn split(points: Vec<Point>) -> Vec<Series> {
        let mut out: Vec<Series> = Vec::new();
        for p in points {
            match out.iter_mut().find(|s| s.key == p.key) {
                Some(s) => s.points.push(p),
                None => out.push(Series {
                    key: p.key.clone(),
                    points: vec![p],
                    changes: Vec::new(),
                }),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two CI runners of one kind under fresh names, an attached server's pid and a new engine
    /// version: one series. Another CPU model, more memory, or a version split on request: two.
    #[test]
    fn a_series_follows_the_machine_not_its_name() {
        let run = |hostname: &str, pid: &str, version: &str| {
            let mut m = RunManifest::default();
            m.host.hostname = hostname.into();
            m.host.cpu_model = Some("AMD EPYC".into());
            m.host.cores = 2;
            m.host.memory_bytes = 25_276_514_304;
            m.host.kernel = "6.1.0".into();
            m.setup.settings.insert("pid".into(), pid.into());
            m.setup.settings.insert("cache_size".into(), "1g".into());
            m.setup.engine_version = version.into();
            m
        };
        let key = |m: &RunManifest| SeriesKey::of(m, false, false);
        let a = run("runner-7f3a", "101", "8.0.0");
        let mut b = run("runner-c91e", "2202", "8.1.0");
        b.host.memory_bytes -= 4096;
        assert_eq!(key(&a), key(&b));
        assert_eq!(
            machine(&a.host),
            "AMD EPYC, 2 cores, 24 GiB, kernel 6.1.0, -"
        );
        assert_ne!(
            SeriesKey::of(&a, false, true),
            SeriesKey::of(&b, false, true)
        );
        let mut c = run("runner-7f3a", "101", "8.0.0");
        c.host.cpu_model = Some("Intel Xeon".into());
        assert_ne!(key(&a), key(&c));
        c.host.cpu_model = a.host.cpu_model.clone();
        c.host.memory_bytes *= 2;
        assert_ne!(key(&a), key(&c));
    }

    /// Series that differ in one parameter of many are named by it, not by the whole string.
    #[test]
    fn series_are_named_by_the_parameter_that_differs() {
        let run = |keys: &str| {
            let mut m = RunManifest::default();
            for (k, v) in [("steps", "fillseq,readrandom"), ("value_size", "400")] {
                m.params.insert(k.into(), v.into());
            }
            m.params.insert("num_keys".into(), keys.into());
            m.clients = 4;
            SeriesKey::of(&m, false, false)
        };
        let (a, b) = (run("1000"), run("2000"));
        let varies = SeriesKey::varying([&a, &b].into_iter());
        assert_eq!(varies, vec!["param:num_keys".to_string()]);
        assert_eq!(a.describe(&varies), "num_keys=1000");
        assert_eq!(SeriesKey::heading(&varies[0]), "num_keys");
        assert_eq!(b.value(&varies[0]), "2000");
    }
}
