//! PostgreSQL's frontend/backend protocol (3.0) at the message level, for fathom's own client:
//! backend messages framed on one reused read buffer, frontend messages gathered into one
//! write, and the startup exchange (trust, cleartext, MD5 and SCRAM-SHA-256 logins; the last
//! two computed by the `postgres-protocol` crate).

use crate::netbuf::{Endpoint, NetBuf};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use std::io;

/// Protocol 3.0, as the startup message gives it.
const PROTOCOL: u32 = 196_608;

/// Who connects, and to which database.
pub(super) struct Login<'a> {
    pub endpoint: &'a Endpoint,
    pub user: &'a str,
    pub password: Option<&'a [u8]>,
    pub dbname: &'a str,
    /// The startup `options` (`-c name=value ...`), when the URL gives them.
    pub options: Option<&'a str>,
}

/// A server's ErrorResponse.
#[derive(Debug)]
pub(super) struct ServerError {
    pub severity: String,
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for ServerError {
    /// As the postgres crate's errors read in fathom's messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// A server's ErrorResponse, or a failure of the connection or the protocol.
pub(super) type PgWireError = crate::netbuf::WireError<ServerError>;
pub(super) type PgResult<T> = Result<T, PgWireError>;
pub(super) use crate::netbuf::protocol;

/// A backend message's body read field by field, every read checked against its length.
pub(super) struct Body<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Body<'a> {
    pub fn new(bytes: &'a [u8]) -> Body<'a> {
        Body { bytes, at: 0 }
    }

    pub fn bytes(&mut self, n: usize) -> PgResult<&'a [u8]> {
        match self.bytes.get(self.at..self.at + n) {
            Some(b) => {
                self.at += n;
                Ok(b)
            }
            None => protocol(format!(
                "a message of {} bytes ended before byte {}",
                self.bytes.len(),
                self.at + n
            )),
        }
    }

    pub fn u16(&mut self) -> PgResult<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn i32(&mut self) -> PgResult<i32> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u32(&mut self) -> PgResult<u32> {
        Ok(self.i32()? as u32)
    }

    /// A NUL-terminated string, without its NUL.
    pub fn cstr(&mut self) -> PgResult<&'a [u8]> {
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        let Some(nul) = rest.iter().position(|b| *b == 0) else {
            return protocol("a string without its terminating NUL");
        };
        self.at += nul + 1;
        Ok(&rest[..nul])
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        self.at = self.bytes.len();
        rest
    }
}

/// An ErrorResponse's fields: severity, SQLSTATE and message.
pub(super) fn server_error(body: &[u8]) -> PgWireError {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    let mut b = Body::new(body);
    while let Ok(&[kind]) = b.bytes(1) {
        let Ok(value) = b.cstr() else { break };
        let value = String::from_utf8_lossy(value).into_owned();
        match kind {
            0 => break,
            // The localized severity, as the postgres crate shows; 'V' is never localized.
            b'S' => severity = value,
            b'V' if severity.is_empty() => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            _ => {}
        }
    }
    PgWireError::Server(ServerError {
        severity,
        code,
        message,
    })
}

pub(super) fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// A connection's byte stream with the protocol's message framing.
pub(super) struct PgWire {
    net: NetBuf,
    /// Frontend messages gathered for the next write.
    out: Vec<u8>,
}

impl PgWire {
    /// Connects and logs in; returns the wire ready for queries.
    pub fn connect(login: &Login<'_>) -> PgResult<PgWire> {
        let mut wire = PgWire {
            net: NetBuf::connect(login.endpoint)?,
            out: Vec::with_capacity(4096),
        };
        wire.startup(login)?;
        Ok(wire)
    }

    /// Starts a frontend message tagged `tag`; `end` with what this returns finishes it.
    pub fn begin(&mut self, tag: u8) -> usize {
        self.out.push(tag);
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        at
    }

