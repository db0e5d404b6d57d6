//! Running one delegated task: the approval gate before the task and before each step that
//! needs it, the steps in order (or the capability), the contract's verifiers, the procedure's
//! lifecycle count, and the task's end in the ledger — with the evidence so far stored after
//! every step, progress reported, and cancellation (from the request, `cancel_task`, another
//! process, or the task's own time limit) ending the running step's process group.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::capability::{CapabilityCall, CapabilityOutcome, Progress, within};
use super::engine::{Engine, TASK_OPERATION, intent_of, step_command, target_of};
use super::error::OpsError;
use super::exec::{self, HowToRun, StepPlace};
use super::handler::{HandlerRef, Start};
use super::judge::{Assessment, assess};
use super::mcp_call::mcp_call;
use super::running;
use crate::contract::procedure::{CommandLine, Step};
use crate::contract::{
    ApprovalRequest, OperationChecks, OperationEvidence, ResultContract, ResultStatus, StepOutcome,
    StopReason, Stopped, TaskContract, TaskId, TestRun,
};
use crate::git::{Begun, Lost, OpEntry, OpInfo};
use crate::ledger::{ProcedureRow, TaskEnd};

/// Where a task's progress stands when a capability starts, and when its verifiers start.
const RUNNING: f64 = 0.1;
const VERIFYING: f64 = 0.95;

/// A question for the user: what would happen, and what the approval is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ask {
    pub operation: String,
    pub details: Vec<String>,
    pub fingerprint: String,
}

/// The gate's decision before a step.
pub(super) enum Gate {
    Run(HowToRun),
    Ask(Ask),
    Refuse(String),
}

/// How the steps ended.
enum Flow {
    Done,
    Paused { step: u32, ask: Ask },
}

impl Engine {
    /// Where the task's steps run.
    pub(super) fn place(&self, contract: &TaskContract) -> StepPlace {
        let mut place = StepPlace::new(
            self.root.clone(),
            self.repo.clone(),
            target_of(contract).clone(),
            &self.config.delegation.env_allow,
        );
        place.helper = self.helper.clone();
        place.sandbox = self.sandbox.clone();
        place
    }

