//! Every `work_state` reached end to end through the real binary over MCP stdio, with the
//! seed's shapes snapshotted. Time is fixed, not normalised: the server's clock by `BUTLER_NOW`,
//! the test's own commits by git's date variables, so record ids and times are the same on
//! every run.

use crate::common;
use crate::common::{StartBrain, World, frozen};
use insta::assert_json_snapshot;
use serde_json::json;

#[tokio::test]
async fn uninitialized_until_the_session_starts() {
    let w = frozen(World::published());
    let brain = w.brain().await;
    let obs = brain.observe().await;
    assert_json_snapshot!("uninitialized", common::unmarked(&obs));
}

#[tokio::test]
async fn the_whole_cycle_passes_through_every_state() {
    let w = frozen(World::published());
    let brain = w.session().await;
    assert_json_snapshot!("clean_idle", common::unmarked(&brain.observe().await));

    w.write("src/lib.rs", "pub fn hello() {}\n");
    assert_json_snapshot!(
        "dirty_without_issue",
        common::unmarked(&brain.observe().await)
    );

    let created = brain
        .call(
            "issue_create",
            json!({"title": "Say hello", "body": "## Current state\nNo greeting.\n\n## Next action\nAdd hello().\n\n## Blockers\nNone."}),
        )
        .await;
    assert_eq!(created.status(), "ok", "{}", created.envelope);
    let number = created.data()["issue"]["number"]
        .as_u64()
        .expect("issue number");
    let started = brain.call("work_start", json!({"issue_id": number})).await;
    assert_eq!(started.status(), "ok", "{}", started.envelope);
    assert_json_snapshot!("dirty", common::unmarked(&brain.observe().await));

    let recorded = brain
        .call("work_record", json!({"message": "Add hello"}))
        .await;
    assert_eq!(recorded.status(), "ok", "{}", recorded.envelope);
    assert_eq!(recorded.data()["issue_ids"], json!([number]));
    assert_json_snapshot!(
        "recorded_unpublished",
        common::unmarked(&brain.observe().await)
    );

    w.write("src/lib.rs", "pub fn hello() { }\npub fn bye() {}\n");
    assert_json_snapshot!(
        "dirty_and_unpublished",
        common::unmarked(&brain.observe().await)
    );
    let blocked = brain.call("work_publish", json!({})).await;
    assert_eq!(blocked.error_code(), "policy_blocked");
    assert!(
        blocked.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("work_record")
    );

    let again = brain
        .call(
            "work_record",
            json!({"message": "Add bye", "issue_ids": []}),
        )
        .await;
    assert_eq!(again.data()["issue_ids"], json!([]));
    let published = brain.call("work_publish", json!({})).await;
    assert_eq!(published.status(), "ok", "{}", published.envelope);
    assert_eq!(published.data()["published_records"], json!(2));
    let obs = brain.observe().await;
    assert_json_snapshot!("clean_with_active_issue", common::unmarked(&obs.clone()));
    // Nothing pending: the newest record only, published (which goes without saying).
    let records = obs["data"]["recent_records"].as_array().expect("records");
    assert_eq!(records.len(), 1, "{obs}");
    assert_eq!(records[0].get("published"), None);
    assert_eq!(records[0]["message"], json!("Add bye"));
    let history = brain.call("work_history", json!({"n": 2})).await;
    let records = history.data()["records"].as_array().expect("records");
    assert!(records.iter().all(|r| r["published"] == json!(true)));
    assert_eq!(records[1]["issue_ids"], json!([number]));

    // What a tracker sees in history: the issue reference is in the saved message.
    let log = w.git(&w.project, &["log", "-2", "--format=%B"]);
    assert!(log.contains(&format!("Refs: #{number}")), "{log}");

    let finish = brain.call("work_finish", json!({})).await;
    assert_json_snapshot!("finish_proposals", common::unmarked(&finish.envelope));
}

#[tokio::test]
async fn a_merge_conflict_blocks() {
    let w = frozen(World::published());
    w.git(&w.project, &["switch", "-q", "-c", "other"]);
    w.write("README.md", "# other\n");
    w.git(&w.project, &["commit", "-q", "-am", "other"]);
    w.git(&w.project, &["switch", "-q", "main"]);
    w.write("README.md", "# main\n");
    w.git(&w.project, &["commit", "-q", "-am", "main"]);
    let merge = w.git_output(&w.project, &["merge", "other"]);
    assert!(!merge.status.success());
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert_json_snapshot!("blocked_merge", common::unmarked(&obs));
    let record = brain.call("work_record", json!({"message": "x"})).await;
    assert_eq!(record.error_code(), "policy_blocked");
}

