//! The task sequence of seed 004, [0]–[8]: precheck, task branch in its own worktree, baseline,
//! prompt, launch under supervision, detection and restoration of direct git use and of writes
//! to the Brain's tree, the Maid's own commit as a ledger record, verification, and retries with
//! a compact prompt — then the Result Contract.
//!
//! Tasks, attempts with their evidence, and the agent's notes are stored in the ledger. Every git
//! operation goes through the git worker's [`TaskGit`]. Files kept as evidence (attempt logs,
//! out-of-scope patches, files the agent wrote into the Brain's tree, sandbox policies and
//! reports) live in the task's directory `<git common dir>/butler/tasks/<id>/`, which the agent
//! cannot write. The worktree lives outside the git directory (under the user's data directory,
//! see [`MaidContext::worktrees_root`]), beside the agent's own directory `task-<id>.agent/`
//! (its `HOME`, `TMPDIR` and the worker MCP's notes file).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use butler_worker::git::{Committer, MergeOutcome, TaskGit, merge_line};
use butler_worker::ledger::{Ledger, RecordId, TaskEnd};
use butler_worker::process::{ChildEnv, ChildSpec, Ending, Limits, Stagnation};
use butler_worker::record::{self, Draft, RecordMessage};
use butler_worker::time::{SharedClock, SystemClock};
use tokio_util::sync::CancellationToken;

use crate::activity::{AgentWatch, LogEntry, LoopSettings, TaskLog};
use crate::agent::{AgentConfig, Launch, WorkerMcpCommand, adapter};
use crate::contract::{
    AgentKind, AgentNote, AttemptEvidence, ContractError, DirectGit, DirectGitFinding,
    ImplementEvidence, ImplementRequest, ImplementTarget, NoteKind, Outcome, ResultContract,
    TaskContract, TaskId, TaskStatus, Verification,
};
use crate::env::{EnvPolicy, EnvVars, GitIdentity, HomeChoice, agent_env, prepare_isolated_home};
use crate::error::MaidError;
use crate::prompt::{WorkerTools, first_prompt, retry_prompt};
use crate::sandbox::{SandboxSettings, TaskSandbox};
use crate::scope::scope_violations;
use crate::verify::{TestSettings, check_files, run_tests, stubs, weakened_tests};
use crate::worker_channel::WorkerChannel;

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

/// The evidence line when the agent never started the worker MCP.
pub const WORKER_MCP_NOT_REACHED: &str = "worker MCP not reached";

/// What the Maid needs from Butler's configuration.
#[derive(Debug, Clone)]
pub struct MaidContext {
    /// The Brain's project (its working tree).
    pub project_root: PathBuf,
    pub default_agent: AgentKind,
    pub agents: HashMap<AgentKind, AgentConfig>,
    /// The restricted worker MCP's command without the task: the Maid appends
    /// `--task-file <path> --notes <path>` (e.g. `<abs butler exe>` with args `["worker-mcp"]`).
    pub worker_mcp: WorkerMcpCommand,
    /// The ledger file; `None` for the repository's own (`<git common dir>/butler/ledger.db`).
    pub ledger_path: Option<PathBuf>,
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
    /// Git worker handles get these variables (tests: a hermetic git configuration).
    pub git_env: Vec<(String, String)>,
    /// Where the task's times and record ids come from.
    pub clock: SharedClock,
    /// Where task worktrees live: under `<root>/<repository key>/task-<id>` (the edge gives
    /// `$XDG_DATA_HOME/butler/worktrees`); `None` puts them in the git directory
    /// (`.git/butler/worktrees`, where Claude Code refuses to write).
    pub worktrees_root: Option<PathBuf>,
    /// How agents and verify commands are confined.
    pub sandbox: SandboxSettings,
    /// [watch] When an agent counts as looping (`[agent] loop_repeats`, `loop_quiet_secs`).
    pub loops: LoopSettings,
}

impl MaidContext {
    pub fn new(project_root: impl Into<PathBuf>, worker_mcp: WorkerMcpCommand) -> Self {
        Self {
            project_root: project_root.into(),
            default_agent: AgentKind::Goose,
            agents: HashMap::new(),
            worker_mcp,
            ledger_path: None,
            env_allow: Vec::new(),
            real_home: false,
            parent_env: crate::env::parent_env(),
            stagnation: Duration::from_secs(300),
            test_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(5),
            git_env: Vec::new(),
            clock: SystemClock::shared(),
            worktrees_root: None,
            sandbox: SandboxSettings::default(),
            loops: LoopSettings::default(),
        }
    }

    fn main_git(&self) -> Result<TaskGit, MaidError> {
        open_git(&self.project_root, &self.git_env)
    }

    fn ledger_file(&self, main: &TaskGit) -> PathBuf {
        self.ledger_path.clone().unwrap_or_else(|| {
            main.common_dir()
                .join(butler_worker::ledger::LEDGER_DIR)
                .join(butler_worker::ledger::LEDGER_FILE)
        })
    }
}

