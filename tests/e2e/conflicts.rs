//! Conflicts finished through Butler, with real git and two clones of one shared destination:
//! a rejected `work_publish`, bringing the destination's work in through `work_vcs` (a rebase,
//! a merge, a cherry-pick) that stops on conflicts, `work_observe` naming the operation and
//! the files, `work_record` refusing while markers remain and then finishing the operation,
//! and `work_publish` succeeding.

use std::path::Path;

use crate::common::{Brain, StartBrain, World};
use serde_json::{Value, json};

/// The other clone shares a change to `README.md` first.
fn someone_else_shares(w: &World, content: &str) -> std::path::PathBuf {
    let other = w.other_clone();
    std::fs::write(other.join("README.md"), content).expect("write");
    w.commit(&other, "Their readme");
    w.git(&other, &["push", "-q", "origin", "main"]);
    other
}

/// Records `README.md` as `content` here and tries to share it: rejected.
async fn record_then_publish_rejected(w: &World, brain: &Brain, content: &str) {
    w.write("README.md", content);
    brain
        .ok(
            "work_record",
            json!({"message": "My readme", "issue_ids": []}),
        )
        .await;
    let rejected = brain.call("work_publish", json!({})).await;
    assert_eq!(rejected.error_code(), "conflict", "{}", rejected.envelope);
    let hint = rejected.envelope["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("work_record"), "{hint}");
}

/// Observes the blocked state and checks that it names `op`, `README.md`, the markers left
/// and the right way out.
async fn observe_blocked(brain: &Brain, op: &str) -> Value {
    let obs = brain.observe().await;
    let data = &obs["data"];
    assert_eq!(data["work_state"], json!("blocked"), "{obs}");
    assert_eq!(data["in_progress"]["operation"], json!(op), "{obs}");
    assert_eq!(
        data["in_progress"]["conflicted_files"],
        json!(["README.md"]),
        "{obs}"
    );
    assert_eq!(
        data["in_progress"]["unresolved"][0]["path"],
        json!("README.md"),
        "{obs}"
    );
    let required = &data["required_action"];
    assert_eq!(required["tool"], json!("work_record"), "{obs}");
    let abort = format!("work_vcs([\"{op}\", \"--abort\"])");
    assert!(
        required["policy_hint"]
            .as_str()
            .is_some_and(|h| h.contains(&abort)),
        "{obs}"
    );
    let summary = obs["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(&abort), "{summary}");
    if op != "merge" {
        assert!(!summary.contains("merge"), "{summary}");
    }
    obs
}

/// `work_record` while the markers are still there: refused, naming the file and its line.
async fn record_refused_with_markers(brain: &Brain, w: &World, op: &str) {
    let head = w.git(&w.project, &["rev-parse", "HEAD"]);
    let refused = brain.call("work_record", json!({"issue_ids": []})).await;
    assert_eq!(
        refused.error_code(),
        "policy_blocked",
        "{}",
        refused.envelope
    );
    let summary = refused.envelope["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("README.md (line 1)"), "{summary}");
    assert_eq!(
        refused.data()["operation"],
        json!(op),
        "{}",
        refused.envelope
    );
    assert_eq!(w.git(&w.project, &["rev-parse", "HEAD"]), head);
    // Still in progress, nothing staged behind the Brain's back.
    assert_eq!(brain.state().await, "blocked");
}

fn shared_log(w: &World) -> String {
    w.git(&w.shared, &["log", "--format=%s%n%b--", "main"])
}

fn in_progress(w: &World) -> bool {
    let git_dir = w.project.join(".git");
    [
        "MERGE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "rebase-merge",
        "rebase-apply",
    ]
    .iter()
    .any(|f| Path::new(&git_dir.join(f)).exists())
}

#[tokio::test]
async fn a_rebase_that_conflicts_is_continued_by_work_record_then_published() {
    let w = World::published();
    someone_else_shares(&w, "# theirs\n");
    let brain = w.session().await;
    record_then_publish_rejected(&w, &brain, "# mine\n").await;

    let pull = brain
        .call("work_vcs", json!({"args": ["pull", "--rebase"]}))
        .await;
    assert_eq!(pull.error_code(), "conflict", "{}", pull.envelope);
    observe_blocked(&brain, "rebase").await;
    record_refused_with_markers(&brain, &w, "rebase").await;

    w.write("README.md", "# mine and theirs\n");
    let done = brain.ok("work_record", json!({})).await;
    assert_eq!(
        done["data"]["operation"],
        json!({"name": "rebase", "finished": true}),
        "{done}"
    );
    assert!(!in_progress(&w));
    assert_eq!(brain.state().await, "recorded_unpublished");
    brain.ok("work_publish", json!({})).await;
    let log = shared_log(&w);
    // The replayed record kept its own message and trailers, on top of theirs.
    assert!(log.starts_with("My readme\n"), "{log}");
    assert!(log.contains("Butler-Record:"), "{log}");
    assert!(log.contains("Their readme"), "{log}");
    let shared_readme = w.git(&w.shared, &["show", "main:README.md"]);
    assert_eq!(shared_readme, "# mine and theirs\n");
}

#[tokio::test]
async fn a_rebase_with_two_conflicting_records_stops_again_then_finishes() {
    let w = World::published();
    let other = w.other_clone();
    std::fs::write(other.join("README.md"), "# theirs\n").expect("write");
    std::fs::write(other.join("notes.txt"), "their notes\n").expect("write");
    w.commit(&other, "Theirs");
    w.git(&other, &["push", "-q", "origin", "main"]);
    let brain = w.session().await;
    w.write("README.md", "# mine\n");
    brain
        .ok("work_record", json!({"message": "One", "issue_ids": []}))
        .await;
    w.write("notes.txt", "my notes\n");
    brain
        .ok("work_record", json!({"message": "Two", "issue_ids": []}))
        .await;

    brain
        .call("work_vcs", json!({"args": ["pull", "--rebase"]}))
        .await;
    observe_blocked(&brain, "rebase").await;
    w.write("README.md", "# both\n");
    let again = brain.call("work_record", json!({})).await;
    assert_eq!(again.error_code(), "conflict", "{}", again.envelope);
    assert_eq!(again.data()["operation"], json!("rebase"));
    assert_eq!(again.data()["conflicted_files"], json!(["notes.txt"]));
    let obs = brain.observe().await;
    assert_eq!(
        obs["data"]["in_progress"]["conflicted_files"],
        json!(["notes.txt"])
    );

    w.write("notes.txt", "both notes\n");
    let done = brain.ok("work_record", json!({})).await;
    assert_eq!(done["data"]["operation"]["finished"], json!(true), "{done}");
    brain.ok("work_publish", json!({})).await;
    let subjects = w.git(&w.shared, &["log", "--format=%s", "main"]);
    assert_eq!(subjects, "Two\nOne\nTheirs\nInitial commit\n");
}

#[tokio::test]
async fn a_merge_that_conflicts_is_finished_by_work_record_then_published() {
    let w = World::published();
    someone_else_shares(&w, "# theirs\n");
    let brain = w.session().await;
    record_then_publish_rejected(&w, &brain, "# mine\n").await;

    let pull = brain
        .call("work_vcs", json!({"args": ["pull", "--no-rebase"]}))
        .await;
    assert_eq!(pull.error_code(), "conflict", "{}", pull.envelope);
    observe_blocked(&brain, "merge").await;
    record_refused_with_markers(&brain, &w, "merge").await;

    w.write("README.md", "# mine and theirs\n");
    // No message: the one git prepared for the merge.
    let done = brain.ok("work_record", json!({"issue_ids": []})).await;
    assert_eq!(
        done["data"]["operation"],
        json!({"name": "merge", "finished": true}),
        "{done}"
    );
    assert!(done["data"]["record_id"].is_string(), "{done}");
    assert!(!in_progress(&w));
    let parents = w.git(&w.project, &["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), 2, "a merge record");
    brain.ok("work_publish", json!({})).await;
    let log = shared_log(&w);
    assert!(log.starts_with("Merge branch"), "{log}");
    assert!(log.contains("Butler-Record:"), "{log}");
}

#[tokio::test]
async fn a_cherry_pick_that_conflicts_is_finished_by_work_record() {
    let w = World::published();
    // Someone shares a fix on another branch of the destination.
    let other = w.other_clone();
    w.git(&other, &["switch", "-q", "-c", "fix"]);
    std::fs::write(other.join("README.md"), "# fixed\n").expect("write");
    w.commit(&other, "Fix the readme");
    w.git(&other, &["push", "-q", "origin", "fix"]);
    let brain = w.session().await;
    w.write("README.md", "# mine\n");
    brain
        .ok(
            "work_record",
            json!({"message": "My readme", "issue_ids": []}),
        )
        .await;

    brain.ok("work_vcs", json!({"args": ["fetch"]})).await;
    let pick = brain
        .call("work_vcs", json!({"args": ["cherry-pick", "origin/fix"]}))
        .await;
    assert_eq!(pick.error_code(), "conflict", "{}", pick.envelope);
    observe_blocked(&brain, "cherry-pick").await;
    record_refused_with_markers(&brain, &w, "cherry-pick").await;

    w.write("README.md", "# mine, fixed\n");
    let done = brain.ok("work_record", json!({"issue_ids": []})).await;
    assert_eq!(
        done["data"]["operation"],
        json!({"name": "cherry-pick", "finished": true}),
        "{done}"
    );
    assert!(!in_progress(&w));
    let subject = w.git(&w.project, &["log", "-1", "--format=%s%n%b"]);
    assert!(subject.starts_with("Fix the readme\n"), "{subject}");
    assert!(subject.contains("Butler-Record:"), "{subject}");
    brain.ok("work_publish", json!({})).await;
}

#[tokio::test]
async fn markers_recorded_with_no_conflict_under_way_get_a_warning() {
    let w = World::published();
    let brain = w.session().await;
    w.write(
        "a.txt",
        "x\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n",
    );
    w.write("doc.md", "Title\n=======\n");
    let done = brain
        .ok("work_record", json!({"message": "Paste", "issue_ids": []}))
        .await;
    let text = done.to_string();
    assert!(text.contains("conflict markers"), "{done}");
    assert!(text.contains("a.txt (line 2)"), "{done}");
    assert!(!text.contains("doc.md"), "{done}");
}

#[tokio::test]
async fn a_revert_that_conflicts_is_finished_by_work_record() {
    let w = World::published();
    let brain = w.session().await;
    w.write("README.md", "# a\n");
    record(&brain, "Readme a").await;
    w.write("README.md", "# b\n");
    record(&brain, "Readme b").await;
    let first = w
        .git(&w.project, &["rev-parse", "HEAD~1"])
        .trim()
        .to_owned();

    let revert = brain
        .call("work_vcs", json!({"args": ["revert", "--no-edit", first]}))
        .await;
    assert_eq!(revert.error_code(), "conflict", "{}", revert.envelope);
    observe_blocked(&brain, "revert").await;
    record_refused_with_markers(&brain, &w, "revert").await;

    w.write("README.md", "# b, without a\n");
    let done = brain.ok("work_record", json!({"issue_ids": []})).await;
    assert_eq!(
        done["data"]["operation"],
        json!({"name": "revert", "finished": true}),
        "{done}"
    );
    assert!(!in_progress(&w));
    let subject = w.git(&w.project, &["log", "-1", "--format=%s"]);
    assert_eq!(subject, "Revert \"Readme a\"\n");
}

async fn record(brain: &Brain, message: &str) {
    brain
        .ok("work_record", json!({"message": message, "issue_ids": []}))
        .await;
}
