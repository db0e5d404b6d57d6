//! The evidence of a delegated operation: who ran it (a taught procedure or a capability in
//! code), every step's outcome with its output tail and duration, what the verifiers of the
//! contract's `success_criteria` found, and — when it paused or stopped early — where and why.
//!
//! Serialised flat into the Result Contract:
//! `{"task_id", "status", "intent", "target", "by", "steps", "verify", "stopped"?, "approval"?,
//! "needs"?, "output"?}`.

use serde::{Deserialize, Serialize};

use super::{Ending, FileCheckResult, IntentName, OperationTarget, TestRun};
use crate::time::Timestamp;

/// What a delegated operation did and how it was judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationEvidence {
    pub intent: IntentName,
    pub target: OperationTarget,
    /// The procedure or capability that ran it; `None` while Butler knows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Handler>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepEvidence>,
    /// The contract's `success_criteria`, judged after the last step.
    #[serde(default, skip_serializing_if = "OperationChecks::is_empty")]
    pub verify: OperationChecks,
    /// Where and why it ended before its last step, or paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// `need_approval`: what exactly waits for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRequest>,
    /// `need_input`: what the Brain must supply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<Needed>,
    /// A capability's answer for the Brain (a record id, a context summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
}

impl OperationEvidence {
    /// Nothing done yet for `intent` on `target`.
    pub fn new(intent: IntentName, target: OperationTarget) -> Self {
        Self {
            intent,
            target,
            by: None,
            steps: Vec::new(),
            verify: OperationChecks::default(),
            stopped: None,
            approval: None,
            needs: None,
            output: None,
        }
    }

    /// Every step passed and so did every verifier.
    pub fn passed(&self) -> bool {
        self.stopped.is_none()
            && self.steps.iter().all(|s| s.outcome == StepOutcome::Passed)
            && self.verify.passed()
    }
}

/// Who ran an operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Handler {
    /// A procedure the Brain taught, by its id, target signature and lifecycle status (after
    /// this run).
    Procedure {
        id: i64,
        signature: String,
        status: ProcedureStatus,
    },
    /// A capability in code.
    Capability { name: String },
}

/// Where a taught procedure is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcedureStatus {
    /// Taught, not yet proven: runs, and counts its verified successes.
    Candidate,
    /// Proven by the configured number of verified successes.
    Active,
    /// Replaced by a newer procedure for the same intent and target signature.
    Deprecated,
}

impl ProcedureStatus {
    pub(crate) const ALL: [ProcedureStatus; 3] = [
        ProcedureStatus::Candidate,
        ProcedureStatus::Active,
        ProcedureStatus::Deprecated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProcedureStatus::Candidate => "candidate",
            ProcedureStatus::Active => "active",
            ProcedureStatus::Deprecated => "deprecated",
        }
    }

    pub fn parse(text: &str) -> Option<ProcedureStatus> {
        ProcedureStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// The kinds of step a procedure is made of, and the capability's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Cmd,
    Check,
    Wait,
    McpCall,
    /// What a capability did (one entry per action it reports).
    Capability,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Cmd => "cmd",
            StepKind::Check => "check",
            StepKind::Wait => "wait",
            StepKind::McpCall => "mcp_call",
            StepKind::Capability => "capability",
        }
    }
}

/// How one step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    Passed,
    Failed,
    /// Ended from outside: its time limit, or the task's cancellation.
    Stopped,
}

/// One step's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEvidence {
    /// 1-based position in the procedure.
    pub step: u32,
    pub kind: StepKind,
    /// What it ran, in one line (`systemctl restart api`, `kb.search`).
    pub what: String,
    pub outcome: StepOutcome,
    /// How its process ended (the last one, for `wait`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// The end of its output (stdout and stderr, bounded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output_tail: String,
    pub duration_ms: u64,
    /// Why it failed, or what it found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What its program left running (a daemon that double-forked into a session of its own,
    /// …), which Butler's reaper ended when the step ended; absent when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leftovers: Option<crate::process::reaper::Leftovers>,
    /// Why its program ran outside the sandbox (`sandbox = "off"`, no Landlock); absent when it
    /// was confined (or ran no program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfined: Option<String>,
    /// The project's files it changed (working tree or index), as the operation log saw them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// The operation-log entry that undoes it (`work_undo(operation)`), when it changed
    /// anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<u64>,
}

/// The contract's `success_criteria` as judged: commands and file checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationChecks {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<TestRun>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_checks: Vec<FileCheckResult>,
}

impl OperationChecks {
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.file_checks.is_empty()
    }

    pub fn passed(&self) -> bool {
        self.commands.iter().all(|c| c.passed) && self.file_checks.iter().all(|c| c.passed)
    }
}

/// Where an operation stopped before its end, or paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stopped {
    /// The step it stopped at (1-based); `None` before the first step or at verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    pub reason: StopReason,
}

/// Why an operation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A step failed; the steps after it did not run.
    StepFailed,
    /// The Brain or the user cancelled the task.
    Cancelled,
    /// The task's `constraints.timeout_s` ran out.
    TimedOut,
    /// It waits for the user's approval, relayed by the Brain.
    AwaitingApproval,
    /// The user denied the approval: nothing more ran.
    Denied,
    /// Butler refused to run the step (its policy changed since it was taught, or the server it
    /// calls is no longer configured).
    Refused,
}

/// What waits for the user's approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The approval reference (`apr-…`), for the user to see.
    pub reference: String,
    /// What exactly would happen, in one line.
    pub operation: String,
    /// The particulars (what would be lost, the command line), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// The step it is for (1-based); `None` for the whole task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    pub expires_at: Timestamp,
}

/// What the Brain must supply before the task can go on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Needed {
    /// Butler knows no procedure for the intent and this target: teach one.
    Procedure {
        /// The target signature a taught procedure is stored under (`service=api`).
        signature: String,
    },
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn an_evidence_reads_flat_and_back() {
        let mut e = OperationEvidence::new(
            IntentName::new("restart").expect("name"),
            OperationTarget(BTreeMap::from([("service".into(), "api".into())])),
        );
        e.by = Some(Handler::Procedure {
            id: 3,
            signature: "service=api".into(),
            status: ProcedureStatus::Candidate,
        });
        e.steps.push(StepEvidence {
            step: 1,
            kind: StepKind::Cmd,
            what: "systemctl restart api".into(),
            outcome: StepOutcome::Stopped,
            ending: Some(Ending::Cancelled),
            output_tail: String::new(),
            duration_ms: 1200,
            detail: None,
            leftovers: None,
            unconfined: None,
            changed: Vec::new(),
            undo: None,
        });
        e.stopped = Some(Stopped {
            step: Some(1),
            reason: StopReason::Cancelled,
        });
        let v = serde_json::to_value(&e).expect("json");
        assert_eq!(v["by"]["kind"], "procedure");
        assert_eq!(v["steps"][0]["kind"], "cmd");
        assert_eq!(v["steps"][0]["ending"]["kind"], "cancelled");
        assert_eq!(v["stopped"]["reason"], "cancelled");
        assert!(v.get("verify").is_none() && v.get("approval").is_none());
        let back: OperationEvidence = serde_json::from_value(v).expect("reads back");
        assert_eq!(back, e);
        assert!(!back.passed());
    }

    #[test]
    fn procedure_statuses_are_written_as_named() {
        for s in ProcedureStatus::ALL {
            assert_eq!(serde_json::to_value(s).expect("json"), s.as_str());
            assert_eq!(ProcedureStatus::parse(s.as_str()), Some(s));
        }
    }
}
