//! MariaDB's client/server protocol at the packet level, for fathom's own client: framing
//! (3-byte length, sequence number), one read buffer reused for every packet, one write per
//! command, and the connection handshake (protocol 4.1, `mysql_native_password`, and plugins
//! such as `unix_socket` that need no reply).

use crate::netbuf::{Endpoint, NetBuf};
use sha1::{Digest, Sha1};

/// The largest payload one packet frame carries; longer ones continue in the next frame.
const MAX_FRAME: usize = 0xFF_FFFF;

pub(super) mod caps {
    pub const LONG_PASSWORD: u32 = 0x1;
    pub const LONG_FLAG: u32 = 0x4;
    pub const CONNECT_WITH_DB: u32 = 0x8;
    pub const PROTOCOL_41: u32 = 0x200;
    pub const TRANSACTIONS: u32 = 0x2000;
    pub const SECURE_CONNECTION: u32 = 0x8000;
    pub const MULTI_STATEMENTS: u32 = 0x1_0000;
    pub const MULTI_RESULTS: u32 = 0x2_0000;
    pub const PS_MULTI_RESULTS: u32 = 0x4_0000;
    pub const PLUGIN_AUTH: u32 = 0x8_0000;
    pub const PLUGIN_AUTH_LENENC_DATA: u32 = 0x20_0000;
}

/// Who connects, and to which database.
pub(super) struct Login<'a> {
    pub endpoint: &'a Endpoint,
    pub user: &'a str,
    pub password: &'a str,
    pub db: Option<&'a str>,
}

/// The command a packet that starts an exchange carries, as its first byte (`COM_*`).
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(super) enum Command {
    Quit = 0x01,
    Query = 0x03,
    StmtPrepare = 0x16,
    StmtExecute = 0x17,
}

/// A connection's byte stream with its packet framing.
pub(super) struct Wire {
    net: NetBuf,
    /// A payload split over several frames, joined.
    joined: Vec<u8>,
    /// The command being written, its frame header included.
    out: Vec<u8>,
    seq: u8,
}

/// A server's error packet.
#[derive(Debug)]
pub(super) struct ServerError {
    pub code: u16,
    pub state: String,
    pub message: String,
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ServerError {
            code,
            state,
            message,
        } = self;
        write!(f, "ERROR {code} ({state}): {message}")
    }
}

/// A server's error packet, or a failure of the connection or the protocol.
pub(super) type WireError = crate::netbuf::WireError<ServerError>;
pub(super) type WireResult<T> = Result<T, WireError>;
pub(super) use crate::netbuf::protocol;

/// An error packet (first byte 0xFF) read into its parts.
pub(super) fn server_error(p: &[u8]) -> WireError {
    let code = u16::from_le_bytes([
        p.get(1).copied().unwrap_or(0),
        p.get(2).copied().unwrap_or(0),
    ]);
    let (state, message) = match p.get(3) {
        Some(b'#') if p.len() >= 9 => (&p[4..9], &p[9..]),
        _ => (&b"HY000"[..], p.get(3..).unwrap_or(&[])),
    };
    WireError::Server(ServerError {
        code,
        state: String::from_utf8_lossy(state).into_owned(),
        message: String::from_utf8_lossy(message).into_owned(),
    })
}

impl Wire {
    /// Connects and logs in; returns the wire ready for commands.
    pub(super) fn connect(login: &Login<'_>) -> WireResult<Wire> {
        let mut wire = Wire {
            net: NetBuf::connect(login.endpoint)?,
            joined: Vec::new(),
            out: Vec::with_capacity(4096),
            seq: 0,
        };
        wire.handshake(login)?;
        Ok(wire)
    }

    /// Starts a command: clears the output and writes the frame header's place and `command`.
    pub(super) fn begin(&mut self, command: Command) -> &mut Vec<u8> {
        self.seq = 0;
        let out = self.reply();
        out.push(command as u8);
        out
    }

    /// Starts a packet that continues the exchange (a login reply): the frame header's place,
    /// no command byte, the sequence number carried on.
    fn reply(&mut self) -> &mut Vec<u8> {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        &mut self.out
    }

