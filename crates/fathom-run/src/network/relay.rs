//! The delay relay `fathom relay` runs, in a process of its own so its CPU is apart from the
//! clients' and the server's: it takes the clients' TCP connections and copies each one's bytes
//! to the server and back, each chunk held for half the profile's round trip (with jitter,
//! order kept) and, with a bandwidth cap, for its time on a link shared by every connection.
//! This kernel has no `netem`, so the delay comes from user space; its own round trip is
//! measured as it starts and taken off the delay it adds.

use std::io::{BufRead, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// What the relay holds a path to.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The round trip the path should have, µs (the relay's own taken off).
    pub rtt_us: f64,
    pub jitter_us: f64,
    pub mbit: Option<f64>,
}

/// What the relay says once it is ready, on its standard output's first line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ready {
    /// Where clients connect.
    pub listen: SocketAddr,
    /// A one-byte echo behind the same delays.
    pub probe: SocketAddr,
    /// Where `stats` is answered with what the relay held (`Held`).
    pub control: SocketAddr,
    /// The relay's own round trip with no delay, µs.
    pub own_rtt_us: f64,
    /// The part of it outside the relay's hold: the four loopback hops and their wake-ups, µs.
    pub hops_us: f64,
}

impl Ready {
    pub fn line(&self) -> String {
        format!(
            "listen={} probe={} control={} own_rtt_us={:.1} hops_us={:.1}",
            self.listen, self.probe, self.control, self.own_rtt_us, self.hops_us
        )
    }

    pub fn parse(line: &str) -> Option<Ready> {
        let (mut listen, mut probe, mut control, mut own, mut hops) =
            (None, None, None, None, None);
        for word in line.split_whitespace() {
            match word.split_once('=')? {
                ("listen", v) => listen = v.parse().ok(),
                ("probe", v) => probe = v.parse().ok(),
                ("control", v) => control = v.parse().ok(),
                ("own_rtt_us", v) => own = v.parse().ok(),
                ("hops_us", v) => hops = v.parse().ok(),
                _ => {}
            }
        }
        Some(Ready {
            listen: listen?,
            probe: probe?,
            control: control?,
            own_rtt_us: own?,
            hops_us: hops?,
        })
    }
}

/// What the relay held, each way: chunks, and their time from read to written, ns, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    pub chunks: [u64; 2],
    pub ns: [u64; 2],
}

impl Held {
    fn line(&self) -> String {
        format!(
            "up_n={} up_ns={} down_n={} down_ns={}",
            self.chunks[0], self.ns[0], self.chunks[1], self.ns[1]
        )
    }

    fn parse(line: &str) -> Option<Held> {
        let mut h = Held::default();
        for word in line.split_whitespace() {
            let (k, v) = word.split_once('=')?;
            let v: u64 = v.parse().ok()?;
            match k {
                "up_n" => h.chunks[0] = v,
                "up_ns" => h.ns[0] = v,
                "down_n" => h.chunks[1] = v,
                "down_ns" => h.ns[1] = v,
                _ => {}
            }
        }
        Some(h)
    }

    /// The mean hold of a chunk each way since `before`, summed over the two ways, µs; None
    /// when a way carried nothing.
    pub fn round_trip_since(&self, before: &Held) -> Option<f64> {
        (0..2)
            .map(|w| {
                let n = self.chunks[w]
                    .checked_sub(before.chunks[w])
                    .filter(|n| *n > 0)?;
                Some(self.ns[w].saturating_sub(before.ns[w]) as f64 / n as f64 / 1000.0)
            })
            .sum()
    }
}

/// Asks the relay at `control` what it has held.
pub fn held(control: SocketAddr) -> std::io::Result<Held> {
    let mut s = TcpStream::connect(control)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(b"stats\n")?;
    let mut line = String::new();
    std::io::BufReader::new(s).read_line(&mut line)?;
    Held::parse(&line).ok_or_else(|| std::io::Error::other(format!("the relay said `{line}`")))
}

/// One direction of the path, shared by every connection: its delay, its link, and what it
/// held.
struct Link {
    /// The one-way delay, ns (set once the relay's own round trip is known).
    delay_ns: AtomicU64,
    jitter_ns: u64,
    /// A byte's time on the link, ns; 0 for no cap.
    ns_per_byte: f64,
    /// When the link is free again (a cap's queue).
    free_at: Mutex<Instant>,
    chunks: AtomicU64,
    held_ns: AtomicU64,
    /// How late chunks were written after they were due, ns, summed (early ones negative):
    /// the relay's own error, which `steer` takes off the delay.
    late_ns: AtomicI64,
}

