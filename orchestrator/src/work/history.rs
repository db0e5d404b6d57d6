//! `work_history`: past records, newest first, optionally only those touching a path.
//! The replacement for `git log`.

use crate::catalogue::{Key, fill, text};
use std::collections::HashSet;

use butler_worker::time::Timestamp;
use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::work::records::records_for;

pub const DEFAULT_N: usize = 10;
pub const MAX_N: usize = 100;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HistoryEntry {
    pub record_id: String,
    pub message: String,
    pub created_at: Timestamp,
    pub issue_ids: Vec<u64>,
    pub published: Option<bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub outside_butler: bool,
    /// The record id this commit claims while another commit holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
}

pub fn validate_n(n: Option<i64>) -> Result<usize, WorkError> {
    match n {
        None => Ok(DEFAULT_N),
        Some(n) if (1..=MAX_N as i64).contains(&n) => Ok(n as usize),
        Some(n) => Err(WorkError::InvalidArgument {
            field: "n",
            reason: fill(
                Key::ArgOutOfRange,
                &[("n", &n), ("min", &1), ("max", &MAX_N)],
            ),
        }),
    }
}

pub fn history(
    project: &Project,
    n: usize,
    path: Option<&str>,
) -> Result<(String, Vec<HistoryEntry>), WorkError> {
    let repo = &project.repo;
    let path = match path.map(str::trim) {
        None | Some("") => None,
        Some(p) => Some(repo.path_in_repo(p)?),
    };
    let head = repo.head()?;
    if head.oid.is_none() {
        return Ok((text(Key::NoRecordsYet).into(), Vec::new()));
    }
    let commits = repo.recent_commits(n, path.as_ref())?;
    let unpublished: Option<HashSet<String>> = match repo.destination()? {
        Some(dest) => Some(repo.unpublished(&dest, 1000)?.shas.into_iter().collect()),
        None => None,
    };
    let (views, _) =
        project.with_ledger(|l| records_for(repo, l, &commits, unpublished.as_ref()))?;
    let entries: Vec<HistoryEntry> = views
        .into_iter()
        .map(|v| HistoryEntry {
            record_id: v.id,
            message: v.message,
            created_at: v.created_at,
            issue_ids: v.issue_ids,
            published: v.published,
            outside_butler: v.outside_butler,
            duplicate_of: v.duplicate_of,
        })
        .collect();
    let summary = match (entries.len(), &path) {
        (0, Some(p)) => fill(Key::NoRecordsTouch, &[("path", &p.display())]),
        (k, Some(p)) => fill(Key::RecordsTouching, &[("n", &k), ("path", &p.display())]),
        (k, None) => fill(Key::RecentRecords, &[("n", &k)]),
    };
    Ok((summary, entries))
}
