//! `butler task list|show|log|shell` and `butler implement …`: the ImplementMaid's tasks and the
//! delegated operations from a terminal. `implement` shows its progress on stderr; it and `task show` end with a short
//! summary for a person on stdout (`butler_maid::summary`; an operation: its steps), or the JSON (the Result Contract,
//! the task's evidence) with `--json`, as `gh` and `cargo` do. `task log` prints a task's steps
//! and its agent's events from the task's log (`--follow`: until the task ends); `task shell`
//! opens `$SHELL` in a task's worktree.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use butler_maid::activity::{TaskLog, log::task_dir};
use butler_orchestrator::implement::{CancellationToken, maid_context};
use butler_worker::config::{Environment, ProjectConfig, TrustState};
use butler_worker::contract::{
    ImplementRequest, OperationEvidence, ResultStatus, TaskContract, TaskId, TaskStatus,
};
use butler_worker::git::GitRepo;
use butler_worker::ledger::{AttemptRow, Ledger, TaskEnd, TaskNote, TaskRow};
use butler_worker::process::{ChildEnv, ChildSpec, run_attended};
use butler_worker::time::{SharedClock, Timestamp};
use clap::{Args, Subcommand};
use serde::Serialize;

/// `butler task …`
#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    /// List the delegated implementation tasks, newest first, with where each one's worktree
    /// is (until it is accepted or discarded).
    List {
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        /// How many tasks.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Show one task: its contract, every attempt's evidence, the agent's notes and the result
    /// (a delegated operation: every step's outcome, output tail and duration; while it runs,
    /// its evidence so far).
    Show {
        /// The task id (e.g. `t3`).
        id: String,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        /// Print the task and its evidence as JSON instead of a summary.
        #[arg(long)]
        json: bool,
    },
    /// Print a task's steps and what its agent did, from the task's log.
    Log {
        /// The task id (e.g. `t3`).
        id: String,
        /// Keep printing while the task runs; end when it ends.
        #[arg(long, short = 'f')]
        follow: bool,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// Open `$SHELL` in a task's worktree to look at its work or take over (refused while the
    /// task runs: what you change would be taken for the agent's).
    Shell {
        /// The task id (e.g. `t3`).
        id: String,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// Run the task a Kubernetes Job's pod was given, in the current directory: everything
    /// comes from the environment (`BUTLER_TASK_CONTRACT`, `BUTLER_TASK_DESTINATION`,
    /// `BUTLER_TASK_BASE`, `BUTLER_TASK_BASE_REF`, `BUTLER_TASK_PUSH_REF`,
    /// `BUTLER_PUSH_CREDENTIALS`). Prints one JSON line per step, then the result or the error
    /// (also written to `$BUTLER_TERMINATION_LOG`, default `/dev/termination-log`).
    Run,
}

/// `butler implement …`
#[derive(Debug, Args)]
pub struct ImplementCommand {
    /// What the implementation should achieve.
    #[arg(long)]
    pub goal: String,
    /// Details for the agent.
    #[arg(long, default_value = "")]
    pub spec: String,
    /// A path, directory (ending in `/`) or glob the agent may change (repeatable).
    #[arg(long = "target", required = true)]
    pub targets: Vec<String>,
    /// A command that must exit 0 (repeatable).
    #[arg(long = "test")]
    pub tests: Vec<String>,
    /// goose, claude, codex or aider.
    #[arg(long)]
    pub agent: Option<String>,
    /// Time limit per attempt, in seconds.
    #[arg(long)]
    pub timeout: Option<u64>,
    /// The issue the task works on.
    #[arg(long)]
    pub issue: Option<u64>,
    /// The task may change or remove tests: weakened tests and stubs are reported, not failures.
    #[arg(long)]
    pub allow_test_changes: bool,
    /// The project (default: the current directory).
    #[arg(long)]
    pub project: Option<PathBuf>,
    /// Print the Result Contract as JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// The project a terminal command works on: `project`, else the current directory (resolved).
pub(crate) fn project_dir(project: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match project {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    dir.canonicalize()
        .with_context(|| format!("{} does not exist", dir.display()))
}

fn open_ledger(project: &Path, clock: SharedClock) -> anyhow::Result<Ledger> {
    let repo = GitRepo::discover(project).context("opening the project")?;
    open_ledger_in(&repo, clock)
}

fn open_ledger_in(repo: &GitRepo, clock: SharedClock) -> anyhow::Result<Ledger> {
    let ledger = Ledger::open(repo.common_dir())
        .context("opening the ledger")?
        .with_clock(clock);
    // A task whose process died while it ran shows as `interrupted`, not `running`.
    butler_maid::mark_interrupted(&ledger).context("reading the task journal")?;
    Ok(ledger)
}

fn out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// What `butler task show` prints: the task, its contract, every attempt's evidence, the
/// agent's notes, a running operation's evidence so far, and its end (`result` or `error`).
#[derive(Debug, Serialize)]
struct TaskShown {
    task_id: TaskId,
    status: TaskStatus,
    branch: Option<String>,
    created_at: Timestamp,
    updated_at: Timestamp,
    contract: TaskContract,
    attempts: Vec<AttemptRow>,
    notes: Vec<TaskNote>,
    /// A delegated operation's steps so far, while it runs (or after it was interrupted).
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<OperationEvidence>,
    #[serde(flatten)]
    end: Option<TaskEnd>,
}

/// What a task is about, in one line of at most 60 characters.
fn headline(contract: &TaskContract) -> String {
    let text = match contract.implement() {
        Some(target) => target.subject(),
        None => contract.intent().to_owned(),
    };
    text.chars().take(40).collect()
}

/// Runs `butler task list|show`.
pub fn run_task_command(command: TaskCommand, clock: SharedClock) -> anyhow::Result<()> {
    match command {
        TaskCommand::List { project, limit } => {
            let ledger = open_ledger(&project_dir(project)?, clock)?;
            let tasks = ledger.tasks(limit)?;
            if tasks.is_empty() {
                return out("No tasks.\n");
            }
            let mut text = format!(
                "{:<6} {:<10} {:<26} {:<40} WORKTREE\n",
                "TASK", "STATUS", "CREATED", "GOAL"
            );
            for t in tasks {
                let retired = matches!(t.status, TaskStatus::Accepted | TaskStatus::Discarded);
                let worktree = match &t.worktree {
                    Some(path) if !retired => path.as_str(),
                    _ => "-",
                };
                text.push_str(&format!(
                    "{:<6} {:<10} {:<26} {:<40} {worktree}\n",
                    t.task_id.as_str(),
                    t.status.as_str(),
                    t.created_at.to_string(),
                    headline(&t.contract)
                ));
            }
            out(&text)
        }
        TaskCommand::Show { id, project, json } => {
            let ledger = open_ledger(&project_dir(project)?, clock)?;
            let task = find_task(&ledger, &id)?;
            let task_id = task.task_id.clone();
            let progress = match task.end {
                None => ledger.task_progress(&task_id)?,
                Some(_) => None,
            };
            if !json {
                let text = match task.contract.implement() {
                    Some(_) => summary_of(&ledger, &task)?,
                    None => operation_summary(&task, progress.as_ref()),
                };
                return out(&text);
            }
            let shown = TaskShown {
                attempts: ledger.task_attempts(&task_id)?,
                notes: ledger.task_notes(&task_id, 0)?,
                progress,
                task_id: task.task_id,
                status: task.status,
                branch: task.branch,
                created_at: task.created_at,
                updated_at: task.updated_at,
                contract: task.contract,
                end: task.end,
            };
            out(&(serde_json::to_string_pretty(&shown)? + "\n"))
        }
        TaskCommand::Log {
            id,
            follow,
            project,
        } => log(&project_dir(project)?, &id, follow, clock),
        TaskCommand::Shell { id, project } => shell(&project_dir(project)?, &id, clock),
        // It needs the async runtime and Butler's environment: `main` runs it.
        TaskCommand::Run => anyhow::bail!("`butler task run` is run by `run_pod_task`"),
    }
}

/// Task `id` of the ledger, or an error naming it.
fn find_task(ledger: &Ledger, id: &str) -> anyhow::Result<TaskRow> {
    let missing = || format!("no task `{id}`");
    let task_id = TaskId::new(id).ok().with_context(missing)?;
    ledger.task(&task_id)?.with_context(missing)
}

/// A delegated operation for a person: its intent, status and each step's outcome (the
/// evidence so far while it runs); the output tails are in `--json`.
fn operation_summary(task: &TaskRow, progress: Option<&OperationEvidence>) -> String {
    let evidence = match &task.end {
        Some(TaskEnd::Result(result)) => result.operation_evidence(),
        _ => progress,
    };
    let mut text = format!(
        "task {} — {} ({})\n",
        task.task_id,
        task.contract.intent(),
        task.status.as_str()
    );
    if let Some(TaskEnd::Error(e)) = &task.end {
        text.push_str(&format!("error: {e}\n"));
    }
    let Some(evidence) = evidence else {
        return text;
    };
    for step in &evidence.steps {
        text.push_str(&format!(
            "  {}. {} — {:?} ({} ms){}\n",
            step.step,
            step.what,
            step.outcome,
            step.duration_ms,
            step.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ));
    }
    if let Some(stopped) = &evidence.stopped {
        text.push_str(&format!("stopped: {:?}\n", stopped.reason));
    }
    if let Some(approval) = &evidence.approval {
        text.push_str(&format!(
            "waiting for approval {}: {}\n",
            approval.reference, approval.operation
        ));
    }
    text.push_str("(the whole evidence: --json)\n");
    text
}

/// The summary of `task` for a person.
fn summary_of(ledger: &Ledger, task: &TaskRow) -> anyhow::Result<String> {
    let attempts: Vec<_> = ledger
        .task_attempts(&task.task_id)?
        .into_iter()
        .filter_map(|a| a.evidence)
        .collect();
    let branch = task.branch.clone().unwrap_or_else(|| task.task_id.branch());
    let retired = matches!(task.status, TaskStatus::Accepted | TaskStatus::Discarded);
    let subject = match task.contract.implement() {
        Some(target) => target.subject(),
        None => task.contract.intent().to_owned(),
    };
    let error = match &task.end {
        Some(TaskEnd::Error(e)) => Some(e.as_str()),
        _ => None,
    };
    let tool_config = match &task.end {
        Some(TaskEnd::Result(r)) => r
            .implementation()
            .map(|e| e.tool_config.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(butler_maid::summary::summary(
        &butler_maid::summary::TaskView {
            task_id: &task.task_id,
            subject: &subject,
            status: task.status,
            branch: &branch,
            worktree: task.worktree.as_deref().filter(|_| !retired),
            attempts: &attempts,
            tool_config: &tool_config,
            error,
        },
    ))
}

/// How often `task log --follow` looks for new entries.
const FOLLOW_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// `butler task log ID [--follow]`.
fn log(project: &Path, id: &str, follow: bool, clock: SharedClock) -> anyhow::Result<()> {
    let repo = GitRepo::discover(project).context("opening the project")?;
    let ledger = open_ledger_in(&repo, clock)?;
    let task = find_task(&ledger, id)?;
    let log = TaskLog::in_dir(&task_dir(repo.common_dir(), task.task_id.as_str()));
    let mut offset = 0;
    let mut status = task.status;
    loop {
        let (entries, next) = log
            .read_from(offset)
            .with_context(|| format!("reading {}", log.path().display()))?;
        offset = next;
        let mut text = String::new();
        let mut ended = false;
        for entry in entries {
            text.push_str(&entry.to_string());
            text.push('\n');
            ended |= entry.is_end();
        }
        out(&text)?;
        if !follow || ended || status != TaskStatus::Running {
            if offset == 0 && !follow {
                eprintln!("task {} has no log yet", task.task_id);
            } else if follow && !ended {
                eprintln!("task {} is {}", task.task_id, status.as_str());
            }
            return Ok(());
        }
        std::thread::sleep(FOLLOW_EVERY);
        // A task whose process died is marked interrupted, which ends the follow.
        butler_maid::mark_interrupted(&ledger).context("reading the task journal")?;
        status = find_task(&ledger, id)?.status;
    }
}

/// `butler task shell ID`: `$SHELL` (else `/bin/sh`) in the task's worktree, Butler's secrets
/// left out of its environment.
fn shell(project: &Path, id: &str, clock: SharedClock) -> anyhow::Result<()> {
    let ledger = open_ledger(project, clock)?;
    let task = find_task(&ledger, id)?;
    let task_id = &task.task_id;
    if task.status == TaskStatus::Running {
        anyhow::bail!(
            "task {task_id} is running: what you change now would be taken for its agent's work. \
             Follow it with `butler task log {task_id} --follow`, or wait until it ends"
        );
    }
    let worktree = match (&task.worktree, task.status) {
        (_, TaskStatus::Accepted | TaskStatus::Discarded) | (None, _) => None,
        (Some(dir), _) => Some(PathBuf::from(dir)),
    }
    .filter(|dir| dir.is_dir())
    .with_context(|| format!("task {task_id} has no worktree any more"))?;
    let program = std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".into());
    eprintln!(
        "task {task_id}: a shell in its worktree {} (line {}). What you leave changed here \
         is part of the task's work: accepting the task takes it as the agent's. Leave with \
         `exit`.",
        worktree.display(),
        task.branch.clone().unwrap_or_else(|| task_id.branch())
    );
    let mut env = ChildEnv::new();
    env.inherit(butler_worker::process::env::inherited(), &["*"])
        .set("BUTLER_TASK", task_id.as_str());
    let spec = ChildSpec::new(program, worktree, env);
    let status = run_attended(&spec)
        .with_context(|| format!("starting {}", spec.program.to_string_lossy()))?;
    if !status.success() {
        eprintln!("the shell ended with {status}");
    }
    Ok(())
}

/// Runs `butler implement …`: a live progress display on stderr, then the task's summary on
/// stdout (the Result Contract as JSON with `--json`). Returns the process exit code (0 succeeded, 1 failed, 130 cancelled).
pub async fn run_implement_command(
    cmd: ImplementCommand,
    clock: SharedClock,
    env: &Environment,
) -> anyhow::Result<i32> {
    let (project, json) = (project_dir(cmd.project)?, cmd.json);
    let config = ProjectConfig::load(&project, env)?;
    if config.trust.state == TrustState::Untrusted && !config.trust.ignored.is_empty() {
        eprintln!(
            "{} is not trusted: ignoring {} (review it and run `butler trust` to use them)",
            config.trust.file.display(),
            config.trust.ignored.join(", ")
        );
    }
    let mut ctx = maid_context(project.clone(), clock.clone(), env, &config.agent)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    ctx.runner = config.runner.clone();
    let request = ImplementRequest {
        goal: cmd.goal,
        spec: cmd.spec,
        target_paths: cmd.targets,
        test_commands: cmd.tests,
        file_checks: Vec::new(),
        agent: cmd.agent,
        timeout_s: cmd.timeout,
        issue_id: cmd.issue,
        allow_test_changes: cmd.allow_test_changes,
    };
    let contract = butler_maid::prepare_task(&ctx, request, "terminal")
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let max = contract.constraints.max_attempts;
    eprintln!(
        "task {} on line {}",
        contract.task_id,
        contract.task_id.branch()
    );
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("cancelling…");
            on_signal.cancel();
        }
    });
    let started = std::time::Instant::now();
    let result = butler_maid::run_task(
        ctx,
        contract,
        &move |p| {
            let (message, fraction) = p.describe(max);
            eprintln!(
                "[{:>5.1}s {:>3.0}%] {message}",
                started.elapsed().as_secs_f64(),
                fraction * 100.0
            );
        },
        cancel,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        out(&(serde_json::to_string_pretty(&result)? + "\n"))?;
    } else {
        let ledger = open_ledger(&project, clock)?;
        let task = find_task(&ledger, result.task_id.as_str())?;
        out(&summary_of(&ledger, &task)?)?;
    }
    Ok(match result.status {
        ResultStatus::Ok => 0,
        ResultStatus::Cancelled => 130,
        ResultStatus::Failed | ResultStatus::NeedInput | ResultStatus::NeedApproval => 1,
    })
}

/// Runs `butler task run` (inside a task's pod): the base checked out in a fresh repository in
/// the current directory, the task run as `butler implement` runs one, its line pushed, each
/// step and the end printed as the pod's log lines (`butler_maid::runner::wire`). Returns the
/// exit code: 0 when a Result was handed back, 1 on an Error. SIGTERM or Ctrl-C cancels the
/// task.
pub async fn run_pod_task(clock: SharedClock, env: &Environment) -> i32 {
    use butler_maid::runner::pod::{self, PodError};
    use butler_maid::runner::wire::PodMessage;
    let var = |name: &str| env.get(name).map(str::to_owned);
    let work_dir = std::env::current_dir().map_err(|source| PodError::WorkDir {
        action: "reading the work dir",
        path: PathBuf::from("."),
        source,
    });
    let output = match &work_dir {
        Ok(dir) => pod::PodOutput::from_env(var, dir),
        Err(_) => pod::PodOutput::default(),
    };
    let emit = |message: &PodMessage| log_line(&output.line(message));
    let end = async {
        let work_dir = work_dir?;
        let task = pod::PodTask::from_env(var, &work_dir)?;
        eprintln!(
            "task {} from {} at {}",
            task.contract.task_id,
            task.shown_destination(),
            task.base
        );
        let project = pod::checkout_base(&task, &work_dir, Vec::new()).await?;
        let config = ProjectConfig::load(&project, env).map_err(|e| PodError::Prepare {
            what: "reading Butler's configuration",
            reason: e.to_string(),
        })?;
        if config.trust.state == TrustState::Untrusted && !config.trust.ignored.is_empty() {
            eprintln!(
                "{} is not trusted: ignoring {}",
                config.trust.file.display(),
                config.trust.ignored.join(", ")
            );
        }
        let ctx =
            maid_context(project, clock, env, &config.agent).map_err(|e| PodError::Prepare {
                what: "reading the task's settings",
                reason: e.to_string(),
            })?;
        let cancel = CancellationToken::new();
        tokio::spawn(cancel_on_signal(cancel.clone()));
        pod::run_in_pod(ctx, &task, |p| emit(&PodMessage::Progress(p)), cancel).await
    }
    .await;
    let end = pod::hand_back(end, &output, &pod::termination_log(var));
    log_line(&end.line);
    end.code
}

/// One line of the pod's log on stdout, flushed at once (the reader follows the log live).
fn log_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    // Nothing is left to tell when stdout is gone.
    let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
}

/// Cancels `cancel` on SIGTERM (the Job is deleted) or Ctrl-C.
async fn cancel_on_signal(cancel: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("cancelling…");
    cancel.cancel();
}
