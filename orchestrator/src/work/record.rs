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

use butler_worker::git::{Added, Change, GitRepo, WorkTreeStatus, marker_starts};

use crate::error::{BlockReason, WorkError, markers_at};
use crate::session::Project;
use crate::work::conclude;
use crate::work::observe::unrecordable_notes;
use crate::work::propose::{ChangedFile, FileKind, propose};
pub use crate::work::save::{Message, OperationOutcome, RecordOutcome, RecordRequest};
use crate::work::save::{NOTE_PATHS, save};
use crate::work::sensitive;
use crate::work::snapshot::{Snapshot, line_of, snapshot};

pub const MAX_MESSAGE_CHARS: usize = 10_000;
pub const MAX_ISSUE_IDS: usize = 20;

/// How much unrecorded patch a proposed message is built from (the file list is complete).
const PROPOSAL_PATCH_BYTES: usize = 256 * 1024;
/// How much of one changed file is read when looking for conflict markers it adds.
const MARKER_SCAN_BYTES: usize = 4 << 20;

pub fn validate_message(message: &str) -> Result<String, WorkError> {
    let trimmed = message.trim();
    if trimmed.is_empty() {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: text(Key::ArgMessageEmpty).into(),
        });
    }
    if trimmed.chars().count() > MAX_MESSAGE_CHARS {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: fill(Key::ArgLongerThanChars, &[("max", &MAX_MESSAGE_CHARS)]),
        });
    }
    if trimmed.contains('\0') {
        return Err(WorkError::InvalidArgument {
            field: "message",
            reason: text(Key::ArgNulCharacter).into(),
        });
    }
    Ok(trimmed.to_string())
}

pub fn validate_issue_ids(ids: &[i64]) -> Result<Vec<u64>, WorkError> {
    if ids.len() > MAX_ISSUE_IDS {
        return Err(WorkError::InvalidArgument {
            field: "issue_ids",
            reason: fill(Key::ArgTooManyIssues, &[("max", &MAX_ISSUE_IDS)]),
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
            found.push(markers_at(addition.path, &starts));
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
