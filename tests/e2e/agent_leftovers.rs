//! Nothing of the agent outlives its attempt, through the real `butler mcp` binary and the real
//! sandbox helper: a scripted hostile agent starts a daemon that double-forks, calls `setsid`,
//! clears its environment, ignores SIGTERM and keeps writing a marker file and rewriting the
//! worktree's `.git` pointer after the agent exits; a verify command leaves a daemon of its own.
//! After the attempt both are dead, their markers stop changing, the pointer is the Maid's, and
//! the evidence names them — with the sandbox on (this kernel's Landlock) and off (the user's
//! setting). `tests/e2e/agent_lifetime.rs` does the same through Butler's own exit.

// The test plays the user's side: it reads pid files and /proc.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{StartBrain, World};
use butler_testkit::fake_agent::{attempt, write_script};
use serde_json::{Value, json};

/// A daemon as a hostile program would start one: a double fork (`( … &)`), a session of its
/// own (`setsid`), an empty environment (`env -i`); it writes its pid to `<dir>/<name>.pid`,
/// then every 50 ms the time to `<dir>/<name>.marker` (written beside it and renamed over it, so
/// a daemon killed mid-write never leaves the marker empty) and, with `git_file`, a `.git`
/// pointer to nowhere over that file. With `stubborn` it ignores SIGTERM.
fn daemon(dir: &str, name: &str, git_file: Option<&str>, stubborn: bool) -> String {
    let trap = if stubborn { "trap '' TERM; " } else { "" };
    let rewrite = git_file.map_or(String::new(), |g| {
        format!("printf 'gitdir: /nowhere\\n' > {g} 2>/dev/null; ")
    });
    format!(
        "(setsid env -i /bin/sh -c \"{trap}echo \\$\\$ > {dir}/{name}.pid; while :; do date +%s%N \
         > {dir}/{name}.marker.new && mv {dir}/{name}.marker.new {dir}/{name}.marker; \
         {rewrite}sleep 0.05; done\" </dev/null >/dev/null 2>&1 &)"
    )
}

/// A published project whose goose is the fake agent: it starts the stubborn daemon in its own
/// temp dir (rewriting the worktree's `.git`), writes its work and exits; the verify command
/// starts a daemon in its temp dir and checks the work.
fn world(sandbox: &str) -> World {
    let mut w = World::published();
    let agent_daemon = daemon("\"$TMPDIR\"", "agent", Some("\"$PWD/.git\""), true);
    let script = write_script(
        w.dir(),
        &[attempt(&[
            &json!({"do": "sh", "cmd": format!("{agent_daemon}; sleep 0.3")}).to_string(),
            r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
        ])],
    );
    common::fake_goose(&mut w, &script);
    for (k, v) in [
        ("BUTLER_ISSUE_BACKEND", "local"),
        // The user's own setting (Butler's environment), not the project's.
        ("BUTLER_SANDBOX", sandbox),
    ] {
        w.env.push((k.to_owned(), v.to_owned()));
    }
    w
}

fn verify_command() -> String {
    format!(
        "{}; sleep 0.2; test -f src/greet.rs",
        daemon("\"$TMPDIR\"", "verify", None, false)
    )
}

/// The task's worktree and its two directories, under the world's data directory.
fn task_dirs(w: &World) -> (PathBuf, PathBuf, PathBuf) {
    let root = w.home().join(".local/share/butler/worktrees");
    let project = std::fs::read_dir(&root)
        .expect("the worktrees directory")
        .flatten()
        .next()
        .expect("the project's worktrees")
        .path();
    (
        project.join("task-t1"),
        project.join("task-t1.agent/tmp"),
        project.join("task-t1.verify"),
    )
}

/// Whether `pid` still runs (a zombie waiting for its reaper counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

fn pid_in(file: &Path) -> i32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .expect("a pid")
}

/// The marker's content now and 400 ms later, which a live daemon would have changed.
fn still(marker: &Path) -> (String, String) {
    let read = || std::fs::read_to_string(marker).unwrap_or_default();
    let before = read();
    std::thread::sleep(Duration::from_millis(400));
    (before, read())
}

