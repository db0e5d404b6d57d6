//! The ImplementMaid through the real `butler mcp` binary: `run_implement` with the scripted
//! fake agent, progress notifications, MCP cancellation, accept, and the Brain's tree untouched.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::time::Duration;

use crate::common;
use crate::common::{StartBrain, World};
use butler_testkit::fake_agent::{fake_agent, write_script};
use serde_json::{Value, json};

/// A world whose Brain delegates to the fake agent playing `attempts` (one JSON array each).
fn delegating_world(attempts: &[Value]) -> World {
    let mut w = World::published();
    let tmp = w.tmp.path().to_string_lossy().into_owned();
    let lines: Vec<String> = attempts
        .iter()
        .map(|a| a.to_string().replace("{tmp}", &tmp))
        .collect();
    let script = write_script(w.tmp.path(), &lines);
    for (k, v) in [
        (
            "BUTLER_GOOSE_PROGRAM",
            fake_agent().to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER", "openai".into()),
        ("BUTLER_GOOSE_MODEL", "fake".into()),
        ("FAKE_AGENT_SCRIPT", script.to_string_lossy().into_owned()),
        (
            "BUTLER_AGENT_ENV_ALLOW",
            "FAKE_AGENT_SCRIPT,BUTLER_GITEA_TOKEN".into(),
        ),
        ("BUTLER_GITEA_TOKEN", "tok-never-to-the-agent".into()),
        ("BUTLER_ISSUE_BACKEND", "local".into()),
        // Detection after the run; tests/e2e/sandbox.rs runs the fake agent confined.
        ("BUTLER_SANDBOX", "off".into()),
    ] {
        w.env.push((k.to_string(), v));
    }
    w
}

fn head(w: &World) -> String {
    w.git(&w.project, &["rev-parse", "HEAD"]).trim().to_string()
}

#[tokio::test]
async fn a_delegated_task_goes_from_run_implement_to_accepted_records() {
    let w = delegating_world(&[json!([
        {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() -> &'static str { \"hi\" }\n"},
        {"do": "record_env", "path": "{tmp}/agent-env.txt"},
        {"do": "mcp", "calls": [{"tool": "leave_note", "arguments": {"text": "greet added"}}]}
    ])]);
    let brain = w.session().await;
    let before = head(&w);
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "Add greet()", "target_paths": ["src/"],
                   "test_commands": ["test -f src/greet.rs"]}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let data = a.data();
    assert_eq!(data["outcome"], json!("succeeded"), "{data}");
    let task = data["task_id"].as_str().expect("task id").to_string();
    assert!(
        data["branch"]
            .as_str()
            .expect("branch")
            .starts_with("butler/task-")
    );
    let attempt = &data["attempts"][0];
    assert_eq!(attempt["direct_git"]["detected"], json!(false));
    assert_eq!(attempt["verify"]["tests"][0]["passed"], json!(true));
    assert_eq!(attempt["changed_files"], json!(["src/greet.rs"]));
    let progress = brain.client.progress();
    assert!(progress.len() >= 3, "progress notifications: {progress:?}");
    assert_eq!(
        head(&w),
        before,
        "the Brain's HEAD is untouched while the task runs"
    );
    assert!(
        !w.project.join("src/greet.rs").exists(),
        "the Brain's tree is untouched"
    );
    assert_eq!(brain.state().await, "clean_idle");

    let accepted = brain.call("task_accept", json!({"task_id": task})).await;
    assert_eq!(accepted.status(), "ok", "{}", accepted.envelope);
    assert!(w.project.join("src/greet.rs").exists());
    let history = brain.call("work_history", json!({"n": 3})).await;
    let first = &history.data()["records"][0];
    assert_eq!(
        first["message"].as_str().map(|m| m.contains("greet")),
        Some(true),
        "{first}"
    );
    assert!(
        first.get("outside_butler").is_none(),
        "the Maid's record is Butler's: {first}"
    );
    assert_eq!(brain.state().await, "recorded_unpublished");

    let agent_env = std::fs::read_to_string(w.tmp.path().join("agent-env.txt")).expect("env dump");
    assert!(
        !agent_env.contains("tok-never-to-the-agent"),
        "the tracker token reached the agent"
    );
    assert!(agent_env.contains("FAKE_AGENT_SCRIPT="));
}

#[tokio::test]
async fn unrecorded_work_stops_run_implement_before_any_agent_starts() {
    let w = delegating_world(&[json!([{"do": "write", "path": "src/x.rs", "text": "x\n"}])]);
    w.write("README.md", "# edited, unrecorded\n");
    let brain = w.session().await;
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "x", "target_paths": ["src/"]}),
        )
        .await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope["hint"]
            .as_str()
            .expect("hint")
            .contains("work_record")
    );
    assert!(
        !w.tmp.path().join("script.jsonl.attempt").exists(),
        "the agent never started"
    );
}

#[tokio::test]
async fn cancelling_the_call_stops_the_agent_and_its_children() {
    let w = delegating_world(&[json!([
        {"do": "sh", "cmd": "echo $$ > \"$FAKE_AGENT_SCRIPT.child\"; exec sleep 300"}
    ])]);
    let brain = w.session().await;
    let before = head(&w);
    let pid_file = w.tmp.path().join("script.jsonl.child");
    let call = brain.client.call_then_cancel(
        "run_implement",
        json!({"goal": "hang", "target_paths": ["src/"]}),
        Duration::from_secs(3),
    );
    call.await.expect("cancel sent");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the agent's child started")
        .trim()
        .parse()
        .expect("pid");
    let mut gone = false;
    for _ in 0..100 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the agent's child {pid} outlived the cancellation");
    assert_eq!(head(&w), before);
    assert_eq!(brain.state().await, "clean_idle", "the server still serves");
}