    /// The message being written.
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Writes the length of the message `begin` started at `at`.
    pub fn end(&mut self, at: usize) {
        let len = (self.out.len() - at) as u32;
        self.out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// A message of a tag and nothing else (Sync, Terminate).
    pub fn bare(&mut self, tag: u8) {
        let at = self.begin(tag);
        self.end(at);
    }

    /// Sends every message gathered, in one write.
    pub fn flush(&mut self) -> PgResult<()> {
        let sent = self.net.write_all(&self.out);
        self.out.clear();
        Ok(sent?)
    }

    /// The next backend message's tag and body, valid until the next read.
    pub fn message(&mut self) -> PgResult<(u8, &[u8])> {
        self.net.fill(5)?;
        let h = self.net.unread();
        let tag = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if len < 4 {
            return protocol(format!("message `{}` of length {len}", tag as char));
        }
        self.net.fill(1 + len)?;
        let whole = self.net.take(1 + len);
        Ok((tag, self.net.at(whole.start + 5..whole.end)))
    }

    /// Sends the startup message and answers the server's authentication requests.
    fn startup(&mut self, login: &Login<'_>) -> PgResult<()> {
        self.out.extend_from_slice(&[0; 4]);
        self.out.extend_from_slice(&PROTOCOL.to_be_bytes());
        let mut params = vec![
            ("user", login.user),
            ("database", login.dbname),
            ("client_encoding", "UTF8"),
            ("application_name", "fathom"),
        ];
        params.extend(login.options.map(|o| ("options", o)));
        for (k, v) in params {
            put_cstr(&mut self.out, k.as_bytes());
            put_cstr(&mut self.out, v.as_bytes());
        }
        self.out.push(0);
        let len = self.out.len() as u32;
        self.out[..4].copy_from_slice(&len.to_be_bytes());
        self.flush()?;
        let mut scram: Option<ScramSha256> = None;
        loop {
            let (tag, body) = self.message()?;
            match tag {
                b'R' => {
                    let mut b = Body::new(body);
                    let code = b.u32()?;
                    let data = b.rest().to_vec();
                    self.authenticate(login, code, &data, &mut scram)?;
                }
                b'E' => return Err(server_error(body)),
                b'Z' => return Ok(()),
                // ParameterStatus, BackendKeyData, NoticeResponse.
                _ => {}
            }
        }
    }

    /// Answers one authentication request (`R` message `code` with `data`).
    fn authenticate(
        &mut self,
        login: &Login<'_>,
        code: u32,
        data: &[u8],
        scram: &mut Option<ScramSha256>,
    ) -> PgResult<()> {
        let password = || match login.password {
            Some(p) => Ok(p),
            None => protocol("the server asks for a password and the URL gives none"),
        };
        let scram_failed = |e: io::Error| PgWireError::Protocol(format!("SCRAM: {e}"));
        match code {
            0 => return Ok(()),
            3 => {
                let p = password()?;
                let at = self.begin(b'p');
                put_cstr(&mut self.out, p);
                self.end(at);
            }
            5 => {
                let salt: [u8; 4] = match data.get(..4) {
                    Some(s) => [s[0], s[1], s[2], s[3]],
                    None => return protocol("an MD5 request without its salt"),
                };
                let hash = md5_hash(login.user.as_bytes(), password()?, salt);
                let at = self.begin(b'p');
                put_cstr(&mut self.out, hash.as_bytes());
                self.end(at);
            }
            10 => {
                let offered = data
                    .split(|b| *b == 0)
                    .any(|m| m == SCRAM_SHA_256.as_bytes());
                if !offered {
                    return protocol(format!(
                        "SASL mechanisms {:?} without {SCRAM_SHA_256}",
                        String::from_utf8_lossy(data)
                    ));
                }
                let s = ScramSha256::new(password()?, ChannelBinding::unsupported());
                let at = self.begin(b'p');
                put_cstr(&mut self.out, SCRAM_SHA_256.as_bytes());
                self.out
                    .extend_from_slice(&(s.message().len() as i32).to_be_bytes());
                self.out.extend_from_slice(s.message());
                self.end(at);
                *scram = Some(s);
            }
            11 | 12 => {
                let Some(s) = scram.as_mut() else {
                    return protocol("a SCRAM continuation before SCRAM began");
                };
                if code == 12 {
                    return s.finish(data).map_err(scram_failed);
                }
                s.update(data).map_err(scram_failed)?;
                let at = self.begin(b'p');
                self.out.extend_from_slice(s.message());
                self.end(at);
            }
            other => {
                return protocol(format!(
                    "authentication method {other} is not one fathom's client speaks; \
                     `--set client=postgres` uses the postgres crate"
                ))
            }
        }
        self.flush()
    }
}

impl Drop for PgWire {
    fn drop(&mut self) {
        // Terminate; the server may already be gone.
        self.out.clear();
        self.bare(b'X');
        let _ = self.flush();
    }
}