    /// Sends what `begin` started (split into frames if long) in one write.
    pub(super) fn send(&mut self) -> WireResult<()> {
        let payload = self.out.len() - 4;
        if payload < MAX_FRAME {
            self.out[..3].copy_from_slice(&(payload as u32).to_le_bytes()[..3]);
            self.out[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return self.write_out();
        }
        let body = self.out.split_off(4);
        self.out.clear();
        let mut chunks = body.chunks(MAX_FRAME).peekable();
        while let Some(chunk) = chunks.next() {
            self.frame(chunk);
            if chunks.peek().is_none() && chunk.len() == MAX_FRAME {
                self.frame(&[]);
            }
        }
        self.write_out()
    }

    fn frame(&mut self, chunk: &[u8]) {
        self.out
            .extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
        self.out.push(self.seq);
        self.seq = self.seq.wrapping_add(1);
        self.out.extend_from_slice(chunk);
    }

    fn write_out(&mut self) -> WireResult<()> {
        Ok(self.net.write_all(&self.out)?)
    }

    /// Reads one frame; returns its payload's place and whether more frames follow.
    fn frame_in(&mut self) -> WireResult<(std::ops::Range<usize>, bool)> {
        self.net.fill(4)?;
        let h = self.net.unread();
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        self.net.fill(4 + len)?;
        let frame = self.net.take(4 + len);
        Ok((frame.start + 4..frame.end, len == MAX_FRAME))
    }

    /// The next packet's payload, valid until the next read.
    pub(super) fn packet(&mut self) -> WireResult<&[u8]> {
        let (payload, more) = self.frame_in()?;
        if !more {
            // Taken bytes stay in place until the next read.
            return Ok(self.net.at(payload));
        }
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        joined.extend_from_slice(self.net.at(payload));
        loop {
            let (payload, more) = self.frame_in()?;
            joined.extend_from_slice(self.net.at(payload));
            if !more {
                break;
            }
        }
        self.joined = joined;
        Ok(&self.joined)
    }

    /// Reads the server's greeting, answers it and finishes authentication.
    fn handshake(&mut self, login: &Login<'_>) -> WireResult<()> {
        let greeting = Greeting::parse(self.packet()?)?;
        let mut flags = caps::LONG_PASSWORD
            | caps::LONG_FLAG
            | caps::PROTOCOL_41
            | caps::TRANSACTIONS
            | caps::SECURE_CONNECTION
            | caps::MULTI_STATEMENTS
            | caps::MULTI_RESULTS
            | caps::PS_MULTI_RESULTS
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_DATA;
        if login.db.is_some() {
            flags |= caps::CONNECT_WITH_DB;
        }
        flags &= greeting.caps | caps::CONNECT_WITH_DB;
        let reply = auth_reply(&greeting.plugin, login.password, &greeting.seed);
        let out = self.reply();
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&(MAX_FRAME as u32).to_le_bytes());
        // utf8mb4_general_ci, then 23 reserved bytes.
        out.push(45);
        out.extend_from_slice(&[0; 23]);
        put_nul_str(out, login.user);
        put_lenenc_int(out, reply.len() as u64);
        out.extend_from_slice(&reply);
        if let Some(db) = login.db {
            put_nul_str(out, db);
        }
        put_nul_str(out, &greeting.plugin);
        self.send()?;
        self.finish_auth(login.password)
    }

    /// Reads the server's verdict, answering a request to switch plugins.
    fn finish_auth(&mut self, password: &str) -> WireResult<()> {
        loop {
            let p = self.packet()?;
            match p.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(server_error(p)),
                Some(0xFE) => {
                    let rest = &p[1..];
                    let nul = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
                    let plugin = String::from_utf8_lossy(&rest[..nul]).into_owned();
                    let seed = rest.get(nul + 1..).unwrap_or(&[]);
                    let seed = seed.strip_suffix(&[0]).unwrap_or(seed).to_vec();
                    let reply = auth_reply(&plugin, password, &seed);
                    self.reply().extend_from_slice(&reply);
                    self.send()?;
                }
                _ => {
                    return protocol(format!(
                        "authentication needs more than fathom's client speaks (packet {:02x?}); \
                         `--set client=mysql` uses the mysql crate",
                        &p[..p.len().min(8)]
                    ))
                }
            }
        }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // The server may already be gone.
        self.begin(Command::Quit);
        let _ = self.send();
    }
}

/// What the server's greeting says that the client needs.
struct Greeting {
    caps: u32,
    seed: Vec<u8>,
    plugin: String,
}

