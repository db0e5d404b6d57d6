//! The operation journal: an operation that must not be left half-done is noted before it
//! starts and crossed off when it ends, so a later process can recognise what a dead one left
//! behind (e.g. a stale `index.lock` after SIGKILL) and clean up only then.

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Ledger, LedgerError};
use crate::time::Timestamp;

/// A journal entry that has not been ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    pub id: i64,
    pub kind: String,
    /// The process that began it.
    pub pid: u32,
    pub started_at: Timestamp,
    pub detail: String,
}

impl Operation {
    /// Whether the process that began it still runs (a pid can be reused; together with the
    /// start time this is a strong hint, not a proof).
    pub fn owner_alive(&self) -> bool {
        process_alive(self.pid)
    }
}

impl Ledger {
    /// Notes that process `pid` begins an operation; returns the entry's id for
    /// [`Ledger::end_operation`].
    pub fn begin_operation(&self, kind: &str, pid: u32, detail: &str) -> Result<i64, LedgerError> {
        self.conn().execute(
            "INSERT INTO operations (kind, pid, detail, started_at) VALUES (?1, ?2, ?3, ?4)",
            params![kind, pid, detail, self.now()],
        )?;
        Ok(self.conn().last_insert_rowid())
    }

    /// Crosses an operation off. Ending it twice is harmless; an unknown id is `NotFound`.
    pub fn end_operation(&self, op_id: i64) -> Result<(), LedgerError> {
        let changed = self.conn().execute(
            "UPDATE operations SET ended_at = COALESCE(ended_at, ?2) WHERE id = ?1",
            params![op_id, self.now()],
        )?;
        match changed {
            0 => Err(LedgerError::not_found(format!("operation {op_id}"))),
            _ => Ok(()),
        }
    }

    /// Operations begun and not ended, oldest first.
    pub fn open_operations(&self) -> Result<Vec<Operation>, LedgerError> {
        let ops = self
            .conn()
            .prepare_cached(
                "SELECT id, kind, pid, started_at, detail FROM operations
                 WHERE ended_at IS NULL ORDER BY id",
            )?
            .query_map([], |r| {
                Ok(Operation {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    pid: r.get(2)?,
                    started_at: r.get(3)?,
                    detail: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(ops)
    }
}

/// Whether a process with this pid exists (signal 0; `EPERM` means it exists but belongs to
/// someone else). Pid 0 and pids beyond `i32` are never alive.
pub fn process_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}
