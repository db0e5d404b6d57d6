//! The task sequence of seed 004, [0]–[8]: precheck, task branch in its own worktree, baseline,
//! prompt, launch under supervision, detection and restoration of direct git use, the Maid's own
//! commit, verification, and retries with a compact prompt — then the Result Contract.
//!
//! Evidence is written as JSON files in the task's directory
//! (`<git common dir>/butler/tasks/<id>/`) until the ledger offers task and attempt storage.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::agent::{AgentConfig, Launch, WorkerMcpCommand, adapter};
use crate::contract::{
    AgentKind, AttemptEvidence, DirectGit, DirectGitFinding, Outcome, ResultContract, TaskContract,
    Verification,
};
use crate::env::{EnvPolicy, EnvVars, GitIdentity, HomeChoice, agent_env, prepare_isolated_home};
use crate::error::MaidError;
use crate::prompt::{WorkerTools, first_prompt, retry_prompt};
use crate::scope::scope_violations;
use crate::supervise::{ChildSpec, Ending, Limits, Stagnation, supervise};
use crate::taskgit::{Baseline, Git};
use crate::verify::{TestSettings, check_files, run_tests, stubs, weakened_tests};

/// Files an agent reads as configuration; one planted in the tree steers the next run.
const AGENT_CONFIG_FILES: &[&str] = &[
    ".goosehints",
    "AGENTS.md",
    "CLAUDE.md",
    ".aider.conf.yml",
    ".aider.env",
    ".env",
];
const AGENT_CONFIG_DIRS: &[&str] = &[".claude/", ".codex/", ".goose/", ".aider/"];

/// What the Maid needs from Butler's configuration.
#[derive(Debug, Clone)]
pub struct MaidContext {
    /// The Brain's project (its working tree).
    pub project_root: PathBuf,
    pub default_agent: AgentKind,
    pub agents: HashMap<AgentKind, AgentConfig>,
    pub worker_mcp: WorkerMcpCommand,
    /// Extra variables passed to agents (see [`EnvPolicy::allow`]).
    pub env_allow: Vec<String>,
    /// Give agents the real `HOME` instead of an isolated one.
    pub real_home: bool,
    /// Butler's environment, from which the agent's is built.
    pub parent_env: EnvVars,
    /// No output and no file change for this long stops an attempt.
    pub stagnation: Duration,
    pub test_timeout: Duration,
    pub grace: Duration,
}

impl MaidContext {
    pub fn new(project_root: impl Into<PathBuf>, worker_mcp: WorkerMcpCommand) -> Self {
        Self {
            project_root: project_root.into(),
            default_agent: AgentKind::Goose,
            agents: HashMap::new(),
            worker_mcp,
            env_allow: Vec::new(),
            real_home: false,
            parent_env: crate::env::parent_env(),
            stagnation: Duration::from_secs(300),
            test_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
        }
    }
}

/// Progress of a running task, for MCP progress notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    AttemptStarted { attempt: u32 },
    AgentRunning { attempt: u32 },
    Verifying { attempt: u32 },
    Retrying { attempt: u32 },
    Finished { outcome: Outcome },
}

struct Paths {
    worktree: PathBuf,
    task_dir: PathBuf,
}

async fn task_paths(main: &Git, task: &str) -> Result<Paths, MaidError> {
    let common = main.common_dir().await?;
    Ok(Paths {
        worktree: common
            .join("butler")
            .join("worktrees")
            .join(format!("task-{task}")),
        task_dir: common.join("butler").join("tasks").join(task),
    })
}

