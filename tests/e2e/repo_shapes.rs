//! Every repository shape through the real binary: a nested repository and a submodule with
//! work inside (observe and record agree on what is recordable), a sparse checkout, the
//! repository's hooks (`pre-push`, a `commit-msg` that rewrites the message, a formatting
//! `pre-commit`, a refusing one that must not burn a record id), and very large files.

use std::path::Path;

use crate::common::{Brain, StartBrain, World};
use serde_json::{Value, json};

fn hook(repo: &Path, name: &str, script: &str) {
    let path = repo.join(".git/hooks").join(name);
    butler_testkit::write_executable(&path, format!("#!/bin/sh\n{script}\n"));
}

fn head(w: &World) -> String {
    w.git(&w.project, &["rev-parse", "HEAD"]).trim().to_owned()
}

fn notes(answer: &Value) -> String {
    answer["data"]["notes"].to_string()
}

async fn record(brain: &Brain, message: &str) -> Value {
    brain
        .ok("work_record", json!({"message": message, "issue_ids": []}))
        .await
}

#[tokio::test]
async fn a_nested_repository_is_reported_and_never_recorded_as_a_pointer() {
    let w = World::published();
    let nested = w.project.join("vendor/lib");
    std::fs::create_dir_all(&nested).expect("dir");
    w.git(&nested, &["init", "-q", "-b", "main"]);
    std::fs::write(nested.join("lib.rs"), "pub fn f() {}\n").expect("write");
    w.commit(&nested, "Nested");
    let brain = w.session().await;

    // Observe and record agree: only the nested repository → nothing recordable.
    let obs = brain.observe().await;
    assert_eq!(obs["data"]["work_state"], json!("clean_idle"), "{obs}");
    assert!(notes(&obs).contains("vendor/lib"), "{obs}");
    assert!(notes(&obs).contains("separate repository"), "{obs}");
    let nothing = record(&brain, "Vendor").await;
    assert!(nothing["data"]["record_id"].is_null(), "{nothing}");
    assert!(notes(&nothing).contains("vendor/lib"), "{nothing}");

    // With other work, the record saves that work and leaves the nested repository out.
    w.write("main.rs", "fn main() {}\n");
    let saved = record(&brain, "Main").await;
    assert!(saved["data"]["record_id"].is_string(), "{saved}");
    assert!(notes(&saved).contains("vendor/lib"), "{saved}");
    let tree = w.git(&w.project, &["ls-tree", "-r", "HEAD"]);
    assert!(!tree.contains("vendor"), "no gitlink: {tree}");
    assert!(tree.contains("main.rs"), "{tree}");
    assert_eq!(brain.state().await, "recorded_unpublished");
}

#[tokio::test]
async fn a_submodule_with_work_inside_is_reported_and_observe_does_not_ask_for_a_record() {
    let w = World::published();
    let lib = w.init("lib");
    std::fs::write(lib.join("lib.rs"), "pub fn f() {}\n").expect("write");
    w.commit(&lib, "Lib");
    w.git(
        &w.project,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &lib.to_string_lossy(),
            "lib",
        ],
    );
    w.commit(&w.project, "Add lib");
    w.git(&w.project, &["push", "-q", "origin", "main"]);
    // Edits inside the submodule, none committed there.
    std::fs::write(w.project.join("lib/lib.rs"), "pub fn g() {}\n").expect("write");
    let brain = w.session().await;

    let obs = brain.observe().await;
    assert_eq!(obs["data"]["work_state"], json!("clean_idle"), "{obs}");
    assert!(notes(&obs).contains("submodule"), "{obs}");
    let before = head(&w);
    let answer = record(&brain, "Lib").await;
    assert!(answer["data"]["record_id"].is_null(), "{answer}");
    assert!(notes(&answer).contains("submodule"), "{answer}");
    assert_eq!(head(&w), before);
    // Observe still agrees: no loop between "record" and "nothing to record".
    assert_eq!(brain.state().await, "clean_idle");
}

#[tokio::test]
async fn files_outside_a_sparse_checkout_do_not_fail_the_record() {
    let w = World::committed(&[
        ("README.md", "# p\n"),
        ("src/a.rs", "a\n"),
        ("docs/d.md", "d\n"),
    ]);
    w.git(&w.project, &["sparse-checkout", "set", "src"]);
    assert!(!w.project.join("docs/d.md").exists());
    // A file put back outside the cone, and work inside it.
    w.write("docs/d.md", "d, edited\n");
    w.write("src/a.rs", "a, edited\n");
    w.write("docs/new.md", "new\n");
    let brain = w.session().await;
    let saved = record(&brain, "Both").await;
    assert!(saved["data"]["record_id"].is_string(), "{saved}");
    assert!(notes(&saved).contains("outside the sparse"), "{saved}");
    assert_eq!(w.git(&w.project, &["show", "HEAD:docs/new.md"]), "new\n");
    let docs = w.git(&w.project, &["show", "HEAD:docs/d.md"]);
    assert_eq!(docs, "d, edited\n");
    let src = w.git(&w.project, &["show", "HEAD:src/a.rs"]);
    assert_eq!(src, "a, edited\n");
    let staged = w.git(&w.project, &["diff", "--cached", "--name-only"]);
    assert_eq!(staged, "", "nothing left half-staged");
}

