//! Work records: one saved unit of work = one commit, under a stable id `YYYYMMDD-NNN-mark`.
//!
//! A record is first *reserved* (state `pending`, id allocated) before the commit is made, so
//! the commit can carry its id; it is then *completed* with the commit's sha, or *abandoned* if
//! the commit never happened (or *released*, giving its id back, when the commit certainly did
//! not happen and no later id was handed out). The protocol around a commit is
//! [`crate::record`].
//!
//! The commit's `Butler-Record:` trailer is the record's identity in every clone: a commit this
//! ledger has not seen — fetched from a teammate, or found again after the ledger was deleted —
//! *claims* the id its trailer names ([`Ledger::claim_record`]); a claim on an id this ledger
//! holds for another commit is answered with that commit, never merged into it. Ids never
//! collide between clones because each ledger hands out ids under its own random *clone mark*
//! (`kqrt` in `20260612-001-kqrt`), chosen when the file is created; the daily sequence is per
//! mark, and a claimed id with this ledger's own mark moves the sequence past it. Ids are
//! allocated inside one `BEGIN IMMEDIATE` transaction, so concurrent processes never hand out
//! the same one. Commits made outside Butler have no record: the ledger only remembers that it
//! has seen them ([`Ledger::note_outside`]).

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Ledger, LedgerError};
use crate::contract::RecordId;
use crate::time::Timestamp;

/// More records than any day has: a claimed id of this clone's mark beyond it does not move
/// the day's sequence (a forged trailer cannot exhaust it).
const MAX_DAILY_SEQ: u64 = 1_000_000;

/// A completed record: its commit exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub id: RecordId,
    pub sha: String,
    pub message: String,
    pub issue_ids: Vec<u64>,
    pub created_at: Timestamp,
    /// The line of work (branch) it was saved on, when known.
    pub line: Option<String>,
}

/// A reserved record whose commit has not been confirmed yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRecord {
    pub id: RecordId,
    pub message: String,
    pub issue_ids: Vec<u64>,
    pub created_at: Timestamp,
    pub line: Option<String>,
}

/// A commit that ends with Butler's trailer block, claiming the record id it names (see
/// [`Ledger::claim_record`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimingCommit<'a> {
    pub sha: &'a str,
    /// The message without the trailer block.
    pub message: &'a str,
    pub issue_ids: &'a [u64],
    /// The commit's date, with the offset it was made in.
    pub created_at: Timestamp,
    /// The id its `Butler-Record:` trailer names.
    pub id: &'a RecordId,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The commit is the record: it was already, it completed its reservation, or it took an
    /// id this ledger did not know.
    Holds(Record),
    /// This ledger holds the id for another commit, `sha`: the claim is not merged into it.
    HeldBy { sha: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Complete,
    Abandoned,
}

impl State {
    fn from_db(s: &str) -> State {
        match s {
            "pending" => State::Pending,
            "abandoned" => State::Abandoned,
            _ => State::Complete,
        }
    }
}

/// One row of `records` with its issue links.
struct Row {
    id: RecordId,
    state: State,
    sha: Option<String>,
    message: String,
    issue_ids: Vec<u64>,
    created_at: Timestamp,
    line: Option<String>,
}

impl Row {
    fn into_record(self) -> Option<Record> {
        let sha = self.sha.filter(|_| self.state == State::Complete)?;
        Some(Record {
            id: self.id,
            sha,
            message: self.message,
            issue_ids: self.issue_ids,
            created_at: self.created_at,
            line: self.line,
        })
    }
}

impl Ledger {
    /// Allocates the next id of `now`'s local day and remembers the record as pending.
    pub(crate) fn reserve_record(
        &self,
        now: Timestamp,
        message: &str,
        issue_ids: &[u64],
        line: Option<&str>,
    ) -> Result<RecordId, LedgerError> {
        self.write(|tx| {
            let new = NewRow {
                now,
                state: "pending",
                completed_at: None,
                sha: None,
                message,
                issue_ids,
                line,
            };
            insert(tx, &self.mark, &new)
        })
    }

