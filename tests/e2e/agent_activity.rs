//! What an agent does, in plain sight, through the real `butler` binary and the scripted fake
//! agent speaking each agent's output format: a looping agent is stopped early and its retry
//! names the loop; `butler implement` and `butler task show` end with a summary (`--json` for
//! the JSON) carrying the agent's own usage figures; `butler task log --follow` shows a running
//! task's steps as they come; `butler task shell` opens a shell in the task's worktree.

// The tests play the person at the terminal: they start `butler` themselves.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::StartBrain;
use butler_testkit::World;
use butler_testkit::fake_agent::{SCRIPT_VAR, attempt, fake_agent, write_script};
use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

fn command(w: &World, args: &[&str], extra: &[(String, String)]) -> Command {
    let mut cmd = Command::new(BUTLER);
    cmd.args(args)
        .current_dir(&w.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(w.env.iter().cloned())
        .env("BUTLER_ISSUE_BACKEND", "local")
        .env("BUTLER_SANDBOX", "off")
        .envs(extra.iter().cloned());
    cmd
}

fn butler(w: &World, args: &[&str], extra: &[(String, String)]) -> Output {
    command(w, args, extra).output().expect("butler runs")
}

/// `agent` (goose, claude, codex, aider) is the fake agent playing `attempts`.
fn agent_is_fake(w: &World, agent: &str, attempts: &[&[&str]]) -> Vec<(String, String)> {
    let script = write_script(
        w.dir(),
        &attempts.iter().map(|a| attempt(a)).collect::<Vec<_>>(),
    );
    let upper = agent.to_ascii_uppercase();
    vec![
        ("BUTLER_AGENT".into(), agent.into()),
        (
            format!("BUTLER_{upper}_PROGRAM"),
            fake_agent().to_string_lossy().into_owned(),
        ),
        (format!("BUTLER_{upper}_PROVIDER"), "openai".into()),
        (format!("BUTLER_{upper}_MODEL"), "fake".into()),
        (SCRIPT_VAR.into(), script.to_string_lossy().into_owned()),
        ("BUTLER_AGENT_ENV_ALLOW".into(), SCRIPT_VAR.into()),
    ]
}

const IMPLEMENT: &[&str] = &[
    "implement",
    "--goal",
    "Add a greeting",
    "--target",
    "src/",
    "--test",
    "test -f src/greet.rs",
];

const WRITE_GREET: &str = r#"{"do":"edit","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#;

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_looping_agent_is_stopped_within_a_few_calls_and_its_retry_names_the_loop() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let prompt = w.dir().join("prompt-2.txt");
    let record = format!(r#"{{"do":"record_prompt","path":"{}"}}"#, prompt.display());
    let looping =
        r#"{"do":"tool","name":"shell","args":{"command":"cat src/lib.rs"},"times":200,"ms":20}"#;
    let mut env = agent_is_fake(&w, "goose", &[&[looping], &[&record, looping]]);
    env.push(("BUTLER_AGENT_LOOP_REPEATS".into(), "3".into()));
    let started = Instant::now();
    let run = butler(&w, &[IMPLEMENT, &["--json"]].concat(), &env);
    let result = json(&run);
    assert_eq!(run.status.code(), Some(1), "{result:#}");
    assert_eq!(result["outcome"], "failed", "{result:#}");
    let attempts = result["attempts"].as_array().expect("attempts");
    assert_eq!(
        attempts.len(),
        2,
        "looping again after a retry that named the loop ends the task: {result:#}"
    );
    for a in attempts {
        let exit = &a["agent_exit"];
        let looped = exit.to_string();
        assert!(
            looped.contains("looped") && looped.contains("cat src/lib.rs"),
            "{exit}"
        );
        let calls = a["activity"]["counts"]["tool_calls"]
            .as_u64()
            .expect("counted");
        assert!(
            (3..10).contains(&calls),
            "stopped early, after {calls} calls"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "200 calls 20 ms apart per attempt were not played out"
    );
    let prompt = std::fs::read_to_string(&prompt).expect("the second attempt ran");
    assert!(
        prompt.contains("cat src/lib.rs` 3 times without changing any file"),
        "{prompt}"
    );
}

#[test]
fn implement_and_show_end_with_a_summary_and_json_carries_the_agents_usage() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let env = agent_is_fake(
        &w,
        "claude",
        &[&[
            r#"{"do":"say","text":"Adding the greeting."}"#,
            r#"{"do":"sleep","ms":400}"#,
            r#"{"do":"tool","name":"shell","args":{"command":"ls src"}}"#,
            WRITE_GREET,
            r#"{"do":"usage","input_tokens":1234,"output_tokens":56,"cost_usd":0.0125,"turns":3}"#,
        ]],
    );
    let run = butler(&w, IMPLEMENT, &env);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("Task t1 succeeded: Add a greeting (1 attempt)\n"),
        "{stdout}"
    );
    for expected in [
        "changed   src/greet.rs",
        "tests     1 of 1 passed",
        "$0.0125, 3 turn(s)",
        "line      butler/task-t1",
        "next      review it",
    ] {
        assert!(stdout.contains(expected), "`{expected}` in:\n{stdout}");
    }
    assert!(!stdout.contains('{'), "no JSON without --json:\n{stdout}");
    assert!(
        stderr.contains("attempt 1: tool Bash: ls src"),
        "the agent's steps are shown as they come:\n{stderr}"
    );

    let show = butler(&w, &["task", "show", "t1"], &[]);
    assert_eq!(String::from_utf8_lossy(&show.stdout), stdout);

    let shown = json(&butler(&w, &["task", "show", "t1", "--json"], &[]));
    let activity = &shown["attempts"][0]["evidence"]["activity"];
    assert_eq!(
        activity["usage"],
        serde_json::json!({"input_tokens": 1234, "output_tokens": 56, "cost_usd": 0.0125,
            "turns": 3}),
        "{shown:#}"
    );
    assert_eq!(activity["counts"]["tool_calls"], 2, "{activity:#}");
    assert_eq!(activity["counts"]["files_edited"], 1, "{activity:#}");
}

