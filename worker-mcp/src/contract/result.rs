//! The Result Contract: how a task ended, in a status every intent shares, with the evidence
//! of its kind of work; and the task's status as the ledger keeps it.

use serde::{Deserialize, Serialize};

use super::{AttemptEvidence, OperationEvidence, TaskId};

/// How a task ended, as every intent reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    /// Done, and the verifiers agree.
    Ok,
    /// Butler needs something from the Brain first (a missing field, an unknown procedure).
    NeedInput,
    /// An operation waits for the user's approval, relayed by the Brain.
    NeedApproval,
    /// It ran and did not pass; the evidence says why.
    Failed,
    /// The Brain or the user stopped it.
    Cancelled,
}

/// How an implementation task ended (the `outcome` of `run_implement`'s answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// An attempt passed every verifier; its work is recorded on the task branch.
    Succeeded,
    /// Every attempt failed verification; the evidence says why.
    Failed,
    /// The Brain (or the user) cancelled the task.
    Cancelled,
}

impl From<Outcome> for ResultStatus {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Succeeded => ResultStatus::Ok,
            Outcome::Failed => ResultStatus::Failed,
            Outcome::Cancelled => ResultStatus::Cancelled,
        }
    }
}

/// The typed Result Contract a task ends with: `{"task_id", "status", "intent", …evidence}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultContract {
    pub task_id: TaskId,
    pub status: ResultStatus,
    #[serde(flatten)]
    pub evidence: Evidence,
}

impl ResultContract {
    /// The result of an implementation task; its status follows from the outcome.
    pub fn implement(task_id: TaskId, evidence: ImplementEvidence) -> Self {
        Self {
            task_id,
            status: evidence.outcome.into(),
            evidence: Evidence::Implement(evidence),
        }
    }

    /// The result of a delegated operation, with the status its run came to.
    pub(crate) fn operation(
        task_id: TaskId,
        status: ResultStatus,
        evidence: OperationEvidence,
    ) -> Self {
        Self {
            task_id,
            status,
            evidence: Evidence::Operation(Box::new(evidence)),
        }
    }

    /// The implementation evidence, when the task was an implementation.
    pub fn implementation(&self) -> Option<&ImplementEvidence> {
        match &self.evidence {
            Evidence::Implement(evidence) => Some(evidence),
            Evidence::Operation(_) => None,
        }
    }

    /// The operation evidence, when the task was a delegated operation.
    pub fn operation_evidence(&self) -> Option<&OperationEvidence> {
        match &self.evidence {
            Evidence::Implement(_) => None,
            Evidence::Operation(evidence) => Some(evidence.as_ref()),
        }
    }
}

/// The evidence of a result, by the intent that produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "intent", rename_all = "snake_case")]
pub enum Evidence {
    /// An implementation task run by the ImplementMaid.
    Implement(ImplementEvidence),
    /// Any other intent: a delegated operation run by a procedure or a capability (its own
    /// `intent` field names it; never `implement`).
    #[serde(untagged)]
    Operation(Box<OperationEvidence>),
}

/// What an implementation task did: its line, how it ended, and every attempt's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplementEvidence {
    pub branch: String,
    pub outcome: Outcome,
    pub attempts: Vec<AttemptEvidence>,
    /// Files the task's line changes that configure tools or run code (see
    /// [`crate::tool_config`]): `task_accept` brings them in only once the Brain confirms them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_config: Vec<crate::tool_config::ToolConfigChange>,
}

/// Where a task is in its life, as the ledger keeps it (a CHECK constraint holds the same set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// The task could not run to its end (an error, not a verdict).
    Error,
    /// Its process died while it ran.
    Interrupted,
    /// Waiting for the Brain to supply something.
    NeedInput,
    /// Waiting for the user's approval, relayed by the Brain.
    NeedApproval,
    /// Its records were brought into the Brain's line.
    Accepted,
    /// Dropped; its line is kept aside.
    Discarded,
}

