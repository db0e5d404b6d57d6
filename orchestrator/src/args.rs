//! The Brain-facing tools' arguments. Their doc comments become the parameter descriptions
//! the Brain reads, so they are short; an argument that takes one of a fixed set of values is
//! an enum, so its schema lists them. Arguments arrive as raw JSON and are parsed here, so a
//! malformed call gets the envelope (`need_input` naming the problem), not a protocol error.

use butler_worker::issues::StateFilter;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::error::WorkError;
use crate::work::diff::Level;

/// Parses a tool's raw arguments into its argument type. An argument whose value is not one of
/// the values its schema lists is named as the field; other mismatches as `arguments`.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(raw: JsonObject) -> Result<T, WorkError> {
    let value = Value::Object(raw);
    T::deserialize(&value).map_err(|e| {
        let mut reason = e.to_string();
        reason.truncate(300);
        WorkError::InvalidArgument {
            field: outside_its_set::<T>(&value).unwrap_or("arguments"),
            reason,
        }
    })
}

/// The argument of `T` given a value outside the fixed set its schema lists (`enum`).
fn outside_its_set<T: DeserializeOwned + JsonSchema + 'static>(
    value: &Value,
) -> Option<&'static str> {
    let schema = schema_for_type::<T>();
    let properties = schema.get("properties")?.as_object()?;
    let defs = schema.get("$defs").and_then(Value::as_object);
    let (name, _) = value.as_object()?.iter().find(|(name, given)| {
        let allowed = properties
            .get(*name)
            .map(|p| listed_values(p, defs))
            .unwrap_or_default();
        !allowed.is_empty() && !given.is_null() && !allowed.contains(given)
    })?;
    field_names::<T>().iter().copied().find(|f| f == name)
}

/// Every value a property's schema lists, through `$ref`, `anyOf` and `oneOf`.
fn listed_values<'a>(schema: &'a Value, defs: Option<&'a Map<String, Value>>) -> Vec<&'a Value> {
    let mut out = Vec::new();
    if let Some(Value::Array(values)) = schema.get("enum") {
        out.extend(values);
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str)
        && let Some(def) = target
            .strip_prefix("#/$defs/")
            .and_then(|name| defs?.get(name))
    {
        out.extend(listed_values(def, defs));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = schema.get(key) {
            for alternative in alternatives {
                out.extend(listed_values(alternative, defs));
            }
        }
    }
    out
}

