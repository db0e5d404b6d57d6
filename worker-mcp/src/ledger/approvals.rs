//! The approval gate for destructive operations: Butler describes the operation and hands the
//! Brain a reference; the Brain asks the human; the operation runs only when called again with
//! that reference, for the very same operation (its fingerprint), once, within the validity.

use rusqlite::{OptionalExtension, params};

use super::{Ledger, LedgerError};
use crate::time::Timestamp;

/// How long an approval reference stays usable, in seconds.
pub const APPROVAL_VALID_SECS: i64 = 60 * 60;

impl Ledger {
    /// Stores a pending approval and returns its reference (`apr-` and 12 random hex digits).
    pub fn create_approval(
        &self,
        kind: &str,
        fingerprint: &str,
        description: &str,
    ) -> Result<String, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            // SQLite's randomness is seeded from the operating system.
            let reference: String =
                tx.query_row("SELECT 'apr-' || lower(hex(randomblob(6)))", [], |r| {
                    r.get(0)
                })?;
            tx.execute(
                "INSERT INTO approvals (reference, kind, fingerprint, description, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![reference, kind, fingerprint, description, now],
            )?;
            Ok(reference)
        })
    }

    /// Uses an approval: `true` exactly once, and only for the fingerprint it was created for,
    /// within [`APPROVAL_VALID_SECS`]. Unknown, used, expired or mismatched → `false`.
    pub fn consume_approval(
        &self,
        reference: &str,
        fingerprint: &str,
    ) -> Result<bool, LedgerError> {
        self.consume_approval_at(reference, fingerprint, self.now())
    }

    pub(crate) fn consume_approval_at(
        &self,
        reference: &str,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        self.write(|tx| {
            let row: Option<(String, Timestamp, Option<Timestamp>)> = tx
                .query_row(
                    "SELECT fingerprint, created_at, used_at FROM approvals WHERE reference = ?1",
                    [reference],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let usable = matches!(
                &row,
                Some((fp, created, None))
                    if fp == fingerprint && now.seconds_since(created) <= APPROVAL_VALID_SECS
            );
            if usable {
                tx.execute(
                    "UPDATE approvals SET used_at = ?2 WHERE reference = ?1",
                    params![reference, now],
                )?;
            }
            Ok(usable)
        })
    }
}
