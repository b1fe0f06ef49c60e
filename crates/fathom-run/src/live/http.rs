//! The live figures' two ways out: a thread answering `GET /metrics` on the `--metrics`
//! address (HTTP/1.1, a connection per request), and a thread pushing the latest text to a
//! Pushgateway (`--metrics-push`), both written on the standard library's sockets.

use super::{text, State};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The thread that answers scrapes, until dropped.
pub(super) struct Server {
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Server {
    pub(super) fn start(addr: &str, state: Arc<Mutex<State>>) -> anyhow::Result<Server> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| anyhow::anyhow!("--metrics {addr}: cannot listen there: {e}"))?;
        let local = listener.local_addr()?;
        if addr.ends_with(":0") {
            eprintln!("fathom: serving metrics at http://{local}/metrics");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("fathom:metrics".into())
            .spawn(move || {
                fathom_measure::sample::threads::mark(
                    fathom_measure::sample::threads::Whose::Harness,
                );
                for conn in listener.incoming() {
                    if stopping.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(c) = conn {
                        let body = text(&state.lock().unwrap_or_else(|p| p.into_inner()));
                        answer(c, &body);
                    }
                }
            })?;
        Ok(Server { stop, addr: local })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accepting thread, which then lets go of the address.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Answers one HTTP request: the figures at `/metrics`, else 404.
fn answer(mut c: TcpStream, body: &str) {
    let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16384 {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&request);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (status, body, kind) = if path == "/metrics" || path.starts_with("/metrics?") {
        ("200 OK", body, "text/plain; version=0.0.4; charset=utf-8")
    } else {
        (
            "404 Not Found",
            "fathom serves /metrics\n",
            "text/plain; charset=utf-8",
        )
    };
    let _ = write!(
        c,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// The thread that pushes the latest figures to a Pushgateway at `url`, one push at a time
/// (a slow gateway skips figures rather than slowing the run).
pub(super) fn pusher(url: &str) -> anyhow::Result<Sender<String>> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        anyhow::anyhow!("--metrics-push {url}: expected an http:// URL (a Pushgateway)")
    })?;
    let (host, base) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_string();
    let instance = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let path = format!(
        "/{}metrics/job/fathom/instance/{instance}",
        if base.is_empty() {
            String::new()
        } else {
            format!("{}/", base.trim_end_matches('/'))
        }
    );
    let (tx, rx) = channel::<String>();
    std::thread::Builder::new()
        .name("fathom:push".into())
        .spawn(move || {
            fathom_measure::sample::threads::mark(fathom_measure::sample::threads::Whose::Harness);
            let mut said = false;
            while let Ok(mut body) = rx.recv() {
                // Only the latest figures matter.
                while let Ok(newer) = rx.try_recv() {
                    body = newer;
                }
                if let Err(e) = push(&host, &path, &body) {
                    if !said {
                        eprintln!("fathom: --metrics-push http://{host}{path}: {e}");
                        said = true;
                    }
                }
            }
        })?;
    Ok(tx)
}

/// One PUT of `body` to `path` on `host`; an error unless the gateway answers 2xx.
fn push(host: &str, path: &str, body: &str) -> std::io::Result<()> {
    let mut c = TcpStream::connect(host)?;
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        c,
        "PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = String::new();
    c.read_to_string(&mut answer)?;
    let status = answer.split_whitespace().nth(1).unwrap_or("");
    if status.starts_with('2') {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "the gateway answered {}",
            answer.lines().next().unwrap_or("nothing")
        )))
    }
}
