//! Errors at the Brain's edge: the spec's `error_code` taxonomy and the one place every
//! library error is mapped onto it.
//!
//! The mapping matches every variant of every library error explicitly (no `_` arm), so a new
//! error kind cannot silently become `backend_error`. Summaries and hints never carry git or
//! tracker vocabulary, exit codes, raw backend text or secrets; hints name Butler tools.

use butler_worker::contract::AgentKind;
use butler_worker::git::{GitError, InProgress, LineInfo, Markers};
use butler_worker::issues::IssueError;
use butler_worker::ledger::LedgerError;
use butler_worker::ops::{CapabilityError, OpsError};
use butler_worker::sandbox::SandboxMode;
use butler_worker::secrets::{FileFinding, Rule};
use serde::Serialize;
use serde_json::{Value, json};

use crate::catalogue::{Key, Lang, fill, fill_in, template, text};
use crate::tool::Tool;

/// The error codes of the response contract (see `crate::envelope`).
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

    /// The error envelope (`crate::envelope` shows its strings plainly).
    pub fn to_json(&self) -> Value {
        let mut value = json!({
            "status": "error",
            "error_code": self.code.as_str(),
            "summary": self.summary,
            "hint": self.hint,
        });
        if let Some(data) = &self.data {
            value["data"] = data.clone();
        }
        value
    }
}

/// An operation git started that is not finished, or conflicts git left without one (a
/// stash applied with conflicts): what `work_record` finishes or continues once the conflicts
/// are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// The operation in progress, if any.
    pub op: Option<InProgress>,
    /// Files git still marks as conflicted.
    pub conflicted: Vec<String>,
    /// The conflicted files that still hold conflict markers, with the lines.
    pub unresolved: Vec<Markers>,
}

impl Unfinished {
    /// What finishing means for the Brain (`continue the rebase`).
    pub fn goal(&self) -> String {
        match self.op {
            Some(InProgress::Rebase) => text(Key::GoalContinueRebase).into(),
            Some(InProgress::ApplyMailbox) => text(Key::GoalContinueAm).into(),
            Some(op) => fill(Key::GoalFinishOp, &[("op", &op.command())]),
            None => text(Key::GoalSaveResolution).into(),
        }
    }

    /// How to give the operation up instead, as a call.
    pub fn abort_call(&self) -> Option<String> {
        self.op.map(|op| {
            let [a, b] = op.abort_args();
            format!("{}([\"{a}\", \"{b}\"])", Tool::WorkVcs)
        })
    }

    /// `a.txt (lines 3, 9), b.rs (line 1)`, the first few files.
    pub fn unresolved_list(&self) -> String {
        let mut parts: Vec<String> = self
            .unresolved
            .iter()
            .take(3)
            .map(|m| markers_at(&m.path, &m.lines))
            .collect();
        if self.unresolved.len() > 3 {
            parts.push("…".into());
        }
        parts.join(", ")
    }
}

/// Why the repository cannot take a record as usual right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockReason {
    Unfinished(Unfinished),
    Detached,
}

impl BlockReason {
    pub fn describe(&self) -> String {
        match self {
            BlockReason::Unfinished(u) => match (u.op, u.conflicted.len()) {
                (Some(op), 0) => fill(Key::BlockInProgress, &[("what", &op.command())]),
                (Some(op), n) => fill(Key::BlockOpConflicts, &[("op", &op.command()), ("n", &n)]),
                (None, n) => fill(Key::BlockConflicts, &[("n", &n)]),
            },
            BlockReason::Detached => text(Key::BlockDetached).to_string(),
        }
    }

    pub fn hint(&self) -> String {
        match self {
            BlockReason::Unfinished(u) if u.op == Some(InProgress::Bisect) => {
                text(Key::HintBisectReset).to_string()
            }
            BlockReason::Unfinished(u) => {
                let goal = u.goal();
                let first = if !u.unresolved.is_empty() {
                    fill(Key::HintEditConflicts, &[("goal", &goal)])
                } else if !u.conflicted.is_empty() {
                    fill(Key::HintConflictsResolved, &[("goal", &goal)])
                } else {
                    fill(Key::HintCallRecordTo, &[("goal", &goal)])
                };
                match u.abort_call() {
                    Some(call) => fill(Key::HintOrGiveUp, &[("first", &first), ("call", &call)]),
                    None => first,
                }
            }
            BlockReason::Detached => text(Key::BlockDetachedHint).to_string(),
        }
    }
}

/// A secret found in a record about to be shared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordFinding {
    /// The record id, or the short commit id for work recorded outside Butler.
    pub record: String,
    /// The file; absent when the record's message is what matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub rule: Rule,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// How many lines an answer that lists them shows.
const LINES_SHOWN: usize = 20;

/// An agent name Butler does not know, with the ones it does.
pub fn unknown_agent(lang: Lang, name: &str) -> String {
    let known = names(lang, AgentKind::ALL.iter().map(|a| a.name()));
    fill_in(
        lang,
        Key::CfgUnknownAgent,
        &[("name", &name), ("known", &known)],
    )
}

/// A short list of names, joined the language's way (`goose, claude` / `goose・claude`).
fn names(lang: Lang, items: impl Iterator<Item = impl std::fmt::Display>) -> String {
    let items: Vec<String> = items.map(|i| i.to_string()).collect();
    items.join(template(lang, Key::ListJoin))
}

/// Where conflict markers start in one file (`a.txt (lines 3, 7)`), the first five lines.
pub fn markers_at(path: &dyn std::fmt::Display, lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().take(5).map(ToString::to_string).collect();
    let key = if lines.len() == 1 {
        Key::MarkersAtLine
    } else {
        Key::MarkersAtLines
    };
    fill(key, &[("path", path), ("lines", &shown.join(", "))])
}

/// The lines for an answer that lists them: the first [`LINES_SHOWN`] and how many more.
pub fn listed(lines: &[LineInfo]) -> Value {
    let shown: Vec<&LineInfo> = lines.iter().take(LINES_SHOWN).collect();
    let mut value = serde_json::json!({ "lines": shown });
    if lines.len() > LINES_SHOWN {
        value["lines_more"] = (lines.len() - LINES_SHOWN).into();
    }
    value
}