#[test]
fn an_aider_task_has_no_worker_mcp_warning() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let env = agent_is_fake(
        &w,
        "aider",
        &[&[
            WRITE_GREET,
            r#"{"do":"usage","input_tokens":900,"output_tokens":40,"cost_usd":0.002}"#,
        ]],
    );
    let result = json(&butler(&w, &[IMPLEMENT, &["--json"]].concat(), &env));
    let first = &result["attempts"][0];
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    assert_eq!(first["worker_mcp_reached"], false);
    assert!(
        first["warnings"].as_array().is_none_or(Vec::is_empty),
        "{first:#}"
    );
    assert_eq!(first["activity"]["usage"]["input_tokens"], 900, "{first:#}");
}

/// Lines of `child`'s stdout as they come, each with when it came.
fn lines_of(child: &mut Child) -> mpsc::Receiver<(Instant, String)> {
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for `child` to end, at most `limit`.
fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn task_log_follow_shows_a_running_tasks_steps_and_ends_with_it() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let mut env = agent_is_fake(
        &w,
        "codex",
        &[&[
            r#"{"do":"tool","name":"shell","args":{"command":"ls src"}}"#,
            r#"{"do":"sleep","ms":2500}"#,
            r#"{"do":"say","text":"Now the greeting."}"#,
            r#"{"do":"sleep","ms":1500}"#,
            r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#,
        ]],
    );
    // Codex wants its model endpoint; the fake agent never calls it.
    env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()));
    let mut task = command(&w, IMPLEMENT, &env)
        .stdout(Stdio::null())
        .spawn()
        .expect("butler implement starts");
    // The task is in the ledger once it started.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !String::from_utf8_lossy(&butler(&w, &["task", "list"], &[]).stdout).contains("t1 ") {
        assert!(Instant::now() < deadline, "the task never started");
        assert!(
            task.try_wait().expect("wait").is_none(),
            "implement ended early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut follow = command(&w, &["task", "log", "t1", "--follow"], &[])
        .stdout(Stdio::piped())
        .spawn()
        .expect("butler task log starts");
    let lines = lines_of(&mut follow);
    let task_status = wait(&mut task, Duration::from_secs(120));
    let task_ended = Instant::now();
    assert!(task_status.success(), "{task_status}");
    let follow_status = wait(&mut follow, Duration::from_secs(30));
    assert!(follow_status.success(), "{follow_status}");
    let lines: Vec<(Instant, String)> = lines.iter().collect();
    let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    let call = lines
        .iter()
        .find(|(_, l)| l.contains("ran `ls src`: exit 0"))
        .unwrap_or_else(|| panic!("the agent's command is shown: {text:#?}"));
    assert!(
        call.0 < task_ended,
        "shown while the task ran, not after: {text:#?}"
    );
    assert!(
        text.iter().any(|l| l.contains("said: Now the greeting.")),
        "{text:#?}"
    );
    assert!(
        text.iter().any(|l| l.ends_with("attempt 1: verifying")),
        "{text:#?}"
    );
    assert!(
        text.last()
            .is_some_and(|l| l.ends_with("finished: succeeded")),
        "{text:#?}"
    );

    // Read again once it ended: the same steps, and no waiting.
    let again = butler(&w, &["task", "log", "t1", "--follow"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).lines().count(),
        text.len()
    );
}

