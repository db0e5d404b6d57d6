//! Lines of work through the real binary over MCP stdio: starting, switching and merging
//! lines, need_input instead of any loss of unrecorded work, a merge conflict left as git
//! leaves it (and observed as `blocked` with the files), task lines, and `task_accept` going
//! through the same line merge. Time is fixed (`BUTLER_NOW`, git's dates) so answers are
//! snapshotted as they are.

use crate::common;
use crate::common::{Brain, StartBrain, World};
use insta::assert_json_snapshot;
use serde_json::{Value, json};

/// A published project with Butler's clock fixed.
fn frozen() -> World {
    common::frozen(World::published())
}

async fn ok(brain: &Brain, tool: &str, args: Value) -> Value {
    let a = brain.call(tool, args).await;
    assert_eq!(a.status(), "ok", "{tool}: {}", a.envelope);
    a.envelope
}

async fn record(brain: &Brain, message: &str) {
    ok(
        brain,
        "work_record",
        json!({"message": message, "issue_ids": []}),
    )
    .await;
}

fn rev(w: &World, what: &str) -> String {
    w.git(&w.project, &["rev-parse", what]).trim().to_owned()
}

#[tokio::test]
async fn lines_are_started_switched_and_merged() {
    let w = frozen();
    let brain = w.session().await;

    let started = ok(&brain, "work_new_line", json!({"name": "topic"})).await;
    assert_json_snapshot!("new_line", common::unmarked(&started));
    w.write("src/topic.rs", "pub fn topic() {}\n");
    record(&brain, "Add topic").await;
    let obs = brain.observe().await;
    assert_json_snapshot!(
        "observe_on_a_new_line",
        common::unmarked(&obs["data"]["line"])
    );

    let switched = ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    assert_json_snapshot!("switch_line", common::unmarked(&switched));
    assert!(!w.project.join("src/topic.rs").exists());
    assert_eq!(
        w.git(&w.project, &["branch", "--show-current"]).trim(),
        "main"
    );

    let merged = ok(&brain, "work_merge_line", json!({"name": "topic"})).await;
    assert_json_snapshot!("merge_line_fast_forward", common::unmarked(&merged));
    assert!(w.project.join("src/topic.rs").is_file());
    assert_eq!(rev(&w, "main"), rev(&w, "topic"));

    let again = ok(&brain, "work_merge_line", json!({"name": "topic"})).await;
    assert_eq!(again["data"]["outcome"], json!("already_in"), "{again}");
}

