//! Records as the Brain sees them: every saved unit of work, including commits made outside
//! Butler, each with a stable record id from the ledger.

use std::collections::HashSet;

use butler_worker::git::CommitInfo;
use butler_worker::ledger::{AdoptCommit, Ledger, Origin, Record};
use butler_worker::record::RecordMessage;
use butler_worker::time::Timestamp;
use serde::Serialize;

use crate::error::WorkError;

/// One record in `recent_records` and `work_history`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordView {
    pub id: String,
    pub message: String,
    /// Absent when the record links no issue.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issue_ids: Vec<u64>,
    /// Whether the shared destination has it; `null` when there is no destination.
    pub published: Option<bool>,
    pub created_at: Timestamp,
    /// Present (true) only for records made without Butler.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub outside_butler: bool,
}

/// The record of each commit (adopting commits the ledger has not seen), newest first, and
/// how many of them were adopted now as made outside Butler.
pub fn records_for(
    ledger: &Ledger,
    commits: &[CommitInfo],
    unpublished: Option<&HashSet<String>>,
) -> Result<(Vec<RecordView>, usize), WorkError> {
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    let known = ledger.records_by_sha(&shas)?;
    let mut views = Vec::with_capacity(commits.len());
    let mut adopted_outside = 0;
    for commit in commits {
        let record = match known.get(&commit.sha) {
            Some(record) => record.clone(),
            None => {
                let (record, new) = adopt(ledger, commit)?;
                if new && record.origin == Origin::Outside {
                    adopted_outside += 1;
                }
                record
            }
        };
        views.push(view(&record, commit, unpublished));
    }
    Ok((views, adopted_outside))
}

/// Gives `commit` a record: its own if it carries Butler's trailer, else a new outside one.
pub fn adopt(ledger: &Ledger, commit: &CommitInfo) -> Result<(Record, bool), WorkError> {
    let parsed = RecordMessage::parse(&commit.message);
    let created_at = Timestamp::parse(&commit.time)
        .map_err(|e| WorkError::Internal(format!("commit time: {e}")))?;
    let origin = if parsed.record_id.is_some() {
        Origin::Butler
    } else {
        Origin::Outside
    };
    let adopt = AdoptCommit {
        sha: commit.sha.clone(),
        message: parsed.text,
        issue_ids: parsed.issue_ids,
        created_at,
        origin,
        claimed_id: parsed.record_id,
    };
    Ok(ledger.adopt_commit(&adopt)?)
}

fn view(record: &Record, commit: &CommitInfo, unpublished: Option<&HashSet<String>>) -> RecordView {
    let subject = record.message.lines().next().unwrap_or("").to_string();
    RecordView {
        id: record.id.to_string(),
        message: subject,
        issue_ids: record.issue_ids.clone(),
        published: unpublished.map(|set| !set.contains(&commit.sha)),
        created_at: record.created_at,
        outside_butler: record.origin == Origin::Outside,
    }
}
