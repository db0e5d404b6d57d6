//! `work_publish`: shares recorded work with the shared destination. Never rewrites
//! published history (no force), never publishes unrecorded work.

use serde::Serialize;

use crate::error::WorkError;
use crate::session::Project;
use crate::work::observe::block_reason;

/// git subcommands this tool replaces.
pub const GIT_EQUIVALENTS: &[&str] = &["push"];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PublishOutcome {
    pub published_records: usize,
    pub destination: String,
}

pub fn publish(project: &Project) -> Result<PublishOutcome, WorkError> {
    let repo = &project.repo;
    let head = repo.head()?;
    let status = repo.status()?;
    let conflicted: Vec<String> = status.conflicted.iter().map(|p| p.display()).collect();
    if let Some(reason) = block_reason(repo, &head, &conflicted) {
        return Err(WorkError::Blocked(reason));
    }
    if !status.entries.is_empty() {
        return Err(WorkError::UnrecordedChanges);
    }
    let dest = repo.destination()?.ok_or(WorkError::NoDestination)?;
    let destination = format!("{}/{}", dest.remote, dest.branch);
    if head.oid.is_none() {
        return Ok(PublishOutcome { published_records: 0, destination });
    }
    let pending = repo.unpublished(&dest, 1000)?;
    if pending.count == 0 {
        return Ok(PublishOutcome { published_records: 0, destination });
    }
    repo.publish(&dest)?;
    Ok(PublishOutcome { published_records: pending.count, destination })
}
