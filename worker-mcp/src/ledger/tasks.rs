//! Tasks, their attempts with evidence, and the notes an agent leaves through the restricted
//! worker MCP.
//!
//! Contracts, evidence and results are stored as JSON of their typed contract types and read
//! back typed: a row that does not read as its type is an error, never a silent default. Task
//! ids are `t` and a number (`t1`, `t2`, …), allocated per ledger: short, safe in a branch
//! name, and never confused with record ids (`20260415-003`).

use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Transaction, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Ledger, LedgerError};
use crate::contract::{
    AttemptEvidence, NoteKind, ResultContract, TaskContract, TaskId, TaskStatus,
};
use crate::time::Timestamp;

/// One task as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    pub task_id: TaskId,
    pub status: TaskStatus,
    pub branch: Option<String>,
    pub worktree: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub contract: TaskContract,
    /// How it ended, once it did.
    pub end: Option<TaskEnd>,
}

/// How a task ended: its Result Contract, or the error that stopped it before it could have one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskEnd {
    Result(ResultContract),
    Error(String),
}

impl TaskEnd {
    /// The status a task has once it ended this way.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskEnd::Result(result) => result.status.into(),
            TaskEnd::Error(_) => TaskStatus::Error,
        }
    }
}

/// One attempt of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRow {
    pub attempt: u32,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    /// The attempt's evidence, once it ended.
    pub evidence: Option<AttemptEvidence>,
}

/// A note left through the worker MCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNote {
    pub id: i64,
    pub task_id: TaskId,
    pub kind: NoteKind,
    pub body: String,
    pub created_at: Timestamp,
    /// Whether the Maid has passed it on to the task's issue.
    pub relayed: bool,
}

pub(super) fn missing(task_id: &TaskId) -> LedgerError {
    LedgerError::not_found(format!("task {task_id}"))
}

/// Reads column `idx` as JSON of `T`.
pub(super) fn json<T: DeserializeOwned>(r: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

pub(super) fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("contract types always serialise")
}

/// Reads column `idx` as a value of one of the ledger's fixed sets.
pub(super) fn named<T>(
    r: &rusqlite::Row<'_>,
    idx: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = r.get(idx)?;
    parse(&text).ok_or_else(|| {
        let why = format!("`{text}` is not a known value");
        rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, why.into())
    })
}

