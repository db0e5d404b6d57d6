//! `work_record`, `work_publish`, `work_diff` and `work_history` end to end, odd cases included.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::os::unix::ffi::OsStrExt;

use crate::common::{StartBrain, World};
use serde_json::json;

#[tokio::test]
async fn records_tracked_untracked_and_deleted_files_but_not_ignored_ones() {
    let w = World::published();
    w.write(".gitignore", "target/\n");
    w.write("target/out.bin", "build output\n");
    w.write("src/new.rs", "new\n");
    w.write("README.md", "# changed\n");
    let brain = w.session().await;
    let obs = brain.observe().await;
    let changed = obs["data"]["changed_files"]
        .as_array()
        .expect("list")
        .clone();
    assert!(
        !changed
            .iter()
            .any(|p| p.as_str().expect("path").starts_with("target"))
    );
    let a = brain
        .call(
            "work_record",
            json!({"message": "Mixed work", "issue_ids": []}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    w.git(
        &w.project,
        &["rm", "-q", "--cached", "-r", "--ignore-unmatch", "nothing"],
    );
    std::fs::remove_file(w.project.join("src/new.rs")).expect("rm");
    let b = brain
        .call(
            "work_record",
            json!({"message": "Remove new.rs", "issue_ids": []}),
        )
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
    let tracked = w.git(&w.project, &["ls-files"]);
    assert!(
        !tracked.contains("src/new.rs") && !tracked.contains("target/"),
        "{tracked}"
    );
    assert!(w.project.join("target/out.bin").exists());
    assert_eq!(brain.state().await, "recorded_unpublished");
    let nothing = brain.call("work_record", json!({"message": "again"})).await;
    assert_eq!(nothing.status(), "ok");
    assert_eq!(nothing.data()["record_id"], json!(null));
}

#[tokio::test]
async fn credential_files_are_refused_until_confirmed() {
    let w = World::published();
    w.write(".env", "TOKEN=secret\n");
    w.write("src/ok.rs", "ok\n");
    let brain = w.session().await;
    let a = brain.call("work_record", json!({"message": "add"})).await;
    assert_eq!(a.error_code(), "policy_blocked");
    assert_eq!(a.data()["paths"], json!([".env"]));
    assert!(
        a.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("allow_sensitive")
    );
    assert_eq!(brain.state().await, "dirty", "nothing was recorded");
    let b = brain
        .call(
            "work_record",
            json!({"message": "add", "allow_sensitive": [".env"], "issue_ids": []}),
        )
        .await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
}

#[tokio::test]
async fn a_refusing_commit_hook_gives_a_clear_error_and_loses_nothing() {
    let w = World::published();
    let hook = w.project.join(".git/hooks/pre-commit");
    butler_testkit::write_executable(
        &hook,
        "#!/bin/sh\necho 'lint: trailing whitespace in a.txt' >&2\nexit 1\n",
    );
    w.write("a.txt", "a \n");
    let brain = w.session().await;
    let a = brain.call("work_record", json!({"message": "add a"})).await;
    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert!(
        a.envelope.to_string().contains("trailing whitespace"),
        "{}",
        a.envelope
    );
    assert!(w.project.join("a.txt").exists());
    assert_eq!(brain.state().await, "dirty");
    std::fs::remove_file(&hook).expect("rm hook");
    let b = brain.call("work_record", json!({"message": "add a"})).await;
    assert_eq!(b.status(), "ok", "{}", b.envelope);
}

#[tokio::test]
async fn no_identity_asks_for_input() {
    let w = World::unborn().without_identity();
    w.git(&w.project, &["config", "user.useConfigOnly", "true"]);
    w.write("a.txt", "a\n");
    let brain = w.session().await;
    let a = brain.call("work_record", json!({"message": "first"})).await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(w.project.join("a.txt").exists());
}

#[tokio::test]
async fn the_first_record_in_an_empty_repository_works() {
    let w = World::unborn();
    w.write("a.txt", "a\n");
    let brain = w.session().await;
    assert_eq!(brain.state().await, "dirty");
    let a = brain
        .call("work_record", json!({"message": "first", "issue_ids": []}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let hist = brain.call("work_history", json!({})).await;
    assert_eq!(hist.data()["records"][0]["message"], json!("first"));
}

#[tokio::test]
async fn non_utf8_file_names_are_reported_without_loss() {
    let w = World::published();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(w.project.join(name), "x\n").expect("write");
    let brain = w.session().await;
    let obs = brain.observe().await;
    let changed = obs["data"]["changed_files"].to_string();
    assert!(changed.contains("caf\\\\xe9.txt"), "{changed}");
    let diff = brain
        .call("work_diff", json!({"path": "caf\\xe9.txt"}))
        .await;
    assert_eq!(diff.status(), "ok", "{}", diff.envelope);
    assert_eq!(diff.data()["files"][0]["added"], json!(1));
    let a = brain
        .call(
            "work_record",
            json!({"message": "latin-1 name", "issue_ids": []}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert!(w.project.join(name).exists());
}

#[tokio::test]
async fn diff_overview_full_path_and_record() {
    let w = World::published();
    w.write("README.md", "# project\nmore\n");
    w.write("src/big.txt", &"line of text\n".repeat(10_000));
    let brain = w.session().await;
    let overview = brain.call("work_diff", json!({})).await;
    assert_eq!(overview.status(), "ok", "{}", overview.envelope);
    let files = overview.data()["files"].as_array().expect("files");
    assert_eq!(files.len(), 2);
    assert!(
        overview.envelope.to_string().len() < 2000,
        "overview stays short"
    );
    let full = brain.call("work_diff", json!({"level": "full"})).await;
    assert_eq!(full.data()["truncated"], json!(true));
    assert!(full.data()["patch"].as_str().expect("patch").len() <= 48 * 1024);
    assert!(
        full.data()["note"]
            .as_str()
            .expect("note")
            .contains("work_diff(path=")
    );
    let one = brain
        .call("work_diff", json!({"path": "README.md", "level": "full"}))
        .await;
    let patch = one.data()["patch"].as_str().expect("patch");
    assert!(
        patch.contains("+more") && !patch.contains("big.txt"),
        "{patch}"
    );
    let rec = brain
        .call("work_record", json!({"message": "Docs", "issue_ids": []}))
        .await;
    let id = rec.data()["record_id"].as_str().expect("id").to_string();
    let by_record = brain
        .call("work_diff", json!({"record_id": id, "path": "README.md"}))
        .await;
    assert_eq!(
        by_record.data()["files"][0]["added"],
        json!(1),
        "{}",
        by_record.envelope
    );
    let hist = brain
        .call("work_history", json!({"n": 5, "path": "README.md"}))
        .await;
    let records = hist.data()["records"].as_array().expect("records");
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["record_id"], json!(id));
    assert_eq!(records[1]["outside_butler"], json!(true));
}

#[tokio::test]
async fn publish_reports_conflict_when_the_destination_moved_on() {
    let w = World::published();
    let other = w.other_clone();
    std::fs::write(other.join("theirs.txt"), "t\n").expect("write");
    w.git(&other, &["add", "-A"]);
    w.git(&other, &["commit", "-q", "-m", "theirs"]);
    w.git(&other, &["push", "-q"]);
    w.write("ours.txt", "o\n");
    let brain = w.session().await;
    brain
        .call("work_record", json!({"message": "ours", "issue_ids": []}))
        .await;
    let a = brain.call("work_publish", json!({})).await;
    assert_eq!(a.error_code(), "conflict", "{}", a.envelope);
    assert!(
        a.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("work_vcs")
    );
    // Nothing was rewritten on the destination.
    let theirs = w.git(&w.shared, &["log", "-1", "--format=%s", "main"]);
    assert_eq!(theirs.trim(), "theirs");
}

#[tokio::test]
async fn publish_maps_a_refused_login_to_auth_failed() {
    let w = World::local_only();
    let fake_ssh = w.tmp.path().join("fake-ssh");
    butler_testkit::write_executable(
        &fake_ssh,
        "#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n",
    );
    w.git(
        &w.project,
        &[
            "remote",
            "add",
            "origin",
            "ssh://git@example.invalid/owner/repo.git",
        ],
    );
    w.git(
        &w.project,
        &["config", "core.sshCommand", &fake_ssh.to_string_lossy()],
    );
    let brain = w.session().await;
    let started = brain
        .call("work_session_start", json!({"project_root": w.root()}))
        .await;
    assert_eq!(started.data()["resolved_repo"], json!("owner/repo"));
    let a = brain.call("work_publish", json!({})).await;
    assert_eq!(a.error_code(), "auth_failed", "{}", a.envelope);
}

#[tokio::test]
async fn credential_files_inside_new_directories_are_found_too() {
    let w = World::published();
    w.write("deploy/keys/server.pem", "-----BEGIN PRIVATE KEY-----\n");
    w.write("deploy/README.md", "how to deploy\n");
    let brain = w.session().await;
    let obs = brain.observe().await;
    assert_eq!(
        obs["data"]["changed_files"],
        json!(["deploy/README.md", "deploy/keys/server.pem"])
    );
    let a = brain
        .call("work_record", json!({"message": "deploy", "issue_ids": []}))
        .await;
    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert_eq!(a.data()["paths"], json!(["deploy/keys/server.pem"]));
}
