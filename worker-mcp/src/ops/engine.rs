//! The engine of delegated operations: a Task Contract checked at the edge, resolved to a
//! capability or a taught procedure (intent × target signature), run to its end with its
//! evidence in the ledger, and paused only to ask — for a procedure (`need_input`) or for the
//! user's approval (`need_approval`).
//!
//! The engine knows no capability and no transport: capabilities come in a [`Registry`] and
//! commands are read by a [`CommandJudge`], both given by the edge; progress goes to a callback
//! and cancellation comes in a token.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::capability::{CapabilityCall, CapabilityOutcome, Progress, Registry};
use super::error::OpsError;
use super::handler::{HandlerRef, Start};
use super::judge::{Assessment, CommandJudge, DestructiveCommands, assess, placeholder_misuse};
use super::running;
use crate::config::DelegationFileConfig;
use crate::contract::procedure::{CommandLine, Step, parse_steps};
use crate::contract::signature::Signature;
use crate::contract::submission::is_allocated_form;
use crate::contract::{
    FieldProblem, IntentName, Needed, OperationEvidence, OperationTarget, ProcedureStatus,
    ResultContract, ResultStatus, StopReason, Stopped, TaskContract, TaskId, TaskStatus,
    TaskSubmission,
};
use crate::git::GitRepo;
use crate::ledger::{Ledger, LedgerError, ProcedureRow, TaskEnd, TaskRow};
use crate::time::SharedClock;

/// The journal kind of a running task (the ImplementMaid's tasks use the same, so a task whose
/// process died is found the same way).
pub(super) const TASK_OPERATION: &str = "task";

/// What the engine is built from at the edge.
pub struct EngineParts {
    pub repo: GitRepo,
    /// `[delegation]` and `[mcp_servers.*]` in force for the project (the session's).
    pub config: DelegationFileConfig,
    pub clock: SharedClock,
    pub judge: Arc<dyn CommandJudge>,
    pub capabilities: Registry,
    /// Butler's program, whose sandbox helper confines each step and reaps what it leaves
    /// running.
    pub helper: Option<PathBuf>,
    /// How steps are confined.
    pub sandbox: super::confine::StepSandbox,
    /// How many operation-log entries are kept (a step's entry prunes the log as the Brain's
    /// tools do).
    pub retention: crate::git::Retention,
}

/// The delegated-operations engine of one project.
pub struct Engine {
    pub(super) root: PathBuf,
    pub(super) repo: GitRepo,
    pub(super) ledger: Arc<Mutex<Ledger>>,
    pub(super) ledger_path: PathBuf,
    pub(super) config: DelegationFileConfig,
    pub(super) judge: Arc<dyn CommandJudge>,
    pub(super) capabilities: Registry,
    pub(super) destructive: DestructiveCommands,
    pub(super) helper: Option<PathBuf>,
    pub(super) sandbox: super::confine::StepSandbox,
    pub(super) retention: crate::git::Retention,
}

/// `approve`'s decision: exactly one of the two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum Decision {
    Approve,
    Deny,
}

/// What `teach` is given.
#[derive(Debug, Clone, Default)]
pub struct TeachRequest {
    /// The task that waits for a procedure.
    pub task_id: Option<String>,
    /// Without a task: the intent and target (values may be `*`) to teach for.
    pub intent: Option<String>,
    pub target: Option<serde_json::Map<String, Value>>,
    pub steps: Vec<Value>,
}

/// What `teach` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Taught {
    pub procedure: ProcedureSummary,
    /// The procedure it replaced (now deprecated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<i64>,
    /// Steps that will wait for the user's approval on every run, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub approval_each_run: Vec<String>,
    /// The task it was taught for, run with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultContract>,
}

/// A procedure in one line of JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcedureSummary {
    pub id: i64,
    pub intent: IntentName,
    pub target: String,
    pub status: ProcedureStatus,
    pub steps: usize,
    /// Verified runs so far.
    pub successes: u32,
    /// What its steps may write besides the project's files (`step 2: dist/, ~/.cache/x`):
    /// paths outside the project are asked for on every run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

