//! What makes two runs points of one series: the same setup (name and settings), client
//! count, workload parameters (duration among them; the seed aside), host and engine version.
//! A history by version has the setups and versions as its axis (a release each, as seed
//! 004's `8.5.3.buffered`), so there they split nothing. A selection that mixes them is split, so a change
//! in one series is judged among its own runs rather than hidden in a mixture.

use super::{matches, Filter, Point};
use fathom_core::changepoint::Change;
use fathom_core::result::RunManifest;
use std::collections::BTreeMap;

/// Parameters that vary from run to run without changing what is measured.
const NOT_DEFINING: &[&str] = &["seed"];

/// Everything that defines a run's series, as text to compare and print.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
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

impl SeriesKey {
    /// The key of `run`; `by_version` leaves setup, settings and version out.
    pub fn of(run: &RunManifest, by_version: bool) -> SeriesKey {
        let mut params = run.params.clone();
        params.retain(|k, _| !NOT_DEFINING.contains(&k.as_str()));
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
                pairs(&run.setup.settings)
            },
            clients: run.clients,
            params: pairs(&params),
            host: format!(
                "{} ({}, {} cores)",
                h.hostname,
                h.cpu_model.as_deref().unwrap_or("-"),
                h.cores
            ),
            version: if by_version {
                String::new()
            } else {
                run.setup.engine_version.clone()
            },
            params_map: params,
            hostname: h.hostname.clone(),
        }
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

    /// The dimensions in which `keys` differ, in the order `dimensions` lists them.
    pub fn varying<'a>(keys: impl Iterator<Item = &'a SeriesKey> + Clone) -> Vec<&'static str> {
        let first = keys.clone().next().map(SeriesKey::dimensions);
        let Some(first) = first else {
            return Vec::new();
        };
        (0..first.len())
            .filter(|&d| keys.clone().any(|k| k.dimensions()[d].1 != first[d].1))
            .map(|d| first[d].0)
            .collect()
    }

    /// This key's value of one dimension (as `varying` names it).
    pub fn value(&self, dimension: &str) -> String {
        self.dimensions()
            .into_iter()
            .find(|(name, _)| *name == dimension)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    /// This key's values of the dimensions `varies` names: `clients 8, params num_keys=1000`.
    pub fn describe(&self, varies: &[&str]) -> String {
        let parts: Vec<String> = self
            .dimensions()
            .into_iter()
            .filter(|(name, _)| varies.contains(name))
            .map(|(name, value)| format!("{name} {value}"))
            .collect();
        parts.join(", ")
    }
}

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