fn task_id(r: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<TaskId> {
    let text: String = r.get(idx)?;
    TaskId::new(text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

pub(super) const TASK_COLUMNS: &str =
    "task_id, status, branch, worktree, created_at, updated_at, contract_json, result_json, error";

pub(super) fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    let result: Option<String> = r.get(7)?;
    let error: Option<String> = r.get(8)?;
    let end = match (result, error) {
        (Some(_), _) => Some(TaskEnd::Result(json(r, 7)?)),
        (None, Some(error)) => Some(TaskEnd::Error(error)),
        (None, None) => None,
    };
    Ok(TaskRow {
        task_id: task_id(r, 0)?,
        status: named(r, 1, TaskStatus::parse)?,
        branch: r.get(2)?,
        worktree: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
        contract: json(r, 6)?,
        end,
    })
}

fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskNote> {
    Ok(TaskNote {
        id: r.get(0)?,
        task_id: task_id(r, 1)?,
        kind: named(r, 2, NoteKind::parse)?,
        body: r.get(3)?,
        created_at: r.get(4)?,
        relayed: r.get::<_, i64>(5)? != 0,
    })
}

pub(super) fn touch(
    tx: &Transaction<'_>,
    task_id: &TaskId,
    now: Timestamp,
) -> Result<(), LedgerError> {
    let n = tx.execute(
        "UPDATE tasks SET updated_at = ?2 WHERE task_id = ?1",
        params![task_id.as_str(), now],
    )?;
    if n == 0 {
        return Err(missing(task_id));
    }
    Ok(())
}

impl Ledger {
    /// Allocates the next task id and stores the task as `running` with the contract that
    /// `contract_for(id)` returns (its `task_id` is set to the id). Returns the stored contract.
    pub fn create_task(
        &self,
        contract_for: impl FnOnce(TaskId) -> TaskContract,
    ) -> Result<TaskContract, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let last: Option<i64> = tx.query_row(
                "SELECT MAX(CAST(substr(task_id, 2) AS INTEGER)) FROM tasks
                 WHERE task_id GLOB 't[0-9]*'",
                [],
                |r| r.get(0),
            )?;
            let id = TaskId::new(format!("t{}", last.unwrap_or(0) + 1))
                .expect("`t` and digits is a task id");
            let mut contract = contract_for(id.clone());
            contract.task_id = id;
            tx.execute(
                "INSERT INTO tasks (task_id, contract_json, status, branch, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![
                    contract.task_id.as_str(),
                    to_json(&contract),
                    TaskStatus::Running.as_str(),
                    contract.branch(),
                    now
                ],
            )?;
            Ok(contract)
        })
    }

    /// Remembers where the task's worktree is.
    pub fn set_task_worktree(&self, task_id: &TaskId, worktree: &str) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET worktree = ?2 WHERE task_id = ?1",
                params![task_id.as_str(), worktree],
            )?;
            Ok(())
        })
    }

    /// Sets the task's status (e.g. `accepted`, `discarded`).
    pub fn set_task_status(&self, task_id: &TaskId, status: TaskStatus) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET status = ?2 WHERE task_id = ?1",
                params![task_id.as_str(), status.as_str()],
            )?;
            Ok(())
        })
    }

    /// Stores how the task ended; its status follows from it.
    pub fn finish_task(&self, task_id: &TaskId, end: &TaskEnd) -> Result<(), LedgerError> {
        let (result, error) = match end {
            TaskEnd::Result(result) => (Some(to_json(result)), None),
            TaskEnd::Error(error) => (None, Some(error.as_str())),
        };
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET status = ?2, result_json = ?3, error = ?4 WHERE task_id = ?1",
                params![task_id.as_str(), end.status().as_str(), result, error],
            )?;
            Ok(())
        })
    }

    /// Notes that an attempt started.
    pub fn begin_attempt(&self, task_id: &TaskId, attempt: u32) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "INSERT INTO attempts (task_id, attempt, started_at) VALUES (?1, ?2, ?3)",
                params![task_id.as_str(), attempt, now],
            )
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::ConstraintViolation) => {
                    LedgerError::conflict(format!("attempt {attempt} of task {task_id} exists"))
                }
                _ => LedgerError::from(e),
            })?;
            Ok(())
        })
    }

    /// Stores an attempt's evidence and end.
    pub fn finish_attempt(
        &self,
        task_id: &TaskId,
        evidence: &AttemptEvidence,
    ) -> Result<(), LedgerError> {
        let attempt = evidence.attempt;
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            let n = tx.execute(
                "UPDATE attempts SET ended_at = ?3, evidence_json = ?4
                 WHERE task_id = ?1 AND attempt = ?2",
                params![task_id.as_str(), attempt, now, to_json(evidence)],
            )?;
            if n == 0 {
                return Err(LedgerError::not_found(format!(
                    "attempt {attempt} of task {task_id}"
                )));
            }
            Ok(())
        })
    }

    /// The newest `limit` tasks, newest first.
    pub fn tasks(&self, limit: usize) -> Result<Vec<TaskRow>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(&format!(
                "SELECT {TASK_COLUMNS} FROM tasks
                 ORDER BY CAST(substr(task_id, 2) AS INTEGER) DESC, task_id DESC LIMIT ?1"
            ))?;
            let rows = stmt
                .query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], task_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// One task, if it exists.
    pub fn task(&self, task_id: &TaskId) -> Result<Option<TaskRow>, LedgerError> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?1"),
                    params![task_id.as_str()],
                    task_row,
                )
                .optional()?)
        })
    }

    /// A task's attempts, in order.
    pub fn task_attempts(&self, task_id: &TaskId) -> Result<Vec<AttemptRow>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT attempt, started_at, ended_at, evidence_json FROM attempts
                 WHERE task_id = ?1 ORDER BY attempt",
            )?;
            let rows = stmt
                .query_map(params![task_id.as_str()], |r| {
                    let evidence: Option<String> = r.get(3)?;
                    Ok(AttemptRow {
                        attempt: r.get(0)?,
                        started_at: r.get(1)?,
                        ended_at: r.get(2)?,
                        evidence: evidence.map(|_| json(r, 3)).transpose()?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// Stores a note for a task; returns its id.
    pub fn add_task_note(
        &self,
        task_id: &TaskId,
        kind: NoteKind,
        body: &str,
    ) -> Result<i64, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "INSERT INTO task_notes (task_id, kind, body, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![task_id.as_str(), kind.as_str(), body, now],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// A task's notes with an id above `after` (0 for all), oldest first.
    pub fn task_notes(&self, task_id: &TaskId, after: i64) -> Result<Vec<TaskNote>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT id, task_id, kind, body, created_at, relayed FROM task_notes
                 WHERE task_id = ?1 AND id > ?2 ORDER BY id",
            )?;
            let rows = stmt
                .query_map(params![task_id.as_str(), after], note_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// The highest note id so far (0 when there is none), to find notes left afterwards.
    pub fn last_note_id(&self) -> Result<i64, LedgerError> {
        self.read(|tx| {
            Ok(
                tx.query_row("SELECT COALESCE(MAX(id), 0) FROM task_notes", [], |r| {
                    r.get(0)
                })?,
            )
        })
    }

    /// Marks a note as passed on to the task's issue.
    pub fn mark_note_relayed(&self, note_id: i64) -> Result<(), LedgerError> {
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE task_notes SET relayed = 1 WHERE id = ?1",
                params![note_id],
            )?;
            if n == 0 {
                return Err(LedgerError::not_found(format!("note {note_id}")));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;
