//! Bad input gets the envelope with the right error code and a hint naming a Butler tool; the
//! server keeps serving.

use crate::common;
use crate::common::{StartBrain, World};
use serde_json::{Value, json};

async fn expect_error(brain: &common::Brain, tool: &str, args: Value, code: &str) {
    let a = brain.call(tool, args.clone()).await;
    assert_eq!(a.status(), "error", "{tool}({args}) → {}", a.envelope);
    assert_eq!(a.error_code(), code, "{tool}({args}) → {}", a.envelope);
    let hint = a.envelope["hint"].as_str().expect("hint");
    assert!(
        hint.contains("work_") || hint.contains("issue_") || hint.contains("ask the user"),
        "{hint}"
    );
    for leak in [
        "fatal:",
        "exit code",
        "rusqlite",
        "SQLITE",
        "panicked",
        "git push",
        "PATCH /",
    ] {
        assert!(
            !a.envelope.to_string().contains(leak),
            "{leak} leaked: {}",
            a.envelope
        );
    }
}

#[tokio::test]
async fn session_start_rejects_what_is_not_a_project() {
    let w = World::published();
    let brain = w.brain().await;
    expect_error(&brain, "work_session_start", json!({}), "need_input").await;
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": ""}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": "relative/dir"}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": "/"}),
        "not_found",
    )
    .await;
    let not_repo = w.tmp.path().join("home");
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": not_repo}),
        "not_found",
    )
    .await;
    let missing = w.tmp.path().join("nope");
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": missing}),
        "not_found",
    )
    .await;
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": 42}),
        "need_input",
    )
    .await;
    let long = format!("/{}", "a".repeat(10_000));
    expect_error(
        &brain,
        "work_session_start",
        json!({"project_root": long}),
        "need_input",
    )
    .await;
    // Still serving.
    assert_eq!(brain.state().await, "uninitialized");
}

#[tokio::test]
async fn tools_before_the_session_ask_for_it() {
    let w = World::published();
    let brain = w.brain().await;
    for tool in [
        "work_record",
        "work_publish",
        "work_finish",
        "work_diff",
        "issue_read",
    ] {
        let args = match tool {
            "work_record" => json!({"message": "x"}),
            "issue_read" => json!({"issue_id": 1}),
            _ => json!({}),
        };
        let a = brain.call(tool, args).await;
        assert_eq!(a.error_code(), "need_input", "{tool}");
        assert!(
            a.envelope["hint"]
                .as_str()
                .expect("hint")
                .contains("work_session_start")
        );
    }
}

