//! Delegated operations at the Brain's edge: `submit_task`, `approve`, `teach`, `cancel_task`,
//! `get_status`, `list_skills`, `get_skill_usage` as plain async functions for the thin MCP
//! tools. The engine (`butler_worker::ops`) does the work; this module gives it the project's
//! command judge ([`judge`]) and Butler's capabilities ([`capabilities`]), and words every
//! answer for the Brain: the Result Contract as `data`, a summary that says what to do next.
//!
//! A task that fails is not a tool error (its evidence says why); a contract or steps that
//! cannot be used, an unknown task, or a decision other than `approve`/`deny` are.

pub mod args;
mod capabilities;
mod judge;

use std::sync::Arc;

use butler_worker::contract::{
    Evidence, Handler, Needed, OperationEvidence, ResultContract, ResultStatus, StopReason,
};
use butler_worker::ops::confine::StepSandbox;
use butler_worker::ops::{Engine, EngineParts, Progress, TeachRequest};
use butler_worker::sandbox::Network;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::args::{ApproveArgs, SubmitTaskArgs, TeachArgs};
use crate::catalogue::{Key, fill, text};
use crate::envelope::Reply;
use crate::error::{ConfigProblem, WorkError};
use crate::session::Project;

/// The engine for `project`: its ledger, the configuration in force for its session, the project's judge and Butler's
/// capabilities.
async fn engine(project: &Arc<Project>) -> Result<Engine, WorkError> {
    Engine::open(EngineParts {
        repo: project.repo.clone(),
        config: project.config.delegation.clone(),
        clock: project.clock.clone(),
        judge: Arc::new(judge::ProjectJudge::new(project.repo.clone())),
        capabilities: capabilities::registry(project),
        helper: Some(crate::implement::butler_program(&project.env)?),
        sandbox: step_sandbox(project)?,
        retention: crate::work::oplog::retention(|name| project.env.get(name).map(str::to_owned)),
    })
    .await
    .map_err(WorkError::Delegation)
}

/// How the project's steps are confined: the agents' mode (`BUTLER_SANDBOX` over `[agent]
/// sandbox`) and extra writable trees (`[agent] sandbox_writable`), the procedures' network
/// (`[delegation] network`, default open).
fn step_sandbox(project: &Project) -> Result<StepSandbox, WorkError> {
    let mut s = StepSandbox::default();
    let agent = &project.config.agent;
    let env_mode = project.env.get("BUTLER_SANDBOX").map(str::to_owned);
    if let Some(mode) = crate::implement::sandbox_mode(env_mode, agent)? {
        s.mode = mode;
    }
    if let Some(setting) = &project.config.delegation.delegation.network {
        const SETTING: &str = "[delegation] network";
        let problem = |detail: String| WorkError::Config {
            problem: ConfigProblem::Unreadable {
                setting: SETTING,
                detail,
            },
        };
        s.network =
            match butler_worker::sandbox::NetworkChoice::from_setting(setting).map_err(problem)? {
                butler_worker::sandbox::NetworkChoice::Open => Network::Open,
                butler_worker::sandbox::NetworkChoice::Ports(connect_tcp) => {
                    Network::Restricted { connect_tcp }
                }
                // A procedure's steps have no egress proxy of their own (yet).
                butler_worker::sandbox::NetworkChoice::Proxy => {
                    return Err(WorkError::Config {
                        problem: ConfigProblem::NetworkProxy { setting: SETTING },
                    });
                }
            };
    }
    // The same deny list as the agents': the user's stores, found from Butler's environment.
    let user = butler_worker::sandbox::deny_read::UserDirs::from_lookup(|name| {
        project.env.get(name).map(std::path::PathBuf::from)
    });
    s.deny_read = butler_worker::sandbox::deny_read::deny_list(&user, &agent.deny_read)
        .into_iter()
        .map(|d| d.path)
        .collect();
    s.readable = vec![
        project.repo.workdir().to_path_buf(),
        project.repo.common_dir().to_path_buf(),
    ];
    s.extra_writable = agent
        .sandbox_writable
        .iter()
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect();
    Ok(s)
}

