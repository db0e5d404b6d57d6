//! A ledger written by the previous version opens, migrates and reads back typed.

use std::path::Path;

use rusqlite::Connection;

use crate::contract::{NoteKind, Outcome, ResultStatus, TaskId, TaskStatus};
use crate::ledger::{Ledger, TaskEnd};
use crate::time::Timestamp;

/// Writes the version 1 fixture (a real ledger of the previous build) into a file.
fn version_1_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("ledger.db");
    let conn = Connection::open(&path).expect("create");
    // The dump lists tables by name, children before their parents.
    conn.pragma_update(None, "foreign_keys", false)
        .expect("pragma");
    conn.execute_batch(include_str!("../fixtures/ledger_v1.sql"))
        .expect("fixture loads");
    // A task the previous build ended with an error stored it as `{"error": …}`.
    conn.execute_batch(
        r#"INSERT INTO tasks (task_id, contract_json, status, branch, created_at, updated_at,
                              result_json)
           SELECT 't3', replace(contract_json, '"t2"', '"t3"'), 'error', 'butler/task-t3',
                  created_at, updated_at, '{"error":"the git worker failed: disk full"}'
           FROM tasks WHERE task_id = 't2';"#,
    )
    .expect("error row");
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("version");
    assert_eq!(version, 1);
    path
}

fn t(id: &str) -> TaskId {
    TaskId::new(id).expect("task id")
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("time")
}

#[test]
fn a_version_1_ledger_opens_and_reads_back_typed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = version_1_file(dir.path());
    let ledger = Ledger::open_file(&path).expect("opens and migrates");
    let version: i64 = ledger
        .conn()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("version");
    assert_eq!(version, super::VERSION);

    // Records: ids, messages, issue links and times as they were.
    let added = ledger
        .record_by_id("20261201-002")
        .expect("read")
        .expect("record");
    assert_eq!(added.message, "Add a");
    assert_eq!(added.issue_ids, vec![1]);
    assert_eq!(added.created_at, at("2026-12-01T12:11:21+00:00"));
    let completed: Option<String> = ledger
        .conn()
        .query_row(
            "SELECT completed_at FROM records WHERE id = '20261201-002'",
            [],
            |r| r.get(0),
        )
        .expect("column");
    assert_eq!(completed.as_deref(), Some("2026-12-01T12:11:21+00:00"));
    let next = ledger
        .reserve_record(at("2026-12-01T13:00:00+00:00"), "next", &[], None)
        .expect("reserve");
    assert_eq!(
        next.as_str(),
        format!("20261201-009-{}", ledger.clone_mark()),
        "the day's sequence goes on, under the clone's mark"
    );
    // The commit made outside Butler is no longer a record, only a commit seen.
    assert_eq!(ledger.record_by_id("20261201-001").expect("read"), None);
    assert!(
        ledger
            .is_known_sha("6fcac972e9ffc2b5495304ad5ab12828cf569b15")
            .expect("read")
    );
    let links: i64 = ledger
        .conn()
        .query_row("SELECT count(*) FROM record_issues", [], |r| r.get(0))
        .expect("count");
    assert_eq!(links, 3, "the links of Butler's records are kept");

    // Tasks: the contract typed, test commands as command checks, results with a status.
    let t1 = ledger.task(&t("t1")).expect("read").expect("t1");
    assert_eq!(t1.status, TaskStatus::Accepted);
    let target = t1.contract.implement().expect("implement");
    assert_eq!(target.goal, "Add greet()");
    assert_eq!(target.target_paths, vec!["src/"]);
    assert_eq!(t1.contract.issue_id, Some(1));
    let checks = &t1.contract.success_criteria.commands;
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].command, "grep -q hi src/greet.rs");
    assert_eq!(checks[0].exit_code, 0);
    let Some(TaskEnd::Result(result)) = &t1.end else {
        panic!("t1 ended with a result: {:?}", t1.end);
    };
    assert_eq!(result.status, ResultStatus::Ok);
    let evidence = result.implementation().expect("implement");
    assert_eq!(evidence.outcome, Outcome::Succeeded);
    assert_eq!(
        evidence.attempts[0].record.as_ref().map(|r| r.as_str()),
        Some("20261201-003")
    );
    assert_eq!(evidence.attempts[0].agent_notes[0].kind, NoteKind::Note);

    let t2 = ledger.task(&t("t2")).expect("read").expect("t2");
    assert_eq!(t2.status, TaskStatus::Failed);
    let Some(TaskEnd::Result(failed)) = &t2.end else {
        panic!("t2 ended with a result: {:?}", t2.end);
    };
    assert_eq!(failed.status, ResultStatus::Failed);
    assert_eq!(ledger.task_attempts(&t("t2")).expect("attempts").len(), 3);
    assert!(
        ledger.task_attempts(&t("t2")).expect("attempts")[2]
            .evidence
            .as_ref()
            .is_some_and(|e| !e.verify.passed())
    );

    let t3 = ledger.task(&t("t3")).expect("read").expect("t3");
    assert_eq!(t3.status, TaskStatus::Error);
    assert_eq!(
        t3.end,
        Some(TaskEnd::Error("the git worker failed: disk full".into()))
    );
    let listed: Vec<String> = ledger
        .tasks(10)
        .expect("list")
        .into_iter()
        .map(|t| t.task_id.to_string())
        .collect();
    assert_eq!(listed, ["t3", "t2", "t1"]);

    // Notes keep their ids, and new ones follow on.
    let notes = ledger.task_notes(&t("t1"), 0).expect("notes");
    assert_eq!(
        notes.iter().map(|n| n.kind).collect::<Vec<_>>(),
        [NoteKind::Connected, NoteKind::Note]
    );
    let id = ledger
        .add_task_note(&t("t1"), NoteKind::Progress, "later")
        .expect("note");
    assert_eq!(id, 3);

    // Per-place state, the journal and the approval gate read their old times.
    assert_eq!(
        ledger
            .active_issue("/tmp/v1world/project", "main")
            .expect("issue"),
        Some(1)
    );
    assert!(ledger.open_operations().expect("journal").is_empty());
    let op = ledger.begin_operation("record", 1, "main").expect("op");
    assert_eq!(op, 5, "operation ids go on after the old ones");
    let (created, used): (Timestamp, Option<Timestamp>) = ledger
        .conn()
        .query_row("SELECT created_at, used_at FROM approvals", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("approval");
    assert_eq!(created.to_string(), "2026-12-01T12:11:29+00:00");
    assert_eq!(used, None);
}

#[test]
fn the_migrated_file_opens_again_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = version_1_file(dir.path());
    let first = Ledger::open_file(&path).expect("migrates");
    let before = first.task(&t("t1")).expect("read");
    drop(first);
    let again = Ledger::open_file(&path).expect("reopens");
    assert_eq!(again.task(&t("t1")).expect("read"), before);
}
