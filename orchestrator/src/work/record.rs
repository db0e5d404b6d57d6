//! `work_record`: saves all current work (tracked, untracked, deletions; ignore rules
//! respected) as one permanent record linked to issues. With a merge, rebase, cherry-pick,
//! revert or `am` stopped on conflicts, it is also how that operation is finished once the
//! Brain has edited the files (see `conclude.rs`).
//!
//! What it saves is what `work_observe` calls unrecorded: a nested repository or work inside a
//! submodule is neither counted there nor saved here, and both say why. What the project's
//! hooks did is reported: a message a `commit-msg` hook rewrote (history and the record show
//! the rewritten one; lost trailers are named), files a formatting hook changed without
//! saving them. Conflict markers in the lines a record adds, with no conflict under way, are
//! recorded as asked but named in a warning.
//!
//! Crash safety: the record id is reserved in the ledger and the operation journaled before
//! anything is written; the saved message carries the id as a trailer. A server killed at any
//! instant leaves either no record (the reservation is abandoned later) or a record that the
//! next call recognises by its trailer. Files in the tree are never touched by recording. It
//! runs holding Butler's lock on the working tree (waiting for another Butler); a git lock file
//! left by a dead Butler operation is recognised through the journal and removed; one held by
//! anything else is waited for a moment, then reported, never removed.

use crate::catalogue::{Key, fill, text};
use std::time::{Duration, UNIX_EPOCH};

use butler_worker::git::{
    Added, Change, GitRepo, NotRecordable, RepoPath, TreeLock, WorkTreeStatus, marker_starts,
};
use butler_worker::ledger::{Ledger, process_alive};
use butler_worker::record::{self as protocol, Draft, RecordMessage, Rewrite};
use serde::Serialize;

use crate::error::{BlockReason, WorkError};
use crate::session::Project;
use crate::work::conclude;
use crate::work::observe::{Snapshot, line_of, snapshot, unrecordable_notes};
use crate::work::propose::{ChangedFile, FileKind, propose};
use crate::work::sensitive;

pub const MAX_MESSAGE_CHARS: usize = 10_000;
pub const MAX_ISSUE_IDS: usize = 20;
const JOURNAL_KIND: &str = "record";

/// How much unrecorded patch a proposed message is built from (the file list is complete).
const PROPOSAL_PATCH_BYTES: usize = 256 * 1024;
/// How much of one changed file is read when looking for conflict markers it adds.
const MARKER_SCAN_BYTES: usize = 4 << 20;
/// How many paths a note names before it only counts.
const NOTE_PATHS: usize = 5;

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
            (Some(id), None) => fill(Key::Recorded, &[("id", id), ("n", &self.files)]),
            (None, None) => text(Key::NothingRecorded).to_string(),
        }
    }
}

pub fn validate_message(message: &str) -> Result<String, WorkError> {
    let trimmed = message.trim();
    if trimmed.is_empty() {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: "it is empty; say in one line what the work does".into(),
        });
    }
    if trimmed.chars().count() > MAX_MESSAGE_CHARS {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: format!("it is longer than {MAX_MESSAGE_CHARS} characters"),
        });
    }
    if trimmed.contains('\0') {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: "it contains a NUL character".into(),
        });
    }
    Ok(trimmed.to_string())
}