    /// Marks a reserved record as saved by commit `sha`. Completing it again with the same sha
    /// is a no-op; with another sha, or with a sha another record holds, it is a `Conflict`.
    pub fn complete_record(&self, id: &RecordId, sha: &str) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let row = load(tx, id.as_str())?.ok_or_else(|| missing(id))?;
            if row.state == State::Complete {
                return match row.sha.as_deref() == Some(sha) {
                    true => Ok(()),
                    false => Err(LedgerError::conflict(format!(
                        "record {id} is already saved as another commit"
                    ))),
                };
            }
            complete(tx, id, sha, now)
        })
    }

    /// Replaces a completed record's message with the one its commit carries (a repository
    /// hook rewrote it while recording), so the ledger shows what history holds.
    pub(crate) fn set_record_message(
        &self,
        id: &RecordId,
        message: &str,
    ) -> Result<(), LedgerError> {
        self.write(|tx| {
            let updated = tx.execute(
                "UPDATE records SET message = ?2 WHERE id = ?1 AND state = 'complete'",
                params![id.as_str(), message],
            )?;
            match updated {
                0 => Err(missing(id)),
                _ => Ok(()),
            }
        })
    }

    /// Gives a reserved id back because its commit certainly did not happen: when it is the
    /// newest id of its day it is deleted and will be handed out again (the day's ids stay
    /// consecutive); otherwise it is abandoned like [`Ledger::abandon_record`].
    pub(crate) fn release_record(&self, id: &RecordId) -> Result<(), LedgerError> {
        self.write(|tx| {
            let row = load(tx, id.as_str())?.ok_or_else(|| missing(id))?;
            if row.state == State::Complete {
                return Err(LedgerError::conflict(format!(
                    "record {id} is already saved and cannot be given back"
                )));
            }
            let newest = tx.execute(
                "UPDATE record_days SET last_seq = last_seq - 1 WHERE day = ?1 AND last_seq = ?2",
                params![id.day(), id.seq()],
            )?;
            if newest == 1 {
                tx.execute("DELETE FROM records WHERE id = ?1", [id.as_str()])?;
            } else {
                tx.execute(
                    "UPDATE records SET state = 'abandoned' WHERE id = ?1",
                    [id.as_str()],
                )?;
            }
            Ok(())
        })
    }

    /// Marks a reserved record as never saved (its commit did not happen). Its id is not reused.
    pub fn abandon_record(&self, id: &RecordId) -> Result<(), LedgerError> {
        self.write(|tx| {
            let row = load(tx, id.as_str())?.ok_or_else(|| missing(id))?;
            match row.state {
                State::Abandoned => Ok(()),
                State::Complete => Err(LedgerError::conflict(format!(
                    "record {id} is already saved and cannot be abandoned"
                ))),
                State::Pending => {
                    tx.execute(
                        "UPDATE records SET state = 'abandoned' WHERE id = ?1",
                        [id.as_str()],
                    )?;
                    Ok(())
                }
            }
        })
    }

    /// Records reserved but neither completed nor abandoned, oldest first.
    pub fn pending_records(&self) -> Result<Vec<PendingRecord>, LedgerError> {
        self.read(|tx| {
            let ids: Vec<String> = tx
                .prepare("SELECT id FROM records WHERE state = 'pending' ORDER BY day, seq")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let row = load(tx, &id)?.expect("listed in the same snapshot");
                out.push(PendingRecord {
                    id: row.id,
                    message: row.message,
                    issue_ids: row.issue_ids,
                    created_at: row.created_at,
                    line: row.line,
                });
            }
            Ok(out)
        })
    }

    /// Gives the commit the record its trailer names, as every clone does: the record it
    /// already is; the reservation it completes (a process died between the commit and
    /// [`Ledger::complete_record`]); or, when this ledger does not know the id, a new
    /// completed record under exactly that id. An id held here for another commit is
    /// [`Claim::HeldBy`] that commit: nothing is written.
    pub fn claim_record(&self, commit: &ClaimingCommit<'_>) -> Result<Claim, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            if let Some(record) = by_sha(tx, commit.sha)? {
                return Ok(Claim::Holds(record));
            }
            let id = commit.id;
            match load(tx, id.as_str())? {
                Some(row) if row.state == State::Complete => {
                    let sha = row.sha.expect("a complete record has its commit");
                    return Ok(Claim::HeldBy { sha });
                }
                Some(_) => complete(tx, id, commit.sha, now)?,
                None => {
                    // A commit made from a copy of this clone (same mark) moves the sequence
                    // on; a sequence no day reaches is a forgery and moves nothing.
                    if id.mark() == self.mark && id.seq() < MAX_DAILY_SEQ {
                        tx.execute(
                            "INSERT INTO record_days (day, last_seq) VALUES (?1, ?2)
                             ON CONFLICT (day) DO UPDATE SET last_seq = max(last_seq, ?2)",
                            params![id.day(), id.seq()],
                        )?;
                    }
                    let new = NewRow {
                        now: commit.created_at,
                        state: "complete",
                        completed_at: Some(now),
                        sha: Some(commit.sha),
                        message: commit.message,
                        issue_ids: commit.issue_ids,
                        line: None,
                    };
                    insert_as(tx, id, &new)?;
                }
            }
            let record = load(tx, id.as_str())?.and_then(Row::into_record);
            Ok(Claim::Holds(record.expect("completed just now")))
        })
    }

    /// Moves the completed record `commit.id` to `commit`, with its message and links: the
    /// commit that held it was rewritten (a rebase or an amend made a new commit of the same
    /// record), or is a later copy of it.
    pub fn move_record(&self, commit: &ClaimingCommit<'_>) -> Result<Record, LedgerError> {
        self.write(|tx| {
            let id = commit.id;
            ensure_sha_free(tx, commit.sha)?;
            let moved = tx.execute(
                "UPDATE records SET sha = ?2, message = ?3, created_at = ?4
                 WHERE id = ?1 AND state = 'complete'",
                params![id.as_str(), commit.sha, commit.message, commit.created_at],
            )?;
            if moved == 0 {
                return Err(missing(id));
            }
            tx.execute(
                "DELETE FROM record_issues WHERE record_id = ?1",
                [id.as_str()],
            )?;
            link(tx, id, commit.issue_ids)?;
            let record = load(tx, id.as_str())?.and_then(Row::into_record);
            Ok(record.expect("moved just now"))
        })
    }

    /// Remembers that the commit `sha`, made outside Butler, has been seen; `true` when it had
    /// not been before.
    pub fn note_outside(&self, sha: &str) -> Result<bool, LedgerError> {
        let now = self.now();
        let added = self
            .conn()
            .prepare_cached("INSERT OR IGNORE INTO outside_commits (sha, seen_at) VALUES (?1, ?2)")?
            .execute(params![sha, now])?;
        Ok(added == 1)
    }

    /// The completed record with this id; `None` for an unknown, pending, abandoned or
    /// malformed id.
    pub fn record_by_id(&self, id: &str) -> Result<Option<Record>, LedgerError> {
        if RecordId::parse(id).is_err() {
            return Ok(None);
        }
        self.read(|tx| Ok(load(tx, id)?.and_then(Row::into_record)))
    }

    /// The completed records of those commits that have one, keyed by sha.
    pub fn records_by_sha(&self, shas: &[&str]) -> Result<HashMap<String, Record>, LedgerError> {
        self.read(|tx| {
            let mut out = HashMap::new();
            for sha in shas {
                if let Some(record) = by_sha(tx, sha)? {
                    out.insert(record.sha.clone(), record);
                }
            }
            Ok(out)
        })
    }

    /// Whether this ledger has seen the commit: a completed record is saved as it, or it was
    /// noted as made outside Butler.
    pub fn is_known_sha(&self, sha: &str) -> Result<bool, LedgerError> {
        let found = self
            .conn()
            .prepare_cached(
                "SELECT 1 FROM records WHERE sha = ?1 AND state = 'complete'
                 UNION ALL SELECT 1 FROM outside_commits WHERE sha = ?1",
            )?
            .exists([sha]);
        found.map_err(LedgerError::from)
    }
}