    /// Runs the stored task to its end (or pause) and stores how it ended.
    pub(super) async fn run_task(
        &self,
        contract: TaskContract,
        handler: HandlerRef,
        start: Start,
        so_far: Option<OperationEvidence>,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<ResultContract, OpsError> {
        let id = contract.task_id.clone();
        let token = cancel.child_token();
        let _running = running::register(&self.ledger_path, &id, token.clone());
        let journal_id = id.clone();
        let op = self
            .db(move |l| l.begin_operation(TASK_OPERATION, std::process::id(), journal_id.as_str()))
            .await?;
        let watcher = self.watch(&id, &token);
        let limit = Duration::from_secs(contract.constraints.timeout_s);
        let timer = {
            let token = token.clone();
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                token.cancel();
                true
            })
        };
        let outcome = self
            .run_inner(&contract, handler, start, so_far, &progress, &token)
            .await;
        let timed_out = timer.is_finished();
        timer.abort();
        watcher.abort();
        let outcome = outcome.map(|mut r| {
            if timed_out
                && let crate::contract::Evidence::Operation(e) = &mut r.evidence
                && let Some(stopped) = &mut e.stopped
                && stopped.reason == StopReason::Cancelled
            {
                stopped.reason = StopReason::TimedOut;
                r.status = ResultStatus::Failed;
            }
            r
        });
        let end = match &outcome {
            Ok(result) => TaskEnd::Result(result.clone()),
            Err(e) => TaskEnd::Error(e.to_string()),
        };
        let stored = self
            .db(move |l| {
                l.finish_task(&id, &end)?;
                l.end_operation(op)
            })
            .await;
        if let Err(e) = stored {
            tracing::warn!(%e, "the task's end could not be stored");
        }
        if let Ok(r) = &outcome {
            progress(format!("finished: {}", status_word(r.status)), 1.0);
        }
        outcome
    }

    /// Stops the task when another process asks for it through the ledger.
    fn watch(&self, id: &TaskId, token: &CancellationToken) -> tokio::task::JoinHandle<()> {
        let (ledger, id, token) = (self.ledger.clone(), id.clone(), token.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = token.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
                let (ledger, id) = (ledger.clone(), id.clone());
                let asked = crate::offload::blocking(move || {
                    let guard = ledger
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    guard.task_cancel_requested(&id).unwrap_or(false)
                })
                .await
                .unwrap_or(false);
                if asked {
                    token.cancel();
                    return;
                }
            }
        })
    }

    async fn run_inner(
        &self,
        contract: &TaskContract,
        handler: HandlerRef,
        start: Start,
        so_far: Option<OperationEvidence>,
        progress: &Progress,
        token: &CancellationToken,
    ) -> Result<ResultContract, OpsError> {
        let id = contract.task_id.clone();
        let mut evidence = so_far.unwrap_or_else(|| {
            OperationEvidence::new(intent_of(contract), target_of(contract).clone())
        });
        evidence.stopped = None;
        evidence.approval = None;
        evidence.needs = None;
        evidence.by = Some(handler.describe());
        if start == Start::Fresh
            && let Some(ask) = self.task_gate(contract, &handler).await?
        {
            return self.pause(contract, evidence, None, ask).await;
        }
        let place = self.place(contract);
        match &handler {
            HandlerRef::Capability(capability) => {
                progress(format!("running {}", capability.name()), RUNNING);
                let call = CapabilityCall {
                    contract: contract.clone(),
                    progress: within(progress, RUNNING, VERIFYING),
                    cancel: token.clone(),
                };
                // Logged as every step is: one `work_undo` puts back what it recorded or pulled.
                let logged = self
                    .log_begin(
                        format!("{} ({})", capability.name(), contract.intent()),
                        format!("task {}", id.as_str()),
                        true,
                    )
                    .await
                    .map_err(OpsError::Internal)?;
                let ran = capability.run(call).await;
                let entry = self.log_finish(logged).await;
                match ran? {
                    CapabilityOutcome::Done { mut steps, output } => {
                        if let (Some(entry), Some(last)) = (entry, steps.last_mut()) {
                            last.changed = entry.files;
                            last.undo = Some(entry.id);
                        }
                        evidence.steps.extend(steps);
                        evidence.output = output;
                    }
                    CapabilityOutcome::OwnTask(result) => return Ok(result),
                }
                if let Some(last) = evidence.steps.last()
                    && last.outcome != StepOutcome::Passed
                {
                    evidence.stopped = Some(Stopped {
                        step: Some(last.step),
                        reason: if token.is_cancelled() {
                            StopReason::Cancelled
                        } else {
                            StopReason::StepFailed
                        },
                    });
                }
            }
            HandlerRef::Procedure(procedure) => {
                let flow = self
                    .run_steps(
                        contract,
                        procedure,
                        &place,
                        &mut evidence,
                        start,
                        progress,
                        token,
                    )
                    .await?;
                if let Flow::Paused { step, ask } = flow {
                    return self.pause(contract, evidence, Some(step), ask).await;
                }
            }
        }
        if evidence.stopped.is_none() {
            progress("verifying".into(), VERIFYING);
            // Verifiers only look; unconfined, they could write: logged all the same.
            let logged = self
                .log_begin(
                    "the contract's verifiers".into(),
                    format!("task {}", contract.task_id.as_str()),
                    !contract.success_criteria.commands.is_empty(),
                )
                .await
                .ok()
                .flatten();
            evidence.verify = self.verify(contract, &place, token).await;
            if let Some(entry) = self.log_finish(logged).await {
                tracing::warn!(id = entry.id, files = ?entry.files, "the verifiers changed the project");
            }
        }
        let status = match &evidence.stopped {
            Some(s) if s.reason == StopReason::Cancelled => ResultStatus::Cancelled,
            _ if evidence.passed() => ResultStatus::Ok,
            _ => ResultStatus::Failed,
        };
        if let HandlerRef::Procedure(p) = &handler
            && status != ResultStatus::Cancelled
        {
            let (pid, verified) = (p.id, status == ResultStatus::Ok);
            let promote_after = self.config.delegation.promote_after;
            let counted = self
                .db(move |l| l.count_procedure_run(pid, verified, promote_after))
                .await?;
            evidence.by = Some(HandlerRef::Procedure(counted).describe());
        }
        Ok(ResultContract::operation(id, status, evidence))
    }

    /// The gate before the whole task: the contract names the intent (or an operation the
    /// capability performs) in `require_approval_for`, or the capability always asks.
    pub(super) async fn task_gate(
        &self,
        contract: &TaskContract,
        handler: &HandlerRef,
    ) -> Result<Option<Ask>, OpsError> {
        let listed = &contract.constraints.require_approval_for;
        let intent = contract.intent();
        let id = contract.task_id.as_str();
        match handler {
            HandlerRef::Capability(capability) => {
                let plan = capability.plan(contract).await?;
                let needed = plan.always_approve
                    || listed
                        .iter()
                        .any(|n| n.as_str() == intent || plan.operations.contains(&n.as_str()));
                Ok(needed.then(|| Ask {
                    fingerprint: json!({"task": id, "capability": capability.name(),
                                        "binds": plan.binds})
                    .to_string(),
                    operation: plan.operation,
                    details: plan.details,
                }))
            }
            HandlerRef::Procedure(p) => {
                if !listed.iter().any(|n| n.as_str() == intent) {
                    return Ok(None);
                }
                let place = self.place(contract);
                let details: Vec<String> = p
                    .steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{}. {}", i + 1, shown_step(&place, s)))
                    .collect();
                Ok(Some(Ask {
                    operation: format!(
                        "run `{intent}` for {} with procedure {} ({} step(s))",
                        target_text(contract),
                        p.id,
                        p.steps.len()
                    ),
                    fingerprint: json!({"task": id, "procedure": p.id, "steps": details})
                        .to_string(),
                    details,
                }))
            }
        }
    }

    /// What step `index` of `procedure` would ask the user now (before an approval given for
    /// it is used), if anything.
    pub(super) async fn step_ask(
        &self,
        task: &TaskId,
        procedure: &ProcedureRow,
        index: usize,
        place: &StepPlace,
    ) -> Option<Ask> {
        match self.step_gate(task, procedure, index, place, None).await {
            Gate::Ask(ask) => Some(ask),
            _ => None,
        }
    }

    /// The gate before step `index` of `procedure`: what its command needs now. `approved` is
    /// the fingerprint an approval opened for this step.
    pub(super) async fn step_gate(
        &self,
        task: &TaskId,
        procedure: &ProcedureRow,
        index: usize,
        place: &StepPlace,
        approved: Option<&str>,
    ) -> Gate {
        let Some(step) = procedure.steps.get(index) else {
            return Gate::Refuse("the procedure has no such step".into());
        };
        let Some(line) = step_command(step) else {
            return Gate::Run(HowToRun::Program);
        };
        let line = place.command(&line);
        let shown = line.shown();
        let base = json!({"task": task.as_str(), "procedure": procedure.id, "step": index + 1,
                          "run": shown});
        let ask = |operation: String, details: Vec<String>, extra: serde_json::Value| {
            let mut fp = base.clone();
            fp["why"] = extra;
            let fingerprint = fp.to_string();
            if approved == Some(fingerprint.as_str()) {
                None
            } else {
                Some(Ask {
                    operation,
                    details,
                    fingerprint,
                })
            }
        };
        // Writes outside the project cannot be undone: asked for every run.
        let outside = match step {
            Step::Cmd(cmd) => self.outside_writes(&cmd.writes),
            _ => Vec::new(),
        };
        let assessed = assess(
            &line,
            self.judge.as_ref(),
            &self.destructive,
            self.confined(),
        );
        let outside_why = (!outside.is_empty()).then(|| {
            format!(
                "it writes outside the project ({}), which cannot be undone",
                outside.join(", ")
            )
        });
        let ask_program = |why: String| {
            let mut details = vec![shown.clone()];
            details.extend(outside.iter().map(|p| format!("writes {p}")));
            match ask(
                format!("step {}: run `{shown}`: {why}", index + 1),
                details,
                json!({"why": why, "writes": outside}),
            ) {
                Some(a) => Gate::Ask(a),
                None => Gate::Run(HowToRun::Program),
            }
        };
        match assessed {
            Assessment::Run => match outside_why {
                Some(why) => ask_program(why),
                None => Gate::Run(HowToRun::Program),
            },
            Assessment::NeedsApproval { why } => ask_program(match outside_why {
                Some(more) => format!("{why}; {more}"),
                None => why,
            }),
            Assessment::Refused { reason } => Gate::Refuse(reason),
            Assessment::Git {
                args,
                loss,
                globals,
            } => {
                if loss.is_empty() {
                    return Gate::Run(HowToRun::Git(args));
                }
                let repo = self.repo.clone();
                let lost = crate::offload::blocking(move || repo.would_lose(&loss, &globals)).await;
                let lost: Vec<Lost> = match lost {
                    Ok(Ok(lost)) => lost,
                    Ok(Err(e)) => {
                        return Gate::Refuse(format!("what it would lose cannot be known: {e}"));
                    }
                    Err(e) => return Gate::Refuse(format!("the git worker stopped: {e}")),
                };
                if lost.is_empty() {
                    return Gate::Run(HowToRun::Git(args));
                }
                let lines: Vec<String> = lost.iter().map(Lost::describe).collect();
                // Bound to what the files hold now, not only to their names.
                let contents = match self.repo.contents_of(&lost) {
                    Ok(contents) => contents,
                    Err(e) => {
                        return Gate::Refuse(format!("what it would lose cannot be known: {e}"));
                    }
                };
                match ask(
                    format!(
                        "step {}: `git {}` would irreversibly lose work ({} item(s))",
                        index + 1,
                        args.join(" "),
                        lines.len()
                    ),
                    lines,
                    json!({"lost": lost, "contents": contents}),
                ) {
                    Some(a) => Gate::Ask(a),
                    None => Gate::Run(HowToRun::Git(args)),
                }
            }
        }
    }

    /// The steps in order from where `start` says, stopping at a failure, a cancellation or a
    /// question.
    #[allow(clippy::too_many_arguments)]
    async fn run_steps(
        &self,
        contract: &TaskContract,
        procedure: &ProcedureRow,
        place: &StepPlace,
        evidence: &mut OperationEvidence,
        start: Start,
        progress: &Progress,
        token: &CancellationToken,
    ) -> Result<Flow, OpsError> {
        let (first, approved) = match &start {
            Start::Fresh | Start::TaskApproved => (0, None),
            Start::StepApproved { index, fingerprint } => {
                (*index, Some((*index, fingerprint.clone())))
            }
            Start::Resume { index } => (*index, None),
        };
        let total = procedure.steps.len();
        let id = contract.task_id.clone();
        for (index, step) in procedure.steps.iter().enumerate().skip(first) {
            let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
            if token.is_cancelled() {
                evidence.stopped = Some(Stopped {
                    step: Some(number),
                    reason: StopReason::Cancelled,
                });
                break;
            }
            let opened = approved
                .as_ref()
                .filter(|(i, _)| *i == index)
                .map(|(_, fp)| fp.as_str());
            let how = match self.step_gate(&id, procedure, index, place, opened).await {
                Gate::Run(how) => how,
                Gate::Ask(ask) => return Ok(Flow::Paused { step: number, ask }),
                Gate::Refuse(reason) => {
                    let mut e = refused_step(number, step, place);
                    e.detail = Some(reason);
                    evidence.steps.push(e);
                    evidence.stopped = Some(Stopped {
                        step: Some(number),
                        reason: StopReason::Refused,
                    });
                    break;
                }
            };
            progress(
                format!(
                    "step {number}/{total}: {} {}",
                    step.kind().as_str(),
                    shown_step(place, step)
                ),
                index as f64 / (total as f64 + 1.0),
            );
            // The project as it was before the step, so that one `work_undo` restores it.
            let logged = match self
                .log_begin(
                    shown_step(place, step),
                    format!(
                        "procedure {} step {number} (task {})",
                        procedure.id,
                        id.as_str()
                    ),
                    changes_project(step),
                )
                .await
            {
                Ok(begun) => begun,
                Err(why) => {
                    let mut e = refused_step(number, step, place);
                    e.detail = Some(why);
                    evidence.steps.push(e);
                    evidence.stopped = Some(Stopped {
                        step: Some(number),
                        reason: StopReason::Refused,
                    });
                    break;
                }
            };
            let mut e = match step {
                Step::Cmd(c) => exec::cmd(place, number, c, &how, token).await,
                Step::Check(v) => exec::check_step(place, number, v, &how, token).await,
                Step::Wait(w) => exec::wait_step(place, number, w, &how, token).await,
                Step::McpCall(m) => {
                    mcp_call(place, &self.config.mcp_servers, number, m, token).await
                }
            };
            if let Some(entry) = self.log_finish(logged).await {
                e.changed = entry.files;
                e.undo = Some(entry.id);
            }
            let outcome = e.outcome;
            evidence.steps.push(e);
            let (save_id, saved) = (id.clone(), evidence.clone());
            if let Err(err) = self
                .db(move |l| l.set_task_progress(&save_id, &saved))
                .await
            {
                tracing::warn!(%err, "a step's evidence could not be stored");
            }
            if outcome != StepOutcome::Passed {
                evidence.stopped = Some(Stopped {
                    step: Some(number),
                    reason: if token.is_cancelled() {
                        StopReason::Cancelled
                    } else {
                        StopReason::StepFailed
                    },
                });
                break;
            }
        }
        Ok(Flow::Done)
    }

    /// Takes the operation log's snapshot before a step that may change the project
    /// (`false`: a file check, nothing to take). A snapshot that cannot be taken stops the step:
    /// nothing runs that could not be undone.
    async fn log_begin(
        &self,
        what: String,
        by: String,
        needed: bool,
    ) -> Result<Option<Begun>, String> {
        if !needed {
            return Ok(None);
        }
        let at = self
            .db(|l| Ok(l.now().unix()))
            .await
            .map_err(|e| e.to_string())?;
        let repo = self.repo.clone();
        let info = OpInfo {
            tool: "submit_task".into(),
            what,
            by,
            at,
            undoes: None,
        };
        crate::offload::blocking(move || {
            let lock = repo.lock_tree()?;
            repo.oplog_begin(&lock, info)
        })
        .await
        .map_err(|e| format!("the git worker stopped: {e}"))?
        .map(Some)
        .map_err(|e| format!("the operation log's snapshot before the step failed: {e}"))
    }

    /// Completes the step's entry: what it changed and the id that undoes it (`None`: it
    /// changed nothing, or no snapshot was taken).
    async fn log_finish(&self, begun: Option<Begun>) -> Option<OpEntry> {
        let begun = begun?;
        let (repo, keep) = (self.repo.clone(), self.retention);
        let at = self.db(|l| Ok(l.now().unix())).await.ok()?;
        let done = crate::offload::blocking(move || {
            let lock = repo.lock_tree()?;
            let entry = repo.oplog_finish(&lock, begun)?;
            repo.oplog_prune(&lock, keep, at)?;
            Ok::<_, crate::git::GitError>(entry)
        })
        .await;
        match done {
            Ok(Ok(entry)) => entry,
            Ok(Err(e)) => {
                tracing::warn!(%e, "a step's log entry was not completed");
                None
            }
            Err(e) => {
                tracing::warn!(%e, "a step's log entry was not completed");
                None
            }
        }
    }

    /// The contract's verifiers, judged after the last step.
    async fn verify(
        &self,
        contract: &TaskContract,
        place: &StepPlace,
        token: &CancellationToken,
    ) -> OperationChecks {
        let mut checks = OperationChecks::default();
        for c in &contract.success_criteria.commands {
            let line = CommandLine::Shell(c.command.clone());
            let how = match assess(
                &line,
                self.judge.as_ref(),
                &self.destructive,
                self.confined(),
            ) {
                Assessment::Run => Some(HowToRun::Program),
                Assessment::Git { args, loss, .. } if loss.is_empty() => Some(HowToRun::Git(args)),
                _ => None,
            };
            let run = match how {
                Some(how) => exec::criteria_command(place, c, &how, token).await,
                None => TestRun {
                    command: c.command.clone(),
                    exit_code: None,
                    passed: false,
                    stopped: None,
                    output_tail: "refused: a verifier may only look".into(),
                },
            };
            checks.commands.push(run);
        }
        for f in &contract.success_criteria.file_checks {
            checks.file_checks.push(exec::criteria_file_check(place, f));
        }
        checks
    }

    /// Pauses the task for the user's approval: the approval is stored, bound to the task and
    /// exactly this operation; the Result Contract says what waits and where.
    pub(super) async fn pause(
        &self,
        contract: &TaskContract,
        mut evidence: OperationEvidence,
        step: Option<u32>,
        ask: Ask,
    ) -> Result<ResultContract, OpsError> {
        let id = contract.task_id.clone();
        let description = std::iter::once(ask.operation.clone())
            .chain(ask.details.iter().cloned())
            .collect::<Vec<_>>()
            .join("\n");
        let (task, fp) = (id.clone(), ask.fingerprint.clone());
        let approval = self
            .db(move |l| l.create_task_approval(&task, &fp, &description))
            .await?;
        evidence.approval = Some(ApprovalRequest {
            expires_at: approval.expires_at(),
            reference: approval.reference,
            operation: ask.operation,
            details: ask.details,
            step,
        });
        evidence.stopped = Some(Stopped {
            step,
            reason: StopReason::AwaitingApproval,
        });
        Ok(ResultContract::operation(
            id,
            ResultStatus::NeedApproval,
            evidence,
        ))
    }
}

