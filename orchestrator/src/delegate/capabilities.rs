//! The capabilities Butler registers with the delegation engine — intents that need more than
//! steps, written over the functions the Brain's own tools use:
//!
//! | intent | does | approval |
//! |---|---|---|
//! | `git_commit` | `work_record` (target `message`) | when listed in `require_approval_for` |
//! | `git_push` | `work_publish` | always |
//! | `commit_push` | `work_record`, then `work_publish` | always |
//! | `git_pull` | `work_vcs(["pull", "--ff-only"])` | when listed |
//! | `implement` | the ImplementMaid (`delegation_mode: agent`) | never (the Brain accepts) |
//! | `bootstrap_context` | what a Brain needs after compaction, in one answer | never |
//!
//! A failure of the work itself (nothing to share, no destination, a refused hook) is a failed
//! step with the reason and what to do, never a tool error: the evidence says why.

use std::sync::Arc;
use std::time::Instant;

use butler_worker::contract::DelegationMode;
use butler_worker::contract::{
    ImplementRequest, StepEvidence, StepKind, StepOutcome, TaskContract, TaskStatus,
};
use butler_worker::ops::{
    BoxFuture, Capability, CapabilityCall, CapabilityError, CapabilityOutcome, Plan, Registry,
    Usage, running,
};
use serde_json::{Value, json};

use crate::catalogue::{Key, fill, text};
use crate::error::{ToolError, WorkError};
use crate::session::{Project, blocking};
use crate::tool::Tool;
use crate::work::{observe, publish, record, vcs};

/// Butler's capabilities for `project`.
pub fn registry(project: &Arc<Project>) -> Registry {
    Registry::new()
        .with(Git {
            project: project.clone(),
        })
        .with(Implement {
            project: project.clone(),
        })
        .with(Context {
            project: project.clone(),
        })
}