/// `submit_task`.
pub async fn submit_task(
    project: &Arc<Project>,
    args: SubmitTaskArgs,
    progress: Progress,
    cancel: CancellationToken,
) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let result = engine
        .submit(serde_json::Value::Object(args.contract), progress, cancel)
        .await
        .map_err(WorkError::Delegation)?;
    Ok(Reply::new(summary_of(&result), result))
}

/// `teach`.
pub async fn teach(
    project: &Arc<Project>,
    args: TeachArgs,
    progress: Progress,
    cancel: CancellationToken,
) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let request = TeachRequest {
        task_id: args.task_id,
        intent: args.intent,
        target: args.target,
        steps: args
            .steps
            .into_iter()
            .map(serde_json::Value::Object)
            .collect(),
    };
    let taught = engine
        .teach(request, progress, cancel)
        .await
        .map_err(WorkError::Delegation)?;
    let p = &taught.procedure;
    let mut summary = fill(
        Key::ProcedureStored,
        &[
            ("id", &p.id),
            ("intent", &p.intent),
            (
                "target",
                &if p.target.is_empty() {
                    text(Key::ProcedureNoTarget)
                } else {
                    &p.target
                },
            ),
            ("status", &p.status.as_str()),
            (
                "replacing",
                &taught
                    .replaced
                    .map(|old| fill(Key::ProcedureReplacing, &[("old", &old)]))
                    .unwrap_or_default(),
            ),
        ],
    );
    if !taught.approval_each_run.is_empty() {
        summary.push_str(&fill(
            Key::ProcedureApprovalEachRun,
            &[("n", &taught.approval_each_run.len())],
        ));
    }
    if let Some(result) = &taught.result {
        summary.push(' ');
        summary.push_str(&summary_of(result));
    }
    Ok(Reply::new(summary, taught))
}

/// `approve`.
pub async fn approve(
    project: &Arc<Project>,
    args: ApproveArgs,
    progress: Progress,
    cancel: CancellationToken,
) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let approved = engine
        .approve(&args.task_id, args.decision, progress, cancel)
        .await
        .map_err(WorkError::Delegation)?;
    let mut summary = summary_of(&approved.result);
    if approved.asked_again {
        summary = fill(Key::OpApprovalStale, &[("summary", &summary)]);
    }
    Ok(Reply::new(summary, approved.result))
}

/// `cancel_task`.
pub async fn cancel_task(project: &Arc<Project>, task_id: &str) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let view = engine
        .cancel(task_id)
        .await
        .map_err(WorkError::Delegation)?;
    let summary = match &view.result {
        Some(result) => summary_of(result),
        None => fill(
            Key::DelegatedTaskIs,
            &[
                ("task", &view.task_id),
                ("state", &view.state),
                ("more", &""),
            ],
        ),
    };
    Ok(Reply::new(summary, view))
}

/// `get_status`.
pub async fn get_status(project: &Arc<Project>, task_id: &str) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let view = engine
        .status(task_id)
        .await
        .map_err(WorkError::Delegation)?;
    let summary = match &view.result {
        Some(result) => fill(
            Key::DelegatedTaskIsThen,
            &[
                ("task", &view.task_id),
                ("state", &view.state),
                ("summary", &summary_of(result)),
            ],
        ),
        _ => fill(
            Key::DelegatedTaskIs,
            &[
                ("task", &view.task_id),
                ("state", &view.state),
                (
                    "more",
                    &view
                        .progress
                        .as_ref()
                        .map(|p| fill(Key::DelegatedStepsDone, &[("n", &p.steps.len())]))
                        .unwrap_or_default(),
                ),
            ],
        ),
    };
    Ok(Reply::new(summary, view))
}

/// `list_skills`.
pub async fn list_skills(project: &Arc<Project>) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let skills = engine.skills().await.map_err(WorkError::Delegation)?;
    let procedures = skills.iter().filter(|s| s.by == "procedure").count();
    Ok(Reply::new(
        fill(
            Key::SkillsListed,
            &[
                ("capabilities", &(skills.len() - procedures)),
                ("procedures", &procedures),
            ],
        ),
        json!({"skills": skills}),
    ))
}

