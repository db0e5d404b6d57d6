//! The Task Contract: what to achieve (the intent and its target), how it is delegated, the
//! limits it runs under, how success is judged, and who asked when.
//!
//! Serialised, a contract reads as the Brain writes one:
//! `{"task_id", "intent", "target", "delegation_mode", "constraints", "success_criteria",
//! "requested_by", "requested_at", "issue_id"?}`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ContractError, IntentName, TaskId};
use crate::time::Timestamp;

/// The typed Task Contract: built once (validated), then read-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskContract {
    pub task_id: TaskId,
    /// The intent and its target (`"intent"` and `"target"` when serialised).
    #[serde(flatten)]
    pub work: Work,
    pub delegation_mode: DelegationMode,
    pub constraints: Constraints,
    pub success_criteria: SuccessCriteria,
    /// Who asked: `brain`, `terminal`, …
    pub requested_by: String,
    pub requested_at: Timestamp,
    /// The issue the task works on, if any (its records refer to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<u64>,
}

impl TaskContract {
    /// The intent's name (`implement`, …).
    pub fn intent(&self) -> &str {
        self.work.intent()
    }

    /// The implementation target, when the intent is `implement`.
    pub fn implement(&self) -> Option<&ImplementTarget> {
        match &self.work {
            Work::Implement(target) => Some(target),
            Work::Operation { .. } => None,
        }
    }

    /// The line the task's work is recorded on: implementation tasks have their own.
    pub fn branch(&self) -> Option<String> {
        self.implement().map(|_| self.task_id.branch())
    }
}

/// What the task is for, with the target typed per intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// `implement`: an implementation agent changes files under supervision (the ImplementMaid).
    Implement(ImplementTarget),
    /// Any other intent: an operation Butler runs by a procedure or a capability, identified by
    /// its intent and target. Never carries a typed intent such as `implement`.
    Operation {
        intent: IntentName,
        target: OperationTarget,
    },
}

impl Work {
    /// The intent of implementation tasks.
    pub(crate) const IMPLEMENT: &'static str = "implement";

    pub fn intent(&self) -> &str {
        match self {
            Work::Implement(_) => Self::IMPLEMENT,
            Work::Operation { intent, .. } => intent.as_str(),
        }
    }
}

impl Serialize for Work {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Work", 2)?;
        out.serialize_field("intent", self.intent())?;
        match self {
            Work::Implement(target) => out.serialize_field("target", target)?,
            Work::Operation { target, .. } => out.serialize_field("target", target)?,
        }
        out.end()
    }
}

impl<'de> Deserialize<'de> for Work {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The two fields as written; the target is read by the intent's own type.
        #[derive(Deserialize)]
        struct Written {
            intent: IntentName,
            target: serde_json::Value,
        }
        let written = Written::deserialize(deserializer)?;
        if written.intent.as_str() == Work::IMPLEMENT {
            return serde_json::from_value(written.target)
                .map(Work::Implement)
                .map_err(|e| D::Error::custom(format!("`target` of `implement`: {e}")));
        }
        let target = serde_json::from_value(written.target)
            .map_err(|e| D::Error::custom(format!("`target` of `{}`: {e}", written.intent)))?;
        Ok(Work::Operation {
            intent: written.intent,
            target,
        })
    }
}

/// What an implementation task works on: the goal, the spec, and the paths it may change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImplementTarget {
    pub goal: String,
    pub spec: String,
    /// Normalised relative paths, directories (`src/`) or globs (`src/**/*.rs`).
    pub target_paths: Vec<String>,
}

impl ImplementTarget {
    /// The first line of the goal, at most 72 characters: the subject of the task's records.
    pub fn subject(&self) -> String {
        self.goal
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(72)
            .collect()
    }
}

/// The target of an operation: named values (`{"service": "api", "env": "staging"}`), kept in
/// name order so equal targets compare and print alike.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OperationTarget(pub BTreeMap<String, String>);