#[tokio::test]
async fn a_failing_pre_push_hook_is_named_with_its_output() {
    let w = World::published();
    hook(
        &w.project,
        "pre-push",
        "echo 'tests failed: 3 errors' >&2\nexit 1",
    );
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    record(&brain, "A").await;
    let refused = brain.call("work_publish", json!({})).await;
    assert_eq!(
        refused.error_code(),
        "policy_blocked",
        "{}",
        refused.envelope
    );
    assert_eq!(
        refused.data()["hook"],
        json!("pre-push"),
        "{}",
        refused.envelope
    );
    assert!(
        refused.data()["output"]
            .to_string()
            .contains("tests failed: 3 errors"),
        "{}",
        refused.envelope
    );
    let summary = refused.envelope["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("pre-push"), "{summary}");
}

#[tokio::test]
async fn a_refusing_pre_commit_hook_does_not_burn_a_record_id() {
    let w = World::published();
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    let first = record(&brain, "A").await;
    let first_id = first["data"]["record_id"].as_str().expect("id").to_owned();
    hook(&w.project, "pre-commit", "echo 'lint: bad' >&2\nexit 1");
    w.write("b.txt", "b\n");
    let refused = brain
        .call("work_record", json!({"message": "B", "issue_ids": []}))
        .await;
    assert_eq!(
        refused.error_code(),
        "policy_blocked",
        "{}",
        refused.envelope
    );
    assert_eq!(refused.data()["hook"], json!("pre-commit"));
    let staged = w.git(&w.project, &["diff", "--cached", "--name-only"]);
    assert_eq!(staged, "", "the index is left as it was");
    std::fs::remove_file(w.project.join(".git/hooks/pre-commit")).expect("rm");
    let second = record(&brain, "B").await;
    let second_id = second["data"]["record_id"].as_str().expect("id");
    let number = |id: &str| -> u32 { id.split('-').nth(1).expect("n").parse().expect("n") };
    assert_eq!(
        number(second_id),
        number(&first_id) + 1,
        "{first_id} {second_id}"
    );
}

#[tokio::test]
async fn a_commit_msg_hook_that_rewrites_the_message_is_shown_as_recorded() {
    let w = World::published();
    // Keeps only the subject and tags it: Butler's trailers are dropped.
    hook(
        &w.project,
        "commit-msg",
        "subject=$(head -n1 \"$1\")\nprintf '[team] %s\\n' \"$subject\" > \"$1\"",
    );
    let brain = w.session().await;
    w.write("a.txt", "a\n");
    let saved = brain
        .ok(
            "work_record",
            json!({"message": "Add a\n\nRefs #7", "issue_ids": [7]}),
        )
        .await;
    let text = notes(&saved);
    assert!(text.contains("commit-msg"), "{saved}");
    assert!(text.contains("dropped"), "{saved}");
    let history = brain.ok("work_history", json!({"n": 1})).await.to_string();
    assert!(history.contains("[team] Add a"), "{history}");
}

#[tokio::test]
async fn a_formatting_pre_commit_hook_is_reported() {
    let w = World::published();
    // Formats and saves the formatted file.
    hook(
        &w.project,
        "pre-commit",
        "tr 'a-z' 'A-Z' < fmt.txt > fmt.tmp && mv fmt.tmp fmt.txt && git add fmt.txt",
    );
    let brain = w.session().await;
    w.write("fmt.txt", "shout\n");
    record(&brain, "Fmt").await;
    assert_eq!(w.git(&w.project, &["show", "HEAD:fmt.txt"]), "SHOUT\n");
    assert_eq!(brain.state().await, "recorded_unpublished");

    // Formats without saving: the record holds the file as it was, and says so.
    hook(
        &w.project,
        "pre-commit",
        "tr 'a-z' 'A-Z' < loose.txt > loose.tmp && mv loose.tmp loose.txt",
    );
    w.write("loose.txt", "quiet\n");
    let saved = record(&brain, "Loose").await;
    assert!(notes(&saved).contains("loose.txt"), "{saved}");
    assert!(notes(&saved).contains("pre-commit"), "{saved}");
    assert_eq!(w.git(&w.project, &["show", "HEAD:loose.txt"]), "quiet\n");
    assert_eq!(brain.state().await, "dirty_and_unpublished");
}

#[tokio::test]
async fn a_very_large_file_gets_a_note_before_it_is_recorded() {
    let w = World::published();
    let big = w.project.join("data.bin");
    let file = std::fs::File::create(&big).expect("create");
    file.set_len(24 << 20).expect("sparse file");
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert!(notes(&obs).contains("data.bin"), "{obs}");
    assert!(notes(&obs).contains("Very large"), "{obs}");
}

#[tokio::test]
async fn line_counts_of_a_very_large_new_file_are_flagged_as_estimates() {
    let w = World::published();
    // 20 MiB of 8-byte lines: more than is read of an untracked file.
    let lines = (20 << 20) / 8;
    w.write("big.txt", &"1234567\n".repeat(lines));
    w.write("small.txt", "a\nb\n");
    let brain = w.session().await;
    let diff = brain.ok("work_diff", json!({"level": "stat"})).await;
    let files = diff["data"]["files"].as_array().expect("files");
    let big = files
        .iter()
        .find(|f| f["path"] == json!("big.txt"))
        .expect("big.txt listed");
    assert_eq!(big["estimated"], json!(true), "{diff}");
    let added = big["added"].as_u64().expect("added") as f64;
    assert!(
        (added - lines as f64).abs() / (lines as f64) < 0.01,
        "{diff}"
    );
    let small = files
        .iter()
        .find(|f| f["path"] == json!("small.txt"))
        .expect("small.txt listed");
    assert!(small.get("estimated").is_none(), "{diff}");
    assert_eq!(small["added"], json!(2));
    let summary = diff["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("estimates"), "{summary}");
}