impl Greeting {
    fn parse(p: &[u8]) -> WireResult<Greeting> {
        if p.first() == Some(&0xFF) {
            return Err(server_error(p));
        }
        if p.first() != Some(&10) {
            return protocol(format!("greeting of protocol {:?}, not 10", p.first()));
        }
        let short = || WireError::Protocol("greeting cut short".into());
        let version_end = 1 + p[1..].iter().position(|b| *b == 0).ok_or_else(short)?;
        let mut at = version_end + 1 + 4;
        let seed1 = p.get(at..at + 8).ok_or_else(short)?.to_vec();
        at += 9;
        let lo = u16::from_le_bytes(p.get(at..at + 2).ok_or_else(short)?.try_into().unwrap());
        at += 2 + 1 + 2;
        let hi = u16::from_le_bytes(p.get(at..at + 2).ok_or_else(short)?.try_into().unwrap());
        let caps = u32::from(lo) | u32::from(hi) << 16;
        at += 2;
        let seed_len = usize::from(*p.get(at).ok_or_else(short)?);
        at += 1 + 10;
        let mut seed = seed1;
        let mut plugin = "mysql_native_password".to_string();
        if caps & caps::SECURE_CONNECTION != 0 {
            let n = seed_len.saturating_sub(8).max(13);
            let part = p.get(at..at + n).ok_or_else(short)?;
            seed.extend_from_slice(part.strip_suffix(&[0]).unwrap_or(part));
            at += n;
        }
        if caps & caps::PLUGIN_AUTH != 0 {
            let rest = p.get(at..).unwrap_or(&[]);
            let nul = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
            if nul > 0 {
                plugin = String::from_utf8_lossy(&rest[..nul]).into_owned();
            }
        }
        Ok(Greeting { caps, seed, plugin })
    }
}

/// What the client answers `plugin`: the native password scramble, or nothing for plugins
/// that decide without the client (`unix_socket`) or an empty password.
fn auth_reply(plugin: &str, password: &str, seed: &[u8]) -> Vec<u8> {
    if password.is_empty() || plugin != "mysql_native_password" {
        return Vec::new();
    }
    // SHA1(password) XOR SHA1(seed + SHA1(SHA1(password))).
    let once = Sha1::digest(password.as_bytes());
    let twice = Sha1::digest(once);
    let mut h = Sha1::new();
    h.update(seed);
    h.update(twice);
    let mask = h.finalize();
    once.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

pub(super) fn put_nul_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

pub(super) fn put_lenenc_int(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=250 => out.push(n as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// A reader over one packet's payload.
pub(super) struct Cursor<'a> {
    pub p: &'a [u8],
    pub at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(p: &'a [u8]) -> Self {
        Cursor { p, at: 0 }
    }

    pub fn bytes(&mut self, n: usize) -> WireResult<&'a [u8]> {
        let s = self
            .p
            .get(self.at..self.at + n)
            .ok_or_else(|| WireError::Protocol("packet cut short".into()))?;
        self.at += n;
        Ok(s)
    }

    pub fn u8(&mut self) -> WireResult<u8> {
        Ok(self.bytes(1)?[0])
    }

    pub fn u16(&mut self) -> WireResult<u16> {
        Ok(u16::from_le_bytes(self.bytes(2)?.try_into().unwrap()))
    }

    pub fn u32(&mut self) -> WireResult<u32> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }

    /// A length-encoded integer; `None` for the NULL marker (0xFB).
    pub fn lenenc(&mut self) -> WireResult<Option<u64>> {
        Ok(Some(match self.u8()? {
            0xFB => return Ok(None),
            0xFC => u64::from(self.u16()?),
            0xFD => {
                let b = self.bytes(3)?;
                u64::from(u32::from_le_bytes([b[0], b[1], b[2], 0]))
            }
            0xFE => u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()),
            n => u64::from(n),
        }))
    }

    /// A length-encoded string; `None` for NULL.
    pub fn lenenc_bytes(&mut self) -> WireResult<Option<&'a [u8]>> {
        match self.lenenc()? {
            None => Ok(None),
            Some(n) => self.bytes(n as usize).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_scramble_matches_the_protocol_example() {
        // Empty passwords send nothing; others 20 bytes that depend on the seed.
        assert!(auth_reply("mysql_native_password", "", b"12345678901234567890").is_empty());
        assert!(auth_reply("unix_socket", "secret", b"x").is_empty());
        let a = auth_reply("mysql_native_password", "secret", b"12345678901234567890");
        let b = auth_reply("mysql_native_password", "secret", b"09876543210987654321");
        assert_eq!(a.len(), 20);
        assert_ne!(a, b);
    }

    #[test]
    fn length_encoded_integers_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65_535,
            65_536,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, n);
            assert_eq!(Cursor::new(&out).lenenc().unwrap(), Some(n), "{n}");
        }
        assert_eq!(Cursor::new(&[0xFB]).lenenc().unwrap(), None);
    }
}