struct NewRow<'a> {
    /// When it was created: its local day names a new id.
    now: Timestamp,
    state: &'static str,
    completed_at: Option<Timestamp>,
    sha: Option<&'a str>,
    message: &'a str,
    issue_ids: &'a [u64],
    line: Option<&'a str>,
}

/// Allocates the next sequence number of the day under this ledger's clone `mark` and inserts
/// the record (inside the caller's immediate transaction).
fn insert(tx: &Connection, mark: &str, new: &NewRow<'_>) -> Result<RecordId, LedgerError> {
    let day = new.now.day();
    let seq: u64 = tx.query_row(
        "INSERT INTO record_days (day, last_seq) VALUES (?1, 1)
         ON CONFLICT (day) DO UPDATE SET last_seq = last_seq + 1
         RETURNING last_seq",
        [&day],
        |r| r.get(0),
    )?;
    let id = RecordId::new(&day, seq, mark);
    insert_as(tx, &id, new)?;
    Ok(id)
}

/// Inserts the record under `id`.
fn insert_as(tx: &Connection, id: &RecordId, new: &NewRow<'_>) -> Result<(), LedgerError> {
    if let Some(sha) = new.sha {
        ensure_sha_free(tx, sha)?;
    }
    tx.execute(
        "INSERT INTO records (id, day, seq, mark, state, sha, message, line, created_at,
                              completed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            id.as_str(),
            id.day(),
            id.seq(),
            id.mark(),
            new.state,
            new.sha,
            new.message,
            new.line,
            new.now,
            new.completed_at
        ],
    )?;
    link(tx, id, new.issue_ids)
}

