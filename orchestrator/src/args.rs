//! The Brain-facing tools' arguments. Their doc comments become the parameter descriptions
//! the Brain reads, so they are short. Arguments arrive as raw JSON and are parsed here, so a
//! malformed call gets the envelope (`need_input` naming the problem), not a protocol error.

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::WorkError;

/// Parses a tool's raw arguments into its argument type.
pub fn parse<T: DeserializeOwned>(raw: JsonObject) -> Result<T, WorkError> {
    serde_json::from_value(serde_json::Value::Object(raw)).map_err(|e| {
        let mut reason = e.to_string();
        reason.truncate(300);
        WorkError::InvalidArgument {
            field: "arguments",
            reason,
        }
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStartArgs {
    /// Absolute path of the project (a git working tree).
    pub project_root: String,
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
    /// What the work does, first line a short summary.
    #[serde(default)]
    pub message: Option<String>,
    /// Issues to link. Omit: the active issue; []: no link.
    #[serde(default)]
    pub issue_ids: Option<Vec<i64>>,
    /// Credential-like paths the user allowed.
    #[serde(default)]
    pub allow_sensitive: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// Only this file or directory.
    #[serde(default)]
    pub path: Option<String>,
    /// "stat" (default) or "full" (the patch, bounded).
    #[serde(default)]
    pub level: Option<String>,
    /// A record id from work_history: that record's changes.
    #[serde(default)]
    pub record_id: Option<String>,
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
    /// "open" (default), "closed" or "all".
    #[serde(default)]
    pub state: Option<String>,
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
