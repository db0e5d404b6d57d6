//! The ImplementMaid's tasks, their attempts with evidence, and the notes an agent leaves
//! through the restricted worker MCP.
//!
//! Contracts, evidence and results are stored as JSON text written by the Maid (the ledger does
//! not interpret them). Task ids are `t` and a number (`t1`, `t2`, …), allocated per ledger:
//! short, safe in a branch name, and never confused with record ids (`20260415-003`).

use chrono::Local;
use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::{Ledger, LedgerError};

/// A note's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// A note the agent left for the task's issue.
    Note,
    /// A summary of progress so far.
    Progress,
    /// The agent cannot go on; the reason.
    Blocked,
    /// The worker MCP was started for the task (the agent reached it).
    Connected,
}

impl NoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Note => "note",
            NoteKind::Progress => "progress",
            NoteKind::Blocked => "blocked",
            NoteKind::Connected => "connected",
        }
    }

    fn from_db(s: &str) -> NoteKind {
        match s {
            "progress" => NoteKind::Progress,
            "blocked" => NoteKind::Blocked,
            "connected" => NoteKind::Connected,
            _ => NoteKind::Note,
        }
    }
}

/// One task as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    pub task_id: String,
    /// `running`, then the outcome (`succeeded`, `failed`, `cancelled`, `error`), then
    /// `accepted` or `discarded`.
    pub status: String,
    pub branch: Option<String>,
    pub worktree: Option<String>,
    /// RFC 3339 with offset.
    pub created_at: String,
    pub updated_at: String,
    /// The Task Contract as JSON.
    pub contract_json: String,
    /// The Result Contract as JSON, once the task ended.
    pub result_json: Option<String>,
}

/// One attempt of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRow {
    pub attempt: u32,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The attempt's evidence as JSON, once it ended.
    pub evidence_json: Option<String>,
}

/// A note left through the worker MCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNote {
    pub id: i64,
    pub task_id: String,
    pub kind: NoteKind,
    pub body: String,
    pub created_at: String,
    /// Whether the Maid has passed it on to the task's issue.
    pub relayed: bool,
}

fn now() -> String {
    Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

fn missing(task_id: &str) -> LedgerError {
    LedgerError::not_found(format!("task {task_id}"))
}

const TASK_COLUMNS: &str =
    "task_id, status, branch, worktree, created_at, updated_at, contract_json, result_json";

fn task_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        task_id: r.get(0)?,
        status: r.get(1)?,
        branch: r.get(2)?,
        worktree: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
        contract_json: r.get(6)?,
        result_json: r.get(7)?,
    })
}

fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskNote> {
    let kind: String = r.get(2)?;
    Ok(TaskNote {
        id: r.get(0)?,
        task_id: r.get(1)?,
        kind: NoteKind::from_db(&kind),
        body: r.get(3)?,
        created_at: r.get(4)?,
        relayed: r.get::<_, i64>(5)? != 0,
    })
}

fn touch(tx: &Transaction<'_>, task_id: &str) -> Result<(), LedgerError> {
    let n = tx.execute(
        "UPDATE tasks SET updated_at = ?2 WHERE task_id = ?1",
        params![task_id, now()],
    )?;
    if n == 0 {
        return Err(missing(task_id));
    }
    Ok(())
}

impl Ledger {
    /// Allocates the next task id and stores the task as `running` with the contract that
    /// `contract_for(id)` returns.
    pub fn create_task(
        &self,
        branch_for: impl FnOnce(&str) -> String,
        contract_for: impl FnOnce(&str) -> String,
    ) -> Result<String, LedgerError> {
        self.write(|tx| {
            let last: Option<i64> = tx.query_row(
                "SELECT MAX(CAST(substr(task_id, 2) AS INTEGER)) FROM tasks
                 WHERE task_id GLOB 't[0-9]*'",
                [],
                |r| r.get(0),
            )?;
            let id = format!("t{}", last.unwrap_or(0) + 1);
            let stamp = now();
            tx.execute(
                "INSERT INTO tasks (task_id, contract_json, status, branch, created_at, updated_at)
                 VALUES (?1, ?2, 'running', ?3, ?4, ?4)",
                params![id, contract_for(&id), branch_for(&id), stamp],
            )?;
            Ok(id)
        })
    }