#[tokio::test]
async fn arguments_are_validated_at_the_edge() {
    let w = World::published();
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    expect_error(
        &brain,
        "work_record",
        json!({"message": "   "}),
        "need_input",
    )
    .await;
    expect_error(&brain, "work_record", json!({}), "need_input").await;
    expect_error(
        &brain,
        "work_record",
        json!({"message": "x".repeat(20_000)}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_record",
        json!({"message": "x", "issue_ids": [-1]}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_record",
        json!({"message": "x", "issue_ids": [1e30]}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_record",
        json!({"message": "x", "owner": "me"}),
        "need_input",
    )
    .await;
    expect_error(&brain, "work_start", json!({"issue_id": 0}), "need_input").await;
    expect_error(&brain, "work_start", json!({"issue_id": 999}), "not_found").await;
    expect_error(&brain, "work_history", json!({"n": -5}), "need_input").await;
    expect_error(
        &brain,
        "work_history",
        json!({"n": 1_000_000}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_diff",
        json!({"level": "everything"}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_diff",
        json!({"record_id": "20990101-001"}),
        "not_found",
    )
    .await;
    expect_error(
        &brain,
        "work_diff",
        json!({"record_id": "HEAD~1"}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "work_diff",
        json!({"path": "../outside.txt"}),
        "policy_blocked",
    )
    .await;
    expect_error(
        &brain,
        "work_diff",
        json!({"path": "/etc/passwd"}),
        "policy_blocked",
    )
    .await;
    expect_error(
        &brain,
        "work_history",
        json!({"path": "../../x"}),
        "policy_blocked",
    )
    .await;
    expect_error(
        &brain,
        "issue_read",
        json!({"issue_id": 12345}),
        "not_found",
    )
    .await;
    expect_error(
        &brain,
        "issue_read",
        json!({"issue_id": "one"}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "issue_read",
        json!({"issue_id": 1, "last_n_comments": -1}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "issue_create",
        json!({"title": ""}),
        "invalid_title",
    )
    .await;
    expect_error(&brain, "issue_create", json!({"title": "x"}), "need_input").await;
    expect_error(
        &brain,
        "issue_create",
        json!({"title": "x", "body": "just words"}),
        "invalid_body",
    )
    .await;
    expect_error(
        &brain,
        "issue_create",
        json!({"title": "x", "current_state": "a", "next_action": "b", "blockers": "none", "label_names": ["nope"]}),
        "label_not_found",
    )
    .await;
    expect_error(
        &brain,
        "issue_comment",
        json!({"issue_id": 1, "body": ""}),
        "need_input",
    )
    .await;
    expect_error(
        &brain,
        "issue_delete_comment",
        json!({"issue_id": 1, "comment_id": 77}),
        "not_found",
    )
    .await;
    expect_error(
        &brain,
        "issue_list",
        json!({"state": "weird"}),
        "need_input",
    )
    .await;
    // The work was not lost and the server still serves.
    assert!(w.project.join("a.txt").exists());
    assert_eq!(brain.state().await, "dirty");
}

#[tokio::test]
async fn invalid_body_names_the_missing_fields() {
    let w = World::published();
    let brain = w.session().await;
    let a = brain
        .call(
            "issue_create",
            json!({"title": "t", "body": "## Current state\nopen\n"}),
        )
        .await;
    assert_eq!(a.error_code(), "invalid_body");
    assert_eq!(
        a.data()["required_fields"],
        json!(["next_action", "blocker"])
    );
    let b = brain
        .call(
            "issue_create",
            json!({"title": "t", "current_state": "open"}),
        )
        .await;
    assert_eq!(b.error_code(), "need_input");
    assert_eq!(
        b.data()["required_fields"],
        json!(["next_action", "blocker"])
    );
}

#[tokio::test]
async fn a_value_outside_an_arguments_fixed_set_is_refused_naming_the_field() {
    let w = World::published();
    w.write("a.txt", "a\n");
    let brain = w.session().await;
    let implement = |agent: Value| json!({"goal": "g", "target_paths": ["src/"], "agent": agent});
    for (tool, args, field) in [
        ("work_diff", json!({"level": "everything"}), "level"),
        ("work_diff", json!({"level": "FULL"}), "level"),
        ("work_diff", json!({"level": ""}), "level"),
        ("issue_list", json!({"state": "weird"}), "state"),
        ("issue_list", json!({"state": 1}), "state"),
        ("run_implement", implement(json!("cursor")), "agent"),
        ("run_implement", implement(json!(["goose"])), "agent"),
    ] {
        let a = brain.call(tool, args.clone()).await;
        assert_eq!(
            a.error_code(),
            "need_input",
            "{tool}({args}) → {}",
            a.envelope
        );
        assert_eq!(a.data()["field"], field, "{tool}({args}) → {}", a.envelope);
        let hint = a.envelope["hint"].as_str().expect("hint");
        assert!(hint.contains(tool) && hint.contains(field), "{hint}");
    }
    // The listed values are taken, and so is leaving the argument out.
    for (tool, args) in [
        ("work_diff", json!({"level": "full"})),
        ("work_diff", json!({"level": "stat"})),
        ("work_diff", json!({"level": null})),
        ("issue_list", json!({"state": "all"})),
        ("issue_list", json!({})),
    ] {
        let a = brain.call(tool, args.clone()).await;
        assert_eq!(a.status(), "ok", "{tool}({args}) → {}", a.envelope);
    }
    assert!(
        w.git(&w.project, &["worktree", "list"]).lines().count() == 1,
        "no task was started"
    );
}