fn open_git(path: &Path, env: &[(String, String)]) -> Result<TaskGit, MaidError> {
    let repo = butler_worker::git::GitRepo::discover(path)?.with_command_env(env.iter().cloned());
    Ok(TaskGit::from_repo(repo))
}

fn open_ledger(path: &Path, clock: &SharedClock) -> Result<Ledger, MaidError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| MaidError::io("creating", dir, e))?;
    }
    Ok(Ledger::open_file(path)?.with_clock(clock.clone()))
}

/// The implementation target: the Maid runs only `implement` tasks.
fn target(contract: &TaskContract) -> Result<&ImplementTarget, MaidError> {
    contract
        .implement()
        .ok_or_else(|| ContractError::NotImplementation(contract.intent().to_owned()).into())
}

/// Progress of a running task, for MCP progress notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    AttemptStarted { attempt: u32 },
    AgentRunning { attempt: u32 },
    Activity(crate::activity::Seen), // [watch] what the agent just did
    Verifying { attempt: u32 },
    Retrying { attempt: u32 },
    Finished { outcome: Outcome },
}

impl Progress {
    /// A one-line description and a fraction of the task's work (attempts count equally;
    /// the fraction strictly increases along a task, as MCP progress requires).
    pub fn describe(&self, max_attempts: u32) -> (String, f64) {
        let max = f64::from(max_attempts.max(1));
        let at = |attempt: u32, within: f64| (f64::from(attempt - 1) + within) / max;
        match self {
            Progress::AttemptStarted { attempt } => {
                (format!("attempt {attempt} started"), at(*attempt, 0.0))
            }
            Progress::AgentRunning { attempt } => (
                format!("attempt {attempt}: agent running"),
                at(*attempt, 0.1),
            ),
            // [watch] Between running (0.1) and verifying (0.8), rising with each event.
            Progress::Activity(seen) => (seen.describe(), at(seen.attempt, seen.within())),
            Progress::Verifying { attempt } => {
                (format!("attempt {attempt}: verifying"), at(*attempt, 0.8))
            }
            // Just below the next attempt's start, so progress strictly increases.
            Progress::Retrying { attempt } => (
                format!("retrying: attempt {attempt} next"),
                at(attempt.saturating_sub(1).max(1), 0.95),
            ),
            Progress::Finished { outcome } => (format!("finished: {outcome:?}"), 1.0),
        }
    }
}

/// Runs blocking work (git, SQLite) off the async executor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, MaidError> + Send + 'static,
) -> Result<T, MaidError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

type SharedLedger = Arc<Mutex<Ledger>>;

fn with_ledger<T>(
    ledger: &SharedLedger,
    f: impl FnOnce(&Ledger) -> Result<T, MaidError>,
) -> Result<T, MaidError> {
    let guard = ledger.lock().expect("the ledger lock is never poisoned");
    f(&guard)
}

/// [0] and the task's creation: refuses when the Brain's tree has unrecorded changes, validates
/// the request into a Task Contract, and stores it in the ledger under a new task id.
pub async fn prepare_task(
    ctx: &MaidContext,
    request: ImplementRequest,
    requested_by: &str,
) -> Result<TaskContract, MaidError> {
    let requested_at = ctx.clock.now();
    let draft = TaskContract::from_request(
        request,
        TaskId::new("t0").expect("t0 is a valid id"),
        requested_by,
        requested_at,
    )?;
    let ctx = ctx.clone();
    blocking(move || {
        let main = ctx.main_git()?;
        require_recorded(&main)?;
        check_agent(&ctx, &draft, main.workdir())?;
        let ledger = open_ledger(&ctx.ledger_file(&main), &ctx.clock)?;
        Ok(ledger.create_task(|_| draft)?)
    })
    .await
}

/// [0] A task starts from a record and is accepted onto one: unrecorded changes in the
/// Brain's tree stop both, before anything is created or changed.
fn require_recorded(main: &TaskGit) -> Result<(), MaidError> {
    let dirty = main.changed_paths()?;
    if dirty.is_empty() {
        Ok(())
    } else {
        Err(MaidError::UnrecordedChanges(dirty))
    }
}

/// The task's agent, its environment policy (with `home` when isolated) and environment.
fn agent_for(
    ctx: &MaidContext,
    contract: &TaskContract,
    home: &Path,
) -> (Box<dyn crate::agent::AgentAdapter>, EnvPolicy, ChildEnv) {
    let kind = contract.constraints.agent.unwrap_or(ctx.default_agent);
    let agent = adapter(kind, ctx.agents.get(&kind).cloned().unwrap_or_default());
    let policy = EnvPolicy {
        home: if ctx.real_home {
            HomeChoice::Real
        } else {
            HomeChoice::Isolated(home.to_path_buf())
        },
        allow: ctx.env_allow.clone(),
        git_identity: GitIdentity::default(),
    };
    let env = agent_env(&ctx.parent_env, &policy, &agent.env_needs());
    (agent, policy, env)
}

