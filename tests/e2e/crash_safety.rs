//! A server killed in the middle of `work_record` loses no file and leaves nothing that blocks
//! the next call; two servers on one repository never collide.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::time::Duration;

use crate::common::{StartBrain, World};
use serde_json::json;

/// Every descendant of `pid` (from /proc), deepest last.
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            let after = stat.rsplit(')').next().unwrap_or("");
            let ppid: u32 = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            if ppid == parent {
                all.push(child);
                frontier.push(child);
            }
        }
    }
    all
}

fn kill9(pid: u32) {
    let _ = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status();
}

#[tokio::test]
async fn sigkill_mid_record_loses_nothing_and_blocks_nothing() {
    let w = World::published();
    let marker = w.tmp.path().join("hook-started");
    let hook = w.project.join(".git/hooks/pre-commit");
    // The hook stands for git itself being killed while it holds the index lock: it takes the
    // lock, signals the test, and waits to be killed with the whole server.
    let script = format!(
        "#!/bin/sh\ntouch .git/index.lock\ntouch '{}'\nsleep 30\n",
        marker.display()
    );
    butler_testkit::write_executable(&hook, script);
    w.write("precious.txt", "do not lose me\n");

    let brain = w.session().await;
    let pid = brain.client.pid().expect("server pid");
    let call = tokio::spawn(async move {
        brain
            .client
            .call("work_record", json!({"message": "save", "issue_ids": []}))
            .await
    });
    for _ in 0..200 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(marker.exists(), "the commit hook started");
    let mut victims = descendants(pid);
    victims.insert(0, pid);
    for p in victims {
        kill9(p);
    }
    let _ = call.await;
    assert!(
        w.project.join(".git/index.lock").exists(),
        "the killed git left its lock"
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("precious.txt")).expect("file"),
        "do not lose me\n"
    );

    std::fs::remove_file(&hook).expect("rm hook");
    let brain = w.session().await;
    assert_eq!(brain.state().await, "dirty");
    let a = brain
        .call("work_record", json!({"message": "save", "issue_ids": []}))
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    assert!(!w.project.join(".git/index.lock").exists());
    let files = w.git(&w.project, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(files.contains("precious.txt"), "{files}");
}

#[tokio::test]
async fn a_lock_held_by_someone_else_is_reported_not_removed() {
    let w = World::published();
    w.write("a.txt", "a\n");
    std::fs::write(w.project.join(".git/index.lock"), "").expect("lock");
    let brain = w.session().await;
    let a = brain
        .call("work_record", json!({"message": "x", "issue_ids": []}))
        .await;
    assert_eq!(a.error_code(), "policy_blocked", "{}", a.envelope);
    assert!(w.project.join(".git/index.lock").exists());
}

#[tokio::test]
async fn two_servers_recording_at_once_never_collide() {
    let w = World::published();
    let first = w.session().await;
    let second = w.session().await;
    let mut ids = Vec::new();
    let mut rounds_recorded = 0;
    for round in 0..3 {
        w.write(&format!("one{round}.txt"), "1\n");
        w.write(&format!("two{round}.txt"), "2\n");
        let (a, b) = tokio::join!(
            first.call(
                "work_record",
                json!({"message": format!("one {round}"), "issue_ids": []})
            ),
            second.call(
                "work_record",
                json!({"message": format!("two {round}"), "issue_ids": []})
            ),
        );
        let before = ids.len();
        for answer in [a, b] {
            // Both succeed; when one saved the other's files too, the other has nothing left.
            assert_eq!(answer.status(), "ok", "{}", answer.envelope);
            if let Some(id) = answer.data()["record_id"].as_str() {
                ids.push(id.to_string());
            }
        }
        rounds_recorded += usize::from(ids.len() > before);
    }
    assert_eq!(rounds_recorded, 3);
    assert!(w.git(&w.project, &["status", "--porcelain"]).is_empty());
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert_eq!(first.state().await, "recorded_unpublished");
    let fsck = w.git_output(&w.project, &["fsck", "--no-progress"]);
    assert!(fsck.status.success());
}

#[tokio::test]
async fn a_record_a_vcs_operation_and_an_observer_on_one_repository_never_collide() {
    let w = World::published();
    let recorder = w.session().await;
    let operator = w.session().await;
    let observer = w.session().await;
    let mut recorded = 0;
    for round in 0..4 {
        // Enough files that git holds the index for a while during each call.
        for i in 0..150 {
            w.write(&format!("r{round}/f{i}.txt"), &format!("{round} {i}\n"));
        }
        let (record, reset, seen, seen_again) = tokio::join!(
            recorder.call(
                "work_record",
                json!({"message": format!("round {round}"), "issue_ids": []})
            ),
            // `reset` always rewrites the index.
            operator.call("work_vcs", json!({"args": ["reset", "-q"]})),
            observer.call("work_observe", json!({})),
            observer.call("work_diff", json!({})),
        );
        assert_eq!(record.status(), "ok", "{}", record.envelope);
        recorded += usize::from(record.data()["record_id"].is_string());
        assert_eq!(
            reset.status(),
            "ok",
            "git did not find the index locked: {}",
            reset.envelope
        );
        assert_eq!(seen.status(), "ok", "{}", seen.envelope);
        assert_eq!(seen_again.status(), "ok", "{}", seen_again.envelope);
    }
    assert_eq!(recorded, 4);
    assert!(w.git(&w.project, &["status", "--porcelain"]).is_empty());
    assert!(!w.project.join(".git/index.lock").exists());
}
