//! `butler task list`, `butler task show ID` and `butler implement …`: the ImplementMaid's
//! tasks from a terminal. Tables and the live progress display go to stderr or stdout as
//! noted; `implement` prints the Result Contract as JSON on stdout.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use butler_orchestrator::implement::{CancellationToken, maid_context};
use butler_worker::config::{Environment, ProjectConfig};
use butler_worker::contract::{ImplementRequest, ResultStatus, TaskContract, TaskId, TaskStatus};
use butler_worker::git::GitRepo;
use butler_worker::ledger::{AttemptRow, Ledger, TaskEnd, TaskNote};
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
    /// Show one task: its contract, every attempt's evidence, the agent's notes and the result.
    Show {
        /// The task id (e.g. `t3`).
        id: String,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
    },
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
}

fn project_dir(project: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match project {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    dir.canonicalize()
        .with_context(|| format!("{} does not exist", dir.display()))
}

fn open_ledger(project: &Path, clock: SharedClock) -> anyhow::Result<Ledger> {
    let repo = GitRepo::discover(project).context("opening the project")?;
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
/// agent's notes, and its end (`result` or `error`).
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
        TaskCommand::Show { id, project } => {
            let ledger = open_ledger(&project_dir(project)?, clock)?;
            let missing = || format!("no task `{id}`");
            let task_id = TaskId::new(id.as_str()).ok().with_context(missing)?;
            let task = ledger.task(&task_id)?.with_context(missing)?;
            let shown = TaskShown {
                attempts: ledger.task_attempts(&task_id)?,
                notes: ledger.task_notes(&task_id, 0)?,
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
    }
}

/// Runs `butler implement …`: a live progress display on stderr, the Result Contract on
/// stdout. Returns the process exit code (0 succeeded, 1 failed, 130 cancelled).
pub async fn run_implement_command(
    cmd: ImplementCommand,
    clock: SharedClock,
    env: &Environment,
) -> anyhow::Result<i32> {
    let project = project_dir(cmd.project)?;
    let config = ProjectConfig::load(&project, env)?;
    let ctx =
        maid_context(project, clock, env, &config.agent).map_err(|e| anyhow::anyhow!("{e}"))?;
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
        move |p| {
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
    out(&(serde_json::to_string_pretty(&result)? + "\n"))?;
    Ok(match result.status {
        ResultStatus::Ok => 0,
        ResultStatus::Cancelled => 130,
        ResultStatus::Failed | ResultStatus::NeedInput | ResultStatus::NeedApproval => 1,
    })
}