impl TaskStatus {
    pub(crate) const ALL: [TaskStatus; 10] = [
        TaskStatus::Running,
        TaskStatus::Succeeded,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
        TaskStatus::Error,
        TaskStatus::Interrupted,
        TaskStatus::NeedInput,
        TaskStatus::NeedApproval,
        TaskStatus::Accepted,
        TaskStatus::Discarded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Succeeded => "succeeded",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Error => "error",
            TaskStatus::Interrupted => "interrupted",
            TaskStatus::NeedInput => "need_input",
            TaskStatus::NeedApproval => "need_approval",
            TaskStatus::Accepted => "accepted",
            TaskStatus::Discarded => "discarded",
        }
    }

    pub fn parse(text: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ResultStatus> for TaskStatus {
    fn from(status: ResultStatus) -> Self {
        match status {
            ResultStatus::Ok => TaskStatus::Succeeded,
            ResultStatus::NeedInput => TaskStatus::NeedInput,
            ResultStatus::NeedApproval => TaskStatus::NeedApproval,
            ResultStatus::Failed => TaskStatus::Failed,
            ResultStatus::Cancelled => TaskStatus::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{DirectGit, DirectGitFinding, Ending, Tampering, TestRun, Verification};

    fn evidence(outcome: Outcome) -> ImplementEvidence {
        ImplementEvidence {
            branch: "butler/task-t1".into(),
            outcome,
            attempts: vec![AttemptEvidence {
                attempt: 1,
                agent_exit: Ending::Exited { code: 0 },
                duration_ms: 12,
                changed_files: vec!["src/a.rs".into()],
                direct_git: DirectGit::from_findings(vec![DirectGitFinding::Git(
                    Tampering::Commits {
                        count: 1,
                        subjects: vec!["wip".into()],
                    },
                )]),
                verify: Verification {
                    scope_violation: vec!["Cargo.toml".into()],
                    tests: vec![TestRun {
                        command: "cargo test".into(),
                        exit_code: Some(101),
                        passed: false,
                        stopped: None,
                        output_tail: "failed".into(),
                    }],
                    ..Default::default()
                },
                record: None,
                worker_mcp_reached: false,
                agent_notes: vec![],
                warnings: vec!["worker MCP not reached".into()],
                sandbox: None,
                activity: None,
                leftovers: None,
            }],
            tool_config: vec![crate::tool_config::ToolConfigChange {
                path: ".envrc".into(),
                kind: crate::tool_config::ToolConfigKind::Environment,
            }],
        }
    }

    #[test]
    fn the_status_follows_the_outcome() {
        for (outcome, status, task) in [
            (Outcome::Succeeded, ResultStatus::Ok, TaskStatus::Succeeded),
            (Outcome::Failed, ResultStatus::Failed, TaskStatus::Failed),
            (
                Outcome::Cancelled,
                ResultStatus::Cancelled,
                TaskStatus::Cancelled,
            ),
        ] {
            let r = ResultContract::implement(TaskId::new("t1").expect("id"), evidence(outcome));
            assert_eq!(r.status, status);
            assert_eq!(TaskStatus::from(r.status), task);
        }
    }

    #[test]
    fn a_result_reads_flat_with_its_intent_and_back() {
        let result =
            ResultContract::implement(TaskId::new("t1").expect("id"), evidence(Outcome::Failed));
        let v = serde_json::to_value(&result).expect("serialises");
        assert_eq!(v["status"], "failed");
        assert_eq!(v["intent"], "implement");
        assert_eq!(v["outcome"], "failed");
        let a = &v["attempts"][0];
        assert_eq!(a["warnings"][0], "worker MCP not reached");
        assert_eq!(
            a["agent_exit"],
            serde_json::json!({"kind": "exited", "code": 0})
        );
        assert_eq!(a["direct_git"]["findings"][0]["kind"], "commits");
        assert_eq!(a["verify"]["tests"][0]["exit_code"], 101);
        assert_eq!(
            v["tool_config"],
            serde_json::json!([{"path": ".envrc", "kind": "environment"}])
        );
        let back: ResultContract = serde_json::from_value(v).expect("round trip");
        assert_eq!(back, result);
        let implementation = back.implementation().expect("implement");
        assert!(!implementation.attempts[0].verify.passed());
    }

    #[test]
    fn an_operation_result_names_its_own_intent_and_reads_back() {
        use crate::contract::{IntentName, OperationTarget};
        let evidence = OperationEvidence::new(
            IntentName::new("restart").expect("name"),
            OperationTarget::default(),
        );
        let result = ResultContract::operation(
            TaskId::new("t2").expect("id"),
            ResultStatus::NeedInput,
            evidence,
        );
        let v = serde_json::to_value(&result).expect("json");
        assert_eq!(v["intent"], "restart");
        assert_eq!(v["status"], "need_input");
        let back: ResultContract = serde_json::from_value(v).expect("reads back");
        assert_eq!(back, result);
        assert!(back.implementation().is_none());
        assert!(back.operation_evidence().is_some());
    }

    #[test]
    fn task_statuses_are_written_as_named() {
        for status in TaskStatus::ALL {
            assert_eq!(serde_json::to_value(status).expect("json"), status.as_str());
            assert_eq!(TaskStatus::parse(status.as_str()), Some(status));
        }
    }
}
