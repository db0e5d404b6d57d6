//! Delegated implementation: `run_implement`, `task_accept`, `task_discard` as plain async
//! functions for the thin MCP tools, and the Maid's settings read from Butler's environment.
//!
//! `run_implement` validates the request into a Task Contract, runs the ImplementMaid to the
//! end (progress through the callback, cancellation through the token), relays the agent's
//! notes to the task's issue with Butler's own credentials, and returns the Result Contract as
//! `data`. A failed task is not a tool error: the evidence says why.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::cluster::ClusterFailure;
use butler_maid::{MaidContext, MaidError};
use butler_worker::config::{AgentFileConfig, Environment};
use butler_worker::contract::{
    AgentKind, ContractError, FileCheckSpec, ImplementEvidence, ImplementRequest, NoteKind,
    Outcome, TIMEOUT_BOUNDS_S, TaskId, Verification,
};
use butler_worker::ledger::TaskNote;
use butler_worker::time::SharedClock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
pub use tokio_util::sync::CancellationToken;

use crate::catalogue::{Key, current, fill, text};
use crate::envelope::Reply;
use crate::error::{ConfigProblem, WorkError};
use crate::session::{Project, blocking};

/// `run_implement`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunImplementArgs {
    /// What to achieve, in a sentence or two.
    pub goal: String,
    /// Behaviour, interfaces, constraints.
    #[serde(default)]
    pub spec: String,
    /// Files, directories or globs the agent may change.
    pub target_paths: Vec<String>,
    /// Commands that must pass.
    #[serde(default)]
    pub test_commands: Option<Vec<String>>,
    /// {path, exists|absent: true} or {path, contains}.
    #[serde(default)]
    pub file_checks: Option<Vec<FileCheckArg>>,
    /// Default goose.
    #[serde(default)]
    pub agent: Option<AgentKind>,
    /// Seconds per attempt.
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// The issue it works on.
    #[serde(default)]
    pub issue_id: Option<u64>,
    /// Tests may be changed (else a weakened test or a stub fails an attempt).
    #[serde(default)]
    pub allow_test_changes: Option<bool>,
}

/// One file check.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileCheckArg {
    pub path: String,
    #[serde(default)]
    pub exists: Option<bool>,
    #[serde(default)]
    pub absent: Option<bool>,
    #[serde(default)]
    pub contains: Option<String>,
}

/// `task_discard`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskIdArgs {
    /// The task id from run_implement's result (e.g. `t3`).
    pub task_id: String,
}

/// `task_accept`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskAcceptArgs {
    /// The task id from run_implement's result (e.g. `t3`).
    pub task_id: String,
    /// The result's tool_config paths, once the user has seen them.
    #[serde(default)]
    pub confirm_paths: Option<Vec<String>>,
}

impl From<RunImplementArgs> for ImplementRequest {
    fn from(a: RunImplementArgs) -> Self {
        ImplementRequest {
            goal: a.goal,
            spec: a.spec,
            target_paths: a.target_paths,
            test_commands: a.test_commands.unwrap_or_default(),
            file_checks: a
                .file_checks
                .unwrap_or_default()
                .into_iter()
                .map(|f| FileCheckSpec {
                    path: f.path,
                    exists: f.exists,
                    absent: f.absent,
                    contains: f.contains,
                })
                .collect(),
            agent: a.agent.map(|kind| kind.name().to_owned()),
            timeout_s: a.timeout_s,
            issue_id: a.issue_id,
            allow_test_changes: a.allow_test_changes.unwrap_or(false),
        }
    }
}

