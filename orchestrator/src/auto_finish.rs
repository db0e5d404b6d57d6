//! `work_finish(auto=true)`: carries out, in order, what needs no judgement — record the
//! remaining work (the given message, else the one proposed from the change), publish, leave
//! a summary comment on the active issue (the given text, else the records linked to it since
//! its last comment) — and closes the issue only when asked (`close=true`).
//!
//! Each step is one whole operation (a record, a publication, a comment, a state change), so
//! stopping between steps leaves nothing half-done. The first step that fails stops the run:
//! the answer is that step's error, with `data.done` (what was carried out) and `data.left`
//! (the failing step with its own error envelope, then the steps not tried).
//!
//! It stands above both `work` (record, publish) and `issue_ops` (comment, close), which is why
//! it is not one of `work`'s files: `issue_ops` itself stands on `work`'s secret gate.

use crate::catalogue::{Key, fill, text};
use std::sync::Arc;

use butler_worker::issues::IssueState;
use butler_worker::time::Timestamp;
use serde::Serialize;
use serde_json::json;

use crate::envelope::Reply;
use crate::error::{FinishStop, WorkError};
use crate::issue_ops;
use crate::session::{Project, blocking};
use crate::tool::Tool;
use crate::work::publish;
use crate::work::record::{self, Message, RecordRequest};
use crate::work::records::records_for;
use crate::work::snapshot::line_of;

/// How far back records are looked for when the comment is written from them.
const SUMMARY_SCAN: usize = 50;
/// The most records a summary comment lists.
const SUMMARY_RECORDS: usize = 20;

/// One step of the run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Record,
    Publish,
    Comment,
    Close,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Record => "record",
            Step::Publish => "publish",
            Step::Comment => "comment",
            Step::Close => "close",
        }
    }

    /// The tool the step stands for (its errors' hints name it).
    fn tool(self) -> Tool {
        match self {
            Step::Record => Tool::WorkRecord,
            Step::Publish => Tool::WorkPublish,
            Step::Comment => Tool::IssueComment,
            Step::Close => Tool::IssueClose,
        }
    }
}

/// What a step did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepDone {
    pub step: Step,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_records: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<u64>,
    /// Why the step had nothing to do, when it had not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<&'static str>,
}

impl StepDone {
    fn new(step: Step) -> Self {
        StepDone {
            step,
            record_id: None,
            published_records: None,
            issue_id: None,
            comment_id: None,
            skipped: None,
        }
    }

    fn skipped(step: Step, why: &'static str) -> Self {
        StepDone {
            skipped: Some(why),
            ..StepDone::new(step)
        }
    }
}

/// What `work_finish(auto=true, …)` was asked.
#[derive(Debug, Clone, Default)]
pub struct AutoFinish {
    /// The record's message; `None`: proposed from the change.
    pub message: Option<String>,
    /// The issue comment; `None`: a summary of the records.
    pub comment: Option<String>,
    /// Close the active issue at the end.
    pub close: bool,
}

/// The run in progress: what is done, and how a failure is reported.
struct Run {
    steps: Vec<Step>,
    done: Vec<StepDone>,
}

impl Run {
    fn stopped(&self, step: Step, cause: WorkError) -> WorkError {
        let after = self.steps.iter().skip_while(|s| **s != step).skip(1);
        WorkError::FinishStopped(Box::new(FinishStop {
            step: step.name(),
            tool: step.tool(),
            cause,
            done: serde_json::to_value(&self.done).expect("steps serialize"),
            left: after.map(|s| s.name()).collect(),
        }))
    }
}

