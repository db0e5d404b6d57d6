//! The end of a finished task's life: accepted (its records brought into the Brain's line by a
//! line merge) or discarded; either way its worktree is removed and its branch kept aside.

use std::path::{Path, PathBuf};

use butler_worker::git::{Committer, MergeOutcome, TaskGit, merge_line};
use butler_worker::ledger::{Ledger, RecordId};
use butler_worker::record::{Draft, RecordMessage};
use butler_worker::time::SharedClock;
use butler_worker::tool_config::{ToolConfigChange, tool_config_changes};

use super::blocking;
use super::context::{open_ledger, repository_ledger, require_recorded};
use super::paths::{Paths, beside, worktrees_dir};
use crate::contract::{TaskContract, TaskId, TaskStatus};
use crate::error::MaidError;

/// What accepting a task did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Accepted {
    pub task_id: String,
    /// The Brain's line now points here.
    pub head: String,
    /// Whether a merge record was needed (the Brain's line had moved on).
    pub merged: bool,
    /// The records brought in (the task's, then the merge record if any).
    pub records: Vec<RecordId>,
}

fn task_tip(main: &TaskGit, task_id: &str) -> Result<(TaskId, String), MaidError> {
    let id = TaskId::new(task_id).map_err(|_| MaidError::NoSuchTask(task_id.to_owned()))?;
    let tip = main
        .rev(&format!("refs/heads/{}", id.branch()))?
        .ok_or_else(|| MaidError::NoSuchTask(task_id.to_owned()))?;
    Ok((id, tip))
}

/// Removes a task's worktree (wherever it is: git's own list, else the ledger's record of it;
/// a worktree that vanished is only pruned) and the agent's and verify commands' directories
/// beside it, keeps the branch under `refs/butler/<how>/`, and deletes the branch.
fn retire(main: &TaskGit, ledger: &Ledger, task_id: &TaskId, how: &str) -> Result<(), MaidError> {
    let branch = task_id.branch();
    let worktree = match main.worktree_of_branch(&branch)? {
        Some(path) => Some(path),
        None => ledger
            .task(task_id)?
            .and_then(|t| t.worktree)
            .map(PathBuf::from),
    };
    let worktree = worktree.unwrap_or_else(|| {
        Paths::of(
            &worktrees_dir(None, main),
            main.common_dir(),
            task_id.as_str(),
        )
        .worktree
    });
    main.retire_task(
        &worktree,
        &branch,
        &format!("refs/butler/{how}/task-{task_id}"),
    )?;
    for dir in [beside(&worktree, ".agent"), beside(&worktree, ".verify")] {
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), %e, "could not remove a task directory");
        }
    }
    Ok(())
}

/// Brings a finished task's records into the Brain's line (a line merge: fast-forward, or a
/// merge record when the line moved on), then removes the task's worktree. The branch is kept
/// under `refs/butler/accepted/`. Refused while the Brain's tree has unrecorded changes, and
/// while the line changes files that configure tools or run code (`butler_worker::tool_config`)
/// that are not among `confirmed` (`ToolConfigUnconfirmed`: nothing is brought in). A
/// conflicting merge is left in progress for the Brain to resolve and record
/// (`MergeConflicted`); the task stays open until it is accepted again.
pub async fn accept(
    project_root: &Path,
    task_id: &str,
    clock: SharedClock,
    confirmed: &[String],
) -> Result<Accepted, MaidError> {
    let (root, task_id) = (project_root.to_path_buf(), task_id.to_owned());
    let confirmed = confirmed.to_vec();
    blocking(move || {
        let main = TaskGit::open(&root)?;
        let (task_id, tip) = task_tip(&main, &task_id)?;
        require_recorded(&main)?;
        let before = main.head_sha()?;
        let unconfirmed: Vec<ToolConfigChange> =
            tool_config_changes(&main.changed_since_fork(&before, &tip)?)
                .into_iter()
                .filter(|c| !confirmed.contains(&c.path))
                .collect();
        if !unconfirmed.is_empty() {
            return Err(MaidError::ToolConfigUnconfirmed {
                task: task_id.to_string(),
                changes: unconfirmed,
            });
        }
        let ledger = open_ledger(&repository_ledger(&main), &clock)?;
        let mut records: Vec<RecordId> = main
            .commits_between(&before, &tip)?
            .iter()
            .filter_map(|(_, message)| RecordMessage::parse(message).record_id)
            .collect();
        let contract = ledger.task(&task_id)?.map(|t| t.contract);
        let issues: Vec<u64> = contract
            .as_ref()
            .and_then(|c| c.issue_id)
            .into_iter()
            .collect();
        let message = match contract.as_ref().and_then(TaskContract::implement) {
            Some(target) => format!("Accept task {task_id}: {}", target.subject()),
            None => format!("Accept task {task_id}"),
        };
        let line = main
            .head_ref()?
            .map(|r| r.trim_start_matches("refs/heads/").to_owned());
        let draft = Draft {
            message: &message,
            issue_ids: &issues,
            line: line.as_deref(),
            task: Some(&task_id),
        };
        // Accepting is a line merge: the same one the Brain's work_merge_line makes.
        let merged =
            match merge_line::<MaidError>(main.repo(), &ledger, &tip, &draft, Committer::Maid)? {
                MergeOutcome::AlreadyIn { .. } | MergeOutcome::FastForward { .. } => false,
                MergeOutcome::Merged { record, .. } => {
                    records.push(record);
                    true
                }
                MergeOutcome::Conflicted { files } => {
                    return Err(MaidError::MergeConflicted {
                        line: task_id.branch(),
                        files,
                    });
                }
            };
        retire(&main, &ledger, &task_id, "accepted")?;
        if ledger.task(&task_id)?.is_some() {
            ledger.set_task_status(&task_id, TaskStatus::Accepted)?;
        }
        Ok(Accepted {
            task_id: task_id.to_string(),
            head: main.head_sha()?,
            merged,
            records,
        })
    })
    .await
}

/// Drops a task: its worktree is removed, its branch kept under `refs/butler/discarded/`.
pub async fn discard(
    project_root: &Path,
    task_id: &str,
    clock: SharedClock,
) -> Result<(), MaidError> {
    let (root, task_id) = (project_root.to_path_buf(), task_id.to_owned());
    blocking(move || {
        let main = TaskGit::open(&root)?;
        let (task_id, _) = task_tip(&main, &task_id)?;
        let ledger = open_ledger(&repository_ledger(&main), &clock)?;
        retire(&main, &ledger, &task_id, "discarded")?;
        if ledger.task(&task_id)?.is_some() {
            ledger.set_task_status(&task_id, TaskStatus::Discarded)?;
        }
        Ok(())
    })
    .await
}
