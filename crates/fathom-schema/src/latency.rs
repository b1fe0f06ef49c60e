//! Latency percentiles as results keep them: what a step's or an interval's histogram says.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency percentiles in microseconds, as the reports print them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    /// The fastest operation (sysbench's `min`).
    #[serde(default)]
    pub min: f64,
    /// LinkBench prints it.
    #[serde(default)]
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    /// TPC-C's response-time constraint is on it.
    #[serde(default)]
    pub p90: f64,
    /// sysbench's default percentile.
    #[serde(default)]
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Latency {
    /// Percentiles of a nanosecond histogram, converted to microseconds; all zero when empty.
    pub fn of(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            min: us(h.min()),
            p25: us(h.value_at_quantile(0.25)),
            p50: us(h.value_at_quantile(0.50)),
            p75: us(h.value_at_quantile(0.75)),
            p90: us(h.value_at_quantile(0.90)),
            p95: us(h.value_at_quantile(0.95)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            max: us(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}
