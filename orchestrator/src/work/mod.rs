//! The work-record vocabulary (`work_*`): each tool's domain logic, free of MCP.

pub mod conclude;
pub mod diff;
pub mod finish;
pub mod history;
pub mod line;
pub mod observe;
pub mod oplog;
pub mod propose;
pub mod publish;
pub mod record;
pub mod records;
pub mod save;
pub mod sensitive;
pub mod snapshot;
pub mod start;
pub mod state;
pub mod vcs;

use crate::error::WorkError;

/// Issue numbers are positive and of a sane size.
pub fn issue_number(n: i64, field: &'static str) -> Result<u64, WorkError> {
    if n <= 0 || n > 1_000_000_000 {
        return Err(WorkError::InvalidArgument {
            field,
            reason: crate::catalogue::fill(crate::catalogue::Key::ArgNotIssueNumber, &[("n", &n)]),
        });
    }
    Ok(n as u64)
}
