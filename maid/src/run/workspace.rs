//! [0]–[1] The task's workspace, set up once per task: its branch from the current record in a
//! worktree outside the git directory, and what its agent runs with (adapter, environment with
//! its own `HOME` and `TMPDIR`, sandbox, the worker MCP's channel).

use std::path::PathBuf;

use butler_worker::git::TaskGit;
use butler_worker::process::ChildEnv;

use super::TaskRun;
use super::context::require_recorded;
use crate::agent::{AgentAdapter, WorkerMcpCommand};
use crate::env::prepare_isolated_home;
use crate::error::MaidError;
use crate::sandbox::{TaskDirs, TaskSandbox};
use crate::worker_channel::WorkerChannel;
use butler_worker::sandbox::deny_read::UserDirs;

/// The task's worktree and what its agent runs with.
pub(super) struct Workspace {
    pub wt: TaskGit,
    /// The record the task started from.
    pub base: String,
    pub agent: Box<dyn AgentAdapter>,
    /// The agent's environment.
    pub env: ChildEnv,
    pub sandbox: TaskSandbox,
    pub channel: WorkerChannel,
    /// The worker MCP's command for this task (its task file and notes file appended).
    pub worker_mcp: WorkerMcpCommand,
}

impl TaskRun<'_> {
    /// [0] Unrecorded changes in the Brain's tree stop the task before anything starts.
    /// [1] The task branch from the current record, in its worktree; then the agent's setup.
    pub(super) async fn open_workspace(&self) -> Result<Workspace, MaidError> {
        let (wt, base) = self
            .blocking(|s| {
                require_recorded(&s.main)?;
                let base = s.main.head_sha()?;
                let task_dir = &s.paths.task_dir;
                std::fs::create_dir_all(task_dir)
                    .map_err(|e| MaidError::io("creating", task_dir, e))?;
                let worktree = &s.paths.worktree;
                let wt = s.main.add_worktree(worktree, &s.id().branch(), &base)?;
                s.with_ledger(|l| Ok(l.set_task_worktree(s.id(), &worktree.to_string_lossy())?))?;
                Ok((wt, base))
            })
            .await?;
        let ctx = &self.shared.ctx;
        let paths = self.paths();
        let home = paths.agent_dir.join("home");
        let (agent, policy, mut env) = ctx.agent_for(self.contract(), &home);
        if !ctx.real_home {
            prepare_isolated_home(&home, &policy.git_identity)?;
        }
        // The agent's own temp dir; the sandbox lets it write there and nowhere else in /tmp.
        let agent_tmp = paths.agent_dir.join("tmp");
        std::fs::create_dir_all(&agent_tmp)
            .map_err(|e| MaidError::io("creating", &agent_tmp, e))?;
        env.set("TMPDIR", &agent_tmp);
        let real_home = crate::env::lookup(&env, "HOME")
            .filter(|_| ctx.real_home)
            .map(PathBuf::from);
        // The user's stores are found from Butler's own environment: the agent's `HOME` is
        // usually its own directory, but the secrets are the user's.
        let user = UserDirs::from_lookup(|name| {
            crate::env::lookup(&ctx.parent_env, name).map(PathBuf::from)
        });
        let mut sandbox = TaskSandbox::new(
            &ctx.sandbox,
            TaskDirs {
                worktree: &paths.worktree,
                agent_dir: &paths.agent_dir,
                verify_tmp: &paths.verify_tmp,
                real_home: real_home.as_deref(),
                worktrees_root: ctx.worktrees_root.as_deref(),
                repository: [self.shared.main.workdir(), self.shared.main.common_dir()],
            },
            &user,
            &paths.task_dir,
        )?;
        // The task's egress proxy, when its network goes through one: it admits the agent's
        // model endpoints (read from the environment the agent gets) and `network_allow`.
        sandbox.start_egress(agent.model_endpoints(env.vars()), ctx.clock.clone())?;
        sandbox.proxy_env(&mut env);
        let channel = WorkerChannel::new(&paths.task_dir, &paths.agent_dir);
        channel.write_task(self.contract())?;
        let worker_mcp = channel.command(&ctx.worker_mcp);
        Ok(Workspace {
            wt,
            base,
            agent,
            env,
            sandbox,
            channel,
            worker_mcp,
        })
    }
}