/// Where `work_finish(auto=true)` stopped, and why.
#[derive(Debug)]
pub struct FinishStop {
    /// The step that failed (`record`, `publish`, `comment`, `close`).
    pub step: &'static str,
    /// The tool that step stands for, whose hint the failure carries.
    pub tool: Tool,
    pub cause: WorkError,
    /// What was carried out before (a JSON list).
    pub done: Value,
    /// The steps after the failing one.
    pub left: Vec<&'static str>,
}

/// Why Butler's settings are not usable, typed: rendered in the call's language where the
/// answer is made ([`ConfigProblem::describe`]); `Display` is the English.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigProblem {
    /// `setting` names a sandbox mode Butler does not know.
    SandboxMode {
        setting: &'static str,
        value: String,
    },
    /// `setting` names an agent Butler does not know.
    UnknownAgent {
        setting: &'static str,
        name: String,
    },
    /// A path `setting` lists is not absolute.
    NotAbsolute {
        setting: &'static str,
        path: String,
    },
    /// A `deny_read` entry is neither absolute nor under `~/`.
    DenyRead {
        setting: &'static str,
        entry: String,
    },
    /// `proxy` was chosen for the procedures' network.
    NetworkProxy {
        setting: &'static str,
    },
    /// The tracker is Gitea, without a token, a server or a repository.
    TrackerToken,
    TrackerUrl,
    TrackerRepo,
    /// A setting whose reader (in the worker crate) answers in its own words, which are English.
    Unreadable {
        setting: &'static str,
        detail: String,
    },
    /// The settings files could not be read (the reader's words, English).
    Files {
        detail: String,
    },
}

impl ConfigProblem {
    /// The problem in the current language.
    pub fn describe(&self) -> String {
        self.describe_in(crate::catalogue::current())
    }

