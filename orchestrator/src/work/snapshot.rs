//! What every tool that changes or judges the work reads first: the line, the working tree,
//! whether the project can take a record, and the active issue's title.

use std::sync::Arc;
use std::time::Duration;

use butler_worker::git::{GitRepo, HeadInfo, WorkTreeStatus};

use crate::catalogue::{Key, fill, text};
use crate::error::{BlockReason, Unfinished, WorkError};
use crate::session::Project;

/// How long `work_observe` waits for the tracker to name the active issue.
const TITLE_TIMEOUT: Duration = Duration::from_secs(3);

/// The line of work the project is on (the branch), used to remember the active issue.
pub fn line_of(head: &HeadInfo) -> String {
    head.branch.clone().unwrap_or_else(|| "(detached)".into())
}

/// Why the repository cannot take a record as usual, if it cannot: an operation git has not
/// finished, conflicts (with where markers remain), or a detached HEAD.
fn block_reason(repo: &GitRepo, head: &HeadInfo, status: &WorkTreeStatus) -> Option<BlockReason> {
    let op = repo.operation_in_progress();
    if op.is_some() || !status.conflicted.is_empty() {
        return Some(BlockReason::Unfinished(Unfinished {
            op,
            conflicted: status.conflicted.iter().map(|p| p.display()).collect(),
            unresolved: repo.conflict_markers(&status.conflicted),
        }));
    }
    if head.detached {
        return Some(BlockReason::Detached);
    }
    None
}

/// The line, the working tree and whether the project can take a record: what every tool
/// that changes or judges the work reads first.
pub struct Snapshot {
    pub head: HeadInfo,
    pub status: WorkTreeStatus,
    pub blocked: Option<BlockReason>,
}

impl Snapshot {
    /// Refuses when the project cannot take a record: an operation under way, conflicted
    /// files, or a detached line.
    pub fn refuse_blocked(&self) -> Result<(), WorkError> {
        self.blocked
            .clone()
            .map_or(Ok(()), |reason| Err(WorkError::Blocked(reason)))
    }

    /// [`Self::refuse_blocked`] for line changes, the way out of a detached line.
    pub fn refuse_blocked_unless_detached(&self) -> Result<(), WorkError> {
        match &self.blocked {
            Some(BlockReason::Detached) => Ok(()),
            _ => self.refuse_blocked(),
        }
    }
}

pub fn snapshot(repo: &GitRepo) -> Result<Snapshot, WorkError> {
    let head = repo.head()?;
    let status = repo.status()?;
    let blocked = block_reason(repo, &head, &status);
    Ok(Snapshot {
        head,
        status,
        blocked,
    })
}

/// The active issue's title, from the cache or the tracker; `None` (with a note) when the
/// tracker cannot say — `work_observe` never fails because of the tracker.
pub async fn title(project: &Arc<Project>, number: u64, notes: &mut Vec<String>) -> Option<String> {
    if let Some(t) = project
        .titles
        .lock()
        .ok()
        .and_then(|cache| cache.get(&number).cloned())
    {
        return Some(t);
    }
    match tokio::time::timeout(TITLE_TIMEOUT, project.issues.read(number)).await {
        Ok(Ok(issue)) => {
            if let Ok(mut cache) = project.titles.lock() {
                cache.insert(number, issue.title.clone());
            }
            Some(issue.title)
        }
        Ok(Err(butler_worker::issues::IssueError::NotFound { .. })) => {
            notes.push(fill(Key::IssueMissingNote, &[("issue", &number)]));
            None
        }
        Ok(Err(_)) | Err(_) => {
            notes.push(text(Key::TrackerSilentNote).into());
            None
        }
    }
}
