//! `--metrics` and `--metrics-push` while runs go: a null-engine run scraped over HTTP during
//! its timed step and read with a Prometheus text-format parser (`prometheus-parse`), its pushes
//! caught by a Pushgateway stand-in; a run under a memory limit (a process of its own) served
//! the same; the address free again when fathom ends.

mod common;

use common::*;
use prometheus_parse::{Sample, Scrape, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP exchange: the request written, the whole answer read.
fn http(addr: &str, request: &str) -> Option<String> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    c.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// The body of `GET /metrics`, when fathom answers 200.
fn scrape(addr: &str) -> Option<String> {
    let a = http(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")?;
    let (head, body) = a.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

fn parse(text: &str) -> Vec<Sample> {
    Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .unwrap_or_else(|e| panic!("not Prometheus' text format ({e}):\n{text}"))
        .samples
}

fn value(s: &Sample) -> f64 {
    match s.value {
        Value::Gauge(v) | Value::Counter(v) | Value::Untyped(v) => v,
        ref other => panic!("{} is {other:?}", s.metric),
    }
}

/// Scrapes `addr` until a scrape shows `step`'s operations a second; its samples.
fn scraped_during(addr: &str, step: &str) -> Vec<Sample> {
    let mut seen = None;
    let found = wait_for(60, || {
        seen = scrape(addr).filter(|t| {
            t.contains("fathom_ops_per_second{") && t.contains(&format!("step=\"{step}\""))
        });
        seen.is_some()
    });
    assert!(found, "no scrape of {addr} showed {step}");
    parse(&seen.unwrap())
}

fn get<'a>(samples: &'a [Sample], metric: &str, labels: &[(&str, &str)]) -> &'a Sample {
    samples
        .iter()
        .find(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .unwrap_or_else(|| panic!("no {metric} {labels:?} in {samples:#?}"))
}

/// What a Pushgateway stand-in was sent: (request line, body) each.
type Pushed = Arc<Mutex<Vec<(String, String)>>>;

/// A Pushgateway stand-in: answers every request 200 and keeps what it was sent.
fn gateway() -> (String, Pushed) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let got = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&got);
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            // Headers, then as many bytes as Content-Length says.
            let body_at = loop {
                let n = c.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break None;
                }
                buf.extend_from_slice(&chunk[..n]);
                if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    break Some(i + 4);
                }
            };
            let Some(at) = body_at else { continue };
            let head = String::from_utf8_lossy(&buf[..at]).to_string();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            while buf.len() < at + len {
                let n = c.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = String::from_utf8_lossy(&buf[at..]).to_string();
            keep.lock()
                .unwrap()
                .push((head.lines().next().unwrap_or("").to_string(), body));
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (addr, got)
}

/// Starts `fathom run` of dbbench's fillseq and a 3 s readrandom with `args` (words) and
/// `more`, into `results`.
fn start_run(args: &str, more: &[&str], results: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args([
            "run",
            "--workload",
            "dbbench",
            "--param",
            "steps=fillseq,readrandom",
        ])
        .args(["--duration", "3s", "--no-calibrate"])
        .args(args.split_whitespace())
        .args(more)
        .arg("--results")
        .arg(results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_running_step_is_scraped_and_pushed() {
    let (gw, pushed) = gateway();
    let addr = format!("127.0.0.1:{}", free_port());
    let dir = scratch();
    let push = format!("http://{gw}");
    let child = start_run(
        "--engine null --param num_keys=1000",
        &["--metrics", &addr, "--metrics-push", &push],
        &dir.path().join("results"),
    );
    let samples = scraped_during(&addr, "readrandom");
    // Anything but /metrics is not found (asked while the step still runs).
    let other = http(&addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap_or_default();
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let labels = [("workload", "dbbench"), ("setup", "null"), ("clients", "2")];
    assert_eq!(value(get(&samples, "fathom_up", &labels)), 1.0);
    let step = [("step", "readrandom")];
    assert!(value(get(&samples, "fathom_ops_per_second", &step)) > 0.0);
    let p99 = get(
        &samples,
        "fathom_latency_microseconds",
        &[("kind", "all"), ("quantile", "0.99")],
    );
    assert!(value(p99) > 0.0, "{p99:?}");
    // A kind of its own beside `all`.
    assert!(samples
        .iter()
        .any(|s| s.metric == "fathom_latency_microseconds"
            && s.labels.get("kind").is_some_and(|k| k != "all")));
    assert!(value(get(&samples, "fathom_operations_total", &labels)) > 0.0);
    assert!(value(get(&samples, "fathom_host_cpu_cores", &step)) > 0.0);
    // The pushes: PUTs to the job's path, each in the same format.
    let pushed = pushed.lock().unwrap();
    assert!(!pushed.is_empty(), "nothing pushed");
    let (line, body) = pushed.last().unwrap();
    assert!(
        line.starts_with("PUT /metrics/job/fathom/instance/"),
        "{line}"
    );
    let last = parse(body);
    assert!(value(get(&last, "fathom_steps_finished_total", &labels)) >= 1.0);
    // fathom is gone, and so is its server.
    assert!(TcpListener::bind(&addr).is_ok(), "{addr} still held");
}

/// What `addr` served during `child`'s readrandom, once `child` finished well.
fn served_until_done(addr: &str, child: std::process::Child) -> Vec<Sample> {
    let samples = scraped_during(addr, "readrandom");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    samples
}

/// A run under a memory limit runs in a process of its own, which serves the address while it
/// runs (its supervisor lets go of it).
#[test]
fn a_run_in_a_process_of_its_own_is_served_too() {
    if !needs_root("a_run_in_a_process_of_its_own_is_served_too") {
        return;
    }
    let addr = format!("127.0.0.1:{}", free_port());
    let dir = scratch();
    let child = start_run(
        "--engine rocksdb --param num_keys=20000 --memory-limit 256m",
        &["--metrics", &addr],
        &dir.path().join("results"),
    );
    let samples = served_until_done(&addr, child);
    assert!(
        value(get(
            &samples,
            "fathom_ops_per_second",
            &[("setup", "rocksdb")]
        )) > 0.0
    );
    assert!(TcpListener::bind(&addr).is_ok(), "{addr} still held");
}

/// An experiment file's `metrics` key is `--metrics`: its runs are served, a run in a process
/// of its own (a setup's memory limit) by that process.
#[test]
fn an_experiment_files_metrics_key_serves_its_runs() {
    if !needs_root("an_experiment_files_metrics_key_serves_its_runs") {
        return;
    }
    let addr = format!("127.0.0.1:{}", free_port());
    let dir = scratch();
    let file = dir.path().join("live.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"live\"\nmetrics = \"{addr}\"\nduration = \"3s\"\n\
             [[setup]]\nname = \"null\"\nengine = \"null\"\nmemory_limit = \"256m\"\n\
             [[workload]]\nname = \"dbbench\"\nparams = {{ steps = \"fillseq,readrandom\", num_keys = 1000 }}\n"
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_fathom"))
        .arg("run")
        .arg(&file)
        .arg("--no-calibrate")
        .arg("--results")
        .arg(dir.path().join("results"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let samples = served_until_done(&addr, child);
    let step = [("step", "readrandom"), ("setup", "null")];
    assert!(value(get(&samples, "fathom_ops_per_second", &step)) > 0.0);
    assert!(TcpListener::bind(&addr).is_ok(), "{addr} still held");
}
