//! `butler task list`, `butler task show ID` and `butler implement …`: the ImplementMaid's
//! tasks from a terminal. Tables and the live progress display go to stderr or stdout as
//! noted; `implement` prints the Result Contract as JSON on stdout.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use butler_maid::contract::ImplementRequest;
use butler_maid::{AgentKind, Outcome};
use butler_orchestrator::implement::{CancellationToken, maid_context};
use butler_worker::git::GitRepo;
use butler_worker::ledger::Ledger;
use clap::{Args, Subcommand};

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
    /// goose, claude, codex, aider, or fake (the scripted test agent next to this program,
    /// driven by `FAKE_AGENT_SCRIPT`).
    #[arg(long)]
    pub agent: Option<String>,
    /// Time limit per attempt, in seconds.
    #[arg(long)]
    pub timeout: Option<u64>,
    /// The issue the task works on.
    #[arg(long)]
    pub issue: Option<u64>,
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

fn open_ledger(project: &Path) -> anyhow::Result<Ledger> {
    let repo = GitRepo::discover(project).context("opening the project")?;
    let ledger = Ledger::open(repo.common_dir()).context("opening the ledger")?;
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

/// Runs `butler task list|show`.
pub fn run_task_command(command: TaskCommand) -> anyhow::Result<()> {
    match command {
        TaskCommand::List { project, limit } => {
            let ledger = open_ledger(&project_dir(project)?)?;
            let tasks = ledger.tasks(limit)?;
            if tasks.is_empty() {
                return out("No tasks.\n");
            }
            let mut text = format!(
                "{:<6} {:<10} {:<26} {:<40} WORKTREE\n",
                "TASK", "STATUS", "CREATED", "GOAL"
            );
            for t in tasks {
                let goal = serde_json::from_str::<serde_json::Value>(&t.contract_json)
                    .ok()
                    .and_then(|c| c["target"]["goal"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                let goal: String = goal.lines().next().unwrap_or("").chars().take(40).collect();
                let retired = matches!(t.status.as_str(), "accepted" | "discarded");
                let worktree = match &t.worktree {
                    Some(path) if !retired => path.as_str(),
                    _ => "-",
                };
                text.push_str(&format!(
                    "{:<6} {:<10} {:<26} {goal:<40} {worktree}\n",
                    t.task_id, t.status, t.created_at
                ));
            }
            out(&text)
        }
        TaskCommand::Show { id, project } => {
            let ledger = open_ledger(&project_dir(project)?)?;
            let task = ledger
                .task(&id)?
                .with_context(|| format!("no task `{id}`"))?;
            let parse = |s: &str| {
                serde_json::from_str::<serde_json::Value>(s)
                    .unwrap_or_else(|_| serde_json::Value::String(s.to_owned()))
            };
            let attempts: Vec<serde_json::Value> = ledger
                .task_attempts(&id)?
                .into_iter()
                .map(|a| {
                    serde_json::json!({
                        "attempt": a.attempt,
                        "started_at": a.started_at,
                        "ended_at": a.ended_at,
                        "evidence": a.evidence_json.as_deref().map(parse),
                    })
                })
                .collect();
            let notes = ledger.task_notes(&id, 0)?;
            let shown = serde_json::json!({
                "task_id": task.task_id,
                "status": task.status,
                "branch": task.branch,
                "created_at": task.created_at,
                "updated_at": task.updated_at,
                "contract": parse(&task.contract_json),
                "attempts": attempts,
                "notes": notes,
                "result": task.result_json.as_deref().map(parse),
            });
            out(&(serde_json::to_string_pretty(&shown)? + "\n"))
        }
    }
}

/// Runs `butler implement …`: a live progress display on stderr, the Result Contract on
/// stdout. Returns the process exit code (0 succeeded, 1 failed, 130 cancelled).
pub async fn run_implement_command(cmd: ImplementCommand) -> anyhow::Result<i32> {
    let project = project_dir(cmd.project)?;
    let mut ctx = maid_context(project).map_err(|e| anyhow::anyhow!("{e}"))?;
    let agent = match cmd.agent.as_deref() {
        Some("fake") => {
            let fake = std::env::current_exe()?
                .parent()
                .context("locating the fake agent")?
                .join("fake-agent");
            let goose = ctx.agents.entry(AgentKind::Goose).or_default();
            goose.program = Some(fake);
            goose.provider.get_or_insert_with(|| "fake".to_owned());
            goose.model.get_or_insert_with(|| "fake".to_owned());
            if !ctx.env_allow.iter().any(|v| v == "FAKE_AGENT_SCRIPT") {
                ctx.env_allow.push("FAKE_AGENT_SCRIPT".to_owned());
            }
            Some("goose".to_owned())
        }
        other => other.map(str::to_owned),
    };
    let request = ImplementRequest {
        goal: cmd.goal,
        spec: cmd.spec,
        target_paths: cmd.targets,
        test_commands: cmd.tests,
        file_checks: Vec::new(),
        agent,
        timeout_s: cmd.timeout,
        issue_id: cmd.issue,
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
    Ok(match result.outcome {
        Outcome::Succeeded => 0,
        Outcome::Failed => 1,
        Outcome::Cancelled => 130,
    })
}