/// Links the record to `issue_ids`, in their order, each once.
fn link(tx: &Connection, id: &RecordId, issue_ids: &[u64]) -> Result<(), LedgerError> {
    let mut seen = Vec::new();
    for &issue in issue_ids {
        if !seen.contains(&issue) {
            tx.execute(
                "INSERT INTO record_issues (record_id, position, issue) VALUES (?1, ?2, ?3)",
                params![id.as_str(), seen.len(), issue],
            )?;
            seen.push(issue);
        }
    }
    Ok(())
}

fn complete(tx: &Connection, id: &RecordId, sha: &str, now: Timestamp) -> Result<(), LedgerError> {
    ensure_sha_free(tx, sha)?;
    tx.execute(
        "UPDATE records SET state = 'complete', sha = ?2, completed_at = ?3 WHERE id = ?1",
        params![id.as_str(), sha, now],
    )?;
    Ok(())
}

fn ensure_sha_free(tx: &Connection, sha: &str) -> Result<(), LedgerError> {
    let holder: Option<String> = tx
        .query_row("SELECT id FROM records WHERE sha = ?1", [sha], |r| r.get(0))
        .optional()?;
    match holder {
        Some(other) => Err(LedgerError::conflict(format!(
            "that commit is already saved as record {other}"
        ))),
        None => Ok(()),
    }
}

fn missing(id: &RecordId) -> LedgerError {
    LedgerError::not_found(format!("record {id}"))
}

fn by_sha(tx: &Connection, sha: &str) -> Result<Option<Record>, LedgerError> {
    let id: Option<String> = tx
        .prepare_cached("SELECT id FROM records WHERE sha = ?1 AND state = 'complete'")?
        .query_row([sha], |r| r.get(0))
        .optional()?;
    match id {
        Some(id) => Ok(load(tx, &id)?.and_then(Row::into_record)),
        None => Ok(None),
    }
}

fn load(tx: &Connection, id: &str) -> Result<Option<Row>, LedgerError> {
    let row = tx
        .prepare_cached(
            "SELECT id, state, sha, message, created_at, line FROM records WHERE id = ?1",
        )?
        .query_row([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Timestamp>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .optional()?;
    let Some((id, state, sha, message, created_at, line)) = row else {
        return Ok(None);
    };
    let issue_ids = tx
        .prepare_cached("SELECT issue FROM record_issues WHERE record_id = ?1 ORDER BY position")?
        .query_map([&id], |r| r.get(0))?
        .collect::<Result<Vec<u64>, _>>()?;
    // An id that fails its own format can only come from a damaged or hand-edited file.
    let id = RecordId::parse(&id).map_err(|_| LedgerError::Corrupt {
        path: std::path::PathBuf::new(),
    })?;
    Ok(Some(Row {
        id,
        state: State::from_db(&state),
        sha,
        message,
        issue_ids,
        created_at,
        line,
    }))
}
