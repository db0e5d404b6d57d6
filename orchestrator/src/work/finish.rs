//! `work_finish`: the closing checklist. Without `auto` it proposes, never executes (seed BWR,
//! Phase 1); `work_finish(auto=true)` carries the steps out ([`crate::work::auto_finish`]).

use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::work::observe::{Snapshot, line_of, snapshot};

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
            format!("The work is blocked: {}.", reason.describe()),
            one("work_vcs", reason.hint().to_string(), &["args"]),
        ));
    }
    if !status.entries.is_empty() {
        let reason = format!("{} unrecorded change(s)", status.entries.len());
        return Ok((
            "Unrecorded work remains: record it first.".into(),
            one("work_record", reason, &["message"]),
        ));
    }
    let Some(dest) = repo.destination()? else {
        return Ok((
            "No shared destination is configured, so it is unknown whether the work is shared."
                .into(),
            one(
                "configure_destination",
                "Ask the user for the shared destination, then add it with work_vcs([\"remote\", \"add\", \"origin\", \"<url>\"])".into(),
                &["url"],
            ),
        ));
    };
    if head.oid.is_some() {
        let pending = repo.unpublished(&dest, 1)?;
        if pending.count > 0 {
            return Ok((
                "Recorded work is not shared yet.".into(),
                one(
                    "work_publish",
                    format!("{} unshared record(s)", pending.count),
                    &[],
                ),
            ));
        }
    }
    let line = line_of(&head);
    let Some(issue) = project.with_ledger(|l| Ok(project.active_issue(l, &line)?))? else {
        return Ok((
            "All work is recorded and shared; no active issue to close.".into(),
            FinishPlan {
                pending_actions: Vec::new(),
            },
        ));
    };
    let plan = FinishPlan {
        pending_actions: vec![
            PendingAction {
                action: "issue_comment",
                reason: format!("Leave a summary of the work on issue #{issue}"),
                required_args: vec!["issue_id", "body"],
                issue_id: Some(issue),
            },
            PendingAction {
                action: "issue_close",
                reason: format!("The work looks done. Close issue #{issue}?"),
                required_args: vec!["issue_id"],
                issue_id: Some(issue),
            },
        ],
    };
    Ok((
        "All work is recorded and shared. Check the proposals below.".into(),
        plan,
    ))
}