/// Whether the task's agent can be launched at all (its program found, its settings given),
/// checked before a task, a line or a worktree is created: building the command has no side
/// effects, writing its files does.
fn check_agent(ctx: &MaidContext, contract: &TaskContract, root: &Path) -> Result<(), MaidError> {
    ctx.sandbox.check()?;
    let scratch = root.join(".butler-agent-check");
    let (agent, _, env) = agent_for(ctx, contract, &scratch);
    agent.command(&Launch {
        prompt: "",
        workdir: root,
        task_dir: &scratch,
        scratch: &scratch,
        worker_mcp: &ctx.worker_mcp,
        targets: &target(contract)?.target_paths,
        env: &env,
        confined: ctx.sandbox.mode != butler_worker::sandbox::SandboxMode::Off,
    })?;
    Ok(())
}

struct Paths {
    worktree: PathBuf,
    task_dir: PathBuf,
    /// The agent's own directory beside its worktree: `home/`, `tmp/`, the notes file.
    agent_dir: PathBuf,
    /// The verify commands' temp dir.
    verify_tmp: PathBuf,
}

fn task_paths(worktrees: &Path, common_dir: &Path, task: &str) -> Paths {
    let worktree = worktrees.join(format!("task-{task}"));
    Paths {
        agent_dir: beside(&worktree, ".agent"),
        verify_tmp: beside(&worktree, ".verify"),
        task_dir: crate::activity::log::task_dir(common_dir, task),
        worktree,
    }
}

/// `<worktree><suffix>`: the task's other directories, named after its worktree.
fn beside(worktree: &Path, suffix: &str) -> PathBuf {
    let mut name = worktree.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Runs one task (created by [`prepare_task`]) to its end and returns the Result Contract.
/// The task's end (or the error that stopped it) is stored in the ledger.
pub async fn run_task(
    ctx: MaidContext,
    contract: TaskContract,
    progress: impl Fn(Progress) + Send + Sync,
    cancel: CancellationToken,
) -> Result<ResultContract, MaidError> {
    let main = {
        let ctx = ctx.clone();
        blocking(move || ctx.main_git()).await?
    };
    let ledger_file = ctx.ledger_file(&main);
    let ledger: SharedLedger = {
        let (file, clock) = (ledger_file.clone(), ctx.clock.clone());
        Arc::new(Mutex::new(
            blocking(move || open_ledger(&file, &clock)).await?,
        ))
    };
    let id = contract.task_id.clone();
    let journal = {
        let (ledger, id) = (ledger.clone(), id.clone());
        blocking(move || {
            with_ledger(&ledger, |l| {
                mark_interrupted(l)?;
                if l.task(&id)?.is_none() {
                    return Err(MaidError::NoSuchTask(id.to_string()));
                }
                Ok(l.begin_operation(TASK_OPERATION, std::process::id(), id.as_str())?)
            })
        })
        .await?
    };
    // [watch] The task's steps go to its log too (`butler task log`).
    let log = TaskLog::in_dir(&crate::activity::log::task_dir(
        main.common_dir(),
        id.as_str(),
    ));
    let (max, clock) = (contract.constraints.max_attempts, ctx.clock.clone());
    let progress = |p: Progress| {
        if let Some(entry) = LogEntry::of_progress(&p, max, clock.now()) {
            log.append(&entry);
        }
        progress(p);
    };
    let result = sequence(&ctx, &main, &ledger, &contract, &progress, &cancel)
        .await
        .map(|evidence| ResultContract::implement(contract.task_id.clone(), evidence));
    if let Err(e) = &result {
        log.append(&LogEntry::Stopped {
            at: ctx.clock.now(),
            error: e.to_string(),
        });
    }
    let end = match &result {
        Ok(r) => TaskEnd::Result(r.clone()),
        Err(e) => TaskEnd::Error(e.to_string()),
    };
    let stored = {
        let ledger = ledger.clone();
        blocking(move || {
            with_ledger(&ledger, |l| {
                l.finish_task(&id, &end)?;
                Ok(l.end_operation(journal)?)
            })
        })
        .await
    };
    if let Err(e) = stored {
        tracing::warn!(%e, "the task's end could not be stored in the ledger");
    }
    if let Some(evidence) = result
        .as_ref()
        .ok()
        .and_then(ResultContract::implementation)
    {
        progress(Progress::Finished {
            outcome: evidence.outcome,
        });
    }
    result
}

/// The journal kind of a running task: a task whose process died mid-run (the server was
/// killed) is recognised by it.
const TASK_OPERATION: &str = "task";

/// Marks `interrupted` every task whose process died while it ran; their line and worktree
/// stay for `task_discard`. Returns their ids.
pub fn mark_interrupted(ledger: &Ledger) -> Result<Vec<TaskId>, MaidError> {
    let mut ids = Vec::new();
    for op in ledger.open_operations()? {
        if op.kind != TASK_OPERATION || op.owner_alive() {
            continue;
        }
        if let Ok(id) = TaskId::new(op.detail.as_str())
            && ledger
                .task(&id)?
                .is_some_and(|t| t.status == TaskStatus::Running)
        {
            ledger.set_task_status(&id, TaskStatus::Interrupted)?;
            ids.push(id);
        }
        ledger.end_operation(op.id)?;
    }
    Ok(ids)
}

/// The state of the Brain's tree before an attempt, to find what the agent wrote there.
struct BrainState {
    head_ref: Option<String>,
    head: Option<String>,
    changed: BTreeSet<String>,
    /// Entries beside the task worktrees (`../x` from a worktree lands there, inside the git
    /// directory) that are not worktrees themselves.
    beside: BTreeSet<String>,
}

impl BrainState {
    fn take(main: &TaskGit, worktrees: &Path) -> Result<Self, MaidError> {
        Ok(Self {
            head_ref: main.head_ref()?,
            head: main.rev("HEAD")?,
            changed: main.changed_paths()?.into_iter().collect(),
            beside: beside_worktrees(worktrees),
        })
    }
}

/// The repository's task worktrees directory (see [`MaidContext::worktrees_root`]).
fn worktrees_dir(root: Option<&Path>, main: &TaskGit) -> PathBuf {
    match root {
        Some(root) => butler_worker::git::task_worktrees_dir(root, main.common_dir()),
        None => main.common_dir().join("butler").join("worktrees"),
    }
}

fn beside_worktrees(worktrees: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(worktrees) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("task-"))
        .collect()
}