/// Runs one task to its end and returns the Result Contract.
pub async fn run_task(
    ctx: MaidContext,
    contract: TaskContract,
    progress: impl Fn(Progress) + Send + Sync,
    cancel: CancellationToken,
) -> Result<ResultContract, MaidError> {
    let main = Git::new(&ctx.project_root);
    // [0] Unrecorded changes in the Brain's tree: stop before anything starts.
    let dirty = main.changed_paths().await?;
    if !dirty.is_empty() {
        return Err(MaidError::UnrecordedChanges(dirty));
    }
    // [1] Task branch from the current record, in a worktree inside the git directory.
    let id = contract.task_id.as_str();
    let branch = contract.task_id.branch();
    let branch_ref = format!("refs/heads/{branch}");
    let paths = task_paths(&main, id).await?;
    let base = main.rev("HEAD").await?;
    std::fs::create_dir_all(&paths.task_dir)
        .map_err(|e| MaidError::io("creating", &paths.task_dir, e))?;
    let wt_arg = paths.worktree.to_string_lossy().into_owned();
    main.run(["worktree", "add", "-q", "-b", &branch, &wt_arg, &base])
        .await?;
    write_json(&paths.task_dir.join("contract.json"), &contract)?;
    let wt = Git::new(&paths.worktree);

    let kind = contract.constraints.agent.unwrap_or(ctx.default_agent);
    let agent = adapter(kind, ctx.agents.get(&kind).cloned().unwrap_or_default());
    let home = paths.task_dir.join("home");
    let policy = EnvPolicy {
        home: if ctx.real_home {
            HomeChoice::Real
        } else {
            HomeChoice::Isolated(home.clone())
        },
        allow: ctx.env_allow.clone(),
        git_identity: GitIdentity::default(),
    };
    if !ctx.real_home {
        prepare_isolated_home(&home, &policy.git_identity)?;
    }
    let env = agent_env(&ctx.parent_env, &policy, &agent.env_needs());
    let tools = WorkerTools::default();
    let mut attempts: Vec<AttemptEvidence> = Vec::new();
    let mut outcome = Outcome::Failed;

    for attempt in 1..=contract.constraints.max_attempts {
        progress(Progress::AttemptStarted { attempt });
        // [2] Baseline.
        let baseline = Baseline::record(&wt, &branch_ref).await?;
        // [3] Prompt.
        let prompt = match attempts.last() {
            None => first_prompt(&contract, &tools),
            Some(last) => retry_prompt(&contract, &tools, attempt, last),
        };
        // [4] Launch and watch.
        let launch = Launch {
            prompt: &prompt,
            workdir: &paths.worktree,
            task_dir: &paths.task_dir,
            worker_mcp: &ctx.worker_mcp,
            targets: &contract.target.target_paths,
            env: &env,
        };
        let command = agent.command(&launch)?;
        command.write_files()?;
        let mut limits = Limits::new(Duration::from_secs(contract.constraints.timeout_s));
        limits.grace = ctx.grace;
        limits.stagnation = Some(Stagnation {
            after: ctx.stagnation,
            watch: Some(paths.worktree.clone()),
        });
        progress(Progress::AgentRunning { attempt });
        let started = Instant::now();
        let run = supervise(
            ChildSpec {
                program: command.program.into_os_string(),
                args: command.args,
                cwd: paths.worktree.clone(),
                env: env.clone(),
                stdin: command.stdin,
            },
            &limits,
            &cancel,
        )
        .await;
        std::fs::write(
            paths.task_dir.join(format!("attempt-{attempt}.log")),
            run.stdout.text() + &run.stderr.text(),
        )
        .map_err(|e| MaidError::io("writing", &paths.task_dir, e))?;
        // [5] Direct git use and tampering, restored before the Maid's own git.
        let mut findings = baseline.detect_and_restore(&wt, id).await?;
        findings.extend(remove_planted_config(&wt, &baseline.head).await?);
        let changed = wt.changed_paths().await?;
        // [7a] Scope: out-of-scope changes are saved aside, then undone.
        let scope_violation = scope_violations(&changed, &contract.target.target_paths);
        set_aside(
            &wt,
            &scope_violation,
            &paths
                .task_dir
                .join(format!("attempt-{attempt}-out-of-scope.patch")),
        )
        .await?;
        // [6] The Maid records the in-scope work.
        let in_scope: Vec<String> = changed
            .iter()
            .filter(|p| !scope_violation.contains(p))
            .cloned()
            .collect();
        let record = if in_scope.is_empty() || matches!(run.ending, Ending::Cancelled) {
            None
        } else {
            Some(commit(&wt, &contract, attempt, &in_scope).await?)
        };
        if matches!(run.ending, Ending::Cancelled) {
            attempts.push(evidence(
                attempt,
                run.ending,
                started,
                changed,
                findings,
                Verification {
                    scope_violation,
                    ..Default::default()
                },
                record,
            ));
            outcome = Outcome::Cancelled;
            break;
        }
        // [7b] Tests, file checks, guards.
        progress(Progress::Verifying { attempt });
        let patch = wt.run(["diff", &baseline.head, "HEAD"]).await?;
        let settings = TestSettings {
            grace: ctx.grace,
            ..TestSettings::new(ctx.test_timeout, crate::env::verify_env(&ctx.parent_env))
        };
        let tests = run_tests(
            &paths.worktree,
            &contract.success_criteria.test_commands,
            &settings,
            &cancel,
        )
        .await;
        let verify = Verification {
            scope_violation,
            tests,
            file_checks: check_files(&paths.worktree, &contract.success_criteria.file_checks),
            weakened_tests: weakened_tests(&patch),
            stubs: stubs(&patch),
        };
        let has_work = wt.rev("HEAD").await? != base;
        let passed = verify.passed() && has_work && !cancel.is_cancelled();
        let item = evidence(
            attempt, run.ending, started, changed, findings, verify, record,
        );
        write_json(
            &paths.task_dir.join(format!("attempt-{attempt}.json")),
            &item,
        )?;
        attempts.push(item);
        if cancel.is_cancelled() {
            outcome = Outcome::Cancelled;
            break;
        }
        // [8] Success, or back to [3].
        if passed {
            outcome = Outcome::Succeeded;
            break;
        }
        if attempt < contract.constraints.max_attempts {
            progress(Progress::Retrying {
                attempt: attempt + 1,
            });
        }
    }
    let result = ResultContract {
        task_id: contract.task_id.clone(),
        branch,
        outcome,
        attempts,
    };
    write_json(&paths.task_dir.join("result.json"), &result)?;
    progress(Progress::Finished { outcome });
    Ok(result)
}

