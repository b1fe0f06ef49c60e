//! What each step's operations cost on the network its clients reached the server over
//! (`--network`): round trips and bytes an operation, the path's measured round trip, the
//! wire's time and the server's own against the whole operation, and the delay relay's own CPU.

use crate::section::{Input, Section, Titled};
use fathom_schema::table::{Cell, Style, Table};

const COLUMNS: &[&str] = &[
    "step",
    "network",
    "rt/o",
    "sentB/o",
    "recvB/o",
    "rtt µs",
    "wire µs/o",
    "server µs/o",
    "op µs",
    "wire%",
    "server%",
    "relay µs/o",
    "setup",
];

const LEGEND: &str = "\
network: the profile the clients reached the server over (--network; fathom networks lists them);\n\
rt/o: round trips an operation (a request written, then its answer read, at the clients' sockets);\n\
sentB/o, recvB/o: bytes the clients sent and received an operation; rtt µs: the path's round trip,\n\
as the step's traffic found it (the relay's mean hold each way, plus its loopback hops); wire µs/o:\n\
rt/o x rtt; server µs/o: the server's own time on the statements an operation (its sessions' time\n\
running them: PostgreSQL's active_time, MariaDB's Busy_time); op µs: the clients' time an operation\n\
(usec_op); wire%, server%: the wire's and the server's shares of it (the rest is the clients' own\n\
and the kernel's); relay µs/o: the delay relay's own CPU an operation, in no other column.\n";

/// The network table, when any step ran over a profile.
pub fn section(input: &Input) -> anyhow::Result<Vec<Section>> {
    let mut table = Table::new(COLUMNS);
    for (step, setup, m) in super::step_medians(input) {
        let Some(n) = &m.network else {
            continue;
        };
        let share = |t: Option<f64>| t.map(|t| 100.0 * t / m.usec_op.max(1e-9));
        table.push(vec![
            Cell::text(step),
            Cell::text(n.profile.as_str()),
            Cell::styled(Some(n.round_trips_per_op), Style::Fixed(2)),
            Cell::num(n.sent_bytes_per_op),
            Cell::num(n.received_bytes_per_op),
            Cell::opt(n.rtt_us),
            Cell::opt(n.wire_us_per_op),
            Cell::opt(n.server_us_per_op),
            Cell::num(m.usec_op),
            Cell::styled(share(n.wire_us_per_op), Style::Percent),
            Cell::styled(share(n.server_us_per_op), Style::Percent),
            Cell::opt(n.relay_cpu_us_per_op),
            Cell::text(setup),
        ]);
    }
    if table.rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut section = Section::new("The network, per operation");
    section.tables.push(Titled {
        title: "network".into(),
        table,
    });
    section.legend = Some(LEGEND);
    Ok(vec![section])
}
