//! Typed knobs read from `key=value` text: workload parameters (`--param`) and engine
//! settings (`--set`). Each workload or engine declares its knobs as one struct deriving
//! serde's `Deserialize` (with `deny_unknown_fields`) and schemars' `JsonSchema`: a field's doc
//! comment is its help, the struct's `Default` holds the defaults, and a malformed value is an
//! error naming the knob and what was expected.

mod text;

use crate::units;
use schemars::schema::{InstanceType, Schema, SchemaObject, SingleOrVec, SubschemaValidation};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// What a struct of knobs is.
pub trait Knobs: DeserializeOwned + Serialize + Default + JsonSchema {}
impl<T: DeserializeOwned + Serialize + Default + JsonSchema> Knobs for T {}

/// One knob as `fathom workloads` and `fathom engines` list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    pub default: String,
    /// What values it takes: `size`, `bool`, `leveled|universal`, or the field's title.
    pub values: String,
    pub help: String,
}

/// The knobs of `T` in declared order, with their defaults, values and help.
pub fn specs<T: Knobs>() -> Vec<Spec> {
    let schema = schemars::schema_for!(T);
    let defaults = record(&T::default());
    let Some(object) = schema.schema.object.as_ref() else {
        return Vec::new();
    };
    object
        .properties
        .iter()
        .map(|(name, s)| {
            let outer = match s {
                Schema::Object(o) => o.clone(),
                Schema::Bool(_) => SchemaObject::default(),
            };
            // A field of an enum type refers to the enum's schema, directly, in `allOf`, or
            // (an optional one) first in `anyOf`.
            let reference = outer.reference.clone().or_else(|| {
                let subs = outer.subschemas.as_ref()?;
                match subs.all_of.as_ref().or(subs.any_of.as_ref())?.first()? {
                    Schema::Object(o) => o.reference.clone(),
                    Schema::Bool(_) => None,
                }
            });
            let target = reference
                .and_then(|r| resolve(&schema.definitions, &r))
                .unwrap_or_else(|| outer.clone());
            // A list of an enum's names: the names, comma-separated.
            let item = target.array.as_ref().and_then(|a| match a.items.as_ref()? {
                SingleOrVec::Single(s) => match &**s {
                    Schema::Object(o) => resolve(&schema.definitions, o.reference.as_ref()?),
                    Schema::Bool(_) => None,
                },
                SingleOrVec::Vec(_) => None,
            });
            let meta = outer.metadata.clone().unwrap_or_default();
            Spec {
                name: name.clone(),
                default: defaults.get(name).cloned().unwrap_or_default(),
                values: meta.title.clone().unwrap_or_else(|| match &item {
                    Some(item) => format!("{},...", values(item)),
                    None => values(&target),
                }),
                help: meta.description.unwrap_or_default().replace('\n', " "),
            }
        })
        .collect()
}

/// A field's schema with its title and help, as the derive makes a documented field's: a
/// reference (an enum) is wrapped in `allOf` so the text can sit beside it. For knob structs
/// whose help is not one text for every instance (a generic struct's).
pub fn documented(schema: Schema, title: Option<&str>, help: &str) -> Schema {
    let mut o = match schema {
        Schema::Object(o) if o.reference.is_none() => o,
        other => SchemaObject {
            subschemas: Some(Box::new(SubschemaValidation {
                all_of: Some(vec![other]),
                ..Default::default()
            })),
            ..Default::default()
        },
    };
    let meta = o.metadata();
    if let Some(title) = title {
        meta.title = Some(title.to_string());
    }
    meta.description = Some(help.to_string());
    Schema::Object(o)
}

/// The schema a `$ref` names.
fn resolve(defs: &schemars::Map<String, Schema>, reference: &str) -> Option<SchemaObject> {
    match defs.get(reference.rsplit('/').next()?)? {
        Schema::Object(o) => Some(o.clone()),
        Schema::Bool(_) => None,
    }
}