fn evidence(
    attempt: u32,
    agent_exit: Ending,
    started: Instant,
    changed_files: Vec<String>,
    findings: Vec<DirectGitFinding>,
    verify: Verification,
    record: Option<String>,
) -> AttemptEvidence {
    AttemptEvidence {
        attempt,
        agent_exit,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        changed_files,
        direct_git: DirectGit::from_findings(findings),
        verify,
        record,
    }
}

fn is_agent_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    AGENT_CONFIG_FILES.contains(&name)
        || AGENT_CONFIG_DIRS
            .iter()
            .any(|d| path.starts_with(d) || path.contains(&format!("/{d}")))
}

/// Agent configuration planted in the tree is put back as it was at `head` and reported.
async fn remove_planted_config(wt: &Git, head: &str) -> Result<Vec<DirectGitFinding>, MaidError> {
    let mut found = Vec::new();
    for path in wt
        .changed_paths()
        .await?
        .into_iter()
        .filter(|p| is_agent_config(p))
    {
        restore_path(wt, head, &path).await?;
        found.push(DirectGitFinding::AgentConfigPlanted { path });
    }
    Ok(found)
}

/// Puts one path back as it is in `head` (removing it if `head` does not have it).
async fn restore_path(wt: &Git, head: &str, path: &str) -> Result<(), MaidError> {
    let tracked = wt
        .run(["cat-file", "-e", &format!("{head}:{path}")])
        .await
        .is_ok();
    if tracked {
        wt.run(["checkout", "-q", head, "--", path]).await?;
    } else {
        let full = wt.dir().join(path);
        let _ = std::fs::remove_file(&full).or_else(|_| std::fs::remove_dir_all(&full));
    }
    Ok(())
}

