//! [6] and [7a] Scope and the Maid's record: changes outside the target paths are set aside as
//! a patch in the task's directory; the rest is committed by the Maid as a ledger record linked
//! to the task (and its issue).

use butler_worker::git::TaskGit;
use butler_worker::ledger::{Ledger, RecordId};
use butler_worker::record::{self, Draft};

use super::TaskRun;
use super::attempt::AttemptStart;
use super::context::target;
use super::workspace::Workspace;
use crate::contract::TaskContract;
use crate::error::MaidError;
use crate::scope::scope_violations;

/// What the attempt left in the worktree and what the Maid recorded of it.
pub(super) struct Recorded {
    /// Every path the agent changed (in scope or not).
    pub changed: Vec<String>,
    /// Changed paths outside the target paths (set aside, not recorded).
    pub scope_violation: Vec<String>,
    /// The Maid's record of the in-scope changes, if there were any.
    pub record: Option<RecordId>,
    /// The task's recorded changes so far, from the record it started from, as a patch (what
    /// the guards read: a test weakened in an earlier attempt still counts until it is put
    /// back).
    pub patch: String,
    /// The task line's tip after the record.
    pub head: String,
}

impl TaskRun<'_> {
    /// Sets the out-of-scope changes aside and records the rest (nothing is recorded when the
    /// task was cancelled).
    pub(super) async fn record(
        &self,
        workspace: &Workspace,
        start: &AttemptStart,
        cancelled: bool,
    ) -> Result<Recorded, MaidError> {
        let wt = workspace.wt.clone();
        let (attempt, from) = (start.attempt, workspace.base.clone());
        self.blocking(move |s| {
            let changed = wt.changed_paths()?;
            let scope_violation = scope_violations(&changed, &target(&s.contract)?.target_paths);
            let patch = wt.set_aside(&scope_violation)?;
            if !patch.is_empty() {
                let file = s
                    .paths
                    .task_dir
                    .join(format!("attempt-{attempt}-out-of-scope.patch"));
                std::fs::write(&file, patch).map_err(|e| MaidError::io("writing", &file, e))?;
            }
            let in_scope: Vec<String> = changed
                .iter()
                .filter(|p| !scope_violation.contains(p))
                .cloned()
                .collect();
            let record = if in_scope.is_empty() || cancelled {
                None
            } else {
                Some(s.with_ledger(|l| record_attempt(&wt, l, &s.contract, attempt, &in_scope))?)
            };
            Ok(Recorded {
                patch: wt.diff(&from, "HEAD")?,
                head: wt.head_sha()?,
                changed,
                scope_violation,
                record,
            })
        })
        .await
    }
}

/// The Maid's own commit of the in-scope changes, as a ledger record linked to the task (and
/// its issue). Returns the record id.
fn record_attempt(
    wt: &TaskGit,
    ledger: &Ledger,
    contract: &TaskContract,
    attempt: u32,
    paths: &[String],
) -> Result<RecordId, MaidError> {
    let message = format!(
        "{}\n\nWork of an implementation agent (attempt {attempt}), recorded by the ImplementMaid.",
        target(contract)?.subject()
    );
    let issues: Vec<u64> = contract.issue_id.into_iter().collect();
    let branch = contract.task_id.branch();
    let draft = Draft {
        message: &message,
        issue_ids: &issues,
        line: Some(&branch),
        task: Some(&contract.task_id),
    };
    let before = wt.head_sha()?;
    let reservation = record::reserve(ledger, &draft)?;
    match wt.commit_paths(paths, reservation.text()) {
        Ok(sha) => Ok(reservation.complete(ledger, &sha)?),
        Err(e) => {
            let settled = match wt.head_sha() {
                Ok(now) => reservation.fail(ledger, Some(&before), Some(&now)),
                Err(_) => reservation.abandon(ledger),
            };
            if let Err(lost) = settled {
                tracing::warn!(%lost, "a failed record could not be settled in the ledger");
            }
            Err(e.into())
        }
    }
}