pub fn validate_issue_ids(ids: &[i64]) -> Result<Vec<u64>, WorkError> {
    if ids.len() > MAX_ISSUE_IDS {
        return Err(WorkError::InvalidArgument {
            field: "issue_ids",
            reason: format!("at most {MAX_ISSUE_IDS} issues can be linked"),
        });
    }
    let mut out = Vec::new();
    for &id in ids {
        let id = crate::work::issue_number(id, "issue_ids")?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

pub fn record(project: &Project, req: RecordRequest) -> Result<RecordOutcome, WorkError> {
    let repo = &project.repo;
    let snap = snapshot(repo)?;
    let line = line_of(&snap.head);
    let issue_ids = match req.issue_ids.clone() {
        Some(ids) => ids,
        None => project.active_issue(&line).into_iter().collect(),
    };
    match &snap.blocked {
        Some(BlockReason::Unfinished(unfinished)) if unfinished.op.is_some() => {
            return conclude::finish(project, &snap, unfinished, req, issue_ids);
        }
        Some(BlockReason::Unfinished(unfinished)) if !unfinished.unresolved.is_empty() => {
            return Err(WorkError::ConflictMarkers(unfinished.clone()));
        }
        // Conflicts left without an operation (a stash applied with conflicts), resolved:
        // recording them saves the resolution.
        Some(BlockReason::Unfinished(_)) | None => {}
        Some(reason @ BlockReason::Detached) => return Err(WorkError::Blocked(reason.clone())),
    }
    let Snapshot { status, .. } = snap;
    if status.entries.is_empty() {
        let mut notes = vec![text(Key::NothingUnrecordedNote).to_string()];
        notes.extend(unrecordable_notes(&status));
        return Ok(RecordOutcome {
            record_id: None,
            issue_ids,
            files: 0,
            operation: None,
            notes,
        });
    }
    let message = match req.message {
        Message::Given(text) => text,
        Message::Missing => {
            return Err(WorkError::MessageNeeded {
                proposed: proposal(repo)?,
            });
        }
        Message::Proposed => proposal(repo)?,
    };
    let mut notes = sensitive::check_record(
        repo,
        &status,
        &message,
        &req.allow_sensitive,
        &project.known_secrets,
    )?;
    notes.extend(added_markers_warning(repo, &status)?);
    let held = repo.lock_tree()?;
    let saved = save(project, &held, &status, &message, &issue_ids, &line)?;
    let Some(saved) = saved else {
        // Another process recorded the same work first.
        return Ok(RecordOutcome {
            record_id: None,
            issue_ids,
            files: 0,
            operation: None,
            notes: vec![text(Key::AlreadyRecordedNote).into()],
        });
    };
    notes.extend(saved.notes);
    notes.extend(unrecordable_notes(&status));
    Ok(RecordOutcome {
        record_id: Some(saved.id),
        issue_ids,
        files: status.entries.len(),
        operation: None,
        notes,
    })
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
        notes.push(format!(
            "{} file(s) outside the sparse checkout's directories were recorded too: {}.",
            recorded.outside_sparse.len(),
            paths_list(&recorded.outside_sparse)
        ));
    }
    if !recorded.changed_meanwhile.is_empty() {
        notes.push(format!(
            "The project's {} hook changed {} file(s) while recording without saving the change: {}. The record holds them as they were; the hook's changes are unrecorded now (save them with work_record).",
            recorded.hooks.join("/"),
            recorded.changed_meanwhile.len(),
            paths_list(&recorded.changed_meanwhile)
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
    let mut text = "The project's commit-msg hook rewrote the message; history and the record show the rewritten one.".to_string();
    if rewrite.lost_record_id {
        text.push_str(
            " It dropped Butler's record trailer: Butler still knows the record by its commit.",
        );
    }
    if !rewrite.lost_issue_ids.is_empty() {
        let refs: Vec<String> = rewrite
            .lost_issue_ids
            .iter()
            .map(|n| format!("#{n}"))
            .collect();
        text.push_str(&format!(
            " It dropped the issue reference(s) {}: the tracker will not link them to this record.",
            refs.join(", ")
        ));
    }
    text
}

/// Conflict markers in the lines this record adds, with no conflict under way: recorded as
/// asked, but named.
fn added_markers_warning(
    repo: &GitRepo,
    status: &WorkTreeStatus,
) -> Result<Option<String>, WorkError> {
    let mut found: Vec<String> = Vec::new();
    let mut files = 0;
    repo.unrecorded_additions(status, MARKER_SCAN_BYTES, &mut |addition| {
        let Added::Text { lines, .. } = &addition.content else {
            return;
        };
        let starts = marker_starts(lines.iter().copied());
        if starts.is_empty() {
            return;
        }
        files += 1;
        if found.len() < NOTE_PATHS {
            let lines: Vec<String> = starts.iter().take(5).map(ToString::to_string).collect();
            found.push(format!("{} (line {})", addition.path, lines.join(", ")));
        }
    })?;
    if files == 0 {
        return Ok(None);
    }
    let more = if files > found.len() { ", …" } else { "" };
    Ok(Some(fill(
        Key::WarnStrayMarkers,
        &[
            ("files", &files),
            ("list", &found.join(", ")),
            ("more", &more),
        ],
    )))
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
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The message [`propose`] builds from the unrecorded change.
pub fn proposal(repo: &GitRepo) -> Result<String, WorkError> {
    let files: Vec<ChangedFile> = repo
        .diff_overview(None)?
        .into_iter()
        .map(|stat| ChangedFile {
            path: stat.path.display(),
            kind: match stat.change {
                Change::Added | Change::Untracked => FileKind::Added,
                Change::Deleted => FileKind::Deleted,
                Change::Modified | Change::TypeChanged | Change::Conflicted => FileKind::Modified,
            },
        })
        .collect();
    let patch = repo.diff_patch(None, PROPOSAL_PATCH_BYTES)?;
    Ok(propose(&files, &patch.text))
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
