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
    Evidence, Handler, Needed, OperationEvidence, Outcome, ResultContract, ResultStatus, StopReason,
};
use butler_worker::ops::{Engine, EngineParts, Progress, TeachRequest};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::args::{ApproveArgs, SubmitTaskArgs, TeachArgs};
use crate::envelope::Reply;
use crate::error::WorkError;
use crate::session::Project;

/// The engine for `project`: its ledger, its configuration, the project's judge and Butler's
/// capabilities.
async fn engine(project: &Arc<Project>) -> Result<Engine, WorkError> {
    Engine::open(EngineParts {
        repo: project.repo.clone(),
        clock: project.clock.clone(),
        judge: Arc::new(judge::ProjectJudge::new(project.repo.clone())),
        capabilities: capabilities::registry(project),
    })
    .await
    .map_err(WorkError::Delegation)
}

/// Progress of a call as MCP progress notifications (when the client asked for them).
pub fn progress_of(ctx: &RequestContext<RoleServer>) -> Progress {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, f64)>();
    if let Some(token) = ctx.meta.get_progress_token() {
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let mut last = -1.0_f64;
            while let Some((message, fraction)) = rx.recv().await {
                // MCP progress must increase.
                let fraction = if fraction > last {
                    fraction
                } else {
                    last + 1e-6
                };
                last = fraction;
                let note = ProgressNotificationParam::new(token.clone(), fraction)
                    .with_total(1.0)
                    .with_message(message);
                let _ = peer.notify_progress(note).await;
            }
        });
    }
    Arc::new(move |message: String, fraction: f64| {
        let _ = tx.send((message, fraction));
    })
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
    let mut summary = format!(
        "Procedure {} for `{}` ({}) stored as {}{}.",
        p.id,
        p.intent,
        if p.target.is_empty() {
            "no target"
        } else {
            &p.target
        },
        p.status.as_str(),
        taught
            .replaced
            .map(|old| format!(", replacing procedure {old}"))
            .unwrap_or_default()
    );
    if !taught.approval_each_run.is_empty() {
        summary.push_str(&format!(
            " {} step(s) will wait for the user's approval on every run.",
            taught.approval_each_run.len()
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
        summary = format!(
            "The approval no longer matches what would happen now (it changed, or the approval \
             expired), so nothing ran. {summary}"
        );
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
        None => format!("Task {} is {}.", view.task_id, view.state),
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
        Some(result) => format!(
            "Task {} is {}. {}",
            view.task_id,
            view.state,
            summary_of(result)
        ),
        _ => format!(
            "Task {} is {}{}.",
            view.task_id,
            view.state,
            view.progress
                .as_ref()
                .map(|p| format!(" ({} step(s) done so far)", p.steps.len()))
                .unwrap_or_default()
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
        format!(
            "{} capabilit(y/ies) and {procedures} taught procedure(s). get_skill_usage(name) \
             shows one's contract.",
            skills.len() - procedures
        ),
        json!({"skills": skills}),
    ))
}

/// `get_skill_usage`.
pub async fn get_skill_usage(project: &Arc<Project>, name: &str) -> Result<Reply, WorkError> {
    let engine = engine(project).await?;
    let usage = engine.usage(name).await.map_err(WorkError::Delegation)?;
    let summary = match &usage {
        butler_worker::ops::SkillUsage::Common(_) => {
            "The contract every task shares and the step kinds teach takes.".to_owned()
        }
        _ => format!("How to submit `{name}`: fill in data.example and pass it to submit_task."),
    };
    Ok(Reply::new(summary, usage))
}

/// One line for the Brain: how the task ended or why it waits, and what to call next.
pub fn summary_of(result: &ResultContract) -> String {
    let id = &result.task_id;
    match &result.evidence {
        Evidence::Implement(e) => {
            let n = e.attempts.len();
            match e.outcome {
                Outcome::Succeeded => format!(
                    "Task {id} succeeded in {n} attempt(s) on line {}. Read the evidence, then \
                     task_accept or task_discard.",
                    e.branch
                ),
                Outcome::Failed => format!(
                    "Task {id} failed after {n} attempt(s); the evidence says why. Submit again, \
                     do it yourself, or task_discard."
                ),
                Outcome::Cancelled => {
                    format!(
                        "Task {id} was cancelled; its line {} is kept until task_discard.",
                        e.branch
                    )
                }
            }
        }
        Evidence::Operation(e) => operation_summary(result, e),
    }
}

fn operation_summary(result: &ResultContract, e: &OperationEvidence) -> String {
    let id = &result.task_id;
    let intent = &e.intent;
    let at = |e: &OperationEvidence| {
        e.stopped
            .as_ref()
            .and_then(|s| s.step)
            .map(|n| format!(" at step {n}"))
            .unwrap_or_default()
    };
    match result.status {
        ResultStatus::Ok => {
            let mut s = format!(
                "Task {id} (`{intent}`) succeeded: {} step(s) passed{}.",
                e.steps.len(),
                if e.verify.is_empty() {
                    ""
                } else {
                    ", and so did the verifiers"
                }
            );
            if let Some(Handler::Procedure {
                id: pid, status, ..
            }) = &e.by
            {
                s.push_str(&format!(" Procedure {pid} is {}.", status.as_str()));
            }
            s
        }
        ResultStatus::Failed => {
            let why = match e.stopped.as_ref().map(|s| s.reason) {
                Some(StopReason::TimedOut) => "its time limit ran out".to_owned(),
                Some(StopReason::Refused) => "Butler refused a step".to_owned(),
                _ if e.verify.passed() => e
                    .steps
                    .iter()
                    .find(|s| s.outcome != butler_worker::contract::StepOutcome::Passed)
                    .map(|s| format!("`{}` did not pass", s.what))
                    .unwrap_or_else(|| "a step did not pass".to_owned()),
                _ => "its verifiers did not pass".to_owned(),
            };
            format!(
                "Task {id} (`{intent}`) failed{}: {why}. The evidence says why; teach a better \
                 procedure or do it another way.",
                at(e)
            )
        }
        ResultStatus::Cancelled => match e.stopped.as_ref().map(|s| s.reason) {
            Some(StopReason::Denied) => format!(
                "Task {id} (`{intent}`) ended: the user denied the approval, so nothing more ran."
            ),
            _ => format!(
                "Task {id} (`{intent}`) was cancelled{}; nothing after it ran.",
                at(e)
            ),
        },
        ResultStatus::NeedInput => match &e.needs {
            Some(Needed::Procedure { signature }) => format!(
                "Butler knows no procedure for `{intent}` with target `{}`. Teach one: \
                 teach(task_id=\"{id}\", steps=[…]) (get_skill_usage(\"butler\") shows the step \
                 kinds); the task then runs.",
                if signature.is_empty() {
                    "{}"
                } else {
                    signature
                }
            ),
            None => format!("Task {id} (`{intent}`) needs input."),
        },
        ResultStatus::NeedApproval => match &e.approval {
            Some(a) => format!(
                "Task {id} waits for the user's approval ({}): {}. Ask the user; then \
                 approve(task_id=\"{id}\", decision=\"approve\") or decision=\"deny\".",
                a.reference, a.operation
            ),
            None => format!("Task {id} waits for the user's approval."),
        },
    }
}
