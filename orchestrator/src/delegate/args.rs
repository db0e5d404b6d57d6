//! The delegation tools' arguments. The contract itself is one object the engine checks field
//! by field (its structure is in `get_skill_usage("butler")`, not in every turn's tool list).

use butler_worker::ops::Decision;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitTaskArgs {
    /// {intent, target, delegation_mode, success_criteria?, constraints?}.
    pub contract: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveArgs {
    pub task_id: String,
    /// The user's answer.
    pub decision: Decision,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeachArgs {
    /// The need_input task; or give intent and target.
    #[serde(default)]
    pub task_id: Option<String>,
    #[serde(default)]
    pub intent: Option<String>,
    /// Values may be "*" (any).
    #[serde(default)]
    pub target: Option<Map<String, Value>>,
    /// Typed steps: {kind: cmd|check|wait|mcp_call, …}.
    pub steps: Vec<Map<String, Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegatedTaskArgs {
    pub task_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// An intent from list_skills, or "butler".
    pub name: String,
}