pub async fn auto_finish(project: &Arc<Project>, req: AutoFinish) -> Result<Reply, WorkError> {
    let mut steps = vec![Step::Record, Step::Publish, Step::Comment];
    if req.close {
        steps.push(Step::Close);
    }
    let mut run = Run {
        steps,
        done: Vec::new(),
    };

    let message = match req.message {
        Some(text) => Message::Given(text),
        None => Message::Proposed,
    };
    let request = RecordRequest {
        message,
        issue_ids: None,
        allow_sensitive: Vec::new(),
    };
    match blocking(project, move |p| record::record(p, request)).await {
        Ok(outcome) => run.done.push(match outcome.record_id {
            Some(id) => StepDone {
                record_id: Some(id),
                ..StepDone::new(Step::Record)
            },
            None => StepDone::skipped(Step::Record, text(Key::SkipNothingToRecord)),
        }),
        Err(e) => return Err(run.stopped(Step::Record, e)),
    }

    let destination = match blocking(project, |p| publish::publish(p, &[])).await {
        Ok(outcome) => {
            run.done.push(StepDone {
                published_records: Some(outcome.published_records),
                ..StepDone::new(Step::Publish)
            });
            outcome.destination
        }
        Err(e) => return Err(run.stopped(Step::Publish, e)),
    };

    let issue = match active_issue(project).await {
        Ok(issue) => issue,
        Err(e) => return Err(run.stopped(Step::Comment, e)),
    };
    let Some(issue) = issue else {
        for step in [Step::Comment, Step::Close] {
            if run.steps.contains(&step) {
                run.done
                    .push(StepDone::skipped(step, text(Key::SkipNoActiveIssue)));
            }
        }
        return Ok(finished(run, None));
    };

    let body = match req.comment {
        Some(text) => Some(text),
        None => match summary(project, issue, &destination).await {
            Ok(body) => body,
            Err(e) => return Err(run.stopped(Step::Comment, e)),
        },
    };
    match body {
        Some(body) => match issue_ops::comment(project, issue_id(issue), &body).await {
            Ok(reply) => run.done.push(StepDone {
                issue_id: Some(issue),
                comment_id: reply.data["comment"]["id"].as_u64(),
                ..StepDone::new(Step::Comment)
            }),
            Err(e) => return Err(run.stopped(Step::Comment, e)),
        },
        None => run.done.push(StepDone {
            issue_id: Some(issue),
            ..StepDone::skipped(Step::Comment, text(Key::SkipNoNewRecords))
        }),
    }

    if req.close {
        if let Err(e) = issue_ops::set_state(project, issue_id(issue), IssueState::Closed).await {
            return Err(run.stopped(Step::Close, e));
        }
        run.done.push(StepDone {
            issue_id: Some(issue),
            ..StepDone::new(Step::Close)
        });
    }
    Ok(finished(run, Some(issue)))
}

fn issue_id(issue: u64) -> i64 {
    i64::try_from(issue).expect("issue numbers are small")
}

fn finished(run: Run, issue: Option<u64>) -> Reply {
    Reply::new(
        summary_of(&run.done, issue),
        json!({"done": run.done, "left": []}),
    )
}

