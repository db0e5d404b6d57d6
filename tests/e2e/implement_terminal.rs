//! `butler implement` and `butler task list` from a terminal, through the real binary: the
//! scripted fake agent is configured the way a user configures goose (`BUTLER_GOOSE_PROGRAM`),
//! not through a test-only agent of the production CLI.

// The test plays the person at the terminal: it starts `butler` itself, as a shell would.
#![allow(clippy::disallowed_methods)]

use std::process::{Command, Output};

use butler_testkit::World;
use butler_testkit::fake_agent::{SCRIPT_VAR, attempt, fake_agent, write_script};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");

/// Runs `butler <args>` in the project with the world's environment and `extra`.
fn butler(w: &World, args: &[&str], extra: &[(String, String)]) -> Output {
    Command::new(BUTLER)
        .args(args)
        .current_dir(&w.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(w.env.iter().cloned())
        .env("BUTLER_ISSUE_BACKEND", "local")
        .envs(extra.iter().cloned())
        .output()
        .expect("butler runs")
}

/// goose is the fake agent playing `actions` once.
fn goose_is_the_fake_agent(w: &World, actions: &[&str]) -> Vec<(String, String)> {
    let script = write_script(w.dir(), &[attempt(actions)]);
    vec![
        (
            "BUTLER_GOOSE_PROGRAM".into(),
            fake_agent().to_string_lossy().into_owned(),
        ),
        ("BUTLER_GOOSE_PROVIDER".into(), "openai".into()),
        ("BUTLER_GOOSE_MODEL".into(), "fake".into()),
        (SCRIPT_VAR.into(), script.to_string_lossy().into_owned()),
        ("BUTLER_AGENT_ENV_ALLOW".into(), SCRIPT_VAR.into()),
    ]
}

#[test]
fn a_task_run_from_the_terminal_prints_its_result_and_is_listed() {
    let w = World::committed(&[("src/lib.rs", "pub fn one() -> i32 { 1 }\n")]);
    let env = goose_is_the_fake_agent(
        &w,
        &[r#"{"do":"write","path":"src/greet.rs","text":"pub fn greet() {}\n"}"#],
    );
    let run = butler(
        &w,
        &[
            "implement",
            "--json",
            "--goal",
            "Add a greeting",
            "--target",
            "src/",
            "--test",
            "test -f src/greet.rs",
        ],
        &env,
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("task t1 on line butler/task-t1"),
        "{stderr}"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&run.stdout).expect("the result is JSON on stdout");
    assert_eq!(result["outcome"], "succeeded", "{result:#}");
    assert_eq!(
        result["attempts"][0]["changed_files"],
        serde_json::json!(["src/greet.rs"])
    );
    assert!(
        !w.project.join("src/greet.rs").exists(),
        "the tree is untouched"
    );

    let list = butler(&w, &["task", "list"], &[]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let row = listed.lines().nth(1).unwrap_or_default();
    assert!(
        row.starts_with("t1") && row.contains("Add a greeting"),
        "{listed}"
    );
}

#[test]
fn the_production_cli_knows_no_fake_agent() {
    let w = World::local_only();
    let run = butler(
        &w,
        &[
            "implement",
            "--goal",
            "g",
            "--target",
            "src/",
            "--agent",
            "fake",
        ],
        &[],
    );
    assert_ne!(run.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("fake"),
        "the refusal names the agent: {stderr}"
    );
    let list = butler(&w, &["task", "list"], &[]);
    assert_eq!(String::from_utf8_lossy(&list.stdout), "No tasks.\n");
}
