//! Saving the work as one record (the record protocol) and what `work_record` is asked and
//! answers: what both a plain record ([`crate::work::record`]) and the end of an unfinished
//! operation ([`crate::work::conclude`]) stand on.

use std::time::{Duration, UNIX_EPOCH};

use butler_worker::git::{GitRepo, NotRecordable, RepoPath, TreeLock, WorkTreeStatus};
use butler_worker::ledger::{Ledger, process_alive};
use butler_worker::record::{self as protocol, Draft, RecordMessage, Rewrite};
use serde::Serialize;

use crate::catalogue::{Key, fill, text};
use crate::error::WorkError;
use crate::session::Project;

const JOURNAL_KIND: &str = "record";
/// How many paths a note names before it only counts.
pub(crate) const NOTE_PATHS: usize = 5;

/// Where a record's message comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// The Brain's own words (validated).
    Given(String),
    /// None given: answer `need_input` with one proposed from the change.
    Missing,
    /// Record with the message proposed from the change (`work_finish(auto=true)`).
    Proposed,
}

/// What `work_record` was asked.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub message: Message,
    /// `None`: use the active issue; `Some(vec![])`: explicitly no link.
    pub issue_ids: Option<Vec<u64>>,
    /// Paths that look like credentials which the user confirmed may be recorded.
    pub allow_sensitive: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordOutcome {
    pub record_id: Option<String>,
    pub issue_ids: Vec<u64>,
    pub files: usize,
    /// The unfinished operation this call finished or carried on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<OperationOutcome>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What became of the operation `work_record` finished.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OperationOutcome {
    /// git's name of it (`rebase`, `merge`, `cherry-pick`, `revert`, `am`).
    pub name: &'static str,
    /// It ran to its end; `false`: it paused again without a conflict (call work_record again
    /// to go on).
    pub finished: bool,
}

impl RecordOutcome {
    /// The answer's one-line summary.
    pub fn summary(&self) -> String {
        let op = self.operation.as_ref();
        match (&self.record_id, op) {
            (Some(id), Some(o)) if o.finished => {
                fill(Key::OpFinishedAsRecord, &[("op", &o.name), ("id", id)])
            }
            (None, Some(o)) if o.finished => fill(Key::OpFinished, &[("op", &o.name)]),
            (_, Some(o)) => fill(Key::OpPausedAgain, &[("op", &o.name)]),
            (Some(id), None) => fill(Key::Recorded, &[("id", id)]),
            (None, None) => text(Key::NothingRecorded).to_string(),
        }
    }
}

/// A record saved by [`save`].
pub(crate) struct Saved {
    pub id: String,
    /// What happened around it, for the answer.
    pub notes: Vec<String>,
}

