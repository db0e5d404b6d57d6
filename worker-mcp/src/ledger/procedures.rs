//! Delegated operations in the ledger: the procedures the Brain teaches (intent × target
//! signature, typed steps, lifecycle, verified runs), and what a delegated task keeps beside
//! its row — its evidence so far and a cancellation asked for from another process.
//!
//! Lifecycle: a taught procedure starts `candidate`; each verified run counts, and the
//! configured number of them makes it `active`; teaching another procedure for the same intent
//! and signature makes the old one `deprecated` (replaced by the new one). At most one live
//! (candidate or active) procedure exists per intent and signature (a unique index holds it).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::tasks::{json, missing, named, to_json, touch};
use super::{Ledger, LedgerError};
use crate::contract::{
    IntentName, OperationEvidence, ProcedureStatus, Signature, Step, TaskContract, TaskId,
    TaskStatus,
};
use crate::time::Timestamp;

/// A procedure as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ProcedureRow {
    pub id: i64,
    pub intent: IntentName,
    #[serde(serialize_with = "as_text")]
    pub signature: Signature,
    pub steps: Vec<Step>,
    pub status: ProcedureStatus,
    /// Verified runs.
    pub successes: u32,
    pub failures: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taught_for: Option<TaskId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<i64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

fn as_text<S: serde::Serializer>(sig: &Signature, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(sig)
}

const PROCEDURE_COLUMNS: &str = "id, intent, signature, steps_json, status, successes, failures, \
                                 taught_for, replaced_by, created_at, updated_at";

fn procedure_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ProcedureRow> {
    let bad = |idx: usize, why: String| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, why.into())
    };
    let intent: String = r.get(1)?;
    let signature: String = r.get(2)?;
    let taught_for: Option<String> = r.get(7)?;
    Ok(ProcedureRow {
        id: r.get(0)?,
        intent: IntentName::new(intent).map_err(|e| bad(1, e.to_string()))?,
        signature: Signature::parse(&signature)
            .ok_or_else(|| bad(2, format!("`{signature}` is not a signature")))?,
        steps: json(r, 3)?,
        status: named(r, 4, ProcedureStatus::parse)?,
        successes: r.get(5)?,
        failures: r.get(6)?,
        taught_for: taught_for
            .map(TaskId::new)
            .transpose()
            .map_err(|e| bad(7, e.to_string()))?,
        replaced_by: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
    })
}

impl Ledger {
    /// Stores a taught procedure as `candidate`; the live procedure it replaces (same intent
    /// and signature), if any, becomes `deprecated`. Returns the new row and the replaced id.
    pub(crate) fn store_procedure(
        &self,
        intent: &IntentName,
        signature: &Signature,
        steps: &[Step],
        taught_for: Option<&TaskId>,
    ) -> Result<(ProcedureRow, Option<i64>), LedgerError> {
        let now = self.now();
        let sig = signature.to_string();
        self.write(|tx| {
            let old: Option<i64> = tx
                .query_row(
                    "SELECT id FROM procedures
                     WHERE intent = ?1 AND signature = ?2 AND status != 'deprecated'",
                    params![intent.as_str(), sig],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(old) = old {
                tx.execute(
                    "UPDATE procedures SET status = 'deprecated', updated_at = ?2 WHERE id = ?1",
                    params![old, now],
                )?;
            }
            tx.execute(
                "INSERT INTO procedures (intent, signature, steps_json, status, taught_for,
                                         created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'candidate', ?4, ?5, ?5)",
                params![
                    intent.as_str(),
                    sig,
                    to_json(&steps),
                    taught_for.map(TaskId::as_str),
                    now
                ],
            )?;
            let id = tx.last_insert_rowid();
            if let Some(old) = old {
                tx.execute(
                    "UPDATE procedures SET replaced_by = ?2 WHERE id = ?1",
                    params![old, id],
                )?;
            }
            let row = tx.query_row(
                &format!("SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE id = ?1"),
                [id],
                procedure_row,
            )?;
            Ok((row, old))
        })
    }

