//! The Maid's error type. Agent-fixable findings (failed tests, out-of-scope files) are not
//! errors: they are evidence in the Result Contract. These are the cases where a task cannot
//! run or cannot go on.

use std::path::PathBuf;

use crate::contract::ContractError;

#[derive(Debug, thiserror::Error)]
pub enum MaidError {
    /// The request broke the Task Contract.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// The agent's program was not found or is not configured.
    #[error("agent `{agent}` cannot be launched: {reason}")]
    AgentUnavailable { agent: &'static str, reason: String },
    /// Goose needs a provider and a model (config or `GOOSE_PROVIDER` / `GOOSE_MODEL`).
    #[error("agent `{agent}` needs `{what}`: set it in Butler's config or `{env}`")]
    AgentNotConfigured {
        agent: &'static str,
        what: &'static str,
        env: &'static str,
    },
    /// The worker MCP command cannot be written in the agent's extension syntax.
    #[error("the worker MCP command cannot be passed to the agent: {0}")]
    WorkerCommand(String),
    /// `sandbox = "required"` but agents cannot be confined here (`need_input`).
    #[error(
        "the sandbox is required but cannot be applied: {0}; set `[agent] sandbox = \"auto\"` to run unconfined"
    )]
    SandboxUnavailable(String),
    /// The Brain's tree has unrecorded changes: the task is not started (`need_input`).
    #[error("the project has unrecorded changes ({}): record or discard them first", .0.join(", "))]
    UnrecordedChanges(Vec<String>),
    /// A git operation of the task sequence failed (run by the git worker).
    #[error(transparent)]
    Git(#[from] butler_worker::git::GitError),
    /// The ledger (tasks, attempts, evidence, records) could not be read or written.
    #[error(transparent)]
    Ledger(#[from] butler_worker::ledger::LedgerError),
    /// No task with this id has a branch or worktree.
    #[error("no task `{0}`")]
    NoSuchTask(String),
    /// Bringing the task's line in stopped on conflicts in these files; the merge is left in
    /// progress in the Brain's tree for it to resolve and record.
    #[error("the task's line `{line}` conflicts with the current line in {} file(s)", .files.len())]
    MergeConflicted { line: String, files: Vec<String> },
    /// The task's line changes files that configure tools or run code which the Brain has not
    /// confirmed (`need_input`): nothing was brought in.
    #[error("task {task} changes files that configure tools or run code: {}", .changes.iter().map(|c| c.path.as_str()).collect::<Vec<_>>().join(", "))]
    ToolConfigUnconfirmed {
        task: String,
        changes: Vec<butler_worker::tool_config::ToolConfigChange>,
    },
    /// The task's Job on the cluster ended without a result.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterFailure),
    /// The task's pod reported that it could not run the task, or handed back something that
    /// is not the task's result.
    #[error("the task's pod: {0}")]
    Remote(String),
    /// `[runner] destination` names neither a remote of the project nor a URL.
    #[error("the shared destination `{0}` is neither a remote of the project nor a URL")]
    NoDestination(String),
    /// A file the Maid had to read or write.
    #[error("{action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl MaidError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