/// Whether a step runs something that may change the project (all but file checks).
fn changes_project(step: &Step) -> bool {
    !matches!(
        step,
        Step::Check(crate::contract::procedure::Verifier::File(_))
    ) && !matches!(step, Step::Wait(w) if matches!(w.until, crate::contract::procedure::Verifier::File(_)))
}

/// A step as one line, target values filled in.
fn shown_step(place: &StepPlace, step: &Step) -> String {
    match step {
        Step::Cmd(c) => place.command(&c.run).shown(),
        Step::Check(v) => place.fill(&v.shown()),
        Step::Wait(w) => format!("until {}", place.fill(&w.until.shown())),
        Step::McpCall(m) => m.shown(),
    }
}

fn refused_step(number: u32, step: &Step, place: &StepPlace) -> crate::contract::StepEvidence {
    crate::contract::StepEvidence {
        step: number,
        kind: step.kind(),
        what: shown_step(place, step),
        outcome: StepOutcome::Failed,
        ending: None,
        output_tail: String::new(),
        duration_ms: 0,
        detail: None,
        leftovers: None,
        unconfined: None,
        changed: Vec::new(),
        undo: None,
    }
}

/// The contract's target in a few words.
fn target_text(contract: &TaskContract) -> String {
    let target = target_of(contract);
    if target.0.is_empty() {
        "no target".to_owned()
    } else {
        target
            .0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn status_word(status: ResultStatus) -> &'static str {
    match status {
        ResultStatus::Ok => "ok",
        ResultStatus::NeedInput => "need_input",
        ResultStatus::NeedApproval => "need_approval",
        ResultStatus::Failed => "failed",
        ResultStatus::Cancelled => "cancelled",
    }
}
