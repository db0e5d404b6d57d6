//! Why a delegated-operations call failed (the tool call itself, not the task: a task that
//! fails is a Result Contract with status `failed`).

use crate::config::ConfigError;
use crate::contract::{FieldProblem, TaskId, TaskStatus};
use crate::git::GitError;
use crate::ledger::LedgerError;

use super::capability::CapabilityError;

/// A delegated-operations failure, typed for the one mapping at the Brain's edge.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// The submitted contract has wrong fields (each named).
    #[error("the contract has {} wrong field(s)", .0.len())]
    Contract(Vec<FieldProblem>),
    /// The taught steps (or what they are taught for) have problems (each named by place);
    /// `refused` when Butler's policy refuses a step rather than its shape being wrong.
    #[error("the steps have {} problem(s)", problems.len())]
    Steps {
        problems: Vec<FieldProblem>,
        refused: bool,
    },
    /// `known_only`: no capability and no live procedure handles the intent for this target.
    #[error("no procedure or capability for `{intent}` with target `{signature}`")]
    UnknownSkill {
        intent: String,
        signature: String,
        /// The target signatures Butler knows for the intent.
        known: Vec<String>,
    },
    /// No such task in this project's ledger.
    #[error("no task `{0}`")]
    NoTask(String),
    /// The task is not where the call needs it (approve a task that waits for no approval, …).
    #[error("task {task} is {status}, not {expected}")]
    WrongState {
        task: TaskId,
        status: TaskStatus,
        expected: &'static str,
    },
    /// No skill of that name (`get_skill_usage`).
    #[error("no skill `{0}`")]
    NoSkill(String),
    /// A capability could not run.
    #[error(transparent)]
    Capability(#[from] CapabilityError),
    /// `.butler/config.toml`'s `[delegation]` or `[mcp_servers]` is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A bug or a lost worker thread (details are logged, not shown).
    #[error("internal: {0}")]
    Internal(String),
}