/// One action's evidence.
fn action(step: u32, what: impl Into<String>, started: Instant) -> StepEvidence {
    StepEvidence {
        step,
        kind: StepKind::Capability,
        what: what.into(),
        outcome: StepOutcome::Passed,
        ending: None,
        output_tail: String::new(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        detail: None,
        leftovers: None,
        unconfined: None,
        changed: Vec::new(),
        undo: None,
    }
}

/// A failed action: the Brain-facing summary and hint of the error, as the one mapping words
/// them.
fn failed(mut e: StepEvidence, err: WorkError, tool: Tool) -> StepEvidence {
    let shown = ToolError::from_work(err, tool);
    e.outcome = StepOutcome::Failed;
    e.detail = Some(format!(
        "{} ({}): {}",
        shown.summary,
        shown.code.as_str(),
        shown.hint
    ));
    e
}

/// An intent's usage, its texts (`summary`, the target fields', `approval`) in the current
/// language.
fn usage(intent: &str, summary: Key, target: &[(&str, Key)], approval: Option<Key>) -> Usage {
    let example_target: serde_json::Map<String, Value> = target
        .iter()
        .map(|(k, _)| ((*k).to_owned(), json!(format!("<{k}>"))))
        .collect();
    Usage {
        intent: intent.to_owned(),
        summary: text(summary).to_owned(),
        delegation_mode: if intent == "implement" {
            DelegationMode::Agent
        } else {
            DelegationMode::KnownOnly
        },
        target: target
            .iter()
            .map(|(k, v)| ((*k).to_owned(), text(*v).to_owned()))
            .collect(),
        approval: approval.map(|k| text(k).to_owned()),
        example: json!({"intent": intent, "target": example_target,
                        "delegation_mode": if intent == "implement" { "agent" } else { "known_only" }}),
    }
}

/// The record message of a `git_commit` / `commit_push` contract.
fn message(contract: &TaskContract) -> Result<String, CapabilityError> {
    let target = match &contract.work {
        butler_worker::contract::Work::Operation { target, .. } => target,
        butler_worker::contract::Work::Implement(_) => {
            return Err(CapabilityError::Failed("not an operation".into()));
        }
    };
    let given = target.0.get("message").cloned().unwrap_or_default();
    record::validate_message(&given).map_err(|_| CapabilityError::Input {
        field: "target.message".into(),
        reason: text(Key::ArgGiveMessage).into(),
    })
}

/// `git_commit`, `git_push`, `commit_push`, `git_pull`.
struct Git {
    project: Arc<Project>,
}

impl Git {
    /// What recording all current work would record, one plan detail a file with its content
    /// id, and the same as facts the approval is bound to (`path id`).
    async fn to_record(&self) -> Result<(Vec<String>, Vec<String>), CapabilityError> {
        let files = blocking(&self.project, |p| Ok(p.repo.uncommitted_contents()?))
            .await
            .map_err(|e| CapabilityError::Failed(e.to_string()))?;
        let details = files
            .iter()
            .map(|(path, id)| {
                let shown: String = id.chars().take(12).collect();
                fill(Key::StepToRecord, &[("path", path), ("id", &shown)])
            })
            .collect();
        let binds = files
            .into_iter()
            .map(|(path, id)| format!("{path} {id}"))
            .collect();
        Ok((details, binds))
    }

    /// Where a publish would share to (shown), its plan details, and the facts the approval is
    /// bound to: the destination and the commits to share.
    async fn to_share(&self) -> Result<(String, Vec<String>, Vec<String>), CapabilityError> {
        let found = blocking(&self.project, |p| {
            let Some(dest) = p.repo.destination()? else {
                return Ok(None);
            };
            let pending = p.repo.unpublished(&dest, 10)?;
            Ok(Some((format!("{}/{}", dest.remote, dest.branch), pending)))
        })
        .await
        .map_err(|e| CapabilityError::Failed(e.to_string()))?;
        Ok(match found {
            Some((destination, pending)) => {
                let mut details =
                    vec![fill(Key::StepDestination, &[("destination", &destination)])];
                let list = if pending.shas.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {}",
                        pending
                            .shas
                            .iter()
                            .map(|s| s.chars().take(10).collect::<String>())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                details.push(fill(
                    Key::StepUnpublished,
                    &[("n", &pending.count), ("list", &list)],
                ));
                let mut binds = vec![destination.clone(), pending.count.to_string()];
                binds.extend(pending.shas);
                (destination, details, binds)
            }
            None => (
                text(Key::StepNoDestination).to_owned(),
                Vec::new(),
                Vec::new(),
            ),
        })
    }

    async fn record(&self, step: u32, message: String) -> (StepEvidence, Option<Value>) {
        let started = Instant::now();
        let shown = fill(Key::StepRecordAll, &[("message", &message)]);
        let req = record::RecordRequest {
            message: record::Message::Given(message),
            issue_ids: None,
            allow_sensitive: Vec::new(),
        };
        match blocking(&self.project, move |p| record::record(p, req)).await {
            Ok(done) => {
                let mut e = action(step, shown, started);
                e.detail = Some(match &done.record_id {
                    Some(id) => fill(Key::StepRecordedAs, &[("id", id), ("n", &done.files)]),
                    None => text(Key::StepNothingToRecord).to_owned(),
                });
                (
                    e,
                    Some(json!({"record_id": done.record_id, "files": done.files})),
                )
            }
            Err(err) => (
                failed(action(step, shown, started), err, Tool::WorkRecord),
                None,
            ),
        }
    }

    async fn publish(&self, step: u32) -> (StepEvidence, Option<Value>) {
        let started = Instant::now();
        match blocking(&self.project, |p| publish::publish(p, &[])).await {
            Ok(done) => {
                let mut e = action(
                    step,
                    fill(Key::StepShareWith, &[("destination", &done.destination)]),
                    started,
                );
                e.detail = Some(fill(Key::StepShared, &[("n", &done.published_records)]));
                (
                    e,
                    Some(json!({"published_records": done.published_records,
                                "destination": done.destination})),
                )
            }
            Err(err) => (
                failed(
                    action(step, text(Key::StepShareRecords), started),
                    err,
                    Tool::WorkPublish,
                ),
                None,
            ),
        }
    }

    async fn pull(&self, step: u32) -> (StepEvidence, Option<Value>) {
        let started = Instant::now();
        let args = vec!["pull".to_owned(), "--ff-only".to_owned()];
        let shown = text(Key::StepPull);
        match blocking(&self.project, move |p| vcs::vcs(p, args, None)).await {
            Ok((_, out)) => {
                let mut e = action(step, shown, started);
                e.output_tail = butler_worker::process::tail_of(
                    &format!("{}{}", out.output, out.messages),
                    butler_worker::ops::exec::OUTPUT_TAIL_BYTES,
                )
                .to_owned();
                (e, None)
            }
            Err(err) => (
                failed(action(step, shown, started), err, Tool::WorkVcs),
                None,
            ),
        }
    }
}

impl Capability for Git {
    fn name(&self) -> &'static str {
        "git"
    }

    fn intents(&self) -> &'static [&'static str] {
        &["git_commit", "git_push", "commit_push", "git_pull"]
    }

    fn usage(&self, intent: &str) -> Usage {
        match intent {
            "git_commit" => usage(
                intent,
                Key::UsageGitCommit,
                &[("message", Key::UsageFieldMessage)],
                Some(Key::UsageApprovalListed),
            ),
            "git_push" => usage(
                intent,
                Key::UsageGitPush,
                &[],
                Some(Key::UsageApprovalAlways),
            ),
            "commit_push" => usage(
                intent,
                Key::UsageCommitPush,
                &[("message", Key::UsageFieldMessage)],
                Some(Key::UsageApprovalAlways),
            ),
            _ => usage(
                intent,
                Key::UsageGitPull,
                &[],
                Some(Key::UsageApprovalListed),
            ),
        }
    }

    fn plan<'a>(
        &'a self,
        contract: &'a TaskContract,
    ) -> BoxFuture<'a, Result<Plan, CapabilityError>> {
        Box::pin(async move {
            match contract.intent() {
                "git_commit" => {
                    let message = message(contract)?;
                    Ok(Plan {
                        operation: fill(Key::PlanRecord, &[("message", &message)]),
                        details: Vec::new(),
                        binds: vec![message],
                        operations: vec!["git_commit"],
                        always_approve: false,
                    })
                }
                "git_push" => {
                    let (destination, details, binds) = self.to_share().await?;
                    Ok(Plan {
                        operation: fill(Key::PlanShare, &[("destination", &destination)]),
                        details,
                        binds,
                        operations: vec!["git_push"],
                        always_approve: true,
                    })
                }
                "commit_push" => {
                    let message = message(contract)?;
                    let (destination, mut details, shared) = self.to_share().await?;
                    // The files it would record, by content: the approval is void if any of
                    // them changes or another appears.
                    let (files, recorded) = self.to_record().await?;
                    details.extend(files);
                    let mut binds = vec![message.clone()];
                    binds.extend(shared);
                    binds.extend(recorded);
                    Ok(Plan {
                        operation: fill(
                            Key::PlanRecordShare,
                            &[("message", &message), ("destination", &destination)],
                        ),
                        details,
                        binds,
                        operations: vec!["git_commit", "git_push"],
                        always_approve: true,
                    })
                }
                _ => Ok(Plan {
                    operation: text(Key::StepPull).to_owned(),
                    details: Vec::new(),
                    binds: Vec::new(),
                    operations: vec!["git_pull"],
                    always_approve: false,
                }),
            }
        })
    }

    fn run(
        &self,
        call: CapabilityCall,
    ) -> BoxFuture<'_, Result<CapabilityOutcome, CapabilityError>> {
        Box::pin(async move {
            let contract = &call.contract;
            let (steps, output) = match contract.intent() {
                "git_commit" => {
                    let (e, out) = self.record(1, message(contract)?).await;
                    (vec![e], out)
                }
                "git_push" => {
                    let (e, out) = self.publish(1).await;
                    (vec![e], out)
                }
                "commit_push" => {
                    let (recorded, first) = self.record(1, message(contract)?).await;
                    if recorded.outcome != StepOutcome::Passed || call.cancel.is_cancelled() {
                        (vec![recorded], first)
                    } else {
                        (call.progress)(text(Key::StepSharingProgress).into(), 0.5);
                        let (shared, second) = self.publish(2).await;
                        (vec![recorded, shared], merge(first, second))
                    }
                }
                _ => {
                    let (e, out) = self.pull(1).await;
                    (vec![e], out)
                }
            };
            Ok(CapabilityOutcome::Done { steps, output })
        })
    }
}

