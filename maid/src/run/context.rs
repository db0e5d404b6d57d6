//! What the Maid needs from Butler's configuration ([`MaidContext`]), and the checks made before
//! a task exists: the project's tree is recorded, the agent can be launched.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use butler_worker::git::TaskGit;
use butler_worker::ledger::Ledger;
use butler_worker::process::ChildEnv;
use butler_worker::time::{SharedClock, SystemClock};

use crate::agent::{AgentAdapter, AgentConfig, Launch, WorkerMcpCommand, adapter};
use crate::contract::{AgentKind, ContractError, ImplementTarget, TaskContract};
use crate::env::{EnvPolicy, EnvVars, GitIdentity, HomeChoice, agent_env};
use crate::error::MaidError;
use crate::sandbox::SandboxSettings;

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
    /// When an agent counts as looping (`[agent] loop_repeats`, `loop_quiet_secs`).
    pub loops: crate::activity::LoopSettings,
    /// Stops every task of the process before it exits (default: the process's own).
    pub stop: super::TaskStop,
    /// Where tasks run (`[runner]`, the user's configuration only; default here).
    pub runner: butler_worker::config::RunnerConfig,
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
            loops: crate::activity::LoopSettings::default(),
            stop: super::TaskStop::default(),
            runner: butler_worker::config::RunnerConfig::default(),
        }
    }

    pub(super) fn main_git(&self) -> Result<TaskGit, MaidError> {
        open_git(&self.project_root, &self.git_env)
    }

    pub(super) fn ledger_file(&self, main: &TaskGit) -> PathBuf {
        self.ledger_path
            .clone()
            .unwrap_or_else(|| repository_ledger(main))
    }

    /// The task's agent, its environment policy (with `home` when isolated) and environment.
    pub(super) fn agent_for(
        &self,
        contract: &TaskContract,
        home: &Path,
    ) -> (Box<dyn AgentAdapter>, EnvPolicy, ChildEnv) {
        let kind = contract.constraints.agent.unwrap_or(self.default_agent);
        let agent = adapter(kind, self.agents.get(&kind).cloned().unwrap_or_default());
        let policy = EnvPolicy {
            home: if self.real_home {
                HomeChoice::Real
            } else {
                HomeChoice::Isolated(home.to_path_buf())
            },
            allow: self.env_allow.clone(),
            git_identity: GitIdentity::default(),
        };
        let env = agent_env(&self.parent_env, &policy, &agent.env_needs());
        (agent, policy, env)
    }

    /// Whether the task's agent can be launched at all (its program found, its settings
    /// given), checked before a task, a line or a worktree is created: building the command
    /// has no side effects, writing its files does.
    pub(super) fn check_agent(
        &self,
        contract: &TaskContract,
        root: &Path,
    ) -> Result<(), MaidError> {
        self.sandbox.check()?;
        let scratch = root.join(".butler-agent-check");
        let (agent, _, env) = self.agent_for(contract, &scratch);
        agent.command(&Launch {
            prompt: "",
            workdir: root,
            task_dir: &scratch,
            scratch: &scratch,
            worker_mcp: &self.worker_mcp,
            targets: &target(contract)?.target_paths,
            env: &env,
            confined: self.sandbox.mode != butler_worker::sandbox::SandboxMode::Off,
        })?;
        Ok(())
    }
}

pub(super) fn open_git(path: &Path, env: &[(String, String)]) -> Result<TaskGit, MaidError> {
    let repo = butler_worker::git::GitRepo::discover(path)?.with_command_env(env.iter().cloned());
    Ok(TaskGit::from_repo(repo))
}

/// The repository's own ledger file (`<git common dir>/butler/ledger.db`).
pub(super) fn repository_ledger(main: &TaskGit) -> PathBuf {
    main.common_dir()
        .join(butler_worker::ledger::LEDGER_DIR)
        .join(butler_worker::ledger::LEDGER_FILE)
}

pub(super) fn open_ledger(path: &Path, clock: &SharedClock) -> Result<Ledger, MaidError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| MaidError::io("creating", dir, e))?;
    }
    Ok(Ledger::open_file(path)?.with_clock(clock.clone()))
}

/// The implementation target: the Maid runs only `implement` tasks.
pub(super) fn target(contract: &TaskContract) -> Result<&ImplementTarget, MaidError> {
    contract
        .implement()
        .ok_or_else(|| ContractError::NotImplementation(contract.intent().to_owned()).into())
}

/// [0] A task starts from a record and is accepted onto one: unrecorded changes in the
/// Brain's tree stop both, before anything is created or changed.
pub(super) fn require_recorded(main: &TaskGit) -> Result<(), MaidError> {
    // A repository nested in the tree is unrecorded work too (it can never be recorded here).
    let status = main.tree_status()?;
    let mut dirty = status.changed;
    dirty.extend(status.nested.into_iter().map(|dir| format!("{dir}/")));
    dirty.sort();
    if dirty.is_empty() {
        Ok(())
    } else {
        Err(MaidError::UnrecordedChanges(dirty))
    }
}