/// The one-line account of a finished run, from what each step did.
fn summary_of(done: &[StepDone], issue: Option<u64>) -> String {
    let mut parts = Vec::new();
    let mut closed = false;
    for step in done.iter().filter(|s| s.skipped.is_none()) {
        match step.step {
            Step::Record => parts.extend(
                step.record_id
                    .as_ref()
                    .map(|id| fill(Key::AutoRecorded, &[("id", id)])),
            ),
            Step::Publish => match step.published_records {
                Some(n) if n > 0 => parts.push(fill(Key::AutoShared, &[("n", &n)])),
                _ => {}
            },
            Step::Comment => parts.push(fill(
                Key::AutoCommented,
                &[("issue", &step.issue_id.unwrap_or(0))],
            )),
            Step::Close => {
                closed = true;
                parts.push(fill(
                    Key::AutoClosed,
                    &[("issue", &step.issue_id.unwrap_or(0))],
                ));
            }
        }
    }
    let mut summary = match parts.split_first() {
        None => text(Key::AutoNothing).to_owned(),
        Some((first, rest)) => {
            let mut done = capitalised(first);
            for part in rest {
                done.push_str(text(Key::AutoJoin));
                done.push_str(part);
            }
            fill(Key::AutoDone, &[("steps", &done)])
        }
    };
    match issue {
        Some(n) if !closed => summary.push_str(&fill(Key::AutoStaysOpen, &[("issue", &n)])),
        Some(_) => {}
        None => summary.push_str(text(Key::AutoNoIssue)),
    }
    summary
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

async fn active_issue(project: &Arc<Project>) -> Result<Option<u64>, WorkError> {
    blocking(project, |p| {
        let head = p.repo.head()?;
        Ok(p.active_issue(&line_of(&head)))
    })
    .await
}

/// The summary comment: the records linked to `issue` since its last comment (all of them
/// when it has none), newest first; `None` when there are none.
async fn summary(
    project: &Arc<Project>,
    issue: u64,
    destination: &str,
) -> Result<Option<String>, WorkError> {
    let last = project.issues.last_comments(issue, 1).await?;
    let since = last
        .first()
        .and_then(|c| Timestamp::parse(&c.created_at).ok());
    let records = blocking(project, |p| {
        let commits = p.repo.recent_commits(SUMMARY_SCAN, None)?;
        p.with_ledger(|l| Ok(records_for(&p.repo, l, &commits, None)?.0))
    })
    .await?;
    let lines: Vec<String> = records
        .iter()
        .filter(|r| r.issue_ids.contains(&issue))
        .filter(|r| since.is_none_or(|s| r.created_at > s))
        .take(SUMMARY_RECORDS)
        .map(|r| format!("- {} {}", r.id, r.message))
        .collect();
    Ok(summary_text(&lines, destination))
}

fn summary_text(lines: &[String], destination: &str) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "Work summary ({} record(s), shared to {destination}):\n{}",
        lines.len(),
        lines.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_lists_what_was_done_and_what_is_left() {
        let run = Run {
            steps: vec![Step::Record, Step::Publish, Step::Comment, Step::Close],
            done: vec![StepDone {
                record_id: Some("20260415-001".into()),
                ..StepDone::new(Step::Record)
            }],
        };
        let WorkError::FinishStopped(stop) = run.stopped(Step::Publish, WorkError::NoDestination)
        else {
            panic!("a stop");
        };
        let FinishStop {
            step,
            tool,
            left,
            done,
            ..
        } = *stop;
        assert_eq!((step, tool), ("publish", Tool::WorkPublish));
        assert_eq!(left, vec!["comment", "close"]);
        assert_eq!(
            done,
            json!([{"step": "record", "record_id": "20260415-001"}])
        );
    }

    #[test]
    fn the_account_says_what_happened() {
        let done = vec![
            StepDone {
                record_id: Some("20260415-002".into()),
                ..StepDone::new(Step::Record)
            },
            StepDone {
                published_records: Some(2),
                ..StepDone::new(Step::Publish)
            },
            StepDone {
                issue_id: Some(5),
                comment_id: Some(1),
                ..StepDone::new(Step::Comment)
            },
        ];
        assert_eq!(
            summary_of(&done, Some(5)),
            "Recorded 20260415-002, shared 2 record(s), commented on #5. #5 stays open (close=true closes it)."
        );
        let nothing = vec![
            StepDone::skipped(Step::Record, "nothing to record"),
            StepDone {
                published_records: Some(0),
                ..StepDone::new(Step::Publish)
            },
            StepDone::skipped(Step::Comment, "no active issue"),
        ];
        assert_eq!(
            summary_of(&nothing, None),
            "Nothing was left to record, share or comment. No active issue."
        );
    }

    #[test]
    fn the_summary_lists_records_or_nothing() {
        assert_eq!(summary_text(&[], "origin/main"), None);
        assert_eq!(
            summary_text(&["- 20260415-001 Add x".into()], "origin/main").as_deref(),
            Some("Work summary (1 record(s), shared to origin/main):\n- 20260415-001 Add x")
        );
    }
}
