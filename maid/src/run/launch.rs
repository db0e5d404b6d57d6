//! [4] The agent's launch and supervision: its command for this attempt, the limits it runs
//! under (wall clock, stagnation), its sandbox, and its log kept as evidence.

use std::time::{Duration, Instant};

use butler_worker::process::{ChildSpec, Ending, Limits, Stagnation};

use super::attempt::AttemptStart;
use super::workspace::Workspace;
use super::{Progress, TaskRun};
use crate::activity::{AgentWatch, LogEntry, TaskLog};
use crate::agent::Launch;
use crate::contract::DirectGitFinding;
use crate::error::MaidError;
use crate::sandbox::Confinement;
use butler_worker::contract::Activity;

/// How the agent's run ended and what it printed.
pub(super) struct AgentRun {
    pub ending: Ending,
    /// stdout then stderr (bounded by the supervisor).
    pub output: String,
    /// The helper it ran under (the reaper, and the sandbox when applied).
    pub confined: Option<Confinement>,
    /// When it was launched.
    pub started: Instant,
    /// What its own output showed of its work (events, usage).
    pub activity: Activity,
    /// Permissions it took away from Butler's state or its worktree, put back right after it
    /// ended.
    pub modes_restored: Vec<DirectGitFinding>,
    /// Its connections through the task's egress proxy (`None` without one).
    pub egress: Option<butler_worker::egress::Connections>,
}

impl AgentRun {
    /// The task was cancelled while the agent ran.
    pub(crate) fn cancelled(&self) -> bool {
        matches!(self.ending, Ending::Cancelled)
    }
}

impl TaskRun<'_> {
    /// Launches the agent with `prompt` in the worktree and supervises it to its end.
    pub(super) async fn run_agent(
        &self,
        workspace: &Workspace,
        start: &AttemptStart,
        prompt: &str,
    ) -> Result<AgentRun, MaidError> {
        let attempt = start.attempt;
        let ctx = &self.shared.ctx;
        let paths = self.paths();
        let target_paths = &super::context::target(self.contract())?.target_paths;
        let launch = Launch {
            prompt,
            workdir: &paths.worktree,
            task_dir: &paths.task_dir,
            scratch: &paths.agent_dir,
            worker_mcp: &workspace.worker_mcp,
            targets: target_paths,
            env: &workspace.env,
            confined: workspace.sandbox.confines(),
        };
        let command = workspace.agent.command(&launch)?;
        command.write_files()?;
        let mut limits = Limits::new(Duration::from_secs(self.contract().constraints.timeout_s));
        limits.grace = ctx.grace;
        limits.stagnation = Some(Stagnation {
            after: ctx.stagnation,
            watch: Some(paths.worktree.clone()),
        });
        (self.progress)(Progress::AgentRunning { attempt });
        let started = Instant::now();
        let spec = ChildSpec {
            program: command.program.into_os_string(),
            args: command.args,
            cwd: paths.worktree.clone(),
            env: workspace.env.clone(),
            stdin: command.stdin,
            reaper: false,
        };
        let confined = workspace.sandbox.agent(attempt)?;
        let spec = match &confined {
            Some(c) => c.wrap(spec, limits.grace),
            None => spec,
        };
        // The agent's output as events: streamed, logged, watched for loops.
        let watch = AgentWatch::new(
            workspace.agent.output_format(),
            ctx.loops,
            &paths.worktree,
            TaskLog::in_dir(&paths.task_dir),
            attempt,
        );
        let on_event = |seen| (self.progress)(Progress::Activity(seen));
        let (run, activity) =
            crate::activity::run_agent(spec, &limits, self.cancel, watch, &on_event).await;
        // Before anything of Butler's is read or written again.
        let modes_restored: Vec<DirectGitFinding> =
            super::modes::put_back(&start.modes, &paths.worktree, self.shared.main.workdir())
                .into_iter()
                .collect();
        TaskLog::in_dir(&paths.task_dir).append(&LogEntry::AgentEnded {
            attempt,
            ending: run.ending.clone(),
        });
        let egress = workspace.sandbox.take_egress().await;
        let log = paths.task_dir.join(format!("attempt-{attempt}.log"));
        let output = run.stdout.text() + &run.stderr.text();
        std::fs::write(&log, &output).map_err(|e| MaidError::io("writing", &log, e))?;
        Ok(AgentRun {
            ending: run.ending,
            output,
            confined,
            started,
            activity,
            modes_restored,
            egress,
        })
    }
}
