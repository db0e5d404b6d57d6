//! Errors at the Brain's edge: the spec's `error_code` taxonomy and the one place every
//! library error is mapped onto it.
//!
//! The mapping matches every variant of every library error explicitly (no `_` arm), so a new
//! error kind cannot silently become `backend_error`. Summaries and hints never carry git or
//! tracker vocabulary, exit codes, raw backend text or secrets; hints name Butler tools.

use butler_worker::git::{GitError, LineInfo};
use butler_worker::issues::IssueError;
use butler_worker::ledger::LedgerError;
use serde_json::{Value, json};

/// The spec's error codes (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    Conflict,
    AuthFailed,
    NotFound,
    NeedInput,
    InvalidBody,
    InvalidTitle,
    LabelNotFound,
    PolicyBlocked,
    BackendError,
    UpstreamNotConfigured,
    UseProperTool,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Conflict => "conflict",
            ErrorCode::AuthFailed => "auth_failed",
            ErrorCode::NotFound => "not_found",
            ErrorCode::NeedInput => "need_input",
            ErrorCode::InvalidBody => "invalid_body",
            ErrorCode::InvalidTitle => "invalid_title",
            ErrorCode::LabelNotFound => "label_not_found",
            ErrorCode::PolicyBlocked => "policy_blocked",
            ErrorCode::BackendError => "backend_error",
            ErrorCode::UpstreamNotConfigured => "upstream_not_configured",
            ErrorCode::UseProperTool => "use_proper_tool",
        }
    }
}

/// An error as the Brain sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub summary: String,
    pub hint: String,
    pub data: Option<Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, summary: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            code,
            summary: summary.into(),
            hint: hint.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// Why the repository cannot take a record right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockReason {
    InProgress(&'static str),
    Conflicts(Vec<String>),
    Detached,
}

impl BlockReason {
    pub fn describe(&self) -> String {
        match self {
            BlockReason::InProgress(what) => format!("a {what} is in progress"),
            BlockReason::Conflicts(paths) => {
                format!("{} file(s) have unresolved conflicts", paths.len())
            }
            BlockReason::Detached => "work is not on a named line of work".to_string(),
        }
    }

    pub fn hint(&self) -> &'static str {
        match self {
            BlockReason::InProgress(_) => {
                "finish or abort it with work_vcs (e.g. work_vcs([\"merge\", \"--abort\"])), then call work_observe"
            }
            BlockReason::Conflicts(_) => {
                "resolve the conflicted files (see work_observe changed_files), then call work_record"
            }
            BlockReason::Detached => {
                "switch to a line of work with work_switch_line(name=…) or start one here with work_new_line(name=…)"
            }
        }
    }
}

/// Where `work_finish(auto=true)` stopped, and why.
#[derive(Debug)]
pub struct FinishStop {
    /// The step that failed (`record`, `publish`, `comment`, `close`).
    pub step: &'static str,
    /// The tool that step stands for, whose hint the failure carries.
    pub tool: &'static str,
    pub cause: WorkError,
    /// What was carried out before (a JSON list).
    pub done: Value,
    /// The steps after the failing one.
    pub left: Vec<&'static str>,
}

