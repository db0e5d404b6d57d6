//! One task's run: precheck, task branch in its own worktree, baseline, prompt, launch under
//! supervision, detection and restoration of direct git use and of writes to the Brain's tree,
//! the Maid's own commit as a ledger record, verification, and retries with a compact prompt —
//! then the Result Contract.
//!
//! `TaskRun` holds what every step shares; each step is a method in a module of its own:
//!
//! | step | module |
//! |---|---|
//! | the worktree and the agent's setup, once per task | `workspace` |
//! | an attempt's baseline (the worktree's git, the Brain's tree) | `attempt` |
//! | the agent's launch and supervision | `launch` |
//! | permissions of Butler's state and of the worktree, put back after the agent and the tests | `modes` |
//! | direct git, outside writes, planted configuration: found and undone | `inspect` |
//! | scope, and the Maid's record of the in-scope work | `record` |
//! | tests, file checks, guards | `verify` |
//! | what verification left in the worktree, undone | `artifacts` |
//! | the attempt's evidence in the ledger | `evidence` |
//!
//! Accepting and discarding a finished task are in `accept`; the journal that finds tasks
//! whose process died (and ends what their agent left running) is in `journal`; stopping every
//! task before the process exits is in `stop`.
//!
//! Tasks, attempts with their evidence, and the agent's notes are stored in the ledger. Every
//! git operation goes through the git worker's [`TaskGit`]. Files kept as evidence live in the
//! task's directory `<git common dir>/butler/tasks/<id>/`, which the agent cannot write. The
//! worktree lives outside the git directory (under the user's data directory, see
//! [`MaidContext::worktrees_root`]), beside the agent's own directory `task-<id>.agent/` (its
//! `HOME`, `TMPDIR` and the worker MCP's notes file).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use butler_worker::git::TaskGit;
use butler_worker::ledger::{Ledger, TaskEnd};
use butler_worker::tool_config::{ToolConfigChange, tool_config_changes};
use tokio_util::sync::CancellationToken;

use crate::activity::{LogEntry, TaskLog};
use crate::contract::{
    AttemptEvidence, ImplementEvidence, ImplementRequest, Outcome, ResultContract, TaskContract,
    TaskId,
};
use crate::error::MaidError;

mod accept;
mod artifacts;
mod attempt;
mod context;
mod evidence;
mod inspect;
mod journal;
mod launch;
mod modes;
mod paths;
mod progress;
mod record;
mod remote;
mod stop;
mod verify;
pub mod wire;
mod workspace;

pub use accept::{Accepted, accept, discard};
pub use context::MaidContext;
pub use journal::mark_interrupted;
pub use progress::Progress;
pub use stop::TaskStop;

use context::{open_ledger, require_recorded};
use journal::TASK_OPERATION;
use paths::{Paths, worktrees_dir};

/// Runs blocking work (git, SQLite) off the async executor; its panic continues here.
pub(crate) async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    butler_worker::offload::blocking(f)
        .await
        .unwrap_or_else(|stopped| stopped.resume())
}

/// [0] and the task's creation: refuses when the Brain's tree has unrecorded changes,
/// validates the request into a Task Contract, and stores it in the ledger under a new task id.
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
        // A task run elsewhere finds its agent in its image.
        if ctx.runner.kind == butler_worker::config::RunnerKind::Local {
            ctx.check_agent(&draft, main.workdir())?;
        }
        let ledger = open_ledger(&ctx.ledger_file(&main), &ctx.clock)?;
        Ok(ledger.create_task(|_| draft)?)
    })
    .await
}

