use std::sync::Arc;

use super::*;
use crate::contract::{
    DirectGit, Ending, ImplementEvidence, ImplementRequest, Outcome, ResultStatus, Verification,
};
use crate::time::FixedClock;

const T0: &str = "2026-04-15T10:00:00+09:00";

fn ledger() -> (tempfile::TempDir, Ledger, Arc<FixedClock>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(FixedClock::new(Timestamp::parse(T0).expect("time")));
    let ledger = Ledger::open_file(&dir.path().join("l.db"))
        .expect("open")
        .with_clock(clock.clone());
    (dir, ledger, clock)
}

fn contract(id: TaskId, goal: &str) -> TaskContract {
    let request = ImplementRequest {
        goal: goal.into(),
        target_paths: vec!["src/".into()],
        test_commands: vec!["cargo test".into()],
        issue_id: Some(4),
        ..Default::default()
    };
    let at = Timestamp::parse(T0).expect("time");
    TaskContract::from_request(request, id, "brain", at).expect("valid")
}

fn evidence(attempt: u32) -> AttemptEvidence {
    AttemptEvidence {
        attempt,
        agent_exit: Ending::Exited { code: 0 },
        duration_ms: 5,
        changed_files: vec!["src/a.rs".into()],
        direct_git: DirectGit::default(),
        verify: Verification::default(),
        record: Some(crate::ledger::RecordId::parse("20260415-001").expect("id")),
        worker_mcp_reached: true,
        agent_notes: vec![],
        warnings: vec![],
        sandbox: None,
        activity: None,
        leftovers: None,
    }
}

fn t(id: &str) -> TaskId {
    TaskId::new(id).expect("task id")
}

#[test]
fn tasks_get_short_increasing_ids_and_read_back_typed() {
    let (_dir, l, clock) = ledger();
    let a = l.create_task(|id| contract(id, "first")).expect("create");
    clock.advance(std::time::Duration::from_secs(60));
    let b = l.create_task(|id| contract(id, "second")).expect("create");
    assert_eq!((a.task_id.as_str(), b.task_id.as_str()), ("t1", "t2"));
    l.begin_attempt(&a.task_id, 1).expect("begin");
    assert!(matches!(
        l.begin_attempt(&a.task_id, 1),
        Err(LedgerError::Conflict { .. })
    ));
    l.finish_attempt(&a.task_id, &evidence(1)).expect("finish");
    let result = ResultContract::implement(
        a.task_id.clone(),
        ImplementEvidence {
            branch: a.task_id.branch(),
            outcome: Outcome::Succeeded,
            attempts: vec![evidence(1)],
            tool_config: vec![],
        },
    );
    l.finish_task(&a.task_id, &TaskEnd::Result(result.clone()))
        .expect("finish");

    let t1 = l.task(&t("t1")).expect("read").expect("exists");
    assert_eq!(t1.status, TaskStatus::Succeeded);
    assert_eq!(t1.contract, a);
    assert_eq!(t1.end, Some(TaskEnd::Result(result)));
    assert_eq!(t1.branch.as_deref(), Some("butler/task-t1"));
    assert_eq!(t1.created_at.to_string(), T0);
    let attempts = l.task_attempts(&t("t1")).expect("attempts");
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].evidence, Some(evidence(1)));
    assert_eq!(
        attempts[0].started_at.to_string(),
        "2026-04-15T10:01:00+09:00"
    );
    let all = l.tasks(10).expect("list");
    let ids: Vec<&str> = all.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["t2", "t1"], "newest first");
    assert_eq!(all[0].created_at.to_string(), "2026-04-15T10:01:00+09:00");
    assert!(l.task(&t("t9")).expect("read").is_none());
    assert!(matches!(
        l.finish_attempt(&t("t9"), &evidence(1)),
        Err(LedgerError::NotFound { .. })
    ));
}

#[test]
fn an_error_ends_a_task_with_its_own_status() {
    let (_dir, l, _) = ledger();
    let c = l.create_task(|id| contract(id, "x")).expect("create");
    l.finish_task(&c.task_id, &TaskEnd::Error("git vanished".into()))
        .expect("finish");
    let row = l.task(&c.task_id).expect("read").expect("row");
    assert_eq!(row.status, TaskStatus::Error);
    assert_eq!(row.end, Some(TaskEnd::Error("git vanished".into())));
    l.set_task_status(&c.task_id, TaskStatus::Discarded)
        .expect("status");
    let row = l.task(&c.task_id).expect("read").expect("row");
    assert_eq!(row.status, TaskStatus::Discarded);
    assert_eq!(
        TaskEnd::Result(ResultContract::implement(
            c.task_id.clone(),
            ImplementEvidence {
                branch: String::new(),
                outcome: Outcome::Cancelled,
                attempts: vec![],
                tool_config: vec![],
            }
        ))
        .status(),
        TaskStatus::Cancelled
    );
    assert_eq!(
        ResultStatus::from(Outcome::Cancelled),
        ResultStatus::Cancelled
    );
}

#[test]
fn a_row_that_does_not_read_as_its_type_is_an_error_not_a_default() {
    let (_dir, l, _) = ledger();
    let c = l.create_task(|id| contract(id, "x")).expect("create");
    l.conn()
        .execute(
            "UPDATE tasks SET contract_json = json_set(contract_json, '$.target.objective',
                 json_extract(contract_json, '$.target.goal'))",
            [],
        )
        .expect("edit");
    assert!(l.task(&c.task_id).is_err(), "an unknown target field");
    let bad_status = l
        .conn()
        .execute("UPDATE tasks SET status = 'done' WHERE task_id = 't1'", []);
    assert!(bad_status.is_err(), "the CHECK refuses an unknown status");
}

#[test]
fn notes_are_kept_per_task_and_marked_relayed() {
    let (_dir, l, _) = ledger();
    let c = l.create_task(|id| contract(id, "x")).expect("create");
    let t1 = c.task_id;
    let before = l.last_note_id().expect("last");
    let n1 = l.add_task_note(&t1, NoteKind::Connected, "").expect("note");
    let n2 = l
        .add_task_note(&t1, NoteKind::Blocked, "no network")
        .expect("note");
    assert!(l.add_task_note(&t("t7"), NoteKind::Note, "x").is_err());
    let notes = l.task_notes(&t1, before).expect("notes");
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[1].kind, NoteKind::Blocked);
    assert_eq!(notes[1].body, "no network");
    assert_eq!(notes[1].created_at.to_string(), T0);
    assert_eq!(l.task_notes(&t1, n1).expect("notes").len(), 1);
    l.mark_note_relayed(n2).expect("relay");
    assert!(l.task_notes(&t1, n1).expect("notes")[0].relayed);
}
