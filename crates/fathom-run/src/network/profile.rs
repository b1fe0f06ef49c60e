//! The network profiles `--network` takes: bundled ones by name (the unix socket runs always
//! used, loopback TCP, a cloud's zones, a wide-area link), or a TOML file of the user's own,
//! checked key by key before anything runs. docs/network.md lists them with their sources.

use fathom_schema::result::network::NetworkProfile;
use std::path::Path;

/// A bundled profile: its name, its figures and where they come from.
struct Bundled {
    name: &'static str,
    tcp: bool,
    namespace: bool,
    rtt_us: f64,
    jitter_us: f64,
    mbit: Option<f64>,
    source: &'static str,
}

const BUNDLED: &[Bundled] = &[
    Bundled {
        name: "unix",
        tcp: false,
        namespace: false,
        rtt_us: 0.0,
        jitter_us: 0.0,
        mbit: None,
        source: "the server's unix socket on this host, as every run without --network",
    },
    Bundled {
        name: "loopback-tcp",
        tcp: true,
        namespace: false,
        rtt_us: 0.0,
        jitter_us: 0.0,
        mbit: None,
        source: "TCP over this host's loopback interface (127.0.0.1), no delay added",
    },
    Bundled {
        name: "namespace",
        tcp: true,
        namespace: true,
        rtt_us: 0.0,
        jitter_us: 0.0,
        mbit: None,
        source: "the server in a network namespace of its own, its clients reaching it over a \
                 veth pair: a host of its own as the kernel's network stack sees it, no delay \
                 added (root)",
    },
    Bundled {
        name: "same-az",
        tcp: true,
        namespace: false,
        rtt_us: 150.0,
        jitter_us: 10.0,
        mbit: None,
        source: "two hosts in one cloud availability zone: round trips of about 0.1 to 0.2 ms \
                 between instances with enhanced networking, as measured and published by \
                 cloud users; the middle taken",
    },
    Bundled {
        name: "cross-az",
        tcp: true,
        namespace: false,
        rtt_us: 750.0,
        jitter_us: 50.0,
        mbit: None,
        source: "two availability zones of one cloud region: AWS places a region's zones \
                 within about 100 km of each other with single-digit millisecond latency; \
                 round trips of 0.5 to 1 ms are what users measure; the middle taken",
    },
    Bundled {
        name: "wan",
        tcp: true,
        namespace: false,
        rtt_us: 30_000.0,
        jitter_us: 1_000.0,
        mbit: Some(100.0),
        source: "a wide-area link between two sites of one continent: a 30 ms round trip (light \
                 in fibre covers about 200 km a millisecond, so some 3,000 km each way with \
                 routing) held to 100 Mbit/s each way",
    },
];

impl Bundled {
    fn profile(&self) -> NetworkProfile {
        NetworkProfile {
            name: self.name.into(),
            source: self.source.split_whitespace().collect::<Vec<_>>().join(" "),
            tcp: self.tcp,
            namespace: self.namespace,
            rtt_us: self.rtt_us,
            jitter_us: self.jitter_us,
            mbit: self.mbit,
        }
    }
}

/// The bundled profiles, for `fathom networks` and the docs.
pub fn bundled() -> Vec<NetworkProfile> {
    BUNDLED.iter().map(Bundled::profile).collect()
}

/// The longest round trip a profile may ask for, ms: beyond it a step's operations would be
/// too few to measure (and no network on Earth is slower than a geostationary hop, ~600 ms).
const MAX_RTT_MS: f64 = 2_000.0;
/// The highest bandwidth a profile may cap at, Mbit/s: the relay copies every byte, so a cap
/// above what it can copy would not hold.
const MAX_MBIT: f64 = 10_000.0;

/// A profile file as written: every figure optional here, so a missing one is named.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Option<String>,
    #[serde(default)]
    source: String,
    rtt_ms: Option<f64>,
    #[serde(default)]
    jitter_ms: f64,
    mbit: Option<f64>,
    #[serde(default)]
    namespace: bool,
}

/// The bundled profile `name` (one of `BUNDLED`'s).
pub fn bundled_named(name: &str) -> NetworkProfile {
    let b = BUNDLED.iter().find(|b| b.name == name);
    b.expect("a bundled profile's name").profile()
}

