//! The network a run's clients reach their server over (`--network`) and what each step's
//! operations cost on it, as results keep them.

use serde::{Deserialize, Serialize};

/// A network profile: how the clients reach a server fathom starts, and the round trip,
/// jitter and bandwidth a delay relay holds the path to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkProfile {
    /// `unix`, `loopback-tcp`, `same-az`, or a profile file's `name`.
    pub name: String,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
    /// Over TCP (`false`: the server's unix socket, as runs always were).
    pub tcp: bool,
    /// The server in a network namespace of its own, reached over a veth pair.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespace: bool,
    /// The round trip the relay adds up to, µs (0: no relay).
    #[serde(default)]
    pub rtt_us: f64,
    /// Each one-way delay varies uniformly by up to this, µs (order kept).
    #[serde(default)]
    pub jitter_us: f64,
    /// The path's bandwidth each way, Mbit/s (10^6 bits); none for no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mbit: Option<f64>,
}

impl NetworkProfile {
    /// Whether the path goes through fathom's delay relay.
    pub fn relayed(&self) -> bool {
        self.rtt_us > 0.0 || self.mbit.is_some()
    }

    /// The profile in a few words: `same-az (TCP, round trip 0.15 ms ± 0.01 ms)`.
    pub fn describe(&self) -> String {
        let shape = match (self.tcp, self.relayed()) {
            (false, _) => "the server's unix socket".to_string(),
            (true, false) => format!("TCP{}, no delay added", self.veth()),
            (true, true) => format!(
                "TCP{}, round trip {} ms ± {} ms{}",
                self.veth(),
                self.rtt_us / 1000.0,
                self.jitter_us / 1000.0,
                self.mbit
                    .map(|m| format!(", {m} Mbit/s each way"))
                    .unwrap_or_default()
            ),
        };
        format!("{} ({shape})", self.name)
    }

    fn veth(&self) -> &'static str {
        if self.namespace {
            " to a namespace over a veth pair"
        } else {
            ""
        }
    }
}

/// What a step's operations cost on the network, counted at the clients' socket calls (fathom's
/// own protocol clients), with the relay's measured round trip and CPU where there is one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkFigures {
    /// The profile's name.
    pub profile: String,
    /// Requests answered an operation: a write (or several) followed by a read.
    pub round_trips_per_op: f64,
    /// Bytes the clients sent an operation.
    pub sent_bytes_per_op: f64,
    /// Bytes the clients received an operation.
    pub received_bytes_per_op: f64,
    /// The path's round trip as the step's own traffic found it, µs: the relay's mean hold of
    /// a chunk each way over the step, plus the loopback hops outside it (measured as the relay
    /// started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<f64>,
    /// The relay's own round trip with no delay, measured as it started, µs: taken off the
    /// delay it adds, so the path's round trip is the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_own_rtt_us: Option<f64>,
    /// The relay process's CPU an operation, µs: the delay layer's own cost, in no other
    /// figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_cpu_us_per_op: Option<f64>,
    /// Time on the wire an operation: round trips × the measured round trip, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire_us_per_op: Option<f64>,
    /// The server's own time on the step's statements an operation, µs: its sessions' time
    /// running them (PostgreSQL's `active_time`, MariaDB's `Busy_time`), over the operations.
    /// None when the server does not count it, or serves other hosts' clients too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_us_per_op: Option<f64>,
    /// The busier direction's bytes a second against the profile's bandwidth (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_used: Option<f64>,
}
