//! The operation log and undo end to end: the real `butler mcp` and `butler undo` on real git.
//! Each undo must give back exactly the project before the operation — every file as it was
//! (tracked, staged, untracked), the index entry for entry, every reference — and an undo that
//! would lose later work must change nothing.

// The person at the terminal runs `butler undo` the plain way a shell does.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

use crate::common;
use crate::common::{BUTLER, StartBrain, World, frozen, normalize, project_state};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

fn oplog_refs(w: &World) -> usize {
    w.git(&w.project, &["for-each-ref", "refs/butler/oplog/"])
        .lines()
        .count()
}

/// Uncommitted work of every kind: an edit, a staged edit with a further unstaged one, a new
/// untracked file, a staged new file.
fn messy(w: &World) {
    w.write("README.md", "# project\nedited, not staged\n");
    w.write("staged.txt", "staged version\n");
    w.git(&w.project, &["add", "staged.txt"]);
    w.write("staged.txt", "staged version\nand a newer unstaged line\n");
    w.write("notes/new.txt", "untracked\n");
}

#[tokio::test]
async fn undo_of_a_record_restores_everything_and_can_itself_be_undone() {
    let w = frozen(World::published());
    messy(&w);
    let brain = w.session().await;
    let before = project_state(&w);
    let recorded = brain
        .ok("work_record", json!({"message": "Record the mess"}))
        .await;
    let op = recorded["data"]["oplog_id"].as_u64().expect("operation id");
    assert!(
        recorded["summary"]
            .as_str()
            .expect("summary")
            .contains(&format!("work_undo(operation={op})")),
        "{recorded}"
    );
    let after = project_state(&w);
    assert_ne!(before, after);

    let log = brain.ok("work_oplog", json!({})).await;
    assert_eq!(log["data"]["operations"][0]["id"], json!(op), "{log}");
    assert_eq!(log["data"]["operations"][0]["tool"], json!("work_record"));
    assert_json_snapshot!("oplog_after_record", normalize(log, &w), {
        ".data.operations[].at" => "<time>",
    });

    let undone = brain.ok("work_undo", json!({})).await;
    assert_eq!(
        project_state(&w),
        before,
        "the undo restores the project before the record"
    );
    assert_json_snapshot!("undo_of_record", normalize(undone.clone(), &w));
    let undo_op = undone["data"]["oplog_id"].as_u64().expect("undo's id");

    // The undo is an operation too: undoing it brings the record back.
    let redone = brain.ok("work_undo", json!({"operation": undo_op})).await;
    assert_eq!(redone["data"]["undone"], json!(undo_op));
    assert_eq!(
        project_state(&w),
        after,
        "undoing the undo restores the recorded state"
    );
}

#[tokio::test]
async fn undo_of_a_line_merge_restores_the_line_before_it() {
    let w = frozen(World::published());
    let brain = w.session().await;
    brain.ok("work_new_line", json!({"name": "topic"})).await;
    w.write("src/topic.rs", "pub fn topic() {}\n");
    brain
        .ok("work_record", json!({"message": "Add topic"}))
        .await;
    brain.ok("work_switch_line", json!({"name": "main"})).await;
    // Ignored files are not the log's: they stay as they are.
    w.write(".git/info/exclude", "build/\n");
    w.write("build/out.bin", "ignored\n");
    let before = project_state(&w);
    let merged = brain.ok("work_merge_line", json!({"name": "topic"})).await;
    assert!(merged["data"]["oplog_id"].as_u64().is_some(), "{merged}");
    assert!(w.project.join("src/topic.rs").is_file());
    brain.ok("work_undo", json!({})).await;
    assert_eq!(project_state(&w), before);
    assert!(!w.project.join("src/topic.rs").exists());
}