fn merge(a: Option<Value>, b: Option<Value>) -> Option<Value> {
    match (a, b) {
        (Some(Value::Object(mut a)), Some(Value::Object(b))) => {
            a.extend(b);
            Some(Value::Object(a))
        }
        (a, None) => a,
        (None, b) => b,
        (_, b) => b,
    }
}

/// `implement`: the ImplementMaid runs the task with the configured agent.
struct Implement {
    project: Arc<Project>,
}

impl Capability for Implement {
    fn name(&self) -> &'static str {
        "implement"
    }

    fn intents(&self) -> &'static [&'static str] {
        &["implement"]
    }

    fn usage(&self, intent: &str) -> Usage {
        let mut u = usage(
            intent,
            Key::UsageImplement,
            &[
                ("goal", Key::UsageFieldGoal),
                ("spec", Key::UsageFieldSpec),
                ("target_paths", Key::UsageFieldTargetPaths),
            ],
            None,
        );
        u.example = json!({"intent": "implement", "delegation_mode": "agent",
            "target": {"goal": "<goal>", "spec": "<spec>", "target_paths": ["src/"]},
            "success_criteria": {"commands": [{"command": "cargo test"}]}});
        u
    }

    fn plan<'a>(
        &'a self,
        contract: &'a TaskContract,
    ) -> BoxFuture<'a, Result<Plan, CapabilityError>> {
        Box::pin(async move {
            let subject = contract
                .implement()
                .map(|t| t.subject())
                .unwrap_or_default();
            Ok(Plan {
                operation: fill(Key::PlanImplement, &[("subject", &subject)]),
                details: Vec::new(),
                binds: vec![subject],
                operations: vec!["implement"],
                always_approve: false,
            })
        })
    }

    fn run(
        &self,
        call: CapabilityCall,
    ) -> BoxFuture<'_, Result<CapabilityOutcome, CapabilityError>> {
        Box::pin(async move {
            let refused = |e: WorkError| {
                let shown = ToolError::from_work(e, Tool::SubmitTask);
                CapabilityError::Refused {
                    reason: shown.summary,
                    hint: shown
                        .hint
                        .replace(Tool::RunImplement.as_str(), Tool::SubmitTask.as_str()),
                }
            };
            let contract = call.contract;
            let target = contract
                .implement()
                .cloned()
                .ok_or_else(|| CapabilityError::Failed("not an implementation".into()))?;
            let request = ImplementRequest {
                goal: target.goal,
                spec: target.spec,
                target_paths: target.target_paths,
                test_commands: contract
                    .success_criteria
                    .commands
                    .iter()
                    .map(|c| c.command.clone())
                    .collect(),
                file_checks: contract
                    .success_criteria
                    .file_checks
                    .iter()
                    .map(Into::into)
                    .collect(),
                agent: contract.constraints.agent.map(|a| a.name().to_owned()),
                timeout_s: Some(contract.constraints.timeout_s),
                issue_id: contract.issue_id,
                allow_test_changes: contract.constraints.allow_test_changes,
            };
            let ctx = crate::implement::project_maid_context(&self.project).map_err(refused)?;
            let prepared = butler_maid::prepare_task(&ctx, request, &contract.requested_by)
                .await
                .map_err(|e| refused(crate::implement::maid_error(e)))?;
            let ledger = self
                .project
                .with_ledger(|l| Ok(l.path().to_path_buf()))
                .map_err(refused)?;
            let _running = running::register(&ledger, &prepared.task_id, call.cancel.clone());
            let max = prepared.constraints.max_attempts;
            let progress = call.progress.clone();
            let result = butler_maid::run_task(
                ctx,
                prepared,
                &move |p| {
                    let (message, fraction) = p.describe(max);
                    progress(message, fraction);
                },
                call.cancel.clone(),
            )
            .await
            .map_err(|e| refused(crate::implement::maid_error(e)))?;
            Ok(CapabilityOutcome::OwnTask(result))
        })
    }

    fn owns_task(&self) -> bool {
        true
    }
}