impl Link {
    fn new(shape: &Shape) -> Link {
        Link {
            delay_ns: AtomicU64::new(0),
            jitter_ns: (shape.jitter_us * 1000.0) as u64,
            ns_per_byte: shape.mbit.map_or(0.0, |m| 8000.0 / m),
            free_at: Mutex::new(Instant::now()),
            chunks: AtomicU64::new(0),
            held_ns: AtomicU64::new(0),
            late_ns: AtomicI64::new(0),
        }
    }

    /// When `n` bytes read at `now` are due at the far end: after the link has carried them
    /// and the delay (± jitter) has passed, and not before the connection's previous chunk.
    fn due(&self, now: Instant, n: usize, after: Instant, seed: &mut u64) -> Instant {
        let sent = if self.ns_per_byte > 0.0 {
            let mut free = self.free_at.lock().unwrap_or_else(|p| p.into_inner());
            *free = (*free).max(now) + Duration::from_nanos((n as f64 * self.ns_per_byte) as u64);
            *free
        } else {
            now
        };
        let mut delay = self.delay_ns.load(Ordering::Relaxed) as i64;
        if self.jitter_ns > 0 {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            let j = (*seed % (2 * self.jitter_ns + 1)) as i64 - self.jitter_ns as i64;
            delay = (delay + j).max(0);
        }
        (sent + Duration::from_nanos(delay as u64)).max(after)
    }

    /// A chunk read at `read_at`, due at `due`, goes out `now`: its hold ends as its write
    /// starts (a write the far end's full buffer blocks is that end's slowness, not the
    /// path's).
    fn going(&self, read_at: Instant, due: Instant) {
        let now = Instant::now();
        self.chunks.fetch_add(1, Ordering::Relaxed);
        let held = now.saturating_duration_since(read_at).as_nanos() as u64;
        self.held_ns.fetch_add(held, Ordering::Relaxed);
        let late = match now.checked_duration_since(due) {
            Some(d) => d.as_nanos() as i64,
            None => -(due.duration_since(now).as_nanos() as i64),
        };
        self.late_ns.fetch_add(late, Ordering::Relaxed);
    }
}

/// How late the relay's sleeps wake, ns, a running mean: each sleep ends this much early.
static OVERSHOOT_NS: AtomicI64 = AtomicI64::new(50_000);
/// The most a sleep is cut short by, ns: a host so busy that its sleepers wake later than this
/// delays the path more than the profile says, which the measured round trip then shows.
const MAX_EARLY_NS: i64 = 200_000;

/// Sleeps until `due`, waking on average at it (the timer's usual lateness taken off). A chunk
/// due sooner than the lateness goes at once, and the estimate eases down, so one burst of
/// late wake-ups cannot leave the relay never sleeping.
fn sleep_until(due: Instant) {
    let old = OVERSHOOT_NS.load(Ordering::Relaxed).clamp(0, MAX_EARLY_NS);
    let now = Instant::now();
    let Some(wait) = due.checked_duration_since(now + Duration::from_nanos(old as u64)) else {
        OVERSHOOT_NS.store(old - old / 64, Ordering::Relaxed);
        return;
    };
    let target = now + wait;
    std::thread::sleep(wait);
    let late = Instant::now().saturating_duration_since(target).as_nanos() as i64;
    OVERSHOOT_NS.store(old + (late.min(MAX_EARLY_NS) - old) / 16, Ordering::Relaxed);
}

/// The path's two directions: to the server (0) and back (1), shared by every connection.
type Links = Arc<[Link; 2]>;

/// A chunk on its way: when it was read, when it is due, its bytes.
type Chunk = (Instant, Instant, Vec<u8>);