impl From<&ProcedureRow> for ProcedureSummary {
    fn from(p: &ProcedureRow) -> Self {
        Self {
            id: p.id,
            intent: p.intent.clone(),
            target: p.signature.to_string(),
            status: p.status,
            steps: p.steps.len(),
            successes: p.successes,
            writes: p
                .steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| match s {
                    Step::Cmd(c) if !c.writes.is_empty() => {
                        Some(format!("step {}: {}", i + 1, c.writes.join(", ")))
                    }
                    _ => None,
                })
                .collect(),
        }
    }
}

/// What `approve` came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    pub result: ResultContract,
    /// The approval no longer matched what would happen (or expired): the user is asked again.
    pub asked_again: bool,
}

/// A task as `get_status` and `cancel_task` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskView {
    pub task_id: TaskId,
    /// Where the task is (`running`, `need_approval`, `succeeded`, `cancelled`, `accepted`, …).
    pub state: TaskStatus,
    /// Its Result Contract, once it ended or paused with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultContract>,
    /// A running (or interrupted) operation's evidence so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<OperationEvidence>,
    /// What stopped it, when it ended with an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Engine {
    /// Opens the project's ledger (a connection of its own).
    pub async fn open(parts: EngineParts) -> Result<Engine, OpsError> {
        let repo = parts.repo.clone();
        let clock = parts.clock.clone();
        let (ledger, root) = crate::offload::blocking(move || {
            let ledger = Ledger::open(repo.common_dir())?.with_clock(clock);
            let root = repo
                .workdir()
                .canonicalize()
                .unwrap_or_else(|_| repo.workdir().to_path_buf());
            Ok::<_, OpsError>((ledger, root))
        })
        .await
        .map_err(|e| OpsError::Internal(format!("opening the ledger: {e}")))??;
        let config = parts.config;
        let destructive = DestructiveCommands::with_extra(&config.delegation.destructive_commands);
        Ok(Engine {
            root,
            repo: parts.repo,
            ledger_path: ledger.path().to_path_buf(),
            ledger: Arc::new(Mutex::new(ledger)),
            config,
            judge: parts.judge,
            capabilities: parts.capabilities,
            destructive,
            helper: parts.helper,
            sandbox: parts.sandbox,
            retention: parts.retention,
        })
    }

    /// Whether the project's steps run in the sandbox.
    pub(super) fn confined(&self) -> bool {
        self.sandbox.applies(self.helper.as_deref())
    }

    /// The declared `writes` of a step that are outside the project, as taught.
    pub(super) fn outside_writes(&self, writes: &[String]) -> Vec<String> {
        writes
            .iter()
            .filter(|w| {
                !matches!(
                    crate::contract::procedure::Declared::of(w),
                    crate::contract::procedure::Declared::Project(_)
                )
            })
            .cloned()
            .collect()
    }

    /// Runs `f` on the ledger off the async executor.
    pub(super) async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, LedgerError> + Send + 'static,
    ) -> Result<T, OpsError> {
        let ledger = self.ledger.clone();
        crate::offload::blocking(move || {
            let guard = ledger
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&guard)
        })
        .await
        .map_err(|e| OpsError::Internal(format!("ledger thread: {e}")))?
        .map_err(OpsError::Ledger)
    }

    /// `submit_task`: checks the contract, resolves who runs it, and runs it to its end —
    /// or returns early to ask for a procedure or an approval.
    pub async fn submit(
        &self,
        contract: Value,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<ResultContract, OpsError> {
        let now = self.db(|l| Ok(l.now())).await?;
        // Verifiers are judged from what was sent, so that their problems are named with every
        // other problem of the contract, not after those are fixed.
        let implement = contract.get("intent").and_then(Value::as_str) == Some("implement");
        let verifier_problems = if implement {
            Vec::new()
        } else {
            self.verifier_problems(&contract)
        };
        let contract = match TaskSubmission(contract).validate(now) {
            Ok(contract) if verifier_problems.is_empty() => contract,
            Ok(_) => return Err(OpsError::Contract(verifier_problems)),
            Err(mut problems) => {
                for problem in verifier_problems {
                    if !problems.iter().any(|p| p.field == problem.field) {
                        problems.push(problem);
                    }
                }
                return Err(OpsError::Contract(problems));
            }
        };
        if contract.implement().is_some() {
            return self.submit_own_task(contract, progress, cancel).await;
        }
        let Some(handler) = self.resolve(&contract).await? else {
            return self.unknown(contract).await;
        };
        let contract = self.create_task(contract).await?;
        self.run_task(contract, handler, Start::Fresh, None, progress, cancel)
            .await
    }

    /// An intent whose capability creates its own task (`implement`).
    async fn submit_own_task(
        &self,
        contract: TaskContract,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<ResultContract, OpsError> {
        let Some(capability) = self.capabilities.find(contract.intent()) else {
            return Err(OpsError::UnknownSkill {
                intent: contract.intent().to_owned(),
                signature: String::new(),
                known: Vec::new(),
            });
        };
        if !contract.constraints.require_approval_for.is_empty() {
            return Err(OpsError::Contract(vec![FieldProblem {
                field: "constraints.require_approval_for".into(),
                problem: "an implementation changes only its own line of work and waits for no \
                          approval; leave it out (accepting the work is the Brain's call)"
                    .into(),
            }]));
        }
        match capability
            .run(CapabilityCall {
                contract,
                progress,
                cancel,
            })
            .await?
        {
            CapabilityOutcome::OwnTask(result) => Ok(result),
            CapabilityOutcome::Done { .. } => Err(OpsError::Internal(format!(
                "capability {} ran without its own task",
                capability.name()
            ))),
        }
    }

    /// The contract's verifiers may only look: a command that would need approval or is
    /// refused is named as a wrong field. Read from the submission as sent (commands that are
    /// not text are the contract check's to name).
    fn verifier_problems(&self, submission: &Value) -> Vec<FieldProblem> {
        let mut problems = Vec::new();
        let commands = submission
            .pointer("/success_criteria/commands")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, check) in commands.iter().enumerate() {
            let Some(command) = check.get("command").and_then(Value::as_str) else {
                continue;
            };
            let line = CommandLine::Shell(command.to_owned());
            let problem = match assess(
                &line,
                self.judge.as_ref(),
                &self.destructive,
                self.confined(),
            ) {
                Assessment::Run => None,
                Assessment::Git { loss, .. } if loss.is_empty() => None,
                Assessment::Git { .. } => {
                    Some("a verifier may not change the project's history".to_owned())
                }
                Assessment::NeedsApproval { why } => Some(format!(
                    "a verifier only looks, but this one needs approval: {why}"
                )),
                Assessment::Refused { reason } => Some(reason),
            };
            if let Some(problem) = problem {
                problems.push(FieldProblem {
                    field: format!("success_criteria.commands[{i}]"),
                    problem,
                });
            }
        }
        problems
    }

    /// Who runs the contract: a capability for its intent, else the most specific live
    /// procedure whose signature fits its target (active before candidate, newest first).
    async fn resolve(&self, contract: &TaskContract) -> Result<Option<HandlerRef>, OpsError> {
        if let Some(capability) = self.capabilities.find(contract.intent()) {
            return Ok(Some(HandlerRef::Capability(capability)));
        }
        let intent = intent_of(contract);
        let live = self.db(move |l| l.live_procedures(&intent)).await?;
        Ok(best_procedure(live, target_of(contract)).map(HandlerRef::Procedure))
    }

    /// No handler: `known_only` is refused; `teach_if_unknown` becomes a task that waits for
    /// the Brain to teach the procedure.
    async fn unknown(&self, contract: TaskContract) -> Result<ResultContract, OpsError> {
        let target = target_of(&contract).clone();
        let signature = Signature::exact(&target).to_string();
        if contract.delegation_mode == crate::contract::DelegationMode::KnownOnly {
            let intent = intent_of(&contract);
            let known = self
                .db(move |l| l.live_procedures(&intent))
                .await?
                .iter()
                .map(|p| p.signature.to_string())
                .collect();
            return Err(OpsError::UnknownSkill {
                intent: contract.intent().to_owned(),
                signature,
                known,
            });
        }
        let contract = self.create_task(contract).await?;
        let mut evidence = OperationEvidence::new(intent_of(&contract), target);
        evidence.needs = Some(Needed::Procedure { signature });
        let result =
            ResultContract::operation(contract.task_id.clone(), ResultStatus::NeedInput, evidence);
        let (id, end) = (contract.task_id.clone(), TaskEnd::Result(result.clone()));
        self.db(move |l| l.finish_task(&id, &end)).await?;
        Ok(result)
    }

    /// Stores the task under the Brain's id, or one the ledger allocates.
    async fn create_task(&self, contract: TaskContract) -> Result<TaskContract, OpsError> {
        if is_allocated_form(contract.task_id.as_str()) {
            Ok(self.db(move |l| l.create_task(|_| contract)).await?)
        } else {
            let stored = contract.clone();
            self.db(move |l| l.create_named_task(&stored))
                .await
                .map_err(|e| match e {
                    OpsError::Ledger(LedgerError::Conflict { .. }) => {
                        OpsError::Contract(vec![FieldProblem {
                            field: "task_id".into(),
                            problem: "a task with this id exists; choose another, or read it \
                                      with get_status"
                                .into(),
                        }])
                    }
                    other => other,
                })?;
            Ok(contract)
        }
    }

    /// The task of `task_id`, or `NoTask`.
    pub(super) async fn task_row(&self, task_id: &str) -> Result<TaskRow, OpsError> {
        let id = TaskId::new(task_id).map_err(|_| OpsError::NoTask(task_id.to_owned()))?;
        self.db(move |l| l.task(&id))
            .await?
            .ok_or_else(|| OpsError::NoTask(task_id.to_owned()))
    }

    /// `teach`: stores a procedure (candidate) for a task waiting for one — and runs that task
    /// with it — or for an intent and target given directly.
    pub async fn teach(
        &self,
        request: TeachRequest,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<Taught, OpsError> {
        let (task, intent, signature) = self.teach_subject(&request).await?;
        if self.capabilities.find(intent.as_str()).is_some() {
            return Err(steps_error(
                "intent",
                format!("`{intent}` is a capability in code; it cannot be taught"),
                false,
            ));
        }
        let servers: BTreeSet<String> = self.config.mcp_servers.keys().cloned().collect();
        let steps =
            parse_steps(&request.steps, &signature.keys(), &servers).map_err(|problems| {
                OpsError::Steps {
                    problems,
                    refused: false,
                }
            })?;
        let approval_each_run = self.judge_steps(&steps)?;
        let (i, s) = (intent.clone(), signature.clone());
        let taught_for = task.as_ref().map(|t| t.task_id.clone());
        let stored = steps.clone();
        let (row, replaced) = self
            .db(move |l| l.store_procedure(&i, &s, &stored, taught_for.as_ref()))
            .await?;
        let result = match task {
            Some(task) => {
                let id = task.task_id.clone();
                self.db(move |l| l.resume_task(&id)).await?;
                let handler = HandlerRef::Procedure(row.clone());
                Some(
                    self.run_task(task.contract, handler, Start::Fresh, None, progress, cancel)
                        .await?,
                )
            }
            None => None,
        };
        let procedure = match &result {
            Some(_) => {
                let id = row.id;
                self.db(move |l| l.procedure(id))
                    .await?
                    .map(|p| ProcedureSummary::from(&p))
                    .unwrap_or_else(|| ProcedureSummary::from(&row))
            }
            None => ProcedureSummary::from(&row),
        };
        Ok(Taught {
            procedure,
            replaced,
            approval_each_run,
            result,
        })
    }

    /// The task (if any), intent and signature a `teach` call is for.
    async fn teach_subject(
        &self,
        request: &TeachRequest,
    ) -> Result<(Option<TaskRow>, IntentName, Signature), OpsError> {
        let taught_target = match &request.target {
            None => None,
            Some(map) => {
                let mut target = BTreeMap::new();
                for (k, v) in map {
                    match v.as_str() {
                        Some(text) => {
                            target.insert(k.clone(), text.to_owned());
                        }
                        None => {
                            return Err(steps_error(
                                &format!("target.{k}"),
                                "give the value as text (or `*` for any)",
                                false,
                            ));
                        }
                    }
                }
                Some(Signature::taught(&target).map_err(|problems| {
                    OpsError::Steps {
                        problems: problems
                            .into_iter()
                            .map(|(field, problem)| FieldProblem { field, problem })
                            .collect(),
                        refused: false,
                    }
                })?)
            }
        };
        if let Some(task_id) = &request.task_id {
            let row = self.task_row(task_id).await?;
            if row.status != TaskStatus::NeedInput {
                return Err(OpsError::WrongState {
                    task: row.task_id,
                    status: row.status,
                    expected: "need_input (waiting for a procedure)",
                });
            }
            let intent = intent_of(&row.contract);
            if let Some(given) = &request.intent
                && given != intent.as_str()
            {
                return Err(steps_error(
                    "intent",
                    format!("the task's intent is `{intent}`"),
                    false,
                ));
            }
            let exact = Signature::exact(target_of(&row.contract));
            let signature = match taught_target {
                Some(sig) if exact.within(&sig) => sig,
                Some(_) => {
                    return Err(steps_error(
                        "target",
                        format!("it must fit the task's target `{exact}` (use `*` for any value)"),
                        false,
                    ));
                }
                None => exact,
            };
            return Ok((Some(row), intent, signature));
        }
        let intent = match request.intent.as_deref().map(IntentName::new) {
            Some(Ok(intent)) => intent,
            Some(Err(e)) => return Err(steps_error("intent", e.to_string(), false)),
            None => {
                return Err(steps_error(
                    "task_id",
                    "give the task waiting for a procedure, or `intent` and `target`",
                    false,
                ));
            }
        };
        let Some(signature) = taught_target else {
            return Err(steps_error(
                "target",
                "give the target the procedure is for (`{}` for none, `*` for any value)",
                false,
            ));
        };
        Ok((None, intent, signature))
    }

    /// Judges every command of the taught steps now: refused ones stop the teach; the ones
    /// that will need approval on every run are listed.
    fn judge_steps(&self, steps: &[Step]) -> Result<Vec<String>, OpsError> {
        let mut refused = Vec::new();
        let mut approval = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let Some(line) = step_command(step) else {
                continue;
            };
            if let CommandLine::Argv(argv) = &line {
                refused.extend(
                    placeholder_misuse(argv, self.judge.as_ref())
                        .into_iter()
                        .map(|problem| FieldProblem {
                            field: format!("steps[{i}].argv"),
                            problem,
                        }),
                );
            }
            if let Step::Cmd(cmd) = step {
                let outside = self.outside_writes(&cmd.writes);
                if !outside.is_empty() {
                    approval.push(format!(
                        "step {}: writes outside the project ({}), which cannot be undone",
                        i + 1,
                        outside.join(", ")
                    ));
                }
            }
            match assess(
                &line,
                self.judge.as_ref(),
                &self.destructive,
                self.confined(),
            ) {
                Assessment::Run | Assessment::Git { .. } => {}
                Assessment::NeedsApproval { why } => {
                    approval.push(format!("step {}: {why}", i + 1));
                }
                Assessment::Refused { reason } => refused.push(FieldProblem {
                    field: format!("steps[{i}]"),
                    problem: reason,
                }),
            }
        }
        if refused.is_empty() {
            Ok(approval)
        } else {
            Err(OpsError::Steps {
                problems: refused,
                refused: true,
            })
        }
    }

    /// `approve`: the user's decision, relayed by the Brain, on the approval the task waits
    /// for. `approve` runs the task on from where it paused (if what would happen is still
    /// what was approved); `deny` ends it with nothing more done.
    pub async fn approve(
        &self,
        task_id: &str,
        decision: Decision,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<Approved, OpsError> {
        let row = self.task_row(task_id).await?;
        let paused = paused_evidence(&row, TaskStatus::NeedApproval, "need_approval")?;
        let request = paused.approval.clone().ok_or_else(|| {
            OpsError::Internal(format!("task {} waits without an approval", row.task_id))
        })?;
        let id = row.task_id.clone();
        // One answer per question: of concurrent approve (or deny) calls exactly one takes the
        // task; the others find it running and run nothing.
        let claim_id = id.clone();
        if !self.db(move |l| l.claim_paused_task(&claim_id)).await? {
            return Err(OpsError::WrongState {
                task: id,
                status: TaskStatus::Running,
                expected: "need_approval",
            });
        }
        match decision {
            Decision::Deny => {
                let reference = request.reference.clone();
                let deny_id = id.clone();
                self.db(move |l| l.deny_task_approval(&deny_id, &reference))
                    .await?;
                let mut evidence = paused;
                evidence.stopped = Some(Stopped {
                    step: request.step,
                    reason: StopReason::Denied,
                });
                let result =
                    ResultContract::operation(id.clone(), ResultStatus::Cancelled, evidence);
                let end = TaskEnd::Result(result.clone());
                self.db(move |l| l.finish_task(&id, &end)).await?;
                Ok(Approved {
                    result,
                    asked_again: false,
                })
            }
            Decision::Approve => {
                let outcome = self.approve_and_run(row, paused, progress, cancel).await;
                if outcome.is_err() {
                    let release_id = id.clone();
                    self.db(move |l| l.release_paused_task(&release_id)).await?;
                }
                outcome
            }
        }
    }

    /// Checks that what would happen now is what the approval was given for, uses the approval
    /// and runs the task on; otherwise asks again.
    async fn approve_and_run(
        &self,
        row: TaskRow,
        paused: OperationEvidence,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<Approved, OpsError> {
        let request = paused.approval.clone().expect("checked by the caller");
        let handler = self.handler_of(&row.contract, &paused).await?;
        let place = self.place(&row.contract);
        let ask = match request.step {
            None => self.task_gate(&row.contract, &handler).await?,
            Some(step) => match &handler {
                HandlerRef::Procedure(p) => {
                    let index = usize::try_from(step.saturating_sub(1)).unwrap_or(usize::MAX);
                    self.step_ask(&row.task_id, p, index, &place).await
                }
                HandlerRef::Capability(_) => None,
            },
        };
        let id = row.task_id.clone();
        let start = match (&ask, request.step) {
            (Some(ask), step) => {
                let (reference, fp) = (request.reference.clone(), ask.fingerprint.clone());
                let check_id = id.clone();
                let usable = self
                    .db(move |l| l.consume_task_approval(&check_id, &reference, &fp))
                    .await?;
                if !usable {
                    let result = self
                        .pause(&row.contract, paused, request.step, ask.clone())
                        .await?;
                    let end = TaskEnd::Result(result.clone());
                    self.db(move |l| l.finish_task(&id, &end)).await?;
                    return Ok(Approved {
                        result,
                        asked_again: true,
                    });
                }
                match step {
                    None => Start::TaskApproved,
                    Some(step) => Start::StepApproved {
                        index: usize::try_from(step.saturating_sub(1)).unwrap_or(usize::MAX),
                        fingerprint: ask.fingerprint.clone(),
                    },
                }
            }
            // Nothing needs approval any more (what would have been lost is gone): the
            // approval is used up and the task goes on.
            (None, step) => {
                let void_id = id.clone();
                self.db(move |l| l.void_task_approvals(&void_id)).await?;
                match step {
                    None => Start::TaskApproved,
                    Some(step) => Start::Resume {
                        index: usize::try_from(step.saturating_sub(1)).unwrap_or(usize::MAX),
                    },
                }
            }
        };
        let resume_id = id.clone();
        self.db(move |l| l.resume_task(&resume_id)).await?;
        let result = self
            .run_task(row.contract, handler, start, Some(paused), progress, cancel)
            .await?;
        Ok(Approved {
            result,
            asked_again: false,
        })
    }

    /// The handler a paused task was running with.
    async fn handler_of(
        &self,
        contract: &TaskContract,
        paused: &OperationEvidence,
    ) -> Result<HandlerRef, OpsError> {
        match &paused.by {
            Some(crate::contract::Handler::Procedure { id, .. }) => {
                let id = *id;
                let row = self.db(move |l| l.procedure(id)).await?.ok_or_else(|| {
                    OpsError::Internal(format!("procedure {id} of a paused task is gone"))
                })?;
                Ok(HandlerRef::Procedure(row))
            }
            Some(crate::contract::Handler::Capability { .. }) | None => self
                .capabilities
                .find(contract.intent())
                .map(HandlerRef::Capability)
                .ok_or_else(|| {
                    OpsError::Internal(format!(
                        "no capability for `{}` any more",
                        contract.intent()
                    ))
                }),
        }
    }

    /// `cancel_task`: stops a running task (its step's process group ends; its evidence says
    /// where it stopped), or ends one waiting for input or approval.
    pub async fn cancel(&self, task_id: &str) -> Result<TaskView, OpsError> {
        let row = self.task_row(task_id).await?;
        let id = row.task_id.clone();
        match row.status {
            TaskStatus::Running => {
                if running::cancel(&self.ledger_path, &id) {
                    self.wait_until_ended(&id, Duration::from_secs(60)).await;
                } else {
                    let ask_id = id.clone();
                    self.db(move |l| l.request_task_cancel(&ask_id)).await?;
                    self.wait_for_other_process(&id, Duration::from_secs(15))
                        .await?;
                }
            }
            TaskStatus::NeedInput | TaskStatus::NeedApproval => {
                let mut evidence = paused_evidence(&row, row.status, "paused")?;
                if evidence.approval.take().is_some() {
                    let void_id = id.clone();
                    self.db(move |l| l.void_task_approvals(&void_id)).await?;
                }
                evidence.needs = None;
                let step = evidence.stopped.as_ref().and_then(|s| s.step);
                evidence.stopped = Some(Stopped {
                    step,
                    reason: StopReason::Cancelled,
                });
                let result =
                    ResultContract::operation(id.clone(), ResultStatus::Cancelled, evidence);
                let (end_id, end) = (id.clone(), TaskEnd::Result(result));
                self.db(move |l| l.finish_task(&end_id, &end)).await?;
            }
            _ => {}
        }
        self.status(id.as_str()).await
    }

    /// Waits (bounded) until the task no longer runs in this process.
    async fn wait_until_ended(&self, id: &TaskId, limit: Duration) {
        let until = tokio::time::Instant::now() + limit;
        while running::is_running(&self.ledger_path, id) && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A task running in another Butler process saw the request (or its process is gone).
    async fn wait_for_other_process(&self, id: &TaskId, limit: Duration) -> Result<(), OpsError> {
        let until = tokio::time::Instant::now() + limit;
        loop {
            let (check, task) = (id.clone(), id.clone());
            let alive = self
                .db(move |l| {
                    Ok(l.open_operations()?.into_iter().any(|op| {
                        op.kind == TASK_OPERATION && op.detail == check.as_str() && op.owner_alive()
                    }))
                })
                .await?;
            let status = self.db(move |l| l.task(&task)).await?.map(|t| t.status);
            if status != Some(TaskStatus::Running) {
                return Ok(());
            }
            if !alive {
                let gone = id.clone();
                self.db(move |l| l.set_task_status(&gone, TaskStatus::Interrupted))
                    .await?;
                return Ok(());
            }
            if tokio::time::Instant::now() >= until {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `get_status`: where a task is, for a Brain that comes back after a restart.
    pub async fn status(&self, task_id: &str) -> Result<TaskView, OpsError> {
        let row = self.task_row(task_id).await?;
        let mut state = row.status;
        let id = row.task_id.clone();
        if state == TaskStatus::Running && !running::is_running(&self.ledger_path, &id) {
            let check = id.clone();
            let alive = self
                .db(move |l| {
                    Ok(l.open_operations()?.into_iter().any(|op| {
                        op.kind == TASK_OPERATION && op.detail == check.as_str() && op.owner_alive()
                    }))
                })
                .await?;
            if !alive {
                let gone = id.clone();
                self.db(move |l| l.set_task_status(&gone, TaskStatus::Interrupted))
                    .await?;
                state = TaskStatus::Interrupted;
            }
        }
        let progress = match (&row.end, state) {
            (None, _) if row.contract.implement().is_none() => {
                let p = id.clone();
                self.db(move |l| l.task_progress(&p)).await?
            }
            _ => None,
        };
        let (result, error) = match row.end {
            Some(TaskEnd::Result(r)) => (Some(r), None),
            Some(TaskEnd::Error(e)) => (None, Some(e)),
            None => (None, None),
        };
        Ok(TaskView {
            task_id: id,
            state,
            result,
            progress,
            error,
        })
    }
}

/// The intent of an operation contract.
pub(super) fn intent_of(contract: &TaskContract) -> IntentName {
    match &contract.work {
        crate::contract::Work::Operation { intent, .. } => intent.clone(),
        crate::contract::Work::Implement(_) => {
            IntentName::new(crate::contract::Work::IMPLEMENT).expect("`implement` is a name")
        }
    }
}

/// The target of an operation contract (empty for an implementation).
pub(super) fn target_of(contract: &TaskContract) -> &OperationTarget {
    static EMPTY: OperationTarget = OperationTarget(BTreeMap::new());
    match &contract.work {
        crate::contract::Work::Operation { target, .. } => target,
        crate::contract::Work::Implement(_) => &EMPTY,
    }
}

/// The live procedure for `target`: the most pinned signature, active before candidate,
/// newest first.
fn best_procedure(live: Vec<ProcedureRow>, target: &OperationTarget) -> Option<ProcedureRow> {
    live.into_iter()
        .filter(|p| p.signature.matches(target))
        .max_by_key(|p| {
            (
                p.signature.pinned(),
                p.status == ProcedureStatus::Active,
                p.id,
            )
        })
}

/// The command a step runs (its check's command for `check` and `wait`), if any.
pub(super) fn step_command(step: &Step) -> Option<CommandLine> {
    use crate::contract::procedure::Verifier;
    let verifier_line = |v: &Verifier| match v {
        Verifier::Command(c) => Some(CommandLine::Shell(c.command.clone())),
        Verifier::File(_) => None,
    };
    match step {
        Step::Cmd(c) => Some(c.run.clone()),
        Step::Check(v) => verifier_line(v),
        Step::Wait(w) => verifier_line(&w.until),
        Step::McpCall(_) => None,
    }
}

/// The evidence of a task that paused (waiting in `status`), or `WrongState`.
fn paused_evidence(
    row: &TaskRow,
    status: TaskStatus,
    expected: &'static str,
) -> Result<OperationEvidence, OpsError> {
    if row.status != status || !matches!(status, TaskStatus::NeedInput | TaskStatus::NeedApproval) {
        return Err(OpsError::WrongState {
            task: row.task_id.clone(),
            status: row.status,
            expected,
        });
    }
    match &row.end {
        Some(TaskEnd::Result(r)) => r.operation_evidence().cloned().ok_or_else(|| {
            OpsError::Internal(format!("task {} paused without its evidence", row.task_id))
        }),
        _ => Err(OpsError::Internal(format!(
            "task {} paused without a result",
            row.task_id
        ))),
    }
}

fn steps_error(field: &str, problem: impl Into<String>, refused: bool) -> OpsError {
    OpsError::Steps {
        problems: vec![FieldProblem {
            field: field.to_owned(),
            problem: problem.into(),
        }],
        refused,
    }
}