/// Runs one task (created by [`prepare_task`]) to its end and returns the Result Contract.
/// The task's end (or the error that stopped it) is stored in the ledger.
pub async fn run_task(
    ctx: MaidContext,
    contract: TaskContract,
    progress: &(dyn Fn(Progress) + Send + Sync),
    cancel: CancellationToken,
) -> Result<ResultContract, MaidError> {
    // Counted as running (and stopped with the process) until it returns.
    let (_running, cancel) = ctx.stop.enter(&cancel);
    let shared = blocking(move || Shared::open(ctx, contract)).await?;
    let shared = Arc::new(shared);
    // The task's steps go to its log too (`butler task log`).
    let log = TaskLog::in_dir(&shared.paths.task_dir);
    let (max, clock) = (
        shared.contract.constraints.max_attempts,
        shared.ctx.clock.clone(),
    );
    let progress = |p: Progress| {
        if let Some(entry) = p.log_entry(max, clock.now()) {
            log.append(&entry);
        }
        progress(p);
    };
    let journal = {
        let shared = shared.clone();
        blocking(move || {
            shared.with_ledger(|l| {
                mark_interrupted(l)?;
                let id = &shared.contract.task_id;
                if l.task(id)?.is_none() {
                    return Err(MaidError::NoSuchTask(id.to_string()));
                }
                Ok(l.begin_operation(TASK_OPERATION, std::process::id(), id.as_str())?)
            })
        })
        .await?
    };
    let run = TaskRun {
        shared: shared.clone(),
        progress: &progress,
        cancel: &cancel,
    };
    let task_id = shared.contract.task_id.clone();
    let result = run
        .run()
        .await
        .map(|evidence| ResultContract::implement(task_id.clone(), evidence));
    if let Err(e) = &result {
        log.append(&LogEntry::Stopped {
            at: clock.now(),
            error: e.to_string(),
        });
    }
    let end = match &result {
        Ok(r) => TaskEnd::Result(r.clone()),
        Err(e) => TaskEnd::Error(e.to_string()),
    };
    let stored = blocking(move || {
        shared.with_ledger(|l| {
            l.finish_task(&task_id, &end)?;
            Ok(l.end_operation(journal)?)
        })
    })
    .await;
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

/// What every step of a run reads, shared with the steps that block (git, SQLite).
struct Shared {
    ctx: MaidContext,
    contract: TaskContract,
    /// The Brain's repository.
    main: TaskGit,
    ledger: Mutex<Ledger>,
    /// The repository's task worktrees directory.
    worktrees: PathBuf,
    paths: Paths,
}

impl Shared {
    fn open(ctx: MaidContext, contract: TaskContract) -> Result<Shared, MaidError> {
        let main = ctx.main_git()?;
        let ledger = open_ledger(&ctx.ledger_file(&main), &ctx.clock)?;
        let worktrees = worktrees_dir(ctx.worktrees_root.as_deref(), &main);
        let paths = Paths::of(&worktrees, main.common_dir(), contract.task_id.as_str());
        Ok(Shared {
            ctx,
            contract,
            main,
            ledger: Mutex::new(ledger),
            worktrees,
            paths,
        })
    }

    fn id(&self) -> &TaskId {
        &self.contract.task_id
    }

    /// The modes of Butler's state: the repository's git data with the ledger and the evidence
    /// (the worktrees left out when they live in it), the ledger's own directory, the Brain's
    /// top directory, the worktrees' directory and its parent, and the tops of the task's
    /// worktree, of the agent's directory and of the verify commands' temp dir.
    fn state_modes(&self) -> modes::StateModes {
        let common = self.main.common_dir();
        let ledger = self.ctx.ledger_file(&self.main);
        let ledger_dir = ledger.parent().filter(|d| !d.starts_with(common));
        let mut trees = vec![common];
        trees.extend(ledger_dir);
        let mut singles = vec![
            self.main.workdir(),
            self.worktrees.as_path(),
            self.paths.worktree.as_path(),
            self.paths.agent_dir.as_path(),
            self.paths.verify_tmp.as_path(),
        ];
        singles.extend(self.worktrees.parent());
        modes::StateModes::take(&trees, &[self.worktrees.as_path()], &singles)
    }

    fn with_ledger<T>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, MaidError>,
    ) -> Result<T, MaidError> {
        let guard = self
            .ledger
            .lock()
            .expect("the ledger lock is never poisoned");
        f(&guard)
    }
}