#[tokio::test]
async fn undo_of_an_approved_hard_reset_brings_back_the_commit_and_the_edits() {
    let w = frozen(World::published());
    w.write("second.txt", "second\n");
    w.commit(&w.project, "Second");
    messy(&w);
    let brain = w.session().await;
    let before = project_state(&w);
    let args = json!(["reset", "--hard", "HEAD~1"]);
    let asked = brain.call("work_vcs", json!({"args": args})).await;
    assert_eq!(asked.error_code(), "need_input", "{}", asked.envelope);
    let reference = asked.data()["approval"].as_str().expect("approval");
    let ran = brain
        .ok("work_vcs", json!({"args": args, "approval": reference}))
        .await;
    let op = ran["data"]["oplog_id"].as_u64().expect("operation id");
    assert!(!w.project.join("second.txt").exists());
    assert_ne!(project_state(&w), before);
    assert_json_snapshot!("vcs_reset_answer", normalize(ran, &w), {
        ".data.output" => "<output>",
    });
    let undone = brain.ok("work_undo", json!({"operation": op})).await;
    assert_eq!(undone["data"]["undone"], json!(op));
    assert_eq!(
        project_state(&w),
        before,
        "commit, edits, staged and untracked files are back"
    );
}

#[tokio::test]
async fn reads_leave_no_entry() {
    let w = World::published();
    let brain = w.session().await;
    brain
        .ok("work_vcs", json!({"args": ["branch", "--list"]}))
        .await;
    let a = brain
        .ok("work_vcs", json!({"args": ["branch", "side"]}))
        .await;
    assert!(a["data"]["oplog_id"].as_u64().is_some(), "{a}");
    let log = brain.ok("work_oplog", json!({"n": 5})).await;
    let ops = log["data"]["operations"].as_array().expect("operations");
    assert_eq!(ops.len(), 1, "{log}");
    assert_eq!(ops[0]["refs"], json!(["refs/heads/side"]));
}

#[tokio::test]
async fn an_undo_that_would_lose_later_work_changes_nothing() {
    let w = frozen(World::published());
    let brain = w.session().await;
    w.write("a.txt", "recorded\n");
    brain.ok("work_record", json!({"message": "Add a"})).await;
    w.write("a.txt", "recorded\nthen edited by hand\n");
    w.write("b.txt", "new since\n");
    let before = project_state(&w);
    let entries = oplog_refs(&w);
    let refused = brain.call("work_undo", json!({})).await;
    assert_eq!(refused.error_code(), "need_input", "{}", refused.envelope);
    assert_eq!(
        refused.data()["changed_files"],
        json!(["a.txt", "b.txt"]),
        "{}",
        refused.envelope
    );
    assert_json_snapshot!("undo_refused", normalize(refused.envelope.clone(), &w));
    assert_eq!(project_state(&w), before, "a refused undo changes nothing");
    assert_eq!(oplog_refs(&w), entries, "and logs nothing");

    // Recorded, the same work is an operation of its own: undoing both is safe.
    brain.ok("work_record", json!({"message": "Edit a"})).await;
    let log = brain.ok("work_oplog", json!({})).await;
    let first = log["data"]["operations"][1]["id"].as_u64().expect("id");
    let undone = brain.ok("work_undo", json!({"operation": first})).await;
    assert_eq!(
        undone["data"]["also_undone"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("a.txt")).expect("a.txt"),
        "recorded\n"
    );
    assert!(!w.project.join("b.txt").exists());
}

#[tokio::test]
async fn the_log_is_pruned_to_its_configured_size() {
    let mut w = World::published();
    w.env.push(("BUTLER_OPLOG_KEEP".into(), "3".into()));
    let brain = w.session().await;
    for n in 0..5 {
        w.write(&format!("f{n}.txt"), "x\n");
        brain
            .ok("work_record", json!({"message": format!("Add f{n}")}))
            .await;
    }
    assert_eq!(oplog_refs(&w), 3);
    let log = brain.ok("work_oplog", json!({"n": 100})).await;
    let ids: Vec<u64> = log["data"]["operations"]
        .as_array()
        .expect("ops")
        .iter()
        .map(|o| o["id"].as_u64().expect("id"))
        .collect();
    assert_eq!(ids, vec![5, 4, 3]);
    let recorded = project_state(&w);
    let undone = brain.ok("work_undo", json!({})).await;
    let undo_op = undone["data"]["oplog_id"].as_u64().expect("undo's id");
    assert!(project_state(&w).status.contains("?? f4.txt"));
    // What the kept entries reach survives git's garbage collection.
    w.git(&w.project, &["reflog", "expire", "--expire=now", "--all"]);
    w.git(&w.project, &["gc", "-q", "--prune=now"]);
    brain.ok("work_undo", json!({"operation": undo_op})).await;
    assert_eq!(project_state(&w), recorded);
    assert_eq!(oplog_refs(&w), 3);
}

