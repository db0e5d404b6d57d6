//! `work_record`: saves all current work (tracked, untracked, deletions; ignore rules
//! respected) as one permanent record linked to issues.
//!
//! Crash safety: the record id is reserved in the ledger and the operation journaled before
//! anything is written; the saved message carries the id as a trailer. A server killed at any
//! instant leaves either no record (the reservation is abandoned later) or a record that the
//! next call recognises by its trailer. Files in the tree are never touched by recording. It
//! runs holding Butler's lock on the working tree (waiting for another Butler); a git lock file
//! left by a dead Butler operation is recognised through the journal and removed; one held by
//! anything else is waited for a moment, then reported, never removed.

use crate::catalogue::{Key, text};
use std::time::{Duration, UNIX_EPOCH};

use butler_worker::git::{Change, GitRepo, TreeLock};
use butler_worker::ledger::{Ledger, process_alive};
use butler_worker::record::{self as protocol, Draft, RecordMessage};
use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::work::observe::{Snapshot, line_of, snapshot};
use crate::work::propose::{ChangedFile, FileKind, propose};
use crate::work::sensitive;

/// git subcommands this tool replaces.
pub const GIT_EQUIVALENTS: &[&str] = &["commit", "add"];

pub const MAX_MESSAGE_CHARS: usize = 10_000;
pub const MAX_ISSUE_IDS: usize = 20;
const JOURNAL_KIND: &str = "record";

/// How much unrecorded patch a proposed message is built from (the file list is complete).
const PROPOSAL_PATCH_BYTES: usize = 256 * 1024;

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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
    let Snapshot {
        head,
        status,
        blocked,
    } = snapshot(repo)?;
    if let Some(reason) = blocked {
        return Err(WorkError::Blocked(reason));
    }
    let line = line_of(&head);
    let key = project.key();
    let issue_ids = match req.issue_ids {
        Some(ids) => ids,
        None => project
            .with_ledger(|l| Ok(l.active_issue(&key, &line)?))?
            .into_iter()
            .collect(),
    };
    if status.entries.is_empty() {
        return Ok(RecordOutcome {
            record_id: None,
            issue_ids,
            files: 0,
            notes: vec![text(Key::NothingUnrecordedNote).into()],
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
    let scan_notes = sensitive::check_record(
        repo,
        &status,
        &message,
        &req.allow_sensitive,
        &project.known_secrets,
    )?;

    let held = repo.lock_tree()?;
    let mut notes = scan_notes;
    project.with_ledger(|ledger| recover(repo, &held, ledger, &mut notes))?;
    repo.wait_for_index(&held)?;

    let draft = Draft {
        message: &message,
        issue_ids: &issue_ids,
        line: Some(&line),
        task: None,
    };
    let (op, reservation) = project.with_ledger(|ledger| {
        let op = ledger.begin_operation(JOURNAL_KIND, std::process::id(), &line)?;
        Ok((op, protocol::reserve(ledger, &draft)?))
    })?;
    let id = reservation.id().clone();
    let outcome = repo.record_all_held(&held, reservation.text());
    project.with_ledger(|ledger| {
        match &outcome {
            Ok(sha) => {
                reservation.complete(ledger, sha)?;
            }
            Err(_) => match repo.head() {
                Ok(now) => reservation.fail(ledger, head.oid.as_deref(), now.oid.as_deref())?,
                Err(_) => reservation.abandon(ledger)?,
            },
        }
        ledger.end_operation(op)?;
        Ok(())
    })?;
    if let Err(butler_worker::git::GitError::NothingToRecord) = outcome {
        // Another process recorded the same work first.
        return Ok(RecordOutcome {
            record_id: None,
            issue_ids,
            files: 0,
            notes: vec![text(Key::AlreadyRecordedNote).into()],
        });
    }
    outcome?;
    Ok(RecordOutcome {
        record_id: Some(id.to_string()),
        issue_ids,
        files: status.entries.len(),
        notes,
    })
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