/// One task's run: the shared state, where progress goes, and the token that cancels it.
/// Its steps are methods (see the module's table).
struct TaskRun<'a> {
    shared: Arc<Shared>,
    /// Behind `dyn`, so the steps are compiled once, here, and not again in every crate that
    /// runs a task with a progress callback of its own type.
    progress: &'a (dyn Fn(Progress) + Send + Sync),
    cancel: &'a CancellationToken,
}

impl TaskRun<'_> {
    /// Runs `f` on the shared state off the async executor.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared) -> Result<T, MaidError> + Send + 'static,
    ) -> Result<T, MaidError> {
        let shared = self.shared.clone();
        blocking(move || f(&shared)).await
    }

    fn contract(&self) -> &TaskContract {
        &self.shared.contract
    }

    fn paths(&self) -> &Paths {
        &self.shared.paths
    }

    /// The whole run: the workspace once, then attempts until one passes, the task is
    /// cancelled, or the attempts run out.
    async fn run(&self) -> Result<ImplementEvidence, MaidError> {
        let runner = &self.shared.ctx.runner;
        if runner.kind == butler_worker::config::RunnerKind::Kubernetes {
            return self.run_remote(runner).await;
        }
        let workspace = self.open_workspace().await?;
        let max_attempts = self.contract().constraints.max_attempts;
        let mut attempts: Vec<AttemptEvidence> = Vec::new();
        let mut outcome = Outcome::Failed;
        for attempt in 1..=max_attempts {
            (self.progress)(Progress::AttemptStarted { attempt });
            let start = self.begin_attempt(&workspace, attempt).await?;
            let prompt = self.prompt(attempt, attempts.last());
            let mut run = self.run_agent(&workspace, &start, &prompt).await?;
            let cancelled = run.cancelled();
            let mut findings = std::mem::take(&mut run.modes_restored);
            findings.extend(
                self.inspect_and_restore(&workspace, start.attempt, &start.baseline, &start.brain)
                    .await?,
            );
            let recorded = self.record(&workspace, &start, cancelled).await?;
            let mut checked = self
                .verify(&workspace, &start, &recorded, cancelled)
                .await?;
            findings.append(&mut checked.findings);
            let has_work = recorded.head != workspace.base;
            let passed = !cancelled
                && checked.verification.passed()
                && has_work
                && !self.cancel.is_cancelled();
            let item = self
                .evidence(&workspace, start, run, findings, recorded, checked)
                .await?;
            attempts.push(item);
            if cancelled || self.cancel.is_cancelled() {
                outcome = Outcome::Cancelled;
                break;
            }
            // [8] Success, or back to [3].
            if passed {
                outcome = Outcome::Succeeded;
                break;
            }
            // Looping again after a retry that named the loop: a third try would too.
            if crate::activity::loops::loops_again(&attempts) {
                break;
            }
            if attempt < max_attempts {
                (self.progress)(Progress::Retrying {
                    attempt: attempt + 1,
                });
            }
        }
        Ok(ImplementEvidence {
            branch: self.contract().task_id.branch(),
            outcome,
            attempts,
            tool_config: self.tool_config(&workspace).await?,
        })
    }

    /// The files the task's line changes (since it forked) that configure tools or run code.
    async fn tool_config(
        &self,
        workspace: &workspace::Workspace,
    ) -> Result<Vec<ToolConfigChange>, MaidError> {
        let base = workspace.base.clone();
        self.blocking(move |s| {
            let tip = format!("refs/heads/{}", s.contract.task_id.branch());
            Ok(tool_config_changes(
                &s.main.changed_since_fork(&base, &tip)?,
            ))
        })
        .await
    }
}
