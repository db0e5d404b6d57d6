//! Finishing an operation git stopped on conflicts, through `work_record`: the one tool the
//! Brain calls after editing the conflicted files, whatever the operation (fewer tools cost
//! fewer tokens, and "save the work" is what finishing a conflict is).
//!
//! - Conflict markers left in a conflicted file refuse it, naming the files and lines.
//! - A merge, cherry-pick or revert ends with a commit of the resolved tree: that commit is a
//!   record (the record protocol: an id, trailers, ids given back on failure). Without a
//!   message it takes the one git prepared (the picked record's words, `Merge …`), trailers
//!   Butler wrote there replaced by the new record's; a pick keeps its author as git does. A
//!   series of picks or reverts then goes on to its end or the next conflict; a pick whose
//!   resolution changes nothing is skipped, as git would have to.
//! - A rebase or `am` replays records that keep their own messages: the resolution is staged
//!   and the operation carried on, to its end or the next conflict, never opening an editor.
//! - A bisect is not finished by recording: it is ended with `work_vcs`.

use butler_worker::git::{Continued, InProgress};
use butler_worker::record::RecordMessage;

use crate::catalogue::{Key, fill};
use crate::error::{BlockReason, Unfinished, WorkError};
use crate::session::Project;
use crate::work::save::{
    Message, OperationOutcome, RecordOutcome, RecordRequest, nested_repositories, paths_list, save,
};
use crate::work::sensitive;
use crate::work::snapshot::{Snapshot, line_of};

/// `work_record` while `unfinished.op` is in progress (the caller checked there is one).
pub fn finish(
    project: &Project,
    snap: &Snapshot,
    unfinished: &Unfinished,
    req: RecordRequest,
    issue_ids: Vec<u64>,
) -> Result<RecordOutcome, WorkError> {
    let Some(op) = unfinished.op else {
        return Err(WorkError::Internal("no operation to finish".into()));
    };
    if op == InProgress::Bisect {
        return Err(WorkError::Blocked(BlockReason::Unfinished(
            unfinished.clone(),
        )));
    }
    if !unfinished.unresolved.is_empty() {
        return Err(WorkError::ConflictMarkers(unfinished.clone()));
    }
    let finished = if op.ends_with_a_record() {
        commit_and_go_on(project, snap, op, req, issue_ids)?
    } else {
        replay(project, snap, op, req, issue_ids)?
    };
    let Finished {
        continued,
        record_id,
        issue_ids,
        mut notes,
    } = finished;
    let files = snap.status.entries.len();
    match continued {
        Continued::Finished | Continued::Paused => {
            if continued == Continued::Paused {
                notes.push(fill(Key::NoteOpPausedAgain, &[("op", &op.command())]));
            }
            Ok(RecordOutcome {
                record_id,
                issue_ids,
                files,
                operation: Some(OperationOutcome {
                    name: op.command(),
                    finished: continued == Continued::Finished,
                }),
                notes,
            })
        }
        Continued::Conflicted { files } => Err(WorkError::OperationConflicted {
            op,
            files: files.iter().map(|p| p.display()).collect(),
            record_id,
        }),
    }
}

/// What finishing did.
struct Finished {
    continued: Continued,
    record_id: Option<String>,
    issue_ids: Vec<u64>,
    notes: Vec<String>,
}

/// A merge, cherry-pick or revert: the resolved tree becomes a record, then a series goes on.
fn commit_and_go_on(
    project: &Project,
    snap: &Snapshot,
    op: InProgress,
    req: RecordRequest,
    mut issue_ids: Vec<u64>,
) -> Result<Finished, WorkError> {
    let repo = &project.repo;
    let mut notes = Vec::new();
    let message = match req.message {
        Message::Given(text) => text,
        Message::Missing | Message::Proposed => {
            let prepared = repo
                .prepared_message()
                .map(|m| RecordMessage::parse(&m))
                .unwrap_or_else(|| RecordMessage::parse(&format!("Finish the {}", op.command())));
            if req.issue_ids.is_none() {
                for n in &prepared.issue_ids {
                    if !issue_ids.contains(n) {
                        issue_ids.push(*n);
                    }
                }
            }
            notes.push(fill(
                Key::NotePreparedMessage,
                &[("op", &op.command()), ("subject", &prepared.subject())],
            ));
            prepared.text
        }
    };
    notes.extend(sensitive::check_record(
        repo,
        &snap.status,
        &message,
        &req.allow_sensitive,
        &project.known_secrets,
    )?);
    let held = repo.lock_tree()?;
    let line = line_of(&snap.head);
    let saved = save(project, &held, &snap.status, &message, &issue_ids, &line)?;
    let (continued, record_id) = match saved {
        Some(saved) => {
            notes.extend(saved.notes);
            let more = repo.operation_in_progress() == Some(op) || repo.sequence_pending();
            let continued = if more && op != InProgress::Merge {
                repo.continue_operation(&held, op)?
            } else {
                Continued::Finished
            };
            (continued, Some(saved.id))
        }
        None if op != InProgress::Merge => {
            notes.push(fill(Key::NoteStepSkipped, &[("op", &op.command())]));
            (repo.skip_step(&held, op)?, None)
        }
        None => return Err(butler_worker::git::GitError::NothingToRecord.into()),
    };
    Ok(Finished {
        continued,
        record_id,
        issue_ids,
        notes,
    })
}

/// A rebase or `am`: the resolution is staged and the replay carried on; each replayed record
/// keeps its own message.
fn replay(
    project: &Project,
    snap: &Snapshot,
    op: InProgress,
    req: RecordRequest,
    issue_ids: Vec<u64>,
) -> Result<Finished, WorkError> {
    let repo = &project.repo;
    let mut notes = Vec::new();
    if let Message::Given(_) = req.message {
        notes.push(fill(Key::NoteReplayKeepsMessages, &[("op", &op.command())]));
    }
    notes.extend(sensitive::check_record(
        repo,
        &snap.status,
        "",
        &req.allow_sensitive,
        &project.known_secrets,
    )?);
    let held = repo.lock_tree()?;
    let staged = repo.stage_all(&held, &nested_repositories(&snap.status))?;
    if !staged.outside_sparse.is_empty() {
        notes.push(fill(
            Key::NoteSparseSaved,
            &[
                ("n", &staged.outside_sparse.len()),
                ("list", &paths_list(&staged.outside_sparse)),
            ],
        ));
    }
    let continued = repo.continue_operation(&held, op)?;
    Ok(Finished {
        continued,
        record_id: None,
        issue_ids,
        notes,
    })
}
