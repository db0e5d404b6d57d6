//! `work_finish`: the closing checklist. Without `auto` it proposes, never executes (as in
//! the user's earlier Butler); `work_finish(auto=true)` carries the steps out ([`crate::auto_finish`]).

use crate::catalogue::{Key, fill, text};
use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::tool::Tool;
use crate::work::snapshot::{Snapshot, line_of, snapshot};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PendingAction {
    pub action: &'static str,
    pub reason: String,
    pub required_args: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<u64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FinishPlan {
    pub pending_actions: Vec<PendingAction>,
}

fn one(action: &'static str, reason: String, args: &[&'static str]) -> FinishPlan {
    FinishPlan {
        pending_actions: vec![PendingAction {
            action,
            reason,
            required_args: args.to_vec(),
            issue_id: None,
        }],
    }
}

/// The checklist, in order; the first unmet step stops it.
pub fn finish(project: &Project) -> Result<(String, FinishPlan), WorkError> {
    let repo = &project.repo;
    let Snapshot {
        head,
        status,
        blocked,
    } = snapshot(repo)?;
    if let Some(reason) = blocked {
        return Ok((
            fill(Key::FinishBlocked, &[("what", &reason.describe())]),
            one(Tool::WorkVcs.as_str(), reason.hint().to_string(), &["args"]),
        ));
    }
    if !status.entries.is_empty() {
        let reason = fill(Key::FinishUnrecordedReason, &[("n", &status.entries.len())]);
        return Ok((
            text(Key::FinishUnrecorded).into(),
            one(Tool::WorkRecord.as_str(), reason, &["message"]),
        ));
    }
    let Some(dest) = repo.destination()? else {
        return Ok((
            text(Key::FinishNoDestination).into(),
            one(
                "configure_destination",
                text(Key::FinishNoDestinationHint).into(),
                &["url"],
            ),
        ));
    };
    if head.oid.is_some() {
        let pending = repo.unpublished(&dest, 1)?;
        if pending.count > 0 {
            return Ok((
                text(Key::FinishUnshared).into(),
                one(
                    Tool::WorkPublish.as_str(),
                    fill(Key::FinishUnsharedReason, &[("n", &pending.count)]),
                    &[],
                ),
            ));
        }
    }
    let line = line_of(&head);
    let Some(issue) = project.active_issue(&line) else {
        return Ok((
            text(Key::FinishNoIssue).into(),
            FinishPlan {
                pending_actions: Vec::new(),
            },
        ));
    };
    let plan = FinishPlan {
        pending_actions: vec![
            PendingAction {
                action: Tool::IssueComment.as_str(),
                reason: fill(Key::FinishCommentReason, &[("issue", &issue)]),
                required_args: vec!["issue_id", "body"],
                issue_id: Some(issue),
            },
            PendingAction {
                action: Tool::IssueClose.as_str(),
                reason: fill(Key::FinishCloseReason, &[("issue", &issue)]),
                required_args: vec!["issue_id"],
                issue_id: Some(issue),
            },
        ],
    };
    Ok((text(Key::FinishProposals).into(), plan))
}
