//! A task run on a Kubernetes cluster (`[runner] kind = "kubernetes"`): its base sent to a
//! private ref of the shared destination, its Job run to its end (the pod runs the very same
//! task run, see [`crate::runner::pod`]) with the pod's log as the task's progress and log, then
//! the Result Contract checked, the task line fetched into its local branch (it must descend
//! from the base), the attempts' evidence and the agent's notes imported into the ledger, and
//! the private refs deleted. What the tool-config guard reads is computed here from the fetched
//! line, not taken from the pod.

use std::sync::Mutex;

use butler_worker::config::RunnerConfig;
use butler_worker::git::Access;
use butler_worker::tool_config::tool_config_changes;

use super::{Progress, TaskRun};
use crate::activity::{LogEntry, TaskLog};
use crate::cluster::{Cluster, ClusterFailure, JobRequest, LogItem, job_name, label_value};
use crate::contract::{ImplementEvidence, Outcome, ResultContract};
use crate::error::MaidError;
use crate::run::wire::PodMessage;

/// The destination's remote when `[runner] destination` is unset.
const DEFAULT_DESTINATION: &str = "origin";

/// Where the task's refs go and what its Job is called.
struct Names {
    job: String,
    destination: String,
    base: String,
    base_ref: String,
    push_ref: String,
    project: String,
    clone_mark: String,
}