#[allow(clippy::too_many_arguments)]
async fn sequence(
    ctx: &MaidContext,
    main: &TaskGit,
    ledger: &SharedLedger,
    contract: &TaskContract,
    progress: &(impl Fn(Progress) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<ImplementEvidence, MaidError> {
    let id = contract.task_id.clone();
    let target_paths = target(contract)?.target_paths.clone();
    let branch = contract.task_id.branch();
    let branch_ref = format!("refs/heads/{branch}");
    let worktrees = worktrees_dir(ctx.worktrees_root.as_deref(), main);
    let paths = task_paths(&worktrees, main.common_dir(), id.as_str());
    // [0] Unrecorded changes in the Brain's tree: stop before anything starts.
    // [1] Task branch from the current record, in a worktree outside the git directory.
    let (wt, base) = {
        let (main, worktree, task_dir, branch) = (
            main.clone(),
            paths.worktree.clone(),
            paths.task_dir.clone(),
            branch.clone(),
        );
        let (ledger, id) = (ledger.clone(), id.clone());
        blocking(move || {
            require_recorded(&main)?;
            let base = main.head_sha()?;
            std::fs::create_dir_all(&task_dir)
                .map_err(|e| MaidError::io("creating", &task_dir, e))?;
            let wt = main.add_worktree(&worktree, &branch, &base)?;
            with_ledger(&ledger, |l| {
                Ok(l.set_task_worktree(&id, &worktree.to_string_lossy())?)
            })?;
            Ok((wt, base))
        })
        .await?
    };

    let home = paths.agent_dir.join("home");
    let (agent, policy, mut env) = agent_for(ctx, contract, &home);
    if !ctx.real_home {
        prepare_isolated_home(&home, &policy.git_identity)?;
    }
    // The agent's own temp dir; the sandbox lets it write there and nowhere else in /tmp.
    let agent_tmp = paths.agent_dir.join("tmp");
    std::fs::create_dir_all(&agent_tmp).map_err(|e| MaidError::io("creating", &agent_tmp, e))?;
    env.set("TMPDIR", &agent_tmp);
    let real_home = crate::env::lookup(&env, "HOME")
        .filter(|_| ctx.real_home)
        .map(PathBuf::from);
    let sandbox = TaskSandbox::new(
        &ctx.sandbox,
        &paths.worktree,
        &paths.agent_dir,
        &paths.verify_tmp,
        real_home.as_deref(),
        &paths.task_dir,
    )?;
    let channel = WorkerChannel::new(&paths.task_dir, &paths.agent_dir);
    channel.write_task(contract)?;
    let worker_mcp = channel.command(&ctx.worker_mcp);
    let tools = WorkerTools::default();
    let mut attempts: Vec<AttemptEvidence> = Vec::new();
    let mut outcome = Outcome::Failed;

    for attempt in 1..=contract.constraints.max_attempts {
        progress(Progress::AttemptStarted { attempt });
        // [2] Baseline (the task's worktree, and the Brain's tree for outside writes).
        let (baseline, brain, note_mark) = {
            let (wt, main, branch_ref) = (wt.clone(), main.clone(), branch_ref.clone());
            let (ledger, id, worktrees) = (ledger.clone(), id.clone(), worktrees.clone());
            blocking(move || {
                let mark = with_ledger(&ledger, |l| {
                    l.begin_attempt(&id, attempt)?;
                    Ok(l.last_note_id()?)
                })?;
                Ok((
                    wt.baseline(&branch_ref)?,
                    BrainState::take(&main, &worktrees)?,
                    mark,
                ))
            })
            .await?
        };
        // [3] Prompt.
        let prompt = match attempts.last() {
            None => first_prompt(contract, &tools),
            Some(last) => retry_prompt(contract, &tools, attempt, last),
        };
        // [4] Launch and watch.
        let launch = Launch {
            prompt: &prompt,
            workdir: &paths.worktree,
            task_dir: &paths.task_dir,
            scratch: &paths.agent_dir,
            worker_mcp: &worker_mcp,
            targets: &target_paths,
            env: &env,
            confined: sandbox.confines(),
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
        let spec = ChildSpec {
            program: command.program.into_os_string(),
            args: command.args,
            cwd: paths.worktree.clone(),
            env: env.clone(),
            stdin: command.stdin,
        };
        let confined = sandbox.agent(attempt)?;
        let spec = match &confined {
            Some(c) => c.wrap(spec),
            None => spec,
        };
        // [watch] The agent's output as events: streamed, logged, watched for loops.
        let watch = AgentWatch::new(
            agent.output_format(),
            ctx.loops,
            &paths.worktree,
            TaskLog::in_dir(&paths.task_dir),
            attempt,
        );
        let on_event = |seen| progress(Progress::Activity(seen));
        let (run, activity) =
            crate::activity::run_agent(spec, &limits, cancel, watch, &on_event).await;
        TaskLog::in_dir(&paths.task_dir).append(&LogEntry::AgentEnded {
            attempt,
            ending: run.ending.clone(),
        });
        let log = paths.task_dir.join(format!("attempt-{attempt}.log"));
        let agent_output = run.stdout.text() + &run.stderr.text();
        std::fs::write(&log, &agent_output).map_err(|e| MaidError::io("writing", &log, e))?;
        let cancelled = matches!(run.ending, Ending::Cancelled);
        // [5] Direct git use and tampering, restored before the Maid's own git; writes to the
        // Brain's tree; planted agent configuration. [7a] Scope. [6] The Maid's record.
        let after = {
            let (wt, main, task_dir) = (wt.clone(), main.clone(), paths.task_dir.clone());
            let (ledger, id, contract) = (ledger.clone(), id.clone(), contract.clone());
            let worktrees = worktrees.clone();
            blocking(move || {
                let mut findings: Vec<DirectGitFinding> = baseline
                    .detect_and_restore(&wt, id.as_str())?
                    .into_iter()
                    .map(DirectGitFinding::from)
                    .collect();
                findings.extend(outside_writes(
                    &main, &brain, &worktrees, &task_dir, attempt,
                )?);
                findings.extend(remove_planted_config(&wt, &baseline.head)?);
                let changed = wt.changed_paths()?;
                let scope_violation = scope_violations(&changed, &target(&contract)?.target_paths);
                let patch = wt.set_aside(&scope_violation)?;
                if !patch.is_empty() {
                    let file = task_dir.join(format!("attempt-{attempt}-out-of-scope.patch"));
                    std::fs::write(&file, patch).map_err(|e| MaidError::io("writing", &file, e))?;
                }
                let in_scope: Vec<String> = changed
                    .iter()
                    .filter(|p| !scope_violation.contains(p))
                    .cloned()
                    .collect();
                let record = if in_scope.is_empty() || cancelled {
                    None
                } else {
                    Some(with_ledger(&ledger, |l| {
                        record_attempt(&wt, l, &contract, attempt, &in_scope)
                    })?)
                };
                let patch = wt.diff(&baseline.head, "HEAD")?;
                let head = wt.head_sha()?;
                Ok((findings, changed, scope_violation, record, patch, head))
            })
            .await?
        };
        let (findings, changed, scope_violation, record, patch, head) = after;
        let verify_confined = if cancelled {
            None
        } else {
            sandbox.verify(attempt)?
        };
        let verify = if cancelled {
            Verification {
                scope_violation,
                ..Default::default()
            }
        } else {
            // [7b] Tests, file checks, guards.
            progress(Progress::Verifying { attempt });
            let mut verify_env = crate::env::verify_env(&ctx.parent_env, &ctx.env_allow);
            // Its own temp dir, fresh per attempt: nothing the agent planted is picked up.
            let _ = std::fs::remove_dir_all(&paths.verify_tmp);
            std::fs::create_dir_all(&paths.verify_tmp)
                .map_err(|e| MaidError::io("creating", &paths.verify_tmp, e))?;
            verify_env.set("TMPDIR", &paths.verify_tmp);
            let settings = TestSettings {
                grace: ctx.grace,
                confine: verify_confined.clone(),
                ..TestSettings::new(ctx.test_timeout, verify_env)
            };
            let tests = run_tests(
                &paths.worktree,
                &contract.success_criteria.commands,
                &settings,
                cancel,
            )
            .await;
            Verification {
                scope_violation,
                tests,
                file_checks: check_files(&paths.worktree, &contract.success_criteria.file_checks),
                weakened_tests: weakened_tests(&patch),
                stubs: stubs(&patch),
            }
        };
        let has_work = head != base;
        let passed = !cancelled && verify.passed() && has_work && !cancel.is_cancelled();
        let notes = {
            let (ledger, id, channel) = (ledger.clone(), id.clone(), channel.clone());
            blocking(move || {
                with_ledger(&ledger, |l| {
                    channel.store_notes(l, &id)?;
                    Ok(l.task_notes(&id, note_mark)?)
                })
            })
            .await?
        };
        let verify_outputs: Vec<&str> = verify
            .tests
            .iter()
            .map(|t| t.output_tail.as_str())
            .collect();
        let sandbox_report = sandbox.report(
            confined.as_ref(),
            verify_confined.is_some(),
            &agent_output,
            &verify_outputs,
        );
        let worker_mcp_reached = notes.iter().any(|n| n.kind == NoteKind::Connected);
        let item = AttemptEvidence {
            attempt,
            agent_exit: run.ending,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            changed_files: changed,
            direct_git: DirectGit::from_findings(findings),
            verify,
            record,
            worker_mcp_reached,
            agent_notes: notes
                .iter()
                .filter(|n| n.kind != NoteKind::Connected)
                .map(|n| AgentNote {
                    kind: n.kind,
                    text: n.body.clone(),
                })
                .collect(),
            // [watch] Only an agent with an MCP client can miss the worker MCP.
            warnings: if worker_mcp_reached || !agent.has_mcp_client() {
                Vec::new()
            } else {
                vec![WORKER_MCP_NOT_REACHED.to_owned()]
            },
            sandbox: Some(sandbox_report),
            activity: (!activity.is_empty()).then_some(activity),
        };
        {
            let (ledger, id, item) = (ledger.clone(), id.clone(), item.clone());
            blocking(move || with_ledger(&ledger, |l| Ok(l.finish_attempt(&id, &item)?))).await?;
        }
        attempts.push(item);
        if cancelled || cancel.is_cancelled() {
            outcome = Outcome::Cancelled;
            break;
        }
        // [8] Success, or back to [3].
        if passed {
            outcome = Outcome::Succeeded;
            break;
        }
        // [watch] Looping again after a retry that named the loop: a third try would too.
        if crate::activity::loops::loops_again(&attempts) {
            break;
        }
        if attempt < contract.constraints.max_attempts {
            progress(Progress::Retrying {
                attempt: attempt + 1,
            });
        }
    }
    Ok(ImplementEvidence {
        branch,
        outcome,
        attempts,
    })
}

/// The Maid's own commit of the in-scope changes, as a ledger record linked to the task (and
/// its issue). Returns the record id.
fn record_attempt(
    wt: &TaskGit,
    ledger: &Ledger,
    contract: &TaskContract,
    attempt: u32,
    paths: &[String],
) -> Result<RecordId, MaidError> {
    let message = format!(
        "{}\n\nWork of an implementation agent (attempt {attempt}), recorded by the ImplementMaid.",
        target(contract)?.subject()
    );
    let issues: Vec<u64> = contract.issue_id.into_iter().collect();
    let branch = contract.task_id.branch();
    let draft = Draft {
        message: &message,
        issue_ids: &issues,
        line: Some(&branch),
        task: Some(&contract.task_id),
    };
    let before = wt.head_sha()?;
    let reservation = record::reserve(ledger, &draft)?;
    match wt.commit_paths(paths, reservation.text()) {
        Ok(sha) => Ok(reservation.complete(ledger, &sha)?),
        Err(e) => {
            let settled = match wt.head_sha() {
                Ok(now) => reservation.fail(ledger, Some(&before), Some(&now)),
                Err(_) => reservation.abandon(ledger),
            };
            if let Err(lost) = settled {
                tracing::warn!(%lost, "a failed record could not be settled in the ledger");
            }
            Err(e.into())
        }
    }
}

/// Changes the agent made to the Brain's tree during the attempt (compared with the state
/// before it). Files it created are moved into the task's directory as evidence; files it
/// changed or deleted are copied there (when they exist) and put back as the Brain's HEAD has
/// them; a moved or switched HEAD is reported (left as it is: it may be the Brain's own doing).
fn outside_writes(
    main: &TaskGit,
    before: &BrainState,
    worktrees: &Path,
    task_dir: &Path,
    attempt: u32,
) -> Result<Vec<DirectGitFinding>, MaidError> {
    let mut found = Vec::new();
    let now = BrainState::take(main, worktrees)?;
    if now.head_ref != before.head_ref || now.head != before.head {
        found.push(DirectGitFinding::OutsideWrite {
            path: "HEAD".to_owned(),
        });
    }
    let evidence = task_dir.join(format!("attempt-{attempt}-outside"));
    for name in now.beside.difference(&before.beside) {
        let source = worktrees.join(name);
        let kept = evidence.join("beside-worktree").join(name);
        std::fs::create_dir_all(evidence.join("beside-worktree"))
            .map_err(|e| MaidError::io("creating", &evidence, e))?;
        std::fs::rename(&source, &kept).map_err(|e| MaidError::io("keeping", &source, e))?;
        found.push(DirectGitFinding::OutsideWrite {
            path: format!("../{name}"),
        });
    }
    let new: Vec<String> = now.changed.difference(&before.changed).cloned().collect();
    if new.is_empty() {
        return Ok(found);
    }
    let head = now.head.clone().unwrap_or_default();
    main.unstage(&new)?;
    for path in &new {
        let source = main.workdir().join(path);
        let kept = evidence.join(path);
        let tracked = !head.is_empty() && main.is_tracked(&head, path)?;
        if source.is_file() {
            if let Some(dir) = kept.parent() {
                std::fs::create_dir_all(dir).map_err(|e| MaidError::io("creating", dir, e))?;
            }
            let moved = if tracked {
                std::fs::copy(&source, &kept).map(drop)
            } else {
                std::fs::rename(&source, &kept).or_else(|_| std::fs::copy(&source, &kept).map(drop))
            };
            moved.map_err(|e| MaidError::io("keeping", &source, e))?;
        }
        if tracked {
            main.restore_paths(&head, std::slice::from_ref(path))?;
        }
        found.push(DirectGitFinding::OutsideWrite { path: path.clone() });
    }
    Ok(found)
}

fn is_agent_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    AGENT_CONFIG_FILES.contains(&name)
        || AGENT_CONFIG_DIRS
            .iter()
            .any(|d| path.starts_with(d) || path.contains(&format!("/{d}")))
}

/// Agent configuration planted in the tree is put back as it was at `head` and reported.
fn remove_planted_config(wt: &TaskGit, head: &str) -> Result<Vec<DirectGitFinding>, MaidError> {
    let planted: Vec<String> = wt
        .changed_paths()?
        .into_iter()
        .filter(|p| is_agent_config(p))
        .collect();
    wt.restore_paths(head, &planted)?;
    Ok(planted
        .into_iter()
        .map(|path| DirectGitFinding::AgentConfigPlanted { path })
        .collect())
}

/// What accepting a task did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Accepted {
    pub task_id: String,
    /// The Brain's line now points here.
    pub head: String,
    /// Whether a merge record was needed (the Brain's line had moved on).
    pub merged: bool,
    /// The records brought in (the task's, then the merge record if any).
    pub records: Vec<RecordId>,
}

fn ledger_of(main: &TaskGit, clock: &SharedClock) -> Result<Ledger, MaidError> {
    open_ledger(
        &main
            .common_dir()
            .join(butler_worker::ledger::LEDGER_DIR)
            .join(butler_worker::ledger::LEDGER_FILE),
        clock,
    )
}

fn task_tip(main: &TaskGit, task_id: &str) -> Result<(TaskId, String), MaidError> {
    let id = TaskId::new(task_id).map_err(|_| MaidError::NoSuchTask(task_id.to_owned()))?;
    let tip = main
        .rev(&format!("refs/heads/{}", id.branch()))?
        .ok_or_else(|| MaidError::NoSuchTask(task_id.to_owned()))?;
    Ok((id, tip))
}

/// Removes a task's worktree (wherever it is: git's own list, else the ledger's record of it;
/// a worktree that vanished is only pruned) and the agent's and verify commands' directories
/// beside it, keeps the branch under `refs/butler/<how>/`, and deletes the branch.
fn retire(main: &TaskGit, ledger: &Ledger, task_id: &TaskId, how: &str) -> Result<(), MaidError> {
    let branch = task_id.branch();
    let worktree = match main.worktree_of_branch(&branch)? {
        Some(path) => Some(path),
        None => ledger
            .task(task_id)?
            .and_then(|t| t.worktree)
            .map(PathBuf::from),
    };
    let worktree = worktree.unwrap_or_else(|| {
        task_paths(
            &worktrees_dir(None, main),
            main.common_dir(),
            task_id.as_str(),
        )
        .worktree
    });
    main.retire_task(
        &worktree,
        &branch,
        &format!("refs/butler/{how}/task-{task_id}"),
    )?;
    for dir in [beside(&worktree, ".agent"), beside(&worktree, ".verify")] {
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), %e, "could not remove a task directory");
        }
    }
    Ok(())
}

