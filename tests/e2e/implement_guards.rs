//! The two diff guards decide, through the real `butler mcp` binary with the scripted fake
//! agent: a weakened test or a stub fails every attempt like a failing test (named in the
//! evidence, the retry prompt and the summary), unless the task allows changing tests.

// Test scaffolding plays the user's side of the world (git as a person runs it); Butler's own
// children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use crate::common;
use crate::common::{StartBrain, World};
use butler_testkit::fake_agent::write_script;
use serde_json::{Value, json};

const TEST_FILE: &str = "tests/test_calc.py";
const TEST_TEXT: &str =
    "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";

/// A published project with a Python function and its test, whose Brain delegates to the fake
/// agent playing `attempts` (one JSON array each; the last one repeats). `{tmp}` in a script
/// is the world's temp dir.
fn guarded_world(attempts: &[Value]) -> World {
    let mut w = World::published();
    w.write("src/calc.py", "def add(a, b):\n    return a - b\n");
    w.write(TEST_FILE, TEST_TEXT);
    w.commit(&w.project, "calc and its test");
    let tmp = w.dir().to_string_lossy().into_owned();
    let lines: Vec<String> = attempts
        .iter()
        .map(|a| a.to_string().replace("{tmp}", &tmp))
        .collect();
    let script = write_script(w.dir(), &lines);
    common::fake_goose(&mut w, &script);
    w.env.push(("BUTLER_SANDBOX".to_owned(), "off".into()));
    w
}

/// The first attempt plays `first`; the later ones only keep their prompt in `{tmp}`.
fn script(first: Value) -> Vec<Value> {
    vec![
        first,
        json!([{"do": "record_prompt", "path": "{tmp}/prompt-2.txt"}]),
    ]
}

/// Runs `run_implement` on `src/` and `tests/` with a test command that passes whatever the
/// code does (as a weakened test would); returns the envelope.
async fn run(w: &World, extra: Value) -> Value {
    let brain = w.session().await;
    let mut args = json!({"goal": "Fix add()", "target_paths": ["src/", "tests/"],
                          "test_commands": ["true"]});
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    let a = brain.call("run_implement", args).await;
    assert_eq!(a.status(), "ok", "{}", a.envelope);
    a.envelope
}

fn findings(attempt: &Value, guard: &str) -> Vec<String> {
    attempt["verify"][guard]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|f| format!("{}:{}", f["path"].as_str().unwrap_or(""), f["text"]))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_assertion_replaced_by_assert_true_fails_the_task() {
    let w = guarded_world(&script(json!([
        {"do": "write", "path": TEST_FILE,
         "text": "from src.calc import add\n\n\ndef test_add():\n    assert True\n"}
    ])));
    let envelope = run(&w, json!({})).await;
    let data = &envelope["data"];
    assert_eq!(data["outcome"], "failed", "{data:#}");
    let attempts = data["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 3, "every attempt is failed by the guard");
    for attempt in attempts {
        assert_eq!(attempt["verify"]["tests"][0]["passed"], true);
        let weakened = findings(attempt, "weakened_tests");
        assert!(
            weakened
                .iter()
                .any(|f| f.starts_with(TEST_FILE) && f.contains("assert add(1, 2) == 3")),
            "{weakened:?}"
        );
    }
    let prompt = std::fs::read_to_string(w.dir().join("prompt-2.txt")).expect("retry prompt");
    assert!(
        prompt.contains("Weakened tests (these fail the attempt")
            && prompt.contains("assert add(1, 2) == 3"),
        "{prompt}"
    );
    let summary = envelope["summary"].as_str().expect("summary");
    assert!(
        summary.contains("failed")
            && summary.contains("weakened")
            && !summary.contains("succeeded"),
        "{summary}"
    );
}

#[tokio::test]
async fn stubs_left_in_the_code_fail_the_task() {
    let w = guarded_world(&script(json!([
        {"do": "write", "path": "src/calc.py",
         "text": "def add(a, b):\n    raise NotImplementedError\n"},
        {"do": "write", "path": "src/lib.rs", "text": "pub fn add(a: i32, b: i32) -> i32 {\n    todo!()\n}\n"}
    ])));
    let envelope = run(&w, json!({})).await;
    let data = &envelope["data"];
    assert_eq!(data["outcome"], "failed", "{data:#}");
    let attempts = data["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 3);
    let stubs = findings(&attempts[2], "stubs");
    assert!(
        stubs
            .iter()
            .any(|f| f.contains("raise NotImplementedError"))
            && stubs.iter().any(|f| f.contains("todo!()")),
        "{stubs:?}"
    );
    let prompt = std::fs::read_to_string(w.dir().join("prompt-2.txt")).expect("retry prompt");
    assert!(
        prompt.contains("Stubs (these fail the attempt")
            && prompt.contains("raise NotImplementedError")
            && prompt.contains("todo!()"),
        "{prompt}"
    );
    let summary = envelope["summary"].as_str().expect("summary");
    assert!(
        summary.contains("failed") && summary.contains("stub") && !summary.contains("succeeded"),
        "{summary}"
    );
}

#[tokio::test]
async fn a_task_that_allows_test_changes_reports_them_without_failing() {
    let w = guarded_world(&script(json!([
        {"do": "write", "path": TEST_FILE,
         "text": "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == -1\n"}
    ])));
    let envelope = run(&w, json!({"allow_test_changes": true})).await;
    let data = &envelope["data"];
    assert_eq!(data["outcome"], "succeeded", "{data:#}");
    let attempt = &data["attempts"][0];
    assert_eq!(attempt["verify"]["test_changes_allowed"], true);
    assert!(
        !findings(attempt, "weakened_tests").is_empty(),
        "{attempt:#}"
    );
    let summary = envelope["summary"].as_str().expect("summary");
    assert!(
        summary.contains("weakened") && summary.contains("allowed"),
        "{summary}"
    );
}
