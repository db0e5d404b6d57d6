//! Reading what the Brain writes (a submitted contract, a taught step) into types, field by
//! field, so that every wrong field is named in one answer.
//!
//! A written form is a struct with `deny_unknown_fields` whose fields are each a [`Given`]: a
//! field that does not read as its type does not stop the others, it is kept with its reason
//! for the checker to name. The names of a written form's fields, and of an enum's variants,
//! come from its `Deserialize` ([`fields`], [`variants`]), never from a second list.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::{Map, Value};

/// One field as written: left out, `null`, a value of its type, or not one.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Given<T> {
    #[default]
    Absent,
    Null,
    Is(T),
    Wrong(Wrong),
}

/// Why a value did not read as its type, and where inside it (`[2]`, `.name`; empty at the
/// value itself).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Wrong {
    pub(crate) path: String,
    pub(crate) reason: String,
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(Given::Null);
        }
        Ok(match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(read) => Given::Is(read),
            Err(e) => {
                let path = e.path().to_string();
                Given::Wrong(Wrong {
                    path: if path == "." { String::new() } else { path },
                    reason: e.into_inner().to_string(),
                })
            }
        })
    }
}

/// A written form read from an object: the keys it does not have (in the order written, for
/// the caller to name), and its fields, each read on its own.
pub(crate) struct Read<T> {
    pub(crate) value: T,
    pub(crate) unknown: Vec<String>,
    /// The form did not read as a whole (a field that is not a [`Given`]): where and why.
    pub(crate) broken: Option<Wrong>,
}

/// Reads `map` into the written form `T`. Keys `T` has no field for are left out of the
/// reading and listed; `T` refuses them itself too (`deny_unknown_fields`).
pub(crate) fn read<T: DeserializeOwned + Default>(map: &Map<String, Value>) -> Read<T> {
    let names = fields::<T>();
    let (known, unknown): (Map<String, Value>, Map<String, Value>) = map
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| names.contains(&k.as_str()));
    let (value, broken) = match serde_path_to_error::deserialize(Value::Object(known)) {
        Ok(value) => (value, None),
        Err(e) => {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            (
                T::default(),
                Some(Wrong {
                    path,
                    reason: e.into_inner().to_string(),
                }),
            )
        }
    };
    Read {
        value,
        unknown: unknown.into_iter().map(|(k, _)| k).collect(),
        broken,
    }
}

/// The field names of a struct, as its derived `Deserialize` knows them (in declaration
/// order, renamed as written). Empty for a type that is not a plain struct.
pub(crate) fn fields<T: DeserializeOwned>() -> &'static [&'static str] {
    match T::deserialize(Names) {
        Err(Found(Some(names))) => names,
        _ => &[],
    }
}

/// The variant names of an enum, as its derived `Deserialize` knows them (in declaration
/// order, renamed as written). Empty for a type that is not an externally tagged enum.
pub(crate) fn variants<T: DeserializeOwned>() -> &'static [&'static str] {
    fields::<T>()
}

/// A deserializer that answers nothing and reports the names a derived `Deserialize` asks for.
struct Names;

/// The names asked for (`None`: the type asked for something else).
#[derive(Debug)]
struct Found(Option<&'static [&'static str]>);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("names of a type")
    }
}

impl std::error::Error for Found {}

impl de::Error for Found {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Found(None)
    }
}

impl<'de> Deserializer<'de> for Names {
    type Error = Found;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
        Err(Found(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Found> {
        Err(Found(Some(fields)))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Found> {
        Err(Found(Some(variants)))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

/// `a.b`, or `b` at the top.
pub(crate) fn join(prefix: &str, field: &str) -> String {
    match (prefix.is_empty(), field.is_empty()) {
        (true, _) => field.to_owned(),
        (_, true) => prefix.to_owned(),
        _ if field.starts_with('[') => format!("{prefix}{field}"),
        _ => format!("{prefix}.{field}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Form {
        name: Given<String>,
        #[serde(rename = "count_s")]
        count: Given<u64>,
        items: Given<Vec<Given<u8>>>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Kind {
        One,
        McpCall,
    }

    #[test]
    fn names_come_from_the_types() {
        assert_eq!(fields::<Form>(), ["name", "count_s", "items"]);
        assert_eq!(variants::<Kind>(), ["one", "mcp_call"]);
        assert!(fields::<String>().is_empty());
    }

    #[test]
    fn every_field_reads_on_its_own() {
        let map = json!({"colour": 1, "name": 3, "count_s": null, "items": [1, "x", 300, null]});
        let form = read::<Form>(map.as_object().expect("object"));
        assert_eq!(form.unknown, ["colour"]);
        assert!(form.broken.is_none());
        let Given::Wrong(wrong) = &form.value.name else {
            panic!("{:?}", form.value.name)
        };
        assert!(wrong.reason.contains("expected a string"), "{wrong:?}");
        assert_eq!(form.value.count, Given::Null);
        let Given::Is(items) = &form.value.items else {
            panic!("{:?}", form.value.items)
        };
        assert_eq!(items[0], Given::Is(1));
        assert!(matches!(items[1], Given::Wrong(_)));
        assert!(matches!(items[2], Given::Wrong(_)));
        assert_eq!(items[3], Given::Null);
        assert_eq!(
            read::<Form>(&Map::new()).value.items,
            Given::<Vec<Given<u8>>>::Absent
        );
    }

    #[test]
    fn paths_join() {
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("steps[0]", ""), "steps[0]");
        assert_eq!(join("steps[0]", "writes[2]"), "steps[0].writes[2]");
        assert_eq!(join("target", "[1]"), "target[1]");
    }
}