#[tokio::test]
async fn a_person_lists_and_undoes_from_the_terminal() {
    let w = World::published();
    w.write("a.txt", "a\n");
    let before = project_state(&w);
    let brain = w.session().await;
    brain.ok("work_record", json!({"message": "Add a"})).await;
    let butler = |args: &[&str]| {
        Command::new(BUTLER)
            .args(args)
            .current_dir(&w.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").expect("PATH"))
            .envs(w.env.iter().cloned())
            .output()
            .expect("butler runs")
    };
    let listed = butler(&["oplog"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.status.success() && text.contains("work_record"),
        "{text}"
    );
    let undone = butler(&["undo"]);
    assert!(undone.status.success(), "{undone:?}");
    assert_eq!(project_state(&w), before);
    // A refused undo exits non-zero and says why.
    w.write("a.txt", "by hand\n");
    let refused = butler(&["undo"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("a.txt"));
    let _: Value = json!(null);
}

#[tokio::test]
async fn undo_of_a_task_accept_restores_the_line_and_the_task_line() {
    let mut w = frozen(World::published());
    let script = w.tmp.path().join("script.jsonl");
    let attempt = json!([{"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"}]);
    std::fs::write(&script, attempt.to_string()).expect("script");
    common::fake_goose(&mut w, &script);
    let brain = w.session().await;
    let run = brain
        .ok(
            "run_implement",
            json!({"goal": "Add greet", "target_paths": ["src/greet.rs"]}),
        )
        .await;
    assert_eq!(run["data"]["outcome"], json!("succeeded"), "{run}");
    let task = run["data"]["task_id"].as_str().expect("task").to_owned();
    let before = project_state(&w);
    let accepted = brain.ok("task_accept", json!({"task_id": task})).await;
    let op = accepted["data"]["oplog_id"].as_u64().expect("oplog id");
    assert!(w.project.join("src/greet.rs").is_file());
    assert_ne!(project_state(&w), before);
    let log = brain.ok("work_oplog", json!({"n": 1})).await;
    assert_eq!(
        log["data"]["operations"][0]["by"],
        json!(format!("task {task}"))
    );
    brain.ok("work_undo", json!({"operation": op})).await;
    assert_eq!(
        project_state(&w),
        before,
        "the task's line is back, the Brain's line as it was"
    );
    assert!(!w.project.join("src/greet.rs").exists());
}

#[tokio::test]
async fn two_sessions_log_and_prune_at_once_without_losing_an_entry_or_an_id() {
    let mut w = World::published();
    w.env.push(("BUTLER_OPLOG_KEEP".into(), "4".into()));
    let (a, b) = tokio::join!(w.session(), w.session());
    async fn run(brain: &common::Brain, who: &str) -> Vec<u64> {
        let mut ids = Vec::new();
        for n in 0..6 {
            let name = format!("{who}{n}");
            let answer = brain
                .ok("work_vcs", json!({"args": ["branch", name]}))
                .await;
            ids.push(answer["data"]["oplog_id"].as_u64().expect("oplog id"));
        }
        ids
    }
    let (ids_a, ids_b) = tokio::join!(run(&a, "a"), run(&b, "b"));
    let mut all: Vec<u64> = ids_a.into_iter().chain(ids_b).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 12, "every operation got its own id: {all:?}");
    assert_eq!(oplog_refs(&w), 4, "pruned to the newest four");
    // The newest is undoable from either session.
    let undone = b.ok("work_undo", json!({})).await;
    assert_eq!(undone["data"]["undone"], json!(12));
}