/// Brings a finished task's records into the Brain's line (a line merge: fast-forward, or a
/// merge record when the line moved on), then removes the task's worktree. The branch is kept
/// under `refs/butler/accepted/`. Refused while the Brain's tree has unrecorded changes. A
/// conflicting merge is left in progress for the Brain to resolve and record
/// (`MergeConflicted`); the task stays open until it is accepted again.
pub async fn accept(
    project_root: &Path,
    task_id: &str,
    clock: SharedClock,
) -> Result<Accepted, MaidError> {
    let (root, task_id) = (project_root.to_path_buf(), task_id.to_owned());
    blocking(move || {
        let main = TaskGit::open(&root)?;
        let (task_id, tip) = task_tip(&main, &task_id)?;
        require_recorded(&main)?;
        let ledger = ledger_of(&main, &clock)?;
        let before = main.head_sha()?;
        let mut records: Vec<RecordId> = main
            .commits_between(&before, &tip)?
            .iter()
            .filter_map(|(_, message)| RecordMessage::parse(message).record_id)
            .collect();
        let contract = ledger.task(&task_id)?.map(|t| t.contract);
        let issues: Vec<u64> = contract
            .as_ref()
            .and_then(|c| c.issue_id)
            .into_iter()
            .collect();
        let message = match contract.as_ref().and_then(TaskContract::implement) {
            Some(target) => format!("Accept task {task_id}: {}", target.subject()),
            None => format!("Accept task {task_id}"),
        };
        let line = main
            .head_ref()?
            .map(|r| r.trim_start_matches("refs/heads/").to_owned());
        let draft = Draft {
            message: &message,
            issue_ids: &issues,
            line: line.as_deref(),
            task: Some(&task_id),
        };
        // Accepting is a line merge: the same one the Brain's work_merge_line makes.
        let merged =
            match merge_line::<MaidError>(main.repo(), &ledger, &tip, &draft, Committer::Maid)? {
                MergeOutcome::AlreadyIn { .. } | MergeOutcome::FastForward { .. } => false,
                MergeOutcome::Merged { record, .. } => {
                    records.push(record);
                    true
                }
                MergeOutcome::Conflicted { files } => {
                    return Err(MaidError::MergeConflicted {
                        line: task_id.branch(),
                        files,
                    });
                }
            };
        retire(&main, &ledger, &task_id, "accepted")?;
        if ledger.task(&task_id)?.is_some() {
            ledger.set_task_status(&task_id, TaskStatus::Accepted)?;
        }
        Ok(Accepted {
            task_id: task_id.to_string(),
            head: main.head_sha()?,
            merged,
            records,
        })
    })
    .await
}

