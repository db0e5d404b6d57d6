//! The pinned Kubernetes API subset (`testkit/kubernetes/api-subset.json`, from release-1.33's
//! OpenAPI document) and a validator that checks a JSON value against one of its definitions:
//! types and formats, `required`, `enum` where given, unknown properties refused. Every problem
//! is returned with its JSON path (`spec.template.spec.containers[0].env[2].value`).

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The subset's text, kept in the repository beside its extraction script.
const SUBSET: &str = include_str!("../../kubernetes/api-subset.json");

/// The definitions of the pinned subset, keyed by their full names
/// (`io.k8s.api.batch.v1.Job`).
#[derive(Debug)]
pub struct ApiSubset {
    definitions: Map<String, Value>,
}

/// One way a value fails its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where, from the value's root: `spec.foo`, `spec.template.spec.containers[0].name`.
    pub path: String,
    /// What is wrong there.
    pub kind: ProblemKind,
}

/// What is wrong at a [`Problem`]'s path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// A property the schema does not declare.
    UnknownField,
    /// A property the schema requires is absent (or null).
    MissingRequired,
    /// The value's JSON type (or format) is not the schema's.
    WrongType {
        /// The schema's type (with its format when that is what failed).
        expected: String,
        /// What the value is.
        found: String,
    },
    /// A string outside the schema's `enum`.
    NotInEnum {
        /// The value given.
        value: String,
        /// The values the schema allows.
        allowed: Vec<String>,
    },
    /// The schema names a definition the subset lacks (the subset's own gap).
    UnknownDefinition(String),
}

impl fmt::Display for Problem {
    /// Worded as the API server's strict decoding and validation word them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "<root>"
        } else {
            &self.path
        };
        match &self.kind {
            ProblemKind::UnknownField => write!(f, "unknown field \"{path}\""),
            ProblemKind::MissingRequired => write!(f, "{path}: Required value"),
            ProblemKind::WrongType { expected, found } => {
                write!(f, "{path}: Invalid value: {found}: expected {expected}")
            }
            ProblemKind::NotInEnum { value, allowed } => write!(
                f,
                "{path}: Unsupported value: \"{value}\": supported values: {}",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ProblemKind::UnknownDefinition(name) => {
                write!(f, "{path}: the subset has no definition {name}")
            }
        }
    }
}

