//! Workload parameters (`--param key=value`). Each workload declares its parameters as one
//! struct deriving serde's `Deserialize` (with `deny_unknown_fields`) and schemars'
//! `JsonSchema`: a field's doc comment is its help, the struct's `Default` holds the defaults,
//! and an unknown or malformed parameter is an error naming it and what was expected.

use fathom_core::units;
use schemars::schema::Schema;
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// What a workload's parameter struct is.
pub trait ParamSet: DeserializeOwned + Serialize + Default + JsonSchema {}
impl<T: DeserializeOwned + Serialize + Default + JsonSchema> ParamSet for T {}

/// One parameter as `fathom workloads` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: String,
    pub default: String,
    pub help: String,
}

/// The parameters of `T` in declared order, with their defaults and help.
pub fn specs<T: ParamSet>() -> Vec<ParamSpec> {
    let schema = schemars::schema_for!(T);
    let defaults = record(&T::default());
    let Some(object) = schema.schema.object.as_ref() else {
        return Vec::new();
    };
    object
        .properties
        .iter()
        .map(|(name, s)| ParamSpec {
            name: name.clone(),
            default: defaults.get(name).cloned().unwrap_or_default(),
            help: match s {
                Schema::Object(o) => o
                    .metadata
                    .as_ref()
                    .and_then(|m| m.description.clone())
                    .unwrap_or_default()
                    .replace('\n', " "),
                Schema::Bool(_) => String::new(),
            },
        })
        .collect()
}

/// Every parameter of `p` with the value in force, as text, for the run's record.
pub fn record<T: Serialize>(p: &T) -> BTreeMap<String, String> {
    let value = serde_json::to_value(p).expect("parameters serialize");
    let serde_json::Value::Object(map) = value else {
        return BTreeMap::new();
    };
    map.into_iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s,
                // Whole numbers read as given (`95`, not `95.0`).
                serde_json::Value::Number(n) => match n.as_f64() {
                    Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 1e15 => {
                        format!("{}", x as i64)
                    }
                    _ => n.to_string(),
                },
                other => other.to_string(),
            };
            (k, text)
        })
        .collect()
}

/// Given parameters, as `key=value` text.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    pub fn new(values: BTreeMap<String, String>) -> Self {
        Params { values }
    }

    /// Parses `key=value` strings.
    pub fn parse(pairs: &[String]) -> anyhow::Result<Params> {
        let values = units::parse_key_values(pairs, "parameter").map_err(anyhow::Error::msg)?;
        Ok(Params { values })
    }

    /// The parameters as given (defaults not filled in).
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.to_string(), value.into());
    }

    /// Fails on a parameter the workload does not list.
    pub fn check(&self, workload: &str, specs: &[ParamSpec]) -> anyhow::Result<()> {
        for k in self.values.keys() {
            if !specs.iter().any(|s| &s.name == k) {
                let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
                anyhow::bail!(
                    "workload `{workload}` has no parameter `{k}`; it takes: {}",
                    names.join(", ")
                );
            }
        }
        Ok(())
    }

    /// The workload's typed parameters: the given ones over the defaults.
    pub fn read<T: ParamSet>(&self, workload: &str) -> anyhow::Result<T> {
        self.check(workload, &specs::<T>())?;
        T::deserialize(Given {
            entries: self.values.iter(),
            value: None,
        })
        .map_err(|e| anyhow::anyhow!("{}", e.0))
    }
}

/// Resolves a `seed` parameter: as given, or for 0 one from the clock (the caller records it).
pub fn seed_or_clock(seed: u64) -> u64 {
    if seed != 0 {
        return seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs())
}

/// A seed for one client thread of one step, derived from the run's seed.
pub fn thread_seed(seed: u64, step: usize, thread: usize) -> u64 {
    seed.wrapping_mul(1_000_003)
        .wrapping_add((step * 1000 + thread) as u64)
}

/// A length of time (`60s`, `1m`, `500ms`), kept as written for the run's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Span {
    text: String,
    pub value: Duration,
}

impl Span {
    pub fn new(text: &str) -> Span {
        Span::try_from(text.to_string()).expect("a valid default duration")
    }
}

impl TryFrom<String> for Span {
    type Error = String;
    fn try_from(text: String) -> Result<Span, String> {
        let value = units::parse_duration(&text)?;
        Ok(Span { text, value })
    }
}

impl From<Span> for String {
    fn from(s: Span) -> String {
        s.text
    }
}

/// A size in bytes (`2m`, `512k`, `1048576`), kept as written for the run's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Size {
    text: String,
    pub bytes: u64,
}

impl Size {
    pub fn new(text: &str) -> Size {
        Size::try_from(text.to_string()).expect("a valid default size")
    }
}

impl TryFrom<String> for Size {
    type Error = String;
    fn try_from(text: String) -> Result<Size, String> {
        let bytes = units::parse_size(&text)?;
        Ok(Size { text, bytes })
    }
}

impl From<Size> for String {
    fn from(s: Size) -> String {
        s.text
    }
}

