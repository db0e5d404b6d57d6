//! The response contract every Brain-facing tool returns.
//!
//! Success: `{"status":"ok","summary":…,"data":{…}}` as `structuredContent` (Claude Code shows
//! the model only that on success). Error: `{"status":"error","error_code":…,"summary":…,
//! "hint":…}` as the text content with `isError: true` (Claude Code shows only the text on
//! errors); the same JSON is also the structured content so both stay consistent.

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
        json!({"status": "ok", "summary": self.summary, "data": self.data})
    }
}

/// The error envelope for `err` (the one shape every failure takes).
pub fn error_json(err: &ToolError) -> Value {
    let mut value = json!({
        "status": "error",
        "error_code": err.code.as_str(),
        "summary": err.summary,
        "hint": err.hint,
    });
    if let Some(data) = &err.data {
        value["data"] = data.clone();
    }
    value
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
