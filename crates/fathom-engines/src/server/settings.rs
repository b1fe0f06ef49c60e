//! The settings every sql server fathom starts or attaches to shares (`--set cache_size=`,
//! `url`, `pid`, `version`, `bin`, `client`, `watch_ms`, `statement_log`): one struct for all
//! of them, its help in each server's words (`ServerDocs`), so `fathom engines mariadb` and
//! `fathom engines postgres` each read as their own.

use crate::settings::{Size, Switch};
use fathom_api::knobs::documented;
use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, ObjectValidation, Schema, SchemaObject};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What the shared settings need of a server kind (`bootstrap::ServerKind` extends it): its
/// `client` setting and its help's words.
pub trait SettingsKind: Copy + Send + Sync + 'static {
    /// The `client` setting: the protocol library the workloads' connections use.
    type Client: Copy + PartialEq + Serialize + DeserializeOwned + JsonSchema + Send + Sync;
    /// The shared settings' help in this server's words.
    const DOCS: ServerDocs;
    /// fathom's own client, the `client` default.
    const OWN_CLIENT: Self::Client;
}

/// A server's settings (`--set`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, bound = "")]
pub struct ServerSettings<K: SettingsKind> {
    /// The server's cache (`ServerDocs::cache`).
    pub cache_size: Size,
    /// A running server to use instead of starting one.
    pub url: String,
    /// With `url`: the server's pids, so their CPU and memory are measured.
    pub pid: String,
    /// A fetched release to start instead of Debian's.
    pub version: String,
    /// Another install to start instead of Debian's.
    pub bin: String,
    /// The clients' protocol library.
    pub client: K::Client,
    /// How often fathom reads the server's views of its background work, ms (0: never).
    pub watch_ms: u64,
    /// Whether the server fathom starts logs every statement's work, for the slowest
    /// operations' (`ServerDocs::statement_log`).
    pub statement_log: Switch,
}

impl<K: SettingsKind> Default for ServerSettings<K> {
    fn default() -> Self {
        ServerSettings {
            cache_size: Size::new("256m"),
            url: String::new(),
            pid: String::new(),
            version: String::new(),
            bin: String::new(),
            client: K::OWN_CLIENT,
            watch_ms: 100,
            statement_log: Switch::new("false"),
        }
    }
}

/// A server's help for the shared settings: what differs between servers.
pub struct ServerDocs {
    /// The server's name in schemas and messages (`MariaDB`).
    pub server: &'static str,
    /// What `cache_size` sets.
    pub cache: &'static str,
    /// The form of a `url`.
    pub url_form: &'static str,
    /// Which processes `pid` names.
    pub pid: &'static str,
    /// Which releases `version` can name, and how they are fetched.
    pub version: &'static str,
    /// What `bin` points at.
    pub bin: &'static str,
    /// The `client` choices.
    pub client: &'static str,
    /// What `watch_ms` reads, or that the server's log tells instead.
    pub watch: &'static str,
    /// What `statement_log` has the server log, and what it costs.
    pub statement_log: &'static str,
}

impl<K: SettingsKind> JsonSchema for ServerSettings<K> {
    fn schema_name() -> String {
        format!("{}Settings", K::DOCS.server)
    }

    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let d = &K::DOCS;
        let text = gen.subschema_for::<String>();
        let fields = [
            ("cache_size", gen.subschema_for::<Size>(), None, d.cache),
            (
                "url",
                text.clone(),
                Some(d.url_form),
                "use this running server instead of starting one (setup lines are then not \
                 applied)",
            ),
            ("pid", text.clone(), Some("PID[,PID...]"), d.pid),
            ("version", text.clone(), Some("VERSION"), d.version),
            ("bin", text, Some("DIR"), d.bin),
            ("client", gen.subschema_for::<K::Client>(), None, d.client),
            ("watch_ms", gen.subschema_for::<u64>(), Some("MS"), d.watch),
            (
                "statement_log",
                gen.subschema_for::<Switch>(),
                None,
                d.statement_log,
            ),
        ];
        let mut object = ObjectValidation::default();
        for (name, schema, title, help) in fields {
            object
                .properties
                .insert(name.to_string(), documented(schema, title, help));
        }
        Schema::Object(SchemaObject {
            instance_type: Some(InstanceType::Object.into()),
            object: Some(Box::new(object)),
            ..Default::default()
        })
    }
}