/// How the work is delegated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelegationMode {
    /// Only a procedure or capability Butler already knows may run it.
    KnownOnly,
    /// Butler asks the Brain to teach the procedure when it does not know one.
    TeachIfUnknown,
    /// An agent does the work under supervision (implementation tasks always are).
    Agent,
}

/// Which headless agent runs an implementation task.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum AgentKind {
    #[default]
    Goose,
    Claude,
    Codex,
    Aider,
}

impl AgentKind {
    /// Every agent Butler can drive.
    pub const ALL: [AgentKind; 4] = [Self::Goose, Self::Claude, Self::Codex, Self::Aider];

    pub fn parse(name: &str) -> Result<Self, ContractError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "goose" => Ok(Self::Goose),
            "claude" | "claude-code" | "claude_code" => Ok(Self::Claude),
            "codex" => Ok(Self::Codex),
            "aider" => Ok(Self::Aider),
            _ => Err(ContractError::UnknownAgent(name.to_owned())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Goose => "goose",
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Aider => "aider",
        }
    }
}

/// Limits the task runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraints {
    /// The agent of an `agent` task; `None`: the configured default.
    #[serde(default)]
    pub agent: Option<AgentKind>,
    /// Wall-clock limit of one attempt.
    pub timeout_s: u64,
    pub max_attempts: u32,
    /// The agent must not run git itself; Butler records its work.
    #[serde(default)]
    pub no_direct_git: bool,
    /// Operations that wait for the user's approval, relayed by the Brain (`git_push`, …).
    #[serde(default)]
    pub require_approval_for: Vec<IntentName>,
    /// The task may change or remove tests (and leave stubs): the two diff guards then report
    /// without failing an attempt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_test_changes: bool,
}

/// What must hold for the task to count as done. Judged by verifiers, never by an agent's
/// account of its work.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuccessCriteria {
    /// Commands run in the task's tree; each must end with its exit code and show its output.
    #[serde(default)]
    pub commands: Vec<CommandCheck>,
    #[serde(default)]
    pub file_checks: Vec<FileCheck>,
    /// Every changed path lies inside the target paths (implementation tasks).
    #[serde(default)]
    pub in_scope_only: bool,
}

/// A command that verifies the work: its exit code, and optionally text its output must show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandCheck {
    pub command: String,
    /// The exit code that counts as passing.
    #[serde(default)]
    pub exit_code: i32,
    /// Text the command's output (stdout and stderr together, its last
    /// [`CommandCheck::OUTPUT_SEARCHED_BYTES`]) must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_contains: Option<String>,
    /// A regular expression the same output must match somewhere (`^`/`$` match at line ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_matches: Option<String>,
}

impl CommandCheck {
    /// How much of a command's output (its end) `output_contains` is looked for in.
    pub const OUTPUT_SEARCHED_BYTES: usize = 64 * 1024;

    /// A command that must exit 0.
    pub fn exit_zero(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            exit_code: 0,
            output_contains: None,
            output_matches: None,
        }
    }

    /// Whether a run that ended with `exit_code` and printed `output` passes. A pattern that is
    /// not a regular expression never matches (patterns are checked at the edge with
    /// [`CommandCheck::pattern`]).
    pub fn passes(&self, exit_code: Option<i32>, output: &str) -> bool {
        exit_code == Some(self.exit_code)
            && self
                .output_contains
                .as_deref()
                .is_none_or(|text| output.contains(text))
            && self
                .output_matches
                .as_deref()
                .is_none_or(|pattern| Self::pattern(pattern).is_ok_and(|re| re.is_match(output)))
    }

    /// `output_matches` compiled: multi-line, and bounded in size so a pattern cannot make
    /// Butler build a huge automaton.
    pub(crate) fn pattern(pattern: &str) -> Result<regex::Regex, regex::Error> {
        regex::RegexBuilder::new(pattern)
            .multi_line(true)
            .size_limit(1 << 20)
            .build()
    }
}