#[tokio::test]
async fn a_line_is_merged_back_where_it_came_from_with_a_merge_record() {
    let w = frozen();
    let brain = w.session().await;
    ok(&brain, "work_new_line", json!({"name": "feature/x"})).await;
    w.write("x.txt", "x\n");
    record(&brain, "Add x").await;
    ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    w.write("y.txt", "y\n");
    record(&brain, "Add y").await;
    ok(&brain, "work_switch_line", json!({"name": "feature/x"})).await;
    let obs = brain.observe().await;
    assert_eq!(
        obs["data"]["line"]["from"],
        json!({"name": "main", "ahead": 1, "behind": 1}),
        "{obs}"
    );

    let merged = ok(&brain, "work_merge_line", json!({})).await;
    assert_json_snapshot!("merge_line_back_with_a_record", common::unmarked(&merged));
    assert_eq!(
        w.git(&w.project, &["branch", "--show-current"]).trim(),
        "main"
    );
    assert!(w.project.join("x.txt").is_file() && w.project.join("y.txt").is_file());
    let parents = w.git(&w.project, &["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), 2, "a merge commit");
    let history = ok(&brain, "work_history", json!({"n": 1})).await;
    assert_eq!(
        history["data"]["records"][0]["record_id"], merged["data"]["record_id"],
        "{history}"
    );
    assert_eq!(brain.state().await, "recorded_unpublished");
}

#[tokio::test]
async fn unrecorded_work_is_never_lost_to_a_line_change() {
    let w = frozen();
    let brain = w.session().await;
    ok(&brain, "work_new_line", json!({"name": "topic"})).await;
    w.write("t.txt", "t\n");
    record(&brain, "Add t").await;
    ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    w.write("README.md", "# unrecorded edit\n");
    w.write("notes.txt", "new and unrecorded\n");

    let switch = brain
        .call("work_switch_line", json!({"name": "topic"}))
        .await;
    assert_json_snapshot!(
        "switch_with_unrecorded_work",
        common::unmarked(&switch.envelope)
    );
    let merge = brain
        .call("work_merge_line", json!({"name": "topic"}))
        .await;
    assert_eq!(merge.error_code(), "need_input", "{}", merge.envelope);
    let from_elsewhere = brain
        .call("work_new_line", json!({"name": "other", "from": "topic"}))
        .await;
    assert_eq!(from_elsewhere.error_code(), "need_input");
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "# unrecorded edit\n"
    );
    assert!(w.project.join("notes.txt").is_file());
    assert_eq!(
        w.git(&w.project, &["branch", "--show-current"]).trim(),
        "main"
    );

    // Starting a line where the work stands takes the work along.
    let carried = ok(&brain, "work_new_line", json!({"name": "carry"})).await;
    assert_eq!(carried["data"]["carried_changes"], json!(2), "{carried}");
    assert_eq!(
        std::fs::read_to_string(w.project.join("README.md")).expect("read"),
        "# unrecorded edit\n"
    );
    assert_eq!(brain.state().await, "dirty");
}

#[tokio::test]
async fn a_conflicting_merge_is_left_as_git_leaves_it_and_observed_as_blocked() {
    let w = frozen();
    let brain = w.session().await;
    ok(&brain, "work_new_line", json!({"name": "topic"})).await;
    w.write("README.md", "# topic\n");
    record(&brain, "Topic readme").await;
    ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    w.write("README.md", "# main\n");
    record(&brain, "Main readme").await;
    let before = rev(&w, "HEAD");

    let merge = brain
        .call("work_merge_line", json!({"name": "topic"}))
        .await;
    assert_json_snapshot!("merge_conflict", common::unmarked(&merge.envelope));
    // Exactly what a conflicting `git merge` leaves.
    assert_eq!(rev(&w, "HEAD"), before);
    assert_eq!(rev(&w, "MERGE_HEAD"), rev(&w, "topic"));
    let status = w.git(&w.project, &["status", "--porcelain"]);
    assert_eq!(status, "UU README.md\n");
    let readme = std::fs::read_to_string(w.project.join("README.md")).expect("read");
    assert!(
        readme.contains("<<<<<<<") && readme.contains(">>>>>>>"),
        "{readme}"
    );
    let message = std::fs::read_to_string(w.project.join(".git/MERGE_MSG")).expect("msg");
    assert!(
        message.starts_with("Merge line topic into main\n") && !message.contains("Butler-Record"),
        "{message}"
    );

    let obs = brain.observe().await;
    assert_eq!(obs["data"]["work_state"], json!("blocked"), "{obs}");
    assert!(
        obs["data"]["changed_files"]
            .as_array()
            .expect("files")
            .contains(&json!("README.md")),
        "{obs}"
    );
    let switch = brain
        .call("work_switch_line", json!({"name": "topic"}))
        .await;
    assert_eq!(switch.error_code(), "policy_blocked", "{}", switch.envelope);

    // The way out the hint names: giving the merge up through work_vcs.
    let abort = ok(&brain, "work_vcs", json!({"args": ["merge", "--abort"]})).await;
    assert_eq!(abort["status"], json!("ok"));
    assert_eq!(brain.state().await, "recorded_unpublished");
    assert_eq!(rev(&w, "HEAD"), before);
}

#[tokio::test]
async fn names_are_checked_and_missing_lines_listed() {
    let w = frozen();
    let brain = w.session().await;
    brain.observe().await;
    for bad in ["--force", "a..b", "has space", "butler/task-t1", "x.lock"] {
        let a = brain.call("work_new_line", json!({"name": bad})).await;
        assert_eq!(a.error_code(), "need_input", "{bad}: {}", a.envelope);
    }
    ok(&brain, "work_new_line", json!({"name": "topic"})).await;
    let exists = brain.call("work_new_line", json!({"name": "topic"})).await;
    assert_eq!(exists.error_code(), "need_input");
    let missing = brain
        .call("work_switch_line", json!({"name": "nowhere"}))
        .await;
    assert_json_snapshot!(
        "switch_to_a_missing_line",
        common::unmarked(&missing.envelope)
    );
    let option = brain.call("work_switch_line", json!({"name": "-f"})).await;
    assert_eq!(option.error_code(), "need_input");
    let newest = brain.observe().await["data"]["recent_records"][0]["id"].clone();
    let from_record = ok(
        &brain,
        "work_new_line",
        json!({"name": "from-first", "from": newest}),
    )
    .await;
    assert_eq!(from_record["data"]["line"], json!("from-first"));
    assert_eq!(rev(&w, "from-first"), rev(&w, "main"));
    // On a line Butler did not start, where it came from is unknown: merging back needs a name.
    w.git(&w.project, &["switch", "-q", "-c", "made-by-hand"]);
    let which = brain.call("work_merge_line", json!({})).await;
    assert_eq!(which.error_code(), "need_input", "{}", which.envelope);
    assert!(
        which.data()["lines"]
            .as_array()
            .is_some_and(|l| l.len() >= 3)
    );
}

#[tokio::test]
async fn a_generated_name_comes_from_the_active_issue() {
    let w = frozen();
    let brain = w.session().await;
    let started = ok(&brain, "work_new_line", json!({})).await;
    assert_eq!(started["data"]["line"], json!("work-20260612"), "{started}");
    ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    let issue = ok(
        &brain,
        "issue_create",
        json!({"title": "Hide the tracker: lines", "current_state": "a", "next_action": "b", "blockers": "none"}),
    )
    .await;
    let n = issue["data"]["issue"]["number"].as_u64().expect("number");
    ok(&brain, "work_start", json!({"issue_id": n})).await;
    let named = ok(&brain, "work_new_line", json!({})).await;
    assert_eq!(
        named["data"]["line"],
        json!(format!("issue-{n}-hide-the-tracker-lines")),
        "{named}"
    );
    let obs = brain.observe().await;
    assert_eq!(
        obs["data"]["active_issue"]["number"],
        json!(n),
        "the issue comes along"
    );
}

#[tokio::test]
async fn work_vcs_leaves_line_operations_to_the_line_tools_only_where_they_cover_them() {
    let w = frozen();
    let brain = w.session().await;
    for (args, tool) in [
        (json!(["switch", "topic"]), "work_switch_line"),
        (json!(["checkout", "-b", "topic"]), "work_new_line"),
        (json!(["merge", "topic"]), "work_merge_line"),
    ] {
        let a = brain.call("work_vcs", json!({"args": args})).await;
        assert_eq!(a.error_code(), "use_proper_tool", "{}", a.envelope);
        assert_eq!(a.data()["tool"], json!(tool));
    }
    let detach = ok(
        &brain,
        "work_vcs",
        json!({"args": ["switch", "--detach", "HEAD"]}),
    )
    .await;
    assert_eq!(detach["status"], json!("ok"));
    assert_eq!(brain.state().await, "blocked");
    let back = ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    assert_eq!(back["data"]["line"], json!("main"));
}

// ---- task lines ----

/// A world whose Brain delegates to the fake agent playing one attempt.
fn delegating(attempt: Value) -> World {
    let mut w = frozen();
    let script = w.tmp.path().join("script.jsonl");
    std::fs::write(&script, attempt.to_string()).expect("script");
    common::fake_goose(&mut w, &script);
    w
}

#[tokio::test]
async fn task_lines_show_up_and_task_accept_is_a_line_merge() {
    let w = delegating(json!([
        {"do": "write", "path": "README.md", "text": "# from the task\n"}
    ]));
    let brain = w.session().await;
    let run = ok(
        &brain,
        "run_implement",
        json!({"goal": "Reword the readme", "target_paths": ["README.md"]}),
    )
    .await;
    assert_eq!(run["data"]["outcome"], json!("succeeded"), "{run}");
    let task = run["data"]["task_id"].as_str().expect("task").to_owned();
    let task_line = format!("butler/task-{task}");
    let obs = brain.observe().await;
    assert_eq!(
        obs["data"]["line"]["task_lines"],
        json!([task_line]),
        "{obs}"
    );
    let switch = brain
        .call("work_switch_line", json!({"name": task_line}))
        .await;
    assert_eq!(switch.error_code(), "policy_blocked", "{}", switch.envelope);
    assert!(
        switch.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("task_accept")
    );

    // The Brain's own line moves on in the same file: accepting conflicts, like any merge.
    w.write("README.md", "# from the brain\n");
    record(&brain, "Brain's readme").await;
    let before = rev(&w, "HEAD");
    let accept = brain.call("task_accept", json!({"task_id": task})).await;
    assert_json_snapshot!("task_accept_conflict", common::unmarked(&accept.envelope));
    assert_eq!(rev(&w, "MERGE_HEAD"), rev(&w, &task_line));
    assert_eq!(brain.state().await, "blocked");

    // Resolved and saved as a person would, the task is accepted by the same merge (already in).
    w.write("README.md", "# from both\n");
    w.git(&w.project, &["commit", "-q", "-am", "Resolve"]);
    assert_ne!(rev(&w, "HEAD"), before);
    let accepted = ok(&brain, "work_merge_line", json!({"name": task_line})).await;
    assert_eq!(accepted["data"]["task_id"], json!(task), "{accepted}");
    let obs = brain.observe().await;
    assert!(obs["data"]["line"].get("task_lines").is_none(), "{obs}");
    assert_eq!(w.git(&w.project, &["branch", "--list", "butler/*"]), "");
}

#[tokio::test]
async fn ignored_files_a_line_change_would_overwrite_are_asked_about_first() {
    let w = frozen();
    let brain = w.session().await;
    ok(&brain, "work_new_line", json!({"name": "topic"})).await;
    w.write("out.txt", "tracked on topic\n");
    record(&brain, "Track out.txt").await;
    ok(&brain, "work_switch_line", json!({"name": "main"})).await;
    w.write(".gitignore", "out.txt\n");
    record(&brain, "Ignore out.txt").await;
    w.write("out.txt", "precious local file\n");
    assert_eq!(brain.state().await, "recorded_unpublished");

    for (tool, args) in [
        ("work_switch_line", json!({"name": "topic"})),
        ("work_merge_line", json!({"name": "topic"})),
    ] {
        let asked = brain.call(tool, args).await;
        assert_eq!(asked.error_code(), "need_input", "{}", asked.envelope);
        assert_eq!(
            asked.data()["would_lose"],
            json!(["ignored file out.txt"]),
            "{}",
            asked.envelope
        );
        let hint = asked.envelope["hint"].as_str().unwrap_or_default();
        assert!(
            hint.contains(r#"work_vcs(["clean","-f","-X","--","out.txt"])"#),
            "{hint}"
        );
        let kept = std::fs::read_to_string(w.project.join("out.txt")).expect("read");
        assert_eq!(kept, "precious local file\n");
        assert_eq!(line_of(&w), "main");
    }

    // The way on the hint names: removing the file, approved by the user.
    let args = json!(["clean", "-f", "-X", "--", "out.txt"]);
    let approval = brain.call("work_vcs", json!({"args": args})).await;
    assert_eq!(approval.error_code(), "need_input", "{}", approval.envelope);
    let reference = approval.data()["approval"].clone();
    ok(
        &brain,
        "work_vcs",
        json!({"args": args, "approval": reference}),
    )
    .await;
    ok(&brain, "work_switch_line", json!({"name": "topic"})).await;
    assert_eq!(line_of(&w), "topic");
}

fn line_of(w: &World) -> String {
    w.git(&w.project, &["branch", "--show-current"])
        .trim()
        .to_owned()
}