/// What values a knob takes, from its schema: the title a field gives, an enum's names, or
/// its type.
fn values(o: &SchemaObject) -> String {
    if let Some(title) = o.metadata.as_ref().and_then(|m| m.title.clone()) {
        return title;
    }
    let names = |values: &Vec<serde_json::Value>| -> Vec<String> {
        values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect()
    };
    if let Some(values) = &o.enum_values {
        return names(values).join("|");
    }
    // An enum whose variants carry doc comments: one schema of one value per variant.
    let variants = o.subschemas.as_ref().and_then(|s| s.one_of.as_ref());
    if let Some(variants) = variants {
        let each: Option<Vec<Vec<String>>> = variants
            .iter()
            .map(|v| match v {
                Schema::Object(v) => v.enum_values.as_ref().map(names),
                Schema::Bool(_) => None,
            })
            .collect();
        if let Some(each) = each {
            return each.concat().join("|");
        }
    }
    match &o.instance_type {
        Some(SingleOrVec::Single(t)) => match **t {
            InstanceType::Integer => "integer",
            InstanceType::Number => "number",
            InstanceType::Boolean => "bool",
            InstanceType::Array => "list",
            _ => "text",
        },
        _ => "text",
    }
    .to_string()
}

/// Every parameter of `p` with the value in force, as text, for the run's record.
pub fn record<T: Serialize>(p: &T) -> BTreeMap<String, String> {
    let value = serde_json::to_value(p).expect("parameters serialize");
    let serde_json::Value::Object(map) = value else {
        return BTreeMap::new();
    };
    map.into_iter().map(|(k, v)| (k, written(v))).collect()
}

/// One knob's value as it is written (`oltp_read_only` for an enum's variant).
pub fn text<T: Serialize>(value: &T) -> String {
    written(serde_json::to_value(value).expect("knobs serialize"))
}

/// A value as a knob's text.
fn written(v: serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s,
        // Whole numbers read as given (`95`, not `95.0`).
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 1e15 => {
                format!("{}", x as i64)
            }
            _ => n.to_string(),
        },
        // A list as it is written: comma-separated.
        serde_json::Value::Array(items) => {
            items.into_iter().map(written).collect::<Vec<_>>().join(",")
        }
        // An optional knob left unset: empty, as it is given.
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Reads `given` into `T` over its defaults; errors name the knob as a `noun`
/// (`parameter`, `setting`). Unknown keys are refused by the struct's `deny_unknown_fields`;
/// callers check them first to say what is accepted.
pub fn read<T: Knobs>(noun: &str, given: &BTreeMap<String, String>) -> anyhow::Result<T> {
    text::read(noun, given).map_err(|e| anyhow::anyhow!("{e}"))
}

/// A knob whose text parses to a value: the text is kept as written, for the run's record and
/// the defaults `fathom workloads` lists; `values` is what `specs` says it takes.
macro_rules! written {
    ($(#[$doc:meta])* $name:ident($t:ty), $values:literal, $parse:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name {
            text: String,
            pub value: $t,
        }

        impl $name {
            /// A default's value; the text must parse.
            pub fn new(text: &str) -> $name {
                $name::try_from(text.to_string()).expect("a valid default")
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(text: String) -> Result<$name, String> {
                let value = $parse(&text)?;
                Ok($name { text, value })
            }
        }

        /// As clap reads a flag's value (`--duration 30s`).
        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(text: &str) -> Result<$name, String> {
                $name::try_from(text.to_string())
            }
        }

        impl From<$name> for String {
            fn from(k: $name) -> String {
                k.text
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> Schema {
                let mut o = SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    ..SchemaObject::default()
                };
                o.metadata().title = Some($values.to_string());
                Schema::Object(o)
            }
            fn is_referenceable() -> bool {
                false
            }
        }
    };
}

written!(
    /// A length of time (`60s`, `1m`, `500ms`).
    Span(Duration),
    "duration",
    units::parse_duration
);
written!(
    /// A size in bytes (`2m`, `512k`, `1048576`).
    Size(u64),
    "size",
    units::parse_size
);
written!(
    /// A switch: on/off, true/false, 1/0, yes/no.
    Switch(bool),
    "bool",
    on_or_off
);

