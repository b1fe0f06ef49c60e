//! A `mongodb://` URL read as fathom's own client needs it: its hosts (a unix socket
//! percent-encoded, as `%2Ftmp%2Fm.sock`), whether it logs in or asks for TLS, and the write
//! and read concerns its options give. Read here rather than by the driver so that a build
//! without the driver (the default) runs the same path; where the URL needs what only the
//! driver does, `needs_driver` says what.

use crate::netbuf::Endpoint;
use fathom_api::doc::bson::{doc, Bson, Document};

/// One server of the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Tcp(String, u16),
    Socket(String),
}

/// A parsed `mongodb://` URL.
#[derive(Debug)]
pub struct MongoUrl {
    pub hosts: Vec<Host>,
    /// A user (and password) before the hosts.
    login: bool,
    /// `mongodb+srv://`: the hosts are looked up in DNS.
    srv: bool,
    /// The options after `?`, keys in lower case as the driver matches them.
    options: Vec<(String, String)>,
}

impl MongoUrl {
    pub fn parse(url: &str) -> anyhow::Result<MongoUrl> {
        let bad = |why: &str| {
            anyhow::anyhow!(
                "setting `url`: `{url}` is not a MongoDB URL ({why}; expected mongodb://HOST:PORT/?OPTIONS)"
            )
        };
        let (srv, rest) = if let Some(r) = url.strip_prefix("mongodb+srv://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("mongodb://") {
            (false, r)
        } else {
            return Err(bad("no mongodb:// scheme"));
        };
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (login, hosts) = match authority.rsplit_once('@') {
            Some((_, hosts)) => (true, hosts),
            None => (false, authority),
        };
        if hosts.is_empty() {
            return Err(bad("no host"));
        }
        let hosts = (hosts.split(','))
            .map(|h| host(h).map_err(|why| bad(&why)))
            .collect::<anyhow::Result<Vec<Host>>>()?;
        let query = tail.split_once('?').map_or("", |(_, q)| q);
        let mut options = Vec::new();
        for pair in query.split(['&', ';']).filter(|p| !p.is_empty()) {
            let (k, v) = (pair.split_once('='))
                .ok_or_else(|| bad(&format!("option `{pair}` has no `=`")))?;
            options.push((k.to_ascii_lowercase(), decode(v).map_err(|why| bad(&why))?));
        }
        Ok(MongoUrl {
            hosts,
            login,
            srv,
            options,
        })
    }

    fn option(&self, key: &str) -> Option<&str> {
        (self.options.iter().rev())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// What in the URL only the driver can serve: a login, TLS, DNS seed lists, several hosts.
    pub fn needs_driver(&self) -> Option<String> {
        let on = |k: &str| {
            self.option(k)
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        };
        if self.login || self.option("authmechanism").is_some() {
            Some("the URL logs in".into())
        } else if on("tls") || on("ssl") {
            Some("TLS".into())
        } else if self.srv {
            Some("a mongodb+srv:// URL".into())
        } else if self.hosts.len() > 1 {
            Some("several hosts".into())
        } else {
            None
        }
    }

    /// The one server fathom's own client connects to.
    pub fn endpoint(&self) -> Endpoint {
        match &self.hosts[0] {
            Host::Tcp(h, p) => Endpoint::Tcp(h.clone(), *p),
            Host::Socket(path) => Endpoint::Socket(path.clone()),
        }
    }

    /// The write concern of the URL's `w`, `journal` and `wtimeoutMS`, as a command sends it.
    pub fn write_concern(&self) -> anyhow::Result<Option<Document>> {
        let mut d = Document::new();
        if let Some(w) = self.option("w") {
            d.insert("w", acknowledgment(w));
        }
        if let Some(j) = self.option("journal") {
            let j = j.parse::<bool>().map_err(|_| {
                anyhow::anyhow!("setting `url`: option journal=`{j}` is not true or false")
            })?;
            d.insert("j", j);
        }
        if let Some(ms) = self.option("wtimeoutms") {
            let ms = ms.parse::<i64>().map_err(|_| {
                anyhow::anyhow!(
                    "setting `url`: option wtimeoutMS=`{ms}` is not a number of milliseconds"
                )
            })?;
            d.insert("wtimeout", ms);
        }
        Ok((!d.is_empty()).then_some(d))
    }

    /// The read concern of the URL's `readConcernLevel`.
    pub fn read_concern(&self) -> Option<Document> {
        (self.option("readconcernlevel")).map(|level| doc! {"level": level})
    }
}

/// `w` as the server takes it: a number of nodes, or a tag such as `majority`.
pub fn acknowledgment(w: &str) -> Bson {
    match w.parse::<i32>() {
        Ok(n) => Bson::Int32(n),
        Err(_) => Bson::String(w.to_string()),
    }
}

fn host(h: &str) -> Result<Host, String> {
    let h = decode(h)?;
    if h.ends_with(".sock") {
        return Ok(Host::Socket(h));
    }
    // `[::1]:27017`, `host:27017`, `host`.
    let (name, port) = match h.rsplit_once(':') {
        Some((name, port)) if !port.contains(']') => (name, Some(port)),
        _ => (h.as_str(), None),
    };
    let port = match port {
        Some(p) => (p.parse::<u16>()).map_err(|_| format!("port `{p}` is not a number"))?,
        None => 27017,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    Ok(Host::Tcp(name.to_string(), port))
}

/// `%2F` and the like decoded.
fn decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).unwrap_or("");
            let b =
                u8::from_str_radix(hex, 16).map_err(|_| format!("`%{hex}` is not an escape"))?;
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("`{s}` does not decode to text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_sockets_and_concerns_are_read() {
        let u = MongoUrl::parse("mongodb://%2Ftmp%2Fm.sock/?w=majority&journal=true").unwrap();
        assert_eq!(u.hosts, vec![Host::Socket("/tmp/m.sock".into())]);
        assert_eq!(u.needs_driver(), None);
        assert_eq!(
            u.write_concern().unwrap(),
            Some(doc! {"w": "majority", "j": true})
        );
        let u = MongoUrl::parse("mongodb://db1:27018/app?readConcernLevel=majority&w=2").unwrap();
        assert_eq!(u.hosts, vec![Host::Tcp("db1".into(), 27018)]);
        assert_eq!(u.read_concern(), Some(doc! {"level": "majority"}));
        assert_eq!(u.write_concern().unwrap(), Some(doc! {"w": 2}));
        let u = MongoUrl::parse("mongodb://[::1]").unwrap();
        assert_eq!(u.hosts, vec![Host::Tcp("::1".into(), 27017)]);
    }

    #[test]
    fn what_only_the_driver_serves_is_named() {
        let needs = |url: &str| MongoUrl::parse(url).unwrap().needs_driver();
        assert_eq!(
            needs("mongodb://u:p@h/").as_deref(),
            Some("the URL logs in")
        );
        assert_eq!(needs("mongodb://h/?tls=true").as_deref(), Some("TLS"));
        assert_eq!(needs("mongodb://a,b/").as_deref(), Some("several hosts"));
        assert!(needs("mongodb+srv://c.example.net/").is_some());
    }

    #[test]
    fn a_bad_url_says_what_is_expected() {
        for (url, says) in [
            ("localhost:27017", "no mongodb:// scheme"),
            ("mongodb://h:port/", "port `port` is not a number"),
            ("mongodb:///?w=1", "no host"),
        ] {
            let e = MongoUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("mongodb://HOST:PORT"), "{e}");
        }
    }
}
