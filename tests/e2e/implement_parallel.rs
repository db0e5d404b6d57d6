//! Parallel tasks through one real `butler mcp`: four `run_implement` calls sent at once all
//! complete, each in its own worktree and line, with its own ledger row, record and evidence.

// Test scaffolding plays the user's side of the world (git as a person runs it); Butler's own
// children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;

use crate::common;
use crate::common::{StartBrain, World};
use butler_testkit::fake_agent::{attempt, write_script};
use butler_worker::contract::{TaskId, TaskStatus};
use butler_worker::ledger::Ledger;
use serde_json::{Value, json};

/// A world whose goose is the fake agent writing the name of its own worktree (`task-<id>`)
/// into `src/who.txt`, after a pause so the four runs overlap.
fn world() -> World {
    let mut w = World::published();
    let script = write_script(
        w.dir(),
        &[attempt(&[
            r#"{"do":"sleep","ms":300}"#,
            r#"{"do":"sh","cmd":"basename \"$PWD\" > src/who.txt"}"#,
        ])],
    );
    common::fake_goose(&mut w, &script);
    for (k, v) in [
        ("BUTLER_ISSUE_BACKEND", "local".into()),
        ("BUTLER_SANDBOX", "off".into()),
    ] {
        w.env.push((k.to_owned(), v));
    }
    w.write("src/.keep", "");
    w.commit(&w.project, "src");
    w.git(&w.project, &["push", "-q"]);
    w
}

#[tokio::test]
async fn four_concurrent_tasks_complete_each_on_its_own_line() {
    let w = world();
    let brain = w.session().await;
    let args = |n: u32| {
        json!({"goal": format!("Say who you are ({n})"), "target_paths": ["src/"],
               "test_commands": ["test -s src/who.txt"]})
    };
    let (a, b, c, d) = tokio::join!(
        brain.call("run_implement", args(1)),
        brain.call("run_implement", args(2)),
        brain.call("run_implement", args(3)),
        brain.call("run_implement", args(4)),
    );
    let answers: Vec<Value> = [a, b, c, d]
        .into_iter()
        .map(|a| {
            assert_eq!(a.status(), "ok", "{}", a.envelope);
            a.data().clone()
        })
        .collect();
    let mut ids = BTreeSet::new();
    let mut records = BTreeSet::new();
    for data in &answers {
        assert_eq!(data["outcome"], "succeeded", "{data:#}");
        let id = data["task_id"].as_str().expect("task id").to_owned();
        assert_eq!(data["branch"], format!("butler/task-{id}"));
        let who = w.git(
            &w.project,
            &["show", &format!("butler/task-{id}:src/who.txt")],
        );
        assert_eq!(
            who.trim(),
            format!("task-{id}"),
            "the line holds its own work"
        );
        let record = data["attempts"][0]["record"]
            .as_str()
            .expect("a record")
            .to_owned();
        let body = w.git(
            &w.project,
            &["log", "-1", "--format=%B", &format!("butler/task-{id}")],
        );
        assert!(
            body.contains(&format!("Butler-Task: {id}"))
                && body.contains(&format!("Butler-Record: {record}")),
            "{body}"
        );
        records.insert(record);
        ids.insert(id);
    }
    assert_eq!(ids.len(), 4, "task ids are unique: {ids:?}");
    assert_eq!(records.len(), 4, "record ids are unique: {records:?}");
    let ledger = Ledger::open(&w.project.join(".git")).expect("ledger");
    for id in &ids {
        let id = TaskId::new(id.as_str()).expect("id");
        let task = ledger.task(&id).expect("read").expect("stored");
        assert_eq!(task.status, TaskStatus::Succeeded);
        let attempts = ledger.task_attempts(&id).expect("attempts");
        assert_eq!(attempts.len(), 1, "{id}: its own attempt only");
        assert_eq!(
            attempts[0]
                .evidence
                .as_ref()
                .map(|e| e.changed_files.clone()),
            Some(vec!["src/who.txt".to_owned()])
        );
    }
    assert_eq!(brain.state().await, "clean_idle");
}
