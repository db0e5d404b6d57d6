//! `work_observe`: where the Brain is — state, changed files, recent records, active issue,
//! and the one thing it must do next. The replacement for `git status`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use butler_worker::git::{GitRepo, HeadInfo, InProgress, WorkTreeStatus};
use serde::Serialize;

use crate::catalogue::{Key, fill, text};
use crate::envelope::Reply;
use crate::error::{BlockReason, WorkError};
use crate::session::{Project, blocking};
use crate::work::line::{self, LineView};
use crate::work::records::{RecordView, records_for};
use crate::work::state::{self, Decision, Facts, RequiredAction, WorkState};

/// git subcommands this tool replaces (collected by `crate::equivalents`).
pub const GIT_EQUIVALENTS: &[&str] = &["status"];

/// How many changed paths are listed before the rest is only counted.
pub const CHANGED_FILES_CAP: usize = 100;
/// How many recent records are shown (work_history has the rest).
pub const RECENT_RECORDS: usize = 3;
/// How far back outside-Butler records are looked for on each observation.
const OUTSIDE_SCAN_LIMIT: usize = 50;
/// How long `work_observe` waits for the tracker to name the active issue.
const TITLE_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ActiveIssue {
    pub number: u64,
    pub title: Option<String>,
}

/// `work_observe`'s data (the seed's shape). What is absent is null: every byte is read by
/// the Brain on every observation. The seed's `default_issue` is not shown: it is
/// `active_issue.number`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Observation {
    pub work_state: WorkState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_issue: Option<ActiveIssue>,
    pub changed_files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_files_more: Option<usize>,
    pub recent_records: Vec<RecordView>,
    pub unpublished_records: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_action: Option<RequiredAction>,
    pub available_next: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The answer when no session has been started.
pub fn uninitialized() -> Reply {
    let d = state::uninitialized();
    let obs = Observation {
        work_state: d.state,
        active_issue: None,
        changed_files: None,
        changed_files_more: None,
        recent_records: Vec::new(),
        unpublished_records: None,
        required_action: d.required_action,
        available_next: d.available_next,
        notes: Vec::new(),
    };
    Reply::new(d.summary, obs)
}

/// What was read from git and the ledger, before the tracker is asked for a title.
struct Gathered {
    facts: Facts,
    changed: Vec<String>,
    recent: Vec<RecordView>,
    outside_new: usize,
    line: Option<LineView>,
}

pub async fn observe(project: &Arc<Project>) -> Reply {
    let gathered = blocking(project, gather).await;
    let gathered = match gathered {
        Ok(g) => g,
        Err(err) => {
            tracing::warn!(error = %err, "work_observe could not read the project");
            let d = state::unknown(text(Key::UnknownUnreadable));
            return reply(d, None, (Vec::new(), None), Vec::new(), None, Vec::new());
        }
    };
    let mut notes = Vec::new();
    let active = match gathered.facts.active_issue {
        Some(number) => Some(ActiveIssue {
            number,
            title: title(project, number, &mut notes).await,
        }),
        None => None,
    };
    let mut d = state::decide(&gathered.facts);
    if gathered.outside_new > 0 {
        d.summary
            .push_str(&fill(Key::OutsideRecords, &[("n", &gathered.outside_new)]));
    }
    let unpublished = gathered.facts.unpublished;
    let changed = cap(gathered.changed);
    let mut answer = reply(d, active, changed, gathered.recent, unpublished, notes);
    line::attach(&mut answer, gathered.line);
    answer
}

fn reply(
    d: Decision,
    active_issue: Option<ActiveIssue>,
    (changed, more): (Vec<String>, Option<usize>),
    recent: Vec<RecordView>,
    unpublished: Option<usize>,
    notes: Vec<String>,
) -> Reply {
    let obs = Observation {
        work_state: d.state,
        active_issue,
        changed_files: Some(changed),
        changed_files_more: more,
        recent_records: recent,
        unpublished_records: unpublished,
        required_action: d.required_action,
        available_next: d.available_next,
        notes,
    };
    Reply::new(d.summary, obs)
}

fn cap(mut changed: Vec<String>) -> (Vec<String>, Option<usize>) {
    if changed.len() > CHANGED_FILES_CAP {
        let more = changed.len() - CHANGED_FILES_CAP;
        changed.truncate(CHANGED_FILES_CAP);
        (changed, Some(more))
    } else {
        (changed, None)
    }
}

/// The line of work the project is on (the branch), used to remember the active issue.
pub fn line_of(head: &HeadInfo) -> String {
    head.branch.clone().unwrap_or_else(|| "(detached)".into())
}

/// Why the repository cannot take a record, if it cannot.
fn block_reason(repo: &GitRepo, head: &HeadInfo, conflicted: &[String]) -> Option<BlockReason> {
    if let Some(op) = repo.operation_in_progress() {
        return Some(BlockReason::InProgress(match op {
            InProgress::Merge => "merge",
            InProgress::Rebase => "rebase",
            InProgress::CherryPick => "cherry-pick",
            InProgress::Revert => "revert",
            InProgress::Bisect => "bisect",
            InProgress::ApplyMailbox => "patch application",
        }));
    }
    if !conflicted.is_empty() {
        return Some(BlockReason::Conflicts(conflicted.to_vec()));
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

pub fn snapshot(repo: &GitRepo) -> Result<Snapshot, WorkError> {
    let head = repo.head()?;
    let status = repo.status()?;
    let conflicted: Vec<String> = status.conflicted.iter().map(|p| p.display()).collect();
    let blocked = block_reason(repo, &head, &conflicted);
    Ok(Snapshot {
        head,
        status,
        blocked,
    })
}

fn gather(project: &Project) -> Result<Gathered, WorkError> {
    let repo = &project.repo;
    let Snapshot {
        head,
        status,
        blocked,
    } = snapshot(repo)?;
    let changed: Vec<String> = status.entries.iter().map(|e| e.path.display()).collect();
    let destination = repo.destination()?;
    let unpublished = match &destination {
        Some(dest) if head.oid.is_some() => Some(repo.unpublished(dest, 1000)?),
        _ => None,
    };
    let unpublished_set: Option<HashSet<String>> = unpublished
        .as_ref()
        .map(|u| u.shas.iter().cloned().collect());
    let line = line_of(&head);
    let key = project.key();
    let (active_issue, outside_new, recent) = project.with_ledger(|ledger| {
        let active = ledger.active_issue(&key, &line)?;
        let previous = ledger.mark_observed(&key, &line, head.oid.as_deref())?;
        let mut outside_new = 0;
        if let (Some(prev), Some(now)) = (previous.as_deref(), head.oid.as_deref())
            && prev != now
        {
            let is_known = |sha: &str| sha == prev || ledger.is_known_sha(sha).unwrap_or(false);
            let new_commits = repo.commits_since(&is_known, OUTSIDE_SCAN_LIMIT)?;
            outside_new = records_for(ledger, &new_commits, unpublished_set.as_ref())?.1;
        }
        let recent = if head.oid.is_some() {
            let commits = repo.recent_commits(RECENT_RECORDS, None)?;
            records_for(ledger, &commits, unpublished_set.as_ref())?.0
        } else {
            Vec::new()
        };
        Ok((active, outside_new, recent))
    })?;
    let line_view = line::line_view(repo, &head, unpublished.as_ref());
    let facts = Facts {
        blocked,
        changed: changed.len(),
        unpublished: destination
            .as_ref()
            .map(|_| unpublished.as_ref().map_or(0, |u| u.count)),
        active_issue,
    };
    Ok(Gathered {
        facts,
        changed,
        recent,
        outside_new,
        line: line_view,
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
