//! `work_publish`: shares recorded work with the shared destination. Never rewrites
//! published history (no force), never publishes unrecorded work.

use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::work::sensitive;
use crate::work::snapshot::{Snapshot, snapshot};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PublishOutcome {
    pub published_records: usize,
    pub destination: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Shares the unpublished records. `allow_sensitive`: paths (or record ids, for a message)
/// the user confirmed hold no real secret.
pub fn publish(project: &Project, allow_sensitive: &[String]) -> Result<PublishOutcome, WorkError> {
    let repo = &project.repo;
    let snap = snapshot(repo)?;
    snap.refuse_blocked()?;
    let Snapshot { head, status, .. } = snap;
    if !status.entries.is_empty() {
        return Err(WorkError::UnrecordedChanges);
    }
    let dest = repo.destination()?.ok_or(WorkError::NoDestination)?;
    let destination = format!("{}/{}", dest.remote, dest.branch);
    if head.oid.is_none() {
        return Ok(PublishOutcome {
            published_records: 0,
            destination,
            notes: Vec::new(),
        });
    }
    let pending = repo.unpublished(&dest, sensitive::MAX_COMMITS_SCANNED)?;
    if pending.count == 0 {
        return Ok(PublishOutcome {
            published_records: 0,
            destination,
            notes: Vec::new(),
        });
    }
    let notes = sensitive::check_publish(
        repo,
        &pending.shas,
        pending.count,
        allow_sensitive,
        &project.known_secrets,
    )?;
    repo.publish(&dest)?;
    Ok(PublishOutcome {
        published_records: pending.count,
        destination,
        notes,
    })
}