/// Drops a task: its worktree is removed, its branch kept under `refs/butler/discarded/`.
pub async fn discard(
    project_root: &Path,
    task_id: &str,
    clock: SharedClock,
) -> Result<(), MaidError> {
    let (root, task_id) = (project_root.to_path_buf(), task_id.to_owned());
    blocking(move || {
        let main = TaskGit::open(&root)?;
        let (task_id, _) = task_tip(&main, &task_id)?;
        let ledger = ledger_of(&main, &clock)?;
        retire(&main, &ledger, &task_id, "discarded")?;
        if ledger.task(&task_id)?.is_some() {
            ledger.set_task_status(&task_id, TaskStatus::Discarded)?;
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use butler_worker::time::Clock;

    use super::*;

    fn contract(id: TaskId) -> TaskContract {
        let request = ImplementRequest {
            goal: "g".into(),
            target_paths: vec!["src/".into()],
            ..Default::default()
        };
        TaskContract::from_request(request, id, "test", SystemClock.now()).expect("valid")
    }

    #[test]
    // A pid that surely belongs to no live process: a plain, already reaped child.
    #[allow(clippy::disallowed_methods)]
    fn a_task_whose_process_died_is_marked_interrupted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open(dir.path()).expect("ledger");
        let id = ledger.create_task(contract).expect("task").task_id;
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        ledger
            .begin_operation(TASK_OPERATION, dead, id.as_str())
            .expect("journal");
        let live = ledger.create_task(contract).expect("task").task_id;
        ledger
            .begin_operation(TASK_OPERATION, std::process::id(), live.as_str())
            .expect("journal");
        assert_eq!(
            mark_interrupted(&ledger).expect("recovers"),
            vec![id.clone()]
        );
        assert_eq!(
            ledger.task(&id).expect("read").expect("row").status,
            TaskStatus::Interrupted
        );
        assert_eq!(
            ledger.task(&live).expect("read").expect("row").status,
            TaskStatus::Running
        );
        assert!(mark_interrupted(&ledger).expect("again").is_empty());
    }

    #[test]
    fn progress_fractions_strictly_increase_over_three_attempts() {
        let mut steps = Vec::new();
        for attempt in 1..=3 {
            steps.push(Progress::AttemptStarted { attempt });
            steps.push(Progress::AgentRunning { attempt });
            steps.push(Progress::Verifying { attempt });
            if attempt < 3 {
                steps.push(Progress::Retrying {
                    attempt: attempt + 1,
                });
            }
        }
        steps.push(Progress::Finished {
            outcome: Outcome::Failed,
        });
        let fractions: Vec<f64> = steps.iter().map(|p| p.describe(3).1).collect();
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "{fractions:?}");
        assert_eq!(fractions.last(), Some(&1.0));
    }
}
