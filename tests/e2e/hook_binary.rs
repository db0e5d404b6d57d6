//! `butler git-hook` as Claude Code runs it: a real child process, the hook JSON on stdin,
//! the decision on stdout and in the exit code. Also `init` + `doctor` against the real binary.

// Test scaffolding plays the user's side of the world (git as a person runs it, chmod, kill,
// building a helper binary); Butler's own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use butler_orchestrator::install::{self, Status};
use butler_testkit::World;

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

fn run_hook(stdin: &[u8]) -> Output {
    let mut child = Command::new(BUTLER)
        .arg("git-hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn butler git-hook");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().expect("wait");
    writer.join().expect("writer thread");
    output
}

fn bash_input(command: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "effort": {"level": "high"},
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d", "timeout": 120000},
        "tool_use_id": "toolu_1",
        "some_future_field": [1, 2, 3],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn git_status_is_denied_with_the_json_form() {
    let out = run_hook(&bash_input("cd /tmp && GIT_PAGER=cat git -C x status"));
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let hook = &doc["hookSpecificOutput"];
    assert_eq!(hook["hookEventName"], "PreToolUse");
    assert_eq!(hook["permissionDecision"], "deny");
    assert_eq!(
        hook["permissionDecisionReason"],
        "`git status` was blocked. Use work_observe() instead."
    );
}

#[test]
fn subcommands_without_a_tool_point_to_work_vcs() {
    let out = run_hook(&bash_input("sudo git branch -a"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let reason = doc["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("reason");
    assert!(reason.contains(r#"work_vcs(["branch", "-a"])"#), "{reason}");
}

#[test]
fn commands_without_git_and_other_tools_pass_silently() {
    for input in [
        bash_input("ls -la && echo git"),
        bash_input("cat .gitignore"),
        br#"{"tool_name":"Read","tool_input":{"file_path":"/repo/git"}}"#.to_vec(),
        br#"{"tool_name":"Bash","tool_input":{}}"#.to_vec(),
    ] {
        let out = run_hook(&input);
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stdout.is_empty(),
            "stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn unreadable_input_blocks_with_exit_2_only_when_git_is_there() {
    let out = run_hook(b"this is not json; git push");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("git push"));
    let out = run_hook(b"this is not json at all");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

/// A command of about 1.8 MB is decided either way the hook may take: the analysis (a deny
/// printed as JSON) or, when the analysis has not finished within its deadline — as on a loaded
/// machine with an unoptimised build —, the scan's deny as exit 2 with the reason on stderr.
/// How fast the analysis is, is `benches/hook_vs_git.rs`'s to say.
#[test]
fn megabyte_commands_are_decided() {
    let big = "echo hello world; ".repeat(100_000);
    let out = run_hook(&bash_input(&format!("{big}git log -1")));
    match out.status.code() {
        Some(0) => {
            let doc: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("stdout is JSON");
            assert_eq!(doc["hookSpecificOutput"]["permissionDecision"], "deny");
        }
        Some(2) => {
            assert!(out.stdout.is_empty());
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(said.contains("git log"), "{said}");
        }
        other => panic!("neither a deny nor a blocked exit: {other:?}"),
    }
    let out = run_hook(&bash_input(&big));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn init_then_doctor_finds_a_working_hook_and_server() {
    let w = World::unborn();
    install::init(
        &w.project,
        &install::Launch::absolute(Path::new(BUTLER)),
        false,
    )
    .expect("init");
    let report = install::doctor(
        &w.project,
        Path::new(BUTLER),
        &butler_worker::config::Environment::from_vars(w.env.clone()),
    )
    .await;
    for name in [
        "hook_configured",
        "hook_executable",
        "hook_denies_git",
        "hook_allows_ls",
    ] {
        let check = report.check(name).expect("check ran");
        assert_eq!(
            check.status,
            Status::Ok,
            "{name}: {}\n{report}",
            check.detail
        );
    }
    let mcp = report.check("mcp_answers").expect("check ran");
    assert_eq!(mcp.status, Status::Ok, "{}\n{report}", mcp.detail);
}

#[test]
fn sharper_classes_decide_through_the_binary() {
    for (command, needle) in [
        (
            "{git,status}",
            "`git status` was blocked. Use work_observe() instead.",
        ),
        ("GIT.EXE log -3", "work_history(n=3)"),
        (
            r#""C:\Program Files\Git\bin\git.exe" push"#,
            "work_publish()",
        ),
        (
            "python3 -c \"import subprocess; subprocess.run(['git', 'diff'])\"",
            "work_diff(",
        ),
        ("$GIT status", "only known when it runs"),
        ("nice -n5 ionice -c3 env -S 'git push'", "work_publish()"),
        ("git-upload-pack .", "work_vcs([\"upload-pack\", \".\"])"),
    ] {
        let out = run_hook(&bash_input(command));
        assert_eq!(out.status.code(), Some(0), "{command}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{command}: stdout is not JSON ({e})"));
        let reason = doc["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains(needle), "{command}: {reason}");
    }
    for command in [
        "python3 -c \"print('git status')\"",
        "git-cliff --latest",
        "$EDITOR notes.md",
        "sudo -u git ls",
    ] {
        let out = run_hook(&bash_input(command));
        assert_eq!(out.status.code(), Some(0), "{command}");
        assert!(
            out.stdout.is_empty(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
