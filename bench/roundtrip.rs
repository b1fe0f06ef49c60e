//! The least a blocking client can spend per round trip on this host: a client thread that
//! writes 8 bytes to a unix socket, waits with `poll` and reads the answer, against a server
//! process that answers after `work` µs of busy CPU. Nothing else runs in either, so the
//! client's CPU per round trip is the kernel's price of one send, one wait and one read: the
//! floor under every server client (fathom's, sysbench's, LinkBench's Java) on this machine.
//! `bench/roundtrip-floor.sh` sets it beside fathom's measured CPU per blocking wait.
//!   roundtrip --work-us 0,50,150 --pairs 1,4 --seconds 3

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

struct Args {
    work_us: Vec<u64>,
    pairs: Vec<usize>,
    seconds: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        work_us: vec![0, 50, 150],
        pairs: vec![1, 4],
        seconds: 3.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or(format!("{flag} needs a value"))?;
        let list = |v: &str| -> Result<Vec<u64>, String> {
            v.split(',')
                .map(|x| x.parse().map_err(|_| format!("{flag}: not a number: {x}")))
                .collect()
        };
        match flag.as_str() {
            "--work-us" => a.work_us = list(&v)?,
            "--pairs" => a.pairs = list(&v)?.into_iter().map(|p| p as usize).collect(),
            "--seconds" => a.seconds = v.parse().map_err(|_| format!("--seconds: {v}"))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn wait_readable(s: &UnixStream) {
    let mut fd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the duration of the call.
    while unsafe { libc::poll(&mut fd, 1, -1) } < 0 {}
}

/// The server: answers each message after `work` of busy CPU, until the client hangs up.
fn serve(mut s: UnixStream, work: Duration) -> ! {
    let mut buf = [0u8; 64];
    loop {
        wait_readable(&s);
        let n = s.read(&mut buf).unwrap_or(0);
        if n == 0 {
            // SAFETY: _exit ends this forked process without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        let until = Instant::now() + work;
        while Instant::now() < until {}
        if s.write_all(&buf[..n]).is_err() {
            // SAFETY: as above.
            unsafe { libc::_exit(0) };
        }
    }
}

/// CPU (user, system, µs) and voluntary switches of the calling thread.
fn thread_usage() -> (f64, f64, i64) {
    // SAFETY: rusage is plain integers, for which all zeroes is a value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: one valid rusage to write, for the duration of the call.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    (us(u.ru_utime), us(u.ru_stime), u.ru_nvcsw)
}

/// One client: round trips for `secs`; returns (trips, user µs, system µs, waits).
fn client(mut s: UnixStream, secs: f64) -> (u64, f64, f64, i64) {
    let (u0, s0, w0) = thread_usage();
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut buf = [7u8; 8];
    let mut trips = 0;
    while Instant::now() < until {
        s.write_all(&buf).expect("send");
        wait_readable(&s);
        s.read_exact(&mut buf).expect("receive");
        trips += 1;
    }
    let (u1, s1, w1) = thread_usage();
    (trips, u1 - u0, s1 - s0, w1 - w0)
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("roundtrip: {e}");
        std::process::exit(2)
    });
    println!("pairs work_us trips/s wall_us/trip user_us/trip sys_us/trip cpu_us/trip waits/trip");
    for &pairs in &args.pairs {
        for &work in &args.work_us {
            // Fork every server before any client thread starts: a forked child has one thread.
            let mut ends = Vec::new();
            let mut children = Vec::new();
            for _ in 0..pairs {
                let (mine, theirs) = UnixStream::pair().expect("socketpair");
                // SAFETY: this process has only its main thread here; the child runs `serve`
                // and leaves with _exit.
                match unsafe { libc::fork() } {
                    0 => {
                        // The other pairs' client ends too, or their servers never see EOF.
                        ends.clear();
                        drop(mine);
                        serve(theirs, Duration::from_micros(work))
                    }
                    pid if pid > 0 => children.push(pid),
                    _ => panic!("fork: {}", std::io::Error::last_os_error()),
                }
                ends.push(mine);
            }
            let start = Instant::now();
            let handles: Vec<_> = ends
                .into_iter()
                .map(|s| std::thread::spawn(move || client(s, args.seconds)))
                .collect();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let wall = start.elapsed().as_secs_f64();
            for pid in children {
                // SAFETY: waits for a child of this process; the status is not read.
                unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            }
            let trips: u64 = results.iter().map(|r| r.0).sum();
            let user: f64 = results.iter().map(|r| r.1).sum();
            let sys: f64 = results.iter().map(|r| r.2).sum();
            let waits: i64 = results.iter().map(|r| r.3).sum();
            let per = |x: f64| x / trips.max(1) as f64;
            println!(
                "{pairs} {work} {:.0} {:.1} {:.2} {:.2} {:.2} {:.2}",
                trips as f64 / wall,
                per(wall * 1e6 * pairs as f64),
                per(user),
                per(sys),
                per(user + sys),
                per(waits as f64)
            );
        }
    }
}
