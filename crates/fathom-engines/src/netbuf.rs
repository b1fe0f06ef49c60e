//! What fathom's own protocol clients (MariaDB's, PostgreSQL's and MongoDB's) share: their errors, a connection's socket
//! (unix or TCP) with one read buffer reused for every message, so a reply that fits the buffer
//! costs one read and no allocation; and what a client keeps from a statement's rows.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What every connection of fathom's own clients in this process sent and received, counted at
/// its socket calls: the network meter reads it at a step's two ends (bytes and round trips an
/// operation). A round trip is a request (one or more writes) followed by a read. Counted only
/// once a run has asked (`count`): the clients of a run without a network meter pay no shared
/// atomic on their hot path.
#[derive(Default)]
pub struct WireCounts {
    counting: AtomicBool,
    pub sent: AtomicU64,
    pub received: AtomicU64,
    pub round_trips: AtomicU64,
}

/// The counts of this process's connections.
pub static WIRE: WireCounts = WireCounts {
    counting: AtomicBool::new(false),
    sent: AtomicU64::new(0),
    received: AtomicU64::new(0),
    round_trips: AtomicU64::new(0),
};

/// One reading of `WIRE`: bytes sent, bytes received, round trips.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    pub sent: u64,
    pub received: u64,
    pub round_trips: u64,
}

impl WireCounts {
    /// Counts from now on, in this process.
    pub fn count(&self) {
        self.counting.store(true, Ordering::Relaxed);
    }

    fn on(&self) -> bool {
        self.counting.load(Ordering::Relaxed)
    }

    pub fn read(&self) -> Wire {
        Wire {
            sent: self.sent.load(Ordering::Relaxed),
            received: self.received.load(Ordering::Relaxed),
            round_trips: self.round_trips.load(Ordering::Relaxed),
        }
    }
}

/// A failure of one of fathom's protocol clients: the server's error answer (`S`, in the
/// protocol's own terms), the connection's, or a reply fathom could not read.
#[derive(Debug)]
pub enum WireError<S> {
    Server(S),
    Io(io::Error),
    Protocol(String),
}

impl<S: std::fmt::Display> std::fmt::Display for WireError<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Server(e) => e.fmt(f),
            WireError::Io(e) => write!(f, "connection to the server: {e}"),
            WireError::Protocol(m) => write!(f, "unexpected reply from the server: {m}"),
        }
    }
}

impl<S: std::fmt::Display + std::fmt::Debug> std::error::Error for WireError<S> {}

impl<S> From<io::Error> for WireError<S> {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

/// A reply fathom could not read, as an error.
pub fn protocol<T, S>(what: impl Into<String>) -> Result<T, WireError<S>> {
    Err(WireError::Protocol(what.into()))
}

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket's path.
    Socket(String),
    Tcp(String, u16),
}

enum Socket {
    Unix(UnixStream),
    Tcp(TcpStream),
}

/// A connected socket and the bytes read from it and not yet consumed.
pub struct NetBuf {
    socket: Socket,
    /// Unconsumed bytes are `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// A request is being written (no reply read since): its round trip is counted once.
    asking: bool,
}

impl NetBuf {
    pub fn connect(endpoint: &Endpoint) -> io::Result<NetBuf> {
        let socket = match endpoint {
            Endpoint::Socket(path) => Socket::Unix(UnixStream::connect(path)?),
            Endpoint::Tcp(host, port) => {
                let s = TcpStream::connect((host.as_str(), *port))?;
                s.set_nodelay(true)?;
                Socket::Tcp(s)
            }
        };
        Ok(NetBuf {
            socket,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            asking: false,
        })
    }

    /// Writes all of `bytes` (one system call when the socket takes them at once).
    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if WIRE.on() {
            if !self.asking {
                WIRE.round_trips.fetch_add(1, Ordering::Relaxed);
            }
            WIRE.sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        self.asking = true;
        match &mut self.socket {
            Socket::Unix(s) => s.write_all(bytes),
            Socket::Tcp(s) => s.write_all(bytes),
        }
    }

    /// Makes at least `n` unread bytes available, reading as much as the socket holds.
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.start >= n {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.next_power_of_two(), 0);
        }
        while self.end < n {
            let got = match &mut self.socket {
                Socket::Unix(s) => {
                    wait_readable(s)?;
                    s.read(&mut self.buf[self.end..])?
                }
                Socket::Tcp(s) => s.read(&mut self.buf[self.end..])?,
            };
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += got;
            self.asking = false;
            if WIRE.on() {
                WIRE.received.fetch_add(got as u64, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// The unread bytes (at least what the last `fill` asked for).
    pub fn unread(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Consumes the next `n` unread bytes (`fill(n)` first); returns where they are, for `at`.
    /// They stay in place until the next `fill`.
    pub fn take(&mut self, n: usize) -> Range<usize> {
        debug_assert!(self.end - self.start >= n);
        let taken = self.start..self.start + n;
        self.start += n;
        if self.start == self.end {
            // Everything read is consumed: the next read starts at the front again.
            self.start = 0;
            self.end = 0;
        }
        taken
    }

    /// Bytes `take` returned.
    pub fn at(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }
}

pub use fathom_api::sql::Keep;

/// Sleeps until a unix socket has bytes to read. A reader blocked in `read` itself sleeps on
/// the socket's one wait queue and is woken also when the server takes the request off the
/// peer socket (a write-space event), only to sleep again: two context switches per round
/// trip, measured (1.8 voluntary switches per query, sysbench's libmariadb 1.05). `poll` for
/// POLLIN is woken by incoming bytes only, as libmariadb and libpq wait.
fn wait_readable(s: &UnixStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        if unsafe { libc::poll(&mut fd, 1, -1) } >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages split across reads and several in one read come out whole, in order.
    #[test]
    fn fills_across_reads_and_takes_in_order() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut nb = NetBuf {
            socket: Socket::Unix(b),
            buf: vec![0; 4],
            start: 0,
            end: 0,
            asking: false,
        };
        a.write_all(b"abcdefghij").unwrap();
        nb.fill(3).unwrap();
        let first = nb.take(3);
        assert_eq!(nb.at(first), b"abc");
        // Longer than the buffer: it grows and keeps what was unread.
        nb.fill(7).unwrap();
        let rest = nb.take(7);
        assert_eq!(nb.at(rest), b"defghij");
        assert!(nb.unread().is_empty());
        drop(a);
        let e = nb.fill(1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