    /// The live (candidate or active) procedures of `intent`.
    pub(crate) fn live_procedures(
        &self,
        intent: &IntentName,
    ) -> Result<Vec<ProcedureRow>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(&format!(
                "SELECT {PROCEDURE_COLUMNS} FROM procedures
                 WHERE intent = ?1 AND status != 'deprecated' ORDER BY id"
            ))?;
            let rows = stmt
                .query_map([intent.as_str()], procedure_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// Every live procedure, by intent then signature.
    pub(crate) fn all_live_procedures(&self) -> Result<Vec<ProcedureRow>, LedgerError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(&format!(
                "SELECT {PROCEDURE_COLUMNS} FROM procedures
                 WHERE status != 'deprecated' ORDER BY intent, signature"
            ))?;
            let rows = stmt
                .query_map([], procedure_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// One procedure, if it exists.
    pub(crate) fn procedure(&self, id: i64) -> Result<Option<ProcedureRow>, LedgerError> {
        self.read(|tx| {
            Ok(tx
                .query_row(
                    &format!("SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE id = ?1"),
                    [id],
                    procedure_row,
                )
                .optional()?)
        })
    }

    /// Counts one run of procedure `id`: a verified success or a failure. A candidate with
    /// `promote_after` verified successes becomes active. Returns the row after the count.
    pub(crate) fn count_procedure_run(
        &self,
        id: i64,
        verified: bool,
        promote_after: u32,
    ) -> Result<ProcedureRow, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let column = if verified { "successes" } else { "failures" };
            let n = tx.execute(
                &format!(
                    "UPDATE procedures SET {column} = {column} + 1, updated_at = ?2 WHERE id = ?1"
                ),
                params![id, now],
            )?;
            if n == 0 {
                return Err(LedgerError::not_found(format!("procedure {id}")));
            }
            tx.execute(
                "UPDATE procedures SET status = 'active'
                 WHERE id = ?1 AND status = 'candidate' AND successes >= ?2",
                params![id, promote_after],
            )?;
            Ok(tx.query_row(
                &format!("SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE id = ?1"),
                [id],
                procedure_row,
            )?)
        })
    }

    /// Stores a task under the id its contract carries (the Brain chose it) as `running`.
    /// An id that exists already is a conflict.
    pub fn create_named_task(&self, contract: &TaskContract) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let exists: bool = tx
                .query_row(
                    "SELECT 1 FROM tasks WHERE task_id = ?1",
                    [contract.task_id.as_str()],
                    |_| Ok(true),
                )
                .optional()?
                .unwrap_or(false);
            if exists {
                return Err(LedgerError::conflict(format!(
                    "task {} exists already",
                    contract.task_id
                )));
            }
            tx.execute(
                "INSERT INTO tasks (task_id, contract_json, status, branch, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![
                    contract.task_id.as_str(),
                    to_json(contract),
                    TaskStatus::Running.as_str(),
                    contract.branch(),
                    now
                ],
            )?;
            Ok(())
        })
    }

    /// A paused task (waiting for input or approval) runs again: `running`, its earlier end,
    /// cancellation request and evidence so far cleared.
    pub(crate) fn resume_task(&self, task_id: &TaskId) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET status = 'running', result_json = NULL, error = NULL,
                                  progress_json = NULL, cancel_requested_at = NULL
                 WHERE task_id = ?1",
                [task_id.as_str()],
            )?;
            Ok(())
        })
    }

    /// Takes a task that waits for the user's approval for one caller: `true` for exactly one
    /// of any number of concurrent callers (the status moves from `need_approval` to `running`
    /// in one transaction); the others find it taken.
    pub(crate) fn claim_paused_task(&self, task_id: &TaskId) -> Result<bool, LedgerError> {
        let now = self.now();
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE tasks SET status = 'running'
                 WHERE task_id = ?1 AND status = 'need_approval'",
                [task_id.as_str()],
            )?;
            if changed == 1 {
                touch(tx, task_id, now)?;
            }
            Ok(changed == 1)
        })
    }

    /// Gives back a task taken with [`Ledger::claim_paused_task`] when the approval could not be
    /// acted on (it waits for the user again, as before).
    pub(crate) fn release_paused_task(&self, task_id: &TaskId) -> Result<(), LedgerError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE tasks SET status = 'need_approval'
                 WHERE task_id = ?1 AND status = 'running'",
                [task_id.as_str()],
            )?;
            Ok(())
        })
    }

    /// Stores a running operation's evidence so far.
    pub(crate) fn set_task_progress(
        &self,
        task_id: &TaskId,
        evidence: &OperationEvidence,
    ) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET progress_json = ?2 WHERE task_id = ?1",
                params![task_id.as_str(), to_json(evidence)],
            )?;
            Ok(())
        })
    }

    /// A running (or interrupted) operation's evidence so far, if it stored any.
    pub fn task_progress(
        &self,
        task_id: &TaskId,
    ) -> Result<Option<OperationEvidence>, LedgerError> {
        self.read(|tx| {
            let found = tx
                .query_row(
                    "SELECT progress_json FROM tasks WHERE task_id = ?1",
                    [task_id.as_str()],
                    |r| {
                        let text: Option<String> = r.get(0)?;
                        text.map(|_| json(r, 0)).transpose()
                    },
                )
                .optional()?;
            match found {
                Some(progress) => Ok(progress),
                None => Err(missing(task_id)),
            }
        })
    }

    /// Asks whoever runs the task to stop it (another Butler process sees it too).
    pub(crate) fn request_task_cancel(&self, task_id: &TaskId) -> Result<(), LedgerError> {
        let now = self.now();
        self.write(|tx| {
            touch(tx, task_id, now)?;
            tx.execute(
                "UPDATE tasks SET cancel_requested_at = ?2 WHERE task_id = ?1",
                params![task_id.as_str(), now],
            )?;
            Ok(())
        })
    }

    /// Whether a cancellation of the task was asked for.
    pub(crate) fn task_cancel_requested(&self, task_id: &TaskId) -> Result<bool, LedgerError> {
        self.read(|tx| {
            let at: Option<Option<Timestamp>> = tx
                .query_row(
                    "SELECT cancel_requested_at FROM tasks WHERE task_id = ?1",
                    [task_id.as_str()],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(at.flatten().is_some())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde_json::json;

    use super::*;
    use crate::contract::OperationTarget;
    use crate::contract::parse_steps;

    fn ledger() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open_file(&dir.path().join("ledger.db")).expect("open");
        (dir, ledger)
    }

    fn steps() -> Vec<Step> {
        let raw = vec![json!({"kind": "cmd", "argv": ["true"]})];
        parse_steps(&raw, &BTreeSet::new(), &BTreeSet::new()).expect("valid")
    }

    fn sig(pairs: &[(&str, &str)]) -> Signature {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Signature::taught(&map).expect("valid")
    }

    #[test]
    fn a_taught_procedure_is_promoted_after_verified_runs_and_deprecated_when_replaced() {
        let (_dir, l) = ledger();
        let intent = IntentName::new("restart").expect("name");
        let s = sig(&[("service", "*")]);
        let (first, replaced) = l
            .store_procedure(&intent, &s, &steps(), None)
            .expect("store");
        assert_eq!((first.status, replaced), (ProcedureStatus::Candidate, None));
        assert_eq!(first.steps, steps());
        let after = l.count_procedure_run(first.id, false, 2).expect("count");
        assert_eq!(
            (after.status, after.failures),
            (ProcedureStatus::Candidate, 1)
        );
        l.count_procedure_run(first.id, true, 2).expect("count");
        let after = l.count_procedure_run(first.id, true, 2).expect("count");
        assert_eq!(
            (after.status, after.successes),
            (ProcedureStatus::Active, 2)
        );

        let (second, replaced) = l
            .store_procedure(&intent, &s, &steps(), None)
            .expect("again");
        assert_eq!(replaced, Some(first.id));
        let old = l.procedure(first.id).expect("read").expect("row");
        assert_eq!(
            (old.status, old.replaced_by),
            (ProcedureStatus::Deprecated, Some(second.id))
        );
        let live = l.live_procedures(&intent).expect("live");
        assert_eq!(live.iter().map(|p| p.id).collect::<Vec<_>>(), [second.id]);
        assert_eq!(live[0].signature, s);
        assert_eq!(l.all_live_procedures().expect("all").len(), 1);
    }

    #[test]
    fn progress_cancellation_and_named_tasks_are_kept() {
        let (_dir, l) = ledger();
        let contract: TaskContract = serde_json::from_value(json!({
            "task_id": "deploy-1", "intent": "deploy", "target": {},
            "delegation_mode": "known_only",
            "constraints": {"timeout_s": 60, "max_attempts": 1},
            "success_criteria": {}, "requested_by": "brain",
            "requested_at": "2026-04-15T10:00:00+09:00"}))
        .expect("contract");
        l.create_named_task(&contract).expect("create");
        assert!(matches!(
            l.create_named_task(&contract),
            Err(LedgerError::Conflict { .. })
        ));
        let id = &contract.task_id;
        assert_eq!(l.task_progress(id).expect("read"), None);
        let evidence = OperationEvidence::new(
            IntentName::new("deploy").expect("name"),
            OperationTarget::default(),
        );
        l.set_task_progress(id, &evidence).expect("progress");
        assert_eq!(l.task_progress(id).expect("read"), Some(evidence));
        assert!(!l.task_cancel_requested(id).expect("read"));
        l.request_task_cancel(id).expect("cancel");
        assert!(l.task_cancel_requested(id).expect("read"));
        l.resume_task(id).expect("resume");
        assert!(!l.task_cancel_requested(id).expect("read"));
        assert_eq!(l.task_progress(id).expect("read"), None);
        let unknown = TaskId::new("nope").expect("id");
        assert!(matches!(
            l.task_progress(&unknown),
            Err(LedgerError::NotFound { .. })
        ));
    }

    #[test]
    fn a_task_approval_works_once_for_its_task_and_operation_and_never_after_a_deny() {
        let (_dir, l) = ledger();
        let contract: TaskContract = serde_json::from_value(json!({
            "task_id": "a1", "intent": "deploy", "target": {},
            "delegation_mode": "known_only",
            "constraints": {"timeout_s": 60, "max_attempts": 1},
            "success_criteria": {}, "requested_by": "brain",
            "requested_at": "2026-04-15T10:00:00+09:00"}))
        .expect("contract");
        l.create_named_task(&contract).expect("create");
        let id = &contract.task_id;
        let other = TaskId::new("a2").expect("id");
        let first = l
            .create_task_approval(id, "op-1", "push 2 records")
            .expect("create");
        assert!(
            !l.consume_task_approval(&other, &first.reference, "op-1")
                .expect("read")
        );
        assert!(
            !l.consume_task_approval(id, &first.reference, "op-2")
                .expect("read")
        );
        assert!(!l.consume_approval(&first.reference, "op-2").expect("read"));
        let second = l
            .create_task_approval(id, "op-1", "push 2 records")
            .expect("again");
        assert!(
            !l.consume_task_approval(id, &first.reference, "op-1")
                .expect("read"),
            "a newer question voids the older approval"
        );
        assert_eq!(
            l.task_approval(id).expect("read").expect("row").reference,
            second.reference
        );
        assert!(
            l.consume_task_approval(id, &second.reference, "op-1")
                .expect("use")
        );
        assert!(
            !l.consume_task_approval(id, &second.reference, "op-1")
                .expect("twice")
        );
        let voided = l.create_task_approval(id, "op-1", "x").expect("voided");
        l.void_task_approvals(id).expect("void");
        assert!(
            !l.consume_task_approval(id, &voided.reference, "op-1")
                .expect("void")
        );
        assert!(!l.task_approval(id).expect("read").expect("row").denied);
        let third = l.create_task_approval(id, "op-1", "x").expect("third");
        assert!(l.deny_task_approval(id, &third.reference).expect("deny"));
        assert!(
            !l.consume_task_approval(id, &third.reference, "op-1")
                .expect("denied")
        );
        let row = l.task_approval(id).expect("read").expect("row");
        assert!(row.denied && row.used);
        assert_eq!(
            row.expires_at(),
            row.created_at
                .plus_seconds(super::super::APPROVAL_VALID_SECS)
        );
    }
}