/// Saves the work in the tree (all of `status` but what it cannot save) as one record, through
/// the record protocol: journal, reserve an id, commit, settle the id by how the commit ended
/// (a failure gives the id back, so ids stay consecutive). `None` when git found nothing to
/// save after all. `held` is Butler's lock on the tree.
pub(crate) fn save(
    project: &Project,
    held: &TreeLock,
    status: &WorkTreeStatus,
    message: &str,
    issue_ids: &[u64],
    line: &str,
) -> Result<Option<Saved>, WorkError> {
    let repo = &project.repo;
    let mut notes = Vec::new();
    project.with_ledger(|ledger| recover(repo, held, ledger, &mut notes))?;
    repo.wait_for_index(held)?;
    let head_before = repo.head()?.oid;
    let draft = Draft {
        message,
        issue_ids,
        line: Some(line),
        task: None,
    };
    let (op, reservation) = project.with_ledger(|ledger| {
        let op = ledger.begin_operation(JOURNAL_KIND, std::process::id(), line)?;
        Ok((op, protocol::reserve(ledger, &draft)?))
    })?;
    let outcome = repo.record_work(held, reservation.text(), &nested_repositories(status));
    let settled = project.with_ledger(|ledger| {
        let settled = match &outcome {
            Ok(recorded) => {
                Some(reservation.complete_saved(ledger, &recorded.sha, &recorded.saved_message)?)
            }
            Err(_) => {
                match repo.head() {
                    Ok(now) => {
                        reservation.fail(ledger, head_before.as_deref(), now.oid.as_deref())?
                    }
                    Err(_) => reservation.abandon(ledger)?,
                }
                None
            }
        };
        ledger.end_operation(op)?;
        Ok(settled)
    })?;
    let recorded = match outcome {
        Ok(recorded) => recorded,
        Err(butler_worker::git::GitError::NothingToRecord) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let (id, rewrite) = settled.expect("settled with the record");
    if let Some(rewrite) = rewrite {
        notes.push(rewrite_note(&rewrite));
    }
    if !recorded.outside_sparse.is_empty() {
        notes.push(fill(
            Key::NoteSparseRecorded,
            &[
                ("n", &recorded.outside_sparse.len()),
                ("list", &paths_list(&recorded.outside_sparse)),
            ],
        ));
    }
    if !recorded.changed_meanwhile.is_empty() {
        notes.push(fill(
            Key::NoteHookChangedMeanwhile,
            &[
                ("hooks", &recorded.hooks.join("/")),
                ("n", &recorded.changed_meanwhile.len()),
                ("list", &paths_list(&recorded.changed_meanwhile)),
            ],
        ));
    }
    Ok(Some(Saved {
        id: id.to_string(),
        notes,
    }))
}

/// The nested repositories of `status`: kept out of what a record stages.
pub(crate) fn nested_repositories(status: &WorkTreeStatus) -> Vec<RepoPath> {
    status
        .unrecordable
        .iter()
        .filter(|u| u.why == NotRecordable::NestedRepository)
        .map(|u| u.path.clone())
        .collect()
}

/// What a `commit-msg` hook's rewrite of the message changed, for the answer.
fn rewrite_note(rewrite: &Rewrite) -> String {
    let mut note = text(Key::NoteMessageRewritten).to_string();
    if rewrite.lost_record_id {
        note.push_str(text(Key::NoteTrailerDropped));
    }
    if !rewrite.lost_issue_ids.is_empty() {
        let refs: Vec<String> = rewrite
            .lost_issue_ids
            .iter()
            .map(|n| format!("#{n}"))
            .collect();
        note.push_str(&fill(
            Key::NoteIssueRefsDropped,
            &[("refs", &refs.join(", "))],
        ));
    }
    note
}

/// `a, b, c and 2 more`.
pub(crate) fn paths_list(paths: &[RepoPath]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(NOTE_PATHS)
        .map(RepoPath::display)
        .collect();
    let more = paths.len().saturating_sub(NOTE_PATHS);
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&fill(Key::AndMore, &[("more", &more)]));
    }
    text
}

/// Finishes what a Butler process that died mid-record left behind: its stale lock file,
/// its reserved id (completed if the commit happened, abandoned if not).
fn recover(
    repo: &GitRepo,
    held: &TreeLock,
    ledger: &Ledger,
    notes: &mut Vec<String>,
) -> Result<(), WorkError> {
    for op in ledger.open_operations()? {
        if op.kind != JOURNAL_KIND || process_alive(op.pid) {
            continue;
        }
        if let Some(lock) = repo.index_lock() {
            let secs = u64::try_from(op.started_at.unix().saturating_sub(2)).unwrap_or(0);
            let started = UNIX_EPOCH + Duration::from_secs(secs);
            if lock.modified >= started {
                repo.remove_index_lock(held, &lock)?;
                notes.push(text(Key::ClearedLockNote).into());
            }
        }
        ledger.end_operation(op.id)?;
    }
    let pending = ledger.pending_records()?;
    let commits = match pending.is_empty() {
        true => Vec::new(),
        false => repo.recent_commits(20, None)?,
    };
    for pending in pending {
        let found = commits
            .iter()
            .find(|c| RecordMessage::parse(&c.message).record_id.as_ref() == Some(&pending.id));
        match found {
            Some(commit) => {
                ledger.complete_record(&pending.id, &commit.sha)?;
            }
            None => ledger.abandon_record(&pending.id)?,
        }
    }
    Ok(())
}