    fn describe_in(&self, lang: Lang) -> String {
        let setting = |setting: &str, detail: String| {
            fill_in(
                lang,
                Key::CfgSetting,
                &[("setting", &setting), ("detail", &detail)],
            )
        };
        match self {
            ConfigProblem::SandboxMode { setting: s, value } => {
                let choices = names(
                    lang,
                    SandboxMode::ALL.iter().map(|m| format!("`{}`", m.as_str())),
                );
                setting(
                    s,
                    fill_in(
                        lang,
                        Key::CfgSandboxMode,
                        &[("value", value), ("choices", &choices)],
                    ),
                )
            }
            ConfigProblem::UnknownAgent { setting: s, name } => {
                setting(s, unknown_agent(lang, name))
            }
            ConfigProblem::NotAbsolute { setting: s, path } => {
                setting(s, fill_in(lang, Key::ArgNotAbsolute, &[("root", path)]))
            }
            ConfigProblem::DenyRead { setting: s, entry } => {
                setting(s, fill_in(lang, Key::CfgDenyRead, &[("entry", entry)]))
            }
            ConfigProblem::NetworkProxy { setting: s } => {
                setting(s, template(lang, Key::CfgNetworkProxy).to_owned())
            }
            ConfigProblem::TrackerToken => fill_in(
                lang,
                Key::CfgTrackerToken,
                &[("variable", &butler_worker::config::ENV_GITEA_TOKEN)],
            ),
            ConfigProblem::TrackerUrl => fill_in(
                lang,
                Key::CfgTrackerUrl,
                &[("variable", &butler_worker::config::ENV_GITEA_URL)],
            ),
            ConfigProblem::TrackerRepo => template(lang, Key::CfgTrackerRepo).to_owned(),
            ConfigProblem::Unreadable { setting: s, detail } => setting(s, detail.clone()),
            ConfigProblem::Files { detail } => detail.clone(),
        }
    }
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe_in(Lang::En))
    }
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
    #[error("secrets in the work to record")]
    SecretsInWork { findings: Vec<FileFinding> },
    #[error("secrets in the records to share")]
    SecretsInRecords { findings: Vec<RecordFinding> },
    #[error("a secret in `{field}`")]
    SecretInText { field: &'static str, rule: Rule },
    #[error("the tracker token was not sent to {host}")]
    TokenRefused { host: String, plain_http: bool },
    #[error("record not found")]
    RecordNotFound { id: String },
    #[error("issue body misses sections")]
    InvalidBody { missing: Vec<&'static str> },
    #[error("issue body fields needed")]
    BodyFieldsNeeded { missing: Vec<&'static str> },
    #[error("proper tool exists")]
    UseProperTool {
        subcommand: String,
        tool: Tool,
        suggestion: String,
    },
    #[error("refused by policy: {reason}")]
    PolicyBlocked { reason: String, hint: String },
    /// `work_vcs` would lose work: what exactly (one line each, the first ones), how much in
    /// all, the approval reference, and the argument list that will run once approved.
    #[error("approval needed")]
    NeedsApproval {
        lost: Vec<String>,
        total: usize,
        reference: String,
        will_run: Vec<String>,
    },
    /// `work_vcs` ran git and git did not succeed: `message` is git's own (bounded, credentials
    /// removed).
    #[error("work_vcs operation failed")]
    VcsFailed { ran: Vec<String>, message: String },
    #[error("unrecorded changes before a task")]
    TaskNeedsRecord { paths: Vec<String> },
    /// `task_accept`: the task's line changes files that configure tools or run code that the
    /// Brain has not confirmed.
    #[error("task changes tool configuration")]
    TaskToolConfig {
        task: String,
        changes: Vec<butler_worker::tool_config::ToolConfigChange>,
    },
    #[error("no task {id}")]
    TaskNotFound { id: String },
    #[error("agent unavailable: {reason}")]
    AgentUnavailable { reason: String },
    /// The task's runner (a cluster) could not run it: `setup` when the user's settings or
    /// permissions are what is wrong.
    #[error("task runner: {reason}")]
    TaskRunner { reason: String, setup: bool },
    #[error("configuration: {problem}")]
    Config { problem: ConfigProblem },
    #[error("no line `{name}`")]
    LineNotFound { name: String, lines: Vec<LineInfo> },
    #[error("line `{name}` exists")]
    LineExists { name: String },
    /// A new line's name would read as the shared line `<remote>/…`.
    #[error("line `{name}` would shadow the shared lines of `{remote}`")]
    LineShadowsShared { name: String, remote: String },
    /// A new line's name is an existing line's up to case and lookalike letters.
    #[error("line `{name}` looks like line `{existing}`")]
    LineLooksLike { name: String, existing: String },
    /// `name` is both a local line and a shared one (`refs/remotes/<name>`).
    #[error("`{name}` is both a local line and a shared one")]
    LineAmbiguous { name: String },
    #[error("which line to merge")]
    LineNeeded { lines: Vec<LineInfo> },
    #[error("unrecorded changes before a line change")]
    LineNeedsRecord { paths: Vec<String> },
    #[error("the merge stopped on conflicts")]
    MergeConflicted { files: Vec<String>, from: String },
    /// `work_record` was asked to finish an operation while conflict markers remain.
    #[error("conflict markers remain")]
    ConflictMarkers(Unfinished),
    /// `work_record` carried an operation on and it stopped on conflicts again.
    #[error("the {} stopped on conflicts again", .op.command())]
    OperationConflicted {
        op: InProgress,
        files: Vec<String>,
        /// The record the resolution was saved as, when one was made.
        record_id: Option<String>,
    },
    /// A line change would overwrite ignored files git lets it replace.
    #[error("a line change would overwrite ignored files")]
    LineWouldLose {
        lost: Vec<String>,
        total: usize,
        /// The `work_vcs` arguments that do the same with the user's approval.
        via: Vec<String>,
    },
    /// `work_undo` changed nothing (see [`UndoRefusal`]).
    #[error("undo refused")]
    UndoRefused(butler_worker::git::UndoRefusal),
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
    /// A delegated-operations call failed (`submit_task`, `teach`, `approve`, …).
    #[error(transparent)]
    Delegation(OpsError),
    #[error("internal: {0}")]
    Internal(String),
}

fn observe_hint() -> &'static str {
    text(Key::ObserveHint)
}

impl ToolError {
    /// The one mapping from a Brain-facing operation's failure to what the Brain sees;
    /// `tool` is the tool that was called (hints about its own arguments name it).
    pub fn from_work(err: WorkError, tool: Tool) -> Self {
        use ErrorCode::*;
        match err {
            WorkError::NoSession => ToolError::new(
                NeedInput,
                text(Key::ErrNoSession),
                text(Key::ErrNoSessionHint),
            ),
            WorkError::InvalidArgument { field, reason } => ToolError::new(
                NeedInput,
                fill(
                    Key::ErrInvalidArgument,
                    &[("field", &field), ("reason", &reason)],
                ),
                fill(
                    Key::ErrInvalidArgumentHint,
                    &[("tool", &tool), ("field", &field)],
                ),
            )
            .with_data(json!({"field": field})),
            WorkError::UnrecordedChanges => ToolError::new(
                PolicyBlocked,
                text(Key::ErrUnrecorded),
                text(Key::ErrUnrecordedHint),
            ),
            WorkError::Blocked(reason) => ToolError::new(
                PolicyBlocked,
                fill(Key::ErrBlocked, &[("what", &reason.describe())]),
                reason.hint(),
            ),
            WorkError::ConflictMarkers(unfinished) => {
                let files = unfinished.unresolved.len();
                let mut hint = fill(Key::ErrMarkersRemainHint, &[("goal", &unfinished.goal())]);
                if let Some(call) = unfinished.abort_call() {
                    hint = fill(Key::HintOrGiveUp, &[("first", &hint), ("call", &call)]);
                }
                ToolError::new(
                    PolicyBlocked,
                    fill(
                        Key::ErrMarkersRemain,
                        &[("n", &files), ("list", &unfinished.unresolved_list())],
                    ),
                    hint,
                )
                .with_data(json!({
                    "operation": unfinished.op.map(InProgress::command),
                    "unresolved": unfinished.unresolved.iter().take(50).collect::<Vec<_>>(),
                    "total": files,
                }))
            }
            WorkError::OperationConflicted {
                op,
                files,
                record_id,
            } => {
                let [a, b] = op.abort_args();
                let shown: Vec<&String> = files.iter().take(50).collect();
                let saved = match &record_id {
                    Some(id) => fill(Key::ErrOpStoppedAgainSaved, &[("id", id)]),
                    None => String::new(),
                };
                let call = format!("{}([\"{a}\", \"{b}\"])", Tool::WorkVcs);
                ToolError::new(
                    Conflict,
                    fill(
                        Key::ErrOpStoppedAgain,
                        &[
                            ("saved", &saved),
                            ("op", &op.command()),
                            ("n", &files.len()),
                        ],
                    ),
                    fill(Key::ErrOpStoppedAgainHint, &[("call", &call)]),
                )
                .with_data(json!({
                    "work_state": "blocked",
                    "operation": op.command(),
                    "record_id": record_id,
                    "conflicted_files": shown,
                    "total": files.len(),
                }))
            }
            WorkError::LineWouldLose { lost, total, via } => ToolError::new(
                NeedInput,
                fill(
                    Key::ErrLineWouldLose,
                    &[("total", &total), ("list", &first_few(&lost, total, "; "))],
                ),
                fill(
                    Key::ErrLineWouldLoseHint,
                    &[
                        (
                            "args",
                            &serde_json::to_string(&via).expect("strings serialize"),
                        ),
                        ("tool", &tool),
                    ],
                ),
            )
            .with_data(json!({"would_lose": lost, "would_lose_total": total})),
            WorkError::NoDestination => ToolError::new(
                UpstreamNotConfigured,
                text(Key::ErrNoDestination),
                text(Key::ErrNoDestinationHint),
            ),
            WorkError::SecretsInWork { findings } => secrets_in_work(&findings),
            WorkError::SecretsInRecords { findings } => secrets_in_records(&findings),
            WorkError::SecretInText { field, rule } => ToolError::new(
                PolicyBlocked,
                fill(Key::ErrSecretInText, &[("field", &field), ("rule", &rule)]),
                fill(
                    Key::ErrSecretInTextHint,
                    &[("field", &field), ("tool", &tool)],
                ),
            )
            .with_data(json!({"field": field, "rule": rule})),
            WorkError::TokenRefused { host, plain_http } => {
                let (why, hint) = if plain_http {
                    (
                        text(Key::ErrTokenPlainHttp),
                        text(Key::ErrTokenPlainHttpHint).to_string(),
                    )
                } else {
                    (
                        text(Key::ErrTokenUnnamedHost),
                        fill(Key::ErrTokenUnnamedHostHint, &[("host", &host)]),
                    )
                };
                ToolError::new(
                    NeedInput,
                    fill(Key::ErrTokenRefused, &[("host", &host), ("why", &why)]),
                    hint,
                )
                .with_data(json!({"host": host}))
            }
            WorkError::RecordNotFound { id } => ToolError::new(
                NotFound,
                fill(Key::ErrRecordNotFound, &[("id", &id)]),
                text(Key::FindRecordsHint),
            ),
            WorkError::InvalidBody { missing } => ToolError::new(
                InvalidBody,
                text(Key::ErrInvalidBody),
                fill(Key::ErrInvalidBodyHint, &[("tool", &tool)]),
            )
            .with_data(json!({"required_fields": missing})),
            WorkError::BodyFieldsNeeded { missing } => ToolError::new(
                NeedInput,
                text(Key::ErrBodyFieldsNeeded),
                text(Key::ErrBodyFieldsNeededHint),
            )
            .with_data(json!({"required_fields": missing})),
            WorkError::UseProperTool {
                subcommand,
                tool,
                suggestion,
            } => ToolError::new(
                UseProperTool,
                fill(Key::ErrUseProperTool, &[("subcommand", &subcommand)]),
                fill(Key::ErrUseProperToolHint, &[("suggestion", &suggestion)]),
            )
            .with_data(json!({"tool": tool})),
            WorkError::PolicyBlocked { reason, hint } => {
                ToolError::new(PolicyBlocked, reason, hint)
            }
            WorkError::NeedsApproval {
                lost,
                total,
                reference,
                will_run,
            } => ToolError::new(
                NeedInput,
                fill(
                    Key::ErrNeedsApproval,
                    &[("total", &total), ("lost", &first_few(&lost, total, "; "))],
                ),
                text(Key::ErrNeedsApprovalHint),
            )
            .with_data(json!({
                "approval": reference,
                "would_lose": lost,
                "would_lose_total": total,
                "will_run": will_run,
            })),
            WorkError::VcsFailed { ran, message } => {
                let (code, summary, hint) = vcs_failure(&message);
                ToolError::new(code, summary, hint)
                    .with_data(json!({"ran": ran, "message": bounded(&message)}))
            }
            WorkError::UndoRefused(refusal) => undo_refused(refusal),
            WorkError::TaskNeedsRecord { paths } => {
                let shown: Vec<&String> = paths.iter().take(10).collect();
                ToolError::new(
                    NeedInput,
                    fill(
                        Key::ErrTaskNeedsRecord,
                        &[
                            ("n", &paths.len()),
                            ("names", &first_few(&paths, paths.len(), ", ")),
                        ],
                    ),
                    text(Key::ErrTaskNeedsRecordHint),
                )
                .with_data(json!({"changed_files": shown, "total": paths.len()}))
            }
            WorkError::TaskToolConfig { task, changes } => {
                let paths: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
                ToolError::new(
                    NeedInput,
                    fill(
                        Key::ErrTaskToolConfig,
                        &[
                            ("task", &task),
                            ("n", &paths.len()),
                            ("names", &first_few(&paths, paths.len(), ", ")),
                        ],
                    ),
                    fill(Key::ErrTaskToolConfigHint, &[("task", &task)]),
                )
                .with_data(json!({
                    "task_id": task,
                    "tool_config": changes.iter().take(50).collect::<Vec<_>>(),
                    "total": changes.len(),
                }))
            }
            WorkError::TaskNotFound { id } => ToolError::new(
                NotFound,
                fill(
                    Key::ErrTaskNotFound,
                    &[("id", &id.chars().take(64).collect::<String>())],
                ),
                text(Key::ErrTaskNotFoundHint),
            ),
            WorkError::AgentUnavailable { reason } => ToolError::new(
                NeedInput,
                fill(Key::ErrAgentUnavailable, &[("reason", &reason)]),
                text(Key::ErrAgentUnavailableHint),
            ),
            WorkError::TaskRunner { reason, setup } => ToolError::new(
                if setup { NeedInput } else { BackendError },
                fill(Key::ErrTaskRunner, &[("reason", &reason)]),
                text(if setup {
                    Key::ErrTaskRunnerSetupHint
                } else {
                    Key::ErrTaskRunnerHint
                }),
            ),
            WorkError::Config { problem } => ToolError::new(
                NeedInput,
                fill(Key::ErrConfig, &[("problem", &problem.describe())]),
                text(Key::ErrConfigHint),
            ),
            WorkError::LineNotFound { name, lines } => ToolError::new(
                NotFound,
                fill(Key::ErrLineNotFound, &[("name", &name)]),
                fill(Key::ErrLineNotFoundHint, &[("quoted", &quoted(&name))]),
            )
            .with_data(listed(&lines)),
            WorkError::LineExists { name } => ToolError::new(
                NeedInput,
                fill(Key::ErrLineExists, &[("name", &name)]),
                fill(Key::ErrLineExistsHint, &[("quoted", &quoted(&name))]),
            ),
            WorkError::LineShadowsShared { name, remote } => ToolError::new(
                NeedInput,
                fill(
                    Key::ErrLineShadowsShared,
                    &[("name", &name), ("remote", &remote)],
                ),
                text(Key::ErrLineNameHint),
            ),
            WorkError::LineLooksLike { name, existing } => ToolError::new(
                NeedInput,
                fill(
                    Key::ErrLineLooksLike,
                    &[("name", &name), ("existing", &existing)],
                ),
                fill(Key::ErrLineLooksLikeHint, &[("quoted", &quoted(&existing))]),
            ),
            WorkError::LineAmbiguous { name } => ToolError::new(
                NeedInput,
                fill(Key::ErrLineAmbiguous, &[("name", &name)]),
                fill(Key::ErrLineAmbiguousHint, &[("quoted", &quoted(&name))]),
            ),
            WorkError::LineNeeded { lines } => ToolError::new(
                NeedInput,
                text(Key::ErrLineNeeded),
                text(Key::ErrLineNeededHint),
            )
            .with_data(listed(&lines)),
            WorkError::LineNeedsRecord { paths } => {
                let shown: Vec<&String> = paths.iter().take(10).collect();
                ToolError::new(
                    NeedInput,
                    fill(
                        Key::ErrLineNeedsRecord,
                        &[
                            ("n", &paths.len()),
                            ("names", &first_few(&paths, paths.len(), ", ")),
                        ],
                    ),
                    fill(Key::ErrLineNeedsRecordHint, &[("tool", &tool)]),
                )
                .with_data(json!({"changed_files": shown, "total": paths.len()}))
            }
            WorkError::MergeConflicted { files, from } => {
                let again = if tool == Tool::TaskAccept {
                    text(Key::ErrMergeAgainTask)
                } else {
                    ""
                };
                let shown: Vec<&String> = files.iter().take(50).collect();
                ToolError::new(
                    Conflict,
                    fill(Key::ErrMergeConflicted, &[("from", &from), ("n", &files.len())]),
                    fill(Key::ErrMergeConflictedHint, &[("again", &again)]),
                )
                .with_data(json!({"work_state": "blocked", "conflicted_files": shown, "total": files.len()}))
            }
            WorkError::MessageNeeded { proposed } => ToolError::new(
                NeedInput,
                text(Key::ErrMessageNeeded),
                text(Key::ErrMessageNeededHint),
            )
            .with_data(json!({"proposed_message": proposed})),
            WorkError::FinishStopped(stop) => {
                let FinishStop {
                    step,
                    tool: step_tool,
                    cause,
                    done,
                    left,
                } = *stop;
                let inner = ToolError::from_work(cause, step_tool);
                let mut left_steps = vec![json!({"step": step, "error": inner.to_json()})];
                left_steps.extend(left.iter().map(|s| json!({"step": s})));
                let finished: Vec<&str> = done
                    .as_array()
                    .map(|steps| steps.iter().filter_map(|s| s["step"].as_str()).collect())
                    .unwrap_or_default();
                let after = match finished.as_slice() {
                    [] => String::new(),
                    steps => fill(Key::ErrFinishDone, &[("steps", &steps.join(", "))]),
                };
                ToolError {
                    code: inner.code,
                    summary: fill(Key::ErrFinishStopped, &[("step", &step), ("after", &after)]),
                    hint: inner.hint,
                    data: Some(json!({"done": done, "left": left_steps})),
                }
            }
            WorkError::Git(err) => git_error(err, tool),
            WorkError::Ledger(err) => ledger_error(err, tool),
            WorkError::Issue(err) => issue_error(err, tool),
            WorkError::Delegation(err) => delegation_error(err, tool),
            WorkError::Internal(_) => {
                ToolError::new(BackendError, text(Key::ErrInternal), observe_hint())
            }
        }
    }
}

/// After a change that may have been applied: how to check before sending it again.
fn check_before_repeating(tool: Tool) -> String {
    let check = match tool {
        Tool::IssueCreate => text(Key::CheckIssueCreated),
        Tool::IssueComment => text(Key::CheckCommentThere),
        Tool::IssueDeleteComment => text(Key::CheckCommentGone),
        _ => text(Key::CheckChangeThere),
    };
    fill(
        Key::CheckBeforeRepeating,
        &[("check", &check), ("tool", &tool)],
    )
}

/// Findings shown to the Brain at most; `total` says how many there were.
const MAX_FINDINGS_SHOWN: usize = 20;

fn rules_of<'a>(rules: impl Iterator<Item = &'a Rule>) -> String {
    let mut ids: Vec<&str> = rules.map(|r| r.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.join(", ")
}

fn secrets_in_work(findings: &[FileFinding]) -> ToolError {
    let mut paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
    paths.dedup();
    let own_token = findings.iter().any(|f| f.rule == Rule::ButlerTrackerToken);
    let hint = if own_token {
        text(Key::ErrOwnTokenInWorkHint)
    } else {
        text(Key::ErrSecretsInWorkHint)
    };
    ToolError::new(
        ErrorCode::PolicyBlocked,
        fill(
            Key::ErrSecretsInWork,
            &[
                ("n", &paths.len()),
                ("rules", &rules_of(findings.iter().map(|f| &f.rule))),
            ],
        ),
        hint,
    )
    .with_data(json!({
        "paths": paths.iter().take(MAX_FINDINGS_SHOWN).collect::<Vec<_>>(),
        "files": findings.iter().take(MAX_FINDINGS_SHOWN).collect::<Vec<_>>(),
        "total": findings.len(),
    }))
}

fn secrets_in_records(findings: &[RecordFinding]) -> ToolError {
    let mut records: Vec<&str> = findings.iter().map(|f| f.record.as_str()).collect();
    records.dedup();
    ToolError::new(
        ErrorCode::PolicyBlocked,
        fill(
            Key::ErrSecretsInRecords,
            &[
                ("n", &records.len()),
                ("rules", &rules_of(findings.iter().map(|f| &f.rule))),
            ],
        ),
        text(Key::ErrSecretsInRecordsHint),
    )
    .with_data(json!({
        "records": records.iter().take(MAX_FINDINGS_SHOWN).collect::<Vec<_>>(),
        "findings": findings.iter().take(MAX_FINDINGS_SHOWN).collect::<Vec<_>>(),
        "total": findings.len(),
    }))
}

/// `s` as a JSON string literal, for calls shown in hints.
/// The first three of `items` joined by `sep`, with `…` when `total` says there are more.
fn first_few(items: &[String], total: usize, sep: &str) -> String {
    let mut text = items
        .iter()
        .take(3)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(sep);
    if total > 3 {
        text.push_str(sep);
        text.push('…');
    }
    text
}

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

/// What a failed `work_vcs` operation means, read from git's message (git runs with
/// `LC_ALL=C`, so its wording is stable): code, summary, hint.
fn vcs_failure(message: &str) -> (ErrorCode, &'static str, &'static str) {
    use ErrorCode::*;
    let has = |needles: &[&str]| needles.iter().any(|n| message.contains(n));
    if has(&[
        "CONFLICT",
        "Automatic merge failed",
        "could not apply",
        "would be overwritten",
        "unmerged",
        "not concluded your",
        "already exists",
        "is already checked out",
        "is already used by worktree",
    ]) {
        return (
            Conflict,
            text(Key::ErrVcsConflict),
            text(Key::ErrVcsConflictHint),
        );
    }
    if has(&[
        "Authentication failed",
        "Permission denied (publickey",
        "could not read Username",
        "The requested URL returned error: 401",
        "The requested URL returned error: 403",
    ]) {
        return (AuthFailed, text(Key::ErrVcsAuth), text(Key::ErrVcsAuthHint));
    }
    if has(&[
        "Could not resolve host",
        "Connection refused",
        "Connection timed out",
        "unable to access",
        "Could not read from remote repository",
    ]) {
        return (
            BackendError,
            text(Key::ErrVcsUnreachable),
            text(Key::ErrVcsUnreachableHint),
        );
    }
    if has(&[
        "Please tell me who you are",
        "unable to auto-detect email address",
    ]) {
        return (
            NeedInput,
            text(Key::ErrVcsIdentity),
            text(Key::ErrVcsIdentityHint),
        );
    }
    if has(&[
        "usage:",
        "ambiguous argument",
        "requires a value",
        "cannot be used together",
        "is not a valid branch name",
        "is not a valid tag name",
        "not a valid name",
        "is not a valid remote name",
    ]) {
        return (
            NeedInput,
            text(Key::ErrVcsArguments),
            text(Key::ErrVcsArgumentsHint),
        );
    }
    if has(&[
        "not found",
        "did not match any",
        "unknown revision",
        "Not a valid object name",
        "not a valid ref",
        "invalid reference",
        "does not exist",
        "No such remote",
        "no such ref",
        "bad revision",
        "not a commit",
        "No stash entries",
        "is not a valid reference",
        "does not point to a valid object",
    ]) {
        return (
            NotFound,
            text(Key::ErrVcsNotFound),
            text(Key::ErrVcsNotFoundHint),
        );
    }
    (
        BackendError,
        text(Key::ErrVcsFailed),
        text(Key::ErrVcsFailedHint),
    )
}

fn git_error(err: GitError, tool: Tool) -> ToolError {
    use ErrorCode::*;
    tracing::warn!(error = ?err, "git worker error");
    match err {
        GitError::NotARepository => ToolError::new(
            NotFound,
            text(Key::ErrNotARepository),
            text(Key::ErrNotARepositoryHint),
        ),
        GitError::BareRepository => ToolError::new(
            NotFound,
            text(Key::ErrBareRepository),
            text(Key::ErrBareRepositoryHint),
        ),
        GitError::OutsideProject => ToolError::new(
            PolicyBlocked,
            text(Key::ErrOutsideProject),
            text(Key::ErrOutsideProjectHint),
        ),
        GitError::NothingToRecord => ToolError::new(
            NeedInput,
            text(Key::ErrNothingToRecord),
            text(Key::ErrNothingToRecordHint),
        ),
        GitError::NoIdentity => ToolError::new(
            NeedInput,
            text(Key::ErrNoIdentity),
            text(Key::ErrNoIdentityHint),
        ),
        GitError::HookRejected { hook, output_tail } => {
            let default_hook = if tool == Tool::WorkPublish {
                "push"
            } else {
                "commit"
            };
            let hook_name = hook.as_deref().unwrap_or(default_hook);
            let (summary, hint) = match tool {
                Tool::WorkPublish => (
                    fill(Key::ErrHookRejectedPublish, &[("hook", &hook_name)]),
                    text(Key::ErrHookRejectedPublishHint).to_string(),
                ),
                Tool::WorkRecord => (
                    fill(Key::ErrHookRejected, &[("hook", &hook_name)]),
                    text(Key::ErrHookRejectedHint).to_string(),
                ),
                _ => (
                    fill(Key::ErrHookRejectedOther, &[("hook", &hook_name)]),
                    fill(Key::ErrHookRejectedOtherHint, &[("tool", &tool)]),
                ),
            };
            ToolError::new(PolicyBlocked, summary, hint)
                .with_data(json!({"hook": hook, "output": bounded(&output_tail)}))
        }
        GitError::IndexLocked { age, .. } => ToolError::new(
            PolicyBlocked,
            fill(
                Key::ErrIndexLocked,
                &[("secs", &age.map_or(0, |a| a.as_secs()))],
            ),
            fill(Key::ErrIndexLockedHint, &[("tool", &tool)]),
        ),
        GitError::ButlerBusy { waited } => ToolError::new(
            PolicyBlocked,
            fill(Key::ErrButlerBusy, &[("secs", &waited.as_secs())]),
            fill(Key::AgainInAMoment, &[("tool", &tool)]),
        ),
        GitError::Rejected => {
            ToolError::new(Conflict, text(Key::ErrRejected), text(Key::ErrRejectedHint))
        }
        GitError::AuthFailed => ToolError::new(
            AuthFailed,
            text(Key::ErrPublishAuth),
            text(Key::ErrPublishAuthHint),
        ),
        GitError::Unreachable => ToolError::new(
            BackendError,
            text(Key::ErrUnreachable),
            text(Key::ErrUnreachableHint),
        ),
        GitError::Timeout { .. } => ToolError::new(
            BackendError,
            text(Key::ErrTimeout),
            fill(Key::ErrTimeoutHint, &[("tool", &tool)]),
        ),
        GitError::UnknownCommit => ToolError::new(
            NotFound,
            text(Key::ErrNoSuchRecord),
            text(Key::FindRecordsHint),
        ),
        GitError::GitMissing => ToolError::new(
            BackendError,
            text(Key::ErrGitMissing),
            text(Key::ErrGitMissingHint),
        ),
        GitError::Failed { .. } => {
            ToolError::new(BackendError, text(Key::ErrGitFailed), observe_hint())
        }
    }
}

fn ledger_error(err: LedgerError, tool: Tool) -> ToolError {
    use ErrorCode::*;
    tracing::warn!(error = ?err, "ledger error");
    match err {
        LedgerError::Busy => ToolError::new(
            BackendError,
            text(Key::ErrLedgerBusy),
            fill(Key::AgainInAMoment, &[("tool", &tool)]),
        ),
        LedgerError::Corrupt { .. } | LedgerError::TooNew { .. } | LedgerError::Io { .. } => {
            ToolError::new(
                BackendError,
                text(Key::ErrLedgerUnusable),
                text(Key::ErrLedgerUnusableHint),
            )
        }
        LedgerError::NotFound { what } => ToolError::new(
            NotFound,
            fill(Key::ErrIssueNotFound, &[("what", &what)]),
            text(Key::FindRecordsHint),
        ),
        LedgerError::Conflict { .. } => {
            ToolError::new(Conflict, text(Key::ErrLedgerConflict), observe_hint())
        }
        LedgerError::Sqlite(_) => {
            ToolError::new(BackendError, text(Key::ErrLedgerFailed), observe_hint())
        }
    }
}

/// The named problems, the first few in the summary.
fn problems_text(problems: &[butler_worker::contract::FieldProblem]) -> String {
    let shown: Vec<String> = problems
        .iter()
        .take(3)
        .map(|p| format!("`{}`: {}", p.field, p.problem))
        .collect();
    format!(
        "{}{}",
        shown.join("; "),
        if problems.len() > 3 { "; …" } else { "" }
    )
}

fn delegation_error(err: OpsError, tool: Tool) -> ToolError {
    use ErrorCode::*;
    match err {
        OpsError::Contract(problems) => ToolError::new(
            NeedInput,
            fill(
                Key::ErrContractFields,
                &[
                    ("n", &problems.len()),
                    ("problems", &problems_text(&problems)),
                ],
            ),
            text(Key::ErrContractFieldsHint),
        )
        .with_data(json!({"fields": problems})),
        OpsError::Steps { problems, refused } => ToolError::new(
            if refused { PolicyBlocked } else { NeedInput },
            fill(
                if refused {
                    Key::ErrStepsRefused
                } else {
                    Key::ErrStepsNotTaught
                },
                &[
                    ("n", &problems.len()),
                    ("problems", &problems_text(&problems)),
                ],
            ),
            text(Key::ErrStepsHint),
        )
        .with_data(json!({"fields": problems})),
        OpsError::UnknownSkill {
            intent,
            signature,
            known,
        } => ToolError::new(
            NotFound,
            fill(
                Key::ErrUnknownSkill,
                &[
                    ("intent", &intent),
                    (
                        "target",
                        &if signature.is_empty() {
                            "{}"
                        } else {
                            &signature
                        },
                    ),
                ],
            ),
            text(Key::ErrUnknownSkillHint),
        )
        .with_data(json!({"intent": intent, "target": signature, "known_targets": known})),
        OpsError::NoTask(id) => ToolError::new(
            NotFound,
            fill(
                Key::ErrNoTask,
                &[("id", &id.chars().take(64).collect::<String>())],
            ),
            text(Key::ErrNoTaskHint),
        ),
        OpsError::WrongState {
            task,
            status,
            expected,
        } => ToolError::new(
            PolicyBlocked,
            fill(
                Key::ErrTaskWrongState,
                &[
                    ("task", &task),
                    ("status", &status),
                    ("expected", &expected),
                ],
            ),
            fill(Key::ErrTaskWrongStateHint, &[("task", &task)]),
        )
        .with_data(json!({"task_id": task, "state": status})),
        OpsError::NoSkill(name) => ToolError::new(
            NotFound,
            fill(Key::ErrNoSkill, &[("name", &name)]),
            text(Key::ErrNoSkillHint),
        ),
        OpsError::Capability(CapabilityError::Input { field, reason }) => ToolError::new(
            NeedInput,
            fill(
                Key::ErrInvalidArgument,
                &[("field", &field), ("reason", &reason)],
            ),
            fill(
                Key::ErrInvalidArgumentHint,
                &[("tool", &tool), ("field", &field)],
            ),
        )
        .with_data(json!({"fields": [{"field": field, "problem": reason}]})),
        OpsError::Capability(CapabilityError::Refused { reason, hint }) => {
            ToolError::new(PolicyBlocked, reason, hint)
        }
        OpsError::Capability(CapabilityError::Failed(why)) => {
            tracing::warn!(%why, "a capability failed");
            ToolError::new(BackendError, text(Key::ErrOperationFailed), observe_hint())
        }
        OpsError::Config(e) => ToolError::new(
            NeedInput,
            fill(Key::ErrDelegationConfig, &[("problem", &e)]),
            text(Key::ErrDelegationConfigHint),
        ),
        OpsError::Git(err) => git_error(err, tool),
        OpsError::Ledger(err) => ledger_error(err, tool),
        OpsError::Internal(why) => {
            tracing::warn!(%why, "delegation failed");
            ToolError::new(BackendError, text(Key::ErrInternal), observe_hint())
        }
    }
}

fn issue_error(err: IssueError, tool: Tool) -> ToolError {
    use ErrorCode::*;
    match err {
        IssueError::NotFound { what } => ToolError::new(
            NotFound,
            fill(Key::ErrIssueNotFound, &[("what", &what)]),
            text(Key::ErrIssueNotFoundHint),
        ),
        IssueError::LabelNotFound { names } => ToolError::new(
            LabelNotFound,
            fill(Key::ErrLabelNotFound, &[("names", &names.join(", "))]),
            text(Key::ErrLabelNotFoundHint),
        )
        .with_data(json!({"labels": names})),
        IssueError::InvalidTitle => ToolError::new(
            InvalidTitle,
            text(Key::ErrInvalidTitle),
            fill(Key::ErrInvalidTitleHint, &[("tool", &tool)]),
        ),
        IssueError::AuthFailed => ToolError::new(
            AuthFailed,
            text(Key::ErrIssueAuth),
            fill(Key::ErrIssueAuthHint, &[("tool", &tool)]),
        ),
        IssueError::Conflict => ToolError::new(
            Conflict,
            text(Key::ErrIssueConflict),
            text(Key::ErrIssueConflictHint),
        ),
        IssueError::Unreachable | IssueError::ReadTimeout => ToolError::new(
            BackendError,
            text(Key::ErrIssueUnreachable),
            fill(Key::ErrIssueUnreachableHint, &[("tool", &tool)]),
        ),
        IssueError::WriteUnconfirmed => ToolError::new(
            BackendError,
            text(Key::ErrWriteUnconfirmed),
            check_before_repeating(tool),
        ),
        IssueError::RateLimited { retry_after_secs } => {
            let wait = match retry_after_secs {
                Some(secs) => fill(Key::ErrWaitSecs, &[("secs", &secs)]),
                None => text(Key::ErrWaitAMinute).to_string(),
            };
            ToolError::new(
                BackendError,
                text(Key::ErrRateLimited),
                fill(Key::ErrRateLimitedHint, &[("wait", &wait), ("tool", &tool)]),
            )
            .with_data(json!({"retry_after_secs": retry_after_secs}))
        }
        IssueError::ResponseTooLarge { limit_bytes } => ToolError::new(
            BackendError,
            fill(Key::ErrTooLarge, &[("mib", &(limit_bytes >> 20))]),
            text(Key::ErrTooLargeHint),
        ),
        IssueError::Backend { .. } => ToolError::new(
            BackendError,
            text(Key::ErrIssueFailed),
            fill(Key::ErrIssueUnreachableHint, &[("tool", &tool)]),
        ),
    }
}

fn undo_refused(refusal: butler_worker::git::UndoRefusal) -> ToolError {
    use ErrorCode::*;
    use butler_worker::git::UndoRefusal;
    match refusal {
        UndoRefusal::NoSuchOperation(id) => {
            let id = id.map(|i| i.to_string()).unwrap_or_default();
            ToolError::new(
                NotFound,
                fill(Key::ErrUndoNoOperation, &[("id", &id)]),
                text(Key::ErrUndoNoOperationHint),
            )
        }
        UndoRefusal::Unfinished(id) => ToolError::new(
            Conflict,
            fill(Key::ErrUndoUnfinished, &[("id", &id)]),
            text(Key::ErrUndoUnfinishedHint),
        ),
        UndoRefusal::ChangedSince {
            newest,
            files,
            refs,
        } => {
            let all: Vec<String> = files.iter().chain(refs.iter()).cloned().collect();
            ToolError::new(
                NeedInput,
                fill(
                    Key::ErrUndoChangedSince,
                    &[
                        ("id", &newest),
                        ("names", &first_few(&all, all.len(), ", ")),
                    ],
                ),
                text(Key::ErrUndoChangedSinceHint),
            )
            .with_data(json!({
                "changed_files": files.iter().take(30).collect::<Vec<_>>(),
                "moved_refs": refs.iter().take(30).collect::<Vec<_>>(),
                "total": all.len(),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(message: &str) -> &'static str {
        let e = ToolError::from_work(
            WorkError::VcsFailed {
                ran: vec!["x".into()],
                message: message.into(),
            },
            Tool::WorkVcs,
        );
        e.code.as_str()
    }

    #[test]
    fn failed_operations_are_classified_by_gits_words() {
        assert_eq!(
            code("CONFLICT (content): Merge conflict in a.txt"),
            "conflict"
        );
        assert_eq!(code("fatal: a branch named 'x' already exists"), "conflict");
        assert_eq!(code("fatal: invalid reference: nope"), "not_found");
        assert_eq!(
            code("error: pathspec 'x' did not match any file(s) known to git"),
            "not_found"
        );
        assert_eq!(
            code("fatal: 'a b' is not a valid branch name"),
            "need_input"
        );
        assert_eq!(code("*** Please tell me who you are."), "need_input");
        assert_eq!(
            code("fatal: Authentication failed for 'https://host/'"),
            "auth_failed"
        );
        assert_eq!(
            code("fatal: unable to access 'https://host/': Could not resolve host"),
            "backend_error"
        );
        assert_eq!(code("something else entirely"), "backend_error");
    }

    /// Three ASCII words in a row (`find record ids`): an English sentence.
    fn english(text: &str) -> bool {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || "。、().,;:".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(3)
            .any(|w| w.iter().all(|x| x.chars().all(|c| c.is_ascii_alphabetic())))
    }

    #[tokio::test]
    async fn a_japanese_session_reads_no_english_sentence() {
        assert!(english("find record ids with work_history"));
        let shown = crate::catalogue::scope(crate::catalogue::Lang::Ja, async {
            let missing = LedgerError::NotFound {
                what: "record 20260101-001".into(),
            };
            let mut shown = vec![ToolError::from_work(missing.into(), Tool::WorkDiff)];
            for bad in [
                crate::work::issue_number(0, "issue_id").map(|_| ()),
                crate::work::history::validate_n(Some(0)).map(|_| ()),
                crate::work::record::validate_message(" ").map(|_| ()),
                crate::work::record::validate_issue_ids(&[1; 100]).map(|_| ()),
            ] {
                if let Err(e) = bad {
                    shown.push(ToolError::from_work(e, Tool::WorkRecord));
                }
            }
            shown
        })
        .await;
        assert_eq!(shown.len(), 5);
        for e in shown {
            assert!(!english(&e.summary) && !english(&e.hint), "{e:?}");
        }
    }

    /// Each kind of settings problem Butler words itself reads Japanese in a Japanese session;
    /// the English (`Display`, logs) is the wording the Brain read before.
    #[test]
    fn settings_problems_read_japanese_in_a_japanese_session() {
        let problems = [
            ConfigProblem::SandboxMode {
                setting: "BUTLER_SANDBOX",
                value: "maybe".into(),
            },
            ConfigProblem::UnknownAgent {
                setting: "[agent] default",
                name: "robot".into(),
            },
            ConfigProblem::NotAbsolute {
                setting: "[agent] sandbox_writable",
                path: "tmp".into(),
            },
            ConfigProblem::DenyRead {
                setting: "[agent] deny_read",
                entry: "keys".into(),
            },
            ConfigProblem::NetworkProxy {
                setting: "[delegation] network",
            },
            ConfigProblem::TrackerToken,
            ConfigProblem::TrackerUrl,
            ConfigProblem::TrackerRepo,
        ];
        assert_eq!(
            problems[0].to_string(),
            "BUTLER_SANDBOX: `maybe` is not one of `required`, `auto`, `off`"
        );
        crate::catalogue::sync_scope(crate::catalogue::Lang::Ja, || {
            for problem in problems {
                let e = ToolError::from_work(WorkError::Config { problem }, Tool::RunImplement);
                assert!(!english(&e.summary) && !english(&e.hint), "{e:?}");
            }
        });
    }

    #[test]
    fn where_markers_start_is_worded_by_the_count_in_each_language() {
        assert_eq!(markers_at(&"a.txt", &[3]), "a.txt (line 3)");
        assert_eq!(
            markers_at(&"a.txt", &[3, 7, 9, 11, 13, 15]),
            "a.txt (lines 3, 7, 9, 11, 13)"
        );
        crate::catalogue::sync_scope(crate::catalogue::Lang::Ja, || {
            assert_eq!(markers_at(&"a.txt", &[3, 7]), "a.txt (3, 7 行目)");
        });
    }

    #[test]
    fn an_approval_request_lists_the_loss_and_what_will_run() {
        let e = ToolError::from_work(
            WorkError::NeedsApproval {
                lost: vec!["uncommitted edits in a.txt".into()],
                total: 1,
                reference: "apr-0123456789ab".into(),
                will_run: vec!["reset".into(), "--hard".into(), "--".into()],
            },
            Tool::WorkVcs,
        );
        assert_eq!(e.code, ErrorCode::NeedInput);
        let data = e.data.expect("data");
        assert_eq!(data["approval"], "apr-0123456789ab");
        assert_eq!(data["would_lose"][0], "uncommitted edits in a.txt");
        assert_eq!(data["will_run"][1], "--hard");
    }
}