/// Everything that can go wrong in a Brain-facing operation.
#[derive(Debug, thiserror::Error)]
pub enum WorkError {
    #[error("no session")]
    NoSession,
    #[error("invalid argument `{field}`: {reason}")]
    InvalidArgument { field: &'static str, reason: String },
    #[error("unrecorded changes")]
    UnrecordedChanges,
    #[error("repository blocked")]
    Blocked(BlockReason),
    #[error("no shared destination")]
    NoDestination,
    #[error("files that look like credentials")]
    SensitiveFiles { paths: Vec<String> },
    #[error("record not found")]
    RecordNotFound { id: String },
    #[error("foreign index lock")]
    ForeignLock { age_secs: u64 },
    #[error("issue body misses sections")]
    InvalidBody { missing: Vec<&'static str> },
    #[error("issue body fields needed")]
    BodyFieldsNeeded { missing: Vec<&'static str> },
    #[error("proper tool exists")]
    UseProperTool {
        subcommand: String,
        tool: String,
        suggestion: String,
    },
    #[error("refused by policy: {reason}")]
    PolicyBlocked { reason: String, hint: String },
    #[error("approval needed")]
    NeedsApproval { loss: String, reference: String },
    #[error("unrecorded changes before a task")]
    TaskNeedsRecord { paths: Vec<String> },
    #[error("no task {id}")]
    TaskNotFound { id: String },
    #[error("agent unavailable: {reason}")]
    AgentUnavailable { reason: String },
    #[error("configuration: {problem}")]
    Config { problem: String },
    #[error("no line `{name}`")]
    LineNotFound { name: String, lines: Vec<LineInfo> },
    #[error("line `{name}` exists")]
    LineExists { name: String },
    #[error("which line to merge")]
    LineNeeded { lines: Vec<LineInfo> },
    #[error("unrecorded changes before a line change")]
    LineNeedsRecord { paths: Vec<String> },
    #[error("the merge stopped on conflicts")]
    MergeConflicted { files: Vec<String>, from: String },
    #[error("no record message given")]
    MessageNeeded { proposed: String },
    #[error("work_finish stopped at {}", .0.step)]
    FinishStopped(Box<FinishStop>),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Issue(#[from] IssueError),
    #[error("internal: {0}")]
    Internal(String),
}

const OBSERVE_HINT: &str = "call work_observe to see the current state";

impl ToolError {
    /// The one mapping from a Brain-facing operation's failure to what the Brain sees;
    /// `tool` is the tool that was called (hints about its own arguments name it).
    pub fn from_work(err: WorkError, tool: &str) -> Self {
        use ErrorCode::*;
        match err {
            WorkError::NoSession => ToolError::new(
                NeedInput,
                "No session has been started",
                "call work_session_start(project_root) first",
            ),
            WorkError::InvalidArgument { field, reason } => ToolError::new(
                NeedInput,
                format!("Invalid `{field}`: {reason}"),
                format!("call {tool} again with a valid `{field}`"),
            )
            .with_data(json!({"field": field})),
            WorkError::UnrecordedChanges => ToolError::new(
                PolicyBlocked,
                "There are unrecorded changes, so nothing can be shared yet",
                "record first with work_record, then call work_publish",
            ),
            WorkError::Blocked(reason) => ToolError::new(
                PolicyBlocked,
                format!("The project is blocked: {}", reason.describe()),
                reason.hint(),
            ),
            WorkError::NoDestination => ToolError::new(
                UpstreamNotConfigured,
                "No shared destination is configured, so published state cannot be known",
                "ask the user for the shared destination and add it with work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"])",
            ),
            WorkError::SensitiveFiles { paths } => ToolError::new(
                PolicyBlocked,
                format!("Not recorded: {} file(s) look like credentials", paths.len()),
                "ignore them (add to .gitignore) and call work_record again; if the user confirms they must be recorded, call work_record with allow_sensitive listing them",
            )
            .with_data(json!({"paths": paths})),
            WorkError::RecordNotFound { id } => ToolError::new(
                NotFound,
                format!("No record `{id}`"),
                "find record ids with work_history",
            ),
            WorkError::ForeignLock { age_secs } => ToolError::new(
                PolicyBlocked,
                format!("Another tool is changing the repository (lock held for {age_secs} s)"),
                "wait and call work_record again; if it persists and nothing else runs, ask the user to remove .git/index.lock",
            ),
            WorkError::InvalidBody { missing } => ToolError::new(
                InvalidBody,
                "The issue body lacks required sections",
                format!("call {tool} again with a body that has `## Current state`, `## Next action` and `## Blockers` sections"),
            )
            .with_data(json!({"required_fields": missing})),
            WorkError::BodyFieldsNeeded { missing } => ToolError::new(
                NeedInput,
                "An issue body needs the current state, the next action and the blockers",
                "call issue_create again with body, or with current_state, next_action and blockers",
            )
            .with_data(json!({"required_fields": missing})),
            WorkError::UseProperTool { subcommand, tool, suggestion } => ToolError::new(
                UseProperTool,
                format!("`{subcommand}` has a proper Butler tool"),
                format!("use {suggestion} instead"),
            )
            .with_data(json!({"tool": tool})),
            WorkError::PolicyBlocked { reason, hint } => ToolError::new(PolicyBlocked, reason, hint),
            WorkError::NeedsApproval { loss, reference } => ToolError::new(
                NeedInput,
                format!("This would irreversibly discard work: {loss}"),
                "ask the user; only if they approve, call work_vcs again with the same args and approval set to the reference",
            )
            .with_data(json!({"approval": reference, "would_discard": loss})),
            WorkError::TaskNeedsRecord { paths } => {
                let shown: Vec<&String> = paths.iter().take(10).collect();
                let names: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
                ToolError::new(
                    NeedInput,
                    format!(
                        "{} unrecorded change(s) ({}{}): a task starts from a record",
                        paths.len(),
                        names.join(", "),
                        if paths.len() > 3 { ", …" } else { "" }
                    ),
                    "save them with work_record (or ask the user what to do with them), then call run_implement again",
                )
                .with_data(json!({"changed_files": shown, "total": paths.len()}))
            }
            WorkError::TaskNotFound { id } => ToolError::new(
                NotFound,
                format!("No open task `{}`", id.chars().take(64).collect::<String>()),
                "task ids come from run_implement's answer",
            ),
            WorkError::AgentUnavailable { reason } => ToolError::new(
                NeedInput,
                format!("The implementation agent cannot be started: {reason}"),
                "ask the user to install or configure the agent, or call run_implement with another agent",
            ),
            WorkError::Config { problem } => ToolError::new(
                NeedInput,
                format!("Butler's issue-tracker settings are not usable: {problem}"),
                "ask the user to fix the settings (.butler/config.toml or BUTLER_* variables), then call work_session_start again",
            ),
            WorkError::LineNotFound { name, lines } => ToolError::new(
                NotFound,
                format!("No line `{name}`"),
                format!("choose one of data.lines, or start it with work_new_line(name={})", quoted(&name)),
            )
            .with_data(crate::work::line::listed(&lines)),
            WorkError::LineExists { name } => ToolError::new(
                NeedInput,
                format!("A line `{name}` already exists"),
                format!("switch to it with work_switch_line(name={}), or call work_new_line with another name", quoted(&name)),
            ),
            WorkError::LineNeeded { lines } => ToolError::new(
                NeedInput,
                "It is not known which line this one came from",
                "call work_merge_line(name=…) with the line to bring in (see data.lines)",
            )
            .with_data(crate::work::line::listed(&lines)),
            WorkError::LineNeedsRecord { paths } => {
                let shown: Vec<&String> = paths.iter().take(10).collect();
                let names: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
                ToolError::new(
                    NeedInput,
                    format!(
                        "{} unrecorded change(s) ({}{}): record them before changing lines",
                        paths.len(),
                        names.join(", "),
                        if paths.len() > 3 { ", …" } else { "" }
                    ),
                    format!("save them with work_record (or ask the user what to do with them), then call {tool} again"),
                )
                .with_data(json!({"changed_files": shown, "total": paths.len()}))
            }
            WorkError::MergeConflicted { files, from } => {
                let again = if tool == "task_accept" {
                    ", then task_accept again to close the task"
                } else {
                    ""
                };
                let shown: Vec<&String> = files.iter().take(50).collect();
                ToolError::new(
                    Conflict,
                    format!(
                        "Bringing in `{from}` stopped on conflicts in {} file(s); the project is blocked until they are resolved",
                        files.len()
                    ),
                    format!("edit the files to resolve the conflicts and save with work_record{again}; or give up with work_vcs([\"merge\", \"--abort\"])"),
                )
                .with_data(json!({"work_state": "blocked", "conflicted_files": shown, "total": files.len()}))
            }
            WorkError::MessageNeeded { proposed } => ToolError::new(
                NeedInput,
                "No message given; one is proposed from the changes",
                "call work_record again with message set to data.proposed_message or your own words",
            )
            .with_data(json!({"proposed_message": proposed})),
            WorkError::FinishStopped(stop) => {
                let FinishStop { step, tool: step_tool, cause, done, left } = *stop;
                let inner = ToolError::from_work(cause, step_tool);
                let mut left_steps = vec![json!({"step": step, "error": crate::envelope::error_json(&inner)})];
                left_steps.extend(left.iter().map(|s| json!({"step": s})));
                let finished: Vec<&str> = done
                    .as_array()
                    .map(|steps| steps.iter().filter_map(|s| s["step"].as_str()).collect())
                    .unwrap_or_default();
                let after = match finished.as_slice() {
                    [] => String::new(),
                    steps => format!(" (done: {})", steps.join(", ")),
                };
                ToolError {
                    code: inner.code,
                    summary: format!("work_finish stopped at `{step}`{after}; nothing is half-done"),
                    hint: inner.hint,
                    data: Some(json!({"done": done, "left": left_steps})),
                }
            }
            WorkError::Git(err) => git_error(err, tool),
            WorkError::Ledger(err) => ledger_error(err, tool),
            WorkError::Issue(err) => issue_error(err, tool),
            WorkError::Internal(_) => {
                ToolError::new(BackendError, "Butler hit an internal error", OBSERVE_HINT)
            }
        }
    }
}

/// `s` as a JSON string literal, for calls shown in hints.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Bounded hook output for the Brain (the hook's own words are what it needs to fix things).
fn bounded(text: &str) -> String {
    const MAX: usize = 2048;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut start = text.len() - MAX;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

fn git_error(err: GitError, tool: &str) -> ToolError {
    use ErrorCode::*;
    tracing::warn!(error = ?err, "git worker error");
    match err {
        GitError::NotARepository => ToolError::new(
            NotFound,
            "That directory is not inside a git project",
            "call work_session_start with the project's root directory",
        ),
        GitError::BareRepository => ToolError::new(
            NotFound,
            "That project has no working files (a bare repository)",
            "call work_session_start with a project that has a working tree",
        ),
        GitError::OutsideProject => ToolError::new(
            PolicyBlocked,
            "Paths must stay inside the project",
            "give a path relative to the project root (see work_observe changed_files)",
        ),
        GitError::NothingToRecord => ToolError::new(
            NeedInput,
            "There is nothing to record",
            "make changes first, then call work_record; work_observe shows the state",
        ),
        GitError::NoIdentity => ToolError::new(
            NeedInput,
            "No author name and email are configured, so records cannot be signed",
            "ask the user for their name and email and set them with work_vcs([\"config\", \"user.name\", \"<name>\"]) and work_vcs([\"config\", \"user.email\", \"<email>\"]), then call work_record again",
        ),
        GitError::HookRejected { hook, output_tail } => ToolError::new(
            PolicyBlocked,
            format!(
                "The project's {} check refused the record",
                hook.as_deref().unwrap_or("commit")
            ),
            "fix what the check reports (see data.output), then call work_record again",
        )
        .with_data(json!({"hook": hook, "output": bounded(&output_tail)})),
        GitError::IndexLocked { age, .. } => ToolError::new(
            PolicyBlocked,
            format!(
                "Another tool is changing the repository (lock held for {} s)",
                age.map_or(0, |a| a.as_secs())
            ),
            format!(
                "wait and call {tool} again; if it persists and nothing else runs, ask the user to remove .git/index.lock"
            ),
        ),
        GitError::Rejected => ToolError::new(
            Conflict,
            "The shared destination has work that is not here yet",
            "bring it in with work_vcs([\"pull\", \"--rebase\"]) (resolve conflicts if any), then call work_publish again",
        ),
        GitError::AuthFailed => ToolError::new(
            AuthFailed,
            "The shared destination refused the credentials",
            "ask the user to check their access to the shared destination, then call work_publish again",
        ),
        GitError::Unreachable => ToolError::new(
            BackendError,
            "The shared destination could not be reached",
            "check the network or the destination with work_vcs([\"remote\", \"-v\"]), then call work_publish again",
        ),
        GitError::Timeout { .. } => ToolError::new(
            BackendError,
            "The operation did not finish in time",
            format!("call {tool} again; if it keeps timing out, ask the user"),
        ),
        GitError::UnknownCommit => ToolError::new(
            NotFound,
            "No such record",
            "find record ids with work_history",
        ),
        GitError::GitMissing => ToolError::new(
            BackendError,
            "git is not installed on this machine",
            "ask the user to install git, then call work_session_start again",
        ),
        GitError::Failed { .. } => ToolError::new(
            BackendError,
            "The version-control operation failed",
            OBSERVE_HINT,
        ),
    }
}

fn ledger_error(err: LedgerError, tool: &str) -> ToolError {
    use ErrorCode::*;
    tracing::warn!(error = ?err, "ledger error");
    match err {
        LedgerError::Busy => ToolError::new(
            BackendError,
            "Another Butler is busy with this project's records",
            format!("call {tool} again in a moment"),
        ),
        LedgerError::Corrupt { .. } | LedgerError::TooNew { .. } | LedgerError::Io { .. } => {
            ToolError::new(
                BackendError,
                "Butler's record store for this project cannot be used",
                "ask the user to check .git/butler/ledger.db (moving it aside makes Butler start a new one)",
            )
        }
        LedgerError::NotFound { what } => ToolError::new(
            NotFound,
            format!("Not found: {what}"),
            "find record ids with work_history",
        ),
        LedgerError::Conflict { .. } => ToolError::new(
            Conflict,
            "The record store disagrees with the request",
            OBSERVE_HINT,
        ),
        LedgerError::Sqlite(_) => {
            ToolError::new(BackendError, "Butler's record store failed", OBSERVE_HINT)
        }
    }
}

fn issue_error(err: IssueError, tool: &str) -> ToolError {
    use ErrorCode::*;
    match err {
        IssueError::NotFound { what } => ToolError::new(
            NotFound,
            format!("Not found: {what}"),
            "find issue numbers with issue_list",
        ),
        IssueError::LabelNotFound { names } => ToolError::new(
            LabelNotFound,
            format!("Unknown label(s): {}", names.join(", ")),
            "use existing label names (see issue_list) or omit label_names",
        )
        .with_data(json!({"labels": names})),
        IssueError::InvalidTitle => ToolError::new(
            InvalidTitle,
            "The title must be one non-empty line",
            format!("call {tool} again with a short one-line title"),
        ),
        IssueError::AuthFailed => ToolError::new(
            AuthFailed,
            "The issue tracker refused Butler's credentials",
            format!("ask the user to check Butler's tracker token, then call {tool} again"),
        ),
        IssueError::Conflict => ToolError::new(
            Conflict,
            "The issue changed meanwhile or does not allow this now",
            "read it again with issue_read, then retry",
        ),
        IssueError::Unreachable | IssueError::Timeout => ToolError::new(
            BackendError,
            "The issue tracker did not answer",
            format!("call {tool} again later; work_observe and work_record still work"),
        ),
        IssueError::Backend { .. } => ToolError::new(
            BackendError,
            "The issue tracker failed",
            format!("call {tool} again later; work_observe and work_record still work"),
        ),
    }
}