impl TaskRun<'_> {
    /// The whole run on the cluster.
    pub(super) async fn run_remote(
        &self,
        config: &RunnerConfig,
    ) -> Result<ImplementEvidence, MaidError> {
        let wanted = config
            .destination
            .clone()
            .unwrap_or_else(|| DEFAULT_DESTINATION.to_owned());
        let names = self
            .blocking(move |s| {
                super::context::require_recorded(&s.main)?;
                let base = s.main.head_sha()?;
                let destination = match s.main.repo().remote_url(&wanted)? {
                    Some(url) => url,
                    None if wanted.contains("://") || wanted.starts_with('/') => wanted.clone(),
                    None => return Err(MaidError::NoDestination(wanted)),
                };
                let clone_mark = s.with_ledger(|l| Ok(l.clone_mark().to_owned()))?;
                let job = job_name(&clone_mark, s.id().as_str());
                let names = Names {
                    base_ref: format!("refs/heads/butler/base/{job}"),
                    push_ref: format!("refs/heads/butler/tasks/{job}"),
                    project: label_value(
                        &s.main
                            .workdir()
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    ),
                    job,
                    destination,
                    base,
                    clone_mark,
                };
                // Butler's own transport and credentials (the user's), never the pod's.
                s.main.repo().push_commit(
                    &names.destination,
                    &names.base,
                    &names.base_ref,
                    Access::User,
                )?;
                Ok(names)
            })
            .await?;
        let outcome = self.run_job(config, &names).await;
        let cleanup = |refs: Vec<String>| {
            let destination = names.destination.clone();
            self.blocking(move |s| {
                for r in refs {
                    if let Err(e) = s
                        .main
                        .repo()
                        .delete_remote_ref(&destination, &r, Access::User)
                    {
                        tracing::warn!(%e, r, "a task's private ref could not be deleted");
                    }
                }
                Ok(())
            })
        };
        let result = match outcome {
            Ok(Some(result)) => result,
            Ok(None) => {
                cleanup(vec![names.base_ref.clone(), names.push_ref.clone()]).await?;
                return Ok(ImplementEvidence {
                    branch: self.contract().task_id.branch(),
                    outcome: Outcome::Cancelled,
                    attempts: Vec::new(),
                    tool_config: Vec::new(),
                });
            }
            Err(e) => {
                cleanup(vec![names.base_ref.clone(), names.push_ref.clone()]).await?;
                return Err(e);
            }
        };
        let imported = self.import(result, &names).await;
        cleanup(vec![names.base_ref.clone(), names.push_ref.clone()]).await?;
        imported
    }

    /// The Job to its end: the pod's Result Contract (`None`: cancelled).
    async fn run_job(
        &self,
        config: &RunnerConfig,
        names: &Names,
    ) -> Result<Option<ResultContract>, MaidError> {
        let contract = self.contract();
        let constraints = &contract.constraints;
        let attempts = u64::from(constraints.max_attempts.max(1));
        let per_attempt = constraints.timeout_s + self.shared.ctx.test_timeout.as_secs();
        let contract_json = serde_json::to_string(contract)
            .map_err(|e| MaidError::Remote(format!("the contract cannot be sent: {e}")))?;
        let request = JobRequest {
            name: names.job.clone(),
            labels: vec![
                (
                    "app.kubernetes.io/managed-by".to_owned(),
                    "butler".to_owned(),
                ),
                ("butler.dev/project".to_owned(), names.project.clone()),
                (
                    "butler.dev/task".to_owned(),
                    label_value(contract.task_id.as_str()),
                ),
                (
                    "butler.dev/clone".to_owned(),
                    label_value(&names.clone_mark),
                ),
            ],
            env: vec![
                ("BUTLER_TASK_CONTRACT".to_owned(), contract_json),
                (
                    "BUTLER_TASK_DESTINATION".to_owned(),
                    names.destination.clone(),
                ),
                ("BUTLER_TASK_BASE".to_owned(), names.base.clone()),
                ("BUTLER_TASK_BASE_REF".to_owned(), names.base_ref.clone()),
                ("BUTLER_TASK_PUSH_REF".to_owned(), names.push_ref.clone()),
            ],
            deadline_s: config
                .active_deadline_s
                .unwrap_or(attempts * per_attempt + crate::cluster::DEADLINE_MARGIN_S),
        };
        let env = &self.shared.ctx.parent_env;
        let home = crate::env::lookup(env, "HOME").map(std::path::PathBuf::from);
        let cluster = Cluster::connect(
            config,
            crate::env::lookup(env, "KUBECONFIG"),
            home.as_deref(),
        )
        .await?;
        let log = TaskLog::in_dir(&self.paths().task_dir);
        let clock = self.shared.ctx.clock.clone();
        let last: Mutex<Option<PodMessage>> = Mutex::new(None);
        let on_line = |item: LogItem| match item {
            LogItem::Line(line) => match PodMessage::from_line(&line) {
                // The task's end is reported once, by `run_task`, after the import.
                Some(PodMessage::Progress(Progress::Finished { .. })) => {}
                Some(PodMessage::Progress(p)) => {
                    // The agent's own events, which the pod logged, for `butler task log`.
                    if let Progress::Activity(seen) = &p {
                        log.append(&LogEntry::Step {
                            at: clock.now(),
                            text: seen.describe(),
                        });
                    }
                    (self.progress)(p);
                }
                Some(end) => *last.lock().expect("never poisoned") = Some(end),
                None => {}
            },
            LogItem::Resumed(n) => log.append(&LogEntry::Step {
                at: clock.now(),
                text: format!("the pod's log stream was cut; resumed ({n})"),
            }),
            LogItem::Waiting(reason, message) => log.append(&LogEntry::Step {
                at: clock.now(),
                text: format!("the pod waits to start: {reason}: {message}"),
            }),
            LogItem::Ended => {}
        };
        let Some(end) = cluster.run(&request, &on_line, self.cancel).await? else {
            return Ok(None);
        };
        let message = end
            .termination_message
            .as_deref()
            .and_then(PodMessage::from_line)
            .or_else(|| last.lock().expect("never poisoned").take());
        match message {
            Some(PodMessage::Result(result)) => Ok(Some(result)),
            Some(PodMessage::Error(text)) => Err(MaidError::Remote(text)),
            Some(PodMessage::Progress(_)) | None => Err(ClusterFailure::NoResult {
                reason: end.reason,
                exit_code: end.exit_code,
            }
            .into()),
        }
    }

    /// The pod's result brought home: checked, its line fetched, its evidence in the ledger.
    async fn import(
        &self,
        result: ResultContract,
        names: &Names,
    ) -> Result<ImplementEvidence, MaidError> {
        let id = self.contract().task_id.clone();
        let branch = id.branch();
        let evidence = match result.implementation() {
            Some(e) if result.task_id == id && e.branch == branch => e.clone(),
            _ => {
                return Err(MaidError::Remote(format!(
                    "the pod handed back a result that is not task {id}'s implementation"
                )));
            }
        };
        let (destination, push_ref, base) = (
            names.destination.clone(),
            names.push_ref.clone(),
            names.base.clone(),
        );
        self.blocking(move |s| {
            // Fetched as a new line; it stays only when it descends from the base.
            let repo = s.main.repo();
            let line = evidence.branch.clone();
            let local = format!("refs/heads/{line}");
            let tip = repo
                .fetch_line(&destination, &push_ref, &line, Access::User)?
                .ok_or_else(|| {
                    MaidError::Remote(format!("the destination has no task line at {push_ref}"))
                })?;
            if !s.main.is_ancestor(&base, &tip)? {
                repo.set_local_ref(&local, None)?;
                return Err(MaidError::Remote(format!(
                    "the task line {tip} does not descend from its base {base}"
                )));
            }
            let tool_config = tool_config_changes(&s.main.changed_since_fork(&base, &local)?);
            s.with_ledger(|l| {
                for attempt in &evidence.attempts {
                    l.begin_attempt(s.id(), attempt.attempt)?;
                    l.finish_attempt(s.id(), attempt)?;
                    for note in &attempt.agent_notes {
                        l.add_task_note(s.id(), note.kind, &note.text)?;
                    }
                }
                Ok(())
            })?;
            Ok(ImplementEvidence {
                tool_config,
                ..evidence
            })
        })
        .await
    }
}