impl ApiSubset {
    /// The pinned subset, parsed once.
    pub fn pinned() -> &'static ApiSubset {
        static PINNED: OnceLock<ApiSubset> = OnceLock::new();
        PINNED.get_or_init(|| {
            let mut doc: Value =
                serde_json::from_str(SUBSET).expect("testkit/kubernetes/api-subset.json is JSON");
            let definitions = match doc.get_mut("definitions").map(Value::take) {
                Some(Value::Object(definitions)) => definitions,
                _ => panic!("testkit/kubernetes/api-subset.json has no definitions"),
            };
            ApiSubset { definitions }
        })
    }

    /// The full names of every definition in the subset.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.definitions.keys().map(String::as_str)
    }

    /// The definition called `name`: a full name, or a short one (`Job`, `ObjectMeta`) when
    /// only one definition ends with it.
    pub fn definition(&self, name: &str) -> Option<(&str, &Value)> {
        if let Some((full, schema)) = self.definitions.get_key_value(name) {
            return Some((full.as_str(), schema));
        }
        let suffix = format!(".{name}");
        let mut found = self
            .definitions
            .iter()
            .filter(|(full, _)| full.ends_with(&suffix));
        match (found.next(), found.next()) {
            (Some((full, schema)), None) => Some((full.as_str(), schema)),
            _ => None,
        }
    }

    /// Checks `value` against the definition `name` (full or short); every problem, with its
    /// path. An empty list means the value fits.
    pub fn validate(&self, name: &str, value: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        match self.definition(name) {
            Some((_, schema)) => self.check(schema, value, "", &mut problems),
            None => problems.push(Problem {
                path: String::new(),
                kind: ProblemKind::UnknownDefinition(name.to_owned()),
            }),
        }
        problems
    }

    fn check(&self, schema: &Value, value: &Value, path: &str, problems: &mut Vec<Problem>) {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            match self.definitions.get(name) {
                Some(target) => self.check(target, value, path, problems),
                None => problems.push(Problem {
                    path: path.to_owned(),
                    kind: ProblemKind::UnknownDefinition(name.to_owned()),
                }),
            }
            return;
        }
        let wrong = |expected: &str, problems: &mut Vec<Problem>| {
            problems.push(Problem {
                path: path.to_owned(),
                kind: ProblemKind::WrongType {
                    expected: expected.to_owned(),
                    found: describe(value),
                },
            });
        };
        let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                let Some(object) = value.as_object() else {
                    return wrong("object", problems);
                };
                self.check_object(schema, object, path, problems);
            }
            Some("array") => {
                let Some(items) = value.as_array() else {
                    return wrong("array", problems);
                };
                if let Some(item_schema) = schema.get("items") {
                    for (index, item) in items.iter().enumerate() {
                        let item_path = format!("{path}[{index}]");
                        if !item.is_null() {
                            self.check(item_schema, item, &item_path, problems);
                        }
                    }
                }
            }
            Some("string") => match value {
                Value::String(text) => {
                    if format == "date-time" && !is_rfc3339(text) {
                        wrong("string (date-time)", problems);
                    }
                    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
                        let allowed: Vec<String> = allowed
                            .iter()
                            .filter_map(|a| a.as_str().map(str::to_owned))
                            .collect();
                        if !allowed.iter().any(|a| a == text) {
                            problems.push(Problem {
                                path: path.to_owned(),
                                kind: ProblemKind::NotInEnum {
                                    value: text.clone(),
                                    allowed,
                                },
                            });
                        }
                    }
                }
                // IntOrString is `type: string, format: int-or-string`.
                Value::Number(number) if format == "int-or-string" && number.is_i64() => {}
                _ => wrong("string", problems),
            },
            Some("integer") => {
                let fits = match format {
                    "int32" => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
                    _ => value.is_i64() || value.is_u64(),
                };
                if !fits {
                    wrong(if format.is_empty() { "integer" } else { format }, problems);
                }
            }
            Some("number") if !value.is_number() => wrong("number", problems),
            Some("boolean") if !value.is_boolean() => wrong("boolean", problems),
            // No type: anything (none in the subset today).
            _ => {}
        }
    }

    fn check_object(
        &self,
        schema: &Value,
        object: &Map<String, Value>,
        path: &str,
        problems: &mut Vec<Problem>,
    ) {
        let child = |key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for key in required.iter().filter_map(Value::as_str) {
                if object.get(key).is_none_or(Value::is_null) {
                    problems.push(Problem {
                        path: child(key),
                        kind: ProblemKind::MissingRequired,
                    });
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        for (key, member) in object {
            if member.is_null() {
                continue;
            }
            if let Some(property) = properties.and_then(|p| p.get(key)) {
                self.check(property, member, &child(key), problems);
            } else if let Some(additional) = additional {
                self.check(additional, member, &child(key), problems);
            } else if properties.is_some() {
                problems.push(Problem {
                    path: child(key),
                    kind: ProblemKind::UnknownField,
                });
            }
            // An object with neither (RawExtension, FieldsV1) holds anything.
        }
    }
}

/// Checks `value` against the pinned subset's definition `name` (full or short).
pub fn validate(name: &str, value: &Value) -> Result<(), Vec<Problem>> {
    let problems = ApiSubset::pinned().validate(name, value);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// A value's JSON type as the problems name it.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

/// Whether `text` is an RFC 3339 time as Kubernetes writes them (`2026-12-02T10:33:27Z`,
/// fractions allowed, `Z` or an offset).
fn is_rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let head = digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && (bytes[10] == b'T' || bytes[10] == b't')
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19);
    if !head {
        return false;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let end = fraction
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(fraction.len());
        if end == 0 {
            return false;
        }
        rest = &fraction[end..];
    }
    rest == "Z"
        || rest == "z"
        || (rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && rest.as_bytes()[3] == b':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_names_resolve_to_their_definitions() {
        let subset = ApiSubset::pinned();
        assert_eq!(
            subset.definition("Job").unwrap().0,
            "io.k8s.api.batch.v1.Job"
        );
        assert!(subset.definition("io.k8s.api.core.v1.Pod").is_some());
        assert!(subset.definition("NoSuchThing").is_none());
    }

    #[test]
    fn times_are_rfc3339() {
        assert!(is_rfc3339("2026-12-02T10:33:27Z"));
        assert!(is_rfc3339("2026-12-02T10:33:27.123456789Z"));
        assert!(is_rfc3339("2026-12-02T10:33:27+01:00"));
        assert!(!is_rfc3339("2026-12-02 10:33:27"));
        assert!(!is_rfc3339("yesterday"));
    }

    #[test]
    fn int_or_string_takes_both() {
        let subset = ApiSubset::pinned();
        let probe = json!({"httpGet": {"port": 8080}});
        assert_eq!(subset.validate("io.k8s.api.core.v1.Probe", &probe), vec![]);
        let probe = json!({"httpGet": {"port": "http"}});
        assert_eq!(subset.validate("io.k8s.api.core.v1.Probe", &probe), vec![]);
    }
}