/// The Maid's settings for `project_root`: the `[agent]` settings in force (`file`: the user's
/// configuration and the project's `.butler/config.toml` merged by who may decide what, read
/// once per session), overridden by Butler's environment (`env`, read once when the process
/// started):
/// `BUTLER_AGENT` (default agent), `BUTLER_<AGENT>_PROGRAM` / `_PROVIDER` / `_MODEL`
/// (`<AGENT>` = GOOSE, CLAUDE, CODEX, AIDER), `BUTLER_AGENT_ENV_ALLOW` (comma-separated extra
/// variables passed to agents), `BUTLER_AGENT_STAGNATION_S`, `BUTLER_AGENT_LOOP_REPEATS` and
/// `BUTLER_AGENT_LOOP_QUIET_S` (over `[agent] loop_repeats`, `loop_quiet_secs`),
/// `BUTLER_TEST_TIMEOUT_S`,
/// `BUTLER_SANDBOX` (`required`, `auto`, `off`), and `BUTLER_EXE` (the program serving
/// `worker-mcp` and `sandbox-exec`; default: this executable). Task worktrees go under
/// `[agent] worktrees_dir`, else `$XDG_DATA_HOME/butler/worktrees` (or
/// `~/.local/share/butler/worktrees`). The task's times and record ids come from `clock`.
pub fn maid_context(
    project_root: PathBuf,
    clock: SharedClock,
    env: &Environment,
    file: &AgentFileConfig,
) -> Result<MaidContext, WorkError> {
    let var = |name: &str| env.get(name).map(str::to_owned);
    let exe = butler_program(env)?;
    let hook_exe = exe.to_string_lossy().into_owned();
    let worker = WorkerMcpCommand {
        program: exe,
        args: vec!["worker-mcp".to_owned()],
        env: Vec::new(),
    };
    let mut ctx = MaidContext::new(project_root, worker);
    ctx.clock = clock;
    let default = var("BUTLER_AGENT").map(|v| ("BUTLER_AGENT", v));
    let default = default.or_else(|| file.default.clone().map(|v| ("[agent] default", v)));
    if let Some((origin, name)) = default {
        ctx.default_agent = AgentKind::parse(&name).map_err(|_| WorkError::Config {
            problem: ConfigProblem::UnknownAgent {
                setting: origin,
                name: name.clone(),
            },
        })?;
    }
    let mut agents = HashMap::new();
    for kind in [
        AgentKind::Goose,
        AgentKind::Claude,
        AgentKind::Codex,
        AgentKind::Aider,
    ] {
        let prefix = format!("BUTLER_{}", kind.name().to_ascii_uppercase());
        let config = AgentConfig {
            program: var(&format!("{prefix}_PROGRAM"))
                .or_else(|| file.programs.get(kind.name()).cloned())
                .map(PathBuf::from),
            provider: var(&format!("{prefix}_PROVIDER")).or_else(|| file.provider.clone()),
            model: var(&format!("{prefix}_MODEL")).or_else(|| file.model.clone()),
            // The Brain's git policy, for agents that run hooks of their own (Claude Code).
            git_hook_command: Some(crate::install::hook_command(&hook_exe)),
            ..Default::default()
        };
        agents.insert(kind, config);
    }
    ctx.agents = agents;
    ctx.env_allow = file.env_allow.clone();
    if let Some(list) = var("BUTLER_AGENT_ENV_ALLOW") {
        ctx.env_allow = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let secs = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(s) = secs("BUTLER_AGENT_STAGNATION_S").or(file.stagnation_secs) {
        ctx.stagnation = Duration::from_secs(s.max(1));
    }
    // When an agent counts as looping (0 turns a check off).
    if let Some(n) = secs("BUTLER_AGENT_LOOP_REPEATS").or(file.loop_repeats.map(u64::from)) {
        ctx.loops.repeats = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(s) = secs("BUTLER_AGENT_LOOP_QUIET_S").or(file.loop_quiet_secs) {
        ctx.loops.quiet = Duration::from_secs(s);
    }
    if let Some(s) = secs("BUTLER_TEST_TIMEOUT_S") {
        ctx.test_timeout = Duration::from_secs(s.max(1));
    }
    sandbox_settings(&mut ctx, file, var("BUTLER_SANDBOX"))?;
    ctx.worktrees_root = file.worktrees_dir.as_ref().map(PathBuf::from).or_else(|| {
        var("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .filter(|p| p.is_absolute())
            .map(|d| d.join("butler").join("worktrees"))
    });
    Ok(ctx)
}

/// Butler's program (`BUTLER_EXE`, default: this executable), which serves `worker-mcp` and
/// `sandbox-exec`.
pub fn butler_program(env: &Environment) -> Result<PathBuf, WorkError> {
    match env.get("BUTLER_EXE") {
        Some(path) => Ok(PathBuf::from(path)),
        None => std::env::current_exe()
            .map_err(|e| WorkError::Internal(format!("cannot locate Butler's program: {e}"))),
    }
}

/// The agents' sandbox mode the user chose, if any: `BUTLER_SANDBOX` (its value given as
/// `env_mode`) over `[agent] sandbox`.
pub(crate) fn sandbox_mode(
    env_mode: Option<String>,
    file: &AgentFileConfig,
) -> Result<Option<butler_worker::sandbox::SandboxMode>, WorkError> {
    let chosen = env_mode
        .map(|v| ("BUTLER_SANDBOX", v))
        .or_else(|| file.sandbox.clone().map(|v| ("[agent] sandbox", v)));
    chosen
        .map(|(setting, value)| {
            butler_worker::sandbox::SandboxMode::parse(&value).ok_or(WorkError::Config {
                problem: ConfigProblem::SandboxMode { setting, value },
            })
        })
        .transpose()
}

/// The sandbox settings: mode (`BUTLER_SANDBOX` over `[agent] sandbox`), network (unset: the
/// egress proxy where the kernel allows), the hosts the proxy admits, extra writable trees,
/// and Butler's program as the helper.
fn sandbox_settings(
    ctx: &mut MaidContext,
    file: &AgentFileConfig,
    env_mode: Option<String>,
) -> Result<(), WorkError> {
    use butler_worker::egress::HostPattern;
    use butler_worker::sandbox::NetworkChoice;
    if let Some(mode) = sandbox_mode(env_mode, file)? {
        ctx.sandbox.mode = mode;
    }
    if let Some(setting) = &file.network {
        ctx.sandbox.network =
            Some(
                NetworkChoice::from_setting(setting).map_err(|detail| WorkError::Config {
                    problem: ConfigProblem::Unreadable {
                        setting: "[agent] network",
                        detail,
                    },
                })?,
            );
    }
    ctx.sandbox.network_allow = file
        .network_allow
        .iter()
        .map(|entry| HostPattern::parse(entry))
        .collect::<Result<_, _>>()
        .map_err(|detail| WorkError::Config {
            problem: ConfigProblem::Unreadable {
                setting: "[agent] network_allow",
                detail,
            },
        })?;
    ctx.sandbox.extra_writable = file.sandbox_writable.iter().map(PathBuf::from).collect();
    if let Some(relative) = ctx.sandbox.extra_writable.iter().find(|p| !p.is_absolute()) {
        return Err(WorkError::Config {
            problem: ConfigProblem::NotAbsolute {
                setting: "[agent] sandbox_writable",
                path: relative.display().to_string(),
            },
        });
    }
    butler_worker::sandbox::deny_read::check_entries(&file.deny_read).map_err(|e| {
        WorkError::Config {
            problem: ConfigProblem::DenyRead {
                setting: "[agent] deny_read",
                entry: e.entry,
            },
        }
    })?;
    ctx.sandbox.deny_read = file.deny_read.clone();
    ctx.sandbox.helper = Some(ctx.worker_mcp.program.clone());
    Ok(())
}

/// Why a task's contract is refused, by its variant, in the current language. The reasons
/// `BadPath` and `BadFileCheck` carry are the worker's own words (English).
fn contract_reason(e: &ContractError) -> String {
    match e {
        ContractError::EmptyGoal => text(Key::ContractEmptyGoal).to_owned(),
        ContractError::TooLong { field, len, max } => fill(
            Key::ContractTooLong,
            &[("field", field), ("len", len), ("max", max)],
        ),
        ContractError::NoTargets => text(Key::ContractNoTargets).to_owned(),
        ContractError::TooMany { field, len, max } => fill(
            Key::ContractTooMany,
            &[("field", field), ("len", len), ("max", max)],
        ),
        ContractError::BadPath { path, reason } => {
            fill(Key::ContractBadPath, &[("path", path), ("reason", reason)])
        }
        ContractError::BadTimeout(n) => fill(
            Key::ContractBadTimeout,
            &[
                ("n", n),
                ("min", &TIMEOUT_BOUNDS_S.0),
                ("max", &TIMEOUT_BOUNDS_S.1),
            ],
        ),
        ContractError::EmptyTestCommand(index) => {
            fill(Key::ContractEmptyTestCommand, &[("index", index)])
        }
        ContractError::BadFileCheck {
            index,
            path,
            reason,
        } => fill(
            Key::ContractBadFileCheck,
            &[("index", index), ("path", path), ("reason", reason)],
        ),
        ContractError::UnknownAgent(name) => crate::error::unknown_agent(current(), name),
        ContractError::BadTaskId(id) => fill(Key::ContractBadTaskId, &[("id", id)]),
        ContractError::BadIntent(intent) => fill(Key::ContractBadIntent, &[("intent", intent)]),
        ContractError::NotImplementation(intent) => {
            fill(Key::ContractNotImplementation, &[("intent", intent)])
        }
    }
}

/// The one mapping from the Maid's errors to the Brain's edge (see the report for the
/// dedicated `WorkError` variants this would rather use).
pub fn maid_error(err: MaidError) -> WorkError {
    match err {
        MaidError::Contract(e) => {
            let field = match &e {
                ContractError::EmptyGoal => "goal",
                ContractError::TooLong { field, .. } | ContractError::TooMany { field, .. } => {
                    field
                }
                ContractError::NoTargets | ContractError::BadPath { .. } => "target_paths",
                ContractError::BadTimeout(_) => "timeout_s",
                ContractError::EmptyTestCommand(_) => "test_commands",
                ContractError::BadFileCheck { .. } => "file_checks",
                ContractError::UnknownAgent(_) => "agent",
                ContractError::BadTaskId(_) => "task_id",
                ContractError::BadIntent(_) | ContractError::NotImplementation(_) => "intent",
            };
            WorkError::InvalidArgument {
                field,
                reason: contract_reason(&e),
            }
        }
        MaidError::UnrecordedChanges(paths) => WorkError::TaskNeedsRecord { paths },
        MaidError::ToolConfigUnconfirmed { task, changes } => {
            WorkError::TaskToolConfig { task, changes }
        }
        // Worded by variant; the details these carry are the Maid's own words (English).
        MaidError::AgentUnavailable { agent, reason } => WorkError::AgentUnavailable {
            reason: fill(
                Key::AgentCannotLaunch,
                &[("agent", &agent), ("reason", &reason)],
            ),
        },
        MaidError::AgentNotConfigured { agent, what, env } => WorkError::AgentUnavailable {
            reason: fill(
                Key::AgentNeedsSetting,
                &[("agent", &agent), ("what", &what), ("env", &env)],
            ),
        },
        MaidError::WorkerCommand(detail) => WorkError::AgentUnavailable {
            reason: fill(Key::AgentWorkerCommand, &[("detail", &detail)]),
        },
        MaidError::SandboxUnavailable(detail) => WorkError::AgentUnavailable {
            reason: fill(Key::AgentSandboxUnavailable, &[("detail", &detail)]),
        },
        MaidError::Cluster(failure) => WorkError::TaskRunner {
            setup: matches!(
                failure,
                ClusterFailure::Forbidden { .. } | ClusterFailure::Unreachable { .. }
            ),
            reason: failure.to_string(),
        },
        e @ MaidError::NoDestination(_) => WorkError::TaskRunner {
            reason: e.to_string(),
            setup: true,
        },
        e @ MaidError::Remote(_) => WorkError::TaskRunner {
            reason: e.to_string(),
            setup: false,
        },
        MaidError::NoSuchTask(id) => WorkError::TaskNotFound { id },
        MaidError::MergeConflicted { line, files } => {
            WorkError::MergeConflicted { files, from: line }
        }
        MaidError::Git(e) => WorkError::Git(e),
        MaidError::Ledger(e) => WorkError::Ledger(e),
        e @ MaidError::Io { .. } => WorkError::Internal(e.to_string()),
    }
}

/// `run_implement`'s `data`: the implementation's Result Contract as the Brain reads it (its
/// status is the `outcome`).
#[derive(Debug, Serialize)]
struct ImplementAnswer<'a> {
    task_id: &'a TaskId,
    #[serde(flatten)]
    evidence: &'a ImplementEvidence,
    /// Notes of the agent passed on to the task's issue.
    #[serde(skip_serializing_if = "is_zero")]
    notes_relayed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The one line the Brain reads about a finished implementation (also for a delegated one),
/// with the files that configure tools or run code named when there are any.
pub(crate) fn summary_of(task_id: &TaskId, result: &ImplementEvidence) -> String {
    let mut summary = outcome_line(task_id, result);
    if !result.tool_config.is_empty() {
        let paths: Vec<&str> = result.tool_config.iter().map(|c| c.path.as_str()).collect();
        let mut names = paths.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        if paths.len() > 3 {
            names.push_str(", …");
        }
        summary.push_str(&fill(
            Key::TaskToolConfigNote,
            &[("n", &paths.len()), ("names", &names)],
        ));
    }
    summary
}

fn outcome_line(task_id: &TaskId, result: &ImplementEvidence) -> String {
    let n = result.attempts.len();
    let last = result.attempts.last().map(|a| &a.verify);
    let guards = last.map_or(String::new(), |v| {
        let mut found = Vec::new();
        if !v.weakened_tests.is_empty() {
            found.push(fill(Key::GuardWeakened, &[("n", &v.weakened_tests.len())]));
        }
        if !v.stubs.is_empty() {
            found.push(fill(Key::GuardStubs, &[("n", &v.stubs.len())]));
        }
        match found.as_slice() {
            [a, b] => fill(Key::GuardAnd, &[("a", a), ("b", b)]),
            _ => found.concat(),
        }
    });
    let (task, line) = (task_id.as_str(), result.branch.as_str());
    match result.outcome {
        Outcome::Succeeded if !guards.is_empty() => fill(
            Key::TaskPassedAllowed,
            &[
                ("task", &task),
                ("n", &n),
                ("guards", &guards),
                ("line", &line),
            ],
        ),
        Outcome::Succeeded => fill(
            Key::TaskSucceeded,
            &[("task", &task), ("n", &n), ("line", &line)],
        ),
        Outcome::Failed if last.is_some_and(Verification::guards_failed) => fill(
            Key::TaskFailedGuards,
            &[("task", &task), ("n", &n), ("guards", &guards)],
        ),
        Outcome::Failed => fill(Key::TaskFailed, &[("task", &task), ("n", &n)]),
        Outcome::Cancelled => fill(Key::TaskCancelled, &[("task", &task), ("line", &line)]),
    }
}

/// How long a stopping server waits for its tasks: each agent's group gets its grace, then the
/// task's end is stored.
pub const STOP_LIMIT: Duration = Duration::from_secs(20);

/// Stops every task this process runs — each agent's whole process group ended (TERM, grace,
/// KILL), each task stored as `cancelled` with `reason` in its evidence — and waits for them,
/// at most `limit`. Whether none is left running. Called before the server exits.
pub async fn stop_running_tasks(reason: &str, limit: Duration) -> bool {
    let stop = butler_maid::TaskStop::default();
    stop.stop_all(reason);
    let running = stop.running();
    if running > 0 {
        tracing::warn!(running, reason, "stopping the running tasks before exiting");
    }
    stop.wait(limit).await
}

/// The Maid's settings for a session's project: [`maid_context`] from its configuration, with
/// the user's `[runner]`.
pub fn project_maid_context(project: &Project) -> Result<MaidContext, WorkError> {
    let mut ctx = maid_context(
        project.repo.workdir().to_path_buf(),
        project.clock.clone(),
        &project.env,
        &project.config.agent,
    )?;
    ctx.runner = project.config.runner.clone();
    Ok(ctx)
}

/// `run_implement`: runs a delegated implementation task to its end.
pub async fn run_implement(
    project: &Arc<Project>,
    args: RunImplementArgs,
    progress: impl Fn(String, f64) + Send + Sync + 'static,
    cancel: CancellationToken,
) -> Result<Reply, WorkError> {
    let ctx = project_maid_context(project)?;
    run_implement_with(project, ctx, args, progress, cancel).await
}

/// [`run_implement`] with explicit Maid settings (tests, the terminal command).
pub async fn run_implement_with(
    project: &Arc<Project>,
    ctx: MaidContext,
    args: RunImplementArgs,
    progress: impl Fn(String, f64) + Send + Sync + 'static,
    cancel: CancellationToken,
) -> Result<Reply, WorkError> {
    let issue = args.issue_id;
    let contract = butler_maid::prepare_task(&ctx, args.into(), "brain")
        .await
        .map_err(maid_error)?;
    let max = contract.constraints.max_attempts;
    let task_id = contract.task_id.clone();
    let result = butler_maid::run_task(
        ctx,
        contract,
        &move |p| {
            let (message, fraction) = p.describe(max);
            progress(message, fraction);
        },
        cancel,
    )
    .await
    .map_err(maid_error)?;
    let evidence = result.implementation().ok_or_else(|| {
        WorkError::Internal(format!(
            "task {task_id} ended without implementation evidence"
        ))
    })?;
    let notes_relayed = match issue {
        Some(number) => relay_notes(project, &task_id, number).await,
        None => 0,
    };
    let answer = ImplementAnswer {
        task_id: &task_id,
        evidence,
        notes_relayed,
    };
    Ok(Reply::new(summary_of(&task_id, evidence), answer))
}

/// Passes the agent's notes on to the task's issue as one comment; returns how many went.
/// A tracker failure is logged, not fatal: the notes stay in the ledger, unrelayed.
async fn relay_notes(project: &Arc<Project>, task_id: &TaskId, issue: u64) -> usize {
    let id = task_id.clone();
    let notes: Vec<TaskNote> = match blocking(project, move |p| {
        p.with_ledger(|l| Ok(l.task_notes(&id, 0)?))
    })
    .await
    {
        Ok(notes) => notes
            .into_iter()
            .filter(|n| n.kind != NoteKind::Connected && !n.relayed)
            .collect(),
        Err(e) => {
            tracing::warn!(%e, "task notes could not be read");
            return 0;
        }
    };
    if notes.is_empty() {
        return 0;
    }
    let mut body = fill(Key::TaskNotesBody, &[("task", &task_id)]) + "\n";
    for n in &notes {
        body.push_str(&format!("\n- ({}) {}", n.kind.as_str(), n.body));
    }
    if let Err(e) = project.issues.comment(issue, &body).await {
        tracing::warn!(%e, "task notes could not be relayed to the issue");
        return 0;
    }
    let ids: Vec<i64> = notes.iter().map(|n| n.id).collect();
    let marked = blocking(project, move |p| {
        p.with_ledger(|l| {
            for id in ids {
                l.mark_note_relayed(id)?;
            }
            Ok(())
        })
    })
    .await;
    if let Err(e) = marked {
        tracing::warn!(%e, "relayed notes could not be marked");
    }
    notes.len()
}

/// `task_accept`: brings a finished task's records into the current line — once every file it
/// changes that configures tools or runs code is among `confirm_paths`.
pub async fn task_accept(
    project: &Arc<Project>,
    task_id: &str,
    confirm_paths: &[String],
) -> Result<Reply, WorkError> {
    let accepted = butler_maid::accept(
        project.repo.workdir(),
        task_id,
        project.clock.clone(),
        confirm_paths,
    )
    .await
    .map_err(maid_error)?;
    let summary = if accepted.merged {
        fill(
            Key::TaskAcceptedMerged,
            &[
                ("task", &accepted.task_id),
                ("n", &accepted.records.len().saturating_sub(1)),
            ],
        )
    } else {
        fill(
            Key::TaskAccepted,
            &[("task", &accepted.task_id), ("n", &accepted.records.len())],
        )
    };
    Ok(Reply::new(
        summary,
        json!({
            "task_id": accepted.task_id,
            "merged": accepted.merged,
            "records": accepted.records,
        }),
    ))
}

/// `task_discard`: drops a task (its line is kept aside, so nothing is lost).
pub async fn task_discard(project: &Arc<Project>, task_id: &str) -> Result<Reply, WorkError> {
    butler_maid::discard(project.repo.workdir(), task_id, project.clock.clone())
        .await
        .map_err(maid_error)?;
    Ok(Reply::new(
        fill(Key::TaskDiscarded, &[("task", &task_id)]),
        json!({ "task_id": task_id, "discarded": true }),
    ))
}

#[cfg(test)]
mod tests {
    use butler_worker::time::SystemClock;

    use super::*;

    /// A refused contract reads as the worker's message did in English, and in Japanese in a
    /// Japanese session.
    #[test]
    fn contract_refusals_read_in_the_sessions_language() {
        let refused = [
            ContractError::EmptyGoal,
            ContractError::TooLong {
                field: "goal",
                len: 9000,
                max: 8000,
            },
            ContractError::NoTargets,
            ContractError::TooMany {
                field: "target_paths",
                len: 300,
                max: 200,
            },
            ContractError::BadTimeout(1),
            ContractError::EmptyTestCommand(2),
            ContractError::UnknownAgent("robot".into()),
            ContractError::BadTaskId("a b".into()),
            ContractError::BadIntent("Bad".into()),
            ContractError::NotImplementation("git_push".into()),
        ];
        for e in &refused {
            assert_eq!(contract_reason(e), e.to_string());
        }
        let unavailable = || {
            [
                MaidError::AgentNotConfigured {
                    agent: "goose",
                    what: "provider",
                    env: "GOOSE_PROVIDER",
                },
                MaidError::SandboxUnavailable("no bubblewrap".into()),
            ]
        };
        for e in unavailable() {
            let english = e.to_string();
            let WorkError::AgentUnavailable { reason } = maid_error(e) else {
                panic!("{english}");
            };
            assert_eq!(reason, english);
        }
        crate::catalogue::sync_scope(crate::catalogue::Lang::Ja, || {
            for e in unavailable() {
                let WorkError::AgentUnavailable { reason } = maid_error(e) else {
                    unreachable!()
                };
                assert!(reason.contains("エージェント") || reason.contains("サンドボックス"));
            }
        });
        crate::catalogue::sync_scope(crate::catalogue::Lang::Ja, || {
            for e in &refused {
                let reason = contract_reason(e);
                assert!(
                    reason
                        .chars()
                        .any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)),
                    "{reason}"
                );
            }
        });
    }

    /// The `[agent]` settings in force with `text` as the user's own configuration.
    fn file(text: &str) -> AgentFileConfig {
        let (project, config) = (
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        );
        std::fs::create_dir_all(config.path().join("butler")).expect("mkdir");
        std::fs::write(config.path().join("butler/config.toml"), text).expect("write");
        let env = Environment::from_vars([("XDG_CONFIG_HOME", config.path())]);
        butler_worker::config::ProjectConfig::load(project.path(), &env)
            .expect("reads")
            .agent
    }

    fn context(env: &[(&str, &str)], file: &AgentFileConfig) -> Result<MaidContext, WorkError> {
        let env = Environment::from_vars(env.iter().copied());
        maid_context(
            PathBuf::from("/tmp/project"),
            SystemClock::shared(),
            &env,
            file,
        )
    }

    #[test]
    fn the_project_config_chooses_the_agent_unless_the_environment_does() {
        let file = file(
            "[agent]\ndefault = \"aider\"\nmodel = \"m1\"\nprograms = { aider = \"/opt/aider\" }\n",
        );
        let ctx = context(&[], &file).expect("context");
        assert_eq!(ctx.default_agent, AgentKind::Aider);
        let aider = ctx.agents.get(&AgentKind::Aider).expect("aider");
        assert_eq!(
            aider.program.as_deref(),
            Some(std::path::Path::new("/opt/aider"))
        );
        assert_eq!(aider.model.as_deref(), Some("m1"));
        let ctx = context(
            &[
                ("BUTLER_AGENT", "claude"),
                ("BUTLER_AIDER_PROGRAM", "/usr/local/bin/aider"),
                ("BUTLER_AIDER_MODEL", " "),
                ("BUTLER_AGENT_STAGNATION_S", "7"),
            ],
            &file,
        )
        .expect("context");
        assert_eq!(ctx.default_agent, AgentKind::Claude);
        let aider = ctx.agents.get(&AgentKind::Aider).expect("aider");
        assert_eq!(
            aider.program.as_deref(),
            Some(std::path::Path::new("/usr/local/bin/aider"))
        );
        assert_eq!(
            aider.model.as_deref(),
            Some("m1"),
            "a blank variable is unset"
        );
        assert_eq!(ctx.stagnation, Duration::from_secs(7));
        let bad = AgentFileConfig {
            default: Some("vim".into()),
            ..Default::default()
        };
        assert!(matches!(context(&[], &bad), Err(WorkError::Config { .. })));
        assert!(matches!(
            context(&[("BUTLER_AGENT", "vim")], &AgentFileConfig::default()),
            Err(WorkError::Config { .. })
        ));
    }

    #[test]
    fn deny_read_entries_reach_the_sandbox_and_relative_ones_are_refused() {
        let ctx = context(
            &[],
            &file("[agent]\ndeny_read = [\"~/.vault\", \"/srv/keys\"]\n"),
        )
        .expect("context");
        assert_eq!(ctx.sandbox.deny_read, ["~/.vault", "/srv/keys"]);
        match context(&[], &file("[agent]\ndeny_read = [\"keys\"]\n")) {
            Err(WorkError::Config { problem }) => {
                assert!(
                    problem.to_string().starts_with("[agent] deny_read: `keys`"),
                    "{problem}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn agents_with_hooks_get_the_brains_git_policy() {
        let ctx = context(&[], &AgentFileConfig::default()).expect("context");
        let claude = ctx
            .agents
            .get(&AgentKind::Claude)
            .expect("claude configured");
        let hook = claude.git_hook_command.as_deref().expect("hook command");
        assert!(hook.ends_with("\" git-hook"), "{hook}");
    }
}