/// `bootstrap_context`: what a Brain needs after its context was compacted, in one answer.
struct Context {
    project: Arc<Project>,
}

/// Tasks shown in the context: the open ones and the newest ended ones.
const CONTEXT_TASKS: usize = 8;

impl Capability for Context {
    fn name(&self) -> &'static str {
        "context"
    }

    fn intents(&self) -> &'static [&'static str] {
        &["bootstrap_context"]
    }

    fn usage(&self, intent: &str) -> Usage {
        usage(intent, Key::UsageContext, &[], None)
    }

    fn plan<'a>(
        &'a self,
        _contract: &'a TaskContract,
    ) -> BoxFuture<'a, Result<Plan, CapabilityError>> {
        Box::pin(async move {
            Ok(Plan {
                operation: text(Key::PlanReadContext).to_owned(),
                details: Vec::new(),
                binds: Vec::new(),
                operations: Vec::new(),
                always_approve: false,
            })
        })
    }

    fn run(
        &self,
        _call: CapabilityCall,
    ) -> BoxFuture<'_, Result<CapabilityOutcome, CapabilityError>> {
        Box::pin(async move {
            let started = Instant::now();
            let observed = observe::observe(&self.project).await;
            let mut work = observed.data;
            if let Value::Object(map) = &mut work {
                map.remove("available_next");
                if let Some(Value::Array(records)) = map.get_mut("recent_records") {
                    records.truncate(3);
                }
            }
            let tasks = blocking(&self.project, |p| p.with_ledger(|l| Ok(l.tasks(50)?)))
                .await
                .map_err(|e| CapabilityError::Failed(e.to_string()))?;
            let open: Vec<Value> = tasks
                .iter()
                .filter(|t| {
                    matches!(
                        t.status,
                        TaskStatus::Running
                            | TaskStatus::NeedInput
                            | TaskStatus::NeedApproval
                            | TaskStatus::Interrupted
                    ) || (t.status == TaskStatus::Succeeded && t.contract.implement().is_some())
                })
                .take(CONTEXT_TASKS)
                .map(|t| json!({"task_id": t.task_id, "status": t.status, "intent": t.contract.intent()}))
                .collect();
            let mut e = action(1, text(Key::PlanReadContext), started);
            e.detail = Some(observed.summary.clone());
            Ok(CapabilityOutcome::Done {
                steps: vec![e],
                output: Some(json!({
                    "summary": observed.summary,
                    "work": work,
                    "open_tasks": open,
                })),
            })
        })
    }
}