fn on_or_off(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(format!("expected on or off (or true/false), got `{text}`")),
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
        /// compaction style
        style: Style,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Style {
        /// Documented variants make the schema a `oneOf`, still listed as values.
        Leveled,
        /// The other style.
        Universal,
    }

    impl Default for Demo {
        fn default() -> Self {
            Demo {
                num_keys: 1000,
                ratio: 0.5,
                duration: Span::new("20s"),
                deletes: Switch::new("on"),
                style: Style::Leveled,
            }
        }
    }

    fn read(pairs: &[&str]) -> anyhow::Result<Demo> {
        let given = pairs
            .iter()
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect();
        super::read("parameter", &given)
    }

    /// A knob that is a list of an enum's names.
    #[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Listed {
        /// styles, in order
        styles: Vec<Style>,
    }

    #[test]
    fn lists_are_comma_separated_names() {
        let given = |text: &str| BTreeMap::from([("styles".to_string(), text.to_string())]);
        let l: Listed = super::read("parameter", &given("universal, leveled,")).unwrap();
        assert_eq!(l.styles, [Style::Universal, Style::Leveled]);
        assert_eq!(record(&l)["styles"], "universal,leveled");
        let e = super::read::<Listed>("parameter", &given("leveled,tiered")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter `styles`: `tiered` is not leveled or universal"
        );
        let spec = &specs::<Listed>()[0];
        assert_eq!(spec.values, "leveled|universal,...");
    }

    /// Knobs that may be left unset (a server's default).
    #[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Optional {
        /// a style, or the server's
        style: Option<Style>,
        /// a switch, or the server's
        sync: Option<Switch>,
    }

    #[test]
    fn optional_knobs_are_unset_when_empty() {
        let given = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        let o: Optional = super::read("setting", &given("style", "")).unwrap();
        assert_eq!((&o.style, record(&o)["style"].as_str()), (&None, ""));
        let o: Optional = super::read("setting", &given("style", "universal")).unwrap();
        assert_eq!(o.style, Some(Style::Universal));
        let o: Optional = super::read("setting", &given("sync", "off")).unwrap();
        assert_eq!(
            (o.sync.as_ref().unwrap().value, record(&o)["sync"].as_str()),
            (false, "off")
        );
        let values: Vec<String> = specs::<Optional>().into_iter().map(|s| s.values).collect();
        assert_eq!(values, ["leveled|universal", "bool"]);
    }

    #[test]
    fn malformed_values_name_the_knob() {
        let e = read(&["num_kyes=5"]).unwrap_err().to_string();
        assert!(e.contains("unknown field `num_kyes`"), "{e}");
        let e = read(&["num_keys=lots"]).unwrap_err().to_string();
        assert_eq!(e, "parameter `num_keys`: `lots` is not a whole number");
        let e = read(&["duration=soon"]).unwrap_err().to_string();
        assert!(e.starts_with("parameter `duration`: "), "{e}");
        let e = read(&["deletes=maybe"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "parameter `deletes`: expected on or off (or true/false), got `maybe`"
        );
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
        assert_eq!(r["deletes"], "no");
        assert!(!d.deletes.value);
        assert_eq!(r["ratio"], "0.5");
        assert_eq!(read(&["style=universal"]).unwrap().style, Style::Universal);
        let e = read(&["style=tiered"]).unwrap_err().to_string();
        assert_eq!(e, "parameter `style`: `tiered` is not leveled or universal");
    }

    #[test]
    fn specs_list_fields_in_order_with_defaults_and_help() {
        let s = specs::<Demo>();
        let names: Vec<&str> = s.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["num_keys", "ratio", "duration", "deletes", "style"]);
        assert_eq!(s[2].default, "20s");
        assert_eq!(s[0].help, "keys loaded");
        let values: Vec<&str> = s.iter().map(|p| p.values.as_str()).collect();
        assert_eq!(
            values,
            ["integer", "number", "duration", "bool", "leveled|universal"]
        );
        assert_eq!(
            (s[4].default.as_str(), s[4].help.as_str()),
            ("leveled", "compaction style")
        );
    }
}