#[test]
fn task_shell_opens_the_users_shell_in_the_worktree_without_butlers_secrets() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let env = agent_is_fake(&w, "goose", &[&[WRITE_GREET]]);
    let run = butler(&w, IMPLEMENT, &env);
    assert_eq!(run.status.code(), Some(0));
    let shell = w.dir().join("shell.sh");
    let seen = w.dir().join("shell-seen");
    butler_testkit::write_executable(
        &shell,
        format!(
            "#!/bin/sh\n{{ pwd; echo \"task=$BUTLER_TASK\"; echo \"token=$BUTLER_GITEA_TOKEN\"; \
             ls src; }} > '{}'\n",
            seen.display()
        ),
    );
    let extra = [
        ("SHELL".to_owned(), shell.to_string_lossy().into_owned()),
        ("BUTLER_GITEA_TOKEN".to_owned(), "tok-secret".to_owned()),
    ];
    let opened = butler(&w, &["task", "shell", "t1"], &extra);
    let stderr = String::from_utf8_lossy(&opened.stderr);
    assert!(opened.status.success(), "{stderr}");
    assert!(stderr.contains("accepting the task takes it"), "{stderr}");
    let seen = std::fs::read_to_string(&seen).expect("the shell ran");
    let lines: Vec<&str> = seen.lines().collect();
    assert!(
        lines[0].ends_with("task-t1") || lines[0].contains("t1"),
        "in the task's worktree: {seen}"
    );
    assert_ne!(
        std::path::Path::new(lines[0]).canonicalize().ok(),
        w.project.canonicalize().ok()
    );
    assert_eq!(&lines[1..3], ["task=t1", "token="], "{seen}");
    assert!(
        lines.contains(&"greet.rs"),
        "the task's work is there: {seen}"
    );

    let unknown = butler(&w, &["task", "shell", "t9"], &extra);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no task `t9`"));
}

#[tokio::test]
async fn run_implement_streams_the_agents_steps_as_progress_notifications() {
    let mut w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let env = agent_is_fake(
        &w,
        "goose",
        &[&[
            r#"{"do":"say","text":"Looking at the crate first."}"#,
            r#"{"do":"sleep","ms":400}"#,
            r#"{"do":"tool","name":"shell","args":{"command":"cargo test"},"failed":true}"#,
            r#"{"do":"sleep","ms":400}"#,
            WRITE_GREET,
        ]],
    );
    w.env.extend(env);
    w.env.push(("BUTLER_SANDBOX".into(), "off".into()));
    let brain = w.session().await;
    let answer = brain
        .call(
            "run_implement",
            json!({"goal": "Add a greeting", "target_paths": ["src/"],
                   "test_commands": ["test -f src/greet.rs"]}),
        )
        .await;
    assert_eq!(answer.status(), "ok", "{}", answer.envelope);
    let progress = brain.client.progress();
    for expected in [
        "attempt 1: said: Looking at the crate first.",
        "attempt 1: tool shell: cargo test",
        "attempt 1: edited src/greet.rs",
    ] {
        assert!(
            progress.iter().any(|p| p == expected),
            "`{expected}` in {progress:#?} {:#}",
            answer.data()["attempts"][0]["activity"]
        );
    }
    let last = &answer.data()["attempts"][0]["activity"]["last"];
    assert_eq!(last[0]["kind"], "message", "{last:#}");
    assert_eq!(last[1]["kind"], "tool_call", "{last:#}");
}