/// The field names `T`'s derived `Deserialize` declares (static, so an error can carry one):
/// derived struct deserializers hand them to `deserialize_struct`, where this one keeps them.
fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Fields<'a>(&'a mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only field names are read"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            self.deserialize_any(visitor)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStartArgs {
    /// The project's absolute path.
    pub project_root: String,
    /// Butler's language.
    pub language: Option<crate::catalogue::Lang>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkStartArgs {
    /// The issue this work is for; omit or null to clear.
    #[serde(default)]
    pub issue_id: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordArgs {
    /// What the work does; first line a summary.
    #[serde(default)]
    pub message: Option<String>,
    /// Issues to link. Omit: the active issue; []: no link.
    #[serde(default)]
    pub issue_ids: Option<Vec<i64>>,
    /// Flagged paths the user cleared.
    #[serde(default)]
    pub allow_sensitive: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishArgs {
    /// Paths or records the user cleared.
    #[serde(default)]
    pub allow_sensitive: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// Only this file or directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Default stat; full is bounded.
    #[serde(default)]
    pub level: Option<Level>,
    /// A record id from work_history: that record's changes.
    #[serde(default)]
    pub record_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OplogArgs {
    /// How many operations (default 10, max 100).
    #[serde(default)]
    pub n: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    /// The operation to undo (default: the newest).
    #[serde(default)]
    pub operation: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// How many records (default 10, max 100).
    #[serde(default)]
    pub n: Option<i64>,
    /// Only records touching this path.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcsArgs {
    /// Arguments after `git`, e.g. ["branch", "-a"].
    pub args: Vec<String>,
    /// Approval reference, only after the user approved.
    #[serde(default)]
    pub approval: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueReadArgs {
    pub issue_id: i64,
    /// Include the last N comments (default 0).
    #[serde(default)]
    pub last_n_comments: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueCreateArgs {
    pub title: String,
    /// Markdown with sections: Current state, Next action, Blockers.
    #[serde(default)]
    pub body: Option<String>,
    /// Label names.
    #[serde(default)]
    pub label_names: Option<Vec<String>>,
    /// Instead of body.
    #[serde(default)]
    pub current_state: Option<String>,
    /// Instead of body.
    #[serde(default)]
    pub next_action: Option<String>,
    /// Instead of body.
    #[serde(default)]
    pub blockers: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueCommentArgs {
    pub issue_id: i64,
    pub body: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueDeleteCommentArgs {
    pub issue_id: i64,
    pub comment_id: i64,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueTitleArgs {
    pub issue_id: i64,
    pub title: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueBodyArgs {
    pub issue_id: i64,
    /// Markdown with sections: Current state, Next action, Blockers.
    pub body: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueIdArgs {
    pub issue_id: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueListArgs {
    /// Default open.
    #[serde(default)]
    pub state: Option<StateFilter>,
    /// Only issues with this label.
    #[serde(default)]
    pub label: Option<String>,
    /// Page, from 1.
    #[serde(default)]
    pub page: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    #[serde(default)]
    pub auto: Option<bool>,
    /// Record message (default: proposed).
    #[serde(default)]
    pub message: Option<String>,
    /// Issue comment (default: the records).
    #[serde(default)]
    pub comment: Option<String>,
    #[serde(default)]
    pub close: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLineArgs {
    /// Default: from the active issue or the date.
    #[serde(default)]
    pub name: Option<String>,
    /// A line or record id.
    #[serde(default)]
    pub from: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineNameArgs {
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeLineArgs {
    #[serde(default)]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::implement::RunImplementArgs;

    fn raw(value: Value) -> JsonObject {
        value.as_object().expect("object").clone()
    }

    fn refused_field<T: DeserializeOwned + JsonSchema + 'static + std::fmt::Debug>(
        value: Value,
    ) -> &'static str {
        match parse::<T>(raw(value)) {
            Err(WorkError::InvalidArgument { field, .. }) => field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fixed_sets_parse_to_their_enums() {
        let a: DiffArgs = parse(raw(json!({"level": "full"}))).expect("full");
        assert_eq!(a.level, Some(Level::Full));
        let a: IssueListArgs = parse(raw(json!({"state": "closed"}))).expect("closed");
        assert_eq!(a.state, Some(StateFilter::Closed));
        let a: RunImplementArgs = parse(raw(
            json!({"goal": "g", "target_paths": [], "agent": "codex"}),
        ))
        .expect("codex");
        assert_eq!(a.agent, Some(butler_maid::AgentKind::Codex));
    }

    #[test]
    fn a_value_outside_the_set_names_its_field_and_other_mistakes_the_arguments() {
        assert_eq!(
            refused_field::<DiffArgs>(json!({"level": "patch"})),
            "level"
        );
        assert_eq!(
            refused_field::<IssueListArgs>(json!({"state": true})),
            "state"
        );
        let agent = json!({"goal": "g", "target_paths": [], "agent": "cursor"});
        assert_eq!(refused_field::<RunImplementArgs>(agent), "agent");
        assert_eq!(refused_field::<DiffArgs>(json!({"path": 3})), "arguments");
        assert_eq!(
            refused_field::<DiffArgs>(json!({"owner": "me"})),
            "arguments"
        );
    }

    #[test]
    fn field_names_are_the_serialized_names() {
        assert_eq!(field_names::<DiffArgs>(), ["path", "level", "record_id"]);
        assert!(field_names::<NoArgs>().is_empty());
    }
}
