//! The response contract every Brain-facing tool returns.
//!
//! Success: `{"status":"ok","summary":…,"data":{…}}` as `structuredContent` (Claude Code shows
//! the model only that on success). Error: `{"status":"error","error_code":…,"summary":…,
//! "hint":…}` as the text content with `isError: true` (Claude Code shows only the text on
//! errors); the same JSON is also the structured content so both stay consistent.
//!
//! Text the Brain reads is plain: every string of an envelope — summaries and hints that quote
//! an issue title, a record message or git's words, and the data (issue bodies and comments,
//! records, paths, git's output) — has its control characters (but newline and tab), its
//! direction-changing characters and invisible spaces written visibly (`\u{1b}`), here, at the
//! one place every answer passes.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ToolError;

/// A successful tool answer: a one-line summary for the Brain and the tool's data.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub summary: String,
    pub data: Value,
}

impl Reply {
    pub fn new(summary: impl Into<String>, data: impl Serialize) -> Self {
        let data = serde_json::to_value(data).expect("tool data is plain JSON-serialisable");
        Self {
            summary: summary.into(),
            data,
        }
    }

    pub fn to_json(&self) -> Value {
        plain(json!({"status": "ok", "summary": self.summary, "data": self.data}))
    }
}

/// The error envelope for `err` (the one shape every failure takes).
pub fn error_json(err: &ToolError) -> Value {
    plain(err.to_json())
}

/// `value` with every string and key shown plainly ([`butler_worker::plain::escaped`]).
fn plain(value: Value) -> Value {
    use butler_worker::plain::escaped;
    match value {
        Value::String(s) => match escaped(&s) {
            std::borrow::Cow::Borrowed(_) => Value::String(s),
            std::borrow::Cow::Owned(shown) => Value::String(shown),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(plain).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (escaped(&k).into_owned(), plain(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Turns a tool outcome into the MCP result the client receives.
pub fn into_call_result(outcome: Result<Reply, ToolError>) -> CallToolResult {
    match outcome {
        Ok(reply) => CallToolResult::structured(reply.to_json()),
        Err(err) => {
            let value = error_json(&err);
            let mut result = CallToolResult::error(vec![ContentBlock::text(value.to_string())]);
            result.structured_content = Some(value);
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_of_an_answer_is_shown_plainly() {
        let reply = Reply::new(
            "#1 Fix \u{1b}[2J the parser",
            json!({"issue": {"title": "a\u{7}b", "body": "line\r\n\tnext"},
                   "names": ["x\u{202e}"], "n\u{0}": 1}),
        );
        let value = reply.to_json();
        assert_eq!(value["summary"], json!("#1 Fix \\u{1b}[2J the parser"));
        assert_eq!(value["data"]["issue"]["title"], json!("a\\u{7}b"));
        assert_eq!(value["data"]["issue"]["body"], json!("line\\u{d}\n\tnext"));
        assert_eq!(value["data"]["names"][0], json!("x\\u{202e}"));
        assert_eq!(value["data"]["n\\u{0}"], json!(1));
        let err = ToolError::new(
            crate::error::ErrorCode::NotFound,
            "No line `a\u{1b}`".to_owned(),
            "hint".to_owned(),
        );
        assert_eq!(error_json(&err)["summary"], json!("No line `a\\u{1b}`"));
    }
}
