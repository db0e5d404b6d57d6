//! `work_finish(auto=true, …)` through the real binary: record → publish → summary comment
//! (→ close only when asked), and a stop at a rejected publication with nothing half-done.

use crate::common;
use crate::common::{Brain, StartBrain, World};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// A published project with Butler's clock fixed.
fn frozen() -> World {
    common::frozen(World::published())
}

/// Starts work on a new issue; returns its number.
async fn issue(brain: &Brain, title: &str) -> u64 {
    let created = brain
        .call(
            "issue_create",
            json!({"title": title, "current_state": "open", "next_action": "do it", "blockers": "none"}),
        )
        .await;
    assert_eq!(created.status(), "ok", "{}", created.envelope);
    let n = created.data()["issue"]["number"].as_u64().expect("number");
    let started = brain.call("work_start", json!({"issue_id": n})).await;
    assert_eq!(started.status(), "ok", "{}", started.envelope);
    n
}

async fn issue_state(brain: &Brain, n: u64) -> Value {
    let read = brain
        .call("issue_read", json!({"issue_id": n, "last_n_comments": 5}))
        .await;
    assert_eq!(read.status(), "ok", "{}", read.envelope);
    read.envelope["data"].clone()
}

fn shared_main(w: &World) -> String {
    w.git(&w.shared, &["rev-parse", "main"]).trim().to_owned()
}

#[tokio::test]
async fn auto_records_publishes_and_comments_and_closes_only_when_asked() {
    let w = frozen();
    let brain = w.session().await;
    let n = issue(&brain, "Greet people").await;
    w.write("src/bye.rs", "pub fn bye() {}\n");
    brain
        .call("work_record", json!({"message": "Add bye"}))
        .await;
    w.write("src/greet.rs", "pub fn greet() {}\n");
    let finished = brain.call("work_finish", json!({"auto": true})).await;
    assert_json_snapshot!("auto_happy_path", common::unmarked(&finished.envelope));
    assert_eq!(
        shared_main(&w),
        w.git(&w.project, &["rev-parse", "HEAD"]).trim()
    );
    let state = issue_state(&brain, n).await;
    assert_eq!(state["issue"]["state"], json!("open"));
    let comment = state["comments"][0]["body"].as_str().expect("comment");
    assert!(
        comment.contains("Add greet in greet.rs") && comment.contains("Add bye"),
        "{comment}"
    );
    assert_eq!(brain.state().await, "clean_with_active_issue");

    // Nothing new since the summary: no second comment; close=true closes.
    let closed = brain
        .call("work_finish", json!({"auto": true, "close": true}))
        .await;
    assert_json_snapshot!(
        "auto_nothing_new_then_close",
        common::unmarked(&closed.envelope)
    );
    let state = issue_state(&brain, n).await;
    assert_eq!(state["issue"]["state"], json!("closed"));
    assert_eq!(state["comments"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn given_message_and_comment_are_used() {
    let w = frozen();
    let brain = w.session().await;
    let n = issue(&brain, "Words").await;
    w.write("a.txt", "a\n");
    let finished = brain
        .call(
            "work_finish",
            json!({"auto": true, "message": "Write a", "comment": "Done: a is written."}),
        )
        .await;
    assert_eq!(finished.status(), "ok", "{}", finished.envelope);
    let saved = w.git(&w.project, &["log", "-1", "--format=%s"]);
    assert_eq!(saved.trim(), "Write a");
    let state = issue_state(&brain, n).await;
    assert_eq!(state["comments"][0]["body"], json!("Done: a is written."));
}

#[tokio::test]
async fn a_rejected_publication_stops_the_run_with_nothing_half_done() {
    let w = frozen();
    let brain = w.session().await;
    let n = issue(&brain, "Race").await;
    // Someone else shares work first.
    let other = w.other_clone();
    std::fs::write(other.join("theirs.txt"), "theirs\n").expect("write");
    w.git(&other, &["add", "-A"]);
    w.git(&other, &["commit", "-q", "-m", "Theirs"]);
    w.git(&other, &["push", "-q", "origin", "main"]);
    let theirs = shared_main(&w);
    w.write("mine.txt", "mine\n");

    let stopped = brain
        .call("work_finish", json!({"auto": true, "close": true}))
        .await;
    assert_json_snapshot!(
        "auto_stopped_at_publish",
        common::unmarked(&stopped.envelope)
    );
    assert_eq!(stopped.error_code(), "conflict");
    // Recorded (a whole step), not shared, not commented, not closed.
    assert_eq!(brain.state().await, "recorded_unpublished");
    assert_eq!(shared_main(&w), theirs);
    let state = issue_state(&brain, n).await;
    assert_eq!(state["issue"]["state"], json!("open"));
    assert_eq!(state["comments"].as_array().map(Vec::len).unwrap_or(0), 0);
}

#[tokio::test]
async fn without_auto_it_only_proposes_and_refuses_auto_only_arguments() {
    let w = frozen();
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    let proposals = brain.call("work_finish", json!({})).await;
    assert_eq!(proposals.status(), "ok");
    assert_eq!(
        proposals.data()["pending_actions"][0]["action"],
        json!("work_record")
    );
    let refused = brain.call("work_finish", json!({"close": true})).await;
    assert_eq!(refused.error_code(), "need_input", "{}", refused.envelope);
    assert_eq!(brain.state().await, "dirty");
}

#[tokio::test]
async fn without_a_destination_the_run_stops_before_anything_is_claimed_shared() {
    let w = common::frozen(World::local_only());
    let brain = w.session().await;
    let n = issue(&brain, "Local").await;
    w.write("a.txt", "a\n");
    let stopped = brain
        .call("work_finish", json!({"auto": true, "close": true}))
        .await;
    assert_eq!(
        stopped.error_code(),
        "upstream_not_configured",
        "{}",
        stopped.envelope
    );
    let data = stopped.data();
    assert_eq!(data["done"][0]["step"], json!("record"));
    let left: Vec<&str> = data["left"]
        .as_array()
        .expect("left")
        .iter()
        .map(|s| s["step"].as_str().expect("step"))
        .collect();
    assert_eq!(left, vec!["publish", "comment", "close"]);
    assert_eq!(
        data["left"][0]["error"]["error_code"],
        json!("upstream_not_configured")
    );
    let state = issue_state(&brain, n).await;
    assert_eq!(state["issue"]["state"], json!("open"));
}