/// Saves the out-of-scope changes as a patch (untracked files included), then undoes them.
async fn set_aside(wt: &Git, paths: &[String], patch_file: &Path) -> Result<(), MaidError> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut args = vec!["add".to_owned(), "-N".to_owned(), "--".to_owned()];
    args.extend(paths.iter().cloned());
    wt.run(&args).await?;
    let mut diff = vec![
        "diff".to_owned(),
        "HEAD".to_owned(),
        "--binary".to_owned(),
        "--".to_owned(),
    ];
    diff.extend(paths.iter().cloned());
    let patch = wt.run(&diff).await?;
    std::fs::write(patch_file, patch).map_err(|e| MaidError::io("writing", patch_file, e))?;
    let mut reset = vec!["reset".to_owned(), "-q".to_owned(), "--".to_owned()];
    reset.extend(paths.iter().cloned());
    wt.run(&reset).await?;
    let head = wt.rev("HEAD").await?;
    for path in paths {
        restore_path(wt, &head, path).await?;
    }
    Ok(())
}

/// The Maid's own commit of the in-scope changes; returns its sha.
async fn commit(
    wt: &Git,
    contract: &TaskContract,
    attempt: u32,
    paths: &[String],
) -> Result<String, MaidError> {
    let mut add = vec!["add".to_owned(), "-A".to_owned(), "--".to_owned()];
    add.extend(paths.iter().cloned());
    wt.run(&add).await?;
    let goal: String = contract
        .target
        .goal
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(72)
        .collect();
    let message = format!(
        "{goal}\n\nWork of an implementation agent, recorded by the ImplementMaid.\n\n\
         Butler-Task: {}\nButler-Attempt: {attempt}\n",
        contract.task_id
    );
    wt.run(["commit", "-q", "--no-verify", "-m", &message])
        .await?;
    Ok(wt.rev("HEAD").await?)
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), MaidError> {
    let text = serde_json::to_string_pretty(value).expect("contracts always serialise");
    std::fs::write(path, text).map_err(|e| MaidError::io("writing", path, e))
}

/// Brings a finished task's records into the Brain's line (fast-forward, or a merge when the
/// line moved on), then removes the task's worktree. The branch is kept under
/// `refs/butler/accepted/`.
pub async fn accept(project_root: &Path, task_id: &str) -> Result<String, MaidError> {
    let main = Git::new(project_root);
    let branch_ref = format!("refs/heads/butler/task-{task_id}");
    let tip = main
        .rev(&branch_ref)
        .await
        .map_err(|_| MaidError::NoSuchTask(task_id.to_owned()))?;
    let dirty = main.changed_paths().await?;
    if !dirty.is_empty() {
        return Err(MaidError::UnrecordedChanges(dirty));
    }
    if main.run(["merge", "-q", "--ff-only", &tip]).await.is_err() {
        let message = format!("Accept task {task_id}\n\nButler-Task: {task_id}\n");
        if let Err(err) = main
            .run(["merge", "-q", "--no-ff", "-m", &message, &tip])
            .await
        {
            let _ = main.run(["merge", "--abort"]).await;
            return Err(MaidError::Conflict(err.message));
        }
    }
    retire(&main, task_id, "accepted", &tip).await?;
    Ok(main.rev("HEAD").await?)
}

/// Drops a task: its worktree is removed, its branch kept under `refs/butler/discarded/`.
pub async fn discard(project_root: &Path, task_id: &str) -> Result<(), MaidError> {
    let main = Git::new(project_root);
    let branch_ref = format!("refs/heads/butler/task-{task_id}");
    let tip = main
        .rev(&branch_ref)
        .await
        .map_err(|_| MaidError::NoSuchTask(task_id.to_owned()))?;
    retire(&main, task_id, "discarded", &tip).await
}

async fn retire(main: &Git, task_id: &str, state: &str, tip: &str) -> Result<(), MaidError> {
    let paths = task_paths(main, task_id).await?;
    let wt = paths.worktree.to_string_lossy().into_owned();
    main.run(["worktree", "remove", "--force", &wt]).await?;
    main.run([
        "update-ref",
        &format!("refs/butler/{state}/task-{task_id}"),
        tip,
    ])
    .await?;
    main.run(["branch", "-q", "-D", &format!("butler/task-{task_id}")])
        .await?;
    Ok(())
}