#[tokio::test]
async fn a_rebase_conflict_blocks_and_names_the_rebase() {
    let w = frozen(World::published());
    w.git(&w.project, &["switch", "-q", "-c", "other"]);
    w.write("README.md", "# other\n");
    w.git(&w.project, &["commit", "-q", "-am", "other"]);
    w.git(&w.project, &["switch", "-q", "main"]);
    w.write("README.md", "# main\n");
    w.git(&w.project, &["commit", "-q", "-am", "main"]);
    let rebase = w.git_output(&w.project, &["rebase", "other"]);
    assert!(!rebase.status.success());
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert_json_snapshot!("blocked_rebase", common::unmarked(&obs));
    assert_eq!(obs["data"]["required_action"]["tool"], json!("work_record"));
}

#[tokio::test]
async fn a_detached_head_blocks() {
    let w = frozen(World::published());
    w.git(&w.project, &["switch", "-q", "--detach", "HEAD"]);
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert_json_snapshot!("blocked_detached", common::unmarked(&obs));
    assert_eq!(obs["data"]["work_state"], json!("blocked"));
}

#[tokio::test]
async fn unknown_when_the_project_disappears() {
    let w = World::published();
    let brain = w.session().await;
    std::fs::remove_dir_all(w.project.join(".git")).expect("remove .git");
    let obs = brain.observe().await;
    assert_eq!(obs["data"]["work_state"], json!("unknown"), "{obs}");
}

#[tokio::test]
async fn no_destination_means_unpublished_is_null_and_publish_says_so() {
    let w = World::local_only();
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert_eq!(obs["data"]["unpublished_records"], json!(null));
    let a = brain.call("work_publish", json!({})).await;
    assert_eq!(a.error_code(), "upstream_not_configured");
    let finish = brain.call("work_finish", json!({})).await;
    let actions = &finish.data()["pending_actions"];
    assert_eq!(
        actions[0]["action"],
        json!("configure_destination"),
        "{actions}"
    );
}

#[tokio::test]
async fn commits_made_outside_butler_are_reported_once() {
    let w = World::published();
    let brain = w.session().await;
    brain.observe().await;
    w.write("x.txt", "x\n");
    w.git(&w.project, &["add", "x.txt"]);
    w.git(&w.project, &["commit", "-q", "-m", "Sneaky commit for #3"]);
    let obs = brain.observe().await;
    let summary = obs["summary"].as_str().expect("summary");
    assert!(summary.contains("outside Butler"), "{summary}");
    // Made without Butler: named by its commit id, not a record id.
    let first = &obs["data"]["recent_records"][0];
    assert_eq!(first["id"].as_str().map(str::len), Some(12), "{obs}");
    assert_eq!(first["issue_ids"], json!([3]));
    let again = brain.observe().await;
    assert!(
        !again["summary"]
            .as_str()
            .expect("summary")
            .contains("outside Butler")
    );
}

#[tokio::test]
async fn the_active_issue_survives_a_restart() {
    let w = World::published();
    let brain = w.session().await;
    let created = brain
        .call("issue_create", json!({"title": "Persist", "current_state": "a", "next_action": "b", "blockers": "none"}))
        .await;
    let n = created.data()["issue"]["number"].as_u64().expect("number");
    brain.call("work_start", json!({"issue_id": n})).await;
    brain.client.close().await;
    let restarted = w.session().await;
    let obs = restarted.observe().await;
    assert_eq!(
        obs["data"]["active_issue"],
        json!({"number": n, "title": "Persist"})
    );
}

#[tokio::test]
async fn a_huge_change_lists_a_hundred_paths_and_counts_the_rest() {
    let w = World::published();
    for i in 0..150 {
        w.write(&format!("f{i:03}.txt"), "x\n");
    }
    let brain = w.session().await;
    let obs = brain.observe().await;
    let data = &obs["data"];
    assert_eq!(
        data["changed_files"].as_array().map(Vec::len),
        Some(100),
        "{data}"
    );
    assert_eq!(data["changed_files_more"], json!(50));
    assert!(
        obs["summary"]
            .as_str()
            .expect("summary")
            .starts_with("150 unrecorded")
    );
}