#[tokio::test]
async fn direct_commits_and_out_of_scope_work_are_caught_and_retried_through_mcp() {
    let w = delegating_world(&[
        json!([
            {"do": "write", "path": "src/a.rs", "text": "pub fn a() {}\n"},
            {"do": "write", "path": "docs/out.txt", "text": "not mine to write\n"},
            {"do": "sh", "cmd": "git add -A && git -c user.name=A -c user.email=a@x commit -qm wip"},
            {"do": "record_prompt", "path": "{tmp}/prompt-1.txt"}
        ]),
        json!([
            {"do": "record_prompt", "path": "{tmp}/prompt-2.txt"},
            {"do": "write", "path": "src/a.rs", "text": "pub fn a() {}\n"}
        ]),
    ]);
    let brain = w.session().await;
    let before = head(&w);
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "Add a()", "target_paths": ["src/**/*.rs"]}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    let data = a.data();
    let first = &data["attempts"][0];
    assert_eq!(first["direct_git"]["detected"], json!(true), "{first}");
    assert_eq!(
        first["verify"]["scope_violation"],
        json!(["docs/out.txt"]),
        "{first}"
    );
    assert_eq!(data["outcome"], json!("succeeded"), "{data}");
    assert_eq!(data["attempts"].as_array().map(Vec::len), Some(2));
    let retry = std::fs::read_to_string(w.tmp.path().join("prompt-2.txt")).expect("retry prompt");
    assert!(
        retry.contains("docs/out.txt"),
        "the retry names the out-of-scope file:\n{retry}"
    );
    assert!(
        retry.contains("commit"),
        "the retry names the agent's own commit:\n{retry}"
    );
    assert_eq!(head(&w), before);
    assert_eq!(brain.state().await, "clean_idle");
}

#[tokio::test]
async fn a_missing_or_unconfigured_agent_is_reported_before_anything_is_created() {
    let mut w = delegating_world(&[json!([])]);
    w.env
        .push(("BUTLER_GOOSE_PROGRAM".into(), "/nonexistent/goose".into()));
    let brain = w.session().await;
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "x", "target_paths": ["src/"]}),
        )
        .await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("/nonexistent/goose")
    );
    assert!(
        !w.project.join(".git/butler/worktrees").exists(),
        "no worktree was made"
    );
    let branches = w.git(&w.project, &["branch", "--list", "butler/*"]);
    assert!(
        branches.trim().is_empty(),
        "no task line was made: {branches}"
    );
    assert_eq!(brain.state().await, "clean_idle");

    let mut w = delegating_world(&[json!([])]);
    w.env.retain(|(k, _)| k != "BUTLER_GOOSE_MODEL");
    w.env.push(("GOOSE_MODEL".into(), String::new()));
    let brain = w.session().await;
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "x", "target_paths": ["src/"]}),
        )
        .await;
    assert_eq!(a.error_code(), "need_input", "{}", a.envelope);
    assert!(
        a.envelope["summary"]
            .as_str()
            .expect("summary")
            .contains("model"),
        "{}",
        a.envelope
    );
}

/// Replaces what varies between runs of one scenario in `run_implement`'s answer: how long each
/// attempt took (record ids are fixed by the server's clock).
fn stable_answer(mut answer: Value) -> Value {
    if let Some(attempts) = answer["data"]["attempts"].as_array_mut() {
        for attempt in attempts {
            attempt["duration_ms"] = json!("<ms>");
        }
    }
    answer
}

#[tokio::test]
async fn run_implements_answer_keeps_its_shape() {
    let mut w = delegating_world(&[
        json!([
            {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() {}\n"},
            {"do": "write", "path": "docs/out.txt", "text": "not mine\n"},
            {"do": "mcp", "calls": [{"tool": "leave_note", "arguments": {"text": "first try"}}]}
        ]),
        json!([
            {"do": "write", "path": "src/greet.rs", "text": "pub fn greet() -> &'static str { \"hi\" }\n"},
            {"do": "mcp", "calls": [{"tool": "save_progress", "arguments": {"summary": "greet returns hi"}}]}
        ]),
    ]);
    w.env
        .push(("BUTLER_NOW".into(), "2026-04-15T10:00:00+09:00".into()));
    let brain = w.session().await;
    let issue = brain
        .call(
            "issue_create",
            json!({"title": "Greet", "current_state": "none", "next_action": "add greet", "blockers": "none"}),
        )
        .await;
    let number = issue.data()["issue"]["number"].as_u64().expect("number");
    let a = brain
        .call(
            "run_implement",
            json!({"goal": "Add greet()", "target_paths": ["src/"], "issue_id": number,
                   "test_commands": ["grep -q hi src/greet.rs && echo found"],
                   "file_checks": [{"path": "src/greet.rs", "exists": true}]}),
        )
        .await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    insta::assert_json_snapshot!(
        "run_implement_answer",
        common::unmarked(&stable_answer(a.envelope))
    );
}