/// Copies `from`'s bytes to `to` along link `way`: a reader that stamps each chunk with when it
/// is due, and a writer that sleeps until then. Either side closing closes the other's half.
fn direction(mut from: TcpStream, mut to: TcpStream, links: Links, way: usize) {
    let (tx, rx) = mpsc::channel::<Chunk>();
    let writing = links.clone();
    let writer = std::thread::spawn(move || {
        for (read_at, due, bytes) in rx {
            sleep_until(due);
            writing[way].going(read_at, due);
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    let mut last = Instant::now();
    let mut seed = (buf.as_ptr() as u64) | 1;
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        let now = Instant::now();
        last = links[way].due(now, n, last, &mut seed);
        if tx.send((now, last, buf[..n].to_vec())).is_err() {
            break;
        }
    }
    drop(tx);
    let _ = writer.join();
    let _ = from.shutdown(Shutdown::Read);
}

/// Relays every connection `listener` takes to `upstream`, each in threads of its own.
fn accept(listener: TcpListener, upstream: SocketAddr, links: Links) {
    for conn in listener.incoming().flatten() {
        let links = links.clone();
        std::thread::spawn(move || {
            let Ok(server) = TcpStream::connect(upstream) else {
                return;
            };
            let _ = (conn.set_nodelay(true), server.set_nodelay(true));
            let (Ok(c2), Ok(s2)) = (conn.try_clone(), server.try_clone()) else {
                return;
            };
            let back_links = links.clone();
            let back = std::thread::spawn(move || direction(s2, c2, back_links, 1));
            direction(conn, server, links, 0);
            let _ = back.join();
        });
    }
}

/// Echoes every byte back: the far side of the probe path.
fn echo(listener: TcpListener) {
    for conn in listener.incoming().flatten() {
        std::thread::spawn(move || {
            let _ = conn.set_nodelay(true);
            let Ok(mut out) = conn.try_clone() else {
                return;
            };
            let mut conn = conn;
            let mut buf = [0u8; 4096];
            while let Ok(n) = conn.read(&mut buf) {
                if n == 0 || out.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
    }
}

/// The current counts of `links`.
fn held_of(links: &Links) -> Held {
    let get = |w: usize| {
        (
            links[w].chunks.load(Ordering::Relaxed),
            links[w].held_ns.load(Ordering::Relaxed),
        )
    };
    let (up, down) = (get(0), get(1));
    Held {
        chunks: [up.0, down.0],
        ns: [up.1, down.1],
    }
}

/// Answers `stats` on each connection with what `links` held.
fn control(listener: TcpListener, links: Links) {
    for conn in listener.incoming().flatten() {
        let Ok(mut out) = conn.try_clone() else {
            continue;
        };
        let mut line = String::new();
        if std::io::BufReader::new(conn).read_line(&mut line).is_ok() && line.trim() == "stats" {
            let _ = writeln!(out, "{}", held_of(&links).line());
        }
    }
}

/// The median round trip of `n` one-byte echoes through `probe` (the echo behind the path's
/// delays) on one connection, µs.
pub fn probe_rtt(probe: SocketAddr, n: usize) -> std::io::Result<f64> {
    let times = probe_times(probe, n)?;
    Ok(times.get(n / 2).copied().unwrap_or(0.0))
}

/// The round trips of `n` one-byte echoes through `probe`, least first, µs.
fn probe_times(probe: SocketAddr, n: usize) -> std::io::Result<Vec<f64>> {
    let mut times = Vec::with_capacity(n);
    echoes(probe, n, |rtt| times.push(rtt))?;
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// `n` one-byte echoes through `probe` on one connection, each round trip (µs) given to `each`.
fn echoes(probe: SocketAddr, n: usize, mut each: impl FnMut(f64)) -> std::io::Result<()> {
    let mut s = TcpStream::connect(probe)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut byte = [0u8; 1];
    for _ in 0..n {
        let t = Instant::now();
        s.write_all(b"p")?;
        s.read_exact(&mut byte)?;
        each(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(())
}

/// The median round trip of `n` echoes through `probe` and the median of their hops (each
/// echo's round trip less what `links` held it, both ways), µs. A chunk's hold is counted
/// before it is written, so an echo's two are counted by the time it returns.
fn calibration_echoes(probe: SocketAddr, links: &Links, n: usize) -> std::io::Result<(f64, f64)> {
    let (mut rtts, mut hops) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut before = held_of(links);
    echoes(probe, n, |rtt| {
        let after = held_of(links);
        let hold = after.round_trip_since(&before).unwrap_or(0.0);
        before = after;
        rtts.push(rtt);
        hops.push((rtt - hold).max(0.0));
    })?;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut rtts), median(&mut hops)))
}

/// `calibration_echoes` three times, the quietest kept (the least median round trip): each
/// echo's round trip less the relay's hold of its two chunks, so a moment of load lands in
/// both, in the hops or in the hold alone, and the medians leave out the echoes it lengthened.
fn quietest(probe: SocketAddr, links: &Links) -> std::io::Result<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    let mut failed = None;
    for _ in 0..3 {
        match calibration_echoes(probe, links, 100) {
            Ok(m) if best.is_none_or(|(o, _)| m.0 < o) => best = Some(m),
            Ok(_) => {}
            Err(e) => failed = Some(e),
        }
    }
    best.ok_or_else(|| failed.unwrap_or_else(|| std::io::Error::other("no probe")))
}

fn loopback() -> std::io::Result<TcpListener> {
    TcpListener::bind("127.0.0.1:0")
}

/// A relay at work in this process.
pub struct Running {
    pub ready: Ready,
    links: Links,
    rtt_us: f64,
    /// The hops calibration measured (µs, as f64 bits), which `steer` counts in.
    hops_bits: Arc<AtomicU64>,
    /// `steer` waits while the relay calibrates.
    paused: Arc<AtomicBool>,
}

impl Running {
    /// Measures the relay's own round trip with no delay (the median of 100 echoes, the
    /// least of three such medians, so a moment of another process's load is not taken for
    /// the hops' cost), and the part of it outside its hold (the hops), and sets the delay to
    /// the rest of the profile's; returns the relay's own, µs. Best done with the host as
    /// quiet as the steps will find it.
    pub fn calibrate(&mut self) -> std::io::Result<f64> {
        self.paused.store(true, Ordering::SeqCst);
        // A step of `steer` under way ends before the delay goes to 0.
        std::thread::sleep(STEER_EVERY);
        set_delay(&self.links, 0);
        let undelayed = quietest(self.ready.probe, &self.links);
        let one_way = match &undelayed {
            Ok((own, _)) => ((self.rtt_us - own).max(0.0) / 2.0 * 1000.0) as u64,
            Err(_) => (self.rtt_us / 2.0 * 1000.0) as u64,
        };
        set_delay(&self.links, one_way);
        // The hops again with the delay in place: the relay's sleeps change how long the
        // threads around them take to wake (idle CPUs), and the traffic meets these hops, not
        // the undelayed path's.
        let delayed = (self.rtt_us > 0.0)
            .then(|| quietest(self.ready.probe, &self.links).ok())
            .flatten();
        let own = undelayed.map(|(own, hops)| (own, delayed.map_or(hops, |d| d.1)));
        let result = own.map(|(own, hops)| {
            self.ready.own_rtt_us = own;
            self.ready.hops_us = hops.min(own);
            (self.hops_bits).store(self.ready.hops_us.to_bits(), Ordering::SeqCst);
            own
        });
        self.paused.store(false, Ordering::SeqCst);
        result
    }
}

/// How often `steer` corrects the delay.
const STEER_EVERY: Duration = Duration::from_millis(100);

/// Holds the path's round trip to `rtt_us` as the host's load changes. Calibration set the
/// delay to the profile's round trip less the relay's own; a busier host makes the relay's
/// sleeps and hand-offs later than calibration saw. Every `STEER_EVERY`, from the chunks the
/// traffic itself sent meanwhile: the round trip they found is twice the delay, plus how late
/// the relay wrote them each way on average, plus the hops outside the relay (calibrated);
/// half of its gap to the profile's moves the delay (not below 0, not above half the profile's
/// round trip). What the link's cap queued and the jitter's order added are the profile's,
/// not the relay's error, and are left in.
fn steer(links: Links, rtt_us: f64, hops_bits: Arc<AtomicU64>, paused: Arc<AtomicBool>) {
    let late = |l: &Link| {
        (
            l.chunks.load(Ordering::Relaxed),
            l.late_ns.load(Ordering::Relaxed),
        )
    };
    let mut before = [late(&links[0]), late(&links[1])];
    loop {
        std::thread::sleep(STEER_EVERY);
        let now = [late(&links[0]), late(&links[1])];
        if paused.load(Ordering::SeqCst) {
            before = now;
            continue;
        }
        let mean = |w: usize| {
            let n = now[w].0.checked_sub(before[w].0).filter(|n| *n > 0)?;
            Some((now[w].1 - before[w].1) as f64 / n as f64)
        };
        let (up, down) = (mean(0), mean(1));
        before = now;
        let (Some(up), Some(down)) = (up, down) else {
            continue;
        };
        let hops_ns = f64::from_bits(hops_bits.load(Ordering::SeqCst)) * 1000.0;
        let delay = links[0].delay_ns.load(Ordering::Relaxed) as f64;
        let found = 2.0 * delay + up + down + hops_ns;
        let one_way = (delay + (rtt_us * 1000.0 - found) / 4.0).clamp(0.0, rtt_us * 500.0);
        if !paused.load(Ordering::SeqCst) {
            set_delay(&links, one_way as u64);
        }
    }
}

fn set_delay(links: &Links, one_way_ns: u64) {
    for l in links.iter() {
        l.delay_ns.store(one_way_ns, Ordering::Relaxed);
    }
}

/// Starts relaying to `upstream` held to `shape`, calibrated once; the relay's threads run
/// until the process ends.
pub fn start(upstream: SocketAddr, shape: Shape) -> std::io::Result<Running> {
    // Sleeps end within a microsecond of when asked, not the default 50 µs later.
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1) };
    let links: Links = Arc::new([Link::new(&shape), Link::new(&shape)]);
    let (main, probe, far, ctl) = (loopback()?, loopback()?, loopback()?, loopback()?);
    let at = [
        main.local_addr()?,
        probe.local_addr()?,
        far.local_addr()?,
        ctl.local_addr()?,
    ];
    std::thread::spawn(move || echo(far));
    let (probe_links, main_links, ctl_links) = (links.clone(), links.clone(), links.clone());
    std::thread::spawn(move || accept(probe, at[2], probe_links));
    std::thread::spawn(move || accept(main, upstream, main_links));
    std::thread::spawn(move || control(ctl, ctl_links));
    let mut running = Running {
        ready: Ready {
            listen: at[0],
            probe: at[1],
            control: at[3],
            own_rtt_us: 0.0,
            hops_us: 0.0,
        },
        links,
        rtt_us: shape.rtt_us,
        hops_bits: Arc::new(AtomicU64::new(0)),
        paused: Arc::new(AtomicBool::new(false)),
    };
    running.calibrate()?;
    if shape.rtt_us > 0.0 {
        let (links, base) = (running.links.clone(), running.hops_bits.clone());
        let paused = running.paused.clone();
        std::thread::spawn(move || steer(links, shape.rtt_us, base, paused));
    }
    Ok(running)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relay holds a round trip to the profile's, its own taken off, and copies every byte
    /// both ways.
    #[test]
    fn holds_the_round_trip_and_copies_both_ways() {
        let server = loopback().unwrap();
        let upstream = server.local_addr().unwrap();
        std::thread::spawn(move || echo(server));
        let shape = Shape {
            rtt_us: 2000.0,
            jitter_us: 100.0,
            mbit: None,
        };
        let ready = start(upstream, shape).unwrap().ready;
        let said = Ready::parse(&ready.line()).unwrap();
        assert_eq!((said.listen, said.control), (ready.listen, ready.control));
        assert!((said.own_rtt_us - ready.own_rtt_us).abs() < 0.1);
        assert!(
            ready.hops_us > 0.0 && ready.hops_us <= ready.own_rtt_us,
            "{ready:?}"
        );
        let before = held(ready.control).unwrap();
        let rtt = probe_rtt(ready.probe, 30).unwrap();
        // The delay is added (never much early); how late a busy host makes it is not asserted.
        assert!((1800.0..100_000.0).contains(&rtt), "{rtt} µs");
        let mut c = TcpStream::connect(ready.listen).unwrap();
        let sent: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let mut writer = c.try_clone().unwrap();
        let copy = sent.clone();
        let w = std::thread::spawn(move || writer.write_all(&copy).unwrap());
        let mut got = vec![0u8; sent.len()];
        c.read_exact(&mut got).unwrap();
        w.join().unwrap();
        assert!(got == sent, "the bytes came back changed");
        // The probe's 30 echoes and the stream: each way held about half the round trip.
        let after = held(ready.control).unwrap();
        let inside = after.round_trip_since(&before).unwrap();
        assert!(
            after.chunks[0] >= before.chunks[0] + 31,
            "{before:?} {after:?}"
        );
        assert!((1000.0..100_000.0).contains(&inside), "{inside} µs held");
    }

    /// A bandwidth cap holds a stream to its rate.
    #[test]
    fn a_cap_holds_a_stream_to_its_rate() {
        let server = loopback().unwrap();
        let upstream = server.local_addr().unwrap();
        std::thread::spawn(move || echo(server));
        let shape = Shape {
            rtt_us: 0.0,
            jitter_us: 0.0,
            mbit: Some(80.0),
        };
        let ready = start(upstream, shape).unwrap().ready;
        let mut c = TcpStream::connect(ready.listen).unwrap();
        let mut writer = c.try_clone().unwrap();
        // 1 MB at 10 MB/s each way: 100 ms at least.
        let t = Instant::now();
        let w = std::thread::spawn(move || writer.write_all(&[7u8; 1_000_000]).unwrap());
        let mut got = vec![0u8; 1_000_000];
        c.read_exact(&mut got).unwrap();
        w.join().unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(95),
            "{:?}",
            t.elapsed()
        );
    }
}
