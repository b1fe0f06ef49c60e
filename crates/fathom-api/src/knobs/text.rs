//! The serde deserializer behind `knobs::read`: the given `key=value` text as a map whose
//! values parse to what each field asks for, with errors that name the knob and list what an
//! enum accepts.

use serde::de::{self, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// `given` read into `T`, its errors naming each knob as a `noun`.
pub(super) fn read<T: DeserializeOwned>(
    noun: &str,
    given: &BTreeMap<String, String>,
) -> Result<T, Error> {
    T::deserialize(Given {
        noun,
        entries: given.iter(),
        value: None,
    })
}

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

    /// `` `tiered` is not leveled or universal ``.
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let list = match expected {
            [] => "accepted".to_string(),
            [one] => one.to_string(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
        };
        Error(format!("`{variant}` is not {list}"))
    }
}

/// The given `key=value` text as a map whose values parse to what each field asks for.
struct Given<'a, I: Iterator<Item = (&'a String, &'a String)>> {
    noun: &'a str,
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
            .map_err(|e| Error(format!("{} `{key}`: {}", self.noun, e.0)))
    }
}

/// One parameter's text, parsed to the type its field asks for.
struct Text<'a>(&'a str);

impl Text<'_> {
    /// A whole number, `_` allowed between digits; negative where the field's type takes it.
    fn whole<T: std::str::FromStr>(&self) -> Result<T, Error> {
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
        visitor.visit_i64(self.whole()?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(self.number()?)
    }

    /// An optional knob: empty text leaves it unset.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.0.is_empty() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    /// A list: its items comma-separated (`oltp_point_select,oltp_read_only`).
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Items(self.0.split(',')))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i128 u8 u16 u128 f32 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct map struct identifier ignored_any
    }
}

/// A list's items, each parsed as one knob's text; blanks between commas are passed over.
struct Items<'a>(std::str::Split<'a, char>);

impl<'de> de::SeqAccess<'de> for Items<'_> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.0.by_ref().map(str::trim).find(|item| !item.is_empty()) {
            Some(item) => seed.deserialize(Text(item)).map(Some),
            None => Ok(None),
        }
    }
}