/// `get_skill_usage`.
pub async fn get_skill_usage(project: &Arc<Project>, name: &str) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let usage = engine.usage(name).await.map_err(WorkError::Delegation)?;
    let summary = match &usage {
        butler_worker::ops::SkillUsage::Common(_) => text(Key::SkillCommonUsage).to_owned(),
        _ => fill(Key::SkillUsage, &[("name", &name)]),
    };
    Ok(Reply::new(summary, usage))
}

/// One line for the Brain: how the task ended or why it waits, and what to call next.
pub fn summary_of(result: &ResultContract) -> String {
    let id = &result.task_id;
    match &result.evidence {
        Evidence::Implement(e) => crate::implement::summary_of(id, e),
        Evidence::Operation(e) => operation_summary(result, e),
    }
}

fn operation_summary(result: &ResultContract, e: &OperationEvidence) -> String {
    let task = result.task_id.as_str();
    let intent = e.intent.as_str();
    let at = |e: &OperationEvidence| {
        e.stopped
            .as_ref()
            .and_then(|s| s.step)
            .map(|n| fill(Key::OpAtStep, &[("n", &n)]))
            .unwrap_or_default()
    };
    match result.status {
        ResultStatus::Ok => {
            let verifiers = if e.verify.is_empty() {
                ""
            } else {
                text(Key::OpVerifiersPassed)
            };
            let mut s = fill(
                Key::OpSucceeded,
                &[
                    ("task", &task),
                    ("intent", &intent),
                    ("n", &e.steps.len()),
                    ("verifiers", &verifiers),
                ],
            );
            if let Some(Handler::Procedure {
                id: pid, status, ..
            }) = &e.by
            {
                s.push_str(&fill(
                    Key::OpProcedureStatus,
                    &[("id", pid), ("status", &status.as_str())],
                ));
            }
            s
        }
        ResultStatus::Failed => {
            let why = match e.stopped.as_ref().map(|s| s.reason) {
                Some(StopReason::TimedOut) => text(Key::OpWhyTimedOut).to_owned(),
                Some(StopReason::Refused) => text(Key::OpWhyRefused).to_owned(),
                _ if e.verify.passed() => e
                    .steps
                    .iter()
                    .find(|s| s.outcome != butler_worker::contract::StepOutcome::Passed)
                    .map(|s| fill(Key::OpWhyStepFailed, &[("what", &s.what)]))
                    .unwrap_or_else(|| text(Key::OpWhyAStepFailed).to_owned()),
                _ => text(Key::OpWhyVerifiers).to_owned(),
            };
            fill(
                Key::OpFailed,
                &[
                    ("task", &task),
                    ("intent", &intent),
                    ("at", &at(e)),
                    ("why", &why),
                ],
            )
        }
        ResultStatus::Cancelled => match e.stopped.as_ref().map(|s| s.reason) {
            Some(StopReason::Denied) => {
                fill(Key::OpDenied, &[("task", &task), ("intent", &intent)])
            }
            _ => fill(
                Key::OpCancelled,
                &[("task", &task), ("intent", &intent), ("at", &at(e))],
            ),
        },
        ResultStatus::NeedInput => match &e.needs {
            Some(Needed::Procedure { signature }) => fill(
                Key::OpNoProcedure,
                &[
                    ("task", &task),
                    ("intent", &intent),
                    (
                        "target",
                        &if signature.is_empty() {
                            "{}"
                        } else {
                            signature.as_str()
                        },
                    ),
                ],
            ),
            None => fill(Key::OpNeedsInput, &[("task", &task), ("intent", &intent)]),
        },
        ResultStatus::NeedApproval => match &e.approval {
            Some(a) => fill(
                Key::OpWaitsApproval,
                &[
                    ("task", &task),
                    ("reference", &a.reference),
                    ("operation", &a.operation),
                ],
            ),
            None => fill(Key::OpWaitsApprovalBare, &[("task", &task)]),
        },
    }
}