/// The profile `given` names: a bundled profile's name, or a TOML file (relative to `base`).
/// `key` is how errors name where it was given (`--network`, `setup[0].network`).
pub fn find(given: &str, base: &Path, key: &str) -> anyhow::Result<NetworkProfile> {
    let names: Vec<&str> = BUNDLED.iter().map(|b| b.name).collect();
    crate::named::bundled_or_file(
        (given, base, key),
        (
            "network profile",
            &names,
            "name, rtt_ms and optionally jitter_ms, mbit, namespace and source; see \
             docs/network.md",
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
fn parse(text: &str, file: &str, key: &str) -> anyhow::Result<NetworkProfile> {
    let f: ProfileFile =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{key}: {file}: {}", e.message()))?;
    let name = f.name.filter(|n| !n.trim().is_empty()).ok_or_else(|| {
        anyhow::anyhow!("{key}: {file}: `name` is missing: expected the profile's name")
    })?;
    let rtt = match f.rtt_ms {
        Some(r) if (0.0..=MAX_RTT_MS).contains(&r) => r,
        Some(r) => anyhow::bail!(
            "{key}: {file}: `rtt_ms` is {r}: expected a round trip in milliseconds, 0 to \
             {MAX_RTT_MS}"
        ),
        None => anyhow::bail!(
            "{key}: {file}: `rtt_ms` is missing: expected the round trip in milliseconds (0 \
             for none)"
        ),
    };
    let jitter = f.jitter_ms;
    if !(0.0..=rtt / 2.0).contains(&jitter) {
        anyhow::bail!(
            "{key}: {file}: `jitter_ms` is {jitter}: expected 0 to half the round trip ({}): \
             a one-way delay cannot go below zero",
            rtt / 2.0
        );
    }
    if let Some(m) = f
        .mbit
        .filter(|m| !(m.is_finite() && *m >= 0.1 && *m <= MAX_MBIT))
    {
        anyhow::bail!(
            "{key}: {file}: `mbit` is {m}: expected a bandwidth of 0.1 to {MAX_MBIT} Mbit/s"
        );
    }
    Ok(NetworkProfile {
        name,
        source: f.source,
        tcp: true,
        namespace: f.namespace,
        rtt_us: rtt * 1000.0,
        jitter_us: jitter * 1000.0,
        mbit: f.mbit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name = \"dc\"\nrtt_ms = 0.4\njitter_ms = 0.05\nmbit = 1000\n";

    #[test]
    fn finds_a_bundled_profile_by_name() {
        let p = find("same-az", Path::new("."), "--network").unwrap();
        assert!(p.tcp && p.relayed() && p.rtt_us == 150.0, "{p:?}");
        let unix = find("unix", Path::new("."), "--network").unwrap();
        assert!(!unix.tcp && !unix.relayed());
        let ns = find("namespace", Path::new("."), "--network").unwrap();
        assert!(ns.tcp && ns.namespace && !ns.relayed(), "{ns:?}");
        for b in bundled() {
            assert!(
                !b.source.is_empty() && b.jitter_us <= b.rtt_us / 2.0,
                "{b:?}"
            );
        }
    }

    #[test]
    fn reads_a_profile_file() {
        let p = parse(GOOD, "dc.toml", "--network").unwrap();
        assert_eq!(p.name, "dc");
        assert_eq!((p.rtt_us, p.jitter_us, p.mbit), (400.0, 50.0, Some(1000.0)));
        assert!(p.tcp && p.relayed() && !p.namespace);
        let p = parse(&format!("{GOOD}namespace = true\n"), "dc.toml", "--network").unwrap();
        assert!(p.namespace && p.relayed());
    }

    /// Each bad input names the file, the key and what was expected.
    #[test]
    fn refuses_an_impossible_profile_naming_the_key() {
        let err = |text: &str| parse(text, "p.toml", "--network").unwrap_err().to_string();
        let e = err(&GOOD.replace("rtt_ms = 0.4", "rtt_ms = -1"));
        assert!(e.contains("p.toml") && e.contains("`rtt_ms` is -1"), "{e}");
        let e = err(&GOOD.replace("rtt_ms = 0.4", "rtt_ms = 5000"));
        assert!(e.contains("0 to 2000"), "{e}");
        let e = err(&GOOD.replace("jitter_ms = 0.05", "jitter_ms = 0.3"));
        assert!(
            e.contains("`jitter_ms` is 0.3") && e.contains("below zero"),
            "{e}"
        );
        let e = err(&GOOD.replace("mbit = 1000", "mbit = 0"));
        assert!(e.contains("`mbit` is 0"), "{e}");
        let e = err(&GOOD.replace("rtt_ms = 0.4\n", ""));
        assert!(e.contains("`rtt_ms` is missing"), "{e}");
        let e = err(&format!("{GOOD}delay = 3\n"));
        assert!(e.contains("p.toml") && e.contains("delay"), "{e}");
        let e = find("lan", Path::new("."), "setup[0].network")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("setup[0].network") && e.contains("same-az"),
            "{e}"
        );
    }
}
