//! What Butler can do for the Brain: capabilities and live procedures alike (`list_skills`),
//! and the slim contract of one (`get_skill_usage`): the target it needs, when it waits for
//! approval, and one contract to copy. `get_skill_usage("butler")` gives the common contract
//! structure once.

use serde::Serialize;
use serde_json::{Value, json};

use super::capability::Usage;
use super::engine::Engine;
use super::error::OpsError;
use crate::contract::procedure::step_kinds;
use crate::contract::{DelegationMode, IntentName, ProcedureStatus};

/// One entry of `list_skills`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skill {
    pub intent: String,
    /// `capability` (in code) or `procedure` (taught).
    pub by: &'static str,
    /// A procedure's target signature (`service=*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ProcedureStatus>,
    /// A procedure's verified runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub successes: Option<u32>,
}

/// `get_skill_usage`'s answer for a taught intent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcedureUsage {
    pub intent: String,
    pub delegation_mode: DelegationMode,
    /// The target signatures procedures exist for (`*`: any value).
    pub targets: Vec<String>,
    /// The steps of the most proven one, as one line each.
    pub steps: Vec<String>,
    pub example: Value,
}

/// `get_skill_usage`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SkillUsage {
    Capability(Usage),
    Procedure(ProcedureUsage),
    Common(Value),
}

impl Engine {
    /// `list_skills`: every capability intent and every live procedure.
    pub async fn skills(&self) -> Result<Vec<Skill>, OpsError> {
        let mut skills: Vec<Skill> = self
            .capabilities
            .all()
            .flat_map(|c| c.intents().iter())
            .map(|intent| Skill {
                intent: (*intent).to_owned(),
                by: "capability",
                target: None,
                status: None,
                successes: None,
            })
            .collect();
        let procedures = self.db(|l| l.all_live_procedures()).await?;
        skills.extend(procedures.into_iter().map(|p| Skill {
            intent: p.intent.to_string(),
            by: "procedure",
            target: Some(p.signature.to_string()),
            status: Some(p.status),
            successes: Some(p.successes),
        }));
        Ok(skills)
    }

    /// `get_skill_usage(name)`: the slim contract of one intent, or (`butler`) the common one.
    pub async fn usage(&self, name: &str) -> Result<SkillUsage, OpsError> {
        if name == "butler" {
            return Ok(SkillUsage::Common(common()));
        }
        if let Some(capability) = self.capabilities.find(name) {
            return Ok(SkillUsage::Capability(capability.usage(name)));
        }
        let Ok(intent) = IntentName::new(name) else {
            return Err(OpsError::NoSkill(name.chars().take(64).collect()));
        };
        let lookup = intent.clone();
        let mut live = self.db(move |l| l.live_procedures(&lookup)).await?;
        if live.is_empty() {
            return Err(OpsError::NoSkill(name.to_owned()));
        }
        live.sort_by_key(|p| (p.status == ProcedureStatus::Active, p.successes, p.id));
        let best = live.last().expect("not empty");
        let place_target: serde_json::Map<String, Value> = best
            .signature
            .keys()
            .into_iter()
            .map(|k| (k.clone(), json!(format!("<{k}>"))))
            .collect();
        let steps = best
            .steps
            .iter()
            .map(|s| serde_json::to_string(s).unwrap_or_default())
            .collect();
        Ok(SkillUsage::Procedure(ProcedureUsage {
            intent: intent.to_string(),
            delegation_mode: DelegationMode::KnownOnly,
            targets: live.iter().map(|p| p.signature.to_string()).collect(),
            steps,
            example: json!({"intent": intent.as_str(), "target": place_target,
                            "delegation_mode": "known_only"}),
        }))
    }
}

/// The structure every contract shares, and how to teach.
fn common() -> Value {
    json!({
        "contract": {
            "intent": "what to achieve (snake_case)",
            "target": "what it acts on: {name: text}",
            "delegation_mode": "known_only | teach_if_unknown | agent (implement only)",
            "constraints": "{timeout_s?, require_approval_for?: [intent…]}",
            "success_criteria": "{commands?: [{command, exit_code?, output_contains?, output_matches?}], file_checks?: [{path, exists|absent|contains}]}",
            "task_id": "optional; Butler allocates one",
            "requested_by": "optional (brain)",
            "requested_at": "optional (now)"
        },
        "statuses": ["ok", "need_input", "need_approval", "failed", "cancelled"],
        "teach": {
            "step_kinds": step_kinds(),
            "cmd": {"argv": ["program", "arg", "{target.NAME}"], "cwd?": "dir", "timeout_s?": 60, "exit_code?": 0, "writes?": ["new top-level dir/", "/abs/path", "~/path (outside the project: approval every run)"]},
            "cmd_shell": {"shell": "script reading $TARGET_NAME"},
            "check": {"command": "shell line", "output_matches?": "regex"},
            "check_file": {"path": "file", "exists": true},
            "wait": {"until": "a check", "timeout_s?": 60, "interval_s?": 2},
            "mcp_call": {"server": "[mcp_servers] name", "tool": "name", "params": {}}
        },
        "approve": "decision is exactly \"approve\" or \"deny\""
    })
}