    /// Remembers where the task's worktree is.
    pub fn set_task_worktree(&self, task_id: &str, worktree: &str) -> Result<(), LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            tx.execute(
                "UPDATE tasks SET worktree = ?2 WHERE task_id = ?1",
                params![task_id, worktree],
            )?;
            Ok(())
        })
    }

    /// Sets the task's status (e.g. `accepted`, `discarded`).
    pub fn set_task_status(&self, task_id: &str, status: &str) -> Result<(), LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            tx.execute(
                "UPDATE tasks SET status = ?2 WHERE task_id = ?1",
                params![task_id, status],
            )?;
            Ok(())
        })
    }

    /// Stores the task's end: its status and Result Contract.
    pub fn finish_task(
        &self,
        task_id: &str,
        status: &str,
        result_json: &str,
    ) -> Result<(), LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            tx.execute(
                "UPDATE tasks SET status = ?2, result_json = ?3 WHERE task_id = ?1",
                params![task_id, status, result_json],
            )?;
            Ok(())
        })
    }

    /// Notes that an attempt started.
    pub fn begin_attempt(&self, task_id: &str, attempt: u32) -> Result<(), LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            tx.execute(
                "INSERT INTO attempts (task_id, attempt, started_at) VALUES (?1, ?2, ?3)",
                params![task_id, attempt, now()],
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
        task_id: &str,
        attempt: u32,
        evidence_json: &str,
    ) -> Result<(), LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            let n = tx.execute(
                "UPDATE attempts SET ended_at = ?3, evidence_json = ?4
                 WHERE task_id = ?1 AND attempt = ?2",
                params![task_id, attempt, now(), evidence_json],
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
                 ORDER BY created_at DESC, CAST(substr(task_id, 2) AS INTEGER) DESC LIMIT ?1"
            ))?;
            let rows = stmt
                .query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], task_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// One task, if it exists.
    pub fn task(&self, task_id: &str) -> Result<Option<TaskRow>, LedgerError> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?1"),
                    params![task_id],
                    task_row,
                )
                .optional()?)
        })
    }

    /// A task's attempts, in order.
    pub fn task_attempts(&self, task_id: &str) -> Result<Vec<AttemptRow>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT attempt, started_at, ended_at, evidence_json FROM attempts
                 WHERE task_id = ?1 ORDER BY attempt",
            )?;
            let rows = stmt
                .query_map(params![task_id], |r| {
                    Ok(AttemptRow {
                        attempt: r.get(0)?,
                        started_at: r.get(1)?,
                        ended_at: r.get(2)?,
                        evidence_json: r.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// Stores a note for a task; returns its id.
    pub fn add_task_note(
        &self,
        task_id: &str,
        kind: NoteKind,
        body: &str,
    ) -> Result<i64, LedgerError> {
        self.write(|tx| {
            touch(tx, task_id)?;
            tx.execute(
                "INSERT INTO task_notes (task_id, kind, body, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![task_id, kind.as_str(), body, now()],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// A task's notes with an id above `after` (0 for all), oldest first.
    pub fn task_notes(&self, task_id: &str, after: i64) -> Result<Vec<TaskNote>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT id, task_id, kind, body, created_at, relayed FROM task_notes
                 WHERE task_id = ?1 AND id > ?2 ORDER BY id",
            )?;
            let rows = stmt
                .query_map(params![task_id, after], note_row)?
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
mod tests {
    use super::*;

    fn ledger() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open_file(&dir.path().join("l.db")).expect("open");
        (dir, ledger)
    }

    #[test]
    fn tasks_get_short_increasing_ids_and_keep_their_evidence() {
        let (_dir, l) = ledger();
        let a = l
            .create_task(
                |id| format!("butler/task-{id}"),
                |id| format!("{{\"id\":\"{id}\"}}"),
            )
            .expect("create");
        let b = l
            .create_task(|id| format!("butler/task-{id}"), |_| "{}".into())
            .expect("create");
        assert_eq!((a.as_str(), b.as_str()), ("t1", "t2"));
        l.begin_attempt("t1", 1).expect("begin");
        assert!(matches!(
            l.begin_attempt("t1", 1),
            Err(LedgerError::Conflict { .. })
        ));
        l.finish_attempt("t1", 1, "{\"attempt\":1}")
            .expect("finish");
        l.finish_task("t1", "succeeded", "{\"outcome\":\"succeeded\"}")
            .expect("finish");
        let t1 = l.task("t1").expect("read").expect("exists");
        assert_eq!(t1.status, "succeeded");
        assert_eq!(t1.contract_json, "{\"id\":\"t1\"}");
        assert_eq!(t1.branch.as_deref(), Some("butler/task-t1"));
        let attempts = l.task_attempts("t1").expect("attempts");
        assert_eq!(attempts.len(), 1);
        assert_eq!(
            attempts[0].evidence_json.as_deref(),
            Some("{\"attempt\":1}")
        );
        assert!(attempts[0].ended_at.is_some());
        let all = l.tasks(10).expect("list");
        assert_eq!(all.len(), 2);
        assert!(l.task("t9").expect("read").is_none());
        assert!(matches!(
            l.finish_attempt("t9", 1, "{}"),
            Err(LedgerError::NotFound { .. })
        ));
    }

    #[test]
    fn notes_are_kept_per_task_and_marked_relayed() {
        let (_dir, l) = ledger();
        l.create_task(|_| "b".into(), |_| "{}".into())
            .expect("create");
        let before = l.last_note_id().expect("last");
        let n1 = l
            .add_task_note("t1", NoteKind::Connected, "")
            .expect("note");
        let n2 = l
            .add_task_note("t1", NoteKind::Blocked, "no network")
            .expect("note");
        assert!(l.add_task_note("t7", NoteKind::Note, "x").is_err());
        let notes = l.task_notes("t1", before).expect("notes");
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[1].kind, NoteKind::Blocked);
        assert_eq!(notes[1].body, "no network");
        assert_eq!(l.task_notes("t1", n1).expect("notes").len(), 1);
        l.mark_note_relayed(n2).expect("relay");
        assert!(l.task_notes("t1", n1).expect("notes")[0].relayed);
    }
}
