//! The approval gate for destructive operations: Butler describes the operation and hands the
//! Brain a reference; the Brain asks the human; the operation runs only when called again with
//! that reference, for the very same operation (its fingerprint), once, within the validity.

use rusqlite::{OptionalExtension, params};

use super::{Ledger, LedgerError};
use crate::contract::TaskId;
use crate::time::Timestamp;

/// How long an approval reference stays usable, in seconds.
pub(crate) const APPROVAL_VALID_SECS: i64 = 60 * 60;

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
        self.consume(reference, None, fingerprint, now)
    }

    /// Uses `reference` once: for `fingerprint`, within [`APPROVAL_VALID_SECS`], and — when
    /// `task` is given — only for that task and never after a deny.
    fn consume(
        &self,
        reference: &str,
        task: Option<&TaskId>,
        fingerprint: &str,
        now: Timestamp,
    ) -> Result<bool, LedgerError> {
        self.write(|tx| {
            let row: Option<(String, Timestamp, Option<Timestamp>)> = tx
                .query_row(
                    "SELECT fingerprint, created_at, used_at FROM approvals
                     WHERE reference = ?1
                       AND (?2 IS NULL OR (task_id = ?2 AND denied_at IS NULL))",
                    params![reference, task.map(TaskId::as_str)],
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

/// An approval bound to a delegated task, as the gate keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskApproval {
    /// `apr-` and 12 hex digits.
    pub reference: String,
    pub fingerprint: String,
    /// What exactly waits for the user (as shown to them).
    pub description: String,
    pub created_at: Timestamp,
    pub used: bool,
    pub denied: bool,
}

impl TaskApproval {
    /// When it stops being usable.
    pub(crate) fn expires_at(&self) -> Timestamp {
        self.created_at.plus_seconds(APPROVAL_VALID_SECS)
    }
}

/// The approvals' kind for delegated tasks.
const TASK_KIND: &str = "task";

impl Ledger {
    /// Stores a pending approval for `task_id`'s operation `fingerprint`. Earlier unused
    /// approvals of the task stop being usable: only the newest question stands.
    pub(crate) fn create_task_approval(
        &self,
        task_id: &TaskId,
        fingerprint: &str,
        description: &str,
    ) -> Result<TaskApproval, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            tx.execute(
                "UPDATE approvals SET used_at = ?2 WHERE task_id = ?1 AND used_at IS NULL",
                params![task_id.as_str(), now],
            )?;
            let reference: String =
                tx.query_row("SELECT 'apr-' || lower(hex(randomblob(6)))", [], |r| {
                    r.get(0)
                })?;
            tx.execute(
                "INSERT INTO approvals (reference, kind, fingerprint, description, created_at,
                                        task_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    reference,
                    TASK_KIND,
                    fingerprint,
                    description,
                    now,
                    task_id.as_str()
                ],
            )?;
            Ok(TaskApproval {
                reference,
                fingerprint: fingerprint.to_owned(),
                description: description.to_owned(),
                created_at: now,
                used: false,
                denied: false,
            })
        })
    }

    /// The task's newest approval, if it has one (the tests read it).
    #[cfg(test)]
    pub(crate) fn task_approval(
        &self,
        task_id: &TaskId,
    ) -> Result<Option<TaskApproval>, LedgerError> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    "SELECT reference, fingerprint, description, created_at, used_at, denied_at
                     FROM approvals WHERE task_id = ?1 ORDER BY rowid DESC LIMIT 1",
                    [task_id.as_str()],
                    |r| {
                        Ok(TaskApproval {
                            reference: r.get(0)?,
                            fingerprint: r.get(1)?,
                            description: r.get(2)?,
                            created_at: r.get(3)?,
                            used: r.get::<_, Option<Timestamp>>(4)?.is_some(),
                            denied: r.get::<_, Option<Timestamp>>(5)?.is_some(),
                        })
                    },
                )
                .optional()?)
        })
    }

    /// Uses the task's approval `reference`: `true` exactly once, only for `task_id` and the
    /// `fingerprint` it was created for, within [`APPROVAL_VALID_SECS`], and never after a deny.
    pub(crate) fn consume_task_approval(
        &self,
        task_id: &TaskId,
        reference: &str,
        fingerprint: &str,
    ) -> Result<bool, LedgerError> {
        self.consume(reference, Some(task_id), fingerprint, self.now())
    }

    /// No approval of the task is usable any more (the task ended, or nothing waits for one).
    pub(crate) fn void_task_approvals(&self, task_id: &TaskId) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            tx.execute(
                "UPDATE approvals SET used_at = ?2 WHERE task_id = ?1 AND used_at IS NULL",
                params![task_id.as_str(), now],
            )?;
            Ok(())
        })
    }

    /// The user said no: the approval is used up and marked denied. `false` when it was
    /// already used or is not the task's.
    pub(crate) fn deny_task_approval(
        &self,
        task_id: &TaskId,
        reference: &str,
    ) -> Result<bool, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE approvals SET used_at = ?3, denied_at = ?3
                 WHERE reference = ?1 AND task_id = ?2 AND used_at IS NULL",
                params![reference, task_id.as_str(), now],
            )?;
            Ok(n == 1)
        })
    }
}