fn kill_leftover(pid: i32) {
    if alive(pid) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// The evidence's leftovers: (started_by, pid, command, signal) of each.
fn leftovers(attempt: &Value) -> Vec<(String, i64, String, String)> {
    attempt["leftovers"]["processes"]
        .as_array()
        .unwrap_or_else(|| panic!("no leftovers in {attempt:#}"))
        .iter()
        .map(|p| {
            (
                p["started_by"].as_str().expect("started_by").to_owned(),
                p["pid"].as_i64().expect("pid"),
                p["command"].as_str().expect("command").to_owned(),
                p["signal"].as_str().expect("signal").to_owned(),
            )
        })
        .collect()
}

async fn the_daemons_end_with_the_attempt(sandbox: &str) {
    let w = world(sandbox);
    let brain = w.session().await;
    let answer = brain
        .ok(
            "run_implement",
            json!({"goal": "Add a greeting", "target_paths": ["src/"],
                   "test_commands": [verify_command()]}),
        )
        .await;
    let data = &answer["data"];
    let (worktree, agent_tmp, verify_tmp) = task_dirs(&w);
    let agent = pid_in(&agent_tmp.join("agent.pid"));
    let verify = pid_in(&verify_tmp.join("verify.pid"));
    let (agent_alive, verify_alive) = (alive(agent), alive(verify));
    let agent_marker = still(&agent_tmp.join("agent.marker"));
    let verify_marker = still(&verify_tmp.join("verify.marker"));
    kill_leftover(agent);
    kill_leftover(verify);
    assert_eq!(data["outcome"], "succeeded", "{data:#}");
    let a = &data["attempts"][0];
    assert_eq!(a["sandbox"]["applied"], sandbox != "off", "{a:#}");
    assert!(!agent_alive, "the agent's daemon outlived the attempt");
    assert!(
        !verify_alive,
        "the verify command's daemon outlived the attempt"
    );
    assert_eq!(
        agent_marker.0, agent_marker.1,
        "the agent's daemon still writes"
    );
    assert_eq!(
        verify_marker.0, verify_marker.1,
        "the verify daemon still writes"
    );
    assert!(!agent_marker.0.is_empty() && !verify_marker.0.is_empty());
    // The pointer the daemon kept rewriting is the Maid's again, and stays so.
    let pointer = std::fs::read_to_string(worktree.join(".git")).expect("the .git file");
    assert!(
        pointer.trim_end().ends_with("worktrees/task-t1"),
        "{pointer}"
    );
    // The evidence names both: the stubborn one needed SIGKILL, the other went at SIGTERM.
    let listed = leftovers(a);
    assert!(
        listed.contains(&("agent".into(), agent.into(), "sh".into(), "SIGKILL".into())),
        "{listed:#?}"
    );
    assert!(
        listed.contains(&(
            "verify".into(),
            verify.into(),
            "sh".into(),
            "SIGTERM".into()
        )),
        "{listed:#?}"
    );
    assert!(a["leftovers"]["total"].as_u64().expect("total") >= 2);
    let files = w.git(
        &w.project,
        &["log", "--format=", "--name-only", "main..butler/task-t1"],
    );
    assert_eq!(files.trim(), "src/greet.rs");

    // Discarding the task removes its directories; nothing recreates them.
    brain.ok("task_discard", json!({"task_id": "t1"})).await;
    std::thread::sleep(Duration::from_millis(300));
    assert!(!agent_tmp.exists() && !verify_tmp.exists());
    assert!(!alive(agent) && !alive(verify));
}

#[tokio::test]
async fn what_a_confined_agent_and_its_verify_command_leave_running_ends_with_the_attempt() {
    the_daemons_end_with_the_attempt("auto").await;
}

#[tokio::test]
async fn with_the_sandbox_off_what_they_leave_running_ends_with_the_attempt_too() {
    the_daemons_end_with_the_attempt("off").await;
}

/// The confined agent cannot end the helper that reaps it (Landlock scopes its signals), so it
/// cannot orphan its daemon to init that way.
#[tokio::test]
async fn a_confined_agent_cannot_kill_its_reaper() {
    let mut w = World::published();
    let agent_daemon = daemon("\"$TMPDIR\"", "agent", None, false);
    let script = write_script(
        w.dir(),
        &[attempt(&[
            // The fake agent's parent is the reaper.
            &json!({"do": "sh", "cmd": format!(
                "{agent_daemon}; sleep 0.2; kill -KILL $(cut -d' ' -f4 /proc/$PPID/stat) 2>&1 \
                 | sed 's/^/fake-agent: /' >&2; true"
            )})
            .to_string(),
            r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
        ])],
    );
    common::fake_goose(&mut w, &script);
    w.env
        .push(("BUTLER_ISSUE_BACKEND".to_owned(), "local".to_owned()));
    let brain = w.session().await;
    let started = Instant::now();
    let answer = brain
        .ok(
            "run_implement",
            json!({"goal": "Try", "target_paths": ["src/"]}),
        )
        .await;
    let (_, agent_tmp, _) = task_dirs(&w);
    let pid = pid_in(&agent_tmp.join("agent.pid"));
    let survived = alive(pid);
    kill_leftover(pid);
    let a = &answer["data"]["attempts"][0];
    assert_eq!(a["sandbox"]["applied"], true, "{a:#}");
    assert!(!survived, "the daemon outlived the attempt");
    let listed = leftovers(a);
    assert!(
        listed
            .iter()
            .any(|(by, p, ..)| by == "agent" && *p == i64::from(pid)),
        "{listed:#?}"
    );
    let log = std::fs::read_to_string(w.project.join(".git/butler/tasks/t1/attempt-1.log"))
        .expect("the attempt's log");
    assert!(log.contains("Operation not permitted"), "{log}");
    assert!(started.elapsed() < Duration::from_secs(60));
}