/// A switch: on/off, true/false, 1/0, yes/no; recorded as on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Switch(pub bool);

impl TryFrom<String> for Switch {
    type Error = String;
    fn try_from(text: String) -> Result<Switch, String> {
        match text.as_str() {
            "on" | "true" | "1" | "yes" => Ok(Switch(true)),
            "off" | "false" | "0" | "no" => Ok(Switch(false)),
            other => Err(format!("expected on or off, got `{other}`")),
        }
    }
}

impl From<Switch> for String {
    fn from(s: Switch) -> String {
        if s.0 { "on" } else { "off" }.to_string()
    }
}

macro_rules! text_schema {
    ($($t:ty),*) => {$(
        impl JsonSchema for $t {
            fn schema_name() -> String {
                stringify!($t).to_string()
            }
            fn json_schema(g: &mut schemars::gen::SchemaGenerator) -> Schema {
                String::json_schema(g)
            }
        }
    )*};
}
text_schema!(Span, Size, Switch);

/// The deserializer's error: the whole message, naming the parameter.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The given `key=value` text as a map whose values parse to what each field asks for.
struct Given<'a, I: Iterator<Item = (&'a String, &'a String)>> {
    entries: I,
    value: Option<(&'a str, &'a str)>,
}

impl<'de, 'a, I: Iterator<Item = (&'a String, &'a String)>> de::Deserializer<'de> for Given<'a, I> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de, 'a, I: Iterator<Item = (&'a String, &'a String)>> MapAccess<'de> for Given<'a, I> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((k, v));
        seed.deserialize(k.as_str().into_deserializer()).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (key, text) = self.value.take().expect("a key before its value");
        seed.deserialize(Text(text))
            .map_err(|e| Error(format!("parameter `{key}`: {}", e.0)))
    }
}

/// One parameter's text, parsed to the type its field asks for.
struct Text<'a>(&'a str);

impl Text<'_> {
    fn whole(&self) -> Result<u64, Error> {
        self.0
            .replace('_', "")
            .parse()
            .map_err(|_| Error(format!("`{}` is not a whole number", self.0)))
    }

    fn number(&self) -> Result<f64, Error> {
        self.0
            .parse()
            .map_err(|_| Error(format!("`{}` is not a number", self.0)))
    }
}

impl<'de> de::Deserializer<'de> for Text<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(self.whole()?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(self.whole()?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let n = self.whole()?;
        visitor.visit_i64(i64::try_from(n).map_err(|_| Error(format!("{n} is too large")))?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(self.number()?)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i128 u8 u16 u128 f32 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload's parameters, for the tests.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Demo {
        /// keys loaded
        num_keys: u64,
        /// how far values compress
        ratio: f64,
        /// step length
        duration: Span,
        /// delete as much as is inserted
        deletes: Switch,
    }

    impl Default for Demo {
        fn default() -> Self {
            Demo {
                num_keys: 1000,
                ratio: 0.5,
                duration: Span::new("20s"),
                deletes: Switch(true),
            }
        }
    }

    fn read(pairs: &[&str]) -> anyhow::Result<Demo> {
        let pairs: Vec<String> = pairs.iter().map(|s| s.to_string()).collect();
        Params::parse(&pairs)?.read("demo")
    }

    #[test]
    fn unknown_and_malformed() {
        let e = read(&["num_kyes=5"]).unwrap_err().to_string();
        assert!(
            e.contains("no parameter `num_kyes`") && e.contains("takes: num_keys, ratio"),
            "{e}"
        );
        assert!(Params::parse(&["oops".into()])
            .unwrap_err()
            .to_string()
            .contains("not key=value"));
        let e = read(&["num_keys=lots"]).unwrap_err().to_string();
        assert_eq!(e, "parameter `num_keys`: `lots` is not a whole number");
        let e = read(&["duration=soon"]).unwrap_err().to_string();
        assert!(e.starts_with("parameter `duration`: "), "{e}");
        let e = read(&["deletes=maybe"]).unwrap_err().to_string();
        assert_eq!(e, "parameter `deletes`: expected on or off, got `maybe`");
    }

    #[test]
    fn defaults_overrides_and_the_record() {
        let d = read(&[]).unwrap();
        assert_eq!(
            (d.num_keys, d.duration.value),
            (1000, Duration::from_secs(20))
        );
        let d = read(&["num_keys=2_000", "duration=1m", "deletes=no"]).unwrap();
        assert_eq!(d.num_keys, 2000);
        assert_eq!(d.duration.value, Duration::from_secs(60));
        let r = record(&d);
        assert_eq!(r["duration"], "1m");
        assert_eq!(r["deletes"], "off");
        assert_eq!(r["ratio"], "0.5");
    }

    #[test]
    fn specs_list_fields_in_order_with_defaults_and_help() {
        let s = specs::<Demo>();
        let names: Vec<&str> = s.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["num_keys", "ratio", "duration", "deletes"]);
        assert_eq!(s[2].default, "20s");
        assert_eq!(s[0].help, "keys loaded");
    }
}