/// A validated file check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    pub path: String,
    pub expect: FileExpectation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileExpectation {
    Exists,
    Absent,
    Contains(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(work: Work) -> TaskContract {
        TaskContract {
            task_id: TaskId::new("t1").expect("id"),
            work,
            delegation_mode: DelegationMode::TeachIfUnknown,
            constraints: Constraints {
                agent: None,
                timeout_s: 60,
                max_attempts: 1,
                no_direct_git: false,
                require_approval_for: vec![IntentName::new("git_push").expect("name")],
                allow_test_changes: false,
            },
            success_criteria: SuccessCriteria {
                commands: vec![CommandCheck {
                    command: "curl -fs localhost:8080/health".into(),
                    exit_code: 0,
                    output_contains: Some("ok".into()),
                    output_matches: None,
                }],
                ..Default::default()
            },
            requested_by: "brain".into(),
            requested_at: Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time"),
            issue_id: None,
        }
    }

    #[test]
    fn an_operation_reads_as_the_seed_writes_it_and_back() {
        let target = OperationTarget(BTreeMap::from([("service".into(), "api".into())]));
        let c = contract(Work::Operation {
            intent: IntentName::new("restart").expect("name"),
            target,
        });
        let json = serde_json::to_value(&c).expect("json");
        assert_eq!(json["intent"], "restart");
        assert_eq!(json["target"], serde_json::json!({"service": "api"}));
        assert_eq!(json["delegation_mode"], "teach_if_unknown");
        assert_eq!(json["constraints"]["require_approval_for"][0], "git_push");
        assert_eq!(
            json["success_criteria"]["commands"][0]["output_contains"],
            "ok"
        );
        assert_eq!(json["requested_at"], "2026-04-15T10:00:00+09:00");
        let back: TaskContract = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, c);
        assert_eq!(back.branch(), None);
    }

    #[test]
    fn an_implementation_target_is_typed_and_checked() {
        let c = contract(Work::Implement(ImplementTarget {
            goal: "Add greet\nmore".into(),
            spec: String::new(),
            target_paths: vec!["src/".into()],
        }));
        let mut json = serde_json::to_value(&c).expect("json");
        assert_eq!(json["intent"], "implement");
        assert_eq!(json["target"]["goal"], "Add greet\nmore");
        let back: TaskContract = serde_json::from_value(json.clone()).expect("reads back");
        assert_eq!(
            back.implement().map(ImplementTarget::subject).as_deref(),
            Some("Add greet")
        );
        assert_eq!(back.branch().as_deref(), Some("butler/task-t1"));
        // A renamed field is an error, never a silent null goal.
        json["target"] = serde_json::json!({"objective": "x", "spec": "", "target_paths": []});
        let err = serde_json::from_value::<TaskContract>(json).expect_err("refused");
        assert!(err.to_string().contains("target"), "{err}");
    }

    #[test]
    fn command_checks_judge_exit_code_and_output() {
        let plain = CommandCheck::exit_zero("true");
        assert!(plain.passes(Some(0), ""));
        assert!(!plain.passes(Some(1), ""));
        assert!(!plain.passes(None, ""));
        let strict = CommandCheck {
            command: "x".into(),
            exit_code: 3,
            output_contains: Some("ready".into()),
            output_matches: None,
        };
        assert!(strict.passes(Some(3), "all ready\n"));
        assert!(!strict.passes(Some(3), "not yet"));
        assert!(!strict.passes(Some(0), "ready"));
        let pattern = CommandCheck {
            output_matches: Some(r"^status: (up|ok)$".into()),
            ..CommandCheck::exit_zero("x")
        };
        assert!(pattern.passes(Some(0), "api\nstatus: up\n"));
        assert!(!pattern.passes(Some(0), "status: down\n"));
        let broken = CommandCheck {
            output_matches: Some("(".into()),
            ..CommandCheck::exit_zero("x")
        };
        assert!(!broken.passes(Some(0), "("));
    }
}
