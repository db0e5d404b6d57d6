//! Records as the Brain sees them: every commit of the history, named the same in every clone.
//!
//! A commit that ends with Butler's trailer block is the record its `Butler-Record:` trailer
//! names (the ledger learns ids it had not seen, from teammates or after it was rebuilt). When
//! two commits in the history claim one id — a record copied onto another line, or a forged
//! trailer — the older one holds it and the other is shown by its commit id with
//! `duplicate_of`, never merged into it; a holder that left the history (a rebase or an amend
//! rewrote it) gives the id to its new commit. A commit made outside Butler is shown by its
//! commit id (`outside_butler`), its issue links read from `#N` in its text. Messages, links
//! and times come from the commits themselves, so every clone shows the same.

use std::collections::HashSet;

use butler_worker::git::{CommitInfo, GitRepo};
use butler_worker::ledger::{Claim, ClaimingCommit, Ledger, RecordId};
use butler_worker::record::RecordMessage;
use butler_worker::time::Timestamp;
use serde::Serialize;

use crate::error::WorkError;

/// How many hex digits of a commit id name a commit that is not a record.
const COMMIT_ID_LEN: usize = 12;

/// One record of `work_history`, and as `work_observe`'s `recent_records` shows it: what is
/// not needed to act is left out there (every observation is read whole) — the time and
/// whether it was made without Butler (`work_history` shows both; such a commit's id is its
/// commit id, 12 hex digits, not a record id), and `published` unless it is false
/// (`unpublished_records` counts them; with no destination it is `null`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordView {
    pub id: String,
    /// The first line of the message.
    pub message: String,
    /// Absent when the record links no issue.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issue_ids: Vec<u64>,
    /// Whether the shared destination has it; `None` when there is no destination.
    #[serde(skip_serializing_if = "published_or_nowhere")]
    pub published: Option<bool>,
    #[serde(skip)]
    pub created_at: Timestamp,
    /// Whether the commit was made without Butler.
    #[serde(skip)]
    pub outside_butler: bool,
    /// The record id this commit claims while another commit holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
}

/// Whether `recent_records` leaves a record's `published` out: it is only shown as `false`.
fn published_or_nowhere(published: &Option<bool>) -> bool {
    *published != Some(false)
}

/// Who a commit is.
enum Identity {
    Record(RecordId),
    /// The record, moved to this commit from another.
    Moved(RecordId),
    Duplicate(RecordId),
    Outside,
}

/// The view of each commit (the ledger learning the ids it had not seen), in the order given,
/// and how many commits made outside Butler were seen for the first time.
pub fn records_for(
    repo: &GitRepo,
    ledger: &Ledger,
    commits: &[CommitInfo],
    unpublished: Option<&HashSet<String>>,
) -> Result<(Vec<RecordView>, usize), WorkError> {
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    let known = ledger.records_by_sha(&shas)?;
    let mut seen: Vec<(RecordMessage, Timestamp, Identity)> = Vec::with_capacity(commits.len());
    let mut outside_new = 0;
    // Ids given to another commit in this pass: the ledger's earlier answer for them is stale.
    let mut moved: HashSet<RecordId> = HashSet::new();
    // Oldest first: of two commits claiming one id in an answer, the older one holds it.
    for commit in commits.iter().rev() {
        let message = RecordMessage::parse(&commit.message);
        let time = commit_time(commit)?;
        let held = known.get(&commit.sha).filter(|r| !moved.contains(&r.id));
        let who = match (&message.record_id, held) {
            (Some(_), Some(record)) => Identity::Record(record.id.clone()),
            (Some(claimed), None) => {
                let who = claim(repo, ledger, commit, &message, claimed, time)?;
                if let Identity::Moved(id) = &who {
                    moved.insert(id.clone());
                }
                who
            }
            (None, _) => {
                if !ledger.is_known_sha(&commit.sha)? && ledger.note_outside(&commit.sha)? {
                    outside_new += 1;
                }
                Identity::Outside
            }
        };
        seen.push((message, time, who));
    }
    // A commit seen before its id moved on to another one in this pass is a duplicate now.
    for (_, _, who) in &mut seen {
        if let Identity::Record(id) = who
            && moved.contains(id)
        {
            *who = Identity::Duplicate(id.clone());
        }
    }
    let views = commits
        .iter()
        .zip(seen.iter().rev())
        .map(|(commit, (message, time, who))| view(commit, message, *time, who, unpublished))
        .collect();
    Ok((views, outside_new))
}

/// The record `claimed` for `commit`, or a duplicate when an older commit in the history
/// holds it.
fn claim(
    repo: &GitRepo,
    ledger: &Ledger,
    commit: &CommitInfo,
    message: &RecordMessage,
    claimed: &RecordId,
    time: Timestamp,
) -> Result<Identity, WorkError> {
    let claiming = ClaimingCommit {
        sha: &commit.sha,
        message: &message.text,
        issue_ids: &message.issue_ids,
        created_at: time,
        id: claimed,
    };
    match ledger.claim_record(&claiming)? {
        Claim::Holds(record) => Ok(Identity::Record(record.id)),
        Claim::HeldBy { sha } => {
            let holder = match repo.is_reachable(&sha)? {
                true => repo.commit(&sha)?,
                false => None,
            };
            let holder_first = match &holder {
                Some(holder) => (commit_time(holder)?, &holder.sha) <= (time, &commit.sha),
                None => false,
            };
            if holder_first {
                return Ok(Identity::Duplicate(claimed.clone()));
            }
            ledger.move_record(&claiming)?;
            Ok(Identity::Moved(claimed.clone()))
        }
    }
}

/// How a commit that is not a record is named: the first hex digits of its id.
pub fn commit_id(sha: &str) -> String {
    sha.chars().take(COMMIT_ID_LEN).collect()
}

fn commit_time(commit: &CommitInfo) -> Result<Timestamp, WorkError> {
    Timestamp::parse(&commit.time).map_err(|e| WorkError::Internal(format!("commit time: {e}")))
}

fn view(
    commit: &CommitInfo,
    message: &RecordMessage,
    created_at: Timestamp,
    who: &Identity,
    unpublished: Option<&HashSet<String>>,
) -> RecordView {
    let commit_id = || commit_id(&commit.sha);
    let (id, duplicate_of) = match who {
        Identity::Record(id) | Identity::Moved(id) => (id.to_string(), None),
        Identity::Duplicate(id) => (commit_id(), Some(id.to_string())),
        Identity::Outside => (commit_id(), None),
    };
    RecordView {
        id,
        message: message.subject().to_owned(),
        issue_ids: message.issue_ids.clone(),
        published: unpublished.map(|set| !set.contains(&commit.sha)),
        created_at,
        outside_butler: matches!(who, Identity::Outside),
        duplicate_of,
    }
}
